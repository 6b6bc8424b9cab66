"""CPU-bound work, split over shards, to show what thread oversubscription costs."""

import pytest
import torch


@pytest.mark.parametrize("step", range(8))
def test_matmul_chain(step):
    torch.manual_seed(step)
    x = torch.randn(384, 384)
    for _ in range(60):
        x = torch.tanh(x @ x / 384)
    assert torch.isfinite(x).all()
