"""Content-hash cache: a test file's result is reused when it and every file it depends on are unchanged.

Stored outside the analysed tree by default (`$XDG_CACHE_HOME/rules_torch_test/classify/<hash of the root>`,
`~/.cache/...` without XDG; --cache-dir elsewhere), so a cache committed to or planted in the repository is
never read. Each cache file is sealed with a keyed hash (BLAKE2b) under a per-user secret kept beside the
caches (mode 0600): a file the user's own classifier did not write (forged, copied from another machine,
corrupted) fails the check and is ignored whole, and every entry's structure and types are checked on read
(a bad one is dropped and recomputed). The key of a result covers the classifier's own source, the test
file, its in-repo import closure and its conftest chain, so editing a helper module invalidates exactly the
tests that import it; a result also lists the data files its analysis read (datafiles.py), and is reused only
while they are unchanged (runner.data_unchanged).
"""

from __future__ import annotations

import gc
import hashlib
import hmac
import marshal
import os
import stat
import sys
import tempfile
from pathlib import Path
from typing import Any

from tools.classify.modules import ImportSpec
from tools.classify.versions import installed
from tools.contract.classification import sweep_stale_temporaries

CACHE_NAME = "classify-cache-v3.marshal"  # marshal: plain data, loads ~10x faster than JSON
SNAPSHOT_NAME = "classify-snapshot-v2.marshal"  # the last run's whole result, keyed by file stats
REPORT_NAME = "classify-report-v1.marshal"  # a report rendered from that result (runner.report_text)
SECRET_NAME = "secret"
SEAL = b"torch-classify-sealed-v1\0"
LABELS = ("cpu", "gpu", "unknown")


def user_cache_base(env: dict[str, str] | None = None) -> Path | None:
    """`$XDG_CACHE_HOME/rules_torch_test/classify`, else `~/.cache/...`; None without a home directory."""
    env = dict(os.environ) if env is None else env
    xdg = env.get("XDG_CACHE_HOME", "")
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / "rules_torch_test" / "classify"
    try:
        home = Path.home()
    except (RuntimeError, KeyError):
        return None
    return home / ".cache" / "rules_torch_test" / "classify"


def default_cache_dir(root: Path, env: dict[str, str] | None = None) -> Path | None:
    """The cache of the tree at `root`: per real root path, under the user's cache directory."""
    base = user_cache_base(env)
    if base is None:
        return None
    digest = hashlib.blake2b(os.fsencode(os.path.realpath(root)), digest_size=12).hexdigest()
    return base / digest


def load_secret(base: Path | None) -> bytes:
    """The per-user sealing key (created once, 0600, never through a symlink). Where it cannot be kept, a
    key for this process only: nothing stored is trusted, and nothing this run stores is trusted later."""
    if base is not None:
        path = base / SECRET_NAME
        try:
            base.mkdir(parents=True, exist_ok=True, mode=0o700)
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            except FileExistsError:
                pass
            else:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(os.urandom(32))
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            with os.fdopen(fd, "rb") as fh:
                st = os.fstat(fh.fileno())
                key = fh.read(33)
            if (stat.S_ISREG(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o077
                    and len(key) == 32):
                return key
        except OSError:
            pass
    return os.urandom(32)


def seal(secret: bytes, payload: bytes) -> bytes:
    return SEAL + hmac.digest(secret, payload, "blake2b") + payload


def unseal(secret: bytes, data: bytes) -> bytes | None:
    """The payload of a file `seal` wrote with this secret, or None (forged, corrupt, older format)."""
    n = len(SEAL) + 64
    if len(data) < n or not data.startswith(SEAL):
        return None
    mac, payload = data[len(SEAL):n], data[n:]
    return payload if hmac.compare_digest(mac, hmac.digest(secret, payload, "blake2b")) else None


def valid_result(d: Any) -> bool:
    """The shape runner.result_to_json writes, with the types and ranges the schema allows. (Plain loops and
    exact type tests: a warm run checks every stored result, and this is most of its time.)"""
    if type(d) is not dict:
        return False
    tests, error, deps, data = d.get("tests"), d.get("error"), d.get("deps", []), d.get("data", [])
    if type(d.get("torch")) is not bool or type(tests) is not dict or not (error is None or type(error) is str):
        return False
    if type(deps) is not list:
        return False
    for x in deps:
        if type(x) is not str:
            return False
    if type(data) is not list:
        return False
    for x in data:
        if type(x) is not list or len(x) != 2 or type(x[0]) is not str or type(x[1]) is not str:
            return False
    for k, v in tests.items():
        if type(k) is not str or type(v) is not dict or v.get("label") not in LABELS:
            return False
        count, vram, reasons = v.get("gpu_count"), v.get("vram_gb"), v.get("reasons")
        if type(count) is not int or count < 0 or type(reasons) not in (list, tuple):
            return False
        if v.get("without_gpus", "cpu") != "cpu":
            return False
        kind = type(vram)
        if not ((kind is int and vram >= 0) or (kind is float and 0 <= vram <= _MAX_FLOAT)):
            return False
        for r in reasons:
            if type(r) is not str:
                return False
    return True


_MAX_FLOAT = sys.float_info.max


def _valid_imports(v: Any) -> bool:
    return isinstance(v, list) and all(
        isinstance(s, list) and len(s) == 5 and isinstance(s[0], str) and type(s[1]) is int
        and isinstance(s[2], list) and all(isinstance(n, str) for n in s[2]) and type(s[3]) is int
        and isinstance(s[4], bool) for s in v)


def _valid_stat(v: Any) -> bool:
    return (isinstance(v, (list, tuple)) and len(v) == 3 and type(v[0]) is int and type(v[1]) is int
            and isinstance(v[2], str))


def tool_version() -> str:
    """Hash of the classifier's own code: a new classifier never reuses old results."""
    h = hashlib.blake2b(digest_size=12)
    for p in sorted(Path(__file__).parent.glob("*.py")):
        h.update(p.name.encode())
        h.update(p.read_bytes())
    h.update(b"torch=" + (installed("torch") or "").encode())  # version checks are evaluated (versions.py)
    # node ids depend on these: pytest's spelling of long string values, numpy's name of `np.bool_` (collect.py)
    h.update(b"pytest=" + (installed("pytest") or "").encode())
    h.update(b"numpy=" + (installed("numpy") or "").encode())
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

    def __init__(self, directory: Path | None, secret: bytes | None = None) -> None:
        self.directory = directory
        self.secret = secret if secret is not None else load_secret(user_cache_base()) if directory else b""
        self.imports: dict[str, list[list[Any]]] = {}
        self.results: dict[str, dict[str, Any]] = {}
        self.stats: dict[str, tuple[int, int, str]] = {}  # rel -> (mtime_ns, size, digest)
        self.dirty = False
        data = read_sealed(directory / CACHE_NAME, self.secret) if directory is not None else None
        if not isinstance(data, dict):
            return  # a missing, forged or corrupt cache is an empty cache
        for name, table, ok in (("imports", self.imports, _valid_imports), ("results", self.results, valid_result),
                                ("stats", self.stats, _valid_stat)):
            got = data.get(name)
            for k, v in (got.items() if isinstance(got, dict) else ()):
                if isinstance(k, str) and ok(v):  # a bad entry is dropped (and recomputed)
                    table[k] = tuple(v) if name == "stats" else v

    def get_imports(self, digest: str) -> tuple[ImportSpec, ...] | None:
        raw = self.imports.get(digest)
        if raw is None:
            return None
        return tuple(ImportSpec(m, lv, tuple(n), ln, top) for m, lv, n, ln, top in raw)

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
        write_sealed(self.directory / CACHE_NAME, self.secret, data)


def read_sealed(path: Path, secret: bytes) -> Any:
    """The data `write_sealed` stored at path with this secret; None for anything else. Never blocks (a FIFO
    planted there is not a regular file) and never raises."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                return None
            raw = fh.read()
        payload = unseal(secret, raw)
        return None if payload is None else _loads(payload)
    except (OSError, ValueError, EOFError, TypeError, MemoryError):
        return None


def write_sealed(path: Path, secret: bytes, data: Any) -> None:
    """Seal and write atomically; caching is an optimisation, so a failure to write is ignored."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        sweep_stale_temporaries(path)  # (what a killed run left)
        _write_bytes_atomic(path, seal(secret, marshal.dumps(data)))
    except (OSError, ValueError):
        pass


def load_snapshot(directory: Path | None, key: str, secret: bytes) -> dict[str, Any] | None:
    """The stored whole-run result when it was made for exactly this snapshot key and is well formed."""
    if directory is None:
        return None
    data = read_sealed(directory / SNAPSHOT_NAME, secret)
    if not isinstance(data, dict) or data.get("key") != key:
        return None
    files, problems, unseen = data.get("files"), data.get("problems"), data.get("unseen")
    if not isinstance(files, dict) or not all(isinstance(k, str) and valid_result(v) for k, v in files.items()):
        return None
    if not isinstance(problems, list) or not all(
            isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p) for p in problems):
        return None
    if not isinstance(unseen, list) or not all(isinstance(u, str) for u in unseen):
        return None
    if not isinstance(data.get("token", ""), str):
        return None
    return data


def save_snapshot(directory: Path | None, secret: bytes, data: dict[str, Any]) -> None:
    if directory is not None:
        write_sealed(directory / SNAPSHOT_NAME, secret, data)


def load_report(directory: Path, key: str, secret: bytes) -> str | None:
    """The report text stored for exactly this key (a snapshot's token and the report's kind), else None."""
    data = read_sealed(directory / REPORT_NAME, secret)
    if not isinstance(data, dict) or data.get("key") != key or not isinstance(data.get("text"), str):
        return None
    return data["text"]


def save_report(directory: Path, secret: bytes, key: str, text: str) -> None:
    write_sealed(directory / REPORT_NAME, secret, {"key": key, "text": text})


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
