"""Round 33: a joined analysis (Analyzer.joined_cases) is not stopped by unknowns that are the same in every case it
stands for (values.Opaque; corpus tests/round33, each file run with pytest on CPU-only torch first). The whole
corpus gives the same verdicts with and without joined analyses (test_classify_round32)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tools.classify.analyzer import Analyzer, _joinable_chunks, _joined_argument
from tools.classify.modules import walk_python_files
from tools.classify.values import (
    OPAQUE,
    UNKNOWN_SCALAR,
    UNRESOLVED,
    ClassV,
    Const,
    Inst,
    OneOf,
    TensorV,
    case_invariant,
)

Analyses = Callable[[str], dict[str, int]]  # conftest.analyses_per_test
CORPUS = Path(__file__).resolve().parent / "fixtures" / "repo"
UNKNOWN_PARAMETERS = "tests/round33/test_unknown_parameters.py"


def test_an_argument_unknown_in_every_case_joins(analyses_per_test: Analyses) -> None:
    counts = analyses_per_test(UNKNOWN_PARAMETERS)
    # `part` (operator.attrgetter objects) is unknown in all 6 cases and is called: the first case, then the others
    # joined (case by case before: an unknown argument ended every run, and calling an unknown was a loss)
    assert counts["test_unknown_callable"] == 1 + 1
    # a helper that calls what it cannot compute with the same arguments in every case: 4 cases, 2 analyses
    assert counts["test_helper_calls_what_it_cannot_compute"] == 1 + 1
    # the helper is given the case's own module name: the join (json or tomllib) loses `loads`, which in-repo code
    # defines, so the cases are analysed one by one after the failed join
    assert counts["test_helper_given_the_case_value"] == 1 + 1 + 2
    # the join of "host2" and "accelerator" finds the skip: each case on its own, and the two skipped ones again
    # with a GPU (how many it takes)
    assert counts["test_unknown_callable_some_on_gpu"] == 1 + 1 + 5 + 2


def test_runs_may_hold_an_argument_unknown_in_all_their_cases() -> None:
    directs = [{"a": UNRESOLVED, "b": Const(i)} for i in range(4)]
    assert _joinable_chunks(directs, ("a", "b")) == [[0, 1, 2, 3]]
    # a switch between unknown and known values starts a new run; an unknown of a kind a join forgets (a text
    # computed from an unknown) ends the run
    directs[2] = {"a": Const(1), "b": Const(2)}
    assert _joinable_chunks(directs, ("a", "b")) == [[0, 1], [2], [3]]
    directs[1] = {"a": UNKNOWN_SCALAR, "b": Const(1)}
    assert _joinable_chunks(directs, ("a", "b")) == [[0], [2], [3]]
    assert _joined_argument([UNRESOLVED, UNRESOLVED]) == OPAQUE
    assert isinstance(_joined_argument([Const(1), Const(2)]), OneOf)


def test_a_value_is_case_invariant_when_nothing_in_it_is_a_choice_or_an_unknown() -> None:
    cls = ClassV("m.py", (1, 0), "C")
    assert case_invariant(Const("x")) and case_invariant(TensorV("cpu")) and case_invariant(OPAQUE)
    assert case_invariant(Inst(cls, (("w", TensorV("cpu")), ("k", OPAQUE))))
    assert not case_invariant(UNRESOLVED) and not case_invariant(UNKNOWN_SCALAR)
    assert not case_invariant(OneOf(frozenset({Const(1), Const(2)})))
    assert not case_invariant(Inst(cls, (("w", UNRESOLVED),)))
    # a text that only spells a choice is still a constant
    assert case_invariant(Const("OneOf is a word"))


def test_only_joined_analyses_make_opaque_unknowns() -> None:
    # a case's own analysis keeps UNRESOLVED: the contexts of its summaries (memo keys) stay what they were
    files = walk_python_files(CORPUS, [])
    alone = Analyzer(CORPUS, files, join_cases=False)
    assert alone.classify_file(UNKNOWN_PARAMETERS).error is None
    assert not any("Opaque()" in repr(key) or "Opaque()" in repr(r.value) for key, r in alone.interp.calls.items())
    joined = Analyzer(CORPUS, files)
    assert joined.classify_file(UNKNOWN_PARAMETERS).error is None
    assert not joined.interp.joining
    # (`plain_ones(n)` with `n = int(part(3 + 0j)) or 3` of an unknown `part`: a summary of an opaque argument)
    assert any("Opaque()" in repr(key) or "Opaque()" in repr(r.value) for key, r in joined.interp.calls.items())


def test_a_nan_value_names_the_same_case_on_both_machines() -> None:
    # `float("nan")` evaluated in each world is not equal to itself: the CPU case of `[nan-cpu]` was taken for
    # another case on a machine with GPUs (found by a repeated list of NaNs in timm's tests/test_multilabel.py)
    result = Analyzer(CORPUS, walk_python_files(CORPUS, [])).classify_file("tests/round33/test_nan_values.py")
    tests = result.tests
    assert tests["test_nan_on_each_device[nan-cpu]"].label == "cpu"
    assert tests["test_nan_on_each_device[nan-cuda]"].label == "gpu"
