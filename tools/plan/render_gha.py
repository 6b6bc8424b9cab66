"""GitHub Actions rendering: a matrix with one job per planned node, running that node's tests.

One entry per node (not per test) because a matrix may expand to at most 256 jobs, and because Bazel
on the runner packs the node's tests onto its GPUs itself (`--config=gpu`). Bigger plans are split
into several matrices of at most 256 entries.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from tools.gpu_manifest.schema import ManifestTest, shell_join
from tools.plan.fleet import Fleet
from tools.plan.jobs import node_budget_s
from tools.plan.render_k8s import RenderError
from tools.plan.scheduler import Plan

MAX_MATRIX_JOBS = 256
MAX_TIMEOUT_MINUTES = 7200  # self-hosted runner job limit (5 days)
_KEY_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


def render(plan: Plan, tests: Mapping[str, ManifestTest], fleet: Fleet) -> list[dict[str, Any]]:
    """List of matrices ({"include": [...]}) of at most 256 entries each."""
    pools = {p.name: p for p in fleet.pools}
    by_node: dict[str, list[str]] = {}
    for placement in plan.placements:
        by_node.setdefault(placement.node, []).append(placement.label)
    entries = []
    for node, labels in by_node.items():
        mine = [p for p in plan.placements if p.node == node]
        pool = pools[mine[0].pool]
        minutes = math.ceil(node_budget_s(mine, tests, pool.gpus_per_node) / 60)
        entries.append({
            "node": node,
            "pool": pool.name,
            "runs_on": list(pool.gha_runs_on) or ["self-hosted", "linux", "gpu", pool.gpu_model],
            "gpus": pool.gpus_per_node,
            "tests": len(labels),
            "timeout_minutes": min(minutes, MAX_TIMEOUT_MINUTES),
            "targets": shell_join(labels),
            "command": shell_join(["bazel", "test", "--config=gpu", *labels]),
        })
    return [{"include": entries[i:i + MAX_MATRIX_JOBS]} for i in range(0, len(entries), MAX_MATRIX_JOBS)]


def validate(matrices: Sequence[Mapping[str, Any]]) -> None:
    """The constraints GitHub enforces on a `strategy.matrix` passed via fromJSON."""
    for m, matrix in enumerate(matrices):
        include = matrix.get("include")
        if set(matrix) != {"include"} or not isinstance(include, list) or not include:
            raise RenderError(f"matrix[{m}]: expected {{'include': [non-empty list]}}")
        if len(include) > MAX_MATRIX_JOBS:
            raise RenderError(f"matrix[{m}].include: {len(include)} jobs > GitHub's limit of {MAX_MATRIX_JOBS}")
        for i, entry in enumerate(include):
            where = f"matrix[{m}].include[{i}]"
            if not isinstance(entry, Mapping):
                raise RenderError(f"{where}: expected an object")
            for key, value in entry.items():
                if not _KEY_RE.match(key):
                    raise RenderError(f"{where}: key {key!r} is not a valid matrix variable name")
                ok = isinstance(value, (str, int, bool)) or (
                    isinstance(value, list) and all(isinstance(v, str) for v in value))
                if not ok:
                    raise RenderError(f"{where}.{key}: expected a scalar or list of strings, got {value!r}")
            minutes = entry.get("timeout_minutes")
            if not (isinstance(minutes, int) and 1 <= minutes <= MAX_TIMEOUT_MINUTES):
                raise RenderError(f"{where}.timeout_minutes: expected 1..{MAX_TIMEOUT_MINUTES}, got {minutes!r}")
        json.loads(json.dumps(matrix))  # must round-trip as JSON for fromJSON()
