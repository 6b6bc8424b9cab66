"""Query output → manifest: tag reading, `--test_tag_filters` semantics, running `bazel query`.

Pure functions over QueryTarget records; the only I/O edge is `run_query`, whose runner is
injectable so tests never need Bazel.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from tools.bazel_paths import workspace_root
from tools.gpu_manifest import history
from tools.gpu_manifest.query import QueryTarget
from tools.gpu_manifest.schema import Manifest, ManifestTest, canonical_int, command_for

GPU_TAG = "requires-gpu"
DEFAULT_PATTERN = "//..."
DEFAULT_FILTERS = "requires-gpu"

Runner = Callable[[Sequence[str], Path], str]
"""Runs argv in a directory and returns stdout; raises on failure."""


class ExportError(ValueError):
    """A GPU target whose tags cannot be turned into a manifest entry; names label and tag."""


@dataclass(frozen=True)
class TagFilter:
    """Bazel `--test_tag_filters`: any positive tag must match, no negative tag may."""

    include: tuple[str, ...]
    exclude: tuple[str, ...]

    @classmethod
    def parse(cls, text: str) -> TagFilter:
        parts = [p.strip() for p in text.split(",") if p.strip()]
        include = tuple(p.lstrip("+") for p in parts if not p.startswith("-"))
        exclude = tuple(p[1:] for p in parts if p.startswith("-"))
        return cls(include, exclude)

    def accepts(self, tags: Iterable[str]) -> bool:
        tagset = set(tags)
        if any(t in tagset for t in self.exclude):
            return False
        return not self.include or any(t in tagset for t in self.include)


def query_expression(pattern: str) -> str:
    """Exact-tag match (docs: bazel-offline "Test routing facts"), not a substring match."""
    return f'attr(tags, "[\\[ ]{GPU_TAG}[,\\]]", tests({pattern}))'


def query_argv(pattern: str, bazel: str = "bazel") -> list[str]:
    return [bazel, "query", query_expression(pattern), "--output=xml"]


def subprocess_runner(argv: Sequence[str], cwd: Path) -> str:
    """Default runner: real subprocess; stderr is passed through for Bazel's progress/errors."""
    result = subprocess.run(list(argv), cwd=cwd, stdout=subprocess.PIPE, text=True, check=False)
    if result.returncode != 0:
        raise ExportError(f"`{' '.join(argv)}` failed with exit code {result.returncode} in {cwd}")
    return result.stdout


def workspace_dir(env: dict[str, str] | os._Environ[str]) -> Path:
    """`bazel run` starts tools in the runfiles tree; the user's workspace is this variable."""
    return workspace_root(None, env)


def run_query(pattern: str, runner: Runner, cwd: Path, bazel: str = "bazel") -> str:
    return runner(query_argv(pattern, bazel), cwd)


_INT_TAGS = {"gpu-count": "gpu_count", "gpu-vram-gb": "vram_gb"}
_CUDA_RE = re.compile(r"[0-9]+\.[0-9]+")


def _tag_values(target: QueryTarget) -> dict[str, str]:
    """key → value for `key:value` tags we own; duplicates with different values are errors."""
    values: dict[str, str] = {}
    owned = ("gpu-count", "gpu-vram-gb", "cuda-min", "gpu-model", "gpu-interconnect")
    for tag in target.tags:
        if tag.startswith("resources:gpu:"):
            key, value = "resources:gpu", tag[len("resources:gpu:"):]
        else:
            key, sep, value = tag.partition(":")
            if not sep or key not in owned:
                continue
        if key in values and values[key] != value:
            raise ExportError(f"{target.label}: conflicting tags {key}:{values[key]} and {key}:{value}")
        values[key] = value
    return values


def _int_tag(target: QueryTarget, key: str, value: str, minimum: int) -> int:
    number = canonical_int(value)
    if number is None or number < minimum:
        raise ExportError(f"{target.label}: tag '{key}:{value}': expected an integer >= {minimum} "
                          "(ASCII digits, no sign, spaces, '_' or leading zeros)")
    return number


def to_manifest_test(target: QueryTarget, testlogs: Path | None) -> ManifestTest:
    """Read the tag vocabulary of docs/tags.md into one manifest entry."""
    values = _tag_values(target)
    count = _int_tag(target, "gpu-count", values["gpu-count"], 1) if "gpu-count" in values else None
    resources = (
        _int_tag(target, "resources:gpu", values["resources:gpu"], 1) if "resources:gpu" in values else None
    )
    if count is not None and resources is not None and count != resources:
        raise ExportError(
            f"{target.label}: tags gpu-count:{count} and resources:gpu:{resources} disagree; "
            "Bazel would admit the test with the wrong GPU count"
        )
    gpu_count = count or resources or 1
    vram = _int_tag(target, "gpu-vram-gb", values["gpu-vram-gb"], 0) if "gpu-vram-gb" in values else 0
    cuda_min = values.get("cuda-min")
    if cuda_min is not None and not _CUDA_RE.fullmatch(cuda_min):
        raise ExportError(f"{target.label}: tag 'cuda-min:{cuda_min}': expected MAJOR.MINOR like 12.4")
    shards = max(target.shard_count, 1)
    duration = history.estimate(target.label, target.size, shards, testlogs)
    return ManifestTest(
        label=target.label,
        kind=target.kind,
        gpu_count=gpu_count,
        vram_gb=vram,
        cuda_min=cuda_min,
        gpu_model=values.get("gpu-model") or None,
        interconnect=values.get("gpu-interconnect") or None,
        exclusive="exclusive" in target.tags,
        size=target.size,
        timeout_s=history.timeout_seconds(target.size, target.timeout),
        shard_count=shards,
        flaky=target.flaky,
        estimated_duration_s=duration.seconds,
        duration_source=duration.source,
        command=command_for(target.label),
        tags=tuple(sorted(set(target.tags))),
        gpu_util=history.history_gpu_util(testlogs, target.label) if testlogs is not None else None,
    )


def _field(test: ManifestTest, name: str) -> str:
    return repr(getattr(test, name))[:80]


def build_manifest(
    targets: Iterable[QueryTarget],
    tag_filter: TagFilter,
    testlogs: Path | None,
    source: dict[str, object],
) -> Manifest:
    """GPU targets that pass the filter, sorted by label; duplicates (e.g. via aliases) once."""
    chosen: dict[str, ManifestTest] = {}
    for target in targets:
        if GPU_TAG not in target.tags or not tag_filter.accepts(target.tags):
            continue
        test = to_manifest_test(target, testlogs)
        first = chosen.setdefault(target.label, test)
        if first != test:  # the same label reported twice with different attributes: which is real?
            fields = [name for name in ManifestTest.__dataclass_fields__
                      if getattr(first, name) != getattr(test, name)]
            raise ExportError(f"{target.label}: listed twice with conflicting {', '.join(fields)} "
                              f"({_field(first, fields[0])} vs {_field(test, fields[0])}); "
                              "the query output is inconsistent")
    return Manifest(tests=tuple(chosen[label] for label in sorted(chosen)), source=source)
