"""Round 10: parametrize values read from in-repo data files at import time (datafiles.py). The corpus file
tests/tools/classify/fixtures/repo/tests/round10/test_data_files.py carries the idioms with expected labels."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tools.classify.datafiles import MAX_DATA_BYTES, load, read_data
from tools.classify.runner import run
from tools.classify.values import UNRESOLVED, Const, DictV, Seq

CORPUS = Path(__file__).resolve().parent / "fixtures"
FILE = "tests/round10/test_data_files.py"

MODULE = '''import os
from pathlib import Path

import pytest
import torch
import yaml

with open(os.path.join(os.path.dirname(__file__), {path!r})) as f:
    CASES = yaml.safe_load(f)


@pytest.mark.parametrize("device", [c["device"] for c in CASES], ids=[c["id"] for c in CASES])
def test_cases(device):
    torch.ones(1, device=device)
'''
CASES = '- {id: on_cpu, device: cpu}\n- {id: on_gpu, device: cuda}\n'


def _repo(tmp_path: Path, path: str = "cases.yaml", cases: str | None = CASES) -> Path:
    root = tmp_path / "repo"
    (root / "tests").mkdir(parents=True)
    (root / "tests" / "test_data.py").write_text(MODULE.format(path=path))
    if cases is not None:
        (root / "tests" / "cases.yaml").write_text(cases)
    return root


def _labels(root: Path, cache_dir: Path | None = None) -> dict[str, str]:
    result = run(root, cache_dir=cache_dir, workers=1)
    return {k: v.label for r in result.files.values() for k, v in r.tests.items()}


def test_ids_match_pytest_collect_only(tmp_path: Path) -> None:
    corpus = tmp_path / "repo"
    shutil.copytree(CORPUS / "repo", corpus)
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "--rootdir", ".", FILE],
        cwd=corpus, capture_output=True, text=True, env=env, timeout=120, check=False).stdout
    collected = {line.strip() for line in out.splitlines() if "::" in line}
    assert f"{FILE}::test_yaml_cases[1.5r_cpu]" in collected, out
    result = run(corpus, paths=[FILE], cache_dir=None)
    keys = {f"{rel}::{k}" for rel, r in result.files.items() for k in r.tests}
    # every id is pytest's, but the unsafe loader's (never evaluated: one function-level key)
    assert keys - collected == {f"{FILE}::test_unsafe_loader"}
    assert len(collected - keys) == 3  # test_unsafe_loader's three cases
    labels = {k: v.label for r in result.files.values() for k, v in r.tests.items()}
    assert labels["test_yaml_cases[big_cuda]"] == "gpu" and labels["test_yaml_cases[small_cpu]"] == "cpu"
    assert labels["test_safe_loader_devices[cuda]"] == "gpu"


def test_read_data_parses_into_values() -> None:
    assert load("yaml", b"- {id: a, n: 1.5, flag: true, none: null}\n") == Seq((DictV((
        (Const("id"), Const("a")), (Const("n"), Const(1.5)), (Const("flag"), Const(True)),
        (Const("none"), Const(None)))),), "list")
    assert load("yaml", b"on: off\n") == DictV(((Const(True), Const(False)),))  # YAML 1.1, as pyyaml reads it
    assert load("json", '{"b": [1, 2], "a": "x"}') == DictV((
        (Const("b"), Seq((Const(1), Const(2)), "list")), (Const("a"), Const("x"))))  # insertion order kept
    assert load("yaml", b"when: 2024-01-01\n") == DictV(((Const("when"), UNRESOLVED),))  # a date: not modelled


def test_bad_data_is_unknown_never_an_error() -> None:
    assert load("yaml", b"- [unclosed\n") is UNRESOLVED
    assert load("json", "{'single': quotes}") is UNRESOLVED
    assert load("yaml", b"!!python/object/apply:os.system ['true']\n") is UNRESOLVED  # the safe loader refuses
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
        for p, c in zip("abcdefg", "bcdefgh", strict=True))
    assert load("yaml", bomb.encode()) is UNRESOLVED  # ten billion leaves through aliases: past the value bound
    assert load("yaml", b"&a [*a]\n") is UNRESOLVED  # a list that contains itself
    assert load("json", "9" * 5000) is UNRESOLVED  # past Python's int digit limit


def test_a_path_out_of_the_root_is_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside.yaml"
    outside.write_text(CASES)
    root = _repo(tmp_path, path="../../outside.yaml", cases=None)
    assert _labels(root) == {"test_cases": "unknown"}  # never read: one function-level key
    (root / "tests" / "cases.yaml").symlink_to(outside)
    root2 = tmp_path / "repo2"
    shutil.copytree(root, root2, symlinks=True)
    (root2 / "tests" / "test_data.py").write_text(MODULE.format(path="cases.yaml"))
    assert read_data(root2, "tests/cases.yaml") == (None, "outside the analysed root")
    assert _labels(root2) == {"test_cases": "unknown"}


def test_missing_huge_and_malformed_files_are_unknown(tmp_path: Path) -> None:
    root = _repo(tmp_path, cases=None)
    assert _labels(root) == {"test_cases": "unknown"}
    (root / "tests" / "cases.yaml").write_text("- {id: on_cpu, device: cpu\n")
    assert _labels(root) == {"test_cases": "unknown"}
    (root / "tests" / "cases.yaml").write_text(CASES + "#" * MAX_DATA_BYTES)
    assert read_data(root, "tests/cases.yaml")[0] is None
    assert _labels(root) == {"test_cases": "unknown"}
    (root / "tests" / "cases.yaml").unlink()
    os.mkfifo(root / "tests" / "cases.yaml")  # never opened for blocking reads
    assert _labels(root) == {"test_cases": "unknown"}


def test_a_changed_or_deleted_data_file_changes_the_cached_result(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    cache = tmp_path / "cache"
    first = _labels(root, cache)
    assert first == {"test_cases[on_cpu]": "cpu", "test_cases[on_gpu]": "gpu"}
    assert run(root, cache_dir=cache, workers=1).cache_hits == 1  # the result is reused while nothing changed
    (root / "tests" / "cases.yaml").write_text(CASES.replace("on_gpu", "on_cuda") + "- {id: more, device: cpu}\n")
    again = run(root, cache_dir=cache, workers=1)
    assert again.cache_hits == 0
    assert {k: v.label for k, v in again.files["tests/test_data.py"].tests.items()} == {
        "test_cases[on_cpu]": "cpu", "test_cases[on_cuda]": "gpu", "test_cases[more]": "cpu"}
    (root / "tests" / "cases.yaml").unlink()
    assert _labels(root, cache) == {"test_cases": "unknown"}
    (root / "tests" / "cases.yaml").write_text(CASES)
    assert _labels(root, cache) == first


def test_a_data_file_read_by_a_shared_helper_is_a_dependency_of_every_importer(tmp_path: Path) -> None:
    """The helper's top level runs once per process: the second test file reuses it, and must still list the
    data file it read (recorded per module, not per analysis)."""
    root = tmp_path / "repo"
    (root / "tests").mkdir(parents=True)
    (root / "tests" / "cases.yaml").write_text(CASES)
    (root / "tests" / "helper.py").write_text(
        "from pathlib import Path\n\nimport yaml\n\n"
        "CASES = yaml.safe_load((Path(__file__).parent / 'cases.yaml').read_text())\n")
    body = ("import pytest\nimport torch\n\nfrom helper import CASES\n\n\n"
            "@pytest.mark.parametrize('device', [c['device'] for c in CASES], ids=[c['id'] for c in CASES])\n"
            "def test_{n}(device):\n    torch.ones(1, device=device)\n")
    for n in ("a", "b"):
        (root / "tests" / f"test_{n}.py").write_text(body.format(n=n))
    (root / "tests" / "conftest.py").write_text("")
    cache = tmp_path / "cache"
    got = run(root, cache_dir=cache, workers=1)
    assert {k for r in got.files.values() for k in r.tests} == {
        "test_a[on_cpu]", "test_a[on_gpu]", "test_b[on_cpu]", "test_b[on_gpu]"}
    assert all(r.data == [("tests/cases.yaml", r.data[0][1])] for r in got.files.values())
    (root / "tests" / "cases.yaml").write_text(CASES.replace("on_gpu", "on_cuda"))
    again = run(root, cache_dir=cache, workers=1)
    assert again.cache_hits == 0
    assert {k for r in again.files.values() for k in r.tests} == {
        "test_a[on_cpu]", "test_a[on_cuda]", "test_b[on_cpu]", "test_b[on_cuda]"}


def test_decorators_see_names_rebound_later_as_they_were_and_mutated_ones_as_they_end(tmp_path: Path) -> None:
    """Checked with pytest 9 --collect-only: `test_x[a-cpu]`, `test_x[a-meta]` (the list object the decorator
    holds grew; the name bound again later does not reach it)."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / "test_mut.py").write_text(
        "import pytest\n\nDEVICES = ['cpu']\nNAMES = ['a']\n\n\n"
        "@pytest.mark.parametrize('d', DEVICES)\n@pytest.mark.parametrize('n', NAMES)\n"
        "def test_x(d, n):\n    pass\n\n\nDEVICES.append('meta')\nNAMES = ['b']\n")
    assert set(_labels(root)) == {"test_x[a-cpu]", "test_x[a-meta]"}


def test_without_pyyaml_yaml_values_are_unknown(monkeypatch) -> None:  # noqa: ANN001 - pytest's fixture
    """A consumer's environment may lack pyyaml: classify still runs, the YAML file's values are unknown."""
    monkeypatch.setitem(sys.modules, "yaml", None)  # (`import yaml` raises ImportError)
    assert load("yaml", b"- a\n") is UNRESOLVED
    assert load("json", "[1]") == Seq((Const(1),), "list")
