import pytest
import torch


@pytest.fixture
def generator() -> torch.Generator:
    """A seeded generator, so shape and training tests are reproducible."""
    return torch.Generator().manual_seed(1234)
