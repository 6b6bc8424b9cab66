"""The convergence loop: run the CPU tests, reclassify from their CUDA failures, repeat until nothing moves.

Why a loop: moving a test to gpu changes targets (a cpu file becomes `mixed` and splits into
`_cpu`/`_gpu`), so the next CPU run is the proof that the new labels hold. Each round reads only the
results of the tests Bazel ran in that round (from the Build Event Protocol file), never stale
directories left in bazel-testlogs by earlier runs.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from tools.contract import classification as cf
from tools.feedback.reclassify import Report, reclassify
from tools.feedback.results import PathCheck, Problem, Results, read_test_dir

# Bazel exit codes: 0 all passed, 3 some tests failed, 4 no test target matched (all moved to gpu).
OK_EXIT_CODES = (0, 3, 4)
CPU_FLAGS = ("--test_tag_filters=-requires-gpu", "--keep_going")

Runner = Callable[[list[str]], int]


@dataclass
class ConvergeReport:
    converged: bool = False
    iterations: int = 0  # rounds that moved tests (the final, quiet round confirms convergence)
    runs: int = 0  # bazel test invocations
    rounds: list[Report] = field(default_factory=list)
    error: str | None = None

    @property
    def moved(self) -> int:
        return sum(r.moved for r in self.rounds)

    def summary(self) -> str:
        if self.error:
            return f"converge: stopped: {self.error}"
        state = "converged" if self.converged else "did NOT converge"
        return (f"converge: {state} after {self.iterations} iteration(s) with moves ({self.runs} bazel test run(s)); "
                f"moved {self.moved} test(s) to gpu")


def bazel_runner(bazel: str, workspace: Path) -> Runner:
    """Runs `bazel <args>` in the workspace, its output on our stderr (CI logs show the test run)."""
    def run(args: list[str]) -> int:
        print(f"converge: {bazel} {' '.join(args)}", file=sys.stderr, flush=True)
        return subprocess.run([bazel, *args], cwd=workspace, stdout=sys.stderr, check=False).returncode
    return run


def dirs_from_bep(path: Path) -> tuple[list[Path], list[Problem]]:
    """The result directories (where test.xml/test.log are) of every testResult event in a BEP JSON file."""
    dirs: list[Path] = []
    problems: list[Problem] = []
    with path.open(encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                event = json.loads(line)
            except ValueError:
                problems.append(Problem(f"{path}:{number}", "not a JSON event; ignored"))
                continue
            result = event.get("testResult")
            if not isinstance(result, dict):
                continue
            for output in result.get("testActionOutput", []):
                if output.get("name") not in ("test.xml", "test.log"):
                    continue
                uri = urlparse(output.get("uri", ""))
                if uri.scheme != "file":
                    problems.append(Problem(output.get("uri", "?"), "not a local file (remote cache?); skipped"))
                    continue
                directory = Path(unquote(uri.path)).parent
                if directory not in dirs:
                    dirs.append(directory)
    return dirs, problems


def recent_test_dirs(testlogs: Path, since: float) -> list[Path]:
    """Fallback without a BEP file: result directories under bazel-testlogs written since `since`."""
    found = []
    for xml in sorted(testlogs.rglob("test.log")):
        if "test.outputs" in xml.parts:
            continue
        if xml.stat().st_mtime >= since - 1:
            found.append(xml.parent)
    return found


def collect(bep: Path, testlogs: Path, since: float, is_test_file: PathCheck | None) -> Results:
    """This round's results: from the BEP file when Bazel wrote one, else from fresh bazel-testlogs dirs."""
    results = Results()
    if bep.is_file() and bep.stat().st_size:
        dirs, problems = dirs_from_bep(bep)
        results.problems.extend(problems)
    else:
        dirs = recent_test_dirs(testlogs, since) if testlogs.is_dir() else []
    for directory in dirs:
        results.extend(read_test_dir(directory, is_test_file))
    return results


def _test_file_check(data: dict[str, Any], workspace: Path) -> PathCheck:
    files = data.get("files", {})
    return lambda p: p in files or (workspace / p).is_file()


def converge(classification: Path, targets: Sequence[str], run_tests: Runner, *, max_iterations: int = 5,
             workspace: Path | None = None, extra_args: Sequence[str] = ()) -> ConvergeReport:
    """Run, reclassify and write `classification` until a run moves nothing (at most `max_iterations` runs)."""
    workspace = workspace or classification.parent
    report = ConvergeReport()
    with tempfile.TemporaryDirectory(prefix="converge-") as tmp:
        while report.runs < max_iterations:
            report.runs += 1
            bep = Path(tmp) / f"bep-{report.runs}.json"
            started = time.time()
            args = ["test", *targets, *CPU_FLAGS, f"--build_event_json_file={bep}", *extra_args]
            rc = run_tests(args)
            if rc not in OK_EXIT_CODES:
                report.error = f"bazel test exited {rc} (a build or infrastructure failure, not a test failure)"
                return report
            try:
                data = cf.load(classification)
            except cf.ClassificationFileError as exc:
                report.error = str(exc)
                return report
            results = collect(bep, workspace / "bazel-testlogs", started, _test_file_check(data, workspace))
            new, round_report = reclassify(data, results)
            report.rounds.append(round_report)
            if round_report.moved == 0:
                report.converged = True
                return report
            cf.save(classification, new)
            report.iterations += 1
    return report
