"""The classification file `torch_classification.json`: schema, validator, file-label rules, I/O
(docs/classification.md).

The classifier (tools/classify) writes it from static analysis, the feedback loop (tools/feedback) from
runs, torch_py_test reads it; this module is the one definition all of them use. The Starlark twin of
`validate` is rules/private/contract.bzl (used by classification_repo.bzl); tests/rules/contract_cases.json
feeds both.
"""

from __future__ import annotations

import glob
import json
import math
import posixpath
import re
import stat
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tools import pretty_json
from tools.atomic_write import write_text_atomic
from tools.bounded_read import read_source

MAX_BYTES = 512 * 1024 * 1024  # 25x the file of a 70,000-test repository; a larger one is refused, not read
SCHEMA_VERSION = 1
DEFAULT_FILENAME = "torch_classification.json"
GENERATED_BY = "bazel run //tools:classify -- --update"

CPU, GPU, MIXED, UNKNOWN = "cpu", "gpu", "mixed", "unknown"
FILE_LABELS = (CPU, GPU, MIXED, UNKNOWN)
TEST_LABELS = (CPU, GPU, UNKNOWN)
# Who set a label. `manual` entries are never changed by a tool; `runtime` gpu labels (a CPU run proved
# the test needs CUDA) are never flipped back by static analysis.
STATIC, RUNTIME, MANUAL = "static", "runtime", "manual"
SOURCES = (STATIC, RUNTIME, MANUAL)
MEASURED = "measured peak"  # in a reason: the VRAM need was measured on a GPU run (tools/feedback/vram.py)
TOP_KEYS = ("version", "generated_by", "files")
FILE_KEYS = ("label", "torch", "gpu_count", "vram_gb", "source", "tests", "reasons")
TEST_KEYS = ("label", "gpu_count", "vram_gb", "source", "reasons", "without_gpus")
# A test key whose node id names another case on a machine without GPUs (a positional id over a device list
# that CUDA extends: `device0` is `cuda:0` there and `cpu` here) says what that case is: `label` stays the
# GPU machine's, which must run it; `without_gpus` is only ever `cpu` (the one value that changes routing).
WITHOUT_GPUS = "without_gpus"
CONFLICT_MARKER = re.compile(r"^(<<<<<<<|=======|>>>>>>>|\|\|\|\|\|\|\|)( |$)", re.MULTILINE)
CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def file_label(labels: list[str]) -> str:
    """A file's label from its tests': all cpu -> cpu; all gpu -> gpu; cpu and gpu -> mixed; unknown
    without gpu -> unknown (routed like gpu)."""
    s = set(labels)
    if not s:
        return CPU
    if GPU in s:
        return MIXED if CPU in s else GPU
    if UNKNOWN in s:
        return UNKNOWN
    return CPU


def label_without_gpus(test: Mapping[str, Any]) -> str:
    """A test entry's label on a machine without GPUs (`without_gpus` when it has one)."""
    return str(test.get(WITHOUT_GPUS) or test["label"])


def test_labels(tests: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Every label the tests have on either kind of machine: what a file's label is derived from."""
    return [*(t["label"] for t in tests.values()), *(label_without_gpus(t) for t in tests.values())]


def file_source(tests: Mapping[str, Mapping[str, Any]]) -> str:
    """`runtime` once any test's label was proven by a run (the `torch-label-source:` tag shows it)."""
    return RUNTIME if any(t.get("source") == RUNTIME for t in tests.values()) else STATIC


def file_summary(tests: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """What a file entry says about its tests as a whole: label, source, and the largest GPU count and
    VRAM need of one test (the classifier's merge and the feedback loop both write it this way)."""
    return {
        "label": file_label(test_labels(tests)),
        "gpu_count": max((int(t.get("gpu_count", 0)) for t in tests.values()), default=0),
        "vram_gb": max((t.get("vram_gb", 0) for t in tests.values()), default=0),
        "source": file_source(tests),
    }


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
    if isinstance(value, float) and not math.isfinite(value):
        raise ClassificationFileError(f"{where}: '{key}' must be a finite number, got {value!r}")
    if value < 0:
        raise ClassificationFileError(f"{where}: '{key}' must be >= 0, got {value!r}")


def _check_keys(where: str, entry: Mapping[str, Any], allowed: tuple[str, ...]) -> None:
    """A misspelt key (`sorce`) would silently lose what it says: every key must be one the schema has."""
    unknown = sorted(k for k in entry if k not in allowed)
    if unknown:
        raise ClassificationFileError(f"{where}: unknown key {unknown[0]!r} (allowed: {', '.join(allowed)})")


def _check_common(where: str, entry: Any, labels: tuple[str, ...], keys: tuple[str, ...]) -> None:
    if not isinstance(entry, dict):
        raise ClassificationFileError(f"{where}: entry must be an object, got {type(entry).__name__}")
    _check_keys(where, entry, keys)
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


def canonical_path(path: str) -> bool:
    """A workspace-relative POSIX path as Bazel spells it (`package/src`): no `./`, `//`, `..`, `/` at either
    end, backslash or control character; only such a key can ever match a target's source."""
    return (bool(path) and not CONTROL.search(path) and "\\" not in path and posixpath.normpath(path) == path
            and not path.startswith(("/", "../")) and path not in (".", ".."))


def test_key_problem(path: str, key: str) -> str | None:
    """What is wrong with a test key of file `path` (None when nothing): a key is the node id after
    `path::`, so one that starts with the path itself would never match a collected test."""
    if not key or CONTROL.search(key):
        return "a test key must be a non-empty node id without control characters"
    if "::" in key and key.startswith(path):
        return "key must not repeat the file path"
    return None


def validate(data: Any, origin: str = DEFAULT_FILENAME) -> dict[str, Any]:
    """Return `data` unchanged if it follows schema version 1, else raise naming the bad entry."""
    if not isinstance(data, dict):
        raise ClassificationFileError(f"{origin}: top level must be an object")
    _check_keys(origin, data, TOP_KEYS)
    if not isinstance(data.get("generated_by", ""), str):
        raise ClassificationFileError(f"{origin}: 'generated_by' must be a string")
    if type(data.get("version")) is not int or data["version"] != SCHEMA_VERSION:  # (not `true`, not 1.0)
        raise ClassificationFileError(
            f"{origin}: unsupported 'version' {data.get('version')!r} (this tool reads {SCHEMA_VERSION})"
        )
    files = data.get("files")
    if not isinstance(files, dict):
        raise ClassificationFileError(f"{origin}: 'files' must be an object")
    for path, entry in files.items():
        where = f"{origin}: files[{path!r}]"
        if not canonical_path(path):
            raise ClassificationFileError(f"{where}: key must be a canonical workspace-relative POSIX path "
                                          "(no './', '//', '..', trailing '/', backslash or control character)")
        _check_common(where, entry, FILE_LABELS, FILE_KEYS)
        if "torch" in entry and not isinstance(entry["torch"], bool):
            raise ClassificationFileError(f"{where}: 'torch' must be true or false")
        tests = entry.get("tests", {})
        if not isinstance(tests, dict):
            raise ClassificationFileError(f"{where}: 'tests' must be an object")
        for key, test in tests.items():
            problem = test_key_problem(path, key)
            if problem:
                raise ClassificationFileError(f"{where}.tests[{key!r}]: {problem}")
            _check_common(f"{where}.tests[{key!r}]", test, TEST_LABELS, TEST_KEYS)
            if WITHOUT_GPUS in test and (test[WITHOUT_GPUS] != CPU or test["label"] == CPU):
                raise ClassificationFileError(f"{where}.tests[{key!r}]: 'without_gpus' must be 'cpu', on a gpu or "
                                              f"unknown test; got {test[WITHOUT_GPUS]!r} on {test['label']!r}")
    return data


def empty() -> dict[str, Any]:
    return {"version": SCHEMA_VERSION, "generated_by": GENERATED_BY, "files": {}}


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"duplicate key {k!r}")
        out[k] = v
    return out


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def loads(text: str, origin: str) -> dict[str, Any]:
    """Parse and validate the text of a classification file. Errors name `origin:line`: merge-conflict markers,
    invalid JSON, duplicate keys (which JSON parsers resolve silently, losing one), NaN/Infinity (which Bazel's
    json.decode refuses), and every schema violation."""
    marker = CONFLICT_MARKER.search(text)
    if marker:
        line = text.count("\n", 0, marker.start()) + 1
        raise ClassificationFileError(f"{origin}:{line}: unresolved merge conflict marker {marker.group(1)!r}; "
                                      "resolve the conflict (or delete the file and run --update)")
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise ClassificationFileError(f"{origin}:{exc.lineno}: not valid JSON: {exc.msg}") from exc
    except ValueError as exc:  # (from the hooks; the position is not known, the key is)
        raise ClassificationFileError(f"{origin}: not valid here: {exc}") from exc
    return validate(data, origin)


def load(path: Path) -> dict[str, Any]:
    """Load and validate; a missing file is an empty classification, any other unreadable one an error."""
    if not path.exists() and not path.is_symlink():
        return empty()
    data, why = read_source(path.parent, path.name, MAX_BYTES)
    if data is None:
        raise ClassificationFileError(f"{path}: cannot read: {why}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ClassificationFileError(f"{path}: not UTF-8 (byte {exc.start})") from exc
    return loads(text, str(path))


def dumps(data: Mapping[str, Any]) -> str:
    """The canonical text: sorted keys, two-space indent, trailing newline (byte-stable)."""
    return pretty_json.dumps(data, ensure_ascii=False) + "\n"  # = json.dumps(indent=2, sort_keys=True), faster


def write_atomic(path: Path, text: str) -> None:
    """Write via a temporary file in the same directory and rename: never half-written."""
    write_text_atomic(path, text)


STALE_TEMPORARY_S = 600


def sweep_stale_temporaries(path: Path, now: float | None = None) -> list[Path]:
    """Remove the temporary files a killed writer of `path` left (`.<name>.*.tmp` beside it, untouched for
    STALE_TEMPORARY_S: no live writer takes that long); returns what was removed."""
    now = time.time() if now is None else now
    removed = []
    try:
        candidates = list(path.parent.glob(f".{glob.escape(path.name)}.*.tmp"))
    except OSError:
        return removed
    for tmp in candidates:
        try:
            st = tmp.lstat()
            if stat.S_ISREG(st.st_mode) and now - st.st_mtime > STALE_TEMPORARY_S:
                tmp.unlink()
                removed.append(tmp)
        except OSError:
            pass
    return removed


def save(path: Path, data: Mapping[str, Any]) -> None:
    """Validate, then write atomically; invalid data never reaches the disk."""
    validate(dict(data), str(path))
    write_atomic(path, dumps(data))
