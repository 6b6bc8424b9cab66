"""`try: import x` / `except ImportError:` decided where `x` is not installed (tools/classify/optional_imports.py):
the ids pytest collects on this machine, the GPU worlds left open, and the cache entry that remembers the
module was missing."""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

import pytest

from tools.classify.optional_imports import ABSENT, PRESENT, catches_import_error, presence
from tools.classify.runner import run

MISSING = "torch_classify_missing_backend"  # no such module on this machine (checked by the first test)

OPTIONAL_BACKENDS = f'''import pytest
import torch

try:
    import json
    from {MISSING} import fast_kernel
    BACKENDS = ["native", "fast"]
except (OSError, ImportError):
    BACKENDS = ["native"]

try:
    import {MISSING}.cuda_ops
    HAS_CUDA_OPS = True
except Exception as exc:
    HAS_CUDA_OPS = False
    REASON = str(exc)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("n", [1, 2])
def test_backend(backend, n):
    torch.ones(n)


def test_cuda_ops():
    if HAS_CUDA_OPS:
        torch.ones(1).cuda()
    torch.ones(1)
'''


def _tests(root: Path, rel: str = "test_x.py", cache: Path | None = None) -> dict[str, str]:
    result = run(root, paths=[rel], cache_dir=cache)
    return {k: v.label for k, v in result.files[rel].tests.items()}


def test_the_module_is_missing_here() -> None:
    assert presence(MISSING) == ABSENT
    assert presence("json") == presence("torch") == PRESENT


@pytest.mark.parametrize(("clause", "catches"), [("except:", True), ("except ImportError:", True),
                                                 ("except (ValueError, ModuleNotFoundError):", True),
                                                 ("except builtins.Exception:", True), ("except OSError:", False)])
def test_which_handlers_catch_a_failed_import(clause: str, catches: bool) -> None:
    (t,) = ast.parse(f"try:\n    import x\n{clause}\n    pass\n").body
    assert isinstance(t, ast.Try)
    assert catches_import_error(t.handlers[0]) is catches


def test_missing_module_takes_the_handler(tmp_path: Path, collect_in: Callable[..., tuple[set[str], str]]) -> None:
    """The ids are pytest's on this machine, and a flag the handler sets is decided (the CUDA call under it
    never runs here)."""
    (tmp_path / "test_x.py").write_text(OPTIONAL_BACKENDS)
    got = _tests(tmp_path)
    collected, output = collect_in(tmp_path, "test_x.py")
    assert {f"test_x.py::{k}" for k in got} == collected, output
    assert set(got.values()) == {"cpu"}


def test_every_world_is_decided_by_this_environment(tmp_path: Path) -> None:
    """The environment the classifier runs in decides machines with GPUs too: a skip on a missing optional
    package is a skip everywhere, not a skip that vanishes with GPUs (which would send the test to a GPU runner),
    and the list is the same in every world."""
    (tmp_path / "test_x.py").write_text(f'''import pytest
import torch

try:
    import {MISSING}
    DEVICES = ["cpu", "cuda"]
    HAS_BACKEND = True
except ImportError:
    DEVICES = ["cpu"]
    HAS_BACKEND = False


@pytest.mark.parametrize("device", DEVICES)
def test_device(device):
    torch.ones(1, device=device)


@pytest.mark.skipif(not HAS_BACKEND, reason="needs the backend")
def test_backend():
    torch.ones(1)
''')
    assert _tests(tmp_path) == {"test_device[cpu]": "cpu", "test_backend": "cpu"}


def test_installed_module_keeps_both_paths(tmp_path: Path) -> None:
    """Where the module is installed, any statement of the body may still raise: both paths stay open."""
    (tmp_path / "test_x.py").write_text('''import torch

try:
    import json
    HAS_JSON = True
except ImportError:
    HAS_JSON = False


def test_flag():
    if not HAS_JSON:
        torch.ones(1).cuda()
''')
    assert _tests(tmp_path) == {"test_flag": "gpu"}


def test_installing_the_module_recomputes_a_cached_result(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, cache, site = tmp_path / "repo", tmp_path / "cache", tmp_path / "site"
    root.mkdir()
    site.mkdir()
    (root / "test_x.py").write_text(OPTIONAL_BACKENDS)
    before = _tests(root, cache=cache)
    assert "test_backend[1-native]" in before and "test_backend[1-fast]" not in before
    assert _tests(root, cache=cache) == before  # (from the cache)
    (site / MISSING).mkdir()
    (site / MISSING / "__init__.py").write_text("def fast_kernel():\n    pass\n")
    monkeypatch.syspath_prepend(str(site))
    after = _tests(root, cache=cache)
    assert after != before
    # both paths: the list is one of two; `native` is in both (its ids are exact), `fast` may or may not be
    # collected (the function-level key covers it; its ids are not guessed)
    assert "test_backend[1-native]" in after and "test_backend[1-fast]" not in after and "test_backend" in after


BACKEND_CLASSES = f'''import warnings

import pytest
import torch


class Backend:
    name = "base"


class MissingBackend(Backend):
    name = "missing"

    def __init__(self):
        """The framework is imported when the backend is made."""
        from {MISSING} import tensor
        self.tensor = tensor


class JsonBackend(Backend):
    name = "json"

    def __init__(self):
        import json
        self.json = json


def collect(types):
    found = []
    for t in types:
        try:
            found.append(t())
        except ImportError:
            warnings.warn(f"no {{t.name}}")
    return found


MISSING_ONLY = collect([MissingBackend])


@pytest.mark.parametrize("backend", MISSING_ONLY)
def test_missing_only(backend):
    torch.ones(1)


@pytest.mark.parametrize("backend", [b.name for b in MISSING_ONLY] + ["cpu"])
def test_names(backend):
    torch.ones(1, device=backend)
'''


def test_constructor_importing_a_missing_module_raises_in_the_try(
        tmp_path: Path, collect_in: Callable[..., tuple[set[str], str]]) -> None:
    """einops' optional backends: a class whose `__init__` starts by importing its framework, made inside `try:
    ... except ImportError`, is left out where the framework is missing; an empty list is pytest's `[NOTSET]`."""
    (tmp_path / "test_x.py").write_text(BACKEND_CLASSES)
    got = _tests(tmp_path)
    collected, output = collect_in(tmp_path, "test_x.py")
    assert {f"test_x.py::{k}" for k in got} == collected, output
    assert got == {"test_missing_only[NOTSET]": "cpu", "test_names[cpu]": "cpu"}


@pytest.mark.parametrize("body", [
    "x = MissingBackend() if flag else None",  # may not run
    "found.append((make(), MissingBackend()))",  # another call runs first
    "found.append(JsonBackend())",  # its module is installed
    "found.append(lambda: MissingBackend())",  # not called here
])
def test_only_a_certain_first_call_takes_the_handler(tmp_path: Path, body: str) -> None:
    """Anything else keeps both paths: the flag the handler sets stays undecided, so the CUDA use under it
    counts."""
    src = BACKEND_CLASSES.split("\n\ndef collect")[0] + f'''

def make():
    return 1


def test_flag(flag):
    found = []
    ok = True
    try:
        {body}
    except ImportError:
        ok = False
    if not ok:
        torch.ones(1).cuda()
'''
    (tmp_path / "test_x.py").write_text(src)
    assert _tests(tmp_path) == {"test_flag": "gpu"}


def test_a_certain_first_call_decides_the_flag(tmp_path: Path) -> None:
    src = BACKEND_CLASSES.split("\n\ndef collect")[0] + '''

def test_flag():
    ok = True
    try:
        MissingBackend()
    except ImportError:
        ok = False
    if ok:
        torch.ones(1).cuda()
'''
    (tmp_path / "test_x.py").write_text(src)
    assert _tests(tmp_path) == {"test_flag": "cpu"}


def test_find_spec_of_a_missing_module_is_none(tmp_path: Path,
                                               collect_in: Callable[..., tuple[set[str], str]]) -> None:
    """`importlib.util.find_spec("x") is not None` decides a list and a flag like `try: import x` does."""
    (tmp_path / "test_x.py").write_text(f'''import importlib.util

import pytest
import torch

HAS_BACKEND = importlib.util.find_spec("{MISSING}") is not None
HAS_JSON = importlib.util.find_spec("json") is not None
BACKENDS = ["native"] + (["fast"] if HAS_BACKEND else [])


@pytest.mark.parametrize("backend", BACKENDS)
def test_backend(backend):
    if HAS_BACKEND:
        torch.ones(1).cuda()


def test_json():
    if not HAS_JSON:
        torch.ones(1).cuda()
''')
    got = _tests(tmp_path)
    collected, output = collect_in(tmp_path, "test_x.py")
    assert {f"test_x.py::{k}" for k in got} == collected, output
    assert got == {"test_backend[native]": "cpu", "test_json": "cpu"}


@pytest.mark.parametrize(("call", "decided"), [
    (f'_check_soft_dependencies("{MISSING}", severity="none")', True),
    (f'_check_soft_dependencies("json", "{MISSING}>=1.2", severity="warning")', True),
    ('_check_soft_dependencies("json", severity="none")', False),  # present: True needs more than a lookup
    (f'_check_soft_dependencies("{MISSING}")', False),  # severity "error": raises instead
    (f'_check_soft_dependencies(["json", "{MISSING}"], severity="none")', False),  # a disjunction
])
def test_soft_dependency_checks(tmp_path: Path, call: str, decided: bool) -> None:
    """scikit-base's `_check_soft_dependencies(..., severity="none")` is False where a package is missing
    (pytorch-forecasting: `if _check_soft_dependencies("cpflows", severity="none"): LOADERS += [...]`)."""
    (tmp_path / "test_x.py").write_text(f'''import pytest
import torch
from skbase.utils.dependencies import _check_soft_dependencies

LOADERS = ["a"]
if {call}:
    LOADERS += ["b"]


@pytest.mark.parametrize("loader", LOADERS)
def test_loader(loader):
    torch.ones(1)
''')
    # undecided: `[a]` is collected either way (round 15); `[b]` may be, so the function-level key covers it
    expected = {"test_loader[a]": "cpu"} if decided else {"test_loader[a]": "cpu", "test_loader": "cpu"}
    assert _tests(tmp_path) == expected


def test_torch_import_succeeds(tmp_path: Path, collect_in: Callable[..., tuple[set[str], str]]) -> None:
    """einx's `torch_is_available()`: `try: import torch; return True` takes the body; with anything else in the
    body that may raise, both paths stay open."""
    (tmp_path / "test_x.py").write_text('''import pytest


def torch_is_available():
    try:
        import torch

        return True
    except ImportError:
        return False


def torch_works():
    try:
        import torch
        torch.ones(1)
        ok = True
    except ImportError:
        ok = False
    return ok


SETUPS = ["numpy"] + (["torch"] if torch_is_available() else [])


@pytest.mark.parametrize("setup", SETUPS)
def test_setup(setup):
    pass


@pytest.mark.parametrize("ok", [torch_works()])
def test_works(ok):
    pass
''')
    got = _tests(tmp_path)
    collected, output = collect_in(tmp_path, "test_x.py")
    assert set(got) == {"test_setup[numpy]", "test_setup[torch]", "test_works"}  # (a function-level key)
    assert {f"test_x.py::{k}" for k in got} - {"test_x.py::test_works"} == collected - {
        "test_x.py::test_works[True]"}, output


def test_a_library_directory_is_not_an_installed_module(tmp_path: Path) -> None:
    """`import tinygrad` finds the installed package (missing here), not `lib/_src/impl/tinygrad.py` of a
    namespace directory no test lives in: pytest never puts that directory on sys.path (einx's backends)."""
    impl = tmp_path / "lib" / "_src" / "impl"
    impl.mkdir(parents=True)
    (tmp_path / "lib" / "__init__.py").write_text("")
    (impl / f"{MISSING}.py").write_text("X = 1\n")
    (tmp_path / "test_x.py").write_text(f'''import importlib.util

import pytest

BACKENDS = ["numpy"]
if importlib.util.find_spec("{MISSING}"):
    BACKENDS.append("missing")
try:
    import {MISSING}
    BACKENDS.append("imported")
except ImportError:
    pass


@pytest.mark.parametrize("backend", BACKENDS)
def test_backend(backend):
    pass
''')
    assert set(_tests(tmp_path)) == {"test_backend[numpy]"}
