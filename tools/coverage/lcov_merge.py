"""Bazel's coverage merge steps for lcov tracefiles, usable where Bazel's own Java tool is not.

`bazel coverage` runs two tools after the tests: the *output generator* merges the tracefiles a
test left in `$COVERAGE_DIR` into its `coverage.dat`, and, with `--combined_report=lcov`, the
*report generator* merges every test's `coverage.dat` into `bazel-out/_coverage/_coverage_report.dat`.
Both default to `@remote_coverage_tools`, a Java archive Bazel downloads from mirror.bazel.build;
machines without that download cannot run `bazel coverage` at all. This module implements the same
two command lines for lcov input (all that Python tests produce), so `.bazelrc` can point
`--coverage_output_generator` / `--coverage_report_generator` here. No maintained Python library
merges lcov files (coverage.py writes lcov but merges only its own data files), hence this one.

Merging sums execution counts per source file: lines (`DA`), branches (`BRDA`, `-` = never reached)
and functions (`FN`/`FNDA`); the summary lines (`LF`/`LH`, `BRF`/`BRH`, `FNF`/`FNH`) are recomputed.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tools.atomic_write import write_text_atomic


class LcovError(ValueError):
    """A tracefile line this merger cannot read; the message names file and line."""


@dataclass
class SourceCoverage:
    """Counts of one source file (`SF:`), keyed so that merging two files is a sum."""

    lines: dict[int, int] = field(default_factory=dict)
    branches: dict[tuple[int, str, str], int | None] = field(default_factory=dict)
    functions: dict[str, str] = field(default_factory=dict)  # name -> "line" or "start,end"
    function_hits: dict[str, int] = field(default_factory=dict)


def _add_branch(current: int | None, taken: int | None) -> int | None:
    if current is None:
        return taken
    return current if taken is None else current + taken


def parse(text: str, origin: str) -> dict[str, SourceCoverage]:
    """Records of one tracefile; `origin` names it in errors."""
    files: dict[str, SourceCoverage] = {}
    current: SourceCoverage | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("TN:"):
            continue
        tag, _, value = line.partition(":")
        try:
            if tag == "SF":
                current = files.setdefault(value, SourceCoverage())
            elif line == "end_of_record":
                current = None
            elif current is None:
                raise LcovError(f"{origin}:{number}: {tag!r} outside an SF: record")
            elif tag == "DA":
                fields = value.split(",")
                at = int(fields[0])
                current.lines[at] = current.lines.get(at, 0) + int(fields[1])
            elif tag == "BRDA":
                at, block, branch, taken = value.split(",")
                key = (int(at), block, branch)
                count = None if taken == "-" else int(taken)
                current.branches[key] = _add_branch(current.branches.get(key), count)
            elif tag == "FN":
                where, _, name = value.rpartition(",")
                current.functions.setdefault(name, where)
            elif tag == "FNDA":
                count, _, name = value.partition(",")
                current.function_hits[name] = current.function_hits.get(name, 0) + int(count)
            elif tag in ("LF", "LH", "BRF", "BRH", "FNF", "FNH"):
                continue  # recomputed on output
            else:
                raise LcovError(f"{origin}:{number}: unknown lcov line {line!r}")
        except (ValueError, IndexError) as error:
            if isinstance(error, LcovError):
                raise
            raise LcovError(f"{origin}:{number}: malformed lcov line {line!r}") from error
    return files


def merge(reports: Iterable[dict[str, SourceCoverage]]) -> dict[str, SourceCoverage]:
    """The sum of several parsed tracefiles."""
    total: dict[str, SourceCoverage] = {}
    for report in reports:
        for path, source in report.items():
            into = total.setdefault(path, SourceCoverage())
            for at, hits in source.lines.items():
                into.lines[at] = into.lines.get(at, 0) + hits
            for key, taken in source.branches.items():
                into.branches[key] = _add_branch(into.branches.get(key), taken)
            for name, where in source.functions.items():
                into.functions.setdefault(name, where)
            for name, hits in source.function_hits.items():
                into.function_hits[name] = into.function_hits.get(name, 0) + hits
    return total


def keep_sources(
    files: dict[str, SourceCoverage], manifest: set[str] | None, filters: Sequence[str]
) -> dict[str, SourceCoverage]:
    """Files in the instrumented-files manifest (when given) and matching no filter regex."""
    patterns = [re.compile(pattern) for pattern in filters]
    return {
        path: source
        for path, source in files.items()
        if (manifest is None or path in manifest) and not any(p.fullmatch(path) for p in patterns)
    }


def render(files: dict[str, SourceCoverage]) -> str:
    """Deterministic lcov text: files, functions, branches and lines sorted."""
    out: list[str] = []
    for path in sorted(files):
        source = files[path]
        out.append(f"SF:{path}")
        for name, where in sorted(source.functions.items(), key=lambda item: (item[1], item[0])):
            out.append(f"FN:{where},{name}")
        for name in sorted(source.function_hits):
            out.append(f"FNDA:{source.function_hits[name]},{name}")
        if source.functions:
            out.append(f"FNF:{len(source.functions)}")
            out.append(f"FNH:{sum(1 for name in source.functions if source.function_hits.get(name, 0) > 0)}")
        for (at, block, branch), taken in sorted(source.branches.items(), key=lambda item: (item[0][0], item[0][1:])):
            out.append(f"BRDA:{at},{block},{branch},{'-' if taken is None else taken}")
        if source.branches:
            out.append(f"BRF:{len(source.branches)}")
            out.append(f"BRH:{sum(1 for taken in source.branches.values() if taken)}")
        for at in sorted(source.lines):
            out.append(f"DA:{at},{source.lines[at]}")
        out.append(f"LH:{sum(1 for hits in source.lines.values() if hits > 0)}")
        out.append(f"LF:{len(source.lines)}")
        out.append("end_of_record")
    return "\n".join(out) + "\n" if out else ""


def read_manifest(path: Path) -> set[str]:
    """The instrumented source files Bazel lists in `$COVERAGE_MANIFEST`, one per line."""
    return {line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()}


def tracefiles(directory: Path, output: Path) -> list[Path]:
    """The lcov tracefiles (`*.dat`) a test left under its coverage directory."""
    return sorted(p for p in directory.rglob("*.dat") if p.is_file() and p.resolve() != output.resolve())


def arguments(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--coverage_dir", type=Path, help="output generator: merge the *.dat files under DIR")
    parser.add_argument("--reports_file", type=Path, help="report generator: FILE lists one coverage.dat per line")
    parser.add_argument("--output_file", type=Path, required=True)
    parser.add_argument("--filter_sources", action="append", default=[], help="drop sources matching REGEX")
    parser.add_argument("--source_file_manifest", type=Path, help="keep only the sources listed in FILE")
    parser.add_argument("--sources_to_replace_file", type=Path, help="not supported: fails when given")
    args = parser.parse_args(argv)
    if (args.coverage_dir is None) == (args.reports_file is None):
        parser.error("give exactly one of --coverage_dir (per test) and --reports_file (combined report)")
    if args.sources_to_replace_file is not None:
        parser.error("--sources_to_replace_file is not supported (Python coverage never needs it)")
    return args


def main(argv: Sequence[str]) -> int:
    args = arguments(argv)
    if args.coverage_dir is not None:
        inputs = tracefiles(args.coverage_dir, args.output_file)
    else:
        listed = args.reports_file.read_text(encoding="utf-8").splitlines()
        inputs = [Path(line.strip()) for line in listed if line.strip()]
    manifest = read_manifest(args.source_file_manifest) if args.source_file_manifest else None
    try:
        merged = merge(parse(path.read_text(encoding="utf-8"), str(path)) for path in inputs)
    except (LcovError, OSError) as error:
        print(f"lcov_merge: {error}", file=sys.stderr)
        return 1
    write_text_atomic(args.output_file, render(keep_sources(merged, manifest, args.filter_sources)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
