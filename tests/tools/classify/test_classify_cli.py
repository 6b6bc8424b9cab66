"""CLI behaviour: --update/--check, manual and runtime preservation, reports, cache, determinism, bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tools.bounded_read import read_source
from tools.classify.cli import main
from tools.classify.runner import run
from tools.contract import classification as cf

REPO = Path(__file__).resolve().parents[3]

GPU_TEST = """import torch

def test_cpu():
    torch.ones(2)

def test_gpu():
    torch.ones(2).cuda()
"""


def _tree(tmp_path: Path, files: dict[str, str | bytes]) -> Path:
    for rel, text in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(text if isinstance(text, bytes) else text.encode())
    return tmp_path


def test_update_then_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _tree(tmp_path, {"tests/test_x.py": GPU_TEST})
    assert main(["--root", str(root), "--update", "--no-cache"]) == 0
    data = cf.load(root / "torch_classification.json")
    entry = data["files"]["tests/test_x.py"]
    assert entry["label"] == "mixed" and entry["gpu_count"] == 1 and entry["torch"] is True
    assert main(["--root", str(root), "--check", "--no-cache"]) == 0
    (root / "tests/test_x.py").write_text(GPU_TEST + "\ndef test_new():\n    torch.zeros(1, device='cuda')\n")
    capsys.readouterr()
    assert main(["--root", str(root), "--check", "--no-cache"]) == 1
    assert "test_new" in capsys.readouterr().out


def test_workspace_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _tree(tmp_path, {"test_a.py": GPU_TEST})
    monkeypatch.setenv("BUILD_WORKSPACE_DIRECTORY", str(root))
    assert main(["--update", "--no-cache"]) == 0
    assert (root / "torch_classification.json").exists()


def test_manual_and_runtime_are_preserved(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"tests/test_x.py": GPU_TEST, "tests/test_y.py": GPU_TEST})
    old = cf.empty()
    old["files"] = {
        "tests/test_x.py": {"label": "gpu", "torch": True, "source": "manual", "tests": {}},
        "tests/test_y.py": {"label": "gpu", "torch": True, "source": "static", "tests": {
            "test_cpu": {"label": "gpu", "source": "runtime", "gpu_count": 1, "reasons": ["ci run"]}}},
    }
    cf.save(root / "torch_classification.json", old)
    assert main(["--root", str(root), "--update", "--no-cache"]) == 0
    data = cf.load(root / "torch_classification.json")
    assert data["files"]["tests/test_x.py"]["source"] == "manual"
    assert data["files"]["tests/test_y.py"]["tests"]["test_cpu"]["source"] == "runtime"
    assert data["files"]["tests/test_y.py"]["label"] == "gpu"


POSITIONAL_TEST = """import pytest
import torch

DEVICES = [torch.device("cuda:0"), torch.device("cpu")] if torch.cuda.is_available() else [torch.device("cpu")]


@pytest.mark.parametrize("device", DEVICES)
def test_ones(device):
    torch.ones(1, device=device)
"""


def test_an_id_naming_another_case_without_gpus_is_written_kept_and_cached(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"tests/test_p.py": POSITIONAL_TEST})
    assert main(["--root", str(root), "--update", "--no-cache"]) == 0
    entry = cf.load(root / "torch_classification.json")["files"]["tests/test_p.py"]
    assert entry["label"] == "mixed"  # the CPU case runs on a CPU runner, the CUDA one on a GPU runner
    assert {k: (t["label"], t.get("without_gpus")) for k, t in entry["tests"].items()} == {
        "test_ones[device0]": ("gpu", "cpu"), "test_ones[device1]": ("gpu", None)}
    # a CPU run that proved the CPU case needs CUDA (runtime) outlives the static `without_gpus`
    data = cf.load(root / "torch_classification.json")
    data["files"]["tests/test_p.py"]["tests"]["test_ones[device0]"] = {
        "label": "gpu", "gpu_count": 1, "source": "runtime", "reasons": ["ci run"]}
    cf.save(root / "torch_classification.json", data)
    assert main(["--root", str(root), "--update", "--no-cache"]) == 0
    kept = cf.load(root / "torch_classification.json")["files"]["tests/test_p.py"]["tests"]["test_ones[device0]"]
    assert kept["source"] == "runtime" and "without_gpus" not in kept
    cold = run(root, None, tmp_path / "cache")
    warm = run(root, None, tmp_path / "cache")
    assert warm.cache_hits == 1 and warm.files["tests/test_p.py"].tests == cold.files["tests/test_p.py"].tests
    assert cold.files["tests/test_p.py"].tests["test_ones[device0]"].cpu_without_gpus


def test_json_report_and_explain(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _tree(tmp_path, {"tests/test_x.py": GPU_TEST})
    assert main(["--root", str(root), "--format", "json", "--no-cache"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["tests/test_x.py::test_gpu"]["label"] == "gpu"
    assert rep["tests/test_x.py"]["label"] == "mixed"
    assert main(["--root", str(root), "--explain", "tests/test_x.py::test_gpu", "--no-cache"]) == 0
    assert "tests/test_x.py:7: .cuda() needs a CUDA device" in capsys.readouterr().out
    assert main(["--root", str(root), "--format", "markdown", "--no-cache"]) == 0
    assert "| GPU | 1 | 50% |" in capsys.readouterr().out


def test_paths_subset(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"a/test_x.py": GPU_TEST, "b/test_y.py": GPU_TEST})
    res = run(root, ["a"], None)
    assert sorted(res.files) == ["a/test_x.py"]


def test_cache_warm_run_reuses_results(tmp_path: Path) -> None:
    files = {f"tests/test_{i}.py": GPU_TEST + f"\ndef test_{i}(x={i}):\n    torch.ones(x)\n" for i in range(60)}
    root = _tree(tmp_path, files)
    cold = run(root, None, tmp_path / "cache")
    warm = run(root, None, tmp_path / "cache")
    # reuse is proven by the hit count (speed is bench/bench_classify.py's figure, never a timed unit test)
    assert warm.cache_hits == 60 and cold.cache_hits == 0
    assert {k: v.tests for k, v in cold.files.items()} == {k: v.tests for k, v in warm.files.items()}
    (root / "tests/test_3.py").write_text(GPU_TEST)
    again = run(root, None, tmp_path / "cache")
    assert again.cache_hits == 59


def test_output_identical_across_hash_seeds(tmp_path: Path) -> None:
    corpus = REPO / "tests" / "tools" / "classify" / "fixtures" / "repo"
    outs = []
    for seed in ("0", "1", "12345"):
        out = tmp_path / f"c{seed}.json"
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(REPO)}
        subprocess.run([sys.executable, "-m", "tools.classify", "--root", str(corpus), "--update", "--output",
                        str(out), "--no-cache"], check=True, env=env, cwd=REPO, capture_output=True)
        outs.append(out.read_bytes())
    assert outs[0] == outs[1] == outs[2]
    assert not (corpus / "tests" / "unit" / "CANARY_MARKER").exists()


def test_bad_inputs_are_reported_and_unknown(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    deep = "x = " + "(" * 5000 + "1" + ")" * 5000 + "\n"
    root = _tree(tmp_path, {
        "t/test_syntax.py": "def test_(:\n",
        "t/test_latin1.py": b"import torch\ns = '\xff\xfe'\ndef test_a():\n    pass\n",
        "t/test_null.py": b"import torch\x00\ndef test_a():\n    pass\n",
        "t/test_deep.py": "import torch\n" + deep + "def test_a():\n    pass\n",
        "t/test_big.py": "import torch\n" + "# pad\n" * 10,
        "t/test_cycle.py": "import torch\nfrom cyc_a import f\ndef test_a():\n    f()\n",
        "t/cyc_a.py": "from cyc_b import g\ndef f():\n    return g()\n",
        "t/cyc_b.py": "import torch\nfrom cyc_a import f\ndef g():\n    return torch.ones(1).cuda()\n",
        "u/conftest.py": "import pytest\ndef broken(:\n",
        "u/test_under_bad_conftest.py": "import torch\ndef test_a():\n    torch.ones(1)\n",
        "ok/test_fine.py": GPU_TEST,
    })
    (root / "t" / "loop").symlink_to(root / "t")
    (root / "t" / "test_selfloop.py").symlink_to(root / "t" / "test_selfloop.py")
    with open(root / "t" / "test_big.py", "ab") as fh:  # sparse 50 MB file
        fh.truncate(50 * 1024 * 1024)
    assert main(["--root", str(root), "--update", "--no-cache"]) == 0
    err = capsys.readouterr().err
    for rel in ("t/test_syntax.py", "t/test_latin1.py", "t/test_null.py", "t/test_deep.py", "t/test_big.py",
                "u/conftest.py", "t/loop", "t/test_selfloop.py"):
        assert f"classify: {rel}:" in err, rel
    data = cf.load(root / "torch_classification.json")
    files = data["files"]
    for rel in ("t/test_syntax.py", "t/test_latin1.py", "t/test_null.py", "t/test_deep.py", "t/test_big.py"):
        assert files[rel]["label"] == "unknown", rel
    assert files["u/test_under_bad_conftest.py"]["tests"]["test_a"]["label"] == "unknown"
    assert files["t/test_cycle.py"]["tests"]["test_a"]["label"] == "gpu"
    assert files["ok/test_fine.py"]["label"] == "mixed"


@pytest.mark.parametrize("workers", [1, 2])
def test_unreadable_files_reported_alike_with_and_without_a_cache(tmp_path: Path, workers: int) -> None:
    # Without a cache the workers read the files they use and the run reads the others afterwards; with one,
    # the run reads everything first (for the digests). Either way every unreadable file is reported once.
    files = {f"tests/test_{i}.py": "import torch\n\ndef test_a():\n    torch.ones(1)\n" for i in range(80)}
    root = _tree(tmp_path, {**files, "tests/conftest.py": "def broken(:\n"})
    (root / "tests" / "unused.py").symlink_to(root / "nowhere.py")  # nothing imports it
    (root / "tests" / "test_gone.py").symlink_to(root / "nowhere_either.py")
    expected = [("tests/conftest.py", "syntax error at line 1: invalid syntax"),
                ("tests/test_gone.py", "cannot read: No such file or directory"),
                ("tests/unused.py", "cannot read: No such file or directory")]
    for cache in (None, tmp_path / "cache"):
        res = run(root, None, cache, workers=workers)
        assert [(p.rel, p.reason) for p in res.problems] == expected
        assert res.files["tests/test_gone.py"].error == "cannot read: No such file or directory"
        assert res.files["tests/test_7.py"].tests["test_a"].label == "unknown"  # under a broken conftest


def test_a_file_is_read_whole_whatever_size_the_walk_saw(tmp_path: Path) -> None:
    # The run reads with the size the directory walk recorded; a file that changed in between is still read
    # to its end, and one that grew past the limit is refused with its real size.
    (tmp_path / "a.py").write_bytes(b"x" * 5000)
    for seen in (None, 0, 10, 4999, 5000, 10**6):
        assert read_source(tmp_path, "a.py", size=seen) == (b"x" * 5000, None), seen
    (tmp_path / "big.py").write_bytes(b"y" * 3_000_000)
    data, why = read_source(tmp_path, "big.py", limit=1_000_000, size=5)
    assert data is None and why == "file is 3000000 bytes, over the 1000000-byte limit; not analysed"
    assert read_source(tmp_path, "gone.py", size=3) == (None, "cannot read: No such file or directory")


def test_never_partially_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _tree(tmp_path, {"test_a.py": GPU_TEST})
    target = root / "torch_classification.json"
    original = cf.dumps(cf.empty())
    target.write_text(original)

    def boom(*_a: object, **_k: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "fsync", boom)
    with pytest.raises(OSError):
        main(["--root", str(root), "--update", "--no-cache"])
    assert target.read_text() == original
    assert [p.name for p in root.iterdir() if p.name.endswith(".tmp")] == []
