"""Live Slurm end-to-end: the plan's Slurm rendering submitted to a real one-node Slurm 22.05 cluster.

The cluster (tests/tools/plan/slurm_cluster.py) has 8 GRES GPUs on placeholder devices; Slurm
allocates them and sets CUDA_VISIBLE_DEVICES. The rendered batch scripts run unchanged, with
TORCH_PLAN_BAZEL pointing at fake_bazel.py (no GPUs, no Bazel GPU build here), which runs every test
under the real gpu_run_under. Skips, saying why, where Slurm cannot start (not installed, not root).
About 30 s.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import time
from collections.abc import Iterator
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO))

from slurm_cluster import Cluster, ClusterUnavailable  # noqa: E402

from tools.feedback.results import read_results  # noqa: E402
from tools.gpu_manifest import __main__ as export_cli  # noqa: E402
from tools.gpu_manifest.history import history_seconds  # noqa: E402
from tools.plan import __main__ as plan_cli  # noqa: E402
from tools.plan import slurm_run  # noqa: E402

QUERY = REPO / "tests" / "tools" / "gpu_manifest" / "fixtures" / "query_gpu_examples.xml"
# One pool that the live node matches (features a100,nvlink,cuda12_4). test_amp_h100 asks for an
# H100: infeasible on this fleet, so it must never be submitted.
FLEET = """\
schema_version: 1
pools:
  - name: a100
    nodes: 2
    gpus_per_node: 8
    gpu_model: a100
    vram_gb: 80
    cuda: "12.4"
    interconnect: nvlink
"""
INFEASIBLE = "//examples/torch_gpu:test_amp_h100"
SMI = "".join(f"{i}, GPU-e2e-{i:04d}, NVIDIA A100-SXM4-80GB, 81920\n" for i in range(8))
TEST_SECONDS = 1.5


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    root = tmp_path_factory.mktemp("slurm")
    live = Cluster(root, gpus=8, features=("a100", "nvlink", "cuda12_4"))
    try:
        live.start()
    except ClusterUnavailable as err:
        pytest.skip(f"Slurm cannot start here: {err}")
    try:
        yield live
    finally:
        live.stop()
        # Torn down: no daemon of ours is left running.
        assert live.pids() == {}, f"Slurm daemons still running after stop: {live.pids()}"


def _plan(tmp: Path, handoff: str, policy: str) -> tuple[Path, dict[str, Any]]:
    manifest = tmp / "gpu_manifest.yaml"
    assert export_cli.main(["--query-output", str(QUERY), "--output", str(manifest)]) == 0
    (tmp / "fleet.yaml").write_text(FLEET)
    out = tmp / "plan"
    rc = plan_cli.main([str(manifest), "--fleet", str(tmp / "fleet.yaml"), "--out", str(out), "--policy", policy,
                        "--render", "slurm", "--handoff", handoff, "--sbatch-check", "no"])
    assert rc == plan_cli.EXIT_INFEASIBLE  # test_amp_h100
    return manifest, json.loads((out / "plan.json").read_text())


def _env(cluster: Cluster, tmp: Path, manifest: Path, **extra: str) -> dict[str, str]:
    (tmp / "records").mkdir()
    (tmp / "locks").mkdir()
    (tmp / "smi.csv").write_text(SMI)
    bazel = tmp / "bazel"  # the jobs run fake_bazel with this interpreter (and its packages), whatever PATH says
    bazel.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} {shlex.quote(str(HERE / "fake_bazel.py"))} "$@"\n')
    bazel.chmod(0o755)
    return dict(cluster.env, TORCH_PLAN_BAZEL=str(bazel),
                TORCH_PLAN_RESULTS=str(tmp / "results"), TORCH_E2E_MANIFEST=str(manifest),
                TORCH_E2E_RECORDS=str(tmp / "records"), TORCH_E2E_TEST_SECONDS=str(TEST_SECONDS),
                TORCH_GPU_ASSIGN_SMI_OUTPUT=str(tmp / "smi.csv"), TORCH_GPU_LOCK_DIR=str(tmp / "locks"),
                **extra)


def _records(tmp: Path, kind: str) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted((tmp / "records").glob(f"{kind}__*.json"))]


def _gpus(cvd: str) -> set[int]:
    return {int(x) for x in cvd.split(",") if x}


def _overlap(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return a["start"] < b["end"] and b["start"] < a["end"]


def _submit(tmp: Path, env: dict[str, str]) -> tuple[list[slurm_run.PlannedJob], list[str]]:
    slurm_dir = tmp / "plan" / "slurm"
    jobs = slurm_run.read_jobs(slurm_dir)
    ids = slurm_run.submit(slurm_dir, jobs, env, cwd=tmp)  # the submit dir is the jobs' workspace
    return jobs, ids


def _check_placement_rules(tmp: Path, jobs: list[slurm_run.PlannedJob], ids: list[str]) -> None:
    """CUDA_VISIBLE_DEVICES came from Slurm, never overlapped another job's, exclusive jobs ran alone."""
    starts = {r["job_id"]: r for r in _records(tmp, "job-start")}
    ends = {r["job_id"]: r for r in _records(tmp, "job-end")}
    intervals = {}
    for job, job_id in zip(jobs, ids, strict=True):
        if job_id not in ends:
            continue
        start = starts[job_id]
        # Slurm set both; the job got exactly the GPUs it asked for.
        assert start["cvd"] and _gpus(start["cvd"]) == _gpus(start["job_gpus"]), start
        assert len(_gpus(start["cvd"])) == start["capacity"]
        intervals[job_id] = {"start": start["start"], "end": ends[job_id]["end"], "gpus": _gpus(start["cvd"]),
                             "exclusive": job.exclusive}
    tests = _records(tmp, "test")
    for test in tests:  # each test's GPUs are among its job's (gpu_run_under chose inside Slurm's set)
        assert test["cvd"] and _gpus(test["cvd"]) <= intervals[test["job_id"]]["gpus"], test
    for (ida, a), (idb, b) in combinations(intervals.items(), 2):
        if _overlap(a, b):
            assert not (a["exclusive"] or b["exclusive"]), f"exclusive job ran next to another: {ida}, {idb}"
            assert not a["gpus"] & b["gpus"], f"jobs {ida} and {idb} overlapped on GPUs {a['gpus'] & b['gpus']}"
    for a, b in combinations(tests, 2):
        if a["job_id"] != b["job_id"] and _overlap(a, b):
            assert not _gpus(a["cvd"]) & _gpus(b["cvd"]), (a, b)


@pytest.mark.parametrize("handoff,policy", [("node", "packed"), ("test", "exclusive")])
def test_plan_runs_on_live_slurm(cluster: Cluster, tmp_path: Path, handoff: str, policy: str) -> None:
    manifest, plan = _plan(tmp_path, handoff, policy)
    planned = sorted(p["label"] for p in plan["placements"])
    assert [i["label"] for i in plan["infeasible"]] == [INFEASIBLE]
    env = _env(cluster, tmp_path, manifest)
    jobs, ids = _submit(tmp_path, env)
    scripts = "".join(p.read_text() for p in (tmp_path / "plan" / "slurm").glob("*.sbatch"))
    assert INFEASIBLE not in scripts  # infeasible tests are not submitted
    assert sorted(label for job in jobs for label in job.labels) == planned
    states = slurm_run.wait(ids, env, timeout_s=90, poll_s=0.5)
    assert {s.state for s in states.values()} == {"COMPLETED"}, states

    for job, job_id in zip(jobs, ids, strict=True):  # Slurm itself held whole-node jobs exclusively
        shown = subprocess.run(["scontrol", "show", "job", "-o", job_id], env=env, capture_output=True,
                               text=True, check=True, timeout=30).stdout
        assert ("OverSubscribe=NO" in shown) == job.exclusive, shown
    assert any(job.exclusive for job in jobs)
    ran = sorted(r["label"] for r in _records(tmp_path, "test"))
    assert ran == planned  # every planned test ran exactly once
    _check_placement_rules(tmp_path, jobs, ids)

    results = tmp_path / "results"
    outcomes = slurm_run.outcomes(jobs, ids, states, results)
    assert {o.label: o.outcome for o in outcomes} == dict.fromkeys(planned, "passed")
    # Collected in bazel-testlogs' layout: the duration history and //tools:converge's reader see them.
    for label in planned:
        seconds = history_seconds(results, label)
        assert seconds is not None and TEST_SECONDS <= seconds < TEST_SECONDS + 5, (label, seconds)
    read = read_results([results])
    assert sorted(run.target for run in read.runs) == planned
    assert {case.outcome for case in read.cases} == {"passed"}


def test_killed_job_is_reported(cluster: Cluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    hang = "//examples/torch_gpu:test_flaky_kernel"
    manifest, plan = _plan(tmp_path, "test", "exclusive")
    env = _env(cluster, tmp_path, manifest, TORCH_E2E_HANG=hang)
    jobs, ids = _submit(tmp_path, env)
    victim = ids[next(i for i, job in enumerate(jobs) if hang in job.labels)]
    deadline = time.monotonic() + 60
    while not any(r["label"] == hang for r in _records(tmp_path, "test-start")):
        assert time.monotonic() < deadline, "the hanging test never started"
        time.sleep(0.2)
    subprocess.run(["scancel", victim], env=env, check=True, timeout=30)
    states = slurm_run.wait(ids, env, timeout_s=90, poll_s=0.5)
    assert states[victim].state == "CANCELLED"
    assert {s.state for i, s in states.items() if i != victim} == {"COMPLETED"}
    outcomes = {o.label: o for o in slurm_run.outcomes(jobs, ids, states, tmp_path / "results")}
    assert outcomes[hang].outcome == "not run"
    assert f"job {victim} CANCELLED" in outcomes[hang].detail
    assert all(o.outcome == "passed" for label, o in outcomes.items() if label != hang)
    _check_placement_rules(tmp_path, jobs, ids)
