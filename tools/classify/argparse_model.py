"""argparse parsers, as the analysis follows them: `parser.add_argument("--device", default="cuda")` then
`parser.parse_args(["--device", "cpu"])` gives a namespace whose `device` is "cpu".

A script a test runs (programs.py) reads its command line this way, and so do helpers that tests call with
`parse_args([...])`; a conftest's `parser.addoption(...)` (pytest's, with argparse's rules) gives the defaults
that `config.getoption` reads (declared_options). A parser is an object of a class of its own whose options are
an attribute; each `add_argument` on a name rebinds the name to the parser with one more option (values are
immutable); an argument group adds to its parser's options the same way. What the model does not follow makes the
namespace unknown, never a guess: a group of a parser not held by a local name, sub-commands, `nargs`, an option the
command line gives that the parser lacks, a value of a `type` other than `int`/`float`/`str`, or a command line that
is not known (`parse_args()` outside a program: pytest's own arguments).
"""

from __future__ import annotations

import ast

from tools.classify.interp_base import STORE
from tools.classify.plugins import NAMESPACE_POS, NAMESPACE_REL, PARSER_REL
from tools.classify.values import UNRESOLVED, ClassV, Const, Ext, Inst, Seq, Value

PARSER = ClassV(PARSER_REL, (1, 0), "ArgumentParser")
ARGV = STORE + "sys.argv"  # a program's command line after its script (programs.py), passed to its calls
_OPTIONS = "<options>"  # (flags, dest, kind, default, type) per option, in the order added
_INCOMPLETE = "<incomplete>"  # options were added where the model does not see them
_TYPES = {"builtins.int": int, "builtins.float": float, "builtins.str": str}
# methods that add options the model cannot list: the parser's namespace is unknown from then on
GROUP = ClassV(PARSER_REL, (5, 0), "ArgumentGroup")
GROUP_METHODS = frozenset({"add_argument_group", "add_mutually_exclusive_group"})
UNFOLLOWED = frozenset({"add_subparsers", "set_defaults",
                        "parse_intermixed_args"})


def option_dest(flags: list[str]) -> str:
    """The attribute an option sets, as argparse names it without `dest=`: the first long flag (else the first)
    without its dashes, `-` as `_`; a positional argument's name as it is."""
    first = next((f for f in flags if f.startswith("--")), flags[0])
    return first.lstrip("-").replace("-", "_") if first.startswith("-") else first


def action_default(action: object) -> Const:
    """An option's value when it is not given and has no `default=`: `store_true` False, `store_false` True, else
    None."""
    return Const({"store_true": False, "store_false": True}.get(str(action)))


def declared_options(tree: ast.Module) -> dict[str, Value]:
    """{dest: default} of every `<parser>.addoption("--name", ..., default=<literal>)` in a conftest, as pytest
    fills them in when the option is not given (`action="store_true"`: False; no default: None)."""
    out: dict[str, Value] = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "addoption"):
            continue
        names = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        kw = {k.arg: k.value for k in node.keywords if k.arg}
        dest_node = kw.get("dest")
        dest = dest_node.value if isinstance(dest_node, ast.Constant) else option_dest(names) if names else None
        if not isinstance(dest, str):
            continue
        action = kw.get("action")
        if "default" in kw:
            try:
                value = ast.literal_eval(kw["default"])
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                out[dest] = UNRESOLVED
                continue
            out[dest] = Const(value) if isinstance(value, (str, int, float, bool, type(None))) else UNRESOLVED
        else:
            out[dest] = action_default(action.value if isinstance(action, ast.Constant) else None)
    return out


def new_parser() -> Inst:
    return Inst(PARSER, ((_OPTIONS, Seq((), "tuple")),))


def is_parser(v: Value) -> bool:
    return isinstance(v, Inst) and v.cls == PARSER


def group(parser_name: str) -> Inst:
    """What `parser.add_argument_group(...)` (or a mutually exclusive group) returns when the parser is held by a
    local name: its options are the parser's, so `add_argument` on it rebinds that name (exclusivity is not
    modelled: it only makes argparse reject a command line, never changes a default)."""
    return Inst(GROUP, (("parser", Const(parser_name)),))


def is_group(v: Value) -> bool:
    return isinstance(v, Inst) and v.cls == GROUP


def incomplete(parser: Inst) -> Inst:
    return parser.with_attr(_INCOMPLETE, Const(True))


def with_option(parser: Inst, args: list[Value], kwargs: dict[str, Value]) -> Inst:
    """The parser after `add_argument(*args, **kwargs)`; incomplete when the option is not one the model reads."""
    flags = [a.value for a in args if isinstance(a, Const) and isinstance(a.value, str)]
    if not flags or len(flags) != len(args) or "nargs" in kwargs:
        return incomplete(parser)
    action = kwargs.get("action", Const("store"))
    kind = action.value if isinstance(action, Const) and action.value in ("store", "store_true", "store_false") \
        else None
    typ = kwargs.get("type")
    type_name = typ.path if isinstance(typ, Ext) and typ.path in _TYPES else None if typ is not None else "builtins.str"
    dest = kwargs.get("dest")
    if kind is None or type_name is None or (dest is not None and not (isinstance(dest, Const)
                                                                         and isinstance(dest.value, str))):
        return incomplete(parser)
    name = dest.value if isinstance(dest, Const) else option_dest(flags)
    default = kwargs.get("default", action_default(kind))
    option = Seq((Seq(tuple(Const(f) for f in flags), "tuple"), Const(name), Const(kind), default, Const(type_name)),
                 "tuple")
    options = parser.attr(_OPTIONS)
    assert isinstance(options, Seq)
    return parser.with_attr(_OPTIONS, Seq((*options.items, option), "tuple"))


def parse(parser: Inst, argv: Value | None) -> Value:
    """The namespace `parse_args(argv)` returns: each option's default, replaced by what argv gives. Unknown when the
    parser is incomplete, argv is not a known list of strings, or argparse would exit (an unknown option, a missing
    value or positional argument, a value its type rejects)."""
    if parser.attr(_INCOMPLETE) is not None or not isinstance(argv, Seq):
        return UNRESOLVED
    # a word the analysis cannot spell (a temporary path) may be an option's value, which is then unknown
    words = [w.value if isinstance(w, Const) and isinstance(w.value, str) else None for w in argv.items]
    options = parser.attr(_OPTIONS)
    if not isinstance(options, Seq):
        return UNRESOLVED
    by_flag: dict[str, tuple[str, str, str]] = {}
    values: dict[str, Value] = {}
    positionals: list[tuple[str, str]] = []
    for opt in options.items:
        assert isinstance(opt, Seq)
        flags, name, kind, default, type_name = opt.items
        assert isinstance(flags, Seq) and isinstance(name, Const) and isinstance(kind, Const)
        assert isinstance(type_name, Const)
        values[str(name.value)] = default
        fs = [str(f.value) for f in flags.items if isinstance(f, Const)]
        if fs[0].startswith("-"):
            for f in fs:
                by_flag[f] = (str(name.value), str(kind.value), str(type_name.value))
        else:
            positionals.append((str(name.value), str(type_name.value)))
    given: list[tuple[str, Value]] = []
    i = 0
    while i < len(words):
        word = words[i]
        if word is None:
            return UNRESOLVED  # an option or a positional argument: which one is not known
        flag, eq, inline = word.partition("=")
        if word.startswith("-") and flag in by_flag:
            name, kind, type_name = by_flag[flag]
            if kind != "store":
                if eq:
                    return UNRESOLVED
                given.append((name, Const(kind == "store_true")))
                i += 1
                continue
            if not eq and i + 1 >= len(words):
                return UNRESOLVED
            text = inline if eq else words[i + 1]
            i += 1 if eq else 2
            if text is None:
                given.append((name, UNRESOLVED))
                continue
        elif word.startswith("-") and word != "-":
            return UNRESOLVED  # argparse exits on an option it does not know
        elif positionals:
            (name, type_name), positionals = positionals[0], positionals[1:]
            text = word
            i += 1
        else:
            return UNRESOLVED
        try:
            given.append((name, Const(_TYPES[type_name](text))))
        except ValueError:
            return UNRESOLVED
    if positionals:
        return UNRESOLVED  # a positional argument the command line lacks
    values.update(given)
    if any(not k.isidentifier() for k in values):
        return UNRESOLVED
    return Inst(ClassV(NAMESPACE_REL, NAMESPACE_POS, "Namespace"), tuple(sorted(values.items(), key=lambda kv: kv[0])))
