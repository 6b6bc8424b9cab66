"""Round 9 (the big suites again): an unknown value whose truth is known, and parameter values that are one of
several things. The corpus files under tests/tools/classify/fixtures/repo/tests/round9 carry the idioms with
expected labels."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tools.classify.collect import UNKNOWN_ID, parametrize_cases
from tools.classify.devices import truth
from tools.classify.evidence import ALWAYS_SKIP_KEY, GPU, MARK_SKIP_KEY, SKIP, Finding, decide
from tools.classify.interp_external import UNKNOWN_NUMBER, _dict_of
from tools.classify.runner import run
from tools.classify.values import UNRESOLVED, Const, DictV, KnownTruth, Seq, Unresolved, join

CORPUS = Path(__file__).resolve().parent / "fixtures"
ROUND9 = "tests/round9"
IDS = f"{ROUND9}/test_param_ids.py"
# the files of this round checked here (test_classify_param_class_values.py checks the others)
FILES = [f"{ROUND9}/{name}" for name in (
    "test_bool_op_truth.py", "test_dict_contents.py", "test_disabled.py", "test_param_ids.py")]


def test_known_truth_is_unresolved_but_decides_a_test() -> None:
    v = KnownTruth(False)
    assert isinstance(v, Unresolved)  # every rule that needs the value still sees an unknown
    assert truth(v) is False
    assert truth(KnownTruth(True)) is True
    assert truth(UNRESOLVED) is None


def test_a_join_forgets_the_truth() -> None:
    # a value from another path may have either truth: the join is plainly unknown
    assert truth(join(KnownTruth(False), Const(True))) is None
    assert join(KnownTruth(False), KnownTruth(False)) == KnownTruth(False)


def test_ids_match_pytest_collect_only(tmp_path: Path) -> None:
    """A value one of two things whose ids differ (`Cls if flag else None`) has no id of its own: that case is
    left to the function-level key (was `<argname><index>`, an id pytest collects in neither case). A dict's
    keys, values and items, `dict(...)`, `collections.OrderedDict(...)` and `sum()` of numbers are enumerated
    (were function-level keys or guessed ids). A number made at run time (`x.item()`) is left to the
    function-level key while the cases no number can equal keep their ids (were `value2`, `value3`)."""
    corpus = tmp_path / "repo"
    shutil.copytree(CORPUS / "repo", corpus)
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "--rootdir", ".", *FILES],
        cwd=corpus, capture_output=True, text=True, env=env, timeout=120, check=False).stdout
    collected = {line.strip() for line in out.splitlines() if "::" in line}
    assert f"{IDS}::test_scheduler[MultiplicativeLR-kwargs1]" in collected, out
    result = run(corpus, paths=FILES, cache_dir=None)
    keys = {f"{rel}::{k}" for rel, r in result.files.items() for k in r.tests}
    assert keys - collected == {f"{IDS}::test_scheduler", f"{IDS}::test_either_list", f"{IDS}::test_item_values"}
    for name in ("test_summed[sizes0-5]", "test_dict_keys[sac]", "test_ordered_dict_values[subproc-space3]",
                 "test_dict_items[large-8]"):
        assert f"{IDS}::{name}" in keys
    assert {c for c in collected if c not in keys} == {
        # (round 15: `float32`, first in both lists, keeps its ids `dtype0-*`; `float64` may or may not be there)
        f"{IDS}::test_scheduler[MultiplicativeLR-kwargs1]", *(c for c in collected if "::test_either_list[dtype1" in c),
        f"{IDS}::test_item_values[1.0]", f"{IDS}::test_item_values[0.0]"}


def test_disabled_tests_run_nowhere() -> None:
    """A skip mark without a condition that no GPU world lifts: cpu whatever the body needs; one a GPU lifts
    (`pytest.mark.skip` chosen when CUDA is missing) stays a GPU requirement."""
    skip = Finding(SKIP, ("t.py:3: skip",), key=ALWAYS_SKIP_KEY + "t.py:3: skip")
    cuda = Finding(GPU, ("t.py:5: .cuda() needs a CUDA device",))
    v = decide([skip, cuda], {}, "t.py:4: no GPU use found")
    assert v.label == "cpu" and "never runs" in v.reasons[0]
    assert decide([skip, cuda], {skip.key: 1}, "t.py:4: no GPU use found").label == GPU
    conditional = Finding(SKIP, ("t.py:3: skipif(...)",), key=MARK_SKIP_KEY + "t.py:3: skipif(...)")
    assert decide([conditional, cuda], {}, "t.py:4: no GPU use found").label == GPU
    # a GPU requirement the author declared beside the skip (`@require_cuda_or_xpu` + `@skip(...)`) wins
    required = Finding(GPU, ("t.py:2: @require_cuda: needs CUDA",), key="requirement")
    assert decide([skip, required], {}, "t.py:4: no GPU use found").label == GPU
    assert decide([skip, conditional, cuda], {conditional.key: 1}, "t.py:4: no GPU use found").label == GPU


def test_unknown_number_keeps_ids_no_number_can_equal() -> None:
    """`x.item()` among the values: the other cases keep their ids unless one of them could be a number."""
    names = Const("value")
    ids = Seq((Const(None), UNKNOWN_NUMBER), "list")
    cases = parametrize_cases(names, Seq((Const("a b"), UNRESOLVED), "list"), ids)
    assert cases is not None and [c.id for c in cases] == ["a b", UNKNOWN_ID]
    # `10` could be what str() of the unknown number gives: pytest would then suffix both, so no ids at all
    assert parametrize_cases(names, Seq((Const(10), UNRESOLVED), "list"), ids) is None


def test_dict_of_known_pairs_only() -> None:
    """`dict(pairs, **kw)` / `OrderedDict(pairs)`: a later key wins; `**x` with x unknown leaves it unknown."""
    pairs = Seq((Seq((Const("a"), Const(1)), "tuple"), Seq((Const("a"), Const(2)), "tuple")), "list")
    assert _dict_of([pairs], {"b": Const(3)}) == DictV(((Const("a"), Const(2)), (Const("b"), Const(3))))
    assert isinstance(_dict_of([], {"a": Const(1), "**": UNRESOLVED}), Unresolved)
    assert isinstance(_dict_of([UNRESOLVED], {}), Unresolved)
