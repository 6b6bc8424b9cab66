"""Bazel's test protocol inside torch_py_test, driven by real `bazel test` / `bazel coverage` runs.

The targets are in examples/deliberate (`manual`): test_protocol.py records what each test saw into its
undeclared outputs, test_exits_early.py ends the process mid-run. All runs share the workspace's
Bazel server; `bazel coverage` comes last because it re-analyses the build with instrumentation.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LOGS = ROOT / "bazel-testlogs" / "examples" / "deliberate"
PROTOCOL = "//examples/deliberate:test_protocol"

pytestmark = pytest.mark.skipif(shutil.which("bazel") is None, reason="no bazel on PATH (run scripts/setup.sh)")


def bazel(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bazel", *args], cwd=ROOT, capture_output=True, text=True)


def ran(xml_path: Path) -> dict[str, str]:
    """Test case name -> `passed` / `failed` from a test.xml."""
    return {
        case.get("name"): "failed" if case.find("failure") is not None else "passed"
        for case in ET.parse(xml_path).iter("testcase")
    }


def warning_line() -> int:
    source = (ROOT / "examples" / "deliberate" / "test_protocol.py").read_text().splitlines()
    return next(number for number, line in enumerate(source, start=1) if "warnings.warn(" in line)


def test_filter_takes_node_ids_or_k_expressions_and_fails_when_it_selects_nothing():
    """Also the warnings file: written with pytest's warnings, absent without any."""
    logs = LOGS / "test_protocol"
    node_id = "--test_filter=examples/deliberate/test_protocol.py::TestDraws"
    by_id = bazel("test", PROTOCOL, node_id, "--nocache_test_results")
    assert by_id.returncode == 0, by_id.stderr[-3000:]
    assert ran(logs / "test.xml") == {"test_random_draws": "passed"}
    assert not (logs / "test.warnings").exists()
    assert not (logs / "test.exited_prematurely").exists()

    by_keyword = bazel("test", PROTOCOL, "--test_filter=clamp or warns", "--nocache_test_results")
    assert by_keyword.returncode == 0, by_keyword.stderr[-3000:]
    assert ran(logs / "test.xml") == {"test_clamp_low": "passed", "test_warns": "passed"}
    assert (logs / "test.warnings").read_text() == (
        f"examples/deliberate/test_protocol.py::test_warns: examples/deliberate/test_protocol.py:{warning_line()}: "
        "DeprecationWarning: protocol example: this API is deprecated\n"
    )

    nothing = bazel("test", PROTOCOL, "--test_filter=no_such_test")
    assert nothing.returncode == 3
    log = (logs / "test.log").read_text()
    assert "--test_filter='no_such_test' (-k expression) selected no test of this target (4 collected)" in log


def test_filter_intersects_the_node_ids_of_a_mixed_files_part():
    mixed = ROOT / "bazel-testlogs" / "examples" / "mixed" / "test_mixed_devices_cpu"
    cpu = bazel("test", "//examples/mixed:test_mixed_devices_cpu", "--test_filter=layernorm")
    assert cpu.returncode == 0, cpu.stderr[-3000:]
    assert ran(mixed / "test.xml") == {"test_layernorm_is_normalised[cpu]": "passed"}  # not [cuda]

    gpu_only = "--test_filter=examples/mixed/test_mixed_devices.py::test_softmax_on_gpu_matches_cpu"
    assert bazel("test", "//examples/mixed:test_mixed_devices_cpu", gpu_only).returncode == 3
    assert "selected no test of its 'cpu' part" in (mixed / "test.log").read_text()


def test_runner_fail_fast_stops_at_the_first_failure():
    # Without the flag all 4 tests run (the filter test above); the first one fails on request.
    fail = "--test_env=PROTOCOL_EXAMPLE_FAIL=1"
    assert bazel("test", PROTOCOL, fail, "--test_runner_fail_fast", "--nocache_test_results").returncode == 3
    assert ran(LOGS / "test_protocol" / "test.xml") == {"test_fails_when_asked": "failed"}


def test_a_test_that_ends_the_process_leaves_the_premature_exit_file():
    early = bazel("test", "//examples/deliberate:test_exits_early", "--nocache_test_results")
    assert (LOGS / "test_exits_early" / "test.exited_prematurely").exists()
    # Bazel 8 fails a test that leaves the file behind; Bazel 7 only keeps it in the test logs.
    major = int(bazel("--version").stdout.split()[-1].split(".")[0])  # "bazel 7.7.1"
    assert early.returncode == (3 if major >= 8 else 0), early.stderr[-3000:]


def test_runs_per_test_seeds_random_numpy_and_torch_with_each_runs_seed():
    import random

    import numpy
    import torch

    result = bazel("test", PROTOCOL, "--test_filter=TestDraws", "--runs_per_test=3", "--nocache_test_results")
    assert result.returncode == 0, result.stderr[-3000:]
    for seed in (1, 2, 3):
        run = LOGS / "test_protocol" / f"run_{seed}_of_3"
        assert f"TEST_RANDOM_SEED={seed} (run {seed})" in (run / "test.log").read_text()
        draws = json.loads((run / "test.outputs" / "draws.json").read_text())
        random.seed(seed)
        numpy.random.seed(seed)
        torch.manual_seed(seed)
        assert draws == {
            "torch": torch.rand(3).tolist(),
            "random": random.random(),
            "numpy": float(numpy.random.rand()),
        }


def test_coverage_writes_lcov_that_bazel_merges():
    result = bazel("coverage", PROTOCOL, "--test_filter=clamp", "--nocache_test_results")
    assert result.returncode == 0, result.stderr[-3000:]
    for report in (LOGS / "test_protocol" / "coverage.dat", ROOT / "bazel-out" / "_coverage" / "_coverage_report.dat"):
        text = report.read_text()
        sources = [line for line in text.splitlines() if line.startswith("SF:")]
        assert sources == ["SF:examples/deliberate/protocol_lib.py"], report  # test sources are not instrumented
        lines = {line for line in text.splitlines() if line.startswith("DA:")}
        assert {"DA:5,1", "DA:6,1", "DA:7,0", "DA:13,0"} <= lines, text  # clamp(-3, 0, 10) returns at line 6
        assert "FNDA:0,never_called" in text
