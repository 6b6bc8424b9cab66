"""Python programs a test runs: `subprocess.run([sys.executable, "scripts/train.py", ...])`, `python -m pkg.tool`,
`python -c "..."`, launchers (`torchrun script.py`, `accelerate launch script.py`), `runpy.run_path(path)`.

A test that runs a script of the repository fails where the script needs a GPU, as if it had run that code itself:
the script's top level runs as `__main__` (its `if __name__ == "__main__":` block runs, as it does not on import),
and its findings are the test's (ProgramsMixin in interp_external). This module only reads a command: which
program it names. A command whose program the analysis cannot name is not followed."""

from __future__ import annotations

import ast
import posixpath
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass

from tools.classify.datafiles import rel_of
from tools.classify.values import Const, Ext, PathV, Seq, Value

# calls that run a command: subprocess's, os.system; runpy's run a file or module in this process
PROCESS_CALLS = frozenset({"subprocess.run", "subprocess.call", "subprocess.Popen", "subprocess.check_call",
                           "subprocess.check_output", "os.system"})
RUNPY_CALLS = frozenset({"runpy.run_path", "runpy.run_module"})
# launchers that run the script named later on their command line (`accelerate launch --num_processes 2 x.py`)
LAUNCHERS = frozenset({"torchrun", "accelerate", "deepspeed", "mpirun", "horovodrun"})
_PYTHON = re.compile(r"python(\d+(\.\d+)?)?")
_OPTIONS_WITH_VALUE = frozenset({"-W", "-X"})  # python's own options that take the next word


@dataclass(frozen=True)
class Program:
    """What a command runs: an in-repo file as `__main__` (`rel`), or code given with `python -c` (`code`)."""

    rel: str | None = None
    code: str | None = None
    argv: tuple[str | None, ...] = ()  # its arguments (`sys.argv[1:]`); None for one the analysis cannot spell


def program_of(path: str, args: list[Value], kwargs: dict[str, Value], files: frozenset[str],
               module_file: Callable[[str], str | None]) -> Program | None:
    """The program the call `path(*args, **kwargs)` runs, when it is one of the repository's files or python -c
    code; None otherwise. `files`: the repository's files; `module_file`: a dotted module name's file in the
    repository (None: not one of its modules)."""
    if path == "runpy.run_path" and args:
        rel = _script(args[0], files)
        return Program(rel=rel) if rel else None
    if path == "runpy.run_module" and args and isinstance(args[0], Const) and isinstance(args[0].value, str):
        run_name = kwargs.get("run_name")
        rel = module_file(args[0].value)
        return Program(rel=rel) if rel and run_name == Const("__main__") else None
    if path not in PROCESS_CALLS:
        return None
    cmd = args[0] if args else kwargs.get("args")
    words = _words(cmd)
    return _program_in(words, files, module_file) if words else None


def _words(cmd: Value | None) -> list[object] | None:
    """The command's words: strings, in-repo paths (PathV) and `sys.executable`; None when one before the
    program is not known (a shell string is split as the shell would split it)."""
    if isinstance(cmd, Const) and isinstance(cmd.value, str):
        try:
            return list(shlex.split(cmd.value))
        except ValueError:
            return None
    if not isinstance(cmd, Seq):
        return None
    words: list[object] = []
    for item in cmd.items:
        if isinstance(item, Const) and isinstance(item.value, str):
            words.append(item.value)
        elif isinstance(item, PathV) or item == Ext("sys.executable"):
            words.append(item)
        else:
            words.append(None)  # not known: a program named after it cannot be found
    return words


def _program_in(words: list[object], files: frozenset[str], module_file: Callable[[str], str | None]) -> Program | None:
    head = words[0]
    name = posixpath.basename(head) if isinstance(head, str) else None
    python = head == Ext("sys.executable") or (name is not None and _PYTHON.fullmatch(name) is not None)
    if not python and name not in LAUNCHERS:
        return None
    i = 1
    while i < len(words):
        w = words[i]
        if w is None:
            return None
        if w in ("-c", "-m") and i + 1 < len(words) and isinstance(words[i + 1], str):
            target = words[i + 1]
            assert isinstance(target, str)
            if w == "-c":
                return Program(code=target, argv=_argv(words[i + 2:])) if python else None
            rel = module_file(target)
            if rel is not None:
                return Program(rel=rel, argv=_argv(words[i + 2:]))
            i += 2  # an installed module (`python -m torch.distributed.run x.py`): the script comes later
            continue
        if isinstance(w, str) and w in _OPTIONS_WITH_VALUE:
            i += 2
            continue
        if isinstance(w, str) and w.startswith("-"):
            i += 1
            continue
        rel = _script(w, files)
        if rel is not None:
            return Program(rel=rel, argv=_argv(words[i + 1:]))
        if python:
            return None  # python's first operand is its script
        i += 1  # a launcher's subcommand or an option's value (`accelerate launch`, `--nproc_per_node 2`)
    return None


def _argv(words: list[object]) -> tuple[str | None, ...]:
    return tuple(w if isinstance(w, str) else None for w in words)


def _script(word: object, files: frozenset[str]) -> str | None:
    """The repository's .py file a command word names: a path computed from `__file__`, or a relative path from
    the root (where pytest runs)."""
    if isinstance(word, PathV):
        rel = rel_of(word)
    elif isinstance(word, Const) and isinstance(word.value, str):
        return _script(word.value, files)
    elif isinstance(word, str) and not posixpath.isabs(word):
        rel = posixpath.normpath(word)
    else:
        return None
    return rel if rel is not None and rel.endswith(".py") and rel in files else None


def parses(code: str) -> bool:
    """Whether `python -c` code parses (code that does not fails at once, whatever the machine)."""
    try:
        ast.parse(code)
    except (SyntaxError, ValueError):
        return False
    return True
