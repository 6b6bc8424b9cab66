"""List scheduling: longest tests first, each at the earliest start any feasible node offers.

Every GPU slot is a lane with a "free at" time; a test takes `slots` lanes on each of `gpus` GPUs of
one node. Per node the k-th free lane of every GPU is kept sorted, so "earliest start of an
(n GPUs × k slots) block on this node" is one list lookup and a 10,000-test plan stays well under 2 s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tools.gpu_manifest.schema import ManifestTest
from tools.plan.fleet import Fleet
from tools.plan.policies import PolicyConfig, Shape, candidates, shape_for


@dataclass(frozen=True)
class Placement:
    """One test on one node: which GPUs, how many slots of each, when, and in which wave."""

    label: str
    pool: str
    node: str
    gpus: tuple[int, ...]
    slots_per_gpu: int
    slot_fraction: float
    start_s: float
    end_s: float
    wave: int
    gpu_count: int
    whole_node: bool

    @property
    def reserved_gpus(self) -> float:
        return len(self.gpus) * self.slot_fraction


@dataclass(frozen=True)
class InfeasibleTest:
    label: str
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class Plan:
    policy: PolicyConfig
    placements: tuple[Placement, ...]
    infeasible: tuple[InfeasibleTest, ...]
    warnings: tuple[str, ...]


class _Node:
    """Mutable per-node lane state, private to one `schedule` call."""

    __slots__ = ("pool", "name", "lanes", "kth")

    def __init__(self, pool: int, name: str, gpus: int, slots: int) -> None:
        self.pool = pool
        self.name = name
        # lanes[g]: sorted [free_at, wave] per slot of GPU g.
        self.lanes: list[list[tuple[float, int]]] = [[(0.0, -1)] * slots for _ in range(gpus)]
        self.kth: list[list[tuple[float, int]]] = []
        self._refresh()

    def _refresh(self) -> None:
        slots = len(self.lanes[0])
        self.kth = [sorted((lanes[k][0], g) for g, lanes in enumerate(self.lanes)) for k in range(slots)]

    def earliest(self, shape: Shape) -> float:
        return self.kth[shape.slots - 1][shape.gpus - 1][0]

    def take(self, shape: Shape, duration: float) -> tuple[float, tuple[int, ...], int]:
        """Reserve the block; best fit (latest-freed lanes that are free by `start`) limits holes."""
        start = self.earliest(shape)
        ready = [(t, g) for t, g in self.kth[shape.slots - 1] if t <= start]
        chosen = sorted(g for _, g in sorted(ready, reverse=True)[: shape.gpus])
        end = start + duration
        wave = 0
        for g in chosen:
            lanes = self.lanes[g]
            free = [i for i, (t, _) in enumerate(lanes) if t <= start]
            use = sorted(free, key=lambda i: lanes[i][0], reverse=True)[: shape.slots]
            wave = max([wave] + [lanes[i][1] + 1 for i in use])
        for g in chosen:
            lanes = self.lanes[g]
            free = [i for i, (t, _) in enumerate(lanes) if t <= start]
            use = set(sorted(free, key=lambda i: lanes[i][0], reverse=True)[: shape.slots])
            self.lanes[g] = sorted((end, wave) if i in use else lane for i, lane in enumerate(lanes))
        self._refresh()
        return start, tuple(chosen), wave


def _order(tests: Sequence[ManifestTest]) -> list[ManifestTest]:
    """LPT: longest first; wider tests first among equals; label keeps it deterministic."""
    return sorted(tests, key=lambda t: (-t.estimated_duration_s, -t.gpu_count, t.label))


def schedule(tests: Sequence[ManifestTest], fleet: Fleet, policy: PolicyConfig) -> Plan:
    """Place every test once or report it infeasible (never both, never neither)."""
    nodes_by_pool: list[list[_Node]] = [
        [_Node(i, f"{pool.name}-{n}", pool.gpus_per_node, policy.slots) for n in range(pool.nodes)]
        for i, pool in enumerate(fleet.pools)
    ]
    placements: list[Placement] = []
    infeasible: list[InfeasibleTest] = []
    warnings: list[str] = []
    shape_cache: dict[tuple[int, int, float, bool, float | None], Shape] = {}
    for test in _order(tests):
        cand = candidates(test, fleet, policy)
        warnings.extend(cand.warnings)
        if not cand.pools:
            infeasible.append(InfeasibleTest(test.label, cand.reasons))
            continue
        best: tuple[float, _Node, Shape] | None = None
        for pool_index in cand.pools:
            key = (pool_index, test.gpu_count, test.vram_gb, test.exclusive, test.gpu_util)
            shape = shape_cache.get(key)
            if shape is None:
                shape = shape_cache[key] = shape_for(test, fleet.pools[pool_index], policy)
            nodes = nodes_by_pool[pool_index]
            k, n = shape.slots - 1, shape.gpus - 1
            node = min(nodes, key=lambda nd, k=k, n=n: nd.kth[k][n][0])
            start = node.kth[k][n][0]
            if best is None or start < best[0]:
                best = (start, node, shape)
        assert best is not None
        _, node, shape = best
        duration = test.estimated_duration_s
        start, gpus, wave = node.take(shape, duration)
        placements.append(Placement(
            label=test.label,
            pool=fleet.pools[node.pool].name,
            node=node.name,
            gpus=gpus,
            slots_per_gpu=shape.slots,
            slot_fraction=shape.slots / policy.slots,
            start_s=start,
            end_s=start + duration,
            wave=wave,
            gpu_count=test.gpu_count,
            whole_node=shape.whole_node,
        ))
    placed = {p.label for p in placements}
    missing = {t.label for t in tests} - placed - {i.label for i in infeasible}
    assert not missing and len(placed) == len(placements), "every test is planned exactly once"
    placements.sort(key=lambda p: (p.start_s, p.node, p.gpus, p.label))
    infeasible.sort(key=lambda i: i.label)
    return Plan(policy, tuple(placements), tuple(infeasible), tuple(warnings))
