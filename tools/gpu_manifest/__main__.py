"""CLI: `bazel run //tools:export_gpu_manifest -- [options]` (see docs/manifest.md)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from tools.gpu_manifest import export, query, schema


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="export_gpu_manifest", description=__doc__)
    parser.add_argument("--query-output", type=Path, help="read this bazel query output instead of running bazel")
    parser.add_argument("--format", choices=query.FORMATS, help="format of --query-output (default: sniffed)")
    parser.add_argument("--target-pattern", default=export.DEFAULT_PATTERN)
    parser.add_argument("--test-tag-filters", default=export.DEFAULT_FILTERS,
                        help="Bazel --test_tag_filters syntax; requires-gpu is always required")
    parser.add_argument("--testlogs", type=Path, help="bazel-testlogs of a previous run (durations)")
    parser.add_argument("--output", default="gpu_manifest.yaml",
                        help="manifest path (.yaml/.yml/.json), relative to the workspace; '-' = stdout (YAML)")
    parser.add_argument("--bazel", default=os.environ.get("BAZEL", "bazel"))
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None, runner: export.Runner = export.subprocess_runner) -> int:
    args = parse_args(argv)
    workspace = export.workspace_dir(os.environ)
    try:
        if args.query_output is not None:
            path = args.query_output if args.query_output.is_absolute() else workspace / args.query_output
            text = path.read_text(encoding="utf-8")
            fmt = args.format or query.guess_format(text)
            source_name = str(args.query_output)
        else:
            text = export.run_query(args.target_pattern, runner, workspace, args.bazel)
            fmt, source_name = "xml", "bazel query"
        targets = query.parse(text, fmt, source_name)
        testlogs = args.testlogs
        if testlogs is None and (workspace / "bazel-testlogs").is_dir():
            testlogs = workspace / "bazel-testlogs"
        elif testlogs is not None and not testlogs.is_absolute():
            testlogs = workspace / testlogs
        manifest = export.build_manifest(
            targets,
            export.TagFilter.parse(args.test_tag_filters),
            testlogs,
            {"query_format": fmt, "target_pattern": args.target_pattern,
             "test_tag_filters": args.test_tag_filters},
        )
        if args.output == "-":
            sys.stdout.write(schema.dumps(manifest, "yaml"))
        else:
            out = Path(args.output)
            out = out if out.is_absolute() else workspace / out
            schema.write(manifest, out)
            print(f"wrote {len(manifest.tests)} GPU tests to {out}", file=sys.stderr)
    except (query.QueryParseError, export.ExportError, schema.ManifestError, OSError, ValueError) as err:
        print(f"export_gpu_manifest: error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
