"""Logging levels, for `if logger.isEnabledFor(logging.DEBUG):`.

Libraries guard diagnostics with it: NVTX ranges (`torch.cuda.nvtx.range_push`, which raises on a CPU build),
`torch.cuda.memory_allocated()` in a debug message. Such code runs only when a logger's level is DEBUG or lower,
which only code can make so (Python's default is WARNING): a `setLevel`, `basicConfig(level=...)`,
`caplog.set_level`/`at_level`, a `dictConfig`. So the guard is false unless a module the calling module loads
(its import closure and package `__init__`s: where a library configures its logger) may lower a level to DEBUG.
A level computed at import (`setLevel(LOG_LEVEL)`, from an environment variable's default) is the value the
module's top level gives it, environment variables unset as everywhere in the analysis. Not seen: a test that
lowers the level itself (`caplog.set_level(logging.DEBUG)` in a test module the library does not import,
`--log-level=DEBUG`): such a run is outside what the classification file promises.

This module is pure: the syntax of level settings and the numbers of level values; interp_external asks the
module states for the computed ones.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from tools.classify.values import Const, Ext, Value, alternatives

DEBUG = 10
LEVELS = {"CRITICAL": 50, "FATAL": 50, "ERROR": 40, "WARNING": 30, "WARN": 30, "INFO": 20, "DEBUG": 10, "NOTSET": 0}
_SETTERS = frozenset({"setLevel", "set_level", "at_level"})  # Logger.setLevel, pytest's caplog
_CONFIGS = frozenset({"dictConfig", "fileConfig"})  # levels the analysis does not read


@dataclass(frozen=True)
class LevelSetting:
    """A call that may set a level: its level argument (None: a configuration the analysis does not read) and
    whether it runs at the module's top level (its value is then the module's)."""

    line: int
    arg: ast.expr | None
    top_level: bool


def level_settings(tree: ast.Module) -> list[LevelSetting]:
    """The calls of a module that may set a logging level, in source order."""
    top = {id(n) for s in tree.body if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
           for n in ast.walk(s)}
    out: list[LevelSetting] = []
    for n in ast.walk(tree):
        if not isinstance(n, ast.Call):
            continue
        f = n.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        level = next((k.value for k in n.keywords if k.arg == "level"), None)
        if name in _SETTERS:
            arg = n.args[0] if n.args else level
            if arg is None:
                continue
        elif name == "basicConfig":
            if level is None:
                continue  # the root keeps its level
            arg = level
        elif name in _CONFIGS:
            arg = None
        else:
            continue
        out.append(LevelSetting(n.lineno, arg, id(n) in top))
    out.sort(key=lambda s: s.line)
    return out


def written_level(e: ast.expr) -> int | None:
    """The level an expression spells (`logging.DEBUG`, `DEBUG`, `10`, `"INFO"`); None: a computed one."""
    if isinstance(e, ast.Constant) and type(e.value) is int:
        return e.value
    if isinstance(e, ast.Constant) and isinstance(e.value, str):
        return LEVELS.get(e.value.upper())
    name = e.attr if isinstance(e, ast.Attribute) else e.id if isinstance(e, ast.Name) else None
    return LEVELS.get(name) if name is not None else None


def lowest_level(v: Value) -> int | None:
    """The lowest level a value may be (each alternative of a choice); None when one is not a known level."""
    levels: list[int] = []
    for a in alternatives(v):
        if isinstance(a, Const) and type(a.value) is int:
            levels.append(a.value)
        elif isinstance(a, Const) and isinstance(a.value, str) and a.value.upper() in LEVELS:
            levels.append(LEVELS[a.value.upper()])
        elif isinstance(a, Ext) and a.path.startswith("logging.") and a.path[len("logging."):] in LEVELS:
            levels.append(LEVELS[a.path[len("logging."):]])
        else:
            return None
    return min(levels) if levels else None
