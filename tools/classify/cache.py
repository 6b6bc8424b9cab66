"""Content-hash cache: a test file's result is reused when it and every file it depends on are unchanged.

Stored as one JSON file under `.torch-classify-cache/` (or --cache-dir). The key of a result covers the
classifier's own source, the test file, its in-repo import closure and its conftest chain, so editing a
helper module invalidates exactly the tests that import it.
"""

from __future__ import annotations

import gc
import hashlib
import marshal
import os
import tempfile
from pathlib import Path
from typing import Any

from tools.classify.modules import ImportSpec

CACHE_NAME = "classify-cache-v2.marshal"  # marshal: plain data, loads ~10x faster than JSON
SNAPSHOT_NAME = "classify-snapshot-v1.marshal"  # the last run's whole result, keyed by file stats


def tool_version() -> str:
    """Hash of the classifier's own code: a new classifier never reuses old results."""
    h = hashlib.blake2b(digest_size=12)
    for p in sorted(Path(__file__).parent.glob("*.py")):
        h.update(p.name.encode())
        h.update(p.read_bytes())
    return h.hexdigest()


def result_key(version: str, rel: str, deps: list[str], digests: dict[str, str]) -> str:
    h = hashlib.blake2b(digest_size=16)
    h.update(version.encode())
    h.update(rel.encode())
    for d in deps:
        h.update(b"\0" + d.encode() + b"=" + digests.get(d, "missing").encode())
    return h.hexdigest()


class Cache:
    """Imports per file digest and results per key; loaded once, saved atomically once."""

    def __init__(self, directory: Path | None) -> None:
        self.directory = directory
        self.imports: dict[str, list[list[Any]]] = {}
        self.results: dict[str, dict[str, Any]] = {}
        self.stats: dict[str, tuple[int, int, str]] = {}  # rel -> (mtime_ns, size, digest)
        self.dirty = False
        if directory is not None:
            try:
                raw = (directory / CACHE_NAME).read_bytes()
                data = _loads(raw)
                self.imports = dict(data.get("imports", {}))
                self.results = dict(data.get("results", {}))
                self.stats = {k: (int(m), int(sz), str(d)) for k, (m, sz, d) in data.get("stats", {}).items()}
            except (OSError, ValueError, EOFError, TypeError, AttributeError):
                pass  # a missing or corrupt cache is an empty cache

    def get_imports(self, digest: str) -> tuple[ImportSpec, ...] | None:
        raw = self.imports.get(digest)
        if raw is None:
            return None
        return tuple(ImportSpec(m, int(lv), tuple(n), int(ln), bool(top)) for m, lv, n, ln, top in raw)

    def put_imports(self, digest: str, specs: tuple[ImportSpec, ...]) -> None:
        if digest not in self.imports:
            self.imports[digest] = [[s.module, s.level, list(s.names), s.line, s.toplevel] for s in specs]
            self.dirty = True

    def get_result(self, key: str) -> dict[str, Any] | None:
        return self.results.get(key)

    def put_result(self, key: str, value: dict[str, Any]) -> None:
        self.results[key] = value
        self.dirty = True

    def digest_for(self, rel: str, stat: tuple[int, int] | None) -> str | None:
        """The content digest recorded for rel when its (mtime_ns, size) is unchanged."""
        got = self.stats.get(rel)
        if got is None or stat is None or (got[0], got[1]) != stat:
            return None
        return got[2]

    def save(self, live_keys: set[str], live_digests: set[str],
             stats: dict[str, tuple[int, int, str]] | None = None) -> None:
        """Write only what this run used, so the cache does not grow without bound."""
        if stats is not None and stats != self.stats:
            self.stats = stats
            self.dirty = True
        if self.directory is None or not self.dirty:
            return
        data = {
            "imports": {k: v for k, v in sorted(self.imports.items()) if k in live_digests},
            "results": {k: v for k, v in sorted(self.results.items()) if k in live_keys},
            "stats": {k: list(v) for k, v in sorted(self.stats.items())},
        }
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            _write_bytes_atomic(self.directory / CACHE_NAME, marshal.dumps(data))
        except OSError:
            pass  # caching is an optimisation; never fail the run for it


def load_snapshot(directory: Path | None, key: str) -> dict[str, Any] | None:
    """The stored whole-run result when it was made for exactly this snapshot key."""
    if directory is None:
        return None
    try:
        data = _loads((directory / SNAPSHOT_NAME).read_bytes())
    except (OSError, ValueError, EOFError, TypeError):
        return None
    return data if isinstance(data, dict) and data.get("key") == key else None


def save_snapshot(directory: Path | None, data: dict[str, Any]) -> None:
    if directory is None:
        return
    try:
        directory.mkdir(parents=True, exist_ok=True)
        _write_bytes_atomic(directory / SNAPSHOT_NAME, marshal.dumps(data))
    except OSError:
        pass


def _loads(raw: bytes) -> Any:
    """marshal.loads without the cyclic GC: loading many small containers otherwise triggers repeated
    full collections."""
    was = gc.isenabled()
    gc.disable()
    try:
        return marshal.loads(raw)
    finally:
        if was:
            gc.enable()


def _write_bytes_atomic(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
