"""Reclassification from results: exact moves with evidence, manual never touched, stale and GPU input refused."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from feedback_helpers import (
    DELIBERATE,
    GPU_RUN,
    HIDDEN,
    HIDDEN_SYNC,
    JUNIT,
    TESTLOGS,
    classification,
    copy_dir,
    example_classification,
    file_entry,
    plain_classification,
    test_entry,
)

from tools.contract import classification as cf
from tools.feedback.reclassify import markdown, reclassify
from tools.feedback.results import read_results

EVIDENCE = (f"{HIDDEN}:14: CPU run failed: Torch not compiled with CUDA enabled "
            "(test.xml of //examples/feedback_example:test_hidden_sync)")


def test_hidden_sync_moves_to_gpu_with_the_failure_as_evidence():
    data = example_classification()
    before = copy.deepcopy(data)
    new, report = reclassify(data, read_results([TESTLOGS]))
    assert data == before  # pure
    entry = new["files"][HIDDEN]
    assert entry["tests"]["test_waits_for_device"] == {
        "label": "gpu", "gpu_count": 1, "vram_gb": 0, "source": "runtime", "reasons": [EVIDENCE]}
    assert entry["tests"]["test_adds_on_cpu"] == data["files"][HIDDEN]["tests"]["test_adds_on_cpu"]
    assert (entry["label"], entry["gpu_count"]) == ("mixed", 1)
    assert [m.nodeid for m in report.moves] == [f"{HIDDEN}::test_waits_for_device"]
    # The deliberate assertion failure is not about CUDA: listed, left alone.
    assert [n.nodeid for n in report.not_cuda] == ["examples/deliberate/test_fails_on_purpose.py::test_failing_case"]
    assert new["files"]["examples/deliberate/test_fails_on_purpose.py"] == data["files"][
        "examples/deliberate/test_fails_on_purpose.py"]
    cf.validate(new)


def test_second_application_moves_nothing():
    new, _ = reclassify(example_classification(), read_results([TESTLOGS]))
    again, report = reclassify(new, read_results([TESTLOGS]))
    assert again == new and report.moved == 0
    assert report.already_gpu == [f"{HIDDEN}::test_waits_for_device"]


def test_manual_entries_are_never_touched():
    data = example_classification()
    data["files"][HIDDEN]["tests"]["test_waits_for_device"]["source"] = "manual"
    new, report = reclassify(data, read_results([TESTLOGS]))
    assert new["files"][HIDDEN] == data["files"][HIDDEN]
    assert report.moved == 0 and [n.nodeid for n in report.manual_kept] == [f"{HIDDEN}::test_waits_for_device"]
    data["files"][HIDDEN]["source"] = "manual"  # a manual file entry
    data["files"][HIDDEN]["tests"]["test_waits_for_device"]["source"] = "static"
    new, report = reclassify(data, read_results([TESTLOGS]))
    assert new["files"][HIDDEN] == data["files"][HIDDEN] and report.moved == 0


def test_results_for_tests_that_no_longer_exist_are_reported_and_ignored():
    data = example_classification()
    del data["files"][HIDDEN]["tests"]["test_waits_for_device"]  # renamed since the run
    new, report = reclassify(data, read_results([HIDDEN_SYNC]))
    assert new == data and report.moved == 0
    assert "no test 'test_waits_for_device'" in report.missing[0].text
    del data["files"][HIDDEN]  # file deleted
    new, report = reclassify(data, read_results([HIDDEN_SYNC]))
    assert new == data and "not in the classification file" in report.missing[0].text


def test_gpu_run_fed_by_mistake_is_refused():
    data = classification({"examples/torch_gpu/test_cuda_ops.py": file_entry({
        "test_matmul_on_gpu_matches_cpu": test_entry("cpu"),  # even if it were misclassified cpu
        "test_stream_ordering": test_entry("cpu"),
        "test_synchronize_after_async_copy": test_entry("cpu")})})
    new, report = reclassify(data, read_results([GPU_RUN]))
    assert new == data and report.moved == 0
    assert "cuda_available: true" in report.refused[0].text


def test_gpu_target_results_are_refused_even_without_runtime_info(tmp_path: Path):
    d = copy_dir(HIDDEN_SYNC, tmp_path / "t")
    (d / "test.outputs/torch-runtime.json").unlink()
    data = example_classification()
    for t in data["files"][HIDDEN]["tests"].values():
        t.update(label="gpu", gpu_count=1)
    data["files"][HIDDEN]["label"] = "gpu"
    new, report = reclassify(data, read_results([d]))
    assert new == data and "ran only tests classified gpu" in report.refused[0].text


def test_plain_junit_moves_exactly_the_cuda_failures():
    data = plain_classification()
    new, report = reclassify(data, read_results([JUNIT / "xunit2.xml"]))
    moved = {m.nodeid: m.gpu_count for m in report.moves}
    assert moved == {
        "pkg/test_import_cuda.py::test_never_collected": 1,  # the module failed to import on CUDA
        "pkg/test_plain.py::test_no_cuda_gpus": 1,
        "pkg/test_plain.py::test_skip_requires_cuda": 1,
        "pkg/test_plain.py::test_skip_two_gpus": 2,
        "pkg/test_plain.py::TestDevice::test_cuda_tensor": 1,
        "pkg/test_plain.py::TestDevice::TestNested::test_nested": 1,
        "pkg/test_plain.py::test_asserts_cuda": 1,
        "pkg/test_plain.py::test_device_count": 2,
        "pkg/test_plain.py::test_setup_error": 1,
        "pkg/test_plain.py::test_devices[cuda]": 1,
    }
    tests = new["files"]["pkg/test_plain.py"]["tests"]
    # Only the cuda parametrization moved; the function's entry still covers [cpu].
    assert tests["test_devices[cuda]"]["label"] == "gpu" and tests["test_devices"]["label"] == "cpu"
    assert tests["test_skip_requires_cuda"]["reasons"][0].startswith("pkg/test_plain.py:17: CPU run skipped: requires")
    assert {n.nodeid for n in report.not_cuda} == {"pkg/test_plain.py::test_value_error",
                                                   "pkg/test_plain.py::TestDevice::test_param[2]"}
    assert new["files"]["pkg/test_import_cuda.py"]["label"] == "gpu"
    assert new["files"]["pkg/test_plain.py"]["gpu_count"] == 2
    cf.validate(new)


def test_markdown_summary_fits_a_pull_request(tmp_path: Path):
    _, report = reclassify(example_classification(), read_results([TESTLOGS, tmp_path / "missing.xml"]))
    text = markdown(report)
    assert text.startswith("**Runtime feedback: moved 1 test to gpu:** `examples/feedback_example/test_hidden_sync.py::"
                           "test_waits_for_device`")
    assert "| test | evidence | why it counts | GPUs |" in text
    assert "Torch not compiled with CUDA enabled" in text
    assert "Failures not about CUDA (left alone): 1" in text
    assert "Unreadable or partial input: 1" in text
    _, quiet = reclassify(example_classification(), read_results([DELIBERATE]))
    assert markdown(quiet).startswith("**Runtime feedback: no test moved**")


def test_runtime_labels_survive_a_static_update(tmp_path: Path):
    """The classifier's --update and --check keep what the CPU run proved (issue 6, point 2)."""
    from tools.classify.cli import main as classify_main

    root = tmp_path / "ws"
    (root / "examples/feedback_example").mkdir(parents=True)
    src = Path(__file__).resolve().parents[3] / "examples/feedback_example"
    for name in ("test_hidden_sync.py", "sync_helper.py"):
        (root / "examples/feedback_example" / name).write_bytes((src / name).read_bytes())
    out = root / cf.DEFAULT_FILENAME
    assert classify_main(["--root", str(root), "--update", "--no-cache"]) == 0
    assert json.loads(out.read_text())["files"][HIDDEN]["label"] == "cpu"  # the static pass cannot see it
    new, report = reclassify(cf.load(out), read_results([HIDDEN_SYNC]))
    assert report.moved == 1
    cf.save(out, new)
    assert classify_main(["--root", str(root), "--check", "--no-cache"]) == 0
    assert classify_main(["--root", str(root), "--update", "--no-cache"]) == 0
    after = cf.load(out)["files"][HIDDEN]["tests"]["test_waits_for_device"]
    assert (after["label"], after["source"]) == ("gpu", "runtime")


def test_a_cuda_failure_of_the_case_an_id_names_without_gpus_moves_it():
    """`test_waits_for_device` is gpu on a GPU machine and names a CPU case where no GPU is seen (`without_gpus`):
    the CPU run proves that case needs CUDA too, so the key becomes a plain runtime gpu."""
    data = example_classification()
    entry = data["files"][HIDDEN]
    entry["tests"]["test_waits_for_device"].update({"label": "gpu", "gpu_count": 1, "without_gpus": "cpu"})
    entry.update(cf.file_summary(entry["tests"]))
    assert entry["label"] == "mixed"
    new, report = reclassify(data, read_results([TESTLOGS]))
    assert new["files"][HIDDEN]["tests"]["test_waits_for_device"] == {
        "label": "gpu", "gpu_count": 1, "vram_gb": 0, "source": "runtime", "reasons": [EVIDENCE]}
    assert [m.nodeid for m in report.moves] == [f"{HIDDEN}::test_waits_for_device"] and not report.already_gpu
    cf.validate(new)
