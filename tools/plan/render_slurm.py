"""Slurm rendering: one sbatch script per planned node (or per test), plus checks of every `#SBATCH`
directive. What a job runs is in tools/plan/jobs.py.

Two checks: (1) a strict parser of the directives we emit, written against the sbatch(1) option
grammar (time formats, GRES and constraint syntax); (2) when Debian's `slurm-client` is installed,
Slurm's own `sbatch --test-only` under a throw-away slurm.conf: sbatch parses every directive and
only then fails to reach a controller, so "Unable to contact slurm controller" means "parsed fine".
"""

from __future__ import annotations

import math
import os
import re
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tools.gpu_manifest.schema import ManifestTest, shell_join
from tools.plan.fleet import Fleet, Pool
from tools.plan.jobs import EngineJob, engine_jobs
from tools.plan.render_k8s import RenderError
from tools.plan.scheduler import Plan


def slurm_time(seconds: int) -> str:
    """sbatch --time as days-hours:minutes:seconds (rounded up to whole minutes)."""
    minutes = max(1, math.ceil(seconds / 60))
    days, rest = divmod(minutes, 24 * 60)
    hours, mins = divmod(rest, 60)
    return f"{days}-{hours:02d}:{mins:02d}:00" if days else f"{hours:02d}:{mins:02d}:00"


def features(pool: Pool) -> tuple[str, ...]:
    """Node features the admin defines for the pool (slurm.conf Features=); defaults from the fleet."""
    if pool.slurm_features:
        return pool.slurm_features
    return (pool.gpu_model, pool.interconnect, "cuda" + pool.cuda.replace(".", "_"))


_BODY = """\
set -uo pipefail
cd "${TORCH_WORKSPACE:-${SLURM_SUBMIT_DIR:-.}}"
# TORCH_PLAN_BAZEL: the bazel to run (default `bazel`); TORCH_PLAN_RESULTS: where each target's
# test.xml/test.log are collected, in bazel-testlogs' layout (what //tools:converge and the
# manifest's duration history read).
bazel="${TORCH_PLAN_BAZEL:-bazel}"
results="${TORCH_PLAN_RESULTS:-$PWD/gpu_plan_results}"
testlogs="${TORCH_PLAN_TESTLOGS:-$PWD/bazel-testlogs}"
echo "torch-plan: job ${SLURM_JOB_ID:-?} on $(hostname): CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-unset}" >&2
# Slurm's allocation is what this job may use: Bazel admits the targets against it
# (resources:gpu:N tags) and //tools:gpu_run_under picks each test's GPUs among CUDA_VISIBLE_DEVICES.
"$bazel" %(args)s
rc=$?
for dir in %(dirs)s; do
  if [[ -d "$testlogs/$dir" ]]; then
    mkdir -p "$results/$dir" && cp -R "$testlogs/$dir/." "$results/$dir/"
  else
    echo "torch-plan: no test logs for $dir (not run)" >&2
  fi
done
exit "$rc"
"""


def render_script(job: EngineJob, pool: Pool) -> str:
    """One batch script: directives from the job's reservation, then Bazel over its targets."""
    lines = [
        "#!/bin/bash",
        f"#SBATCH --job-name={job.name}",
        "#SBATCH --nodes=1",
        "#SBATCH --ntasks=1",
        f"#SBATCH --gres=gpu:{job.gpus}",
        f"#SBATCH --constraint={'&'.join(features(pool))}",
        f"#SBATCH --time={slurm_time(job.time_limit_s)}",
        f"#SBATCH --output={job.name}-%j.out",
    ]
    if pool.slurm_partition:
        lines.append(f"#SBATCH --partition={pool.slurm_partition}")
    if job.whole_node:
        lines.append("#SBATCH --exclusive")
    lines.append(f"# planned: node {job.planned_node} at +{job.start_s:.0f}s, {len(job.labels)} test(s), "
                 f"{job.gpus} GPU(s), GPU share {job.gpu_share:g}")
    lines += [f"# bazel label: {label}" for label in job.labels]
    argv = job.bazel_argv()[1:]
    body = _BODY % {"args": shell_join(argv),
                    "dirs": shell_join(job.log_dirs())}
    return "\n".join(lines) + "\n" + body


def render(plan: Plan, tests: Mapping[str, ManifestTest], fleet: Fleet,
           handoff: str = "node") -> dict[str, str]:
    """file name → script text, in planned start order."""
    pools = {p.name: p for p in fleet.pools}
    return {f"{job.name}.sbatch": render_script(job, pools[job.pool])
            for job in engine_jobs(plan, tests, fleet, handoff)}


def jobs_document(plan: Plan, tests: Mapping[str, ManifestTest], fleet: Fleet,
                  handoff: str = "node") -> dict[str, Any]:
    """`slurm/jobs.json`: which script carries which tests, for `python -m tools.plan.slurm_run`."""
    return {"handoff": handoff, "jobs": [
        {"script": f"{job.name}.sbatch", "name": job.name, "planned_node": job.planned_node,
         "labels": list(job.labels), "log_dirs": job.log_dirs(), "gpus": job.gpus,
         "exclusive": job.whole_node}
        for job in engine_jobs(plan, tests, fleet, handoff)]}


def submit_script(names: Sequence[str]) -> str:
    body = "\n".join(f'sbatch "$here/{n}"' for n in names)
    return f'#!/bin/bash\nset -euo pipefail\nhere="$(cd "$(dirname "$0")" && pwd)"\n{body}\n'


# ---------------------------------------------------------------- strict directive parser

_TIME_RE = re.compile(
    r"^(?:\d+|\d+:\d{1,2}|\d+:\d{1,2}:\d{1,2}|\d+-\d+|\d+-\d+:\d{1,2}|\d+-\d+:\d{1,2}:\d{1,2}|UNLIMITED|INFINITE)$"
)
_GRES_ITEM = re.compile(r"^[A-Za-z][A-Za-z0-9_]*(?::[A-Za-z][A-Za-z0-9_.-]*)?(?::[1-9]\d*[KMGT]?)?$")
_FEATURE = r"[A-Za-z0-9_.\-]+(?:\*\d+)?"
_CONSTRAINT_RE = re.compile(rf"^\[?{_FEATURE}(?:[&|,]{_FEATURE})*\]?$")
_NAME_RE = re.compile(r"^[^\s]+$")
_NODES_RE = re.compile(r"^\d+(?:-\d+)?$")

_OPTIONS: dict[str, re.Pattern[str] | None] = {
    # option → value grammar (None = flag that takes no value)
    "job-name": _NAME_RE,
    "nodes": _NODES_RE,
    "ntasks": re.compile(r"^[1-9]\d*$"),
    "cpus-per-task": re.compile(r"^[1-9]\d*$"),
    "gres": None,  # checked by _check_gres
    "constraint": _CONSTRAINT_RE,
    "time": _TIME_RE,
    "output": _NAME_RE,
    "error": _NAME_RE,
    "partition": re.compile(r"^[A-Za-z0-9_.\-]+(?:,[A-Za-z0-9_.\-]+)*$"),
    "exclusive": None,
    "mem": re.compile(r"^\d+[KMGT]?$"),
    "account": _NAME_RE,
    "qos": _NAME_RE,
}
_FLAGS = {"exclusive"}


@dataclass(frozen=True)
class Directive:
    line: int
    option: str
    value: str | None


def _check_gres(value: str) -> bool:
    items = value.split(",")
    return all(_GRES_ITEM.match(item) and not item.endswith(":0") for item in items)


def parse_directives(text: str, source: str = "script") -> list[Directive]:
    """`#SBATCH` lines up to the first command (sbatch ignores later ones); strict on every value."""
    lines = text.splitlines()
    if not lines or not lines[0].startswith("#!"):
        raise RenderError(f"{source}: line 1: batch script must start with a #! interpreter line")
    found: list[Directive] = []
    for lineno, line in enumerate(lines[1:], start=2):
        stripped = line.strip()
        if not stripped or (stripped.startswith("#") and not stripped.startswith("#SBATCH")):
            continue
        if not stripped.startswith("#SBATCH"):
            break
        words = shlex.split(stripped[len("#SBATCH"):], comments=False)
        if len(words) != 1 or not words[0].startswith("--"):
            raise RenderError(f"{source}: line {lineno}: expected one --option[=value], got {stripped!r}")
        option, eq, value = words[0][2:].partition("=")
        if option not in _OPTIONS:
            raise RenderError(f"{source}: line {lineno}: unknown sbatch option --{option}")
        if option in _FLAGS:
            if eq and value not in ("user", "mcs", "topo"):
                raise RenderError(f"{source}: line {lineno}: --{option} takes no value here, got {value!r}")
            found.append(Directive(lineno, option, value or None))
            continue
        if not eq or not value:
            raise RenderError(f"{source}: line {lineno}: --{option} needs a value")
        pattern = _OPTIONS[option]
        ok = _check_gres(value) if option == "gres" else bool(pattern and pattern.match(value))
        if not ok:
            raise RenderError(f"{source}: line {lineno}: invalid --{option} value {value!r}")
        found.append(Directive(lineno, option, value))
    seen: dict[str, int] = {}
    for d in found:
        if d.option in seen:
            raise RenderError(f"{source}: line {d.line}: --{d.option} repeated (first on line {seen[d.option]})")
        seen[d.option] = d.line
    for required in ("job-name", "gres", "time"):
        if required not in seen:
            raise RenderError(f"{source}: missing #SBATCH --{required}")
    return found


# ---------------------------------------------------------------- Slurm's own sbatch

def stub_slurm_conf(fleet: Fleet) -> str:
    """A slurm.conf naming no reachable controller; enough for sbatch to parse options."""
    lines = ["ClusterName=plancheck", "SlurmctldHost=localhost", "MessageTimeout=1", "TCPTimeout=1",
             "GresTypes=gpu"]
    for pool in fleet.pools:
        lines.append(f"NodeName={pool.name}-[0-{pool.nodes - 1}] Gres=gpu:{pool.gpus_per_node} "
                     f"Features={','.join(features(pool))} State=UNKNOWN")
    nodes = ",".join(f"{p.name}-[0-{p.nodes - 1}]" for p in fleet.pools)
    lines.append(f"PartitionName=gpu Nodes={nodes} Default=YES")
    return "\n".join(lines) + "\n"


def sbatch_available() -> bool:
    return shutil.which("sbatch") is not None


def check_with_sbatch(scripts: Mapping[str, str], fleet: Fleet, timeout_s: float = 20) -> int:
    """Run `sbatch --test-only` on each script; raise RenderError on any parse error. Returns count."""
    sbatch = shutil.which("sbatch")
    if sbatch is None:
        raise RenderError("sbatch not found (Debian package slurm-client)")
    with tempfile.TemporaryDirectory(prefix="plan-sbatch-") as tmp:
        conf = Path(tmp) / "slurm.conf"
        conf.write_text(stub_slurm_conf(fleet), encoding="utf-8")
        env = dict(os.environ, SLURM_CONF=str(conf))
        for name, text in scripts.items():
            path = Path(tmp) / name
            path.write_text(text, encoding="utf-8")
            result = subprocess.run([sbatch, "--test-only", str(path)], env=env, capture_output=True,
                                    text=True, timeout=timeout_s, check=False, cwd=tmp)
            output = (result.stdout + result.stderr).strip()
            if result.returncode == 0 or "Unable to contact slurm controller" in output:
                continue
            raise RenderError(f"{name}: sbatch rejected the script: {output}")
    return len(scripts)
