"""tools.plan.slurm_run without a cluster: scontrol parsing, waiting, per-test outcomes, bad input."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tools.plan import slurm_run

SHOW = ("JobId=7 JobName=a UserId=root(0) JobState=COMPLETED Reason=None ExitCode=0:0\n"
        "JobId=8 JobName=b JobState=CANCELLED Reason=None ExitCode=0:15\n"
        "JobId=9 JobName=c JobState=RUNNING Reason=None ExitCode=0:0\n")


def _runner(outputs: list[str]):
    calls = []

    def run(argv, **kw):
        calls.append(argv)
        text = outputs.pop(0) if argv[0] == "scontrol" else "42;cluster\n"
        return subprocess.CompletedProcess(argv, 0, text, "")
    return run, calls


def _jobs_dir(tmp_path: Path) -> Path:
    slurm = tmp_path / "slurm"
    slurm.mkdir()
    (slurm / "a.sbatch").write_text("#!/bin/bash\n")
    (slurm / "b.sbatch").write_text("#!/bin/bash\n")
    doc = {"handoff": "node", "jobs": [
        {"script": "a.sbatch", "labels": ["//p:a1", "//p:a2"], "log_dirs": ["p/a1", "p/a2"], "exclusive": False},
        {"script": "b.sbatch", "labels": ["//p:b"], "log_dirs": ["p/b"], "exclusive": True}]}
    (slurm / "jobs.json").write_text(json.dumps(doc))
    return slurm


def _xml(path: Path, failed: bool = False) -> None:
    path.mkdir(parents=True)
    case = '<testcase name="t"><failure message="x"/></testcase>' if failed else '<testcase name="t"/>'
    (path / "test.xml").write_text(f"<testsuites><testsuite name='s'>{case}</testsuite></testsuites>")


def test_parse_show_job() -> None:
    states = slurm_run.parse_show_job(SHOW)
    assert states["8"] == slurm_run.JobState("8", "CANCELLED", "0:15", "None")
    assert set(states) == {"7", "8", "9"}


def test_wait_polls_until_terminal_and_times_out_naming_jobs() -> None:
    run, calls = _runner([SHOW, SHOW.replace("RUNNING", "COMPLETED")])
    states = slurm_run.wait(["7", "9"], {}, timeout_s=10, run=run, sleep=lambda s: None)
    assert states["9"].state == "COMPLETED" and len(calls) == 2
    run, _ = _runner([SHOW] * 3)
    ticks = iter([0.0, 0.0, 5.0, 11.0])
    with pytest.raises(slurm_run.SlurmRunError, match=r"9 \(RUNNING\), 10 \(unknown to scontrol\)"):
        slurm_run.wait(["9", "10"], {}, timeout_s=10, run=run, clock=lambda: next(ticks), sleep=lambda s: None)


def test_outcomes_passed_failed_and_killed(tmp_path: Path) -> None:
    slurm = _jobs_dir(tmp_path)
    jobs = slurm_run.read_jobs(slurm)
    results = tmp_path / "results"
    _xml(results / "p" / "a1")
    _xml(results / "p" / "a2", failed=True)
    states = {"1": slurm_run.JobState("1", "FAILED"), "2": slurm_run.JobState("2", "CANCELLED", "0:15", "None")}
    found = {o.label: o for o in slurm_run.outcomes(jobs, ["1", "2"], states, results)}
    assert found["//p:a1"].outcome == "passed"
    assert found["//p:a2"].outcome == "failed" and "t" in found["//p:a2"].detail
    assert found["//p:b"].outcome == "not run" and found["//p:b"].detail == "no test.xml; job 2 CANCELLED"


def test_bad_jobs_file_is_named(tmp_path: Path) -> None:
    slurm = tmp_path / "slurm"
    slurm.mkdir()
    (slurm / "jobs.json").write_text('{"jobs": [{"script": "x.sbatch"}]}')
    with pytest.raises(slurm_run.SlurmRunError, match=r"jobs.json: not a jobs file"):
        slurm_run.read_jobs(slurm)
    (slurm / "jobs.json").write_text(json.dumps({"jobs": [
        {"script": "x.sbatch", "labels": ["//a:b"], "log_dirs": ["a/b"], "exclusive": False}]}))
    with pytest.raises(slurm_run.SlurmRunError, match=r"jobs\[0\]: script x.sbatch missing"):
        slurm_run.read_jobs(slurm)


def test_submit_reports_sbatch_errors(tmp_path: Path) -> None:
    jobs = slurm_run.read_jobs(_jobs_dir(tmp_path))
    run, calls = _runner([])
    assert slurm_run.submit(tmp_path / "slurm", jobs, {}, run=run) == ["42", "42"]
    assert calls[0][:2] == ["sbatch", "--parsable"]

    def refuse(argv, **kw):
        return subprocess.CompletedProcess(argv, 1, "", "sbatch: error: Invalid generic resource (gres) specification")
    with pytest.raises(slurm_run.SlurmRunError, match="sbatch a.sbatch failed .*Invalid generic resource"):
        slurm_run.submit(tmp_path / "slurm", jobs, {}, run=refuse)


def test_cli_reports_killed_job_and_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    slurm = _jobs_dir(tmp_path)
    _xml(tmp_path / "results" / "p" / "a1")
    _xml(tmp_path / "results" / "p" / "a2")
    ids = iter(["7", "8"])

    def run(argv, **kw):
        if argv[0] == "sbatch":
            assert kw["env"]["TORCH_PLAN_RESULTS"] == str(tmp_path / "results") and kw["cwd"] == tmp_path
            return subprocess.CompletedProcess(argv, 0, next(ids) + "\n", "")
        return subprocess.CompletedProcess(argv, 0, SHOW, "")

    env = {"BUILD_WORKSPACE_DIRECTORY": str(tmp_path)}
    rc = slurm_run.main(["slurm", "--results", "results", "--report", "report.json", "--poll", "0"], env, run)
    assert rc == 1
    out, err = capsys.readouterr()
    assert "passed   //p:a1 (job 7)" in out and "not run  //p:b (job 8): no test.xml; job 8 CANCELLED" in out
    assert "job 8 ended CANCELLED" in err
    report = json.loads((tmp_path / "report.json").read_text())
    assert [t["outcome"] for t in report["tests"]] == ["passed", "passed", "not run"]
    assert slurm.is_dir()
