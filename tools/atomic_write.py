"""Write a file so that readers never see half of it: temporary file beside it, fsync, rename.

Every tool that rewrites a checked-in or user-facing file (classification file, locks, manifests,
perf baselines, marker codemod) goes through here; an interrupted write leaves the old file intact.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Replace `path` with `data`, keeping its permission bits (0644 for a new file)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
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
