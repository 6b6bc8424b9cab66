"""Fleet description (docs/planner.md): node pools of identical GPU nodes, validated field by field."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tools.gpu_manifest.schema import short_repr

FLEET_SCHEMA_VERSION = 1
_CUDA_RE = re.compile(r"[0-9]+\.[0-9]+")  # fullmatch, ASCII digits
_NAME_RE = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
# The planner keeps state per node and per GPU: bounds far above real fleets keep a typo
# (`nodes: 10000000`) from becoming minutes of work and gigabytes.
LIMITS = {"nodes": 10_000, "gpus_per_node": 64}
MAX_TOTAL_GPUS = 100_000
MAX_VRAM_GB = 65536


class FleetError(ValueError):
    """A fleet file that does not follow the schema; `problems` names every bad field."""

    def __init__(self, problems: list[str], source: str = "fleet") -> None:
        self.problems = problems
        super().__init__(f"{source}: invalid fleet:\n  " + "\n  ".join(problems))


@dataclass(frozen=True)
class Pool:
    """`nodes` identical machines with `gpus_per_node` GPUs of one model."""

    name: str
    nodes: int
    gpus_per_node: int
    gpu_model: str
    vram_gb: float
    cuda: str
    interconnect: str = "pcie"
    node_labels: Mapping[str, str] = field(default_factory=dict)
    slurm_partition: str | None = None
    slurm_features: tuple[str, ...] = ()
    gha_runs_on: tuple[str, ...] = ()

    @property
    def cuda_tuple(self) -> tuple[int, int]:
        return cuda_tuple(self.cuda)


@dataclass(frozen=True)
class Fleet:
    pools: tuple[Pool, ...]

    @property
    def total_gpus(self) -> int:
        return sum(p.nodes * p.gpus_per_node for p in self.pools)


def cuda_tuple(text: str) -> tuple[int, int]:
    major, minor = text.split(".")
    return int(major), int(minor)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def validate(doc: Any) -> list[str]:
    """Every problem in a decoded fleet document (empty = valid)."""
    if not isinstance(doc, Mapping):
        return [f"document: expected a mapping, got {type(doc).__name__}"]
    problems: list[str] = []
    version = doc.get("schema_version", FLEET_SCHEMA_VERSION)
    if not (_is_int(version) and version == FLEET_SCHEMA_VERSION):
        problems.append(f"schema_version: expected {FLEET_SCHEMA_VERSION}, got {version!r}")
    pools = doc.get("pools")
    if not isinstance(pools, list) or not pools:
        problems.append(f"pools: expected a non-empty list, got {pools!r}")
        return problems
    names: set[str] = set()
    for i, pool in enumerate(pools):
        where = f"pools[{i}]"
        if not isinstance(pool, Mapping):
            problems.append(f"{where}: expected a mapping, got {type(pool).__name__}")
            continue
        for key in ("name", "nodes", "gpus_per_node", "gpu_model", "vram_gb", "cuda"):
            if key not in pool:
                problems.append(f"{where}.{key}: required field missing")
        name = pool.get("name")
        if "name" in pool:
            if not (isinstance(name, str) and _NAME_RE.fullmatch(name)):
                problems.append(f"{where}.name: expected lowercase letters, digits and '-', got {name!r}")
            elif name in names:
                problems.append(f"{where}.name: duplicate pool name {name!r}")
            else:
                names.add(name)
        for key, most in LIMITS.items():
            if key in pool and not (_is_int(pool[key]) and 1 <= pool[key] <= most):
                problems.append(f"{where}.{key}: expected int in [1, {most}], got {short_repr(pool[key])}")
        vram = pool.get("vram_gb")
        if "vram_gb" in pool and not (isinstance(vram, (int, float)) and not isinstance(vram, bool)
                                      and math.isfinite(vram) and 0 < vram <= MAX_VRAM_GB):
            problems.append(f"{where}.vram_gb: expected a finite number in (0, {MAX_VRAM_GB}] (GiB per GPU), "
                            f"got {short_repr(vram)}")
        cuda = pool.get("cuda")
        if "cuda" in pool and not (isinstance(cuda, str) and _CUDA_RE.fullmatch(cuda)):
            problems.append(f"{where}.cuda: expected a quoted version like \"12.4\", got {cuda!r}")
        for key in ("gpu_model", "interconnect", "slurm_partition"):
            if key in pool and not (isinstance(pool[key], str) and pool[key]):
                problems.append(f"{where}.{key}: expected a non-empty string, got {pool[key]!r}")
        labels = pool.get("node_labels", {})
        if not (isinstance(labels, Mapping) and all(isinstance(k, str) and isinstance(v, str)
                                                     for k, v in labels.items())):
            problems.append(f"{where}.node_labels: expected a mapping of strings, got {labels!r}")
        for key in ("slurm_features", "gha_runs_on"):
            value = pool.get(key, [])
            if not (isinstance(value, list) and all(isinstance(v, str) and v for v in value)):
                problems.append(f"{where}.{key}: expected a list of strings, got {value!r}")
        known = set(Pool.__dataclass_fields__)
        for key in pool:
            if key not in known:
                problems.append(f"{where}.{key}: unknown field")
    sizes = [p.get("nodes") * p.get("gpus_per_node") for p in pools if isinstance(p, Mapping)
             and all(_is_int(p.get(k)) and 1 <= p.get(k) <= most for k, most in LIMITS.items())]
    if sum(sizes) > MAX_TOTAL_GPUS:
        problems.append(f"pools: {sum(sizes)} GPUs in all; at most {MAX_TOTAL_GPUS} can be planned")
    return problems



def from_dict(doc: Any, source: str = "fleet") -> Fleet:
    problems = validate(doc)
    if problems:
        raise FleetError(problems, source)
    pools = []
    for pool in doc["pools"]:
        values = dict(pool)
        values["gpu_model"] = values["gpu_model"].lower()
        values["interconnect"] = values.get("interconnect", "pcie").lower()
        values["node_labels"] = dict(values.get("node_labels", {}))
        values["slurm_features"] = tuple(values.get("slurm_features", ()))
        values["gha_runs_on"] = tuple(values.get("gha_runs_on", ()))
        pools.append(Pool(**values))
    return Fleet(tuple(pools))


def read(path: Path) -> Fleet:
    try:
        doc = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        raise FleetError([f"not valid YAML: {err}"], str(path)) from None
    return from_dict(doc, str(path))
