"""typer applications, as the analysis follows them: a typer command is a click command whose parameters come from
its function's signature, so `CliRunner().invoke(app, ["train", "--device", "cuda"])` runs `train(device="cuda")`.

typer is not read as code (installed.NEVER_ROOTS). `typer.Typer()` is an application object whose commands are an
attribute (`@app.command()` rebinds the application's name to it with one more command, as click_model does for a
group); each command is made a click command (click_model.py) with one parameter per function parameter, as typer
builds it: a parameter with a default is an option `--name` (`_` as `-`; a bool one the switch `--name/--no-name`),
one without is a required argument, `typer.Option(...)` / `typer.Argument(...)` as its default (the legacy form:
the first argument is the default) or inside `Annotated[...]` (every argument is a flag) give their flags and
settings. An application with one command and no callback runs that command; otherwise the first word names the
command, after the callback's own options. What is not modelled (`add_typer`, a type other than str/int/float/bool,
Optional of those or a path) leaves values unknown.
"""

from __future__ import annotations

import ast

from tools.classify import click_model
from tools.classify.click_model import Invocation
from tools.classify.plugins import CLICK_REL
from tools.classify.values import ClassV, Const, DictV, Ext, FuncV, Inst, Seq, Value

APP = ClassV(CLICK_REL, (13, 0), "Typer")
PARAM = ClassV(CLICK_REL, (17, 0), "TyperParameter")
MAKER = ClassV(CLICK_REL, (21, 0), "TyperCommandMaker")
# types whose conversion the click model does (an annotation's name, read without evaluating it)
TYPE_PATHS = {"str": "builtins.str", "int": "builtins.int", "float": "builtins.float", "Path": "builtins.str"}


def is_typer(path: str) -> bool:
    return path == "typer" or path.startswith("typer.")


def ext_call(path: str, args: list[Value], kwargs: dict[str, Value]) -> Value | None:
    """The value of a call of typer's `path` (None: not one the model knows)."""
    name = path.rsplit(".", 1)[-1]
    if name == "Typer":
        return new_app()
    if name in ("Option", "Argument"):
        return Inst(PARAM, (("args", Seq(tuple(args), "tuple")), ("kind", Const(name.lower())),
                            ("kw", DictV(tuple((Const(k), v) for k, v in sorted(kwargs.items()))))))
    if name == "CliRunner":
        return Inst(click_model.RUNNER)
    return None


def new_app() -> Inst:
    return Inst(APP, (("callback", Const(None)), ("commands", Seq((), "tuple")), ("known", Const(True))))


def is_app(v: Value) -> bool:
    return isinstance(v, Inst) and v.cls == APP


def is_param(v: Value) -> bool:
    return isinstance(v, Inst) and v.cls == PARAM


def is_maker(v: Value) -> bool:
    return isinstance(v, Inst) and v.cls == MAKER


def app_method(app: Inst, method: str, args: list[Value], kwargs: dict[str, Value]) -> Value | None:
    """`app.command(name)` / `app.callback()`: a decorator (MAKER); None for another method."""
    if method in ("command", "callback"):
        name = args[0] if args else kwargs.get("name", Const(None))
        return Inst(MAKER, (("kind", Const(method)), ("name", name)))
    return None


def incomplete(app: Inst) -> Inst:
    """The application after something the model does not follow (`add_typer`, a command it could not build)."""
    return app.with_attr("known", Const(False))


def command_name(fv: FuncV, maker: Inst) -> Value:
    name = maker.attr("name")
    if isinstance(name, Const) and name.value is None:
        return Const(fv.name.lower().replace("_", "-"))
    return name if name is not None else Const(None)


def option_decls(name: str, flags: list[Value], is_bool: bool) -> list[Value]:
    """An option's declarations: its flags (typer's default `--name`, a bool one `--name/--no-name`), and the Python
    name, which names the callback's parameter whatever the flags are."""
    if not flags:
        dashed = name.replace("_", "-")
        flags = [Const(f"--{dashed}/--no-{dashed}" if is_bool else f"--{dashed}")]
    return [*flags, Const(name)]


def with_command(app: Inst, maker: Inst, command: FuncV | None) -> Inst:
    """The application after `@app.command()` / `@app.callback()` made `command` (None: not built)."""
    if command is None:
        return incomplete(app)
    if maker.attr("kind") == Const("callback"):
        return app.with_attr("callback", command)
    commands = app.attr("commands")
    items = commands.items if isinstance(commands, Seq) else ()
    return app.with_attr("commands", Seq((*items, command), "tuple"))


def invocations(app: Inst, words: list[str | None] | None) -> tuple[list[Invocation], bool]:
    """The callbacks a typer application runs for the command line (click_model.invocations' contract): its only
    command when it has one and no callback; else the callback (a group holding the commands) or, without one,
    the command the first word names."""
    commands = app.attr("commands")
    cmds = [c for c in commands.items if isinstance(c, FuncV)] if isinstance(commands, Seq) else []
    callback = app.attr("callback")
    known = app.attr("known") == Const(True)
    if isinstance(callback, FuncV):
        runs, complete = click_model.invocations(click_model.as_group(callback, cmds), words)
    elif len(cmds) == 1:
        runs, complete = click_model.invocations(cmds[0], words)
    elif words == [] or words and words[0] == "--help":
        runs, complete = [], True  # typer prints the help
    else:
        chosen = [c for c in cmds if words and words[0] in click_model.command_names(c)]
        if words and len(chosen) == 1:
            runs, complete = click_model.invocations(chosen[0], words[1:])
        else:
            runs, complete = [r for c in cmds for r in click_model.invocations(c, None)[0]], False
    return runs, complete and known


def annotation_type(node: ast.expr | None) -> str | None:
    """The click type path for a parameter's annotation (`int`, `Optional[int]`, `int | None`, `Path`, `"int"`);
    None: not one the model converts."""
    if isinstance(node, ast.Subscript) and isinstance(node.value, (ast.Name, ast.Attribute)):
        outer = node.value.id if isinstance(node.value, ast.Name) else node.value.attr
        return annotation_type(node.slice) if outer == "Optional" else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        kept = [s for s in (node.left, node.right) if not (isinstance(s, ast.Constant) and s.value is None)]
        return annotation_type(kept[0]) if len(kept) == 1 else None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            return annotation_type(ast.parse(node.value, mode="eval").body)
        except SyntaxError:
            return None
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return "builtins.bool" if name == "bool" else TYPE_PATHS.get(name)


def annotated(node: ast.expr | None) -> tuple[ast.expr, list[ast.expr]] | None:
    """`Annotated[T, typer.Option(...), ...]`: (T, the metadata expressions); None for another annotation."""
    if not (isinstance(node, ast.Subscript) and isinstance(node.value, (ast.Name, ast.Attribute))):
        return None
    outer = node.value.id if isinstance(node.value, ast.Name) else node.value.attr
    if outer != "Annotated" or not isinstance(node.slice, ast.Tuple) or len(node.slice.elts) < 2:
        return None
    return node.slice.elts[0], list(node.slice.elts[1:])


def click_param(name: str, type_path: str | None, marker: Inst | None, legacy: bool, default: Value | None) -> Inst:
    """The click parameter typer builds for one function parameter: `marker` is its typer.Option/Argument (None:
    none, so an option when it has a default, else an argument); `legacy`: the marker is the default itself, whose
    first argument is the parameter's default; `default`: the Python default (None: no default)."""
    marked = marker.attr("kind") if marker is not None else None
    kind = str(marked.value) if isinstance(marked, Const) else "option" if default is not None or legacy else \
        "argument"
    given = marker.attr("args") if marker is not None else None
    margs = list(given.items) if isinstance(given, Seq) else []
    kw_v = marker.attr("kw") if marker is not None else None
    kw = {str(k.value): v for k, v in kw_v.items if isinstance(k, Const)} if isinstance(kw_v, DictV) else {}
    if legacy:
        default = margs.pop(0) if margs else kw.pop("default", Const(...))
    out: dict[str, Value] = {k: v for k, v in kw.items() if k in ("envvar", "prompt", "callback", "is_flag",
                                                                 "flag_value", "count", "expose_value")}
    if "callback" in out:
        out[click_model.VALUE_CALLBACK] = Const(True)  # typer hands its callbacks the value alone
    if any(k in kw for k in ("parser", "click_type")):
        type_path = None
    if default is None or default == Const(...):
        out["required"] = Const(True)
    else:
        out["default"] = default
    is_bool = type_path == "builtins.bool"
    if is_bool and kind == "option":
        out["is_flag"] = Const(True)  # (`--force` alone is a flag; `--force/--no-force` a switch)
    elif not is_bool:
        out["type"] = Ext(type_path) if type_path is not None else Ext(UNCONVERTED)
    if kind == "argument":
        return click_model.param("argument", [Const(name)], out)
    return click_model.param("option", option_decls(name, margs, is_bool), out)


UNCONVERTED = "<typer: a type the model does not convert>"
