"""Per-GPU-slot `flock` locks: take a block of N GPUs (k slots on each), wait with a deadline.

flock locks belong to the open file description, so they vanish when the holder exits, even after
`kill -9`; no stale-lock cleanup exists because none is needed. The directory defaults to /var/tmp,
not /tmp: Bazel 7's sandbox may give every test a private /tmp, which would hide the locks.
"""

from __future__ import annotations

import errno
import fcntl
import math
import os
import random
import re
import stat
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tools.gpu_assign.probe import Gpu

LOCK_DIR_ENV = "TORCH_GPU_LOCK_DIR"
DEFAULT_LOCK_DIR = "/var/tmp/torch-gpu-locks"
DEFAULT_SLOTS_PER_GPU = 4


class AssignTimeout(TimeoutError):
    """No block of GPUs became free before the deadline."""


def lock_dir(env: Mapping[str, str]) -> Path:
    return Path(env.get(LOCK_DIR_ENV) or DEFAULT_LOCK_DIR)


def ensure_lock_dir(path: Path) -> Path:
    """Create with mode 1777 (every user and sandbox may lock; sticky: nobody deletes others' files)."""
    try:
        path.mkdir(parents=True, exist_ok=True)
        if path.stat().st_uid == os.getuid() and stat.S_IMODE(path.stat().st_mode) != 0o1777:
            os.chmod(path, 0o1777)
    except PermissionError:
        if not os.access(path, os.W_OK):
            raise PermissionError(
                f"GPU lock directory {path} is not writable; set {LOCK_DIR_ENV} or add "
                f"--sandbox_writable_path={path} to test:gpu in .bazelrc") from None
    return path


def slots_needed(vram_gb: float, gpu_memory_gb: float, slots_per_gpu: int) -> int:
    """Slots of one GPU a test needs: all when its memory need is unknown (0) or too large."""
    if vram_gb <= 0 or gpu_memory_gb <= 0:
        return slots_per_gpu
    return max(1, min(slots_per_gpu, math.ceil(vram_gb / (gpu_memory_gb / slots_per_gpu) - 1e-9)))


def _safe(uuid: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", uuid)


@dataclass
class Held:
    """GPUs held by this process; closing the fds (or exiting) releases them."""

    gpus: list[Gpu]
    slots: int
    slots_per_gpu: int
    fds: list[int] = field(default_factory=list)

    @property
    def memory_fraction(self) -> float:
        return self.slots / self.slots_per_gpu

    def release(self) -> None:
        for fd in self.fds:
            os.close(fd)
        self.fds.clear()


def _open(path: Path) -> int:
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
    try:
        if os.fstat(fd).st_uid == os.getuid():
            os.fchmod(fd, 0o666)
    except OSError:
        pass
    return fd


def _try_lock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except OSError as err:
        if err.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            return False
        raise


def choose(free: Sequence[int], count: int, slots: int, contiguous: bool) -> list[int] | None:
    """Pure choice of GPU positions from free-slot counts: spread (most free slots first) before
    stacking; with `contiguous`, the best window of adjacent GPUs."""
    fits = [i for i, n in enumerate(free) if n >= slots]
    if len(fits) < count:
        return None
    if contiguous:
        windows = [list(range(s, s + count)) for s in range(len(free) - count + 1)
                   if all(free[i] >= slots for i in range(s, s + count))]
        if not windows:
            return None
        return max(windows, key=lambda w: (sum(free[i] for i in w), -w[0]))
    return sorted(sorted(fits, key=lambda i: (-free[i], i))[:count])


def try_acquire(gpus: Sequence[Gpu], directory: Path, count: int, slots: int, slots_per_gpu: int,
                contiguous: bool) -> Held | None:
    """One attempt under the directory's allocation mutex: see which slots are free, take a block."""
    mutex = _open(directory / "alloc.lock")
    try:
        fcntl.flock(mutex, fcntl.LOCK_EX)  # short critical section: only lock probing happens here
        taken: list[list[int]] = []
        for gpu in gpus:
            mine = []
            for slot in range(slots_per_gpu):
                fd = _open(directory / f"gpu-{_safe(gpu.uuid)}.slot{slot}.lock")
                if _try_lock(fd):
                    mine.append(fd)
                else:
                    os.close(fd)
            taken.append(mine)
        picked = choose([len(t) for t in taken], count, slots, contiguous)
        keep: list[int] = []
        for position, fds in enumerate(taken):
            n = slots if picked is not None and position in picked else 0
            keep += fds[:n]
            for fd in fds[n:]:
                os.close(fd)
        if picked is None:
            return None
        return Held([gpus[i] for i in picked], slots, slots_per_gpu, keep)
    finally:
        os.close(mutex)


def acquire(gpus: Sequence[Gpu], directory: Path, count: int, slots: int, slots_per_gpu: int,
            contiguous: bool = False, timeout_s: float = 3600.0, poll_s: float = 0.05) -> Held:
    """Wait (polling with jitter) until a block is free or the deadline passes."""
    if count > len(gpus):
        raise ValueError(f"test needs {count} GPUs but only {len(gpus)} are visible")
    if not 1 <= slots <= slots_per_gpu:
        raise ValueError(f"slots: expected 1..{slots_per_gpu}, got {slots}")
    ensure_lock_dir(directory)
    deadline = time.monotonic() + timeout_s
    while True:
        held = try_acquire(gpus, directory, count, slots, slots_per_gpu, contiguous)
        if held is not None:
            return held
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise AssignTimeout(f"no block of {count} GPU(s) x {slots}/{slots_per_gpu} slots became free "
                                f"within {timeout_s:g}s (lock dir {directory})")
        time.sleep(min(remaining, poll_s * (0.5 + random.random())))
