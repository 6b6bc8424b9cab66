"""The hostile-input generators of bench/hostile_classify.py at a small scale: every category must end with no
crash, no hang and no silent loss (the full-scale figures are in docs/hostile-input.md)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def generators(load_script: Callable[[Path], ModuleType]) -> ModuleType:
    return load_script(REPO / "bench" / "hostile_classify.py")


@pytest.fixture(autouse=True)
def _user_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))


@pytest.mark.parametrize("generator,scale", [("fuzz_test_files", 2), ("fuzz_caches", 6),
                                             ("fuzz_classification_files", 4)])
def test_generators_find_nothing(generators: ModuleType, generator: str, scale: int) -> None:
    rows = getattr(generators, generator)(scale, 1)
    assert rows and all(r.inputs for r in rows)
    bad = [r for r in rows if r.crashes or r.hangs or r.losses]
    assert not bad, generators.table(bad)
