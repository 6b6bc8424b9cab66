"""Round 40: subclasses read from the modules' text, walks down the class hierarchy, and tables an object fills
(class_resolver's resolvers in pykeen; corpus tests/round40/test_class_walks.py and mypkg/walks/, run with pytest on
CPU-only torch first; labels in fixtures/expected.json)."""

from __future__ import annotations

import ast

import pytest

from tools.classify.interp_classes import _subclass_statements
from tools.classify.interp_statements import _fresh_iterator, _own_dict_view
from tools.classify.summaries import Frames, class_walk_shape
from tools.classify.values import ClassV, Const, FuncV

FILE = "tests/round40/test_class_walks.py"
HELD = "tests/round40/test_held_kwargs.py"
SYMBOLS = "tests/round40/test_symbol_ids.py"


def test_ids_match_pytest_collect_only(ids_vs_pytest) -> None:
    got = ids_vs_pytest(FILE)
    assert len(got.collected) == 8, got.output
    # a recursive walk of `__subclasses__()` is followed class by class (was: cut as a cycle, a function-level key)
    assert {k for k in got.tests if "test_every_walker" in k} == {
        f"{FILE}::test_every_walker[{n}]" for n in ("CudaWalker", "FastPlainWalker", "PlainWalker")}
    # `self.lookup[key] = element` in the constructor: the object's table holds the entries (was: the write dropped,
    # the table read as empty, and the fake id `[NOTSET]` emitted)
    assert {f"{FILE}::test_known_table[int]", f"{FILE}::test_known_table[str]"} <= set(got.tests)
    # filled from values the analysis cannot tell apart: a function-level key, never a guessed id
    assert got.function_only == got.not_collected == {f"{FILE}::test_drawn_table"}


def test_subclasses_at_import_do_not_run_the_importers(ids_vs_pytest) -> None:
    # base.py asks for Walker's subclasses at import, while mypkg.walks is half imported; kinds.py (which imports
    # Walker from the package) was run then, saw no Walker, and PlainWalker inherited nothing: `unknown`
    verdict = ids_vs_pytest(FILE).tests[f"{FILE}::test_inherited_device"]
    assert verdict.label == "cpu", verdict.reasons


def test_a_copy_made_from_kept_keywords_keeps_the_device(ids_vs_pytest) -> None:
    # `self._others[name] = val` over `sorted(kwargs.items())` in the constructor, `clone()` makes the copy from them:
    # the copy's `torch.zeros(1, device=device)` is on CUDA (was: the writes dropped, the copy made without the
    # device, a false CPU)
    tests = ids_vs_pytest(HELD).tests
    assert (tests[f"{HELD}::test_copy_on_cuda"].label, tests[f"{HELD}::test_copy_on_cuda"].gpu_count) == ("gpu", 1)
    assert tests[f"{HELD}::test_copy_on_the_cpu"].label == tests[f"{HELD}::test_no_keywords_kept"].label == "cpu"
    # `hasattr(val, "double")` of a device is False: the copy gets the device as it was
    assert tests[f"{HELD}::test_double_copy_on_cuda"].label == "gpu"
    assert tests[f"{HELD}::test_double_copy_on_the_cpu"].label == "cpu"


def test_ids_built_from_characters_and_indices(ids_vs_pytest) -> None:
    # `"abc"[i]`, `chr(i + 140)`, `sorted(set("ba"))`, `desugar[..., 0]` with ids=str, `if not inputs: return "()"`
    # in an `ids=` callable: exact (were: `symbol0`-style guesses and function-level keys)
    got = ids_vs_pytest(SYMBOLS)
    assert len(got.collected) == 14, got.output
    assert not got.function_only and not got.not_collected
    assert {f"{SYMBOLS}::test_symbols[\\xc8]", f"{SYMBOLS}::test_equations[a,abba,bcba->ab]",
            f"{SYMBOLS}::test_indices[(Ellipsis, 0)]", f"{SYMBOLS}::test_inputs[()1]"} <= set(got.tests)


@pytest.mark.parametrize(("src", "expected"), [
    ("kwargs", True),
    ("sorted(kwargs.items())", True),
    ("list(kwargs.keys())", True),
    ("sorted(other.items())", False),
    ("sorted(kwargs.items(), key=f)", False),
    ("helper(kwargs)", False),
])
def test_which_loops_read_the_calls_own_keywords(src: str, expected: bool) -> None:
    assert _own_dict_view(ast.parse(src, mode="eval").body, frozenset({"kwargs"})) is expected


def test_an_import_that_fails_one_module_down_takes_the_except_branch(ids_vs_pytest) -> None:
    # `from mypkg.lit_extras import ...` in a try: that module imports a package that is not installed, so Python
    # raises ImportError there and `MODULES = []` (pytest's `[NOTSET]`); was: the try body's names, unknown
    got = ids_vs_pytest("tests/round40/test_optional_extras.py")
    assert set(got.tests) == got.collected == {"tests/round40/test_optional_extras.py::test_extras[NOTSET]"}


def test_subclasses_are_read_from_class_statements() -> None:
    tree = ast.parse("from pkg.base import Base as B\n"
                     "import pkg\n"
                     "class A(B): pass\n"
                     "class G(pkg.base.Base[int]): pass\n"
                     "if True:\n    class C(B, object): pass\n"
                     "class Other(Unrelated): pass\n"
                     "def f():\n    class Local(B): pass\n")
    base = ClassV("pkg/base.py", (1, 0), "Base")
    assert sorted(c.name for c in _subclass_statements("pkg/m.py", tree, base)) == ["A", "C", "G"]
    assert ClassV("pkg/m.py", (3, 0), "A") in _subclass_statements("pkg/m.py", tree, base)


def test_a_walk_down_the_class_hierarchy_goes_on() -> None:
    fv = FuncV("m.py", (1, 0), "walk")
    a, b = ClassV("m.py", (5, 0), "A"), ClassV("m.py", (9, 0), "B")
    frames = Frames()
    shape = class_walk_shape(fv, [a], {"private": Const(True)})
    assert shape == class_walk_shape(fv, [b], {"private": Const(True)})
    assert class_walk_shape(fv, [Const("x")], {}) is None
    frames.push(("k",), fv, 2, shape)
    assert not frames.cut_recursion(fv, 2, class_walk_shape(fv, [b], {"private": Const(True)}))
    assert frames.cut_recursion(fv, 2, class_walk_shape(fv, [b], {"private": Const(False)}))  # other arguments
    assert frames.cut_recursion(fv, 2, None)  # not a walk of classes: not smaller, a cycle


@pytest.mark.parametrize(("src", "expected"), [
    ("cls.__subclasses__()", True),
    ("enumerate(xs)", True),
    ("xs", False),
    ("make()", False),
    ("cls.__subclasses__(x)", False),
])
def test_which_iterables_are_made_where_they_are_looped_over(src: str, expected: bool) -> None:
    assert _fresh_iterator(ast.parse(src, mode="eval").body) is expected
