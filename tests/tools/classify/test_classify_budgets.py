"""Pathological code must not stall the classifier: values are bounded, work is budgeted (deterministically).

torchsde's Brownian trees (objects nesting objects that share subtrees) made memo keys exponentially large;
exponential call fan-out and huge literals are the other ways real code makes a static interpreter work
without end. Each case here must finish in a couple of seconds, and what cannot be analysed within the budget
is `unknown` with the reason, never a guess.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tools.classify import analyzer
from tools.classify.runner import run
from tools.classify.values import MAX_VALUE_DEPTH, MAX_VALUE_NODES, UNKNOWN, ClassV, Const, Inst, Seq, bounded, size_of

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
    with pytest.MonkeyPatch.context() as mp:
        # a spent budget costs its steps' time: a smaller one keeps this test fast (the default is ~30x larger)
        mp.setattr(analyzer, "CASE_BUDGET", SMALL_BUDGET)
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


def test_fanout_is_unknown_with_the_budget_reason(result) -> None:
    res, _, _ = result
    tests = res.files["tests/test_fanout.py"].tests
    v = tests["test_fanout"]
    assert v.label == "unknown"
    assert v.reasons == (f"tests/test_fanout.py:11: analysis budget exceeded ({SMALL_BUDGET} steps) "
                         "in test_fanout",)
    # the run continues: the file's other tests keep their labels
    assert tests["test_cheap_after_fanout"].label == "cpu"
    assert tests["test_cheap_cuda_after_fanout"].label == "gpu"


def test_huge_literal_is_analysed(result) -> None:
    res, _, _ = result
    assert res.files["tests/test_huge.py"].tests["test_huge_literal"].label == "cpu"


def test_budget_outcome_does_not_depend_on_what_ran_before(result) -> None:
    """A memoised call counts what it cost when analysed: a warm memo spends the same budget as a cold one."""
    _, _, root = result
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(analyzer, "CASE_BUDGET", SMALL_BUDGET)
        alone = run(root, paths=["tests/test_fanout.py"], cache_dir=None, workers=1).files
        after_others = run(root, cache_dir=None, workers=1).files
    assert alone["tests/test_fanout.py"].tests == after_others["tests/test_fanout.py"].tests


def test_file_budget_makes_the_rest_unknown(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "tests").mkdir()
    src = FANOUT + "\n\ndef test_x_after():\n    torch.ones(2)\n"  # analysed after test_fanout (by name)
    (tmp_path / "tests" / "test_fanout.py").write_text(src)
    line = src.splitlines().index("def test_x_after():") + 1
    monkeypatch.setattr(analyzer, "CASE_BUDGET", SMALL_BUDGET)
    monkeypatch.setattr(analyzer, "OVER_BUDGET_CHARGE", 4 * SMALL_BUDGET)
    monkeypatch.setattr(analyzer, "FILE_BUDGET", 4 * SMALL_BUDGET)
    tests = run(tmp_path, cache_dir=None, workers=1).files["tests/test_fanout.py"].tests
    assert tests["test_cheap_after_fanout"].label == "cpu"
    v = tests["test_x_after"]
    assert v.label == "unknown"
    assert v.reasons == (f"tests/test_fanout.py:{line}: analysis budget exceeded ({4 * SMALL_BUDGET} steps) in "
                         "tests/test_fanout.py",)


def test_value_bounds() -> None:
    leaf: object = Const(1)
    for _ in range(MAX_VALUE_DEPTH + 1):
        leaf = Seq((leaf,), "tuple")
    assert bounded(leaf) == UNKNOWN  # type: ignore[arg-type]
    shared: object = Const(0)
    for _ in range(40):  # 2**40 nodes as a tree, 40 distinct objects
        shared = Seq((shared, shared), "tuple")
    assert size_of(shared)[0] == MAX_VALUE_NODES + 1
    assert bounded(shared) == UNKNOWN  # type: ignore[arg-type]
    small = Inst(ClassV("m.py", (1, 0), "C"), (("a", Seq((Const(1), Const(2)))),))
    assert bounded(small) is small
    assert hash(shared) == hash(shared)  # cached: no walk over 2**40 nodes
