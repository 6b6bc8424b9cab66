"""Round 27: test methods given to a test class at import by code other than its body (corpus tests/round27, each
test run with pytest on CPU-only torch first; labels in expected.json)."""

from __future__ import annotations

from pathlib import Path

from tools.classify.analyzer import Analyzer
from tools.classify.modules import walk_python_files
from tools.classify.runner import run

GENERATED = "tests/round27/test_generated_methods.py"


def _labels(root: Path, path: str) -> dict[str, str]:
    return {k: v.label for k, v in run(root, paths=[path], cache_dir=None, workers=1).files[path].tests.items()}


def test_a_module_whose_only_tests_a_function_generates_lists_them(corpus: Path) -> None:
    # before: no test of the file was known and its label was `cpu`, so its CUDA test went to a CPU runner
    assert _labels(corpus, "tests/round27/test_only_generated.py") == {
        "TestGen::test_zeros_big": "gpu", "TestGen::test_zeros_small": "cpu"}


def test_methods_from_a_helper_a_class_decorator_and_a_top_level_lambda(corpus: Path) -> None:
    assert _labels(corpus, GENERATED) == {
        "TestAppendedByFunction::test_zeros_big": "gpu", "TestAppendedByFunction::test_zeros_small": "cpu",
        "TestAddedByDecorator::test_ones_cuda": "gpu", "TestAddedByDecorator::test_ones_cpu": "cpu",
        "TestLambdaAtTopLevel::test_lambda_cuda": "gpu",
        # names from a directory listing: one class-level key, from what the set function does
        "TestFromConfigFiles": "unknown",
        # a decorator re-setting each test method wrapped (`for name in dir(cls)`): the methods as written, no key
        "TestWrappedInPlace::test_add_cpu": "cpu", "TestWrappedInPlace::test_add_cuda": "gpu"}


def test_names_not_known_get_a_class_level_key_that_says_why(corpus: Path) -> None:
    v = run(corpus, paths=[GENERATED], cache_dir=None, workers=1).files[GENERATED].tests["TestFromConfigFiles"]
    assert v.reasons[0].startswith(f"{GENERATED}:53: TestFromConfigFiles: functions set on the class under names the "
                                   f"analysis cannot compute (_x, {GENERATED}:58)"), v.reasons
    assert "cfg['device']" in v.reasons[-1]


def test_the_inert_shortcut_does_not_judge_a_set_method_by_its_class_text(corpus: Path) -> None:
    # `class TestLambdaAtTopLevel: pass` is inert text; the lambda set on it is not part of that text
    files = walk_python_files(corpus, [])
    got = {proven: Analyzer(corpus, files, prove_inert=proven).classify_file(GENERATED).tests[
        "TestLambdaAtTopLevel::test_lambda_cuda"].label for proven in (True, False)}
    assert got == {True: "gpu", False: "gpu"}


def test_generated_methods_do_not_depend_on_what_was_analysed_before(corpus: Path) -> None:
    whole = run(corpus, paths=["tests/round27"], cache_dir=None, workers=1).files
    for path in (GENERATED, "tests/round27/test_only_generated.py"):
        assert run(corpus, paths=[path], cache_dir=None, workers=1).files[path].tests == whole[path].tests
