"""Round 27: test methods given to a test class at import by code other than its body (corpus tests/round27, each
test run with pytest on CPU-only torch first; labels in expected.json)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tools.classify.analyzer import Analyzer
from tools.classify.modules import walk_python_files
from tools.classify.runner import run

GENERATED = "tests/round27/test_generated_methods.py"
TreeWriter = Callable[[Path, dict[str, str]], Path]  # the write_tree fixture (conftest.py)


def _labels(root: Path, path: str, cache_dir: Path | None = None) -> dict[str, str]:
    return {k: v.label for k, v in run(root, paths=[path], cache_dir=cache_dir, workers=1).files[path].tests.items()}


def test_a_module_whose_only_tests_a_function_generates_lists_them(corpus: Path) -> None:
    # before: no test of the file was known and its label was `cpu`, so its CUDA test went to a CPU runner
    assert _labels(corpus, "tests/round27/test_only_generated.py") == {
        "TestGen::test_zeros_big": "gpu", "TestGen::test_zeros_small": "cpu"}


def test_methods_from_a_helper_a_class_decorator_and_a_top_level_lambda(corpus: Path) -> None:
    assert _labels(corpus, GENERATED) == {
        "TestAppendedByFunction::test_zeros_big": "gpu", "TestAppendedByFunction::test_zeros_small": "cpu",
        "TestAddedByDecorator::test_ones_cuda": "gpu", "TestAddedByDecorator::test_ones_cpu": "cpu",
        "TestLambdaAtTopLevel::test_lambda_cuda": "gpu",
        # names from the directory's listing (`if path.suffix != ".json": continue` guards the loop)
        "TestFromConfigFiles::test_cfg_alpha": "cpu", "TestFromConfigFiles::test_cfg_beta": "gpu",
        # a decorator re-setting each test method wrapped (`for name in dir(cls)`): the methods as written, no key
        "TestWrappedInPlace::test_add_cpu": "cpu", "TestWrappedInPlace::test_add_cuda": "gpu",
        # names from a listing outside the repository: a class-level key
        "TestNamedAfterInstalledFiles": "cpu"}


def test_names_not_known_get_a_class_level_key_that_says_why(corpus: Path) -> None:
    tests = run(corpus, paths=[GENERATED], cache_dir=None, workers=1).files[GENERATED].tests
    v = tests["TestNamedAfterInstalledFiles"]
    assert v.reasons[0].startswith(f"{GENERATED}:94: TestNamedAfterInstalledFiles: functions set on the class under "
                                   f"names the analysis cannot compute (_checks_zeros, {GENERATED}:98)"), v.reasons
    assert v.label == "cpu" and not [k for k in tests if k.startswith("TestNamedAfterInstalledFiles::")]


def test_the_inert_shortcut_does_not_judge_a_set_method_by_its_class_text(corpus: Path) -> None:
    # `class TestLambdaAtTopLevel: pass` is inert text; the lambda set on it is not part of that text
    files = walk_python_files(corpus, [])
    got = {proven: Analyzer(corpus, files, prove_inert=proven).classify_file(GENERATED).tests[
        "TestLambdaAtTopLevel::test_lambda_cuda"].label for proven in (True, False)}
    assert got == {True: "gpu", False: "gpu"}


def test_generated_methods_do_not_depend_on_what_was_analysed_before(corpus: Path) -> None:
    whole = run(corpus, paths=["tests/round27"], cache_dir=None, workers=1).files
    for path in (GENERATED, "tests/round27/test_only_generated.py"):
        assert run(corpus, paths=[path], cache_dir=None, workers=1).files[path].tests == whole[path].tests


LISTINGS = "tests/round27/test_config_listings.py"


def test_parametrizations_over_a_directory_have_pytest_ids_and_each_case_its_label(corpus: Path) -> None:
    # before: the listing was unknown, every test one function-level key, `unknown`
    assert _labels(corpus, LISTINGS) == {
        "test_each_json[alpha]": "cpu", "test_each_json[beta]": "gpu",
        "test_each_name[alpha.json]": "cpu", "test_each_name[beta.json]": "gpu", "test_each_name[gamma.yaml]": "cpu",
        "test_each_stem[alpha]": "cpu", "test_each_stem[beta]": "gpu",
        # positional ids over an unordered listing, and ids holding the checkout's path: a key from every case
        "test_unsorted_paths": "gpu", "test_absolute_path_ids": "gpu"}


def test_every_case_of_a_function_level_key_is_analysed(tmp_path: Path, write_tree: TreeWriter) -> None:
    # two cases whose ids hold a path string (unknown): before, only the first (`cpu`) was analysed
    root = write_tree(tmp_path, {"test_p.py": """\
        import os

        import pytest
        import torch

        CASES = [(os.path.join(os.path.dirname(__file__), "x.json"), "cpu"),
                 (os.path.join(os.path.dirname(__file__), "y.json"), "cuda")]


        @pytest.mark.parametrize("path,dev", CASES)
        def test_p(path, dev):
            torch.ones(1, device=dev)
    """})
    assert _labels(root, "test_p.py") == {"test_p": "gpu"}


def test_a_file_added_to_a_listed_directory_recomputes_the_result(tmp_path: Path, write_tree: TreeWriter) -> None:
    root = write_tree(tmp_path / "repo", {"test_cfg.py": """\
        import json
        import pathlib

        import pytest
        import torch

        CONFIGS = pathlib.Path(__file__).parent / "configs"


        @pytest.mark.parametrize("path", sorted(CONFIGS.glob("*.json")), ids=lambda p: p.stem)
        def test_cfg(path):
            torch.ones(1, device=json.loads(path.read_text())["device"])
    """, "configs/a.json": '{"device": "cpu"}'})
    cache = tmp_path / "cache"
    assert _labels(root, "test_cfg.py", cache) == {"test_cfg[a]": "cpu"}
    (root / "configs" / "b.json").write_text('{"device": "cuda"}')
    assert _labels(root, "test_cfg.py", cache) == {"test_cfg[a]": "cpu", "test_cfg[b]": "gpu"}
    (root / "configs" / "a.json").unlink()
    assert _labels(root, "test_cfg.py", cache) == {"test_cfg[b]": "gpu"}


def test_a_set_of_values_has_ids_only_where_they_do_not_follow_its_order(corpus: Path) -> None:
    assert _labels(corpus, "tests/round27/test_set_ids.py") == {
        "test_enum_set[cpu]": "cpu", "test_enum_set[cuda]": "gpu", "test_str_set[cpu]": "cpu",
        "test_str_set[cuda]": "gpu",
        # `ids=["a", "b"]` pairs ids with the set's order: which case is `a` is not known (was a guess)
        "test_set_with_id_list": "gpu"}


def test_classes_made_by_type_and_by_factories(corpus: Path) -> None:
    # before: `type(name, bases, namespace)` made nothing the analysis knew, so TestOps_cuda, TestDirectCUDA and the
    # TestNs_* classes had no tests (a module of only such classes was `cpu`)
    labels = _labels(corpus, "tests/round27/test_made_classes.py")
    assert labels == {
        "TestOps_cpu::test_ones": "cpu", "TestOps_cuda::test_ones": "gpu",
        "TestMadeCPU::test_ones": "cpu", "TestMadeCUDA::test_ones": "gpu",
        "TestTyped::test_mixin_device": "gpu",
        "TestDirectCPU::test_ones": "cpu", "TestDirectCUDA::test_ones": "gpu",
        "TestNs_cpu::test_zeros": "cpu", "TestNs_cpu::test_lambda": "cpu",
        "TestNs_cuda::test_zeros": "gpu", "TestNs_cuda::test_lambda": "gpu"}


def test_a_path_the_checkout_lacks_is_not_taken_as_absent(corpus: Path) -> None:
    assert _labels(corpus, "tests/round27/test_presence.py") == {
        "test_with_downloaded_weights": "gpu", "test_config_directory_present": "cpu"}


def test_the_accelerator_api_needs_an_accelerator_except_its_queries(corpus: Path) -> None:
    # before: every `torch.accelerator.*` call but the queries was `cpu` (19 false CPUs), as were
    # `torch.get_device_module("cuda").synchronize()` and `torch.cuda.list_gpu_processes()`
    labels = _labels(corpus, "tests/round27/test_accelerator_api.py")
    cpu = {"test_accelerator_is_available", "test_accelerator_device_count", "test_accelerator_current_accelerator",
           "test_stream_cpu", "test_device_index_none", "test_guarded_accelerator", "test_current_module_sync",
           "test_default_module_sync"}
    assert {k for k, v in labels.items() if v == "cpu"} == cpu
    assert {v for k, v in labels.items() if k not in cpu} == {"gpu"} and len(labels) == 31


def test_a_device_named_by_an_index_needs_an_accelerator(corpus: Path) -> None:
    # before: `torch.device(0)` was only a device object (`cpu`, a false CPU): torch asks for the current
    # accelerator to read the index, and raises without one
    assert _labels(corpus, "tests/round27/test_int_devices.py") == {
        "test_device_object_from_index": "gpu", "test_device_object_of_cpu_with_index": "cpu",
        "test_index_as_factory_device": "gpu", "test_index_to": "gpu",
        "test_index_or_cpu[0]": "gpu", "test_index_or_cpu[cpu]": "cpu",
        "test_cuda_tensor_type_name": "gpu", "test_cpu_tensor_type_name": "cpu"}


def test_cuda_submodule_calls_are_decided(corpus: Path) -> None:
    # before: every one was `unknown` (not in the torch API table), so the CPU ones went to a GPU runner
    assert _labels(corpus, "tests/round27/test_cuda_submodules.py") == {
        "test_seed_through_random": "cpu", "test_counter_through_memory": "cpu", "test_device_of_a_cpu_tensor": "cpu",
        "test_nccl_query": "cpu", "test_profiler_range": "gpu", "test_memory_history": "gpu",
        "test_memory_pool": "gpu", "test_runtime": "gpu"}


def test_long_string_values_are_ided_as_the_installed_pytest_ids_them(tmp_path: Path, write_tree: TreeWriter,
                                                                      collect_in) -> None:
    # pytest >= 9.2 ids an auto-generated str/bytes value over 100 characters `<argname><index>`; before, the
    # analysis spelled it out (a key pytest never collects); an `ids=` entry or `pytest.param(id=...)` stays spelled
    root = write_tree(tmp_path, {"tests/test_long.py": """
        import pytest

        LONG = "a" * 101

        @pytest.mark.parametrize("text", [LONG, "b" * 100, b"c" * 120, "short"])
        def test_auto(text):
            pass

        @pytest.mark.parametrize("text", [1, 2], ids=[LONG, "x"])
        def test_listed(text):
            pass

        @pytest.mark.parametrize("text", [pytest.param(1, id="d" * 130)])
        def test_param_id(text):
            pass
        """})
    collected, out = collect_in(root, "tests")
    keys = {f"tests/test_long.py::{k}" for k in run(root, cache_dir=None).files["tests/test_long.py"].tests}
    assert keys == collected, out


def test_only_names_the_worlds_bind_differently_are_reads_of_the_world(tmp_path: Path, write_tree: TreeWriter) -> None:
    # a conftest whose top level asks for CUDA binds DEVICES by world, and everything else alike: reading `SIZE` or
    # a helper of it is no read of the world (before, any read of the module was, and its functions, asserts and
    # skips were analysed again in every GPU world)
    root = write_tree(tmp_path, {
        "tests/conftest.py": """
            import torch

            DEVICES = ["cpu"]
            if torch.cuda.is_available():
                DEVICES.append("cuda")
            SIZE = 4

            def helper():
                return SIZE
            """,
        "tests/test_a.py": """
            from conftest import DEVICES, SIZE, helper

            def test_size():
                assert helper() == SIZE
            """})
    interp = Analyzer(root, walk_python_files(root, [])).interp
    interp.module_state("tests/conftest.py", 0)
    assert interp.modules["tests/conftest.py", 0].world_dependent
    assert interp.name_varies("tests/conftest.py", "DEVICES")
    assert not interp.name_varies("tests/conftest.py", "SIZE")
    assert not interp.name_varies("tests/conftest.py", "helper")
    assert not interp.name_varies("tests/conftest.py", "torch")
    assert not interp.name_varies("tests/conftest.py", "missing")
    before = interp.world_reads
    interp.module_state("tests/conftest.py", 1, ("SIZE", "helper"))
    assert interp.world_reads == before
    interp.module_state("tests/conftest.py", 1, ("DEVICES",))
    assert interp.world_reads == before + 1
    interp.module_state("tests/conftest.py", 1)  # (anything of it)
    assert interp.world_reads == before + 2


def test_a_function_replaced_by_a_mock_runs_none_of_its_code(corpus: Path) -> None:
    # before: the replaced function's accelerator call was followed (for `sys.modules[...]` handles too), and
    # `torch.accelerator` calls were no need at all (the unpatched tests were `cpu`, false CPUs)
    assert _labels(corpus, "tests/round27/test_patched_accelerator.py") == {
        "test_function_replaced_by_a_mock": "cpu", "test_function_replaced_through_sys_modules": "cpu",
        "test_function_not_replaced": "gpu", "test_function_wrapped": "gpu", "test_accelerator_query_faked": "cpu"}
