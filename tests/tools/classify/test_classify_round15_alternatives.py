"""Round 15: a parametrization whose value list the analysis cannot choose (tensorly's `[False] if
tl.get_backend() in ["tensorflow", "paddle"] else [True, False]`, the backend picked by an environment variable
at run time). The cases every alternative list has keep their exact ids; the others, which may or may not be
collected, are covered by the function-level key, never by a guessed id."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path

from tools.classify.collect import UNKNOWN_ID, parametrize_cases
from tools.classify.runner import run
from tools.classify.values import Const, OneOf, Seq


def _seq(*values: object) -> Seq:
    return Seq(tuple(Const(v) for v in values), "list")


def test_cases_common_to_every_alternative_keep_their_ids() -> None:
    cases = parametrize_cases(Const("complex"), OneOf(frozenset({_seq(False), _seq(True, False)})), None)
    assert cases is not None
    assert [c.id for c in cases] == [UNKNOWN_ID, "False"]
    assert [c.bindings for c in cases] == [(("complex", Const(True)),), (("complex", Const(False)),)]


def test_duplicate_suffixes_are_made_per_alternative() -> None:
    # pytest gets [1, 1] (ids 10, 11) or [1] (id 1): no id is certain
    cases = parametrize_cases(Const("n"), OneOf(frozenset({_seq(1, 1), _seq(1)})), None)
    assert cases is not None
    assert {c.id for c in cases} == {UNKNOWN_ID}


def test_an_alternative_that_cannot_be_enumerated_gives_none() -> None:
    from tools.classify.values import UNRESOLVED
    assert parametrize_cases(Const("n"), OneOf(frozenset({_seq(1), UNRESOLVED})), None) is None


def test_backend_chosen_at_run_time(tmp_path: Path, collect_in: Callable[..., tuple[set[str], str]]) -> None:
    (tmp_path / "backend.py").write_text('''import os
import threading

_LOCAL = threading.local()


class Backend:
    name = os.environ.get("MY_BACKEND", "numpy")


def get_backend():
    return _LOCAL.__dict__.get("backend", Backend).name
''')
    (tmp_path / "test_x.py").write_text('''import pytest

from backend import get_backend


@pytest.mark.parametrize("cplx", [False] if get_backend() in ["tensorflow", "paddle"] else [True, False])
@pytest.mark.parametrize("rank", [1, 3])
def test_fit(rank, cplx):
    assert rank
''')
    got = run(tmp_path, paths=["test_x.py"], cache_dir=None).files["test_x.py"].tests
    collected, output = collect_in(tmp_path, "test_x.py")
    assert collected == {"test_x.py::test_fit[1-True]", "test_x.py::test_fit[1-False]",
                         "test_x.py::test_fit[3-True]", "test_x.py::test_fit[3-False]"}, output
    assert {"test_fit[1-False]", "test_fit[3-False]", "test_fit"} <= set(got)
    assert not {"test_fit[1-True]", "test_fit[3-True]"} & set(got)  # maybe collected: the function-level key
    assert {got[k].label for k in ("test_fit[1-False]", "test_fit[3-False]", "test_fit")} == {"cpu"}


def test_pydantic_constrained_numbers_are_ided_by_value(tmp_path: Path,
                                                        collect_in: Callable[..., tuple[set[str], str]]) -> None:
    """gluonts: `@pytest.mark.parametrize("beta", [PositiveFloat(1.5)])` is `[1.5]` (pydantic v2's PositiveFloat is
    `Annotated[float, Gt(0)]`, v1's a float subclass)."""
    (tmp_path / "test_x.py").write_text('''import pytest
from pydantic import NonNegativeInt, PositiveFloat


@pytest.mark.parametrize("beta, k", [(PositiveFloat(1.5), NonNegativeInt(3)), (PositiveFloat(2), 0)])
def test_beta(beta, k):
    pass
''')
    got = run(tmp_path, paths=["test_x.py"], cache_dir=None).files["test_x.py"].tests
    assert set(got) == {"test_beta[1.5-3]", "test_beta[2.0-0]"}
    if importlib.util.find_spec("pydantic") is not None:  # (not a dependency of this project: CI may lack it)
        collected, output = collect_in(tmp_path, "test_x.py")
        assert collected == {"test_x.py::test_beta[1.5-3]", "test_x.py::test_beta[2.0-0]"}, output


def test_hook_parametrizes_an_argument_only_a_fixture_asks_for(tmp_path: Path,
                                                               collect_in: Callable[..., tuple[set[str], str]]) -> None:
    """flair: an autouse fixture takes `force_cpu`, which no fixture defines; `pytest_generate_tests` finds it in
    `metafunc.fixturenames` (the whole closure, not only fixtures) and parametrizes it with an option's default."""
    (tmp_path / "conftest.py").write_text('''import pytest
import torch


@pytest.fixture(autouse=True)
def set_cpu(force_cpu):
    if force_cpu:
        torch.set_default_device("cpu")


def pytest_addoption(parser):
    parser.addoption("--force-cpu", action="store_true", default=False, help="use cpu")


def pytest_generate_tests(metafunc):
    option_value = metafunc.config.getoption("--force-cpu")
    if "force_cpu" in metafunc.fixturenames and option_value is not None:
        metafunc.parametrize("force_cpu", [option_value])
''')
    (tmp_path / "test_x.py").write_text('''import pytest
import torch


def test_plain():
    assert torch.ones(1)


@pytest.mark.parametrize("text", ["a", "b"])
def test_text(text):
    assert text


class TestEmb:
    @pytest.mark.parametrize("x", [])
    def test_empty(self, x):
        pass
''')
    got = run(tmp_path, paths=["test_x.py"], cache_dir=None).files["test_x.py"].tests
    collected, output = collect_in(tmp_path, "test_x.py")
    assert collected == {f"test_x.py::{k}" for k in got}, output
    assert set(got) == {"test_plain[False]", "test_text[False-a]", "test_text[False-b]",
                        "TestEmb::test_empty[False-NOTSET]"}
    assert {v.label for v in got.values()} == {"cpu"}
