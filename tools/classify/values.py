"""Abstract values for the static interpreter: what a name may hold, without running anything.

All values are frozen and hashable so that calls can be memoised on (function, arguments, world).
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_ALTERNATIVES = 8


@dataclass(frozen=True)
class Unknown:
    """A value the analysis cannot know (an external call result, an unset parameter)."""


UNKNOWN = Unknown()


@dataclass(frozen=True)
class NoReturn:
    """Result of pytest.skip()/fail(): control does not continue."""


NORETURN = NoReturn()


@dataclass(frozen=True)
class Const:
    value: object  # str, bytes, int, float, complex, bool or None


@dataclass(frozen=True)
class Seq:
    items: tuple[Value, ...]
    kind: str = "list"


@dataclass(frozen=True)
class DictV:
    items: tuple[tuple[Value, Value], ...]


@dataclass(frozen=True)
class OneOf:
    """One of several values (a join after a branch the analysis could not decide)."""

    alts: frozenset[Value]


@dataclass(frozen=True)
class Ext:
    """Something from outside the repository, by dotted path (torch.cuda.is_available, pytest.mark)."""

    path: str


@dataclass(frozen=True)
class ModV:
    """An in-repo module (rel is None for a namespace package directory)."""

    rel: str | None
    dotted: str
    importer: str


@dataclass(frozen=True)
class FuncV:
    """An in-repo function or method definition, located by (module, line, column)."""

    rel: str
    pos: tuple[int, int]
    name: str
    bound: Value | None = None
    captured: tuple[tuple[str, Value], ...] = ()
    cls: ClassV | None = None


@dataclass(frozen=True)
class ClassV:
    rel: str
    pos: tuple[int, int]
    name: str


@dataclass(frozen=True)
class Inst:
    """An instance of an in-repo class with the attributes its constructor set."""

    cls: ClassV
    attrs: tuple[tuple[str, Value], ...] = ()

    def attr(self, name: str) -> Value | None:
        for k, v in self.attrs:
            if k == name:
                return v
        return None

    def with_attr(self, name: str, value: Value) -> Inst:
        attrs = tuple((k, v) for k, v in self.attrs if k != name) + ((name, value),)
        return Inst(self.cls, tuple(sorted(attrs, key=lambda kv: kv[0])))


@dataclass(frozen=True)
class SuperV:
    cls: ClassV
    obj: Value


@dataclass(frozen=True)
class DeviceV:
    """A torch.device (creating one needs no GPU; using it may)."""

    device: str


@dataclass(frozen=True)
class TensorV:
    """A tensor or module whose device is known."""

    device: str


@dataclass(frozen=True)
class MarkV:
    """pytest.mark.<name>(...) with evaluated arguments."""

    name: str
    args: tuple[Value, ...] = ()
    kwargs: tuple[tuple[str, Value], ...] = ()
    where: str = ""

    def kw(self, name: str) -> Value | None:
        for k, v in self.kwargs:
            if k == name:
                return v
        return None


@dataclass(frozen=True)
class SkipV:
    """A skip decorator/mark; active is True/False/None (undecided) in the world it was made in."""

    active: bool | None
    where: str
    cuda_related: bool = False


@dataclass(frozen=True)
class ReqV:
    """A conventional GPU requirement (require_torch_gpu, RunIf(min_cuda_gpus=2), ...)."""

    gpu_count: int
    vram_gb: float
    where: str
    manual: bool = False
    cpu: bool = False
    hint_only: bool = False


@dataclass(frozen=True)
class MockV:
    """mock.patch of torch.cuda.*: the test fakes CUDA and runs on a CPU."""

    where: str


@dataclass(frozen=True)
class ParamV:
    """pytest.param(*values, marks=..., id=...)."""

    values: tuple[Value, ...]
    marks: tuple[Value, ...] = ()
    id: str | None = None


@dataclass(frozen=True)
class TestFnV:
    """The test function (or class) while its decorators are applied; collects their marks."""

    key: tuple[str, int, int]
    marks: tuple[Value, ...] = ()


@dataclass(frozen=True)
class RequestV:
    """pytest's `request` fixture; `request.param` is the current fixture parameter."""

    param: Value


Value = (
    Unknown | NoReturn | Const | Seq | DictV | OneOf | Ext | ModV | FuncV | ClassV | Inst | SuperV | DeviceV
    | TensorV | MarkV | SkipV | ReqV | MockV | ParamV | TestFnV | RequestV
)


def join(a: Value, b: Value) -> Value:
    """Least upper bound of two values: equal stays, else OneOf (bounded), else Unknown."""
    if a == b:
        return a
    if isinstance(a, NoReturn):
        return b
    if isinstance(b, NoReturn):
        return a
    alts: set[Value] = set()
    for v in (a, b):
        if isinstance(v, OneOf):
            alts |= v.alts
        else:
            alts.add(v)
    if len(alts) > MAX_ALTERNATIVES or any(isinstance(v, Unknown) for v in alts):
        return UNKNOWN
    return OneOf(frozenset(alts))


def join_all(values: list[Value]) -> Value:
    out: Value = NORETURN
    for v in values:
        out = join(out, v)
    return out


def alternatives(v: Value) -> tuple[Value, ...]:
    if isinstance(v, OneOf):
        return tuple(sorted(v.alts, key=repr))
    return (v,)
