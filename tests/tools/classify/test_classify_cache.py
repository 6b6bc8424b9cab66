"""Warm runs: a whole-run snapshot keyed by file stats, stat-checked digests, racy files re-hashed."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tools.classify import cli, report
from tools.classify.cache import REPORT_NAME, SNAPSHOT_NAME
from tools.classify.runner import report_text, run

CPU = "import torch\n\ndef test_a():\n    torch.ones(1)\n"
GPU = "import torch\n\ndef test_a():\n    torch.ones(1).cuda()\n"


def _write(root: Path, rel: str, text: str, age_s: float = 10) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    old = p.stat().st_mtime_ns - int(age_s * 1e9)
    os.utime(p, ns=(old, old))


def _labels(res) -> dict[str, str]:
    return {f"{rel}::{k}": v.label for rel, r in res.files.items() for k, v in r.tests.items()}


def test_unchanged_tree_is_served_from_the_snapshot(tmp_path: Path) -> None:
    root, cache = tmp_path / "r", tmp_path / "cache"
    for i in range(5):
        _write(root, f"tests/test_{i}.py", CPU)
    cold = run(root, None, cache)
    warm = run(root, None, cache)
    assert (cache / SNAPSHOT_NAME).exists()
    assert warm.cache_hits == 5 and _labels(warm) == _labels(cold)
    assert [(p.rel, p.reason) for p in warm.problems] == [(p.rel, p.reason) for p in cold.problems]


def _json_stdout(root: Path, cache: Path, capsys: pytest.CaptureFixture[str]) -> str:
    assert cli.main(["--root", str(root), "--format", "json", "--cache-dir", str(cache)]) == 0
    return capsys.readouterr().out


def test_a_warm_run_prints_the_json_report_the_snapshot_run_rendered(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    root, cache = tmp_path / "r", tmp_path / "cache"
    for i in range(3):
        _write(root, f"tests/test_{i}.py", CPU)
    cold = _json_stdout(root, cache, capsys)
    assert (cache / REPORT_NAME).exists()

    def not_again(files: object) -> str:
        raise AssertionError("the report of an unchanged tree was rendered again")

    monkeypatch.setattr(report, "json_report", not_again)
    assert _json_stdout(root, cache, capsys) == cold


def test_an_edit_renders_the_json_report_afresh(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root, cache = tmp_path / "r", tmp_path / "cache"
    _write(root, "tests/test_x.py", CPU)
    assert json.loads(_json_stdout(root, cache, capsys))["tests/test_x.py::test_a"]["label"] == "cpu"
    _write(root, "tests/test_x.py", GPU, age_s=5)
    assert json.loads(_json_stdout(root, cache, capsys))["tests/test_x.py::test_a"]["label"] == "gpu"
    (cache / REPORT_NAME).write_bytes(b"not a sealed report")  # (tampered with: rendered again, not trusted)
    assert json.loads(_json_stdout(root, cache, capsys))["tests/test_x.py::test_a"]["label"] == "gpu"


def test_a_stored_report_serves_only_the_snapshot_it_was_rendered_from(tmp_path: Path) -> None:
    # every snapshot written gets a new token: a snapshot rewritten under the same stats key (a data file changed
    # under it) never finds the report rendered from the one before
    root, cache = tmp_path / "r", tmp_path / "cache"
    _write(root, "tests/test_x.py", CPU)
    res = run(root, None, cache)
    assert res.snapshot
    first = report_text(cache, res, "json", lambda files: "first")
    assert first == "first" and report_text(cache, res, "json", lambda files: "other") == "first"
    again = run(root, None, cache / "elsewhere")
    assert again.snapshot and again.snapshot != res.snapshot
    assert report_text(cache, again, "json", lambda files: "second") == "second"
    assert report_text(None, res, "json", lambda files: "uncached") == "uncached"


def test_an_edit_invalidates_the_snapshot_and_only_its_file(tmp_path: Path) -> None:
    root, cache = tmp_path / "r", tmp_path / "cache"
    for i in range(3):
        _write(root, f"tests/test_{i}.py", CPU)
    run(root, None, cache)
    _write(root, "tests/test_1.py", GPU, age_s=5)
    again = run(root, None, cache)
    assert again.cache_hits == 2
    assert _labels(again)["tests/test_1.py::test_a"] == "gpu"
    _write(root, "tests/test_new.py", GPU, age_s=5)
    assert _labels(run(root, None, cache))["tests/test_new.py::test_a"] == "gpu"


def test_same_size_edit_with_a_new_mtime_is_seen(tmp_path: Path) -> None:
    root, cache = tmp_path / "r", tmp_path / "cache"
    _write(root, "tests/test_x.py", CPU.replace("ones", "zero"))
    run(root, None, cache)
    _write(root, "tests/test_x.py", CPU.replace("ones", "cuda"), age_s=3)
    assert (root / "tests/test_x.py").stat().st_size == len(CPU)
    res = run(root, None, cache)
    assert res.cache_hits == 0


def test_recently_modified_files_are_rehashed(tmp_path: Path) -> None:
    """A file written within the filesystem's timestamp granularity of the run is not trusted by stat."""
    root, cache = tmp_path / "r", tmp_path / "cache"
    _write(root, "tests/test_x.py", CPU, age_s=0)
    run(root, None, cache)
    assert not (cache / SNAPSHOT_NAME).exists()
    st = (root / "tests/test_x.py").stat()
    (root / "tests/test_x.py").write_text(CPU.replace("ones", "zero"))  # same size, maybe the same mtime
    os.utime(root / "tests/test_x.py", ns=(st.st_atime_ns, st.st_mtime_ns))
    assert run(root, None, cache).cache_hits == 0
