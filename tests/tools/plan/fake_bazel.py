#!/usr/bin/env python3
"""Stand-in for `bazel test --config=gpu --local_resources=gpu=N -- LABELS` on a machine without GPUs.

Set as TORCH_PLAN_BAZEL for the live Slurm test: the rendered batch script, its directives and its
hand-off run unchanged; only Bazel and the test binaries are replaced. What it keeps of Bazel:
local admission against `--local_resources=gpu=N` (a test starts when its `resources:gpu:K` fits),
`exclusive` tests run alone after the others, every test runs under the real `//tools:gpu_run_under`
(`python -m tools.gpu_assign`) which picks its GPUs among the job's CUDA_VISIBLE_DEVICES, and each
target's test.xml/test.log land in `bazel-testlogs/PKG/NAME/`. Each test records where and when it
ran (JSON files in $TORCH_E2E_RECORDS) for the test's assertions.

Environment: TORCH_E2E_MANIFEST (the planner manifest: GPU count, VRAM, exclusive per label),
TORCH_E2E_RECORDS, TORCH_E2E_TEST_SECONDS (how long each test runs, default 1),
TORCH_E2E_HANG (a label that never finishes, for the killed-job case); the gpu_assign variables
(TORCH_GPU_ASSIGN_SMI_OUTPUT, TORCH_GPU_LOCK_DIR) pass through.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from xml.sax.saxutils import quoteattr

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO))

from tools.bazel_paths import testlogs_dir  # noqa: E402
from tools.gpu_manifest import schema  # noqa: E402


def record(kind: str, **fields: object) -> None:
    """One JSON file per event: concurrent tests never interleave writes."""
    directory = Path(os.environ["TORCH_E2E_RECORDS"])
    doc = {"kind": kind, "job_id": os.environ.get("SLURM_JOB_ID"), **fields}
    tmp = directory / f".{uuid.uuid4().hex}.tmp"
    tmp.write_text(json.dumps(doc), encoding="utf-8")
    tmp.rename(directory / f"{kind}__{uuid.uuid4().hex}.json")


def run_test(label: str) -> int:
    """The 'test binary': runs under gpu_assign, so CUDA_VISIBLE_DEVICES is the GPUs it was given."""
    start = time.time()
    cvd = os.environ.get("CUDA_VISIBLE_DEVICES", "")
    record("test-start", label=label, cvd=cvd, start=start)
    seconds = float(os.environ.get("TORCH_E2E_TEST_SECONDS", "1"))
    if label == os.environ.get("TORCH_E2E_HANG"):
        seconds = 600.0
    time.sleep(seconds)
    end = time.time()
    record("test", label=label, cvd=cvd, start=start, end=end,
           fraction=os.environ.get("TORCH_GPU_MEMORY_FRACTION"))
    out = testlogs_dir(Path("bazel-testlogs"), label)
    out.mkdir(parents=True, exist_ok=True)
    name = label.rsplit(":", 1)[-1]
    pkg = label.split("//", 1)[1].split(":", 1)[0].replace("/", ".")
    (out / "test.xml").write_text(
        f'<?xml version="1.0" encoding="UTF-8"?>\n<testsuites>\n'
        f'<testsuite name={quoteattr(label)} tests="1" failures="0" errors="0" time="{end - start:.3f}">\n'
        f'<testcase classname={quoteattr(f"{pkg}.{name}")} name="test_on_gpu" time="{end - start:.3f}"/>\n'
        f'</testsuite>\n</testsuites>\n', encoding="utf-8")
    (out / "test.log").write_text(f"exec ${{PAGER:-/usr/bin/less}} \"$0\" || exit 1\n"
                                  f"Executing tests from {label}\nCUDA_VISIBLE_DEVICES={cvd}\nPASSED\n",
                                  encoding="utf-8")
    return 0


def parse(argv: Sequence[str]) -> tuple[int, list[str]]:
    if not argv or argv[0] != "test" or "--" not in argv:
        raise SystemExit(f"fake_bazel: expected `test [FLAGS] -- LABELS`, got {list(argv)}")
    split = list(argv).index("--")
    flags, labels = argv[1:split], list(argv[split + 1:])
    gpus = [f for f in flags if f.startswith("--local_resources=gpu=")]
    if "--config=gpu" not in flags or len(gpus) != 1:
        raise SystemExit(f"fake_bazel: expected --config=gpu and one --local_resources=gpu=N, got {flags}")
    return int(gpus[0].split("=")[-1]), labels


def bazel_test(capacity: int, labels: Sequence[str], env: Mapping[str, str]) -> int:
    tests = {t.label: t for t in schema.read(Path(env["TORCH_E2E_MANIFEST"])).tests}
    unknown = [label for label in labels if label not in tests]
    if unknown:
        print(f"fake_bazel: no such targets: {unknown}", file=sys.stderr)
        return 1
    record("job-start", cvd=env.get("CUDA_VISIBLE_DEVICES"), job_gpus=env.get("SLURM_JOB_GPUS"),
           start=time.time(), labels=list(labels), capacity=capacity)
    base = dict(env, PYTHONPATH=str(REPO))
    # Bazel runs `exclusive` tests after all others, one at a time; the rest as resources allow.
    queue = [lb for lb in labels if not tests[lb].exclusive] + [lb for lb in labels if tests[lb].exclusive]
    running: dict[str, subprocess.Popen[bytes]] = {}
    failed = 0
    while queue or running:
        for label, proc in list(running.items()):
            if proc.poll() is not None:
                failed += proc.returncode != 0
                del running[label]
        free = capacity - sum(tests[lb].gpu_count for lb in running)
        while queue:
            test = tests[queue[0]]
            if (test.exclusive and running) or any(tests[lb].exclusive for lb in running) or test.gpu_count > free:
                break
            label = queue.pop(0)
            child = dict(base, TEST_TARGET=label, TORCH_TEST_GPU_COUNT=str(test.gpu_count),
                         TORCH_TEST_VRAM_GB=f"{test.vram_gb:g}")
            running[label] = subprocess.Popen(
                [sys.executable, "-m", "tools.gpu_assign", "--", sys.executable, __file__, "--run-test", label],
                env=child, cwd=os.getcwd())
            free -= test.gpu_count
        time.sleep(0.05)
    record("job-end", end=time.time())
    return 3 if failed else 0


def main(argv: Sequence[str]) -> int:
    if len(argv) == 2 and argv[0] == "--run-test":
        return run_test(argv[1])
    capacity, labels = parse(argv)
    return bazel_test(capacity, labels, os.environ)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
