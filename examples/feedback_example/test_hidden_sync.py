"""Classified `cpu` by static analysis, yet `test_waits_for_device` needs CUDA (via sync_helper)."""

import torch

from examples.feedback_example.sync_helper import wait_for_device


def test_adds_on_cpu():
    assert torch.ones(2).add(1).tolist() == [2.0, 2.0]


def test_waits_for_device():
    x = torch.ones(4)
    wait_for_device()
    assert x.sum().item() == 4.0
