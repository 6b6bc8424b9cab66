"""Parallel analysis (tools/classify/parallel.py): the output does not depend on the worker count, on how
the files are cut into chunks, or on PYTHONHASHSEED; a dying worker costs time, not results."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

from tools.classify import parallel, report, runner
from tools.classify.runner import run
from tools.classify.sources import Sources

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory, load_script: Callable[[Path], ModuleType]) -> Path:
    root = tmp_path_factory.mktemp("gen") / "tree"
    load_script(REPO / "bench" / "bench_classify.py").generate(root, 160)
    return root


def _snapshot(root: Path, workers: int) -> tuple[str, list[tuple[str, str]]]:
    res = run(root, None, None, workers=workers)
    return report.json_report(res.files), [(p.rel, p.reason) for p in res.problems]


@pytest.mark.skipif(not parallel.fork_ok(), reason="parallel analysis needs fork")
@pytest.mark.parametrize("tree", ["generated", "project", "corpus"])
def test_identical_for_any_worker_count_and_chunking(tree: str, request: pytest.FixtureRequest,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = Path(__file__).resolve().parent / "fixtures" / "repo"
    root = {"project": REPO / "examples", "corpus": corpus}.get(tree) or request.getfixturevalue("generated")
    base = _snapshot(root, 1)
    assert base[0].count('"label"') > 10
    monkeypatch.setattr(parallel, "MAX_CHUNK", 1)
    monkeypatch.setattr(runner, "FRESH_PER_CHUNK", True)  # a fresh analyser for every file
    assert _snapshot(root, 1) == base
    monkeypatch.setattr(runner, "FRESH_PER_CHUNK", False)
    monkeypatch.setattr(parallel, "MAX_CHUNK", 3)
    for workers in (2, 3):
        assert _snapshot(root, workers) == base


@pytest.mark.skipif(not parallel.fork_ok(), reason="parallel analysis needs fork")
def test_cli_output_identical_across_jobs_and_hash_seeds(generated: Path) -> None:
    outs = set()
    for jobs, seed in (("1", "0"), ("2", "0"), ("2", "4242"), ("3", "7")):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(REPO), parallel.JOBS_ENV: jobs}
        proc = subprocess.run([sys.executable, "-m", "tools.classify", "--root", str(generated), "--no-cache",
                               "--format", "json"], check=True, env=env, cwd=REPO, capture_output=True)
        outs.add(proc.stdout)
    assert len(outs) == 1


@pytest.mark.skipif(not parallel.fork_ok(), reason="parallel analysis needs fork")
def test_a_dying_worker_costs_time_not_results(capsys: pytest.CaptureFixture[str]) -> None:
    parent = os.getpid()

    def task(chunk: list[int]) -> list[int]:
        if os.getpid() != parent:
            os._exit(3)  # every worker dies on its first chunk
        return [x * x for x in chunk]

    got = [x for chunk in parallel.map_ordered(task, list(range(50)), 2) for x in chunk]
    assert got == [x * x for x in range(50)]
    assert "worker process died" in capsys.readouterr().err


def test_worker_count(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(parallel.JOBS_ENV, raising=False)
    monkeypatch.setattr(parallel, "fork_ok", lambda: True)
    monkeypatch.setattr(parallel, "cpu_count", lambda: 8)
    assert parallel.resolve_workers(None, 10) == 1  # small work stays in-process
    assert parallel.resolve_workers(None, 100_000) == 8
    assert parallel.resolve_workers(3, 10) == 3  # explicit counts are honoured
    assert parallel.resolve_workers(5, 2) == 2
    monkeypatch.setenv(parallel.JOBS_ENV, "2")
    assert parallel.resolve_workers(None, 100_000) == 2
    monkeypatch.setattr(parallel, "fork_ok", lambda: False)
    assert parallel.resolve_workers(4, 100_000) == 1
    chunks = parallel.chunked(list(range(1000)), 2)
    assert [x for c in chunks for x in c] == list(range(1000))
    sizes = [len(c) for c in chunks]
    assert sizes[0] == 63 and sizes == sorted(sizes, reverse=True)  # large first, shrinking to the end
    assert sizes[-2] == parallel.MIN_CHUNK


def test_a_released_test_file_imported_later_is_parsed_again(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    # The runner lets go of each test file's syntax tree once it is classified. A later file importing it
    # (a lambda and a helper from its top level) must see the same code as if the tree had been kept.
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_base.py").write_text(
        "import torch\n\nto_gpu = lambda t: t.cuda()\n\n\ndef helper():\n    return torch.ones(1).to('cuda')\n\n\n"
        "def test_base():\n    assert to_gpu is not None\n")
    (tmp_path / "tests" / "test_user.py").write_text(
        "import torch\nfrom test_base import helper, to_gpu\n\n\ndef test_lambda():\n    to_gpu(torch.ones(1))\n\n\n"
        "def test_helper():\n    helper()\n\n\ndef test_cpu():\n    torch.ones(1)\n")
    released = _snapshot(tmp_path, 1)
    monkeypatch.setattr(Sources, "release", lambda self, rel: None)
    assert _snapshot(tmp_path, 1) == released
    labels = {k: v["label"] for k, v in json.loads(released[0]).items() if "::" in k}
    assert labels == {"tests/test_base.py::test_base": "cpu", "tests/test_user.py::test_cpu": "cpu",
                      "tests/test_user.py::test_helper": "gpu", "tests/test_user.py::test_lambda": "gpu"}
