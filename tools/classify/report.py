"""Human and machine reports of a run: summary (text/Markdown), JSON map, and --explain."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from tools import pretty_json
from tools.classify.merge import file_entry
from tools.classify.results import FileResult


def counts(results: Mapping[str, FileResult]) -> dict[str, int]:
    c = {"torch_tests": 0, "cpu": 0, "gpu": 0, "unknown": 0, "no_torch_tests": 0, "files": len(results),
         "torch_files": 0, "errors": 0}
    for r in results.values():
        if r.error:
            c["errors"] += 1
        if not r.torch:
            c["no_torch_tests"] += len(r.tests)
            continue
        c["torch_files"] += 1
        for v in r.tests.values():
            c["torch_tests"] += 1
            c[v.label] += 1
    return c


def _pct(n: int, total: int) -> str:
    return f"{round(100 * n / total)}%" if total else "0%"


def text_summary(results: Mapping[str, FileResult]) -> str:
    c = counts(results)
    t = c["torch_tests"]
    return "\n".join([
        f"Total torch-importing tests: {t}",
        f"Classified CPU {c['cpu']} ({_pct(c['cpu'], t)})",
        f"GPU {c['gpu']} ({_pct(c['gpu'], t)})",
        f"Unknown {c['unknown']} ({_pct(c['unknown'], t)})",
        f"Tests without torch: {c['no_torch_tests']}",
        f"Test files: {c['files']} ({c['torch_files']} import torch, {c['errors']} could not be analysed)",
    ]) + "\n"


def markdown_summary(results: Mapping[str, FileResult]) -> str:
    c = counts(results)
    t = c["torch_tests"]
    rows = [("CPU", c["cpu"]), ("GPU", c["gpu"]), ("Unknown", c["unknown"])]
    lines = ["## Torch test classification", "", f"Total torch-importing tests: **{t}**", "",
             "| label | tests | share |", "|---|---:|---:|"]
    lines += [f"| {name} | {n} | {_pct(n, t)} |" for name, n in rows]
    lines += ["", f"Tests without torch: {c['no_torch_tests']}; test files: {c['files']} "
                  f"({c['errors']} could not be analysed)."]
    return "\n".join(lines) + "\n"


def json_report(results: Mapping[str, FileResult]) -> str:
    """Every test node id and every file -> {label, gpu_count, vram_gb, reasons} (sorted, stable); a test whose
    id names a CPU case on a machine without GPUs also has `"without_gpus": "cpu"`."""
    out: dict[str, Any] = {}
    for rel, r in sorted(results.items()):
        fe = file_entry(r)
        out[rel] = {"label": fe["label"], "gpu_count": fe["gpu_count"], "vram_gb": fe["vram_gb"],
                    "torch": r.torch, "reasons": fe.get("reasons", [])}
        for key, v in sorted(r.tests.items()):
            out[f"{rel}::{key}"] = v.to_json()
    return pretty_json.dumps(out) + "\n"  # = json.dumps(indent=2, sort_keys=True), faster


def explain(results: Mapping[str, FileResult], nodeid: str) -> str | None:
    """The evidence chain of one node id (or of a file), one step per line."""
    rel, _, key = nodeid.partition("::")
    r = results.get(rel)
    if r is None:
        return None
    if not key:
        fe = file_entry(r)
        lines = [f"{rel}: {fe['label']} (torch={str(r.torch).lower()}, gpu_count={fe['gpu_count']}, "
                 f"vram_gb={fe['vram_gb']})"]
        lines += [f"  {k}: {t['label']}" for k, t in fe["tests"].items()]
        return "\n".join(lines) + "\n"
    v = r.tests.get(key)
    if v is None:
        base = key.split("[", 1)[0]
        cands = sorted(k for k in r.tests if k.split("[", 1)[0] == base)
        if not cands:
            return None
        return "".join(explain(results, f"{rel}::{k}") or "" for k in cands)
    without = "; on a machine without GPUs: cpu" if v.cpu_without_gpus else ""
    lines = [f"{nodeid}: {v.label} (gpu_count={v.gpu_count}, vram_gb={v.vram_gb}){without}"]
    for i, reason in enumerate(v.reasons, 1):
        parts = reason.split(" -> ")
        lines.append(f"  {i}. {parts[0]}")
        for caller, part in zip(parts, parts[1:], strict=False):
            called = _CALLS.search(caller)
            via = f"summary of {called.group(1)}(){called.group(2) or ''}: " if called else ""
            lines.append(f"     -> {via}{part}")
    return "\n".join(lines) + "\n"


# `calls f()` in a reason: the next step is what f's summary (tools/classify/summaries.py) says
_CALLS = re.compile(r": calls ([\w.]+)\(\)( \[[^\]]*\])?$")
