"""Pathological code must not stall the classifier: values are bounded, work is budgeted (deterministically).

torchsde's Brownian trees (objects nesting objects that share subtrees) made memo keys exponentially large;
exponential call fan-out and huge literals are the other ways real code makes a static interpreter work
without end. Each case here must finish in a couple of seconds, and what cannot be analysed within the budget
is `unknown` with the reason, never a guess.
"""

from __future__ import annotations

import time

import pytest

from tools.classify import analyzer, interp_calls
from tools.classify.runner import run
from tools.classify.values import (
    MAX_VALUE_DEPTH,
    MAX_VALUE_NODES,
    UNRESOLVED,
    ClassV,
    Const,
    Inst,
    Seq,
    bounded,
    size_of,
)

TREE = '''
import torch


class Node:
    def __init__(self, depth, left=None, right=None):
        self.depth = depth
        self.left = left
        self.right = right
        self.parts = [left, right, (left, right)]


def build(depth):
    if depth == 0:
        return Node(0)
    child = build(depth - 1)
    return Node(depth, child, child)


def walk(node, depth):
    if depth == 0:
        return node
    return walk(node.left, depth - 1)


def test_brownian_like_tree():
    tree = build(10)
    walk(tree, 10)
    torch.zeros(3)


def test_tree_then_cuda():
    tree = build(10)
    torch.zeros(3).to("cuda")
'''

FANOUT = '''
import torch


def fan(n, path, device="cpu"):  # a device parameter: not provably inert, so it is interpreted
    if n == 0:
        return path
    return (fan(n - 1, path + "a", device), fan(n - 1, path + "b", device), fan(n - 1, path + "c", device))


def test_fanout():
    fan(20, "")


def test_cheap_after_fanout():
    torch.ones(2)


def test_cheap_cuda_after_fanout():
    torch.ones(2, device="cuda")
'''

LOOPS = '''
import torch

SIDES = list(range(16))


def spin(device="cpu"):  # 16**5 unrolled iterations of its own: past a small budget however it is reached
    out = []
    for a in SIDES:
        for b in SIDES:
            for c in SIDES:
                for d in SIDES:
                    for e in SIDES:
                        out.append(a)
    return out


def test_loops_in_body(device="cpu"):
    out = []
    for a in SIDES:
        for b in SIDES:
            for c in SIDES:
                for d in SIDES:
                    for e in SIDES:
                        out.append(a)


def test_loops_in_helper():
    spin()
    torch.ones(2)


def test_cheap_after_loops():
    torch.ones(2)


def test_cheap_cuda_after_loops():
    torch.ones(2, device="cuda")
'''

ROWS = "".join(f"    ({i}, 'x{i}', [{i}, {i + 1}]),\n" for i in range(60_000))
HUGE = "import torch\n\nTABLE = [\n" + ROWS + "]\n" + '''

def lookup(table, i):
    return table


def test_huge_literal():
    lookup(TABLE, 1)
    torch.ones(1)
'''


SMALL_BUDGET = 300_000


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("budgets") / "repo"
    (root / "tests").mkdir(parents=True)
    (root / "tests" / "test_tree.py").write_text(TREE)
    (root / "tests" / "test_fanout.py").write_text(FANOUT)
    (root / "tests" / "test_huge.py").write_text(HUGE)
    (root / "tests" / "test_loops.py").write_text(LOOPS)
    with pytest.MonkeyPatch.context() as mp:
        # a spent budget costs its steps' time: a smaller one keeps this test fast (the default is ~30x larger)
        mp.setattr(analyzer, "CASE_BUDGET", SMALL_BUDGET)
        mp.setattr(interp_calls, "SUMMARY_BUDGET", SMALL_BUDGET)
        mp.setattr(analyzer, "OVER_BUDGET_CHARGE", 4 * SMALL_BUDGET)
        start = time.perf_counter()
        res = run(root, cache_dir=None, workers=1)
        elapsed = time.perf_counter() - start
        yield res, elapsed, root


def test_pathological_files_finish(result) -> None:
    """A hang guard, not a speed target (bench/ measures speed): before bounds and budgets this run
    did not finish at all; a loaded 2-core CI machine needs ~15 s for it."""
    _, elapsed, _ = result
    assert elapsed < 180, elapsed


def test_shared_subtrees_are_widened_not_hashed(result) -> None:
    res, _, _ = result
    tests = res.files["tests/test_tree.py"].tests
    assert tests["test_brownian_like_tree"].label == "cpu"
    assert tests["test_tree_then_cuda"].label == "gpu"


def test_recursive_fanout_is_widened_not_unrolled(result) -> None:
    """3**20 calls if unrolled; a recursive call is analysed in its widened context (numbers unknown,
    summaries.py), which repeats after one level: the body is analysed twice, not 3**20 times."""
    res, _, _ = result
    tests = res.files["tests/test_fanout.py"].tests
    assert tests["test_fanout"].label == "cpu"
    assert tests["test_cheap_after_fanout"].label == "cpu"
    assert tests["test_cheap_cuda_after_fanout"].label == "gpu"


def test_spent_budget_is_unknown_with_the_reason(result) -> None:
    res, _, _ = result
    tests = res.files["tests/test_loops.py"].tests
    body = tests["test_loops_in_body"]
    assert body.label == "unknown"
    assert body.reasons == (f"tests/test_loops.py:18: analysis budget exceeded ({SMALL_BUDGET} steps) "
                            "in test_loops_in_body()",)
    # a helper's summary has a budget of its own, and says which function spent it
    helper = tests["test_loops_in_helper"]
    assert helper.label == "unknown"
    assert helper.reasons == (f"tests/test_loops.py:29: calls spin() -> tests/test_loops.py:7: analysis budget "
                              f"exceeded ({SMALL_BUDGET} steps) in spin()",)
    # the run continues: the file's other tests keep their labels
    assert tests["test_cheap_after_loops"].label == "cpu"
    assert tests["test_cheap_cuda_after_loops"].label == "gpu"


def test_huge_literal_is_analysed(result) -> None:
    res, _, _ = result
    assert res.files["tests/test_huge.py"].tests["test_huge_literal"].label == "cpu"


def test_budget_outcome_does_not_depend_on_what_ran_before(result) -> None:
    """A summary has its own budget, whoever computes it first: a warm memo gives what a cold one does."""
    _, _, root = result
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(analyzer, "CASE_BUDGET", SMALL_BUDGET)
        mp.setattr(interp_calls, "SUMMARY_BUDGET", SMALL_BUDGET)
        alone = run(root, paths=["tests/test_loops.py"], cache_dir=None, workers=1).files
        after_others = run(root, cache_dir=None, workers=1).files
    assert alone["tests/test_loops.py"].tests == after_others["tests/test_loops.py"].tests


def test_value_bounds() -> None:
    leaf: object = Const(1)
    for _ in range(MAX_VALUE_DEPTH + 1):
        leaf = Seq((leaf,), "tuple")
    assert bounded(leaf) == UNRESOLVED  # type: ignore[arg-type]
    shared: object = Const(0)
    for _ in range(40):  # 2**40 nodes as a tree, 40 distinct objects
        shared = Seq((shared, shared), "tuple")
    assert size_of(shared)[0] == MAX_VALUE_NODES + 1
    assert bounded(shared) == UNRESOLVED  # type: ignore[arg-type]
    small = Inst(ClassV("m.py", (1, 0), "C"), (("a", Seq((Const(1), Const(2)))),))
    assert bounded(small) is small
    assert hash(shared) == hash(shared)  # cached: no walk over 2**40 nodes
