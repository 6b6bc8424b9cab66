"""Evidence: the findings an analysis produces and how they decide a test's label.

Kept apart from the analysis so the label rules (manual wins, GPU-only skips, mocks, unknown is never a
silent cpu) are written once and read in one place.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import field

from tools.classify.frozen import frozen

GPU = "gpu"  # code that needs an accelerator when it runs on a CPU-only machine
SKIP = "skip"  # a skip reached in the CPU world; GPU-related when it disappears with GPUs
UNKNOWN = "unknown"  # something the analysis could not resolve and that may touch a GPU
MOCK = "mock"  # the test patches torch.cuda.*: it runs on a CPU
MANUAL_GPU = "manual_gpu"  # @pytest.mark.gpu: the author said so
MANUAL_CPU = "manual_cpu"  # @pytest.mark.cpu
VRAM = "vram"  # a memory hint (largeTensorTest, torch_max_memory) that only matters for GPU tests
ERROR = "error"  # the file (or a conftest) could not be analysed
# a CUDA use that is not a need: it runs only when a CUDA value already exists (guards.cuda_guard); it decides
# nothing and is shown as the reason of a `cpu` label, so `--explain` says why that CUDA call did not count
GUARDED = "guarded"
# code reached one of conventions.FOREIGN_CLASS_PACKAGES (key: the package): objects of its classes may exist
IMPORTS = "imports"
# a GPU use or an unknown in a branch taken only for an object of such a class (key: `<gpu|unknown>|<packages,
# comma-separated>`): what it was where the test reached one of them (IMPORTS), else a reason of a `cpu` label
IF_IMPORTED = "if_imported"

MAX_STEPS = 12
# The identity of a skip (Finding.key) across analysis worlds: `path:line` of a skip call reached in code, or
# this prefix and the mark's own location and text for a skip mark (skipif/skipUnless on a test, a class, a
# parameter or a fixture parameter). Code never yields a mark key, which lets a GPU world that only has to
# settle mark skips leave the test body alone (Analyzer.classify_case).
MARK_SKIP_KEY = "mark:"
# A skip mark without a condition (`@pytest.mark.skip(reason=...)`, `unittest.skip`): its key starts with this.
# When no GPU world lifts it either, the test runs nowhere, whatever its body would need.
ALWAYS_SKIP_KEY = MARK_SKIP_KEY + "always:"
# Ends the key of a skip whose reason names an accelerator (`pytest.skip("... not supported with NCCL backend")`,
# `@pytest.mark.skip(reason="needs two CUDA devices")`): one that every machine reaches is a GPU test no machine
# runs today, as pytest's report says (a CPU-only run labels it by that reason), not a CPU test
GPU_REASON = "#reason-names-an-accelerator"
_ACCELERATOR_WORDS = re.compile(r"\b(?:cuda|gpus?|nccl|nvidia|accelerators?)\b", re.IGNORECASE)


SKIPPED_EVERYWHERE = " (skipped everywhere, for a reason that names an accelerator: a GPU test no machine runs)"


def names_accelerator(reason: object) -> bool:
    """Whether a skip's reason (a text) names an accelerator."""
    return isinstance(reason, str) and _ACCELERATOR_WORDS.search(reason) is not None
# An `assert torch.cuda.is_available()` that the world decided (checked in the GPU worlds like a skip); a test that
# patches torch.cuda (MOCK) makes such an assert hold on a CPU, so it is no need there
ASSERT_KEY = "assert:"
# A GPU need of running `nvidia-smi` in a subprocess (it is not installed without an NVIDIA driver): a `try` swallows
# it when a handler catches the errors starting a program raises (OSError, CalledProcessError), not CUDA's
PROCESS_KEY = "process:"
# A GPU need of calling NVIDIA's management library (pynvml's `nvmlInit()`, ...: it needs the driver's libnvidia-ml):
# a `try` swallows it when a handler catches NVMLError (or Exception)
NVML_KEY = "nvml:"


@frozen
class Finding:
    """One piece of evidence: a kind and the `path:line: what` chain that leads to it."""

    kind: str
    steps: tuple[str, ...]
    gpu_count: int = 1
    vram_gb: float = 0
    key: str = ""  # identity of a skip across analysis worlds (its source location)
    # a skip reached on a path the analysis could not decide (Frame.branch, there or at a call on the way): the
    # test may run past it (analyzer._classify_case)
    maybe: bool = False

    def prefixed(self, step: str) -> Finding:
        steps = (step, *self.steps)
        if len(steps) > MAX_STEPS:
            steps = (*steps[: MAX_STEPS - 1], steps[-1])
        return Finding(self.kind, steps, self.gpu_count, self.vram_gb, self.key, self.maybe)


def step(path: str, line: int, what: str) -> str:
    return f"{path}:{line}: {what}"


@frozen
class Verdict:
    """The label of one test (or parametrization) with its reasons."""

    label: str
    gpu_count: int = 0
    vram_gb: float = 0
    reasons: tuple[str, ...] = field(default=())
    # the id names another case on a machine without GPUs, and that one is a CPU test (the classification
    # file's `without_gpus`); `label` is the GPU machine's
    cpu_without_gpus: bool = False

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {
            "label": self.label,
            "gpu_count": self.gpu_count,
            "vram_gb": self.vram_gb,
            "reasons": list(self.reasons),
        }
        if self.cpu_without_gpus:
            out["without_gpus"] = "cpu"
        return out


def _chain(f: Finding) -> str:
    return " -> ".join(f.steps)


def _vram(findings: Iterable[Finding]) -> float:
    return max((f.vram_gb for f in findings), default=0)


def decide(findings: Iterable[Finding], gpu_skips: dict[str, int], default_step: str) -> Verdict:
    """Turn findings into a label. `gpu_skips` maps skip keys that vanish with GPUs to the GPU count.

    Order of precedence: manual marks, then GPU requirements (conventions, CUDA-only skips), then a skip
    without a condition (the test never runs), then a CUDA mock (the test runs on a CPU), then GPU effects,
    then unknowns, else cpu.
    """
    found = sorted(set(findings), key=lambda f: (f.kind, f.steps, f.key, f.gpu_count, f.vram_gb))
    if not found:
        return Verdict("cpu", 0, 0, (default_step,))
    by_kind: dict[str, list[Finding]] = {}
    for f in found:
        by_kind.setdefault(f.kind, []).append(f)
    vram = _vram(by_kind.get(VRAM, []))
    if MANUAL_GPU in by_kind:
        fs = by_kind[MANUAL_GPU]
        count = max(f.gpu_count for f in fs)
        return Verdict(GPU, max(count, 1), max(_vram(fs), vram), tuple(_chain(f) for f in fs))
    if MANUAL_CPU in by_kind:
        return Verdict("cpu", 0, 0, tuple(_chain(f) for f in by_kind[MANUAL_CPU]))
    if ERROR in by_kind:
        return Verdict(UNKNOWN, 0, 0, tuple(_chain(f) for f in by_kind[ERROR]))
    required = [f for f in by_kind.get(SKIP, []) if f.key in gpu_skips
                and not (MOCK in by_kind and f.key.startswith(ASSERT_KEY))]
    requirement = [
        Finding(GPU, f.steps, gpu_skips[f.key], f.vram_gb, f.key) for f in required
    ]
    imported = {f.key for f in by_kind.get(IMPORTS, [])}
    conditional = by_kind.get(IF_IMPORTED, [])
    live = [f for f in conditional if imported & set(f.key.partition("|")[2].split(","))]
    for f in live:
        kind = f.key.partition("|")[0]
        by_kind.setdefault(kind, []).append(Finding(kind, f.steps, f.gpu_count, f.vram_gb))
    notes = by_kind.get(GUARDED, []) + [f for f in conditional if f not in live]
    effects = by_kind.get(GPU, [])
    hard = [f for f in effects if f.key == "requirement"] + requirement
    if hard:
        count = max(f.gpu_count for f in hard + effects)
        return Verdict(GPU, max(count, 1), max(_vram(hard + effects), vram), tuple(_chain(f) for f in hard))
    # a disabled test: skipped on every machine, so a CPU runner is as good as any; a GPU requirement the author
    # declared beside the skip (`@require_cuda` + `@skip(...)`, above) still says where it belongs
    never = [f for f in by_kind.get(SKIP, []) if f.key.startswith(ALWAYS_SKIP_KEY) and f.key not in gpu_skips]
    gpu_reasons = [f for f in never if f.key.endswith(GPU_REASON)]
    if gpu_reasons:
        return Verdict(GPU, 1, vram, tuple(_chain(f) + SKIPPED_EVERYWHERE for f in gpu_reasons))
    if never:
        return Verdict("cpu", 0, 0, tuple(_chain(f) + " (skipped everywhere: the test never runs)" for f in never))
    if MOCK in by_kind:
        return Verdict("cpu", 0, 0, tuple(_chain(f) for f in by_kind[MOCK]))
    if effects:
        count = max(f.gpu_count for f in effects)
        return Verdict(GPU, max(count, 1), max(_vram(effects), vram), tuple(_chain(f) for f in effects))
    if UNKNOWN in by_kind:
        return Verdict(UNKNOWN, 0, 0, tuple(_chain(f) for f in by_kind[UNKNOWN]))
    return Verdict("cpu", 0, 0, tuple(_chain(f) for f in notes) if notes else (default_step,))


def join_verdicts(a: Verdict, b: Verdict) -> Verdict:
    """One label for tests that share a key: gpu if either is, else unknown if either is, else cpu."""
    for label in (GPU, UNKNOWN):
        if label in (a.label, b.label):
            parts = [v for v in (a, b) if v.label == label]
            reasons = tuple(dict.fromkeys(r for v in parts for r in v.reasons))
            return Verdict(label, max(v.gpu_count for v in parts), max(v.vram_gb for v in parts), reasons)
    return a
