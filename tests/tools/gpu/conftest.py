"""Shared fixtures for the GPU tools' tests; puts the repo root on sys.path (no pyproject yet)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

_HERE = Path(__file__).resolve().parent
for _path in (str(_HERE.parents[2]), str(_HERE)):  # repo root (tools.*) and this dir (gpu_paths)
    if _path not in sys.path:
        sys.path.insert(0, _path)

from gpu_paths import FIXTURES  # noqa: E402


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES


@pytest.fixture
def examples_xml() -> str:
    return (FIXTURES / "query_gpu_examples.xml").read_text(encoding="utf-8")


@pytest.fixture
def examples_jsonl() -> str:
    return (FIXTURES / "query_gpu_examples.streamed_jsonproto.jsonl").read_text(encoding="utf-8")
