"""Benchmark the static classifier: files/s cold and warm, ratio to bare ast.parse, peak memory.

Prints figures only; asserts nothing about timing. Usage:
    python bench/bench_classify.py [--files 10000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import ast
import gc
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tools.classify.modules import is_test_file, walk_python_files  # noqa: E402
from tools.classify.runner import run  # noqa: E402

TEMPLATES = [
    "import torch\n\ndef test_cpu_{i}():\n    x = torch.ones({n})\n    assert x.sum() == {n}\n",
    "import pytest\nimport torch\nfrom pkg.helpers import requires_cuda, build\n\n@requires_cuda\n"
    "def test_gpu_{i}():\n    build('cuda')\n\n@pytest.mark.parametrize('device', ['cpu', 'cuda'])\n"
    "def test_param_{i}(device):\n    torch.zeros({n}, device=device)\n",
    "import unittest\nimport torch\n\nclass Case{i}(unittest.TestCase):\n    def setUp(self):\n"
    "        self.device = 'cuda' if torch.cuda.is_available() else 'cpu'\n\n    def test_a(self):\n"
    "        torch.ones({n}).to(self.device)\n",
    "import json\n\ndef test_pure_{i}():\n    assert json.loads('{n}') == {n}\n",
]
HELPERS = (
    "import pytest\nimport torch\n\n"
    "requires_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason='cuda')\n\n"
    "def build(device):\n    return torch.nn.Linear(2, 2).to(device)\n"
)


def generate(root: Path, count: int) -> None:
    rng = random.Random(0)
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "helpers.py").write_text(HELPERS)
    for i in range(count):
        d = root / "tests" / f"d{i // 200}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"test_gen_{i}.py").write_text(rng.choice(TEMPLATES).format(i=i, n=rng.randint(1, 9)))


def bare_parse_seconds(root: Path) -> tuple[float, int]:
    files = [f for f in walk_python_files(root, []) if is_test_file(f.rsplit("/", 1)[-1])]
    t0 = time.perf_counter()
    for rel in files:
        try:
            ast.parse((root / rel).read_bytes())
        except (SyntaxError, ValueError, RecursionError):
            pass
    return time.perf_counter() - t0, len(files)


def bench(name: str, root: Path, cache: Path) -> None:
    parse_s, n = bare_parse_seconds(root)
    t0 = time.perf_counter()
    cold = run(root, None, None)
    cold_s = time.perf_counter() - t0
    tests = sum(len(r.tests) for r in cold.files.values())
    del cold
    run(root, None, cache)  # fill the cache
    gc.collect()  # a warm run is a fresh CLI process: do not bill it for the cold run's garbage
    t1 = time.perf_counter()
    warm = run(root, None, cache)
    warm_s = time.perf_counter() - t1
    print(f"[{name}] {n} test files, {tests} tests")
    print(f"  cold: {cold_s:.2f}s = {n / cold_s:.0f} files/s")
    print(f"  warm: {warm_s:.2f}s = {n / warm_s:.0f} files/s ({cold_s / warm_s:.1f}x faster, "
          f"{warm.cache_hits} cache hits)")
    print(f"  bare ast.parse: {parse_s:.2f}s; classification/parse ratio {cold_s / parse_s:.2f}x (goal <= 2x)")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=10000)
    ap.add_argument("--keep", help="generate the tree here instead of a temporary directory")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        gen = Path(args.keep) if args.keep else Path(tmp) / "tree"
        if not (gen / "pkg").exists():
            generate(gen, args.files)
        bench("generated", gen, Path(tmp) / "cache-gen")
        bench("project tests/", ROOT / "tests", Path(tmp) / "cache-proj")
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"peak memory (max RSS): {peak_kb / 1024:.0f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
