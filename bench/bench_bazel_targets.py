"""What a torch test costs inside Bazel, measured side by side in one run.

(a) re-executing a torch test target (`--nocache_test_results`) against plain `pytest` of the
    same file on the host (goal: <= 1.5x);
(b) adding one more torch test target, build + first run, with torch_py_test (one runfiles entry
    per installed package) against a plain rules_python py_test that depends on
    `requirement("torch")` (one runfiles entry per file of every wheel) (goal: <= 3 s).

Prints figures; asserts nothing. Run from the workspace root: `python3 bench/bench_bazel_targets.py`.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GENERATED = ROOT / "bench" / "_generated"
TEST_FILE = "examples/torch_cpu/test_tensor_shapes.py"
TEST_TARGET = "//examples/torch_cpu:test_tensor_shapes"

NEW_TEST = '''import torch


def test_new_{n}():
    assert torch.ones({n} + 1).sum().item() == {n} + 1
'''

TORCH_PY_TEST_BUILD = '''load("//rules:defs.bzl", "torch_py_test")

torch_py_test(
    name = "test_new_{n}",
    srcs = ["test_new_{n}.py"],
    device = "cpu",
    pytest_config = None,
)
'''

PLAIN_BUILD = '''load("@pip_cpu//:requirements.bzl", "requirement")
load("@rules_python//python:defs.bzl", "py_test")

py_test(
    name = "test_new_{n}",
    srcs = ["test_new_{n}.py", "//rules/private:pytest_runner.py", "//rules/private:pytest_torch_glue.py"],
    main = "//rules/private:pytest_runner.py",
    args = ["bench/_generated/{kind}_{n}/test_new_{n}.py"],
    legacy_create_init = False,
    deps = [requirement("torch"), requirement("pytest"), requirement("pytest-torch"), requirement("numpy")],
)
'''


def bazel_command() -> list[str]:
    found = shutil.which("bazel")
    return [found] if found else [str(ROOT / "third_party" / "bazel_offline" / "bin" / "bazel")]


def timed(command: list[str], env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        sys.stderr.write(result.stdout[-3000:] + result.stderr[-3000:])
        raise SystemExit(f"command failed ({result.returncode}): {' '.join(command)}")
    return elapsed


def rerun_ratio(bazel: list[str], repeats: int) -> tuple[float, float]:
    timed(bazel + ["test", TEST_TARGET])  # warm: server, analysis, fetched repos
    bazel_times, pytest_times = [], []
    env = dict(os.environ, OMP_NUM_THREADS="1")
    for _ in range(repeats):
        bazel_times.append(timed(bazel + ["test", TEST_TARGET, "--nocache_test_results"]))
        pytest_times.append(timed([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", TEST_FILE], env))
    return statistics.median(bazel_times), statistics.median(pytest_times)


def new_target_cost(bazel: list[str], kind: str, template: str, repeats: int, offset: int) -> float:
    times = []
    for i in range(repeats):
        n = offset + i
        package = GENERATED / f"{kind}_{n}"
        package.mkdir(parents=True, exist_ok=True)
        (package / f"test_new_{n}.py").write_text(NEW_TEST.format(n=n))
        (package / "BUILD.bazel").write_text(template.format(n=n, kind=kind))
        times.append(timed(bazel + ["test", f"//bench/_generated/{kind}_{n}:test_new_{n}"]))
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    bazel = bazel_command()
    shutil.rmtree(GENERATED, ignore_errors=True)
    try:
        bazel_s, pytest_s = rerun_ratio(bazel, args.repeats)
        # Warm both layouts once (first use of the plain layout builds per-package state).
        new_target_cost(bazel, "warm_torch_py_test", TORCH_PY_TEST_BUILD, 1, 900)
        new_target_cost(bazel, "warm_plain", PLAIN_BUILD, 1, 950)
        ours = new_target_cost(bazel, "torch_py_test", TORCH_PY_TEST_BUILD, args.repeats, 0)
        plain = new_target_cost(bazel, "plain", PLAIN_BUILD, args.repeats, 100)
    finally:
        shutil.rmtree(GENERATED, ignore_errors=True)
    print(f"(a) re-executed torch target   bazel {bazel_s:6.2f} s   plain pytest {pytest_s:6.2f} s   "
          f"ratio {bazel_s / pytest_s:4.2f}x (goal <= 1.5x)")
    print(f"(b) one more torch test target torch_py_test {ours:6.2f} s   plain rules_python py_test {plain:6.2f} s   "
          f"({plain / ours:4.1f}x less; goal <= 3 s)")
    print(f"    median of {args.repeats} runs each, {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
