"""The interpreter's rules for parameters read from in-repo data files (datafiles.py): paths from `__file__`
through os.path and pathlib, `open()`, and YAML/JSON/TOML loaded with safe loaders; a part of dataflow.Interp.
"""

from __future__ import annotations

import ast

from tools.classify import datafiles
from tools.classify.interp_base import Frame, InterpBase
from tools.classify.values import UNRESOLVED, Const, Ext, PathV, Value

_PREFIXES = ("os.", "pathlib.", "yaml.", "json.", "tomllib.", "tomli.", "toml.", "glob.glob", "builtins.open",
             "builtins.str")
# TOML readers: the standard library's (and tomli, its backport) take a binary file or a string; the older `toml`
# package a path, a text file or a string
_TOML_READERS = frozenset({"tomllib.load", "tomllib.loads", "tomli.load", "tomli.loads", "toml.load", "toml.loads"})
_PRESENCE = {"exists": None, "is_file": False, "is_dir": True, "isfile": False, "isdir": True}  # None: any kind
_READ_MODES = frozenset({"r", "rt", "rb", "tr", "br"})


class DataFilesMixin(InterpBase):
    """Paths, open files and their parsed contents."""

    def data_call(self, path: str, args: list[Value], kwargs: dict[str, Value], frame: Frame) -> Value | None:
        """A call of an external function on a path, an open file or data text: its value; None when the call
        is not one of these (the caller's other rules apply)."""
        if not path.startswith(_PREFIXES):
            return None
        first = args[0] if args else kwargs.get("stream", kwargs.get("fp", kwargs.get("s")))
        if path.startswith("os.path.") and path[len("os.path."):] in _PRESENCE and len(args) == 1 and not kwargs:
            return self._present(first, path[len("os.path."):], frame)
        if path.startswith("os.path."):
            return datafiles.os_path_call(path[len("os.path."):], args) if not kwargs else None
        if path == "os.listdir" and len(args) == 1 and not kwargs and isinstance(first, PathV):
            return self._listed(first, None, "name", frame)
        if path == "glob.glob" and len(args) == 1 and not kwargs and isinstance(first, PathV) and first.kind == "str":
            # `glob.glob(os.path.join(HERE, "configs", "*.yaml"))`: a pattern in its last part only
            where, _, pattern = first.text.rpartition("/")
            return self._listed(PathV(where, "str"), pattern, "str", frame) if not _wild(where) else UNRESOLVED
        if path in ("os.fspath", "builtins.str") and len(args) == 1 and isinstance(first, PathV):
            return PathV(first.text, "str") if first.kind != "file" else UNRESOLVED
        if path in datafiles.PATH_CLASSES:
            if args and isinstance(args[0], PathV) and not kwargs:
                return datafiles.joined(args[0], list(args[1:]), "path") or UNRESOLVED
            return None
        if path == "builtins.open":
            return self._open(args, kwargs)
        if path == "yaml.safe_load" and len(args) + len(kwargs) == 1 or path == "yaml.load" and self._safe_loader(
                args, kwargs):
            return self._load("yaml", first, frame)
        if path in ("json.load", "json.loads") and len(args) + len(kwargs) == 1:
            return self._load("json", first, frame)
        if path in _TOML_READERS and len(args) == 1 and not kwargs:
            # `tomllib.load(f)` of `open(HERE / "config.toml", "rb")`; `toml.load(path)`
            source = PathV(first.text, "file") if path == "toml.load" and isinstance(first, PathV) and \
                first.kind != "file" else first
            return self._load("toml", source, frame)
        return None

    def path_method_call(self, recv: PathV, name: str, args: list[Value], kwargs: dict[str, Value],
                         frame: Frame) -> Value:
        """A method of a path or an open file (`p.with_name("x.yaml")`, `p.read_text()`, `f.read()`)."""
        if recv.kind == "file":
            if name == "read" and not args and not kwargs:
                return self._text(recv, frame)
            if name in ("__enter__",):
                return recv
            return UNRESOLVED
        if name == "read_text" and not args and set(kwargs) <= {"encoding"}:
            return self._text(recv, frame)
        if name == "open" and recv.kind == "path":
            return self._open([recv, *args], kwargs)
        if recv.kind == "path" and not kwargs and (name == "iterdir" and not args or name == "glob" and len(args) == 1):
            pattern = args[0] if args else None
            if pattern is None or isinstance(pattern, Const) and isinstance(pattern.value, str) and "/" not in \
                    pattern.value and "**" not in pattern.value:
                return self._listed(recv, pattern.value if pattern is not None else None, "path", frame)
            return UNRESOLVED
        if recv.kind == "path" and name in _PRESENCE and not args and not kwargs:
            return self._present(recv, name, frame)
        got = datafiles.path_method(recv, name, args) if not kwargs else None
        return got if got is not None else UNRESOLVED

    def _listed(self, where: PathV, pattern: str | None, kind: str, frame: Frame) -> Value:
        """The entries of an in-repo directory (datafiles.listed), a dependency of results reading them; unknown
        for a directory out of the root or not listed."""
        rel = datafiles.rel_of(where) if where.kind != "file" else None
        entries = self.source.listing(rel, frame.rel) if rel is not None else None
        return datafiles.listed(where, entries, pattern, kind) if entries is not None else UNRESOLVED

    def _present(self, path: Value, how: str, frame: Frame) -> Value:
        """`p.exists()`, `p.is_file()`, `os.path.isdir(p)` of an in-repo path: from its directory's listing (a
        regular file: an entry that is no directory). A path the checkout lacks is unknown, not absent: such checks
        guard what a build step or a download puts there before the tests run (`if not WEIGHTS.exists():
        pytest.skip()`), and taking it as absent would hide what the test does with it."""
        if not isinstance(path, PathV) or path.kind == "file":
            return UNRESOLVED
        rel = datafiles.rel_of(path)
        parent, _, name = rel.rpartition("/") if rel is not None else ("", "", "")
        entries = self.source.listing(parent, frame.rel) if rel is not None and parent else None
        if entries is None:
            return UNRESOLVED
        kind = next((is_dir for n, is_dir in entries if n == name), None)
        if kind is None:
            return UNRESOLVED
        want = _PRESENCE[how]
        return Const(want is None or kind == want)

    def _open(self, args: list[Value], kwargs: dict[str, Value]) -> Value:
        """`open(path)` for reading (text or binary): an open file; anything else is not modelled."""
        if not args or not isinstance(args[0], PathV) or args[0].kind == "file":
            return UNRESOLVED
        mode = args[1] if len(args) > 1 else kwargs.get("mode", Const("r"))
        if not (isinstance(mode, Const) and mode.value in _READ_MODES) or len(args) > 2 or not set(kwargs) <= {
                "mode", "encoding", "errors", "newline"}:
            return UNRESOLVED
        return PathV(args[0].text, "file")

    @staticmethod
    def _safe_loader(args: list[Value], kwargs: dict[str, Value]) -> bool:
        loader = args[1] if len(args) > 1 else kwargs.get("Loader")
        return isinstance(loader, Ext) and loader.path in datafiles.SAFE_LOADERS and len(args) + len(kwargs) == 2

    def _bytes(self, p: PathV, frame: Frame) -> bytes | None:
        rel = datafiles.rel_of(p)
        return self.source.data_file(rel, frame.rel) if rel is not None else None

    def _text(self, p: PathV, frame: Frame) -> Value:
        """The file's text as `read()` gives it (UTF-8); unknown when it cannot be read or decoded."""
        data = self._bytes(p, frame)
        if data is None:
            return UNRESOLVED
        try:
            return Const(data.decode("utf-8"))
        except UnicodeDecodeError:
            return UNRESOLVED

    def _load(self, fmt: str, source: Value | None, frame: Frame) -> Value:
        """The parsed contents of an open file or a known string; unknown for anything else."""
        if isinstance(source, PathV) and source.kind == "file":
            if fmt == "yaml":  # (pyyaml reads the bytes, in the encoding their BOM names)
                data = self._bytes(source, frame)
                return datafiles.load(fmt, data) if data is not None else UNRESOLVED
            source = self._text(source, frame)
        if isinstance(source, Const) and isinstance(source.value, (str, bytes)):
            return datafiles.load(fmt, source.value)
        return UNRESOLVED


def path_fstring(n: ast.JoinedStr, formatted: list[tuple[ast.FormattedValue, Value]]) -> PathV | None:
    """An f-string that starts with a path and continues with known text is that path, extended."""
    if not formatted or not n.values or n.values[0] is not formatted[0][0]:
        return None
    node, head = formatted[0]
    if not isinstance(head, PathV) or head.kind == "file" or not _plain(node):
        return None
    values = {id(v): x for v, x in formatted}
    text = [head.text]
    for part in n.values[1:]:
        got = values.get(id(part))
        if isinstance(part, ast.Constant) and isinstance(part.value, str):
            text.append(part.value)
        elif isinstance(part, ast.FormattedValue) and _plain(part) and isinstance(got, Const) and isinstance(
                got.value, str):
            text.append(got.value)
        else:
            return None
    return PathV("".join(text), "str")


def _plain(part: ast.FormattedValue) -> bool:
    """`{x}` or `{x!s}`: str() of the value, nothing else."""
    return part.format_spec is None and part.conversion in (-1, ord("s"))


def path_binop(op: ast.operator, a: Value, b: Value) -> Value | None:
    """`path / "x.yaml"` (pathlib), `os.path.dirname(__file__) + "/x.yaml"` (strings); None otherwise."""
    if not isinstance(a, PathV):
        return None
    if isinstance(op, ast.Div) and a.kind == "path":
        return datafiles.joined(a, [b], "path") or UNRESOLVED
    if isinstance(op, ast.Add) and a.kind == "str" and isinstance(b, Const) and isinstance(b.value, str):
        return PathV(a.text + b.value, "str")
    return UNRESOLVED


def _wild(text: str) -> bool:
    return any(c in text for c in "*?[")
