"""Read a file whole with a size limit, without ever blocking on a FIFO or device: the classifier's
source files and configuration, and the classification file itself (tools/contract/classification.py).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

MAX_FILE_BYTES = 8 * 1024 * 1024  # the classifier's default limit for a Python file


def read_source(root: Path, rel: str, limit: int = MAX_FILE_BYTES,
                size: int | None = None) -> tuple[bytes | None, str | None]:
    """File bytes, or None and the reason (too large, unreadable, symlink loop).

    `size`: the size the directory walk saw, which spares a second stat; the file is read to its end
    whatever its size now, and judged against the limit by what was read. Plain os.read: a third of the cost
    of Path.read_bytes on a tree of small files, and a cold run reads every one before it can fork."""
    if size is not None and size > limit:
        return None, f"file is {size} bytes, over the {limit}-byte limit; not analysed"
    try:
        fd = os.open(f"{os.fspath(root)}/{rel}", os.O_RDONLY | os.O_NONBLOCK)  # (a FIFO never blocks)
        try:
            if size is None:
                st = os.fstat(fd)  # (on the open file: no second path lookup)
                if not stat.S_ISREG(st.st_mode):
                    return None, "not a regular file; not analysed"
                size = st.st_size
                if size > limit:
                    return None, f"file is {size} bytes, over the {limit}-byte limit; not analysed"
            want = size + 1
            parts = [os.read(fd, want)]  # a short read of a regular file is its end
            while len(parts[-1]) == want and sum(map(len, parts)) <= limit:  # it grew since the walk
                want = 1 << 20
                parts.append(os.read(fd, want))
            size = max(os.fstat(fd).st_size, sum(map(len, parts))) if len(parts) > 1 else size
        finally:
            os.close(fd)
    except OSError as exc:
        return None, f"cannot read: {exc.strerror or exc}"
    if size > limit:
        return None, f"file is {size} bytes, over the {limit}-byte limit; not analysed"
    return parts[0] if len(parts) == 1 else b"".join(parts), None


def read_text_file(path: Path, limit: int = MAX_FILE_BYTES) -> tuple[str | None, str | None]:
    """A configuration file's text (UTF-8, undecodable bytes replaced), or None and why: missing, not a
    regular file, unreadable, or over `limit` bytes (a 3 GB pyproject.toml must not exhaust memory)."""
    data, why = read_source(path.parent, path.name, limit)
    if data is None:
        return None, why
    return data.decode("utf-8", "replace"), None
