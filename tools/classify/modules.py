"""The repository as the analysis sees it: which files exist, how imports resolve, conftest chains.

Nothing here imports analysed code. Files are discovered without following symlink loops, read with a
size limit, and parsed with `ast`; every failure becomes a `ParseError` with the path and the reason.
"""

from __future__ import annotations

import ast
import hashlib
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tools.classify.frozen import frozen

SKIP_DIR_NAMES = frozenset({"node_modules", "__pycache__", "site-packages", "venv", "env", ".tox", ".nox"})
IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

# External packages that import torch when imported (a test importing them touches torch).
TORCH_PACKAGES = frozenset({
    "torch", "torchvision", "torchaudio", "torchtext", "torchdata", "transformers", "diffusers", "accelerate",
    "lightning", "pytorch_lightning", "lightning_fabric", "timm", "peft", "trl", "functorch", "torchmetrics",
    "deepspeed", "apex", "xformers", "bitsandbytes", "triton", "torch_geometric", "fairseq", "detectron2",
    "mmcv", "einops_torch", "safetensors.torch", "torchrec", "fbgemm_gpu", "torchao", "torchtune",
    "pytorch3d", "kornia", "monai", "sentence_transformers", "open_clip", "vllm", "torch_xla",
})


def is_test_file(name: str) -> bool:
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def _skip_dir(name: str, path: str) -> bool:
    if name.startswith(".") or name.startswith("bazel-") or name in SKIP_DIR_NAMES:
        return True
    return os.path.exists(os.path.join(path, "pyvenv.cfg"))


@frozen
class Problem:
    """A file the run could not use, reported on stderr; its tests become `unknown`."""

    rel: str
    reason: str


def display_name(name: str) -> str:
    """A file name as it can be printed and stored: undecodable bytes (kept by the OS layer as surrogates)
    and control characters escaped."""
    raw = os.fsencode(name).decode("utf-8", "backslashreplace")
    return raw.encode("unicode_escape").decode("ascii") if _BAD_NAME.search(raw) else raw


_BAD_NAME = re.compile(r"[\x00-\x1f\x7f\ud800-\udfff]")


def _name_problem(name: str) -> str | None:
    """Why a file or directory name cannot be a key of the classification file (UTF-8 JSON that Bazel reads
    and pytest node ids), or None."""
    try:
        os.fsencode(name).decode("utf-8")
    except UnicodeDecodeError:
        return "name is not valid UTF-8; not analysed (rename it)"
    if _BAD_NAME.search(name):
        return "name contains a control character; not analysed (rename it)"
    return None


_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"))


def _kind(path: str) -> str:
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        return f"unreadable ({exc.strerror})"
    return next((what for test, what in _KINDS if test(mode)), "not a regular file")


def walk_python_files(root: Path, problems: list[Problem],
                      stats: dict[str, tuple[int, int]] | None = None, unseen: list[str] | None = None) -> list[str]:
    """All .py files under root as sorted POSIX paths relative to root.

    Never blocks and never skips in silence: a non-regular `.py` (FIFO, socket, device), a name that is not
    valid UTF-8 or holds a control character, and a directory that cannot be listed are reported in
    `problems` (and their paths added to `unseen`). A symlinked directory whose target is inside the root is
    not walked through: its files are keyed by their real path, where the walk finds them (a link to a
    directory the walk skips is reported); a link out of the root is walked under its own path, each real
    directory once (loops reported). With `stats`, also records (mtime_ns, size) per file."""
    out: list[str] = []
    root_s = str(root)
    real_root = os.path.realpath(root_s)
    seen: set[str] = set()
    missed = unseen if unseen is not None else []
    stack: list[tuple[str, str]] = [(root_s, "")]  # (path, key prefix)
    while stack:
        dirpath, prefix = stack.pop()
        real = os.path.realpath(dirpath)
        shown = prefix.rstrip("/") or "."
        if real in seen:
            problems.append(Problem(shown, "symlink loop or duplicate directory; skipped"))
            continue
        seen.add(real)
        try:
            with os.scandir(dirpath) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            problems.append(Problem(shown, f"cannot list directory: {exc.strerror or exc}; its test files are not "
                                           "analysed (their entries are kept)"))
            missed.append(prefix.rstrip("/"))
            continue
        subdirs: list[tuple[str, str]] = []
        for e in entries:
            name = e.name
            try:
                is_dir = e.is_dir()
            except OSError:
                is_dir = False
            if not is_dir and not name.endswith(".py"):
                continue
            bad = _name_problem(name)
            if bad is not None:
                problems.append(Problem(prefix + display_name(name), bad))
                continue
            if is_dir:
                if _skip_dir(name, e.path):
                    continue
                if e.is_symlink():
                    target = os.path.realpath(e.path)
                    if target == real_root or target.startswith(real_root + os.sep):
                        rel_target = os.path.relpath(target, real_root).replace(os.sep, "/")
                        if real == target or real.startswith(target + os.sep):
                            problems.append(Problem(prefix + name, f"symlink loop (to {rel_target}, which encloses "
                                                                   "it); not followed"))
                            continue
                        if _walked(real_root, rel_target):
                            continue  # its files are keyed by their real path, where the walk finds them
                        problems.append(Problem(prefix + name, f"symlink to {rel_target}, a directory the walk "
                                                               "skips; not analysed"))
                        continue
                subdirs.append((e.path, prefix + name + "/"))
                continue
            rel = prefix + name
            try:
                regular = e.is_file()  # (follows a symlink; no system call for a plain file)
            except OSError:
                regular = False
            if not regular and os.path.lexists(e.path) and os.path.exists(e.path):
                problems.append(Problem(rel, f"{_kind(e.path)}, not a regular file; not analysed"))
                missed.append(rel)
                continue
            out.append(rel)  # (a dangling link too: reading it reports it)
            if stats is not None:
                try:
                    st = e.stat()
                    stats[rel] = (st.st_mtime_ns, st.st_size)
                except OSError:
                    pass
        stack.extend(reversed(subdirs))
    return sorted(out)


def _walked(real_root: str, rel: str) -> bool:
    """Whether the walk reaches directory `rel` (no component of it is one the walk skips)."""
    path = real_root
    for part in rel.split("/"):
        if part in (".", ""):
            continue
        path = os.path.join(path, part)
        if _skip_dir(part, path):
            return False
    return True


@frozen
class ImportSpec:
    """One import: `module` (dotted, may be empty for `from . import x`), relative `level`, `names`."""

    module: str
    level: int
    names: tuple[str, ...]  # for `from m import a, b`; empty for `import m`
    line: int = 0
    toplevel: bool = True  # runs when the module is imported (not inside a def/lambda)


@dataclass
class ParsedModule:
    rel: str
    digest: str
    tree: ast.Module | None
    error: str | None
    imports: tuple[ImportSpec, ...] = ()
    defs: dict[tuple[int, int], ast.AST] = field(default_factory=dict)


def digest_of(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def parse_source(rel: str, data: bytes) -> tuple[ast.Module | None, str | None]:
    """ast.parse with every failure turned into a reason (encoding, null bytes, nesting, syntax)."""
    try:
        return ast.parse(data, filename=rel), None
    except SyntaxError as exc:
        return None, f"syntax error at line {exc.lineno}: {exc.msg}"
    except ValueError as exc:
        return None, f"cannot parse: {exc}"
    except (RecursionError, MemoryError):
        return None, "expression nesting too deep to parse"


def collect_imports(tree: ast.Module) -> tuple[ImportSpec, ...]:
    """Every import statement anywhere in the module, plus `pytest_plugins` strings."""
    return scan_module(tree)[0]


def index_defs(tree: ast.Module) -> dict[tuple[int, int], ast.AST]:
    """Function and class nodes by (line, column): how values refer back to code. Lambdas are added by
    the interpreter when it meets them (they live in expressions, which this scan does not enter)."""
    return scan_module(tree)[1]


# Statements that hold no import, no def and no other statement (most of a function body)
_LEAF_STATEMENTS = frozenset({ast.Expr, ast.Return, ast.Assert, ast.AugAssign, ast.AnnAssign, ast.Pass, ast.Break,
                              ast.Continue, ast.Raise, ast.Delete, ast.Global, ast.Nonlocal})
_FUNC_TYPES = (ast.FunctionDef, ast.AsyncFunctionDef)
_DEF_TYPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
# The fields holding statement lists, per statement type that has any
_BLOCK_FIELDS: dict[type, tuple[str, ...]] = {
    ast.Module: ("body",), ast.FunctionDef: ("body",), ast.AsyncFunctionDef: ("body",), ast.ClassDef: ("body",),
    ast.If: ("body", "orelse"), ast.For: ("body", "orelse"), ast.AsyncFor: ("body", "orelse"),
    ast.While: ("body", "orelse"), ast.With: ("body",), ast.AsyncWith: ("body",),
    ast.Try: ("body", "handlers", "orelse", "finalbody"), ast.TryStar: ("body", "handlers", "orelse", "finalbody"),
    ast.ExceptHandler: ("body",), ast.Match: ("cases",), ast.match_case: ("body",),
}


def scan_module(tree: ast.Module) -> tuple[tuple[ImportSpec, ...], dict[tuple[int, int], ast.AST]]:
    """One walk over the statements (never into expressions): imports and def/class nodes."""
    out: list[ImportSpec] = []
    defs: dict[tuple[int, int], ast.AST] = {}
    blocks: list[tuple[list[ast.stmt], bool]] = [(tree.body, True)]  # statement lists, and whether top level
    while blocks:
        body, top = blocks.pop()
        for node in body:
            if type(node) in _LEAF_STATEMENTS:
                continue
            if isinstance(node, ast.Import):
                out.extend(ImportSpec(a.name, 0, (), node.lineno, top) for a in node.names)
                continue
            if isinstance(node, ast.ImportFrom):
                out.append(ImportSpec(node.module or "", node.level, tuple(a.name for a in node.names), node.lineno,
                                      top))
                continue
            if isinstance(node, _DEF_TYPES):
                defs[(node.lineno, node.col_offset)] = node
            elif isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "pytest_plugins" for t in node.targets
            ):
                for c in ast.walk(node.value):
                    if isinstance(c, ast.Constant) and isinstance(c.value, str):
                        out.append(ImportSpec(c.value, 0, (), node.lineno, top))
            fields = _BLOCK_FIELDS.get(type(node))  # expressions hold no imports and no def statements
            if fields:
                inner = top and not isinstance(node, _FUNC_TYPES)
                for name in fields:
                    blocks.append((getattr(node, name), inner))
    out.sort(key=lambda sp: (sp.line, sp.module, sp.level))
    return tuple(out), defs


class RepoIndex:
    """Dotted module names -> files, resolved the way pytest's default (prepend) import mode sees them."""

    def __init__(self, files: list[str], import_dirs: tuple[str, ...] = ()) -> None:
        """import_dirs: root-relative directories on sys.path besides pytest's own (its `pythonpath` option);
        "" (the root) is always one."""
        self.files = files
        self.import_dirs = frozenset(import_dirs)
        self.file_set = frozenset(files)
        dirs_with_init = {f.rsplit("/", 1)[0] if "/" in f else "" for f in files if f.endswith("/__init__.py")}
        if "__init__.py" in self.file_set:
            dirs_with_init.add("")
        self._init_dirs = dirs_with_init
        self._conftests: dict[str, tuple[str, ...]] = {}
        self._deps_memo: dict[tuple[str, int, tuple[str, ...], str], list[str]] = {}
        self._base_dirs: dict[str, str] = {}
        self._test_bases: frozenset[str] | None = None  # base dirs of test files and conftests (on_pytest_path)
        self.names: dict[str, list[str]] = {}
        for f in files:
            for name in self._names_for(f):
                self.names.setdefault(name, []).append(f)
        self.dirs: set[str] = set()
        for d in {f.rpartition("/")[0] for f in files}:
            while d and d not in self.dirs:  # d and its ancestors
                self.dirs.add(d)
                d = d.rpartition("/")[0]

    def package_inits(self, rel: str) -> tuple[str, ...]:
        """The `__init__.py` of each package enclosing rel, outermost first: what Python runs before rel's own
        top level when it imports it (`import a.b.c` runs a/__init__.py, then a/b/__init__.py)."""
        d = rel.rpartition("/")[0]
        if rel.rpartition("/")[2] == "__init__.py":
            d = d.rpartition("/")[0]
        chain: list[str] = []
        while d and d in self._init_dirs:
            chain.append(f"{d}/__init__.py")
            d = d.rpartition("/")[0]
        return tuple(reversed(chain))

    def base_dir(self, rel: str) -> str:
        """First ancestor directory that is not a package: what pytest puts on sys.path for `rel`."""
        start = rel.rpartition("/")[0]
        got = self._base_dirs.get(start)
        if got is None:
            d = start
            while d and d in self._init_dirs:
                d = d.rpartition("/")[0]
            got = self._base_dirs[start] = d
        return got

    def package_of(self, rel: str) -> str:
        """Dotted package name of rel (relative to its base dir)."""
        base = self.base_dir(rel)
        d = rel.rsplit("/", 1)[0] if "/" in rel else ""
        sub = d[len(base):].strip("/") if base else d
        if not base and d and d not in self._init_dirs:
            sub = ""
        return sub.replace("/", ".")

    def _names_for(self, rel: str) -> Iterator[str]:
        stem = rel[:-3]
        if stem.endswith("/__init__") or stem == "__init__":
            stem = stem[: -len("/__init__")] if "/" in stem else ""
        parts = [p for p in stem.split("/") if p]
        if not parts or not all(IDENT.match(p) for p in parts):
            return
        seen = set()
        base = self.base_dir(rel)
        nbase = len(base.split("/")) if base else 0
        for start in range(0, len(parts)):
            name = ".".join(parts[start:])
            if name in seen:
                continue
            # root-relative, src-layout and base-dir-relative names; a `tests/` that is itself a package is
            # never on sys.path, so `tests/ignite/distributed/` does not shadow the library's `ignite.distributed`.
            # A src layout's packages are installed under their own names even when the sdist ships a
            # `src/__init__.py` (compressed-tensors: `package_dir={"": "src"}`)
            after = parts[start - 1] if start else ""
            if start == 0 or start == nbase or "/".join(parts[:start]) in self.import_dirs or after == "src" or (
                    after in ("lib", "python", "tests", "test") and "/".join(parts[:start]) not in self._init_dirs):
                seen.add(name)
                yield name

    def resolve_module(self, dotted: str, importer: str) -> str | None:
        """File for module `dotted` imported from `importer`; closest candidate wins."""
        cands = self.names.get(dotted)
        if not cands:
            return None
        if len(cands) == 1:
            return cands[0]
        base = self.base_dir(importer)

        def rank(c: str) -> tuple[int, int, str]:
            same_base = 0 if self.base_dir(c) == base or c.startswith(base + "/") else 1
            common = os.path.commonprefix([c.split("/"), importer.split("/")])
            return (same_base, -len(common), c)

        return min(cands, key=rank)

    def is_package_dir(self, dotted: str) -> bool:
        return dotted.replace(".", "/") in self.dirs

    def on_pytest_path(self, dotted: str, importer: str) -> bool:
        """Whether `import dotted` finds the repository's file when pytest runs: the file resolve_module picks is
        importable under that name from the root, a `pythonpath` directory, or a directory pytest puts on
        sys.path because a test file or conftest.py lives there (its base dir). A bare name that only a library's
        namespace directory gives (`einx/_src/frontend/impl/tinygrad.py` as `tinygrad`) is not: Python imports the
        installed package of that name, or none."""
        rel = self.resolve_module(dotted, importer)
        if rel is None:
            return False
        if self._test_bases is None:
            self._test_bases = frozenset(self.base_dir(f) for f in self.file_set
                                         if is_test_file(f.rpartition("/")[2]) or f.endswith("conftest.py"))
        stem = rel[:-len("/__init__.py")] if rel.endswith("/__init__.py") else rel[:-3]
        prefix = stem[:len(stem) - len(dotted)].rstrip("/")
        return stem.endswith(dotted.replace(".", "/")) and (
            prefix == "" or prefix in self.import_dirs or prefix in self._test_bases or prefix.endswith(
                ("src", "lib", "python", "tests", "test")))

    def absolute(self, spec: ImportSpec, importer: str) -> str:
        """Absolute dotted name of `spec.module` (resolving relative levels against importer)."""
        if spec.level == 0:
            return spec.module
        pkg = self.package_of(importer).split(".") if self.package_of(importer) else []
        if importer.endswith("__init__.py"):
            pkg = pkg  # the package itself
        keep = len(pkg) - (spec.level - 1)
        base = pkg[: max(keep, 0)]
        if spec.module:
            base = [*base, spec.module]
        return ".".join(base)

    def resolve_relative_file(self, spec: ImportSpec, importer: str) -> str | None:
        """For relative imports, resolve by directory rather than dotted names (robust to odd layouts)."""
        d = importer.rsplit("/", 1)[0] if "/" in importer else ""
        for _ in range(spec.level - 1):
            d = d.rsplit("/", 1)[0] if "/" in d else ""
        sub = spec.module.replace(".", "/")
        path = f"{d}/{sub}" if d and sub else (d or sub)
        for cand in (f"{path}.py", f"{path}/__init__.py" if path else "__init__.py"):
            if cand in self.file_set:
                return cand
        return None

    def dep_files(self, spec: ImportSpec, importer: str) -> list[str]:
        """Files an import statement may load (module and `from m import sub` submodules); memoised per
        directory: resolution depends on the importer's directory, and on the importer itself only when it
        is one of the candidates (a module named like it), which is not memoised."""
        d, _, name = importer.rpartition("/")
        stem = d.rpartition("/")[2] if name == "__init__.py" else name[:-3]
        if stem in spec.names or stem in spec.module.split("."):
            return self._dep_files(spec, importer)
        key = (spec.module, spec.level, spec.names, d)
        got = self._deps_memo.get(key)
        if got is None:
            got = self._deps_memo[key] = self._dep_files(spec, importer)
        return list(got)

    def _dep_files(self, spec: ImportSpec, importer: str) -> list[str]:
        out: list[str] = []
        if spec.level:
            f = self.resolve_relative_file(spec, importer)
            if f:
                out.append(f)
            d = importer.rsplit("/", 1)[0] if "/" in importer else ""
            for _ in range(spec.level - 1):
                d = d.rsplit("/", 1)[0] if "/" in d else ""
            for n in spec.names:
                sub = "/".join(p for p in (d, spec.module.replace(".", "/"), n) if p)
                for cand in (f"{sub}.py", f"{sub}/__init__.py"):
                    if cand in self.file_set:
                        out.append(cand)
            return out
        parts = spec.module.split(".")
        for i in range(1, len(parts) + 1):
            f = self.resolve_module(".".join(parts[:i]), importer)
            if f:
                out.append(f)
        for n in spec.names:
            f = self.resolve_module(f"{spec.module}.{n}", importer)
            if f:
                out.append(f)
        return out

    def conftests_for(self, rel: str) -> tuple[str, ...]:
        """conftest.py files from the root down to rel's directory (outermost first); memoised per directory."""
        d = rel.rsplit("/", 1)[0] if "/" in rel else ""
        got = self._conftests.get(d)
        if got is None:
            parts = d.split("/") if d else []
            got = self._conftests[d] = tuple(c for c in ("/".join([*parts[:i], "conftest.py"])
                                                         for i in range(len(parts) + 1)) if c in self.file_set)
        return got


def is_torch_module(dotted: str) -> bool:
    root = dotted.split(".", 1)[0]
    return root in TORCH_PACKAGES or dotted in TORCH_PACKAGES
