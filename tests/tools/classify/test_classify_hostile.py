"""Hostile and broken input (issue 13): `--update` never drops a manual or runtime label, analysis of any
input is bounded (a bounded file is `unknown` with the reason), nothing hangs on a non-regular file, and the
cache can be neither forged from the tree nor corrupted into a different answer.

Each test failed on the code before the fix (noted per test); bench/hostile_classify.py is the generator
that tried many more inputs of each kind and produced the table in docs/hostile-input.md.
"""

from __future__ import annotations

import ast
import json
import marshal
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from tools.classify import cache as cache_mod
from tools.classify import limits
from tools.classify.cli import main
from tools.classify.runner import run
from tools.contract import classification as cf

REPO = Path(__file__).resolve().parents[3]
CPU = "import torch\n\ndef test_a():\n    torch.ones(1)\n"
MIXED = "import torch\n\ndef test_cpu():\n    torch.ones(2)\n\ndef test_gpu():\n    torch.ones(2).cuda()\n"


@pytest.fixture(autouse=True)
def _user_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg")))


def _write(root: Path, rel: str, text: str | bytes) -> Path:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(text if isinstance(text, bytes) else text.encode())
    return p


def _labelled(root: Path) -> Path:
    """A tree whose classification file holds a manual and a runtime label."""
    _write(root, "tests/test_x.py", MIXED)
    assert main(["--root", str(root), "--update", "--no-cache"]) == 0
    path = root / cf.DEFAULT_FILENAME
    data = cf.load(path)
    tests = data["files"]["tests/test_x.py"]["tests"]
    tests["test_cpu"] = {"label": "gpu", "gpu_count": 2, "vram_gb": 0, "source": "manual", "reasons": ["mine"]}
    tests["test_gpu[cuda]"] = {"label": "gpu", "gpu_count": 1, "vram_gb": 0, "source": "runtime",
                               "reasons": ["tests/test_x.py:7: CPU run failed"]}
    cf.save(path, data)
    return path


# -- the classification file ---------------------------------------------------------------------------
def test_update_over_a_conflicted_file_stops_without_writing(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                                             ) -> None:
    # before: "not valid JSON", then "wrote ...", exit 0, every manual entry gone
    path = _labelled(tmp_path)
    lines = path.read_text().splitlines(keepends=True)
    conflicted = "".join(lines[:3] + ["<<<<<<< HEAD\n"] + lines[3:6] + ["=======\n", ">>>>>>> theirs\n"] + lines[6:])
    path.write_text(conflicted)
    capsys.readouterr()
    assert main(["--root", str(tmp_path), "--update", "--no-cache"]) == 2
    err = capsys.readouterr().err
    assert f"{path}:4: unresolved merge conflict marker '<<<<<<<'" in err and "wrote" not in err
    assert path.read_text() == conflicted
    assert main(["--root", str(tmp_path), "--check", "--no-cache"]) == 1


@pytest.mark.parametrize("text,message", [
    ('{"version": 1, "files": {}', "not valid JSON"),
    ("", "not valid JSON"),
    ('{"version": 1, "files": {"a.py": {"label": "cpu"}, "a.py": {"label": "gpu"}}}', "duplicate key 'a.py'"),
    ('{"version": 1, "files": {"a.py": {"label": "gpu", "vram_gb": Infinity}}}', "Infinity is not a JSON number"),
    (b'{"version": 1, "files": {"\xff.py": {}}}', "not UTF-8"),
])
def test_unreadable_classification_files_are_never_overwritten(tmp_path: Path, text: str | bytes, message: str,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    _write(tmp_path, "test_a.py", CPU)
    path = _write(tmp_path, cf.DEFAULT_FILENAME, text)
    assert main(["--root", str(tmp_path), "--update", "--no-cache"]) == 2
    assert message in capsys.readouterr().err
    assert path.read_bytes() == (text if isinstance(text, bytes) else text.encode())


def test_a_misspelt_key_is_an_error_naming_the_entry(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # before: `sorce` was ignored, the entry read as static, and --update replaced the manual label
    path = _labelled(tmp_path)
    data = json.loads(path.read_text())
    test = data["files"]["tests/test_x.py"]["tests"]["test_cpu"]
    test["sorce"] = test.pop("source")
    path.write_text(json.dumps(data))
    before = path.read_text()
    assert main(["--root", str(tmp_path), "--update", "--no-cache"]) == 2
    err = capsys.readouterr().err
    assert "files['tests/test_x.py'].tests['test_cpu']: unknown key 'sorce'" in err
    assert path.read_text() == before


@pytest.mark.parametrize("bad,message", [
    ({"files": {"./x.py": {"label": "cpu"}}}, "canonical"),
    ({"files": {"a//x.py": {"label": "cpu"}}}, "canonical"),
    ({"files": {"a/x.py/": {"label": "cpu"}}}, "canonical"),
    ({"files": {"a\nb.py": {"label": "cpu"}}}, "canonical"),
    ({"files": {"x.py": {"label": "cpu", "tests": {"test_a\n": {"label": "cpu"}}}}}, "control characters"),
    ({"files": {"x.py": {"label": "gpu", "vram_gb": float("inf")}}}, "finite"),
    ({"files": {"x.py": {"label": "gpu", "vram_gb": float("nan")}}}, "finite"),
    ({"files": {}, "extra": 1}, "unknown key 'extra'"),
    ({"files": {"x.py": {"label": "cpu", "lable": "gpu"}}}, "unknown key 'lable'"),
])
def test_validator_rejects_what_bazel_rejects_or_never_matches(bad: dict[str, object], message: str) -> None:
    with pytest.raises(cf.ClassificationFileError, match=message):
        cf.validate({"version": 1, **bad})


def test_the_checked_in_file_is_valid() -> None:
    cf.load(REPO / cf.DEFAULT_FILENAME)


def test_stale_temporaries_of_killed_writers_are_swept(tmp_path: Path) -> None:
    target = tmp_path / cf.DEFAULT_FILENAME
    old = _write(tmp_path, f".{cf.DEFAULT_FILENAME}.abc123.tmp", "half")
    young = _write(tmp_path, f".{cf.DEFAULT_FILENAME}.def456.tmp", "a live writer's")
    other = _write(tmp_path, ".other.json.x.tmp", "not ours")
    t = old.stat().st_mtime - 3600
    os.utime(old, (t, t))
    os.utime(other, (t, t))
    assert cf.sweep_stale_temporaries(target) == [old]
    assert young.exists() and other.exists() and not old.exists()


# -- files that cannot be analysed now keep their entries ---------------------------------------------------
def test_a_temporary_syntax_error_keeps_manual_and_runtime_labels(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    # before: 0 of 2 survived the fix
    path = _labelled(tmp_path)
    before = cf.load(path)["files"]["tests/test_x.py"]
    _write(tmp_path, "tests/test_x.py", MIXED + "def broken(:\n")
    capsys.readouterr()
    assert main(["--root", str(tmp_path), "--update", "--no-cache"]) == 0
    assert "tests/test_x.py: cannot be analysed (syntax error at line 8" in capsys.readouterr().err
    assert cf.load(path)["files"]["tests/test_x.py"] == before
    assert main(["--root", str(tmp_path), "--check", "--no-cache"]) == 1  # CI still fails on it
    _write(tmp_path, "tests/test_x.py", MIXED)
    assert main(["--root", str(tmp_path), "--update", "--no-cache"]) == 0
    tests = cf.load(path)["files"]["tests/test_x.py"]["tests"]
    assert tests["test_cpu"]["source"] == "manual" and tests["test_gpu[cuda]"]["source"] == "runtime"


def test_entries_under_an_unlistable_directory_are_kept_and_reported(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    if os.geteuid() == 0:
        pytest.skip("root lists every directory")  # (covered by the walk test below with a mocked scandir)
    path = _labelled(tmp_path)
    before = cf.load(path)["files"]["tests/test_x.py"]
    (tmp_path / "tests").chmod(0)
    try:
        assert main(["--root", str(tmp_path), "--update", "--no-cache"]) == 0
    finally:
        (tmp_path / "tests").chmod(0o755)
    assert "classify: tests: cannot list directory" in capsys.readouterr().err
    assert cf.load(path)["files"]["tests/test_x.py"] == before


def test_walk_reports_unlistable_directories(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    # before: os.walk skipped such a directory without a message, and --update dropped its entries
    path = _labelled(tmp_path)
    before = cf.load(path)["files"]["tests/test_x.py"]
    real = os.scandir

    def scandir(p: object) -> object:
        if str(p).endswith(os.sep + "tests"):
            raise PermissionError(13, "Permission denied")
        return real(p)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "scandir", scandir)
    capsys.readouterr()
    assert main(["--root", str(tmp_path), "--update", "--no-cache"]) == 0
    assert "classify: tests: cannot list directory: Permission denied" in capsys.readouterr().err
    assert cf.load(path)["files"]["tests/test_x.py"] == before


def test_non_regular_files_never_block(tmp_path: Path) -> None:
    # before: the run blocked forever opening the FIFO
    _write(tmp_path, "tests/test_ok.py", CPU)
    os.mkfifo(tmp_path / "tests" / "test_fifo.py")
    os.mkfifo(tmp_path / "pyproject.toml")
    os.mkfifo(tmp_path / "requirements.txt")
    proc = subprocess.run([sys.executable, "-m", "tools.classify", "--root", str(tmp_path), "--update"],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "classify: tests/test_fifo.py: a FIFO, not a regular file; not analysed" in proc.stderr
    assert "pyproject.toml: cannot read" in proc.stderr
    assert cf.load(tmp_path / cf.DEFAULT_FILENAME)["files"]["tests/test_ok.py"]["label"] == "cpu"


def test_a_file_name_that_is_not_utf8_is_reported_not_fatal(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    # before: --update failed with "surrogates not allowed"
    _write(tmp_path, "tests/test_ok.py", CPU)
    (tmp_path / "tests" / os.fsdecode(b"test_\xff.py")).write_text(CPU)
    (tmp_path / "tests" / "test_new\nline.py").write_text(CPU)
    assert main(["--root", str(tmp_path), "--update", "--no-cache"]) == 0
    err = capsys.readouterr().err
    assert "classify: tests/test_\\xff.py: name is not valid UTF-8" in err
    assert "classify: tests/test_new\\nline.py: name contains a control character" in err
    assert list(cf.load(tmp_path / cf.DEFAULT_FILENAME)["files"]) == ["tests/test_ok.py"]


def test_files_under_a_symlinked_directory_are_keyed_by_their_real_path(tmp_path: Path) -> None:
    # before: `tests/alias/test_a.py` (the link sorts first), a key no BUILD file's package ever looks up
    _write(tmp_path, "tests/real/test_a.py", CPU)
    (tmp_path / "tests" / "alias").symlink_to(tmp_path / "tests" / "real")
    res = run(tmp_path, None, None, workers=1)
    assert list(res.files) == ["tests/real/test_a.py"] and res.problems == []


@pytest.mark.parametrize("name", ["pyproject.toml", "pytest.ini", "setup.cfg", cf.DEFAULT_FILENAME])
def test_a_huge_root_file_is_refused_not_read(tmp_path: Path, name: str) -> None:
    # before: MemoryError reading the whole 3 GB file
    _write(tmp_path, "test_a.py", CPU)
    with open(tmp_path / name, "wb") as fh:
        fh.truncate(3 << 30)  # sparse
    proc = subprocess.run([sys.executable, "-m", "tools.classify", "--root", str(tmp_path), "--check", "--no-cache"],
                          cwd=REPO, capture_output=True, text=True, timeout=120,
                          preexec_fn=lambda: _limit_memory(1 << 30))
    assert "Traceback" not in proc.stderr and "over the" in proc.stderr, proc.stderr


def test_the_file_size_limit_is_configurable(tmp_path: Path) -> None:
    _write(tmp_path, "test_a.py", CPU + "# padding\n" * 100)
    assert main(["--root", str(tmp_path), "--update", "--no-cache", "--max-file-bytes", "200"]) == 0
    entry = cf.load(tmp_path / cf.DEFAULT_FILENAME)["files"]["test_a.py"]
    assert entry["label"] == "unknown" and "over the 200-byte limit" in entry["reasons"][0]


# -- bounded analysis ------------------------------------------------------------------------------------
BOUNDED = {  # source line -> what the reason says (each ran for minutes or took GBs before)
    "X = 9 ** 9 ** 9": "9 ** 387420489 would have about",
    "X = 'a' * 10 ** 10": "'a' * 10000000000 would have about 10,000,000,000 characters",
    "X = 2 ** 10 ** 10": "2 ** 10000000000",
    "X = b'x' * 10 ** 10": "characters",
    "X = 10 ** 10 * 'ab'": "characters",
    "X = '%0999999999d' % 1": "characters",
    "X = '" + "y" * 600_000 + "'; Y = f'{X}{X}'": "an f-string",
    "S = 'a' * 199; X = S.replace('', S).replace('', S)": "replace",
    "X = 7 ** 2000\nX = X * X": "bits",
    "X = 1 << 10 ** 10": "1 << 10000000000",  # (shifts are folded since round 19: `1 << 4` is an id)
}
UNBOUNDED_BUT_HARMLESS = ["X = [0] * 10 ** 10", "X = range(10 ** 30)", "X = float(10 ** 400)",
                          "X = (10 ** 1000) ** -(10 ** 1000)", "X = len(range(10 ** 30))"]


def _limit_memory(nbytes: int) -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (nbytes, nbytes))


def test_one_line_of_python_cannot_exhaust_time_or_memory(tmp_path: Path) -> None:
    files = {f"tests/test_b{i}.py": f"import torch\n{line}\n\ndef test_a():\n    torch.ones(1)\n"
             for i, line in enumerate(BOUNDED)}
    files.update({f"tests/test_u{i}.py": f"import torch\n{line}\n\ndef test_a():\n    torch.ones(1)\n"
                  for i, line in enumerate(UNBOUNDED_BUT_HARMLESS)})
    for rel, text in files.items():
        _write(tmp_path, rel, text)
    # (in a child with 2 GiB of address space: before, the first file alone blocked the run, another took 9.8 GB)
    proc = subprocess.run([sys.executable, "-m", "tools.classify", "--root", str(tmp_path), "--update", "--no-cache",
                           "--jobs", "1"], cwd=REPO, capture_output=True, text=True, timeout=300,
                          preexec_fn=lambda: _limit_memory(2 << 30))
    assert proc.returncode == 0, proc.stderr
    data = cf.load(tmp_path / cf.DEFAULT_FILENAME)["files"]
    for i, what in enumerate(BOUNDED.values()):
        test = data[f"tests/test_b{i}.py"]["tests"]["test_a"]
        assert test["label"] == "unknown" and any(what in r for r in test["reasons"]), (i, test)
    for i, line in enumerate(UNBOUNDED_BUT_HARMLESS):
        assert data[f"tests/test_u{i}.py"]["tests"]["test_a"]["label"] == "cpu", line


def test_huge_ints_in_parametrize_lists_get_ids_not_a_traceback(tmp_path: Path) -> None:
    # before: "internal analysis error: ValueError: Exceeds the limit (4300 digits)" and no tests at all
    _write(tmp_path, "test_p.py", "import pytest\nimport torch\n\n@pytest.mark.parametrize('x', [10 ** 5000, 0x"
           + "f" * 5000 + ", 1])\ndef test_a(x):\n    torch.ones(1)\n")
    r = run(tmp_path, None, None, workers=1).files["test_p.py"]
    assert r.error is None and sorted(r.tests) == ["test_a[1]", "test_a[x0]", "test_a[x1]"]


def test_class_chains_are_bounded(tmp_path: Path) -> None:
    # before: 800 chained classes took 39-63 s (a cubic MRO) and were labelled as if nothing were wrong
    def chain(n: int) -> str:
        body = "".join(f"class C{i}(C{i - 1}):\n    pass\n" for i in range(1, n))
        return ("import torch\nclass C0:\n    pass\n" + body
                + f"class TestX(C{n - 1}):\n    def test_a(self):\n        torch.ones(1)\n")

    _write(tmp_path, "test_long.py", chain(800))
    _write(tmp_path, "test_short.py", chain(200))
    res = run(tmp_path, None, None, workers=1).files
    assert "class hierarchy bound: the MRO of" in (res["test_long.py"].error or "")
    assert res["test_short.py"].tests["TestX::test_a"].label == "cpu"


def test_the_bounded_c3_merge_is_pythons_mro() -> None:
    rng = random.Random(13)
    for trial in range(300):
        classes: dict[str, type] = {}
        names: list[str] = []
        for i in range(rng.randint(1, 12)):
            bases = rng.sample(names, k=min(len(names), rng.randint(0, 3)))
            try:
                cls = type(f"K{i}", tuple(classes[b] for b in bases), {})
            except TypeError:
                continue  # no consistent MRO: Python refuses the class
            classes[f"K{i}"] = cls
            names.append(f"K{i}")
            base_mros = [[c.__name__ for c in classes[b].__mro__[:-1]] for b in bases]
            got = limits.c3_merge(f"K{i}", [*base_mros, bases], f"K{i}")
            assert got == [c.__name__ for c in cls.__mro__[:-1]], trial


# -- the cache -------------------------------------------------------------------------------------------
GPU = "import torch\n\ndef test_a():\n    torch.ones(1).cuda()\n"


def _labels(res: object) -> dict[str, str]:
    return {f"{rel}::{k}": v.label for rel, r in res.files.items() for k, v in r.tests.items()}  # type: ignore[attr-defined]


def test_the_default_cache_is_outside_the_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "clone"
    _write(root, "tests/test_g.py", GPU)
    planted = root / ".torch-classify-cache"  # a cache committed to the repository: never read
    planted.mkdir()
    (planted / "classify-cache-v2.marshal").write_bytes(marshal.dumps({"results": {}}))
    assert main(["--root", str(root), "--update"]) == 0
    where = cache_mod.default_cache_dir(root)
    assert where is not None and str(where).startswith(os.environ["XDG_CACHE_HOME"])
    assert (where / cache_mod.CACHE_NAME).exists()
    assert cf.load(root / cf.DEFAULT_FILENAME)["files"]["tests/test_g.py"]["label"] == "gpu"


def test_a_forged_cache_entry_is_not_trusted(tmp_path: Path) -> None:
    # before: a forged entry (here: in the cache directory itself) made a GPU test `cpu`
    root, cache = tmp_path / "r", tmp_path / "cache"
    old = os.stat(_write(root, "tests/test_g.py", GPU)).st_mtime - 10
    os.utime(root / "tests/test_g.py", (old, old))  # (not racy: the run writes its snapshot)
    cold = _labels(run(root, None, cache, workers=1))
    for name in (cache_mod.CACHE_NAME, cache_mod.SNAPSHOT_NAME):
        raw = (cache / name).read_bytes()
        payload = marshal.loads(raw[len(cache_mod.SEAL) + 64:])
        forged = json.loads(json.dumps(payload).replace('"gpu"', '"cpu"').replace('"gpu_count": 1', '"gpu_count": 0'))
        fake_secret = b"\0" * 32  # whoever plants a file does not have the user's secret
        (cache / name).write_bytes(cache_mod.seal(fake_secret, marshal.dumps(forged)))
        assert _labels(run(root, None, cache, workers=1)) == cold == {"tests/test_g.py::test_a": "gpu"}


def test_corrupt_caches_are_recomputed_never_a_traceback_or_another_answer(tmp_path: Path) -> None:
    # before: random corruption changed the output in 23 of 71 runs; type confusion gave tracebacks in 44 of 44
    root, cache = tmp_path / "r", tmp_path / "cache"
    for i in range(4):
        _write(root, f"tests/test_{i}.py", GPU if i % 2 else CPU)
    cold = _labels(run(root, None, cache, workers=1))
    sealed = (cache / cache_mod.CACHE_NAME).read_bytes()
    rng = random.Random(7)
    for _ in range(25):
        raw = bytearray(sealed)
        for _ in range(rng.randint(1, 8)):
            raw[rng.randrange(len(raw))] = rng.randrange(256)
        (cache / cache_mod.CACHE_NAME).write_bytes(bytes(raw))
        (cache / cache_mod.SNAPSHOT_NAME).unlink(missing_ok=True)
        assert _labels(run(root, None, cache, workers=1)) == cold
    # Type confusion under the right seal (what a bug of the classifier itself could write): entries dropped
    secret = cache_mod.load_secret(cache_mod.user_cache_base())
    payload = marshal.loads(sealed[len(cache_mod.SEAL) + 64:])
    for key in payload["results"]:
        payload["results"][key] = {"torch": "yes", "tests": {"test_a": {"label": 3}}}
    for key in payload["imports"]:
        payload["imports"][key] = [[1, 2, 3]]
    payload["stats"] = {k: ["x", None, 3] for k in payload["stats"]}
    (cache / cache_mod.CACHE_NAME).write_bytes(cache_mod.seal(secret, marshal.dumps(payload)))
    (cache / cache_mod.SNAPSHOT_NAME).unlink(missing_ok=True)
    assert _labels(run(root, None, cache, workers=1)) == cold


def test_limits_module_is_used_where_values_are_built() -> None:
    # The bounds live in one module; each site that folds constants or builds strings asks it first.
    users = {p.name for p in (REPO / "tools" / "classify").glob("*.py")
             if any(isinstance(n, ast.ImportFrom) and n.module == "tools.classify" and any(
                 a.name == "limits" for a in n.names) for n in ast.walk(ast.parse(p.read_text())))}
    assert {"interp_expressions.py", "interp_statements.py", "interp_classes.py", "interp_external.py",
            "collect.py", "runner.py"} <= users


def test_a_bound_hit_in_a_test_or_a_helper_names_the_line(tmp_path: Path) -> None:
    _write(tmp_path, "test_f.py", "import torch\n\ndef helper():\n    return 'a' * 10 ** 10\n\n"
           "def test_body():\n    x = 9 ** 9 ** 9\n    torch.ones(1, device='cpu')\n\n"
           "def test_helper():\n    helper()\n    torch.ones(1, device='cpu')\n\n"
           "def test_aug():\n    s = 'ab'\n    s *= 10 ** 10\n    torch.ones(1, device='cpu')\n")
    tests = run(tmp_path, None, None, workers=1).files["test_f.py"].tests
    assert {k: v.label for k, v in tests.items()} == {"test_body": "unknown", "test_helper": "unknown",
                                                      "test_aug": "unknown"}
    assert tests["test_helper"].reasons[0].startswith("test_f.py:11: calls helper() -> test_f.py:4: constant folding")
    assert tests["test_aug"].reasons[0].startswith("test_f.py:16: constant folding bound: 'ab' * 10000000000")


def test_a_bound_hit_in_a_class_body_makes_its_tests_unknown(tmp_path: Path) -> None:
    # the body runs when the module is imported: a subclass's tests (another class body) inherit the hit
    _write(tmp_path, "test_f.py", "import torch\n\nclass TestBig:\n    X = 2 ** 10 ** 10\n\n"
           "    def test_a(self):\n        torch.ones(1, device='cpu')\n\n"
           "class TestSub(TestBig):\n    pass\n\n"
           "class TestSmall:\n    X = 2 ** 10\n\n    def test_b(self):\n        torch.ones(1, device='cpu')\n\n"
           "class TestDevice:\n    t = torch.ones(1).cuda()\n\n    def test_c(self):\n        pass\n")
    tests = run(tmp_path, None, None, workers=1).files["test_f.py"].tests
    assert {k: v.label for k, v in tests.items()} == {"TestBig::test_a": "unknown", "TestSub::test_a": "unknown",
                                                      "TestSmall::test_b": "cpu", "TestDevice::test_c": "gpu"}
    assert tests["TestBig::test_a"].reasons[0].startswith(
        "test_f.py:3: class TestBig body -> test_f.py:4: constant folding bound: 2 ** 10000000000")
