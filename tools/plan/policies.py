"""Placement policies: how many GPUs (and GPU slots) a test reserves, and on which pools it may run.

A GPU is modelled as `slots_per_gpu` equal slots, each 1/slots of its VRAM and of its compute.
`exclusive` uses one slot per GPU (a test owns whole GPUs, multi-GPU tests own a whole node);
`packed` lets tests share a GPU when both their VRAM (plus headroom against fragmentation) and their
measured GPU utilisation fit in the slots they take (unmeasured tests are compute-bound: whole GPU).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from tools.gpu_manifest.schema import ManifestTest
from tools.plan.fleet import Fleet, Pool, cuda_tuple

POLICIES = ("exclusive", "packed")
MAX_SLOTS_PER_GPU = 64
MAX_HEADROOM = 10.0


@dataclass(frozen=True)
class PolicyConfig:
    """Knobs of a policy; the defaults are what docs/planner.md describes."""

    name: str = "packed"
    slots_per_gpu: int = 4
    headroom: float = 0.10
    prefer_interconnect: bool = True
    # Compute-aware packing: the tests sharing a GPU never add up to more than one GPU's measured
    # compute (`gpu_util`, plus compute_headroom); unmeasured tests count as compute-bound.
    compute_aware: bool = True
    compute_headroom: float = 0.0

    def __post_init__(self) -> None:
        if self.name not in POLICIES:
            raise ValueError(f"policy: expected one of {POLICIES}, got {self.name!r}")
        if not 1 <= self.slots_per_gpu <= MAX_SLOTS_PER_GPU:
            raise ValueError(f"--slots-per-gpu: expected int in [1, {MAX_SLOTS_PER_GPU}], got {self.slots_per_gpu}")
        if not (math.isfinite(self.headroom) and 0 <= self.headroom <= MAX_HEADROOM):
            raise ValueError(f"--headroom: expected a finite number in [0, {MAX_HEADROOM:g}] (a fraction of the "
                             f"test's VRAM), got {self.headroom}")
        if not (math.isfinite(self.compute_headroom) and 0 <= self.compute_headroom <= MAX_HEADROOM):
            raise ValueError(f"--compute-headroom: expected a finite number in [0, {MAX_HEADROOM:g}] (a fraction "
                             f"of one GPU's compute), got {self.compute_headroom}")

    @property
    def slots(self) -> int:
        """Slots per GPU that the scheduler models (1 = whole GPUs only)."""
        return 1 if self.name == "exclusive" else self.slots_per_gpu


@dataclass(frozen=True)
class Shape:
    """What one test reserves on one node of a pool: `gpus` GPUs × `slots` slots on each."""

    gpus: int
    slots: int
    whole_node: bool


def shape_for(test: ManifestTest, pool: Pool, policy: PolicyConfig) -> Shape:
    """Reservation of `test` on a node of `pool` under `policy` (test assumed feasible there)."""
    total = policy.slots
    if test.exclusive:
        return Shape(pool.gpus_per_node, total, True)
    if policy.name == "exclusive":
        if test.gpu_count > 1:
            return Shape(pool.gpus_per_node, total, True)
        return Shape(1, total, pool.gpus_per_node == 1)
    if test.vram_gb <= 0:
        slots = total  # unknown memory need: never share the GPU
    else:
        slot_gb = pool.vram_gb / total
        slots = min(total, max(1, math.ceil(test.vram_gb * (1 + policy.headroom) / slot_gb - 1e-9)))
    if policy.compute_aware:
        slots = max(slots, compute_slots(test.gpu_util, total, policy.compute_headroom))
    return Shape(test.gpu_count, slots, test.gpu_count == pool.gpus_per_node and slots == total)


def compute_slots(gpu_util: float | None, total: int, headroom: float) -> int:
    """Slots (of `total` per GPU) a test's compute takes: a slot is also 1/total of the GPU's SMs, so
    the tests on a GPU never need more than one GPU's compute. Unmeasured = compute-bound = all."""
    if gpu_util is None:
        return total
    return min(total, max(1, math.ceil(gpu_util * (1 + headroom) * total - 1e-9)))


def pool_problems(test: ManifestTest, pool: Pool) -> list[str]:
    """Why `test` cannot run on `pool` (empty = it can)."""
    problems = []
    if test.gpu_model and pool.gpu_model != test.gpu_model.lower():
        problems.append(f"GPU model {pool.gpu_model} is not {test.gpu_model}")
    if test.cuda_min and pool.cuda_tuple < cuda_tuple(test.cuda_min):
        problems.append(f"CUDA {pool.cuda} < {test.cuda_min}")
    if test.gpu_count > pool.gpus_per_node:
        problems.append(f"{pool.gpus_per_node} GPUs per node < {test.gpu_count}")
    if test.vram_gb > pool.vram_gb:
        problems.append(f"{pool.vram_gb:g} GB per GPU < {test.vram_gb:g} GB")
    return problems


def _fleet_wide_reasons(test: ManifestTest, fleet: Fleet) -> list[str]:
    """Constraints that no pool at all meets, phrased against the whole fleet."""
    pools = fleet.pools
    reasons = []
    if test.gpu_model and all(p.gpu_model != test.gpu_model.lower() for p in pools):
        models = ", ".join(sorted({p.gpu_model for p in pools}))
        reasons.append(f"needs GPU model {test.gpu_model}; fleet has {models}")
    if test.cuda_min and all(p.cuda_tuple < cuda_tuple(test.cuda_min) for p in pools):
        best = max(pools, key=lambda p: p.cuda_tuple).cuda
        reasons.append(f"needs CUDA >= {test.cuda_min}; fleet has at most {best}")
    most = max(p.gpus_per_node for p in pools)
    if test.gpu_count > most:
        reasons.append(f"needs {test.gpu_count} GPUs on one node; largest node has {most}")
    vram = max(p.vram_gb for p in pools)
    if test.vram_gb > vram:
        reasons.append(f"needs {test.vram_gb:g} GB VRAM per GPU; largest GPU has {vram:g} GB")
    return reasons


@dataclass(frozen=True)
class Candidates:
    """Pools a test may use (indices into fleet.pools), or the reasons it may use none."""

    pools: tuple[int, ...]
    reasons: tuple[str, ...]
    warnings: tuple[str, ...] = ()


def candidates(test: ManifestTest, fleet: Fleet, policy: PolicyConfig) -> Candidates:
    """Feasible pools; an interconnect request narrows them when the fleet can honour it."""
    ok = [i for i, pool in enumerate(fleet.pools) if not pool_problems(test, pool)]
    if not ok:
        reasons = _fleet_wide_reasons(test, fleet)
        if not reasons:
            per_pool = "; ".join(f"pool {p.name}: {', '.join(pool_problems(test, p))}" for p in fleet.pools)
            reasons = [f"no single pool meets every constraint ({per_pool})"]
        return Candidates((), tuple(reasons))
    warnings: tuple[str, ...] = ()
    if test.interconnect and policy.prefer_interconnect:
        wanted = test.interconnect.lower()
        matching = [i for i in ok if fleet.pools[i].interconnect == wanted]
        if matching:
            ok = matching
        else:
            warnings = (f"{test.label}: prefers {wanted} but no feasible pool has it; placed without",)
    return Candidates(tuple(ok), (), warnings)
