"""Round 36: code chosen by name from a namespace (`globals()[...]`, `vars(module)[...]`, `Cls.__dict__[...]`,
`locals()[...]`, `eval(text)`) and from a table of names longer than a join holds (corpus tests/round36, run with
pytest on CPU-only torch first; labels in fixtures/expected.json)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tools.classify.analyzer import Analyzer
from tools.classify.interp_base import DYNAMIC, chosen_by_name
from tools.classify.modules import walk_python_files
from tools.classify.values import MAX_ALTERNATIVES, MAX_NAMES, ClassV, Const, Ext, OneOf, choice_of_names

TABLES = "tests/round36/test_name_tables.py"


@pytest.fixture(scope="module")
def tables() -> dict[str, object]:
    root = Path(__file__).resolve().parent / "fixtures" / "repo"
    return Analyzer(root, walk_python_files(root, [])).classify_file(TABLES).tests


def test_a_table_of_class_names_longer_than_a_join_is_followed(tables) -> None:
    # ten schemes; the analysis cannot tell which urlparse() gives, so every class the table names is called
    for name in ("test_pinned_chosen_by_scheme", "test_global_pinned_chosen_by_scheme"):
        assert tables[name].label == "gpu"
        assert any("Pinned.__init__()" in r and "pin_memory" in r for r in tables[name].reasons)
    for name in ("test_writer_chosen_by_scheme", "test_global_writer_chosen_by_scheme"):
        assert tables[name].label == "cpu"


def test_a_namespace_read_by_name_is_not_dropped(tables) -> None:
    # each was a call of an unknown value, not followed: a false CPU
    for name in ("test_global_by_constant_name", "test_global_by_get_name", "test_module_dict", "test_locals_on_gpu",
                 "test_class_namespace", "test_eval_on_gpu"):
        assert (tables[name].label, tables[name].gpu_count) == ("gpu", 1), name
    for name in ("test_global_by_get_default", "test_vars_of_module", "test_locals_on_cpu", "test_eval_on_cpu",
                 "test_top_level_globals"):
        assert tables[name].label == "cpu", name


def test_a_name_past_every_bound_is_a_dynamic_dispatch(tables) -> None:
    verdict = tables["test_global_over_many_names"]
    assert verdict.label == "unknown"
    assert "globals() looked up by a computed name: dynamic dispatch" in verdict.reasons[-1]


def test_a_choice_of_names_keeps_more_than_a_join() -> None:
    classes = [ClassV("mypkg/a.py", (i, 0), f"C{i}") for i in range(MAX_ALTERNATIVES + 2)]
    got = choice_of_names(classes)
    assert isinstance(got, OneOf) and got.alts == frozenset(classes)
    assert choice_of_names([Const(f"n{i}") for i in range(MAX_NAMES + 1)]) is None
    assert choice_of_names([Const(1), Const("a")]) is None  # (a number is no name: the join's bound applies)
    assert choice_of_names([Const("a"), Const("a")]) == Const("a")


def test_a_choice_past_its_bound_is_called_as_a_dynamic_dispatch() -> None:
    many = [Const(i) for i in range(MAX_ALTERNATIVES + 1)]
    got = chosen_by_name(many, "mypkg/a.py", 7, "getattr(self, ...)")
    assert isinstance(got, Ext) and got.path.startswith(DYNAMIC)
    assert "mypkg/a.py:7: getattr(self, ...) over 9 names: dynamic dispatch" in got.path
    assert chosen_by_name([Const(1), Const(2)], "mypkg/a.py", 7, "x") == OneOf(frozenset({Const(1), Const(2)}))


def test_protocols_of_in_repo_objects_are_followed() -> None:
    # a wrapper's `__getattr__` and a container's `__iter__` (returned iterator or generator): a call of an unknown
    # value before, so the CUDA runner behind them was dropped (false CPUs)
    root = Path(__file__).resolve().parent / "fixtures" / "repo"
    tests = Analyzer(root, walk_python_files(root, [])).classify_file("tests/round36/test_protocols.py").tests
    assert {k for k, v in tests.items() if v.label == "gpu"} == {
        "test_forwarded_on_gpu", "test_pool_on_gpu", "test_generated_pool_on_gpu", "test_module_forwards_on_gpu"}
    assert any("calls go()" in r for r in tests["test_forwarded_on_gpu"].reasons)
    assert tests["test_own_method"].label == "cpu"  # (the wrapper's own method: no forwarding)
    # a torch module's `__getattr__`: `super().__getattr__(name)` raises for a name the object lacks, and the
    # handler forwards; `eval()` is torch's own and never reaches the hook
    assert tests["test_module_own_methods"].label == "cpu"
