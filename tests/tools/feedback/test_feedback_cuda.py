"""The CUDA failure table: what counts as a missing-GPU failure or skip, and what is left alone."""

from __future__ import annotations

import pytest

from tools.feedback.cuda_failures import FAILURE_RULES, SKIP_RULES, classify_failure, classify_outcome, classify_skip

FAILURES = [
    ("AssertionError: Torch not compiled with CUDA enabled", 1),
    ("RuntimeError: No CUDA GPUs are available", 1),
    ("RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU", 1),
    ("RuntimeError: CUDA driver initialization failed, you might not have a CUDA gpu.", 1),
    ("RuntimeError: Cannot access accelerator device when none is available.", 1),
    ("RuntimeError: Distributed package doesn't have NCCL built in", 1),
    ("ValueError: ProcessGroupNCCL is only supported with GPUs, no GPUs found!", 1),
    ("RuntimeError: CUDA error: no CUDA-capable device is detected", 1),
    ("UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount()", 1),
    ("RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False.", 1),
    ("OSError: libcudart.so.12: cannot open shared object file: No such file or directory", 1),
    ("RuntimeError: 0 active drivers ([]). There should only be one.", 1),
    ("pynvml.NVMLError_LibraryNotFound: NVML Shared Library Not Found", 1),
]


@pytest.mark.parametrize(("line", "count"), FAILURES)
def test_cuda_failures_are_recognised(line: str, count: int):
    details = f"def test_x():\n>       run()\nE       {line}\n\ntests/a/test_x.py:3: Error"
    verdict = classify_failure(line, details)
    assert verdict.is_cuda and verdict.gpu_count == count
    assert verdict.evidence and verdict.evidence in line
    assert not verdict.evidence.startswith(("AssertionError", "RuntimeError", "ValueError", "OSError", "UserWarning",
                                            "pynvml"))  # the exception class is stripped


SKIPS = [
    ("requires CUDA", 1),
    ("CUDA not available", 1),
    ("CUDA is not available", 1),
    ("needs a CUDA GPU", 1),
    ("no GPU", 1),
    ("No CUDA devices found", 1),
    ("Requires 2 GPUs", 2),
    ("Need at least 4 CUDA devices", 4),
    ("test requires multiple GPUs", 2),
    ("Multi-GPU test", 2),
    ("torch.cuda.device_count() >= 8 is False", 8),
    ("skipped without CUDA", 1),
    ("GPU-only kernel", 1),
    ("condition: not torch.cuda.is_available()", 1),
    ("NCCL not available", 1),
]


@pytest.mark.parametrize(("reason", "count"), SKIPS)
def test_gpu_skip_reasons_are_recognised(reason: str, count: int):
    verdict = classify_skip(reason, f"/abs/tests/a/test_x.py:7: {reason}")
    assert verdict.is_cuda, reason
    assert verdict.gpu_count == count


@pytest.mark.parametrize("reason", ["slow", "MPS not available", "requires network access", "flaky on Windows",
                                    "no performance baseline for 'x'", "not supported on CUDA yet? run on cpu only"])
def test_other_skip_reasons_are_left_alone(reason: str):
    assert not classify_skip(reason, reason).is_cuda


def test_source_lines_mentioning_cuda_do_not_count():
    # The test's code talks about CUDA, but it failed on a plain assertion.
    details = ("def test_x():\n    if torch.cuda.is_available():\n        raise RuntimeError('No CUDA GPUs are "
               "available')\n>       assert 1 == 2\nE       assert 1 == 2\n\ntests/a/test_x.py:5: AssertionError")
    assert not classify_failure("assert 1 == 2", details).is_cuda


def test_native_tracebacks_use_the_last_lines():
    details = ('Traceback (most recent call last):\n  File "x.py", line 3, in test\n    torch.cuda.init()\n'
               "RuntimeError: Found no NVIDIA driver on your system.")
    assert classify_failure("", details).is_cuda


def test_assert_on_device_count_gives_the_count():
    details = ">       assert torch.cuda.device_count() >= 4\nE       assert 0 >= 4\nE        +  where 0 = ..."
    verdict = classify_failure("AssertionError: assert 0 >= 4", details)
    assert verdict.is_cuda and verdict.gpu_count == 4


def test_passed_tests_are_never_cuda_failures():
    assert not classify_outcome("passed", "Torch not compiled with CUDA enabled", "").is_cuda


def test_every_rule_has_a_note():
    assert all(rule.note for rule in FAILURE_RULES + SKIP_RULES)
