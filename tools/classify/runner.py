"""One classification run over a root: discover files, reuse cached results, analyse the rest.

I/O lives here; the analysis modules only see bytes and paths.
"""

from __future__ import annotations

import gc
import hashlib
import os
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tools.classify.analyzer import Analyzer, FileResult
from tools.classify.cache import Cache, load_snapshot, result_key, save_snapshot, tool_version
from tools.classify.evidence import Verdict
from tools.classify.modules import (
    Problem,
    digest_of,
    is_test_file,
    read_source,
    walk_python_files,
)
from tools.classify.scope import Scope, load_scope

RACY_NS = 1_000_000_000


@dataclass
class RunResult:
    files: dict[str, FileResult]
    problems: list[Problem] = field(default_factory=list)
    cache_hits: int = 0


def result_to_json(r: FileResult) -> dict[str, Any]:
    return {"torch": r.torch, "error": r.error, "deps": r.deps,
            "tests": {k: v.to_json() for k, v in sorted(r.tests.items())}}


def result_from_json(rel: str, d: dict[str, Any]) -> FileResult:
    tests = {k: Verdict(v["label"], v["gpu_count"], v["vram_gb"], tuple(v["reasons"])) for k, v in d["tests"].items()}
    return FileResult(rel, bool(d["torch"]), tests, d.get("error"), list(d.get("deps", [])))


def run(root: Path, paths: list[str] | None = None, cache_dir: Path | None = None,
        progress: Callable[[Iterable[str], int], Iterable[str]] | None = None, scope: Scope | None = None
        ) -> RunResult:
    """Classify the test files under root in scope: `[tool.torch_classify]` paths/exclude and pytest's
    norecursedirs (see scope.py); non-empty `paths` (relative to root) replace the configured paths."""
    # The run allocates millions of small, long-lived objects (ASTs, abstract values) and almost no
    # cycles: the cyclic collector would rescan them over and over (a third of the run time).
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _run(root, paths, cache_dir, progress, scope)
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


def _run(root: Path, paths: list[str] | None = None, cache_dir: Path | None = None,
         progress: Callable[[Iterable[str], int], Iterable[str]] | None = None, scope: Scope | None = None
         ) -> RunResult:
    problems: list[Problem] = []
    # Files modified within RACY_NS of the run's start may change again within the filesystem's timestamp
    # granularity without their (mtime, size) changing: their stats are not trusted next time (like git).
    racy_after = time.time_ns() - RACY_NS
    if scope is None:
        scope = load_scope(root, paths)
    problems.extend(Problem(p.split(": ", 1)[0], p.split(": ", 1)[-1]) for p in scope.problems)
    stats: dict[str, tuple[int, int]] = {}
    files = walk_python_files(root, problems, stats)
    version = tool_version()
    snap = snapshot_key(version, root, scope, stats, files) if cache_dir is not None else ""
    # An unchanged tree (same stats, config and classifier): the last run's result as it was.
    stored = load_snapshot(cache_dir, snap) if snap else None
    if stored is not None:
        out = {rel: result_from_json(rel, r) for rel, r in stored["files"].items()}
        return RunResult(out, [Problem(r, why) for r, why in stored["problems"]], len(out))
    tests = [f for f in files if is_test_file(f.rsplit("/", 1)[-1]) and scope.selects(f)]
    cache = Cache(cache_dir)
    sources: dict[str, bytes] = {}
    digests: dict[str, str] = {}
    new_stats: dict[str, tuple[int, int, str]] = {}
    for rel in files:
        st = stats.get(rel)
        known = cache.digest_for(rel, st)
        if known is not None:  # same mtime and size: the recorded content digest; read when needed
            digests[rel] = known
            new_stats[rel] = (*st, known)  # type: ignore[misc]
            continue
        data, err = read_source(root, rel)
        if data is None:
            problems.append(Problem(rel, err or "cannot read"))
            digests[rel] = "unreadable"
            continue
        sources[rel] = data
        digests[rel] = digest_of(data)
        if st is not None and st[0] < racy_after:
            new_stats[rel] = (*st, digests[rel])
    analyzer = Analyzer(root, files, sources)
    original_module = analyzer.module

    def deps_imports(rel: str) -> Any:
        got = cache.get_imports(digests.get(rel, ""))
        if got is not None:
            return got
        pm = original_module(rel)
        if pm.tree is not None:
            cache.put_imports(pm.digest, pm.imports)
        return pm.imports

    analyzer.direct_deps = _direct_deps_with(analyzer, deps_imports)  # type: ignore[method-assign]
    out: dict[str, FileResult] = {}
    live: set[str] = set()
    hits = 0
    iterable: Iterable[str] = progress(tests, len(tests)) if progress else tests
    for rel in iterable:
        deps = sorted(set().union(analyzer.closure(rel), *(analyzer.closure(c)
                                                           for c in analyzer.index.conftests_for(rel))))
        key = result_key(version, rel, deps, digests)
        live.add(key)
        cached = cache.get_result(key)
        if cached is not None:
            out[rel] = result_from_json(rel, cached)
            hits += 1
            continue
        try:
            res = analyzer.classify_file(rel)
        except Exception as exc:  # noqa: BLE001 - one bad file must not stop the run
            res = FileResult(rel, True, {}, f"internal analysis error: {type(exc).__name__}: {exc}", deps)
        out[rel] = res
        cache.put_result(key, result_to_json(res))
    for rel, pm in sorted(analyzer.parsed.items()):
        if pm.error and digests.get(rel, "unreadable") != "unreadable":
            problems.append(Problem(rel, pm.error))
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
    if snap and len(new_stats) == len(files):
        save_snapshot(cache_dir, {"key": snap, "files": {rel: result_to_json(r) for rel, r in out.items()},
                                  "problems": [[p.rel, p.reason] for p in final]})
    return RunResult(out, final, hits)


def _direct_deps_with(analyzer: Analyzer, imports_of: Callable[[str], Any]) -> Callable[[str], list[str]]:
    def direct_deps(rel: str) -> list[str]:
        out: set[str] = set()
        for spec in imports_of(rel):
            if spec.level == 0 and spec.module.split(".", 1)[0] == "torch":
                continue
            out.update(analyzer.index.dep_files(spec, rel))
        out.discard(rel)
        return sorted(out)
    return direct_deps


def report_problems(problems: list[Problem]) -> None:
    for p in problems:
        print(f"classify: {p.rel}: {p.reason}", file=sys.stderr)
