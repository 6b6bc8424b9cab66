"""The versioned planner manifest (docs/manifest.md): dataclasses, validation, atomic I/O.

One module owns the format so the exporter, the planner and hand edits are checked the same way;
every error names the field (`tests[3].gpu_count: expected int >= 1, got -2`).
"""

from __future__ import annotations

import json
import math
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tools.atomic_write import write_text_atomic
from tools.contract import tags as contract_tags

SCHEMA_VERSION = 1
GENERATED_BY = "bazel run //tools:export_gpu_manifest"
SIZES = ("small", "medium", "large", "enormous")
DURATION_SOURCES = ("history", "size")
# fullmatch, ASCII digits only: `$` would accept a trailing newline and `\d` full-width digits.
_LABEL_RE = re.compile(r"(@@?[A-Za-z0-9_.~+-]*)?//[^:\x00-\x1f\x7f]*:[^:\x00-\x1f\x7f]+")
_CUDA_RE = re.compile(r"[0-9]+\.[0-9]+")
# Upper bounds keep every rendering in range (a k8s Job's activeDeadlineSeconds is an int64, a
# GitHub job has 5 days); far above any real test.
MAX_GPU_COUNT = 4096
MAX_VRAM_GB = 65536
MAX_TIMEOUT_S = 366 * 86400
MAX_SHARD_COUNT = 100_000
MAX_DURATION_S = 10**9


class ManifestError(ValueError):
    """A manifest that does not follow the schema; `problems` lists every bad field."""

    def __init__(self, problems: Sequence[str], source: str = "manifest") -> None:
        self.problems = list(problems)
        shown = "\n  ".join(self.problems[:20])
        more = f"\n  ... and {len(self.problems) - 20} more" if len(self.problems) > 20 else ""
        super().__init__(f"{source}: invalid manifest:\n  {shown}{more}")


@dataclass(frozen=True)
class ManifestTest:
    """One GPU test target and everything a planner needs to place it."""

    label: str
    gpu_count: int
    vram_gb: float
    size: str
    timeout_s: int
    estimated_duration_s: float
    duration_source: str
    command: str
    kind: str = "py_test"
    cuda_min: str | None = None
    gpu_model: str | None = None
    interconnect: str | None = None
    exclusive: bool = False
    shard_count: int = 1
    flaky: bool = False
    tags: tuple[str, ...] = ()
    # Mean GPU (SM) utilisation of the last GPU run, 0..1 (busiest of its GPUs); None = not measured,
    # which the planner treats as compute-bound (1.0).
    gpu_util: float | None = None


@dataclass(frozen=True)
class Manifest:
    """The whole manifest document."""

    tests: tuple[ManifestTest, ...]
    source: Mapping[str, Any] = field(default_factory=dict)
    schema_version: int = SCHEMA_VERSION
    generated_by: str = GENERATED_BY


def command_for(label: str) -> str:
    """The exact command that runs one target on a GPU node, with the label quoted for a shell."""
    return shell_join(["bazel", "test", "--config=gpu", label])


def shell_join(words: Sequence[str]) -> str:
    """The one quoting function of every renderer: a line any POSIX shell (bash -c, an sbatch script,
    a GitHub `run:`) splits back into exactly `words`, whatever characters a label holds."""
    return shlex.join(words)


def command_words(command: str) -> list[str]:
    """A manifest `command` as argv: POSIX shell quoting; operators are not special (a `;` inside a
    word is part of it), so renderers re-quote the words instead of passing the text to a shell.
    Raises ValueError for unbalanced quotes."""
    return shlex.split(command)


# ---------------------------------------------------------------- validation helpers

def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _check_test(where: str, entry: Any, problems: list[str]) -> None:
    if not isinstance(entry, Mapping):
        problems.append(f"{where}: expected a mapping, got {type(entry).__name__}")
        return

    def need(key: str) -> Any:
        if key not in entry:
            problems.append(f"{where}.{key}: required field missing")
        return entry.get(key)

    def check_int(key: str, minimum: int, maximum: int, required: bool = True) -> None:
        value = need(key) if required else entry.get(key, minimum)
        if key in entry and not (_is_int(value) and minimum <= value <= maximum):
            problems.append(f"{where}.{key}: expected int in [{minimum}, {maximum}], got {short_repr(value)}")

    def check_num(key: str, minimum: float, maximum: float) -> None:
        value = need(key)
        if key in entry and not (_is_number(value) and math.isfinite(value) and minimum <= value <= maximum):
            problems.append(f"{where}.{key}: expected a finite number in [{minimum:g}, {maximum:g}], "
                            f"got {short_repr(value)}")

    def check_opt_str(key: str, pattern: re.Pattern[str] | None = None) -> None:
        value = entry.get(key)
        if value is None:
            return
        if not isinstance(value, str) or not value or (pattern and not pattern.fullmatch(value)):
            want = f"string matching {pattern.pattern}" if pattern else "non-empty string or null"
            problems.append(f"{where}.{key}: expected {want}, got {value!r}")

    def check_bool(key: str) -> None:
        if key in entry and not isinstance(entry[key], bool):
            problems.append(f"{where}.{key}: expected bool, got {entry[key]!r}")

    label = need("label")
    if "label" in entry and not (isinstance(label, str) and _LABEL_RE.fullmatch(label)):
        problems.append(f"{where}.label: expected a canonical label like //pkg:name (no control characters "
                        f"or newlines), got {short_repr(label)}")
    check_int("gpu_count", 1, MAX_GPU_COUNT)
    check_num("vram_gb", 0, MAX_VRAM_GB)
    size = need("size")
    if "size" in entry and size not in SIZES:
        problems.append(f"{where}.size: expected one of {list(SIZES)}, got {size!r}")
    check_int("timeout_s", 1, MAX_TIMEOUT_S)
    check_num("estimated_duration_s", 0, MAX_DURATION_S)
    src = need("duration_source")
    if "duration_source" in entry and src not in DURATION_SOURCES:
        problems.append(f"{where}.duration_source: expected one of {list(DURATION_SOURCES)}, got {src!r}")
    cmd = need("command")
    if "command" in entry:
        problems += _command_problems(f"{where}.command", cmd, label)
    kind = entry.get("kind", "py_test")
    if not (isinstance(kind, str) and kind.endswith("_test")):
        problems.append(f"{where}.kind: expected a test rule class (…_test), got {kind!r}")
    check_opt_str("cuda_min", _CUDA_RE)
    check_opt_str("gpu_model")
    check_opt_str("interconnect")
    check_bool("exclusive")
    check_bool("flaky")
    check_int("shard_count", 1, MAX_SHARD_COUNT, required=False)
    util = entry.get("gpu_util")
    if util is not None and not (_is_number(util) and 0 <= util <= 1):
        problems.append(f"{where}.gpu_util: expected a number in [0, 1] or null, got {util!r}")
    tags = entry.get("tags", [])
    if not (isinstance(tags, (list, tuple)) and all(isinstance(t, str) for t in tags)):
        problems.append(f"{where}.tags: expected a list of strings, got {short_repr(tags)}")
    else:
        problems += tag_problems(f"{where}.tags", tags)
    known = {f.name for f in ManifestTest.__dataclass_fields__.values()}
    for key in entry:
        if key not in known:
            problems.append(f"{where}.{key}: unknown field")


def short_repr(value: Any, limit: int = 80) -> str:
    """repr for a message, cut: a hostile value must not make a megabyte error line."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def _command_problems(where: str, cmd: Any, label: Any) -> list[str]:
    if not isinstance(cmd, str):
        return [f"{where}: expected a string, got {short_repr(cmd)}"]
    try:
        words = command_words(cmd)
    except ValueError as err:
        return [f"{where}: not a valid shell word list ({err}): {short_repr(cmd)}"]
    if not words or words[0] != "bazel":
        return [f"{where}: expected a command starting with 'bazel ', got {short_repr(cmd)}"]
    if isinstance(label, str) and label not in words:
        return [f"{where}: does not name the label {short_repr(label)} as one word (quote it: "
                f"{short_repr(command_for(label), 200)})"]
    return []


def tag_problems(where: str, target_tags: Sequence[str]) -> list[str]:
    """Tags of ours not in their one spelling or contradicting each other (tools/contract/tags.py)."""
    return [f"{where}: {problem}" for problem in contract_tags.problems(target_tags)]


def validate(doc: Any) -> list[str]:
    """Every schema problem of a decoded manifest document (empty list = valid)."""
    problems: list[str] = []
    if not isinstance(doc, Mapping):
        return [f"document: expected a mapping, got {type(doc).__name__}"]
    version = doc.get("schema_version")
    if not (_is_int(version) and version == SCHEMA_VERSION):
        problems.append(f"schema_version: expected {SCHEMA_VERSION}, got {version!r}")
    if "generated_by" in doc and not isinstance(doc["generated_by"], str):
        problems.append(f"generated_by: expected string, got {doc['generated_by']!r}")
    if "source" in doc and not isinstance(doc["source"], Mapping):
        problems.append(f"source: expected a mapping, got {doc['source']!r}")
    tests = doc.get("tests")
    if not isinstance(tests, list):
        problems.append(f"tests: expected a list, got {type(tests).__name__}")
        return problems
    seen: dict[str, int] = {}
    for i, entry in enumerate(tests):
        _check_test(f"tests[{i}]", entry, problems)
        label = entry.get("label") if isinstance(entry, Mapping) else None
        if isinstance(label, str):
            if label in seen:
                problems.append(f"tests[{i}].label: duplicate of tests[{seen[label]}] ({label})")
            seen.setdefault(label, i)
    for key in doc:
        if key not in ("schema_version", "generated_by", "source", "tests"):
            problems.append(f"{key}: unknown top-level field")
    return problems


# ---------------------------------------------------------------- conversion

def to_dict(manifest: Manifest) -> dict[str, Any]:
    """Plain data (lists, not tuples) for YAML/JSON dumping."""
    tests = []
    for test in manifest.tests:
        entry = asdict(test)
        entry["tags"] = list(test.tags)
        tests.append(entry)
    return {
        "schema_version": manifest.schema_version,
        "generated_by": manifest.generated_by,
        "source": dict(manifest.source),
        "tests": tests,
    }


def from_dict(doc: Any, source: str = "manifest") -> Manifest:
    """Validate then build a Manifest; raises ManifestError naming every bad field."""
    problems = validate(doc)
    if problems:
        raise ManifestError(problems, source)
    tests = []
    for entry in doc["tests"]:
        values = dict(entry)
        values["tags"] = tuple(values.get("tags", ()))
        tests.append(ManifestTest(**values))
    return Manifest(
        tests=tuple(tests),
        source=dict(doc.get("source", {})),
        schema_version=doc["schema_version"],
        generated_by=doc.get("generated_by", GENERATED_BY),
    )


def dumps(manifest: Manifest, fmt: str) -> str:
    """Serialise after validating, so an invalid manifest never reaches a file."""
    doc = to_dict(manifest)
    problems = validate(doc)
    if problems:
        raise ManifestError(problems, "manifest to write")
    if fmt == "json":
        return json.dumps(doc, indent=2, sort_keys=False) + "\n"
    if fmt == "yaml":
        return yaml.safe_dump(doc, sort_keys=False, default_flow_style=False)
    raise ValueError(f"unknown manifest format {fmt!r}; expected yaml or json")


def format_for(path: Path) -> str:
    """yaml or json, from the file name."""
    suffix = path.suffix.lower()
    if suffix in (".yaml", ".yml"):
        return "yaml"
    if suffix == ".json":
        return "json"
    raise ValueError(f"{path}: manifest file name must end in .yaml, .yml or .json")


def atomic_write_text(path: Path, text: str) -> None:
    """Readers never see half a manifest (tools/atomic_write.py)."""
    write_text_atomic(path, text)


def write(manifest: Manifest, path: Path) -> None:
    """Validate and write atomically; format from the suffix."""
    atomic_write_text(path, dumps(manifest, format_for(path)))


def loads(text: str, source: str = "manifest") -> Manifest:
    """Parse YAML or JSON text (JSON is YAML) and validate."""
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise ManifestError([f"not valid YAML/JSON: {err}"], source) from None
    return from_dict(doc, source)


def read(path: Path) -> Manifest:
    """Read and validate a manifest file."""
    return loads(Path(path).read_text(encoding="utf-8"), str(path))
