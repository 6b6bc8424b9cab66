"""The classifier's tables of torch constants (dtypes, their aliases, layouts, memory formats, quantization
schemes) agree with the installed torch, and ids of parameters that are such constants, including rare dtypes,
equal `pytest --collect-only -q`'s. The classifier never imports torch; these tests do, to check its tables."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tools.classify.devices import TORCH_DTYPE_NAMES, TORCH_UNNAMED_CONSTANTS, torch_constant_str
from tools.classify.runner import run
from tools.classify.torch_testing import DTYPE_ALIASES, DTYPE_NAMES
from tools.classify.values import Ext

torch = pytest.importorskip("torch")


def _torch_attributes(kind: type | tuple[type, ...]) -> dict[str, str]:
    """name -> str() of every public `torch.<name>` that is an instance of `kind`."""
    return {n: str(getattr(torch, n)) for n in dir(torch)
            if not n.startswith("__") and isinstance(getattr(torch, n, None), kind)}


def test_dtype_tables_are_torchs() -> None:
    dtypes = _torch_attributes(torch.dtype)
    assert set(dtypes) == TORCH_DTYPE_NAMES
    assert {s[len("torch."):] for s in dtypes.values()} == DTYPE_NAMES
    aliases = {n: s[len("torch."):] for n, s in dtypes.items() if s != f"torch.{n}"}
    assert aliases == DTYPE_ALIASES


def test_unnamed_constants_are_torchs_and_print_as_torch_does() -> None:
    kinds = (torch.layout, torch.memory_format, torch.qscheme)
    assert set(_torch_attributes(kinds)) == TORCH_UNNAMED_CONSTANTS
    for name in sorted(TORCH_UNNAMED_CONSTANTS):
        value = getattr(torch, name)
        assert torch_constant_str(Ext(f"torch.{name}")) == str(value), name
        assert not hasattr(value, "__name__")  # pytest ids them `argname<index>`


TEST_FILE = '''
import pytest
import torch

RARE = [torch.complex32, torch.int4, torch.uint3, torch.bits8, torch.float8_e8m0fnu, torch.qint32]


@pytest.mark.parametrize("dtype", RARE)
def test_by_index(dtype):
    assert torch.empty(0).dtype is not dtype


@pytest.mark.parametrize("dtype", RARE, ids=str)
def test_by_str(dtype):
    pass


@pytest.mark.parametrize("dtype", [torch.cfloat, torch.chalf, torch.short], ids=lambda d: f"dt={d}")
def test_aliases(dtype):
    pass
'''


def test_rare_dtype_ids_match_pytest(tmp_path: Path) -> None:
    (tmp_path / "test_rare_dtypes.py").write_text(TEST_FILE)
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                          "--rootdir", ".", "test_rare_dtypes.py"],
                         cwd=tmp_path, capture_output=True, text=True, env=env, timeout=120, check=False).stdout
    collected = {line.strip().split("::", 1)[1] for line in out.splitlines() if "::" in line}
    assert len(collected) == 15, out
    tests = run(tmp_path, paths=["test_rare_dtypes.py"], cache_dir=None).files["test_rare_dtypes.py"].tests
    assert set(tests) == collected
    assert {v.label for v in tests.values()} == {"cpu"}
