"""Which GPUs this process may use: `nvidia-smi` (injectable) filtered by inherited CUDA_VISIBLE_DEVICES.

Lock files are keyed by GPU UUID, so wrappers started with different CUDA_VISIBLE_DEVICES views of
the same machine still agree on who holds which GPU.
"""

from __future__ import annotations

import csv
import io
import math
import os
import shutil
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass

QUERY_ARGS = ["--query-gpu=index,uuid,name,memory.total", "--format=csv,noheader,nounits"]
SMI_OUTPUT_ENV = "TORCH_GPU_ASSIGN_SMI_OUTPUT"  # file with nvidia-smi output: fake GPUs for tests/CPU dev
SMI_TIMEOUT_ENV = "TORCH_GPU_ASSIGN_SMI_TIMEOUT_S"  # a hung driver must not hang every GPU test
DEFAULT_SMI_TIMEOUT_S = 30.0


class ProbeError(RuntimeError):
    """No usable GPU list; the message says why and what to check."""


@dataclass(frozen=True)
class Gpu:
    index: int
    uuid: str
    name: str
    memory_mib: int

    @property
    def memory_gb(self) -> float:
        return self.memory_mib / 1024


def parse_nvidia_smi(text: str) -> list[Gpu]:
    """Parse `index, uuid, name, memory.total` CSV rows (nounits: MiB)."""
    gpus = []
    for lineno, row in enumerate(csv.reader(io.StringIO(text)), start=1):
        if not row or not "".join(row).strip():
            continue
        if len(row) != 4:
            raise ProbeError(f"nvidia-smi output line {lineno}: expected 4 fields, got {row!r}")
        index, uuid, name, memory = (field.strip() for field in row)
        try:
            gpus.append(Gpu(int(index), uuid, name, int(float(memory))))
        except ValueError:
            raise ProbeError(f"nvidia-smi output line {lineno}: bad index or memory in {row!r}") from None
    return gpus


def apply_visible_devices(gpus: list[Gpu], visible: str | None) -> list[Gpu]:
    """CUDA's rules: unset = all; entries are indices or (prefixes of) UUIDs; CUDA stops at the first
    entry it cannot resolve, and so do we."""
    if visible is None:
        return list(gpus)
    chosen: list[Gpu] = []
    for entry in (e.strip() for e in visible.split(",")):
        match: Gpu | None = None
        if entry.lstrip("-").isdigit():
            match = next((g for g in gpus if g.index == int(entry)), None)
        elif entry:
            hits = [g for g in gpus if g.uuid == entry or g.uuid.startswith(entry)]
            match = hits[0] if len(hits) == 1 else None
        if match is None:
            break
        if match not in chosen:
            chosen.append(match)
    return chosen


SmiRunner = Callable[[], str]


def smi_timeout(env: Mapping[str, str]) -> float:
    raw = env.get(SMI_TIMEOUT_ENV) or str(DEFAULT_SMI_TIMEOUT_S)
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise ProbeError(f"{SMI_TIMEOUT_ENV}={raw!r}: expected a number of seconds > 0")
    return value


def default_smi_runner(env: Mapping[str, str]) -> SmiRunner:
    def run() -> str:
        fake = env.get(SMI_OUTPUT_ENV)
        if fake:
            try:
                with open(fake, encoding="utf-8", errors="replace") as handle:
                    return handle.read(1 << 20)
            except OSError as err:
                raise ProbeError(f"{SMI_OUTPUT_ENV}={fake}: {err.strerror}") from None
        exe = shutil.which("nvidia-smi", path=env.get("PATH"))
        if exe is None:
            raise ProbeError("nvidia-smi not found on PATH: no NVIDIA driver here, so no GPUs to assign")
        timeout = smi_timeout(env)
        try:
            result = subprocess.run([exe, *QUERY_ARGS], capture_output=True, text=True, errors="replace",
                                    timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            raise ProbeError(f"nvidia-smi did not answer within {timeout:g}s (hung driver?); "
                             f"{SMI_TIMEOUT_ENV} sets the limit") from None
        except OSError as err:
            raise ProbeError(f"cannot run {exe}: {err.strerror}") from None
        if result.returncode != 0:
            raise ProbeError(f"nvidia-smi failed (exit {result.returncode}): {result.stderr.strip()}")
        return result.stdout
    return run


def probe(env: Mapping[str, str] | None = None, runner: SmiRunner | None = None) -> list[Gpu]:
    """GPUs this process may use, in CUDA_VISIBLE_DEVICES order; raises ProbeError when there are none."""
    env = os.environ if env is None else env
    gpus = parse_nvidia_smi((runner or default_smi_runner(env))())
    visible = env.get("CUDA_VISIBLE_DEVICES")
    chosen = apply_visible_devices(gpus, visible)
    if not chosen:
        if gpus:
            raise ProbeError(f"CUDA_VISIBLE_DEVICES={visible!r} hides all {len(gpus)} GPUs of this machine")
        raise ProbeError("nvidia-smi lists no GPUs")
    return chosen
