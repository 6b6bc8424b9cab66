"""Measured VRAM: peak x headroom into vram_gb, max per file, manual never lowered, bad files reported."""

from __future__ import annotations

import json
from pathlib import Path

from feedback_helpers import GPU_RUN, classification, file_entry, test_entry

from tools.contract import classification as cf
from tools.feedback.vram import Measurement, apply_vram, need_gb, read_measurements

OPS = "examples/torch_gpu/test_cuda_ops.py"


def _ops(**overrides: dict) -> dict:
    tests = {
        "test_matmul_on_gpu_matches_cpu": test_entry("gpu", path=OPS, line=9),
        "test_stream_ordering": test_entry("gpu", path=OPS),
        "test_synchronize_after_async_copy": test_entry("gpu", path=OPS),
    }
    for key, changes in overrides.items():
        tests[key].update(changes)
    return classification({OPS: file_entry(tests)})


def test_need_rounds_up_with_headroom():
    assert need_gb(3174.0) == 4  # 3.1 GiB x 1.2 = 3.72 -> 4
    assert need_gb(64.0) == 1
    assert need_gb(1024.0, headroom=1.0) == 1
    assert need_gb(0.0) == 0


def test_gpu_run_measurements_set_vram_with_the_source_in_reasons():
    measurements, problems = read_measurements([GPU_RUN.parents[2]])
    assert problems == [] and len(measurements) == 3
    new, report = apply_vram(_ops(), measurements)
    tests = new["files"][OPS]["tests"]
    assert tests["test_matmul_on_gpu_matches_cpu"]["vram_gb"] == 4
    assert tests["test_matmul_on_gpu_matches_cpu"]["reasons"][0] == (
        f"{OPS}:9: measured peak 3.1 GiB on //examples/torch_gpu:test_cuda_ops (x1.2 headroom -> 4 GiB)")
    assert tests["test_stream_ordering"]["vram_gb"] == 1
    assert tests["test_synchronize_after_async_copy"]["vram_gb"] == 0  # nothing reserved: left as is
    assert new["files"][OPS]["vram_gb"] == 4
    assert len(report.updated) == 2 and len(report.skipped) == 1
    cf.validate(new)
    again, report = apply_vram(new, measurements)
    assert again == new and len(report.unchanged) == 2


def test_manual_vram_is_never_lowered_but_raised_when_too_small():
    data = _ops(test_matmul_on_gpu_matches_cpu={"source": "manual", "vram_gb": 40},
                test_stream_ordering={"source": "manual", "vram_gb": 0})
    measurements, _ = read_measurements([GPU_RUN])
    new, report = apply_vram(data, measurements)
    tests = new["files"][OPS]["tests"]
    assert tests["test_matmul_on_gpu_matches_cpu"]["vram_gb"] == 40
    assert tests["test_matmul_on_gpu_matches_cpu"]["source"] == "manual"
    assert tests["test_stream_ordering"]["vram_gb"] == 1 and tests["test_stream_ordering"]["source"] == "manual"
    assert "manual vram_gb 40 kept" in report.manual_kept[0].text


def test_parametrizations_share_the_max_and_cpu_tests_are_ignored():
    path = "tests/m.py"
    data = classification({path: file_entry({"test_p": test_entry("gpu"), "test_c": test_entry("cpu")})})
    ms = [Measurement(f"{path}::test_p[a]", 1000.0, 1, "//t"), Measurement(f"{path}::test_p[b]", 5000.0, 1, "//t"),
          Measurement(f"{path}::test_c", 10.0, 1, "//t"), Measurement(f"{path}::test_gone", 10.0, 1, "//t"),
          Measurement("tests/deleted.py::test_z", 10.0, 1, "//t")]
    new, report = apply_vram(data, ms)
    assert new["files"][path]["tests"]["test_p"]["vram_gb"] == 6  # 5000 MiB x 1.2 / 1024 = 5.86
    assert new["files"][path]["tests"]["test_c"]["vram_gb"] == 0
    assert len(report.missing) == 2 and "not gpu" in report.skipped[0].text


def test_bad_memory_files_are_reported(tmp_path: Path):
    (tmp_path / "torch-gpu-memory.json").write_text("{truncated")
    bad_peak = {"tests": {"a.py::t": {"peak_reserved_mb": "x"}}}
    (tmp_path / "torch-gpu-memory.shard1.json").write_text(json.dumps(bad_peak))
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub/torch-gpu-memory.json").write_text(json.dumps([1, 2]))
    measurements, problems = read_measurements([tmp_path])
    assert measurements == []
    reasons = " ".join(p.reason for p in problems)
    assert "unreadable" in reasons and "no numeric peak_reserved_mb" in reasons and "no 'tests' object" in reasons
    _, problems = read_measurements([tmp_path / "sub" / "nothing-here"])
    assert "no torch-gpu-memory*.json found" in problems[-1].reason or "unreadable" in problems[-1].reason
