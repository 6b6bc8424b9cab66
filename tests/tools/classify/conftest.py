"""Fixtures shared by the classifier's tests."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tools.classify.analyzer import Analyzer
from tools.classify.evidence import Verdict
from tools.classify.modules import walk_python_files
from tools.classify.runner import run

CORPUS = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A private copy of the fixture corpus (fixtures/repo) per test module: classification must not depend on,
    nor leave anything in, the checked-in tree."""
    dst = tmp_path_factory.mktemp("corpus") / "repo"
    shutil.copytree(CORPUS / "repo", dst)
    return dst


@pytest.fixture
def analyses_per_test(monkeypatch: pytest.MonkeyPatch) -> Callable[[str], dict[str, int]]:
    """How many times each test function of a corpus file (fixtures/repo) is analysed: once per case, joined group
    (Analyzer.joined_cases settles many cases by one analysis) or world."""
    counts: dict[str, int] = {}
    original = Analyzer.analyse_case

    def counted(self: Analyzer, rel: str, item, *args, **kwargs):  # type: ignore[no-untyped-def]
        counts[item.func.name] = counts.get(item.func.name, 0) + 1
        return original(self, rel, item, *args, **kwargs)

    monkeypatch.setattr(Analyzer, "analyse_case", counted)

    def of(rel: str) -> dict[str, int]:
        counts.clear()
        root = CORPUS / "repo"
        got = Analyzer(root, walk_python_files(root, [])).classify_file(rel)
        assert got.error is None
        return dict(counts)
    return of


def _write_tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))
    return root


@pytest.fixture
def write_tree() -> Callable[[Path, dict[str, str]], Path]:
    """Write a tree of files under a root (`write_tree(root, {"pkg/mod.py": text})`, each text dedented): the root."""
    return _write_tree


@pytest.fixture
def repo_with_test(tmp_path: Path) -> Callable[[str], Path]:
    """Make a repository `<tmp_path>/repo` holding one test file, test_mine.py, with the given text (for tests of
    installed packages the repository uses: their site directory goes beside it)."""
    def make(text: str) -> Path:
        root = tmp_path / "repo"
        root.mkdir()
        (root / "test_mine.py").write_text(text)
        return root
    return make


def _collect(root: Path, *paths: str) -> tuple[set[str], str]:
    """`pytest --collect-only -q <paths>` in `root`: (the node ids it prints, its whole output)."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "--rootdir", ".",
         *paths], cwd=root, capture_output=True, text=True, env=env, timeout=120, check=False).stdout
    return node_ids(out), out


@pytest.fixture(scope="module")
def collect_only(corpus: Path) -> Callable[..., tuple[set[str], str]]:
    """`pytest --collect-only -q <paths>` in the corpus copy: (the node ids it prints, its whole output)."""
    return lambda *paths: _collect(corpus, *paths)


@pytest.fixture
def collect_in() -> Callable[..., tuple[set[str], str]]:
    """`pytest --collect-only -q <paths>` in a tree of the test's own (`collect_in(root, *paths)`)."""
    return _collect


@dataclass(frozen=True)
class IdsVsPytest:
    """The classifier's keys for some corpus paths beside `pytest --collect-only -q`'s ids for them."""

    collected: set[str]
    output: str  # pytest's whole output (for assertion messages)
    tests: dict[str, Verdict]  # "file::key" -> the classifier's verdict
    function_only: set[str]  # the functions of collected ids that have no exact key (function-level keys)
    not_collected: set[str]  # the classifier's keys pytest does not collect


@pytest.fixture(scope="module")
def ids_vs_pytest(corpus: Path, collect_only: Callable[..., tuple[set[str], str]]) -> Callable[[str], IdsVsPytest]:
    """Classify corpus paths and set the keys beside pytest's node ids for them."""
    def compare(path: str) -> IdsVsPytest:
        collected, out = collect_only(path)
        result = run(corpus, paths=[path], cache_dir=None)
        tests = {f"{rel}::{k}": v for rel, r in result.files.items() for k, v in r.tests.items()}
        return IdsVsPytest(collected, out, tests, {c.split("[", 1)[0] for c in collected if c not in tests},
                           {k for k in tests if k not in collected})
    return compare


def node_ids(out: str) -> set[str]:
    """The node ids `pytest --collect-only -q` prints: a path, then `::`. Error lines (`ERROR x.py - ...`, `In
    x.py::test: ...`, spelled out in full when CI is set) have a space before their first `::`."""
    return {line.strip() for line in out.splitlines() if "::" in line and " " not in line.split("::", 1)[0]}
