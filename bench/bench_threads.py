"""Concurrent CPU torch tests with and without the runner's thread setting, side by side.

Bazel runs several test processes at once. Left alone, torch starts one OpenMP thread per core in
each of them, so N concurrent tests oversubscribe the machine N times. torch_py_test's runner sets
the thread count to the CPUs Bazel reserved for the test (`cpu:N` tag, default 1). This runs the
4 shards of //examples/harness:test_matmul_load with as many tests at once as there are cores, once
with the runner's setting and once with OMP_NUM_THREADS=<cores> (what each process does by itself).

Prints figures; asserts nothing. `python3 bench/bench_threads.py [--repeats 3]`.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = "//examples/harness:test_matmul_load"


def bazel() -> str:
    return shutil.which("bazel") or str(ROOT / "third_party" / "bazel_offline" / "bin" / "bazel")


def wall(extra: list[str]) -> float:
    cores = os.cpu_count() or 1
    command = [bazel(), "test", TARGET, "--nocache_test_results", f"--local_test_jobs={cores}", *extra]
    start = time.perf_counter()
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"bazel test failed:\n{result.stderr[-3000:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    wall([])  # build and warm the bytecode caches
    ours, unset = [], []
    for _ in range(args.repeats):  # interleaved, so drift hits both alike
        ours.append(wall([]))
        unset.append(wall([f"--test_env=OMP_NUM_THREADS={cores}"]))
    a, b = statistics.median(ours), statistics.median(unset)
    print(f"4 shards, {cores} at a time, {cores} cores, median of {args.repeats}:")
    print(f"  runner's setting (1 thread per test) {a:6.2f} s")
    print(f"  one thread per core in every test    {b:6.2f} s   ({b / a:4.2f}x the wall time)")


if __name__ == "__main__":
    main()
