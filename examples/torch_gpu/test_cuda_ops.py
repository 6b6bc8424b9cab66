"""Kernels that need a CUDA device: classified gpu, never run on CPU runners."""

import pytest
import torch

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def test_matmul_on_gpu_matches_cpu():
    a = torch.randn(64, 64)
    b = torch.randn(64, 64)
    gpu = (a.cuda() @ b.cuda()).cpu()
    torch.testing.assert_close(gpu, a @ b, rtol=1e-3, atol=1e-3)


def test_synchronize_after_async_copy():
    x = torch.ones(1024, device="cuda")
    y = x * 2
    torch.cuda.synchronize()
    assert y.sum().item() == 2048


def test_stream_ordering():
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        x = torch.full((256,), 3.0, device="cuda")
    stream.synchronize()
    assert x.sum().item() == 768
