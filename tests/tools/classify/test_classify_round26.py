"""Round 26: registries, dicts that the code filling them stores into at import (corpus tests/round26, labels in
expected.json, each test run with pytest on CPU-only torch first; rules in registries.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tools.classify.evidence import Verdict
from tools.classify.runner import run

TreeWriter = Callable[[Path, dict[str, str]], Path]  # the write_tree fixture (conftest.py)


def _tests(corpus: Path, path: str) -> dict[str, Verdict]:
    return run(corpus, paths=[path], cache_dir=None).files[path].tests


def _labels(root: Path, path: str, cache_dir: Path | None = None) -> dict[str, str]:
    return {k: v.label for k, v in run(root, paths=[path], cache_dir=cache_dir, workers=1).files[path].tests.items()}


REGISTRY = """\
    OPS = {}


    def register(name):
        def deco(fn):
            OPS[name] = fn
            return fn
        return deco


    def run(name, x):
        return OPS[name](x)


    @register("neg")
    def neg(x):
        return -x
"""


def test_a_model_zoo_filled_by_its_package_reaches_the_registered_model(corpus: Path) -> None:
    tests = _tests(corpus, "tests/round26/test_model_zoo.py")
    # before: `_ENTRYPOINTS[name]` found nothing (the dict bound at import is empty), so a CUDA model built through
    # `create("big_gpu")`, an alias or the dict itself was `cpu`, and `parametrize(.., list_models())` had no cases
    for name in ("test_big_cuda", "test_alias_big_cuda", "test_entry_direct_cuda", "test_every_model[big_gpu]"):
        assert tests[name].label == "gpu", (name, tests[name].reasons)
    assert "calls big_gpu()" in tests["test_big_cuda"].reasons[0]
    for name in ("test_small_cpu", "test_alias_small_cpu", "test_every_model[small]", "test_unknown_name_cpu",
                 "test_listing_cpu"):
        assert tests[name].label == "cpu", (name, tests[name].reasons)


def test_decorators_calls_subclasses_and_registry_objects_fill_registries(corpus: Path) -> None:
    assert _labels(corpus, "tests/round26/test_builders.py") == {  # `@builder("cuda_head") class`, `add_loss("l2", f)`
        "test_build_cpu_head": "cpu", "test_build_cuda_head": "gpu", "test_loss_l1_cpu": "cpu",
        "test_loss_l2_cuda": "gpu"}
    assert _labels(corpus, "tests/round26/test_subclass_registry.py") == {  # `__init_subclass__`, with a keyword
        "test_subclass_registry_cuda": "gpu", "test_subclass_registry_cpu": "cpu", "test_subclass_keyword_cuda": "gpu",
        "test_subclass_keyword_cpu": "cpu"}
    objects = _tests(corpus, "tests/round26/test_registry_object.py")  # `@MODELS.register_module()` in another module
    assert objects["test_build_gpu"].label == "gpu" and objects["test_build_cpu"].label == "cpu"
    assert _labels(corpus, "tests/round26/test_class_registry.py") == {  # `cls._items[name] = obj` in a classmethod
        "test_cls_cpu": "cpu", "test_cls_gpu": "gpu", "test_each[ones_cpu]": "cpu", "test_each[ones_gpu]": "gpu",
        "test_table_cpu": "cpu", "test_table_gpu": "gpu"}
    assert _labels(corpus, "tests/round26/test_registry_methods.py") == {  # `HANDLERS.update(...)`, `.setdefault(k, f)`
        "test_update_cpu": "cpu", "test_update_gpu": "gpu", "test_setdefault_cpu": "cpu", "test_setdefault_gpu": "gpu"}


def test_a_list_of_cases_a_decorator_fills_gives_each_case(corpus: Path) -> None:
    # `CASES.append(fn)` in `@case`: before, the list was unknown from the def on, and one function-level key covered
    # both cases, `cpu` (a false CPU for the CUDA case)
    assert _labels(corpus, "tests/round26/test_case_lists.py") == {
        "test_case[cpu_case]": "cpu", "test_case[cuda_case]": "gpu", "test_case_named[cpu_case]": "cpu",
        "test_case_named[cuda_case]": "gpu"}


def test_registries_of_registries(corpus: Path) -> None:
    # `NESTED = defaultdict(dict)` filled by `NESTED[kind][name] = fn`, `BY_KIND[kind].append(fn)`, a dict of dicts:
    # before, a defaultdict was unknown and an entry's entries were not followed (false CPUs, no cases)
    tests = _tests(corpus, "tests/round26/test_nested_registries.py")
    assert {k: v.label for k, v in tests.items() if k.startswith(("test_nested", "test_by_kind", "test_tables"))} == {
        "test_nested_cpu": "cpu", "test_nested_gpu": "gpu", "test_by_kind[double]": "cpu",
        "test_by_kind[on_gpu]": "gpu", "test_tables_cpu": "cpu", "test_tables_gpu": "gpu"}


def test_a_loop_over_a_few_tuples_keeps_each_tuple_together(corpus: Path) -> None:
    # `for name, fn in LOSSES.items(): if name == "l1": fn(...)`: before, one joined element paired every name with
    # every function, so the CUDA loss ran under `name == "l1"` (a CPU test `gpu`)
    assert _labels(corpus, "tests/round26/test_registry_loops.py") == {
        "test_items_filtered_cpu": "cpu", "test_items_all_cuda": "gpu", "test_pairs_cpu": "cpu",
        "test_pairs_cuda": "gpu"}


def test_caches_and_missing_keys_stay_cpu(corpus: Path) -> None:
    # a module-level or an object's cache filled by the call that reads it back is not a registry to wait for, and a
    # key no module stores is the KeyError the test expects
    assert _labels(corpus, "tests/round26/test_cache_dicts.py") == {
        "test_module_cache_cpu": "cpu", "test_object_cache_cpu": "cpu", "test_missing_key_raises_cpu": "cpu"}


def test_a_library_module_importing_the_registry_fills_it_whoever_imports_it(tmp_path: Path,
                                                                             write_tree: TreeWriter) -> None:
    root = write_tree(tmp_path, {
        "lib/__init__.py": "",
        "lib/reg.py": REGISTRY,
        "lib/extra.py": """\
            from lib.reg import register


            @register("to_gpu")
            def to_gpu(x):
                return x.cuda()
        """,
        "test_ops.py": """\
            import torch
            from lib import reg


            def test_extra():
                reg.run("to_gpu", torch.ones(1))


            def test_neg():
                reg.run("neg", torch.ones(1))
        """})
    # `lib/extra.py` is not imported by the test (pytest would raise a KeyError there unless another module did):
    # the registry holds what every library module of the repository stores, a superset of any run's
    assert _labels(root, "test_ops.py") == {"test_extra": "gpu", "test_neg": "cpu"}


def test_what_a_test_module_registers_counts_for_every_file(tmp_path: Path, write_tree: TreeWriter) -> None:
    root = write_tree(tmp_path, {
        "lib/__init__.py": "",
        "lib/reg.py": REGISTRY,
        "test_mine.py": """\
            import torch
            from lib import reg


            @reg.register("mine")
            def mine(x):
                return x.to("cuda")


            def test_registered_here():
                reg.run("mine", torch.ones(1))


            def test_neg():
                reg.run("neg", torch.ones(1))
        """,
        "test_other.py": """\
            import pytest
            import torch
            from lib import reg


            def test_registered_elsewhere():
                reg.run("mine", torch.ones(1))


            def test_missing():
                with pytest.raises(KeyError):
                    reg.run("nope", torch.ones(1))
        """})
    # pytest imports every test module it collects before the first test runs, so an entry a test module stores is
    # there for the others too; the same whether a file is analysed alone or with the whole tree
    assert _labels(root, "test_mine.py") == {"test_registered_here": "gpu", "test_neg": "cpu"}
    alone = _labels(root, "test_other.py")
    assert alone == {"test_registered_elsewhere": "gpu", "test_missing": "cpu"}
    whole = run(root, cache_dir=None, workers=1).files["test_other.py"].tests
    assert {k: v.label for k, v in whole.items()} == alone


def test_a_cached_result_follows_the_module_that_fills_the_registry(tmp_path: Path,
                                                                     write_tree: TreeWriter) -> None:
    root = write_tree(tmp_path / "repo", {
        "lib/__init__.py": "",
        "lib/reg.py": REGISTRY,
        "lib/extra.py": """\
            from lib.reg import register


            @register("op")
            def op(x):
                return x + 1
        """,
        "test_ops.py": """\
            import torch
            from lib import reg


            def test_op():
                reg.run("op", torch.ones(1))
        """})
    cache = tmp_path / "cache"
    assert _labels(root, "test_ops.py", cache) == {"test_op": "cpu"}
    (root / "lib/extra.py").write_text((root / "lib/extra.py").read_text().replace("x + 1", "x.cuda() + 1"))
    assert _labels(root, "test_ops.py", cache) == {"test_op": "gpu"}
