"""Round 14: models sized by running layers, and children registered with `add_module`
(tests/tools/classify/fixtures/repo/tests/round14_models). The node ids the classifier gives equal `pytest
--collect-only -q`'s; nn_modules.output_shape agrees with torch on every layer it models."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from tools.classify.nn_modules import constructed, output_shape
from tools.classify.values import Const, NNModV, Seq

ROUND14 = "tests/round14_models"
FILE = f"{ROUND14}/test_sized_models.py"


def test_ids_match_pytest_collect_only(ids_vs_pytest) -> None:
    got = ids_vs_pytest(ROUND14)
    collected, tests = got.collected, got.tests
    assert len(collected) == 17, got.output
    # the name `platform.machine()` gives is not known: that test keeps one function-level key (never a guess)
    assert got.function_only == {f"{FILE}::test_children_named_at_run_time"}
    assert got.not_collected == {f"{FILE}::test_children_named_at_run_time"}
    assert sum(1 for c in collected if c.startswith(f"{FILE}::test_cnn[")) == 11
    assert {k for k, v in tests.items() if v.label == "gpu"} == {f"{FILE}::test_branching_on_cuda"}
    assert {v.label for k, v in tests.items() if k != f"{FILE}::test_branching_on_cuda"} == {"cpu"}


def _module(cls: type[nn.Module], *args: object, **kwargs: object) -> NNModV:
    def value(x: object) -> Const | Seq:
        return Seq(tuple(Const(i) for i in x), "tuple") if isinstance(x, tuple) else Const(x)
    got = constructed(f"torch.nn.{cls.__name__}", [value(a) for a in args], {k: value(v) for k, v in kwargs.items()})
    assert got is not None
    return got


LAYERS = [
    (nn.Conv1d, (3, 2, 2), {}, (4, 3, 7)),
    (nn.Conv1d, (3, 2, 2), {}, (3, 7)),  # unbatched
    (nn.Conv1d, (2, 3, 2, 2, 0, 2), {}, (3, 2, 9)),
    (nn.Conv1d, (3, 6, 3), {"padding": "same", "dilation": 2}, (2, 3, 8)),
    (nn.Conv1d, (3, 6, 3), {"padding": "valid"}, (2, 3, 8)),
    (nn.Conv2d, (3, 2, (2, 3), (2, 1), (1, 0), (1, 2)), {}, (2, 3, 9, 10)),
    (nn.Conv3d, (4, 2, 2, 1, 0, 2, 2), {}, (3, 4, 7, 5, 6)),
    (nn.ConvTranspose1d, (3, 2, 2, 4, 2, 1), {}, (3, 3, 7)),
    (nn.ConvTranspose2d, (2, 4, 2, 1, 0, 0, 1, True, 2), {}, (3, 2, 9, 9)),
    (nn.ConvTranspose3d, (3, 2, 2, 2, 1), {}, (1, 3, 2, 5, 5)),
    (nn.MaxPool1d, (2,), {}, (3, 3, 7)),
    (nn.MaxPool2d, (3, 2, 1, 1, False, True), {}, (1, 2, 8, 9)),
    (nn.MaxPool2d, (2, 2, 0, 1, False, True), {}, (1, 2, 5, 5)),  # ceil mode: a last window half outside
    (nn.MaxPool3d, (2, 1, 0, 2), {}, (3, 3, 7, 7, 7)),
    (nn.AvgPool1d, (3, 2, 1, True), {}, (3, 6, 8)),
    (nn.AvgPool2d, (3,), {"stride": 2, "ceil_mode": True}, (1, 1, 10, 10)),
    (nn.AvgPool3d, (2, 1, 0, False), {}, (3, 3, 7, 7, 7)),
    (nn.AdaptiveAvgPool2d, ((2, None),), {}, (3, 3, 11, 11)),
    (nn.AdaptiveMaxPool1d, (4,), {}, (2, 3, 9)),
    (nn.Flatten, (), {}, (2, 3, 4, 5)),
    (nn.Flatten, (0, 2), {}, (2, 3, 4, 5)),
    (nn.Linear, (5, 3), {}, (2, 7, 5)),
    (nn.ReLU, (), {}, (2, 3)),
    (nn.BatchNorm2d, (3,), {}, (2, 3, 4, 4)),
]


@pytest.mark.parametrize(("cls", "args", "kwargs", "shape"), LAYERS,
                         ids=[f"{c.__name__}-{i}" for i, (c, *_r) in enumerate(LAYERS)])
def test_output_shape_is_torchs(cls: type[nn.Module], args: tuple, kwargs: dict, shape: tuple[int, ...]) -> None:
    expected = tuple(cls(*args, **kwargs)(torch.zeros(shape)).shape)
    assert output_shape(_module(cls, *args, **kwargs), shape) == expected


def test_sequential_output_shape_is_torchs() -> None:
    layers = [(nn.Conv2d, (3, 2, 3), {}), (nn.MaxPool2d, (2,), {}), (nn.Flatten, (), {}), (nn.Linear, (18, 4), {})]
    seq = NNModV("Sequential", (("modules", Seq(tuple(_module(c, *a, **k) for c, a, k in layers), "tuple")),))
    torch_seq = nn.Sequential(*(c(*a, **k) for c, a, k in layers))
    assert output_shape(seq, (2, 3, 8, 8)) == tuple(torch_seq(torch.zeros(2, 3, 8, 8)).shape) == (2, 4)


@pytest.mark.parametrize(("module", "shape"), [
    (_module(nn.Conv2d, 3, 2, 3), (2, 4, 8, 8)),  # channels torch would refuse
    (_module(nn.Conv2d, 3, 2, 3), (2, 3, 8)),  # a 2-d convolution of a 1-d input
    (_module(nn.Conv2d, 3, 2, 9), (2, 3, 8, 8)),  # kernel larger than the input
    (_module(nn.Linear, 4, 2), (2, 3)),
    (NNModV("Upsample", ()), (2, 3, 4)),  # a layer outside the formulas
    (NNModV("Conv1d", (("in_channels", Const(3)),)), (2, 3, 4)),  # arguments not known
])
def test_output_shape_not_known(module: NNModV, shape: tuple[int, ...]) -> None:
    assert output_shape(module, shape) is None
