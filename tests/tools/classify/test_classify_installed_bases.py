"""Test bases from installed packages (docs/classification.md, "Round 12: test bases from installed packages"):
a repository test class deriving from a class of an installed package gets the inherited tests' exact ids
(equal to `pytest --collect-only -q`'s) and labels; the installed file is part of the result key; without the
package the class-level key stays."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from tools.classify.cache import result_key, tool_version
from tools.classify.installed import LIBRARY_MAX_BYTES, InstalledIndex, absolute_name, search_dirs
from tools.classify.modules import RepoIndex
from tools.classify.runner import run
from tools.classify.sources import Sources

BASE = textwrap.dedent('''
    import pytest
    import torch

    from .helpers import HelperBase


    class BaseTests(HelperBase):
        def make(self):
            return torch.zeros(2)

        def test_cpu_sum(self):
            assert self.make().sum() == 0

        @pytest.mark.parametrize("n", [1, 2, "three"])
        def test_param(self, n):
            assert self.helper(n)

        def test_on_cuda(self):
            assert self.make().cuda().sum() == 0
    ''')
HELPERS = textwrap.dedent('''
    class HelperBase:
        def helper(self, n):
            return n

        def test_from_helper(self):
            assert self.helper(1)
    ''')
REPO_TEST = textwrap.dedent('''
    from basepkg.testing import BaseTests


    class TestMine(BaseTests):
        def test_own(self):
            assert self.make() is not None
    ''')


def make_installed(site: Path) -> None:
    pkg = site / "basepkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "testing.py").write_text(BASE)
    (pkg / "helpers.py").write_text(HELPERS)


@pytest.fixture
def repo(repo_with_test: Callable[[str], Path]) -> Path:
    return repo_with_test(REPO_TEST)


def classify(root: Path) -> dict[str, tuple[str, tuple[str, ...]]]:
    tests = run(root, paths=["test_mine.py"], cache_dir=None, workers=1).files["test_mine.py"].tests
    return {f"test_mine.py::{k}": (v.label, v.reasons) for k, v in tests.items()}


def test_inherited_tests_of_an_installed_base_have_pytest_ids(repo: Path, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    make_installed(site)
    monkeypatch.syspath_prepend(str(site))
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": str(site)}
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                          "--rootdir", ".", "test_mine.py"], cwd=repo, capture_output=True, text=True, env=env,
                         timeout=120, check=False).stdout
    collected = {line.strip() for line in out.splitlines() if "::" in line}
    got = classify(repo)
    assert set(got) == collected, out
    assert len(collected) == 7  # own, cpu_sum, param x3, on_cuda, from_helper (a base of the base)
    assert got["test_mine.py::TestMine::test_on_cuda"][0] == "gpu"
    assert {k: v[0] for k, v in got.items() if "on_cuda" not in k} == dict.fromkeys(
        collected - {"test_mine.py::TestMine::test_on_cuda"}, "cpu")


def test_without_the_package_the_class_level_key_stays(repo: Path) -> None:
    got = classify(repo)
    assert set(got) == {"test_mine.py::TestMine", "test_mine.py::TestMine::test_own"}


def test_a_module_without_tests_stays_external(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    make_installed(site)
    # no `def test*`, no class named *Test*: not read (its tests, made by code, are not what the analysis lists)
    # in a package too large to read as a library (installed.LIBRARY_MAX_BYTES)
    (site / "basepkg" / "testing.py").write_text('BaseTests = type("Base", (), {"test_x": lambda self: None})\n')
    (site / "basepkg" / "tables.py").write_text("# " + "x" * LIBRARY_MAX_BYTES + "\n")
    monkeypatch.syspath_prepend(str(site))
    assert set(classify(repo)) == {"test_mine.py::TestMine", "test_mine.py::TestMine::test_own"}


def key_of(repo: Path, site: Path) -> str:
    src = Sources(repo, RepoIndex(["test_mine.py"]), installed=InstalledIndex(search_dirs(repo, [str(site)])))
    deps = src.file_deps("test_mine.py")
    digests = {d: src.installed.digest(d) for d in deps}
    return result_key(tool_version(), "test_mine.py", deps, digests)


def test_the_installed_files_are_part_of_the_result_key(repo: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    make_installed(site)
    src = Sources(repo, RepoIndex(["test_mine.py"]), installed=InstalledIndex(search_dirs(repo, [str(site)])))
    # (the package's __init__, which Python runs first, too: basepkg is a small library, installed.py)
    assert src.file_deps("test_mine.py") == ["<installed>/basepkg/__init__.py", "<installed>/basepkg/helpers.py",
                                             "<installed>/basepkg/testing.py", "test_mine.py"]
    before = key_of(repo, site)
    assert key_of(repo, site) == before
    (site / "basepkg" / "helpers.py").write_text(HELPERS + "\n# 2.0\n")
    assert key_of(repo, site) != before


def test_a_cached_result_is_not_reused_when_the_installed_file_changes(repo: Path, tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    make_installed(site)
    monkeypatch.syspath_prepend(str(site))
    cache = tmp_path / "cache"
    first = run(repo, paths=["test_mine.py"], cache_dir=cache, workers=1).files["test_mine.py"].tests
    assert first["TestMine::test_on_cuda"].label == "gpu"
    (site / "basepkg" / "testing.py").write_text(BASE.replace(".cuda()", ".cpu()"))
    second = run(repo, paths=["test_mine.py"], cache_dir=cache, workers=1)
    assert second.cache_hits == 0
    assert second.files["test_mine.py"].tests["TestMine::test_on_cuda"].label == "cpu"


def test_search_dirs_leave_out_the_root_and_the_standard_library(tmp_path: Path) -> None:
    inside = tmp_path / "repo" / "lib"
    inside.mkdir(parents=True)
    import sysconfig
    stdlib = sysconfig.get_paths()["stdlib"]
    site = sysconfig.get_paths()["purelib"]  # (site-packages lies inside lib/python3.X, or a venv's)
    assert search_dirs(tmp_path / "repo", [str(inside), stdlib, f"{stdlib}/lib-dynload", "", "relative",
                                           str(tmp_path), site]) == (os.path.realpath(tmp_path),
                                                                     os.path.realpath(site))


def test_relative_imports_of_installed_modules_are_absolute_names() -> None:
    assert absolute_name("<installed>/pkg/sub/mod.py", 1, "helpers") == "pkg.sub.helpers"
    assert absolute_name("<installed>/pkg/sub/mod.py", 2, "") == "pkg"
    assert absolute_name("<installed>/pkg/__init__.py", 1, "x") == "pkg.x"


def test_an_installed_module_that_does_not_parse_keeps_the_class_level_key(repo: Path, tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    make_installed(site)
    (site / "basepkg" / "testing.py").write_text("class BaseTests:\n    def test_x(self:\n")
    monkeypatch.syspath_prepend(str(site))
    result = run(repo, paths=["test_mine.py"], cache_dir=None, workers=1)
    assert set(result.files["test_mine.py"].tests) == {"TestMine", "TestMine::test_own"}
    assert any(p.rel == "<installed>/basepkg/testing.py" and "syntax error at line 2" in p.reason
               for p in result.problems), result.problems
