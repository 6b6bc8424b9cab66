"""Reading results: real Bazel test.xml/test.log, plain JUnit (both families), and bad input of every kind."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from feedback_helpers import BAZEL_GENERATED, DELIBERATE, GPU_RUN, HIDDEN, HIDDEN_SYNC, JUNIT, copy_dir

from tools.feedback.results import nodeid_from_junit, parse_log, read_results, read_test_dir


def _by_id(results):
    return {c.nodeid: c for c in results.cases}


def test_real_bazel_result_maps_to_pytest_node_ids():
    results = read_test_dir(HIDDEN_SYNC)
    cases = _by_id(results)
    assert set(cases) == {f"{HIDDEN}::test_adds_on_cpu", f"{HIDDEN}::test_waits_for_device"}
    assert cases[f"{HIDDEN}::test_adds_on_cpu"].outcome == "passed"
    failed = cases[f"{HIDDEN}::test_waits_for_device"]
    assert failed.outcome == "failed"
    assert "Torch not compiled with CUDA enabled" in failed.message
    assert "examples/feedback_example/test_hidden_sync.py:14" in failed.details
    run = results.runs[0]
    assert run.target == "//examples/feedback_example:test_hidden_sync"
    assert run.runtime[0]["cuda_available"] is False and not run.cuda_available
    assert run.label == "test.xml of //examples/feedback_example:test_hidden_sync"
    assert results.problems == []


def test_directory_walk_finds_every_target_and_skips_outputs(tmp_path: Path):
    results = read_results([HIDDEN_SYNC.parents[2]])
    assert {r.target for r in results.runs} == {"//examples/feedback_example:test_hidden_sync",
                                                "//examples/deliberate:test_fails_on_purpose"}
    assert len(results.cases) == 4


@pytest.mark.parametrize("family", ["xunit1.xml", "xunit2.xml"])
def test_plain_junit_both_families(family: str):
    # xunit1 carries file=, xunit2 does not: the node ids must come out identical.
    cases = _by_id(read_results([JUNIT / family]))
    assert "pkg/test_plain.py::TestDevice::TestNested::test_nested" in cases
    assert "pkg/test_plain.py::TestDevice::test_param[2]" in cases
    assert cases["pkg/test_plain.py::test_devices[cuda]"].outcome == "failed"
    assert cases["pkg/test_plain.py::test_skip_requires_cuda"].outcome == "skipped"
    assert cases["pkg/test_plain.py::test_setup_error"].outcome == "error"
    assert cases["pkg/test_import_cuda.py"].outcome == "error"  # collection error: the whole file
    assert len(cases) == 16


def test_nodeid_uses_known_files_before_the_capitalisation_guess():
    known = {"tests/Odd/test_m.py"}.__contains__
    nodeid = nodeid_from_junit("tests.Odd.test_m.TestA", "test_x[a.b]", None, known)
    assert nodeid == "tests/Odd/test_m.py::TestA::test_x[a.b]"
    assert nodeid_from_junit("tests.a.test_m.TestA", "test_x", None, None) == "tests/a/test_m.py::TestA::test_x"
    assert nodeid_from_junit("", "tests.a.test_m", None, None) == "tests/a/test_m.py"


def test_bazel_generated_xml_falls_back_to_the_log_and_says_why():
    results = read_test_dir(BAZEL_GENERATED)
    assert results.cases == []
    [problem] = results.problems
    assert problem.path.endswith("test.log")
    assert "No module named 'pytest_torch_glue'" in problem.reason
    assert results.runs[0].target == "//examples/torch_gpu:test_cuda_ops"


def test_gpu_run_is_recognised_from_its_outputs():
    run = read_test_dir(GPU_RUN).runs[0]
    assert run.cuda_available
    assert run.gpu_memory_files and run.gpu_memory_files[0].endswith("torch-gpu-memory.json")


def test_truncated_xml_keeps_earlier_cases_and_uses_the_log(tmp_path: Path):
    d = copy_dir(HIDDEN_SYNC, tmp_path / "t")
    data = (d / "test.xml").read_bytes()
    cut = data.index(b"<testcase", data.index(b"test_adds_on_cpu")) + 40  # inside the second testcase
    (d / "test.xml").write_bytes(data[:cut])
    results = read_test_dir(d)
    cases = _by_id(results)
    assert cases[f"{HIDDEN}::test_adds_on_cpu"].outcome == "passed"
    # The failing case is recovered from test.log's FAILURES section, with its traceback.
    failed = cases[f"{HIDDEN}::test_waits_for_device"]
    assert failed.outcome == "failed" and "Torch not compiled with CUDA enabled" in failed.details
    assert any("truncated" in p.reason and p.path.endswith("test.xml") for p in results.problems)


def test_invalid_xml_is_reported_with_its_position(tmp_path: Path):
    d = copy_dir(DELIBERATE, tmp_path / "t")
    (d / "test.xml").write_bytes(b"<?xml version='1.0'?><testsuites><testsuite><testcase classname='a' name='b'>"
                                 b"</testsuite></testsuites>")
    results = read_test_dir(d)
    [problem] = [p for p in results.problems if p.path.endswith("test.xml")]
    assert "invalid XML" in problem.reason and "line 1" in problem.reason
    assert "examples/deliberate/test_fails_on_purpose.py::test_failing_case" in _by_id(results)  # from the log


def test_missing_xml_and_missing_log(tmp_path: Path):
    d = tmp_path / "empty"
    d.mkdir()
    results = read_results([d, tmp_path / "nope.xml"])
    reasons = " ".join(p.reason for p in results.problems)
    assert "no test.xml, test.log or JUnit *.xml found" in reasons and "no such file" in reasons


def test_non_utf8_bytes_do_not_hide_tests(tmp_path: Path):
    d = copy_dir(HIDDEN_SYNC, tmp_path / "t")
    data = (d / "test.xml").read_bytes().replace(b"Torch not compiled", b"\xff\xfe\x1b[31mTorch not compiled")
    (d / "test.xml").write_bytes(data)
    results = read_test_dir(d)
    assert results.problems == []
    assert "Torch not compiled with CUDA enabled" in _by_id(results)[f"{HIDDEN}::test_waits_for_device"].message


def test_two_gigabyte_log_reads_only_its_tail(tmp_path: Path):
    # A sparse file: 2 GiB of holes, then the real pytest report. Nothing close to 2 GiB touches disk or memory.
    d = copy_dir(HIDDEN_SYNC, tmp_path / "t")
    (d / "test.xml").write_bytes(b"<testsuites><testsuite name='x'><testcase name='x' status='run'>")  # broken
    report = (HIDDEN_SYNC / "test.log").read_bytes()
    log = d / "test.log"
    with log.open("wb") as handle:
        handle.truncate(2 * 2**30)
    with log.open("ab") as handle:
        handle.write(b"\xff\xfe garbage without newline " + b"\n" + report)
    assert log.stat().st_size > 2 * 2**30
    started = time.monotonic()
    results = read_test_dir(d)
    assert time.monotonic() - started < 5
    assert _by_id(results)[f"{HIDDEN}::test_waits_for_device"].outcome == "failed"
    assert any("2.0 GiB log: read only its last 8.0 MiB" in p.reason for p in results.problems)


def test_huge_xml_is_capped(tmp_path: Path):
    d = copy_dir(HIDDEN_SYNC, tmp_path / "t")
    results = read_test_dir(d, max_xml_bytes=600)
    assert any("only the first 600 B" in p.reason for p in results.problems)
    sparse = tmp_path / "zeros.xml"
    with sparse.open("wb") as handle:
        handle.truncate(2 * 2**30)
    started = time.monotonic()
    bad = read_results([sparse])
    assert time.monotonic() - started < 5
    assert "invalid XML" in bad.problems[0].reason or "truncated" in bad.problems[0].reason


def test_failure_text_is_bounded(tmp_path: Path):
    body = "x" * (3 * 2**20)
    xml = tmp_path / "big.xml"
    xml.write_text(f"<testsuites><testsuite name='pytest'><testcase classname='a.test_b' name='test_c'>"
                   f"<failure message='m'>{body}\nE   RuntimeError: No CUDA GPUs are available</failure>"
                   "</testcase></testsuite></testsuites>")
    [case] = read_results([xml]).cases
    assert len(case.details) < 100_000
    assert case.details.rstrip().endswith("No CUDA GPUs are available")
    assert "characters omitted" in case.details


def test_log_parser_maps_titles_to_node_ids():
    cases = {c.nodeid: c for c in parse_log((JUNIT / "pytest.log").read_text())}
    assert cases["pkg/test_plain.py::TestDevice::TestNested::test_nested"].outcome == "failed"
    assert "Torch not compiled" in cases["pkg/test_plain.py::TestDevice::TestNested::test_nested"].details
    assert cases["pkg/test_import_cuda.py"].outcome == "error"
    assert "Torch not compiled" in cases["pkg/test_plain.py::test_setup_error"].details


def test_unreadable_runtime_json_is_reported(tmp_path: Path):
    d = copy_dir(HIDDEN_SYNC, tmp_path / "t")
    (d / "test.outputs/torch-runtime.json").write_text("{not json")
    results = read_test_dir(d)
    assert any("unreadable runtime info" in p.reason for p in results.problems)
    assert len(results.cases) == 2


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads everything")
def test_unreadable_xml_is_reported(tmp_path: Path):
    d = copy_dir(HIDDEN_SYNC, tmp_path / "t")
    (d / "test.xml").chmod(0)
    assert any("unreadable" in p.reason for p in read_test_dir(d).problems)
