"""Tensor shape and dtype rules that model code relies on."""

import pytest
import torch


def test_broadcasting_adds_a_bias_per_row(generator):
    x = torch.randn(4, 3, generator=generator)
    bias = torch.tensor([1.0, 2.0, 3.0])
    assert (x + bias).shape == (4, 3)
    torch.testing.assert_close((x + bias) - x, bias.expand(4, 3))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_matmul_keeps_dtype(dtype, generator):
    a = torch.randn(2, 5, generator=generator).to(dtype)
    b = torch.randn(5, 7, generator=generator).to(dtype)
    out = a @ b
    assert out.shape == (2, 7)
    assert out.dtype == dtype


def test_view_shares_storage():
    x = torch.arange(12)
    y = x.view(3, 4)
    y[0, 0] = 100
    assert x[0] == 100


def test_device_object_needs_no_gpu():
    # Creating a device object and asking about CUDA is CPU-safe.
    assert torch.device("cuda").type == "cuda"
    assert isinstance(torch.cuda.is_available(), bool)
