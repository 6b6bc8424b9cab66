"""Round 12: pytest objects printed in ids (tests/tools/classify/fixtures/repo/tests/round12_pytestobj). A case
decorator class that ids each `pytest.param(...)` by its printed ParameterSet, picks cases by indexing itself
(slices, lists, tuples, `match` class patterns) and reads the argument names with inspect: the classifier's node ids
equal `pytest --collect-only -q`'s, except the function-level keys of tests whose ids print what the analysis cannot
(an object's address, a function, a skip mark's condition). The printed texts are checked against the installed
pytest itself."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tools.classify.collect import _expand_cases
from tools.classify.devices import _compare, spelled
from tools.classify.interp_external import _product
from tools.classify.pytest_objects import pytest_object_text
from tools.classify.runner import run
from tools.classify.values import SLICE, UNRESOLVED, Const, Ext, MarkV, ParamV, Seq, slice_of

ROUND12 = "tests/round12_pytestobj"
FILE = f"{ROUND12}/test_pytest_objects.py"
UNPRINTED = {f"{FILE}::{name}" for name in (
    "test_skip_mark_printed", "test_unprintable_value", "test_unprintable_mark_argument")}


def test_ids_match_pytest_collect_only(ids_vs_pytest) -> None:
    got = ids_vs_pytest(ROUND12)
    tests = got.tests
    assert len(got.collected) == 35, got.output
    assert got.function_only == got.not_collected == UNPRINTED
    # cases picked by `.excluding[...]` carry one more mark, in their ids too
    assert sum("Markname='picked'" in k for k in tests) == 8
    gpu = {k for k, v in tests.items() if v.label == "gpu"}
    assert gpu == {k for k in tests if "test_on_device[" in k and "'cuda'" in k} and len(gpu) == 2
    assert all(v.label == "cpu" for k, v in tests.items() if k not in gpu)


def _shown(v: object) -> None:
    return None


# marks pytest registers itself (an unregistered name warns when it is read)
@pytest.mark.parametrize(("value", "real"), [
    (Ext("pytest.mark.tryfirst"), pytest.mark.tryfirst),
    (MarkV("filterwarnings", (Const("ignore"), Const(3)), (("k", Const(None)),)),
     pytest.mark.filterwarnings("ignore", 3, k=None)),
    (ParamV((Const(1), Const("a")), (), None, "tuple"), pytest.param(1, "a")),
    (ParamV((Seq((Const(1), Const(2)), "tuple"),), (Ext("pytest.mark.xfail"),), "x", "tuple"),
     pytest.param((1, 2), marks=pytest.mark.xfail, id="x")),
    (ParamV((Const("t"),), (Ext("pytest.mark.trylast"), MarkV("filterwarnings", (Const(1.5),))), None, "list"),
     pytest.param("t", marks=[pytest.mark.trylast, pytest.mark.filterwarnings(1.5)])),
    (ParamV((Const(None),), (), None, "list"), pytest.param(None, marks=[])),
    (ParamV((Const(0),), (Ext("pytest.mark.tryfirst"), Ext("pytest.mark.trylast")), None, "tuple"),
     pytest.param(0, marks=(pytest.mark.tryfirst, pytest.mark.trylast))),
])
def test_printed_as_the_installed_pytest_prints(value, real) -> None:
    assert pytest_object_text(value, _shown) == str(real) == repr(real)
    assert spelled(value) == str(real) and spelled(value, "r") == repr(real)


@pytest.mark.parametrize("value", [
    ParamV((UNRESOLVED,), (), None, "tuple"),  # a value the analysis does not know
    ParamV((Const(1),), (UNRESOLVED,), None, "tuple"),  # an unknown mark
    ParamV((Const(1),), (), None, ""),  # an id the analysis does not know, or another library's param
    MarkV("parametrize", (Const("x"), Seq((Const(1),), "list"))),  # its ids were rewritten by the interpreter
    MarkV("<torch.dtypes>"),  # not a pytest mark
    MarkV("filterwarnings", (), (("a", Const(1)), ("b", Const(2)))),  # the keywords' order is not kept
])
def test_unknown_parts_are_not_printed(value) -> None:
    assert pytest_object_text(value, _shown) is None


def test_slices() -> None:
    assert slice_of(Seq((Const(None), Const(2), Const(None)), SLICE)) == slice(None, 2, None)
    assert slice_of(Seq((Const(0), Const(2), Const(0)), SLICE)) is None  # a zero step raises
    assert slice_of(Seq((UNRESOLVED, Const(2), Const(None)), SLICE)) is None
    assert slice_of(Seq((Const(0), Const(2)), "tuple")) is None
    # compared as Python compares slices (`index == slice(None, None, None)`)
    noop = Seq((Const(None), Const(None), Const(None)), SLICE)
    assert _compare(ast.Eq(), noop, Seq((Const(None),) * 3, SLICE)) == Const(True)
    assert _compare(ast.Eq(), noop, Seq((Const(0), Const(None), Const(None)), SLICE)) == Const(False)
    assert _compare(ast.NotEq(), noop, Seq((Const(None),) * 3, "tuple")) == Const(True)
    assert _compare(ast.Eq(), noop, Seq((UNRESOLVED, Const(None), Const(None)), SLICE)) == UNRESOLVED


def test_a_product_over_a_set_is_a_set() -> None:
    """A set's order is its hash order: the product's tuples are known, their order is not, so cases are id'd by
    value and names made from positions (parameterized.expand) are not computed."""
    names = Seq((Const("b"), Const("a")), "set")
    got = _product([Seq((Const(1), Const(2)), "list"), names])
    assert isinstance(got, Seq) and got.kind == "set" and len(got.items) == 4
    assert _product([Seq((Const(1),), "list"), Seq((Const("a"),), "tuple")]).kind == "list"  # type: ignore[union-attr]
    node = ast.parse("def test_x(a, b):\n    pass\n").body[0]
    mark = MarkV("<parameterized.expand>", (got,))
    assert _expand_cases(None, None, node, mark) is None  # type: ignore[arg-type]


def test_match_statements_take_the_decided_case(tmp_path: Path) -> None:
    """`match` with class patterns of builtin types, captures, literal values and `|` runs the case it decides
    (here only the `list()` case may reach CUDA, and it is not taken); an undecided subject keeps every case."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_m.py").write_text(
        "import torch\n\n\n"
        "def pick(idx):\n"
        "    match idx:\n"
        "        case slice() as s:\n"
        "            return torch.zeros(2)[s]\n"
        "        case list() as li:\n"
        "            return torch.zeros(len(li), device='cuda')\n"
        "        case 1 | 2:\n"
        "            return torch.ones(1)\n"
        "        case None:\n"
        "            return torch.ones(2)\n"
        "        case _:\n"
        "            return torch.zeros(1, device='cuda')\n\n\n"
        "def test_slice():\n    pick(slice(0, 1))\n\n\n"
        "def test_value():\n    pick(2)\n\n\n"
        "def test_list():\n    pick([1])\n\n\n"
        "def test_none():\n    pick(None)\n\n\n"
        "def test_unknown(x=torch.cuda.device_count()):\n    pick(x)\n")
    result = run(tmp_path, paths=["tests"], cache_dir=None)
    labels = {k: v.label for k, v in result.files["tests/test_m.py"].tests.items()}
    assert labels == {"test_slice": "cpu", "test_value": "cpu", "test_list": "gpu", "test_none": "cpu",
                      "test_unknown": "gpu"}
