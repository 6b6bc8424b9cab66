"""pytest-torch's harness on CPU: a latency budget and a memory-leak check that both pass."""

import pytest
import torch
from torch import nn


@pytest.mark.torch_max_latency(ms=200)
def test_small_linear_meets_latency_budget(latency, torch_device):
    model = nn.Linear(64, 64).to(torch_device)
    x = torch.randn(16, 64, device=torch_device)
    with torch.no_grad():
        median_ms = latency(model, x, warmup=2, iters=10)
    assert median_ms >= 0


@pytest.mark.torch_memory_leak(iterations=4)
def test_inference_loop_does_not_leak():
    model = nn.Linear(32, 32)
    with torch.no_grad():
        out = model(torch.randn(8, 32))
    assert out.shape == (8, 32)
