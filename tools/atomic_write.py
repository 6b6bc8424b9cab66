"""Write a file so that readers never see half of it: temporary file beside it, fsync, rename.

Every tool that rewrites a checked-in or user-facing file (classification file, locks, manifests,
perf baselines, marker codemod) goes through here; an interrupted write leaves the old file intact.
A writer killed with SIGKILL cannot remove its temporary file, so the name records the writer's
pid (`.NAME.PID.RANDOM.tmp`) and the next write of the same file removes temporaries whose writer
is gone (or that are a day old: the pid may have been reused).
"""

from __future__ import annotations

import os
import re
import tempfile
import time
from pathlib import Path

STALE_AFTER_S = 86400  # a temporary this old is stale even if its pid was reused by a live process


def _older_than(path: Path, seconds: float) -> bool:
    try:
        return time.time() - path.lstat().st_mtime > seconds
    except OSError:
        return False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's live process
    return True


def remove_stale_temporaries(path: Path) -> list[Path]:
    """Delete `.NAME.PID.*.tmp` files beside `path` whose writing process no longer exists."""
    pattern = re.compile(rf"\.{re.escape(path.name)}\.(\d+)\.[^/]*\.tmp")
    removed = []
    try:
        names = os.listdir(path.parent)
    except OSError:
        return removed
    for name in names:
        match = pattern.fullmatch(name)
        if match and int(match.group(1)) != os.getpid() and (not _alive(int(match.group(1)))
                                                             or _older_than(path.parent / name, STALE_AFTER_S)):
            try:
                os.unlink(path.parent / name)
            except OSError:
                continue  # gone already, or not ours to remove
            removed.append(path.parent / name)
    return removed


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Replace `path` with `data`, keeping its permission bits (0644 for a new file)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, path.stat().st_mode & 0o777 if path.exists() else 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_text_atomic(path: Path, text: str) -> None:
    """UTF-8 text with `\\n` line ends (byte-identical output on every platform)."""
    write_bytes_atomic(path, text.encode("utf-8"))
