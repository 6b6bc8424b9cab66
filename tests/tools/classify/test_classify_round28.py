"""Round 28: library code replaced by `@mock.patch` decorators (corpus tests/round28, each test run with pytest on
CPU-only torch first; labels in expected.json)."""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

import pytest

from tools.classify.runner import run
from tools.classify.test_state import ENVIRON, PATCHED, merge_stores, passes_mock
from tools.classify.values import Const, DictV

PATCHES = "tests/round28/test_decorator_patches.py"
TreeWriter = Callable[[Path, dict[str, str]], Path]  # the write_tree fixture (conftest.py)


def _labels(root: Path, path: str) -> dict[str, str]:
    return {k: v.label for k, v in run(root, paths=[path], cache_dir=None, workers=1).files[path].tests.items()}


def test_a_decorator_patch_is_in_place_while_the_test_runs(corpus: Path) -> None:
    # before: the decorators were evaluated but not applied, so the replaced CUDA query was followed (10 CPU tests
    # went to GPU runners) and a patched-in "cuda" configuration was not seen (test_config_new was a false CPU)
    assert _labels(corpus, PATCHES) == {
        "test_patched_obj": "cpu", "test_patched_str": "cpu", "test_patched_mock_module": "cpu",
        "test_unpatched": "gpu", "TestC::test_method": "cpu", "TestC::test_method_unpatched": "gpu",
        "test_two": "cpu", "test_patched_other": "gpu", "test_config_new": "gpu", "test_config_new_cpu": "cpu",
        # the mock's return value is not followed: the devices it hands back are not known
        "test_return_value_list": "unknown", "test_return_value_set_in_body": "unknown",
        "test_wraps_runs_original": "gpu",
        # a class decorator patches each test method, of a pytest class and of a unittest one
        "TestPatchedClass::test_a": "cpu", "TestUnit::test_b": "cpu",
        "TestUnitMethod::test_c": "cpu", "TestUnitMethod::test_d": "gpu"}


def test_the_patch_names_the_decorator_that_made_it(corpus: Path) -> None:
    tests = run(corpus, paths=[PATCHES], cache_dir=None, workers=1).files[PATCHES].tests
    assert tests["test_config_new"].reasons == (
        f"{PATCHES}:56: calls make() -> tests/round28/patch_helpers.py:18: torch.zeros(device='cuda') needs a CUDA "
        "device",), tests["test_config_new"].reasons


def test_a_file_with_decorator_patches_alone_says_what_the_whole_tree_says(corpus: Path) -> None:
    whole = run(corpus, paths=["tests/round28", "tests/round27"], cache_dir=None, workers=1).files
    assert run(corpus, paths=[PATCHES], cache_dir=None, workers=1).files[PATCHES].tests == whole[PATCHES].tests


@pytest.mark.parametrize(("decorator", "passes"), [
    ('patch("pkg.mod.fn")', True),
    ('mock.patch("pkg.mod.fn", return_value=1)', True),
    ('patch("pkg.mod.fn", new_callable=MagicMock)', True),
    ('patch.object(mod, "fn")', True),
    ('unittest.mock.patch.object(mod, "fn", side_effect=ValueError)', True),
    ('patch("pkg.mod.DEVICE", "cuda")', False),  # `new` given: nothing is passed
    ('patch.object(mod, "DEVICE", "cuda")', False),
    ('patch.object(mod, "fn", new=lambda: 1)', False),
    ('patch.dict(os.environ, {"A": "1"})', False),
    ('patch.multiple(mod, fn=DEFAULT)', False),  # (passes keyword arguments)
    ("pytest.mark.parametrize('x', [1])", False),
    ("patch", False),  # not a call
])
def test_which_decorators_hand_the_test_a_mock(decorator: str, passes: bool) -> None:
    assert passes_mock(ast.parse(decorator, mode="eval").body) is passes


STATE = "tests/round28/test_test_state.py"


def test_environment_and_constants_set_before_the_body_are_what_the_library_reads(corpus: Path) -> None:
    # before: the variables set by decorators and fixtures and the constant set through a dotted string were not
    # seen, and the library's default ("cpu") was taken: 7 false CPUs
    assert _labels(corpus, STATE) == {
        "test_env_decorator_cuda": "gpu", "test_env_decorator_meta": "cpu", "test_env_decorator_string_target": "gpu",
        "test_env_decorator_kwargs": "gpu", "TestEnvPatchedClass::test_in_class": "gpu",
        "test_usefixtures_env": "gpu", "TestEnvClass::test_autouse_env": "gpu",
        "test_monkeypatch_string_target": "gpu", "test_monkeypatch_string_target_cpu": "cpu",
        "test_string_patch_config_cuda": "gpu", "test_patched_picker": "cpu",
        "test_faked_availability_only_query": "cpu", "test_faked_count": "cpu", "test_faked_unavailable": "cpu",
        # fails on a CPU (it allocates on CUDA after faking the query): a CUDA mock means "runs on a CPU", by design
        "test_faked_availability_then_real_cuda": "cpu"}


def test_a_fixture_that_sets_the_environment_is_named_in_the_reason(corpus: Path) -> None:
    v = run(corpus, paths=[STATE], cache_dir=None, workers=1).files[STATE].tests["test_usefixtures_env"]
    assert v.reasons[0].endswith("needs a CUDA device") and "calls make_env()" in v.reasons[0], v.reasons


def test_test_state_merges_variable_by_variable_and_later_layers_win() -> None:
    env = ENVIRON
    first = ((env, DictV(((Const("A"), Const("cuda")), (Const("B"), Const("1"))))),
             (f"{PATCHED}m.py:DEVICE", Const("cpu")))
    second = ((env, DictV(((Const("A"), Const("meta")),))), (f"{PATCHED}m.py:DEVICE", Const("cuda")))
    merged = dict(merge_stores(first, second))
    assert merged[f"{PATCHED}m.py:DEVICE"] == Const("cuda")
    assert dict(merged[env].items) == {Const("B"): Const("1"), Const("A"): Const("meta")}
    assert merge_stores() == ()


SET_UP = "tests/round28/set_up/test_set_up_state.py"


def test_state_set_by_fixtures_and_set_up_hooks_reaches_the_body(corpus: Path) -> None:
    # before: 7 false CPUs (fixtures that set a constant or a variable, per parameter too, set-up hooks, a conftest
    # autouse fixture that sets the environment on one path)
    assert _labels(corpus, SET_UP) == {
        "test_mocker_patch_object_config": "gpu", "test_mocker_patch_object_config_cpu": "cpu",
        "test_mocker_patch_string_fn": "cpu", "test_yield_fixture_with_patch": "cpu",
        "test_fixture_sets_const": "gpu", "test_fixture_env_direct": "gpu",
        "test_env_param[meta]": "cpu", "test_env_param[cuda]": "gpu",
        "test_env_through_dependency[meta]": "cpu", "test_env_through_dependency[cuda]": "gpu",
        "TestSetUp::test_env_from_setup": "gpu", "TestSetupMethod::test_const_from_setup_method": "gpu",
        # `if "cuda_env_marker" in request.keywords:` is not decided: the variable may be set for either
        "test_conftest_autouse_env": "gpu", "test_conftest_autouse_env_unmarked": "gpu",
        "test_monkeypatch_in_body_then_cpu": "cpu"}


def test_a_variable_set_on_one_path_is_that_value_or_the_default(tmp_path: Path, write_tree: TreeWriter) -> None:
    root = write_tree(tmp_path, {
        "lib.py": """
            import os
            import torch

            def make():
                return torch.zeros(1, device=os.environ.get("D", "cpu"))
        """,
        "test_paths.py": """
            import lib

            def test_maybe(monkeypatch, flag):
                if flag:
                    monkeypatch.setenv("D", "cuda")
                lib.make()

            def test_never(monkeypatch, flag):
                if flag:
                    monkeypatch.setenv("D", "meta")
                lib.make()
        """})
    assert _labels(root, "test_paths.py") == {"test_maybe": "gpu", "test_never": "cpu"}


def test_code_after_a_block_that_swallows_an_error_runs(corpus: Path) -> None:
    # before: the block's body ended in a raise, so the path ended there and the CUDA code after it was not seen
    # (3 false CPUs)
    assert _labels(corpus, "tests/round28/test_after_raises.py") == {
        "test_raise_then_cuda": "gpu", "test_raise_then_cpu": "cpu", "test_suppress_then_cuda": "gpu",
        "TestAssertRaises::test_then_cuda": "gpu"}


def test_a_call_that_raises_on_every_path_does_not_end_the_callers_path(corpus: Path) -> None:
    # Ending the caller's path there (the function's own raise does) was tried and left: the unset-environment
    # reading decides raises that a CI's environment does not (einops' `parse_backends_to_test()` raises unless
    # EINOPS_TEST_BACKENDS is set, and its test module's import then lost all 38 of its tests). So the CUDA code after
    # a failing validation helper is still followed (a CPU test `gpu`: safe).
    assert _labels(corpus, "tests/round28/test_always_raises.py") == {
        "test_bad_n_raises_before_cuda": "gpu", "test_bad_device_raises": "cpu", "test_good_runs_cuda": "gpu",
        "test_lenient_recovers_then_cuda": "gpu", "test_abstract_override": "gpu",
        "test_abstract_base_raises": "cpu", "test_quiet_context_then_cuda": "gpu",
        "test_caught_in_test_then_cuda": "gpu", "test_maybe_raises[True]": "cpu", "test_maybe_raises[False]": "gpu",
        "test_unknown_flag": "gpu"}


def test_a_class_patch_decorator_patches_the_methods_the_class_has_not_a_subclass_s(corpus: Path) -> None:
    # an intermediate version applied a base class's patch to a subclass's own test (a false CPU); the marks of
    # tests of one shape are shared, so which class's patch applies is decided per test
    assert _labels(corpus, "tests/round28/test_inherited_patches.py") == {
        "TestPatched::test_own": "cpu", "TestPatched::test_in_base": "cpu", "TestChild::test_own": "cpu",
        "TestChild::test_in_base": "cpu", "TestChild::test_child": "gpu"}
