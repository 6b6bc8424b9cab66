"""Query output → manifest: tag reading, `--test_tag_filters` semantics, running `bazel query`.

Pure functions over QueryTarget records; the only I/O edge is `run_query`, whose runner is
injectable so tests never need Bazel.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from tools.bazel_paths import workspace_root
from tools.contract import tags
from tools.gpu_manifest import history
from tools.gpu_manifest.query import QueryTarget
from tools.gpu_manifest.schema import Manifest, ManifestTest, command_for

GPU_TAG = tags.REQUIRES_GPU
DEFAULT_PATTERN = "//..."
DEFAULT_FILTERS = tags.REQUIRES_GPU

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


def to_manifest_test(target: QueryTarget, testlogs: Path | None) -> ManifestTest:
    """Read the tag vocabulary of docs/tags.md into one manifest entry."""
    try:
        values = tags.parse(target.tags)
    except tags.TagError as err:
        raise ExportError(f"{target.label}: {err}") from err
    shards = max(target.shard_count, 1)
    duration = history.estimate(target.label, target.size, shards, testlogs)
    return ManifestTest(
        label=target.label,
        kind=target.kind,
        gpu_count=values.gpu_count or values.resources_gpu or 1,
        vram_gb=values.vram_gb or 0,
        cuda_min=values.cuda_min,
        gpu_model=values.gpu_model,
        interconnect=values.gpu_interconnect,
        exclusive=values.exclusive,
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
