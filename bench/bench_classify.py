"""Benchmark the static classifier: files/s cold and warm, ratio to bare ast.parse, peak memory.

Prints figures only; asserts nothing about timing. Usage:
    python bench/bench_classify.py [--files 10000] [--keep DIR] [--repeats 3]
    python bench/bench_classify.py --real-suite /work/realsuites [/work/realsuites/src/zuko-1.6.0 ...]
                                   [--repeats 1] [--alone 30] [--no-determinism]

Real suites (issue 12) are the unpacked sdists that bench/accuracy_real_suites.py prepares (`--workdir`); a
DIR is one suite (`<workdir>/src/<name>-<version>`, its test paths taken from that script's PROJECTS) or a
whole workdir (every suite under its src/). Per suite, each run in a fresh forked process: cold, one process,
against a bare `ast.parse` of every .py file that run opened (seen by an audit hook on `open`; goal <= 10x);
warm (cache filled by a previous run) in-process and as a CLI process (goal <= 1 s); the cold run's peak
RSS; and determinism: the CLI's JSON for `--jobs 1/2/4` byte-identical, and each test file analysed alone
(`--paths file`) giving the same entries as in the whole-tree run (`--alone N` files, evenly spaced; 0 = all).

The generated tree imitates a real torch test suite rather than one-test stubs: directories of 100 files,
each with a conftest.py (a `device` fixture, a parametrized `dtype` fixture), a root conftest with an
autouse seeding fixture, an in-repo package (skip markers and a `build(device)` helper, a small nn.Module
model, pure-Python utilities), and test files of 3-7 tests (about 30-80 lines) in this mix: 47% pure
CPU tensor code (arithmetic, autograd, models, parametrize, the `dtype` fixture), 16% mixed (a
`'cpu'/'cuda'` parametrization or the `device` fixture), 11% GPU (a skip marker from the helper module,
skipif, `.cuda()`, a GPU helper call), 11% unittest.TestCase classes (setUp device choice,
skipUnless), 16% pure Python without torch; plus non-test helper modules next to the tests (5% of the
files). About 6.5 tests per file.

Cold runs use every CPU the process may run on (one analysis process per CPU, tools/classify/parallel.py);
the single-process figure is printed too. Times are wall-clock; on a machine shared with other work the
parallel figure shows less than the CPU count would promise. Bare parsing and the cold run alternate
`--repeats` times and the best of each is compared (the median ratio of the pairs is printed as well).
"""

from __future__ import annotations

import argparse
import ast
import gc
import importlib.util
import json
import multiprocessing
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tools.classify.modules import is_test_file, walk_python_files  # noqa: E402
from tools.classify.parallel import cpu_count, resolve_workers  # noqa: E402
from tools.classify.report import json_report  # noqa: E402
from tools.classify.runner import run  # noqa: E402

T = TypeVar("T")

# The generated tree imitates a real torch test suite (the mix is stated in the module docstring).
HELPERS = (
    '"""Test helpers shared by the suite."""\n\nimport os\n\nimport pytest\nimport torch\n\n'
    "requires_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason='needs CUDA')\n"
    "slow = pytest.mark.skipif(os.environ.get('RUN_SLOW') != '1', reason='slow')\n\n\n"
    "def build(device):\n    return torch.nn.Linear(2, 2).to(device)\n\n\n"
    "def assert_close(a, b, tol=1e-5):\n    assert torch.allclose(a, b, atol=tol), (a, b)\n"
)
MODELS = (
    '"""Small models used by the tests."""\n\nimport torch\nfrom torch import nn\n\n\n'
    "class Block(nn.Module):\n    def __init__(self, width):\n        super().__init__()\n"
    "        self.proj = nn.Linear(width, width)\n        self.norm = nn.LayerNorm(width)\n\n"
    "    def forward(self, x):\n        return self.norm(torch.relu(self.proj(x)) + x)\n\n\n"
    "class Tiny(nn.Module):\n    def __init__(self, width=8, depth=2):\n        super().__init__()\n"
    "        self.blocks = nn.ModuleList([Block(width) for _ in range(depth)])\n\n"
    "    def forward(self, x):\n        for b in self.blocks:\n            x = b(x)\n        return x\n\n\n"
    "def make_model(width=8, device='cpu'):\n    return Tiny(width).to(device)\n"
)
UTILS = (
    '"""Pure-Python utilities (no torch)."""\n\nimport json\nimport re\n\n\n'
    "def slug(text):\n    return re.sub(r'[^a-z0-9]+', '-', text.lower()).strip('-')\n\n\n"
    "def roundtrip(obj):\n    return json.loads(json.dumps(obj))\n"
)
ROOT_CONFTEST = (
    "import pytest\nimport torch\n\n\n@pytest.fixture(autouse=True)\ndef _seed():\n"
    "    torch.manual_seed(0)\n    yield\n"
)
DIR_CONFTEST = (
    "import pytest\nimport torch\n\n\n@pytest.fixture\ndef device():\n"
    "    return 'cuda' if torch.cuda.is_available() else 'cpu'\n\n\n"
    "@pytest.fixture(params=['float32', 'float64'])\ndef dtype(request):\n    return getattr(torch, request.param)\n"
)
# Test bodies by kind; {i} is unique per test, {n} a small number.
CPU_TESTS = [
    "def test_sum_{i}():\n    x = torch.arange({n} * 4, dtype=torch.float32).reshape({n}, 4)\n"
    "    total = x.sum(dim=1)\n    assert total.shape == ({n},)\n    for row in range({n}):\n"
    "        assert total[row] == x[row].sum()\n",
    "def test_model_{i}():\n    model = make_model(width=8)\n    x = torch.randn({n}, 8)\n"
    "    y = model(x)\n    assert y.shape == x.shape\n    assert torch.isfinite(y).all()\n",
    "def test_grad_{i}():\n    w = torch.ones(3, requires_grad=True)\n    loss = (w * {n}).sum()\n"
    "    loss.backward()\n    assert_close(w.grad, torch.full((3,), float({n})))\n",
    "@pytest.mark.parametrize('shape', [(1,), (2, 3), ({n}, {n})])\ndef test_zeros_{i}(shape):\n"
    "    t = torch.zeros(shape)\n    assert t.numel() == int(torch.tensor(shape).prod())\n",
    "def test_dtype_{i}(dtype):\n    x = torch.ones({n}, dtype=dtype)\n    assert x.dtype == dtype\n",
    "def test_cat_{i}():\n    parts = [torch.full((2,), float(k)) for k in range({n})]\n"
    "    out = torch.cat(parts)\n    assert out.numel() == 2 * {n}\n    assert out.max() == {n} - 1\n",
]
MIXED_TESTS = [
    "@pytest.mark.parametrize('dev', ['cpu', 'cuda'])\ndef test_param_{i}(dev):\n"
    "    x = torch.zeros({n}, device=dev)\n    assert x.sum() == 0\n",
    "def test_on_device_{i}(device):\n    model = build(device)\n    x = torch.randn({n}, 2).to(device)\n"
    "    assert model(x).shape == ({n}, 2)\n",
]
GPU_TESTS = [
    "@requires_cuda\ndef test_gpu_{i}():\n    x = torch.randn({n}, {n}).cuda()\n    y = x @ x.T\n"
    "    torch.cuda.synchronize()\n    assert y.is_cuda\n",
    "@pytest.mark.skipif(not torch.cuda.is_available(), reason='cuda')\ndef test_model_gpu_{i}():\n"
    "    model = make_model(8, device='cuda')\n    assert next(model.parameters()).is_cuda\n",
    "def test_build_cuda_{i}():\n    build('cuda')\n",
]
PURE_TESTS = [
    "def test_slug_{i}():\n    assert slug('Hello World {n}') == 'hello-world-{n}'\n",
    "def test_roundtrip_{i}():\n    data = {{'k': [{n}, 2, 3], 'name': 'x{n}'}}\n    assert roundtrip(data) == data\n",
    "def test_path_{i}(tmp_path):\n    p = tmp_path / 'f{n}.txt'\n    p.write_text('x' * {n})\n"
    "    assert p.read_text() == 'x' * {n}\n",
]
UNITTEST_CLASS = (
    "class Case{i}(unittest.TestCase):\n    def setUp(self):\n"
    "        self.device = 'cuda' if torch.cuda.is_available() else 'cpu'\n\n"
    "    def test_ones(self):\n        t = torch.ones({n}).to(self.device)\n"
    "        self.assertEqual(t.sum().item(), {n})\n\n"
    "    def test_linear(self):\n        m = torch.nn.Linear(2, 2).to(self.device)\n"
    "        self.assertEqual(m(torch.ones(1, 2, device=self.device)).shape, (1, 2))\n\n"
    "    @unittest.skipUnless(torch.cuda.is_available(), 'cuda')\n    def test_cuda(self):\n"
    "        self.assertTrue(torch.ones(1).cuda().is_cuda)\n"
)
TORCH_HEADER = (
    "import math\nimport unittest\n\nimport pytest\nimport torch\n\n"
    "from pkg.helpers import assert_close, build, requires_cuda\nfrom pkg.models import make_model\n\n"
)
PURE_HEADER = "import json\nimport os\n\nfrom pkg.utils import roundtrip, slug\n\n"
# (weight, kind): per file. cpu files may also hold a few mixed tests.
FILE_KINDS = [(45, "cpu"), (15, "mixed"), (10, "gpu"), (10, "unittest"), (15, "pure"), (5, "helper")]


def _test_file(rng: random.Random, kind: str, i: int) -> str:
    doc = f'"""Generated {kind} tests #{i}: part of a synthetic suite for the classifier benchmark."""\n\n'
    if kind == "pure":
        pool, header = PURE_TESTS, PURE_HEADER
    else:
        pool = {"cpu": CPU_TESTS, "mixed": CPU_TESTS + MIXED_TESTS, "gpu": CPU_TESTS + GPU_TESTS,
                "unittest": CPU_TESTS}[kind]
        header = TORCH_HEADER
    parts = [doc, header, f"WIDTH = {rng.randint(2, 9)}\n\n\n",
             "def _reference(x):\n    # a module-level helper, not a test\n"
             "    return math.sqrt(sum(v * v for v in x))\n"]
    if kind == "unittest":
        parts.append("\n\n" + UNITTEST_CLASS.format(i=i, n=rng.randint(1, 9)))
    for j in range(rng.randint(3, 7)):
        if kind == "mixed" and j == 0:
            body = rng.choice(MIXED_TESTS)
        elif kind == "gpu" and j == 0:
            body = rng.choice(GPU_TESTS)
        else:
            body = rng.choice(pool)
        parts.append("\n\n" + body.format(i=f"{i}_{j}", n=rng.randint(1, 9)))
    return "".join(parts)


def generate(root: Path, count: int) -> None:
    """`count` test files in directories of 100, each directory with a conftest (fixtures `device` and a
    parametrized `dtype`), a root conftest with an autouse fixture, and an in-repo helper package."""
    rng = random.Random(0)
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "helpers.py").write_text(HELPERS)
    (root / "pkg" / "models.py").write_text(MODELS)
    (root / "pkg" / "utils.py").write_text(UTILS)
    (root / "tests").mkdir()
    (root / "tests" / "conftest.py").write_text(ROOT_CONFTEST)
    kinds = [k for w, k in FILE_KINDS for _ in range(w)]
    made = 0
    i = 0
    while made < count:
        d = root / "tests" / f"d{i // 100}"
        if not d.exists():
            d.mkdir(parents=True)
            (d / "conftest.py").write_text(DIR_CONFTEST)
        kind = rng.choice(kinds)
        if kind == "helper":  # a non-test module next to the tests (parsed when imported, else not)
            (d / f"_common_{i}.py").write_text(UTILS)
        else:
            (d / f"test_gen_{i}.py").write_text(_test_file(rng, kind, i))
            made += 1
        i += 1


def bare_parse_seconds(root: Path) -> tuple[float, int]:
    files = [f for f in walk_python_files(root, []) if is_test_file(f.rsplit("/", 1)[-1])]
    t0 = time.perf_counter()
    for rel in files:
        try:
            ast.parse((root / rel).read_bytes())
        except (SyntaxError, ValueError, RecursionError):
            pass
    return time.perf_counter() - t0, len(files)


def bench(name: str, root: Path, cache: Path, repeats: int) -> None:
    # Bare parsing and cold classification alternate, `repeats` times each, so both see the same spells of a
    # noisy machine; the best of each is compared (like timeit), the median ratio is shown beside it.
    parse_runs: list[float] = []
    cold_runs: list[float] = []
    for _ in range(repeats):
        parse_s, n = bare_parse_seconds(root)
        parse_runs.append(parse_s)
        gc.collect()
        t0 = time.perf_counter()
        cold = run(root, None, None)
        cold_runs.append(time.perf_counter() - t0)
        tests = sum(len(r.tests) for r in cold.files.values())
        del cold
        gc.collect()
    parse_s, cold_s = min(parse_runs), min(cold_runs)
    median_ratio = statistics.median(c / p for c, p in zip(cold_runs, parse_runs, strict=True))
    workers = resolve_workers(None, n)
    run(root, None, cache)  # fill the cache
    gc.collect()  # a warm run is a fresh CLI process: do not bill it for the cold run's garbage
    t1 = time.perf_counter()
    warm = run(root, None, cache)
    warm_s = time.perf_counter() - t1
    gc.collect()
    t0 = time.perf_counter()  # last: its memory would otherwise be inherited by the workers forked after it
    run(root, None, None, workers=1)
    seq_s = time.perf_counter() - t0
    gc.collect()
    print(f"[{name}] {n} test files, {tests} tests; {cpu_count()} CPUs, {workers} analysis process(es)")
    print(f"  cold: {cold_s:.2f}s = {n / cold_s:.0f} files/s (wall; best of {' '.join(f'{c:.2f}' for c in cold_runs)})")
    print(f"  cold, one process: {seq_s:.2f}s = {n / seq_s:.0f} files/s")
    print(f"  warm: {warm_s:.2f}s = {n / warm_s:.0f} files/s ({cold_s / warm_s:.1f}x faster, "
          f"{warm.cache_hits} cache hits)")
    print(f"  bare ast.parse: {parse_s:.2f}s (best of {' '.join(f'{p:.2f}' for p in parse_runs)}); "
          f"classification/parse ratio {cold_s / parse_s:.2f}x (goal <= 2x; median of the {repeats} pairs "
          f"{median_ratio:.2f}x); one process {seq_s / parse_s:.2f}x")


class Suite(NamedTuple):  # not a dataclass: tests load this file without registering it in sys.modules
    name: str
    root: Path
    paths: list[str]  # relative to root; empty: the suite's own configuration decides


def _projects() -> dict[str, Any]:
    """bench/accuracy_real_suites.py's PROJECTS (bench/ is not a package)."""
    spec = importlib.util.spec_from_file_location("accuracy_real_suites", Path(__file__).with_name(
        "accuracy_real_suites.py"))
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up while the class is built
    spec.loader.exec_module(mod)
    return dict(mod.PROJECTS)


def real_suites(dirs: list[Path]) -> list[Suite]:
    """The suites named by --real-suite: an unpacked sdist, or a workdir whose src/ holds several."""
    known = {f"{p.name}-{p.version}".lower().replace("_", "-"): p for p in _projects().values()}
    out: list[Suite] = []
    for d in dirs:
        d = d.resolve()
        if not d.is_dir():
            raise SystemExit(f"--real-suite {d}: not a directory")
        # a suite itself (even one with a src/ layout, accelerate's), else a workdir whose src/ holds suites
        is_suite = d.name.lower().replace("_", "-") in known
        cands = sorted(x for x in (d / "src").iterdir() if x.is_dir()) if (d / "src").is_dir() and not is_suite \
            else [d]
        for c in cands:
            proj = known.get(c.name.lower().replace("_", "-"))
            if proj is None and len(cands) > 1:
                continue  # a workdir's src/ may hold sources of suites no longer registered
            out.append(Suite(c.name, c, proj.tests.split() if proj else []))
    if not out:
        raise SystemExit(f"--real-suite {' '.join(map(str, dirs))}: no suite found")
    return out


def in_child(fn: Callable[..., T], *args: Any) -> T:
    """fn(*args) in a freshly forked process: nothing memoised by an earlier run makes it warmer, and its
    peak RSS is its own."""
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork")) as ex:
        return ex.submit(fn, *args).result()


def _cold_one_process(root: Path, paths: list[str]) -> tuple[tuple[float, float], list[str], int, str]:
    """((wall, CPU seconds), .py files under root that the run opened, peak RSS in KiB, the JSON report)."""
    opened: set[str] = set()
    prefix = os.fspath(root) + "/"

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event == "open" and isinstance(args[0], str) and args[0].endswith(".py") and args[0].startswith(prefix):
            opened.add(args[0][len(prefix):])

    sys.addaudithook(hook)  # this process ends after the run
    gc.collect()
    t0, c0 = time.perf_counter(), time.process_time()
    res = run(root, paths or None, None, workers=1)
    seconds = (time.perf_counter() - t0, time.process_time() - c0)
    return seconds, sorted(opened), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, json_report(res.files)


def _timed_run(root: Path, paths: list[str], cache: Path | None) -> tuple[float, float]:
    """(wall, CPU seconds) of one in-process run."""
    gc.collect()
    t0, c0 = time.perf_counter(), time.process_time()
    run(root, paths or None, cache, workers=1)
    return time.perf_counter() - t0, time.process_time() - c0


def _alone(root: Path, rel: str) -> str:
    return json_report(run(root, [rel], None, workers=1).files)


def parse_seconds(root: Path, files: list[str]) -> tuple[float, float]:
    """(wall, CPU seconds) to read and ast.parse each file: the floor any analysis of these files pays."""
    t0, c0 = time.perf_counter(), time.process_time()
    for rel in files:
        try:
            ast.parse((root / rel).read_bytes())
        except (SyntaxError, ValueError, RecursionError, OSError):
            pass
    return time.perf_counter() - t0, time.process_time() - c0


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def cli_json(root: Path, paths: list[str], *extra: str) -> tuple[str, float, float]:
    """The CLI's --format json output, its wall and CPU time (a fresh process, as a user runs it)."""
    cmd = [sys.executable, "-m", "tools.classify", "--root", str(root), "--format", "json", *extra,
           *(["--paths", *paths] if paths else [])]
    t0, c0 = time.perf_counter(), _children_cpu()
    got = subprocess.run(cmd, cwd=ROOT, text=True, capture_output=True, check=False)
    wall, cpu = time.perf_counter() - t0, _children_cpu() - c0
    if got.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed ({got.returncode}):\n{got.stderr[-2000:]}")
    return got.stdout, wall, cpu


def differing(a: str, b: str, keys: set[str] | None = None) -> list[str]:
    """Keys whose entries differ between two JSON reports (restricted to `keys`' file when given)."""
    da, db = json.loads(a), json.loads(b)
    names = set(da) | set(db) if keys is None else keys
    return sorted(k for k in names if da.get(k) != db.get(k))


def bench_real(suite: Suite, repeats: int, alone: int, determinism: bool) -> None:
    root, paths = suite.root, suite.paths
    # (wall, CPU) pairs; on a machine shared with other work the CPU-time ratio is the steadier figure
    cold_runs: list[tuple[float, float]] = []
    parse_runs: list[tuple[float, float]] = []
    seconds, files, rss_kb, whole = in_child(_cold_one_process, root, paths)
    cold_runs.append(seconds)
    parse_runs.append(parse_seconds(root, files))
    for _ in range(repeats - 1):  # alternate, so both see the same spells of a noisy machine
        cold_runs.append(in_child(_timed_run, root, paths, None))
        parse_runs.append(parse_seconds(root, files))
    cold_s, parse_s = min(c[0] for c in cold_runs), min(p[0] for p in parse_runs)
    cold_cpu, parse_cpu = min(c[1] for c in cold_runs), min(p[1] for p in parse_runs)
    report = json.loads(whole)
    test_files = sorted(k for k, v in report.items() if "::" not in k)
    tests = sum(1 for k in report if "::" in k)
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp) / "cache"
        # fill the cache as a user's first run does: the CLI, whose JSON report is stored beside the snapshot
        cli_json(root, paths, "--cache-dir", str(cache))
        warm_s, warm_cpu = in_child(_timed_run, root, paths, cache)
        _, warm_cli, warm_cli_cpu = cli_json(root, paths, "--cache-dir", str(cache))
        _, bare_cli, bare_cli_cpu = cli_json(root, paths, "--help")  # interpreter start and imports only
    print(f"[{suite.name}] {len(test_files)} test files, {tests} node ids; the run opened {len(files)} .py files")
    print(f"  cold, one process: {cold_s:.2f}s wall, {cold_cpu:.2f}s CPU (best of "
          f"{' '.join(f'{c[0]:.2f}' for c in cold_runs)}); peak RSS {rss_kb / 1024:.0f} MiB")
    print(f"  bare ast.parse of the {len(files)} files it opened: {parse_s:.3f}s wall, {parse_cpu:.3f}s CPU; "
          f"ratio {cold_s / parse_s:.1f}x wall, {cold_cpu / parse_cpu:.1f}x CPU (goal <= 10x)")
    print(f"  warm: {warm_s:.2f}s wall / {warm_cpu:.2f}s CPU in-process; as a CLI process {warm_cli:.2f}s wall / "
          f"{warm_cli_cpu:.2f}s CPU, of which interpreter start and imports (`--help`) {bare_cli:.2f}s / "
          f"{bare_cli_cpu:.2f}s (goal <= 1 s)")
    if determinism:
        outs: dict[int, str] = {}
        for jobs in (1, 2, 4):
            outs[jobs], _, _ = cli_json(root, paths, "--no-cache", "--jobs", str(jobs))
        same = all(outs[j] == outs[1] for j in (2, 4))
        print(f"  --jobs 1/2/4 byte-identical: {'yes' if same else 'NO'}")
        for j in (2, 4):
            diff = differing(outs[1], outs[j])
            if diff:
                print(f"    --jobs {j} differs from --jobs 1 in {len(diff)} entries, e.g. {', '.join(diff[:5])}")
        step = max(1, len(test_files) // alone) if alone else 1
        sample = test_files[::step][:alone] if alone else test_files
        bad: list[tuple[str, list[str]]] = []
        for rel in sample:
            keys = {k for k in report if k == rel or k.startswith(rel + "::")}
            diff = differing(whole, in_child(_alone, root, rel), keys)
            if diff:
                bad.append((rel, diff))
        print(f"  file alone vs whole tree: {len(sample) - len(bad)}/{len(sample)} files identical")
        for rel, diff in bad:
            print(f"    DIFFERS {rel}: {len(diff)} entries, e.g. {', '.join(diff[:3])}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=None,
                    help="generated test files (default 10000; with --real-suite: no generated tree)")
    ap.add_argument("--keep", help="generate the tree here instead of a temporary directory")
    ap.add_argument("--repeats", type=int, default=3, help="bare parses and cold runs to take the best of")
    ap.add_argument("--real-suite", type=Path, nargs="+", action="extend", default=[],
                    help="an unpacked real suite, or a bench/accuracy_real_suites.py workdir (all its suites)")
    ap.add_argument("--alone", type=int, default=30,
                    help="real suites: test files to analyse alone against the whole tree (0: all)")
    ap.add_argument("--no-determinism", action="store_true", help="real suites: skip the determinism checks")
    args = ap.parse_args()
    for suite in real_suites(args.real_suite) if args.real_suite else []:
        bench_real(suite, args.repeats, args.alone, not args.no_determinism)
    if args.real_suite and args.files is None:
        return 0
    args.files = 10000 if args.files is None else args.files
    with tempfile.TemporaryDirectory() as tmp:
        gen = Path(args.keep) if args.keep else Path(tmp) / "tree"
        if not (gen / "pkg").exists():
            generate(gen, args.files)
        bench("generated", gen, Path(tmp) / "cache-gen", args.repeats)
        bench("project examples/", ROOT / "examples", Path(tmp) / "cache-proj", args.repeats)
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    child_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(f"peak memory (max RSS): {peak_kb / 1024:.0f} MiB (the one-process runs); largest forked analysis "
          f"process {child_kb / 1024:.0f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
