"""Round 34: fixture parameters join like arguments (Analyzer.joined_cases), and `request.param()` calls the
parameter (corpus tests/round34, run with pytest on CPU-only torch first)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tools.classify.analyzer import Analyzer
from tools.classify.modules import walk_python_files

Analyses = Callable[[str], dict[str, int]]  # conftest.analyses_per_test
PARAMS = "tests/round34/test_fixture_params.py"


def test_cases_of_many_fixture_parameters_are_settled_together(analyses_per_test: Analyses) -> None:
    counts = analyses_per_test(PARAMS)
    # `case` takes three dicts here (six on a machine with GPUs) x shift x scale: the CPU cases' first, then the
    # other 17 joined; the 12 cases of the ids a GPU machine collects with a CUDA dict, and its 18 new cases, one
    # analysis each (was: per dict, 11 analyses; case by case, 48)
    assert counts["test_case_dicts"] == 2 + 1 + 1


def test_a_run_across_fixture_parameters_that_fails_falls_back_to_one_run_per_parameter(
        analyses_per_test: Analyses) -> None:
    counts = analyses_per_test(PARAMS)
    # [_cpu_model, _small_model, _cuda_model] x n in 1..4: the first case, one run of the other eleven (it reaches
    # the CUDA builder), then per builder: _cpu_model's other three joined, _small_model's first and its other three,
    # _cuda_model's first finds the GPU use, so its other three are analysed each alone
    assert counts["test_distinct_builders"] == 1 + 1 + 1 + 2 + 1 + 3


def test_a_fixture_that_calls_its_parameter_runs_the_builder() -> None:
    # `request.param()` with params=[_cpu_model, ..., _cuda_model]: a false CPU before (the call was taken for a
    # method of the request)
    root = Path(__file__).resolve().parent / "fixtures" / "repo"
    tests = Analyzer(root, walk_python_files(root, [])).classify_file(PARAMS).tests
    cuda = tests["test_builders[_cuda_model]"]
    assert (cuda.label, cuda.gpu_count) == ("gpu", 1)
    assert any("calls _cuda_model()" in r for r in cuda.reasons)
    assert tests["test_builders[_cpu_model0]"].label == "cpu"
    assert {tests[f"test_distinct_builders[_cuda_model-{n}]"].label for n in range(1, 5)} == {"gpu"}


def test_a_test_whose_joins_lose_only_what_each_case_loses_is_joined(analyses_per_test: Analyses) -> None:
    counts = analyses_per_test(PARAMS)
    # four problems x n in 1..3, each join calling `run` on a marker the analysis cannot know; the first case alone
    # loses `run` at the same call, and so do p2-2, p3-3 and p4-1 (every other value), so since round 35 the join of
    # the other eleven settles them (round 34: two sets failed with nothing settled, then ten cases one by one;
    # JOIN_GIVE_UP is checked in test_classify_round35)
    assert counts["test_lost_in_every_join"] == 1 + 1 + 3
