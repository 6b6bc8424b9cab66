"""Round 35: a joined analysis is judged by where it lost code (Analyzer.code_lost): a loss at a site where the
analysis of the run's first case alone, and of cases showing every other value, lost too does not stop the join
(corpus tests/round35, run with pytest on CPU-only torch first; a loss every case meets: test_classify_round34's
test_lost_in_every_join)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tools.classify.analyzer import Analyzer
from tools.classify.interp_base import CALLED_UNRESOLVED, lost_entry, lost_name
from tools.classify.modules import walk_python_files

Analyses = Callable[[str], dict[str, int]]  # conftest.analyses_per_test
LOSSES = "tests/round35/test_join_losses.py"


def _tests(rel: str) -> dict[str, object]:
    root = Path(__file__).resolve().parent / "fixtures" / "repo"
    return Analyzer(root, walk_python_files(root, [])).classify_file(rel).tests


def test_a_loss_one_value_makes_is_seen_by_the_case_of_another() -> None:
    # `importlib.import_module(mod)`: "mypkg" has no `build_cuda`, so the first case alone calls what it cannot
    # resolve at the same call as the join does; the case of "mypkg.joined_zoo" alone follows build_cuda, so the
    # join settles nothing (taking the first case's loss for every case's was a false CPU)
    tests = _tests("tests/round32/test_chosen_by_parameters.py")
    labels = {k: v.label for k, v in tests.items() if k.startswith("test_import_module[")}
    assert labels == {"test_import_module[1-mypkg]": "cpu", "test_import_module[1-mypkg.joined_zoo]": "gpu",
                      "test_import_module[2-mypkg]": "cpu", "test_import_module[2-mypkg.joined_zoo]": "gpu"}


def test_a_loss_the_join_made_still_sends_cases_to_runs_of_their_own(analyses_per_test: Analyses) -> None:
    counts = analyses_per_test(LOSSES)
    # getattr(module, problem.upper()): the first case finds its class, the join of the other names does not; one
    # run per problem then shares the name: the first case, the failed run of eleven, then per problem a run
    # (plain's first case is analysed already) or a first case and a run
    assert counts["test_loss_made_by_the_join"] == 1 + 1 + 1 + 3 * 2
    # a name of both parameters: each problem's run joins `n` and loses it; after two failed with nothing settled,
    # the rest one by one (JOIN_GIVE_UP)
    assert counts["test_join_loses_in_every_set"] == 1 + 1 + 1 + 2 + 10


def test_a_join_that_loses_a_cuda_case_leaves_it_gpu() -> None:
    tests = _tests(LOSSES)
    labels = {k: v.label for k, v in tests.items() if k.startswith("test_loss_made_by_the_join_hides_cuda[")}
    assert {k for k, v in labels.items() if v == "gpu"} == {
        f"test_loss_made_by_the_join_hides_cuda[on_gpu-{n}]" for n in (1, 2, 3)}
    assert set(labels.values()) == {"cpu", "gpu"} and len(labels) == 12


def test_lost_entries_name_their_site() -> None:
    class Node:
        lineno, col_offset = 12, 4

    entry = lost_entry("run", "tests/test_a.py", Node())  # type: ignore[arg-type]
    assert entry == "run@tests/test_a.py:12:4"
    assert lost_name(entry) == "run"
    assert lost_name(lost_entry(CALLED_UNRESOLVED, "a.py", None)) == CALLED_UNRESOLVED
