"""The torch API table against the installed CPU build: CPU-safe entries run, the others raise."""

from __future__ import annotations

import warnings

import pytest

from tools.classify.torch_api import CONSTANTS, CPU, TABLE, TorchApi

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


@pytest.mark.parametrize("path", sorted(CONSTANTS))
def test_known_constants_match_the_installed_torch(path: str) -> None:
    import torch.distributed  # noqa: F401 - the constants live there

    obj = torch
    for part in path.split(".")[1:]:
        obj = getattr(obj, part)
    assert obj == CONSTANTS[path]
