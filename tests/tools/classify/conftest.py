"""Fixtures shared by the classifier's tests."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

CORPUS = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A private copy of the fixture corpus (fixtures/repo) per test module: classification must not depend on,
    nor leave anything in, the checked-in tree."""
    dst = tmp_path_factory.mktemp("corpus") / "repo"
    shutil.copytree(CORPUS / "repo", dst)
    return dst
