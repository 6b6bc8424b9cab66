"""Shared fixtures data for tests/tools/feedback: paths and small classification files."""

from __future__ import annotations

import copy
import shutil
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[3]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
TESTLOGS = FIXTURES / "testlogs"
HIDDEN_SYNC = TESTLOGS / "examples/feedback_example/test_hidden_sync"
DELIBERATE = TESTLOGS / "examples/deliberate/test_fails_on_purpose"
BAZEL_GENERATED = FIXTURES / "bazel-generated/examples/torch_gpu/test_cuda_ops"
GPU_RUN = FIXTURES / "gpu-run/examples/torch_gpu/test_cuda_ops"
JUNIT = FIXTURES / "junit"

HIDDEN = "examples/feedback_example/test_hidden_sync.py"


def test_entry(label: str, source: str = "static", line: int = 1, path: str = "x.py", **extra: Any) -> dict[str, Any]:
    entry = {"label": label, "gpu_count": 1 if label == "gpu" else 0, "vram_gb": 0, "source": source,
             "reasons": [f"{path}:{line}: static reason"]}
    entry.update(extra)
    return entry


test_entry.__test__ = False  # type: ignore[attr-defined]


def file_entry(tests: dict[str, dict[str, Any]], source: str = "static") -> dict[str, Any]:
    labels = {t["label"] for t in tests.values()}
    label = "mixed" if {"cpu", "gpu"} <= labels else "gpu" if "gpu" in labels else "cpu"
    return {"label": label, "torch": True, "source": source, "tests": tests,
            "gpu_count": max(t["gpu_count"] for t in tests.values()),
            "vram_gb": max(t["vram_gb"] for t in tests.values())}


def classification(files: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {"version": 1, "generated_by": "test", "files": copy.deepcopy(files)}


def example_classification() -> dict[str, Any]:
    """The checked-in shape of the deliberately misclassified example (static: all cpu)."""
    return classification({
        HIDDEN: file_entry({
            "test_adds_on_cpu": test_entry("cpu", line=8, path=HIDDEN),
            "test_waits_for_device": test_entry("cpu", line=12, path=HIDDEN),
        }),
        "examples/deliberate/test_fails_on_purpose.py": file_entry({
            "test_passing_case": test_entry("cpu"),
            "test_failing_case": test_entry("cpu"),
        }),
    })


def plain_classification() -> dict[str, Any]:
    """Entries for the plain-pytest fixture project (junit/test_plain.py.txt as pkg/test_plain.py)."""
    names = ["test_passes", "test_no_cuda_gpus", "test_value_error", "test_skip_requires_cuda", "test_skip_two_gpus",
             "test_skip_slow", "TestDevice::test_cuda_tensor", "TestDevice::test_param", "TestDevice::TestNested::"
             "test_nested", "test_asserts_cuda", "test_device_count", "test_setup_error", "test_devices"]
    return classification({
        "pkg/test_plain.py": file_entry({n: test_entry("cpu", path="pkg/test_plain.py") for n in names}),
        "pkg/test_import_cuda.py": file_entry({"test_never_collected": test_entry("cpu")}),
    })


def copy_dir(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst
