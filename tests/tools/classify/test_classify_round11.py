"""Round 11: torch.nn modules printed in ids (tests/tools/classify/fixtures/repo/tests/round11_nn). The node ids the
classifier gives equal `pytest --collect-only -q`'s, except the function-level keys of tests whose ids hold what the
analysis cannot print (a module outside the table, an unknown argument, an unknown part of an f-string); moving a
module to CUDA is still a GPU use. The table itself is checked against torch in test_nn_modules_table.py."""

from __future__ import annotations

import pytest

from tools.classify.devices import spelled
from tools.classify.interp_torch import data_shape, factory_shape
from tools.classify.nn_modules import constructed
from tools.classify.values import SIZE, UNRESOLVED, Const, OneOf, Seq, TensorV, join

ROUND11 = "tests/round11_nn"
FILE = f"{ROUND11}/test_nn_ids.py"
UNPRINTED = {f"{FILE}::{name}" for name in (
    "test_module_outside_the_table", "test_argument_not_known", "test_layer_fstring_of_unknown_part")}


def test_ids_match_pytest_collect_only(ids_vs_pytest) -> None:
    got = ids_vs_pytest(ROUND11)
    collected, tests = got.collected, got.tests
    assert len(collected) == 20, got.output
    # every collected id is a key, or belongs to one of the tests whose ids cannot be printed
    assert got.function_only == got.not_collected == UNPRINTED
    assert sum(1 for c in collected if c.startswith(f"{FILE}::test_problem[")) == 5
    gpu = {k for k, v in tests.items() if v.label == "gpu"}
    assert gpu == {f"{FILE}::test_module_built_on_cuda"} | {k for k in tests if "test_module_moved_to_cuda[" in k}
    assert all(v.label == "cpu" for k, v in tests.items() if k not in gpu)


@pytest.mark.parametrize(("name", "args", "kwargs", "shape"), [
    ("rand", [Const(3), Const(10)], {}, (3, 10)),
    ("zeros", [Seq((Const(2), Const(4)), "tuple")], {}, (2, 4)),
    ("randn", [], {"size": Seq((Const(5),), "list")}, (5,)),
    ("ones", [Seq((Const(4), Const(3)), SIZE)], {}, (4, 3)),
    ("randint", [Const(0), Const(5), Seq((Const(3),), "tuple")], {}, (3,)),
    ("randint", [Const(5), Seq((Const(2), Const(2)), "tuple")], {}, (2, 2)),
    ("full", [Seq((Const(2),), "tuple"), Const(1.0)], {}, (2,)),
    ("empty", [], {}, None),
    ("rand", [Const(3), UNRESOLVED], {}, None),
    ("rand", [Const(-1)], {}, None),
    ("rand", [Const(2.0)], {}, None),
    ("arange", [Const(5)], {}, None),
    ("randint", [Const(0), Const(5)], {}, None),
])
def test_factory_shapes(name, args, kwargs, shape) -> None:
    """Only constant, non-negative int sizes give a shape; anything else (and factories whose shape is not their
    size argument) leaves it unknown."""
    assert factory_shape(name, args, kwargs) == shape


def test_data_shapes() -> None:
    rows = Seq((Seq((Const(1), Const(2)), "list"), Seq((Const(3), Const(4.5)), "list")), "list")
    assert data_shape(rows) == (2, 2)
    assert data_shape(Seq((), "list")) == (0,)
    assert data_shape(Seq((Seq((Const(1),), "list"), Seq((Const(1), Const(2)), "list")), "list")) is None  # ragged
    assert data_shape(Seq((Const("a"),), "list")) is None
    assert data_shape(Seq((UNRESOLVED,), "list")) is None


def test_joined_tensors_keep_their_device_not_their_shape() -> None:
    """Two paths giving tensors of different shapes on one device join to a tensor there (device analysis is what
    it was before shapes were known); on different devices they stay a choice."""
    assert join(TensorV("cpu", (3,)), TensorV("cpu", (4,))) == TensorV("cpu")
    assert join(TensorV("cpu", (3,)), TensorV("cpu", (3,))) == TensorV("cpu", (3,))
    both = join(TensorV("cpu", (3,)), TensorV("cuda", (3,)))
    assert isinstance(both, OneOf) and len(both.alts) == 2


def test_a_module_too_large_to_print_is_not_printed() -> None:
    """A Sequential of 20,000 layers (hostile code) would print over a megabyte: its text is unknown, like any value
    past values.MAX_PRINTED."""
    linear = constructed("torch.nn.Linear", [Const(2), Const(3)], {})
    assert linear is not None
    big = constructed("torch.nn.Sequential", [linear] * 20_000, {})
    assert big is not None and spelled(big) is None
    assert spelled(constructed("torch.nn.Sequential", [linear] * 3, {})).count("Linear(") == 3  # type: ignore[union-attr]
