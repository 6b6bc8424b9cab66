"""Round 22: idioms of suites new this round (evotorch, pykeen, torchsurv; corpus tests/round22, labels in
expected.json, each test run with pytest on CPU-only torch first)."""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from tools.classify.installed import InstalledIndex, search_dirs
from tools.classify.runner import run

CORPUS_DIR = "tests/round22"


def _tests(corpus: Path, name: str) -> dict:
    path = f"{CORPUS_DIR}/{name}"
    return run(corpus, paths=[path], cache_dir=None).files[path].tests


def test_a_device_a_decorator_set_on_a_function_is_read_back(corpus: Path) -> None:
    tests = _tests(corpus, "test_function_attributes.py")
    assert {k: v.label for k, v in tests.items()} == {
        "test_plain_objective": "cpu", "test_no_objective": "cpu", "test_objective_on_cpu": "cpu",
        "test_objective_on_cuda": "gpu"}
    assert "needs a CUDA device" in tests["test_objective_on_cuda"].reasons[0]


def test_devices_unpacked_from_a_set_and_compared_with_an_alias(corpus: Path) -> None:
    tests = _tests(corpus, "test_device_sets.py")
    assert tests["test_unpack_one_device"].label == "cpu"
    assert tests["test_unpack_cuda_device"].label == "gpu"
    # `device == "gpu"` is false for an existing tensor's device (a torch.device equals no string): pykeen's
    # resolve_device keeps a module's own device
    assert tests["test_model_device_resolved"].label == "cpu"
    assert tests["test_gpu_alias_used_directly"].label == "gpu"


def test_rows_of_a_loop_and_narrowed_locals(corpus: Path) -> None:
    tests = _tests(corpus, "test_rows_and_narrowing.py")
    assert tests["test_named_functions_in_rows"].label == "cpu"
    # each name of `for name, cfg in rows` is one of its column's values: the CUDA function is among them
    assert tests["test_one_row_names_a_cuda_function"].label == "gpu"
    assert tests["test_narrowed_by_is_none"].label == "cpu"
    assert tests["test_narrowed_to_cuda"].label == "gpu"


def test_param_ids_from_namedtuples_or_a_function_key(ids_vs_pytest: Callable) -> None:
    got = ids_vs_pytest(f"{CORPUS_DIR}/test_param_ids.py")
    path = f"{CORPUS_DIR}/test_param_ids.py"
    assert f"{path}::test_named_cases[bce-lcwa-{{'batch_size': 1, 'weighted': True}}]" in got.collected
    # every id is pytest's, but for the one whose `id=` the analysis cannot compute: its function's key, no guess
    assert got.not_collected == {f"{path}::test_id_not_computed"}, got.output
    assert got.function_only == {f"{path}::test_id_not_computed"}


LIBRARY = textwrap.dedent('''
    import os

    import survlib.estimators


    def fit():
        return getattr(survlib.estimators, os.environ["SURVLIB_MODEL"])()
''')
TEST = "import survlib\nimport torch\n\n\ndef test_fit():\n    survlib.fit()\n    torch.ones(1, device='cpu')\n"


@pytest.mark.parametrize(("body", "torch_free"), [("x = 1\n", True), ("import torch\n", False),
                                                  ("# works with torch tensors too\n", False)])
def test_a_library_that_never_names_torch_is_torch_free(tmp_path: Path, body: str, torch_free: bool) -> None:
    pkg = tmp_path / "site" / "survlib"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(LIBRARY)
    (pkg / "estimators.py").write_text(body)
    index = InstalledIndex(search_dirs(tmp_path / "none", [str(tmp_path / "site")]))
    rel = index.module("survlib")
    assert rel == "<installed>/survlib/__init__.py"
    assert index.torch_free(rel) is torch_free


@pytest.mark.parametrize(("estimators", "label"), [
    ("class Weibull:\n    pass\n", "cpu"),
    # the same library naming torch: what `getattr` finds may run anything
    ("import torch\n\n\nclass Weibull:\n    pass\n", "unknown"),
])
def test_a_computed_name_in_a_torch_free_library_is_no_dynamic_dispatch(
        repo_with_test: Callable[[str], Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, estimators: str,
        label: str) -> None:
    site = tmp_path / "site"
    (site / "survlib").mkdir(parents=True)
    (site / "survlib" / "__init__.py").write_text(LIBRARY)
    (site / "survlib" / "estimators.py").write_text(estimators)
    monkeypatch.syspath_prepend(str(site))
    root = repo_with_test(TEST)
    got = run(root, paths=["test_mine.py"], cache_dir=None, workers=1).files["test_mine.py"].tests["test_fit"]
    assert got.label == label, got.reasons
    assert ("dynamic dispatch" in got.reasons[0]) is (label == "unknown")


def test_namedtuple_fields_build_like_a_dataclass() -> None:
    from tools.classify.dataclass_fields import dataclass_init
    node = ast.parse("class Case(typing.NamedTuple):\n    a: int\n").body[0]
    assert isinstance(node, ast.ClassDef) and dataclass_init(node) is True


@pytest.mark.parametrize(("name", "numpy", "spelled"), [
    ("double", "2.4.6", "float64"), ("intc", "1.26.4", "int32"), ("float32", "2.4.6", "float32"),
    ("bool_", "2.4.6", "bool"), ("bool_", "1.26.4", "bool_"), ("bool_", None, None),
])
def test_numpy_scalar_types_are_spelled_by_their_name(monkeypatch: pytest.MonkeyPatch, name: str, numpy: str | None,
                                                      spelled: str | None) -> None:
    from tools.classify import collect
    monkeypatch.setattr(collect, "installed", lambda dist: numpy if dist == "numpy" else None)
    assert collect.numpy_type_name(name) == spelled


def test_numpy_ids_are_pytests(ids_vs_pytest: Callable) -> None:
    got = ids_vs_pytest(f"{CORPUS_DIR}/test_numpy_ids.py")
    assert got.not_collected == set() and got.function_only == set(), got.output


HASATTR_REPO = textwrap.dedent('''
    import functools

    import torch


    def tag(fn):
        fn.device = torch.device("cuda")
        return fn


    def external_wrap(fn):
        @functools.wraps(fn)
        def inner(*args):
            return fn(*args)
        return inner


    def plain(x):
        return x


    @external_wrap
    def wrapped(x):
        return x


    def zeros_for(fn):
        device = None
        if hasattr(fn, "device"):
            device = fn.device
        if device is None:
            device = "cpu"
        return torch.zeros(1, device=torch.device(device))


    def test_plain():
        zeros_for(plain)


    def test_tagged():
        zeros_for(tag(plain))


    def test_wrapped_may_carry_attributes():
        # functools.wraps copies the wrapped function's attributes: not decided, so not a CPU test
        zeros_for(wrapped)
''')


def test_hasattr_of_a_function_is_decided_only_where_nothing_unseen_can_set_it(
        repo_with_test: Callable[[str], Path]) -> None:
    root = repo_with_test(HASATTR_REPO)
    tests = run(root, paths=["test_mine.py"], cache_dir=None, workers=1).files["test_mine.py"].tests
    assert tests["test_plain"].label == "cpu"
    assert tests["test_tagged"].label == "gpu"
    assert tests["test_wrapped_may_carry_attributes"].label != "cpu"


def test_an_inline_device_the_analysis_cannot_resolve_is_not_cpu(corpus: Path) -> None:
    tests = _tests(corpus, "test_inline_device.py")
    # both fail with a CUDA error on a CPU-only machine: they must not be routed to CPU runners
    assert tests["test_factory_device_call"].label == "unknown"
    assert "torch.device(_configured())" in tests["test_factory_device_call"].reasons[0]
    assert tests["test_to_device_call"].label == "unknown"
    assert tests["test_factory_known_device_call"].label == "cpu"
