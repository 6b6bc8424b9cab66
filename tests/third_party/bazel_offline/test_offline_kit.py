"""The offline kit shows Bazel every host path a caller names, as a native Bazel would see it.

Bazel in the kit runs in a chroot and sees only bound host paths. A tool that hands Bazel a path the
kit does not bind (a BEP file under a temp dir, a `--run_under` script, a fake `nvidia-smi` on
`--test_env=PATH`) fails there and works with a native Bazel, and whether it fails used to depend on
which paths earlier calls had left bound. These tests ask the kit which paths it binds for a call
(`BAZEL_OFFLINE_PRINT_BINDS=1`: no root, chroot or mounts needed, so they run on every machine) and
check that each path the project's tools pass is among them.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[3]
KIT = ROOT / "third_party" / "bazel_offline"


@pytest.fixture(scope="module")
def host_paths(load_script: Callable[[Path], ModuleType]) -> ModuleType:
    return load_script(KIT / "lib" / "host_paths.py")


def kit_binds(*args: str, cwd: Path = ROOT, env: dict[str, str] | None = None) -> list[str]:
    """The host paths bin/bazel would bind for `bazel ARGS` (a dry run)."""
    env = dict(os.environ if env is None else env, BAZEL_OFFLINE_PRINT_BINDS="1")
    result = subprocess.run([str(KIT / "bin" / "bazel"), *args], cwd=cwd, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def visible(path: Path | str, binds: list[str]) -> bool:
    path = os.path.realpath(path)
    return any(path == bind or path.startswith(bind.rstrip("/") + "/") for bind in binds)


def test_paths_in_flags_lists_and_run_under_commands(host_paths):
    args = [
        "--build_event_json_file=/a/bep.json",
        "--run_under=/b/tool --flag=/c/data",
        "--test_env=PATH=/d/bin:/e/bin",
        "--sandbox_writable_path", "/f/locks",
        "//examples/...", "@repo//pkg:target", "--config=gpu",
    ]
    assert host_paths.paths_in_args(args, {}) == ["/a/bep.json", "/b/tool", "/c/data", "/d/bin", "/e/bin", "/f/locks"]


def test_variables_passed_on_by_name_contribute_their_paths(host_paths):
    environ = {"PATH": "/fake/bin:/usr/bin", "DATA": "/data/dir", "UNUSED": "/never"}
    args = ["--test_env=PATH", "--action_env=DATA", "--test_env=MISSING"]
    assert host_paths.paths_in_args(args, environ) == ["/fake/bin", "/usr/bin", "/data/dir"]


def test_a_file_not_written_yet_is_bound_through_its_nearest_directory(host_paths, tmp_path):
    (tmp_path / "tool.sh").write_text("#!/bin/sh\n")
    assert host_paths.nearest_existing_dir(str(tmp_path / "new" / "deeper" / "bep.json")) == str(tmp_path)
    assert host_paths.nearest_existing_dir(str(tmp_path / "tool.sh")) == str(tmp_path)
    assert host_paths.nearest_existing_dir(str(tmp_path)) == str(tmp_path)
    assert host_paths.nearest_existing_dir("/no-such-top-level-dir/x/y") is None


def test_rc_files_follow_imports_relative_to_the_workspace(host_paths, tmp_path):
    workspace, home = tmp_path / "ws", tmp_path / "home"
    (workspace / "rc").mkdir(parents=True)
    home.mkdir()
    (workspace / ".bazelrc").write_text(
        "try-import %workspace%/rc/user.bazelrc  # machine-local\ntry-import %workspace%/missing.bazelrc\n"
    )
    (workspace / "rc" / "user.bazelrc").write_text("build --disk_cache=/srv/cache 'unbalanced\n")
    (home / ".bazelrc").write_text("common --repo_env=X=/home-data\n")
    files = host_paths.rc_files(str(workspace), str(home))
    assert files == [str(workspace / ".bazelrc"), str(home / ".bazelrc"), str(workspace / "rc" / "user.bazelrc")]


def test_kit_binds_the_temp_dirs_home_and_every_path_the_tools_pass(tmp_path):
    """The paths of issue 11's three failures, and the kinds of path a user's own tools pass."""
    smi_dir = tmp_path / "bin"
    smi_dir.mkdir()
    (smi_dir / "nvidia-smi").write_text("#!/bin/sh\n")
    own_tmp = tmp_path / "own-tmp"
    own_tmp.mkdir()
    env = dict(os.environ, TMPDIR=str(own_tmp))
    binds = kit_binds(
        "test", "--config=gpu", "--run_under=/usr/bin/env",
        f"--build_event_json_file={tmp_path / 'not-yet' / 'bep.json'}",  # test_gpu_config_selects_only_gpu_targets
        f"--test_env=PATH={smi_dir}:/usr/bin:/bin",  # test_gpu_config_hands_each_test_its_gpus
        "//examples/...", env=env,
    )
    # converge writes its BEP files under tempfile's directory (TMPDIR, else /tmp).
    for path in ("/tmp", "/var/tmp", own_tmp, smi_dir / "nvidia-smi", tmp_path / "not-yet", ROOT,
                 Path.home(), Path(sys.executable).parent):
        assert visible(path, binds), f"{path} is not bound into the chroot: {binds}"
    assert not visible("/usr/bin/env", binds), "system directories come from the chroot, never from the host"


def test_kit_binds_a_path_outside_the_usual_places(tmp_path):
    """A BEP file or `bazel run` argument anywhere on the host: its nearest existing directory."""
    outside = next((d for d in ("/mnt", "/srv", "/opt", "/media") if os.path.isdir(d)), None)
    if outside is None:
        pytest.skip("no /mnt, /srv, /opt or /media on this machine")
    binds = kit_binds("run", f"--build_event_json_file={outside}/no-such-dir/bep.json", "//tools:plan",
                      "--", f"{outside}/manifest.yaml")
    assert visible(outside, binds), binds


def test_paths_in_the_workspace_rc_files_are_bound(host_paths, tmp_path):
    """A path in the workspace's .bazelrc (like test:gpu's `--sandbox_writable_path`) is shown too."""
    workspace, data = tmp_path / "ws", tmp_path / "rc-data"
    workspace.mkdir()
    data.mkdir()
    (workspace / ".bazelrc").write_text(f"test:gpu --sandbox_writable_path={data}/locks\n")
    paths = host_paths.caller_paths(["test", "//..."], str(workspace), {"HOME": str(tmp_path / "no-home")})
    assert paths[:2] == ["/tmp", "/var/tmp"]
    assert str(data) in paths and str(tmp_path) in paths  # the rc's directory; HOME's nearest existing one
