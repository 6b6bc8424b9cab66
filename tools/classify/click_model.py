"""click command-line interfaces, as the analysis follows them: `CliRunner().invoke(train, ["--device", "cuda"])`
runs `train`'s callback with `device="cuda"`, so the test needs a GPU.

click is not read as code (installed.NEVER_ROOTS): its parser is too deep to follow with values, and a test's
command, handed to click's `invoke`, was never run at all (a command that uses CUDA was `cpu`). Instead the
decorators are modelled (docs/classification.md, "Round 23"): `@click.option(...)` and `@click.argument(...)`
give parameter declarations (`param`), `@click.command()` / `@click.group()` / `@group.command()` make the
function a command (FuncV attributes: COMMAND, PARAMS, and `callback`, the plain function, as click exposes it),
and `invocations` parses a known command line as click does: options by their flags (`--device cuda`,
`--device=cuda`, `-dcuda`, boolean switches `--cuda/--no-cuda`, `is_flag`, `count`, `multiple`), then arguments
in order, each value converted by its type (str, int, float, bool, Choice, Path), a default when not given, the
option's `callback(ctx, param, value)` applied by the caller. A group runs its callback, then the sub-command
named next. What the model does not follow leaves the values unknown, never a guess: an unknown word, option or
sub-command, `nargs`, `envvar` or `prompt` without a value given, a type it does not know, context settings, a
click decorator it does not know.
"""

from __future__ import annotations

import ast
import shlex
from collections.abc import Iterable
from dataclasses import dataclass

from tools.classify.plugins import CLICK_REL
from tools.classify.values import UNRESOLVED, ClassV, Const, DictV, Ext, FuncV, Inst, Seq, Value

PARAM = ClassV(CLICK_REL, (1, 0), "Parameter")
MAKER = ClassV(CLICK_REL, (5, 0), "CommandMaker")
RUNNER = ClassV(CLICK_REL, (9, 0), "CliRunner")
COMMAND = "<click command>"  # FuncV attribute: the command's settings (an Inst of MAKER) and sub-commands
PARAMS = "<click params>"  # FuncV attribute: its parameters, top decorator first (click's order)
PASS_CONTEXT = "<click pass context>"  # FuncV attribute: the callback's first argument is the context (or obj)
INCOMPLETE = "<click incomplete>"  # FuncV attribute: a click decorator the model does not know was applied
VALUE_CALLBACK = "<value callback>"  # a parameter setting: its callback takes the value alone (typer's)
_SUBCOMMANDS = "commands"

DECORATORS = frozenset({"option", "argument", "command", "group", "pass_context", "pass_obj", "version_option",
                        "help_option", "confirmation_option", "password_option", "callback"})
_IGNORED = frozenset({"version_option", "help_option"})  # eager options that pass nothing to the callback
_STR_TYPES = frozenset({"builtins.str", "click.STRING", "click.Choice()", "click.Path()", "click.types.Choice()",
                        "click.types.Path()", "click.UNPROCESSED"})
_INT_TYPES = frozenset({"builtins.int", "click.INT", "click.IntRange()", "click.types.IntRange()"})
_FLOAT_TYPES = frozenset({"builtins.float", "click.FLOAT", "click.FloatRange()", "click.types.FloatRange()"})
_BOOL_TYPES = frozenset({"builtins.bool", "click.BOOL"})
_TRUE = frozenset({"1", "true", "t", "yes", "y", "on"})
_FALSE = frozenset({"0", "false", "f", "no", "n", "off"})
_NAME_SUFFIXES = ("command", "cmd", "group", "grp")


def is_click(path: str) -> bool:
    return path == "click" or path.startswith("click.")


def _short(path: str) -> str:
    """`click.decorators.option` -> `option`: click re-exports its decorators at the top level."""
    return path.rsplit(".", 1)[-1]


def ext_call(path: str, args: list[Value], kwargs: dict[str, Value]) -> Value | None:
    """The value of a call of click's `path` (None: not one the model knows; the caller's default applies)."""
    name = _short(path)
    if name in ("option", "argument") and not (len(args) == 1 and isinstance(args[0], FuncV)):
        return param(name, args, kwargs)
    if name in ("command", "group"):
        if len(args) == 1 and isinstance(args[0], FuncV) and not kwargs:
            return as_command(args[0], maker(name, [], {}))  # `click.command(fn)`
        return maker(name, args, kwargs)
    if name in ("Choice", "Path", "IntRange", "FloatRange"):
        return Ext(f"click.{name}()")
    if name == "CliRunner":
        return Inst(RUNNER)
    return None


def param(kind: str, args: list[Value], kwargs: dict[str, Value]) -> Inst:
    return Inst(PARAM, (("decls", Seq(tuple(args), "tuple")), ("kind", Const(kind)),
                        ("kw", DictV(tuple((Const(k), v) for k, v in sorted(kwargs.items()))))))


def maker(kind: str, args: list[Value], kwargs: dict[str, Value]) -> Inst:
    """What `click.command(name, **settings)` returns: a decorator that makes the function a command."""
    name = args[0] if args else kwargs.get("name", Const(None))
    # settings that change how the command line is read (context_settings, a command class) are not modelled
    known = not (set(kwargs) - {"name", "help", "short_help", "epilog", "hidden", "deprecated",
                                "invoke_without_command", "no_args_is_help", "add_help_option", "options_metavar"})
    return Inst(MAKER, (("known", Const(known)), ("kind", Const(kind)), ("name", name),
                        ("no_args", kwargs.get("invoke_without_command", Const(False)))))


def is_runner(v: Value) -> bool:
    return isinstance(v, Inst) and v.cls == RUNNER


def is_param(v: Value) -> bool:
    return isinstance(v, Inst) and v.cls == PARAM


def is_maker(v: Value) -> bool:
    return isinstance(v, Inst) and v.cls == MAKER


def command_of(v: Value) -> Inst | None:
    got = v.attr(COMMAND) if isinstance(v, FuncV) else None
    return got if isinstance(got, Inst) else None


def in_the_making(v: Value) -> bool:
    """A command, or a function click's decorators have started to make one of (it carries parameters): handed to
    a call the analysis cannot follow, it is being decorated (`command = option(command)` with an option another
    library built), not run; called without a command line, click would parse pytest's and exit."""
    return isinstance(v, FuncV) and (command_of(v) is not None or v.attr(PARAMS) is not None)


def plain(fv: FuncV) -> FuncV:
    """The function without what the model keeps on it: the callback click calls."""
    keep = tuple((k, v) for k, v in fv.attrs if k not in (COMMAND, PARAMS, PASS_CONTEXT, INCOMPLETE, "callback",
                                                             "name"))
    return FuncV(fv.rel, fv.pos, fv.name, fv.bound, fv.captured, fv.cls, keep)


def decorate(fv: FuncV, deco: Value, deco_name: str) -> FuncV | None:
    """fv after the click decorator `deco` (`deco_name`: the decorator's last name); None when it is not one."""
    if is_param(deco):
        if command_of(fv) is not None:
            return fv.with_attr(INCOMPLETE, Const(True))  # an option put above the command decorator: an error
        params = fv.attr(PARAMS)
        before = params.items if isinstance(params, Seq) else ()
        return fv.with_attr(PARAMS, Seq((deco, *before), "tuple"))
    if is_maker(deco):
        return as_command(fv, deco)
    if isinstance(deco, Ext) and is_click(deco.path):
        name = _short(deco.path)
        if name in ("command", "group"):
            return as_command(fv, maker(name, [], {}))
        if name in ("pass_context", "pass_obj"):
            return fv.with_attr(PASS_CONTEXT, Const(True))
        if name in _IGNORED or deco_name in _IGNORED:
            return fv
        return fv.with_attr(INCOMPLETE, Const(True))
    return None


def as_command(fv: FuncV, made: Inst) -> FuncV:
    name = made.attr("name")
    spelled = name.value if isinstance(name, Const) and isinstance(name.value, str) else None
    settings = made.with_attr(_SUBCOMMANDS, Seq((), "tuple"))
    out = fv.with_attr(COMMAND, settings).with_attr("callback", plain(fv))
    if spelled is None and not (isinstance(name, Const) and name.value is None):
        out = out.with_attr(INCOMPLETE, Const(True))  # a name the analysis cannot spell
    return out.with_attr("name", Const(spelled) if spelled is not None else Const(_derived_name(fv.name)))


def _derived_name(function_name: str) -> str:
    return function_name.lower().replace("_", "-")


def command_names(cmd: FuncV) -> set[str]:
    """The names a sub-command answers to: its own, else its function's as click 8.0 and 8.2+ derive it."""
    name = cmd.attr("name")
    derived = _derived_name(cmd.name)
    if isinstance(name, Const) and name.value != derived:
        return {str(name.value)}
    left, sep, suffix = derived.rpartition("-")
    return {derived, left} if sep and suffix in _NAME_SUFFIXES else {derived}


def as_group(callback: FuncV, subs: list[FuncV]) -> FuncV:
    """A command made a group holding `subs` (a typer application's callback and its commands)."""
    settings = command_of(callback)
    if settings is None:
        return callback
    return callback.with_attr(COMMAND, settings.with_attr("kind", Const("group")).with_attr(
        _SUBCOMMANDS, Seq(tuple(subs), "tuple")))


def with_subcommand(group: FuncV, sub: Value, name: Value | None = None) -> FuncV:
    """The group after `@group.command()` made `sub`, or `group.add_command(sub, name)`."""
    settings = command_of(group)
    assert settings is not None
    known = settings.attr(_SUBCOMMANDS)
    items = known.items if isinstance(known, Seq) else ()
    if not isinstance(sub, FuncV) or command_of(sub) is None or name is not None and not (
            isinstance(name, Const) and isinstance(name.value, str)):
        return group.with_attr(INCOMPLETE, Const(True))
    if isinstance(name, Const) and name.value is not None:
        sub = sub.with_attr("name", name)
    return group.with_attr(COMMAND, settings.with_attr(_SUBCOMMANDS, Seq((*items, sub), "tuple")))


@dataclass(frozen=True)
class Invocation:
    """One callback click runs: the function, whether it is handed the context first, and each parameter it is
    given (its name, its value before the option's callback, that callback or None, and whether the callback takes
    the value alone rather than click's `(ctx, param, value)`)."""

    callback: FuncV
    pass_context: bool
    values: tuple[tuple[str, Value, Value | None, bool], ...]
    unknown: bool  # the values are not known (the callback still runs: what it does with any value counts)


def argv_of(v: Value | None) -> list[str | None] | None:
    """A command line as click reads it: a list of words (a word the analysis cannot spell is None), a string
    split as a shell does, None for `()`/None... given to `invoke`; None when not known."""
    if v is None or v == Const(None):
        return []
    if isinstance(v, Const) and isinstance(v.value, str):
        try:
            return shlex.split(v.value)
        except ValueError:
            return None
    if isinstance(v, Seq) and v.kind in ("list", "tuple"):
        return [w.value if isinstance(w, Const) and isinstance(w.value, str) else None for w in v.items]
    return None


@dataclass
class _Spec:
    """A parameter as the parser reads it."""

    name: str
    kind: str  # "option" / "argument"
    flags: tuple[str, ...]
    off_flags: tuple[str, ...]
    is_flag: bool
    flag_value: Value
    count: bool
    multiple: bool
    default: Value | None  # None: not given (click's own default applies)
    converter: str | None  # "str", "int", "float", "bool"; None: a type the model does not know
    required: bool
    callback: Value | None
    value_callback: bool  # the callback takes the value alone (typer's)
    exposed: bool
    from_elsewhere: bool  # envvar / prompt: a value that is not given may come from there


def _spec(p: Inst) -> _Spec | None:
    decls_v, kind_v, kw_v = p.attr("decls"), p.attr("kind"), p.attr("kw")
    if not (isinstance(decls_v, Seq) and isinstance(kind_v, Const) and isinstance(kw_v, DictV)):
        return None  # (joined with another declaration, or widened: not known)
    kw = {k.value: v for k, v in kw_v.items if isinstance(k, Const)}
    decls = [d.value for d in decls_v.items if isinstance(d, Const) and isinstance(d.value, str)]
    if len(decls) != len(decls_v.items) or not decls:
        return None
    nargs = kw.get("nargs", Const(1))
    if kind_v.value == "argument":
        if nargs not in (Const(1), Const(-1)) or len(decls) != 1:
            return None
        default = kw.get("default")
        required = kw.get("required", Const(default is None and nargs == Const(1)))
        return _Spec(decls[0].replace("-", "_").lower(), "argument", (), (), False, Const(True), False,
                     nargs == Const(-1), default, _converter(kw.get("type"), default), required == Const(True),
                     kw.get("callback"), kw.get(VALUE_CALLBACK) == Const(True),
                     kw.get("expose_value", Const(True)) != Const(False), False)
    if nargs != Const(1):
        return None
    explicit = [d for d in decls if d.isidentifier()]
    flags: list[str] = []
    offs: list[str] = []
    for d in decls:
        if d in explicit:
            continue
        on, slash, off = d.partition("/")
        flags += [on.strip()] if on.strip() else []
        offs += [o.strip() for o in off.split("/") if o.strip()] if slash else []
    if not flags or any(not f.startswith("-") for f in (*flags, *offs)):
        return None
    if explicit:
        name = explicit[0]
    else:
        longest = max(len(f) - len(f.lstrip("-")) for f in flags)
        name = next(f for f in flags if len(f) - len(f.lstrip("-")) == longest).lstrip("-").replace("-", "_").lower()
    is_flag = kw.get("is_flag") == Const(True) or bool(offs)
    count = kw.get("count") == Const(True)
    default = kw.get("default")
    return _Spec(name, "option", tuple(flags), tuple(offs), is_flag, kw.get("flag_value", Const(True)), count,
                 kw.get("multiple") == Const(True), default, _converter(kw.get("type"), default),
                 kw.get("required") == Const(True), kw.get("callback"), kw.get(VALUE_CALLBACK) == Const(True),
                 kw.get("expose_value", Const(True)) != Const(False),
                 "envvar" in kw or kw.get("prompt", Const(False)) not in (Const(False), Const(None)))


def _converter(t: Value | None, default: Value | None) -> str | None:
    if t is None:
        # click infers the type from the default (`default=1` is an int option); a string by default
        if isinstance(default, Const) and type(default.value) in (int, float, bool):
            return type(default.value).__name__
        return "str"
    path = t.path if isinstance(t, Ext) else ""
    for kind, paths in (("str", _STR_TYPES), ("int", _INT_TYPES), ("float", _FLOAT_TYPES), ("bool", _BOOL_TYPES)):
        if path in paths:
            return kind
    return None


def _converted(spec: _Spec, word: str | None) -> Value:
    if word is None or spec.converter is None:
        return UNRESOLVED
    try:
        if spec.converter == "int":
            return Const(int(word))
        if spec.converter == "float":
            return Const(float(word))
    except ValueError:
        return UNRESOLVED
    if spec.converter == "bool":
        low = word.lower()
        return Const(True) if low in _TRUE else Const(False) if low in _FALSE else UNRESOLVED
    return Const(word)


def _not_given(spec: _Spec) -> Value:
    if spec.from_elsewhere:
        return UNRESOLVED
    if spec.count:
        return spec.default if spec.default is not None else Const(0)
    if spec.multiple:
        return spec.default if spec.default is not None else Seq((), "tuple")
    if spec.default is not None:
        return spec.default
    return Const(False) if spec.is_flag else Const(None)


class _Unparsed(Exception):
    """The command line is not one the model reads (or click would reject it)."""


class _Help(Exception):
    """`--help`: click prints the help and exits before running the callback."""


def _parse(specs: list[_Spec], words: list[str | None], group: bool) -> tuple[dict[str, Value], list[str | None]]:
    """{parameter: value} for the words, and (for a group) the words from its sub-command on."""
    by_flag = {f: s for s in specs if s.kind == "option" for f in (*s.flags, *s.off_flags)}
    arguments = [s for s in specs if s.kind == "argument"]
    given: dict[str, Value] = {}
    counts: dict[str, int] = {}
    many: dict[str, list[Value]] = {}
    positional: list[str | None] = []
    rest: list[str | None] = []
    i = 0
    options_done = False
    while i < len(words):
        word = words[i]
        if word is None:
            raise _Unparsed  # an option or an argument: which one is not known
        if word == "--" and not options_done:
            options_done = True
            i += 1
            continue
        if options_done or not word.startswith("-") or word == "-":
            if group:
                rest = words[i:]
                break
            positional.append(word)
            i += 1
            continue
        flag, eq, inline = word.partition("=")
        spec = by_flag.get(flag)
        attached: str | None = None
        if spec is None and not word.startswith("--") and word[:2] in by_flag:
            spec, flag, attached = by_flag[word[:2]], word[:2], word[2:]  # `-dcuda`
            if spec.is_flag or spec.count:
                raise _Unparsed  # combined short flags (`-vv`): not followed
        if spec is None and word == "--help":
            raise _Help
        if spec is None:
            raise _Unparsed  # click exits on an option it does not know
        i += 1
        if spec.is_flag or spec.count:
            if eq:
                raise _Unparsed
            if spec.count:
                counts[spec.name] = counts.get(spec.name, 0) + 1
                continue
            given[spec.name] = Const(False) if flag in spec.off_flags else spec.flag_value
            continue
        if attached is None and not eq:
            if i >= len(words):
                raise _Unparsed  # an option without its value
            attached = words[i]
            i += 1
        value = _converted(spec, inline if eq else attached)
        if spec.multiple:
            many.setdefault(spec.name, []).append(value)
        else:
            given[spec.name] = value
    for name, n in counts.items():
        given[name] = Const(n)
    for name, vs in many.items():
        given[name] = Seq(tuple(vs), "tuple")
    for spec in arguments:
        if spec.multiple:
            given[spec.name] = Seq(tuple(_converted(spec, w) for w in positional), "tuple")
            positional = []
        elif positional:
            given[spec.name] = _converted(spec, positional.pop(0))
        elif spec.required:
            raise _Unparsed  # a missing argument: click exits
    if positional:
        raise _Unparsed  # an extra argument: click exits
    out: dict[str, Value] = {}
    for spec in specs:
        if spec.name in given:
            out[spec.name] = given[spec.name]
        elif spec.kind == "option" and spec.required:
            raise _Unparsed
        else:
            out[spec.name] = _not_given(spec)
    return out, rest


def _specs(cmd: FuncV) -> tuple[list[_Spec], bool]:
    """The parameters the model reads, and whether they are all of them (an unknown declaration: not)."""
    params = cmd.attr(PARAMS)
    out = []
    complete = True
    for p in params.items if isinstance(params, Seq) else ():
        spec = _spec(p) if isinstance(p, Inst) else None
        if spec is None:
            complete = False
        else:
            out.append(spec)
    return out, complete


def _named(specs: list[_Spec], words: list[str | None]) -> set[str] | None:
    """The parameters a command line may name (None: any of them): each word that is a flag of one, or begins
    with one (`--device=cuda`, `-dcuda`). A word the analysis cannot spell may be any flag, unless it follows a
    flag that takes a value (`-t <a temporary path>`)."""
    by_flag = {f: s for s in specs if s.kind == "option" for f in (*s.flags, *s.off_flags)}
    named: set[str] = set()
    takes_value = False
    for w in words:
        if takes_value:
            takes_value = False
            continue
        if w is None:
            return None
        spec = by_flag.get(w.partition("=")[0]) or by_flag.get(w[:2])
        if spec is not None:
            named.add(spec.name)
            takes_value = w in by_flag and not (spec.is_flag or spec.count)
    return named


def _partial(specs: list[_Spec], words: list[str | None] | None) -> dict[str, Value]:
    """Values of a command the model cannot read whole (a declaration, decorator or option it does not know): an
    option the command line never names has the value click gives it when not given; everything else is unknown
    (when click rejects the line, the callback does not run at all: these values are then never used)."""
    named = _named(specs, words) if words is not None else None
    return {s.name: _not_given(s) if named is not None and s.kind == "option" and s.name not in named
            else UNRESOLVED for s in specs}


def _invocation(cmd: FuncV, specs: list[_Spec], values: dict[str, Value], unknown: bool) -> Invocation:
    rows = tuple((s.name, values[s.name], s.callback, s.value_callback) for s in specs
                 if s.exposed and s.name in values)
    return Invocation(plain(cmd), cmd.attr(PASS_CONTEXT) is not None, rows, unknown)


def invocations(cmd: FuncV, words: list[str | None] | None) -> tuple[list[Invocation], bool]:
    """The callbacks click runs for the command line `words` (None: not known), in order, and whether the model saw
    every command the line may name. A command line the model cannot read runs the command's callback (and, for a
    group, every sub-command's) with unknown values; a sub-command name it never saw registered is not complete."""
    settings = command_of(cmd)
    if settings is None:
        return [], False
    specs, all_known = _specs(cmd)
    group = settings.attr("kind") == Const("group")
    subs = settings.attr(_SUBCOMMANDS)
    sub_list = [s for s in subs.items if isinstance(s, FuncV)] if isinstance(subs, Seq) else []
    if words is None or not all_known or cmd.attr(INCOMPLETE) is not None or settings.attr("known") != Const(True):
        return _unknown(cmd, specs, words, group, sub_list)
    try:
        values, rest = _parse(specs, words, group)
    except _Help:
        return [], True
    except _Unparsed:
        return _unknown(cmd, specs, words, group, sub_list)
    if not group:
        return [_invocation(cmd, specs, values, False)], True
    if not rest:
        # a group without a sub-command prints its help (unless it runs without one)
        return ([_invocation(cmd, specs, values, False)] if settings.attr("no_args") == Const(True) else []), True
    chosen = [s for s in sub_list if rest[0] in command_names(s)]
    if len(chosen) != 1:
        return _unknown(cmd, specs, None, group, sub_list)
    runs, complete = invocations(chosen[0], rest[1:])
    return [_invocation(cmd, specs, values, False), *runs], complete


def _unknown(cmd: FuncV, specs: list[_Spec], words: list[str | None] | None, group: bool,
             subs: list[FuncV]) -> tuple[list[Invocation], bool]:
    """The command's callback with what is known of its values and, for a group, every sub-command it holds with
    unknown ones; not complete for a group (the line may name a sub-command registered where the model did not see
    it)."""
    out = [_invocation(cmd, specs, _partial(specs, None if group else words), True)]
    for s in subs:
        out += invocations(s, None)[0]
    return out, not group


def decorator_name(d: ast.expr) -> str:
    d = d.func if isinstance(d, ast.Call) else d
    return d.attr if isinstance(d, ast.Attribute) else d.id if isinstance(d, ast.Name) else ""


def imports_any(imports: Iterable[object], tops: tuple[str, ...]) -> bool:
    """Whether a module's imports (modules.ImportSpec) name one of the top-level packages `tops` (click, typer):
    only then are its defs' decorators modelled."""
    return any(getattr(s, "level", 1) == 0 and str(getattr(s, "module", "")).split(".", 1)[0] in tops
               for s in imports)
