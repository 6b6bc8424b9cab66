"""Shared helpers of the tools' tests."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[1]


def _load(path: Path) -> ModuleType:
    """Import a script that is not part of a package (bench/*.py, the Bazel kit's lib/*.py) by its path.
    It is registered in sys.modules first: dataclasses and pickling look their module up by name."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def load_script() -> Callable[[Path], ModuleType]:
    """`load_script(REPO / "bench" / "x.py")`: the script as a module."""
    return _load
