"""`bazel run //tools:update_perf_baselines -- //some:targets [--baselines FILE] [-- BAZEL_FLAGS...]`

Records pytest-torch performance baselines for the given test targets and merges them into the
workspace's baselines file (default `.torch-perf-baselines.json`). The tests run under `bazel
test` one at a time and unsharded (timings must not compete with each other), with
TORCH_TEST_UPDATE_PERF=1 so each writes into its own undeclared outputs; this tool then merges
them under a lock. Keys are pytest node ids relative to the workspace, the same under Bazel and
plain pytest, so the file serves both.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from tools.bazel_paths import testlogs_dir, workspace_root
from tools.perf_baselines.merge import BaselinesError, merge_into_file

RECORD_FILE = "torch-perf-baselines.json"
Runner = Callable[[Sequence[str], Path], subprocess.CompletedProcess[str]]


def run(argv: Sequence[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(argv), cwd=cwd, text=True, stdout=subprocess.PIPE)


def recorded_files(testlogs: Path, labels: Sequence[str]) -> list[Path]:
    files = []
    for label in labels:
        outputs = testlogs_dir(testlogs, label) / "test.outputs"
        files += sorted(outputs.glob(RECORD_FILE)) + sorted(outputs.glob("**/" + RECORD_FILE))
    return sorted(set(files))


def main(argv: Sequence[str] | None = None, runner: Runner = run) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    bazel_flags: list[str] = []
    if "--" in args_list:
        cut = args_list.index("--")
        args_list, bazel_flags = args_list[:cut], args_list[cut + 1 :]
    parser = argparse.ArgumentParser(prog="update_perf_baselines", description=__doc__.splitlines()[0])
    parser.add_argument("targets", nargs="+", help="test targets or patterns, e.g. //tests/perf/...")
    parser.add_argument("--baselines", default=".torch-perf-baselines.json", help="workspace-relative file")
    parser.add_argument("--bazel", default="bazel")
    args = parser.parse_args(args_list)
    workspace = workspace_root()

    query = runner([args.bazel, "query", f"tests({' + '.join(args.targets)})", "--output=label"], workspace)
    if query.returncode != 0:
        print(f"update_perf_baselines: bazel query failed for {' '.join(args.targets)}", file=sys.stderr)
        return 2
    labels = sorted(line for line in query.stdout.splitlines() if line.startswith(("//", "@")))
    if not labels:
        print("update_perf_baselines: no test targets match", file=sys.stderr)
        return 2
    test = runner(
        [args.bazel, "test", *labels, "--test_env=TORCH_TEST_UPDATE_PERF=1", "--nocache_test_results",
         "--test_sharding_strategy=disabled", "--local_test_jobs=1", *bazel_flags],
        workspace,
    )
    info = runner([args.bazel, "info", "bazel-testlogs"], workspace)
    testlogs = Path(info.stdout.strip()) if info.returncode == 0 else workspace / "bazel-testlogs"
    files = recorded_files(testlogs, labels)
    if not files:
        print("update_perf_baselines: no test recorded a baseline (do they use the perf_baseline fixture?)",
              file=sys.stderr)
        return 1
    try:
        result = merge_into_file(workspace / args.baselines, files)
    except BaselinesError as exc:
        print(f"update_perf_baselines: {exc}", file=sys.stderr)
        return 2
    print(f"update_perf_baselines: {args.baselines}: {result.added} new, {result.updated} updated, "
          f"{result.total} entries, from {len(files)} recording(s)")
    if test.returncode != 0:
        print("update_perf_baselines: some tests failed; their recordings (if any) were merged", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
