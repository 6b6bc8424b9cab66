"""Abstract values for the static interpreter: what a name may hold, without running anything.

All values are frozen and hashable so that calls can be memoised on (function, arguments, world).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Iterator

from tools.classify.frozen import frozen

MAX_ALTERNATIVES = 8
# alternatives of a choice among names of code (constant strings, in-repo classes and functions): a table of class
# names looked up by a key the analysis cannot decide (`getattr(module, UPLOADERS[scheme])`) names ten or twenty
MAX_NAMES = 32
SIZE = "torch.Size"  # Seq.kind of a torch.Size: a tuple of ints that prints as `torch.Size([4, 3])`
# Bounds on the size of one abstract value (nodes counted as a tree, shared parts once per use) and on its
# nesting depth. Values are memo keys: hashing and comparing them must cost a bounded amount, however the
# analysed code builds them (torchsde's Brownian trees nest objects in objects, sharing subtrees, so their
# tree size doubles per level). A value past a bound is widened to UNRESOLVED (see `bounded`).
MAX_VALUE_NODES = 20_000
MAX_VALUE_DEPTH = 32


@frozen
class Unresolved:
    """A value the analysis cannot know (an external call result, an unset parameter)."""


UNRESOLVED = Unresolved()


@frozen
class KnownTruth(Unresolved):
    """A value the analysis cannot know whose truth it does know: `flag and torch.backends.mps.is_available()`
    is falsy on a machine without MPS whatever `flag` is (a version check read through `packaging`). It is
    still unresolved everywhere else, and a join with anything else forgets the truth."""

    truth: bool


@frozen
class NotNone(Unresolved):
    """A value the analysis cannot know that is certainly not None (a torch.nn module's parameter: `m.weight is
    not None` holds whatever its values are). Unresolved everywhere else."""


NOT_NONE = NotNone()


@frozen
class UnknownScalar(Unresolved):
    """A string or number the analysis cannot compute (`str(obj)`, an f-string or `.format()` of an unknown part,
    `len()` of an unknown container): pytest spells such a value in an id, so its id is unknown, never pytest's
    `argname<index>` for objects. Unresolved everywhere else."""


UNKNOWN_SCALAR = UnknownScalar()


@frozen
class UnknownParameter(Unresolved):
    """A parametrized value the analysis cannot compute (a registry filled by decorators): unresolved everywhere,
    but calling it runs code the analysis cannot see, a dynamic dispatch (`case()` over registered cases). `where`
    names the parametrize mark and the argument."""

    where: str


@frozen
class NoReturn:
    """Result of pytest.skip()/fail(): control does not continue."""


NORETURN = NoReturn()


@frozen
class Const:
    value: object  # str, bytes, int, float, complex, bool or None


@frozen
class Seq:
    items: tuple[Value, ...]
    kind: str = "list"
    origin: str | None = None  # a list that is a registry (registries.py, as DictV.origin); None for any other


# The origin of an empty dict pytest hands an `ids=` callable: settled (pytest asks for ids once the parameter
# values are made, and nothing fills the dict before), so its keys are known to be none and it is falsy. No
# registry: no writers, no view, no store (registries.registry_view, registry_target)
PARAMETER_VALUE = "<a parameter value>"


@frozen
class DictV:
    items: tuple[tuple[Value, Value], ...]
    # a registry (registries.py), a dict that code fills while modules import: its identity (`rel::NAME`,
    # `rel::Base.registry`, `rel::MODELS._module_dict`); None for any other dict
    origin: str | None = None


@frozen
class OneOf:
    """One of several values (a join after a branch the analysis could not decide)."""

    alts: frozenset[Value]

    def __repr__(self) -> str:
        # the alternatives' reprs in sorted order: a frozenset prints its elements in hash order, which differs
        # between processes (PYTHONHASHSEED), and reprs order alternatives (`ordered`), nested choices too
        return f"OneOf(alts={{{', '.join(sorted(map(repr, self.alts)))}}})"

    def ordered(self) -> tuple[Value, ...]:
        """The alternatives in a process-independent order (by repr); computed once per object (see below)."""
        return tuple(sorted(self.alts, key=repr))


@frozen
class Ext:
    """Something from outside the repository, by dotted path (torch.cuda.is_available, pytest.mark)."""

    path: str


@frozen
class ModV:
    """An in-repo module (rel is None for a namespace package directory)."""

    rel: str | None
    dotted: str
    importer: str


@frozen
class FuncV:
    """An in-repo function or method definition, located by (module, line, column). attrs: what code the analysis
    ran set on the function object (`fn.device = ...`, `setattr(fn, "device", d)` in a decorator)."""

    rel: str
    pos: tuple[int, int]
    name: str
    bound: Value | None = None
    captured: tuple[tuple[str, Value], ...] = ()
    cls: ClassV | None = None
    attrs: tuple[tuple[str, Value], ...] = ()

    def attr(self, name: str) -> Value | None:
        return next((v for k, v in self.attrs if k == name), None)

    def with_attr(self, name: str, v: Value) -> FuncV:
        return dataclasses.replace(self, attrs=(*((k, x) for k, x in self.attrs if k != name), (name, v)))

    def without_attr(self, name: str) -> FuncV:
        return dataclasses.replace(self, attrs=tuple((k, x) for k, x in self.attrs if k != name))


@frozen
class ClassV:
    """An in-repo class definition; `captured`: for a class defined inside a function, the enclosing locals its
    methods read (as a nested function's FuncV.captured: `device` of the function that defines the class).
    `made`: a class made by a call `type(name, bases, namespace)` at `pos` (no class statement): its bases and its
    namespace's entries; `meta`: the in-repo metaclass such a call went through (`OpMeta(name, bases, namespace)`),
    which `type()` of the class gives."""

    rel: str
    pos: tuple[int, int]
    name: str
    captured: tuple[tuple[str, Value], ...] = ()
    made: tuple[tuple[Value, ...], tuple[tuple[str, Value], ...]] | None = None
    meta: ClassV | None = None


@frozen
class Inst:
    """An instance of an in-repo class with the attributes its constructor set. `nn`, for an instance of an
    in-repo `torch.nn.Module` subclass that prints as `Module.__repr__` prints it (interp_classes.prints_as_module),
    is its attribute names in the order they were first set (torch registers child modules in that order); None
    for any other object, or once an attribute was set to a value the analysis cannot tell a module or not, or
    changed between module and non-module (the order torch keeps would differ). `device`: where `.to()`/`.cuda()`/
    `.cpu()` moved such a module (read by device analysis as a tensor's, as values.NNModV's)."""

    cls: ClassV
    attrs: tuple[tuple[str, Value], ...] = ()
    nn: tuple[str, ...] | None = None
    device: str | None = None

    def attr(self, name: str) -> Value | None:
        for k, v in self.attrs:
            if k == name:
                return v
        return None

    def with_attr(self, name: str, value: Value) -> Inst:
        attrs = tuple((k, v) for k, v in self.attrs if k != name) + ((name, value),)
        nn = self.nn
        if nn is not None:
            kind = module_kind(value)
            old = self.attr(name)
            nn = None if kind is None or old is not None and module_kind(old) != kind else \
                nn if name in nn else (*nn, name)
        return Inst(self.cls, tuple(sorted(attrs, key=lambda kv: kv[0])), nn, self.device if nn is not None else None)

    def moved(self, device: str | None) -> Inst:
        """A printable module after `.to(device)` (None: a device the analysis does not know): it prints the same."""
        return Inst(self.cls, self.attrs, self.nn, device)


def module_kind(v: Value) -> bool | None:
    """Whether `v`, set as an attribute of a torch.nn.Module, is registered as a child module (True: a torch.nn
    module the analysis builds, or a printable in-repo one), is plainly not one (False: constants, containers,
    devices, tensors, functions, classes; a list of modules is not registered), or may be either (None: an
    unknown value, an object of an in-repo class, an external object)."""
    if isinstance(v, NNModV) or isinstance(v, Inst) and v.nn is not None:
        return True
    if isinstance(v, (Const, Seq, DictV, DeviceV, TensorV, FuncV, ClassV, EnumV, PathV)):
        return False
    if isinstance(v, OneOf):
        kinds = {module_kind(a) for a in v.alts}
        return kinds.pop() if len(kinds) == 1 and False in kinds else None
    return None


@frozen
class SuperV:
    cls: ClassV
    obj: Value


@frozen
class DeviceV:
    """A torch.device (creating one needs no GPU; using it may)."""

    device: str


@frozen
class TensorV:
    """A tensor or module whose device is known; `shape`, when known, is the shape of a tensor a factory made
    from constant sizes (`torch.rand(3, 10)`, kept through `.to()`, read by `.shape`/`.size()`: ids print it)."""

    device: str
    shape: tuple[int, ...] | None = None


@frozen
class NNModV:
    """A torch.nn module built from arguments the analysis knows (nn_modules.TABLE): the class's name and its
    arguments bound to the constructor's parameters, defaults filled in, in signature order (a container's
    children are one argument, `modules`). It prints as torch prints it (nn_modules.module_repr); `device` is
    where `.to()`/`.cuda()`/`.cpu()` moved it (None: built where the defaults put it, or moved to a device the
    analysis does not know), read by device analysis as a TensorV's."""

    name: str
    args: tuple[tuple[str, Value], ...]
    device: str | None = None


@frozen
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


@frozen
class SkipV:
    """A skip decorator/mark; active is True/False/None (undecided) in the world it was made in."""

    active: bool | None
    where: str
    cuda_related: bool = False
    off_cuda: bool = False  # active because a device it tests is not CUDA (guards.off_cuda_branch)
    always: bool = False  # a skip without a condition (`pytest.mark.skip`, `unittest.skip`)
    gpu_reason: bool = False  # its reason names an accelerator (evidence.GPU_REASON)
    vram_gb: float = 0  # GiB of GPU memory below which its condition skips (`total_memory < 16 * 2**30`)


@frozen
class ReqV:
    """A conventional GPU requirement (require_torch_gpu, RunIf(min_cuda_gpus=2), ...)."""

    gpu_count: int
    vram_gb: float
    where: str
    manual: bool = False
    cpu: bool = False
    hint_only: bool = False


@frozen
class MockV:
    """mock.patch of torch.cuda.*: the test fakes CUDA and runs on a CPU."""

    where: str


# The id part of a parametrize dimension whose values or ids cannot be evaluated (also ParamV.id when
# `pytest.param(id=...)` is not computed): a test with one is keyed by its function alone (the key covers every
# parametrization), never by a guessed id
UNKNOWN_ID = "\0"


@frozen
class ParamV:
    """pytest.param(*values, marks=..., id=...). marks_kind: the container pytest keeps the marks in ("list" or
    "tuple", as `pytest.param` got them), for printing the ParameterSet (pytest_objects.py); "" when it is not
    printed exactly (another library's param, marks or an id the analysis does not know). id: None without one,
    UNKNOWN_ID for one the analysis cannot compute."""

    values: tuple[Value, ...]
    marks: tuple[Value, ...] = ()
    id: str | None = None
    marks_kind: str = ""


@frozen
class TestFnV:
    """The test function (or class) while its decorators are applied; collects their marks."""

    key: tuple[str, int, int]
    marks: tuple[Value, ...] = ()


@frozen
class PartialV:
    """`functools.partial(func, *args, **kwargs)`: calling it calls func with these arguments first (a
    `partial(torch.zeros, device="cuda")` made at import needs CUDA only where it is called)."""

    func: Value
    args: tuple[Value, ...] = ()
    kwargs: tuple[tuple[str, Value], ...] = ()


@frozen
class GenClassV:
    """A test class generated by torch's instantiate_device_type_tests: `<cls.name><DEVICE>`."""

    cls: ClassV
    device: str
    where: str


@frozen
class EnumV:
    """A member of an in-repo Enum class. pytest ids it as `str(member)` (`Events.EPOCH_COMPLETED`)."""

    cls: ClassV
    name: str
    value: Value
    text: str  # str(member)
    mixin: bool = False  # a str/int mixin (`class E(str, Enum)`, IntEnum): compares like its value
    id: str = ""  # pytest's id: a str mixin is a str (its value, escaped), anything else str(member)


@frozen
class PathV:
    """A filesystem path computed from `__file__` (datafiles.py): `text` is rooted at datafiles.VROOT, the
    analysed root. kind: "str" (os.path's strings), "path" (a pathlib path) or "file" (`open(path)`)."""

    text: str
    kind: str = "str"


@frozen
class RequestV:
    """pytest's `request` fixture; `request.param` is the current fixture parameter; `fixtures`: the values of
    the fixtures a test may ask for by name (`request.getfixturevalue(name)`, Analyzer.by_name_fixtures)."""

    param: Value
    fixtures: tuple[tuple[str, Value], ...] = ()
    # what a fixture set on `request.cls` / `request.instance` (`request.cls.device = ...`): the test's object has it
    cls_attrs: tuple[tuple[str, Value], ...] = ()

    def with_cls_attr(self, name: str, value: Value) -> RequestV:
        return RequestV(self.param, self.fixtures, (*((k, v) for k, v in self.cls_attrs if k != name), (name, value)))


Value = (
    Unresolved | NoReturn | Const | Seq | DictV | OneOf | Ext | ModV | FuncV | ClassV | Inst | SuperV | DeviceV
    | TensorV | NNModV | MarkV | SkipV | ReqV | MockV | ParamV | TestFnV | RequestV | GenClassV | EnumV | PathV
    | PartialV
)


def _children(v: object) -> tuple[object, ...]:
    """The values directly inside v (none for the leaf kinds in _LEAVES)."""
    if isinstance(v, Seq):
        return v.items
    if isinstance(v, DictV):
        return tuple(x for kv in v.items for x in kv)
    if isinstance(v, OneOf):
        return tuple(v.alts)
    if isinstance(v, Inst):
        return tuple(x for _, x in v.attrs)
    if isinstance(v, FuncV):
        inner = (*(x for _, x in v.captured), *(x for _, x in v.attrs))
        return (v.bound, *inner) if v.bound is not None else inner
    if isinstance(v, SuperV):
        return (v.obj,)
    if isinstance(v, MarkV):
        return (*v.args, *(x for _, x in v.kwargs))
    if isinstance(v, ParamV):
        return (*v.values, *v.marks)
    if isinstance(v, TestFnV):
        return v.marks
    if isinstance(v, EnumV):
        return (v.value,)
    if isinstance(v, RequestV):
        return (v.param, *(x for _, x in v.fixtures))
    if isinstance(v, PartialV):
        return (v.func, *v.args, *(x for _, x in v.kwargs))
    if isinstance(v, NNModV):
        return tuple(x for _, x in v.args)
    return ()


_LEAVES = frozenset({Const, Ext, Unresolved, NoReturn, ClassV, TensorV, PathV})  # values holding no other value


def _nodes(v: object) -> Iterator[object]:
    """v and every value inside it, each once (values share subtrees), until the caller stops asking."""
    seen: set[int] = set()
    todo = [v]
    while todo:
        x = todo.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        yield x
        todo.extend(_children(x))


def mentions(v: object, target: Value) -> bool:
    """Whether `target`, or one of its alternatives when it is a choice of objects, occurs inside v."""
    targets = set(alternatives(target)) | {target}
    kinds = {type(t) for t in targets}  # (dataclass equality needs the same class: others are not hashed)
    return any(type(x) in kinds and x in targets for x in _nodes(v))


def holds_code_of(v: object, outside: Callable[[str], bool]) -> bool:
    """Whether a function, class, test or object of a class defined in a file for which `outside(rel)` holds
    occurs inside v (what a library handed v could call back into)."""
    for x in _nodes(v):
        rel = x.rel if isinstance(x, (FuncV, ClassV)) else x.cls.rel if isinstance(x, (Inst, EnumV)) else None
        if rel is not None and outside(rel) or isinstance(x, TestFnV):
            return True
    return False


def size_of(v: object) -> tuple[int, int]:
    """(tree size, depth) of a value, cached on each node: linear in the distinct nodes even when subtrees
    are shared. Sizes saturate just past the bounds."""
    kind = type(v)
    if kind in _LEAVES:
        return 1, 1
    d = getattr(v, "__dict__", None)
    if d is None:
        return 1, 1
    got = d.get("_size")
    if got is not None:
        return got
    nodes, depth = 1, 0
    for c in v.items if kind is Seq else _children(v):  # type: ignore[attr-defined]
        if type(c) in _LEAVES:
            cn, cd = 1, 1
        else:
            cn, cd = size_of(c)
        nodes += cn
        if cd > depth:
            depth = cd
    got = (min(nodes, MAX_VALUE_NODES + 1), min(depth + 1, MAX_VALUE_DEPTH + 1))
    d["_size"] = got  # (a frozen value: its __dict__ directly, like its hash)
    return got


def bounded(v: Value) -> Value:
    """v, or UNRESOLVED when it is larger or deeper than the bounds."""
    if isinstance(v, (Const, Unresolved, Ext)):
        return v
    nodes, depth = size_of(v)
    return UNRESOLVED if nodes > MAX_VALUE_NODES or depth > MAX_VALUE_DEPTH else v


def _stored(cls: type, method: str, slot: str) -> type:
    """Make cls.<method>() compute its result once and keep it in the object's `slot` (the objects are
    immutable, and the generated methods walk the whole nested value on every call). Written to `__dict__`
    directly, as `size_of`'s cache is, because it pays (bench/bench_classify.py, torchsde, cold, one process,
    best of 3, 2026-12-01: 1.43 s CPU with both caches, 2.33 s without `size_of`'s, 3.71 s without either)."""
    gen = getattr(cls, method)

    def stored(self: object) -> object:
        d = self.__dict__
        r = d.get(slot)
        if r is None:
            r = d[slot] = gen(self)
        return r

    stored.__name__ = stored.__qualname__ = method
    setattr(cls, method, stored)
    return cls


def cached_hash(cls: type) -> type:
    """A container's hash is computed once. It is stored on the object: such objects may cross a fork, never
    a pickle to a process with another hash seed."""
    return _stored(cls, "__hash__", "_hash")


def cached_repr(cls: type) -> type:
    """A container's repr is computed once: it is the sort key that puts the alternatives of a OneOf in a
    process-independent order (`alternatives`); on real suites, sorting by the generated repr took over 40%
    of a run."""
    return _stored(cls, "__repr__", "_repr")


for _cls in (Seq, DictV, OneOf, FuncV, Inst, SuperV, MarkV, ParamV, TestFnV, EnumV, RequestV, NNModV, PartialV):
    cached_hash(_cls)
    cached_repr(_cls)
# the same choice is taken apart many times (every call, branch and attribute read on it): sort it once
_stored(OneOf, "ordered", "_ordered")


def join(a: Value, b: Value) -> Value:
    """Least upper bound of two values: equal stays, else OneOf (bounded), else Unresolved."""
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
    if any(isinstance(v, Unresolved) for v in alts):
        return UNRESOLVED
    if sum(isinstance(v, TensorV) for v in alts) > 1:
        alts = _merge_shapes(alts)
        if len(alts) == 1:
            return alts.pop()
    if len(alts) > MAX_ALTERNATIVES:
        alts = _merge_instances(alts)
        if len(alts) > MAX_ALTERNATIVES:
            return UNRESOLVED
        if len(alts) == 1:
            return alts.pop()
    return OneOf(frozenset(alts))


def _merge_shapes(alts: set[Value]) -> set[Value]:
    """Tensors on one device whose shapes differ are one tensor there, of an unknown shape (a join of devices is
    what it was before shapes were known)."""
    devices: dict[str, list[TensorV]] = {}
    for v in alts:
        if isinstance(v, TensorV):
            devices.setdefault(v.device, []).append(v)
    out = {v for v in alts if not isinstance(v, TensorV)}
    out.update(ts[0] if len(ts) == 1 else TensorV(d) for d, ts in devices.items())
    return out


def _merge_instances(alts: set[Value]) -> set[Value]:
    """Too many alternatives (an object whose attributes were set differently on many paths, stable-baselines3's
    `self.*_class = A if ... else B`): the objects of one class become one, each attribute the join of its
    values (an attribute set on some paths only keeps their values)."""
    out: set[Value] = {v for v in alts if not isinstance(v, Inst)}
    by_cls: dict[ClassV, dict[str, Value]] = {}
    for v in sorted((v for v in alts if isinstance(v, Inst)), key=repr):
        attrs = by_cls.setdefault(v.cls, {})
        for k, x in v.attrs:
            attrs[k] = join(attrs[k], x) if k in attrs else x
    out.update(Inst(c, tuple(sorted(a.items(), key=lambda kv: kv[0]))) for c, a in by_cls.items())
    return out


def join_all(values: list[Value]) -> Value:
    out: Value = NORETURN
    for v in values:
        out = join(out, v)
    return out


def dict_items(pairs: Iterable[tuple[Value, Value]]) -> tuple[tuple[Value, Value], ...]:
    """A dict's items after setting `pairs` in order (`{**a, "x": 1}`, `d[key] = value`): a known constant key
    replaces its entry in place, as in Python; any other key (unknown, a choice) is one more entry, never
    merged with another (two unknown keys may differ, and each value must stay in the dict). Linear in the
    pairs (a dict literal of many keys)."""
    items: list[tuple[Value, Value]] = []
    where: dict[Value, int] = {}
    for key, value in pairs:
        at = where.get(key) if isinstance(key, Const) else None
        if at is not None:
            items[at] = (key, value)
            continue
        if isinstance(key, Const):
            where[key] = len(items)
        items.append((key, value))
    return tuple(items)


def extended(d: DictV, pairs: Iterable[tuple[Value, Value]]) -> Value:
    """dict_items(d.items + pairs) as a DictV with d's origin, bounded: in time linear in the pairs (and one copy of
    d's entries), the index of its constant keys and its size carried from d to the result instead of recomputed.
    A registry grows by an entry per call at import and is read between calls (timm's `register_model` asks
    `name in _model_entrypoints` for each of its 1,000 models: recomputed, building the views took 2.5 of 20 s)."""
    items = list(d.items)
    where: dict[Value, int] | None = d.__dict__.get("_where")
    where = {k: i for i, (k, _) in enumerate(items) if isinstance(k, Const)} if where is None else dict(where)
    nodes, depth = size_of(d)
    for key, value in pairs:
        at = where.get(key) if isinstance(key, Const) else None
        if at is not None:
            items[at] = (key, value)  # (the size keeps the replaced entry's: an overestimate, never under)
        else:
            if isinstance(key, Const):
                where[key] = len(items)
            items.append((key, value))
        for part in (key, value):
            n, dep = size_of(part)
            nodes, depth = nodes + n, max(depth, dep + 1)
    if nodes > MAX_VALUE_NODES or depth > MAX_VALUE_DEPTH:
        return UNRESOLVED
    out = DictV(tuple(items), d.origin)
    out.__dict__["_where"] = where  # (a frozen value: its __dict__ directly, like size_of's cache)
    out.__dict__["_size"] = (nodes, depth)
    return out


def hashable(v: object) -> bool:
    """Whether v can be a dict key or a set element in the analysis (a value holding an unhashable one cannot)."""
    try:
        hash(v)
    except TypeError:
        return False
    return True


def exact_keys(d: DictV) -> bool:
    """Whether every key of `d` is one definite key, so that a lookup by a definite key is exact: an entry stored
    under a key the analysis does not know (`d[name] = device` in a loop) may be the one any lookup selects."""
    return all(decided_key(k) for k, _ in d.items)


def decided_key(v: Value) -> bool:
    """Whether `v` is one definite key: a constant, an in-repo class or function, an enum member, an external
    name. Anything else (unknown, a choice of values) may select any entry."""
    return isinstance(v, (Const, ClassV, FuncV, EnumV, Ext))


def may_equal(key: Value, idx: Value) -> bool:
    """Whether a dict's key may equal an index the analysis knows in part: constants compare, tuples compare item by
    item (`_REGISTRY[(op_name, impl_name)]` looked up by `(op_name, chosen)` with `chosen` unknown may select the
    entries of that op only: liger-kernel's registry of 41 implementations), a choice compares each alternative;
    anything else may be equal."""
    if isinstance(key, OneOf):
        return any(may_equal(k, idx) for k in key.alts)
    if isinstance(idx, OneOf):
        return any(may_equal(key, i) for i in idx.alts)
    if isinstance(key, Const) and isinstance(idx, Const):
        return bool(key == idx)
    if isinstance(key, Seq) and isinstance(idx, Seq) and key.kind == idx.kind == "tuple":
        return len(key.items) == len(idx.items) and all(map(may_equal, key.items, idx.items))
    if isinstance(key, Seq) and key.kind == "tuple" and isinstance(idx, Const) or (
            isinstance(idx, Seq) and idx.kind == "tuple" and isinstance(key, Const)):
        return False  # a string or a number never equals a tuple
    return True


def choice_of_names(values: list[Value]) -> Value | None:
    """One of `values` when each is a constant string, an in-repo class or an in-repo function (choices of them
    flattened), up to MAX_NAMES distinct ones; None otherwise (a join, bounded by MAX_ALTERNATIVES, applies). Such
    values are small and never merged by a join, and a choice among them is what a dispatch by name calls:
    past MAX_ALTERNATIVES a join would make it unknown, and its calls would not be followed."""
    alts: set[Value] = set()
    for v in values:
        for a in alternatives(v):
            if not (isinstance(a, (ClassV, FuncV)) or isinstance(a, Const) and isinstance(a.value, str)):
                return None
            alts.add(a)
    if not alts or len(alts) > MAX_NAMES:
        return None
    return alts.pop() if len(alts) == 1 else OneOf(frozenset(alts))


def undecided_entry(obj: Value, idx: Value, default: Value | None = None) -> Value | None:
    """`obj[idx]` (or `obj.get(idx, default)`) for a known dict, list or tuple indexed by a key the analysis
    cannot decide: any entry may be selected, so the value is the join of them all (a call on it is analysed
    for each; `REGISTRY[config.architectures[0]].quantize(..., device=device)`). Dropping the lookup instead
    would hide what every candidate does. The join is bounded like any other (values.join, MAX_ALTERNATIVES):
    past it, or when one entry is unknown, the result is UNRESOLVED, never a subset. None: `idx` is decided (the
    exact lookup applies) or `obj` is not such a container."""
    # a definite key that matched no entry: a KeyError/IndexError (the exact lookup's answer), unless the dict has
    # an unknown key it may equal
    if decided_key(idx) and not (isinstance(obj, DictV) and any(not decided_key(k) for k, _ in obj.items)):
        return None
    if isinstance(obj, DictV):
        entries = [v for k, v in obj.items if may_equal(k, idx)]
    elif isinstance(obj, Seq) and obj.kind in ("list", "tuple") and not isinstance(idx, Seq):
        # (a slice, `xs[a:b]`, or a tuple index is not one entry)
        entries = list(obj.items)
    else:
        return None
    if default is not None:
        entries.append(default)
    if not entries:
        return None
    names = choice_of_names(entries)  # (a table of class names: `UPLOADERS[scheme]`)
    return bounded(names if names is not None else join_all(entries))


# torch.nn's containers: their children, in order, are their one argument "modules" (nn_modules.CONTAINERS)
MODULE_CONTAINERS = ("Sequential", "ModuleList", "ModuleDict")


def module_children(v: Value) -> tuple[Value, ...]:
    """The children a torch.nn container holds (a sequence for Sequential and ModuleList, a dict for ModuleDict; one
    per path when they differ), while it has not been moved (then they are elsewhere); () for anything else."""
    if isinstance(v, NNModV) and v.name in MODULE_CONTAINERS and v.device is None:
        return alternatives(dict(v.args).get("modules", UNRESOLVED))
    return ()


def iterated(v: Value) -> Value:
    """What a loop or comprehension runs over: a dict gives its keys, in insertion order; a torch.nn container the
    children it holds (`op.device for op in self.operations`), a ModuleDict its keys."""
    held = module_children(v)
    if len(held) == 1 and isinstance(held[0], (Seq, DictV)):
        v = held[0]
        if isinstance(v, Seq):
            return Seq(v.items, "list")
    return Seq(tuple(k for k, _ in v.items), "list") if isinstance(v, DictV) else v


def is_objects(v: Value | None) -> bool:
    """An in-repo object, or a choice of in-repo objects (one per path after a branch the analysis could not
    decide, each keeping its attributes together)."""
    return isinstance(v, Inst) or isinstance(v, OneOf) and all(isinstance(a, Inst) for a in v.alts)


def alternatives(v: Value) -> tuple[Value, ...]:
    if isinstance(v, OneOf):
        return v.ordered()
    return (v,)


NOT_LITERAL = object()  # literal_of: the value is not a known Python literal
SLICE = "slice"  # Seq.kind of a slice object: items (start, stop, step), each a Const int or None


def plain(v: Value) -> object:
    """The Python value of constants, slices and tuples, lists and sets of them, to compare them as Python does
    (`(a, b) in cases`, `picked - cases == set()`); NOT_LITERAL for anything else."""
    if isinstance(v, Seq) and v.kind == "set":
        items = [plain(i) for i in v.items]
        if any(i is NOT_LITERAL for i in items):
            return NOT_LITERAL
        try:
            return frozenset(items)
        except TypeError:
            return NOT_LITERAL
    if isinstance(v, Seq) and v.kind in ("tuple", "list"):
        items = [plain(i) for i in v.items]
        if any(i is NOT_LITERAL for i in items):
            return NOT_LITERAL
        return tuple(items) if v.kind == "tuple" else items
    if isinstance(v, Seq) and v.kind == SLICE:  # `index == slice(None, None, None)`
        cut = slice_of(v)
        return cut if cut is not None else NOT_LITERAL
    return v.value if isinstance(v, Const) else NOT_LITERAL


def slice_of(v: Value) -> slice | None:
    """The slice a SLICE value stands for, when its bounds are known ints or None (and its step is not 0)."""
    if not (isinstance(v, Seq) and v.kind == SLICE and len(v.items) == 3):
        return None
    bounds = [i.value if isinstance(i, Const) and (i.value is None or type(i.value) is int) else NOT_LITERAL
              for i in v.items]
    if any(b is NOT_LITERAL for b in bounds) or bounds[2] == 0:
        return None
    return slice(*bounds)

# Device types whose torch.device prints as `cpu` / `device(type='cpu')` in every torch this project supports
_PRINTED_DEVICE_TYPES = frozenset({"cpu", "cuda", "xpu", "mps", "meta", "hpu", "mtia"})
_DEVICE_TEXT = re.compile(r"([a-z]+)(?::(0|[1-9][0-9]*))?")


class Shown:
    """Stands in for an object that is not a Python literal but prints exactly (a torch.device, a torch.Size, a
    dtype) inside the Python objects `literal_of` builds: str() and an empty format spec give `text`, repr() (as
    a container prints its items) gives `rtext`; any other format spec raises TypeError, as torch's objects do."""

    __slots__ = ("rtext", "text")

    def __init__(self, text: str, rtext: str) -> None:
        self.text, self.rtext = text, rtext

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return self.rtext

    def __format__(self, spec: str) -> str:
        if spec:
            raise TypeError(f"unsupported format string {spec!r}")
        return self.text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Shown) and (self.text, self.rtext) == (other.text, other.rtext)

    def __hash__(self) -> int:
        return hash((self.text, self.rtext))


def shown_device(device: str) -> Shown | None:
    """How Python prints torch.device(device): `cuda:1` and `device(type='cuda', index=1)`; None for a text that
    is not a plain device of a known type."""
    m = _DEVICE_TEXT.fullmatch(device)
    if m is None or m.group(1) not in _PRINTED_DEVICE_TYPES:
        return None
    kind, index = m.group(1), m.group(2)
    return Shown(device, f"device(type='{kind}'" + (f", index={index})" if index is not None else ")"))


def literal_of(v: Value, shown: object = None) -> object:
    """The Python object a constant, or a tuple/list/dict of them, stands for (to spell `str()`, `repr()`,
    `format()` and f-strings of it exactly, as pytest ids made by `ids=` functions or helpers' `make_id()` do);
    torch devices, sizes and (through `shown`, a function of a value giving its Shown or None) other printable
    objects stand in as Shown; NOT_LITERAL when some part cannot be printed exactly."""
    if isinstance(v, Const):
        return v.value
    if isinstance(v, DeviceV):
        return shown_device(v.device) or NOT_LITERAL
    if isinstance(v, Seq) and v.kind in ("tuple", "list"):
        items = [literal_of(i, shown) for i in v.items]
        if any(i is NOT_LITERAL for i in items):
            return NOT_LITERAL
        return tuple(items) if v.kind == "tuple" else items
    if isinstance(v, Seq) and v.kind == SLICE and len(v.items) == 3:
        bounds = [literal_of(i, shown) for i in v.items]  # `slice(1, None, 2)` (an index an ids= function prints)
        return NOT_LITERAL if any(b is NOT_LITERAL for b in bounds) else slice(*bounds)
    if isinstance(v, Seq) and v.kind == SIZE:
        if not all(isinstance(i, Const) and type(i.value) is int for i in v.items):
            return NOT_LITERAL
        text = "torch.Size([" + ", ".join(str(i.value) for i in v.items) + "])"  # type: ignore[union-attr]
        return Shown(text, text)
    if isinstance(v, DictV):
        pairs = [(literal_of(k, shown), literal_of(x, shown)) for k, x in v.items]
        if any(k is NOT_LITERAL or x is NOT_LITERAL for k, x in pairs):
            return NOT_LITERAL
        try:
            return dict(pairs)
        except TypeError:
            return NOT_LITERAL
    got = shown(v) if callable(shown) else None
    return got if got is not None else NOT_LITERAL


def printed(v: Value, conversion: str = "s", spec: str = "", shown: object = None) -> str | None:
    """`str(v)` ("s"), `repr(v)` ("r"), `ascii(v)` ("a") or `format(v, spec)` ("") exactly as Python prints it;
    None when v (or a part of it) cannot be printed exactly, or the spec does not apply to it."""
    if re.search(r"[0-9]{4,}", spec) or too_long_to_print(v):
        return None  # a width or precision of 1000 or more, or a text past the bound (hostile code: gigabytes)
    obj = literal_of(v, shown)
    if obj is NOT_LITERAL:
        return None
    try:
        if conversion == "s":
            return str(obj)
        if conversion == "r":
            return repr(obj)
        if conversion == "a":
            return ascii(obj)
        return format(obj, spec)
    except (TypeError, ValueError, OverflowError):
        return None


MAX_PRINTED = 1 << 20  # characters of a printed value (limits.MAX_TEXT_LENGTH, the bound on a built string)


def too_long_to_print(v: Value) -> bool:
    """Whether printing v would build more than MAX_PRINTED characters (estimated from its constants, with a
    few characters per item; a list of 20,000 references to one 1 MiB string would print 20 GiB). Stops as soon
    as the bound is passed."""
    total = 0
    todo: list[object] = [v]
    while todo:
        x = todo.pop()
        if isinstance(x, Const):
            c = x.value
            total += len(c) if isinstance(c, (str, bytes)) else c.bit_length() // 3 + 2 if type(c) is int else 32
        elif isinstance(x, (Seq, DictV)):
            total += 4 + 4 * len(x.items)
            todo.extend(x.items if isinstance(x, Seq) else (y for kv in x.items for y in kv))
        elif isinstance(x, NNModV):  # a torch.nn module prints its arguments (a container its children, a line each)
            total += 64 + 16 * len(x.args)
            todo.extend(a for _, a in x.args)
        else:
            total += 64
        if total > MAX_PRINTED:
            return True
    return False


def keywords_of(d: DictV) -> dict[str, Value]:
    """The keyword arguments `**d` passes: its string keys (a dict of other keys would raise a TypeError)."""
    return {str(k.value): v for k, v in d.items if isinstance(k, Const) and isinstance(k.value, str)}
