"""The command line: --from-results / --vram-from through both entry points, and a crash never half-writes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from feedback_helpers import GPU_RUN, HIDDEN, TESTLOGS, classification, example_classification, file_entry, test_entry

from tools import atomic_write
from tools.classify.cli import main as classify_main
from tools.contract import classification as cf
from tools.feedback.cli import main


def _write(tmp_path: Path, data: dict) -> Path:
    path = tmp_path / "torch_classification.json"
    cf.save(path, data)
    return path


def test_from_results_updates_the_file_and_writes_the_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    path = _write(tmp_path, example_classification())
    summary = tmp_path / "pr.md"
    assert main(["--from-results", str(TESTLOGS), "--classification", str(path), "--summary-md", str(summary)]) == 0
    data = cf.load(path)
    assert data["files"][HIDDEN]["tests"]["test_waits_for_device"]["source"] == "runtime"
    assert path.read_text() == cf.dumps(data)  # canonical
    assert summary.read_text().startswith("**Runtime feedback: moved 1 test to gpu:**")
    err = capsys.readouterr().err
    assert "moved 1 test(s) to gpu; 1 failure(s) not about CUDA left alone" in err
    assert f"wrote {path}" in err


def test_classify_command_line_delegates(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    path = _write(tmp_path, example_classification())
    assert classify_main([f"--from-results={TESTLOGS}", "--classification", str(path), "--summary-md", "-"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("**Runtime feedback: moved 1 test to gpu:**")


def test_dry_run_and_unchanged_file_are_not_written(tmp_path: Path):
    path = _write(tmp_path, example_classification())
    inode = path.stat().st_ino
    assert main(["--from-results", str(TESTLOGS), "--classification", str(path), "--dry-run"]) == 0
    assert path.stat().st_ino == inode
    main(["--from-results", str(TESTLOGS), "--classification", str(path)])
    inode = path.stat().st_ino
    main(["--from-results", str(TESTLOGS), "--classification", str(path)])  # nothing moves the second time
    assert path.stat().st_ino == inode


def test_no_results_and_invalid_classification_fail_clearly(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    path = _write(tmp_path, example_classification())
    assert main(["--from-results", str(tmp_path / "nothing"), "--classification", str(path)]) == 1
    assert "no test results found" in capsys.readouterr().err
    path.write_text('{"version": 1, "files": {"a.py": {"label": "purple"}}}')
    assert main(["--from-results", str(TESTLOGS), "--classification", str(path)]) == 1
    assert "'label' must be one of" in capsys.readouterr().err
    assert path.read_text() == '{"version": 1, "files": {"a.py": {"label": "purple"}}}'


@pytest.mark.parametrize("where", ["write", "fsync", "replace"])
def test_a_crash_while_writing_never_half_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str):
    data = example_classification()
    data["files"][HIDDEN]["tests"]["test_adds_on_cpu"]["source"] = "manual"  # a manual override to keep
    path = _write(tmp_path, data)
    before = path.read_bytes()

    def crash(*args, **kwargs):
        raise KeyboardInterrupt("killed mid-write")

    if where == "write":
        real_fdopen = os.fdopen

        class Dying:
            def __init__(self, handle):
                self.handle = handle

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                self.handle.close()

            def write(self, text):
                self.handle.write(text[: len(text) // 2])
                raise KeyboardInterrupt("killed mid-write")

        monkeypatch.setattr(atomic_write.os, "fdopen", lambda fd, *a, **k: Dying(real_fdopen(fd, *a, **k)))
    else:
        monkeypatch.setattr(atomic_write.os, where, crash)
    with pytest.raises(KeyboardInterrupt):
        main(["--from-results", str(TESTLOGS), "--classification", str(path)])
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["torch_classification.json"]  # no temporary left
    assert cf.load(path)["files"][HIDDEN]["tests"]["test_adds_on_cpu"]["source"] == "manual"


def test_vram_from_gpu_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    ops = "examples/torch_gpu/test_cuda_ops.py"
    path = _write(tmp_path, classification({ops: file_entry({
        "test_matmul_on_gpu_matches_cpu": test_entry("gpu"), "test_stream_ordering": test_entry("gpu"),
        "test_synchronize_after_async_copy": test_entry("gpu")})}))
    assert classify_main(["--vram-from", str(GPU_RUN), "--classification", str(path)]) == 0
    assert json.loads(path.read_text())["files"][ops]["vram_gb"] == 4
    assert "vram_gb 0 -> 4" in capsys.readouterr().err


def test_gpu_run_fed_to_from_results_is_refused_loudly(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    ops = "examples/torch_gpu/test_cuda_ops.py"
    data = classification({ops: file_entry({"test_matmul_on_gpu_matches_cpu": test_entry("cpu"),
                                            "test_stream_ordering": test_entry("cpu"),
                                            "test_synchronize_after_async_copy": test_entry("cpu")})})
    path = _write(tmp_path, data)
    assert main(["--from-results", str(GPU_RUN), "--classification", str(path)]) == 0
    assert "refused: test.xml of //examples/torch_gpu:test_cuda_ops comes from a GPU run" in capsys.readouterr().err
    assert cf.load(path) == data


def test_usage_error_without_an_action():
    with pytest.raises(SystemExit) as exc:
        main(["--classification", "x.json"])
    assert exc.value.code == 2
