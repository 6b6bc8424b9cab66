"""The classifier's output does not depend on how it is run (issue 12): the CLI's JSON is byte-identical for
`--jobs 1` and `--jobs 2`, and a test file analysed alone (`--paths file`, in a fresh process) gets exactly
the entries it gets in the whole-tree run. A label that depends on which other files were analysed first
(memo tables, budgets spent on earlier files) shows up here as a named file."""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tools.classify import parallel
from tools.classify.report import json_report
from tools.classify.runner import run

REPO = Path(__file__).resolve().parents[3]
CORPUS = REPO / "tests" / "tools" / "classify" / "fixtures" / "repo"
# Every test file of the corpus, each checked alone (a new corpus file is picked up by the listing test).
CORPUS_TEST_FILES = sorted(
    str(p.relative_to(CORPUS)) for p in CORPUS.rglob("*.py")
    if p.name.startswith("test_") or p.name.endswith("_test.py"))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dst = tmp_path_factory.mktemp("determinism") / "repo"
    shutil.copytree(CORPUS, dst)
    return dst


def _cli(root: Path, *args: str) -> bytes:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop(parallel.JOBS_ENV, None)
    proc = subprocess.run([sys.executable, "-m", "tools.classify", "--root", str(root), "--no-cache",
                           "--format", "json", *args], env=env, cwd=REPO, capture_output=True, check=False)
    assert proc.returncode in (0, 1), proc.stderr.decode()[-2000:]
    return proc.stdout


@pytest.fixture(scope="module")
def whole(corpus: Path) -> dict[str, object]:
    return json.loads(_cli(corpus, "--jobs", "1"))


def _alone(root: Path, rel: str) -> str:
    return json_report(run(root, [rel], None, workers=1).files)


def _in_fresh_process(root: Path, rel: str) -> str:
    """The file's report from a newly forked process: nothing memoised by another file's analysis leaks in."""
    with multiprocessing.get_context("fork").Pool(1) as pool:
        return pool.apply(_alone, (root, rel))


@pytest.mark.skipif(not parallel.fork_ok(), reason="parallel analysis needs fork")
def test_cli_json_identical_for_jobs_1_and_2(corpus: Path, whole: dict[str, object]) -> None:
    one = _cli(corpus, "--jobs", "1")
    assert sum(1 for k in whole if "::" in k) > 50  # the corpus was analysed, not skipped
    assert _cli(corpus, "--jobs", "2") == one


def test_every_corpus_test_file_is_checked_alone(whole: dict[str, object]) -> None:
    analysed = sorted(k for k in whole if "::" not in k)
    assert analysed == CORPUS_TEST_FILES


@pytest.mark.skipif(not parallel.fork_ok(), reason="a fresh process per file needs fork")
@pytest.mark.parametrize("rel", CORPUS_TEST_FILES)
def test_file_alone_equals_whole_tree(corpus: Path, whole: dict[str, object], rel: str) -> None:
    alone = json.loads(_in_fresh_process(corpus, rel))
    mine = {k for k in set(whole) | set(alone) if k == rel or k.startswith(rel + "::")}
    differ = sorted(k for k in mine if whole.get(k) != alone.get(k))
    assert not differ, f"{rel} alone differs from the whole-tree run in {len(differ)} entries: {differ[:5]}"
    assert rel in alone


def test_a_package_runs_before_its_modules_whichever_a_test_imports_first(tmp_path: Path) -> None:
    # Python runs pkg/__init__.py before pkg/engine.py. If the analysis ran engine.py first (test_a imports
    # it directly), engine.py's `from pkg import fast` ran the package while engine.py was half done, and the
    # package kept `step` unresolved for every later test: test_b's `.cuda()` was not seen after test_a.
    files = {
        "pkg/__init__.py": "from pkg.helpers import fast\nfrom pkg.engine import step\n",
        "pkg/helpers.py": "def fast():\n    return True\n",
        "pkg/engine.py": "from pkg import fast\n\n\ndef step(x):\n    return x.cuda() if fast() else x\n",
        "tests/test_a.py": "from pkg.engine import fast\n\n\ndef test_flag():\n    assert fast()\n",
        "tests/test_b.py": "import torch\nfrom pkg import step\n\n\ndef test_step():\n    step(torch.zeros(1))\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    together = run(tmp_path, ["tests/test_a.py", "tests/test_b.py"], None, workers=1).files
    alone = run(tmp_path, ["tests/test_b.py"], None, workers=1).files
    assert together["tests/test_b.py"].tests["test_step"].label == "gpu"
    assert json_report({"tests/test_b.py": together["tests/test_b.py"]}) == json_report(alone)
