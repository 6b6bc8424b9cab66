"""Compare the CPU and cu124 lock files and fail when a directly imported test tool differs.

Why: CPU runners test against requirements_lock_cpu.txt and GPU runners against
requirements_lock_cu124.txt. torch itself must differ (cu124 builds end at 2.6), and its transitive
dependencies may follow, but if pytest, pytest-xdist, pytest-torch, pyyaml or coverage differed, the same test
would run under a different harness on the two kinds of runner and a GPU-only failure could be a
harness difference. Every version difference is reported; only those in GUARDED fail the check.

    python3 tools/locks/compare.py [--cpu PATH] [--gpu PATH]

Exit status: 0 when the locks agree on GUARDED, 1 when they do not, 2 when a lock cannot be parsed.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
CPU_LOCK = "requirements_lock_cpu.txt"
GPU_LOCK = "requirements_lock_cu124.txt"

# Packages our own tools or tests import directly: they must be identical in both locks.
GUARDED = frozenset({"pytest", "pytest-xdist", "pytest-torch", "pyyaml", "coverage"})
# Packages expected to differ between the locks: reported, never a failure.
EXPECTED_TO_DIFFER = frozenset({"torch"})

_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
_REQUIREMENT = re.compile(rf"^(?P<name>{_NAME})\s*(?:\[[^\]]*\])?\s*==\s*(?P<version>[^\s;\\]+)\s*(?:;[^\\]*)?$")
_HASH = re.compile(r"^--hash=sha256:(?P<hex>[0-9a-f]{64})$")


class LockParseError(ValueError):
    """A lock file line that is not a pinned, hashed requirement; the message names file:line."""


def normalize(name: str) -> str:
    """PEP 503 normalised project name, so `PyYAML`, `pyyaml` and `py_yaml` compare equal."""
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass(frozen=True)
class Pin:
    """One requirement of a lock: normalised name, exact version, sha256 hashes, where it is."""

    name: str
    version: str
    hashes: frozenset[str]
    location: str


def _logical_lines(text: str) -> Iterable[tuple[int, str]]:
    """Join backslash continuations and drop comments; yield (first physical line number, line)."""
    start = 0
    parts: list[str] = []
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if line.startswith("#") or (not line and not parts):
            continue
        if " #" in line:
            line = line.split(" #", 1)[0].rstrip()
        if not parts:
            start = lineno
        if line.endswith("\\"):
            parts.append(line[:-1].strip())
            continue
        parts.append(line)
        yield start, " ".join(p for p in parts if p)
        parts = []
    if parts:
        yield start, " ".join(p for p in parts if p)


def parse_lock(text: str, filename: str) -> dict[str, Pin]:
    """Parse a pip-compile style lock; every requirement must be `name==version` with a sha256 hash."""
    pins: dict[str, Pin] = {}
    for lineno, line in _logical_lines(text):
        location = f"{filename}:{lineno}"
        if line.startswith("-"):
            continue  # pip options such as --extra-index-url
        words = line.split()
        hashes = [w for w in words if w.startswith("--hash")]
        spec = " ".join(w for w in words if not w.startswith("--"))
        match = _REQUIREMENT.match(spec)
        if match is None:
            raise LockParseError(f"{location}: not a pinned requirement (name==version): {spec!r}")
        bad = [h for h in hashes if _HASH.match(h) is None]
        if bad:
            raise LockParseError(f"{location}: {match['name']}: not a sha256 hash: {bad[0]!r}")
        if not hashes:
            raise LockParseError(
                f"{location}: {match['name']}=={match['version']} has no --hash=sha256: line; "
                "pip --require-hashes would refuse it"
            )
        name = normalize(match["name"])
        if name in pins:
            raise LockParseError(f"{location}: {name} is pinned twice (first at {pins[name].location})")
        digests = frozenset(h.split(":", 1)[1] for h in hashes)
        pins[name] = Pin(name, match["version"], digests, location)
    return pins


def load_lock(path: Path) -> dict[str, Pin]:
    """Read and parse a lock file, naming it relative to the repository root when possible."""
    try:
        shown = str(path.resolve().relative_to(REPO_ROOT))
    except ValueError:
        shown = str(path)
    return parse_lock(path.read_text(encoding="utf-8"), shown)


@dataclass(frozen=True)
class Difference:
    """A package whose version differs between the locks (None: absent from that lock)."""

    name: str
    cpu: str | None
    gpu: str | None

    def describe(self) -> str:
        """One report line, e.g. `torch: 2.13.0+cpu (cpu) != 2.6.0 (cu124)`."""
        return f"{self.name}: {self.cpu or 'absent'} (cpu) != {self.gpu or 'absent'} (cu124)"


@dataclass
class Comparison:
    """Every difference between the locks, split into failures (GUARDED) and the rest."""

    differences: list[Difference] = field(default_factory=list)
    failures: list[Difference] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when no guarded package differs."""
        return not self.failures


def compare(cpu: Mapping[str, Pin], gpu: Mapping[str, Pin], guarded: Iterable[str] = GUARDED) -> Comparison:
    """Report every version difference; a difference in a guarded package is a failure."""
    guard = {normalize(name) for name in guarded}
    result = Comparison()
    for name in sorted(set(cpu) | set(gpu) | guard):
        a = cpu[name].version if name in cpu else None
        b = gpu[name].version if name in gpu else None
        if a == b and a is not None:
            continue
        diff = Difference(name, a, b)
        if a != b:
            result.differences.append(diff)
        if name in guard:
            result.failures.append(diff)
    return result


def format_report(result: Comparison) -> str:
    """Human-readable report: every difference, marked by whether it is allowed."""
    lines = [f"{len(result.differences)} version difference(s) between {CPU_LOCK} and {GPU_LOCK}:"]
    failing = {d.name for d in result.failures}
    for diff in result.differences:
        if diff.name in failing:
            tag = "FAIL (imported directly by our tools/tests; must be identical)"
        elif diff.name in EXPECTED_TO_DIFFER:
            tag = "expected"
        else:
            tag = "allowed"
        lines.append(f"  {diff.describe()}  [{tag}]")
    for diff in result.failures:
        if diff not in result.differences:  # missing from both locks
            lines.append(f"  {diff.name}: absent from both locks  [FAIL (must be pinned)]")
    lines.append("OK" if result.ok else f"FAILED: {', '.join(d.name for d in result.failures)}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point; see the module docstring for the exit status."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--cpu", type=Path, default=REPO_ROOT / CPU_LOCK)
    parser.add_argument("--gpu", type=Path, default=REPO_ROOT / GPU_LOCK)
    args = parser.parse_args(argv)
    try:
        result = compare(load_lock(args.cpu), load_lock(args.gpu))
    except (LockParseError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(format_report(result))
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main())
