"""What gets analysed: [tool.torch_classify] paths/exclude, pytest's norecursedirs, --paths, torch flag."""

from __future__ import annotations

from pathlib import Path

import pytest

from tools.classify.cli import main
from tools.classify.runner import run
from tools.classify.scope import PYTEST_NORECURSE_DEFAULT, load_scope
from tools.contract import classification as cf

TEST = "import torch\n\ndef test_a():\n    torch.ones(1)\n"


def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


SUITE = {
    "tests/a/test_a.py": TEST,
    "tests/tools/test_tool.py": TEST,
    "tests/fixtures/repo/tests/test_fx.py": TEST,
    "tests/build/test_built.py": TEST,
    "tests/keep/test_keep.py": TEST,
    "other/test_other.py": TEST,
}


def test_pyproject_paths_and_exclude(tmp_path: Path) -> None:
    root = _tree(tmp_path, {**SUITE, "pyproject.toml": (
        '[tool.torch_classify]\npaths = ["tests"]\nexclude = ["tests/tools", "tests/fixtures/"]\n')})
    got = sorted(run(root).files)
    # pytest's default norecursedirs (no pytest config) skips build/
    assert got == ["tests/a/test_a.py", "tests/keep/test_keep.py"]


def test_cli_paths_override_configured_paths(tmp_path: Path) -> None:
    root = _tree(tmp_path, {**SUITE, "pyproject.toml": '[tool.torch_classify]\npaths = ["tests"]\n'})
    assert sorted(run(root, ["other"]).files) == ["other/test_other.py"]
    assert main(["--root", str(root), "--update", "--no-cache", "--paths", "other"]) == 0
    assert list(cf.load(root / "torch_classification.json")["files"]) == ["other/test_other.py"]


@pytest.mark.parametrize("name,text", [
    ("pyproject.toml", '[tool.pytest.ini_options]\nnorecursedirs = ["fix*", "keep"]\n'),
    ("pyproject.toml", '[tool.pytest]\nnorecursedirs = ["fix*", "keep"]\n'),
    ("pytest.ini", "[pytest]\nnorecursedirs = fix* keep\n"),
    ("tox.ini", "[pytest]\nnorecursedirs =\n    fix*\n    keep\n"),
    ("setup.cfg", "[tool:pytest]\nnorecursedirs = fix* keep\n"),
])
def test_pytest_norecursedirs(tmp_path: Path, name: str, text: str) -> None:
    root = _tree(tmp_path, {**SUITE, name: text})
    assert load_scope(root).norecursedirs == ("fix*", "keep")
    got = sorted(run(root).files)
    # configured patterns replace pytest's defaults: build/ is collected again
    assert got == ["other/test_other.py", "tests/a/test_a.py", "tests/build/test_built.py",
                   "tests/tools/test_tool.py"]


HELPER_ON_PYTHONPATH = {
    "pkg/__init__.py": "",
    "pkg/tests/__init__.py": "",
    "pkg/tests/device_config.py": 'import torch\n\nDEVICES = ["cuda"]\n',
    "pkg/tests/test_uses_config.py": (
        "import pytest\nimport torch\nfrom device_config import DEVICES\n\n\n"
        "@pytest.mark.parametrize(\"device\", DEVICES)\ndef test_ones(device):\n    torch.ones(1, device=device)\n"),
}


@pytest.mark.parametrize("name,text", [
    ("pyproject.toml", '[tool.pytest.ini_options]\npythonpath = ["pkg/tests"]\n'),
    ("pytest.ini", "[pytest]\npythonpath = pkg/tests\n"),
    ("setup.cfg", "[tool:pytest]\npythonpath = ./pkg/tests/\n"),
])
def test_pytest_pythonpath_makes_modules_importable_by_their_names(tmp_path: Path, name: str, text: str) -> None:
    """pytest's `pythonpath` (torchsparsegradutils: `from test_config import DEVICES` in a test package):
    without it the import is unresolved and the device unknown."""
    root = _tree(tmp_path, {**HELPER_ON_PYTHONPATH, name: text})
    assert load_scope(root).pythonpath == ("pkg/tests",)
    tests = run(root).files["pkg/tests/test_uses_config.py"].tests
    assert {k: v.label for k, v in tests.items()} == {"test_ones[cuda]": "gpu"}


def test_without_pytest_pythonpath_the_helper_is_not_found(tmp_path: Path) -> None:
    root = _tree(tmp_path, HELPER_ON_PYTHONPATH)
    assert load_scope(root).pythonpath == ()
    tests = run(root).files["pkg/tests/test_uses_config.py"].tests
    assert {v.label for v in tests.values()} == {"unknown"}


def test_norecursedirs_does_not_apply_to_an_explicit_path(tmp_path: Path) -> None:
    root = _tree(tmp_path, {**SUITE, "pytest.ini": "[pytest]\nnorecursedirs = fixtures\n"})
    assert sorted(run(root, ["tests/fixtures/repo"]).files) == ["tests/fixtures/repo/tests/test_fx.py"]
    assert "tests/fixtures/repo/tests/test_fx.py" not in run(root, ["tests"]).files


def test_pytest_ini_wins_over_pyproject(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"pytest.ini": "[pytest]\n", "pyproject.toml": (
        '[tool.pytest.ini_options]\nnorecursedirs = ["x"]\n')})
    assert load_scope(root).norecursedirs == PYTEST_NORECURSE_DEFAULT


def test_bad_config_is_reported_and_the_run_continues(tmp_path: Path) -> None:
    root = _tree(tmp_path, {**SUITE, "pyproject.toml": "[tool.torch_classify\npaths = 3\n"})
    res = run(root)
    assert "tests/a/test_a.py" in res.files
    assert any(p.rel == "pyproject.toml" for p in res.problems)


def test_lazy_torch_import_in_a_helper_is_not_a_torch_test(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/helpers.py": "import json\n\ndef gpu_only():\n    import torch\n    return torch.cuda\n",
        "tests/test_pure.py": "from pkg.helpers import gpu_only\n\ndef test_a():\n    assert gpu_only\n",
        "tests/test_inline.py": "def test_b():\n    import torch\n    torch.ones(1)\n",
    })
    res = run(root)
    assert res.files["tests/test_pure.py"].torch is False
    assert res.files["tests/test_inline.py"].torch is True


def test_repository_scope_matches_the_bazel_suites() -> None:
    root = Path(__file__).resolve().parents[3]
    scope = load_scope(root)
    assert scope.selects("examples/torch_cpu/test_perf_budgets.py")
    assert not scope.selects("tests/tools/classify/test_classify_scope.py")
    assert not scope.selects("tests/tools/classify/fixtures/repo/tests/unit/test_pure.py")


OWN_NAMING = {
    "tests/test_naming.py": (
        "import unittest\n\nimport pytest\nimport torch\n\n\n"
        "class CallbackTest:\n    def test_cpu(self):\n        torch.ones(1)\n\n"
        "    @pytest.mark.skipif(not torch.cuda.is_available(), reason=\"CUDA\")\n"
        "    def test_on_gpu(self):\n        torch.ones(1).cuda()\n\n"
        "    def check_shape(self):\n        torch.ones(1)\n\n\n"
        "class TestDefault:\n    def test_x(self):\n        pass\n\n\n"
        "class UnitTest(unittest.TestCase):\n    def test_unit(self):\n        torch.ones(1)\n\n"
        "    def check_unit(self):\n        pass\n\n\n"
        "def check_function():\n    torch.ones(1)\n\n\n"
        "def test_function():\n    torch.ones(1)\n"),
}


@pytest.mark.parametrize("name,text", [
    ("pyproject.toml",
     '[tool.pytest.ini_options]\npython_classes = ["*Test"]\npython_functions = ["test", "check_"]\n'),
    ("pytest.ini", "[pytest]\npython_classes = *Test\npython_functions = test check_\n"),
    ("tox.ini", "[pytest]\npython_classes = *Test\npython_functions = test check_\n"),
])
def test_pytest_python_classes_and_functions_say_what_is_a_test(tmp_path: Path, name: str, text: str) -> None:
    """pytest's `python_classes`/`python_functions` (poutyne: `python_classes = ["*Test"]`, its classes named
    `CallbackListTest`): a prefix, or an fnmatch pattern with a wildcard. Without them none of poutyne's 601 tests
    was found (every file `cpu`, its 21 GPU tests with them). unittest classes keep unittest's `test` prefix."""
    root = _tree(tmp_path, {**OWN_NAMING, name: text})
    scope = load_scope(root)
    assert (scope.test_names.classes, scope.test_names.functions) == (("*Test",), ("test", "check_"))
    tests = run(root).files["tests/test_naming.py"].tests
    assert {k: v.label for k, v in tests.items()} == {
        "CallbackTest::test_cpu": "cpu", "CallbackTest::test_on_gpu": "gpu", "CallbackTest::check_shape": "cpu",
        "UnitTest::test_unit": "cpu", "check_function": "cpu", "test_function": "cpu"}


def test_default_test_naming(tmp_path: Path) -> None:
    root = _tree(tmp_path, OWN_NAMING)
    assert load_scope(root).test_names.classes == ("Test",)
    tests = run(root).files["tests/test_naming.py"].tests
    assert set(tests) == {"TestDefault::test_x", "UnitTest::test_unit", "test_function"}


def test_test_naming_is_part_of_the_cache_key(tmp_path: Path) -> None:
    """A result cached under one naming is not replayed under another (the same files give other tests)."""
    root = _tree(tmp_path / "repo", OWN_NAMING)
    cache = tmp_path / "cache"
    assert "CallbackTest::test_cpu" not in run(root, cache_dir=cache).files["tests/test_naming.py"].tests
    (root / "pytest.ini").write_text("[pytest]\npython_classes = *Test\n")
    assert "CallbackTest::test_cpu" in run(root, cache_dir=cache).files["tests/test_naming.py"].tests
