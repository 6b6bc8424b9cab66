"""A tensor mismatch: pytest-torch saves a heatmap PNG into Bazel's undeclared outputs."""

import torch
from pytest_torch import assert_tensors_close


def test_outputs_differ_in_one_corner():
    expected = torch.zeros(16, 16)
    actual = expected.clone()
    actual[:4, :4] = 1.0
    assert_tensors_close(actual, expected)
