"""The Bazel glue around pytest-torch: options it sets, options it relies on, heatmap capture."""

from __future__ import annotations

import sys

import pytest

from rules.private import pytest_torch_glue as glue

torch = pytest.importorskip("torch")


def pytest_torch_options() -> set[str]:
    """Every option pytest-torch registers, read through its public pytest_addoption hook."""
    from pytest_torch import plugin

    names: set[str] = set()

    class Group:
        def addoption(self, *opts: str, **_: object) -> None:
            names.update(opts)

    class Parser:
        def getgroup(self, *_: object, **__: object) -> Group:
            return Group()

    plugin.pytest_addoption(Parser())
    return names


def test_every_option_the_glue_relies_on_exists_in_pytest_torch():
    missing = set(glue.REQUIRED_OPTIONS) - pytest_torch_options()
    assert not missing, f"pytest-torch no longer has {sorted(missing)}: update rules/private/pytest_torch_glue.py"


def test_options_under_bazel_point_into_undeclared_outputs():
    env = {"TEST_UNDECLARED_OUTPUTS_DIR": "/out", "TORCH_TEST_NUM_THREADS": "2",
           "TORCH_TEST_PERF_BASELINES": "tests/perf.json"}
    args = glue.pytest_torch_args(env, "/root", user_set_threads=False)
    assert args[args.index("--torch-failure-artifacts") + 1] == "/out/torch-failures"
    assert args[args.index("--torch-perf-file") + 1] == "/root/tests/perf.json"
    assert args[args.index("--torch-num-threads") + 1] == "2"
    assert "--torch-github-annotations" not in args


def test_recording_writes_only_to_outputs_and_user_threads_win():
    env = {"TEST_UNDECLARED_OUTPUTS_DIR": "/out", "TORCH_TEST_UPDATE_PERF": "1", "GITHUB_ACTIONS": "true",
           "TORCH_TEST_NUM_THREADS": "1"}
    args = glue.pytest_torch_args(env, "/root", user_set_threads=True)
    assert "--torch-update-perf" in args
    assert args[args.index("--torch-perf-file") + 1] == "/out/torch-perf-baselines.json"
    assert "--torch-github-annotations" in args
    assert "--torch-num-threads" not in args


def test_recording_outside_bazel_test_is_refused():
    with pytest.raises(ValueError, match="TEST_UNDECLARED_OUTPUTS_DIR"):
        glue.pytest_torch_args({"TORCH_TEST_UPDATE_PERF": "1"}, "/root", user_set_threads=False)


def test_mismatched_tensors_are_found_in_the_traceback():
    from pytest_torch import assert_tensors_close

    expected = torch.zeros(3)
    try:
        assert_tensors_close(torch.ones(3), expected)
    except AssertionError:
        found = glue.mismatched_tensors(sys.exc_info()[2])
    assert found is not None
    actual, got_expected, rtol, atol = found
    assert got_expected is expected and (rtol, atol) == (1.3e-6, 1e-5)


def test_unrelated_failures_have_no_tensors():
    try:
        raise AssertionError("plain")
    except AssertionError:
        assert glue.mismatched_tensors(sys.exc_info()[2]) is None


def _gpu_env(tmp_path, **extra):
    return {"TEST_UNDECLARED_OUTPUTS_DIR": str(tmp_path), "TORCH_TEST_GPU_COUNT": "2",
            "TEST_TARGET": "//t:gpu", **extra}


def test_gpu_utilisation_is_sampled_and_recorded_per_gpu(tmp_path):
    import json
    import time

    calls = []

    def factory(environ):
        calls.append(environ["TEST_TARGET"])
        return lambda: [0.2, 0.6]

    plugin = glue.GpuUtilisationPlugin(_gpu_env(tmp_path), factory, interval_s=0.01)
    plugin.pytest_sessionstart(None)
    time.sleep(0.1)
    plugin.pytest_sessionfinish(None)
    data = json.loads((tmp_path / glue.GPU_UTIL_FILE).read_text())
    assert calls == ["//t:gpu"] and data["samples"] >= 2
    assert data["mean_util"] == [0.2, 0.6] and data["max_util"] == [0.2, 0.6] and data["target"] == "//t:gpu"


def test_gpu_utilisation_not_sampled_for_cpu_tests_or_without_nvml(tmp_path, monkeypatch):
    def never(environ):
        raise AssertionError("a CPU test must not touch NVML")

    cpu = glue.GpuUtilisationPlugin({"TEST_UNDECLARED_OUTPUTS_DIR": str(tmp_path)}, never, interval_s=0.01)
    cpu.pytest_sessionstart(None)
    cpu.pytest_sessionfinish(None)
    monkeypatch.setitem(sys.modules, "pynvml", None)  # nvidia-ml-py not installed: import fails
    assert glue.nvml_sampler({}) is None
    gpu = glue.GpuUtilisationPlugin(_gpu_env(tmp_path), glue.nvml_sampler, interval_s=0.01)
    gpu.pytest_sessionstart(None)
    gpu.pytest_sessionfinish(None)
    assert list(tmp_path.iterdir()) == []


def test_gpu_utilisation_sampler_failure_never_fails_the_test(tmp_path):
    import json

    values = iter([[0.5], [0.7]])

    def sampler():
        return next(values)  # StopIteration on the third sample: the driver went away

    plugin = glue.GpuUtilisationPlugin(_gpu_env(tmp_path, TEST_TOTAL_SHARDS="2", TEST_SHARD_INDEX="1"),
                                       lambda env: sampler, interval_s=0.001)
    plugin.pytest_sessionstart(None)
    plugin._thread.join(5)
    plugin.pytest_sessionfinish(None)
    data = json.loads((tmp_path / "torch-gpu-util.shard1.json").read_text())
    assert data["mean_util"] == [0.6] and data["max_util"] == [0.7] and data["samples"] == 2
