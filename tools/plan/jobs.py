"""How a plan is handed to an engine: which engine jobs exist and what each runs.

Two forms, shared by the Slurm and Kubernetes renderings (and counted by bench/bench_handoff.py):

* `node` (default): one job per planned node. It holds the GPUs the plan uses on that node and runs
  one `bazel test` over the node's targets; Bazel admits the tests against those GPUs itself
  (`resources:gpu:N` tags + `--local_resources=gpu=N`) and `//tools:gpu_run_under` gives each test
  its GPUs among the job's (`CUDA_VISIBLE_DEVICES`). One Bazel start, analysis and cache fetch per node.
* `test`: one job per planned test, holding exactly the test's GPUs (the whole node for whole-node
  placements). One Bazel start per test; the engine does all the admission.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tools.bazel_paths import testlogs_dir
from tools.gpu_manifest.schema import ManifestTest
from tools.plan.fleet import Fleet
from tools.plan.scheduler import Placement, Plan

HANDOFFS = ("node", "test")
STARTUP_MARGIN_S = 600  # Bazel server start, fetch and build before the test's own timeout starts


@dataclass(frozen=True)
class EngineJob:
    """One engine job: which tests it runs, on which pool, holding how many GPUs."""

    name: str
    pool: str
    planned_node: str
    labels: tuple[str, ...]
    gpus: int
    whole_node: bool
    time_limit_s: int
    start_s: float
    gpu_share: float  # of each held GPU, for the per-test form (1.0 for node jobs)

    def bazel_argv(self, bazel: str = "bazel") -> list[str]:
        """The command the job runs: Bazel packs the targets onto the job's GPUs."""
        return [bazel, "test", "--config=gpu", f"--local_resources=gpu={self.gpus}", "--", *self.labels]

    def log_dirs(self) -> list[str]:
        """Each target's directory under bazel-testlogs (relative), where test.xml/test.log land."""
        return [testlogs_dir(Path(), label).as_posix() for label in self.labels]


def job_name(label: str, prefix: str = "gpu") -> str:
    """DNS-1123 label ≤ 63 chars (Kubernetes copies it into a pod label), unique by hash."""
    digest = hashlib.sha256(label.encode()).hexdigest()[:8]
    slug = re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-")[:46].strip("-")
    return f"{prefix}-{slug}-{digest}" if slug else f"{prefix}-{digest}"


def test_budget_s(test: ManifestTest) -> int:
    """Wall-clock budget of one test run: its Bazel timeout per shard plus Bazel's start-up."""
    return test.timeout_s * test.shard_count + STARTUP_MARGIN_S


def node_budget_s(placements: Sequence[Placement], tests: Mapping[str, ManifestTest], gpus: int) -> int:
    """Budget of a whole node's run on `gpus` GPUs: twice the planned span (estimates are estimates)
    plus the longest single timeout and the start-up margin. Bazel admits tests by whole GPUs
    (`resources:gpu:N`), so tests the plan lets share a GPU run one after another there: the span
    is at least Σ gpu_count·t / gpus."""
    span = max(p.end_s for p in placements) - min(p.start_s for p in placements)
    span = max(span, sum(p.gpu_count * (p.end_s - p.start_s) for p in placements) / max(gpus, 1))
    longest = max(tests[p.label].timeout_s * tests[p.label].shard_count for p in placements)
    return math.ceil(2 * span + longest + STARTUP_MARGIN_S)


def by_node(plan: Plan) -> dict[str, list[Placement]]:
    """Placements grouped by planned node, nodes in first-start order."""
    groups: dict[str, list[Placement]] = {}
    for placement in plan.placements:
        groups.setdefault(placement.node, []).append(placement)
    return groups


def engine_jobs(plan: Plan, tests: Mapping[str, ManifestTest], fleet: Fleet,
                handoff: str = "node") -> list[EngineJob]:
    """The jobs an engine gets for `plan` in the `handoff` form, in planned start order."""
    if handoff not in HANDOFFS:
        raise ValueError(f"handoff: expected one of {HANDOFFS}, got {handoff!r}")
    pools = {p.name: p for p in fleet.pools}
    if handoff == "test":
        return [EngineJob(
            name=job_name(p.label), pool=p.pool, planned_node=p.node, labels=(p.label,),
            gpus=len(p.gpus), whole_node=p.whole_node, time_limit_s=test_budget_s(tests[p.label]),
            start_s=p.start_s, gpu_share=p.slot_fraction,
        ) for p in plan.placements]
    jobs = []
    for node, placements in by_node(plan).items():
        pool = pools[placements[0].pool]
        used = {g for p in placements for g in p.gpus}
        # The job holds as many GPUs as the plan uses on the node; all of them = the whole node.
        whole = len(used) == pool.gpus_per_node or any(p.whole_node for p in placements)
        gpus = pool.gpus_per_node if whole else len(used)
        jobs.append(EngineJob(
            name=job_name(node, "gpu-node"), pool=pool.name, planned_node=node,
            labels=tuple(p.label for p in placements), gpus=gpus, whole_node=whole,
            time_limit_s=node_budget_s(placements, tests, gpus), start_s=min(p.start_s for p in placements),
            gpu_share=1.0,
        ))
    return jobs
