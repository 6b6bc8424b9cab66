"""Saved `bazel query` output of the example GPU targets, shared by the exporter's tests."""

from __future__ import annotations

from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture
def examples_xml() -> str:
    return (FIXTURES / "query_gpu_examples.xml").read_text(encoding="utf-8")


@pytest.fixture
def examples_jsonl() -> str:
    return (FIXTURES / "query_gpu_examples.streamed_jsonproto.jsonl").read_text(encoding="utf-8")
