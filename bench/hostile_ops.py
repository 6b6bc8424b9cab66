"""Generators of hostile input for the operations tools (issue #13), and the table docs/hostile-input.md shows.

Each generator yields small cases; `run_*` runs one case in a forked child (so a hang is a timeout,
not a stuck test run) and returns an Outcome with a verdict: ok, crash (traceback or undocumented
exit), hang, or loss (wrong result without an error: a foreign file changed, a label rendered wrong,
bad input accepted, a test moved on bad evidence). Only public entry points are called, so the same
generators measure an old checkout: `PYTHONPATH=OLD python3 bench/hostile_ops.py`.
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
SAFE_DIRS = {"missing", "ours-0755", "ours-0700", "ours-1777"}  # ours-0777: others could swap files
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


# ---------------------------------------------------------------- labels with shell characters → renderers

_NAMES = ("a;b", "it's", 'say"hi"', "a b", "$(echo pwned)", "`id`", "${HOME}", "a&&b", "a||b", "a|b", "a&",
          "(a)", "a<b", "a>b", "*", "a?", "[a]", "{a,b}", "~root", "#x", "!1", "%s", "a^b", "a=b", "a+b", "a,b",
          "a\\b", "a\\", "'", '"', "a'\"b", "--flag", "-x", "a/b.py", "é", "日本", "a\u00a0b", "a@b", "a-b",
          "$", "a$b", "\\$x", "a'b'c", "''", "a;echo x", "x\"; echo y; \"", "$'\\x41'", "a]]b", "a.b-c_d~e")
SPECIAL_LABELS = [f"//t:{name}" for name in _NAMES] + [f"//p q/r's:{name}" for name in ("x", "y;z")]
_FLEET = {"schema_version": 1, "pools": [{"name": "h100", "nodes": 1, "gpus_per_node": 8, "gpu_model": "h100",
                                          "vram_gb": 80, "cuda": "12.4"}]}
_BASH_EVAL = 'bazel() { printf "%s\\0" "$@"; }; for line; do (eval "$line"); printf "\\1"; done'


def _bash_words(lines: list[str]) -> list[list[str]]:
    """What bash hands to `bazel` when it runs each line (a shell function stands in for Bazel); one
    bash for all lines, each in its own subshell so a mis-quoted one cannot hide the next."""
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory(prefix="hostile-bash-") as cwd:  # a mis-quoted label runs here
        out = subprocess.run(["bash", "-c", _BASH_EVAL, "bash", *lines], capture_output=True, timeout=10,
                             check=False, cwd=cwd).stdout
    return [part.split("\0")[:-1] for part in out.decode("utf-8", "replace").split("\1")[:-1]]


def run_render_case(label: str) -> Outcome:
    """Manifest (exporter's command) → plan → k8s/Slurm/GHA; each rendered command, parsed by bash,
    must give Bazel exactly this label."""
    import yaml  # imported here, in the parent: every forked child inherits the modules

    from tools.gpu_manifest import schema
    from tools.plan import fleet, render_gha, render_k8s, render_slurm
    from tools.plan.policies import PolicyConfig
    from tools.plan.scheduler import schedule

    def attempt() -> tuple[str, str]:
        entry = {"label": label, "gpu_count": 1, "vram_gb": 4, "size": "medium", "timeout_s": 300,
                 "estimated_duration_s": 60.0, "duration_source": "size", "command": schema.command_for(label)}
        try:
            manifest = schema.from_dict({"schema_version": 1, "tests": [entry]})
        except schema.ManifestError as err:
            return "loss", f"valid label refused: {err.problems[0]}"
        pools = fleet.from_dict(_FLEET)
        plan = schedule(manifest.tests, pools, PolicyConfig())
        tests = {t.label: t for t in manifest.tests}
        def k8s_command(handoff: str) -> list[str]:
            jobs = yaml.safe_load_all(render_k8s.dumps(render_k8s.render(plan, tests, pools, handoff=handoff)))
            return next(iter(jobs))["spec"]["template"]["spec"]["containers"][0]["command"]

        def slurm_line(handoff: str) -> str:
            script = next(iter(render_slurm.render(plan, tests, pools, handoff=handoff).values()))
            return "bazel " + next(line for line in script.splitlines()
                                   if line.startswith('"$bazel" '))[len('"$bazel" '):]

        node_argv = k8s_command("node")  # no shell: the label must be one argv word as it is
        if node_argv[0] != "bazel" or node_argv[-1] != label:
            return "loss", f"k8s node job: argv {node_argv!r}"
        per_test = k8s_command("test")
        gha = render_gha.render(plan, tests, pools)[0]["include"][0]["command"]
        batch = ["test", "--config=gpu", "--local_resources=gpu=1", "--", label]
        expected = {"k8s (per test)": ["test", "--config=gpu", label], "slurm (node)": batch,
                    "slurm (per test)": batch, "gha": ["test", "--config=gpu", label]}
        lines = [per_test[-1] if per_test[:2] == ["bash", "-c"] else "", slurm_line("node"),
                 slurm_line("test"), gha]
        for (engine, want), got in zip(expected.items(), _bash_words(lines), strict=True):
            if got != want:
                return "loss", f"{engine}: bash gives {got!r}"
        return "ok", ""

    verdict, detail = _in_child(attempt)
    return Outcome("renderers (k8s, Slurm, GHA)", label, verdict, detail)


# ---------------------------------------------------------------- malformed manifests and fleets

_GOOD_TEST = {"label": "//t:a", "gpu_count": 1, "vram_gb": 4, "size": "medium", "timeout_s": 300,
              "estimated_duration_s": 60.0, "duration_source": "size", "command": "bazel test --config=gpu //t:a"}
BAD_MANIFEST_TESTS = [
    ("gpu_count", 10**20), ("gpu_count", 2**63), ("vram_gb", float("inf")), ("vram_gb", float("nan")),
    ("vram_gb", 1e308), ("timeout_s", 10**20), ("timeout_s", 2**63 - 1), ("estimated_duration_s", float("inf")),
    ("estimated_duration_s", float("nan")), ("estimated_duration_s", 1e300), ("shard_count", 10**12),
    ("label", "//t:a\n"), ("label", "//t:a\nb"), ("label", "//t\n:a"), ("label", "//t:a\x00"),
    ("label", "//t:a\r"), ("command", "bazel test --config=gpu //t:it's"), ("command", "bazel test //t:other"),
    ("tags", ["gpu-count: 2"]), ("tags", ["gpu-count:+2"]), ("tags", ["gpu-count:\uff12"]),
    ("tags", ["gpu-count:1_000"]), ("tags", ["gpu-count:02"]), ("tags", ["gpu-vram-gb:4.0"]),
    ("tags", ["resources:gpu:\u0662"]), ("tags", ["cuda-min:\uff11\uff12.4"]), ("tags", ["cuda-min:12.4\n"]),
    ("tags", ["gpu-count:1", "gpu-count:2"]), ("cuda_min", "12.4\n"), ("cuda_min", "\uff11\uff12.4"),
]
BAD_FLEET_POOLS = [("nodes", 10**7), ("nodes", 10**18), ("gpus_per_node", 10**6), ("vram_gb", float("inf")),
                   ("vram_gb", float("nan")), ("cuda", "12.4\n"), ("cuda", "\uff11\uff12.4"), ("name", "a\n")]
BAD_HEADROOM = ("nan", "inf", "-inf", "1e400", "-1")
BAD_TAGS = [("gpu-count: 2",), ("gpu-count:+2",), ("gpu-count:\uff12",), ("gpu-count:1_000",), ("gpu-count:02",),
            ("gpu-vram-gb:\u0664\u0660",), ("resources:gpu: 1",), ("cuda-min:12.4\n",)]


def run_manifest_case(key: str, value: object) -> Outcome:
    """One bad field: the schema must reject it naming the field (no traceback, no silent accept)."""
    def attempt() -> tuple[str, str]:
        from tools.gpu_manifest import schema

        entry = dict(_GOOD_TEST, **{key: value})
        problems = schema.validate({"schema_version": 1, "tests": [entry]})
        if not problems:
            return "loss", "accepted"
        named = [p for p in problems if p.startswith(f"tests[0].{key}")]
        return ("ok", named[0]) if named else ("loss", f"not named: {problems[0]}")

    verdict, detail = _in_child(attempt)
    return Outcome("manifest schema", f"{key}: {value!r}"[:60], verdict, detail)


def run_fleet_case(key: str, value: object) -> Outcome:
    def attempt() -> tuple[str, str]:
        from tools.plan import fleet

        pool = dict(_FLEET["pools"][0], **{key: value})
        problems = fleet.validate({"schema_version": 1, "pools": [pool]})
        named = [p for p in problems if p.startswith(f"pools[0].{key}")]
        return ("ok", named[0]) if named else ("loss", "accepted" if not problems else problems[0])

    verdict, detail = _in_child(attempt, 60)
    return Outcome("fleet", f"{key}: {value!r}"[:60], verdict, detail)


def run_headroom_case(value: str, work: Path) -> Outcome:
    """`plan --headroom VALUE`: exit 1 with one `plan: error:` line."""
    def attempt() -> tuple[str, str]:
        import yaml

        from tools.plan import __main__ as plan_cli

        work.mkdir(parents=True, exist_ok=True)
        (work / "m.yaml").write_text(yaml.safe_dump({"schema_version": 1, "tests": [_GOOD_TEST]}))
        (work / "f.yaml").write_text(yaml.safe_dump(_FLEET))
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            rc = plan_cli.main([str(work / "m.yaml"), "--fleet", str(work / "f.yaml"), f"--headroom={value}",
                                "--out", str(work / "out"), "--render", ""])
        if rc == 1 and "headroom" in err.getvalue():
            return "ok", err.getvalue().strip()
        return "loss", f"exit {rc}"

    verdict, detail = _in_child(attempt)
    return Outcome("plan --headroom", value, verdict, detail)


def run_tag_case(tags: tuple[str, ...]) -> Outcome:
    """Query output with a non-canonical owned tag: the exporter must refuse it, naming the tag."""
    def attempt() -> tuple[str, str]:
        from tools.gpu_manifest import export
        from tools.gpu_manifest.query import QueryTarget

        target = QueryTarget("//t:a", "py_test", ("requires-gpu", *tags))
        try:
            manifest = export.build_manifest([target], export.TagFilter.parse("requires-gpu"), None, {})
        except export.ExportError as err:
            return ("ok", str(err)) if "//t:a" in str(err) else ("loss", f"not named: {err}")
        return "loss", f"accepted as gpu_count={manifest.tests[0].gpu_count} vram_gb={manifest.tests[0].vram_gb}"

    verdict, detail = _in_child(attempt)
    return Outcome("manifest export (tags)", repr(tags[0]), verdict, detail)


def run_duplicate_case() -> Outcome:
    """The same label twice in query output with different tags: an error, not first-wins."""
    def attempt() -> tuple[str, str]:
        from tools.gpu_manifest import export
        from tools.gpu_manifest.query import QueryTarget

        targets = [QueryTarget("//t:a", "py_test", ("requires-gpu", "gpu-count:1")),
                   QueryTarget("//t:a", "py_test", ("requires-gpu", "gpu-count:4"))]
        try:
            export.build_manifest(targets, export.TagFilter.parse("requires-gpu"), None, {})
        except export.ExportError as err:
            return "ok", str(err)
        return "loss", "first entry won silently"

    verdict, detail = _in_child(attempt)
    return Outcome("manifest export (tags)", "duplicate label, conflicting tags", verdict, detail)


# ---------------------------------------------------------------- malformed JUnit results

_CUDA = "RuntimeError: Found no NVIDIA driver on your system"


def _junit(cases: str, head: str = "") -> str:
    return (f"<?xml version='1.0' encoding='utf-8'?>{head}<testsuites><testsuite name='pytest'>{cases}"
            "</testsuite></testsuites>")


def _case(name: str | None, message: str = "m", body: str = "", cls: str = "tests.test_x") -> str:
    named = "" if name is None else f" name='{name}'"
    return f"<testcase classname='{cls}'{named}><failure message='{message}'>{body}</failure></testcase>"


# (name, document, node ids that must be read exactly, must a problem be reported?)
JUNIT_CASES: list[tuple[str, Callable[[], str], set[str], bool]] = [
    ("testcase without name", lambda: _junit(_case("test_a") + _case(None, _CUDA) + _case("test_b")),
     {"tests/test_x.py::test_a", "tests/test_x.py::test_b"}, True),
    ("testcase with empty name", lambda: _junit(_case("") + _case("test_b")), {"tests/test_x.py::test_b"}, True),
    ("8 MiB message", lambda: _junit(_case("test_a", "x" * (8 << 20) + _CUDA)), {"tests/test_x.py::test_a"}, True),
    ("8 MiB message of entities", lambda: _junit(_case("test_a", "&amp;&lt;" * (1 << 20))),
     {"tests/test_x.py::test_a"}, True),
    ("4 MiB message, newlines", lambda: _junit(_case("test_a", "line\n" * (800 << 10))), {"tests/test_x.py::test_a"},
     True),
    ("40 messages of 1 MiB", lambda: _junit("".join(_case(f"test_{i}", "y" * (1 << 20)) for i in range(40))),
     {f"tests/test_x.py::test_{i}" for i in range(40)}, True),
    ("4 MiB comment", lambda: _junit(_case("test_a"), "<!--" + "c" * (4 << 20) + "-->"), {"tests/test_x.py::test_a"},
     False),
    ("CDATA holding markup", lambda: _junit(_case("test_a", body="<![CDATA[<testcase name='x'> ' \" ]]>")),
     {"tests/test_x.py::test_a"}, False),
    ("truncated inside a message", lambda: _junit(_case("test_a") + _case("test_b", "z" * (1 << 20)))[:-200_000],
     {"tests/test_x.py::test_a"}, True),
    ("quote characters in messages", lambda: _junit(_case("test_a", "it&apos;s &quot;x&quot; >")),
     {"tests/test_x.py::test_a"}, False),
]


def run_junit_case(case: tuple[str, Callable[[], str], set[str], bool], work: Path) -> Outcome:
    """One malformed result file: exactly the expected node ids, bounded text, and a problem when due."""
    from tools.feedback import results

    name, make, want, problem_due = case

    def attempt() -> tuple[str, str]:
        work.mkdir(parents=True, exist_ok=True)
        path = work / "junit.xml"
        path.write_text(make(), encoding="utf-8")
        got = results.read_results([path])
        ids = {c.nodeid for c in got.cases}
        if ids != want:
            return "loss", f"node ids {sorted(ids)[:3]} (want {sorted(want)[:3]})"
        longest = max((len(c.message) + len(c.details) for c in got.cases), default=0)
        if longest > 256 << 10:
            return "loss", f"kept {longest} characters of one test's text"
        if problem_due and not got.problems:
            return "loss", "no problem reported"
        return "ok", got.problems[0].reason[:120] if got.problems else ""

    verdict, detail = _in_child(attempt, 120)
    return Outcome("feedback results (JUnit)", name, verdict, detail)


# ---------------------------------------------------------------- writers killed mid-write

KILL_DELAYS_S = (0.02, 0.05, 0.08, 0.12, 0.16, 0.2, 0.3, 0.5)


def run_kill_case(delay_s: float, work: Path) -> Outcome:
    """kill -9 a writer of a 64 MiB file after `delay_s`, then write again: the file must be whole (old
    or new) and no temporary may be left."""
    import signal
    import subprocess
    import time

    from tools.atomic_write import write_text_atomic

    work.mkdir(parents=True, exist_ok=True)
    target = work / "torch_classification.json"
    target.write_text("old\n")
    script = (f"import sys; from pathlib import Path; from tools.atomic_write import write_text_atomic\n"
              f"data = 'x' * (64 << 20) + '\\n'; print('ready', flush=True)\n"
              f"write_text_atomic(Path({str(target)!r}), data)\n")
    root = next(p for p in sys.path if (Path(p or ".") / "tools" / "atomic_write.py").exists())
    child = subprocess.Popen([sys.executable, "-c", script], env=dict(os.environ, PYTHONPATH=root),
                             stdout=subprocess.PIPE)
    assert child.stdout is not None and child.stdout.readline() == b"ready\n"
    time.sleep(delay_s)
    child.send_signal(signal.SIGKILL)
    child.wait()
    text = target.read_text()
    if text not in ("old\n", "x" * (64 << 20) + "\n"):
        return Outcome("atomic writes (kill -9)", f"after {delay_s:g}s", "loss", "half-written file")
    write_text_atomic(target, "again\n")
    left = [p.name for p in work.iterdir() if p.name.endswith(".tmp")]
    verdict = "loss" if left else "ok"
    return Outcome("atomic writes (kill -9)", f"after {delay_s:g}s", verdict, f"left {left}" if left else "")


# ---------------------------------------------------------------- the table

def all_outcomes(work: Path) -> Iterator[Outcome]:
    for i, case in enumerate(LOCK_CASES):
        yield run_lock_case(case, work / "locks" / str(i))
    for label in SPECIAL_LABELS:
        yield run_render_case(label)
    for key, value in BAD_MANIFEST_TESTS:
        yield run_manifest_case(key, value)
    for tags in BAD_TAGS:
        yield run_tag_case(tags)
    yield run_duplicate_case()
    for key, value in BAD_FLEET_POOLS:
        yield run_fleet_case(key, value)
    for i, value in enumerate(BAD_HEADROOM):
        yield run_headroom_case(value, work / "headroom" / str(i))
    for i, junit_case in enumerate(JUNIT_CASES):
        yield run_junit_case(junit_case, work / "junit" / str(i))
    for i, delay in enumerate(KILL_DELAYS_S):
        yield run_kill_case(delay, work / "kill" / str(i))


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


def _big_junit(path: Path, cases: int, message_bytes: int) -> None:
    """A JUnit file of `cases` failures whose `message` attributes hold `message_bytes` each, written
    in pieces (the generator must not need the memory it measures)."""
    piece = b"x" * (1 << 20)
    with path.open("wb") as out:
        out.write(b"<?xml version='1.0'?><testsuites><testsuite name='pytest'>")
        for i in range(cases):
            out.write(f"<testcase classname='tests.test_big' name='test_{i}'><failure message='".encode())
            for _ in range(message_bytes >> 20):
                out.write(piece)
            out.write(b"'/></testcase>")
        out.write(b"</testsuite></testsuites>")


def bench_big_junit(work: Path, files: int) -> list[str]:
    """Seconds and peak memory of reading a 128 MiB `message`, then `files` files of 200 MB."""
    import resource
    import time

    rows = []
    for name, count, cases, size in (("one 128 MiB message", 1, 1, 128 << 20),
                                     (f"{files} files x 200 MB (50 messages of 4 MiB each)", files, 50, 4 << 20)):
        paths = [work / f"big{i}.xml" for i in range(count)]
        for path in paths:
            _big_junit(path, cases, size)

        def read(paths: list[Path] = paths) -> tuple[str, str]:
            from tools.feedback import results

            started = time.monotonic()
            got = results.read_results(paths)
            seconds = time.monotonic() - started
            kept = sum(len(c.message) + len(c.details) for c in got.cases)
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss >> 10
            return "ok", f"{seconds:.1f} s, peak RSS {peak} MiB, {len(got.cases)} cases, {kept} characters kept"

        verdict, detail = _in_child(read, 900)
        rows.append(f"| {name} | {sum(p.stat().st_size for p in paths) >> 20} MiB | {verdict}: {detail} |")
        for path in paths:
            path.unlink()
    return ["| input | size | result |", "|---|---:|---|", *rows]


def main() -> int:
    import argparse
    import tempfile

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--big", type=int, default=0, metavar="FILES",
                        help="also time reading a 128 MiB message and FILES files of 200 MB")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="hostile-ops-") as tmp:
        os.chmod(tmp, 0o755)
        outcomes = list(all_outcomes(Path(tmp)))
        big = bench_big_junit(Path(tmp), args.big) if args.big else []
    print(table(outcomes))
    if big:
        print()
        print("\n".join(big))
    for o in outcomes:
        if o.verdict != "ok":
            print(f"{o.verdict}: {o.tool}: {o.case}: {o.detail}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.path.append(str(Path(__file__).resolve().parents[1]))  # after PYTHONPATH: an old checkout wins
    sys.exit(main())
