"""diagnose_nondeterminism tells RNG-driven variance (dropout left in train mode) from kernel noise."""

import torch
from pytest_torch import diagnose_nondeterminism
from torch import nn


def test_dropout_in_train_mode_is_diagnosed_as_randomness():
    model = nn.Sequential(nn.Linear(16, 16), nn.Dropout(p=0.5)).train()
    report = diagnose_nondeterminism(model, torch.randn(4, 16), runs=4)
    print(f"nondeterminism verdict: {report.verdict}")
    assert report.verdict.startswith("Randomness-driven")


def test_eval_mode_is_deterministic():
    model = nn.Sequential(nn.Linear(16, 16), nn.Dropout(p=0.5)).eval()
    report = diagnose_nondeterminism(model, torch.randn(4, 16), runs=4)
    print(f"nondeterminism verdict: {report.verdict}")
    assert report.verdict.startswith("Deterministic")
