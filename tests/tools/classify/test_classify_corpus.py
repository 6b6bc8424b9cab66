"""The fixture corpus (tests/tools/classify/fixtures) is classified exactly as expected.json says."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tools.classify.runner import run

CORPUS = Path(__file__).resolve().parent / "fixtures"
OVER_THE_CASE_BOUND = "tests/round12_cases/test_many_cases.py::test_many"


@pytest.fixture(scope="module")
def result(corpus: Path):
    return run(corpus, cache_dir=None)


def test_corpus_labels_exact(result) -> None:
    """[label, gpu_count, vram_gb], and "cpu" fourth where the id names a CPU case on a machine without GPUs."""
    expected = json.loads((CORPUS / "expected.json").read_text())
    got = {f"{rel}::{k}": [v.label, v.gpu_count, v.vram_gb, *(["cpu"] if v.cpu_without_gpus else [])]
           for rel, r in result.files.items() for k, v in r.tests.items()}
    # the 12,288 ids of the test over the case bound carry its function key's verdict (test_classify_round12_cases)
    got = {k: v for k, v in got.items() if not k.startswith(f"{OVER_THE_CASE_BOUND}[")}
    assert got == expected


def test_canary_never_imported(corpus: Path, result) -> None:
    assert "tests/unit/test_canary.py" in result.files
    assert not (corpus / "tests" / "unit" / "CANARY_MARKER").exists()


def test_pure_tests_do_not_count_as_torch(result) -> None:
    assert result.files["tests/unit/test_pure.py"].torch is False
    assert result.files["tests/unit/test_fixtures_params.py"].torch is True


def test_broken_file_is_reported_and_unknown(result) -> None:
    broken = result.files["tests/unit/test_broken.py"]
    assert broken.error and "syntax error" in broken.error
    assert any(p.rel == "tests/unit/test_broken.py" for p in result.problems)


def test_evidence_chains_follow_the_call_graph(result) -> None:
    v = result.files["tests/models/test_transitive.py"].tests["test_build_on_cuda"]
    chain = v.reasons[0]
    assert "calls build_model()" in chain and "ModelArch.__init__" in chain and "mypkg/layers.py" in chain
    v = result.files["tests/models/test_transitive.py"].tests["test_dynamic_dispatch"]
    assert "dynamic dispatch" in v.reasons[0]


def test_unknown_device_arguments_say_why(result) -> None:
    tests = result.files["tests/unit/test_device_args.py"].tests
    assert "no fixture, caller or default gives one" in tests["test_no_provider"].reasons[0]
    assert "device=dev" in tests["test_factory_no_provider"].reasons[0]
