"""Local GPU assignment: probe parsing, CUDA_VISIBLE_DEVICES, flock blocks under heavy concurrency."""

from __future__ import annotations

import multiprocessing
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tools.gpu_assign import gpu_flocks, local_resources, run_under
from tools.gpu_assign import probe as probe_mod
from tools.gpu_assign.probe import Gpu, ProbeError, apply_visible_devices, parse_nvidia_smi, probe

REPO_ROOT = Path(__file__).resolve().parents[3]
SMI = "".join(f"{i}, GPU-{i:08x}-aaaa-bbbb-cccc-{i:012x}, NVIDIA H100 80GB HBM3, 81559\n" for i in range(8))


def _gpus(n: int = 8) -> list[Gpu]:
    return parse_nvidia_smi(SMI)[:n]


# ---------------------------------------------------------------- probe

def test_parse_nvidia_smi() -> None:
    gpus = parse_nvidia_smi(SMI)
    assert [g.index for g in gpus] == list(range(8))
    assert gpus[3].name == "NVIDIA H100 80GB HBM3" and gpus[3].memory_mib == 81559
    with pytest.raises(ProbeError, match="line 1: expected 4 fields"):
        parse_nvidia_smi("0, GPU-x, H100\n")


def test_visible_devices_indices_uuids_and_stop_rule() -> None:
    gpus = _gpus()
    assert [g.index for g in apply_visible_devices(gpus, "3,1")] == [3, 1]
    assert [g.index for g in apply_visible_devices(gpus, gpus[5].uuid + ",GPU-00000002")] == [5, 2]
    assert [g.index for g in apply_visible_devices(gpus, "2,99,4")] == [2]  # CUDA stops at an invalid one
    assert apply_visible_devices(gpus, "") == [] and apply_visible_devices(gpus, "-1") == []
    assert len(apply_visible_devices(gpus, None)) == 8


def test_probe_zero_gpus_is_a_clear_error() -> None:
    with pytest.raises(ProbeError, match="hides all 8 GPUs"):
        probe({"CUDA_VISIBLE_DEVICES": ""}, lambda: SMI)
    with pytest.raises(ProbeError, match="nvidia-smi lists no GPUs"):
        probe({}, lambda: "")


def test_probe_without_driver(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(probe_mod.shutil, "which", lambda name, path=None: None)
    with pytest.raises(ProbeError, match="nvidia-smi not found"):
        probe({})


def test_local_resources_uses_real_count(capsys: pytest.CaptureFixture[str]) -> None:
    assert local_resources.main([], {"CUDA_VISIBLE_DEVICES": "0,5,6"}, lambda: SMI) == 0
    assert capsys.readouterr().out == "--local_resources=gpu=3\n"
    assert local_resources.main(["--bazelrc"], {}, lambda: SMI) == 0
    assert "test:gpu --local_resources=gpu=8\n" in capsys.readouterr().out
    assert local_resources.main([], {"CUDA_VISIBLE_DEVICES": ""}, lambda: SMI) == 0
    captured = capsys.readouterr()
    assert captured.out == "--local_resources=gpu=0\n" and "hides all" in captured.err


# ---------------------------------------------------------------- pure choice

def test_choose_spreads_before_stacking_and_contiguous_windows() -> None:
    assert gpu_flocks.choose([4, 3, 4, 4], 1, 1, False) == [0]
    assert gpu_flocks.choose([3, 4, 2, 4], 2, 1, False) == [1, 3]  # least-loaded GPUs first
    assert gpu_flocks.choose([4, 0, 4, 4], 2, 1, True) == [2, 3]
    assert gpu_flocks.choose([4, 0, 4, 0], 2, 1, True) is None
    assert gpu_flocks.choose([1, 1], 1, 2, False) is None
    assert gpu_flocks.slots_needed(10, 80, 4) == 1 and gpu_flocks.slots_needed(30, 80, 4) == 2
    assert gpu_flocks.slots_needed(0, 80, 4) == 4 and gpu_flocks.slots_needed(500, 80, 4) == 4


# ---------------------------------------------------------------- concurrency with real processes

def _worker(directory: str, seed: int, log: str) -> None:
    rng = random.Random(seed)
    count = rng.choice([1, 1, 1, 2, 2, 4])
    slots = rng.choice([1, 2, 4])
    contiguous = rng.random() < 0.4
    held = gpu_flocks.acquire(_gpus(), Path(directory), count, slots, 4, contiguous, timeout_s=60, poll_s=0.01)
    start = time.monotonic()
    time.sleep(rng.uniform(0.005, 0.03))
    end = time.monotonic()
    with open(log, "a", encoding="utf-8") as out:
        out.write(f"{seed} {int(contiguous)} {slots} {','.join(str(g.index) for g in held.gpus)} {start} {end}\n")
    held.release()


def test_200_concurrent_tests_never_share_beyond_capacity(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("fork")
    log = tmp_path / "log.txt"
    procs = [ctx.Process(target=_worker, args=(str(tmp_path / "locks"), seed, str(log))) for seed in range(200)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(90)
        assert p.exitcode == 0
    rows = [line.split() for line in log.read_text().splitlines()]
    assert len(rows) == 200
    events = []
    for _, contiguous, slots, gpus, start, end in rows:
        indices = [int(g) for g in gpus.split(",")]
        if contiguous == "1":
            assert indices == list(range(indices[0], indices[0] + len(indices)))
        for g in indices:
            events += [(float(start), 1, g, int(slots)), (float(end), 0, g, -int(slots))]
    load = [0] * 8
    for _, _, g, delta in sorted(events):
        load[g] += delta
        assert load[g] <= 4, "a GPU slot was held twice"
    assert all(v == 0 for v in load)


def _hold(directory: str, count: int, ready: str) -> None:
    held = gpu_flocks.acquire(_gpus(2), Path(directory), count, 4, 4, timeout_s=10)
    Path(ready).write_text(",".join(str(g.index) for g in held.gpus))
    time.sleep(60)


def test_kill_9_frees_gpus_and_waiter_proceeds(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("fork")
    directory = tmp_path / "locks"
    holder = ctx.Process(target=_hold, args=(str(directory), 2, str(tmp_path / "ready")))
    holder.start()
    deadline = time.monotonic() + 10
    while not (tmp_path / "ready").exists():
        assert time.monotonic() < deadline
        time.sleep(0.01)
    with pytest.raises(gpu_flocks.AssignTimeout, match="no block of 1 GPU"):
        gpu_flocks.acquire(_gpus(2), directory, 1, 1, 4, timeout_s=0.2)
    killer_at = time.monotonic()
    os.kill(holder.pid, signal.SIGKILL)
    held = gpu_flocks.acquire(_gpus(2), directory, 2, 4, 4, timeout_s=10)
    assert [g.index for g in held.gpus] == [0, 1] and time.monotonic() - killer_at < 5
    holder.join()
    held.release()


def _hold_then_release(directory: str, ready: str, seconds: float) -> None:
    held = gpu_flocks.acquire(_gpus(1), Path(directory), 1, 4, 4, timeout_s=10)
    Path(ready).write_text("x")
    time.sleep(seconds)
    held.release()


def test_waiter_proceeds_when_a_gpu_frees(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("fork")
    directory = tmp_path / "locks"
    holder = ctx.Process(target=_hold_then_release, args=(str(directory), str(tmp_path / "ready"), 0.5))
    holder.start()
    while not (tmp_path / "ready").exists():
        time.sleep(0.01)
    t0 = time.monotonic()
    held = gpu_flocks.acquire(_gpus(1), directory, 1, 1, 4, timeout_s=10)
    waited = time.monotonic() - t0
    assert 0.3 < waited < 5
    held.release()
    holder.join()


# ---------------------------------------------------------------- the --run_under wrapper

def test_run_under_sets_env_and_returns_exit_code(tmp_path: Path) -> None:
    seen = {}

    def fake_exec(argv, env):
        seen.update(env)
        seen["argv"] = list(argv)
        return 7

    env = {"TORCH_TEST_GPU_COUNT": "2", "TORCH_TEST_VRAM_GB": "30", "TORCH_GPU_LOCK_DIR": str(tmp_path),
           "CUDA_VISIBLE_DEVICES": "4,5,6,7"}
    assert run_under.main(["--contiguous", "--", "pytest", "-x"], env, lambda: SMI, fake_exec) == 7
    assert seen["argv"] == ["pytest", "-x"]
    assert seen["CUDA_VISIBLE_DEVICES"] in ("4,5", "5,6", "6,7")
    assert seen["CUDA_DEVICE_ORDER"] == "PCI_BUS_ID" and seen["TORCH_GPU_MEMORY_FRACTION"] == "0.5"
    assert run_under.main(["--", "true"], {}, lambda: SMI, lambda a, e: 0) == 0  # no GPUs asked: pass-through
    assert run_under.main(["--gpus", "3", "--", "true"], {"CUDA_VISIBLE_DEVICES": "0,1"}, lambda: SMI,
                          fake_exec) == run_under.EXIT_NO_GPU


def test_run_under_cli_execs_and_holds_locks(tmp_path: Path) -> None:
    smi = tmp_path / "smi.txt"
    smi.write_text(SMI)
    env = dict(os.environ, TORCH_GPU_ASSIGN_SMI_OUTPUT=str(smi), TORCH_GPU_LOCK_DIR=str(tmp_path / "l"),
               TORCH_TEST_GPU_COUNT="1", PYTHONPATH=str(REPO_ROOT))
    script = (
        "import os, sys\n"
        "print(os.environ['CUDA_VISIBLE_DEVICES'], os.environ['TORCH_GPU_MEMORY_FRACTION'])\n"
        "links = []\n"
        "for fd in range(3, 64):\n"
        "    try:\n"
        "        links.append(os.readlink(f'/proc/self/fd/{fd}'))\n"
        "    except OSError:\n"
        "        pass\n"
        "print([link for link in links if 'slot' in link])\n"
        "sys.exit(5)\n"
    )
    result = subprocess.run([sys.executable, "-m", "tools.gpu_assign", "--", sys.executable, "-c", script],
                            env=env, capture_output=True, text=True, timeout=30, cwd=REPO_ROOT)
    assert result.returncode == 5, result.stderr
    visible, fraction = result.stdout.splitlines()[0].split()
    assert visible == "0" and fraction == "1"
    assert result.stdout.count("slot") == 4  # the exec'd test holds all 4 slots of its GPU
    assert (tmp_path / "l").stat().st_mode & 0o7777 == 0o1777
