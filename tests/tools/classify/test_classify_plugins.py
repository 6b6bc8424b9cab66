"""pytest-torch: node ids match what pytest prints with the plugin, and [cuda] parametrizations are gpu."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tools.classify.runner import run

CORPUS = Path(__file__).resolve().parent / "fixtures" / "repo"


@pytest.fixture(scope="module")
def plugin_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dst = tmp_path_factory.mktemp("plugin") / "repo"
    shutil.copytree(CORPUS, dst)
    return dst


def _ids(result, prefix: str) -> set[str]:
    return {f"{rel}::{k}" for rel, r in result.files.items() if rel.startswith(prefix) for k in r.tests}


def test_ids_match_pytest_collect_only(plugin_corpus: Path) -> None:
    pytest.importorskip("pytest_torch")
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "--rootdir", ".",
         "--torch-device", "cpu", "--torch-device", "cuda", "tests/plugin"],
        cwd=plugin_corpus, capture_output=True, text=True, env=env, timeout=120, check=False).stdout
    collected = {line.strip() for line in out.splitlines() if "::" in line}
    assert collected, out
    assert _ids(run(plugin_corpus), "tests/plugin/") == collected


def test_cuda_parametrization_is_gpu_and_cpu_one_is_cpu(plugin_corpus: Path) -> None:
    tests = run(plugin_corpus).files["tests/plugin/test_pytest_torch.py"].tests
    assert tests["test_latency_budget[cpu]"].label == "cpu"
    assert tests["test_latency_budget[cuda]"].label == "gpu"
    assert "pytest-torch" in tests["test_latency_budget[cuda]"].reasons[0]
    assert tests["test_cuda_regardless[cpu]"].label == "gpu"
    assert tests["TestPlain::test_unittest"].label == "cpu"


def test_own_torch_device_fixture_is_parametrized_only_with_pytest_torch_declared(tmp_path: Path) -> None:
    files = {
        "tests/conftest.py": "import pytest\n\n@pytest.fixture\ndef torch_device():\n    return 'cpu'\n",
        "tests/test_own.py": "import torch\n\ndef test_own(torch_device):\n    torch.ones(1).to(torch_device)\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    assert set(run(tmp_path).files["tests/test_own.py"].tests) == {"test_own"}
    (tmp_path / "requirements.txt").write_text("torch\npytest-torch>=1.0\n")
    tests = run(tmp_path).files["tests/test_own.py"].tests
    assert {k: v.label for k, v in tests.items()} == {"test_own[cpu]": "cpu", "test_own[cuda]": "gpu"}


def test_torch_device_type_names_match_unittest_collection(plugin_corpus: Path) -> None:
    """On this CPU-only machine torch instantiates only the CPU classes: their names must match exactly."""
    pytest.importorskip("expecttest")  # torch.testing._internal.common_utils needs it
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "--rootdir", ".",
         "tests/torch_style"], cwd=plugin_corpus, capture_output=True, text=True, env=env, timeout=300,
        check=False).stdout
    collected = {line.strip() for line in out.splitlines() if "::" in line}
    assert collected, out
    tests = run(plugin_corpus).files["tests/torch_style/test_device_generic.py"].tests
    prefix = "tests/torch_style/test_device_generic.py::"
    ours = {prefix + k for k in tests if "CUDA" not in k.split("::")[0]}
    fallbacks = {k for k in ours if k.count("::") == 1}
    assert ours - fallbacks <= collected
    assert all(c in ours or c.rsplit("::", 1)[0] in fallbacks for c in collected)
    assert {k for k in tests if "CUDA" in k.split("::")[0]} and all(
        v.label == "gpu" for k, v in tests.items() if "CUDA" in k.split("::")[0])
