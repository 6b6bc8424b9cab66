"""Merge recorded pytest-torch performance baselines into the workspace file, safely.

pytest-torch's store rewrites the whole file on every `set`, so two writers lose each other's
entries. Under Bazel every test target (and shard) records into its own file in its undeclared
outputs, and only this module writes the workspace's `.torch-perf-baselines.json`: under an
exclusive `flock`, re-reading the file inside the lock, writing through a temporary file and a
rename. A corrupted workspace file is reported and left exactly as it was.
"""

from __future__ import annotations

import fcntl
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tools.atomic_write import write_text_atomic

VERSION = 1


class BaselinesError(ValueError):
    """A baselines file that is not pytest-torch's format; the message names the file."""


@dataclass(frozen=True)
class MergeResult:
    added: int
    updated: int
    total: int


def parse(text: str, origin: str) -> dict[str, Any]:
    """Validate a baselines document: {"version": 1, "entries": {key: {...}}}."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BaselinesError(f"{origin}:{exc.lineno}: not valid JSON ({exc.msg}); fix or delete it") from exc
    if not isinstance(data, dict) or not isinstance(data.get("entries"), dict):
        raise BaselinesError(f"{origin}: expected an object with an 'entries' object")
    if data.get("version") != VERSION:
        raise BaselinesError(f"{origin}: unsupported version {data.get('version')!r} (expected {VERSION})")
    for key, entry in data["entries"].items():
        if not isinstance(entry, dict):
            raise BaselinesError(f"{origin}: entries[{key!r}] must be an object")
    return data


def merge(existing: Mapping[str, Any], recorded: Iterable[Mapping[str, Any]]) -> tuple[dict[str, Any], MergeResult]:
    """New recordings win per key; every other entry is kept."""
    entries = dict(existing["entries"])
    added = updated = 0
    for document in recorded:
        for key, entry in document["entries"].items():
            if key not in entries:
                added += 1
            elif entries[key] != entry:
                updated += 1
            entries[key] = entry
    merged = {"version": VERSION, "entries": dict(sorted(entries.items()))}
    return merged, MergeResult(added=added, updated=updated, total=len(entries))


def merge_into_file(path: Path, recorded_files: Iterable[Path]) -> MergeResult:
    """Merge recorded files into `path` under a lock; atomic; nothing written on any error."""
    recorded = [parse(f.read_text(encoding="utf-8"), str(f)) for f in recorded_files]
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        existing = (
            parse(path.read_text(encoding="utf-8"), str(path)) if path.exists() else {"version": VERSION, "entries": {}}
        )
        merged, result = merge(existing, recorded)
        write_text_atomic(path, json.dumps(merged, indent=2, sort_keys=True) + "\n")
    return result
