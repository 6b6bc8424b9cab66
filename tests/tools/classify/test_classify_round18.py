"""Round 18: locals a nested function shares with the function that defines it (tests/round18_closures, labels in
expected.json; closures.shared_cells).

Found on cuequivariance-torch: its parametrize list is built by `@yield_from` decorators that extend a list of
the helper that defines them (`result.extend(list(fn()))`). A nested function that changes an enclosing local
made that local unknown from the def on (a function-level key for 576 tests, most of them `gpu`); one that is
only ever called by name in the enclosing body is now handed the locals' current values at each call, and the
caller takes back what the call left in them."""

from __future__ import annotations

import ast

import pytest

from tools.classify.closures import decorated_by_local_defs, enclosing_function, shared_cells
from tools.classify.devices import _compare
from tools.classify.modules import index_defs
from tools.classify.runner import run
from tools.classify.values import UNRESOLVED, Const, DictV, Seq

CLOSURES = "tests/round18_closures/test_closure_cells.py"


def test_closure_cells_ids_equal_pytest(ids_vs_pytest) -> None:
    got = ids_vs_pytest(CLOSURES)
    assert got.function_only == {f"{CLOSURES}::test_filled_by_a_closure_passed_on",
                                 f"{CLOSURES}::test_closure_with_an_early_return"}
    # only a machine with CUDA collects the cuda case of a list the closure fills only there
    assert got.not_collected == {f"{CLOSURES}::test_filled_by_local_calls[cuda]", *got.function_only}
    assert got.tests[f"{CLOSURES}::test_filled_by_a_local_decorator[cuda-1]"].label == "gpu"
    assert got.tests[f"{CLOSURES}::test_filled_by_local_calls[cpu]"].label == "cpu"


def _cells(src: str, inner: str) -> frozenset[str]:
    tree = ast.parse(src)
    defs = index_defs(tree)
    node = next(d for d in defs.values() if isinstance(d, ast.FunctionDef) and d.name == inner)
    outer = enclosing_function(defs, node)
    assert outer is not None
    return shared_cells(outer, node)


_BODY = """
def outer():
    out = []
    n = 0

    def add(x):
        nonlocal n
        out.append(x)
        n += 1
{extra}
    add(1)
    return out
"""


@pytest.mark.parametrize(("extra", "expected"), [
    ("", {"out", "n"}),  # called by name only
    ("    f = add\n", set()),  # the function is a value: calls through `f` are not followed
    ("    list(map(add, [2]))\n", set()),  # passed on
    ("    def later():\n        add(2)\n", set()),  # called from another scope
    ("    show = lambda: out\n", {"n"}),  # a lambda keeps a snapshot of `out`: left to the general rule
    ("    def show():\n        return out\n", {"out", "n"}),  # a reader called by name is refreshed too
])
def test_shared_cells_only_where_every_call_is_in_the_enclosing_body(extra: str, expected: set[str]) -> None:
    assert _cells(_BODY.format(extra=extra), "add") == expected


@pytest.mark.parametrize("inner", [
    "    @staticmethod\n    def add(x):\n        out.append(x)\n",  # decorated: the decorator may keep it
    "    def add(x):\n        out.append(x)\n        yield x\n",  # a generator runs when iterated
    "    def add(x):\n        if x:\n            return\n        out.append(x)\n",  # an early return
    "    async def add(x):\n        out.append(x)\n",
])
def test_no_shared_cells_for_functions_whose_effects_outlive_the_call(inner: str) -> None:
    src = f"def outer():\n    out = []\n{inner}    add(1)\n    return out\n"
    tree = ast.parse(src)
    defs = index_defs(tree)
    node = next(d for d in defs.values() if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef))
                and d.name == "add")
    outer = enclosing_function(defs, node)
    assert outer is not None and shared_cells(outer, node) == frozenset()


def test_a_method_of_a_local_class_has_no_enclosing_function_body() -> None:
    src = "def outer():\n    out = []\n\n    class C:\n        def add(self, x):\n            out.append(x)\n"
    defs = index_defs(ast.parse(src))
    node = next(d for d in defs.values() if isinstance(d, ast.FunctionDef) and d.name == "add")
    assert enclosing_function(defs, node) is None


def test_a_generator_decorated_by_a_local_def_runs_as_a_generator() -> None:
    src = ("def outer():\n    def collect(fn):\n        pass\n\n    @collect\n    def a():\n        yield 1\n\n"
           "    @contextlib.contextmanager\n    def b():\n        yield 1\n")
    defs = index_defs(ast.parse(src))
    by_name = {d.name: d for d in defs.values() if isinstance(d, ast.FunctionDef)}
    assert decorated_by_local_defs(defs, by_name["a"])
    assert not decorated_by_local_defs(defs, by_name["b"])


POSITIONAL = "tests/round18_ids/test_positional_devices.py"


def test_ids_that_name_another_case_with_gpus(ids_vs_pytest) -> None:
    """cuequivariance-torch's `DEVICES = [cuda:0, cpu] if torch.cuda.is_available() else [cpu]`: `[device0]` is
    the CUDA case on a GPU machine (which must run it on a GPU runner) and the CPU case here (which a CPU runner
    runs): gpu, with `without_gpus: cpu`. Was: the CPU case's label alone (`cpu`: the CUDA case ran nowhere), or
    `gpu` when the CPU case skipped (the CPU case was never run on a CPU runner)."""
    got = ids_vs_pytest(POSITIONAL)
    assert not got.function_only
    assert got.not_collected == {f"{POSITIONAL}::test_cuda_first[device1]", f"{POSITIONAL}::test_cpu_first[device1]",
                                 f"{POSITIONAL}::test_costly_on_cpu[False-device1]",
                                 f"{POSITIONAL}::test_costly_on_cpu[True-device1]"}
    first = got.tests[f"{POSITIONAL}::test_cuda_first[device0]"]
    assert (first.label, first.cpu_without_gpus) == ("gpu", True)
    assert "names another case on a machine with a GPU" in first.reasons[0]
    assert "without GPUs, [device0] is this CPU case" in first.reasons[-1]
    assert not got.tests[f"{POSITIONAL}::test_cpu_first[device0]"].cpu_without_gpus  # the same case everywhere
    costly = got.tests[f"{POSITIONAL}::test_costly_on_cpu[True-device0]"]  # skipped here, for no lack of a GPU
    assert (costly.label, costly.cpu_without_gpus) == ("gpu", True)


def test_a_mark_that_differs_with_gpus_is_not_another_case(corpus) -> None:
    """`pytest.param("cuda", marks=requires_cuda)`: the skipif is each machine's view of the same case."""
    path = "tests/unit/test_fixtures_params.py"
    got = run(corpus, paths=[path], cache_dir=None).files[path].tests["test_param_marks[g]"]
    assert (got.label, got.cpu_without_gpus) == ("gpu", False)


def _d(**items) -> DictV:
    return DictV(tuple((Const(k), v) for k, v in items.items()))


@pytest.mark.parametrize(("a", "b", "expected"), [
    # cuequivariance's `indexing != SHORT_INDEXING[0]`: values that are tuples of constants
    (_d(input=Seq((Const("all"), Const("batch")), "tuple")), _d(input=Seq((Const("all"), Const("batch")), "tuple")),
     Const(False)),
    (_d(input=Seq((Const("all"), Const("shared")), "tuple")), _d(input=Seq((Const("all"), Const("batch")), "tuple")),
     Const(True)),
    (_d(a=_d(b=Const(1))), _d(a=_d(b=Const(2))), Const(True)),  # nested dicts
    (_d(a=UNRESOLVED), _d(a=Const(1)), UNRESOLVED),  # a value the analysis does not know
    (_d(a=UNRESOLVED, b=Const(1)), _d(a=Const(1), b=Const(2)), Const(True)),  # one pair differs: unequal anyway
])
def test_dicts_compare_their_values_as_python_does(a, b, expected) -> None:
    assert _compare(ast.NotEq(), a, b) == expected


IDIOMS = "tests/round18_idioms/test_cuda_types_and_asserts.py"


def test_cuda_tensor_types_and_asserts_on_cuda_are_gpu_needs(corpus) -> None:
    """Found by running common idioms on CPU-only torch: `.type("torch.cuda.FloatTensor")` and `assert
    torch.cuda.is_available()` fail there, and were `cpu` (false CPU). An assert is a need only when the world
    decided it: one that fails everywhere is a CPU test that fails."""
    tests = run(corpus, paths=[IDIOMS], cache_dir=None).files[IDIOMS].tests
    assert tests["test_type_to_a_cuda_tensor_type_by_name"].reasons[-1].endswith(
        ".type('torch.cuda.FloatTensor') makes a CUDA tensor")
    assert "assert torch.cuda.is_available() fails on a machine without the GPUs" in tests[
        "test_asserts_in_a_helper"].reasons[-1]
    assert (tests["test_asserts_two_gpus"].label, tests["test_asserts_two_gpus"].gpu_count) == ("gpu", 2)
    assert tests["test_asserts_what_no_machine_has"].label == "cpu"
    assert tests["test_asserts_no_cuda"].label == "cpu"
    # unittest's assertions are asserts too
    assert "self.assertTrue(torch.cuda.is_available()) fails on a machine without the GPUs" in tests[
        "TestAssertions::test_assert_true_cuda"].reasons[-1]
    assert tests["TestAssertions::test_assert_greater_count"].gpu_count == 2
    assert tests["TestAssertions::test_assert_false_cuda"].label == "cpu"
    # map() calls its function: per row of known sequences, else once on what the rows may be
    assert "calls <lambda>()" in tests["test_moves_each_tensor_with_map"].reasons[-1]
    assert tests["test_moves_tensors_a_helper_maps"].label == "gpu"
    assert tests["test_maps_over_nothing"].label == "cpu"
    assert {"test_ids_made_by_map[1]", "test_ids_made_by_map[2]"} <= set(tests)


def test_an_assert_on_cuda_under_a_cuda_mock_is_no_need(corpus) -> None:
    """`@mock.patch("torch.cuda.is_available", return_value=True)` makes `assert torch.cuda.is_available()` hold on
    a CPU: the mock wins (tests/unit/test_conventions.py::test_mocked_cuda stays `cpu`)."""
    path = "tests/unit/test_conventions.py"
    assert run(corpus, paths=[path], cache_dir=None).files[path].tests["test_mocked_cuda"].label == "cpu"


HOOKS = "tests/round18_hooks/test_marker_hooks.py"


def test_markers_that_conftest_hooks_skip_without_gpus(corpus, ids_vs_pytest) -> None:
    """A repository's own marker (`needs_gpu`, `gpus(2)`) is a GPU need when its conftest's
    `pytest_collection_modifyitems` or `pytest_runtest_setup` skips it where GPUs are missing (item_hooks.py);
    a hook that skips a marker everywhere (`nightly`) leaves the test `cpu`. Was: `cpu` for all of them."""
    got = ids_vs_pytest(HOOKS)
    assert set(got.tests) == got.collected
    tests = run(corpus, paths=[HOOKS], cache_dir=None).files[HOOKS].tests
    one = tests["test_skipped_without_a_gpu_by_collection_hook"]
    assert one.label == "gpu" and one.reasons[-1].startswith(
        "tests/round18_hooks/conftest.py:12: pytest_collection_modifyitems -> ")
    two = tests["test_skipped_without_two_gpus_by_setup_hook"]
    assert (two.label, two.gpu_count) == ("gpu", 2) and "pytest_runtest_setup" in two.reasons[-1]
    assert tests["test_asks_for_no_gpu"].label == "cpu"
    nightly = tests["test_skipped_everywhere_for_another_reason"]
    assert nightly.label == "cpu" and "skipped everywhere" in nightly.reasons[-1]
