"""Round 12: calls through registries (docs/classification.md). A dict or list of known values indexed by a key
the analysis cannot decide is the join of its values, so a method called on it is analysed for every candidate;
an unknown entry with an accelerator passed as its device is a GPU need. The corpus fixture
(fixtures/repo/tests/round12_calls) checks the labels; these tests check the edges."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tools.classify.interp_calls import _mutate_dict
from tools.classify.runner import run
from tools.classify.values import (
    MAX_ALTERNATIVES,
    MAX_NAMES,
    UNRESOLVED,
    ClassV,
    Const,
    DictV,
    OneOf,
    Seq,
    undecided_entry,
)

A = ClassV("pkg.py", (1, 0), "A")
B = ClassV("pkg.py", (5, 0), "B")
TABLE = DictV(((Const("a"), A), (Const("b"), B)))


def _labels(tmp_path: Path, pkg: str, test: str) -> dict[str, str]:
    (tmp_path / "tests").mkdir()
    (tmp_path / "pkg.py").write_text(textwrap.dedent(pkg))
    (tmp_path / "tests" / "test_it.py").write_text(textwrap.dedent(test))
    result = run(tmp_path, cache_dir=None, workers=1)
    return {k: v.label for r in result.files.values() for k, v in r.tests.items()}


def test_an_undecided_key_selects_any_entry() -> None:
    assert undecided_entry(TABLE, UNRESOLVED) == OneOf(frozenset({A, B}))
    assert undecided_entry(Seq((A, B), "list"), UNRESOLVED) == OneOf(frozenset({A, B}))
    # a choice of keys is undecided too, and selects the entries of the keys it may be (round 30: "c" is a
    # KeyError); `.get(key, default)` may also give the default
    assert undecided_entry(TABLE, OneOf(frozenset({Const("a"), Const("c")}))) == A
    assert undecided_entry(TABLE, OneOf(frozenset({Const("a"), Const("b")}))) == OneOf(frozenset({A, B}))
    assert undecided_entry(DictV(((Const("a"), A),)), UNRESOLVED, Const(None)) == OneOf(frozenset({A, Const(None)}))


def test_a_decided_key_is_left_to_the_exact_lookup() -> None:
    assert undecided_entry(TABLE, Const("c")) is None  # a KeyError, not any entry
    assert undecided_entry(Seq((A, B), "list"), Const(5)) is None
    # ... unless the dict has a key the analysis does not know, which the constant may equal (not "b")
    assert undecided_entry(DictV(((UNRESOLVED, A), (Const("b"), B))), Const("c")) == A


def test_slices_empty_containers_and_other_values_are_not_entries() -> None:
    assert undecided_entry(Seq((A, B), "list"), Seq((Const(None), Const(None), Const(None)), "slice")) is None
    assert undecided_entry(DictV(()), UNRESOLVED) is None
    assert undecided_entry(UNRESOLVED, UNRESOLVED) is None
    assert undecided_entry(Const("ab"), UNRESOLVED) is None


def test_the_join_is_bounded_never_a_subset() -> None:
    many = DictV(tuple((Const(i), Const(i * 10)) for i in range(MAX_ALTERNATIVES + 1)))
    assert undecided_entry(many, UNRESOLVED) == UNRESOLVED
    # names of code (a table of class names) are kept up to their own bound (round 36), and no further
    names = DictV(tuple((Const(i), Const(f"v{i}")) for i in range(MAX_NAMES + 1)))
    assert undecided_entry(names, UNRESOLVED) == UNRESOLVED
    assert undecided_entry(DictV(names.items[:MAX_ALTERNATIVES + 1]), UNRESOLVED) == OneOf(frozenset(
        v for _, v in names.items[:MAX_ALTERNATIVES + 1]))
    assert undecided_entry(DictV(((Const("a"), A), (Const("b"), UNRESOLVED))), UNRESOLVED) == UNRESOLVED


PKG = """
    def to_cuda(x, device="cuda"):
        return x.to(device)


    def keep(x, device="cuda"):
        return x


    REG = {"a": to_cuda, "b": keep}
    CPU_ONLY = [keep, keep]


    def by_key(x, key, device="cuda"):
        return REG[key](x, device=device)


    def by_get(x, key):
        return REG.get(key, keep)(x)


    def cpu_only(x, key):
        return CPU_ONLY[len(key)](x)


    def unknown_table(x, key, table):
        return table[key].run(x, device="cuda")


    def unknown_table_cpu(x, key, table):
        return table[key].run(x, device="cpu")
"""

TEST = """
    import os

    import torch

    from pkg import by_get, by_key, cpu_only, unknown_table, unknown_table_cpu


    def test_key():
        by_key(torch.zeros(1), os.environ["KEY"])


    def test_key_cpu():
        by_key(torch.zeros(1), os.environ["KEY"], device="cpu")


    def test_get():
        by_get(torch.zeros(1), os.environ["KEY"])


    def test_cpu_only():
        cpu_only(torch.zeros(1), os.environ["KEY"])


    def test_unknown_table():
        unknown_table(torch.zeros(1), "a", os.environ)


    def test_unknown_table_cpu():
        unknown_table_cpu(torch.zeros(1), "a", os.environ)
"""


def test_calls_through_registries_keep_every_candidate(tmp_path: Path) -> None:
    assert _labels(tmp_path, PKG, TEST) == {
        "test_key": "gpu", "test_key_cpu": "cpu", "test_get": "gpu", "test_cpu_only": "cpu",
        "test_unknown_table": "gpu", "test_unknown_table_cpu": "cpu"}


def test_pop_of_a_known_dict_keeps_it_known() -> None:
    kwargs = DictV(((Const("model"), Const(None)), (Const("device"), Const("cuda"))))
    # a present key: its value, and the entry goes
    assert _mutate_dict(kwargs, "pop", [Const("model"), Const("x")], {}) == (
        DictV(((Const("device"), Const("cuda")),)), Const(None))
    # an absent key: the default, the dict unchanged
    assert _mutate_dict(kwargs, "pop", [Const("dtype"), Const("cpu")], {}) == (kwargs, Const("cpu"))
    # not known exactly: an absent key without a default (a KeyError), an unknown key, an unknown key of the dict
    assert _mutate_dict(kwargs, "pop", [Const("dtype")], {}) is None
    assert _mutate_dict(kwargs, "pop", [UNRESOLVED, Const("cpu")], {}) is None
    assert _mutate_dict(DictV(((UNRESOLVED, Const("cuda")),)), "pop", [Const("device"), Const("cpu")], {}) is None
    assert _mutate_dict(kwargs, "pop", [], {}) is None
