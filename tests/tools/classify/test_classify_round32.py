"""Round 32: one analysis for many parametrizations (Analyzer.joined_cases; corpus tests/round32, each file run with
pytest on CPU-only torch first)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from tools.classify.analyzer import Analyzer, _joinable_chunks
from tools.classify.modules import is_test_file, walk_python_files
from tools.classify.values import UNRESOLVED, Const

Analyses = Callable[[str], dict[str, int]]  # conftest.analyses_per_test
CORPUS = Path(__file__).resolve().parent / "fixtures" / "repo"
CHOSEN = "tests/round32/test_chosen_by_parameters.py"
VALUES = "tests/round32/test_joined_values.py"
DEVICE_LISTS = "tests/round32/test_device_lists.py"
MANY = "tests/round32/test_many_cpu_cases.py"


def _results(root: Path, join_cases: bool) -> dict[str, object]:
    files = walk_python_files(root, [])
    an = Analyzer(root, files, join_cases=join_cases)
    return {rel: (r.torch, r.error, r.tests) for rel in files if is_test_file(rel.rsplit("/", 1)[-1])
            for r in [an.classify_file(rel)]}


def test_corpus_results_are_identical_with_and_without_joined_cases() -> None:
    # labels, counts and reasons of every test of the corpus, its round32 batteries too (a GPU case among CPU ones
    # chosen through a dict, getattr, a class, a lambda, a partial, import_module...)
    assert _results(CORPUS, True) == _results(CORPUS, False)


def test_cases_that_find_nothing_are_settled_together(analyses_per_test: Analyses) -> None:
    counts = analyses_per_test(MANY)
    # the first case on its own, then the others joined
    assert counts["test_all_cpu"] == 1 + 1  # 3 cases
    assert counts["test_all_cpu_two"] == 1 + 1  # 6 cases, two arguments
    assert counts["test_many_cpu"] == 2 + 2  # 12 values of one argument: at most 8 join without loss


def test_a_group_that_finds_or_loses_something_is_analysed_case_by_case(analyses_per_test: Analyses) -> None:
    counts = analyses_per_test(CHOSEN)
    # the first case (CpuModel) finds nothing; the join of the others reaches CudaModel: each on its own
    assert counts["test_class_param"] == 1 + 1 + 2
    # ["small", "large", "cuda"]: "cuda" names an accelerator, so it is not joined, and two cases are too few
    assert counts["test_dict_dispatch"] == 3
    # `importlib.import_module(mod)` of two module names, then `m.build_cuda()`: the module is not computed from the
    # join, and calling what it holds is a loss (a false CPU before losses counted)
    assert counts["test_import_module"] == 1 + 1 + 3


def test_runs_of_cases_join_at_most_eight_values_each_and_an_unresolved_one_only_with_itself() -> None:
    directs = [{"a": Const(i % 10), "b": Const("x")} for i in range(12)]
    assert _joinable_chunks(directs, ("a", "b")) == [list(range(8)), [8, 9, 10, 11]]
    directs[3] = {"a": UNRESOLVED, "b": Const("x")}
    assert _joinable_chunks(directs, ("a", "b")) == [[0, 1, 2], [3], [4, 5, 6, 7, 8, 9, 10, 11]]
    assert _joinable_chunks([{}, {}, {}], ()) == [[0, 1, 2]]
    # (round 35) an argument unknown alike in every case of a run is bound as each case's analysis binds it
    unknown_b = [{"a": Const(i), "b": UNRESOLVED} for i in range(4)]
    assert _joinable_chunks(unknown_b, ("a", "b")) == [[0, 1, 2, 3]]


def test_cpu_cases_of_a_device_parametrization_join_apart_from_cuda_ones(analyses_per_test: Analyses) -> None:
    counts = analyses_per_test(VALUES)
    # n in [1, 2, 3] x dev in ["cpu", "cuda"]: the first CPU case, then the two others joined; the first CUDA case
    # finds the GPU use, so the other two are not joined but analysed each on its own
    assert counts["test_product"] == 1 + 1 + 3


def test_cases_only_a_gpu_machine_collects_are_analysed_together(analyses_per_test: Analyses) -> None:
    counts = analyses_per_test(DEVICE_LISTS)
    # DEVICES gains "cuda" with a GPU: [cuda-1] ... [cuda-4] need it, and one analysis of them together finds
    # nothing that needs more; the CPU cases: the first, then the others joined
    assert counts["test_sizes"] == 2 + 1
    # the CUDA cases reach "cuda:1": joined, that is a need of two GPUs, more than the one the cases exist with, so
    # each is analysed on its own (and needs two)
    assert counts["test_second_gpu"] == 2 + 1 + 3


def test_a_choice_prints_the_same_whatever_the_hash_seed() -> None:
    # alternatives are ordered by their repr (OneOf.ordered), and a frozenset prints in hash order: a choice nested
    # in another value (an object's attribute) ordered the outer choice differently per PYTHONHASHSEED, and with it
    # which of liger-kernel's kernel implementations the analysis followed first (reasons differed between runs)
    code = ("from tools.classify.values import Const, Inst, OneOf, ClassV\n"
            "c = ClassV('m.py', (1, 0), 'C')\n"
            "inner = OneOf(frozenset(Const(s) for s in ('triton', 'cutile', 'cutedsl', 'ascend', 'torch')))\n"
            "outer = OneOf(frozenset({Inst(c, (('impl', inner),)), Inst(c, (('impl', Const('x')),))}))\n"
            "print(repr(inner)); print(outer.ordered())\n")
    root = Path(__file__).resolve().parents[3]
    printed = {subprocess.run([sys.executable, "-c", code], cwd=root, env={**os.environ, "PYTHONHASHSEED": seed},
                              capture_output=True, text=True, check=True).stdout for seed in ("1", "2", "3", "15")}
    assert len(printed) == 1
    assert "Const(value='ascend'), Const(value='cutedsl')" in printed.pop()
