"""Fuzz-style generators of hostile input for the classifier; prints the table of docs/hostile-input.md.

Three generators, each seeded and bounded:

* malformed test files in 12 categories, written into one tree per category and classified by
  `python -m tools.classify --update` in a child process with 2 GiB of address space and a time limit;
* corrupted and type-confused caches (random byte flips of the sealed file, forged seals, wrong types under
  the right seal), each followed by a warm run whose labels must equal the cold run's;
* malformed classification files holding manual and runtime labels (conflict markers, truncation,
  misspelt keys, byte flips, NaN/Infinity, duplicate keys, non-canonical paths), each followed by `--update`.

Counted per category: inputs tried, crashes (a traceback, an "internal analysis error", an unexpected exit
status), hangs (past the time limit), silent losses (a test file without an entry and without a message;
a manual or runtime label gone after an `--update` that exited 0; labels that differ from a cold run).

    python3 bench/hostile_classify.py [--scale N] [--seed S]

tests/tools/classify/test_classify_hostile_fuzz.py runs every generator at a small scale (seconds) and
requires zeros.
"""

from __future__ import annotations

import argparse
import json
import marshal
import os
import random
import resource
import socket
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tools.classify import cache as cache_mod  # noqa: E402
from tools.classify.modules import display_name  # noqa: E402
from tools.classify.runner import run  # noqa: E402
from tools.contract import classification as cf  # noqa: E402

CHILD_MEMORY = 2 << 30
CHILD_TIMEOUT_S = 120
BODY = "\n\ndef test_a():\n    torch.ones(1)\n"


@dataclass
class Row:
    category: str
    inputs: int = 0
    crashes: int = 0
    hangs: int = 0
    losses: int = 0


# -- malformed test files -------------------------------------------------------------------------------
def _big(rng: random.Random) -> int:
    return rng.choice([10 ** rng.randint(5, 12), 2 ** rng.randint(20, 40), 9 ** 9])


def _constant(rng: random.Random) -> str:
    b = _big(rng)
    return rng.choice([
        f"X = {rng.randint(2, 99)} ** {rng.randint(2, 9)} ** {rng.randint(5, 12)}",
        f"X = {'x' * rng.randint(1, 5)!r} * {b}", f"X = {b} * b'y'", f"X = {rng.randint(2, 9)} ** {b}",
        f"X = 1 << {b}", f"X = '%0{b}d' % 1", f"X = ({rng.randint(2, 9)} ** 3000) * ({rng.randint(2, 9)} ** 3000)",
        f"S = 'a' * {rng.randint(100, 199)}; X = S.replace('', S).replace('', S)",
        f"X = [0] * {b}", f"X = range({b} ** 3)", f"X = float({rng.randint(2, 9)} ** {rng.randint(400, 2000)})",
        f"X = -({rng.randint(2, 9)} ** {b})", f"X = str({rng.randint(2, 9)} ** 5000)",
    ])


def _chain(rng: random.Random) -> str:
    n = rng.randint(100, 1500)
    lines = ["class C0:\n    pass"]
    for i in range(1, n):
        bases = sorted({f"C{i - 1}", *(f"C{rng.randrange(i)}" for _ in range(rng.randint(0, 2)))}, reverse=True)
        lines.append(f"class C{i}({', '.join(bases)}):\n    pass")
    return "\n".join(lines) + f"\nclass TestX(C{n - 1}):\n    def test_b(self):\n        pass"


def _nesting(rng: random.Random) -> str:
    d = rng.randint(50, 3000)
    return rng.choice(["X = " + "(" * d + "1" + ")" * d, "X = " + "[" * d + "]" * d, "X = " + "-" * d + "1",
                       "X = " + " + ".join(["1"] * d * 10), "X = " + "f'{" * min(d, 150) + "1" + "}'" * min(d, 150)])


def _ids(rng: random.Random) -> str:
    v = rng.choice([f"10 ** {rng.randint(4300, 9000)}", "0x" + "f" * rng.randint(3000, 9000), "float('nan')",
                    "1e400", "'\\x00\\n'", "b'\\xff'", "2 ** 2 ** 20"])
    return f"import pytest\n@pytest.mark.parametrize('x', [{v}, 1])\ndef test_p(x):\n    pass"


TEXT_CATEGORIES: dict[str, Callable[[random.Random], str]] = {
    "constant folding and value sizes": _constant, "class chains (MRO)": _chain, "deep nesting": _nesting,
    "huge ints in parametrize ids": _ids,
}


def _write_text_case(root: Path, i: int, make: Callable[[random.Random], str], rng: random.Random) -> None:
    (root / f"test_{i}.py").write_text("import torch\n" + make(rng) + BODY)


def _write_special(category: str, root: Path, i: int, rng: random.Random) -> None:
    valid = ("import torch\n" + BODY).encode()
    if category == "syntax errors (truncated files)":
        (root / f"test_{i}.py").write_bytes(valid[: rng.randint(1, len(valid) - 2)] + b"(:")
    elif category == "encodings and null bytes":
        raw = bytearray(valid)
        for _ in range(rng.randint(1, 4)):
            raw.insert(rng.randrange(len(raw)), rng.choice([0, 0xFF, 0xFE, 0xC3, 0x80]))
        (root / f"test_{i}.py").write_bytes(bytes(raw))
    elif category == "files over the size limit":
        with open(root / f"test_{i}.py", "wb") as fh:
            fh.write(valid)
            fh.truncate(rng.choice([9 << 20, 3 << 30]))  # sparse
    elif category == "non-regular files":
        kind = rng.choice(["fifo", "socket"])
        path = root / f"test_{i}.py"
        if kind == "fifo":
            os.mkfifo(path)
        else:
            s = socket.socket(socket.AF_UNIX)
            s.bind(str(path))
            s.close()
    elif category == "hostile file names":
        name = rng.choice([b"test_\xff%d.py", b"test_\n%d.py", b"test_\x1b%d.py", b"test_\xc3%d.py"]) % i
        (root / os.fsdecode(name)).write_bytes(valid)
    elif category == "symlinks (loops, dangling, aliases)":
        d = root / f"d{i}"
        d.mkdir()
        (d / "test_real.py").write_bytes(valid)
        kind = rng.choice(["loop", "dangling", "alias", "self"])
        if kind == "loop":
            (d / "up").symlink_to(root)
        elif kind == "dangling":
            (d / "test_gone.py").symlink_to(root / "nowhere.py")
        elif kind == "alias":
            (root / f"alias{i}").symlink_to(d)
        else:
            (d / "test_self.py").symlink_to(d / "test_self.py")


SPECIAL_CATEGORIES = ("syntax errors (truncated files)", "encodings and null bytes", "files over the size limit",
                      "non-regular files", "hostile file names", "symlinks (loops, dangling, aliases)")
# Paths the classifier must either classify or name on stderr (never silently leave out)
_LEGIT = ("non-regular files", "hostile file names")


def _limit_child() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (CHILD_MEMORY, CHILD_MEMORY))


def _classify(root: Path, *extra: str) -> tuple[int | None, str]:
    try:
        proc = subprocess.run([sys.executable, "-m", "tools.classify", "--root", str(root), "--jobs", "1", *extra],
                              cwd=REPO, capture_output=True, text=True, timeout=CHILD_TIMEOUT_S,
                              preexec_fn=_limit_child, errors="replace")
    except subprocess.TimeoutExpired:
        return None, ""
    return proc.returncode, proc.stderr


def fuzz_test_files(scale: int, seed: int) -> list[Row]:
    rows = []
    for category in (*TEXT_CATEGORIES, *SPECIAL_CATEGORIES):
        rng = random.Random(f"{seed}:{category}")
        row = Row(category)
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            for i in range(scale):
                if category in TEXT_CATEGORIES:
                    _write_text_case(root, i, TEXT_CATEGORIES[category], rng)
                else:
                    _write_special(category, root, i, rng)
                row.inputs += 1
            rc, err = _classify(root, "--update", "--no-cache")
            if rc is None:
                row.hangs += 1
                rows.append(row)
                continue
            data = json.loads((root / cf.DEFAULT_FILENAME).read_text()) if rc == 0 else {"files": {}}
            entries = data["files"]
            if rc != 0 or "Traceback" in err:
                row.crashes += 1
            row.crashes += sum(any("internal analysis error" in r for r in e.get("reasons", [])) for e in
                               entries.values())
            for dirpath, _dirs, names in os.walk(root):  # every test file: an entry, or a message naming it
                for name in names:
                    if not (name.startswith("test_") and name.endswith(".py")):
                        continue
                    rel = os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/")
                    shown = "/".join(display_name(part) for part in rel.split("/"))
                    if rel not in entries and f"classify: {shown}" not in err and not any(
                            f"classify: {rel.rsplit('/', 1)[0]}" in line for line in err.splitlines() if "/" in rel):
                        real = os.path.relpath(os.path.realpath(os.path.join(dirpath, name)), os.path.realpath(root))
                        if real not in entries:
                            row.losses += 1
        rows.append(row)
    return rows


# -- corrupted caches -----------------------------------------------------------------------------------
def _labels(res: object) -> dict[str, str]:
    return {f"{rel}::{k}": v.label for rel, r in res.files.items() for k, v in r.tests.items()}  # type: ignore[attr-defined]


def fuzz_caches(scale: int, seed: int) -> list[Row]:
    rng = random.Random(seed)
    flips, forged, confused = Row("cache: random byte flips"), Row("cache: forged seal"), Row("cache: wrong types")
    with tempfile.TemporaryDirectory() as tmp:
        root, cache = Path(tmp) / "r", Path(tmp) / "cache"
        os.environ.setdefault("XDG_CACHE_HOME", str(Path(tmp) / "xdg"))
        for i in range(6):
            p = root / "tests" / f"test_{i}.py"
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text("import torch\n\ndef test_a():\n    torch.ones(1)" + (".cuda()\n" if i % 2 else "\n"))
            os.utime(p, (1, 1))
        cold = _labels(run(root, None, cache, workers=1))
        sealed = {n: (cache / n).read_bytes() for n in (cache_mod.CACHE_NAME, cache_mod.SNAPSHOT_NAME)}
        secret = cache_mod.load_secret(cache_mod.user_cache_base())

        def attempt(row: Row, name: str, data: bytes) -> None:
            for n, raw in sealed.items():
                (cache / n).write_bytes(data if n == name else raw)
            row.inputs += 1
            try:
                if _labels(run(root, None, cache, workers=1)) != cold:
                    row.losses += 1
            except Exception:  # noqa: BLE001 - counted
                row.crashes += 1

        for _ in range(scale):
            name = rng.choice(list(sealed))
            raw = bytearray(sealed[name])
            for _ in range(rng.randint(1, 16)):
                raw[rng.randrange(len(raw))] = rng.randrange(256)
            attempt(flips, name, bytes(raw))
            payload = marshal.loads(sealed[name][len(cache_mod.SEAL) + 64:])
            text = json.dumps(payload).replace('"gpu"', '"cpu"')
            attempt(forged, name, cache_mod.seal(os.urandom(32), marshal.dumps(json.loads(text))))
            bad = rng.choice(["x", None, 3, [1], {"label": 7}, {"torch": True, "tests": {"t": {"label": "gpu"}}}])
            for table in ("results", "imports", "stats", "files"):
                if isinstance(payload.get(table), dict):
                    for k in list(payload[table])[: rng.randint(1, 3)]:
                        payload[table][k] = bad
            attempt(confused, name, cache_mod.seal(secret, marshal.dumps(payload)))
    return [flips, forged, confused]


# -- malformed classification files ---------------------------------------------------------------------
def _mutations(text: str, rng: random.Random) -> list[tuple[str, str]]:
    lines = text.splitlines(keepends=True)
    k = rng.randrange(1, len(lines) - 1)
    flipped = bytearray(text.encode())
    flipped[rng.randrange(len(flipped))] = rng.randrange(256)
    return [
        ("conflict markers", "".join(lines[:k] + ["<<<<<<< ours\n"] + lines[k:k + 2] + ["=======\n", ">>>>>>> b\n"]
                                     + lines[k + 2:])),
        ("truncated", text[: rng.randrange(len(text))]),
        ("misspelt key", text.replace('"source": "manual"', rng.choice(['"sorce": "manual"', '"Source": "manual"',
                                                                       '"source ": "manual"']), 1)),
        ("byte flip", flipped.decode("utf-8", "surrogateescape")),
        ("NaN/Infinity", text.replace('"vram_gb": 0', rng.choice(['"vram_gb": NaN', '"vram_gb": Infinity']), 1)),
        ("duplicate key", text.replace('"files": {', '"files": {"tests/test_x.py": {"label": "cpu"}, ', 1)),
        ("non-canonical path", text.replace('"tests/test_x.py"', rng.choice(['"./tests/test_x.py"',
                                                                           '"tests//test_x.py"']), 1)),
    ]


def fuzz_classification_files(scale: int, seed: int) -> list[Row]:
    from tools.classify.cli import main

    rng = random.Random(seed)
    rows: dict[str, Row] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "tests").mkdir()
        (root / "tests" / "test_x.py").write_text("import torch\n\ndef test_cpu():\n    torch.ones(1)\n\n"
                                                  "def test_gpu():\n    torch.ones(1).cuda()\n")
        path = root / cf.DEFAULT_FILENAME
        devnull = open(os.devnull, "w")  # noqa: SIM115 - the CLI's reports are not needed
        saved = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = devnull
        try:
            main(["--root", str(root), "--update", "--no-cache"])
            data = cf.load(path)
            tests = data["files"]["tests/test_x.py"]["tests"]
            tests["test_cpu"].update(source="manual", label="gpu", gpu_count=2)
            tests["test_gpu[cuda]"] = {"label": "gpu", "gpu_count": 1, "vram_gb": 0, "source": "runtime",
                                       "reasons": ["r"]}
            good = cf.dumps(data)
            for _ in range(scale):
                for kind, text in _mutations(good, rng):
                    row = rows.setdefault(kind, Row(f"classification file: {kind}"))
                    row.inputs += 1
                    path.write_bytes(text.encode("utf-8", "surrogateescape"))
                    try:
                        rc = main(["--root", str(root), "--update", "--no-cache"])
                    except Exception:  # noqa: BLE001 - counted
                        row.crashes += 1
                        continue
                    if rc == 0:  # accepted (a harmless flip): both labels must still be there
                        after = cf.load(path)["files"].get("tests/test_x.py", {}).get("tests", {})
                        if after.get("test_cpu", {}).get("source") != "manual" or "test_gpu[cuda]" not in after:
                            row.losses += 1
                    elif path.read_bytes() != text.encode("utf-8", "surrogateescape"):
                        row.losses += 1  # refused, but written anyway
        finally:
            sys.stdout, sys.stderr = saved
            devnull.close()
    return list(rows.values())


def table(rows: list[Row]) -> str:
    out = ["| input category | inputs tried | crashes | hangs | silent losses |", "|---|---:|---:|---:|---:|"]
    out += [f"| {r.category} | {r.inputs} | {r.crashes} | {r.hangs} | {r.losses} |" for r in rows]
    total = Row("**total**", *(sum(getattr(r, f) for r in rows) for f in ("inputs", "crashes", "hangs", "losses")))
    out.append(f"| {total.category} | {total.inputs} | {total.crashes} | {total.hangs} | {total.losses} |")
    return "\n".join(out)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scale", type=int, default=20, help="inputs per category (default 20)")
    p.add_argument("--seed", type=int, default=13)
    args = p.parse_args()
    rows = fuzz_test_files(args.scale, args.seed) + fuzz_caches(args.scale, args.seed) + \
        fuzz_classification_files(args.scale, args.seed)
    print(table(rows))


if __name__ == "__main__":
    main()
