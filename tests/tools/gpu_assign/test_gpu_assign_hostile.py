"""gpu_assign against a hostile or broken machine: planted links, foreign lock directories, FIFOs,
hard links, unusable directories, a hung nvidia-smi. Every case ends in exit 0/2/3 with one line of
reason and leaves files it does not own untouched (issue #13)."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from bench.hostile_ops import LOCK_CASES, NOBODY, run_lock_case
from tools.gpu_assign import gpu_flocks, run_under
from tools.gpu_assign.probe import ProbeError, default_smi_runner, parse_nvidia_smi

REPO_ROOT = Path(__file__).resolve().parents[3]
SMI = "".join(f"{i}, GPU-{i:08x}-aaaa-bbbb-cccc-{i:012x}, NVIDIA H100 80GB HBM3, 81559\n" for i in range(2))
GPUS = parse_nvidia_smi(SMI)


def _victim(tmp_path: Path) -> Path:
    victim = tmp_path / "victim"
    victim.write_text("secret\n")
    os.chmod(victim, 0o600)
    return victim


@pytest.mark.parametrize("name", ["alloc.lock", f"gpu-{GPUS[0].uuid}.slot0.lock"])
def test_planted_symlink_is_refused_and_its_target_untouched(tmp_path: Path, name: str) -> None:
    victim = _victim(tmp_path)
    directory = tmp_path / "locks"
    directory.mkdir(mode=0o1777)
    (directory / name).symlink_to(victim)
    with pytest.raises(gpu_flocks.LockDirError, match="is a symbolic link"):
        gpu_flocks.acquire(GPUS, directory, 1, 4, 4, timeout_s=1)
    assert stat.S_IMODE(victim.stat().st_mode) == 0o600 and victim.read_text() == "secret\n"


def test_fifo_hard_link_and_directory_as_lock_file_are_refused(tmp_path: Path) -> None:
    directory = tmp_path / "locks"
    directory.mkdir()
    os.mkfifo(directory / "alloc.lock")
    with pytest.raises(gpu_flocks.LockDirError, match="not a regular file"):
        gpu_flocks.acquire(GPUS, directory, 1, 4, 4, timeout_s=1)  # O_NONBLOCK: no hang on the FIFO
    (directory / "alloc.lock").unlink()
    victim = _victim(tmp_path)
    os.link(victim, directory / "alloc.lock")
    with pytest.raises(gpu_flocks.LockDirError, match="another hard link"):
        gpu_flocks.acquire(GPUS, directory, 1, 4, 4, timeout_s=1)
    assert stat.S_IMODE(victim.stat().st_mode) == 0o600


def test_lock_files_are_created_readable_not_writable_by_others(tmp_path: Path) -> None:
    old = os.umask(0o077)
    try:
        held = gpu_flocks.acquire(GPUS, tmp_path / "locks", 1, 4, 4, timeout_s=1)
    finally:
        os.umask(old)
    held.release()
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in (tmp_path / "locks").iterdir()}
    assert modes and set(modes.values()) == {0o644}, modes
    assert stat.S_IMODE((tmp_path / "locks").stat().st_mode) == 0o1777


def _stat(mode: int, uid: int) -> os.stat_result:
    return os.stat_result((mode, 0, 0, 1, uid, 0, 0, 0, 0, 0))


def test_lock_directory_owner_and_mode_rules() -> None:
    me, other = 1000, 1001
    path = Path("/var/tmp/torch-gpu-locks")
    assert gpu_flocks.check_lock_dir(path, _stat(stat.S_IFDIR | 0o1777, 0), me) is None
    assert gpu_flocks.check_lock_dir(path, _stat(stat.S_IFDIR | 0o755, me), me) is None
    assert "belongs to uid 1001" in gpu_flocks.check_lock_dir(path, _stat(stat.S_IFDIR | 0o1777, other), me)
    assert "belongs to uid 1001" in gpu_flocks.check_lock_dir(path, _stat(stat.S_IFDIR | 0o755, other), 0)
    assert "without the sticky bit" in gpu_flocks.check_lock_dir(path, _stat(stat.S_IFDIR | 0o777, 0), me)
    assert "without the sticky bit" in gpu_flocks.check_lock_dir(path, _stat(stat.S_IFDIR | 0o775, 0), me)
    assert "not a directory" in gpu_flocks.check_lock_dir(path, _stat(stat.S_IFREG | 0o644, me), me)
    # In Bazel's sandbox (a user namespace) root's directory shows as the overflow uid.
    assert gpu_flocks.check_lock_dir(path, _stat(stat.S_IFDIR | 0o1777, 65534), me, 65534) is None
    assert "belongs to uid 65534" in gpu_flocks.check_lock_dir(path, _stat(stat.S_IFDIR | 0o1777, 65534), me, None)
    assert "belongs to uid 65534" in gpu_flocks.check_lock_dir(path, _stat(stat.S_IFDIR | 0o755, 65534), me, 65534)


def test_symlinked_lock_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir(mode=0o1777)
    (tmp_path / "locks").symlink_to(tmp_path / "real")
    with pytest.raises(gpu_flocks.LockDirError, match="is a symbolic link"):
        gpu_flocks.acquire(GPUS, tmp_path / "locks", 1, 4, 4, timeout_s=1)


def test_a_mutex_held_forever_costs_a_timeout_not_a_hang(tmp_path: Path) -> None:
    import fcntl

    directory = tmp_path / "locks"
    directory.mkdir()
    fd = os.open(directory / "alloc.lock", os.O_RDONLY | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX)
    t0 = time.monotonic()
    with pytest.raises(gpu_flocks.AssignTimeout):
        gpu_flocks.acquire(GPUS, directory, 1, 1, 4, timeout_s=0.3)
    assert time.monotonic() - t0 < 5
    os.close(fd)


# ---------------------------------------------------------------- the CLI: exit 2/3, one line, no traceback

def _cli(tmp_path: Path, lock_dir: Path, extra_env: dict[str, str] | None = None,
         args: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    smi = tmp_path / "smi.txt"
    smi.write_text(SMI)
    env = dict(os.environ, TORCH_GPU_ASSIGN_SMI_OUTPUT=str(smi), TORCH_GPU_LOCK_DIR=str(lock_dir),
               TORCH_TEST_GPU_COUNT="1", PYTHONPATH=str(REPO_ROOT))
    env.update(extra_env or {})
    return subprocess.run([sys.executable, "-m", "tools.gpu_assign", *args, "--", "true"], env=env,
                          capture_output=True, text=True, timeout=30, cwd=REPO_ROOT)


def _one_line(result: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def test_cli_lock_dir_that_is_a_file_or_under_a_file_exits_2(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    for lock_dir in (tmp_path / "file", tmp_path / "file" / "locks"):
        result = _cli(tmp_path, lock_dir)
        assert result.returncode == run_under.EXIT_NO_GPU
        assert str(lock_dir) in _one_line(result)


def test_read_only_lock_dir_exits_2_with_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """A read-only mount or a directory we may not write (root passes mode checks, so the kernel's
    answer is faked here): exit 2 with the sandbox hint, not a traceback."""
    (tmp_path / "locks").mkdir()
    monkeypatch.setattr(gpu_flocks.os, "access", lambda path, mode: False)
    env = {"TORCH_GPU_LOCK_DIR": str(tmp_path / "locks"), "TORCH_TEST_GPU_COUNT": "1"}
    assert run_under.main(["--", "true"], env, lambda: SMI, lambda argv, e: 0) == run_under.EXIT_NO_GPU
    [line] = capsys.readouterr().err.strip().splitlines()
    assert "is not writable" in line and "--sandbox_writable_path=" in line


def test_cli_hung_nvidia_smi_exits_2(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "nvidia-smi"
    fake.write_text("#!/bin/sh\nexec sleep 30\n")
    fake.chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", TORCH_GPU_ASSIGN_SMI_TIMEOUT_S="0.5")
    t0 = time.monotonic()
    with pytest.raises(ProbeError, match="did not answer within 0.5s"):
        default_smi_runner(env)()
    assert time.monotonic() - t0 < 10
    result = subprocess.run([sys.executable, "-m", "tools.gpu_assign", "--gpus", "1", "--", "true"],
                            env=dict(env, PYTHONPATH=str(REPO_ROOT)), capture_output=True, text=True,
                            timeout=30, cwd=REPO_ROOT)
    assert result.returncode == run_under.EXIT_NO_GPU and "did not answer" in _one_line(result)


@pytest.mark.parametrize("variable,value", [("TORCH_TEST_GPU_COUNT", "two"), ("TORCH_TEST_GPU_COUNT", "-1"),
                                            ("TORCH_TEST_VRAM_GB", "nan"), ("TORCH_GPU_WAIT_TIMEOUT_S", "inf"),
                                            ("TORCH_GPU_SLOTS_PER_GPU", "1000000000")])
def test_cli_bad_environment_values_exit_2_without_traceback(tmp_path: Path, variable: str, value: str) -> None:
    result = _cli(tmp_path, tmp_path / "locks", {variable: value})
    assert result.returncode == 2 and "Traceback" not in result.stderr and "invalid" in result.stderr


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to play a second, unprivileged user")
def test_unprivileged_user_cannot_make_root_chmod_a_root_file() -> None:
    """The audit's exploit end to end: nobody plants the directory and a link, root runs a GPU test."""
    base = Path(tempfile.mkdtemp(prefix="gpu-assign-exploit-", dir="/var/tmp"))
    try:
        os.chmod(base, 0o755)  # nobody must reach it (pytest's tmp_path is root-only)
        victim = _victim(base)
        planted = base / "planted"
        os.chmod(base, 0o777)
        subprocess.run(["/bin/sh", "-c", f"mkdir -m 1777 {planted} && ln -s {victim} {planted}/alloc.lock"],
                       check=True, user=NOBODY, group=NOBODY)
        os.chmod(base, 0o755)
        result = _cli(base, planted)
        assert result.returncode == run_under.EXIT_NO_GPU
        assert f"belongs to uid {NOBODY}" in _one_line(result)
        assert stat.S_IMODE(victim.stat().st_mode) == 0o600 and victim.read_text() == "secret\n"
    finally:
        shutil.rmtree(base)


def test_generated_lock_directory_states_never_crash_hang_or_touch_foreign_files(tmp_path: Path) -> None:
    outcomes = [run_lock_case(case, tmp_path / f"case{i}") for i, case in enumerate(LOCK_CASES)]
    bad = [o for o in outcomes if o.verdict != "ok"]
    assert len(outcomes) >= 20 and not bad, bad
