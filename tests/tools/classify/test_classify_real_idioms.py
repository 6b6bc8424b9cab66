"""Idioms found by the accuracy study on real suites (docs/classifier-accuracy.md)."""

from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path

import pytest

from tools.classify import conventions
from tools.classify.collect import to_safe_name
from tools.classify.dataflow import _swallows_device_errors
from tools.classify.runner import run

CORPUS = Path(__file__).resolve().parents[2] / "fixtures" / "classify"
REL = "tests/realworld/test_library_idioms.py"


@pytest.fixture(scope="module")
def tests(tmp_path_factory: pytest.TempPathFactory):
    dst = tmp_path_factory.mktemp("idioms") / "repo"
    shutil.copytree(CORPUS / "repo", dst)
    return run(dst, paths=["tests/realworld"], cache_dir=None).files[REL].tests


def test_other_accelerator_checks_are_false_everywhere() -> None:
    for name in ("is_mlu_available", "is_torch_npu_available", "is_torch_xla_available", "is_sdaa_available",
                 "is_musa_available", "is_neuron_available", "is_torch_mlu_bf16_available"):
        assert conventions.known_call(name, 0) is False and conventions.known_call(name, 2) is False, name
    assert conventions.known_call("is_torch_cuda_available", 1) is True
    assert conventions.known_call("is_cuda_available", 0) is False
    assert conventions.known_call("is_available_somewhere", 0) is NotImplemented


def test_parameterized_safe_names() -> None:
    assert to_safe_name("fp16 / bf16") == "fp16_bf16"
    assert to_safe_name("use-cuda") == "use_cuda"


@pytest.mark.parametrize(("src", "swallowed"), [
    ("try:\n    f()\nexcept Exception:\n    continue_ = 1\n", True),
    ("try:\n    f()\nexcept:\n    pass\n", True),
    ("try:\n    f()\nexcept (ValueError, RuntimeError):\n    pass\n", True),
    ("try:\n    f()\nexcept RuntimeError:\n    raise ValueError()\n", False),
    ("try:\n    f()\nexcept Exception:\n    pytest.skip('no cuda')\n", False),
    ("try:\n    f()\nexcept ImportError:\n    pass\n", False),
    ("try:\n    f()\nfinally:\n    pass\n", False),
])
def test_which_handlers_swallow_device_errors(src: str, swallowed: bool) -> None:
    node = ast.parse(src).body[0]
    assert isinstance(node, ast.Try)
    assert _swallows_device_errors(node) is swallowed


def test_parameterized_expand_names_match_the_package(tests) -> None:
    names = sorted(k.split("::")[-1] for k in tests if "expand" in k)
    assert names == ["test_expand_default_0_fp32", "test_expand_default_1_fp16", "test_expand_device_0_cpu",
                     "test_expand_device_1_cuda", "test_expand_named_use_pytorch", "test_expand_named_use_safetensors",
                     "test_expand_numbers_0", "test_expand_numbers_1"]
    assert tests["BackendTests::test_expand_device_1_cuda"].label == "gpu"
    assert tests["BackendTests::test_expand_device_0_cpu"].label == "cpu"


def test_library_idioms_labels(tests) -> None:
    labels = {k: v.label for k, v in tests.items()}
    expected = json.loads((CORPUS / "expected.json").read_text())
    assert labels == {k.split("::", 1)[1]: v[0] for k, v in expected.items() if k.startswith(REL + "::")}
    # the evidence of the cases that stay gpu / unknown says why
    assert "re-raised" not in tests["BackendTests::test_reraised_probe"].reasons[0]
    assert "torch.tensor(device='cuda:0')" in tests["BackendTests::test_reraised_probe"].reasons[0]
    assert "dynamic dispatch" in tests["BackendTests::test_computed_attribute_call"].reasons[0]
    assert "calls fit()" in tests["BackendTests::test_mixin_super_init_cuda"].reasons[0]
    assert "pytest.skip() reached" in tests["test_string_method_guard[cuda]"].reasons[0]


def test_numpy_dtype_ids_use_the_class_name() -> None:
    from tools.classify.collect import idval
    from tools.classify.values import Ext

    assert idval(Ext("numpy.float16"), "dtype", 1) == "float16"  # pytest: np.float16.__name__
    assert idval(Ext("torch.float16"), "dtype", 1) == "dtype1"  # a torch.dtype has no __name__
