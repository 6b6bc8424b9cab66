"""Test durations from previous runs (`bazel-testlogs/**/test.xml`), else from Bazel `size`.

History makes the planner's makespan estimate real; the size table keeps it usable on a first run.
The lookup goes label → path (never path → label), since a target name may itself contain '/'.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from tools.bazel_paths import testlogs_dir

# Bazel's default timeout per size (seconds) and per explicit timeout name.
SIZE_TIMEOUT_S = {"small": 60, "medium": 300, "large": 900, "enormous": 3600}
TIMEOUT_S = {"short": 60, "moderate": 300, "long": 900, "eternal": 3600}
# Duration guess when there is no history: a quarter of the size's default timeout.
SIZE_ESTIMATE_S = {size: timeout / 4 for size, timeout in SIZE_TIMEOUT_S.items()}

# Bazel names per-shard / per-run log directories shard_1_of_4, run_2_of_3 or shard_1_of_4_run_2_of_3.
_SUBDIR_RE = re.compile(r"^(?P<shard>shard_\d+_of_\d+)?_?(?P<run>run_\d+_of_\d+)?$")


@dataclass(frozen=True)
class Duration:
    """An estimated wall time and where it came from (`history` or `size`)."""

    seconds: float
    source: str


def timeout_seconds(size: str, timeout: str | None) -> int:
    """Bazel's timeout: the explicit `timeout` if set, else the size's default."""
    if timeout is not None:
        return TIMEOUT_S[timeout]
    return SIZE_TIMEOUT_S[size]


label_dir = testlogs_dir  # bazel-testlogs/[external/REPO/]PKG/NAME

def junit_seconds(path: Path) -> float | None:
    """Total time of one JUnit XML file, or None if unreadable (history is advisory).

    A run in which every test case was skipped (a GPU test run on a machine without the GPU) or
    that ran no test case says nothing about the test's duration: None.
    """
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError):
        return None
    cases = list(root.iter("testcase"))
    if not cases or all(case.find("skipped") is not None for case in cases):
        return None

    def attr_time(elem: ET.Element) -> float | None:
        raw = elem.get("time")
        try:
            return float(raw) if raw is not None else None
        except ValueError:
            return None

    own = attr_time(root)
    if own is not None:
        return own
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    total = 0.0
    found = False
    for suite in suites:
        value = attr_time(suite)
        if value is None:
            cases = [attr_time(c) for c in suite.iter("testcase")]
            known = [c for c in cases if c is not None]
            if not known:
                continue
            value = sum(known)
        total += value
        found = True
    return total if found else None


def history_seconds(testlogs: Path, label: str) -> float | None:
    """Wall time of the last run of `label`: shards summed, repeated runs take the slowest."""
    base = label_dir(testlogs, label)
    if not base.is_dir():
        return None
    per_shard: dict[str, float] = {}

    def record(key: str, xml: Path) -> None:
        seconds = junit_seconds(xml)
        if seconds is not None:
            per_shard[key] = max(per_shard.get(key, 0.0), seconds)

    if (base / "test.xml").is_file():
        record("", base / "test.xml")
    for child in sorted(base.iterdir()):
        match = _SUBDIR_RE.match(child.name)
        if child.is_dir() and match and child.name and (child / "test.xml").is_file():
            record(match.group("shard") or "", child / "test.xml")
    if not per_shard:
        return None
    return sum(per_shard.values())


def history_gpu_util(testlogs: Path, label: str) -> float | None:
    """GPU utilisation (0..1) of the last GPU run of `label`: the busiest GPU's mean over the run,
    from the `torch-gpu-util*.json` the pytest-torch glue writes to `test.outputs/` (of any shard or
    run; the highest wins, since the planner must not under-reserve). None when never measured;
    unreadable files are skipped (history is advisory)."""
    base = label_dir(testlogs, label)
    if not base.is_dir():
        return None
    found: list[float] = []
    dirs = [base] + [c for c in sorted(base.iterdir()) if c.is_dir() and c.name and _SUBDIR_RE.match(c.name)]
    for directory in dirs:
        for path in sorted((directory / "test.outputs").glob("torch-gpu-util*.json")):
            try:
                means = json.loads(path.read_text(encoding="utf-8"))["mean_util"]
                values = [float(v) for v in means]
            except (OSError, ValueError, KeyError, TypeError):
                continue
            if values and all(0 <= v <= 1 for v in values):
                found.append(max(values))
    return round(max(found), 4) if found else None


def estimate(label: str, size: str, shard_count: int, testlogs: Path | None) -> Duration:
    """History when available, else the size table (times shards, which share one reservation)."""
    if testlogs is not None:
        seconds = history_seconds(testlogs, label)
        if seconds is not None:
            return Duration(round(seconds, 3), "history")
    return Duration(SIZE_ESTIMATE_S[size] * max(shard_count, 1), "size")
