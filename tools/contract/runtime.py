"""Test keys and environment variables: what the macro, the runner, the GPU wrapper and the renderers
pass to each other at test time (docs/tags.md, "Environment variables").

Standard library only and no package-relative imports: the Bazel runner (rules/private/pytest_runner.py)
loads this file by path, so a repository with its own `tools` package cannot shadow it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TypeVar

# Set by torch_py_test (rules/private/torch_py_test.bzl) on every target.
NUM_THREADS = "TORCH_TEST_NUM_THREADS"  # threads the test may use (Bazel's `cpu:N` tag, default 1)
PERF_BASELINES = "TORCH_TEST_PERF_BASELINES"  # pytest-torch's baselines file, workspace-relative
# Set on the two targets of a file split between CPU and GPU: which node ids each runs.
ROUTING = "TORCH_TEST_ROUTING"  # JSON {path: {test key: label}}
PART = "TORCH_TEST_PART"  # "cpu" or "gpu"
# Set on GPU targets by the macro (from the gpu-count / gpu-vram-gb tags) and by the k8s renderer;
# read by the GPU wrapper (tools/gpu_assign) and the runner's GPU utilisation sampler.
GPU_COUNT = "TORCH_TEST_GPU_COUNT"
VRAM_GB = "TORCH_TEST_VRAM_GB"
# Set by the GPU wrapper and the k8s renderer: the share of each GPU's memory the test may use.
GPU_MEMORY_FRACTION = "TORCH_GPU_MEMORY_FRACTION"
# Set by `bazel run //tools:update_perf_baselines` or by hand.
UPDATE_PERF = "TORCH_TEST_UPDATE_PERF"
PERF_STRICT = "TORCH_TEST_PERF_STRICT"

VARIABLES = (NUM_THREADS, PERF_BASELINES, ROUTING, PART, GPU_COUNT, VRAM_GB, GPU_MEMORY_FRACTION, UPDATE_PERF,
             PERF_STRICT)

V = TypeVar("V")


def split_nodeid(nodeid: str) -> tuple[str, str]:
    """`path::Class::test[p]` -> (`path`, `Class::test[p]`); a bare path gives an empty key."""
    path, _, key = nodeid.partition("::")
    return path, key


def resolve_key(tests: Mapping[str, V], key: str) -> str | None:
    """The classification key covering a test key: the exact key, else its function (every
    parametrization not listed separately), else its innermost enclosing class; None when none does."""
    if key in tests:
        return key
    base = key.split("[", 1)[0]
    if base in tests:
        return base
    parts = base.split("::")
    for end in range(len(parts) - 1, 0, -1):
        prefix = "::".join(parts[:end])
        if prefix in tests:
            return prefix
    return None


# In ROUTING, the label of a key whose node id names another case on a machine without GPUs (the
# classification file's `without_gpus`): gpu where the test process sees a GPU, cpu where it does not.
ROUTE_CPU_WITHOUT_GPUS = "gpu; cpu without gpus"


def machine_label(label: str, gpus: Callable[[], bool]) -> str:
    """A routing label on this machine: ROUTE_CPU_WITHOUT_GPUS is gpu where `gpus()` says there are GPUs, else
    cpu (asked only for that label); any other label is itself."""
    if label == ROUTE_CPU_WITHOUT_GPUS:
        return "gpu" if gpus() else "cpu"
    return label


def route_label(labels: Mapping[str, str], key: str) -> str:
    """The label of one test key under `resolve_key`; `unknown` (routed like gpu) when no key covers it."""
    found = resolve_key(labels, key)
    return labels[found] if found is not None else "unknown"
