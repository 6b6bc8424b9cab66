"""Fixtures of installed pytest plugins, as small Python stubs the interpreter reads like repo code.

pytest-torch (`pytest_torch/plugin.py`): `pytest_generate_tests` parametrizes `torch_device` over the
*available* devices (ids `cpu`, `cuda`; indirect), then `torch_dtype` over `@pytest.mark.torch_dtypes(...)`
or `float32`; fixtures that depend on `torch_device` (`make_tensor`, `make_batch`, `latency`,
`perf_baseline`, `training_runner`, ...) inherit it. On a CPU-only machine a test gets `[cpu]` only; the
`[cuda]` parametrization exists only where CUDA does, which is what the mark on the `cuda` parameter says.
These stubs keep only what matters for devices. They are used when the repository defines no fixture of
the same name (repo fixtures and conftest.py fixtures win, as in pytest).
"""

from __future__ import annotations

import re
from pathlib import Path

from tools.bounded_read import read_source

PYTEST_TORCH_REL = "<pytest-torch>/plugin.py"

# Parametrizations the plugin adds, in the order of its pytest_generate_tests (after fixture params).
PYTEST_TORCH_PARAM_ORDER = ("model_config", "torch_device", "benchmark_case", "torch_dtype")
CUDA_MARK = "pytest_torch_cuda_device"
DTYPES_MARK = "torch_dtypes"

PYTEST_TORCH_STUB = f'''
import pytest
import torch


@pytest.fixture(params=["cpu", pytest.param("cuda", marks=pytest.mark.{CUDA_MARK})])
def torch_device(request):
    return request.param


@pytest.fixture(params=["float32"])
def torch_dtype(request, torch_device):
    return getattr(torch, request.param)


@pytest.fixture
def torch_seed(request):
    return 0


@pytest.fixture
def torch_generator(torch_seed):
    return torch.Generator()


@pytest.fixture
def make_tensor(request, torch_generator, torch_device):
    def make(*shape, dtype=None, kind=None, low=None, high=None):
        return torch.zeros(*shape, dtype=dtype).to(device=torch_device)
    return make


class _OnDevice:
    def __init__(self, device):
        self.device = device


@pytest.fixture
def make_batch(make_tensor, torch_seed, torch_device):
    return _OnDevice(torch_device)


@pytest.fixture
def latency(request, torch_device):
    def measure(fn, *args, warmup=3, iters=20, **kwargs):
        return 0.0
    return measure


@pytest.fixture
def perf_baseline(request, torch_device):
    def check(fn, *args, **kwargs):
        return None
    return check


@pytest.fixture
def training_runner(torch_seed, torch_device):
    return _OnDevice(torch_device)


@pytest.fixture
def lightning_trainer(torch_seed, torch_device, tmp_path):
    return _OnDevice(torch_device)


@pytest.fixture
def hf_trainer(torch_seed, torch_device, tmp_path):
    return _OnDevice(torch_device)
'''.encode()

# What a test inherited from a base class outside the repository is, for the analysis: a method that adds
# nothing (the class's own marks, setUp and fixtures still apply). Used by the class-level fallback key.
EXTERNAL_TESTS_REL = "<external-base>/inherited.py"
EXTERNAL_TEST_POS = (1, 0)
EXTERNAL_TESTS_STUB = b"def inherited_test(self):\n    pass\n"

# a test function imported from outside the repository (`from doctest import testmod`): what it runs is not
# analysed, only what the test's module and conftests add around it
IMPORTED_TEST_REL = "<external-base>/imported.py"
IMPORTED_TEST_STUB = b"def imported_test():\n    pass\n"

# `argparse.Namespace(device="cpu")`, `types.SimpleNamespace(...)`: an object whose attributes are the
# constructor's keywords (interp_external.call_ext builds it); the class body defines nothing, so any other
# attribute is unknown, as on any object the analysis cannot see.
NAMESPACE_REL = "<external-base>/namespace.py"
NAMESPACE_POS = (1, 0)
NAMESPACE_STUB = b"class Namespace:\n    pass\n"
NAMESPACE_CONSTRUCTORS = frozenset({"argparse.Namespace", "types.SimpleNamespace"})

# The pytest item a conftest's item hook receives (item_hooks.py): attributes beyond those modelled are unknown
ITEM_REL = "<external-base>/item.py"
ITEM_STUB = b"class Item:\n    pass\n"

# an argparse.ArgumentParser (argparse_model.py): its options are an attribute the model keeps
PARSER_REL = "<external-base>/argparse_parser.py"
PARSER_STUB = b"".join(b"class %s:\n    pass\n\n\n" % name for name in (  # one every four lines (argparse_model.py)
    b"ArgumentParser", b"ArgumentGroup", b"SubParsersAction"))

# click's parameter declarations, command decorators and test runner, typer's application and parameters
# (click_model.py, typer_model.py): what the models keep is in their attributes
CLICK_REL = "<external-base>/click_objects.py"
CLICK_STUB = b"".join(b"class %s:\n    pass\n\n\n" % name for name in (  # one every four lines (click_model.py,
    b"Parameter", b"CommandMaker", b"CliRunner", b"Typer", b"TyperParameter", b"TyperCommandMaker"))  # typer_model.py)

# an OmegaConf DictConfig (omegaconf_model.py): its keys are its attributes
CONFIG_REL = "<external-base>/omegaconf_config.py"
CONFIG_STUB = b"class DictConfig:\n    pass\n"

VIRTUAL_SOURCES = {PYTEST_TORCH_REL: PYTEST_TORCH_STUB, EXTERNAL_TESTS_REL: EXTERNAL_TESTS_STUB,
                   IMPORTED_TEST_REL: IMPORTED_TEST_STUB, NAMESPACE_REL: NAMESPACE_STUB, ITEM_REL: ITEM_STUB,
                   PARSER_REL: PARSER_STUB, CLICK_REL: CLICK_STUB, CONFIG_REL: CONFIG_STUB}


def dtype_param_name(path_or_name: str) -> str:
    """`torch.float16` / `"float16"` -> `float16` (pytest-torch's _dtype_name)."""
    return path_or_name.replace("torch.", "")


_DECLARES = re.compile(rb"pytest[-_]torch\b", re.IGNORECASE)
_DECLARATION_FILES = ("pyproject.toml", "setup.cfg", "setup.py", "tox.ini", "Pipfile", "environment.yml",
                      "environment.yaml", "conftest.py")


def declares_pytest_torch(root: Path) -> bool:
    """Whether the repository says it uses pytest-torch (requirements, project metadata, pytest_plugins).

    Then the plugin parametrizes a repository's own `torch_device` fixture too, as it does at run time.
    """
    try:
        names = [p.name for p in root.iterdir() if p.is_file()]
    except OSError:
        return False
    for name in sorted(names):
        if name in _DECLARATION_FILES or (name.startswith("requirements") and name.endswith((".txt", ".in"))):
            data, _ = read_source(root, name)  # (bounded, never blocks)
            if data is not None and _DECLARES.search(data):
                return True
    return False
