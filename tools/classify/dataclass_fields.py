"""The `__init__` that `@dataclass` writes for a class, read from its source.

Configuration objects in ML code are dataclasses (peft's `LoraConfig`, Hydra/transformers-style configs), and
their `__post_init__` sets what decides the code path: `self.peft_type = PeftType.LORA` selects the tuner class
from a registry, `self.device = "cuda"` a device. Without the generated constructor an instance has no
attributes, every field reads as unknown, and every branch on it is taken both ways. The interpreter builds
the instance as Python does (interp_calls.CallsMixin.call): fields bound from the arguments, defaults from the
class bodies, then `__post_init__`.

Only the syntax is read here (pure functions over the class's AST): which decorator, which fields.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from tools.classify.interp_base import _last_name

# decorators that generate a dataclass `__init__`: the standard library's, pydantic's, chex's, flax's
DATACLASS_DECORATORS = frozenset({"dataclass", "pydantic_dataclass"})


@dataclass(frozen=True)
class Field:
    """One parameter of the generated `__init__`. `has_default`: the class body gives it a value (a default or
    `field(default=..., default_factory=...)`); `init_var`: an `InitVar`, passed to `__post_init__` and not
    stored; `owner`: the index in the MRO of the class whose body declares it last (its default lives there)."""

    name: str
    has_default: bool
    init_var: bool
    owner: int


def dataclass_init(node: ast.ClassDef) -> bool | None:
    """Whether the class is a dataclass that writes its own `__init__` (True), one with `init=False` (False), or
    not a dataclass (None). A `typing.NamedTuple` class is built the same way (its fields are its annotated
    names, with their defaults; `Case(name=n, loss=l)` in a generator of test cases)."""
    if any(_last_name(b) == "NamedTuple" for b in node.bases):
        return True
    for d in node.decorator_list:
        if _last_name(d) in DATACLASS_DECORATORS:
            if isinstance(d, ast.Call):
                for k in d.keywords:
                    if k.arg == "init" and isinstance(k.value, ast.Constant) and k.value.value is False:
                        return False
            return True
    return None


def _kw_only(node: ast.ClassDef) -> bool:
    return any(isinstance(d, ast.Call) and _last_name(d) in DATACLASS_DECORATORS and any(
        k.arg == "kw_only" and not (isinstance(k.value, ast.Constant) and k.value.value is False) for k in d.keywords)
        for d in node.decorator_list)


def _annotation_kind(a: ast.expr) -> str:
    """'classvar', 'initvar', 'kw_only' (the `_: KW_ONLY` marker) or 'field', by the annotation's name."""
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
        if _kw_only(node):
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
