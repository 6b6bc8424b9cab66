"""One classification run over a root: discover files, reuse cached results, analyse the rest.

I/O lives here; the analysis modules only see bytes and paths.
"""

from __future__ import annotations

import dataclasses
import gc
import hashlib
import marshal
import os
import secrets
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tools.bounded_read import MAX_FILE_BYTES, read_source
from tools.classify import limits
from tools.classify.cache import (
    Cache,
    load_report,
    load_secret,
    load_snapshot,
    result_key,
    save_report,
    save_snapshot,
    tool_version,
    user_cache_base,
)
from tools.classify.datafiles import LISTING_PREFIX, read_data, read_listing
from tools.classify.evidence import Verdict
from tools.classify.installed import InstalledIndex, is_installed, running_python_dirs
from tools.classify.modules import (
    ImportSpec,
    ParsedModule,
    Problem,
    RepoIndex,
    digest_of,
    is_test_file,
    walk_python_files,
)
from tools.classify.optional_imports import PRESENCE_PREFIX, presence
from tools.classify.parallel import map_ordered, resolve_workers
from tools.classify.results import FileResult
from tools.classify.scope import Scope, TestNames, bazel_test_srcs, load_scope

if TYPE_CHECKING:
    from tools.classify.analyzer import Analyzer

RACY_NS = 1_000_000_000
FRESH_PER_CHUNK = False  # see _Work


@dataclass
class RunResult:
    files: dict[str, FileResult]
    problems: list[Problem] = field(default_factory=list)
    cache_hits: int = 0
    unseen: list[str] = field(default_factory=list)  # paths the walk could not look into (merge keeps them)
    # the token of the cache's whole-run snapshot when `files` is exactly what it holds (loaded or just saved);
    # "" otherwise. A new token for every snapshot written: what report_text stored for an older one never matches
    snapshot: str = ""


def result_to_json(r: FileResult) -> dict[str, Any]:
    out = {"torch": r.torch, "error": r.error, "deps": r.deps, "data": [list(d) for d in r.data],
           "tests": {k: v.to_json() for k, v in sorted(r.tests.items())}}
    if r.import_needs_gpu is not None:
        out["import_needs_gpu"] = r.import_needs_gpu.to_json()
    return out


def _verdict_from_json(v: dict[str, Any]) -> Verdict:
    return Verdict(v["label"], v["gpu_count"], v["vram_gb"], tuple(v["reasons"]), v.get("without_gpus") == "cpu")


def result_from_json(rel: str, d: dict[str, Any]) -> FileResult:
    tests = {k: _verdict_from_json(v) for k, v in d["tests"].items()}
    needs = d.get("import_needs_gpu")
    return FileResult(rel, bool(d["torch"]), tests, d.get("error"), list(d.get("deps", [])),
                      [(f, s) for f, s in d.get("data", [])], None if needs is None else _verdict_from_json(needs))


def data_unchanged(root: Path, stored: dict[str, Any], states: dict[str, str],
                   installed: InstalledIndex | None = None) -> bool:
    """Whether every data file a stored result read (datafiles.py) is still in the state it was read in: the
    result key covers Python files only, since which data files code reads is known only after running it.
    The installed modules it used (installed.py) are listed too, with their digests: the whole-run snapshot is
    keyed by the repository's files only; a data file an installed module opens (`version.txt` beside its
    `__init__`) is named under `<installed>/` and is not read (its state is read_data's "cannot read").
    `states`: the files' current states, filled as they are read (each file is read once per check)."""
    for f, state in stored.get("data", ()):
        now = states.get(f)
        if now is None and f.startswith(PRESENCE_PREFIX):
            now = states[f] = presence(f[len(PRESENCE_PREFIX):])
        elif now is None and f.startswith(LISTING_PREFIX):
            now = states[f] = read_listing(root, f[len(LISTING_PREFIX):])[1]
        elif now is None and is_installed(f) and f.endswith(".py"):
            index = installed if installed is not None else InstalledIndex(running_python_dirs(root))
            now = states[f] = index.state(f)
        elif now is None:
            now = states[f] = read_data(root, f)[1]
        if now != state:
            return False
    return True


def run(root: Path, paths: list[str] | None = None, cache_dir: Path | None = None,
        progress: Callable[[Iterable[str], int], Iterable[str]] | None = None, scope: Scope | None = None,
        workers: int | None = None, max_file_bytes: int = MAX_FILE_BYTES) -> RunResult:
    """Classify the test files under root in scope: `[tool.torch_classify]` paths/exclude and pytest's
    norecursedirs (see scope.py); non-empty `paths` (relative to root) replace the configured paths.

    `workers`: analysis processes (None: $TORCH_CLASSIFY_JOBS, else one per CPU; see parallel.py). The
    result does not depend on it."""
    # The run allocates millions of small, long-lived objects (ASTs, abstract values) and almost no
    # cycles: the cyclic collector would rescan them over and over (a third of the run time).
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _run(root, paths, cache_dir, progress, scope, workers, max_file_bytes)
    finally:
        if enabled:
            gc.enable()


def snapshot_key(version: str, root: Path, scope: Scope, stats: dict[str, tuple[int, int]],
                 files: list[str]) -> str:
    """Identity of a whole run: classifier, scope, root-level config files and every .py file's stat."""
    h = hashlib.blake2b(digest_size=16)
    h.update(f"{version}\0{root}\0{scope!r}\0".encode())
    try:
        with os.scandir(root) as it:
            for e in sorted(it, key=lambda e: e.name):
                if e.is_file() and not e.name.endswith(".py"):
                    st = e.stat()
                    h.update(f"{e.name}:{st.st_mtime_ns}:{st.st_size}\0".encode())
    except OSError:
        h.update(b"unlistable root")
    h.update("\0".join(f"{f}:{stats.get(f)}" for f in files).encode())
    return h.hexdigest()


def _run(root: Path, paths: list[str] | None, cache_dir: Path | None,
         progress: Callable[[Iterable[str], int], Iterable[str]] | None, scope: Scope | None,
         workers: int | None, max_file_bytes: int = MAX_FILE_BYTES) -> RunResult:
    problems: list[Problem] = []
    # Files modified within RACY_NS of the run's start may change again within the filesystem's timestamp
    # granularity without their (mtime, size) changing: their stats are not trusted next time (like git).
    racy_after = time.time_ns() - RACY_NS
    if scope is None:
        scope = load_scope(root, paths)
    problems.extend(Problem(p.split(": ", 1)[0], p.split(": ", 1)[-1]) for p in scope.problems)
    stats: dict[str, tuple[int, int]] = {}
    # (mtime, size) per file, for the cache's stat check and the snapshot key; without a cache nothing needs them
    unseen: list[str] = []
    files = walk_python_files(root, problems, stats if cache_dir is not None else None, unseen)
    named_problems: list[str] = []
    # test files (torch_py_test runs only the test_*.py/*_test.py of its srcs) that the scope alone leaves out
    named = bazel_test_srcs(root, [f for f in files if is_test_file(f.rsplit("/", 1)[-1]) and not scope.selects(f)],
                            named_problems)
    if named:
        scope = dataclasses.replace(scope, named=named)
    problems.extend(Problem(p.split(": ", 1)[0], p.split(": ", 1)[-1]) for p in named_problems)
    version = tool_version()
    if scope.test_names != TestNames():
        # which classes and functions are tests changes every file's result: cached results for other options
        # are not these
        version += f"|{scope.test_names.classes!r}|{scope.test_names.functions!r}"
    snap = snapshot_key(f"{version}:{max_file_bytes}", root, scope, stats, files) if cache_dir is not None else ""
    # An unchanged tree (same stats, config and classifier): the last run's result as it was.
    secret = load_secret(user_cache_base()) if cache_dir is not None else b""
    stored = load_snapshot(cache_dir, snap, secret) if snap else None
    data_states: dict[str, str] = {}
    installed = InstalledIndex(running_python_dirs(root), max_file_bytes)
    if stored is not None and all(data_unchanged(root, r, data_states, installed) for r in stored["files"].values()):
        out = {rel: result_from_json(rel, r) for rel, r in stored["files"].items()}
        return RunResult(out, [Problem(r, why) for r, why in stored["problems"]], len(out), list(stored["unseen"]),
                         stored.get("token", ""))
    tests = [f for f in files if is_test_file(f.rsplit("/", 1)[-1]) and scope.selects(f)]
    cache = Cache(cache_dir, secret)
    sources: dict[str, bytes] = {}
    digests: dict[str, str] = {}
    new_stats: dict[str, tuple[int, int, str]] = {}
    # Without a cache nothing needs a digest before the analysis: each worker reads the files it uses (the
    # reading is shared out instead of done here before the workers start); the rest is read afterwards,
    # only to report the files that cannot be read.
    for rel in files if cache.directory is not None else ():
        st = stats.get(rel)
        known = cache.digest_for(rel, st)
        if known is not None:  # same mtime and size: the recorded content digest; read when needed
            digests[rel] = known
            new_stats[rel] = (*st, known)  # type: ignore[misc]
            continue
        data, err = read_source(root, rel, max_file_bytes, size=st[1] if st is not None else None)
        if data is None:
            problems.append(Problem(rel, err or "cannot read"))
            digests[rel] = "unreadable"
            continue
        sources[rel] = data
        digests[rel] = digest_of(data)
        if st is not None and st[0] < racy_after:
            new_stats[rel] = (*st, digests[rel])
    unreadable = {p.rel for p in problems}
    work = _Work(root, files, sources, cache, digests, version, max_file_bytes, scope.pythonpath, scope.test_names)
    out: dict[str, FileResult] = {}
    live: set[str] = set()
    parse_errors: set[tuple[str, str]] = set()
    read_in_workers: set[str] = set()
    hits = 0

    def analysed() -> Iterator[str]:
        nonlocal hits
        for chunk in map_ordered(work, tests, resolve_workers(workers, len(tests)), _Chunk.encode, _Chunk.decode):
            for digest, specs in chunk.imports:
                cache.put_imports(digest, specs)
            parse_errors.update(chunk.errors)
            read_in_workers.update(chunk.read)
            for rel, key, res in chunk.results:
                live.add(key)
                if res is None:  # a cache hit: the parent has the same cache
                    out[rel] = result_from_json(rel, cache.get_result(key))  # type: ignore[arg-type]
                    hits += 1
                else:
                    out[rel] = res
                    if cache.directory is not None:
                        cache.put_result(key, result_to_json(res))
                yield rel

    try:
        for _ in progress(analysed(), len(tests)) if progress else analysed():
            pass
    finally:
        work.close()
    for rel, err in sorted(parse_errors):
        if rel not in unreadable:  # (reported above, when it was read here)
            problems.append(Problem(rel, err))
    if cache.directory is None:
        for rel in files:
            if rel not in read_in_workers:
                err = read_source(root, rel, max_file_bytes)[1]
                if err is not None:
                    problems.append(Problem(rel, err))
    cache.save(live, set(digests.values()), new_stats)
    seen: set[tuple[str, str]] = set()
    unique = []
    for p in problems:
        if (p.rel, p.reason) not in seen:
            seen.add((p.rel, p.reason))
            unique.append(p)
    for rel, r in out.items():
        if r.error and (rel, r.error) not in seen:
            seen.add((rel, r.error))
            unique.append(Problem(rel, r.error))
    final = sorted(unique, key=lambda p: (p.rel, p.reason))
    token = ""
    if snap and len(new_stats) == len(files):
        token = secrets.token_hex(16)
        save_snapshot(cache_dir, secret, {"key": snap, "files": {rel: result_to_json(r) for rel, r in out.items()},
                                          "problems": [[p.rel, p.reason] for p in final], "unseen": unseen,
                                          "token": token})
    return RunResult(out, final, hits, unseen, token)


def report_text(cache_dir: Path | None, result: RunResult, kind: str,
                render: Callable[[dict[str, FileResult]], str]) -> str:
    """render(result.files), stored beside the cache's snapshot: a run of an unchanged tree prints the text the
    run that wrote the snapshot rendered. (On curvlinops, 26,500 ids, rendering the JSON report took longer than
    the rest of a warm run.) `kind` names the report: one text per snapshot and kind."""
    if cache_dir is None or not result.snapshot:
        return render(result.files)
    secret = load_secret(user_cache_base())
    key = f"{result.snapshot}:{kind}"
    text = load_report(cache_dir, key, secret)
    if text is None:
        text = render(result.files)
        save_report(cache_dir, secret, key, text)
    return text


@dataclass
class _Chunk:
    """What analysing a chunk of test files sends back: per file (rel, cache key, result or None for a
    cache hit), the import lists parsed for the cache, and parse errors of every module newly parsed."""

    results: list[tuple[str, str, FileResult | None]]
    imports: list[tuple[str, tuple[ImportSpec, ...]]]
    errors: list[tuple[str, str]]
    read: list[str]  # files read from disk in the worker (not in the sources it was given)

    def encode(self) -> bytes:
        """Plain tuples in marshal's format: what a worker sends (a fifth of the cost of pickling objects)."""
        return marshal.dumps((
            [(rel, key, None if r is None else (r.torch, r.error, r.deps, [
                (k, v.label, v.gpu_count, v.vram_gb, v.reasons, v.cpu_without_gpus) for k, v in r.tests.items()],
                r.data, None if r.import_needs_gpu is None else r.import_needs_gpu.to_json()))
             for rel, key, r in self.results],
            [(d, [(s.module, s.level, s.names, s.line, s.toplevel) for s in specs]) for d, specs in self.imports],
            self.errors, self.read))

    @staticmethod
    def decode(data: bytes) -> _Chunk:
        results, imports, errors, read = marshal.loads(data)
        return _Chunk(
            [(rel, key, None if r is None else FileResult(rel, r[0], {
                k: Verdict(label, count, vram, reasons, without) for k, label, count, vram, reasons, without in r[3]},
                r[1], r[2],
                [tuple(d) for d in r[4]], None if r[5] is None else _verdict_from_json(r[5])))
             for rel, key, r in results],
            [(d, tuple(ImportSpec(*s) for s in specs)) for d, specs in imports],
            [tuple(e) for e in errors], read)  # type: ignore[misc]


class _Work:
    """The per-file analysis, callable on a chunk of test files in this process or in a forked worker (which
    inherits the index, the sources and the cache as they were when it was forked).

    One analyser per process serves all its chunks (memo tables shared across files). A forked worker
    never frees it (the process ends with os._exit), so its memory costs no time; with FRESH_PER_CHUNK
    every chunk gets a fresh analyser, dismantled afterwards (lower peak memory, but freeing millions of
    objects costs about as much as it saves), which the tests use to check the analysis is order-free."""

    def __init__(self, root: Path, files: list[str], sources: dict[str, bytes], cache: Cache,
                 digests: dict[str, str], version: str, max_file_bytes: int = MAX_FILE_BYTES,
                 import_dirs: tuple[str, ...] = (), test_names: TestNames | None = None) -> None:
        self.root = root
        self.test_names = test_names
        self.sources = sources
        self.cache = cache
        self.digests = digests
        self.version = version
        self.max_file_bytes = max_file_bytes
        first = _analyzer_class()(root, RepoIndex(files, import_dirs), sources, max_file_bytes=max_file_bytes)
        self.index = first.source.index
        self.pytest_torch = first.pytest_torch
        _dismantle(first)
        self.new_imports: list[tuple[str, tuple[ImportSpec, ...]]] = []
        self.current: Analyzer | None = None
        self.data_states: dict[str, str] = {}  # data files' states, read once per process (data_unchanged)

    def close(self) -> None:
        """Drop this process's analyser. Its tables form cycles (analyser and interpreter refer to each
        other) and the run keeps the cyclic collector off: left alone, the first collection after the run
        would traverse millions of objects (seconds on a large tree, at the latest at interpreter exit)."""
        if self.current is not None:
            _dismantle(self.current)
            self.current = None

    def _imports(self, an: Analyzer, parse: Callable[[str], ParsedModule], rel: str) -> tuple[ImportSpec, ...]:
        got = self.cache.get_imports(self.digests.get(rel, ""))
        if got is not None:
            return got
        pm = parse(rel)
        if pm.tree is not None and self.cache.directory is not None and pm.digest not in self.cache.imports:
            self.cache.put_imports(pm.digest, pm.imports)
            self.new_imports.append((pm.digest, pm.imports))
        return pm.imports

    def analyzer(self) -> Analyzer:
        an = _analyzer_class()(self.root, self.index, self.sources, self.pytest_torch,
                               max_file_bytes=self.max_file_bytes, test_names=self.test_names)
        parse = an.source.module

        known: dict[str, list[str]] = {}  # (a module's imports do not change during a run)

        def direct_deps(rel: str) -> list[str]:
            got = known.get(rel)
            if got is not None:
                return got
            out: set[str] = set()
            for spec in self._imports(an, parse, rel):
                if spec.level == 0 and spec.module.split(".", 1)[0] == "torch":
                    continue
                out.update(an.source.dep_files(spec, rel))
            out.discard(rel)
            known[rel] = sorted(out)
            return known[rel]

        an.source.direct_deps = direct_deps  # type: ignore[method-assign]
        return an

    def __call__(self, rels: list[str]) -> _Chunk:
        an = self.current if self.current is not None else self.analyzer()
        reported, read = len(an.source.parse_errors), len(an.source.read_from_disk)
        self.current = an
        results: list[tuple[str, str, FileResult | None]] = []
        for rel in rels:
            deps = an.source.file_deps(rel)
            for d in deps:  # installed test base modules (installed.py): their content is part of the key
                if is_installed(d) and d not in self.digests:
                    self.digests[d] = an.source.installed.digest(d)
            key = result_key(self.version, rel, deps, self.digests) if self.cache.directory is not None else rel
            stored = self.cache.get_result(key)
            if stored is not None and data_unchanged(self.root, stored, self.data_states, an.source.installed):
                results.append((rel, key, None))
                an.source.release(rel)
                continue
            try:
                res = an.classify_file(rel, deps)
            except limits.TooLarge as exc:  # a bound hit outside any expression (collecting the tests)
                res = FileResult(rel, True, {}, str(exc), deps)
            except Exception as exc:  # noqa: BLE001 - one bad file must not stop the run
                res = FileResult(rel, True, {}, f"internal analysis error: {type(exc).__name__}: {exc}", deps)
            res.data = an.source.data_deps(deps) + [(d, self.digests[d]) for d in deps if is_installed(d)]
            results.append((rel, key, res))
            an.source.release(rel)
        errors, fresh = an.source.parse_errors[reported:], an.source.read_from_disk[read:]
        if FRESH_PER_CHUNK:
            _dismantle(an)
            self.current = None
        imports, self.new_imports = self.new_imports, []
        return _Chunk(results, imports, errors, fresh)


def _analyzer_class() -> type[Analyzer]:
    """The analysis, imported only when a file is to be analysed: a run over an unchanged tree answers from the
    cache without loading the interpreter (half of a warm command's time; bench/bench_classify.py, "warm")."""
    from tools.classify.analyzer import Analyzer

    return Analyzer


def _dismantle(an: Analyzer) -> None:
    """Drop an analyser's tables now (the run has the cyclic GC off, and analyser and interpreter refer to
    each other)."""
    an.interp.__dict__.clear()
    an.fixtures.__dict__.clear()
    an.source.__dict__.clear()
    an.__dict__.clear()


def report_problems(problems: list[Problem]) -> None:
    for p in problems:
        print(f"classify: {p.rel}: {p.reason}", file=sys.stderr)
