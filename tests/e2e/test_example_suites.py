"""The Bazel workspace as users drive it: queries, --config=gpu selection, test.xml, shards, bad input.

These run the real `bazel` (skipped when none is on PATH; `scripts/setup.sh` installs one) and
share the workspace's server, so each call after the first costs about a second.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GPU_QUERY = ('attr(tags, "[\\[ ]requires-gpu[,\\]]", tests(//examples/...))'
             ' except attr(tags, "manual", tests(//examples/...))')
GPU_TARGETS = {
    "//examples/mixed:test_mixed_devices_gpu",
    "//examples/torch_cpu:test_perf_budgets_gpu",  # pytest-torch's torch_device gives [cuda] on GPU runners
    "//examples/torch_gpu:test_cuda_ops",
    "//examples/torch_gpu:test_gpu_harness",
    "//examples/torch_gpu:test_two_gpu",
}
CPU_TARGETS = {
    "//examples/harness:test_nondeterminism",
    "//examples/mixed:test_mixed_devices_cpu",
    "//examples/torch_cpu:test_mlp_training",
    "//examples/torch_cpu:test_perf_budgets_cpu",
    "//examples/torch_cpu:test_tensor_shapes",
    "//examples/unit:test_runner_selection",
}

pytestmark = pytest.mark.skipif(shutil.which("bazel") is None, reason="no bazel on PATH (run scripts/setup.sh)")


def bazel(
    *args: str, cwd: Path = ROOT, check: bool = True, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(["bazel", *args], cwd=cwd, capture_output=True, text=True, env=env)
    if check and result.returncode != 0:
        raise AssertionError(f"bazel {' '.join(args)} failed ({result.returncode}):\n{result.stderr[-4000:]}")
    return result


def labels(output: str) -> set[str]:
    return {line.strip() for line in output.splitlines() if line.startswith("//")}


def query_tags(target: str, cwd: Path = ROOT, env: dict[str, str] | None = None) -> set[str]:
    """Every string value of `bazel query <target> --output=xml`: the tags among them."""
    root = ET.fromstring(bazel("query", target, "--output=xml", cwd=cwd, env=env).stdout)
    return {node.get("value") for node in root.iter("string") if node.get("value")}


def test_gpu_query_lists_exactly_the_gpu_examples():
    assert labels(bazel("query", GPU_QUERY).stdout) == GPU_TARGETS


def test_cpu_query_lists_the_rest():
    expression = f'tests(//examples/...) except {GPU_QUERY} except attr(tags, "manual", tests(//examples/...))'
    assert labels(bazel("query", expression).stdout) == CPU_TARGETS


def test_xml_output_carries_gpu_count_vram_and_resources():
    tags = query_tags("//examples/torch_gpu:test_two_gpu")
    assert {"requires-gpu", "gpu-count:2", "resources:gpu:2"} <= tags
    assert any(tag.startswith("gpu-vram-gb:") for tag in tags)


def test_mixed_file_splits_by_node_id():
    root = ET.fromstring(bazel("query", "//examples/mixed:all", "--output=xml").stdout)
    rules = {rule.get("name"): rule for rule in root.iter("rule") if rule.get("class") == "py_test"}
    cpu_tags = {n.get("value") for n in rules["//examples/mixed:test_mixed_devices_cpu"].iter("string")}
    assert "requires-torch-cpu" in cpu_tags and "requires-gpu" not in cpu_tags


def test_cpu_part_runs_the_cpu_case_an_id_names_without_gpus():
    """`test_matmul_on_each_device[device0]` is gpu with `without_gpus: cpu` (the CUDA case on a GPU machine):
    a CPU runner's part runs it, and the GPU part, run on a machine without GPUs, leaves it out."""
    bazel("test", "//examples/mixed:test_mixed_devices_cpu")
    xml_path = ROOT / "bazel-testlogs/examples/mixed/test_mixed_devices_cpu/test.xml"
    cases = {case.get("name") for case in ET.parse(xml_path).iter("testcase")}
    assert "test_matmul_on_each_device[device0]" in cases and "test_softmax_on_gpu_matches_cpu" not in cases
    gpu = bazel("test", "--config=gpu", "--//rules:torch_lock=cpu", "--run_under=/usr/bin/env",
                "--local_resources=gpu=2", "//examples/mixed:test_mixed_devices_gpu", check=False)
    assert gpu.returncode in (0, 3), gpu.stderr[-3000:]
    xml_path = ROOT / "bazel-testlogs/examples/mixed/test_mixed_devices_gpu/test.xml"
    cases = {case.get("name") for case in ET.parse(xml_path).iter("testcase")}
    assert "test_matmul_on_each_device[device0]" not in cases and "test_softmax_on_gpu_matches_cpu" in cases


def test_gpu_config_selects_only_gpu_targets(tmp_path):
    # The cpu lock (so nothing CUDA is fetched here) and no GPU wrapper. Without a GPU the tests
    # skip or fail (a GPU part whose [cuda] cases are not even collected): only the selection counts.
    events = tmp_path / "bep.json"
    result = bazel(
        "test", "--config=gpu", "--//rules:torch_lock=cpu", "--run_under=/usr/bin/env", "--local_resources=gpu=2",
        f"--build_event_json_file={events}", "//examples/...", check=False,
    )
    assert result.returncode in (0, 3), result.stderr[-3000:]
    ran = set()
    for line in events.read_text().splitlines():
        event = json.loads(line)
        summary = event.get("id", {}).get("testSummary")
        if summary:
            ran.add(summary["label"])
    assert ran == GPU_TARGETS


def test_failing_cpu_test_shows_each_case_in_test_xml():
    result = bazel("test", "//examples/deliberate:test_fails_on_purpose", check=False)
    assert result.returncode == 3, result.stderr[-2000:]
    xml_path = ROOT / "bazel-testlogs/examples/deliberate/test_fails_on_purpose/test.xml"
    cases = {case.get("name"): case for case in ET.parse(xml_path).iter("testcase")}
    assert set(cases) == {"test_passing_case", "test_failing_case"}
    assert cases["test_failing_case"].find("failure") is not None
    assert cases["test_passing_case"].find("failure") is None


def test_shards_run_every_case_once():
    bazel("test", "//examples/deliberate:test_sharded")
    names: list[str] = []
    for index in range(1, 4):
        xml_path = ROOT / f"bazel-testlogs/examples/deliberate/test_sharded/shard_{index}_of_3/test.xml"
        names += [case.get("name") for case in ET.parse(xml_path).iter("testcase")]
    assert sorted(names) == sorted(f"test_arange_length[{n}]" for n in range(10))


CONSUMER_MODULE = """\
module(name = "consumer")

bazel_dep(name = "rules_torch_test")
local_path_override(module_name = "rules_torch_test", path = "{repo}")

classification = use_extension("@rules_torch_test//rules:extensions.bzl", "torch_classification")
classification.file(src = "//:my_classification.json")

# The same pip settings as this repository's MODULE.bazel, on a lock with a requirement lacking a hash.
bazel_dep(name = "rules_python", version = "0.22.1")
pip = use_extension("@rules_python//python/extensions:pip.bzl", "pip")
pip.parse(
    name = "pip_unhashed",
    extra_pip_args = ["--require-hashes"],
    python_interpreter = "python3.11",
    requirements_lock = "//:unhashed_lock.txt",
)
use_repo(pip, "pip_unhashed")
"""

CONSUMER_BUILD = """\
load("@rules_torch_test//rules:defs.bzl", "torch_py_test")

torch_py_test(name = "test_model", srcs = ["test_model.py"], pytest_config = None)

torch_py_test(name = "test_model_forced_gpu", srcs = ["test_model.py"], device = "gpu", pytest_config = None)
"""


@pytest.fixture
def consumer(tmp_path):
    """A repository that uses these rules as a module, with its own classification file."""
    workspace = tmp_path / "consumer"
    workspace.mkdir()
    (workspace / "MODULE.bazel").write_text(CONSUMER_MODULE.format(repo=ROOT))
    (workspace / "BUILD.bazel").write_text(CONSUMER_BUILD)
    (workspace / "test_model.py").write_text("def test_model():\n    pass\n")
    (workspace / "unhashed_lock.txt").write_text("six==1.17.0\n")
    (workspace / "bad").mkdir()
    (workspace / "bad" / "BUILD.bazel").write_text(
        'load("@rules_torch_test//rules:defs.bzl", "torch_py_test")\n'
        'torch_py_test(name = "test_x", srcs = ["test_x.py"], device = "tpu", pytest_config = None)\n'
    )
    (workspace / "bad" / "test_x.py").write_text("def test_x():\n    pass\n")
    env = dict(os.environ, BAZEL_OFFLINE_EXTRA_BINDS=str(ROOT))
    yield workspace, env
    bazel("shutdown", cwd=workspace, check=False, env=env)


def classification(entry: dict) -> str:
    return json.dumps({"version": 1, "files": {"test_model.py": entry}})


def test_consumer_module_uses_its_own_classification_and_bad_input_fails(consumer):
    workspace, env = consumer
    (workspace / "my_classification.json").write_text(
        classification({"label": "gpu", "gpu_count": 4, "vram_gb": 40})
    )
    tags = query_tags("//:test_model", cwd=workspace, env=env)
    assert {"requires-gpu", "gpu-count:4", "gpu-vram-gb:40", "resources:gpu:4"} <= tags

    (workspace / "my_classification.json").write_text(classification({"label": "tpu"}))
    result = bazel("query", "//:test_model", cwd=workspace, env=env, check=False)
    assert result.returncode != 0
    assert 'my_classification.json: files["test_model.py"]' in result.stderr
    assert "'label' must be one of cpu, gpu, mixed, unknown; got \"tpu\"" in result.stderr

    # device = "gpu" on a file the classifier labelled cpu (gpu_count 0) implies one GPU (issue #13).
    (workspace / "my_classification.json").write_text(classification({"label": "cpu", "gpu_count": 0}))
    tags = query_tags("//:test_model_forced_gpu", cwd=workspace, env=env)
    assert {"requires-gpu", "gpu-count:1", "resources:gpu:1", "torch-label-source:attribute"} <= tags

    (workspace / "my_classification.json").write_text(classification({"label": "cpu"}))
    result = bazel("query", "//bad:all", cwd=workspace, env=env, check=False)
    assert result.returncode != 0
    assert 'torch_py_test @@//bad:test_x: device must be "cpu" or "gpu", got "tpu"' in result.stderr


def test_a_lock_line_without_hash_fails_the_fetch(consumer):
    workspace, env = consumer
    (workspace / "my_classification.json").write_text(classification({"label": "cpu"}))
    result = bazel("query", "deps(@pip_unhashed//:six_pkg)", cwd=workspace, env=env, check=False)
    assert result.returncode != 0
    assert "Hashes are required in --require-hashes mode" in result.stderr


def test_gpu_config_hands_each_test_its_gpus(tmp_path):
    """--config=gpu end to end with a fake nvidia-smi: the wrapper's choice is in each test's log."""
    smi = tmp_path / "bin" / "nvidia-smi"
    smi.parent.mkdir()
    smi.write_text("#!/bin/sh\nprintf '0, GPU-a, NVIDIA H100, 81559\\n1, GPU-b, NVIDIA H100, 81559\\n'\n")
    smi.chmod(0o755)
    result = bazel(
        "test", "--config=gpu", "--//rules:torch_lock=cpu", "--local_resources=gpu=2",
        f"--test_env=PATH={smi.parent}:/usr/bin:/bin", "--nocache_test_results",
        "//examples/torch_gpu:test_two_gpu", "//examples/torch_gpu:test_cuda_ops", check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    two = (ROOT / "bazel-testlogs/examples/torch_gpu/test_two_gpu/test.log").read_text()
    one = (ROOT / "bazel-testlogs/examples/torch_gpu/test_cuda_ops/test.log").read_text()
    assert "gpu_assign: //examples/torch_gpu:test_two_gpu: CUDA_VISIBLE_DEVICES=0,1 " in two
    assert "gpu_assign: //examples/torch_gpu:test_cuda_ops: CUDA_VISIBLE_DEVICES=" in one


def test_consumer_without_a_torch_runtime_is_told_what_to_set(consumer):
    workspace, env = consumer
    (workspace / "my_classification.json").write_text(classification({"label": "cpu"}))
    result = bazel("build", "--nobuild", "//:test_model", cwd=workspace, env=env, check=False)
    assert result.returncode != 0
    assert "--@rules_torch_test//rules:torch_runtime is not set" in result.stderr
    assert "build --@rules_torch_test//rules:torch_runtime=//:torch_runtime" in result.stderr


def test_pip_site_packages_names_a_label_it_cannot_read(consumer):
    workspace, env = consumer
    (workspace / "my_classification.json").write_text(classification({"label": "cpu"}))
    (workspace / "env").mkdir()
    (workspace / "env" / "BUILD.bazel").write_text(
        'load("@rules_torch_test//rules:defs.bzl", "pip_site_packages")\n'
        'pip_site_packages(name = "runtime", requirements = ["@pip_cpu//torch:whl"])\n'
    )
    result = bazel("query", "//env:all", cwd=workspace, env=env, check=False)
    assert result.returncode != 0
    assert "unexpected requirement label \"@pip_cpu//torch:whl\"" in result.stderr
