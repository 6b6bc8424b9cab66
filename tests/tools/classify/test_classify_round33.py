"""Round 33 (corpus tests/round33, each file run with pytest on CPU-only torch first): a NaN among the values of a
parametrization that grows on a machine with GPUs, and parametrized tests whose values the analysis cannot compute,
which it analyses case by case (an experiment that joined them was measured and not kept: docs/classification.md
"Round 33"). The whole corpus gives the same verdicts with and without joined analyses (test_classify_round32)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tools.classify.analyzer import Analyzer
from tools.classify.modules import walk_python_files

Analyses = Callable[[str], dict[str, int]]  # conftest.analyses_per_test
CORPUS = Path(__file__).resolve().parent / "fixtures" / "repo"


def test_a_nan_value_names_the_same_case_on_both_machines() -> None:
    # `float("nan")` evaluated in each world is not equal to itself: the CPU case of `[nan-cpu]` was taken for
    # another case on a machine with GPUs (found by a repeated list of NaNs in timm's tests/test_multilabel.py)
    result = Analyzer(CORPUS, walk_python_files(CORPUS, [])).classify_file("tests/round33/test_nan_values.py")
    tests = result.tests
    assert tests["test_nan_on_each_device[nan-cpu]"].label == "cpu"
    assert tests["test_nan_on_each_device[1.0-cpu]"].label == "cpu"
    assert tests["test_nan_on_each_device[nan-cuda]"].label == "gpu"


def test_unknown_parameter_values_and_losses_in_joined_runs(analyses_per_test: Analyses) -> None:
    counts = analyses_per_test("tests/round33/test_unknown_parameters.py")
    # (round 35) an argument unknown alike in every case is bound as each case's analysis binds it: the first case,
    # the join of the other five (it calls `part` where the first case does), then cases of factor 2 and 3 alone,
    # which call it there too (round 33: it ended each run, 6 cases, 6 analyses)
    assert counts["test_unknown_callable"] == 1 + 1 + 2
    # `torch.tensor(float(config))` of unknown configs: the first case, the join of the five others (nothing lost)
    assert counts["test_unknown_object_moved"] == 1 + 1
    # a helper that calls what it cannot compute loses code: the first case, the join; telling that loss from one
    # the join made would take a case of each other factor alone, more than half the run (JOIN_COVER_SHARE), so the
    # 3 others one by one
    assert counts["test_helper_calls_what_it_cannot_compute"] == 1 + 1 + 3
