"""Parametrize ids match what pytest prints."""

from __future__ import annotations

from tools.classify.collect import dedupe_ids, idval, parametrize_cases
from tools.classify.values import Const, Ext, ParamV, Seq


def test_literal_ids() -> None:
    vals = Seq((Const("a"), Const(1.5), Const(None), Const(True), Ext("torch.float32"), Const("é"), Const(-1)))
    cases = parametrize_cases(Const("v"), vals, None)
    assert [c.id for c in cases] == ["a", "1.5", "None", "True", "v4", "\\xe9", "-1"]


def test_duplicates_and_explicit_ids() -> None:
    assert dedupe_ids(["a", "a", "b"]) == ["a0", "a1", "b"]
    assert dedupe_ids(["x1", "x1"]) == ["x1_0", "x1_1"]
    vals = Seq((Seq((Const(1), Const(2))), ParamV((Const(3), Const(4)), (), "custom"), ParamV((Const(5), Const(6)))))
    cases = parametrize_cases(Const("p,q"), vals, Seq((Const("i1"), Const(None), Const("i3"))))
    assert [c.id for c in cases] == ["i1", "custom", "i3"]


def test_names_and_empty() -> None:
    assert idval(Ext("builtins.int"), "v", 0) == "int"
    assert [c.id for c in parametrize_cases(Const("v"), Seq(()), None)] == ["NOTSET"]
