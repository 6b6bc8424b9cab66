"""A test that needs two GPUs: peer copies between cuda:0 and cuda:1."""

import pytest
import torch

pytestmark = pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs 2 CUDA GPUs")


def test_copy_between_devices():
    x = torch.arange(16, device="cuda:0", dtype=torch.float32)
    y = x.to("cuda:1")
    assert y.device == torch.device("cuda:1")
    torch.testing.assert_close(y.cpu(), x.cpu())


def test_data_parallel_replicas_agree():
    model = torch.nn.Linear(8, 4).cuda()
    replicas = torch.nn.parallel.replicate(model, [0, 1])
    x = torch.randn(2, 8)
    outs = [r(x.to(f"cuda:{i}")).cpu() for i, r in enumerate(replicas)]
    torch.testing.assert_close(outs[0], outs[1])
