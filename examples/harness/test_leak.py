"""A cache that grows on every call: torch_memory_leak must catch it and name the tensors."""

import pytest
import torch

_HISTORY = []


@pytest.mark.torch_memory_leak(iterations=3)
def test_history_keeps_growing():
    x = torch.randn(8, 8, requires_grad=True)
    loss = (x * 2).sum()
    _HISTORY.append(loss)  # keeps the autograd graph alive
    assert loss.requires_grad
