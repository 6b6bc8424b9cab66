"""Command line of the runtime feedback loop (docs/feedback.md).

    python3 -m tools.feedback --from-results PATH... [--classification FILE] [--summary-md FILE]
    python3 -m tools.feedback --vram-from PATH... [--headroom 1.2]
    python3 -m tools.feedback --write-markers [--root DIR] [--paths P...]
    python3 -m tools.feedback converge [--targets //...] [--max-iterations N] [-- BAZEL_ARGS...]

`bazel run //tools:classify -- --from-results ...` / `--vram-from` / `--write-markers` land here too,
and `bazel run //tools:converge` runs `converge`.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tools.bazel_paths import workspace_root
from tools.contract import classification as cf

FLAGS = ("--from-results", "--vram-from", "--write-markers")  # the classify command line's flags that land here


def wants_feedback(argv: Sequence[str]) -> bool:
    """Whether a `classify` command line is one of ours (the dispatch in tools/classify/cli.py)."""
    return any(a.split("=", 1)[0] in FLAGS for a in argv) or (bool(argv) and argv[0] == "converge")


def _root(value: str | None) -> Path:
    """--root, else $BUILD_WORKSPACE_DIRECTORY (bazel run), else the current directory."""
    return workspace_root(value)


def _user_path(value: str) -> Path:
    """Relative paths are the user's: under `bazel run` that is $BUILD_WORKING_DIRECTORY, not the runfiles."""
    path = Path(value)
    if not path.is_absolute() and os.environ.get("BUILD_WORKING_DIRECTORY"):
        path = Path(os.environ["BUILD_WORKING_DIRECTORY"]) / path
    return path


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--root", help="workspace root (default: $BUILD_WORKSPACE_DIRECTORY or cwd)")
    p.add_argument("--classification", help="classification file (default: <root>/torch_classification.json)")
    p.add_argument("--summary-md", help="write the Markdown summary (a PR body) here; '-' for stdout")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="feedback", description="Correct torch_classification.json from test runs.")
    _common(p)
    p.add_argument("--from-results", nargs="+", metavar="PATH", default=[],
                   help="bazel-testlogs dirs, test.xml/test.log files, or pytest JUnit XML files/dirs of a CPU run")
    p.add_argument("--vram-from", nargs="+", metavar="PATH", default=[],
                   help="torch-gpu-memory*.json files or dirs (bazel-testlogs) of a GPU run")
    p.add_argument("--headroom", type=float, default=1.2, help="VRAM need = ceil(peak x headroom / 1024) GiB")
    p.add_argument("--write-markers", action="store_true", help="add @pytest.mark.cpu/gpu to the test sources")
    p.add_argument("--paths", nargs="*", default=[], help="--write-markers: only these files/directories")
    p.add_argument("--dry-run", action="store_true", help="report, but do not write the classification file")
    return p


def converge_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="feedback converge",
                                description="Run the CPU tests, reclassify, repeat until nothing moves.")
    _common(p)
    p.add_argument("--targets", nargs="+", default=["//..."], help="bazel target patterns (default //...)")
    p.add_argument("--max-iterations", type=int, default=5, help="at most this many bazel test runs")
    p.add_argument("--bazel", default=os.environ.get("BAZEL", "bazel"), help="bazel binary (default: $BAZEL or bazel)")
    p.add_argument("bazel_args", nargs="*", help="extra `bazel test` arguments (after --)")
    return p


def _write_summary(target: str | None, text: str) -> None:
    if not target:
        return
    if target == "-":
        sys.stdout.write(text)
    else:
        cf.write_atomic(_user_path(target), text)


def _load(path: Path) -> dict[str, Any] | None:
    try:
        return cf.load(path)
    except cf.ClassificationFileError as exc:
        print(f"feedback: {exc}", file=sys.stderr)
        return None


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "converge":
        return _converge(converge_parser().parse_args(argv[1:]))
    args = parser().parse_args(argv)
    if not (args.from_results or args.vram_from or args.write_markers):
        parser().error("nothing to do: give --from-results, --vram-from, --write-markers or `converge`")
    root = _root(args.root)
    path = _user_path(args.classification) if args.classification else root / cf.DEFAULT_FILENAME
    data = _load(path)
    if data is None:
        return 1
    rc = 0
    new = data
    if args.from_results:
        from tools.feedback.reclassify import markdown, reclassify, text_lines
        from tools.feedback.results import read_results

        files = data.get("files", {})
        results = read_results([_user_path(p) for p in args.from_results],
                               lambda p: p in files or (root / p).is_file())
        new, report = reclassify(new, results)
        for line in text_lines(report):
            print(f"feedback: {line}", file=sys.stderr)
        print(f"feedback: moved {report.moved} test(s) to gpu; {len(report.not_cuda)} failure(s) not about CUDA "
              f"left alone", file=sys.stderr)
        _write_summary(args.summary_md, markdown(report))
        if not results.cases and not report.refused:
            print("feedback: no test results found in the given paths", file=sys.stderr)
            rc = 1
    if args.vram_from:
        from tools.feedback import vram

        measurements, problems = vram.read_measurements([_user_path(p) for p in args.vram_from])
        new, vreport = vram.apply_vram(new, measurements, args.headroom)
        vreport.problems += problems
        for line in vram.text_lines(vreport):
            print(f"feedback: {line}", file=sys.stderr)
    if new != data:
        if args.dry_run:
            print(f"feedback: --dry-run: {path} not written", file=sys.stderr)
        else:
            cf.save(path, new)
            print(f"feedback: wrote {path}", file=sys.stderr)
    if args.write_markers:
        from tools.feedback.markers import write_markers

        try:
            mreport = write_markers(root, new, args.paths or None)
        except RuntimeError as exc:
            print(f"feedback: {exc}", file=sys.stderr)
            return 2
        for line in mreport.lines():
            print(f"feedback: {line}", file=sys.stderr)
    return rc


def _converge(args: argparse.Namespace) -> int:
    from tools.feedback.converge import bazel_runner, converge
    from tools.feedback.reclassify import Report, markdown

    root = _root(args.root)
    path = _user_path(args.classification) if args.classification else root / cf.DEFAULT_FILENAME
    bazel = shutil.which(args.bazel) or args.bazel
    report = converge(path, args.targets, bazel_runner(bazel, root), max_iterations=args.max_iterations,
                      workspace=root, extra_args=args.bazel_args)
    print(report.summary(), file=sys.stderr)
    if report.rounds:
        merged = Report()
        for r in report.rounds:
            for name in ("moves", "not_cuda", "manual_kept", "missing", "refused", "problems"):
                getattr(merged, name).extend(getattr(r, name))
        # Failures not about CUDA recur every round: list them once (from the last round).
        merged.not_cuda = report.rounds[-1].not_cuda
        _write_summary(args.summary_md, f"{report.summary()}\n\n{markdown(merged)}")
    return 0 if report.converged else 1
