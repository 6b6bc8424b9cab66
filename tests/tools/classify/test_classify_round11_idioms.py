"""Round 11 idioms from new real suites: argparse/SimpleNamespace objects carrying a device (mace-torch), and
parametrize argument names joined by a decorator factory (xitorch). Corpus files
tests/tools/classify/fixtures/repo/tests/round11/ carry the labels (expected.json); here the ids are checked
against `pytest --collect-only -q` and the rules at their edges."""

from __future__ import annotations

from pathlib import Path

from tools.classify.interp_calls import MAX_CONTAINER
from tools.classify.runner import run

ROUND11 = "tests/round11"


# a module-level registry that a decorator fills: the analysis does not follow stores into it
REGISTRY_PRELUDE = '''import pytest

REGISTRY = {}


def register(fn):
    REGISTRY[fn.__name__] = fn
    return fn


@register
def double(x):
    return 2 * x
'''


def _keys(root: Path, path: str) -> dict[str, str]:
    result = run(root, paths=[path], cache_dir=None)
    return {f"{rel}::{k}": v.label for rel, r in result.files.items() for k, v in r.tests.items()}


def test_round11_ids_match_pytest_collect_only(corpus: Path, collect_only) -> None:
    collected, out = collect_only(ROUND11)
    assert len(collected) == 19, out
    # the decorator factory adds cuda devices where CUDA is available (round 18: its call is not literal): those
    # cases are keys a machine with GPUs collects
    only_with_gpus = {f"{ROUND11}/test_computed_argnames.py::{k}" for k in (
        "test_default[dtype2-device2]", "test_default[dtype3-device3]", "test_product[dtype2-device2-1]",
        "test_product[dtype3-device3-2]")}
    assert set(_keys(corpus, ROUND11)) == collected | only_with_gpus


def _write(tmp_path: Path, text: str) -> Path:
    (tmp_path / "test_x.py").write_text(text)
    return tmp_path


def test_join_of_unknown_names_keeps_a_function_key(tmp_path: Path) -> None:
    root = _write(tmp_path, '''import platform

import pytest


@pytest.mark.parametrize(",".join(["a", platform.node()]), [(1, 2)])
def test_x(a, b):
    pass
''')
    assert _keys(root, "test_x.py") == {"test_x.py::test_x": "cpu"}


def test_empty_dict_default_is_empty_but_a_registry_is_not(tmp_path: Path, collect_in) -> None:
    """A parameter's `{}` default has no keys; a module-level `{}` that a decorator fills is a registry whose
    entries the import stores (registries.py), so its cases get pytest's ids instead of a wrong empty list."""
    root = _write(tmp_path, REGISTRY_PRELUDE + '''

def cases(extra={}):
    return ["base"] + list(extra.keys())


@pytest.mark.parametrize("name", cases())
def test_default(name):
    pass


@pytest.mark.parametrize("name", list(REGISTRY.keys()))
def test_registry(name):
    pass
''')
    assert collect_in(root, "test_x.py")[0] == {"test_x.py::test_default[base]", "test_x.py::test_registry[double]"}
    assert _keys(root, "test_x.py") == {"test_x.py::test_default[base]": "cpu",
                                        "test_x.py::test_registry[double]": "cpu"}


def test_src_layout_with_a_src_init_resolves_the_installed_package(tmp_path: Path) -> None:
    """compressed-tensors ships `src/__init__.py` beside `package_dir={"": "src"}`: `import cpkg` is the package
    under src/ all the same, so its `.cuda()` is seen and its str-Enum ids are its values."""
    (tmp_path / "src" / "cpkg").mkdir(parents=True)
    (tmp_path / "src" / "__init__.py").write_text("")
    (tmp_path / "src" / "cpkg" / "__init__.py").write_text("")
    (tmp_path / "src" / "cpkg" / "base.py").write_text('''from enum import Enum


class CompressionFormat(str, Enum):
    int_quantized = "int-quantized"


def to_gpu(t):
    return t.cuda()
''')
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_srcinit.py").write_text('''import pytest
import torch
from cpkg.base import CompressionFormat, to_gpu


@pytest.mark.parametrize("f", [CompressionFormat.int_quantized])
def test_enum_id(f):
    assert torch.zeros(1).sum() == 0


def test_library_cuda():
    to_gpu(torch.zeros(1))
''')
    assert _keys(tmp_path, "tests") == {"tests/test_srcinit.py::test_enum_id[int-quantized]": "cpu",
                                         "tests/test_srcinit.py::test_library_cuda": "gpu"}


def test_containers_past_the_bound_or_grown_by_unknown_items_are_unknown(tmp_path: Path, collect_in) -> None:
    """A list the analysis cannot follow exactly (past MAX_CONTAINER items, extended by an unknown iterable) is
    unknown, so its parametrization keeps a function key; a truncated or stale list would give exact-looking ids
    with cases missing (tests never classified)."""
    root = _write(tmp_path, f'''import platform

import pytest

BIG = [f"c{{i}}" for i in range({MAX_CONTAINER - 4})]
BIG.extend(["x1", "x2", "x3", "x4", "x5", "x6", "x7"])
GROWN = ["a"]
GROWN.extend(platform.uname())
SMALL = ["a"]
SMALL.extend(["b", "c"])


@pytest.mark.parametrize("name", BIG)
def test_big(name):
    pass


@pytest.mark.parametrize("name", GROWN)
def test_grown(name):
    pass


@pytest.mark.parametrize("name", SMALL)
def test_small(name):
    pass
''')
    assert len(collect_in(root, "test_x.py")[0]) == MAX_CONTAINER + 3 + 7 + 3
    assert _keys(root, "test_x.py") == {"test_x.py::test_big": "cpu", "test_x.py::test_grown": "cpu",
                                         **{f"test_x.py::test_small[{n}]": "cpu" for n in "abc"}}


def test_wrapper_parametrize_pytest_rejects_keeps_a_function_key(tmp_path: Path, collect_in) -> None:
    """`functools.wraps` without a `__signature__`: pytest reads the test's signature, which lacks the wrapper's
    `device`, and fails collecting ("function uses no argument 'device'"): no id may be spelled for it. The same
    wrapper without wraps is collected with its ids, and its `device` value reaches the wrapper's body."""
    root = _write(tmp_path, '''import functools

import pytest
import torch


def wrapped(test):
    @functools.wraps(test)
    def wrapper(*args, device, **kwargs):
        torch.ones(1, device=device)
        return test(*args, **kwargs)
    return pytest.mark.parametrize("device", ["cpu", "cuda"])(wrapper)


@wrapped
def test_rejected():
    pass
''')
    assert collect_in(root, "test_x.py")[0] == set()
    assert _keys(root, "test_x.py") == {"test_x.py::test_rejected": "unknown"}  # device has no known value
    (root / "test_x.py").write_text((root / "test_x.py").read_text().replace("    @functools.wraps(test)\n", ""))
    assert collect_in(root, "test_x.py")[0] == {"test_x.py::test_rejected[cpu]", "test_x.py::test_rejected[cuda]"}
    assert _keys(root, "test_x.py") == {"test_x.py::test_rejected[cpu]": "cpu", "test_x.py::test_rejected[cuda]": "gpu"}


def test_current_accelerator_is_none_on_a_cpu_machine(tmp_path: Path, collect_in) -> None:
    """`torch.accelerator.current_accelerator()` is None without an accelerator: pytest ids it `None`, and
    `current_accelerator() or torch.device("cpu")` is the CPU (compressed-tensors' test_forward.py, test_load.py).
    A machine with CUDA collects other ids: they are emitted for that world only, labelled gpu."""
    root = _write(tmp_path, '''import pytest
import torch

acc = torch.accelerator.current_accelerator() or torch.device("cpu")


@pytest.mark.parametrize("device", [torch.device("cpu"), torch.accelerator.current_accelerator()])
def test_ids(device):
    torch.ones(1, device=device)


@pytest.mark.parametrize("name", [acc.type, "meta"])
def test_type(name):
    torch.ones(1, device=name)


def test_attr_of_none():
    torch.ones(1, device=torch.accelerator.current_accelerator().type)
''')
    assert collect_in(root, "test_x.py")[0] == {"test_x.py::test_ids[device0]", "test_x.py::test_ids[None]",
                                             "test_x.py::test_type[cpu]", "test_x.py::test_type[meta]",
                                             "test_x.py::test_attr_of_none"}
    assert _keys(root, "test_x.py") == {
        "test_x.py::test_ids[device0]": "cpu", "test_x.py::test_ids[None]": "cpu",
        "test_x.py::test_ids[device1]": "gpu",  # collected where CUDA exists
        "test_x.py::test_type[cpu]": "cpu", "test_x.py::test_type[meta]": "cpu", "test_x.py::test_type[cuda]": "gpu",
        "test_x.py::test_attr_of_none": "unknown"}  # AttributeError on a CPU machine: not a CPU verdict


def test_jit_script_function_is_ided_script_function(tmp_path: Path, collect_in) -> None:
    """A `@torch.jit.script` function's `__name__` is its class's: pytest ids it `ScriptFunction` (xitorch's
    test_pure_function.py); a plain function keeps its name."""
    root = _write(tmp_path, '''import pytest
import torch


def plain(x):
    return x + 1


@torch.jit.script
def scripted(x):
    return x + 1


@pytest.mark.parametrize("fcn", [plain, scripted])
def test_fcn(fcn):
    fcn(torch.ones(1))
''')
    assert collect_in(root, "test_x.py")[0] == {"test_x.py::test_fcn[plain]", "test_x.py::test_fcn[ScriptFunction]"}
    assert _keys(root, "test_x.py") == {"test_x.py::test_fcn[plain]": "cpu",
                                        "test_x.py::test_fcn[ScriptFunction]": "cpu"}


def test_a_default_rebound_to_a_registry_is_not_taken_for_empty(tmp_path: Path, collect_in) -> None:
    """Only the parameter's own `{}` default is known empty: rebinding the name, on any path, ends that."""
    root = _write(tmp_path, REGISTRY_PRELUDE + '''

def cases(extra={}, use_registry=True):
    if use_registry:
        extra = REGISTRY
    return ["base"] + list(extra.keys())


@pytest.mark.parametrize("name", cases())
def test_rebound(name):
    pass
''')
    assert collect_in(root, "test_x.py")[0] == {"test_x.py::test_rebound[base]", "test_x.py::test_rebound[double]"}
    assert _keys(root, "test_x.py") == {"test_x.py::test_rebound[base]": "cpu",
                                        "test_x.py::test_rebound[double]": "cpu"}


def test_case_that_exists_only_with_an_accelerator_names_no_particular_one(tmp_path: Path) -> None:
    """optimum-quanto: `names.append("quanto_mps")` under `torch.backends.mps.is_available()`. The case exists
    only on a machine with an accelerator (gpu, for the GPU runners); its reason must not claim CUDA."""
    root = _write(tmp_path, '''import pytest
import torch

NAMES = ["cpp"]
if torch.backends.mps.is_available():
    NAMES.append("mps")


@pytest.mark.parametrize("name", NAMES)
def test_x(name):
    pass
''')
    result = run(root, paths=["test_x.py"], cache_dir=None)
    tests = result.files["test_x.py"].tests
    assert {k: v.label for k, v in tests.items()} == {"test_x[cpp]": "cpu", "test_x[mps]": "gpu"}
    reasons = " ".join(tests["test_x[mps]"].reasons)
    assert "exists only on a machine with a GPU" in reasons and "CUDA" not in reasons
