"""Round 10: test cases built by helper functions (tests/tools/classify/fixtures/repo/tests/round10_builders). The
node ids the classifier gives equal `pytest --collect-only -q`'s; the only other keys are the parametrizations that
exist only where CUDA is available (labelled gpu), and a function-level key where an id holds what the analysis
cannot print (a torch module's repr). Unit tests of the printing rules beside it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tools.classify.devices import spelled
from tools.classify.interp_expressions import _percent_format
from tools.classify.runner import run
from tools.classify.values import SIZE, UNRESOLVED, Const, DeviceV, DictV, Ext, Inst, Seq

ROUND10 = "tests/round10_builders"


def test_ids_match_pytest_collect_only(corpus: Path, collect_only) -> None:
    collected, out = collect_only(ROUND10)
    assert len(collected) == 36, out
    result = run(corpus, paths=[ROUND10], cache_dir=None)
    tests = {f"{rel}::{k}": v for rel, r in result.files.items() for k, v in r.tests.items()}
    module_id = f"{ROUND10}/test_built_problems.py::test_problem_module_id"
    assert {c for c in collected if c not in tests} == {c for c in collected if c.startswith(module_id + "[")}
    assert tests[module_id].label == "cpu"
    assert {k for k in tests if k not in collected and "[" not in k} == {module_id}
    # the problems on the cuda device exist only where CUDA is available: keyed for the GPU runners, never run here
    cuda_only = {k: v.label for k, v in tests.items() if "[" in k and k not in collected}
    assert len(cuda_only) == 6 and all(("cuda" in k) and label == "gpu" for k, label in cuda_only.items()), cuda_only
    assert all(tests[c].label == "cpu" for c in collected if c in tests)


@pytest.mark.parametrize(("value", "conversion", "spec", "text"), [
    (Seq((Const(1), Const(None), Const(True)), "tuple"), "s", "", "(1, None, True)"),
    (Seq((Const("a"),), "tuple"), "s", "", "('a',)"),
    (DictV(((Const("N"), Const(4)), (Const("x"), Seq((Const(1.5),), "list")))), "s", "", "{'N': 4, 'x': [1.5]}"),
    (Const("x"), "r", "", "'x'"),
    (Const(0.001), "", ".0e", "1e-03"),
    (DeviceV("cpu"), "s", "", "cpu"),
    (DeviceV("cuda:1"), "", "", "cuda:1"),
    (DeviceV("cpu"), "r", "", "device(type='cpu')"),
    (DeviceV("cuda:1"), "r", "", "device(type='cuda', index=1)"),
    (Seq((Seq((Const(2),), "tuple"), DeviceV("cuda")), "tuple"), "s", "", "((2,), device(type='cuda'))"),
    (Seq((Const(4), Const(3)), SIZE), "s", "", "torch.Size([4, 3])"),
    (Seq((Const(2), Seq((Const(4), Const(3)), SIZE)), "list"), "s", "", "[2, torch.Size([4, 3])]"),
    (Ext("torch.float"), "r", "", "torch.float32"),
    (Seq((Ext("torch.float16"),), "tuple"), "s", "", "(torch.float16,)"),
])
def test_values_print_as_python_prints_them(value, conversion, spec, text) -> None:
    assert spelled(value, conversion, spec) == text


@pytest.mark.parametrize(("value", "conversion", "spec"), [
    (UNRESOLVED, "s", ""),
    (Seq((Const(1), UNRESOLVED), "tuple"), "s", ""),  # a part unknown: the whole text is
    (Inst(cls=None), "s", ""),  # type: ignore[arg-type]  # an object's repr (an address, a torch module): never printed
    (DeviceV("cuda"), "", ">10"),  # torch.device refuses a format spec
    (Seq((Const(4),), SIZE), "", ">10"),
    (DeviceV("<existing>"), "s", ""),
    (Const(1), "", "99999"),  # a width of 1000 or more is not built
    (Seq((Const("a"), Const("b")), "set"), "s", ""),  # a set's order is not known
])
def test_values_that_cannot_be_printed_exactly_stay_unknown(value, conversion, spec) -> None:
    assert spelled(value, conversion, spec) is None


def test_a_value_too_long_to_print_is_not_printed() -> None:
    big = Const("x" * (1 << 19))
    assert spelled(Seq((big,), "list")) == repr(["x" * (1 << 19)])
    assert spelled(Seq((big,) * 3, "list")) is None  # 1.5 MiB of text: past the bound, never built


def test_percent_format_prints_what_python_prints() -> None:
    assert _percent_format("%s-%r", Seq((DeviceV("cpu"), Seq((Const(4),), SIZE)), "tuple")) == Const(
        "cpu-torch.Size([4])")
    assert _percent_format("%s|%r", Seq((Const(None), Const("x")), "tuple")) == Const("None|'x'")
    assert _percent_format("%s", Seq((Inst(cls=None),), "tuple")) is UNRESOLVED  # type: ignore[arg-type]
    assert _percent_format("%d", Seq((DeviceV("cpu"),), "tuple")) is UNRESOLVED
