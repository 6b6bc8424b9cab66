"""Parameters read from an in-repo data file at import time: paths computed from `__file__`, and YAML/JSON/TOML
loaded from them (docs/classification.md, "Round 10: parameters from data files").

A test module may build its parametrization from a data file beside it:

    current_dir = Path(os.path.abspath(os.path.dirname(__file__)))
    with open(current_dir / "test_params" / "xyz_coords.yaml") as f:
        cases = yaml.safe_load(f)

The interpreter follows such paths as `PathV` values whose text is rooted at `VROOT`, a stand-in for the
analysed root (the real location of a checkout is not known where pytest runs: a Bazel sandbox, another
clone), so nothing here depends on where the root is. Only a file inside the root, a regular file of at most
`MAX_DATA_BYTES` after resolving symlinks, is read; it is parsed as data (pyyaml's safe loader, json), never
run. Anything else (a path out of the root, a missing or huge file, a parse error) is an unknown value.
What was read is a dependency of the result: `read_data` gives each file's state, which a cached result is
checked against (runner.data_unchanged).
"""

from __future__ import annotations

import fnmatch
import json
import os
import posixpath
import tomllib
from pathlib import Path

from tools.bounded_read import read_source
from tools.classify.modules import digest_of
from tools.classify.values import (
    MAX_VALUE_DEPTH,
    MAX_VALUE_NODES,
    UNRESOLVED,
    Const,
    DictV,
    PathV,
    Seq,
    Value,
)

VROOT = "/<root>"  # the analysed root, as the first component of a PathV's text
MAX_DATA_BYTES = 1 << 20  # a larger data file is not read (its values are unknown)
# `yaml.load(f, Loader=...)` with these is `yaml.safe_load(f)` (any other loader: unknown, never run)
SAFE_LOADERS = frozenset({"yaml.SafeLoader", "yaml.CSafeLoader", "yaml.loader.SafeLoader", "yaml.cyaml.CSafeLoader"})
PATH_CLASSES = frozenset({"pathlib.Path", "pathlib.PosixPath", "pathlib.PurePath", "pathlib.PurePosixPath"})
MAX_PARENTS = 32  # `Path(__file__).parents[i]`: the ancestors listed
MAX_LISTED_ENTRIES = 1000  # a directory with more entries is not listed (its contents are unknown)
LISTING_PREFIX = "<listing>/"  # a result's `data` entry for a directory it listed: (prefix + rel, read_listing state)


def module_path(rel: str) -> PathV:
    """`__file__` of the module at rel (relative to the root)."""
    return PathV(f"{VROOT}/{rel}", "str")


def rel_of(path: PathV) -> str | None:
    """The root-relative file a path names, or None when it leaves the root (`..` past it, an absolute path
    elsewhere) or names the root itself."""
    norm = posixpath.normpath(path.text)
    if not norm.startswith(VROOT + "/"):
        return None
    return norm[len(VROOT) + 1:]


def joined(base: PathV, parts: list[Value], kind: str) -> PathV | None:
    """`os.path.join(base, *parts)`, `Path(base, *parts)`, `base / part`: None when a part is not a known
    string or path (an absolute part replaces what is before it, as in Python)."""
    texts: list[str] = []
    for p in parts:
        if isinstance(p, Const) and isinstance(p.value, str):
            texts.append(p.value)
        elif isinstance(p, PathV) and p.kind != "file":
            texts.append(p.text)
        else:
            return None
    return PathV(posixpath.join(base.text, *texts), kind)


def os_path_call(func: str, args: list[Value]) -> Value | None:
    """`os.path.<func>(...)` on a PathV first argument; None when not one of those handled."""
    if not args or not isinstance(args[0], PathV) or args[0].kind == "file":
        return None
    text = args[0].text
    if func == "join":
        return joined(args[0], list(args[1:]), "str") or UNRESOLVED
    if len(args) != 1:
        return None
    if func == "dirname":
        return PathV(posixpath.dirname(text), "str")
    if func in ("abspath", "realpath", "normpath"):
        return PathV(posixpath.normpath(text), "str")
    if func == "basename":
        name = posixpath.basename(text)
        return Const(name) if rel_of(args[0]) is not None else None
    return None


def path_attribute(path: PathV, name: str) -> Value | None:
    """An attribute of a pathlib path (`.parent`, `.parents`, `.name`, `.stem`, `.suffix`)."""
    if path.kind != "path":
        return None
    norm = posixpath.normpath(path.text)
    if name == "parent":
        return PathV(posixpath.dirname(norm), "path")
    if name == "parents":
        out: list[Value] = []
        cur = norm
        while cur != "/" and len(out) < MAX_PARENTS:
            cur = posixpath.dirname(cur)
            out.append(PathV(cur, "path"))
        return Seq(tuple(out), "tuple")
    if rel_of(path) is None:
        return None  # (the name of the root, or of a directory above it, is not known)
    pure = Path(norm)
    if name in ("name", "stem", "suffix"):
        return Const(getattr(pure, name))
    return None


def path_method(path: PathV, name: str, args: list[Value]) -> Value | None:
    """A pathlib method that makes another path (`with_name`, `joinpath`, `resolve`, ...); None otherwise."""
    if path.kind != "path":
        return None
    if name == "joinpath":
        return joined(path, args, "path") or UNRESOLVED
    if name in ("resolve", "absolute", "expanduser") and not args:
        return PathV(posixpath.normpath(path.text), "path")
    if name in ("with_name", "with_suffix") and len(args) == 1 and isinstance(args[0], Const) and isinstance(
            args[0].value, str):
        if rel_of(path) is None:
            return UNRESOLVED
        try:
            new = getattr(Path(posixpath.normpath(path.text)), name)(args[0].value)
        except ValueError:
            return UNRESOLVED
        return PathV(new.as_posix(), "path")
    return None


def read_listing(root: Path, rel: str) -> tuple[tuple[tuple[str, bool], ...] | None, str]:
    """The entries of the directory at rel inside the root, as (name, is a directory) sorted by name, and the
    listing's state (a digest of them, or why it was not listed): a file added to or removed from the directory
    changes it, as a changed file changes read_data's. At most MAX_LISTED_ENTRIES entries."""
    real_root = os.path.realpath(root)
    real = os.path.realpath(os.path.join(real_root, rel))
    if os.path.commonpath([real_root, real]) != real_root:
        return None, "outside the analysed root"
    entries: list[tuple[str, bool]] = []
    try:
        with os.scandir(real) as found:
            for entry in found:
                if len(entries) == MAX_LISTED_ENTRIES:
                    return None, f"over {MAX_LISTED_ENTRIES} entries"
                entries.append((entry.name, entry.is_dir()))
    except OSError as exc:
        return None, f"cannot list: {exc.strerror or exc}"
    entries.sort()
    return tuple(entries), digest_of("".join(f"{n}{'/' if d else ''}\n" for n, d in entries).encode())


def listed(path: PathV, entries: tuple[tuple[str, bool], ...], pattern: str | None, kind: str) -> Seq:
    """The children of the directory `path` that `entries` lists (read_listing), as paths of `kind` ("path": pathlib's
    `iterdir()`/`glob(pattern)`, "str": `glob.glob`), or their names ("name": `os.listdir`). The order the file system
    gives is not known, so they are a set (`sorted(...)` orders them as Python does). A glob pattern matches names as
    pathlib does (case-sensitive, dot files included); `glob.glob` leaves dot files out unless the pattern starts
    with a dot."""
    base = posixpath.normpath(path.text)
    names = [n for n, _ in entries if pattern is None or fnmatch.fnmatchcase(n, pattern) and not (
        kind == "str" and n.startswith(".") and not pattern.startswith("."))]
    if kind == "name":
        return Seq(tuple(Const(n) for n in names), "set")
    return Seq(tuple(PathV(f"{base}/{n}", kind) for n in names), "set")


def read_data(root: Path, rel: str) -> tuple[bytes | None, str]:
    """The bytes of the data file at rel and its state (its digest, or why it was not read). The state is what
    a cached result is checked against: a file that changes, appears or goes away changes it."""
    real_root = os.path.realpath(root)
    real = os.path.realpath(os.path.join(real_root, rel))
    if os.path.commonpath([real_root, real]) != real_root:
        return None, "outside the analysed root"
    data, why = read_source(Path(os.path.dirname(real)), os.path.basename(real), MAX_DATA_BYTES)
    if data is None:
        return None, why or "cannot read"
    return data, digest_of(data)


def load(fmt: str, data: bytes | str) -> Value:
    """Parse data as YAML (pyyaml's safe loader), JSON or TOML and convert it to abstract values; unknown when it
    does not parse or holds anything but strings, numbers, booleans, None, lists and dicts. pyyaml is imported
    here: an environment without it (a consumer's `torch_runtime`) still classifies, its YAML values unknown."""
    if fmt == "json":
        try:
            return to_value(json.loads(data))
        except (ValueError, RecursionError, MemoryError, TypeError):
            return UNRESOLVED
    if fmt == "toml":
        try:
            return to_value(tomllib.loads(data.decode("utf-8") if isinstance(data, bytes) else data))
        except (ValueError, RecursionError, MemoryError, TypeError):  # (TOMLDecodeError, UnicodeDecodeError)
            return UNRESOLVED
    try:
        import yaml
    except ImportError:
        return UNRESOLVED
    try:
        obj = yaml.load(data, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except (yaml.YAMLError, ValueError, RecursionError, MemoryError, TypeError):
        return UNRESOLVED
    return to_value(obj)


class _TooBig(Exception):
    pass


def to_value(obj: object) -> Value:
    """The abstract value of loaded data (a dict keeps its insertion order); unknown past the value bounds
    (YAML aliases can make a small file expand exponentially, or refer to itself)."""
    count = [0]

    def conv(x: object, depth: int) -> Value:
        count[0] += 1
        if count[0] > MAX_VALUE_NODES or depth > MAX_VALUE_DEPTH:
            raise _TooBig
        if x is None or isinstance(x, (str, bool, int, float)):
            return Const(x)
        if isinstance(x, list):
            return Seq(tuple(conv(i, depth + 1) for i in x), "list")
        if isinstance(x, dict):
            items: list[tuple[Value, Value]] = []
            for k, v in x.items():
                if not (k is None or isinstance(k, (str, bool, int, float))):
                    return UNRESOLVED
                items.append((Const(k), conv(v, depth + 1)))
            return DictV(tuple(items))
        return UNRESOLVED  # dates, binary, sets ...: not modelled

    try:
        got = conv(obj, 1)
    except _TooBig:
        return UNRESOLVED
    return got
