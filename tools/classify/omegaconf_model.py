"""OmegaConf configurations and Hydra's composition, as the analysis follows them: `OmegaConf.load("conf/train.yaml")`
whose `device: cuda` reaches `model.to(cfg.device)` makes the test a GPU test.

omegaconf and hydra are not read as code (installed.NEVER_ROOTS): their containers are too deep to follow with
values. A DictConfig is an object of a class of its own whose attributes are its keys (`cfg.device`, `cfg["device"]`,
`cfg.get("device", d)`, `cfg.model.width = 3` all work as on any object the analysis follows); a nested mapping is a
nested configuration, a list a list. `OmegaConf.create/load/merge/structured/to_container/to_object/from_dotlist/
select` are modelled; interpolations `${a.b}` are resolved against the root when they name a known value, anything
else (`${oc.env:X}`, a custom resolver) is unknown. Hydra's `compose(config_name, overrides)` inside
`initialize(config_path)` / `initialize_config_dir(config_dir)` loads `<dir>/<name>.yaml`, its defaults list (config
groups `- model: small` from `<dir>/model/small.yaml`, `_self_`), then the overrides (`a.b=v`, `+a.b=v`, `++a.b=v`,
`~a.b`, `group=option`). What is not modelled (packages `@`, `optional`, `override` in a defaults list, a value
that is not YAML) makes the configuration unknown, never a guess.

The attribute dictionaries of other configuration libraries are the same kind of object (`ATTRIBUTE_DICTS`):
easydict's `EasyDict`, addict's `Dict`, munch's `Munch`/`munchify`, python-box's `Box`, ml_collections'
`ConfigDict` and yacs' `CfgNode` (with `merge_from_list`), built from a dict and keywords (`attribute_dict`). A key
they do not hold reads as unknown (addict would make an empty one).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable

from tools.classify import datafiles
from tools.classify.plugins import CONFIG_REL
from tools.classify.values import UNRESOLVED, ClassV, Const, DictV, Inst, Seq, Unresolved, Value

CONFIG = ClassV(CONFIG_REL, (1, 0), "DictConfig")
CONFIG_DIR = "<store>hydra.config_dir"  # a frame's STORE entry: the directory `initialize` set (a PathV text)
_INTERPOLATION = re.compile(r"\$\{([^${}]*)\}")
_MAX_RESOLVE = 8  # rounds of interpolation (a chain of references)
MAX_NESTED_TARGETS = 8  # configurations with a `_target_` inside one another that `instantiate` follows


# attribute dictionaries of configuration libraries (their top-level names are in installed.NEVER_ROOTS): the
# constructor, and the functions that make one
ATTRIBUTE_DICTS = frozenset({
    "easydict.EasyDict", "addict.Dict", "addict.addict.Dict", "munch.Munch", "munch.munchify", "munch.DefaultMunch",
    "box.Box", "box.box.Box", "ml_collections.ConfigDict", "ml_collections.config_dict.ConfigDict",
    "ml_collections.FrozenConfigDict", "ml_collections.config_dict.FrozenConfigDict", "yacs.config.CfgNode"})
# methods that change a configuration in place (`changed_in_place`)
MUTATORS = frozenset({"merge_from_list", "merge_from_file", "merge_from_other_cfg", "update", "setdefault", "pop"})


def is_config(v: Value | None) -> bool:
    return isinstance(v, Inst) and v.cls == CONFIG


def config(entries: dict[str, Value]) -> Inst:
    return Inst(CONFIG, tuple(sorted(entries.items(), key=lambda kv: kv[0])))


def to_config(v: Value) -> Value:
    """A mapping (a dict, an object's attributes) as a configuration, nested mappings too; a list stays a list of
    converted items; unknown for a mapping with keys other than strings."""
    if is_config(v):
        return v
    if isinstance(v, DictV):
        entries: dict[str, Value] = {}
        for k, x in v.items:
            if not (isinstance(k, Const) and isinstance(k.value, str)):
                return UNRESOLVED
            entries[k.value] = to_config(x)
        return config(entries)
    if isinstance(v, Seq) and v.kind in ("list", "tuple"):
        return Seq(tuple(to_config(x) for x in v.items), "list")
    if isinstance(v, Inst):
        return config({k: to_config(x) for k, x in v.attrs})  # a structured config's fields
    return v


def attribute_dict(args: list[Value], kwargs: dict[str, Value]) -> Value:
    """`EasyDict({"device": "cuda"})`, `Munch(device="cpu")`, `CfgNode()`: a configuration of the mapping's entries
    and the keywords (nested mappings as configurations); unknown for anything else given."""
    if len(args) > 1 or (args and not isinstance(args[0], DictV) and args[0] != Const(None)):
        return UNRESOLVED
    made = to_config(args[0]) if args and isinstance(args[0], DictV) else config({})
    return merge(made, config({k: to_config(v) for k, v in kwargs.items()})) if kwargs else made


def merge_from_list(cfg: Value, words: Value) -> Value:
    """yacs' `cfg.merge_from_list(["MODEL.DEVICE", "cpu", ...])`: each key set to its value (a Python literal, else
    the text, as yacs' literal_eval does); unknown for a list the analysis does not know."""
    if not (isinstance(words, Seq) and len(words.items) % 2 == 0):
        return UNRESOLVED
    for key, value in zip(words.items[::2], words.items[1::2], strict=True):
        if not (isinstance(key, Const) and isinstance(key.value, str)):
            return UNRESOLVED
        if isinstance(value, Const) and isinstance(value.value, str):
            value = _literal(value.value)
        cfg = with_value(cfg, key.value, value)
    return cfg


def changed_in_place(cfg: Value, method: str, args: list[Value], kwargs: dict[str, Value]) -> Value:
    """The configuration after one of `MUTATORS` changed it: yacs' `merge_from_list([...])`, the attribute
    dictionaries' `update(...)`; unknown after another (`merge_from_file`, `pop`)."""
    if method == "merge_from_list" and len(args) == 1 and not kwargs:
        return merge_from_list(cfg, args[0])
    if method == "update":
        return merge(cfg, attribute_dict(args, kwargs))
    return UNRESOLVED


def _literal(text: str) -> Value:
    try:
        got = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return Const(text)
    return Const(got) if isinstance(got, (str, int, float, bool, type(None))) else UNRESOLVED


def to_container(v: Value) -> Value:
    """`OmegaConf.to_container(cfg)`: plain dicts and lists."""
    if isinstance(v, Inst) and is_config(v):
        return DictV(tuple((Const(k), to_container(x)) for k, x in v.attrs))
    if isinstance(v, Seq):
        return Seq(tuple(to_container(x) for x in v.items), v.kind)
    return v


def merge(a: Value, b: Value) -> Value:
    """`OmegaConf.merge(a, b)`: b's entries over a's, mappings merged key by key."""
    a, b = to_config(a), to_config(b)
    if not (isinstance(a, Inst) and is_config(a) and isinstance(b, Inst) and is_config(b)):
        return UNRESOLVED if isinstance(a, Unresolved) or isinstance(b, Unresolved) else b
    out = dict(a.attrs)
    for k, x in b.attrs:
        out[k] = merge(out[k], x) if k in out and is_config(out[k]) and is_config(x) else x
    return config(out)


def select(cfg: Value, dotted: str) -> Value | None:
    """The value at `a.b.c` (None: absent)."""
    cur: Value | None = cfg
    for part in dotted.split("."):
        if not (isinstance(cur, Inst) and is_config(cur)):
            return UNRESOLVED if isinstance(cur, Unresolved) else None
        cur = cur.attr(part)
    return cur


def with_value(cfg: Value, dotted: str, value: Value | None) -> Value:
    """cfg with the value at `a.b.c` set (None: deleted), intermediate mappings made as needed."""
    if not (isinstance(cfg, Inst) and is_config(cfg)):
        return UNRESOLVED
    head, _, rest = dotted.partition(".")
    entries = dict(cfg.attrs)
    if rest:
        entries[head] = with_value(entries.get(head, config({})), rest, value)
    elif value is None:
        entries.pop(head, None)
    else:
        entries[head] = to_config(value)
    return config(entries)


def from_yaml(data: bytes | str) -> Value:
    """YAML text (a file's bytes) as a configuration (unknown when it does not parse: datafiles.load)."""
    return to_config(datafiles.load("yaml", data))


def yaml_scalar(text: str) -> Value:
    """A command-line value as Hydra and `from_dotlist` read it: YAML (`cpu`, `3`, `true`, `[1, 2]`, `null`)."""
    return from_yaml(text) if text else Const("")


def from_dotlist(words: list[Value]) -> Value:
    cfg: Value = config({})
    for w in words:
        if not (isinstance(w, Const) and isinstance(w.value, str)) or "=" not in w.value:
            return UNRESOLVED
        key, _, text = w.value.partition("=")
        cfg = with_value(cfg, key.strip(), yaml_scalar(text))
    return cfg


def resolved(root: Value) -> Value:
    """The configuration with its interpolations replaced by what they name; unknown where one names something
    that is not known (a resolver `${oc.env:X}`, a relative `${.x}`, a missing key, a chain too long)."""
    for _ in range(_MAX_RESOLVE):
        after = _resolved_once(root, root, False)
        if after == root:
            break
        root = after
    return _resolved_once(root, root, True)


def _resolved_once(v: Value, root: Value, final: bool) -> Value:
    if isinstance(v, Inst) and is_config(v):
        return config({k: _resolved_once(x, root, final) for k, x in v.attrs})
    if isinstance(v, Seq):
        return Seq(tuple(_resolved_once(x, root, final) for x in v.items), v.kind)
    if isinstance(v, Const) and isinstance(v.value, str) and "${" in v.value:
        got = _interpolated(root, v.value)
        return UNRESOLVED if got is None and final else v if got is None else got
    return v


def _interpolated(root: Value, text: str) -> Value | None:
    """The string with its references replaced; None while one names a value that is itself still to resolve."""
    whole = _INTERPOLATION.fullmatch(text)
    if whole is not None:
        return _reference(root, whole.group(1))
    parts: list[str] = []
    pos = 0
    for m in _INTERPOLATION.finditer(text):
        got = _reference(root, m.group(1))
        if got is None:
            return None
        if not (isinstance(got, Const) and isinstance(got.value, (str, int, float, bool))):
            return UNRESOLVED
        parts += [text[pos:m.start()], str(got.value)]
        pos = m.end()
    if "${" in text[pos:]:
        return UNRESOLVED
    return Const("".join(parts) + text[pos:])


def _reference(root: Value, ref: str) -> Value | None:
    """What `${ref}` names: a value, UNRESOLVED when it cannot be known, None while it is an unresolved string."""
    ref = ref.strip()
    if not ref or ref.startswith(".") or ":" in ref:
        return UNRESOLVED  # a relative reference or a resolver: not followed
    got = select(root, ref)
    if got is None:
        return UNRESOLVED
    return None if isinstance(got, Const) and isinstance(got.value, str) and "${" in got.value else got


def compose(load: Callable[[str], Value], name: str, overrides: list[Value]) -> Value:
    """Hydra's `compose(config_name=name, overrides=...)`: `load(rel)` reads a YAML file of the config directory
    (a path relative to it, `.yaml` included) as a configuration (unknown when it cannot)."""
    primary = load(name if name.endswith(".yaml") else f"{name}.yaml")
    if not (isinstance(primary, Inst) and is_config(primary)):
        return UNRESOLVED
    words: list[str] = []
    for o in overrides:
        if not (isinstance(o, Const) and isinstance(o.value, str)):
            return UNRESOLVED
        words.append(o.value)
    defaults = primary.attr("defaults")
    own = config({k: v for k, v in primary.attrs if k != "defaults"})
    groups: list[tuple[str, str | None]] = []  # (group, option), with ("_self_", None) where the primary goes
    if defaults is not None:
        if not isinstance(defaults, Seq):
            return UNRESOLVED
        for entry in defaults.items:
            if entry == Const("_self_"):
                groups.append(("_self_", None))
            elif isinstance(entry, Inst) and is_config(entry) and len(entry.attrs) == 1:
                group, option = entry.attrs[0]
                if not _plain_group(group) or not (isinstance(option, Const) and (
                        option.value is None or isinstance(option.value, str))):
                    return UNRESOLVED
                groups.append((group, option.value if isinstance(option.value, str) else None))
            else:
                return UNRESOLVED  # a config of the same group (`- base`), `optional`, ...: not modelled
    if ("_self_", None) not in groups:
        groups.append(("_self_", None))
    chosen = dict(groups)
    for w in list(words):
        key, eq, text = w.partition("=")
        if eq and key in chosen and key != "_self_" and _plain_group(key):
            chosen[key] = text  # `model=large`: another option of a config group
            words.remove(w)
    cfg: Value = config({})
    for group, _ in groups:
        if group == "_self_":
            cfg = merge(cfg, own)
            continue
        option = chosen[group]
        if option is None:
            continue
        part = load(f"{group}/{option}.yaml")
        if not (isinstance(part, Inst) and is_config(part)) or part.attr("defaults") is not None:
            return UNRESOLVED
        cfg = merge(cfg, config({group: part}))
    for w in words:
        cfg = override(cfg, w)
    return resolved(cfg)


def _plain_group(name: str) -> bool:
    return bool(name) and not name.startswith(("override ", "optional ", "/")) and "@" not in name and \
        all(p.isidentifier() for p in name.split("/"))


def override(cfg: Value, word: str) -> Value:
    """One Hydra override: `a.b=v` / `+a.b=v` / `++a.b=v` set, `~a.b` deletes."""
    if word.startswith("~"):
        return with_value(cfg, word[1:].partition("=")[0], None)
    key, eq, text = word.lstrip("+").partition("=")
    if not eq or not key or not all(p.isidentifier() for p in key.split(".")):
        return UNRESOLVED
    return with_value(cfg, key, yaml_scalar(text))
