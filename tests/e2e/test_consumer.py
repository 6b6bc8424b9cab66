"""examples/consumer/ as a user's repository, once per rules_python line: exactly README.md's recipe.

Each line's workspace is examples/consumer/common/ plus examples/consumer/<line>/, assembled under
.consumer-e2e/ in this checkout (a path the offline Bazel kit binds; git- and Bazel-ignored) with a
`.bazelrc.user` holding what is machine-specific: where rules_torch_test is
(`--override_module`), and for rules_python 1.x the unpacked snapshot from
../shared/third_party plus what an offline machine needs. The folder is kept between runs, so Bazel
reuses each consumer's output base (torch is fetched once per line) and both share the user's
repository cache. Cold, each line takes a few minutes (fetching torch); warm, about a minute.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tarfile
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
CONSUMER = ROOT / "examples" / "consumer"
SCRATCH = ROOT / ".consumer-e2e"
SNAPSHOT_NAME = "rules_python-6854dc38"
# The repository's parent holds shared/ (../shared/third_party/README.md); a checkout elsewhere
# (e.g. a git worktree) names the archive with RULES_PYTHON_1_ARCHIVE.
SNAPSHOT = Path(
    os.environ.get("RULES_PYTHON_1_ARCHIVE", ROOT.parent / "shared" / "third_party" / f"{SNAPSHOT_NAME}.tar.gz")
)

CPU_TARGETS = {"//tests:test_tensor_math", "//tests:test_devices_cpu"}
GPU_TARGETS = {"//tests:test_cuda_kernels", "//tests:test_devices_gpu"}
CLASSIFIED = {"tests/test_tensor_math.py": "cpu", "tests/test_devices.py": "mixed", "tests/test_cuda_kernels.py": "gpu"}

pytestmark = pytest.mark.skipif(shutil.which("bazel") is None, reason="no bazel on PATH (run scripts/setup.sh)")


def offline_rc_rules_python_1() -> list[str]:
    """The 1.x lines of .bazelrc.user: the unpacked snapshot, and what this offline machine needs."""
    if not SNAPSHOT.is_file():
        pytest.skip(
            f"rules_python 1.x consumer not checked: {SNAPSHOT} is missing "
            "(../shared/third_party/README.md; or set RULES_PYTHON_1_ARCHIVE)"
        )
    unpacked = SCRATCH / SNAPSHOT_NAME
    if not (unpacked / "MODULE.bazel").is_file():
        partial = SCRATCH / f"{SNAPSHOT_NAME}.partial"
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir(parents=True)
        with tarfile.open(SNAPSHOT) as archive:
            archive.extractall(partial, filter="data")
        (partial / SNAPSHOT_NAME).rename(unpacked)
        shutil.rmtree(partial)
    # rules_python 1.x depends on stardoc (for its docs only), which the BCR would provide.
    stardoc = SCRATCH / "stubs" / "stardoc"
    stardoc.mkdir(parents=True, exist_ok=True)
    (stardoc / "MODULE.bazel").write_text('module(name = "stardoc")\n')
    (stardoc / "BUILD.bazel").write_text("")
    return [
        # Debian's system bazelrc overrides rules_python with its 0.22.1; a later override wins.
        f"common --override_module=rules_python={unpacked}",
        f"common --override_module=stardoc={stardoc}",
        # The exec-tools toolchain would download a hermetic Python.
        "build --@rules_python//python/config_settings:exec_tools_toolchain=disabled",
    ]


def assemble(line: str, offline_rc: list[str]) -> Path:
    """A fresh copy of the consumer for `line`, at a fixed path (so Bazel's output base is reused)."""
    workspace = SCRATCH / line
    if workspace.exists():
        shutil.rmtree(workspace)
    shutil.copytree(CONSUMER / "common", workspace, symlinks=True)
    shutil.copytree(CONSUMER / line, workspace, dirs_exist_ok=True)
    rc = [
        "startup --host_jvm_args=-Xmx2g",
        # rules_torch_test is not in the BCR: this checkout (local_path_override does the same).
        f"common --override_module=rules_torch_test={ROOT}",
        *offline_rc,
    ]
    (workspace / ".bazelrc.user").write_text("\n".join(rc) + "\n")
    return workspace


def bazel(workspace: Path, *args: str, ok: tuple[int, ...] = (0,)) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, BAZEL_OFFLINE_EXTRA_BINDS=str(ROOT))
    result = subprocess.run(["bazel", *args], cwd=workspace, env=env, capture_output=True, text=True)
    if result.returncode not in ok:
        raise AssertionError(
            f"in {workspace}: bazel {' '.join(args)} exited {result.returncode}:\n{result.stderr[-5000:]}"
        )
    return result


def events(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def ran(bep: Path) -> dict[str, str]:
    """The tests a `bazel test` ran, with their overall status, from its build events."""
    summaries = (event for event in events(bep) if "testSummary" in event.get("id", {}))
    return {event["id"]["testSummary"]["label"]: event["testSummary"]["overallStatus"] for event in summaries}


def analysed_tests(bep: Path) -> set[str]:
    """The test targets a `bazel test` analysed (after its tag filters), from its build events."""
    configured = (event for event in events(bep) if "targetConfigured" in event.get("id", {}))
    return {event["id"]["targetConfigured"]["label"] for event in configured if event["configured"].get("testSize")}


@pytest.mark.parametrize("line", ["rules_python_0.22", "rules_python_1"])
def test_consumer_runs_the_readme_recipe(line: str) -> None:
    offline_rc = offline_rc_rules_python_1() if line == "rules_python_1" else []
    workspace = assemble(line, offline_rc)
    bep = SCRATCH / f"{line}.bep.json"
    try:
        # 1. The checked-in classification is empty; classify writes the consumer's own file.
        bazel(workspace, "run", "@rules_torch_test//tools:classify", "--", "--update")
        files = json.loads((workspace / "torch_classification.json").read_text())["files"]
        assert {path: entry["label"] for path, entry in files.items()} == CLASSIFIED

        # 2. A CPU runner: the CPU file and the CPU half of the mixed file run, and pass.
        bazel(workspace, "test", "//...", f"--build_event_json_file={bep}")
        assert ran(bep) == {label: "PASSED" for label in CPU_TARGETS}
        xml = workspace / "bazel-testlogs" / "tests" / "test_devices_cpu" / "test.xml"
        assert [case.get("name") for case in ET.parse(xml).iter("testcase")] == ["test_relu_clamps_negatives"]

        # 3. The planner's manifest lists the GPU targets.
        bazel(workspace, "run", "@rules_torch_test//tools:export_gpu_manifest")
        manifest = yaml.safe_load((workspace / "gpu_manifest.yaml").read_text())
        assert {test["label"] for test in manifest["tests"]} == GPU_TARGETS

        # 4. --config=gpu selects only the GPU targets (checked without running them: no GPU here).
        # --build_tests_only (in the config) analyses only the tests that pass its tag filter.
        gpu_events = f"--build_event_json_file={bep}"
        bazel(workspace, "test", "--config=gpu", "//...", "--check_tests_up_to_date", gpu_events, ok=(1,))
        assert analysed_tests(bep) == GPU_TARGETS
    finally:
        bazel(workspace, "shutdown", ok=(0, 1))
