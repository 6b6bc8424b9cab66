"""pytest-torch's GPU-only checks: host syncs, a memory budget, a CUDA perf baseline."""

import pytest
import torch

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


@pytest.mark.torch_no_host_sync
def test_fused_step_never_syncs_with_the_host():
    x = torch.randn(1024, 1024, device="cuda")
    for _ in range(10):
        x = torch.relu(x @ x.T / 1024)
    assert x.device.type == "cuda"


@pytest.mark.torch_max_memory(mb=256)
def test_small_batch_stays_under_memory_budget():
    model = torch.nn.Linear(1024, 1024).cuda()
    out = model(torch.randn(64, 1024, device="cuda"))
    torch.cuda.synchronize()
    assert out.shape == (64, 1024)


def test_matmul_against_cuda_baseline(perf_baseline):
    x = torch.randn(2048, 2048, device="cuda")
    perf_baseline(lambda t: t @ t, x, warmup=3, iters=10)
