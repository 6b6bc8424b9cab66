"""Round 9 (torchani, sbi): `parameterized_class` reached through a value (`@expand()`, `@PC`) makes the same
classes as the literal decorator, and a parametrize id that a conftest hook matches in `item.keywords` carries
that marker's requirement. Labels of the corpus files are in fixtures/expected.json (test_classify_corpus.py)."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest

from tools.classify.hooks import keyword_tests
from tools.classify.runner import run

CORPUS = Path(__file__).resolve().parent / "fixtures"
ROUND9 = "tests/round9"
PC = f"{ROUND9}/test_param_class_values.py"
KW = f"{ROUND9}/test_keyword_ids.py"
# `pytest --collect-only -q tests/round9` with the `parameterized` package installed (it is not a dependency of
# this project, so the list is spelled out: collected with parameterized 0.9.0 and pytest 9)
COLLECTED = {
    f"{KW}::test_process_device[cpu]", f"{KW}::test_process_device[gpu]",
    f"{KW}::test_compound_id[cpu-1]", f"{KW}::test_compound_id[gpu-1]",
    f"{KW}::test_marked_and_matched[cpu]", f"{KW}::test_marked_and_matched[gpu]",
    f"{PC}::TestImportedFactory_cpu::test_ones", f"{PC}::TestImportedFactory_cpu_jit::test_ones",
    f"{PC}::TestImportedFactory_cuda::test_ones", f"{PC}::TestImportedFactory_cuda_jit::test_ones",
    f"{PC}::TestImportedFactoryCpuOnly_cpu::test_ones",
    f"{PC}::TestComprehensionFactory_cpu::test_ones", f"{PC}::TestComprehensionFactory_cuda::test_ones",
    f"{PC}::TestDecoratorValue_cpu::test_ones", f"{PC}::TestDecoratorValue_cuda::test_ones",
    f"{PC}::TestLocalFactory_0::test_ones", f"{PC}::TestLocalFactory_1::test_ones",
}


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory):
    dst = tmp_path_factory.mktemp("corpus") / "repo"
    shutil.copytree(CORPUS / "repo", dst)
    return run(dst, paths=[PC, KW], cache_dir=None)  # (other round-9 files are checked elsewhere)


def test_keys_are_the_collected_node_ids(result) -> None:
    keys = {f"{rel}::{k}" for rel, r in result.files.items() for k in r.tests}
    assert keys == COLLECTED


def test_cuda_classes_made_by_a_factory_skip_in_set_up_class(result) -> None:
    tests = result.files[PC].tests
    for cls in ("TestImportedFactory_cuda", "TestImportedFactory_cuda_jit", "TestDecoratorValue_cuda",
                "TestLocalFactory_1", "TestComprehensionFactory_cuda"):
        v = tests[f"{cls}::test_ones"]
        assert v.label == "gpu" and "setUpClass()" in v.reasons[0] and "SkipTest" in v.reasons[0], (cls, v)
    assert tests["TestImportedFactory_cpu_jit::test_ones"].label == "cpu"


def test_an_id_matched_in_item_keywords_says_which_hook(result) -> None:
    tests = result.files[KW].tests
    v = tests["test_process_device[gpu]"]
    assert v.label == "gpu"
    assert "id [gpu] is in item.keywords" in v.reasons[0] and f"{ROUND9}/conftest.py:12" in v.reasons[0]
    # pytest adds the whole id, not its parts: `gpu-1` is no keyword, and the body catches the CPU-only error
    assert tests["test_compound_id[gpu-1]"].label == "cpu"
    marked = tests["test_marked_and_matched[gpu]"]
    assert marked.label == "gpu" and len(marked.reasons) == 1 and "@pytest.mark.gpu" in marked.reasons[0]
    assert "item.keywords" not in marked.reasons[0]


def test_keyword_tests_reads_only_string_membership_in_keywords() -> None:
    hook = ast.parse(
        "def pytest_collection_modifyitems(config, items):\n"
        "    for item in items:\n"
        "        if 'gpu' in item.keywords or 'slow' in item.keywords:\n"
        "            pass\n"
        "        if 'cuda' in item.name or name in item.keywords or 'x' not in item.keywords:\n"
        "            pass\n")
    assert keyword_tests(hook) == [("gpu", 3), ("slow", 3)]
