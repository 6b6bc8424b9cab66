"""Round 12: modules printed in ids (tests/tools/classify/fixtures/repo/tests/round12_modules). The node ids the
classifier gives equal `pytest --collect-only -q`'s: in-repo torch.nn.Module subclasses print as torch prints them, a
problem list filled by a loop over 70 settings is known, and `isinstance`/`hasattr`/`.bias is not None` of torch.nn
modules filter it. Modules whose text the analysis does not model keep function-level keys (never a guessed id);
moving an in-repo module to CUDA is still a GPU use. The torch facts the rules read are checked against torch in
test_nn_modules_table.py."""

from __future__ import annotations

from tools.classify.devices import spelled
from tools.classify.values import UNRESOLVED, ClassV, Const, Inst, NNModV, Seq, TensorV

ROUND12 = "tests/round12_modules"
FILE = f"{ROUND12}/test_module_ids.py"
UNPRINTED = {f"{FILE}::{name}" for name in (
    "test_extra_repr_not_modelled", "test_add_module_name_not_known", "test_module_changed_after_it_was_built")}


def test_ids_match_pytest_collect_only(ids_vs_pytest) -> None:
    got = ids_vs_pytest(ROUND12)
    collected, tests = got.collected, got.tests
    assert len(collected) == 83, got.output
    # every collected id is a key, or belongs to one of the tests whose ids cannot be printed
    assert got.function_only == got.not_collected == UNPRINTED
    assert sum(1 for c in collected if c.startswith(f"{FILE}::test_problem[")) == 70
    assert f"{FILE}::test_problem[dev=cpu-in=(1,2,3)-PaddedBlock(\\n(conv):Conv1d(2,2,kernel_size=(3,),stride=(1,)," \
           "padding=(1,))\\n(act):Tanh()\\n(pad):Pad()\\n)]" in tests
    assert len([k for k in tests if k.startswith(f"{FILE}::test_loss[")]) == 2
    assert len([k for k in tests if k.startswith(f"{FILE}::test_bias[")]) == 3
    gpu = {k for k, v in tests.items() if v.label == "gpu"}
    assert gpu == {f"{FILE}::test_in_repo_module_moved_to_cuda[Pad()]"}


PAD = ClassV("m.py", (1, 0), "Pad")
LINEAR = NNModV("Linear", (("in_features", Const(2)), ("out_features", Const(3)), ("bias", Const(True))))


def test_in_repo_module_prints_children_in_the_order_they_were_set() -> None:
    """Attributes that are not modules are not printed; children are, in the order first set."""
    m = Inst(PAD, nn=()).with_attr("scale", Const(2)).with_attr("fc", LINEAR).with_attr("act", Inst(PAD, nn=()))
    assert spelled(m) == "Pad(\n  (fc): Linear(in_features=2, out_features=3, bias=True)\n  (act): Pad()\n)"
    assert spelled(Inst(PAD, nn=()).with_attr("pad", Seq((Const(1),), "tuple"))) == "Pad()"


def test_in_repo_module_with_an_attribute_of_unknown_kind_is_not_printed() -> None:
    """An unknown value may be a module (a child torch would print): the text is unknown, and stays unknown after
    the attribute is set again."""
    m = Inst(PAD, nn=()).with_attr("inner", UNRESOLVED)
    assert m.nn is None and spelled(m) is None
    assert spelled(m.with_attr("inner", Const(1))) is None


def test_attribute_changed_between_module_and_not_is_not_printed() -> None:
    """torch moves a name set first to a plain value, then to a module, to the end of its children: the order the
    analysis keeps would differ, so the module is not printed."""
    m = Inst(PAD, nn=()).with_attr("a", Const(1)).with_attr("b", LINEAR).with_attr("a", LINEAR)
    assert m.nn is None and spelled(m) is None
    assert spelled(Inst(PAD, nn=()).with_attr("a", LINEAR).with_attr("a", LINEAR)) is not None


def test_a_plain_object_never_prints() -> None:
    assert spelled(Inst(PAD)) is None
    assert spelled(Inst(PAD, nn=()).moved("cuda")) == "Pad()"  # a moved module prints the same
    assert spelled(TensorV("cpu")) is None
