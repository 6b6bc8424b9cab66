"""Apply CPU-run results to the classification data: CUDA failures move exactly those tests to `gpu`.

A pure function (data, results -> new data, report) so that the CLI, the convergence loop and the
tests share one rule set:

* a test that failed or was skipped on a CPU runner *because there was no GPU* becomes `gpu`, with
  `source: "runtime"` and the failure as its evidence (a later static `--update` keeps it, see
  tools/classify/merge.py);
* `manual` entries are never touched (a person said so; the report mentions the contradiction);
* failures that are not about CUDA are left alone and listed;
* results of tests or files that no longer exist are reported and ignored;
* results from a GPU run (CUDA was available, or the target ran only `gpu` tests) are refused: a
  GPU run cannot prove that a test needs a GPU, it is only good for VRAM measurements (vram.py).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tools.contract.classification import MANUAL, RUNTIME, file_summary, label_without_gpus
from tools.contract.runtime import resolve_key, split_nodeid
from tools.feedback.cuda_failures import Verdict, classify_outcome
from tools.feedback.results import Results, Run, TestCase


@dataclass(frozen=True)
class Move:
    nodeid: str
    evidence: str  # the reason written into the classification file
    note: str  # which rule recognised the failure
    gpu_count: int
    outcome: str


@dataclass(frozen=True)
class Note:
    nodeid: str
    text: str


@dataclass
class Report:
    moves: list[Move] = field(default_factory=list)
    not_cuda: list[Note] = field(default_factory=list)  # failures left alone
    manual_kept: list[Note] = field(default_factory=list)  # CUDA failures of manual entries
    already_gpu: list[str] = field(default_factory=list)
    missing: list[Note] = field(default_factory=list)  # results for tests/files that no longer exist
    refused: list[Note] = field(default_factory=list)  # GPU runs fed by mistake (nodeid = run label)
    problems: list[Note] = field(default_factory=list)  # unreadable input (from Results.problems)

    @property
    def moved(self) -> int:
        return len(self.moves)


def summarise_file(entry: dict[str, Any]) -> None:
    """Recompute a file entry's label, gpu_count and vram_gb from its tests (as the classifier's merge does)."""
    tests = entry.get("tests") or {}
    if not tests:
        return
    summary = file_summary(tests)
    if entry.get("source") == MANUAL:
        del summary["source"]
    entry.update(summary, tests=dict(sorted(tests.items())))


def is_gpu_run(run: Run, cases: list[TestCase], files: Mapping[str, Any]) -> str | None:
    """Why a run must not be used to reclassify (None when it is a CPU run)."""
    if run.cuda_available:
        saw_cuda = any(r.get("cuda_available") is True for r in run.runtime)
        what = "torch-runtime.json says cuda_available: true" if saw_cuda else "it recorded GPU memory"
        return f"{run.label} comes from a GPU run ({what}); a GPU run cannot show that a test needs a GPU"
    if run.target and cases:
        labels = []
        for case in cases:
            path, key = split_nodeid(case.nodeid)
            entry = files.get(path)
            if entry is None:
                return None
            tests = entry.get("tests") or {}
            found = resolve_key(tests, key) if key else None
            labels.append(label_without_gpus(tests[found]) if found else entry.get("label"))
        if labels and all(label == "gpu" for label in labels):
            return (f"{run.label} ran only tests classified gpu: it is a GPU target, not a CPU run "
                    "(its results are used only for VRAM, see --vram-from)")
    return None


def reason_line(details: str, path: str, fallback: list[str]) -> int:
    """The deepest line of the test file in a traceback, else the line of the entry's first reason."""
    found = None
    for m in re.finditer(r"(?m)^(?:.*?)(" + re.escape(path) + r"):(\d+)", details):
        found = int(m.group(2))
    if found is None:
        for reason in fallback:
            m = re.match(re.escape(path) + r":(\d+):", reason)
            if m:
                return int(m.group(1))
        return 1
    return found


def evidence_reason(path: str, case: TestCase, verdict: Verdict, run: Run, fallback: list[str]) -> str:
    """`path:line: CPU run failed: Torch not compiled with CUDA enabled (test.xml of //pkg:target)`."""
    what = "skipped" if case.outcome == "skipped" else "failed"
    return f"{path}:{reason_line(case.details, path, fallback)}: CPU run {what}: {verdict.evidence} ({run.label})"


def _move(test: dict[str, Any], reason: str, count: int) -> dict[str, Any]:
    return {
        "label": "gpu",
        "gpu_count": max(1, count, int(test.get("gpu_count", 0))),
        "vram_gb": test.get("vram_gb", 0),
        "source": RUNTIME,
        "reasons": [reason],
    }


def reclassify(data: Mapping[str, Any], results: Results) -> tuple[dict[str, Any], Report]:
    """New classification data with every CUDA-failed test of a CPU run moved to gpu; `data` is not modified."""
    new = copy.deepcopy(dict(data))
    files: dict[str, Any] = new.setdefault("files", {})
    report = Report(problems=[Note(p.path, p.reason) for p in results.problems])
    by_run: dict[int, list[TestCase]] = {}
    for case in results.cases:
        by_run.setdefault(case.run, []).append(case)
    touched: set[str] = set()
    for index, cases in sorted(by_run.items()):
        run = results.runs[index]
        refusal = is_gpu_run(run, cases, data.get("files", {}))
        if refusal:
            report.refused.append(Note(run.origin, refusal))
            continue
        for case in cases:
            verdict = classify_outcome(case.outcome, case.message, case.details)
            if case.outcome in ("failed", "error") and not verdict.is_cuda:
                first = next((ln for ln in case.message.splitlines() if ln.strip()), case.outcome)
                report.not_cuda.append(Note(case.nodeid, f"{first.strip()[:200]} ({run.label})"))
            if not verdict.is_cuda:
                continue
            if _apply(files, case, verdict, run, report):
                touched.add(split_nodeid(case.nodeid)[0])
    for path in touched:
        summarise_file(files[path])
    new["files"] = dict(sorted(files.items()))
    return new, report


def _apply(files: dict[str, Any], case: TestCase, verdict: Verdict, run: Run, report: Report) -> bool:
    """Move one CUDA-failed test (or every test of a file whose collection failed on CUDA)."""
    path, key = split_nodeid(case.nodeid)
    entry = files.get(path)
    if entry is None:
        report.missing.append(Note(case.nodeid, f"{path} is not in the classification file (deleted or renamed?)"))
        return False
    if entry.get("source") == MANUAL:
        report.manual_kept.append(Note(case.nodeid, f"file is classified manually; CPU run said: {verdict.evidence}"))
        return False
    tests: dict[str, Any] = entry.setdefault("tests", {})
    if not key:  # the module failed to import: every test of the file needs the GPU
        keys = list(tests) or []
        if not keys:
            if entry.get("label") == "gpu":
                report.already_gpu.append(case.nodeid)
                return False
            entry.update({"label": "gpu", "gpu_count": max(1, verdict.gpu_count), "source": RUNTIME,
                          "reasons": [evidence_reason(path, case, verdict, run, entry.get("reasons", []))]})
            report.moves.append(Move(case.nodeid, entry["reasons"][0], verdict.note, verdict.gpu_count, case.outcome))
            return True
        changed = False
        for k in keys:
            changed |= _apply_key(tests, k, f"{path}::{k}", case, verdict, run, report, path)
        return changed
    found = resolve_key(tests, key)
    if found is None:
        report.missing.append(Note(case.nodeid, f"no test {key!r} in {path}'s classification (renamed or removed?)"))
        return False
    if found != key and label_without_gpus(tests[found]) != "gpu" and tests[found].get("source") != MANUAL:
        # Only this parametrization (or method) failed: give it its own, more specific entry.
        tests[key] = copy.deepcopy(tests[found])
        found = key
    return _apply_key(tests, found, case.nodeid, case, verdict, run, report, path)


def _apply_key(tests: dict[str, Any], key: str, nodeid: str, case: TestCase, verdict: Verdict, run: Run,
               report: Report, path: str) -> bool:
    test = tests[key]
    if test.get("source") == MANUAL:
        report.manual_kept.append(Note(nodeid, f"classified {test.get('label')} manually; CPU run said: "
                                               f"{verdict.evidence}"))
        return False
    if test.get("label") == "gpu" and label_without_gpus(test) == "gpu":
        report.already_gpu.append(nodeid)
        return False  # (a gpu key whose id names a CPU case where no GPU is seen moves: that case needs one too)
    reason = evidence_reason(path, case, verdict, run, test.get("reasons", []))
    tests[key] = _move(test, reason, verdict.gpu_count)
    report.moves.append(Move(nodeid, reason, verdict.note, tests[key]["gpu_count"], case.outcome))
    return True


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(report: Report, limit: int = 200) -> str:
    """A pull request body: what moved and why, what was left alone, what could not be used."""
    out: list[str] = []
    n = report.moved
    if n:
        names = ", ".join(f"`{m.nodeid}`" for m in report.moves[:5]) + (", …" if n > 5 else "")
        out.append(f"**Runtime feedback: moved {n} test{'s' if n != 1 else ''} to gpu:** {names}\n")
        out.append("| test | evidence | why it counts | GPUs |")
        out.append("|---|---|---|---|")
        for m in report.moves[:limit]:
            out.append(f"| `{_cell(m.nodeid)}` | {_cell(m.evidence)} | {_cell(m.note)} | {m.gpu_count} |")
        if n > limit:
            out.append(f"| … {n - limit} more | | | |")
        out.append("")
    else:
        out.append("**Runtime feedback: no test moved** (no CUDA-caused failure in the CPU run).\n")
    sections = (
        ("Failures not about CUDA (left alone)", report.not_cuda),
        ("Manual classifications kept despite a CUDA failure", report.manual_kept),
        ("Results for tests that no longer exist (ignored)", report.missing),
        ("GPU runs refused (used only for VRAM)", report.refused),
        ("Unreadable or partial input", report.problems),
    )
    for title, notes in sections:
        if not notes:
            continue
        out.append(f"<details><summary>{title}: {len(notes)}</summary>\n")
        out.extend(f"- `{_cell(note.nodeid)}`: {_cell(note.text)}" for note in notes[:limit])
        if len(notes) > limit:
            out.append(f"- … {len(notes) - limit} more")
        out.append("\n</details>\n")
    return "\n".join(out).rstrip() + "\n"


def text_lines(report: Report) -> list[str]:
    """One line per fact, for stderr."""
    lines = [f"moved to gpu: {m.nodeid}: {m.evidence}" for m in report.moves]
    lines += [f"not a CUDA failure, left alone: {n.nodeid}: {n.text}" for n in report.not_cuda]
    lines += [f"manual entry kept: {n.nodeid}: {n.text}" for n in report.manual_kept]
    lines += [f"no longer exists, ignored: {n.nodeid}: {n.text}" for n in report.missing]
    lines += [f"refused: {n.text}" for n in report.refused]
    lines += [f"input problem: {n.nodeid}: {n.text}" for n in report.problems]
    if report.already_gpu:
        lines.append(f"{len(report.already_gpu)} CUDA failure(s) of tests already classified gpu")
    return lines
