"""Merging recorded perf baselines into the workspace file: nothing lost, nothing half-written."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest

from tools.perf_baselines.merge import BaselinesError, merge, merge_into_file


def document(**entries: float) -> dict:
    return {"version": 1, "entries": {k: {"latency_ms": v} for k, v in entries.items()}}


def test_new_recordings_win_and_others_are_kept():
    merged, result = merge(document(a=1, b=2), [document(b=3), document(c=4)])
    assert merged["entries"] == {"a": {"latency_ms": 1}, "b": {"latency_ms": 3}, "c": {"latency_ms": 4}}
    assert (result.added, result.updated, result.total) == (1, 1, 3)


def _merge_one(path: str, recorded: str) -> None:
    merge_into_file(Path(path), [Path(recorded)])


def test_concurrent_merges_lose_no_entry(tmp_path):
    target = tmp_path / "baselines.json"
    recordings = []
    for i in range(24):
        f = tmp_path / f"shard{i}.json"
        f.write_text(json.dumps(document(**{f"t{i}": float(i)})))
        recordings.append(str(f))
    with multiprocessing.get_context("fork").Pool(8) as pool:
        pool.starmap(_merge_one, [(str(target), r) for r in recordings])
    assert set(json.loads(target.read_text())["entries"]) == {f"t{i}" for i in range(24)}


def test_corrupted_workspace_file_is_reported_and_left_untouched(tmp_path):
    target = tmp_path / "baselines.json"
    target.write_text('{"version": 1, "entries": {')
    recorded = tmp_path / "rec.json"
    recorded.write_text(json.dumps(document(a=1)))
    with pytest.raises(BaselinesError, match=r"baselines.json:1: not valid JSON"):
        merge_into_file(target, [recorded])
    assert target.read_text() == '{"version": 1, "entries": {'
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_wrong_version_is_rejected(tmp_path):
    recorded = tmp_path / "rec.json"
    recorded.write_text(json.dumps({"version": 9, "entries": {}}))
    with pytest.raises(BaselinesError, match="unsupported version 9"):
        merge_into_file(tmp_path / "b.json", [recorded])
