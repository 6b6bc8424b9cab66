"""Round 29: values that are None on some paths, the default device, click commands still being made (corpus
tests/round29, each test run with pytest on CPU-only torch first; labels in expected.json)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tools.classify.runner import run

NONE_PATHS = "tests/round29/test_none_paths.py"
CLI = "tests/round29/test_cli_builder.py"
TreeWriter = Callable[[Path, dict[str, str]], Path]  # the write_tree fixture (conftest.py)


def _labels(root: Path, path: str) -> dict[str, str]:
    return {k: v.label for k, v in run(root, paths=[path], cache_dir=None, workers=1).files[path].tests.items()}


def test_an_attribute_read_goes_on_only_where_the_value_is_not_none(corpus: Path) -> None:
    # before: `p.device` of "a Points object or None" was unknown, and the device handed to library code with it
    # made test_device_passed_on `unknown` (torchphysics' samplers); CUDA reached through such a value still counts
    assert _labels(corpus, NONE_PATHS) == {
        "test_device_of_maybe_none": "cpu", "test_device_passed_on": "cpu", "test_maybe_none_then_cuda": "gpu",
        "test_maybe_none_on_cuda": "gpu", "test_default_device": "cpu", "test_default_device_set": "gpu"}


def test_the_default_device_is_the_cpu_unless_the_test_set_another(corpus: Path) -> None:
    tests = run(corpus, paths=[NONE_PATHS], cache_dir=None, workers=1).files[NONE_PATHS].tests
    assert tests["test_default_device"].reasons == (f"{NONE_PATHS}:34: no GPU use found",)
    assert tests["test_default_device_set"].reasons == (
        f"{NONE_PATHS}:40: torch.set_default_device('cuda') needs a CUDA device",)


def test_a_command_being_decorated_by_an_unknown_option_is_not_run(corpus: Path) -> None:
    # before: `command = option(command)` with an option the analysis cannot read ran the half-made command without
    # a command line, so its device was unknown (pykeen's 48 CLI tests); a line that names the device stays unknown
    # (the unknown option may change how it parses)
    assert _labels(corpus, CLI) == {
        "test_built_cli_default_device": "cpu", "test_built_cli_cuda_device": "unknown", "test_built_cuda_cli": "gpu"}
    tests = run(corpus, paths=[CLI], cache_dir=None, workers=1).files[CLI].tests
    assert tests["test_built_cuda_cli"].reasons[0].startswith(f"{CLI}:21: calls main() -> ")


def test_a_module_forwarding_to_an_unknown_model_has_that_model_s_device(corpus: Path) -> None:
    # before: `unknown` (peft's PeftModel over a transformers model: 12,732 of its keys); forwarded to a
    # configuration the device stays a chosen one
    path = "tests/round29/test_forwarded_device.py"
    assert _labels(corpus, path) == {"test_device_of_wrapped_external_model": "cpu",
                                     "test_device_of_forwarded_configuration": "unknown"}


def test_a_custom_autograd_function_runs_its_forward_and_backward(corpus: Path) -> None:
    # before: `Function.apply` was an external call, so nothing the function did was seen: every CUDA test here was
    # `cpu` (liger-kernel: 298 of its GPU tests, whose Triton kernels launch from forward and backward)
    path = "tests/round29/test_autograd_apply.py"
    assert _labels(corpus, path) == {
        "test_apply_cuda_forward": "gpu", "test_apply_bound_at_import": "gpu", "test_apply_cpu": "cpu",
        "test_apply_cuda_backward": "gpu", "test_setup_context_cpu": "cpu", "test_setup_context_cuda": "gpu"}
    tests = run(corpus, paths=[path], cache_dir=None, workers=1).files[path].tests
    assert tests["test_apply_cuda_backward"].reasons == (
        f"{path}:26: calls backward() -> tests/round29/autograd_ops.py:35: torch.ones(device='cuda') needs a CUDA "
        "device",)


def test_a_compiled_function_runs_as_the_original(corpus: Path) -> None:
    # before: `torch.compile(fn)`, `torch.jit.script(fn)` and `torch.jit.trace(fn, example)` were external calls whose
    # result did nothing when called: their three CUDA tests were `cpu`
    path = "tests/round29/test_compiled.py"
    assert _labels(corpus, path) == {
        "test_compile_cuda": "gpu", "test_compile_cpu": "cpu", "test_compile_decorator_cuda": "gpu",
        "test_compile_module_cpu": "cpu", "test_jit_script_cuda": "gpu", "test_jit_trace_cuda": "gpu",
        "test_trace_cpu": "cpu"}


def test_compiled_functions_as_parameters_have_pytest_s_ids(tmp_path: Path, write_tree: TreeWriter) -> None:
    # pytest 9.2 collects these as written: a scripted function is named by its class, a traced one has no name
    root = write_tree(tmp_path, {"test_ids.py": """
        import pytest
        import torch

        def g(x):
            return x * 2

        @pytest.mark.parametrize("f", [torch.jit.script(g), torch.compile(g), torch.jit.trace(g, torch.ones(2))])
        def test_ids(f):
            pass
    """})
    assert sorted(run(root, paths=["test_ids.py"], cache_dir=None, workers=1).files["test_ids.py"].tests) == [
        "test_ids[ScriptFunction]", "test_ids[f2]", "test_ids[g]"]
