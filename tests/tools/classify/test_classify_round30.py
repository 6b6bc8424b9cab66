"""Round 30: kernels picked at run time from a registry, registries of classes found by type (corpus tests/round30,
mypkg/kernels, mypkg/loss_registry.py; each test run with pytest on CPU-only torch first; labels in expected.json)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tools.classify.interp_external import _sorted
from tools.classify.runner import run
from tools.classify.values import UNRESOLVED, Const, DictV, OneOf, Seq, may_equal, undecided_entry

DISPATCH = "tests/round30/test_kernel_dispatch.py"
TreeWriter = Callable[[Path, dict[str, str]], Path]  # the write_tree fixture (conftest.py)


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


def test_a_registry_of_classes_found_by_type_parametrizes_one_case_per_class(corpus: Path) -> None:
    # before: `issubclass(obj, Base)` over a module's `__all__` was undecided, `dict.fromkeys` of classes and
    # `sorted(key=lambda c: c.__name__)` unknown, and the empty user registry's `.values()` unknown: one
    # function-level key, `cpu`, over a case that needs CUDA (neuralforecast: 46 CPU tests `unknown`)
    path = "tests/round30/test_loss_registry.py"
    labels = {k: v.label for k, v in run(corpus, paths=[path], cache_dir=None, workers=1).files[path].tests.items()}
    assert labels == {"test_every_registered_loss[BaseLoss]": "cpu", "test_every_registered_loss[CudaMSE]": "gpu",
                      "test_every_registered_loss[MAE]": "cpu", "test_registering_a_loss_inside_a_test": "cpu"}


def test_issubclass_is_decided_by_the_mro_unless_a_virtual_base_may_say_otherwise(tmp_path: Path,
                                                                                 write_tree: TreeWriter) -> None:
    root = write_tree(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/base.py": (
            "import abc\nimport torch.nn as nn\n\n\nclass Marker:\n    pass\n\n\nclass Loss(nn.Module, Marker):\n"
            "    pass\n\n\nclass Layer(nn.Module):\n    pass\n\n\nclass Virtual(abc.ABC):\n    pass\n"),
        "tests/test_sub.py": (
            "import torch\nfrom pkg.base import Layer, Loss, Marker, Virtual\n\n\n"
            "def test_subclass():\n    if not issubclass(Loss, Marker):\n        torch.zeros(1).cuda()\n\n\n"
            "def test_not_subclass():\n    if issubclass(Layer, Marker) or not isinstance(Layer, type):\n"
            "        torch.zeros(1).cuda()\n\n\n"
            "def test_virtual_base():\n    if issubclass(Layer, Virtual):\n        torch.zeros(1).cuda()\n"),
    })
    tests = run(root, cache_dir=None, workers=1).files["tests/test_sub.py"].tests
    # an ABC may register any class (`Virtual.register(Layer)`): left undecided, so the branch counts
    assert {k: v.label for k, v in tests.items()} == {
        "test_subclass": "cpu", "test_not_subclass": "cpu", "test_virtual_base": "gpu"}


def test_sorted_by_a_key_function_and_dict_fromkeys_of_classes(tmp_path: Path, write_tree: TreeWriter) -> None:
    root = write_tree(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/zoo.py": "class B:\n    pass\n\n\nclass A:\n    pass\n",
        "tests/test_order.py": (
            "import pytest\nimport torch\nfrom pkg.zoo import A, B\n\n"
            "ORDER = list(dict.fromkeys([B, A, B]))\n\n\n"
            "@pytest.mark.parametrize('cls', sorted(ORDER, key=lambda c: c.__name__, reverse=True),"
            " ids=lambda c: c.__name__)\n"
            "def test_each(cls):\n    if cls is A:\n        torch.zeros(1).cuda()\n"),
    })
    tests = run(root, cache_dir=None, workers=1).files["tests/test_order.py"].tests
    assert {k: v.label for k, v in tests.items()} == {"test_each[B]": "cpu", "test_each[A]": "gpu"}
    assert list(tests) == ["test_each[B]", "test_each[A]"]  # the order pytest collects them in


def test_a_helper_that_skips_on_every_path_ends_the_test(corpus: Path) -> None:
    # before: a call that never returned gave an unknown value and the test went on, so CUDA after a helper's skip
    # counted (peft's `_skip_if_merging_not_supported` for prompt-learning configs); a skip the world decides is
    # still checked in the GPU worlds
    path = "tests/round30/test_helper_skips.py"
    tests = run(corpus, paths=[path], cache_dir=None, workers=1).files[path].tests
    assert {k: v.label for k, v in tests.items()} == {
        "test_merge[prompt]": "cpu", "test_merge[low_rank]": "gpu", "test_skipped_before_cuda": "cpu",
        "test_cuda_after_a_skip_without_cuda": "gpu"}
    assert tests["test_cuda_after_a_skip_without_cuda"].reasons == (
        f"{path}:21: calls skip_without_cuda() -> tests/round30/config_checks.py:26: pytest.skip() reached",)


def test_a_module_s_own_members_filtered_by_type(corpus: Path) -> None:
    # before: `sys.modules[__name__]` and `inspect.getmembers` were unknown, so the parametrization had one
    # function-level key, `unknown` (neuromancer: 191 of its 403 scored CPU tests)
    path = "tests/round30/test_module_members.py"
    tests = run(corpus, paths=[path], cache_dir=None, workers=1).files[path].tests
    assert {k: v.label for k, v in tests.items()} == {"test_simulate[Lorenz]": "gpu", "test_simulate[Pendulum]": "cpu"}
    assert list(tests) == ["test_simulate[Lorenz]", "test_simulate[Pendulum]"]  # getmembers sorts by name
