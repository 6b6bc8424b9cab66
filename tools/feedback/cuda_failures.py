"""Recognise test failures and skips caused by the missing GPU of a CPU runner.

Why a table: each message is a fact about some layer (the CPU torch build, the driver, NCCL, a
test's own skip reason), and a reviewer should see at a glance why a failure counted as CUDA's.
Failure patterns are matched against the exception lines only (the message, pytest's `E   ` lines,
or the last line of a native traceback), never against the source lines pytest prints around them,
so a test whose *code* mentions CUDA but fails on an assertion is left alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NamedTuple


class Verdict(NamedTuple):
    """is_cuda: the outcome is explained by a missing GPU; gpu_count: GPUs the evidence asks for (>= 1);
    evidence: the line that proved it; note: which rule matched."""

    is_cuda: bool
    gpu_count: int
    evidence: str
    note: str


NOT_CUDA = Verdict(False, 0, "", "")


@dataclass(frozen=True)
class Rule:
    pattern: re.Pattern[str]
    note: str
    count_group: int | None = None  # regex group holding a GPU count
    count: int = 1  # GPU count when the pattern has no group (e.g. "multiple GPUs" -> 2)
    source_lines: bool = False  # also match pytest's `>` source lines (for `assert torch.cuda...`)


def _r(text: str) -> re.Pattern[str]:
    return re.compile(text, re.IGNORECASE)


# Failures (and errors) of a test on a CPU runner.
FAILURE_RULES: tuple[Rule, ...] = (
    Rule(_r(r"Torch not compiled with CUDA enabled"), "CPU-only torch build asked for CUDA"),
    Rule(_r(r"No CUDA GPUs are available"), "CUDA runtime found no GPU"),
    Rule(_r(r"Found no NVIDIA driver on your system"), "torch found no NVIDIA driver"),
    Rule(_r(r"CUDA driver initialization failed"), "CUDA driver could not initialise (no GPU)"),
    Rule(_r(r"Cannot access accelerator device when none is available"), "torch.accelerator has no device"),
    Rule(_r(r"no CUDA-capable device is detected"), "CUDA runtime found no device"),
    Rule(_r(r"Distributed package doesn't have NCCL built in"), "NCCL backend unavailable in this torch build"),
    Rule(_r(r"ProcessGroupNCCL\b.*(?:only supported with GPUs|no GPUs found|not available)"),
         "NCCL process group needs GPUs"),
    Rule(_r(r"(?:NCCL|nccl) (?:is )?not available"), "NCCL unavailable"),
    Rule(_r(r"Attempting to deserialize object on a CUDA device"), "torch.load of CUDA tensors without CUDA"),
    Rule(_r(r"\bCUDA error\b"), "CUDA runtime error"),
    Rule(_r(r"cudaGetDeviceCount"), "CUDA device query failed"),
    Rule(_r(r"(?:Failed to initialize|could not initialize|Error initializing) NVML|NVMLError"),
         "NVIDIA management library unavailable"),
    Rule(_r(r"lib(?:cuda|cudart|cublas|cudnn|nccl|nvrtc)[\w.-]*\.so[\w.]*: cannot open shared object file"),
         "CUDA library missing"),
    Rule(_r(r"0 active drivers \(\[\]\)"), "Triton found no GPU driver"),
    Rule(_r(r"\bCUDA (?:is )?(?:not available|unavailable)\b"), "the test says CUDA is not available"),
    Rule(_r(r"assert\s+(?:not\s+)?\(?\s*torch\.cuda\.is_available\(\)"), "the test asserts CUDA is available",
         source_lines=True),
    Rule(_r(r"where False = <function is_available"), "the test asserts CUDA is available"),
    Rule(_r(r"assert\s+torch\.cuda\.device_count\(\)\s*(?:>=|==)\s*(\d+)"), "the test asserts a GPU count",
         count_group=1, source_lines=True),
    Rule(_r(r"assert\s+torch\.cuda\.device_count\(\)\s*>\s*(\d+)"), "the test asserts a GPU count",
         count_group=1, source_lines=True),
)

# Skip (and xfail) reasons that say the test needs a GPU.
_GPU = r"(?:cuda|gpus?|nvidia|nccl)"
SKIP_RULES: tuple[Rule, ...] = (
    Rule(_r(r"\b(?:requires?|needs?|need)\s+(?:at\s+least\s+)?(\d+)\s+(?:cuda\s+|nvidia\s+)?(?:gpus|devices)\b"),
         "skip reason asks for several GPUs", count_group=1),
    Rule(_r(r"\b(?:requires?|needs?)\s+(?:at\s+least\s+)?(\d+)\s+(?:cuda\s+)?gpu\b"),
         "skip reason asks for a GPU count", count_group=1),
    Rule(_r(r"\b(?:multiple|multi|several|more than one)[- ](?:cuda\s+)?(?:gpus?|devices)\b"),
         "skip reason asks for several GPUs", count=2),
    Rule(_r(r"\bdevice_count\(\)\s*(?:>=|==)\s*(\d+)"), "skip condition on the GPU count", count_group=1),
    Rule(_r(r"Torch not compiled with CUDA enabled"), "skipped: CPU-only torch build"),
    Rule(_r(r"\b(?:requires?|needs?|need)\b[^.;\n]{0,30}?\b" + _GPU + r"\b"), "skip reason says a GPU is needed"),
    Rule(_r(r"\b" + _GPU + r"\b[^.;\n]{0,20}?\b(?:is\s+)?(?:not|n't|un)\s*(?:available|found|detected|present)"),
         "skip reason says CUDA is not available"),
    Rule(_r(r"\bno\s+(?:cuda|gpus?|nvidia)\b"), "skip reason says there is no GPU"),
    Rule(_r(r"\bwithout\s+(?:a\s+)?(?:cuda|gpus?)\b"), "skipped without a GPU"),
    Rule(_r(r"\b(?:cuda|gpu)[- ]only\b"), "skip reason says GPU-only"),
    Rule(_r(r"\bcuda\.is_available\(\)"), "skip condition on torch.cuda.is_available()"),
)

_E_LINE = re.compile(r"^E {1,}(.*)$")
_SOURCE_LINE = re.compile(r"^>\s+(.*)$")
_EXC_PREFIX = re.compile(r"^(?:[\w.]*(?:Error|Exception|Warning)\w*|Failed|Skipped):\s*")


def _exception_lines(message: str, details: str) -> list[str]:
    """The lines that state what went wrong: the message, pytest `E` lines, else the last traceback lines."""
    lines = [ln.strip() for ln in message.splitlines() if ln.strip()]
    e_lines = [m.group(1).strip() for m in map(_E_LINE.match, details.splitlines()) if m]
    if e_lines:
        return lines + [ln for ln in e_lines if ln]
    tail = [ln.strip() for ln in details.splitlines() if ln.strip()]
    # --tb=native / unittest style: the exception lines are last ("RuntimeError: ...").
    return lines + [ln for ln in tail[-20:] if not ln.startswith("File ")]


def _source_lines(details: str) -> list[str]:
    return [m.group(1).strip() for m in map(_SOURCE_LINE.match, details.splitlines()) if m]


def _match(rules: tuple[Rule, ...], lines: list[str], source: list[str]) -> Verdict:
    for rule in rules:
        for line in lines + (source if rule.source_lines else []):
            m = rule.pattern.search(line)
            if m:
                count = int(m.group(rule.count_group)) if rule.count_group else rule.count
                return Verdict(True, max(1, count), clean_evidence(line), rule.note)
    return NOT_CUDA


def clean_evidence(line: str) -> str:
    """`AssertionError: Torch not compiled ...` -> `Torch not compiled ...`, at most 200 characters."""
    text = re.sub(r'^failed on (?:setup|teardown|call) with "(.*)"$', r"\1", line.strip())
    text = _EXC_PREFIX.sub("", text).strip() or line.strip()
    return text if len(text) <= 200 else text[:197] + "..."


def classify_failure(message: str, details: str) -> Verdict:
    """A failed or errored test: is the missing GPU the cause?"""
    return _match(FAILURE_RULES, _exception_lines(message, details), _source_lines(details))


def classify_skip(message: str, details: str) -> Verdict:
    """A skipped (or xfailed) test: does its reason say it needs a GPU? The failure rules apply too
    (a skip raised from `except RuntimeError as e: pytest.skip(str(e))`)."""
    lines = [ln.strip() for ln in (message or details).splitlines() if ln.strip()]
    lines = [re.sub(r"^\S+\.py:\d+:\s*", "", ln) for ln in lines]  # skip details start with "path:line: "
    verdict = _match(SKIP_RULES, lines, [])
    return verdict if verdict.is_cuda else _match(FAILURE_RULES, lines, [])


def classify_outcome(outcome: str, message: str, details: str) -> Verdict:
    """Dispatch on a test case's outcome; passed tests are never CUDA failures."""
    if outcome in ("failed", "error"):
        return classify_failure(message, details)
    if outcome == "skipped":
        return classify_skip(message, details)
    return NOT_CUDA
