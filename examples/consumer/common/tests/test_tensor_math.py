"""CPU only: classified `cpu`, so it runs on every CPU runner."""

import torch


def test_matmul_matches_manual_sum():
    a = torch.arange(6.0).reshape(2, 3)
    b = torch.arange(12.0).reshape(3, 4)
    expected = torch.tensor([[sum(a[i, k] * b[k, j] for k in range(3)) for j in range(4)] for i in range(2)])
    torch.testing.assert_close(a @ b, expected)


def test_mean_of_arange():
    assert torch.arange(5.0).mean().item() == 2.0
