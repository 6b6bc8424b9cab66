"""Entry point of every torch_py_test: runs pytest under Bazel's test protocol.

Why a runner of our own rather than `pytest.main(sys.argv)`: Bazel runs the test from a runfiles
tree, in a sandbox, possibly sharded, and collects results from fixed places. This module makes
pytest behave there as it does at the workspace root:

* rootdir and working directory are the workspace root inside the runfiles, so node ids are the
  same ids plain `pytest` prints (`tests/torch_cpu/test_shapes.py::test_x`);
* JUnit XML goes to `$XML_OUTPUT_FILE` (Bazel's test.xml, one <testcase> per test);
* `TEST_TOTAL_SHARDS`/`TEST_SHARD_INDEX` pick this shard's items, `TEST_SHARD_STATUS_FILE` says so;
* temporary files go under `$TEST_TMPDIR`. Bytecode writing stays on on purpose: the installed
  packages come without `.pyc` files, so the first test to import torch caches its bytecode in the
  package directories (atomically, as Python always does) and later tests import it ~1 s faster;
  `__pycache__` of workspace sources lands in the sandbox's runfiles tree and is discarded;
* for a file split between a CPU and a GPU target, `TORCH_TEST_ROUTING`/`TORCH_TEST_PART` select
  the node ids of this part (exact ids, unlike pytest's prefix-matching `--deselect`);
* torch/OpenMP threads follow the CPUs Bazel reserved for the test (`cpu:N` tag, default 1),
  unless the user set `OMP_NUM_THREADS` themselves;
* pytest-torch gets Bazel-aware options (artifacts, baselines, threads): pytest_torch_glue.py.

Runner options come first and start with `--runner-`; everything else is passed to pytest.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable, Mapping
from typing import Any

try:
    from . import pytest_torch_glue as glue  # imported as rules.private.pytest_runner (unit tests)
except ImportError:  # run as the test's main script (Bazel's stub does not put its directory on sys.path)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import pytest_torch_glue as glue

THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
NO_TESTS_COLLECTED = 5


def test_key(nodeid: str) -> tuple[str, str]:
    """Split `path::Class::test[param]` into (`path`, `Class::test[param]`)."""
    path, _, key = nodeid.partition("::")
    return path, key


def route_label(labels: Mapping[str, str], key: str) -> str:
    """The label of one test key: exact id, else its function, else its class, else `unknown`."""
    if key in labels:
        return labels[key]
    base = key.split("[", 1)[0]
    if base in labels:
        return labels[base]
    parts = base.split("::")
    for end in range(len(parts) - 1, 0, -1):
        prefix = "::".join(parts[:end])
        if prefix in labels:
            return labels[prefix]
    return "unknown"


def in_part(routing: Mapping[str, Mapping[str, str]], part: str, nodeid: str) -> bool:
    """Whether a node id belongs to `part`: CPU parts run `cpu` tests, GPU parts everything else."""
    path, key = test_key(nodeid)
    if path not in routing:
        return True
    is_cpu = route_label(routing[path], key) == "cpu"
    return is_cpu if part == "cpu" else not is_cpu


def shard(items: list[Any], total: int, index: int) -> list[Any]:
    """Round-robin over collection order, so every shard gets a mix of slow and fast tests."""
    return [item for position, item in enumerate(items) if position % total == index]


class BazelPytestPlugin:
    """Selects this target's and this shard's items; remembers whether selection emptied the run."""

    def __init__(self, routing: Mapping[str, Mapping[str, str]], part: str | None, total_shards: int, shard_index: int):
        self.routing = routing
        self.part = part
        self.total_shards = total_shards
        self.shard_index = shard_index
        self.collected = 0
        self.selected = 0

    def pytest_collection_modifyitems(self, config: Any, items: list[Any]) -> None:
        self.collected = len(items)
        keep = items
        if self.part and self.routing:
            keep = [item for item in keep if in_part(self.routing, self.part, item.nodeid)]
        if self.total_shards > 1:
            keep = shard(keep, self.total_shards, self.shard_index)
        kept = {id(item) for item in keep}
        dropped = [item for item in items if id(item) not in kept]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = keep
        self.selected = len(items)


def runner_options(argv: Iterable[str]) -> tuple[dict[str, str], list[str]]:
    """Split leading `--runner-NAME=VALUE` options from the pytest arguments."""
    options: dict[str, str] = {}
    rest = list(argv)
    while rest and rest[0].startswith("--runner-"):
        name, _, value = rest.pop(0)[len("--runner-"):].partition("=")
        options[name] = value
    return options, rest


def thread_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """Thread variables to set: the reserved CPU count, unless the user chose one already."""
    if any(variable in environ for variable in THREAD_VARIABLES):
        return {}
    threads = environ.get("TORCH_TEST_NUM_THREADS", "1")
    return {variable: threads for variable in THREAD_VARIABLES}


def pytest_arguments(options: Mapping[str, str], environ: Mapping[str, str], root: str) -> list[str]:
    """pytest arguments for Bazel's test environment (see the module docstring)."""
    args = ["--rootdir", root, "-p", "no:cacheprovider"]
    if "config" in options:
        args += ["-c", os.path.join(root, options["config"])]
    if environ.get("XML_OUTPUT_FILE"):
        args += ["--junitxml", environ["XML_OUTPUT_FILE"]]
        if environ.get("TEST_TARGET"):
            args += ["-o", f"junit_suite_name={environ['TEST_TARGET']}"]
    if environ.get("TEST_TMPDIR"):
        args += ["--basetemp", os.path.join(environ["TEST_TMPDIR"], "pytest")]
    if environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        args += ["-p", "pytest_torch.plugin"]
    return args


def exit_code(code: int, plugin: BazelPytestPlugin) -> int:
    """An empty shard is fine; a target that selected nothing at all is an error worth failing."""
    if code == NO_TESTS_COLLECTED and plugin.total_shards > 1 and plugin.collected > 0:
        return 0
    if code == NO_TESTS_COLLECTED:
        what = f"its '{plugin.part}' part" if plugin.part else "it"
        print(
            f"torch_py_test: no test selected for {what} ({plugin.collected} collected). Either the "
            "classification file is stale (run `bazel run //tools:classify -- --update`) or this machine lacks "
            "the device the tests are parametrized for (a GPU part run without CUDA).",
            file=sys.stderr,
        )
    return code


def workspace_root(environ: Mapping[str, str]) -> str:
    """The main repository's directory inside the runfiles (`bazel test` and `bazel run`)."""
    runfiles = environ.get("TEST_SRCDIR") or environ.get("RUNFILES_DIR")
    if not runfiles:
        runfiles = os.path.abspath(sys.argv[0]) + ".runfiles"
    return os.path.join(runfiles, environ.get("TEST_WORKSPACE", "_main"))


def main(argv: list[str]) -> int:
    environ = os.environ
    options, pytest_args = runner_options(argv)
    root = workspace_root(environ)
    os.chdir(root)
    user_set_threads = any(variable in environ for variable in THREAD_VARIABLES)
    environ.update(thread_environment(environ))
    if environ.get("TEST_SHARD_STATUS_FILE"):
        open(environ["TEST_SHARD_STATUS_FILE"], "a").close()

    routing = json.loads(environ.get("TORCH_TEST_ROUTING", "{}"))
    plugin = BazelPytestPlugin(
        routing=routing,
        part=environ.get("TORCH_TEST_PART"),
        total_shards=int(environ.get("TEST_TOTAL_SHARDS", "1")),
        shard_index=int(environ.get("TEST_SHARD_INDEX", "0")),
    )
    import pytest  # only now: the thread variables must be set before any plugin imports torch

    args = pytest_arguments(options, environ, root) + glue.pytest_torch_args(environ, root, user_set_threads)
    code = pytest.main(args + pytest_args, plugins=[plugin, *glue.plugins(environ)])
    return exit_code(int(code), plugin)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
