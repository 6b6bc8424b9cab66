"""bench/accuracy_real_suites.py's scoring rules (issue 12): how the classifier's keys are matched against
`pytest --collect-only` node ids, and the rates reported against the issue's targets."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def acc(load_script: Callable[[Path], ModuleType]) -> ModuleType:
    return load_script(REPO / "bench" / "accuracy_real_suites.py")


def _keys(*ids: str) -> dict[str, dict[str, object]]:
    return {i: {"label": "cpu"} for i in ids}


def test_exact_function_level_class_level_and_missing_ids_are_told_apart(acc: ModuleType) -> None:
    collected = ["t.py::test_a[x y]", "t.py::test_a[2]", "t.py::test_b[cuda]", "t.py::C::test_gen_0", "t.py::test_c"]
    cls = _keys("t.py::test_a[x y]", "t.py::test_a[two]", "t.py::test_b", "t.py::C")
    m = acc.match_ids(collected, cls)
    assert (m.collected, m.exact, m.function, m.cls) == (5, 1, 1, 1)
    assert m.function_ids == ["t.py::test_b[cuda]"]
    # test_a[2] has sibling exact keys but no function-level key: not covered, and the spelled-differently key
    # is reported as guessed
    assert m.missing == ["t.py::test_a[2]", "t.py::test_c"]
    assert m.guessed == ["t.py::test_a[two]"]


def test_guessed_ids_only_count_in_files_pytest_collected(acc: ModuleType) -> None:
    m = acc.match_ids(["a.py::test_x"], _keys("a.py::test_x", "b.py::test_y[0]"))
    assert m.guessed == [] and m.exact == 1


def test_rates_use_the_issue_denominators(acc: ModuleType) -> None:
    s = acc.Score()
    for truth, pred, n in (("cpu", "cpu", 95), ("cpu", "gpu", 3), ("cpu", "unknown", 2), ("gpu", "gpu", 199),
                           ("gpu", "cpu", 1)):
        for _ in range(n):
            s.add(truth, pred)
    r = acc.rates(s)
    assert r["false_cpu"] == pytest.approx(1 / 200)  # over truly-GPU tests
    assert r["cpu_routing"] == pytest.approx(95 / 100)  # over truly-CPU tests
    assert r["unknown"] == pytest.approx(2 / 300)  # over all scored tests
    assert acc.verdict("false_cpu", r["false_cpu"]).endswith("(ok: <= 0.5%)")
    assert "MISSED" in acc.verdict("cpu_routing", 0.949)
    assert acc.rates(acc.Score())["false_cpu"] is None  # no GPU test: no rate, not 0 %


def test_a_failing_skip_for_lack_of_cuda_is_a_gpu_test(acc: ModuleType, tmp_path: Path) -> None:
    """torchsde's `pytest.skip(msg="CUDA not available.")` raises TypeError on pytest 8: the test still asked
    for a GPU. Any other failure stays `cpu`."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text(
        "def test_a(device):\n"
        "    if device == gpu and not torch.cuda.is_available():\n"
        "        pytest.skip(msg=\"CUDA not available.\")\n"
        "    assert x\n")
    skip_failed = {"outcome": "failed", "xfail": False, "when": "call",
                   "text": "E   TypeError: skip() got an unexpected keyword argument 'msg'\n\n"
                           "tests/test_x.py:3: TypeError"}
    assert acc.label_of([skip_failed], tmp_path).label == "gpu"
    other = {**skip_failed, "text": "E   AssertionError\n\ntests/test_x.py:4: AssertionError"}
    assert acc.label_of([other], tmp_path).label == "cpu"


def test_a_skip_for_no_device_is_a_gpu_test(acc: ModuleType, tmp_path: Path) -> None:
    """torchani's `skipIf(not torch.cuda.is_available(), "There is no device to run this test")` names no GPU;
    a CPU is always there, so the device it lacks is an accelerator. A missing package stays excluded."""
    def skip(reason: str) -> dict[str, object]:
        return {"outcome": "skipped", "xfail": False, "when": "setup", "text": f"{reason} @tests/test_x.py:3"}

    assert acc.label_of([skip("Skipped: There is no device to run this test")], tmp_path).label == "gpu"
    assert acc.label_of([skip("Skipped: Fast Cell List is not installed")], tmp_path).label == "excluded"
    assert acc.label_of([skip("Skipped: Cell used in this test is too small")], tmp_path).label == "cpu"


def test_collected_ids_do_not_depend_on_the_suites_addopts(acc: ModuleType, tmp_path: Path) -> None:
    """sbi's `addopts = "-ra -q"` plus a second `-q` makes `--collect-only` print per-file counts, no ids."""
    src = tmp_path / "src"
    (src / "tests").mkdir(parents=True)
    (src / "pyproject.toml").write_text('[tool.pytest.ini_options]\naddopts = "-ra -q"\n')
    (src / "tests" / "test_x.py").write_text("def test_a():\n    pass\n\n\ndef test_b():\n    pass\n")
    out = acc.collect_ids(tmp_path, acc.Project("p", "1", "tests"), Path(sys.executable), src)
    assert out.read_text().splitlines() == ["tests/test_x.py::test_a", "tests/test_x.py::test_b"]


def test_keys_in_paths_pytest_ignores_are_dropped_before_scoring(acc: ModuleType) -> None:
    proj = acc.Project("p", "1", "pkg/tests", pytest_args=("--ignore=pkg/tests/slow", "--ignore=pkg/tests/x_test.py/",
                                                           "-q"))
    cls = _keys("pkg/tests/slow/a_test.py::T::t", "pkg/tests/x_test.py::t", "pkg/tests/slowish_test.py::t",
                "pkg/tests/y_test.py::t")
    # a sibling whose name only starts like an ignored folder is kept
    assert sorted(acc.not_ignored(cls, proj)) == ["pkg/tests/slowish_test.py::t", "pkg/tests/y_test.py::t"]
    assert acc.not_ignored(cls, acc.Project("p", "1", "pkg/tests")) == cls


def test_compiled_modules_are_copied_into_the_source_tree(acc: ModuleType, tmp_path: Path) -> None:
    """pymde's tests live in its package and import it from the sdist, which lacks the wheel's compiled module."""
    site, src = tmp_path / "site", tmp_path / "src"
    (site / "pkg").mkdir(parents=True)
    (site / "pkg.libs").mkdir()
    (site / "pkg" / "_native.so").write_bytes(b"wheel")
    (site / "pkg.libs" / "libblas.so").write_bytes(b"blas")
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "kept.so").write_bytes(b"source")
    (site / "pkg" / "kept.so").write_bytes(b"wheel")
    acc.copy_inplace(site, acc.Project("pkg", "1", "pkg", inplace=("pkg/*.so", "pkg.libs/*")), src)
    assert (src / "pkg" / "_native.so").read_bytes() == b"wheel"
    assert (src / "pkg.libs" / "libblas.so").read_bytes() == b"blas"
    assert (src / "pkg" / "kept.so").read_bytes() == b"source"
    with pytest.raises(SystemExit, match=r"no pkg/\*\.dll"):
        acc.copy_inplace(site, acc.Project("pkg", "1", "pkg", inplace=("pkg/*.dll",)), src)
