"""Measured VRAM: GPU runs' `torch-gpu-memory.json` -> each test's `vram_gb` in the classification file.

Why measurement: static VRAM guesses are rough, and `gpu-vram-gb:N` tags decide which GPUs a test may
share. The glue (rules/private/pytest_torch_glue.py) records every test's peak reserved memory from
setup to teardown; the need is that peak times a headroom factor, rounded up to whole GiB. Manual
values are never lowered (only raised, when the measurement proves them too small).
"""

from __future__ import annotations

import copy
import json
import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tools.contract.classification import MANUAL, MEASURED
from tools.contract.runtime import resolve_key, split_nodeid
from tools.feedback.reclassify import Note, reason_line, summarise_file
from tools.feedback.results import GPU_MEMORY_JSON, Problem

DEFAULT_HEADROOM = 1.2
MAX_JSON_BYTES = 64 * 2**20


@dataclass(frozen=True)
class Measurement:
    nodeid: str
    peak_reserved_mb: float
    gpus: int
    target: str  # Bazel label, or the file it came from


@dataclass
class VramReport:
    updated: list[Note] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    manual_kept: list[Note] = field(default_factory=list)
    missing: list[Note] = field(default_factory=list)
    skipped: list[Note] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


def need_gb(peak_reserved_mb: float, headroom: float = DEFAULT_HEADROOM) -> int:
    """ceil(peak x headroom / 1024): whole GiB per GPU."""
    return math.ceil(peak_reserved_mb * headroom / 1024)


def _files(paths: Iterable[Path]) -> Iterable[Path]:
    for path in paths:
        if path.is_dir():
            for current, dirnames, filenames in os.walk(path):
                dirnames.sort()
                for name in sorted(filenames):
                    if GPU_MEMORY_JSON.match(name):
                        yield Path(current) / name
        else:
            yield path


def read_measurements(paths: Iterable[Path]) -> tuple[list[Measurement], list[Problem]]:
    """Every record of every torch-gpu-memory*.json under `paths`; bad files are reported and skipped."""
    found: list[Measurement] = []
    problems: list[Problem] = []
    seen_any = False
    for path in _files(paths):
        seen_any = True
        try:
            if path.stat().st_size > MAX_JSON_BYTES:
                problems.append(Problem(str(path), f"larger than {MAX_JSON_BYTES >> 20} MiB; not a memory record"))
                continue
            data = json.loads(path.read_bytes().decode("utf-8", errors="replace"))
        except (OSError, ValueError) as exc:
            problems.append(Problem(str(path), f"unreadable: {exc}"))
            continue
        tests = data.get("tests") if isinstance(data, dict) else None
        if not isinstance(tests, dict):
            problems.append(Problem(str(path), "no 'tests' object (expected pytest_torch_glue's format)"))
            continue
        target = data.get("target") or str(path)
        for nodeid, record in tests.items():
            try:
                peak = float(record["peak_reserved_mb"])
                gpus = int(record.get("gpus", 1))
            except (KeyError, TypeError, ValueError):
                problems.append(Problem(str(path), f"{nodeid}: no numeric peak_reserved_mb"))
                continue
            if peak < 0 or math.isnan(peak) or math.isinf(peak):
                problems.append(Problem(str(path), f"{nodeid}: impossible peak {peak}"))
                continue
            found.append(Measurement(nodeid, peak, gpus, target))
    if not seen_any:
        problems.append(Problem(", ".join(map(str, paths)) or "(none)", "no torch-gpu-memory*.json found"))
    return found, problems


def _replace_measured(reasons: list[str], reason: str) -> list[str]:
    return [reason] + [r for r in reasons if MEASURED not in r]


def apply_vram(data: Mapping[str, Any], measurements: Iterable[Measurement], headroom: float = DEFAULT_HEADROOM
               ) -> tuple[dict[str, Any], VramReport]:
    """New data with each measured gpu test's `vram_gb` set from its peak (max over runs and parametrizations
    sharing one entry); the file's `vram_gb` is the max over its tests. `data` is not modified."""
    new = copy.deepcopy(dict(data))
    files: dict[str, Any] = new.setdefault("files", {})
    report = VramReport()
    peaks: dict[tuple[str, str], Measurement] = {}
    for m in measurements:
        path, key = split_nodeid(m.nodeid)
        entry = files.get(path)
        if entry is None or not key:
            report.missing.append(Note(m.nodeid, f"{path} is not in the classification file"))
            continue
        found = resolve_key(entry.get("tests") or {}, key)
        if found is None:
            report.missing.append(Note(m.nodeid, f"no test {key!r} in {path}'s classification"))
            continue
        best = peaks.get((path, found))
        if best is None or m.peak_reserved_mb > best.peak_reserved_mb:
            peaks[(path, found)] = m
    touched: set[str] = set()
    for (path, key), m in sorted(peaks.items()):
        entry = files[path]
        test = entry["tests"][key]
        nodeid = f"{path}::{key}"
        if test.get("label") != "gpu":
            report.skipped.append(Note(nodeid, f"classified {test.get('label')}, not gpu; measurement ignored"))
            continue
        if m.peak_reserved_mb <= 0:
            report.skipped.append(Note(nodeid, f"no GPU memory reserved on {m.target}; vram_gb left as is"))
            continue
        gb = need_gb(m.peak_reserved_mb, headroom)
        line = reason_line("", path, test.get("reasons", []))
        reason = (f"{path}:{line}: {MEASURED} {m.peak_reserved_mb / 1024:.1f} GiB on {m.target} "
                  f"(x{headroom:g} headroom -> {gb} GiB)")
        old = test.get("vram_gb", 0)
        manual = test.get("source") == MANUAL or entry.get("source") == MANUAL
        if manual and gb <= old:
            report.manual_kept.append(Note(nodeid, f"manual vram_gb {old} kept ({MEASURED} needs {gb})"))
            continue
        if old == gb and any(MEASURED in r for r in test.get("reasons", [])):
            report.unchanged.append(nodeid)
            continue
        test["vram_gb"] = gb
        test["reasons"] = _replace_measured(list(test.get("reasons", [])), reason)
        report.updated.append(Note(nodeid, f"vram_gb {old} -> {gb} ({MEASURED} {m.peak_reserved_mb:.0f} MiB on "
                                           f"{m.target})"))
        touched.add(path)
    for path in touched:
        entry = files[path]
        if entry.get("source") == MANUAL:
            entry["vram_gb"] = max(entry.get("vram_gb", 0), *(t.get("vram_gb", 0) for t in entry["tests"].values()))
        else:
            summarise_file(entry)
    new["files"] = dict(sorted(files.items()))
    return new, report


def text_lines(report: VramReport) -> list[str]:
    lines = [f"vram: {n.nodeid}: {n.text}" for n in report.updated]
    lines += [f"vram: manual kept: {n.nodeid}: {n.text}" for n in report.manual_kept]
    lines += [f"vram: ignored: {n.nodeid}: {n.text}" for n in report.missing + report.skipped]
    lines += [f"vram: input problem: {p.path}: {p.reason}" for p in report.problems]
    return lines
