"""A perf_baseline check; HARNESS_SLOWDOWN (via --test_env) injects a slowdown factor."""

import os
import time

import torch


def test_scaled_op_against_baseline(perf_baseline, torch_device):
    factor = float(os.environ.get("HARNESS_SLOWDOWN", "1"))
    x = torch.ones(64, 64, device=torch_device)

    def op(t):
        time.sleep(0.02 * factor)
        return t @ t

    perf_baseline(op, x, warmup=1, iters=5)
