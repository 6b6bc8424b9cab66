"""Command line: `bazel run //tools:classify -- --update` or `python -m tools.classify --update`."""

from __future__ import annotations

import argparse
import contextlib
import difflib
import os
import signal
import sys
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path

from tools import bazel_paths
from tools.bounded_read import MAX_FILE_BYTES
from tools.classify import report
from tools.classify.cache import default_cache_dir
from tools.classify.merge import kept_unanalysed, merge
from tools.classify.runner import report_text, run
from tools.contract import classification as cf
from tools.feedback import cli as feedback_cli


def workspace_root(args: argparse.Namespace) -> Path:
    """--root, else $BUILD_WORKSPACE_DIRECTORY (bazel run), else the current directory."""
    return bazel_paths.workspace_root(args.root)


def _progress(items: Iterable[str], total: int) -> Iterable[str]:
    """A tqdm bar on an interactive stderr for large trees; silently nothing otherwise."""
    if total < 50 or not sys.stderr.isatty():
        return items
    try:
        from tqdm import tqdm
    except ImportError:
        return items
    return tqdm(items, total=total, unit="file", file=sys.stderr, desc="classify")


@contextlib.contextmanager
def _terminate_as_exit() -> Iterator[None]:
    """SIGTERM during the write raises SystemExit, so the atomic writer removes its temporary file."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, _frame: object) -> None:
        raise SystemExit(128 + signum)

    before = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="classify", description="Statically label torch tests cpu/gpu/unknown.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="What gets analysed: test files (test_*.py, *_test.py) under the `paths` of [tool.torch_classify]\n"
               "in <root>/pyproject.toml (default: the whole root), minus its `exclude` prefixes and minus\n"
               "directories matching pytest's `norecursedirs` (pytest.ini, pyproject.toml, tox.ini or setup.cfg\n"
               "at the root; pytest's defaults otherwise). --paths replaces `paths`. Example:\n"
               "  [tool.torch_classify]\n"
               "  paths = [\"tests\"]\n"
               "  exclude = [\"tests/fixtures\"]")
    p.add_argument("--root", help="directory to analyse (default: $BUILD_WORKSPACE_DIRECTORY or cwd)")
    p.add_argument("--update", action="store_true", help="rewrite the classification file")
    p.add_argument("--check", action="store_true", help="exit 1 when the classification file is stale")
    p.add_argument("--output", help="classification file (default: <root>/torch_classification.json)")
    p.add_argument("--format", choices=("text", "markdown", "json"), default="text")
    p.add_argument("--explain", metavar="NODEID", help="print the evidence chain of a test")
    p.add_argument("--cache-dir", help="cache directory (default: $XDG_CACHE_HOME/rules_torch_test/classify/<hash of "
                   "the root>, ~/.cache/... without XDG_CACHE_HOME; never read from inside the analysed tree unless "
                   "named here)")
    p.add_argument("--no-cache", action="store_true")
    p.add_argument("--max-file-bytes", type=int, default=MAX_FILE_BYTES, metavar="N",
                   help=f"larger Python files are not read: their tests are `unknown` (default {MAX_FILE_BYTES})")
    p.add_argument("--jobs", type=int, metavar="N", help="analysis processes (default: $TORCH_CLASSIFY_JOBS, "
                   "else one per CPU on large trees); the output does not depend on it")
    p.add_argument("--paths", nargs="*", default=[], help="only these files/directories (relative to root); overrides "
                   "[tool.torch_classify] paths")
    return p


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if feedback_cli.wants_feedback(argv):
        # The runtime feedback loop (tools/feedback, docs/feedback.md) shares this command line.
        return feedback_cli.main(list(argv))
    args = parser().parse_args(argv)
    root = workspace_root(args)
    if not root.is_dir():
        print(f"classify: {root}: not a directory", file=sys.stderr)
        return 2
    cache_dir = None if args.no_cache else Path(args.cache_dir).resolve() if args.cache_dir else default_cache_dir(root)
    paths = [os.path.relpath(Path(p).resolve(), root) if os.path.isabs(p) else p for p in args.paths]
    out_path = Path(args.output).resolve() if args.output else root / cf.DEFAULT_FILENAME
    old = cf.empty()
    if args.update or args.check:
        try:
            old = cf.load(out_path)
        except cf.ClassificationFileError as exc:
            # Never write over a file that cannot be read: its manual and runtime labels would be lost.
            print(f"classify: {exc}", file=sys.stderr)
            print(f"classify: {out_path} left unchanged; fix it (or delete it to start afresh) and run again",
                  file=sys.stderr)
            return 1 if args.check else 2
    result = run(root, paths, cache_dir, _progress, workers=args.jobs, max_file_bytes=args.max_file_bytes)
    for p in result.problems:
        print(f"classify: {p.rel}: {p.reason}", file=sys.stderr)
    if args.explain:
        text = report.explain(result.files, args.explain)
        if text is None:
            print(f"classify: no test {args.explain!r} under {root}", file=sys.stderr)
            return 2
        sys.stdout.write(text)
        return 0
    rc = 0
    if args.update or args.check:
        new = merge(result.files, old, paths or None, result.unseen)
        kept = kept_unanalysed(result.files, old)
        for rel, why in kept:
            print(f"classify: {rel}: cannot be analysed ({why}); its previous entry is kept unchanged",
                  file=sys.stderr)
        if args.check and kept:
            print(f"classify: {len(kept)} test file(s) cannot be analysed", file=sys.stderr)
            rc = 1
        if args.update:
            cf.sweep_stale_temporaries(out_path)
            with _terminate_as_exit():
                cf.save(out_path, new)
            print(f"classify: wrote {out_path}", file=sys.stderr)
        else:
            before, after = cf.dumps(old), cf.dumps(new)
            if before != after:
                diff = difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                            f"{out_path.name} (checked in)", f"{out_path.name} (fresh analysis)")
                sys.stdout.writelines(diff)
                print(f"classify: {out_path} is stale; run `bazel run //tools:classify -- --update`",
                      file=sys.stderr)
                rc = 1
    if args.format == "json":
        sys.stdout.write(report_text(cache_dir, result, "json", report.json_report))
    elif args.format == "markdown":
        sys.stdout.write(report.markdown_summary(result.files))
    elif not args.check:
        sys.stdout.write(report.text_summary(result.files))
    return rc
