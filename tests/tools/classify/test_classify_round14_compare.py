"""Round 14: a known container never equals a string, number or None (tools/classify/devices.py
`_container_vs_scalar`). bitsandbytes' tests compare the module's list of orders with a string (`if dims == 3 and
out_order != "col32": return`), so that branch returns on every machine; before, it was undecided and the CUDA call
after it counted for every case."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tools.classify.devices import _compare
from tools.classify.runner import run
from tools.classify.values import UNRESOLVED, Const, DictV, Seq


def test_early_return_on_a_list_compared_with_a_string(tmp_path: Path) -> None:
    (tmp_path / "test_x.py").write_text('''import pytest
import torch

out_order = ["col", "row", "col32"]


@pytest.mark.parametrize("dims", [2, 3])
def test_typo(dims):
    if dims == 3 and out_order != "col32":
        return
    torch.ones(1, device="cuda")


def test_dict_is_never_none():
    table = {"a": 1}
    if table == None:  # noqa: E711
        torch.ones(1).cuda()
''')
    tests = run(tmp_path, paths=["test_x.py"], cache_dir=None).files["test_x.py"].tests
    assert {k: v.label for k, v in tests.items()} == {
        "test_typo[2]": "gpu", "test_typo[3]": "cpu", "test_dict_is_never_none": "cpu"}


@pytest.mark.parametrize(("a", "b", "equal"), [
    (Seq((Const("col"),), "list"), Const("col"), False),
    (Const(3), Seq((Const(3),), "tuple"), False),
    (DictV(()), Const(None), False),
    (Seq((UNRESOLVED,), "list"), Const(""), False),  # whatever the items are
])
def test_container_vs_scalar(a, b, equal: bool) -> None:
    assert _compare(ast.Eq(), a, b) == Const(equal)
    assert _compare(ast.NotEq(), a, b) == Const(not equal)


def test_unknown_or_container_pairs_stay_as_before() -> None:
    assert _compare(ast.Eq(), UNRESOLVED, Const("col")) == UNRESOLVED
    assert _compare(ast.Eq(), Seq((Const(1),), "list"), Seq((Const(1),), "list")) == Const(True)
