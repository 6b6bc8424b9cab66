"""Test base classes from installed packages, read (never imported) so that the tests a repository's test class
inherits from them get their own node ids (docs/classification.md, "Round 12: test bases from installed packages").

`class TestDense(LinearOperatorTestCase, unittest.TestCase)`, with the base imported from an installed package
(`linear_operator.test.linear_operator_test_case`): pytest collects the base's `test_*` methods as tests of the
subclass. The classifier reads that module's source from the directories on the running Python's `sys.path`
(site-packages and the like; never the standard library, torch, or a directory inside the analysed root,
whose files the repository index has), parses it like a repository file and resolves the class base to it.
Modules that look like they hold tests are used (a `def test*` or a class named `*Test*`), and every module of
a small library: a top-level package whose Python source is under LIBRARY_MAX_BYTES is read as the repository
is (sb3-contrib's `class TQC(OffPolicyAlgorithm)` over stable-baselines3, whose base `__init__` sets
`self.device`; cuequivariance's `IrrepsLayout` members, whose `__str__` pytest ids them by). A large framework
(transformers, lightning) stays external: its code is too large to follow per test, and its conventions are
modelled by name (conventions.py). See docs/classification.md, "Round 17: small installed libraries read as
code". Such files are named `<installed>/<pkg>/<mod>.py`; their content digests are part of the result key
(see Sources.direct_deps).
"""

from __future__ import annotations

import os
import re
import sys
import sysconfig
from dataclasses import dataclass, field
from pathlib import Path

from tools.bounded_read import MAX_FILE_BYTES, read_source
from tools.classify.modules import IDENT, digest_of

PREFIX = "<installed>/"
# what an installed module must contain to be read as a source of test bases
_TEST_MODULE = re.compile(rb"^[ \t]*(?:async[ \t]+)?def[ \t]+test|^class[ \t]+\w*Test", re.MULTILINE)
# roots never read here: torch (its testing classes are modelled in torch_testing.py), frameworks whose classes
# define no tests, and packages the analysis models by name, whose calls are rules rather than code to follow
# (yaml.safe_load reads a data file: interp_datafiles.py; version parsing: versions.py; `mock.patch`;
# optional-import helpers: optional_imports.py; pydantic models and attrs classes: dataclass_fields.py;
# command-line interfaces: click_model.py, typer_model.py; configurations and attribute dictionaries:
# omegaconf_model.py; GPUtil's
# listings of the machine's GPUs: interp_external.py)
NEVER_ROOTS = frozenset({"torch", "pytest", "_pytest", "pluggy", "unittest", "numpy", "parameterized", "absl",
                         "hypothesis", "expecttest", "typing_extensions", "yaml", "mock", "packaging", "looseversion",
                         "pkg_resources", "setuptools", "pydantic", "skbase", "sktime", "safetensors", "click",
                         "typer", "omegaconf", "hydra", "attr", "attrs", "GPUtil", "easydict", "addict", "munch", "box",
                         "ml_collections", "yacs"})
# a top-level package with at most this much Python source is read as code (stable-baselines3 0.65 MB,
# cuequivariance 0.43 MB, pyyaml 0.77 MB); pytorch_lightning (1.6 MB) and transformers (54 MB) are not
LIBRARY_MAX_BYTES = 1024 * 1024


def is_installed(rel: str) -> bool:
    return rel.startswith(PREFIX)


def running_python_dirs(root: Path) -> tuple[str, ...]:
    """search_dirs of the Python running the classifier."""
    return search_dirs(root, sys.path, os.getcwd())


def search_dirs(root: Path, path: list[str], cwd: str = "") -> tuple[str, ...]:
    """The directories of `path` (sys.path) where installed packages may lie: absolute existing directories,
    except the standard library's, those inside (or equal to) the analysed root, and `cwd`, the directory the
    classifier was started in (`python -m` puts it first: a checkout, not an installation)."""
    real_root = os.path.realpath(root)
    real_cwd = os.path.realpath(cwd) if cwd else ""
    paths = sysconfig.get_paths()
    stdlib = {os.path.realpath(paths[k]) for k in ("stdlib", "platstdlib") if k in paths}
    out: list[str] = []
    for entry in path:
        if not entry or not os.path.isabs(entry) or not os.path.isdir(entry):
            continue
        real = os.path.realpath(entry)
        inside_root = real == real_root or real.startswith(real_root + os.sep)
        if _in_stdlib(real, stdlib) or inside_root or real == real_cwd or real in out:
            continue
        out.append(real)
    return tuple(out)


def _in_stdlib(real: str, stdlib: set[str]) -> bool:
    """Whether a sys.path directory is the standard library's (lib/python3.X, lib-dynload), not a site-packages
    directory (which may lie inside it, or inside a venv's `platstdlib`)."""
    if any(part in ("site-packages", "dist-packages") for part in real.split(os.sep)):
        return False
    return any(real == s or real.startswith(s + os.sep) for s in stdlib)


def module_name(rel: str) -> str:
    """The dotted name of installed module rel (`<installed>/pkg/sub/__init__.py` -> `pkg.sub`)."""
    return rel[len(PREFIX):-3].removesuffix("/__init__").replace("/", ".")


def top_package(rel: str) -> str:
    """The top-level package of installed module rel (`<installed>/pkg/sub/mod.py` -> `pkg`)."""
    return rel[len(PREFIX):].split("/", 1)[0]


def absolute_name(rel: str, level: int, module: str) -> str:
    """The dotted name a relative import (`from ..x import y`, level 2) in installed module rel names."""
    parts = rel[len(PREFIX):-3].split("/")
    package = parts[:-1]  # (an __init__.py's package is its directory, as for any module)
    keep = len(package) - (level - 1)
    base = package[:max(keep, 0)]
    return ".".join([*base, module] if module else base)


@dataclass
class InstalledIndex:
    """Installed modules by dotted name, found by looking for `<dir>/<a>/<b>.py` (or `<a>/<b>/__init__.py`) in
    `dirs` in order, as Python's path finder would (no import runs: importlib.util.find_spec of a submodule
    would import its parent packages). Memoised per process."""

    dirs: tuple[str, ...]
    max_file_bytes: int = MAX_FILE_BYTES
    found: dict[str, str | None] = field(default_factory=dict)  # dotted -> rel (None: not read)
    test_modules: set[str] = field(default_factory=set)  # rels of the found modules that hold tests
    library_bytes: dict[str, int] = field(default_factory=dict)  # package directory -> its source bytes (capped)
    paths: dict[str, str] = field(default_factory=dict)  # rel -> absolute file
    data: dict[str, bytes | None] = field(default_factory=dict)  # rel -> bytes (None: unreadable, too large)
    torch_free_packages: dict[str, bool] = field(default_factory=dict)  # package directory -> torch_free

    def module(self, dotted: str) -> str | None:
        """rel of the installed module `dotted` when it exists, can be read, and holds tests or belongs to a small
        library (is_library); else None."""
        if dotted in self.found:
            return self.found[dotted]
        self.found[dotted] = None
        parts = dotted.split(".")
        if (not dotted or parts[0] in NEVER_ROOTS or parts[0] in sys.stdlib_module_names
                or not all(IDENT.match(p) for p in parts)):
            return None
        sub = "/".join(parts)
        for d in self.dirs:
            for cand in (f"{sub}.py", f"{sub}/__init__.py"):
                full = os.path.join(d, cand)
                if not os.path.isfile(full):
                    continue
                rel = PREFIX + cand
                data, _ = read_source(Path(d), cand, self.max_file_bytes)
                holds_tests = data is not None and _TEST_MODULE.search(data) is not None
                if data is None or not (holds_tests or self.is_library(d, parts[0])):
                    return None  # the first one found is what Python imports
                if holds_tests:
                    self.test_modules.add(rel)
                self.paths[rel], self.data[rel] = full, data
                self.found[dotted] = rel
                return rel
            if os.path.isfile(os.path.join(d, parts[0], "__init__.py")):
                return None  # the package is in this directory, without that module
        return None

    def is_library(self, directory: str, top: str) -> bool:
        """Whether the package `top` in sys.path directory `directory` is small enough to read as a library: a
        package directory whose `.py` files total at most LIBRARY_MAX_BYTES (a single-module distribution is
        not: its classes are rarely bases, and it has no other modules to follow)."""
        pkg = os.path.join(directory, top)
        got = self.library_bytes.get(pkg)
        if got is None:
            got = 0
            for base, dirs, files in os.walk(pkg):
                dirs.sort()
                got += sum(_size(os.path.join(base, f)) for f in files if f.endswith(".py"))
                if got > LIBRARY_MAX_BYTES:
                    break
            self.library_bytes[pkg] = got
        return os.path.isdir(pkg) and got <= LIBRARY_MAX_BYTES

    def torch_free(self, rel: str) -> bool:
        """Whether the small library holding installed module rel never names torch in its source (lifelines,
        cuequivariance): nothing it runs can reach a device but through what a caller hands it, so a name it looks
        up by a computed string (`getattr(lifelines, name)`) is an external value, not dynamic dispatch. Memoised
        per package."""
        full = self.paths.get(rel)
        if full is None:
            return False
        pkg = os.path.join(full[:len(full) - len(rel) + len(PREFIX) - 1], top_package(rel))
        got = self.torch_free_packages.get(pkg)
        if got is None:
            got = os.path.isdir(pkg)
            for base, dirs, files in os.walk(pkg):
                dirs.sort()
                if any(_names_torch(os.path.join(base, f)) for f in sorted(files) if f.endswith(".py")):
                    got = False
                    break
            self.torch_free_packages[pkg] = got
        return got

    def package_inits(self, rel: str) -> tuple[str, ...]:
        """The `__init__.py` of each package enclosing installed module rel that the analysis reads, outermost
        first: what Python runs before rel's own top level (modules.RepoIndex.package_inits for installed
        code; without them an import cycle inside a library starts wherever the analysis entered it)."""
        parts = module_name(rel).split(".")
        got = (self.module(".".join(parts[:i])) for i in range(1, len(parts)))
        return tuple(g for g in got if g is not None and g.endswith("/__init__.py"))

    def holds_tests(self, rel: str) -> bool:
        return rel in self.test_modules

    def read(self, rel: str) -> tuple[bytes | None, str | None]:
        got = self.data.get(rel)
        if got is None:
            return None, "not an installed module the analysis reads"
        return got, None

    def digest(self, rel: str) -> str:
        """The content digest of installed module rel as this process read it ("missing": none)."""
        got = self.data.get(rel)
        return digest_of(got) if got is not None else "missing"

    def state(self, rel: str) -> str:
        """The digest of the module rel names as it is installed now: what a stored result is checked against."""
        return self.digest(rel) if self.module(module_name(rel)) == rel else "missing"


_TORCH_WORD = re.compile(rb"\btorch\b")


def _names_torch(path: str) -> bool:
    """Whether a source file names torch anywhere (an unreadable one may)."""
    try:
        with open(path, "rb") as f:
            return _TORCH_WORD.search(f.read(LIBRARY_MAX_BYTES + 1)) is not None
    except OSError:
        return True


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0
