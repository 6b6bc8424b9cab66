"""Bazel's test protocol inside torch_py_test, driven by tests/e2e/test_protocol.py.

Each test records what it saw into the undeclared outputs, so the driver can tell which tests ran
(--test_filter, --test_runner_fail_fast) and what the seed produced (--runs_per_test).
"""

import json
import os
import random
import warnings

import numpy
import pytest
import torch
from protocol_lib import clamp


def _record(name: str, data: object) -> None:
    outputs = os.environ.get("TEST_UNDECLARED_OUTPUTS_DIR")
    if outputs:
        with open(os.path.join(outputs, f"{name}.json"), "w", encoding="utf-8") as handle:
            json.dump(data, handle)


def test_fails_when_asked():
    if os.environ.get("PROTOCOL_EXAMPLE_FAIL") == "1":
        pytest.fail("asked to fail (PROTOCOL_EXAMPLE_FAIL=1)")


def test_clamp_low():
    assert clamp(-3, 0, 10) == 0
    _record("test_clamp_low", True)


class TestDraws:
    def test_random_draws(self):
        _record("draws", {
            "torch": torch.rand(3).tolist(),
            "random": random.random(),
            "numpy": float(numpy.random.rand()),
        })


def test_warns():
    warnings.warn("protocol example: this API is deprecated", DeprecationWarning, stacklevel=1)
    _record("test_warns", True)
