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
  the node ids of this part (exact ids, unlike pytest's prefix-matching `--deselect`); an id that names
  another case where no GPU is seen (`device0` over `[cuda:0, cpu]` or `[cpu]`) goes by what this
  process sees, as the test's own parametrization did;
* torch/OpenMP threads follow the CPUs Bazel reserved for the test (`cpu:N` tag, default 1),
  unless the user set `OMP_NUM_THREADS` themselves;
* pytest-torch gets Bazel-aware options (artifacts, baselines, threads, seed): pytest_torch_glue.py;
* the rest of Bazel's test protocol (docs/test-protocol.md): `--test_filter` (TESTBRIDGE_TEST_ONLY:
  node ids when it contains `::` or `/` or ends in `.py`, else a pytest `-k` expression; intersected
  with the part's selection; selecting nothing fails), `--test_runner_fail_fast` (pytest `-x`),
  TEST_PREMATURE_EXIT_FILE (exists while pytest runs), TEST_WARNINGS_OUTPUT_FILE (pytest's warnings),
  `--runs_per_test` (TEST_RANDOM_SEED, see the glue) and `bazel coverage` (coverage.py -> lcov in
  `$COVERAGE_DIR`, merged by Bazel).

Runner options come first and start with `--runner-`; everything else is passed to pytest.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import sys
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pytest

try:
    from . import pytest_torch_glue as glue  # imported as rules.private.pytest_runner (unit tests)
except ImportError:  # run as the test's main script (Bazel's stub does not put its directory on sys.path)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import pytest_torch_glue as glue


def _load_contract_runtime() -> Any:
    """tools/contract/runtime.py (test keys, variable names), loaded by path from this repository's
    runfiles: an `import tools...` could find the tested repository's own `tools` package instead."""
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.normpath(os.path.join(here, "..", "..", "tools", "contract", "runtime.py"))
    spec = importlib.util.spec_from_file_location("rules_torch_test_contract_runtime", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load the pipeline's contract from {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


contract = _load_contract_runtime()

THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
NO_TESTS_COLLECTED = 5


def cuda_visible() -> bool:
    """Whether this test process sees a CUDA device: the question a parametrization over
    `torch.cuda.is_available()` asked when pytest collected it, in the same process."""
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def in_part(routing: Mapping[str, Mapping[str, str]], part: str, nodeid: str,
            gpus: Callable[[], bool] = cuda_visible) -> bool:
    """Whether a node id belongs to `part`: CPU parts run `cpu` tests, GPU parts everything else. A key whose
    id names another case where no GPU is seen (`device0` over `[cuda:0, cpu]` or `[cpu]`) is decided by
    `gpus()`, asked only then."""
    path, key = contract.split_nodeid(nodeid)
    if path not in routing:
        return True
    is_cpu = contract.machine_label(contract.route_label(routing[path], key), gpus) == "cpu"
    return is_cpu if part == "cpu" else not is_cpu


def shard(items: list[Any], total: int, index: int) -> list[Any]:
    """Round-robin over collection order, so every shard gets a mix of slow and fast tests."""
    return [item for position, item in enumerate(items) if position % total == index]


@dataclass(frozen=True)
class TestFilter:
    """Bazel's `--test_filter`: exact node ids (and their prefixes) or a pytest `-k` expression."""

    __test__ = False  # not a pytest test class

    value: str
    node_ids: tuple[str, ...]  # empty: `value` is a -k expression

    def describe(self) -> str:
        what = "node ids" if self.node_ids else "-k expression"
        return f"--test_filter={self.value!r} ({what})"


def test_filter(value: str | None) -> TestFilter | None:
    """Parse TESTBRIDGE_TEST_ONLY: `::`, `/` or a `.py` suffix makes comma-separated node ids."""
    value = (value or "").strip()
    if not value:
        return None
    if "::" in value or "/" in value or value.endswith(".py"):
        ids = tuple(part.strip().rstrip("/") for part in value.split(",") if part.strip())
        return TestFilter(value, ids)
    return TestFilter(value, ())


def matches_node_id(nodeid: str, selector: str) -> bool:
    """A node id selects itself, its parametrizations, a class its methods, a file or directory its tests."""
    return nodeid == selector or nodeid.startswith((selector + "::", selector + "[", selector + "/"))


def selected_by_filter(nodeid: str, selection: TestFilter | None) -> bool:
    """Node-id filters are applied here; a -k expression by pytest itself (see pytest_arguments)."""
    if selection is None or not selection.node_ids:
        return True
    return any(matches_node_id(nodeid, selector) for selector in selection.node_ids)


class BazelPytestPlugin:
    """Selects this target's, the filter's and this shard's items, in that order.

    Runs after pytest's own `-k` deselection (trylast), so every selection is an intersection and
    shards partition what the filter kept. Remembers the counts for the exit code's message.
    """

    def __init__(
        self,
        routing: Mapping[str, Mapping[str, str]],
        part: str | None,
        total_shards: int,
        shard_index: int,
        selection: TestFilter | None = None,
        gpus: Callable[[], bool] = cuda_visible,
    ):
        self.routing = routing
        self.gpus = functools.cache(gpus)
        self.part = part
        self.total_shards = total_shards
        self.shard_index = shard_index
        self.selection = selection
        self.collected = 0
        self.matched = 0  # after the part's and the filter's selection, before sharding
        self.selected = 0

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, items: list[Any]) -> None:
        self.collected = len(items)

    # pytest registers only methods named pytest_*; specname makes this a second implementation.
    @pytest.hookimpl(trylast=True, specname="pytest_collection_modifyitems")
    def pytest_collection_modifyitems_select(self, config: Any, items: list[Any]) -> None:
        keep = items
        if self.part and self.routing:
            keep = [item for item in keep if in_part(self.routing, self.part, item.nodeid, self.gpus)]
        keep = [item for item in keep if selected_by_filter(item.nodeid, self.selection)]
        self.matched = len(keep)
        if self.total_shards > 1:
            keep = shard(keep, self.total_shards, self.shard_index)
        kept = {id(item) for item in keep}
        dropped = [item for item in items if id(item) not in kept]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = keep
        self.selected = len(items)


def warning_lines(records: Sequence[tuple[str, str, int, str, str]], root: str) -> list[str]:
    """`nodeid: file:line: Category: message` per distinct warning, `(N times)` when repeated."""
    counts: dict[str, int] = {}
    for nodeid, filename, lineno, category, message in records:
        if filename.startswith(root + os.sep):
            filename = filename[len(root) + 1:]
        line = f"{nodeid or '<no test>'}: {filename}:{lineno}: {category}: {message}"
        counts[line] = counts.get(line, 0) + 1
    return [line if count == 1 else f"{line} ({count} times)" for line, count in counts.items()]


class WarningsFilePlugin:
    """Writes pytest's warnings (the "warnings summary") to Bazel's TEST_WARNINGS_OUTPUT_FILE."""

    def __init__(self, path: str, root: str):
        self.path = path
        self.root = root
        self.records: list[tuple[str, str, int, str, str]] = []

    def pytest_warning_recorded(self, warning_message: warnings.WarningMessage, nodeid: str) -> None:
        message = str(warning_message.message).replace("\n", " ")
        category = getattr(warning_message.category, "__name__", str(warning_message.category))
        self.records.append((nodeid, str(warning_message.filename), warning_message.lineno, category, message))

    def pytest_sessionfinish(self) -> None:
        if self.records:
            glue.write_text_atomic(self.path, "\n".join(warning_lines(self.records, self.root)) + "\n")


class SeedReportPlugin:
    """Puts the run's seed in the report header, so a failing run of `--runs_per_test` can be replayed."""

    def __init__(self, environ: Mapping[str, str]):
        self.environ = environ

    def pytest_report_header(self) -> str:
        return glue.seed_report(self.environ)


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
    threads = environ.get(contract.NUM_THREADS, "1")
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
    if environ.get("TESTBRIDGE_TEST_RUNNER_FAIL_FAST") == "1":
        args.append("--exitfirst")
    selection = test_filter(environ.get("TESTBRIDGE_TEST_ONLY"))
    if selection is not None and not selection.node_ids:
        args += ["-k", selection.value]
    return args


def exit_code(code: int, plugin: BazelPytestPlugin) -> int:
    """An empty shard is fine; a target (or filter) that selected nothing at all is an error."""
    if code == NO_TESTS_COLLECTED and plugin.total_shards > 1 and plugin.matched > 0:
        return 0
    if code != NO_TESTS_COLLECTED:
        return code
    what = f"its '{plugin.part}' part" if plugin.part else "this target"
    if plugin.selection is not None:
        print(
            f"torch_py_test: {plugin.selection.describe()} selected no test of {what} ({plugin.collected} "
            "collected). Node ids are workspace-relative, as plain pytest prints them "
            "(tests/pkg/test_file.py::test_name); anything without `::`, `/` or `.py` is a pytest -k expression.",
            file=sys.stderr,
        )
    else:
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


def instrumented_sources(manifest_text: str, root: str) -> dict[str, str]:
    """{realpath: workspace path} of the Python files in Bazel's COVERAGE_MANIFEST found under `root`.

    coverage.py measures and reports files by their real path (the runfiles are symlinks into the
    source tree); Bazel's merger keeps only files named as in the manifest, hence the mapping.
    """
    sources: dict[str, str] = {}
    for line in manifest_text.splitlines():
        path = line.strip()
        if path.endswith(".py") and os.path.isfile(os.path.join(root, path)):
            sources[os.path.realpath(os.path.join(root, path))] = path
    return sources


def unresolve_sources(lcov: str, sources: Mapping[str, str]) -> str:
    """Rename `SF:<realpath>` records to the manifest's workspace path."""
    lines = []
    for line in lcov.splitlines():
        if line.startswith("SF:") and line[3:] in sources:
            line = "SF:" + sources[line[3:]]
        lines.append(line)
    return "\n".join(lines) + "\n" if lines else ""


class CoverageSession:
    """`bazel coverage`: coverage.py around the pytest run, lcov into `$COVERAGE_DIR/pylcov.dat`.

    Only the instrumented files (`--instrumentation_filter`, COVERAGE_MANIFEST) are measured, with
    branch coverage, as Bazel's own Python coverage does. Bazel then merges every `*.dat` of the
    directory into the test's coverage.dat, and all tests into `--combined_report=lcov`.
    """

    def __init__(self, cov: Any, sources: Mapping[str, str], output: str, scratch: str):
        self.cov = cov
        self.sources = sources
        self.output = output
        self.scratch = scratch

    @classmethod
    def start(cls, environ: Mapping[str, str], root: str) -> CoverageSession | None:
        directory = environ.get("COVERAGE_DIR")
        if not directory:
            return None
        try:
            import coverage
        except ImportError as error:
            raise SystemExit(
                "torch_py_test: `bazel coverage` needs coverage.py in the test's Python environment: add "
                "`coverage` to the lock file behind //rules:torch_runtime (docs/test-protocol.md)"
            ) from error
        if coverage.Coverage.current() is not None:
            return None  # a py_runtime `coverage_tool` already runs this process under coverage.py
        manifest = environ.get("COVERAGE_MANIFEST", "")
        text = open(manifest, encoding="utf-8").read() if manifest and os.path.isfile(manifest) else ""
        sources = instrumented_sources(text, root)
        if not sources:
            print("torch_py_test: coverage: no Python file of this test is instrumented "
                  "(see --instrumentation_filter)", file=sys.stderr)
            return None
        scratch = environ.get("TEST_TMPDIR") or directory
        cov = coverage.Coverage(
            data_file=os.path.join(scratch, ".coverage.torch_py_test"),
            branch=True,
            include=sorted(sources),
            config_file=False,
        )
        cov.start()
        return cls(cov, sources, os.path.join(directory, "pylcov.dat"), scratch)

    def finish(self) -> None:
        from coverage.exceptions import NoDataError

        self.cov.stop()
        self.cov.save()
        raw = os.path.join(self.scratch, "pylcov.raw.dat")
        try:
            self.cov.lcov_report(outfile=raw)
        except NoDataError:
            return  # none of the instrumented files ran
        with open(raw, encoding="utf-8") as handle:
            glue.write_text_atomic(self.output, unresolve_sources(handle.read(), self.sources))
        os.unlink(raw)


def main(argv: list[str]) -> int:
    environ = os.environ
    premature_exit_file = environ.get("TEST_PREMATURE_EXIT_FILE")
    if premature_exit_file:
        # Exists while tests run: a test that ends the process (os._exit) leaves it behind.
        open(premature_exit_file, "a").close()
    options, pytest_args = runner_options(argv)
    root = workspace_root(environ)
    os.chdir(root)
    user_set_threads = any(variable in environ for variable in THREAD_VARIABLES)
    environ.update(thread_environment(environ))
    if environ.get("TEST_SHARD_STATUS_FILE"):
        open(environ["TEST_SHARD_STATUS_FILE"], "a").close()

    routing = json.loads(environ.get(contract.ROUTING, "{}"))
    plugin = BazelPytestPlugin(
        routing=routing,
        part=environ.get(contract.PART),
        total_shards=int(environ.get("TEST_TOTAL_SHARDS", "1")),
        shard_index=int(environ.get("TEST_SHARD_INDEX", "0")),
        selection=test_filter(environ.get("TESTBRIDGE_TEST_ONLY")),
    )
    plugins: list[Any] = [plugin, SeedReportPlugin(environ), *glue.plugins(environ)]
    if environ.get("TEST_WARNINGS_OUTPUT_FILE"):
        plugins.append(WarningsFilePlugin(environ["TEST_WARNINGS_OUTPUT_FILE"], root))

    # pytest.main loads plugins (pytest-torch imports torch): the thread variables are set by now.
    args = pytest_arguments(options, environ, root) + glue.pytest_torch_args(environ, root, user_set_threads)
    coverage = CoverageSession.start(environ, root)
    try:
        code = pytest.main(args + pytest_args, plugins=plugins)
    finally:
        if coverage is not None:
            coverage.finish()
    if premature_exit_file:
        os.unlink(premature_exit_file)
    return exit_code(int(code), plugin)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
