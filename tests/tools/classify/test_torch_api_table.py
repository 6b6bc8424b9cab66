"""The torch API table against the installed CPU build: CPU-safe entries run, the others raise."""

from __future__ import annotations

import warnings

import pytest

from tools.classify.torch_api import (
    ATTRIBUTES_BOOL_AVAILABLE,
    CONSTANTS,
    CPU,
    OPTIMIZER_PARAMETERS,
    SAME_DEVICE_METHODS,
    TABLE,
    TorchApi,
)

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.skipif(torch.cuda.is_available(), reason="the table describes a machine without a GPU")


def _run(api: TorchApi) -> None:
    import torch.distributed  # noqa: F401 - the examples use it
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            exec(compile(api.example, api.path, "eval" if "\n" not in api.example else "exec"), {"torch": torch})
        finally:
            torch.set_default_device(None)


@pytest.mark.parametrize("api", [a for a in TABLE if a.need == CPU], ids=lambda a: a.path)
def test_cpu_safe_entry_runs(api: TorchApi) -> None:
    _run(api)


@pytest.mark.parametrize("api", [a for a in TABLE if a.need != CPU], ids=lambda a: a.path)
def test_accelerator_entry_raises(api: TorchApi) -> None:
    with pytest.raises(Exception):  # noqa: B017 - torch raises many types (AssertionError, RuntimeError...)
        _run(api)


@pytest.mark.parametrize("path", sorted(ATTRIBUTES_BOOL_AVAILABLE))
def test_build_flag_aliases_are_false_on_the_cpu_build(path: str) -> None:
    """`torch.has_cuda` & co, which the analysis reads as False in the CPU world (deprecated: they warn)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert getattr(torch, path.split(".", 1)[1]) is False


@pytest.mark.parametrize("path", sorted(CONSTANTS))
def test_known_constants_match_the_installed_torch(path: str) -> None:
    import torch.distributed  # noqa: F401 - the constants live there

    obj = torch
    for part in path.split(".")[1:]:
        obj = getattr(obj, part)
    assert obj == CONSTANTS[path]


@pytest.mark.parametrize("name", sorted(SAME_DEVICE_METHODS))
def test_same_device_methods_keep_the_device(name: str) -> None:
    """Each method the classifier treats as device-preserving exists on a tensor and, called on one, returns a
    tensor on the receiver's device (run on the CPU: the result's device is the receiver's, `meta` here so
    that a method that moved data would show)."""
    x = torch.ones(2, 2, device="meta")
    args = {"add": (x,), "add_": (x,), "sub": (x,), "sub_": (x,), "mul": (x,), "mul_": (x,), "div": (x,),
            "div_": (x,), "matmul": (x,), "mm": (x,), "pow": (2,), "expand": (2, 2), "expand_as": (x,),
            "view_as": (x,), "repeat": (1, 1), "reshape": (4,), "view": (4,), "permute": (1, 0),
            "transpose": (0, 1), "index_select": (0, torch.zeros(1, dtype=torch.long, device="meta")),
            "narrow": (0, 0, 1), "flip": (0,), "roll": (1,), "cumsum": (0,), "softmax": (0,), "fill_": (1.0,),
            "masked_fill": (torch.zeros(2, 2, dtype=torch.bool, device="meta"), 0.0), "clamp": (0.0,),
            "clamp_": (0.0,), "unsqueeze": (0,)}.get(name, ())
    if name == "bmm":
        x, args = torch.ones(1, 2, 2, device="meta"), (torch.ones(1, 2, 2, device="meta"),)
    out = getattr(x, name)(*args)
    assert isinstance(out, torch.Tensor)
    assert out.device == x.device


def test_optimizer_signatures_match_the_installed_torch() -> None:
    """Every optimizer class torch.optim exports is in OPTIMIZER_PARAMETERS, with the parameters
    `inspect.signature` lists for it."""
    import inspect

    import torch.optim

    installed = {f"torch.optim.{n}": tuple(inspect.signature(c).parameters) for n, c in vars(torch.optim).items()
                 if isinstance(c, type) and issubclass(c, torch.optim.Optimizer) and c is not torch.optim.Optimizer}
    assert installed == OPTIMIZER_PARAMETERS
