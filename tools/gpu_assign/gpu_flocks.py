"""Per-GPU-slot `flock` locks: take a block of N GPUs (k slots on each), wait with a deadline.

flock locks belong to the open file description, so they vanish when the holder exits, even after
`kill -9`; no stale-lock cleanup exists because none is needed. The directory defaults to /var/tmp,
not /tmp: Bazel 7's sandbox may give every test a private /tmp, which would hide the locks.

The directory is shared with other users, so it is trusted only when it belongs to us or root and
others cannot swap files in it (sticky bit); lock files are opened read-only, never through a link,
and only files this process created are chmodded (docs/planner.md, "Local runs").
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


class LockDirError(OSError):
    """The lock directory or a lock file in it cannot be used safely; the message says why and what to do."""


def lock_dir(env: Mapping[str, str]) -> Path:
    return Path(env.get(LOCK_DIR_ENV) or DEFAULT_LOCK_DIR)


_FIX = (f"ask an admin to create it as root (`install -d -m 1777 -o root DIR`) or set {LOCK_DIR_ENV} "
        "to a directory of your own")


def check_lock_dir(path: Path, info: os.stat_result, uid: int, unmapped_uid: int | None = None) -> str | None:
    """Why a lock directory is unsafe (None: safe). Pure, so every refusal is testable without root.

    Whoever controls the directory can delete or swap lock files (double GPU assignment) and plant
    links; so it must belong to us or root, and others may write only with the sticky bit. Inside a
    user namespace (Bazel's linux-sandbox) root's directory shows as `unmapped_uid` (the overflow
    uid): who owns it cannot be known there, so it is accepted when sticky; the lock files' own checks
    (no links, read-only, nothing chmodded) still hold."""
    if not stat.S_ISDIR(info.st_mode):
        return f"GPU lock directory {path} is not a directory"
    mode = stat.S_IMODE(info.st_mode)
    unknown_but_sticky = unmapped_uid is not None and info.st_uid == unmapped_uid and mode & stat.S_ISVTX
    if info.st_uid not in (uid, 0) and not unknown_but_sticky:
        return (f"GPU lock directory {path} belongs to uid {info.st_uid} (not you, not root), who could "
                f"delete or replace its lock files; {_FIX}")
    if mode & (stat.S_IWGRP | stat.S_IWOTH) and not mode & stat.S_ISVTX:
        return (f"GPU lock directory {path} is writable by others (mode {mode:04o}) without the sticky bit, "
                f"so anyone could replace its lock files; chmod 1777 it or {_FIX}")
    return None


def unmapped_uid() -> int | None:
    """The overflow uid when this process runs in a user namespace that does not map every uid
    (files of unmapped owners show as it), else None."""
    try:
        uid_map = Path("/proc/self/uid_map").read_text(encoding="ascii").split()
        overflow = int(Path("/proc/sys/kernel/overflowuid").read_text(encoding="ascii"))
    except (OSError, ValueError):
        return None
    return None if uid_map == ["0", "0", "4294967295"] else overflow


def open_lock_dir(path: Path) -> int:
    """Create (mode 1777: every user and sandbox may lock; sticky: nobody deletes others' files) and
    open the directory without following a link; return its fd after checking owner and mode on the
    open directory itself, so nothing can be swapped between check and use."""
    uid = os.getuid()
    created = False
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        os.mkdir(path, 0o1777)
        created = True
    except FileExistsError:
        pass
    except OSError as err:
        if not path.is_dir():
            raise LockDirError(f"cannot create GPU lock directory {path}: {err.strerror}; set {LOCK_DIR_ENV} "
                               f"or add --sandbox_writable_path={path} to test:gpu in .bazelrc") from None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as err:
        why = "is a symbolic link" if err.errno == errno.ELOOP or path.is_symlink() else (
            "is not a directory" if err.errno == errno.ENOTDIR else f"cannot be opened: {err.strerror}")
        raise LockDirError(f"GPU lock directory {path} {why}; {_FIX}") from None
    try:
        info = os.fstat(fd)
        if created and info.st_uid == uid and stat.S_IMODE(info.st_mode) != 0o1777:
            os.fchmod(fd, 0o1777)  # just made by us: mkdir's mode was cut by the umask
            info = os.fstat(fd)
        problem = check_lock_dir(path, info, uid, unmapped_uid())
        if problem:
            raise LockDirError(problem)
        if not os.access(path, os.W_OK):
            raise LockDirError(f"GPU lock directory {path} is not writable; set {LOCK_DIR_ENV} or add "
                               f"--sandbox_writable_path={path} to test:gpu in .bazelrc")
    except BaseException:
        os.close(fd)
        raise
    return fd


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


def _open(directory: int, name: str) -> int:
    """Open (creating it 0644) one lock file of the directory `directory` (an fd).

    flock needs only a read-only fd, so no lock file is ever writable by others, and nothing here
    writes or chmods a file it did not just create: never a link (O_NOFOLLOW), never a FIFO or device
    (O_NONBLOCK, then a regular-file check), never a file with a second hard link."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    created = True
    try:
        try:
            fd = os.open(name, flags | os.O_CREAT | os.O_EXCL, 0o644, dir_fd=directory)
        except FileExistsError:
            created = False
            fd = os.open(name, flags, dir_fd=directory)
    except OSError as err:
        why = "is a symbolic link" if err.errno == errno.ELOOP else f"cannot be opened: {err.strerror}"
        raise LockDirError(f"GPU lock file {name} {why}; remove it or {_FIX}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
            what = "is not a regular file" if not stat.S_ISREG(info.st_mode) else "has another hard link"
            raise LockDirError(f"GPU lock file {name} {what}; remove it or {_FIX}")
        if created:
            os.fchmod(fd, 0o644)  # others open it read-only to lock; the umask may have said 0600
    except BaseException:
        os.close(fd)
        raise
    return fd


def _try_lock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except OSError as err:
        if err.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            return False
        raise LockDirError(f"cannot flock a GPU lock file: {err.strerror} (the lock directory must be on a "
                           "local file system)") from None


def _lock_mutex(fd: int, deadline: float) -> bool:
    """Take the allocation mutex, polling until `deadline`: whoever holds it forever (a stuck or hostile
    process) costs a timeout, never a hang."""
    while not _try_lock(fd):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.002 * (0.5 + random.random()))
    return True


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


def try_acquire(gpus: Sequence[Gpu], directory: int, count: int, slots: int, slots_per_gpu: int,
                contiguous: bool, deadline: float = math.inf) -> Held | None:
    """One attempt under the directory's (an fd's) allocation mutex: see which slots are free, take a block."""
    mutex = _open(directory, "alloc.lock")
    try:
        if not _lock_mutex(mutex, deadline):  # short critical section: only lock probing happens here
            return None
        taken: list[list[int]] = []
        try:
            for gpu in gpus:
                mine: list[int] = []
                taken.append(mine)
                for slot in range(slots_per_gpu):
                    fd = _open(directory, f"gpu-{_safe(gpu.uuid)}.slot{slot}.lock")
                    if _try_lock(fd):
                        mine.append(fd)
                    else:
                        os.close(fd)
        except BaseException:
            for fd in (fd for fds in taken for fd in fds):
                os.close(fd)
            raise
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
    dir_fd = open_lock_dir(directory)
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                held = try_acquire(gpus, dir_fd, count, slots, slots_per_gpu, contiguous, deadline)
            except LockDirError as err:
                raise LockDirError(f"{directory}: {err}") from None
            if held is not None:
                return held
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssignTimeout(f"no block of {count} GPU(s) x {slots}/{slots_per_gpu} slots became free "
                                    f"within {timeout_s:g}s (lock dir {directory})")
            time.sleep(min(remaining, poll_s * (0.5 + random.random())))
    finally:
        os.close(dir_fd)
