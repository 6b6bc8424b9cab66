"""pytest-torch's harness under `bazel test`, as a user sees it (test.log, test.outputs, baselines)."""

from __future__ import annotations

import json
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LOGS = ROOT / "bazel-testlogs" / "examples" / "harness"
BASELINES = ROOT / "examples" / "harness" / "perf_baselines.json"

pytestmark = pytest.mark.skipif(shutil.which("bazel") is None, reason="no bazel on PATH (run scripts/setup.sh)")


def bazel(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bazel", *args], cwd=ROOT, capture_output=True, text=True)


def outcome(target: str) -> dict[str, str]:
    cases = ET.parse(LOGS / target / "test.xml").iter("testcase")
    return {
        case.get("name"): "failed" if case.find("failure") is not None else
        "skipped" if case.find("skipped") is not None else "passed"
        for case in cases
    }


def test_latency_budget_failure_names_the_budget():
    assert bazel("test", "//examples/harness:test_slow_latency").returncode == 3
    log = (LOGS / "test_slow_latency" / "test.log").read_text()
    assert "exceeds budget 1 ms" in log


def test_leak_is_caught_with_the_tensors_named():
    assert bazel("test", "//examples/harness:test_leak").returncode == 3
    log = (LOGS / "test_leak" / "test.log").read_text()
    assert "Memory leak: every run of the test leaves more behind" in log
    assert "new: () float32 on cpu with an autograd graph (SumBackward0)" in log


def test_tensor_mismatch_leaves_a_heatmap_in_undeclared_outputs():
    assert bazel("test", "//examples/harness:test_mismatch_heatmap").returncode == 3
    pngs = list((LOGS / "test_mismatch_heatmap" / "test.outputs" / "torch-failures").glob("*.png"))
    assert len(pngs) == 1 and pngs[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_nondeterminism_diagnosis_prints_its_verdict():
    result = bazel("test", "//examples/harness:test_nondeterminism", "--nocache_test_results", "--test_arg=-s")
    assert result.returncode == 0, result.stderr[-2000:]
    log = (LOGS / "test_nondeterminism" / "test.log").read_text()
    assert "nondeterminism verdict: Randomness-driven" in log
    assert "nondeterminism verdict: Deterministic" in log


def test_perf_baseline_lifecycle():
    """skip without a baseline -> fail when strict -> record -> pass -> fail on a 2x slowdown."""
    original = BASELINES.read_text()
    key = "examples/harness/test_perf_baseline.py::test_scaled_op_against_baseline"
    target = "//examples/harness:test_perf_baseline"
    try:
        assert bazel("test", target, "--nocache_test_results").returncode == 0
        assert set(outcome("test_perf_baseline").values()) == {"skipped"}

        strict = bazel("test", target, "--nocache_test_results", "--test_env=TORCH_TEST_PERF_STRICT=1")
        assert strict.returncode == 3

        record = bazel("run", "//tools:update_perf_baselines", "--", "--baselines", str(BASELINES.relative_to(ROOT)),
                       target)
        assert record.returncode == 0, record.stderr[-3000:]
        entries = json.loads(BASELINES.read_text())["entries"]
        assert any(name.startswith(key) for name in entries), entries
        assert "1 new" in record.stdout

        assert bazel("test", target, "--nocache_test_results").returncode == 0
        assert set(outcome("test_perf_baseline").values()) == {"passed"}

        slow = bazel("test", target, "--nocache_test_results", "--test_env=HARNESS_SLOWDOWN=2")
        assert slow.returncode == 3
        assert "failed" in outcome("test_perf_baseline").values()
    finally:
        BASELINES.write_text(original)
