"""Turn run results into the classification file, preserving manual and runtime knowledge.

`manual` entries are never changed; a `runtime` gpu (a CPU run proved it needs CUDA) is never flipped
back to cpu by static analysis, also when it covers a single parametrization the static pass does not
list separately; a VRAM need measured on a GPU run (tools/feedback/vram.py) is kept while the test is
still gpu. Everything else is replaced by the fresh static result.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from tools.classify.evidence import Verdict
from tools.classify.results import FileResult
from tools.contract.classification import (
    MANUAL,
    MEASURED,
    RUNTIME,
    STATIC,
    WITHOUT_GPUS,
    empty,
    file_summary,
    label_without_gpus,
)


def test_entry(v: Verdict) -> dict[str, Any]:
    entry = {"label": v.label, "gpu_count": v.gpu_count if v.label == "gpu" else 0,
             "vram_gb": v.vram_gb if v.label == "gpu" else 0, "source": STATIC, "reasons": list(v.reasons)}
    if v.cpu_without_gpus:
        entry[WITHOUT_GPUS] = "cpu"
    return entry


def file_entry(r: FileResult) -> dict[str, Any]:
    tests = {k: test_entry(v) for k, v in sorted(r.tests.items())}
    entry = _file_entry(tests, r)
    if r.error:
        entry["label"] = "unknown"
        entry["reasons"] = [f"{r.rel}:1: {r.error}"]
    return entry


def _summarise(tests: Mapping[str, Mapping[str, Any]], torch: bool) -> dict[str, Any]:
    return {**file_summary(tests), "torch": torch, "tests": dict(sorted(tests.items()))}


def _file_entry(tests: Mapping[str, Mapping[str, Any]], r: FileResult) -> dict[str, Any]:
    """The entry of analysed file r with these tests; a file without tests whose import needs a GPU is `gpu`
    (its collection fails on a CPU runner), with the reasons."""
    entry = _summarise(tests, r.torch)
    v = r.import_needs_gpu
    if not tests and v is not None:
        entry.update(label=v.label, gpu_count=v.gpu_count, vram_gb=v.vram_gb, reasons=list(v.reasons))
    return entry


def _base(key: str) -> str:
    return key.split("[", 1)[0]


def _still_collected(key: str, tests: Mapping[str, Any]) -> bool:
    """A runtime key like `test_fn[cuda]` survives while its function still exists."""
    return any(_base(k) == _base(key) for k in tests)


def _keep_knowledge(tests: dict[str, Any], previous: Mapping[str, Any]) -> dict[str, Any]:
    """Carry manual labels, runtime gpu labels and measured VRAM from the previous file entry."""
    for key, pt in previous.items():
        src = pt.get("source", STATIC)
        new = tests.get(key)
        if src == MANUAL:
            tests[key] = pt
        elif src == RUNTIME and pt.get("label") == "gpu":
            if (new is None and _still_collected(key, tests)) or (
                    new is not None and label_without_gpus(new) != "gpu"):
                tests[key] = pt  # (a CPU run proved what the id names where no GPU is seen needs one)
        elif new is not None and new["label"] == "gpu" and pt.get("label") == "gpu":
            measured = [r for r in pt.get("reasons", []) if MEASURED in r]
            if measured:
                tests[key] = {**new, "vram_gb": pt.get("vram_gb", 0), "reasons": list(new["reasons"]) + measured}
    return tests


def merge(results: Mapping[str, FileResult], old: Mapping[str, Any] | None, scope: list[str] | None = None,
          unseen: Iterable[str] = ()) -> dict[str, Any]:
    """New classification data from `results`; entries outside `scope` (a --paths run) are kept, and so are
    entries under `unseen` paths (a directory that could not be listed, a file skipped as not regular) and the
    previous entry of a file that cannot be analysed now (a syntax error in the middle of an edit): what
    they said, manual and runtime labels above all, must survive until the file can be analysed again."""
    data = empty()
    old_files: Mapping[str, Any] = (old or {}).get("files", {})
    unseen = list(unseen)
    files: dict[str, Any] = {}
    for rel, entry in old_files.items():
        if rel not in results and (entry.get("source") == MANUAL or (scope and not _in_scope(rel, scope))
                                   or _in_scope(rel, unseen)):
            files[rel] = entry
    for rel, r in sorted(results.items()):
        prev = old_files.get(rel)
        if prev is not None and (prev.get("source") == MANUAL or r.error):
            files[rel] = prev
            continue
        entry = file_entry(r)
        if prev is not None:
            tests = _keep_knowledge(dict(entry["tests"]), prev.get("tests", {}))
            entry = _file_entry(tests, r)
        files[rel] = entry
    data["files"] = dict(sorted(files.items()))
    return data


def kept_unanalysed(results: Mapping[str, FileResult], old: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    """(file, why) for every file whose previous entry `merge` keeps because it cannot be analysed now."""
    old_files: Mapping[str, Any] = (old or {}).get("files", {})
    return [(rel, r.error) for rel, r in sorted(results.items())
            if r.error and rel in old_files and old_files[rel].get("source") != MANUAL]


def _in_scope(rel: str, scope: list[str]) -> bool:
    return any(p in ("", ".") or rel == p or rel.startswith(p.rstrip("/") + "/") for p in scope)
