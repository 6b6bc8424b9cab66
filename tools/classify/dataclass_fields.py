"""The `__init__` that `@dataclass`, attrs or pydantic writes for a class, read from its source.

Configuration objects in ML code are dataclasses (peft's `LoraConfig`, Hydra/transformers-style configs),
attrs classes (`@attrs.define`, `@attr.s` with `attr.ib(default=...)`) or pydantic models (`class Cfg(BaseModel):
device: str = "cuda"`), and their post-init hooks set what decides the code path: `self.peft_type = PeftType.LORA`
selects the tuner class from a registry, `self.device = "cuda"` a device. Without the generated constructor an
instance has no attributes (or keeps the class body's default over the argument), every field reads as unknown,
and every branch on it is taken both ways. The interpreter builds the instance as Python does
(interp_calls.CallsMixin.call): fields bound from the arguments, defaults from the class bodies, then the
post-init hook of its library (`GeneratedInit.post_init`).

Only the syntax is read here (pure functions over the class's AST): which decorator or base, which fields.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass

from tools.classify.interp_base import _last_name, kept_on_node

# decorators that generate a dataclass `__init__`: the standard library's, pydantic's, chex's, flax's
DATACLASS_DECORATORS = frozenset({"dataclass", "pydantic_dataclass"})
# attrs' class decorators (`attr.s`, `attr.attrs`, `attrs.define`, `attr.frozen`, ...): `attr.dataclass` is
# `attr.s(auto_attribs=True)`
ATTRS_DECORATORS = frozenset({"s", "attrs", "define", "frozen", "mutable"})
ATTRS_MODULES = frozenset({"attr", "attrs"})
# the calls that declare an attrs field in a class body, and pydantic's `Field`
ATTRS_FIELDS = frozenset({"ib", "attrib", "field"})
# the pydantic classes whose subclasses are models (fields are the annotated names of every model class in the MRO)
PYDANTIC_BASES = frozenset({"pydantic.BaseModel", "pydantic.main.BaseModel", "pydantic.v1.BaseModel",
                            "pydantic_settings.BaseSettings", "pydantic.BaseSettings"})
# validators may replace what a field receives: a model with one is not read (its fields are left unknown)
PYDANTIC_VALIDATORS = frozenset({"validator", "field_validator", "model_validator", "root_validator"})


@dataclass(frozen=True)
class Field:
    """One parameter of the generated `__init__`. `has_default`: the class body gives it a value (a default or
    `field(default=..., default_factory=...)`); `init_var`: an `InitVar`, passed to `__post_init__` and not
    stored; `owner`: the index in the MRO of the class whose body declares it last (its default lives there)."""

    name: str
    has_default: bool
    init_var: bool
    owner: int
    param: str = ""  # the `__init__` parameter, where it differs from the attribute (attrs drops leading `_`)

    @property
    def keyword(self) -> str:
        return self.param or self.name


@dataclass(frozen=True)
class GeneratedInit:
    """A generated constructor: its parameters and the library that wrote it ("dataclass", "attrs",
    "pydantic"), which decides whether they may be passed by position (pydantic's are keyword only) and the hook
    it runs once the fields are set."""

    fields: list[Field]
    style: str

    @property
    def positional(self) -> bool:
        return self.style != "pydantic"

    @property
    def post_init(self) -> str:
        return {"dataclass": "__post_init__", "attrs": "__attrs_post_init__"}.get(self.style, "model_post_init")


def _attrs_decorator(d: ast.expr) -> ast.expr | None:
    """The decorator's call or name when it is attrs' class decorator (`@attr.s`, `@attrs.define(...)`,
    `@define`), else None."""
    target = d.func if isinstance(d, ast.Call) else d
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id in ATTRS_MODULES:
        return d if target.attr in ATTRS_DECORATORS or target.attr == "dataclass" else None
    if isinstance(target, ast.Name) and target.id in ("define", "frozen", "mutable", "attrs"):
        return d
    return None


def attrs_init(node: ast.ClassDef) -> bool | None:
    """Like dataclass_init, for attrs' decorators: True (a generated `__init__`), False (`init=False`), None. A bare
    `@define`/`@frozen` on a class that writes its own `__init__` is taken for another library's decorator."""
    own_init = any(isinstance(s, ast.FunctionDef) and s.name == "__init__" for s in node.body)
    for d in node.decorator_list:
        if _attrs_decorator(d) is not None:
            if own_init and isinstance(d.func if isinstance(d, ast.Call) else d, ast.Name):
                return None
            return not _is_constant(_keyword(d, "init"), False)
    return None


def dataclass_init(node: ast.ClassDef) -> bool | None:
    """Whether the class is a dataclass that writes its own `__init__` (True), one with `init=False` (False), or
    not a dataclass (None). A `typing.NamedTuple` class is built the same way (its fields are its annotated
    names, with their defaults; `Case(name=n, loss=l)` in a generator of test cases)."""
    if any(_last_name(b) == "NamedTuple" for b in node.bases):
        return True
    for d in node.decorator_list:
        if _last_name(d) in DATACLASS_DECORATORS:
            return not _is_constant(_keyword(d, "init"), False)
    return None


def _keyword(d: ast.expr, name: str) -> ast.expr | None:
    """The value a decorator call passes for keyword `name`; None when it passes none (or is no call)."""
    return next((k.value for k in d.keywords if k.arg == name), None) if isinstance(d, ast.Call) else None


def _is_constant(v: ast.expr | None, value: object) -> bool:
    return isinstance(v, ast.Constant) and v.value is value


def _kw_only(node: ast.ClassDef, generates: Callable[[ast.expr], bool]) -> bool:
    """Whether a decorator that generates the class's `__init__` makes every parameter keyword-only."""
    return any(generates(d) and (kw := _keyword(d, "kw_only")) is not None and not _is_constant(kw, False)
               for d in node.decorator_list)


def _annotation_kind(a: ast.expr) -> str:
    """'classvar', 'initvar', 'kw_only' (the `_: KW_ONLY` marker) or 'field', by the annotation's name. Kept on
    the node: a dataclass's fields are read at every construction (an unparse each was 7 % of a run on peft)."""
    return kept_on_node(a, "_classify_annotation_kind", lambda: _read_annotation_kind(a))


def _read_annotation_kind(a: ast.expr) -> str:
    if isinstance(a, ast.Constant) and isinstance(a.value, str):  # a string annotation
        text = a.value
    else:
        text = ast.unparse(a)
    head = text.split("[", 1)[0].rsplit(".", 1)[-1].strip()
    return {"ClassVar": "classvar", "InitVar": "initvar", "KW_ONLY": "kw_only"}.get(head, "field")


def declared_fields(bodies: list[ast.ClassDef]) -> list[Field] | None:
    """The generated `__init__`'s parameters, in order, given the class bodies of the dataclasses of an MRO,
    base first (a field's `owner` is an index in `bodies`). A field redeclared by a subclass keeps its place and
    takes the subclass's default, as `dataclasses` does.
    None: a form this reading does not follow (`_: KW_ONLY` and `kw_only=True` make parameters keyword-only)."""
    fields: dict[str, Field] = {}
    for i, node in enumerate(bodies):
        if _kw_only(node, lambda d: _last_name(d) in DATACLASS_DECORATORS):
            return None
        for s in node.body:
            if not (isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)):
                continue
            kind = _annotation_kind(s.annotation)
            if kind == "classvar":
                continue
            if kind == "kw_only":
                return None
            fields[s.target.id] = Field(s.target.id, s.value is not None, kind == "initvar", i)
    return list(fields.values())


def _call_name(v: ast.expr | None) -> str | None:
    return _last_name(v.func) if isinstance(v, ast.Call) else None


def _attrs_auto_attribs(node: ast.ClassDef) -> bool:
    """Whether annotated names are the fields (`auto_attribs=True`, `attr.dataclass`, or the `define` family's
    guess: some annotated name and no unannotated `attr.ib()`), rather than the `x = attr.ib()` assignments."""
    for d in node.decorator_list:
        dec = _attrs_decorator(d)
        if dec is None:
            continue
        target = d.func if isinstance(d, ast.Call) else d
        name = target.attr if isinstance(target, ast.Attribute) else target.id if isinstance(target, ast.Name) else ""
        if isinstance(d, ast.Call):
            for k in d.keywords:
                if k.arg == "auto_attribs" and isinstance(k.value, ast.Constant):
                    return k.value.value is True
        if name == "dataclass":
            return True
        if name in ("s", "attrs"):
            return False
    annotated = any(isinstance(s, ast.AnnAssign) and _annotation_kind(s.annotation) != "classvar" for s in node.body)
    loose = any(isinstance(s, ast.Assign) and _call_name(s.value) in ATTRS_FIELDS for s in node.body)
    return annotated and not loose


def _attrs_field_options(call: ast.expr | None) -> tuple[bool, str] | None:
    """(has a default, the `__init__` parameter's name override) of an `attr.ib(...)`/`attrs.field(...)` value;
    None: a field this reading does not follow (keyword-only, not in `__init__`, a converter or an alias it
    cannot read)."""
    if not (isinstance(call, ast.Call) and _call_name(call) in ATTRS_FIELDS):
        return (call is not None, "")
    has_default = bool(call.args)  # `attr.ib(default)`
    alias = ""
    for k in call.keywords:
        if k.arg in ("default", "factory"):
            has_default = True
        elif k.arg in ("kw_only", "init") and not _is_constant(k.value, k.arg == "init"):
            return None
        elif k.arg == "converter":
            return None
        elif k.arg == "alias":
            if not (isinstance(k.value, ast.Constant) and isinstance(k.value.value, str)):
                return None
            alias = k.value.value
    return has_default, alias


def attrs_fields(bodies: list[ast.ClassDef]) -> list[Field] | None:
    """The parameters of attrs' generated `__init__` for the attrs classes of an MRO, base first: each class's
    fields after its bases' (a redeclared one moves to the subclass's place), an attribute `_x` is the parameter
    `x`. None: a form not followed (keyword-only fields or classes, `init=False` fields, converters)."""
    fields: dict[str, Field] = {}
    for i, node in enumerate(bodies):
        if _kw_only(node, lambda d: _attrs_decorator(d) is not None):
            return None
        auto = _attrs_auto_attribs(node)
        for s in node.body:
            if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name) and auto:
                if _annotation_kind(s.annotation) == "classvar":
                    continue
                name, value = s.target.id, s.value
            elif isinstance(s, (ast.Assign, ast.AnnAssign)) and _call_name(s.value) in ATTRS_FIELDS:
                targets = s.targets if isinstance(s, ast.Assign) else [s.target]
                if len(targets) != 1 or not isinstance(targets[0], ast.Name):
                    return None
                name, value = targets[0].id, s.value
            else:
                continue
            options = _attrs_field_options(value)
            if options is None:
                return None
            fields.pop(name, None)
            param = options[1] or (name.lstrip("_") if name.startswith("_") else "")
            fields[name] = Field(name, options[0], False, i, param)
    return list(fields.values())


def pydantic_fields(bodies: list[ast.ClassDef]) -> list[Field] | None:
    """The keyword parameters of a pydantic model's `__init__`, from the model classes of its MRO, base first:
    each annotated name but class variables, private `_x` attributes and `model_config`. None: a model whose
    validators may replace a value, or a field with an alias (its keyword is another name)."""
    fields: dict[str, Field] = {}
    for i, node in enumerate(bodies):
        for s in node.body:
            if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                    _last_name(d.func if isinstance(d, ast.Call) else d) in PYDANTIC_VALIDATORS
                    for d in s.decorator_list):
                return None
            if not (isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)):
                continue
            name = s.target.id
            if name.startswith("_") or name == "model_config" or _annotation_kind(s.annotation) == "classvar":
                continue
            has_default = s.value is not None
            if isinstance(s.value, ast.Call) and _call_name(s.value) == "Field":
                if any(k.arg in ("alias", "validation_alias") for k in s.value.keywords):
                    return None
                has_default = bool(s.value.args and not (isinstance(s.value.args[0], ast.Constant)
                                                         and s.value.args[0].value is Ellipsis)) or any(
                    k.arg in ("default", "default_factory") for k in s.value.keywords)
            fields[name] = Field(name, has_default, False, i)
    return list(fields.values())
