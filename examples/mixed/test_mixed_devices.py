"""One file, both kinds: the CPU tests run on CPU runners, the CUDA ones on GPU runners."""

import pytest
import torch

requires_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def test_softmax_sums_to_one():
    x = torch.randn(5, 10)
    torch.testing.assert_close(x.softmax(dim=-1).sum(dim=-1), torch.ones(5))


@requires_cuda
def test_softmax_on_gpu_matches_cpu():
    x = torch.randn(5, 10)
    torch.testing.assert_close(x.cuda().softmax(dim=-1).cpu(), x.softmax(dim=-1))


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=requires_cuda)])
def test_layernorm_is_normalised(device):
    x = torch.randn(4, 32, device=device)
    y = torch.nn.functional.layer_norm(x, (32,))
    torch.testing.assert_close(y.mean(dim=-1).cpu(), torch.zeros(4), atol=1e-5, rtol=0)


# pytest ids torch.device objects by position: `[device0]` is the CUDA case on a GPU machine and the CPU case on
# a CPU runner. The classification says so (`without_gpus`), and each runner runs the case it collects.
DEVICES = [torch.device("cuda:0"), torch.device("cpu")] if torch.cuda.is_available() else [torch.device("cpu")]


@pytest.mark.parametrize("device", DEVICES)
def test_matmul_on_each_device(device):
    a = torch.eye(3, device=device)
    torch.testing.assert_close((a @ a).cpu(), torch.eye(3))
