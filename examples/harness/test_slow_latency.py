"""A latency budget the code cannot meet: must fail with the budget in the message."""

import time

import pytest
import torch


@pytest.mark.torch_max_latency(ms=1)
def test_sleepy_op_exceeds_budget(latency, torch_device):
    x = torch.ones(4, device=torch_device)

    def slow(t):
        time.sleep(0.01)
        return t * 2

    latency(slow, x, warmup=1, iters=3)
