"""The interpreter's rules for parameters read from in-repo data files (datafiles.py): paths from `__file__`
through os.path and pathlib, `open()`, and YAML/JSON loaded with safe loaders; a part of dataflow.Interp.
"""

from __future__ import annotations

import ast
import posixpath

from tools.classify import datafiles, omegaconf_model
from tools.classify.evidence import UNKNOWN, Finding, step
from tools.classify.interp_base import Frame, InterpBase
from tools.classify.values import UNRESOLVED, ClassV, Const, Ext, Inst, PartialV, PathV, Seq, Unresolved, Value

_PREFIXES = ("os.", "pathlib.", "yaml.", "json.", "builtins.open", "builtins.str")
_READ_MODES = frozenset({"r", "rt", "rb", "tr", "br"})


class DataFilesMixin(InterpBase):
    """Paths, open files and their parsed contents."""

    def data_call(self, path: str, args: list[Value], kwargs: dict[str, Value], frame: Frame) -> Value | None:
        """A call of an external function on a path, an open file or data text: its value; None when the call
        is not one of these (the caller's other rules apply)."""
        if not path.startswith(_PREFIXES):
            return None
        first = args[0] if args else kwargs.get("stream", kwargs.get("fp", kwargs.get("s")))
        if path.startswith("os.path."):
            return datafiles.os_path_call(path[len("os.path."):], args) if not kwargs else None
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
        return None

    def config_call(self, path: str, args: list[Value], kwargs: dict[str, Value], n: ast.AST,
                    frame: Frame) -> Value | None:
        """OmegaConf's functions and Hydra's composition (omegaconf_model.py); None: not one of them."""
        name = path.rsplit(".", 1)[-1]
        first = args[0] if args else None
        if path.startswith("hydra."):
            return self._hydra_call(name, args, kwargs, n, frame)
        if name == "load" and len(args) == 1 and not kwargs:
            return self._config_file(first, frame)
        if name in ("create", "DictConfig") and len(args) <= 1:
            if first is None:
                return omegaconf_model.config({})
            if isinstance(first, Const) and isinstance(first.value, str):
                return omegaconf_model.resolved(omegaconf_model.to_config(datafiles.load("yaml", first.value)))
            return omegaconf_model.resolved(omegaconf_model.to_config(first))
        if name == "merge" and args:
            merged: Value = omegaconf_model.config({})
            for a in args:
                merged = omegaconf_model.merge(merged, a)
            return omegaconf_model.resolved(merged)
        if name == "structured" and len(args) == 1:
            made = self.call(first, [], {}, n, frame, "structured") if isinstance(first, ClassV) else first
            return omegaconf_model.to_config(made) if isinstance(made, Inst) else UNRESOLVED
        if name in ("to_container", "to_object") and len(args) == 1:
            whole = omegaconf_model.to_config(first or UNRESOLVED)
            return omegaconf_model.to_container(omegaconf_model.resolved(whole))
        if name == "from_dotlist" and len(args) == 1 and isinstance(first, Seq):
            return omegaconf_model.from_dotlist(list(first.items))
        if name == "select" and len(args) == 2 and isinstance(args[1], Const) and isinstance(args[1].value, str):
            got = omegaconf_model.select(first or UNRESOLVED, args[1].value)
            return got if got is not None else kwargs.get("default", Const(None))
        if name in ("set_struct", "set_readonly", "resolve"):
            return Const(None)
        if name in ("open_dict", "read_write", "flag_override") and args:
            return first
        if name in ("is_config", "is_dict") and len(args) == 1:
            return Const(True) if omegaconf_model.is_config(first) else UNRESOLVED
        return None

    def _config_file(self, source: Value | None, frame: Frame) -> Value:
        """`OmegaConf.load(path)`: the YAML file at a path the analysis knows (from `__file__`), as a configuration."""
        if isinstance(source, PathV):
            data = self._bytes(PathV(source.text, "file"), frame)
            if data is not None:
                return omegaconf_model.resolved(omegaconf_model.to_config(datafiles.load("yaml", data)))
        return UNRESOLVED

    def _hydra_call(self, name: str, args: list[Value], kwargs: dict[str, Value], n: ast.AST,
                    frame: Frame) -> Value | None:
        """`initialize(config_path=...)` / `initialize_config_dir(config_dir=...)` set the directory `compose` reads
        (a shared namespace entry, so helpers the test calls see it); `compose(config_name, overrides)`."""
        if name in ("initialize", "initialize_config_dir"):
            given = kwargs.get("config_path" if name == "initialize" else "config_dir", args[0] if args else None)
            where: PathV | None = given if name == "initialize_config_dir" and isinstance(given, PathV) else None
            if name == "initialize" and isinstance(given, Const) and isinstance(given.value, str):
                # relative to the file that calls it
                here = PathV(posixpath.dirname(datafiles.module_path(frame.rel).text), "str")
                where = datafiles.joined(here, [given], "str")
            rel = datafiles.rel_of(where) if where is not None else None
            frame.env[omegaconf_model.CONFIG_DIR] = Const(rel) if rel is not None else UNRESOLVED
            self.stores_seen = True
            return UNRESOLVED
        if name in ("instantiate", "call") and args:
            return self._instantiate(args[0], list(args[1:]), kwargs, n, frame)
        if name == "compose":
            where = frame.env.get(omegaconf_model.CONFIG_DIR)
            config_name = args[0] if args else kwargs.get("config_name")
            overrides = args[1] if len(args) > 1 else kwargs.get("overrides", Seq((), "list"))
            if not (isinstance(where, Const) and isinstance(where.value, str) and isinstance(config_name, Const)
                    and isinstance(config_name.value, str) and isinstance(overrides, Seq)):
                return UNRESOLVED
            directory = where.value

            def load(rel: str) -> Value:
                data = self.source.data_file(f"{directory}/{rel}" if directory else rel, frame.rel)
                return omegaconf_model.to_config(datafiles.load("yaml", data)) if data is not None else UNRESOLVED

            return omegaconf_model.compose(load, config_name.value, list(overrides.items))
        return None

    def _instantiate(self, cfg: Value, args: list[Value], kwargs: dict[str, Value], n: ast.AST, frame: Frame,
                     depth: int = 0) -> Value:
        """`hydra.utils.instantiate(cfg, *args, **kwargs)` / `call(...)`: the object `_target_` names (an in-repo
        class or function, or an external one by its path), called with the configuration's other keys (nested
        configurations with a `_target_` instantiated first, as Hydra does by default), `_args_` and the call's
        own arguments; `_partial_: true` gives a partial. A configuration or target the analysis cannot read is
        an unknown call: what it would create may use a GPU."""
        cfg = omegaconf_model.to_config(cfg)
        target = cfg.attr("_target_") if isinstance(cfg, Inst) and omegaconf_model.is_config(cfg) else None
        callee = self._target(target.value, frame) if isinstance(target, Const) and isinstance(
            target.value, str) else None
        if callee is None or not isinstance(cfg, Inst) or depth > omegaconf_model.MAX_NESTED_TARGETS:
            frame.add(Finding(UNKNOWN, (step(frame.rel, getattr(n, "lineno", 0), "instantiates a configuration "
                                                                                "whose target the analysis cannot "
                                                                                "read"),)))
            return UNRESOLVED
        recursive = cfg.attr("_recursive_") != Const(False)
        given = cfg.attr("_args_")
        positional = [*(given.items if isinstance(given, Seq) else ()), *args]
        keywords: dict[str, Value] = {}
        for k, v in cfg.attrs:
            if k.startswith("_") and k.endswith("_"):
                continue  # Hydra's own keys
            nested = omegaconf_model.to_config(v)
            if recursive and isinstance(nested, Inst) and omegaconf_model.is_config(nested) and \
                    nested.attr("_target_") is not None:
                v = self._instantiate(nested, [], {}, n, frame, depth + 1)
            keywords[k] = v
        keywords.update(kwargs)
        if cfg.attr("_partial_") == Const(True):
            return PartialV(callee, tuple(positional), tuple(sorted(keywords.items(), key=lambda kv: kv[0])))
        return self.call(callee, positional, keywords, n, frame, "instantiate")

    def _target(self, dotted: str, frame: Frame) -> Value | None:
        """What a `_target_` path names: an attribute of one of the repository's modules (the longest module
        prefix that is one), else the external object of that path; None for a path that is not a dotted name."""
        parts = dotted.split(".")
        if len(parts) < 2 or not all(p.isidentifier() for p in parts):
            return None
        for i in range(len(parts) - 1, 0, -1):
            module = ".".join(parts[:i])
            rel = self._repo_module(module, frame)
            if rel is None:
                continue
            self._reads_module_files(rel, frame)
            got: Value = self.module_attr(rel, parts[i], frame.world, module)
            for attr in parts[i + 1:]:
                got = self.getattr_v(got, attr, frame, ast.Name(attr))
            return got if not isinstance(got, Unresolved) else None
        return Ext(dotted)

    def config_method(self, cfg: Inst, name: str, args: list[Value], kwargs: dict[str, Value]) -> Value | None:
        """A method of a configuration: `get`, `keys`, `values`, `items`, `copy`; None for another."""
        if name == "get" and 1 <= len(args) <= 2 and not kwargs and isinstance(args[0], Const) and isinstance(
                args[0].value, str):
            got = cfg.attr(args[0].value)
            return got if got is not None else args[1] if len(args) == 2 else Const(None)
        if args or kwargs:
            return None
        if name == "keys":
            return Seq(tuple(Const(k) for k, _ in cfg.attrs), "list")
        if name == "values":
            return Seq(tuple(v for _, v in cfg.attrs), "list")
        if name == "items":
            return Seq(tuple(Seq((Const(k), v), "tuple") for k, v in cfg.attrs), "list")
        if name == "copy":
            return cfg
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
        got = datafiles.path_method(recv, name, args) if not kwargs else None
        return got if got is not None else UNRESOLVED

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

