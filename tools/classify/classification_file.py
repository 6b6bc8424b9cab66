"""Read, validate and atomically write `torch_classification.json` (schema: docs/classification.md).

One module owns the format so that the classifier, the runtime feedback loop and the tests agree on
it; the Starlark twin of `validate` lives in rules/private/classification_repo.bzl.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tools import pretty_json
from tools.atomic_write import write_text_atomic

SCHEMA_VERSION = 1
DEFAULT_FILENAME = "torch_classification.json"
GENERATED_BY = "bazel run //tools:classify -- --update"

FILE_LABELS = ("cpu", "gpu", "mixed", "unknown")
TEST_LABELS = ("cpu", "gpu", "unknown")
SOURCES = ("static", "runtime", "manual")


class ClassificationFileError(ValueError):
    """A classification file that does not follow the schema; the message names the entry."""


def _check_number(where: str, entry: Mapping[str, Any], key: str, *, integer: bool) -> None:
    if key not in entry:
        return
    value = entry[key]
    kinds = (int,) if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, kinds):
        kind = "an integer" if integer else "a number"
        raise ClassificationFileError(f"{where}: '{key}' must be {kind}, got {value!r}")
    if value < 0:
        raise ClassificationFileError(f"{where}: '{key}' must be >= 0, got {value!r}")


def _check_common(where: str, entry: Any, labels: tuple[str, ...]) -> None:
    if not isinstance(entry, dict):
        raise ClassificationFileError(f"{where}: entry must be an object, got {type(entry).__name__}")
    label = entry.get("label")
    if label not in labels:
        raise ClassificationFileError(f"{where}: 'label' must be one of {', '.join(labels)}; got {label!r}")
    source = entry.get("source", "static")
    if source not in SOURCES:
        raise ClassificationFileError(f"{where}: 'source' must be one of {', '.join(SOURCES)}; got {source!r}")
    _check_number(where, entry, "gpu_count", integer=True)
    _check_number(where, entry, "vram_gb", integer=False)
    reasons = entry.get("reasons", [])
    if not isinstance(reasons, list) or not all(isinstance(r, str) for r in reasons):
        raise ClassificationFileError(f"{where}: 'reasons' must be a list of strings")


def validate(data: Any, origin: str = DEFAULT_FILENAME) -> dict[str, Any]:
    """Return `data` unchanged if it follows schema version 1, else raise naming the bad entry."""
    if not isinstance(data, dict):
        raise ClassificationFileError(f"{origin}: top level must be an object")
    if data.get("version") != SCHEMA_VERSION:
        raise ClassificationFileError(
            f"{origin}: unsupported 'version' {data.get('version')!r} (this tool reads {SCHEMA_VERSION})"
        )
    files = data.get("files")
    if not isinstance(files, dict):
        raise ClassificationFileError(f"{origin}: 'files' must be an object")
    for path, entry in files.items():
        where = f"{origin}: files[{path!r}]"
        if path.startswith("/") or "\\" in path or ".." in path.split("/"):
            raise ClassificationFileError(f"{where}: key must be a workspace-relative POSIX path")
        _check_common(where, entry, FILE_LABELS)
        if "torch" in entry and not isinstance(entry["torch"], bool):
            raise ClassificationFileError(f"{where}: 'torch' must be true or false")
        tests = entry.get("tests", {})
        if not isinstance(tests, dict):
            raise ClassificationFileError(f"{where}: 'tests' must be an object")
        for key, test in tests.items():
            if "::" in key and key.startswith(path):
                raise ClassificationFileError(f"{where}.tests[{key!r}]: key must not repeat the file path")
            _check_common(f"{where}.tests[{key!r}]", test, TEST_LABELS)
    return data


def empty() -> dict[str, Any]:
    return {"version": SCHEMA_VERSION, "generated_by": GENERATED_BY, "files": {}}


def load(path: Path) -> dict[str, Any]:
    """Load and validate; a missing file is an empty classification."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return empty()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ClassificationFileError(f"{path}:{exc.lineno}: not valid JSON: {exc.msg}") from exc
    return validate(data, str(path))


def dumps(data: Mapping[str, Any]) -> str:
    """The canonical text: sorted keys, two-space indent, trailing newline (byte-stable)."""
    return pretty_json.dumps(data, ensure_ascii=False) + "\n"  # = json.dumps(indent=2, sort_keys=True), faster


def write_atomic(path: Path, text: str) -> None:
    """Write via a temporary file in the same directory and rename: never half-written."""
    write_text_atomic(path, text)


def save(path: Path, data: Mapping[str, Any]) -> None:
    """Validate, then write atomically; invalid data never reaches the disk."""
    validate(dict(data), str(path))
    write_atomic(path, dumps(data))
