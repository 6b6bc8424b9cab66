"""pytest-torch under `bazel test`: which of its options the runner sets, and what Bazel adds.

pytest-torch was written for plain `pytest` at a repository root. Under Bazel the sources are
read-only, outputs belong in `$TEST_UNDECLARED_OUTPUTS_DIR`, several test processes share the
machine and GPUs are handed out per test. Everything here uses pytest-torch's public options and
pytest's hooks only; `REQUIRED_OPTIONS` lists the options relied on, and a test fails when an
upgrade of pytest-torch drops one.

| pytest-torch option              | set when / to                                                      |
|----------------------------------|--------------------------------------------------------------------|
| `--torch-failure-artifacts DIR`  | always under Bazel: `<outputs>/torch-failures` (heatmap PNGs)      |
| `--torch-repro-dir DIR`          | always under Bazel: `<outputs>/torch-repro` (reproduction bundles) |
| `--torch-github-annotations`     | `GITHUB_ACTIONS=true` passed through (`--config=ci` does)          |
| `--torch-perf-file FILE`         | the target's `perf_baselines` data file (read-only)                |
| `--torch-update-perf` + file     | `TORCH_TEST_UPDATE_PERF=1` (update_perf_baselines): record into outputs |
| `--torch-perf-strict`            | `TORCH_TEST_PERF_STRICT=1`: a missing baseline fails               |
| `--torch-num-threads N`          | CPUs Bazel reserved (`cpu:N`, default 1) unless OMP_NUM_THREADS set |
| `--torch-seed N --torch-autoseed`| `TEST_RANDOM_SEED` (`--runs_per_test`): seeded before every test   |

A target's `args` come after these, so they override any of them.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import threading
from collections.abc import Callable, Mapping
from typing import Any

import pytest

REQUIRED_OPTIONS = (
    "--torch-failure-artifacts",
    "--torch-repro-dir",
    "--torch-github-annotations",
    "--torch-perf-file",
    "--torch-update-perf",
    "--torch-perf-strict",
    "--torch-num-threads",
    "--torch-seed",
    "--torch-autoseed",
)
PERF_RECORD_FILE = "torch-perf-baselines.json"
GPU_MEMORY_FILE = "torch-gpu-memory.json"
RUNTIME_FILE = "torch-runtime.json"
GPU_UTIL_FILE = "torch-gpu-util.json"


def pytest_torch_args(environ: Mapping[str, str], root: str, user_set_threads: bool) -> list[str]:
    """pytest-torch options for this Bazel test (see the module docstring's table)."""
    args: list[str] = []
    outputs = environ.get("TEST_UNDECLARED_OUTPUTS_DIR")
    if outputs:
        args += ["--torch-failure-artifacts", os.path.join(outputs, "torch-failures")]
        args += ["--torch-repro-dir", os.path.join(outputs, "torch-repro")]
    if environ.get("GITHUB_ACTIONS") == "true":
        args.append("--torch-github-annotations")
    if environ.get("TORCH_TEST_UPDATE_PERF") == "1":
        if not outputs:
            raise ValueError("TORCH_TEST_UPDATE_PERF=1 needs TEST_UNDECLARED_OUTPUTS_DIR (run it under `bazel test`)")
        args += ["--torch-update-perf", "--torch-perf-file", os.path.join(outputs, PERF_RECORD_FILE)]
    elif environ.get("TORCH_TEST_PERF_BASELINES"):
        args += ["--torch-perf-file", os.path.join(root, environ["TORCH_TEST_PERF_BASELINES"])]
    if environ.get("TORCH_TEST_PERF_STRICT") == "1":
        args.append("--torch-perf-strict")
    if not user_set_threads and environ.get("TORCH_TEST_NUM_THREADS"):
        args += ["--torch-num-threads", environ["TORCH_TEST_NUM_THREADS"]]
    seed = random_seed(environ)
    if seed is not None:
        args += ["--torch-seed", str(seed), "--torch-autoseed"]
    return args


def random_seed(environ: Mapping[str, str]) -> int | None:
    """Bazel's TEST_RANDOM_SEED (set by `--runs_per_test`, 1 for the first run), if any."""
    value = environ.get("TEST_RANDOM_SEED", "").strip()
    if not value:
        return None
    if not value.isdigit():
        raise ValueError(f"TEST_RANDOM_SEED={value!r} is not a non-negative integer")
    return int(value)


def seed_report(environ: Mapping[str, str]) -> str | None:
    """The report-header line that says which seed this run used (None without a seed)."""
    seed = random_seed(environ)
    if seed is None:
        return None
    run = environ.get("TEST_RUN_NUMBER")
    which = f" (run {run})" if run else ""
    return (
        f"torch_py_test: TEST_RANDOM_SEED={seed}{which}: random, numpy and torch seeded with {seed} before "
        f"every test (replay: --test_arg=--torch-seed={seed} --test_arg=--torch-autoseed)"
    )


def write_text_atomic(path: str, text: str) -> None:
    """Bazel may copy outputs while the test exits: never leave a half-written file."""
    directory = os.path.dirname(path) or "."
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def write_json_atomic(path: str, data: Any) -> None:
    """JSON through write_text_atomic, sorted and indented for diffs."""
    write_text_atomic(path, json.dumps(data, indent=2, sort_keys=True) + "\n")


class GpuMemoryPlugin:
    """GPU runs: applies the VRAM share the GPU wrapper granted and records each test's peak memory.

    The peaks go to `<outputs>/torch-gpu-memory.json` ({"tests": {nodeid: {"peak_allocated_mb",
    "peak_reserved_mb", "gpus"}}}), where `classify --from-results` reads them to set VRAM needs.
    torch is only touched when it is already imported and CUDA is available.
    """

    def __init__(self, environ: Mapping[str, str]):
        self.environ = environ
        self.records: dict[str, dict[str, Any]] = {}

    @staticmethod
    def _cuda() -> Any:
        torch = sys.modules.get("torch")
        if torch is None or not torch.cuda.is_available():
            return None
        return torch

    def pytest_sessionstart(self, session: Any) -> None:
        fraction = self.environ.get("TORCH_GPU_MEMORY_FRACTION")
        if not fraction:
            return
        import torch  # a GPU test: torch is there

        if torch.cuda.is_available():
            for device in range(torch.cuda.device_count()):
                torch.cuda.set_per_process_memory_fraction(float(fraction), device)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: Any) -> None:
        # From setup on: fixtures that load a model count towards the test's need.
        torch = self._cuda()
        if torch is None:
            return
        for device in range(torch.cuda.device_count()):
            torch.cuda.reset_peak_memory_stats(device)

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_teardown(self, item: Any) -> None:
        torch = self._cuda()
        if torch is None:
            return
        devices = range(torch.cuda.device_count())
        allocated = [torch.cuda.max_memory_allocated(d) for d in devices]
        reserved = [torch.cuda.max_memory_reserved(d) for d in devices]
        self.records[item.nodeid] = {
            "gpus": sum(1 for a in allocated if a > 0),
            "peak_allocated_mb": round(max(allocated, default=0) / 2**20, 1),
            "peak_reserved_mb": round(max(reserved, default=0) / 2**20, 1),
        }

    def pytest_sessionfinish(self, session: Any) -> None:
        outputs = self.environ.get("TEST_UNDECLARED_OUTPUTS_DIR")
        if not self.records or not outputs:
            return
        name = GPU_MEMORY_FILE
        if int(self.environ.get("TEST_TOTAL_SHARDS", "1")) > 1:
            name = f"torch-gpu-memory.shard{self.environ.get('TEST_SHARD_INDEX', '0')}.json"
        data = {"version": 1, "target": self.environ.get("TEST_TARGET", ""), "tests": self.records}
        write_json_atomic(os.path.join(outputs, name), data)


Sampler = Callable[[], list[float]]  # utilisation (0..1) of each of the test's GPUs, now


def nvml_sampler(environ: Mapping[str, str]) -> Sampler | None:
    """GPU (SM) utilisation of the GPUs this test was given, through NVML (`nvidia-ml-py`, imported
    only here: machines without it or without a driver just record nothing)."""
    try:
        import pynvml
    except ImportError:
        return None
    try:
        pynvml.nvmlInit()
        visible = environ.get("CUDA_VISIBLE_DEVICES")
        entries = [e.strip() for e in visible.split(",")] if visible else \
            [str(i) for i in range(pynvml.nvmlDeviceGetCount())]
        # gpu_run_under sets CUDA_DEVICE_ORDER=PCI_BUS_ID, so CUDA indices are NVML's indices.
        handles = [pynvml.nvmlDeviceGetHandleByIndex(int(e)) if e.isdigit() else
                   pynvml.nvmlDeviceGetHandleByUUID(e) for e in entries if e]
    except pynvml.NVMLError:
        return None
    if not handles:
        return None
    return lambda: [pynvml.nvmlDeviceGetUtilizationRates(h).gpu / 100 for h in handles]


class GpuUtilisationPlugin:
    """GPU runs: samples the test's GPUs' utilisation through the session, so the planner can tell
    tests that leave a GPU mostly idle (safe to share) from compute-bound ones.

    Writes `<outputs>/torch-gpu-util.json` ({"mean_util": [per GPU], "max_util": [...], "samples"}),
    which `export_gpu_manifest --testlogs` reads into the manifest's `gpu_util`.
    """

    def __init__(self, environ: Mapping[str, str],
                 sampler_factory: Callable[[Mapping[str, str]], Sampler | None] = nvml_sampler,
                 interval_s: float | None = None):
        self.environ = environ
        self.factory = sampler_factory
        self.interval_s = interval_s if interval_s is not None else float(
            environ.get("TORCH_GPU_UTIL_INTERVAL_S", "0.5"))
        self.samples: list[list[float]] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _run(self, sampler: Sampler) -> None:
        while True:
            try:
                self.samples.append([min(1.0, max(0.0, float(v))) for v in sampler()])
            except Exception:  # noqa: BLE001 - a sampler failing mid-run ends sampling, never the test
                return
            if self._stop.wait(self.interval_s):
                return

    def pytest_sessionstart(self, session: Any) -> None:
        if int(self.environ.get("TORCH_TEST_GPU_COUNT", "0") or 0) < 1:
            return  # not a GPU test
        sampler = self.factory(self.environ)
        if sampler is None:
            return
        self._thread = threading.Thread(target=self._run, args=(sampler,), name="gpu-util", daemon=True)
        self._thread.start()

    def pytest_sessionfinish(self, session: Any) -> None:
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join()
        outputs = self.environ.get("TEST_UNDECLARED_OUTPUTS_DIR")
        rows = [row for row in self.samples if row]
        if not rows or not outputs or len({len(r) for r in rows}) != 1:
            return
        columns = list(zip(*rows, strict=True))
        name = GPU_UTIL_FILE
        if int(self.environ.get("TEST_TOTAL_SHARDS", "1")) > 1:
            name = f"torch-gpu-util.shard{self.environ.get('TEST_SHARD_INDEX', '0')}.json"
        data = {"version": 1, "target": self.environ.get("TEST_TARGET", ""), "samples": len(rows),
                "interval_s": self.interval_s,
                "mean_util": [round(sum(c) / len(c), 4) for c in columns],
                "max_util": [round(max(c), 4) for c in columns]}
        write_json_atomic(os.path.join(outputs, name), data)


# Tolerances used for the heatmap's colour scale when the assertion used dtype defaults
# (the values of torch.testing.assert_close).
_DEFAULT_TOLERANCES = {
    "torch.float64": (1e-7, 1e-7),
    "torch.float32": (1.3e-6, 1e-5),
    "torch.float16": (1e-3, 1e-5),
    "torch.bfloat16": (1.6e-2, 1e-5),
}
_COMPARISONS = ("assert_tensors_close", "assert_close")


def mismatched_tensors(traceback: Any) -> tuple[Any, Any, float, float] | None:
    """(actual, expected, rtol, atol) of the innermost failed tensor comparison in a traceback."""
    found = None
    while traceback is not None:
        frame = traceback.tb_frame
        if frame.f_code.co_name in _COMPARISONS:
            actual, expected = frame.f_locals.get("actual"), frame.f_locals.get("expected")
            if type(actual).__name__ == "Tensor" and type(expected).__name__ == "Tensor":
                default = _DEFAULT_TOLERANCES.get(str(expected.dtype), (0.0, 0.0))
                rtol = frame.f_locals.get("rtol")
                atol = frame.f_locals.get("atol")
                found = (actual, expected, default[0] if rtol is None else rtol, default[1] if atol is None else atol)
        traceback = traceback.tb_next
    return found


class MismatchHeatmapPlugin:
    """Saves a heatmap PNG of a failed tensor comparison into the target's undeclared outputs.

    pytest-torch 1.1.1 accepts `--torch-failure-artifacts` but none of its assertions draws into
    it, so this hook does, with pytest-torch's public `save_mismatch_heatmap`, for failures raised
    by `pytest_torch.assert_tensors_close` or `torch.testing.assert_close`.
    """

    def __init__(self, directory: str):
        self.directory = directory

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: Any, call: Any) -> Any:
        outcome = yield
        report = outcome.get_result()
        if report.when != "call" or not report.failed or call.excinfo is None:
            return
        tensors = mismatched_tensors(call.excinfo.tb)
        if tensors is None:
            return
        from pytest_torch import save_mismatch_heatmap

        actual, expected, rtol, atol = tensors
        stem = "".join(c if c.isalnum() or c in "._-" else "_" for c in item.nodeid)[:150]
        path = os.path.join(self.directory, f"{stem}.png")
        saved = save_mismatch_heatmap(actual, expected, path, rtol=rtol, atol=atol, title=item.nodeid)
        if saved is not None:
            report.sections.append(("torch-heatmap", f"mismatch heatmap: {saved}"))


class RuntimeInfoPlugin:
    """Writes `<outputs>/torch-runtime.json`: what hardware this run had.

    `classify --from-results` reads it to tell a CPU run (whose CUDA failures prove a test needs
    a GPU) from a GPU run fed by mistake. {"version": 1, "target", "torch_imported",
    "torch_version", "cuda_available", "device_count"}; the CUDA fields are null when the test
    never imported torch.
    """

    def __init__(self, directory: str, environ: Mapping[str, str]):
        self.directory = directory
        self.environ = environ

    def pytest_sessionfinish(self, session: Any) -> None:
        torch = sys.modules.get("torch")
        info: dict[str, Any] = {
            "version": 1,
            "target": self.environ.get("TEST_TARGET", ""),
            "torch_imported": torch is not None,
            "torch_version": getattr(torch, "__version__", None),
            "cuda_available": None,
            "device_count": None,
        }
        if torch is not None:
            info["cuda_available"] = bool(torch.cuda.is_available())
            info["device_count"] = int(torch.cuda.device_count())
        name = RUNTIME_FILE
        if int(self.environ.get("TEST_TOTAL_SHARDS", "1")) > 1:
            name = f"torch-runtime.shard{self.environ.get('TEST_SHARD_INDEX', '0')}.json"
        write_json_atomic(os.path.join(self.directory, name), info)


def plugins(environ: Mapping[str, str]) -> list[Any]:
    """The runner's pytest-torch companions for this test."""
    active: list[Any] = [GpuMemoryPlugin(environ), GpuUtilisationPlugin(environ)]
    outputs = environ.get("TEST_UNDECLARED_OUTPUTS_DIR")
    if outputs:
        active.append(MismatchHeatmapPlugin(os.path.join(outputs, "torch-failures")))
        active.append(RuntimeInfoPlugin(outputs, environ))
    return active
