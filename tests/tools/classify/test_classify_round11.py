"""Round 11: torch.nn modules printed in ids (tests/tools/classify/fixtures/repo/tests/round11_nn). The node ids the
classifier gives equal `pytest --collect-only -q`'s, except the function-level keys of tests whose ids hold what the
analysis cannot print (a module outside the table, an unknown argument, an unknown part of an f-string); moving a
module to CUDA is still a GPU use. The table itself is checked against torch in test_nn_modules_table.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tools.classify.runner import run

ROUND11 = "tests/round11_nn"
FILE = f"{ROUND11}/test_nn_ids.py"
UNPRINTED = {f"{FILE}::{name}" for name in (
    "test_module_outside_the_table", "test_argument_not_known", "test_layer_fstring_of_unknown_part")}


def test_ids_match_pytest_collect_only(corpus: Path) -> None:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "--rootdir", ".", ROUND11],
        cwd=corpus, capture_output=True, text=True, env=env, timeout=120, check=False).stdout
    collected = {line.strip() for line in out.splitlines() if "::" in line}
    assert len(collected) == 20, out
    result = run(corpus, paths=[ROUND11], cache_dir=None)
    tests = {f"{rel}::{k}": v for rel, r in result.files.items() for k, v in r.tests.items()}
    # every collected id is a key, or belongs to one of the tests whose ids cannot be printed
    missing = {c for c in collected if c not in tests}
    assert {c.split("[", 1)[0] for c in missing} == UNPRINTED
    assert {k for k in tests if k not in collected} == UNPRINTED
    assert sum(1 for c in collected if c.startswith(f"{FILE}::test_problem[")) == 5
    gpu = {k for k, v in tests.items() if v.label == "gpu"}
    assert gpu == {f"{FILE}::test_module_built_on_cuda"} | {k for k in tests if "test_module_moved_to_cuda[" in k}
    assert all(v.label == "cpu" for k, v in tests.items() if k not in gpu)
