"""Implementation of torch_py_test (public entry point: //rules:defs.bzl)."""

load("@rules_python//python:defs.bzl", "py_test")
load("@torch_classification//:classification.bzl", "CLASSIFIED_FILES", "DEFAULT_PERF_BASELINES", "DEFAULT_PYTEST_CONFIG")
load(":contract.bzl", "ENV_GPU_COUNT", "ENV_NUM_THREADS", "ENV_PART", "ENV_PERF_BASELINES", "ENV_ROUTING", "ENV_VRAM_GB")
load(":tags.bzl", "cpu_threads", "parse_tags", "part_tags", "route", "test_files")

_RUNNER = Label("//rules/private:pytest_runner.py")
_GLUE = Label("//rules/private:pytest_torch_glue.py")
_CONTRACT = Label("//tools/contract:runtime.py")  # the runner loads it by path (test keys, variable names)
_RUNTIME = Label("//rules:torch_runtime")

def _workspace_path(src):
    if src.startswith("//") or src.startswith("@"):
        fail("torch_py_test: srcs must be files of this package, got %r" % src)
    src = src.lstrip(":")
    package = native.package_name()
    return package + "/" + src if package else src

def _config_path(file):
    label = native.package_relative_label(file)
    if label.workspace_name:
        fail("torch_py_test: %s must be a file of this repository" % label)
    return label.package + "/" + label.name if label.package else label.name

def _escape_make(value):
    # Bazel expands $(...) and $$ in `env` values.
    return value.replace("$", "$$")

def torch_py_test(
        name,
        srcs,
        deps = [],
        data = [],
        args = [],
        env = {},
        tags = [],
        device = None,
        gpu_count = None,
        vram_gb = None,
        cuda_min = None,
        gpu_model = None,
        gpu_interconnect = None,
        pytest_config = "default",
        perf_baselines = "default",
        classification = None,
        size = None,
        **kwargs):
    """A pytest test routed to CPU or GPU runners by the torch test classification.

    Each test file in `srcs` is looked up in the classification file (docs/classification.md) by
    its workspace-relative path. All-CPU files give one target tagged `requires-torch-cpu`; GPU
    files one tagged `requires-gpu` with `gpu-count:N`, `gpu-vram-gb:N` and `resources:gpu:N`
    (docs/tags.md). Files with both kinds of tests give two targets, `<name>_cpu` and
    `<name>_gpu`, selected per pytest node id, and a `test_suite` named `<name>` holding both.
    Unclassified files are treated as GPU and tagged `torch-unclassified`.

    The test runs pytest (rootdir = the workspace root, so node ids match plain `pytest`), with
    pytest-torch loaded as a plugin, JUnit XML into Bazel's test.xml, and Bazel sharding honoured.

    Args:
      name: target name.
      srcs: test files (`test_*.py`, `*_test.py`) and helper modules of this package.
      deps: py_library deps (e.g. the `conftest` library of a parent package).
      data: runtime data files; `conftest.py` of this package is added automatically.
      args: extra pytest arguments (e.g. `["-m", "not slow"]`).
      env: extra environment variables.
      tags: extra tags, added to the computed ones. `cpu:N` sets the test's thread count too.
      device: "cpu" or "gpu" to override the classification file for all of `srcs`.
      gpu_count: override of the GPUs the test needs.
      vram_gb: override of the GiB of memory per GPU the test needs.
      cuda_min: minimum CUDA version, e.g. "12.4" (tag `cuda-min:12.4`).
      gpu_model: required GPU model, e.g. "h100" (tag `gpu-model:h100`).
      gpu_interconnect: required interconnect for multi-GPU tests, e.g. "nvlink".
      pytest_config: the pytest configuration file (a label of this repository), or None for
        none. "default": the root module's `classification.defaults(pytest_config = ...)`
        (rules/extensions.bzl), none without one.
      perf_baselines: pytest-torch's performance baselines file (read-only under Bazel; recorded
        by `bazel run //tools:update_perf_baselines`), or None. "default": the root module's
        `classification.defaults(perf_baselines = ...)`, none without one.
      classification: a dict in the classification file's `files` format, replacing the
        generated one (for tests of the rules and unusual setups).
      size: Bazel test size; defaults to "small" for CPU targets and "medium" for GPU targets.
      **kwargs: passed to py_test (shard_count, timeout, flaky, ...).
    """
    if device != None and device not in ["cpu", "gpu"]:
        fail("torch_py_test %s: device must be \"cpu\" or \"gpu\", got %r" % (native.package_relative_label(name), device))
    paths = [_workspace_path(s) for s in srcs]
    tests = test_files(paths)
    if not tests:
        fail("torch_py_test %s: srcs has no test file (test_*.py or *_test.py): %s" % (name, srcs))
    parts = route(tests, CLASSIFIED_FILES if classification == None else classification, device)

    if pytest_config == "default":
        pytest_config = DEFAULT_PYTEST_CONFIG
    if perf_baselines == "default":
        perf_baselines = DEFAULT_PERF_BASELINES

    runner_args = []
    common_data = list(data) + native.glob(["conftest.py"], allow_empty = True)
    if pytest_config:
        common_data.append(pytest_config)
        runner_args.append("--runner-config=" + _config_path(pytest_config))
    if perf_baselines:
        common_data.append(perf_baselines)
        env = dict(env)
        env.setdefault(ENV_PERF_BASELINES, _config_path(perf_baselines))

    split = parts["cpu"] != None and parts["gpu"] != None
    targets = []
    for device_name in ["cpu", "gpu"]:
        part = parts[device_name]
        if part == None:
            continue
        target = name + "_" + device_name if split else name
        targets.append(":" + target)
        part_env = dict(env)
        if split and part["routing"]:
            part_env[ENV_ROUTING] = _escape_make(json.encode(part["routing"]))
            part_env[ENV_PART] = device_name
        all_tags = part_tags(device_name, part, gpu_count, vram_gb, cuda_min, gpu_model, gpu_interconnect) + list(tags)
        part_env.setdefault(ENV_NUM_THREADS, str(cpu_threads(all_tags)))
        parsed = parse_tags(all_tags)
        if parsed["error"]:
            fail("torch_py_test %s: %s" % (native.package_relative_label(target), parsed["error"]))
        if device_name == "gpu":
            part_env[ENV_GPU_COUNT] = str(parsed["values"]["gpu_count"])
            part_env[ENV_VRAM_GB] = str(parsed["values"]["vram_gb"])
        py_test(
            name = target,
            srcs = [_RUNNER, _GLUE, _CONTRACT] + srcs,
            main = _RUNNER,
            args = runner_args + part["paths"] + list(args),
            data = common_data,
            deps = [_RUNTIME] + list(deps),
            env = part_env,
            legacy_create_init = False,
            python_version = "PY3",
            size = size or ("small" if device_name == "cpu" else "medium"),
            tags = sorted({t: True for t in all_tags}.keys()),
            **kwargs
        )
    if split:
        native.test_suite(name = name, tests = targets, tags = ["manual"] if "manual" in tags else [])
