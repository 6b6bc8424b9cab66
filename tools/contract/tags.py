"""The tag vocabulary of torch_py_test targets (docs/tags.md): formatted here and in the Starlark twin
rules/private/contract.bzl, parsed here for every tool that reads `bazel query` output.

A value has one spelling (`gpu-count:2`, never `gpu-count:02`, `+2` or `２`), so a tag filter, a cache
key and a reviewer all see the same text; parsing refuses any other spelling.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

REQUIRES_TORCH_CPU = "requires-torch-cpu"
NO_TORCH = "no-torch"
REQUIRES_GPU = "requires-gpu"
UNCLASSIFIED = "torch-unclassified"
EXCLUSIVE = "exclusive"  # Bazel's own; the planner also gives the test a whole node
# `key:value` tags. RESOURCES_GPU is Bazel's own `resources:gpu:N` (the key itself holds a colon).
GPU_COUNT = "gpu-count"
VRAM_GB = "gpu-vram-gb"
RESOURCES_GPU = "resources:gpu"
LABEL_SOURCE = "torch-label-source"
CUDA_MIN = "cuda-min"
GPU_MODEL = "gpu-model"
GPU_INTERCONNECT = "gpu-interconnect"

FLAGS = (REQUIRES_TORCH_CPU, NO_TORCH, REQUIRES_GPU, UNCLASSIFIED, EXCLUSIVE)
INT_KEYS = (GPU_COUNT, VRAM_GB, RESOURCES_GPU)
SINGLE_KEYS = (*INT_KEYS, CUDA_MIN, GPU_MODEL, GPU_INTERCONNECT)  # one value per target
VALUE_KEYS = (*SINGLE_KEYS, LABEL_SOURCE)  # a target split from files of several sources has several
# Values of torch-label-source: the classification file's sources plus the macro's `device` attribute.
LABEL_SOURCES = ("static", "runtime", "manual", "attribute")
_MINIMUM = {GPU_COUNT: 1, VRAM_GB: 0, RESOURCES_GPU: 1}
# fullmatch, ASCII digits only: `$` would accept a trailing newline and `\d` full-width digits.
_CANONICAL_INT = re.compile(r"0|[1-9][0-9]*")
_CUDA = re.compile(r"[0-9]+\.[0-9]+")
_INT_WANT = "(ASCII digits, no sign, spaces, '_' or leading zeros)"


class TagError(ValueError):
    """A tag of ours spelt or combined wrongly; the message names the tag."""


def tag(key: str, value: object) -> str:
    """`key:value`, the one spelling of a valued tag."""
    return f"{key}:{value}"


def split(text: str) -> tuple[str, str] | None:
    """(key, value) of a valued tag of ours, else None (flags and other people's tags)."""
    if text.startswith(RESOURCES_GPU + ":"):
        return RESOURCES_GPU, text[len(RESOURCES_GPU) + 1:]
    key, sep, value = text.partition(":")
    return (key, value) if sep and key in VALUE_KEYS else None


def is_ours(text: str) -> bool:
    """Whether a tag belongs to the vocabulary (a flag or a valued tag with one of our keys)."""
    return text in FLAGS or split(text) is not None


def canonical_int(text: str) -> int | None:
    """The integer a tag value spells in its one canonical form, else None: `gpu-count: 2`, `+2`, `２`,
    `1_000`, `02` are not `gpu-count:2`."""
    return int(text) if _CANONICAL_INT.fullmatch(text) else None


def part_tags(device: str, *, sources: Iterable[str], torch: bool = True, gpu_count: int = 0, vram_gb: float = 0,
              unclassified: bool = False, cuda_min: str | None = None, gpu_model: str | None = None,
              gpu_interconnect: str | None = None) -> list[str]:
    """The sorted tags of one torch_py_test target (twin: contract.bzl's `part_tags`, which tags.bzl uses).

    `vram_gb` is rounded up to whole GiB; `sources` may hold `unclassified`, which gets no source tag."""
    tags = [tag(LABEL_SOURCE, s) for s in sorted(set(sources)) if s != "unclassified"]
    if device == "cpu":
        return sorted([*tags, REQUIRES_TORCH_CPU if torch else NO_TORCH])
    if gpu_count < 1:
        raise TagError(f"gpu_count must be >= 1 for a GPU test, got {gpu_count}")
    tags += [REQUIRES_GPU, tag(GPU_COUNT, gpu_count), tag(VRAM_GB, math.ceil(vram_gb)), tag(RESOURCES_GPU, gpu_count)]
    if unclassified:
        tags.append(UNCLASSIFIED)
    for key, value in ((CUDA_MIN, cuda_min), (GPU_MODEL, gpu_model), (GPU_INTERCONNECT, gpu_interconnect)):
        if value:
            tags.append(tag(key, value))
    return sorted(tags)


@dataclass(frozen=True)
class TagValues:
    """What a target's tags say, each value read from its one spelling."""

    requires_gpu: bool = False
    exclusive: bool = False
    gpu_count: int | None = None
    vram_gb: int | None = None
    resources_gpu: int | None = None
    cuda_min: str | None = None
    gpu_model: str | None = None
    gpu_interconnect: str | None = None

    def as_dict(self) -> dict[str, object]:
        """The fields that are set (the parity cases' form)."""
        return {k: v for k, v in self.__dict__.items() if v is not None and v is not False}


def _value_problem(key: str, value: str) -> str | None:
    if key in INT_KEYS:
        number = canonical_int(value)
        if number is None or number < _MINIMUM[key]:
            return f"tag {tag(key, value)!r}: expected an integer >= {_MINIMUM[key]} {_INT_WANT}"
    elif key == CUDA_MIN and not _CUDA.fullmatch(value):
        return f"tag {tag(key, value)!r}: expected MAJOR.MINOR like 12.4"
    return None


def problems(tags: Sequence[str]) -> list[str]:
    """Every problem of a target's tags: a value not in its one spelling, one key with two values,
    `gpu-count` and `resources:gpu` that disagree (Bazel would admit the test with the wrong count)."""
    found: list[str] = []
    seen: dict[str, str] = {}
    for text in tags:
        pair = split(text)
        if pair is None:
            continue
        key, value = pair
        problem = _value_problem(key, value)
        if problem:
            found.append(problem)
        elif key in SINGLE_KEYS and key in seen and seen[key] != value:
            found.append(f"conflicting tags {key}:{seen[key]} and {key}:{value}")
        seen.setdefault(key, value)
    count, resources = seen.get(GPU_COUNT), seen.get(RESOURCES_GPU)
    if not found and count is not None and resources is not None and count != resources:
        found.append(f"tags {GPU_COUNT}:{count} and {RESOURCES_GPU}:{resources} disagree; "
                     "Bazel would admit the test with the wrong GPU count")
    return found


def parse(tags: Sequence[str]) -> TagValues:
    """Read a target's tags (twin: contract.bzl's `parse_tags`); raises TagError with the first problem."""
    found = problems(tags)
    if found:
        raise TagError(found[0])
    values: dict[str, str] = {}
    for text in tags:
        pair = split(text)
        if pair is not None:
            values[pair[0]] = pair[1]

    def number(key: str) -> int | None:
        return int(values[key]) if key in values else None

    return TagValues(
        requires_gpu=REQUIRES_GPU in tags,
        exclusive=EXCLUSIVE in tags,
        gpu_count=number(GPU_COUNT),
        vram_gb=number(VRAM_GB),
        resources_gpu=number(RESOURCES_GPU),
        cuda_min=values.get(CUDA_MIN),
        gpu_model=values.get(GPU_MODEL) or None,
        gpu_interconnect=values.get(GPU_INTERCONNECT) or None,
    )
