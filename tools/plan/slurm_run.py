"""Hand a rendered plan to Slurm: submit every job of `slurm/jobs.json`, wait, and report each test.

    python -m tools.plan.slurm_run OUT/slurm --results DIR [--timeout S] [--report FILE]

Jobs are submitted with `sbatch --parsable` from the current directory (the workspace the scripts
`cd` into); each job copies its targets' test.xml/test.log into DIR in bazel-testlogs' layout
(TORCH_PLAN_RESULTS). Then every test is reported as passed, failed, or not run with the reason
(the job's Slurm state: CANCELLED, TIMEOUT, NODE_FAIL, ...). Exit 0 when every job completed and
every test passed, 1 otherwise, 2 on bad input.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from tools.atomic_write import write_text_atomic
from tools.bazel_paths import in_workspace, workspace_root

# Job states after which Slurm runs nothing more for the job (squeue(1) "JOB STATE CODES").
TERMINAL = frozenset({"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY",
                      "PREEMPTED", "BOOT_FAIL", "DEADLINE", "SPECIAL_EXIT", "REVOKED"})
Runner = Callable[..., subprocess.CompletedProcess[str]]


class SlurmRunError(RuntimeError):
    """sbatch/scontrol failed or the jobs file is unusable; the message says which and why."""


@dataclass(frozen=True)
class PlannedJob:
    """One entry of slurm/jobs.json."""

    script: str
    labels: tuple[str, ...]
    log_dirs: tuple[str, ...]
    exclusive: bool


@dataclass(frozen=True)
class JobState:
    """What `scontrol show job` says about a job."""

    job_id: str
    state: str
    exit_code: str = ""
    reason: str = ""


@dataclass(frozen=True)
class TestOutcome:
    label: str
    job_id: str
    outcome: str  # passed | failed | not run
    detail: str = ""


def read_jobs(slurm_dir: Path) -> list[PlannedJob]:
    """slurm/jobs.json as written by `plan --render slurm`; errors name the file and entry."""
    path = slurm_dir / "jobs.json"
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        jobs = [PlannedJob(j["script"], tuple(j["labels"]), tuple(j["log_dirs"]), bool(j["exclusive"]))
                for j in doc["jobs"]]
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise SlurmRunError(f"{path}: not a jobs file written by `plan --render slurm`: {err!r}") from None
    for i, job in enumerate(jobs):
        if len(job.labels) != len(job.log_dirs) or not (slurm_dir / job.script).is_file():
            raise SlurmRunError(f"{path}: jobs[{i}]: script {job.script} missing or labels/log_dirs differ")
    return jobs


def submit(slurm_dir: Path, jobs: Sequence[PlannedJob], env: Mapping[str, str], cwd: Path | None = None,
           run: Runner = subprocess.run) -> list[str]:
    """sbatch every script (in the order given) from `cwd`, the jobs' workspace; returns the job ids."""
    ids = []
    for job in jobs:
        result = run(["sbatch", "--parsable", str(slurm_dir.resolve() / job.script)], env=dict(env), cwd=cwd,
                     capture_output=True, text=True, timeout=60, check=False)
        if result.returncode != 0:
            raise SlurmRunError(f"sbatch {job.script} failed (exit {result.returncode}): "
                                f"{result.stderr.strip()}; submitted so far: {ids}")
        ids.append(result.stdout.strip().split(";")[0])
    return ids


def parse_show_job(text: str) -> dict[str, JobState]:
    """`scontrol show job -o` output (one job per line, Key=Value fields) → state per job id."""
    states = {}
    for line in text.splitlines():
        fields = dict(word.split("=", 1) for word in line.split() if "=" in word)
        if "JobId" in fields:
            states[fields["JobId"]] = JobState(fields["JobId"], fields.get("JobState", "UNKNOWN"),
                                               fields.get("ExitCode", ""), fields.get("Reason", ""))
    return states


def job_states(env: Mapping[str, str], run: Runner = subprocess.run) -> dict[str, JobState]:
    result = run(["scontrol", "show", "job", "-o"], env=dict(env), capture_output=True, text=True,
                 timeout=60, check=False)
    if result.returncode != 0:
        raise SlurmRunError(f"scontrol show job failed (exit {result.returncode}): {result.stderr.strip()}")
    return parse_show_job(result.stdout)


def wait(ids: Sequence[str], env: Mapping[str, str], timeout_s: float, poll_s: float = 1.0,
         run: Runner = subprocess.run, clock: Callable[[], float] = time.monotonic,
         sleep: Callable[[float], None] = time.sleep) -> dict[str, JobState]:
    """Poll until every job is in a terminal state; raises SlurmRunError naming the laggards."""
    deadline = clock() + timeout_s
    while True:
        states = job_states(env, run)
        pending = [i for i in ids if i not in states or states[i].state not in TERMINAL]
        if not pending:
            return {i: states[i] for i in ids}
        if clock() >= deadline:
            shown = ", ".join(f"{i} ({states[i].state if i in states else 'unknown to scontrol'})" for i in pending)
            raise SlurmRunError(f"jobs still not finished after {timeout_s:g} s: {shown}")
        sleep(poll_s)


def junit_outcome(path: Path) -> tuple[str, str]:
    """passed/failed from one test.xml (any <failure> or <error> fails)."""
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError) as err:
        return "failed", f"unreadable test.xml: {err}"
    bad = [c.get("name", "?") for c in root.iter("testcase")
           if c.find("failure") is not None or c.find("error") is not None]
    return ("failed", "failed cases: " + ", ".join(bad)) if bad else ("passed", "")


def outcomes(jobs: Sequence[PlannedJob], ids: Sequence[str], states: Mapping[str, JobState],
             results: Path) -> list[TestOutcome]:
    """Every planned test's outcome: from its collected test.xml, else why it did not run."""
    found = []
    for job, job_id in zip(jobs, ids, strict=True):
        state = states.get(job_id)
        for label, log_dir in zip(job.labels, job.log_dirs, strict=True):
            xml = results / log_dir / "test.xml"
            if xml.is_file():
                outcome, detail = junit_outcome(xml)
            else:
                why = f"job {job_id} {state.state}" if state else f"job {job_id} state unknown"
                if state and state.reason not in ("", "None"):
                    why += f" ({state.reason})"
                outcome, detail = "not run", f"no test.xml; {why}"
            found.append(TestOutcome(label, job_id, outcome, detail))
    return found


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="slurm_run", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("slurm_dir", type=Path, help="the plan's slurm/ directory (jobs.json + *.sbatch)")
    parser.add_argument("--results", type=Path, required=True, help="where jobs collect test.xml/test.log")
    parser.add_argument("--timeout", type=float, default=24 * 3600, help="seconds to wait for all jobs")
    parser.add_argument("--poll", type=float, default=5.0)
    parser.add_argument("--report", type=Path, default=None, help="also write the outcomes as JSON")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None,
         run: Runner = subprocess.run) -> int:
    args = parse_args(argv)
    env = dict(os.environ if env is None else env)
    slurm_dir, results = in_workspace(args.slurm_dir, env), in_workspace(args.results, env)
    env["TORCH_PLAN_RESULTS"] = str(results)
    try:
        jobs = read_jobs(slurm_dir)
        ids = submit(slurm_dir, jobs, env, cwd=workspace_root(None, env), run=run)
        print(f"slurm_run: submitted {len(ids)} job(s): {' '.join(ids)}", file=sys.stderr)
        states = wait(ids, env, args.timeout, args.poll, run=run)
    except SlurmRunError as err:
        print(f"slurm_run: error: {err}", file=sys.stderr)
        return 2
    report = outcomes(jobs, ids, states, results)
    for item in report:
        print(f"{item.outcome:8s} {item.label} (job {item.job_id}){': ' + item.detail if item.detail else ''}")
    bad_jobs = [s for s in states.values() if s.state != "COMPLETED"]
    for state in bad_jobs:
        print(f"slurm_run: job {state.job_id} ended {state.state} (exit {state.exit_code}, reason {state.reason})",
              file=sys.stderr)
    if args.report:
        doc: dict[str, Any] = {"jobs": [asdict(states[i]) for i in ids], "tests": [asdict(o) for o in report]}
        write_text_atomic(in_workspace(args.report, env), json.dumps(doc, indent=2) + "\n")
    return 0 if not bad_jobs and all(o.outcome == "passed" for o in report) else 1


if __name__ == "__main__":
    sys.exit(main())
