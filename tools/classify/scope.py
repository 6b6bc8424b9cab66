"""What gets analysed: `[tool.torch_classify]` paths/exclude and pytest's `norecursedirs`.

Read from the root only (never imported, never executed):

* `[tool.torch_classify]` in `pyproject.toml`: `paths` (files or directories relative to the root; default
  the whole root) and `exclude` (path prefixes to skip). `--paths` on the command line replaces `paths`.
* pytest's `norecursedirs`, `pythonpath`, `python_classes` and `python_functions` from the first config file pytest
  itself would use at the root (`pytest.ini`, `.pytest.ini`, `pyproject.toml` `[tool.pytest.ini_options]`/
  `[tool.pytest]`, `tox.ini` `[pytest]`, `setup.cfg` `[tool:pytest]`), else pytest's defaults. Like pytest, the
  `norecursedirs` patterns are matched with fnmatch against the basename of every directory *below* a path argument
  (a path given explicitly is collected even when its own name matches). `pythonpath` (pytest >= 7) puts
  directories, relative to the root, on `sys.path`: their modules import by their names there (`from test_config
  import DEVICES`). `python_classes`/`python_functions` say which classes and functions are tests (`*Test`).
"""

from __future__ import annotations

import ast
import configparser
import fnmatch
import functools
import os
import shlex
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from tools.bounded_read import read_source, read_text_file

# pytest's default `norecursedirs`.
PYTEST_NORECURSE_DEFAULT = ("*.egg", ".*", "_darcs", "build", "CVS", "dist", "node_modules", "venv", "{arch}")


@dataclass(frozen=True)
class TestNames:
    """pytest's `python_classes` and `python_functions` options: which classes and functions (and methods) of a test
    module are tests. Each pattern is a name prefix, or an fnmatch pattern when it has a wildcard (`*Test`), as
    pytest's `_matches_prefix_or_glob_option` reads them. unittest's TestCase methods follow unittest's own `test`
    prefix, whatever these say."""

    __test__ = False  # (not a test class itself)
    classes: tuple[str, ...] = ("Test",)
    functions: tuple[str, ...] = ("test",)

    def is_test_class(self, name: str) -> bool:
        return _prefix_or_glob(name, self.classes)

    def is_test_function(self, name: str) -> bool:
        return _prefix_or_glob(name, self.functions)


def _prefix_or_glob(name: str, patterns: tuple[str, ...]) -> bool:
    return any(name.startswith(p) or any(c in p for c in "*?[") and fnmatch.fnmatch(name, p) for p in patterns)


@dataclass(frozen=True)
class Scope:
    paths: tuple[str, ...] = ()  # normalised, no leading "./" or trailing "/"; empty: the whole root
    exclude: tuple[str, ...] = ()
    norecursedirs: tuple[str, ...] = PYTEST_NORECURSE_DEFAULT
    problems: tuple[str, ...] = field(default=())  # config files that could not be read
    # files a `torch_py_test` lists in its srcs: Bazel hands them to pytest by name, and pytest collects a
    # file named on its command line even under a norecursedirs directory (bazel_test_srcs)
    named: frozenset[str] = frozenset()
    pythonpath: tuple[str, ...] = ()  # pytest's `pythonpath` ini option: root-relative directories on sys.path
    test_names: TestNames = TestNames()  # pytest's `python_classes` and `python_functions` ini options

    def selects(self, rel: str) -> bool:
        """Whether test file `rel` (POSIX, root-relative) is in scope."""
        if any(_under(rel, e) for e in self.exclude):
            return False
        if not self.paths:
            return rel in self.named or not self._norecurse(rel, "")
        matches = [p for p in self.paths if _under(rel, p)]
        if not matches:
            return False
        return rel in self.named or not self._norecurse(rel, max(matches, key=len))

    def _norecurse(self, rel: str, base: str) -> bool:
        """Whether a directory between `base` (exclusive) and the file matches a norecursedirs pattern."""
        parts = rel.split("/")[:-1]
        skip = len(base.split("/")) if base else 0
        return any(_matches(d, self.norecursedirs) for d in parts[skip:])


@functools.lru_cache(maxsize=4096)
def _matches(name: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatch(name, pat) for pat in patterns)


def normalise(p: str) -> str:
    p = p.replace("\\", "/").strip()
    while p.startswith("./"):
        p = p[2:]
    p = p.rstrip("/")
    return "" if p in (".", "") else p


def _under(rel: str, prefix: str) -> bool:
    return not prefix or rel == prefix or rel.startswith(prefix + "/")


def _str_list(value: object) -> list[str] | None:
    if isinstance(value, str):
        return shlex.split(value)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    return None


def _pytest_options(root: Path, pyproject: dict[str, object] | None,
                    problems: list[str]) -> dict[str, list[str] | None]:
    """`norecursedirs`, `pythonpath`, `python_classes` and `python_functions` from the config file pytest would pick
    at `root` (pytest's own search order; None: not set there)."""
    names = ("norecursedirs", "pythonpath", "python_classes", "python_functions")
    for name in ("pytest.ini", ".pytest.ini"):
        path = root / name
        if path.is_file():
            return _ini_options(path, ("pytest",), problems, names)
    if pyproject is not None:
        tool = pyproject.get("tool")
        pt = tool.get("pytest") if isinstance(tool, dict) else None
        if isinstance(pt, dict):
            ini = pt.get("ini_options")
            table = ini if isinstance(ini, dict) else pt
            return {n: _str_list(table.get(n)) for n in names}
    for name, sections in (("tox.ini", ("pytest",)), ("setup.cfg", ("tool:pytest",))):
        path = root / name
        if path.is_file():
            cp = _read_ini(path, problems)
            if cp is not None and any(cp.has_section(s) for s in sections):
                return _ini_options(path, sections, problems, names, cp)
    return dict.fromkeys(names)


def _read_ini(path: Path, problems: list[str]) -> configparser.ConfigParser | None:
    cp = configparser.ConfigParser(interpolation=None)
    text, why = read_text_file(path)
    if text is None:
        problems.append(f"{path.name}: cannot read pytest settings: {why}")
        return None
    try:
        cp.read_string(text, source=str(path))
    except configparser.Error as exc:
        problems.append(f"{path.name}: cannot read pytest settings: {str(exc).splitlines()[0]}")
        return None
    return cp


def _ini_options(path: Path, sections: tuple[str, ...], problems: list[str], names: tuple[str, ...],
                 cp: configparser.ConfigParser | None = None) -> dict[str, list[str] | None]:
    cp = cp if cp is not None else _read_ini(path, problems)
    section = next((s for s in sections if cp is not None and cp.has_section(s)), None)
    return {n: cp.get(section, n).split() if cp is not None and section is not None and cp.has_option(section, n)
            else None for n in names}


def load_scope(root: Path, cli_paths: list[str] | None = None) -> Scope:
    """The scope of a run at `root`; `cli_paths` (non-empty) replaces the configured `paths`."""
    problems: list[str] = []
    pyproject: dict[str, object] | None = None
    pp = root / "pyproject.toml"
    if pp.exists():
        data, why = read_source(root, "pyproject.toml")
        try:
            if data is None:
                raise OSError(why)
            pyproject = tomllib.loads(data.decode("utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            problems.append(f"pyproject.toml: cannot read: {exc}")
    paths: list[str] = []
    exclude: list[str] = []
    tool = pyproject.get("tool") if pyproject else None
    conf = tool.get("torch_classify") if isinstance(tool, dict) else None
    if isinstance(conf, dict):
        for key, out in (("paths", paths), ("exclude", exclude)):
            if key in conf:
                got = _str_list(conf[key])
                if got is None:
                    problems.append(f"pyproject.toml: [tool.torch_classify] {key} must be a list of strings")
                else:
                    out.extend(got)
    if cli_paths:
        paths = list(cli_paths)
    norm_paths = tuple(dict.fromkeys(normalise(p) for p in paths))
    if "" in norm_paths:
        norm_paths = ()
    options = _pytest_options(root, pyproject, problems)
    norecurse = options["norecursedirs"]
    defaults = TestNames()
    names = TestNames(tuple(options["python_classes"] or defaults.classes),
                      tuple(options["python_functions"] or defaults.functions))
    return Scope(norm_paths, tuple(dict.fromkeys(n for n in (normalise(e) for e in exclude) if n)),
                 tuple(norecurse) if norecurse is not None else PYTEST_NORECURSE_DEFAULT, tuple(problems),
                 pythonpath=tuple(dict.fromkeys(normalise(d) for d in options["pythonpath"] or ())), test_names=names)


BUILD_FILES = ("BUILD.bazel", "BUILD")
TEST_MACRO = "torch_py_test"


def bazel_test_srcs(root: Path, candidates: list[str], problems: list[str]) -> frozenset[str]:
    """Those of `candidates` (root-relative test files) that a `torch_py_test` of their Bazel package (the
    nearest directory above with a BUILD file) lists in `srcs`. BUILD files are parsed, never run; only
    literal `srcs` lists count. An unparsable BUILD file is reported in `problems`."""
    package_of: dict[str, str | None] = {}
    srcs_of: dict[str, frozenset[str]] = {}
    out: set[str] = set()
    for rel in candidates:
        d = rel.rsplit("/", 1)[0] if "/" in rel else ""
        build = _package_build(root, d, package_of)
        if build is None:
            continue
        if build not in srcs_of:
            srcs_of[build] = _macro_srcs(root / build, build, problems)
        pkg = build.rsplit("/", 1)[0] if "/" in build else ""
        if (rel[len(pkg) + 1:] if pkg else rel) in srcs_of[build]:
            out.add(rel)
    return frozenset(out)


def _package_build(root: Path, d: str, memo: dict[str, str | None]) -> str | None:
    """Root-relative path of the BUILD file of the package holding directory `d`; None outside any package."""
    if d in memo:
        return memo[d]
    found: str | None = None
    for name in BUILD_FILES:
        rel = f"{d}/{name}" if d else name
        if os.path.isfile(root / rel):
            found = rel
            break
    if found is None and d:
        found = _package_build(root, d.rsplit("/", 1)[0] if "/" in d else "", memo)
    memo[d] = found
    return found


def _macro_srcs(path: Path, rel: str, problems: list[str]) -> frozenset[str]:
    """The literal `srcs` entries of every torch_py_test call (or a `load` alias of it) in one BUILD file."""
    try:
        tree = ast.parse(path.read_bytes(), str(path))
    except (OSError, SyntaxError, ValueError) as exc:
        problems.append(f"{rel}: cannot read torch_py_test srcs: {exc}")
        return frozenset()
    names = {TEST_MACRO}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "load":
            names.update(k.arg for k in node.keywords if k.arg and isinstance(k.value, ast.Constant)
                         and k.value.value == TEST_MACRO)
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in names:
            for k in node.keywords:
                if k.arg == "srcs" and isinstance(k.value, (ast.List, ast.Tuple)):
                    out.update(normalise(e.value) for e in k.value.elts if isinstance(e, ast.Constant)
                               and isinstance(e.value, str))
    return frozenset(out)
