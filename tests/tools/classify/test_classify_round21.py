"""Round 21: idioms of suites new this round (torch-harmonics, torchkge; corpus tests/round21, labels in
expected.json, each test run with pytest on CPU-only torch first)."""

from __future__ import annotations

import ast

import pytest

from tools.classify.guards import cuda_guard
from tools.classify.optional_imports import cuda_build
from tools.classify.runner import run

CORPUS_DIR = "tests/round21"


def _tests(corpus, name: str) -> dict:
    path = f"{CORPUS_DIR}/{name}"
    return run(corpus, paths=[path], cache_dir=None).files[path].tests


def test_expand_names_pad_the_case_number(corpus) -> None:
    tests = _tests(corpus, "test_expand_padding.py")
    assert sorted(k for k in tests if "test_scale" in k) == [f"ExpandPadding::test_scale_{i:02d}" for i in range(11)]
    assert tests["ExpandPadding::test_scale_00"].label == "cpu"
    assert tests["ExpandPadding::test_scale_10"].label == "gpu"
    # a name function receives the padded number as text
    assert "ExpandPadding::test_named_case00" in tests and "ExpandPadding::test_named_case10" in tests
    # one digit for up to ten cases
    assert {"ExpandPadding::test_few_0_cpu", "ExpandPadding::test_few_1_cuda"} <= set(tests)


@pytest.mark.parametrize(("module", "built_for_cuda"), [
    ("attention_cuda_extension", True), ("selective_scan_cuda", True), ("cupy", True), ("cupy_cuda12x", True),
    ("pycuda.driver", True), ("gpu_ops", True), ("vllm.v1.worker.gpu_worker", False),
    ("torch_scatter", False), ("tensorboard", False), ("cudatoolkit_stub", False), ("mygpu", False),
])
def test_which_modules_are_cuda_builds(module: str, built_for_cuda: bool) -> None:
    assert cuda_build(module) is built_for_cuda


def test_a_skip_on_a_missing_cuda_extension_is_a_gpu_tests(corpus) -> None:
    tests = _tests(corpus, "test_cuda_extension_imports.py")
    # skipped on a CPU runner, and on a GPU machine the extension may be there: a GPU test
    assert tests["T::test_skip_cuda_ext_returns"].label == "gpu"
    assert "skipUnless(torch.cuda.is_available() and _ext)" in "".join(tests["T::test_skip_cuda_ext_returns"].reasons)
    assert tests["test_cupy_interop"].label == "gpu"
    assert tests["test_plain"].label == "cpu"


def test_cuda_calls_behind_an_existing_values_is_cuda(corpus) -> None:
    tests = _tests(corpus, "test_is_cuda_guards.py")
    for name in ("test_flag_from_existing_parameters", "test_flag_attribute_from_existing_tensor",
                 "test_early_return_device_type", "test_early_return_is_cuda", "test_configured_flag"):
        assert tests[name].label == "cpu", name
    assert "not a first CUDA use" in "".join(tests["test_early_return_device_type"].reasons)
    # the value the guard tests is made on CUDA: that is the need
    assert tests["test_flag_of_a_cuda_tensor"].label == "gpu"
    assert tests["test_early_return_on_a_cuda_tensor"].label == "gpu"


@pytest.mark.parametrize(("test", "flag", "guarded"), [
    ("use_cuda", True, True),  # a name holding an existing value's `.is_cuda`
    ("not use_cuda", True, False),
    ("self.on_gpu and n > 1", True, True),
    ("use_cuda", False, None),  # a flag of anything else (`torch.cuda.is_available()`) is the worlds' to decide
    ("use_cuda()", True, None),  # a call: not a stored flag
])
def test_is_cuda_flags_guard_like_the_attribute(test: str, flag: bool, guarded: bool | None) -> None:
    node = ast.parse(test, mode="eval").body
    assert cuda_guard(node, lambda e: False, lambda e: flag) is guarded


def test_a_skip_only_a_cpu_machine_surely_reaches_is_a_gpu_need(corpus) -> None:
    tests = _tests(corpus, "test_fixture_skip_reason.py")
    # with two GPUs the fixture's skip reason also depends on the OS: the test may run there, never here
    assert tests["test_norm[gpu_multi]"].label == "gpu"
    assert tests["test_norm[gpu_multi]"].gpu_count == 2
    assert tests["test_norm[gpu_single]"].label == "gpu"
    # `args = test_args or {}` is the configuration dict: device_mode "cpu", no CUDA-only branch
    assert tests["test_norm[cpu_single]"].label == "cpu"


def test_a_skip_every_machine_reaches_is_labelled_by_its_reason(corpus) -> None:
    tests = _tests(corpus, "test_fixture_skip_reason.py")
    for name in ("test_naive_gather[gpu_single]", "test_naive_gather[gpu_multi]", "test_marked_for_cuda"):
        assert tests[name].label == "gpu", name
        assert "a GPU test no machine runs" in tests[name].reasons[0], name
    assert tests["test_naive_gather[cpu_single]"].label == "cpu"
    assert tests["test_skipped_for_another_reason"].label == "cpu"


@pytest.mark.parametrize(("reason", "names_one"), [
    ("Naive gather strategy not supported with NCCL backend", True), ("needs two CUDA devices", True),
    ("No GPUs available", True), ("requires an accelerator", True),
    ("flaky on this platform", False), ("slow", False), ("scuda", False), (None, False),
])
def test_which_skip_reasons_name_an_accelerator(reason, names_one: bool) -> None:
    from tools.classify.evidence import names_accelerator
    assert names_accelerator(reason) is names_one


def test_dict_fromkeys_device_lists(corpus) -> None:
    tests = _tests(corpus, "test_device_list_fromkeys.py")
    assert tests["test_zeros[device0]"].label == "cpu"
    assert set(tests) >= {"test_names[a]", "test_names[b]"}


def test_a_float_is_no_torch_object(corpus) -> None:
    tests = _tests(corpus, "test_infer_device.py")
    assert tests["test_noise_from_a_float"].label == "cpu"  # was unknown: the default device was lost
    assert tests["test_noise_from_a_cuda_tensor"].label == "gpu"


@pytest.mark.parametrize(("value", "classes", "expected"), [
    (0.01, ("torch.Tensor", "torch.Generator"), False),
    (None, ("torch.Generator",), False),
    (3, ("torch.Tensor", "builtins.int"), True),
    (0.01, ("numpy.ndarray",), None),  # not a torch class: undecided, as before
])
def test_isinstance_of_plain_values(value, classes, expected) -> None:
    from tools.classify.devices import isinstance_of
    from tools.classify.values import Const, Ext, Seq
    got = isinstance_of(Const(value), Seq(tuple(Ext(c) for c in classes), "tuple"))
    assert (got.value if isinstance(got, Const) else None) == expected


def test_itertools_combinations_spell_their_cases(corpus) -> None:
    tests = _tests(corpus, "test_combinations.py")
    assert {k for k in tests if k.startswith("test_pairs[")} == {f"test_pairs[pair{i}]" for i in range(4)}
    assert tests["test_orders[cpu-cuda]"].label == tests["test_orders[cuda-cpu]"].label == "gpu"
    assert len([k for k in tests if k.startswith("test_with_replacement[")]) == 3


def test_math_functions_give_the_float_pytest_prints(corpus) -> None:
    tests = _tests(corpus, "test_math_ids.py")
    assert set(tests) == {"test_factors[linear-0.5]", "test_factors[1-sqrt-0.2928932188134524]",
                          "test_factors[log-0.34657359027997264]", "test_factors[floor-2]"}


def test_an_unknown_number_is_no_argname_id() -> None:
    """`1 - math.sqrt(x)` of an unknown x is a number pytest spells: its id is unknown, never `factor1`."""
    from tools.classify.collect import idval
    from tools.classify.interp_external import _math
    from tools.classify.values import UNRESOLVED, Const, UnknownScalar
    assert _math("sqrt", [Const(0.25)]) == Const(0.5)
    assert isinstance(_math("sqrt", [Const(-1.0)]), UnknownScalar)  # ValueError in Python
    assert isinstance(_math("sqrt", [UNRESOLVED]), UnknownScalar)
    assert idval(_math("sqrt", [UNRESOLVED]), "factor", 1) is None
