"""Node ids of the round-8 corpus (`pytest_generate_tests` hooks, ids built in loops, empty parametrizations,
imported test functions) equal `pytest --collect-only -q`'s; where the classifier cannot spell an id it gives a
function-level key that covers the collected ids, never a guessed one. Unit tests of the id rules beside it."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tools.classify.collect import UNKNOWN_ID, parametrize_cases, stdlib_function
from tools.classify.interp_expressions import _percent_format
from tools.classify.interp_statements import _grows_containers
from tools.classify.runner import run
from tools.classify.values import UNRESOLVED, Const, Seq

ROUND8 = "tests/round8"
EXPAND = f"{ROUND8}/test_expand_product.py"  # needs the `parameterized` package to be collected: names below


def test_ids_match_pytest_collect_only(corpus: Path) -> None:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "--rootdir", ".", ROUND8,
         f"--ignore={EXPAND}"],
        cwd=corpus, capture_output=True, text=True, env=env, timeout=120, check=False).stdout
    collected = {line.strip() for line in out.splitlines() if "::" in line}
    assert len(collected) > 20, out
    assert sum("::test_backend_and_fixture[" in c for c in collected) == 4
    result = run(corpus, paths=[ROUND8], cache_dir=None)
    keys = {f"{rel}::{k}" for rel, r in result.files.items() if rel != EXPAND for k in r.tests}
    function_keys = keys - collected
    # every key the classifier emits is either collected as it is or a function-level key (no `[...]`)
    assert all("[" not in k for k in function_keys), function_keys
    assert function_keys == {f"{ROUND8}/hooked/test_opaque_hook.py::test_opaque_hook",
                             f"{ROUND8}/hooked/test_conftest_hook.py::test_backend_and_fixture",
                             f"{ROUND8}/test_text_values.py::test_unknown_text",
                             f"{ROUND8}/test_text_values.py::test_partly_unknown_text"}
    assert {c for c in collected if c not in keys} == {
        *(f"{ROUND8}/hooked/test_opaque_hook.py::test_opaque_hook[{i}]" for i in (1, 2)),
        *(c for c in collected if "::test_backend_and_fixture[" in c),
        # (since round 11 the torch modules are known values: `module0-relu` is exact, only the text is unknown)
        f"{ROUND8}/test_text_values.py::test_unknown_text[module1-hardtanh Upsample(scale_factor=2.0, mode='nearest')]",
        f"{ROUND8}/test_text_values.py::test_partly_unknown_text[hardtanh-module1-hardtanh Upsample(scale_factor=2.0, "
        "mode='nearest')]"}


def test_expand_over_a_product_is_named_by_the_name_function(corpus: Path) -> None:
    tests = run(corpus, paths=[EXPAND], cache_dir=None).files[EXPAND].tests
    assert {k: v.label for k, v in tests.items()} == {
        f"ProductTests::test_save_on_{dev}_workers_{n}": "gpu" if dev == "cuda" else "cpu"
        for dev in ("cuda", "cpu") for n in (0, 2)}


def test_ids_that_cannot_be_evaluated_give_no_cases() -> None:
    values = Seq((Const(1), Const(2)), "list")
    # an unknown `ids=` (a list built by code the analysis could not follow) used to fall back to default ids
    assert parametrize_cases(Const("n"), values, UNRESOLVED) is None
    # an unknown entry may be spelled "a": pytest would then suffix both, so neither id is known
    assert parametrize_cases(Const("n"), values, Seq((Const("a"), UNRESOLVED), "list")) is None
    # a case whose id is unknown but cannot equal the others' keeps them exact (UNKNOWN_ID for itself)
    pairs = Seq((Seq((Const("x"), Const(1)), "tuple"), Seq((Const("y"), UNRESOLVED), "tuple")), "list")
    cases = parametrize_cases(Const("k, v"), pairs, Seq((Const(None), UNRESOLVED), "list"))
    assert cases is None  # the unknown entry replaces the whole id: it may be "x-1"
    cases = parametrize_cases(Const("k, v"), pairs, None, lambda v: UNRESOLVED if v == Const(1) else Const(None))
    assert cases is not None and [c.id for c in cases] == [UNKNOWN_ID, "y-v1"]  # "x-..." is never "y-v1"
    # a None entry keeps that case's default id, as pytest's IdMaker does; other constants are spelled as values
    cases = parametrize_cases(Const("n"), values, Seq((Const(None), Const(7)), "list"))
    assert cases is not None and [c.id for c in cases] == ["1", "7"]


def test_percent_format_spells_plain_conversions_only() -> None:
    args = Seq((Const("Adam"), Const(1)), "tuple")
    assert _percent_format("%s_%s", args) == Const("Adam_1")
    assert _percent_format("%d-%r", Seq((Const(2), Const("x")), "tuple")) == Const("2-'x'")
    assert _percent_format("%999999s", Seq((Const("a"),), "tuple")) == UNRESOLVED  # a width: not computed
    assert _percent_format("%s", Seq((UNRESOLVED,), "tuple")) == UNRESOLVED
    assert _percent_format("%i", Seq((Const("a"),), "tuple")) == UNRESOLVED  # TypeError in Python


@pytest.mark.parametrize(("src", "grows"), [
    ("for x in xs:\n    acc = acc + [x]\n", True),
    ("for x in xs:\n    acc = other + [x]\n", False),
    ("for x in xs:\n    acc.append(x)\n", True),
    ("for x in xs:\n    y = x\n", False),
])
def test_loops_that_rebind_a_grown_name_are_unrolled(src: str, grows: bool) -> None:
    loop = ast.parse(src).body[0]
    assert isinstance(loop, ast.For)
    assert _grows_containers(loop) is grows


@pytest.mark.parametrize(("path", "collected"), [
    ("doctest.testmod", True),  # a Python function: pytest collects it under a `test*` name
    ("doctest.DocTestRunner", False),  # a class
    ("os.path", False),  # a module
    ("math.sqrt", False),  # a builtin (no Python source): pytest does not collect builtins
    ("mypkg.testing.run", False),  # not the standard library
])
def test_which_imported_names_are_stdlib_functions(path: str, collected: bool) -> None:
    assert stdlib_function(path) is collected
