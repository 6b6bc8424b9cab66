"""Round 30: kernels picked at run time from a registry (corpus tests/round30 and mypkg/kernels, each test run with
pytest on CPU-only torch first; labels in expected.json)."""

from __future__ import annotations

from pathlib import Path

from tools.classify.interp_external import _sorted
from tools.classify.runner import run
from tools.classify.values import UNRESOLVED, Const, DictV, OneOf, Seq, may_equal, undecided_entry

DISPATCH = "tests/round30/test_kernel_dispatch.py"


def _tuple(*items: object) -> Seq:
    return Seq(tuple(i if isinstance(i, (Seq, OneOf)) or i is UNRESOLVED else Const(i) for i in items), "tuple")


def test_a_registry_filled_through_a_re_exporting_package_reaches_the_kernel(corpus: Path) -> None:
    # before: the implementation modules import `register_op` (a second name of `register_impl`) from the package,
    # not from the registry's module, so they did not count as its writers: the registry was empty, the dispatcher's
    # lookup None, and the CUDA kernels behind it never seen (liger-kernel: 100 of its 590 GPU tests labelled cpu)
    result = run(corpus, paths=[DISPATCH], cache_dir=None, workers=1).files[DISPATCH].tests
    assert {k: v.label for k, v in result.items()} == {
        "test_dispatched_to_a_cuda_kernel": "gpu", "test_dispatched_to_the_reference": "cpu",
        "test_the_cuda_kernel_is_gated_by_availability": "cpu", "test_looked_up_by_its_key": "cpu",
        "test_the_registered_ops": "cpu", "test_picked_by_an_installed_module": "gpu",
        "test_the_only_implementation_of_its_op": "cpu"}
    assert result["test_picked_by_an_installed_module"].reasons == (
        f"{DISPATCH}:31: calls dispatch() -> mypkg/kernels/dispatch.py:27: calls call() -> "
        "mypkg/kernels/registry.py:43: calls fused_cuda() -> mypkg/kernels/impls/cuda_scale.py:18: .cuda() needs a "
        "CUDA device",)


def test_a_tuple_key_known_in_part_selects_the_entries_it_may_equal() -> None:
    registry = DictV(((_tuple("scale", "cuda"), Const("a")), (_tuple("norm", "ref"), Const("b")),
                      (_tuple("scale", "ref"), Const("c")), (UNRESOLVED, Const("d"))))
    assert undecided_entry(registry, _tuple("scale", UNRESOLVED)) == OneOf(frozenset(
        {Const("a"), Const("c"), Const("d")}))  # an unknown key may be anything
    assert undecided_entry(registry, _tuple("norm", OneOf(frozenset({Const("ref"), Const("x")})))) == OneOf(
        frozenset({Const("b"), Const("d")}))
    assert not may_equal(_tuple("scale", "cuda"), Const("scale"))  # a string never equals a tuple
    assert not may_equal(_tuple("scale", "cuda"), _tuple("scale", "cuda", UNRESOLVED))
    assert may_equal(UNRESOLVED, Const("scale"))


def test_sorted_orders_tuples_of_known_values_as_python_does() -> None:
    prefs = Seq((_tuple(50, "reference"), _tuple(10, "cuda"), _tuple(10, "cpu")), "list")
    assert _sorted(prefs, Const(False)) == Seq((_tuple(10, "cpu"), _tuple(10, "cuda"), _tuple(50, "reference")), "list")
    assert _sorted(prefs, Const(True)) == Seq((_tuple(50, "reference"), _tuple(10, "cuda"), _tuple(10, "cpu")), "list")
    assert _sorted(Seq((Const(1), Const("a")), "list"), Const(False)) is None  # Python's TypeError: not decided
    assert _sorted(Seq((_tuple(1, UNRESOLVED),), "list"), Const(False)) is None
