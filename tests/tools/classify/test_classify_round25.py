"""Round 25: helpers and methods under in-repo decorators run their wrapper; torch methods called unbound (corpus
tests/round25, labels in expected.json, each test run with pytest on CPU-only torch first)."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

from tools.classify.evidence import Verdict
from tools.classify.runner import run


def _tests(corpus: Path, path: str) -> dict[str, Verdict]:
    return run(corpus, paths=[path], cache_dir=None).files[path].tests


def _file(repo_with_test: Callable[[str], Path], text: str) -> dict[str, Verdict]:
    root = repo_with_test(textwrap.dedent(text))
    return run(root, paths=["test_mine.py"], cache_dir=None, workers=1).files["test_mine.py"].tests


def test_a_helper_under_an_in_repo_decorator_runs_its_wrapper(corpus: Path) -> None:
    tests = _tests(corpus, "tests/round25/test_decorated.py")
    # before: the module-level def was called undecorated, so a wrapper moving the arguments to CUDA, a decorator
    # factory's `x.to("cuda")`, a class-based decorator's `__call__` and a wrapper raising without CUDA were not seen
    for name in ("test_decorator_moves_args_to_cuda", "test_decorator_factory_cuda", "test_class_decorator_cuda",
                 "test_requires_cuda_wrapper", "test_decorated_lambda_map_cuda"):
        assert tests[name].label == "gpu", (name, tests[name].reasons)
    assert "calls wrapper()" in tests["test_decorator_moves_args_to_cuda"].reasons[0]
    # a decorator that only wraps, or one that registers and hands the function back, changes nothing
    for name in ("test_transparent_decorator_cpu", "test_decorator_factory_cpu", "test_registering_decorator_cpu",
                 "test_decorated_passed_as_callback_cpu", "test_lru_cache_call_form"):
        assert tests[name].label == "cpu", (name, tests[name].reasons)
    assert tests["test_transparent_decorator_cuda_body"].label == "gpu"


def test_a_method_under_an_in_repo_decorator_runs_its_wrapper(corpus: Path) -> None:
    tests = _tests(corpus, "tests/round25/test_decorated_methods.py")
    # the wrapper gets the object first; `model(x)` reaches a decorated forward; a staticmethod over the decorator
    for name in ("test_method_wrapper_cuda", "test_forward_wrapper_cuda", "test_static_wrapper_cuda",
                 "test_requires_cuda_method", "test_assigned_wrapper_cuda"):
        assert tests[name].label == "gpu", (name, tests[name].reasons)
    for name in ("test_method_wrapper_cpu", "test_plain_method_cpu"):
        assert tests[name].label == "cpu", (name, tests[name].reasons)


def test_torch_methods_called_unbound_are_the_methods_of_their_first_argument(corpus: Path) -> None:
    tests = _tests(corpus, "tests/round25/test_decorated.py")
    assert tests["test_unbound_module_to_cuda"].label == "gpu"  # `nn.Module.to(m, "cuda")`: was `cpu`
    assert tests["test_unbound_tensor_cuda"].label == "gpu"
    assert tests["test_unbound_tensor_to_cpu"].label == "cpu"  # `torch.Tensor.to(x, "cpu")`: was `gpu`


def test_a_wrapper_the_analysis_cannot_follow_keeps_what_the_function_does(
        repo_with_test: Callable[[str], Path]) -> None:
    tests = _file(repo_with_test, """
        import functools
        import torch
        import some_pool_library

        def pooled(fn):
            @functools.wraps(fn)
            def wrapper(*args):
                return some_pool_library.run(fn, *args)
            return wrapper

        @pooled
        def to_gpu(x):
            return x.cuda()

        @pooled
        def plus_one(x):
            return x + 1

        def test_gpu():
            to_gpu(torch.ones(1))

        def test_cpu():
            plus_one(torch.ones(1))
    """)
    assert tests["test_gpu"].label == "gpu"
    assert tests["test_cpu"].label == "cpu"


def test_a_decorated_function_keeps_its_name_in_ids(repo_with_test: Callable[[str], Path]) -> None:
    # functools.wraps keeps `__name__`: pytest ids the parameter by it, not by the wrapper's
    tests = _file(repo_with_test, """
        import functools
        import pytest
        import torch

        def to_cuda(fn):
            @functools.wraps(fn)
            def wrapper(x):
                return fn(x.cuda())
            return wrapper

        @to_cuda
        def double(x):
            return x * 2

        def triple(x):
            return x * 3

        @pytest.mark.parametrize("fn", [double, triple])
        def test_apply(fn):
            fn(torch.ones(1))
    """)
    assert tests["test_apply[double]"].label == "gpu"
    assert tests["test_apply[triple]"].label == "cpu"


def test_device_forms_a_cpu_build_refuses(corpus: Path) -> None:
    tests = _tests(corpus, "tests/round25/test_device_forms.py")
    # before: `cpu` (each raises on a CPU-only torch: "pin_memory=True requires a CUDA or other accelerator
    # backend", "type torch.cuda.FloatTensor not available", "CUDA_HOME environment variable is not set")
    for name in ("test_tensor_pin_memory_kw", "test_default_tensor_type_cuda", "test_cuda_extension_class",
                 "test_cuda_extension_next_to_test"):
        assert tests[name].label == "gpu", (name, tests[name].reasons)
    # a DataLoader's pin_memory only warns; a tensor type or default type that is not CUDA's; C++ builds
    for name in ("test_dataloader_pin_memory_cpu", "test_default_tensor_type_double", "test_type_cpu_string",
                 "test_cpp_extension_cpu_only_inline", "test_memory_format_to"):
        assert tests[name].label == "cpu", (name, tests[name].reasons)


def test_cuda_extension_sources_decide_the_build(repo_with_test: Callable[[str], Path]) -> None:
    tests = _file(repo_with_test, """
        from torch.utils.cpp_extension import load, load_inline

        def test_cu_source():
            load(name="a", sources=["a.cpp", "a_kernel.cu"])

        def test_cpp_sources():
            load(name="b", sources=["b.cpp"])

        def test_with_cuda_flag():
            load(name="c", sources=["c.cpp"], with_cuda=True)

        def test_inline_cuda():
            load_inline(name="d", cpp_sources="int f();", cuda_sources="__global__ void k() {}")

        def test_inline_cpp():
            load_inline(name="e", cpp_sources="int f() { return 1; }", functions=["f"])
    """)
    for name in ("test_cu_source", "test_with_cuda_flag", "test_inline_cuda"):
        assert tests[name].label == "gpu", (name, tests[name].reasons)
    for name in ("test_cpp_sources", "test_inline_cpp"):
        assert tests[name].label == "cpu", (name, tests[name].reasons)


def test_what_a_wrapper_leaves_undecided_is_not_counted(repo_with_test: Callable[[str], Path]) -> None:
    # a generic decorator converting scalars on "the device of the tensors given", kept in a class attribute the
    # analysis does not follow (evotorch's `expects_ndim`): the function runs as before, the wrapper's unresolved
    # device is no finding; its certain needs still are (test_a_helper_under_an_in_repo_decorator_runs_its_wrapper)
    tests = _file(repo_with_test, """
        import functools
        import torch

        def tensors_only(fn):
            @functools.wraps(fn)
            def wrapper(*args):
                class seen:
                    devices = None

                    @classmethod
                    def update(cls):
                        cls.devices = {a.device for a in args if isinstance(a, torch.Tensor)}

                out = []
                for a in args:
                    if not isinstance(a, torch.Tensor):
                        seen.update()
                        [device] = seen.devices
                        a = torch.as_tensor(a, device=device)
                    out.append(a)
                return fn(*out)
            return wrapper

        @tensors_only
        def scale(c, x):
            return c * x

        def test_scale():
            assert scale(2.0, torch.ones(2)).sum() == 4
    """)
    assert tests["test_scale"].label == "cpu", tests["test_scale"].reasons


def test_singledispatch_runs_the_implementation_of_the_arguments_type(corpus: Path) -> None:
    tests = _tests(corpus, "tests/round25/test_dispatch.py")
    # before: the undecorated base ran (`raise NotImplementedError`), the registered `x.cuda()` was not seen
    for name in ("test_singledispatch_tensor_cuda", "test_singledispatchmethod_cuda",
                 "test_singledispatch_unknown_type_cuda"):
        assert tests[name].label == "gpu", (name, tests[name].reasons)
    # a list and an int reach their own implementations; the annotation names the type (`register` bare)
    for name in ("test_singledispatch_list_cpu", "test_singledispatch_annotation_cpu", "test_singledispatchmethod_cpu"):
        assert tests[name].label == "cpu", (name, tests[name].reasons)


def test_assigning_a_property_runs_its_setter(corpus: Path) -> None:
    tests = _tests(corpus, "tests/round25/test_dispatch.py")
    # `h.dev = "cuda"` runs `@dev.setter` (`self._dev = torch.device(value)`): before, `dev` was stored beside the
    # property and `_dev` kept "cpu" (a false CPU)
    assert tests["test_property_setter_cuda"].label == "gpu"
    assert tests["test_property_setter_cpu"].label == "cpu"
    assert tests["test_classmethod_factory_cuda"].label == "gpu"


def test_singledispatch_on_in_repo_classes_follows_the_mro(repo_with_test: Callable[[str], Path]) -> None:
    tests = _file(repo_with_test, """
        import functools
        import torch

        class Batch:
            pass

        class GpuBatch(Batch):
            pass

        class Other:
            pass

        @functools.singledispatch
        def place(obj):
            return obj

        @place.register(Batch)
        def _(obj):
            return torch.zeros(1, device="cuda")

        def test_subclass():
            place(GpuBatch())

        def test_unrelated():
            place(Other())
    """)
    assert tests["test_subclass"].label == "gpu"
    assert tests["test_unrelated"].label == "cpu"


def test_a_tests_wrapper_calls_the_test_with_the_arguments_it_chooses(corpus: Path) -> None:
    tests = _tests(corpus, "tests/round25/test_test_decorators.py")
    # `@with_device("cuda") def test_x(device=None)`: the wrapper calls the test with device="cuda". Before, the
    # wrapper ran around a placeholder of the test, and the test alone saw its default `None` (a false CPU)
    assert tests["test_with_cuda"].label == "gpu", tests["test_with_cuda"].reasons
    assert tests["TestMethods::test_method_cuda"].label == "gpu"
    assert tests["test_with_cpu"].label == "cpu"
    assert tests["test_retry_cuda"].label == "gpu"
    for name in ("test_retry_cpu", "test_seeded_cpu", "test_no_grad_cpu", "TestMethods::test_method_seeded"):
        assert tests[name].label == "cpu", (name, tests[name].reasons)


def _repo(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text))
    return root


def test_a_conftests_startup_hooks_run_before_its_tests(tmp_path: Path) -> None:
    test = """
        import torch

        def test_ones():
            assert torch.ones(1).sum() == 1
    """
    root = _repo(tmp_path, {
        # `torch.set_default_device("cuda")` in pytest_configure: every test allocates on CUDA (was `cpu`)
        "gpu/conftest.py": """
            import torch

            def pytest_configure(config):
                config.addinivalue_line("markers", "slow: slow tests")
                torch.set_default_device("cuda")
        """,
        "gpu/test_a.py": test,
        # an opt-in flag whose declared default is off, a guarded set-up, a dtype: nothing a CPU cannot do
        "cpu/conftest.py": """
            import torch

            def pytest_addoption(parser):
                parser.addoption("--gpu", action="store_true", default=False)

            def pytest_configure(config):
                if config.getoption("--gpu"):
                    torch.set_default_device("cuda")

            def pytest_sessionstart(session):
                torch.set_default_dtype(torch.float64)
                if torch.cuda.is_available():
                    torch.cuda.set_device(0)
        """,
        "cpu/test_b.py": test,
    })
    files = run(root, cache_dir=None, workers=1).files
    gpu = files["gpu/test_a.py"].tests["test_ones"]
    assert gpu.label == "gpu" and "conftest startup hook" in gpu.reasons[0], gpu.reasons
    assert files["cpu/test_b.py"].tests["test_ones"].label == "cpu", files["cpu/test_b.py"].tests["test_ones"].reasons


def test_param_ids_are_escaped_as_pytest_escapes_them(ids_vs_pytest) -> None:
    got = ids_vs_pytest("tests/round25/test_param_ids.py")
    # before: `test_param_ids[é/x]` and `test_fixture_param_ids[ü]` (pytest prints `\xe9/x`, `\xfc`)
    assert "tests/round25/test_param_ids.py::test_param_ids[\\xe9/x]" in got.collected
    assert set(got.tests) == got.collected, got.output


def test_a_wrapper_that_provably_adds_nothing_is_not_run(repo_with_test: Callable[[str], Path]) -> None:
    # a timer or memoiser whose code names no device, skip or import (inert.py): the function alone is analysed
    tests = _file(repo_with_test, """
        import functools
        import time
        import torch

        def timed(fn):
            @functools.wraps(fn)
            def wrapper(*args, **kwargs):
                start = time.perf_counter()
                out = fn(*args, **kwargs)
                print(time.perf_counter() - start)
                return out
            return wrapper

        @timed
        def to_gpu(x):
            return x.cuda()

        def test_gpu():
            to_gpu(torch.ones(1))
    """)
    reasons = tests["test_gpu"].reasons
    assert tests["test_gpu"].label == "gpu" and "calls to_gpu()" in reasons[0] and "wrapper" not in reasons[0], reasons


def test_builtins_over_known_device_lists(corpus: Path) -> None:
    tests = _tests(corpus, "tests/round25/test_device_strings.py")
    # `max(DEVICES)` and `reversed(DEVICES[:1])` of a known list: were `unknown`
    assert tests["test_max_of_list"].label == "gpu"
    assert tests["test_reversed_devices"].label == "cpu"
    # the string forms were exact already
    for name in ("test_percent", "test_format", "test_join", "test_concat", "test_env_default", "test_lower"):
        assert tests[name].label == "gpu", (name, tests[name].reasons)
    for name in ("test_first_of_list", "test_cpu_strip", "test_startswith_guard", "test_zip_devices"):
        assert tests[name].label == "cpu", (name, tests[name].reasons)
