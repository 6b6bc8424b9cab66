"""Round 15: pytest's collection rules met on three new suites (tensorly, flair, gluonts).

* A parametrization whose value list the analysis cannot choose (tensorly's `[False] if tl.get_backend() in
  ["tensorflow", "paddle"] else [True, False]`, the backend picked by an environment variable at run time): the
  cases every alternative list has keep their exact ids; the others, which may or may not be collected, are
  covered by the function-level key, never by a guessed id.
* `metafunc.fixturenames` is the whole closure, names no fixture defines included; the hooks of conftests every
  run loads at the start (the root's, a `test*` directory's under it) parametrize after the fixture manager.
* An empty parameter set's case never runs; `type()` of an in-repo object is its class; `sorted()` of known
  strings or numbers (a registry's names); pydantic's constrained numbers are ided by value.
* Library idioms of nnsight's loaders (tests/round15_collection/test_library_idioms.py): `inspect.signature(f)
  .parameters` of an in-repo function or class, `frozenset(...)`, a comprehension that pops from a dict outside it,
  `d.setdefault(k, v)`, `f(**d)` where `d` is one of several dicts (one call per dict), `str.removeprefix`."""

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


HOOK_CONFTEST = '''import pytest


@pytest.fixture(autouse=True)
def set_cpu(force_cpu):
    pass


def pytest_generate_tests(metafunc):
    if "force_cpu" in metafunc.fixturenames:
        metafunc.parametrize("force_cpu", [False])
'''


def test_root_test_directory_conftest_hooks_follow_parametrized_fixtures(
        tmp_path: Path, collect_in: Callable[..., tuple[set[str], str]]) -> None:
    """flair's `tests/conftest.py` is loaded before the session starts by every run from the root (a `test*`
    directory under it), so its hook parametrizes after the fixture manager: `[resume1.txt-False]`. A deeper
    conftest's hook may come before or after (it depends on the paths pytest is given): a function-level key."""
    (tmp_path / "tests" / "sub").mkdir(parents=True)
    (tmp_path / "tests" / "conftest.py").write_text(HOOK_CONFTEST)
    (tmp_path / "tests" / "test_x.py").write_text('''import pytest
import torch


@pytest.fixture(params=["resume1.txt", "r2"])
def resume(request):
    return request.param


class TestChunking:
    def test_create(self, resume):
        torch.ones(1)
''')
    (tmp_path / "tests" / "sub" / "conftest.py").write_text('''def pytest_generate_tests(metafunc):
    if "mode" in metafunc.fixturenames:
        metafunc.parametrize("mode", ["a"])
''')
    (tmp_path / "tests" / "sub" / "test_y.py").write_text('''import pytest


@pytest.fixture(params=[1, 2])
def size(request):
    return request.param


def test_mode(size, mode):
    pass
''')
    result = run(tmp_path, paths=["tests"], cache_dir=None).files
    got = {f"{rel}::{k}" for rel, r in result.items() for k in r.tests}
    for paths in (["tests"], ["tests/test_x.py"], []):
        collected, output = collect_in(tmp_path, *paths)
        chunking = {c for c in collected if "TestChunking" in c}
        assert chunking == {"tests/test_x.py::TestChunking::test_create[resume1.txt-False]",
                            "tests/test_x.py::TestChunking::test_create[r2-False]"}, output
        assert chunking <= got
    assert "tests/sub/test_y.py::test_mode" in got and not any("test_mode[" in k for k in got)
    sub_a, _ = collect_in(tmp_path, "tests/sub")
    sub_b, _ = collect_in(tmp_path, "tests")
    assert "tests/sub/test_y.py::test_mode[1-a-False]" in sub_a and "tests/sub/test_y.py::test_mode[a-1-False]" in sub_b


def test_empty_parameter_set_never_runs(tmp_path: Path, collect_in: Callable[..., tuple[set[str], str]]) -> None:
    """flair's embedding test bases parametrize over a class attribute that is empty in some subclasses: pytest
    skips `[NOTSET]` ("got empty parameter set"), so whatever the body would need, the case runs nowhere."""
    (tmp_path / "test_x.py").write_text('''import pytest
import torch


class Base:
    valid_args = []

    @pytest.mark.parametrize("args", valid_args)
    def test_generic(self, args):
        args.build().cuda()


class TestReal(Base):
    pass
''')
    got = run(tmp_path, paths=["test_x.py"], cache_dir=None).files["test_x.py"].tests
    collected, output = collect_in(tmp_path, "test_x.py")
    assert collected == {"test_x.py::TestReal::test_generic[NOTSET]"}, output
    verdict = got["TestReal::test_generic[NOTSET]"]
    assert verdict.label == "cpu" and "empty parameter set" in verdict.reasons[0]


ROUND15 = "tests/round15_collection"
FILE = f"{ROUND15}/test_collection_rules.py"


def test_corpus_ids_match_pytest_collect_only(ids_vs_pytest) -> None:
    got = ids_vs_pytest(ROUND15)
    assert len(got.collected) == 21, got.output
    # `[True]`/`[cuda]` exist in one of the two lists only: covered by the function-level keys, never guessed
    assert got.function_only == {f"{FILE}::test_fit"}
    assert got.not_collected == {f"{FILE}::test_fit", f"{FILE}::test_on_device"}
    assert got.tests[f"{FILE}::test_on_device"].label == "gpu"  # the function key covers a CUDA case
    assert got.tests[f"{FILE}::test_on_device[cpu]"].label == "cpu"
    assert got.tests[f"{FILE}::TestEmbedding::test_generic[NOTSET]"].label == "cpu"
    # `ids=[type(s).__name__ for s in strategies]` over in-repo objects (flair)
    assert {f"{FILE}::test_transform[EntityMask]", f"{FILE}::test_transform[TypedEntityMask]"} <= got.collected
    assert {f"{FILE}::test_transform[EntityMask]", f"{FILE}::test_transform[TypedEntityMask]"} <= set(got.tests)
