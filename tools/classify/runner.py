"""One classification run over a root: discover files, reuse cached results, analyse the rest.

I/O lives here; the analysis modules only see bytes and paths.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tools.classify.analyzer import Analyzer, FileResult
from tools.classify.cache import Cache, result_key, tool_version
from tools.classify.evidence import Verdict
from tools.classify.modules import (
    Problem,
    digest_of,
    is_test_file,
    read_source,
    walk_python_files,
)


@dataclass
class RunResult:
    files: dict[str, FileResult]
    problems: list[Problem] = field(default_factory=list)
    cache_hits: int = 0


def _selected(rel: str, paths: list[str]) -> bool:
    if not paths:
        return True
    return any(rel == p or rel.startswith(p.rstrip("/") + "/") for p in paths)


def result_to_json(r: FileResult) -> dict[str, Any]:
    return {"torch": r.torch, "error": r.error, "deps": r.deps,
            "tests": {k: v.to_json() for k, v in sorted(r.tests.items())}}


def result_from_json(rel: str, d: dict[str, Any]) -> FileResult:
    tests = {k: Verdict(v["label"], v["gpu_count"], v["vram_gb"], tuple(v["reasons"])) for k, v in d["tests"].items()}
    return FileResult(rel, bool(d["torch"]), tests, d.get("error"), list(d.get("deps", [])))


def run(root: Path, paths: list[str] | None = None, cache_dir: Path | None = None,
        progress: Callable[[Iterable[str], int], Iterable[str]] | None = None) -> RunResult:
    """Classify every test file under root (or under `paths`, relative to root)."""
    problems: list[Problem] = []
    files = walk_python_files(root, problems)
    norm = [p.strip("./") if p not in (".", "./") else "" for p in (paths or [])]
    norm = [p for p in norm if p]
    tests = [f for f in files if is_test_file(f.rsplit("/", 1)[-1]) and _selected(f, norm)]
    sources: dict[str, bytes] = {}
    digests: dict[str, str] = {}
    for rel in files:
        data, err = read_source(root, rel)
        if data is None:
            problems.append(Problem(rel, err or "cannot read"))
            digests[rel] = "unreadable"
            continue
        sources[rel] = data
        digests[rel] = digest_of(data)
    cache = Cache(cache_dir)
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
    version = tool_version()
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
        if pm.error and rel in sources:
            problems.append(Problem(rel, pm.error))
    cache.save(live, set(digests.values()))
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
    return RunResult(out, sorted(unique, key=lambda p: (p.rel, p.reason)), hits)


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
