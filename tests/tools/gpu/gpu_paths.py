"""Paths the GPU tools' tests share (a uniquely named module: other test dirs have a `conftest` too)."""

from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[3]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
SAMPLES = REPO_ROOT.parent / "shared" / "bazel-offline" / "samples"
