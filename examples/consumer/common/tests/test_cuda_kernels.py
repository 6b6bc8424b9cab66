"""GPU only: classified `gpu`, so it never runs on a CPU runner."""

import torch


def test_cuda_add():
    x = torch.ones(4, device="cuda")
    torch.testing.assert_close((x + x).cpu(), torch.full((4,), 2.0))
