"""The interpreter's rules for configurations: OmegaConf's containers and functions, Hydra's composition and
`instantiate` (omegaconf_model.py holds the values and their rules; this is the part that needs the interpreter:
reading the files, calling what a `_target_` names); a part of dataflow.Interp.
"""

from __future__ import annotations

import ast
import posixpath

from tools.classify import datafiles, omegaconf_model
from tools.classify.evidence import UNKNOWN, Finding, step
from tools.classify.interp_base import Frame, InterpBase
from tools.classify.values import UNRESOLVED, ClassV, Const, Ext, Inst, PartialV, PathV, Seq, Unresolved, Value


class ConfigsMixin(InterpBase):
    """Configurations read, composed and instantiated."""

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
                return omegaconf_model.resolved(omegaconf_model.from_yaml(first.value))
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
                return omegaconf_model.resolved(omegaconf_model.from_yaml(data))
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
                return omegaconf_model.from_yaml(data) if data is not None else UNRESOLVED

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
        if name in ("copy", "clone", "deepcopy"):
            return cfg
        if name in ("to_dict", "toDict"):
            return omegaconf_model.to_container(cfg)
        if name in ("freeze", "defrost", "lock", "unlock"):
            return Const(None)
        return None
