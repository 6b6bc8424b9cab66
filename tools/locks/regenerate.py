"""Regenerate the pinned, hashed lock files from their `.in` inputs (see docs/locks.md).

Why not pip-compile: pip-tools is not installed on the air-gapped machines this project targets, and the
cu124 lock must be resolved without downloading gigabytes of CUDA wheels. pip itself can resolve from
metadata only (`pip install --dry-run --report`), and its report names every chosen file with its sha256.
This script turns that report into a pip-compile-style lock (`--hash` lines, `# via` comments), adds the
hashes of every other file of the same version that the indexes list (like `pip-compile
--generate-hashes`), and writes it atomically with deterministic, sorted output so that re-running it on
unchanged inputs gives a byte-identical file.

    python3 tools/locks/regenerate.py [cpu|cu124 ...] [--find-links DIR] [--check]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import difflib
import html.parser
import json
import os
import ssl
import subprocess
import sys
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion, Version

REPO_ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class LockSpec:
    """One lock: its `.in` input and its output, both relative to the repository root."""

    name: str
    infile: str
    lockfile: str


LOCKS: dict[str, LockSpec] = {
    "cpu": LockSpec("cpu", "requirements_cpu.in", "requirements_lock_cpu.txt"),
    "cu124": LockSpec("cu124", "requirements_cu124.in", "requirements_lock_cu124.txt"),
}

# The target every lock is resolved for, independent of the machine that runs this script: CPython 3.11
# on x86_64 Linux. torch 2.13 itself needs glibc >= 2.28, so wheels tagged up to manylinux_2_28 run
# wherever torch does.
PYTHON_VERSION = "3.11"
ABI = "cp311"
MAX_GLIBC_MINOR = 28

# pip options in a `.in` file that are copied into the lock, as pip-compile does; --find-links is not
# (it names a directory of this machine only).
EMITTED_OPTIONS = ("--index-url", "--extra-index-url")

# PIP_* variables that describe the network, not the resolution; all others are dropped so that a local
# constraint file, find-links directory or mirror cannot change what gets locked.
KEPT_PIP_ENV = ("PIP_CERT", "PIP_CLIENT_CERT", "PIP_PROXY", "PIP_RETRIES", "PIP_DEFAULT_TIMEOUT")

SIMPLE_JSON = "application/vnd.pypi.simple.v1+json"


class LockError(RuntimeError):
    """Resolution or validation failed; the message says which lock and why."""


def target_platforms() -> list[str]:
    """Every manylinux tag the target accepts, best first (pip does not expand `--platform` itself)."""
    platforms: list[str] = []
    legacy = {17: "manylinux2014_x86_64", 12: "manylinux2010_x86_64", 5: "manylinux1_x86_64"}
    for minor in range(MAX_GLIBC_MINOR, 4, -1):
        platforms.append(f"manylinux_2_{minor}_x86_64")
        if minor in legacy:
            platforms.append(legacy[minor])
    return platforms


def pip_command(infile: Path, report: Path, target: Path, find_links: Sequence[str]) -> list[str]:
    """The exact pip invocation that resolves `infile` from metadata only and writes a JSON report."""
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--dry-run",
        "--ignore-installed",
        "--quiet",
        "--report",
        str(report),
        "--target",
        str(target),
        "--only-binary=:all:",
        "--python-version",
        PYTHON_VERSION,
        "--implementation",
        "cp",
        "--abi",
        ABI,
    ]
    for platform in target_platforms():
        cmd += ["--platform", platform]
    for link in find_links:
        cmd += ["--find-links", link]
    cmd += ["-r", str(infile)]
    return cmd


def pip_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The environment for pip: no config files and no resolution-changing PIP_* variables."""
    env = {k: v for k, v in environ.items() if not k.startswith("PIP_") or k in KEPT_PIP_ENV}
    env["PIP_CONFIG_FILE"] = os.devnull
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


@dataclass
class InFile:
    """The parts of a `.in` file that the lock repeats: index options and the direct requirements."""

    options: list[str] = field(default_factory=list)
    requirements: list[Requirement] = field(default_factory=list)


def parse_in(text: str, filename: str) -> InFile:
    """Parse a `.in` file; only plain requirements and index options are supported, to keep it simple."""
    result = InFile()
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("-"):
            option = line.split()[0].split("=", 1)[0]
            if option in EMITTED_OPTIONS:
                result.options.append(" ".join(line.replace("=", " ", 1).split()))
            continue
        try:
            result.requirements.append(Requirement(line))
        except InvalidRequirement as exc:
            raise LockError(f"{filename}:{lineno}: invalid requirement {line!r}: {exc}") from exc
    return result


@dataclass
class Locked:
    """One pinned package of a lock."""

    name: str
    version: str
    hashes: set[str]
    via: set[str] = field(default_factory=set)


def _marker_ok(req: Requirement, environment: Mapping[str, str], extras: Iterable[str]) -> bool:
    if req.marker is None:
        return True
    return any(req.marker.evaluate({**environment, "extra": extra}) for extra in ("", *extras))


def locked_from_report(report: Mapping[str, Any], infile: InFile, in_name: str) -> dict[str, Locked]:
    """Build the lock's entries (name, version, chosen file's sha256, `# via`) from pip's report."""
    environment: dict[str, str] = dict(report.get("environment", {}))
    entries: dict[str, Locked] = {}
    requires: dict[str, list[Requirement]] = {}
    for item in report["install"]:
        meta = item["metadata"]
        name = canonicalize_name(meta["name"])
        archive = item["download_info"].get("archive_info", {})
        sha = archive.get("hashes", {}).get("sha256")
        if sha is None and archive.get("hash", "").startswith("sha256="):
            sha = archive["hash"].split("=", 1)[1]
        if sha is None:
            raise LockError(f"pip's report has no sha256 for {name} ({item['download_info']['url']})")
        entries[name] = Locked(name, meta["version"], {sha})
        requires[name] = [Requirement(r) for r in meta.get("requires_dist", [])]

    extras: dict[str, set[str]] = {name: set() for name in entries}
    for req in infile.requirements:
        name = canonicalize_name(req.name)
        if name not in entries:
            raise LockError(f"{in_name}: {req.name} is not in pip's resolution")
        if _marker_ok(req, environment, ()):
            entries[name].via.add(f"-r {in_name}")
            extras[name] |= set(req.extras)

    changed = True
    while changed:  # extras requested by one package can enable further requirements of another
        changed = False
        for parent, reqs in requires.items():
            for req in reqs:
                child = canonicalize_name(req.name)
                if child not in entries or not _marker_ok(req, environment, extras[parent]):
                    continue
                if parent not in entries[child].via or not set(req.extras) <= extras[child]:
                    entries[child].via.add(parent)
                    extras[child] |= set(req.extras)
                    changed = True
    return entries


class _AnchorParser(html.parser.HTMLParser):
    """Collect (filename, href) pairs from a PEP 503 simple page."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[tuple[str, str]] = []
        self._href: str | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self._href = dict(attrs).get("href") or ""
            self._text = []

    def handle_data(self, data: str) -> None:
        if self._href is not None:
            self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "a" and self._href is not None:
            self.links.append(("".join(self._text).strip(), self._href))
            self._href = None


def _file_version(filename: str) -> Version | None:
    try:
        if filename.endswith(".whl"):
            return parse_wheel_filename(filename)[1]
        return parse_sdist_filename(filename)[1]
    except (InvalidWheelFilename, InvalidSdistFilename, InvalidVersion):
        return None


def index_hashes(index_url: str, name: str, version: str, context: ssl.SSLContext) -> set[str]:
    """sha256 of every file of `name==version` that a simple index (PEP 691 JSON or PEP 503) lists."""
    url = f"{index_url.rstrip('/')}/{name}/"
    request = urllib.request.Request(url, headers={"Accept": f"{SIMPLE_JSON}, text/html;q=0.1"})
    with urllib.request.urlopen(request, timeout=60, context=context) as response:
        kind = response.headers.get_content_type()
        body = response.read().decode("utf-8")
    files: list[tuple[str, str | None]] = []
    if kind == SIMPLE_JSON:
        for entry in json.loads(body)["files"]:
            files.append((entry["filename"], entry.get("hashes", {}).get("sha256")))
    else:
        parser = _AnchorParser()
        parser.feed(body)
        for text, href in parser.links:
            fragment = urllib.parse.urlsplit(href).fragment
            sha = fragment.split("=", 1)[1] if fragment.startswith("sha256=") else None
            files.append((text or urllib.parse.unquote(href.split("#")[0].rsplit("/", 1)[-1]), sha))
    wanted = Version(version)
    return {sha for filename, sha in files if sha and _file_version(filename) == wanted}


def default_index_url() -> str:
    """pip's own default index, read from pip so that this repository names no index host itself."""
    from pip._internal.models.index import PyPI  # pip is only needed here

    return str(PyPI.simple_url)


def add_index_hashes(entries: Mapping[str, Locked], index_urls: Sequence[str]) -> list[str]:
    """Add every listed file's hash of each pinned version; return warnings for unreachable indexes."""
    context = ssl.create_default_context(cafile=os.environ.get("PIP_CERT") or None)
    warnings: set[str] = set()

    def fetch(entry: Locked) -> set[str]:
        found: set[str] = set()
        for index in index_urls:
            try:
                found |= index_hashes(index, entry.name, entry.version, context)
            except urllib.error.HTTPError as exc:
                if exc.code != 404:
                    warnings.add(f"{index}: HTTP {exc.code} for {entry.name}")
            except (urllib.error.URLError, OSError) as exc:
                warnings.add(f"{index}: unreachable ({getattr(exc, 'reason', exc)})")
        return found

    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        for entry, found in zip(entries.values(), pool.map(fetch, entries.values()), strict=True):
            entry.hashes |= found
    return sorted(warnings)


def render(spec: LockSpec, infile: InFile, entries: Mapping[str, Locked]) -> str:
    """The lock file's text: pip-compile layout, sorted by normalised name, hashes sorted."""
    lines = [
        "#",
        f"# This file is autogenerated by tools/locks/regenerate.py from {spec.infile}; do not edit.",
        "# To update, edit the .in file and run (see docs/locks.md):",
        "#",
        f"#    python3 tools/locks/regenerate.py {spec.name}",
        "#",
        f"# Target: CPython {PYTHON_VERSION}, x86_64 Linux (manylinux_2_{MAX_GLIBC_MINOR} and older).",
        "#",
        *infile.options,
        "",
    ]
    for name in sorted(entries):
        entry = entries[name]
        hashes = sorted(entry.hashes)
        lines.append(f"{name}=={entry.version} \\")
        for i, sha in enumerate(hashes):
            lines.append(f"    --hash=sha256:{sha}" + (" \\" if i < len(hashes) - 1 else ""))
        via = sorted(entry.via, key=lambda v: (not v.startswith("-r "), v))
        if len(via) == 1:
            lines.append(f"    # via {via[0]}")
        elif via:
            lines.append("    # via")
            lines.extend(f"    #   {v}" for v in via)
    return "\n".join(lines) + "\n"


def resolve(spec: LockSpec, find_links: Sequence[str], root: Path = REPO_ROOT) -> str:
    """Resolve one lock with pip (metadata only) and return the lock file's text."""
    in_path = root / spec.infile
    infile = parse_in(in_path.read_text(encoding="utf-8"), spec.infile)
    with tempfile.TemporaryDirectory(prefix=f"lock-{spec.name}-") as tmp:
        report_path = Path(tmp) / "report.json"
        cmd = pip_command(in_path, report_path, Path(tmp) / "target", find_links)
        print("+", " ".join(cmd), file=sys.stderr)
        proc = subprocess.run(cmd, env=pip_env(os.environ), cwd=root, check=False)
        if proc.returncode != 0:
            raise LockError(f"{spec.infile}: pip could not resolve it (exit {proc.returncode})")
        report = json.loads(report_path.read_text(encoding="utf-8"))
    entries = locked_from_report(report, infile, spec.infile)
    extra = [opt.split()[1] for opt in infile.options]
    for warning in add_index_hashes(entries, [default_index_url(), *extra]):
        print(f"warning: {warning}; files listed only there are not hashed", file=sys.stderr)
    return render(spec, infile, entries)


def write_atomically(path: Path, text: str) -> None:
    """Write via a temporary file in the same directory and rename, so readers never see half a lock;
    tools/atomic_write.py also removes what a killed earlier run left behind."""
    from tools.atomic_write import write_text_atomic  # here: a script run puts the root on sys.path first

    write_text_atomic(path, text)


def main(argv: Sequence[str] | None = None) -> int:
    """Regenerate (or with --check, verify) the selected locks; exit 1 if a --check finds a difference."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("locks", nargs="*", metavar="LOCK", help=f"any of {', '.join(LOCKS)}; default: all")
    parser.add_argument(
        "--find-links",
        action="append",
        default=[],
        help="extra local wheel directory for pip (not written into the lock)",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="do not write; exit 1 and print a diff if a committed lock is stale",
    )
    args = parser.parse_args(argv)
    unknown = [key for key in args.locks if key not in LOCKS]
    if unknown:
        parser.error(f"unknown lock(s) {', '.join(unknown)}; choose from {', '.join(LOCKS)}")
    stale = False
    for key in args.locks or list(LOCKS):
        spec = LOCKS[key]
        try:
            text = resolve(spec, args.find_links)
        except LockError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        path = REPO_ROOT / spec.lockfile
        if args.check:
            old = path.read_text(encoding="utf-8") if path.exists() else ""
            if old != text:
                stale = True
                sys.stdout.writelines(
                    difflib.unified_diff(
                        old.splitlines(keepends=True),
                        text.splitlines(keepends=True),
                        f"{spec.lockfile} (committed)",
                        f"{spec.lockfile} (regenerated)",
                    )
                )
            else:
                print(f"{spec.lockfile}: up to date", file=sys.stderr)
        else:
            write_atomically(path, text)
            print(f"wrote {spec.lockfile} ({text.count('==')} packages)", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.path.insert(0, str(REPO_ROOT))  # `python3 tools/locks/regenerate.py`: tools.* importable
    sys.exit(main())
