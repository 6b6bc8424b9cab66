"""Reading results and writing files under hostile input (issue #13): giant JUnit attributes, test
cases without a name, writers killed mid-write."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bench.hostile_ops import JUNIT_CASES, run_junit_case
from tools.atomic_write import write_text_atomic
from tools.feedback.results import MAX_ATTRIBUTE, read_results

REPO = Path(__file__).resolve().parents[3]
CUDA = "RuntimeError: Found no NVIDIA driver on your system"


def _write(path: Path, cases: str) -> Path:
    path.write_text(f"<?xml version='1.0'?>\n<testsuites><testsuite name='pytest'>\n{cases}</testsuite></testsuites>\n")
    return path


def test_testcase_without_name_is_an_error_naming_the_file_and_only_that_case_is_skipped(tmp_path: Path) -> None:
    xml = _write(tmp_path / "junit.xml",
                 "<testcase classname='tests.test_x' name='test_a'/>\n"
                 f"<testcase classname='tests.test_x'><failure message='{CUDA}'/></testcase>\n"
                 "<testcase classname='tests.test_x' name='test_b'/>\n")
    results = read_results([xml])
    # Before: the nameless case became the bare file `tests/test_x.py` (a collection error), which
    # moved every test of the file to GPU.
    assert sorted(c.nodeid for c in results.cases) == ["tests/test_x.py::test_a", "tests/test_x.py::test_b"]
    [problem] = results.problems
    assert problem.path == str(xml)
    assert "<testcase> at line 4 (classname 'tests.test_x') has no name; that test case is skipped" in problem.reason


def test_a_giant_message_is_cut_and_reported(tmp_path: Path) -> None:
    message = "x" * (4 << 20) + "&amp;" + "\n" * 10 + CUDA
    xml = _write(tmp_path / "junit.xml",
                 f"<testcase classname='tests.test_x' name='test_a'><failure message='{message}'/></testcase>\n"
                 "<testcase classname='tests.test_x' name='test_b'><failure message='short'/></testcase>\n")
    results = read_results([xml])
    a, b = results.cases
    assert len(a.message) < MAX_ATTRIBUTE + 100 and a.message.endswith("characters cut ...]")
    assert b.message == "short"
    assert f"1 attribute value(s) over 65536 characters cut (largest {len(message)})" in results.problems[0].reason


def test_line_numbers_survive_cut_values_and_comments(tmp_path: Path) -> None:
    xml = _write(tmp_path / "junit.xml",
                 "<!-- one\ntwo\nthree -->\n"
                 f"<testcase classname='tests.test_x' name='test_a'><failure message='{'y' * 70000}\n\n'/>"
                 "</testcase>\n<testcase classname='tests.test_x'/>\n")
    text = xml.read_text()
    line = text.count("\n", 0, text.index("<testcase classname='tests.test_x'/>")) + 1
    assert line == 9
    assert f"<testcase> at line {line} " in read_results([xml]).problems[0].reason


@pytest.mark.parametrize("case", JUNIT_CASES, ids=[c[0] for c in JUNIT_CASES])
def test_generated_malformed_junit(case, tmp_path: Path) -> None:  # noqa: ANN001 - a generator row
    outcome = run_junit_case(case, tmp_path)
    assert outcome.verdict == "ok", outcome.detail


def test_a_killed_writer_leaves_a_temporary_that_the_next_write_removes(tmp_path: Path) -> None:
    target = tmp_path / "torch_classification.json"
    target.write_text("old\n")
    script = ("import os, sys, time; from pathlib import Path; from tools import atomic_write\n"
              "os.fsync = lambda fd: time.sleep(60)  # stop between writing and renaming\n"
              f"atomic_write.write_text_atomic(Path({str(target)!r}), 'new\\n')\n")
    child = subprocess.Popen([sys.executable, "-c", script], cwd=REPO, env=dict(os.environ, PYTHONPATH=str(REPO)))
    deadline = time.monotonic() + 20
    while not list(tmp_path.glob(".*.tmp")):
        assert time.monotonic() < deadline and child.poll() is None
        time.sleep(0.02)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    [left] = list(tmp_path.glob(".*.tmp"))
    assert left.name.startswith(f".torch_classification.json.{child.pid}.") and target.read_text() == "old\n"

    live = subprocess.Popen(["sleep", "30"])  # a live writer's temporary is left alone
    busy = tmp_path / f".torch_classification.json.{live.pid}.abc.tmp"
    busy.write_text("in progress")
    try:
        write_text_atomic(target, "newer\n")
        assert target.read_text() == "newer\n"
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted([busy.name, target.name])
    finally:
        live.kill()
        live.wait()
