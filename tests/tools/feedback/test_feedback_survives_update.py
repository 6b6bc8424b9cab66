"""What runs proved must survive the next static `classify --update` (issue 6: runtime labels stick)."""

from __future__ import annotations

import json
from pathlib import Path

from tools.classify.cli import main

TEST_FILE = '''import pytest
import torch


@pytest.mark.parametrize("mode", ["plain", "fancy"])
def test_mode(mode):
    assert torch.ones(2).sum() == 2


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_big_kernel():
    torch.zeros(4, device="cuda")
'''


def classified(root: Path) -> dict:
    return json.loads((root / "torch_classification.json").read_text())["files"]["tests/test_x.py"]


def test_runtime_parametrization_measured_vram_and_file_source_stick(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text(TEST_FILE)
    assert main(["--root", str(tmp_path), "--update", "--no-cache"]) == 0
    data = json.loads((tmp_path / "torch_classification.json").read_text())
    entry = data["files"]["tests/test_x.py"]
    # A CPU run proved one parametrization needs CUDA; a GPU run measured the kernel's memory.
    entry["tests"]["test_mode[fancy]"] = {
        "label": "gpu", "gpu_count": 1, "vram_gb": 0, "source": "runtime",
        "reasons": ["tests/test_x.py:5: CPU run failed: Torch not compiled with CUDA enabled"],
    }
    entry["tests"]["test_big_kernel"]["vram_gb"] = 7
    entry["tests"]["test_big_kernel"]["reasons"].append("tests/test_x.py:10: measured peak 5.6 GiB on //t (x1.2)")
    (tmp_path / "torch_classification.json").write_text(json.dumps(data))

    assert main(["--root", str(tmp_path), "--update", "--no-cache"]) == 0
    after = classified(tmp_path)
    assert after["tests"]["test_mode[fancy]"]["source"] == "runtime"
    assert after["tests"]["test_mode[fancy]"]["label"] == "gpu"
    assert after["tests"]["test_big_kernel"]["vram_gb"] == 7
    assert after["source"] == "runtime" and after["vram_gb"] == 7
    assert main(["--root", str(tmp_path), "--check", "--no-cache"]) == 0


def test_runtime_entry_of_a_deleted_test_is_dropped(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text(TEST_FILE)
    assert main(["--root", str(tmp_path), "--update", "--no-cache"]) == 0
    data = json.loads((tmp_path / "torch_classification.json").read_text())
    data["files"]["tests/test_x.py"]["tests"]["test_removed"] = {"label": "gpu", "source": "runtime"}
    (tmp_path / "torch_classification.json").write_text(json.dumps(data))
    assert main(["--root", str(tmp_path), "--update", "--no-cache"]) == 0
    assert "test_removed" not in classified(tmp_path)["tests"]
