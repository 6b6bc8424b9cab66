"""`@frozen`: a frozen dataclass whose constructor is as cheap as a plain one's.

A frozen dataclass's generated `__init__` sets each field through `object.__setattr__` (to get past its
own `__setattr__`, which refuses): about five times the cost of a plain class's. The analysis builds
millions of small immutable values, evidence steps and test items in a cold run, so that cost showed up as
several per cent of it. This decorator keeps everything `dataclass(frozen=True)` gives (equality, hash,
repr, refusing assignment after construction) and replaces only `__init__` with one that fills the
instance's `__dict__` directly, with the same parameters and defaults.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

T = TypeVar("T")


def frozen(cls: type[T]) -> type[T]:
    """`@dataclass(frozen=True)` with a direct `__init__`. The class must not use `__slots__`,
    `__post_init__`, `InitVar` or `field(init=False)`; a field's default factory runs per call as usual."""
    dc: Any = dataclasses.dataclass(frozen=True)(cls)
    if "__slots__" in cls.__dict__ or hasattr(dc, "__post_init__"):
        raise TypeError(f"@frozen {cls.__name__}: __slots__ and __post_init__ are not supported")
    params: list[str] = []
    assigns: list[str] = []
    namespace: dict[str, Any] = {}
    for f in dataclasses.fields(dc):
        if not f.init:
            raise TypeError(f"@frozen {cls.__name__}.{f.name}: fields outside __init__ are not supported")
        if f.default_factory is not dataclasses.MISSING:
            namespace[f"_factory_{f.name}"] = f.default_factory
            params.append(f"{f.name}=_MISSING")
            assigns.append(f"d[{f.name!r}] = _factory_{f.name}() if {f.name} is _MISSING else {f.name}")
            continue
        if f.default is not dataclasses.MISSING:
            namespace[f"_default_{f.name}"] = f.default
            params.append(f"{f.name}=_default_{f.name}")
        else:
            params.append(f.name)
        assigns.append(f"d[{f.name!r}] = {f.name}")
    namespace["_MISSING"] = dataclasses.MISSING
    body = "\n    ".join(["d = self.__dict__", *assigns]) if assigns else "pass"
    exec(f"def __init__(self, {', '.join(params)}):\n    {body}\n", namespace)  # noqa: S102 - generated, like dataclasses
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    dc.__init__ = init
    return dc
