"""Generators of hostile input for the operations tools (issue #13), and the table docs/hostile-input.md shows.

Each generator yields small cases; `run_*` runs one case in a forked child (so a hang is a timeout,
not a stuck test run) and returns an Outcome with a verdict: ok, crash (traceback or undocumented
exit), hang, or loss (wrong result without an error: a foreign file changed, a label rendered wrong,
bad input accepted, a test moved on bad evidence). Only public entry points are called, so the same
generators measure an old checkout: `PYTHONPATH=OLD python3 tests/tools/gpu/hostile_inputs.py`.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import multiprocessing
import os
import stat
import sys
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

SMI = "".join(f"{i}, GPU-{i:08x}-aaaa-bbbb-cccc-{i:012x}, NVIDIA H100 80GB HBM3, 81559\n" for i in range(2))
HANG_S = 20.0
NOBODY = 65534


@dataclass(frozen=True)
class Outcome:
    tool: str
    case: str
    verdict: str  # ok | crash | hang | loss
    detail: str = ""


def _in_child(func: Callable[[], tuple[str, str]], timeout_s: float = HANG_S) -> tuple[str, str]:
    """Run func in a forked child: (verdict, detail), with a traceback a crash and a timeout a hang."""
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)

    def target() -> None:
        try:
            child.send(func())
        except BaseException:  # noqa: BLE001 - exactly what is being counted
            child.send(("crash", traceback.format_exc(limit=3).strip().splitlines()[-1]))

    proc = ctx.Process(target=target)
    proc.start()
    ready = parent.poll(timeout_s)
    result = parent.recv() if ready else ("hang", f"no answer within {timeout_s:g}s")
    if proc.is_alive():
        proc.kill()
    proc.join()
    return result


# ---------------------------------------------------------------- gpu_assign lock directories

DIR_STATES = ("missing", "ours-0755", "ours-0700", "ours-1777", "file", "symlink-to-dir", "dangling-symlink",
              "under-a-file", "nobody-1777", "nobody-0777", "ours-0777")
FILE_STATES = ("absent", "regular-0644", "symlink-to-victim", "dangling-symlink", "fifo", "hardlink-to-victim",
               "directory")
SAFE_DIRS = {"missing", "ours-0755", "ours-0700", "ours-1777", "ours-0777"}
SAFE_FILES = {"absent", "regular-0644"}
LOCK_CASES = [(d, f, name) for d, f in itertools.product(DIR_STATES, FILE_STATES)
              for name in ("alloc.lock", f"gpu-GPU-{0:08x}-aaaa-bbbb-cccc-{0:012x}.slot0.lock")
              if not (f != "absent" and d in ("missing", "file", "dangling-symlink", "under-a-file"))]


def _make_lock_case(case: tuple[str, str, str], root: Path) -> tuple[Path, Path]:
    dir_state, file_state, name = case
    root.mkdir(parents=True)
    os.chmod(root, 0o755)
    victim = root / "victim"
    victim.write_text("secret\n")
    os.chmod(victim, 0o600)
    lock_dir = root / "locks"
    if dir_state == "file":
        lock_dir.write_text("x")
    elif dir_state == "under-a-file":
        (root / "f").write_text("x")
        lock_dir = root / "f" / "locks"
    elif dir_state == "dangling-symlink":
        lock_dir.symlink_to(root / "nowhere")
    elif dir_state == "symlink-to-dir":
        (root / "real").mkdir()
        lock_dir.symlink_to(root / "real")
    elif dir_state != "missing":
        owner, mode = dir_state.split("-")[:2]
        lock_dir.mkdir()
        os.chmod(lock_dir, int(mode, 8))
        if owner == "nobody" and os.getuid() == 0:
            os.chown(lock_dir, NOBODY, NOBODY)
    target = (root / "real" if dir_state == "symlink-to-dir" else lock_dir) / name
    if file_state == "regular-0644":
        target.write_text("")
        os.chmod(target, 0o644)
    elif file_state == "symlink-to-victim":
        target.symlink_to(victim)
    elif file_state == "dangling-symlink":
        target.symlink_to(root / "created-by-link")
    elif file_state == "fifo":
        os.mkfifo(target)
    elif file_state == "hardlink-to-victim":
        os.link(victim, target)
    elif file_state == "directory":
        target.mkdir()
    return lock_dir, victim


def run_lock_case(case: tuple[str, str, str], root: Path) -> Outcome:
    """One lock-directory state through the `--run_under` entry point (no real exec)."""
    from tools.gpu_assign import run_under

    dir_state, file_state, _ = case
    name = f"{dir_state}/{file_state}/{case[2].split('.')[-2]}"
    if dir_state.startswith("nobody") and os.getuid() != 0:
        return Outcome("gpu_assign", name, "ok", "skipped: needs root")
    lock_dir, victim = _make_lock_case(case, root)
    safe = dir_state in SAFE_DIRS and file_state in SAFE_FILES

    def attempt() -> tuple[str, str]:
        err = io.StringIO()
        env = {"TORCH_GPU_LOCK_DIR": str(lock_dir), "TORCH_TEST_GPU_COUNT": "1"}
        with contextlib.redirect_stderr(err):
            try:
                rc = run_under.main(["--timeout", "1", "--", "true"], env, lambda: SMI, lambda argv, e: 0)
            except SystemExit as exc:
                rc = exc.code if isinstance(exc.code, int) else 1
        lines = err.getvalue().strip().splitlines()
        if not (stat.S_IMODE(victim.stat().st_mode) == 0o600 and victim.read_text() == "secret\n"):
            return "loss", f"changed a file it does not own (rc {rc})"
        if (root / "created-by-link").exists():
            return "loss", "created a file through a planted link"
        if rc == 0:
            return ("ok", "") if safe else ("loss", "accepted an unsafe lock directory")
        if rc not in (2, 3) or len(lines) != 1:
            return "crash", f"exit {rc}: {lines[-1] if lines else ''}"
        return ("ok", lines[0]) if not safe else ("crash", f"refused a safe directory: {lines[0]}")

    verdict, detail = _in_child(attempt)
    return Outcome("gpu_assign", name, verdict, detail)


# ---------------------------------------------------------------- the table

def all_outcomes(work: Path) -> Iterator[Outcome]:
    for i, case in enumerate(LOCK_CASES):
        yield run_lock_case(case, work / "locks" / str(i))


def table(outcomes: list[Outcome]) -> str:
    """Markdown: per tool, inputs tried, crashes, hangs, silent losses."""
    tools: dict[str, list[Outcome]] = {}
    for outcome in outcomes:
        tools.setdefault(outcome.tool, []).append(outcome)
    rows = ["| tool | inputs tried | crashes | hangs | silent losses |", "|---|---:|---:|---:|---:|"]
    for tool, items in tools.items():
        counts = [sum(o.verdict == v for o in items) for v in ("crash", "hang", "loss")]
        rows.append(f"| {tool} | {len(items)} | " + " | ".join(map(str, counts)) + " |")
    return "\n".join(rows)


def main() -> int:
    import tempfile

    with tempfile.TemporaryDirectory(prefix="hostile-ops-") as tmp:
        os.chmod(tmp, 0o755)
        outcomes = list(all_outcomes(Path(tmp)))
    print(table(outcomes))
    for o in outcomes:
        if o.verdict != "ok":
            print(f"{o.verdict}: {o.tool}: {o.case}: {o.detail}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.path.append(str(Path(__file__).resolve().parents[3]))  # after PYTHONPATH: an old checkout wins
    sys.exit(main())
