"""Both kinds in one file: the CPU test runs on CPU runners, the CUDA one on GPU runners."""

import pytest
import torch

requires_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def test_relu_clamps_negatives():
    x = torch.tensor([-1.0, 0.0, 2.0])
    torch.testing.assert_close(torch.relu(x), torch.tensor([0.0, 0.0, 2.0]))


@requires_cuda
def test_relu_on_gpu_matches_cpu():
    x = torch.randn(8)
    torch.testing.assert_close(torch.relu(x.cuda()).cpu(), torch.relu(x))
