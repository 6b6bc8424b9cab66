"""Plan metrics: makespan, GPU-hours reserved vs requested, idle fraction and a lower bound.

`requested` is Σ gpu_count·t (what tests ask for if each owned its GPUs); `reserved` is what the
plan holds (whole nodes for exclusive multi-GPU tests, slot fractions for shared GPUs); the issue's
lower bound max(Σ gpus·t / total GPUs, max t) is reported as is, plus the same bound over reserved
GPUs, which is the one a plan that shares GPUs can be held to.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from tools.plan.fleet import Fleet
from tools.plan.scheduler import Plan


@dataclass(frozen=True)
class Metrics:
    tests_planned: int
    tests_infeasible: int
    total_gpus: int
    makespan_s: float
    lower_bound_s: float
    makespan_over_lower_bound: float | None
    reserved_lower_bound_s: float
    gpu_hours_requested: float
    gpu_hours_reserved: float
    gpu_hours_fleet: float
    idle_fraction: float
    waves: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def compute(plan: Plan, fleet: Fleet) -> Metrics:
    """Pure function of a plan and its fleet."""
    total = fleet.total_gpus
    placements = plan.placements
    makespan = max((p.end_s for p in placements), default=0.0)
    longest = max((p.end_s - p.start_s for p in placements), default=0.0)
    requested = sum(p.gpu_count * (p.end_s - p.start_s) for p in placements)
    reserved = sum(p.reserved_gpus * (p.end_s - p.start_s) for p in placements)
    bound = max(requested / total, longest) if total else 0.0
    reserved_bound = max(reserved / total, longest) if total else 0.0
    fleet_seconds = total * makespan
    return Metrics(
        tests_planned=len(placements),
        tests_infeasible=len(plan.infeasible),
        total_gpus=total,
        makespan_s=round(makespan, 3),
        lower_bound_s=round(bound, 3),
        makespan_over_lower_bound=round(makespan / bound, 4) if bound > 0 else None,
        reserved_lower_bound_s=round(reserved_bound, 3),
        gpu_hours_requested=round(requested / 3600, 4),
        gpu_hours_reserved=round(reserved / 3600, 4),
        gpu_hours_fleet=round(fleet_seconds / 3600, 4),
        idle_fraction=round(1 - reserved / fleet_seconds, 4) if fleet_seconds > 0 else 0.0,
        waves=1 + max((p.wave for p in placements), default=-1),
    )
