"""argparse parsers, as the analysis follows them: `parser.add_argument("--device", default="cuda")` then
`parser.parse_args(["--device", "cpu"])` gives a namespace whose `device` is "cpu".

A script a test runs (programs.py) reads its command line this way, and so do helpers that tests call with
`parse_args([...])`; a conftest's `parser.addoption(...)` (pytest's, with argparse's rules) gives the defaults
that `config.getoption` reads (declared_options). A parser is an object of a class of its own whose options are
an attribute; each `add_argument` on a name rebinds the name to the parser with one more option (values are
immutable); an argument group adds to its parser's options the same way, and `set_defaults` its defaults.
Sub-commands (`add_subparsers(dest=...)`, `add_parser(name)`) are recorded on the parser, each sub-parser as last
changed (a change to a sub-parser is made to its parent's record too, while the parent is held by a name there);
parsing hands the words after the sub-command's name to that sub-parser. What the model does
not follow makes the namespace unknown, never a guess: a group or sub-parsers of a parser not held by a local name,
`nargs`, an option the command line gives that the parser lacks, a value of a `type` other than `int`/`float`/`str`,
or a command line that is not known (`parse_args()` outside a program: pytest's own arguments).
"""

from __future__ import annotations

import ast

from tools.classify.interp_base import STORE
from tools.classify.plugins import NAMESPACE_POS, NAMESPACE_REL, PARSER_REL
from tools.classify.values import UNRESOLVED, ClassV, Const, DictV, Ext, Inst, Seq, Value

PARSER = ClassV(PARSER_REL, (1, 0), "ArgumentParser")
ARGV = STORE + "sys.argv"  # a program's command line after its script (programs.py), passed to its calls
_OPTIONS = "<options>"  # (flags, dest, kind, default, type) per option, in the order added
_INCOMPLETE = "<incomplete>"  # options were added where the model does not see them
_TYPES = {"builtins.int": int, "builtins.float": float, "builtins.str": str}
# methods that add options the model cannot list: the parser's namespace is unknown from then on
GROUP = ClassV(PARSER_REL, (5, 0), "ArgumentGroup")
GROUP_METHODS = frozenset({"add_argument_group", "add_mutually_exclusive_group"})
SUBPARSERS = ClassV(PARSER_REL, (9, 0), "SubParsersAction")
_SUBCOMMANDS = "<subcommands>"  # ((names, site of the sub-parser), ...) in the order added
_SUB_DEST = "<subcommand dest>"
_SUB_REQUIRED = "<subcommand required>"
_SITE = "<site>"  # a sub-parser: where `add_parser` made it (module:line:column)
_PARENT = "<parent>"  # a sub-parser: the name its parent parser is held by
_DEFAULTS = "<defaults>"  # set_defaults(**kwargs)
_MAX_SUBCOMMAND_DEPTH = 8
UNFOLLOWED = frozenset({"parse_intermixed_args"})


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
    """The namespace `parse_args(argv)` returns: each option's default (and `set_defaults`), replaced by what argv
    gives; with sub-commands, the sub-parser the first free word names parses the rest. Unknown when a parser is
    incomplete, argv is not a known list of strings, or argparse would exit (an unknown option or sub-command, a
    missing value or positional argument, a value its type rejects)."""
    if not isinstance(argv, Seq):
        return UNRESOLVED
    # a word the analysis cannot spell (a temporary path) may be an option's value, which is then unknown
    words = [w.value if isinstance(w, Const) and isinstance(w.value, str) else None for w in argv.items]
    values = _parsed(parser, words, 0)
    if values is None or any(not k.isidentifier() for k in values):
        return UNRESOLVED
    return Inst(ClassV(NAMESPACE_REL, NAMESPACE_POS, "Namespace"), tuple(sorted(values.items(), key=lambda kv: kv[0])))


def _parsed(parser: Inst, words: list[str | None], depth: int) -> dict[str, Value] | None:
    """{dest: value} for the words (see parse); None: not known."""
    options = parser.attr(_OPTIONS)
    if parser.attr(_INCOMPLETE) is not None or not isinstance(options, Seq) or depth > _MAX_SUBCOMMAND_DEPTH:
        return None
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
    defaults = parser.attr(_DEFAULTS)
    if isinstance(defaults, DictV):
        values.update((str(k.value), v) for k, v in defaults.items if isinstance(k, Const))
    subcommands = parser.attr(_SUBCOMMANDS)
    given: list[tuple[str, Value]] = []
    below: dict[str, Value] | None = None
    i = 0
    while i < len(words):
        word = words[i]
        if word is None:
            return None  # an option or a positional argument: which one is not known
        flag, eq, inline = word.partition("=")
        if word.startswith("-") and flag in by_flag:
            name, kind, type_name = by_flag[flag]
            if kind != "store":
                if eq:
                    return None
                given.append((name, Const(kind == "store_true")))
                i += 1
                continue
            if not eq and i + 1 >= len(words):
                return None
            text = inline if eq else words[i + 1]
            i += 1 if eq else 2
            if text is None:
                given.append((name, UNRESOLVED))
                continue
        elif word.startswith("-") and word != "-":
            return None  # argparse exits on an option it does not know
        elif positionals:
            (name, type_name), positionals = positionals[0], positionals[1:]
            text = word
            i += 1
        elif isinstance(subcommands, Seq):
            below = _subcommand(subcommands, word, words[i + 1:], depth)
            if below is None:
                return None
            dest = parser.attr(_SUB_DEST)
            if isinstance(dest, Const) and isinstance(dest.value, str):
                given.append((dest.value, Const(word)))
            break
        else:
            return None
        try:
            given.append((name, Const(_TYPES[type_name](text))))
        except ValueError:
            return None
    if positionals:
        return None  # a positional argument the command line lacks
    if isinstance(subcommands, Seq) and below is None:
        if parser.attr(_SUB_REQUIRED) == Const(True):
            return None  # argparse exits: the sub-command is required
        dest = parser.attr(_SUB_DEST)
        if isinstance(dest, Const) and isinstance(dest.value, str):
            values.setdefault(dest.value, Const(None))
    values.update(given)
    if below is not None:
        values.update(below)
    return values


def _subcommand(subcommands: Seq, word: str, rest: list[str | None], depth: int) -> dict[str, Value] | None:
    """The values the sub-parser named `word` gives for the rest of the words (None: no such sub-command)."""
    for entry in subcommands.items:
        assert isinstance(entry, Seq)
        names, _, sub = entry.items
        if isinstance(names, Seq) and Const(word) in names.items and isinstance(sub, Inst):
            return _parsed(sub, rest, depth + 1)
    return None


# -- sub-commands and defaults ---------------------------------------------------------------------------------
def subparsers(parser_name: str) -> Inst:
    """What `parser.add_subparsers(...)` returns when the parser is held by a local name: `add_parser` on it makes a
    sub-parser and records it on that parser (rebound)."""
    return Inst(SUBPARSERS, (("parser", Const(parser_name)),))


def is_subparsers(v: Value) -> bool:
    return isinstance(v, Inst) and v.cls == SUBPARSERS


def with_subparsers(parser: Inst, kwargs: dict[str, Value]) -> Inst:
    """The parser after `add_subparsers(dest=..., required=...)` (a second call: argparse rejects it)."""
    if parser.attr(_SUBCOMMANDS) is not None or not set(kwargs) <= {"dest", "required", "title", "help",
                                                                   "description", "metavar"}:
        return incomplete(parser)
    return parser.with_attr(_SUBCOMMANDS, Seq((), "tuple")).with_attr(
        _SUB_DEST, kwargs.get("dest", Const(None))).with_attr(_SUB_REQUIRED, kwargs.get("required", Const(False)))


def sub_parser(site: str, parent_name: str) -> Inst:
    """A parser `add_parser` made at `site`, whose parent parser is held by `parent_name`: each change to it is
    also made to the parent's record of it (with_child), so the parent parses with it as last changed."""
    return new_parser().with_attr(_SITE, Const(site)).with_attr(_PARENT, Const(parent_name))


def parent_of(v: Value) -> tuple[str, str] | None:
    """(the name holding its parent, its site) for a sub-parser; None for another value."""
    site = v.attr(_SITE) if isinstance(v, Inst) and is_parser(v) else None
    parent = v.attr(_PARENT) if isinstance(v, Inst) else None
    if isinstance(site, Const) and isinstance(parent, Const):
        return str(parent.value), str(site.value)
    return None


def with_subcommand(parser: Inst, args: list[Value], kwargs: dict[str, Value], child: Inst) -> Inst:
    """The parser after its sub-parsers' `add_parser(name, aliases=[...])` made `child`."""
    subcommands = parser.attr(_SUBCOMMANDS)
    aliases = kwargs.get("aliases", Seq((), "list"))
    names = [*args[:1], *(aliases.items if isinstance(aliases, Seq) else (UNRESOLVED,))]
    if not isinstance(subcommands, Seq) or len(args) != 1 or not all(
            isinstance(n, Const) and isinstance(n.value, str) for n in names):
        return incomplete(parser)
    entry = Seq((Seq(tuple(names), "tuple"), child.attr(_SITE) or UNRESOLVED, child), "tuple")
    return parser.with_attr(_SUBCOMMANDS, Seq((*subcommands.items, entry), "tuple"))


def with_child(parser: Inst, site: str, child: Inst) -> Inst:
    """The parser with its record of the sub-parser made at `site` replaced by `child` (unknown: incomplete)."""
    subcommands = parser.attr(_SUBCOMMANDS)
    if not isinstance(subcommands, Seq):
        return incomplete(parser)
    entries = []
    for entry in subcommands.items:
        assert isinstance(entry, Seq)
        names, at, _ = entry.items
        entries.append(Seq((names, at, child), "tuple") if at == Const(site) else entry)
    return parser.with_attr(_SUBCOMMANDS, Seq(tuple(entries), "tuple"))


def with_defaults(parser: Inst, kwargs: dict[str, Value]) -> Inst:
    """The parser after `set_defaults(**kwargs)`: values of those names unless the command line gives them."""
    before = parser.attr(_DEFAULTS)
    items = dict(before.items) if isinstance(before, DictV) else {}
    items.update((Const(k), v) for k, v in kwargs.items())
    return parser.with_attr(_DEFAULTS, DictV(tuple(items.items())))
