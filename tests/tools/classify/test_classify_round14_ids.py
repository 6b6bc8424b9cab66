"""Round 14: a string or number the analysis cannot compute (values.UnknownScalar) is spelled by pytest in an id,
so the classifier gives a function-level key there, never pytest's `argname<index>` (which pytest uses only for
objects)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tools.classify.runner import run


@pytest.mark.parametrize("value", [
    "len(os.listdir('.'))",
    "str(Opaque())",
    "f'run-{Opaque()}'",
    "'{}-x'.format(Opaque())",
    "repr(os.getpid())",
])
def test_unknown_text_or_number_gets_a_function_level_key(tmp_path: Path, value: str,
                                                          collect_in: Callable[..., tuple[set[str], str]]) -> None:
    (tmp_path / "test_x.py").write_text(f'''import os

import pytest


class Opaque:
    def __init__(self):
        self.n = os.getpid()

    def __str__(self):
        return str(self.n)

    __repr__ = __str__


@pytest.mark.parametrize("v", [{value}])
def test_v(v):
    pass


@pytest.mark.parametrize("obj", [Opaque()])
def test_object(obj):
    pass
''')
    got = run(tmp_path, paths=["test_x.py"], cache_dir=None).files["test_x.py"].tests
    collected, output = collect_in(tmp_path, "test_x.py")
    assert set(got) == {"test_v", "test_object[obj0]"}
    assert "test_x.py::test_object[obj0]" in collected, output
    assert not any(c.startswith("test_x.py::test_v[v") for c in collected), output  # not `v0`
