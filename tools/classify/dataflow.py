"""Abstract interpretation of Python code in a world with a given number of CUDA devices.

World 0 is the CPU-only machine a `cpu` label promises: `torch.cuda.is_available()` is False there, so
`"cuda" if torch.cuda.is_available() else "cpu"` is "cpu" and code under that guard is never reached.
Calls into in-repo functions, classes and methods are followed with their argument values, memoised on
(function, arguments, world), and cut at cycles; the findings of a call come back with a `calls` step.
"""

from __future__ import annotations

import ast
import builtins
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from tools.classify import conventions, torch_api, torch_testing
from tools.classify.evidence import GPU, MOCK, SKIP, UNKNOWN, Finding, step
from tools.classify.modules import ParsedModule
from tools.classify.values import (
    NORETURN,
    ClassV,
    Const,
    DeviceV,
    DictV,
    EnumV,
    Ext,
    FuncV,
    GenClassV,
    Inst,
    MarkV,
    MockV,
    ModV,
    NoReturn,
    OneOf,
    ParamV,
    RequestV,
    ReqV,
    Seq,
    SkipV,
    SuperV,
    TensorV,
    TestFnV,
    Unknown,
    Value,
    alternatives,
    bounded,
    join,
    join_all,
)
from tools.classify.values import (
    UNKNOWN as UNK,
)

MAX_DEPTH = 24
# Deterministic work budgets, in interpreter steps (statements and expressions evaluated; a memoised call
# counts what it cost when it was analysed, so a budget is spent the same whatever was analysed before).
# CASE_BUDGET bounds one test case (all its worlds), FILE_BUDGET one test file (collection and all its
# cases); a case that runs out is charged OVER_BUDGET_CHARGE (its pathology is usually shared by its
# neighbours: a file gives up after three). UNIT_BUDGET bounds a module's top level, a class body or a
# base-class list, which are memoised apart and count toward no test. Largest legitimate figures measured
# (fixture corpus, tests/, ten real suites): 3.3 million steps for a case, 52 million for a file.
CASE_BUDGET = 10_000_000
FILE_BUDGET = 100_000_000
OVER_BUDGET_CHARGE = 4 * CASE_BUDGET
UNIT_BUDGET = 20_000_000
PROPERTY_DECORATORS = frozenset({"property", "cached_property", "abstractproperty", "lazy_property",
                                 "lazyproperty", "cache_readonly"})
TORCH_DTYPE_NAMES = frozenset({
    "float", "float16", "float32", "float64", "bfloat16", "half", "double", "int", "int8", "int16", "int32",
    "int64", "uint8", "bool", "long", "short", "complex64", "complex128", "cfloat", "cdouble", "float8_e4m3fn",
    "float8_e5m2", "uint16", "uint32", "uint64", "qint8", "quint8", "chalf",
})
# Types whose instances the analysis recognises; `type(x) is torch.device`, `isinstance(x, torch.Tensor)` on
# one of them is decided (no instance is of two of these).
KNOWN_TYPES = frozenset({"torch.dtype", "torch.device", "torch.Tensor", "builtins.str", "builtins.int",
                         "builtins.float", "builtins.bool", "builtins.NoneType", "builtins.bytes",
                         "builtins.complex", "builtins.list", "builtins.tuple", "builtins.dict", "builtins.set"})
TYPE_PREFIX = "<type>"  # Ext(TYPE_PREFIX + path): type(x) of a value whose type is known
UNKNOWN_KWARGS = "**"  # a keyword no call can spell: the call passed `**x` with an unknown x
REGEX_PREFIX = "<regex>"  # Ext(REGEX_PREFIX + pattern): re.compile(pattern)
EXISTING_DEVICE = Ext("<existing tensor>.device")  # `x.device` of a tensor the analysis does not track
STR_METHODS = frozenset({"startswith", "endswith", "lower", "upper", "strip", "lstrip", "rstrip", "split",
                         "rsplit", "partition", "replace", "casefold", "find", "count", "isdigit"})
DYNAMIC = "<dynamic>"  # Ext path prefix of a value looked up by a computed name; the rest is the evidence step
PARAMETERIZED_EXPAND = "<parameterized.expand>"  # MarkV name of @parameterized.expand([...])
MAX_FINDINGS_PER_KIND = 4
DEVICE_NAME_HINTS = ("device", "dev", "device_map")
BUILTIN_NAMES = frozenset(dir(builtins))


class BudgetExceeded(Exception):  # noqa: N818 - a condition, not an error in the analysed code
    """The work budget of the current test case, file or unit is spent."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"analysis budget exceeded ({limit} steps)")
        self.limit = limit


class ModuleSource(Protocol):
    def module(self, rel: str) -> ParsedModule: ...
    def resolve_import(self, dotted: str, importer: str, level: int, module: str) -> str | None: ...
    def is_package_dir(self, dotted: str) -> bool: ...


@dataclass
class CallResult:
    value: Value
    findings: tuple[Finding, ...]
    self_after: Value | None = None
    cost: int = 0  # interpreter steps the call took, its callees' included


@dataclass
class ModuleState:
    env: dict[str, Value]
    findings: list[Finding]
    stars: list[Value]
    done: bool = False


@dataclass
class Frame:
    rel: str
    world: int
    env: dict[str, Value]
    module_env: dict[str, Value] | None  # None: this frame runs module top level
    findings: list[Finding]
    depth: int = 0
    returns: list[Value] = field(default_factory=list)
    self_name: str | None = None
    cls: ClassV | None = None
    captured: dict[str, Value] = field(default_factory=dict)

    def add(self, finding: Finding) -> None:
        same = [f for f in self.findings if f.kind == finding.kind]
        if finding.kind == SKIP or len(same) < MAX_FINDINGS_PER_KIND:
            if finding not in self.findings:
                self.findings.append(finding)


def is_fixture_def(node: ast.AST) -> bool:
    """Syntactic: decorated with `fixture`, `pytest.fixture(...)`, `pytest_asyncio.fixture`..."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    for d in node.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        if isinstance(target, ast.Attribute) and target.attr in ("fixture", "yield_fixture"):
            return True
        if isinstance(target, ast.Name) and target.id in ("fixture", "yield_fixture"):
            return True
    return False


def device_of(v: Value) -> str | None:
    """The device string a value names ('cuda:1', 'cpu'), or None when it names none / is unknown."""
    if isinstance(v, Const):
        if isinstance(v.value, str):
            s = v.value.strip().lower()
            kind = s.split(":", 1)[0]
            if kind in torch_api.ACCELERATORS or kind in ("cpu", "meta", "gpu"):
                return "cuda" + s[3:] if kind == "gpu" else s
            return None
        if isinstance(v.value, int) and not isinstance(v.value, bool):
            return f"cuda:{v.value}"
        return None
    if isinstance(v, (DeviceV, TensorV)):
        return v.device
    if isinstance(v, EnumV) and v.mixin:
        return device_of(v.value)
    return None


def accel_device(v: Value) -> str | None:
    """The accelerator device among the alternatives of v (may-analysis), else None."""
    for alt in alternatives(v):
        d = device_of(alt)
        if d and torch_api.accelerator_of(d):
            return d
    return None


def gpu_count_of(device: str) -> int:
    return torch_api.device_index(device) + 1


_CMP: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Is: operator.is_, ast.IsNot: operator.is_not,
}
_BIN: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
}


def truth(v: Value) -> bool | None:
    """Truthiness of an abstract value: True, False or None (undecided)."""
    if isinstance(v, Const):
        return bool(v.value)
    if isinstance(v, Seq):
        return bool(v.items)
    if isinstance(v, OneOf):
        ts = {truth(a) for a in v.alts}
        return ts.pop() if len(ts) == 1 else None
    if isinstance(v, (DeviceV, TensorV, FuncV, ClassV, ModV, MarkV, SkipV, ReqV, TestFnV)):
        return True
    if isinstance(v, EnumV):
        return truth(v.value) if v.mixin else True
    return None


def _const_of(v: Value) -> tuple[bool, object]:
    if isinstance(v, Const):
        return True, v.value
    if isinstance(v, DeviceV):
        return True, v.device
    return False, None


# Device kinds other than CUDA: no analysis world has them (a CPU-only machine has none either).
OTHER_DEVICE_KINDS = frozenset({"xpu", "mps", "npu", "hpu", "mlu", "musa", "sdaa", "neuron", "xla", "tpu", "ipu"})


def _other_accelerator_test(op: ast.cmpop, a: Value, b: Value) -> Value | None:
    """`dev.type == "xpu"`, `"npu" in str(device)`, `backend != "mps"` with an unresolved left side: the
    analysed machines have no such device, so a value the analysis cannot see is not one of them."""
    if isinstance(op, (ast.In, ast.NotIn)):
        const, opaque = a, b
    else:
        const, opaque = (b, a) if isinstance(b, Const) else (a, b)
    if not (isinstance(const, Const) and isinstance(const.value, str)
            and const.value.lower() in OTHER_DEVICE_KINDS and isinstance(opaque, (Unknown, Ext))):
        return None
    if isinstance(opaque, Ext) and not opaque.path.startswith(("<", "torch.")) and "device" not in opaque.path:
        return None
    if isinstance(op, (ast.Eq, ast.Is, ast.In)):
        return Const(False)
    if isinstance(op, (ast.NotEq, ast.IsNot, ast.NotIn)):
        return Const(True)
    return None


def _compare(op: ast.cmpop, a: Value, b: Value) -> Value:
    if isinstance(a, OneOf) or isinstance(b, OneOf):
        outs = {_compare(op, x, y) for x in alternatives(a) for y in alternatives(b)}
        return outs.pop() if len(outs) == 1 else UNK
    if isinstance(a, EnumV) or isinstance(b, EnumV):
        return _compare_enum(op, a, b)
    if isinstance(op, (ast.In, ast.NotIn)):
        if isinstance(b, Ext) and b.path == "os.environ":
            return Const(isinstance(op, ast.NotIn))
        if isinstance(b, (Seq, DictV)):
            ka, va = _const_of(a)
            consts = [_const_of(i) for i in (b.items if isinstance(b, Seq) else (k for k, _ in b.items))]
            if ka and all(k for k, _ in consts):
                hit = any(va == c for _, c in consts)
                return Const(hit if isinstance(op, ast.In) else not hit)
        ka, va = _const_of(a)
        kb, vb = _const_of(b)
        if ka and kb and isinstance(va, str) and isinstance(vb, str):
            return Const((va in vb) if isinstance(op, ast.In) else (va not in vb))
        return UNK
    other = _other_accelerator_test(op, a, b) or _compare_types(op, a, b)
    if other is not None:
        return other
    if isinstance(op, (ast.Eq, ast.NotEq)) and EXISTING_DEVICE in (a, b):
        s = b if a == EXISTING_DEVICE else a
        if isinstance(s, Const) and isinstance(s.value, str) and device_of(s) is None:
            # `if device == "auto":` with an existing tensor's device: a torch.device never equals such a string
            return Const(isinstance(op, ast.NotEq))
    ka, va = _const_of(a)
    kb, vb = _const_of(b)
    if isinstance(a, DeviceV) and isinstance(b, Const) and isinstance(b.value, str):
        va = a.device
    if ka and kb:
        fn = _CMP.get(type(op))
        if fn is None:
            return UNK
        if isinstance(op, (ast.Is, ast.IsNot)):
            if va is None or vb is None or isinstance(va, bool) or isinstance(vb, bool):
                return Const(fn(va, vb))
            return Const(va == vb if isinstance(op, ast.Is) else va != vb)
        try:
            return Const(bool(fn(va, vb)))
        except TypeError:
            return UNK
    return UNK


def type_path(v: Value) -> str | None:
    """The dotted type of a value the analysis recognises (`torch.float64` -> torch.dtype), else None."""
    if isinstance(v, Const):
        return f"builtins.{type(v.value).__name__}"
    if isinstance(v, DeviceV):
        return "torch.device"
    if isinstance(v, Seq) and v.kind in ("list", "tuple", "set"):
        return f"builtins.{v.kind}"
    if isinstance(v, DictV):
        return "builtins.dict"
    if isinstance(v, Ext) and v.path.count(".") == 1 and v.path.startswith("torch.") and (
            v.path[6:] in TORCH_DTYPE_NAMES):
        return "torch.dtype"
    return None


def _class_path(v: Value) -> str | None:
    if isinstance(v, Ext):
        path = v.path[len(TYPE_PREFIX):] if v.path.startswith(TYPE_PREFIX) else v.path
        return path if path in KNOWN_TYPES else None
    return None


def isinstance_of(v: Value, classes: Value) -> Value:
    """`isinstance(x, torch.Tensor)` for an x of a known type and classes among KNOWN_TYPES."""
    t = type_path(v)
    wanted = [_class_path(c) for c in (classes.items if isinstance(classes, Seq) else (classes,))]
    if t is None or any(w is None for w in wanted):
        return UNK
    hit = t in wanted or (t == "builtins.bool" and "builtins.int" in wanted)
    return Const(hit)


def _compare_types(op: ast.cmpop, a: Value, b: Value) -> Value | None:
    """`type(arg) is torch.device` where type(arg) is known."""
    if not isinstance(op, (ast.Is, ast.IsNot, ast.Eq, ast.NotEq)):
        return None
    if not (isinstance(a, Ext) and a.path.startswith(TYPE_PREFIX) or isinstance(b, Ext) and b.path.startswith(
            TYPE_PREFIX)):
        return None
    pa, pb = _class_path(a), _class_path(b)
    if pa is None or pb is None:
        return None
    return Const((pa == pb) == isinstance(op, (ast.Is, ast.Eq)))


def _compare_enum(op: ast.cmpop, a: Value, b: Value) -> Value:
    """Enum members are singletons; a str/int mixin member also equals its value."""
    if isinstance(a, EnumV) and isinstance(b, EnumV):
        if isinstance(op, (ast.Eq, ast.Is)):
            return Const(a == b)
        if isinstance(op, (ast.NotEq, ast.IsNot)):
            return Const(a != b)
        return UNK
    if isinstance(a, EnumV) and a.mixin and not isinstance(op, (ast.Is, ast.IsNot)):
        return _compare(op, a.value, b)
    if isinstance(b, EnumV) and b.mixin and not isinstance(op, (ast.Is, ast.IsNot)):
        return _compare(op, a, b.value)
    other = b if isinstance(a, EnumV) else a
    if isinstance(other, Const) and isinstance(op, (ast.Eq, ast.Is, ast.NotEq, ast.IsNot)):
        return Const(isinstance(op, (ast.NotEq, ast.IsNot)))
    return UNK


ENUM_BASES = {"Enum": "", "IntEnum": "int", "StrEnum": "str", "Flag": "", "IntFlag": "int", "ReprEnum": "value"}


class Interp:
    """The interpreter. One per analysis run; all memo tables live here (no module-level state)."""

    def __init__(self, source: ModuleSource) -> None:
        self.source = source
        self.modules: dict[tuple[str, int], ModuleState] = {}
        self.calls: dict[tuple[Any, ...], CallResult] = {}
        self.active: set[tuple[Any, ...]] = set()
        self.class_bodies: dict[tuple[ClassV, int], dict[str, Value]] = {}
        self.mros: dict[tuple[ClassV, int], tuple[Value, ...]] = {}
        self.used_modules: set[str] = set()
        self.fixture_hook: Callable[[str, Frame], Value] | None = None
        self.param_classes: set[ClassV] = set()  # instantiate_parametrized_tests(cls)
        # the `parameterized` package's @parameterized_class: generated class -> the attributes it sets;
        # the decorated original keeps only inherited tests (the package deletes its own test* methods)
        self.class_overrides: dict[ClassV, tuple[tuple[str, Value], ...]] = {}
        self.emptied_classes: set[ClassV] = set()
        self.enum_kinds: dict[tuple[ClassV, int], str | None] = {}
        self.steps = 0  # spent in the current budget (see CASE_BUDGET)
        self.limit = FILE_BUDGET

    # -- budgets -----------------------------------------------------------------------------------
    def charge(self, n: int) -> None:
        self.steps += n
        if self.steps > self.limit:
            raise BudgetExceeded(self.limit)

    def budgeted(self, limit: int, fn: Callable[..., Any], *args: Any) -> tuple[Any, int]:
        """fn(*args) under a fresh budget of `limit` steps: (its result, the steps it took). The enclosing
        budget is not charged; BudgetExceeded propagates."""
        saved = self.steps, self.limit
        self.steps, self.limit = 0, limit
        try:
            out = fn(*args)
            return out, self.steps
        finally:
            self.steps, self.limit = saved

    # -- modules -------------------------------------------------------------------------------
    def module_state(self, rel: str, world: int) -> ModuleState:
        """Top-level statements of `rel` run once per world; cycles see the partial namespace."""
        key = (rel, world)
        st = self.modules.get(key)
        if st is not None:
            return st
        st = ModuleState({}, [], [])
        self.modules[key] = st
        parsed = self.source.module(rel)
        if parsed.tree is not None:
            frame = Frame(rel, world, st.env, None, st.findings)
            try:
                self.budgeted(UNIT_BUDGET, self.exec_block, parsed.tree.body, frame)
            except RecursionError:
                st.findings.append(Finding(UNKNOWN, (step(rel, 1, "module too deeply nested to analyse"),)))
            except BudgetExceeded as exc:
                st.findings.append(Finding(UNKNOWN, (step(rel, 1, f"module top level: {exc}"),)))
        st.done = True
        return st

    def module_attr(self, rel: str, name: str, world: int, dotted: str = "") -> Value:
        st = self.module_state(rel, world)
        if name in st.env:
            return st.env[name]
        for star in st.stars:
            if isinstance(star, ModV) and star.rel and star.rel != rel:
                v = self.module_attr(star.rel, name, world)
                if not isinstance(v, Unknown):
                    return v
            elif isinstance(star, Ext):
                return self.ext_value(f"{star.path}.{name}", world)
        if dotted:
            sub = self.source.resolve_import(f"{dotted}.{name}", rel, 0, "")
            if sub:
                return ModV(sub, f"{dotted}.{name}", rel)
        return UNK

    def ext_value(self, path: str, world: int) -> Value:
        """An external name; machine-dependent well-known constants get their value in this world."""
        q = torch_api.query_value(path, world) if path.startswith("torch.version") else NotImplemented
        if q is not NotImplemented:
            return Const(q)
        last = path.rsplit(".", 1)[-1]
        if "." in path and not path.startswith(("pytest.", "unittest.", "torch.cuda", "torch.nn", "os.")):
            kv = conventions.known_value(last, world)
            if kv is not NotImplemented:
                return Const(kv)
            if last in conventions.DEVICE_LIST_HELPERS:
                return Ext(f"<devices>.{last}")
        return Ext(path)

    # -- name lookup -------------------------------------------------------------------------------
    def lookup(self, name: str, frame: Frame) -> Value:
        if name in frame.env:
            return frame.env[name]
        if name in frame.captured:
            return frame.captured[name]
        st = self.module_state(frame.rel, frame.world)
        if name in st.env:
            return st.env[name]
        ext_star: Ext | None = None
        for star in st.stars:
            if isinstance(star, ModV) and star.rel and star.rel != frame.rel:
                v = self.module_attr(star.rel, name, frame.world)
                if not isinstance(v, Unknown):
                    return v
            elif isinstance(star, Ext):
                v = self.ext_value(f"{star.path}.{name}", frame.world)
                if not isinstance(v, Ext):
                    return v
                ext_star = ext_star or v
        if name in BUILTIN_NAMES:
            return Ext(f"builtins.{name}")
        return ext_star if ext_star is not None else UNK

    # -- statements --------------------------------------------------------------------------------
    def exec_block(self, body: list[ast.stmt], frame: Frame) -> bool:
        """Run statements; True when every path ends (return, raise, skip)."""
        for stmt in body:
            if self.exec_stmt(stmt, frame):
                return True
        return False

    def _branch(self, frame: Frame) -> Frame:
        return Frame(frame.rel, frame.world, dict(frame.env), frame.module_env, frame.findings, frame.depth,
                     frame.returns, frame.self_name, frame.cls, frame.captured)

    def _merge(self, frame: Frame, branches: list[tuple[Frame, bool]]) -> bool:
        live = [b for b, ended in branches if not ended]
        if not live:
            return True
        keys = sorted(set().union(*(b.env.keys() for b in live)))
        merged: dict[str, Value] = {}
        for k in keys:
            vals = [b.env[k] for b in live if k in b.env]
            merged[k] = join_all(vals)
        frame.env.clear()
        frame.env.update(merged)
        return False

    def exec_stmt(self, s: ast.stmt, frame: Frame) -> bool:
        self.steps += 1
        if self.steps > self.limit:
            raise BudgetExceeded(self.limit)
        if isinstance(s, ast.Expr):
            v = self.ev(s.value, frame)
            return isinstance(v, NoReturn)
        if isinstance(s, ast.Assign):
            v = self.ev(s.value, frame)
            for t in s.targets:
                self.bind(t, v, frame)
            return isinstance(v, NoReturn)
        if isinstance(s, ast.AnnAssign):
            if s.value is not None:
                self.bind(s.target, self.ev(s.value, frame), frame)
            return False
        if isinstance(s, ast.AugAssign):
            cur = self.ev(s.target, frame) if _mutable_target(s.target) else UNK
            rhs = self.ev(s.value, frame)
            self.bind(s.target, self._binop(s.op, cur, rhs), frame)
            return False
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
            fv = self.make_function(s, frame)
            value: Value = fv
            if frame.module_env is not None and not is_fixture_def(s):
                # a nested def (wrapper closures): in-repo decorators are followed
                for d in reversed(s.decorator_list):
                    dv = self.ev(d, frame)
                    if isinstance(dv, FuncV):
                        r = self.call(dv, [value], {}, d, frame, "decorator")
                        value = r if isinstance(r, FuncV) else value
            frame.env[s.name] = value
            return False
        if isinstance(s, ast.ClassDef):
            cv = ClassV(frame.rel, (s.lineno, s.col_offset), s.name)
            frame.env[s.name] = cv
            if any(_last_name(d) == "instantiate_parametrized_tests" for d in s.decorator_list):
                self.param_classes.add(cv)
            for d in s.decorator_list:
                if isinstance(d, ast.Call) and _last_name(d) == "parameterized_class":
                    self._parameterized_class(cv, d, frame)
            return False
        if isinstance(s, ast.Return):
            frame.returns.append(self.ev(s.value, frame) if s.value is not None else Const(None))
            return True
        if isinstance(s, ast.If):
            t = truth(self.ev(s.test, frame))
            if t is True:
                return self.exec_block(s.body, frame)
            if t is False:
                return self.exec_block(s.orelse, frame)
            a, b = self._branch(frame), self._branch(frame)
            ea = self.exec_block(s.body, a)
            eb = self.exec_block(s.orelse, b)
            return self._merge(frame, [(a, ea), (b, eb)])
        if isinstance(s, (ast.For, ast.AsyncFor)):
            it = self.ev(s.iter, frame)
            if isinstance(it, ClassV):
                it = self.enum_members(it, frame.world) or it
            if isinstance(it, Seq) and it.kind in ("range", "tuple") and not it.items:
                # `for i in range(torch.cuda.device_count()):` runs no iteration on a CPU-only machine; nor does
                # `for a in args:` with no positional arguments (a list may have been filled by a callee)
                return self.exec_block(s.orelse, frame)
            if isinstance(it, Seq) and 0 < len(it.items) <= MAX_UNROLL and _grows_containers(s):
                # `for d in ("cpu", "cuda"): if ...: devices.append(d)`: each iteration in turn, so that the
                # container ends up with exactly the elements appended
                for item in it.items:
                    self.bind(s.target, item.values[0] if isinstance(item, ParamV) and len(item.values) == 1
                              else item, frame)
                    if self.exec_block(s.body, frame):
                        return True
                return self.exec_block(s.orelse, frame)
            elem: Value = UNK
            if isinstance(it, Seq) and it.items:
                elem = join_all([i.values[0] if isinstance(i, ParamV) and len(i.values) == 1 else i
                                 for i in it.items])
            elif isinstance(it, DictV) and it.items:
                elem = join_all([k for k, _ in it.items])
            loop = self._branch(frame)
            self.bind(s.target, elem, loop)
            ended = self.exec_block(s.body, loop)
            self._merge(frame, [(frame, False), (loop, ended)])
            self.exec_block(s.orelse, frame)
            return False
        if isinstance(s, ast.While):
            t = truth(self.ev(s.test, frame))
            if t is False:
                return self.exec_block(s.orelse, frame)
            loop = self._branch(frame)
            ended = self.exec_block(s.body, loop)
            self._merge(frame, [(frame, False), (loop, ended)])
            return False
        if isinstance(s, (ast.With, ast.AsyncWith)):
            for item in s.items:
                cv = self.ev(item.context_expr, frame)
                d = accel_device(cv) if isinstance(cv, DeviceV) else None
                if d:
                    frame.add(Finding(GPU, (step(frame.rel, s.lineno, f"with torch.device({d!r}) makes {d} the "
                                                                  "default device"),), gpu_count_of(d)))
                if item.optional_vars is not None:
                    self.bind(item.optional_vars, cv if isinstance(cv, (DeviceV, Inst)) else UNK, frame)
            return self.exec_block(s.body, frame)
        if isinstance(s, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            body = self._branch(frame)
            body.findings = []
            ended = self.exec_block(s.body, body)
            swallowed = _swallows_device_errors(s)
            for f in body.findings:
                # `try: torch.tensor(0, device=i) except Exception: continue` cannot fail the test
                if not (swallowed and f.kind in (GPU, UNKNOWN)):
                    frame.add(f)
            body.findings = frame.findings
            if not ended:
                ended = self.exec_block(s.orelse, body)
            branches = [(body, ended)]
            for h in s.handlers:
                hf = self._branch(frame)
                if h.name:
                    hf.env[h.name] = UNK
                branches.append((hf, self.exec_block(h.body, hf)))
            ended_all = self._merge(frame, branches)
            fin = self.exec_block(s.finalbody, frame)
            return ended_all or fin
        if isinstance(s, ast.Raise):
            if s.exc is not None:
                v = self.ev(s.exc, frame)
                if isinstance(v, Ext) and v.path.endswith(("SkipTest()", "Skipped()", "skip.Exception()")):
                    frame.add(Finding(SKIP, (step(frame.rel, s.lineno, "raises SkipTest"),),
                                      key=f"{frame.rel}:{s.lineno}"))
            return True
        if isinstance(s, (ast.Import, ast.ImportFrom)):
            self.do_import(s, frame)
            return False
        if isinstance(s, ast.Assert):
            self.ev(s.test, frame)
            return False
        if isinstance(s, ast.Match):
            self.ev(s.subject, frame)
            branches = []
            for case in s.cases:
                b = self._branch(frame)
                branches.append((b, self.exec_block(case.body, b)))
            branches.append((self._branch(frame), False))
            return self._merge(frame, branches)
        if isinstance(s, ast.Delete):
            for t in s.targets:
                if isinstance(t, ast.Name):
                    frame.env.pop(t.id, None)
            return False
        return False

    def _parameterized_class(self, cv: ClassV, d: ast.Call, frame: Frame) -> None:
        """`@parameterized_class(attrs, input_values, class_name_func=...)`: binds `<Name>_<i>[_<suffix>]`
        classes carrying the attributes (names as the package's default_class_name_func makes them)."""
        args = [self.ev(a, frame) for a in d.args]
        kwargs = {k.arg: self.ev(k.value, frame) for k in d.keywords if k.arg}
        attrs = args[0] if args else kwargs.get("attrs", UNK)
        values = args[1] if len(args) > 1 else kwargs.get("input_values")
        name_func = kwargs.get("class_name_func") or kwargs.get("classname_func")
        dicts: list[tuple[tuple[str, Value], ...]] = []
        if values is None or (isinstance(values, Const) and values.value is None):
            if not isinstance(attrs, Seq):
                return
            for item in attrs.items:
                if not isinstance(item, DictV) or not all(isinstance(k, Const) and isinstance(k.value, str)
                                                          for k, _ in item.items):
                    return
                dicts.append(tuple((str(k.value), v) for k, v in item.items if isinstance(k, Const)))
        else:
            if isinstance(attrs, Const) and isinstance(attrs.value, str):
                attrs = Seq((attrs,), "tuple")
            if not isinstance(attrs, Seq) or not isinstance(values, Seq) or not all(
                    isinstance(a, Const) and isinstance(a.value, str) for a in attrs.items):
                return
            names = [str(a.value) for a in attrs.items if isinstance(a, Const)]
            for item in values.items:
                if not isinstance(item, Seq):
                    return
                dicts.append(tuple(zip(names, item.items, strict=False)))
        self.emptied_classes.add(cv)
        for num, params in enumerate(dicts):
            if name_func is not None and not (isinstance(name_func, Const) and name_func.value is None):
                got = self.call(name_func, [cv, Const(num), DictV(tuple((Const(k), v) for k, v in params))], {}, d,
                                frame, "class_name_func")
                if not (isinstance(got, Const) and isinstance(got.value, str)):
                    continue
                name = got.value
            else:
                given = dict(params)
                first = given.get("name") or next((v for _, v in params if isinstance(v, Const) and isinstance(
                    v.value, str)), Const(""))
                suffix = _safe_name(str(first.value)) if isinstance(first, Const) and isinstance(first.value, str) \
                    else ""
                name = f"{cv.name}_{num}" + (f"_{suffix}" if suffix else "")
            gen = ClassV(cv.rel, cv.pos, name)
            self.class_overrides[gen] = params
            frame.env[name] = gen

    def make_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda, frame: Frame) -> FuncV:
        pos = (node.lineno, node.col_offset)
        if isinstance(node, ast.Lambda):
            self.source.module(frame.rel).defs.setdefault(pos, node)  # lambdas are indexed when met
        name = getattr(node, "name", "<lambda>")
        if frame.module_env is None:
            return FuncV(frame.rel, pos, name, cls=frame.cls)
        # a closure: capture the enclosing locals it can see (values only, hashable)
        captured = dict(frame.captured)
        captured.update(frame.env)
        names = _free_names(node)
        cap = tuple(sorted((k, v) for k, v in captured.items() if k in names and _hashable(v)))
        return FuncV(frame.rel, pos, name, captured=cap, cls=frame.cls)

    def do_import(self, s: ast.Import | ast.ImportFrom, frame: Frame) -> None:
        rel = frame.rel
        if isinstance(s, ast.Import):
            for a in s.names:
                target = self.source.resolve_import(a.name, rel, 0, "")
                if a.asname:
                    frame.env[a.asname] = ModV(target, a.name, rel) if target or self.source.is_package_dir(
                        a.name) else Ext(a.name)
                    if target:
                        self._import_effects(target, s.lineno, frame)
                else:
                    top = a.name.split(".", 1)[0]
                    t_top = self.source.resolve_import(top, rel, 0, "")
                    frame.env[top] = ModV(t_top, top, rel) if t_top or self.source.is_package_dir(top) else Ext(top)
                    if target:
                        self._import_effects(target, s.lineno, frame)
            return
        mod_rel = self.source.resolve_import(s.module or "", rel, s.level, s.module or "")
        dotted = s.module or ""
        in_repo = mod_rel is not None or (s.level > 0) or (dotted and self.source.is_package_dir(dotted))
        if mod_rel:
            self._import_effects(mod_rel, s.lineno, frame)
        for a in s.names:
            if a.name == "*":
                st = self.modules.get((rel, frame.world))
                if st is not None:
                    st.stars.append(ModV(mod_rel, dotted, rel) if in_repo else Ext(dotted))
                continue
            bind_as = a.asname or a.name
            if in_repo:
                sub = self.source.resolve_import(f"{dotted}.{a.name}" if dotted else a.name, rel, s.level,
                                                 f"{dotted}.{a.name}" if dotted else a.name)
                if mod_rel and mod_rel != sub:
                    v = self.module_attr(mod_rel, a.name, frame.world)
                    if isinstance(v, Unknown) and sub:
                        v = ModV(sub, f"{dotted}.{a.name}", rel)
                elif sub:
                    v = ModV(sub, f"{dotted}.{a.name}", rel)
                    self._import_effects(sub, s.lineno, frame)
                else:
                    v = UNK
                frame.env[bind_as] = v
            else:
                frame.env[bind_as] = self.ext_value(f"{dotted}.{a.name}", frame.world)

    def _import_effects(self, target: str, line: int, frame: Frame) -> None:
        self.used_modules.add(target)
        if frame.module_env is not None or target == frame.rel:
            return
        st = self.module_state(target, frame.world)
        for f in st.findings:
            if f.kind in (GPU, SKIP):
                frame.add(f.prefixed(step(frame.rel, line, f"imports {target}")))

    def bind(self, target: ast.expr, v: Value, frame: Frame) -> None:
        if isinstance(target, ast.Name):
            frame.env[target.id] = v
        elif isinstance(target, (ast.Tuple, ast.List)):
            items = v.items if isinstance(v, Seq) and len(v.items) == len(target.elts) else None
            for i, t in enumerate(target.elts):
                if isinstance(t, ast.Starred):
                    self.bind(t.value, UNK, frame)
                else:
                    self.bind(t, items[i] if items else UNK, frame)
        elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
            owner = target.value.id
            cur = frame.env.get(owner)
            if isinstance(cur, Inst) and _hashable(v):
                frame.env[owner] = bounded(cur.with_attr(target.attr, bounded(v)))

    # -- expressions -------------------------------------------------------------------------------
    def ev(self, node: ast.expr | None, frame: Frame) -> Value:
        if node is None:
            return Const(None)
        self.steps += 1
        if self.steps > self.limit:
            raise BudgetExceeded(self.limit)
        m = getattr(self, "ev_" + type(node).__name__, None)
        if m is None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.expr):
                    self.ev(child, frame)
            return UNK
        return m(node, frame)

    def ev_Constant(self, n: ast.Constant, frame: Frame) -> Value:
        return UNK if n.value is Ellipsis else Const(n.value)

    def ev_Name(self, n: ast.Name, frame: Frame) -> Value:
        return self.lookup(n.id, frame)

    def ev_NamedExpr(self, n: ast.NamedExpr, frame: Frame) -> Value:
        v = self.ev(n.value, frame)
        self.bind(n.target, v, frame)
        return v

    def ev_Tuple(self, n: ast.Tuple, frame: Frame) -> Value:
        return self._seq(n.elts, "tuple", frame)

    def ev_List(self, n: ast.List, frame: Frame) -> Value:
        return self._seq(n.elts, "list", frame)

    def ev_Set(self, n: ast.Set, frame: Frame) -> Value:
        return self._seq(n.elts, "set", frame)

    def _seq(self, elts: list[ast.expr], kind: str, frame: Frame) -> Value:
        items: list[Value] = []
        exact = True
        for e in elts:
            if isinstance(e, ast.Starred):
                inner = self.ev(e.value, frame)
                if isinstance(inner, Seq):
                    items.extend(inner.items)
                else:
                    exact = False
            else:
                items.append(self.ev(e, frame))
        return bounded(Seq(tuple(items), kind)) if exact else UNK

    def ev_Dict(self, n: ast.Dict, frame: Frame) -> Value:
        items = []
        for k, v in zip(n.keys, n.values, strict=False):
            vv = self.ev(v, frame)
            if k is None:
                return UNK
            items.append((self.ev(k, frame), vv))
        return bounded(DictV(tuple(items)))

    def ev_JoinedStr(self, n: ast.JoinedStr, frame: Frame) -> Value:
        parts: list[str] = []
        exact = True
        for v in n.values:
            if isinstance(v, ast.Constant):
                parts.append(str(v.value))
            elif isinstance(v, ast.FormattedValue):
                inner = self.ev(v.value, frame)
                dt = torch_testing.dtype_name(inner)
                if dt and v.format_spec is None and v.conversion in (-1, ord("s")):
                    parts.append(f"torch.{dt}")  # str(torch.float) == "torch.float32"
                elif isinstance(inner, Const) and v.format_spec is None and v.conversion == -1:
                    parts.append(str(inner.value))
                else:
                    parts.append("?")
                    exact = False
        s = "".join(parts)
        if exact:
            return Const(s)
        kind = s.split(":", 1)[0].lower()
        return Const(s) if kind in torch_api.ACCELERATORS else UNK

    def ev_IfExp(self, n: ast.IfExp, frame: Frame) -> Value:
        t = truth(self.ev(n.test, frame))
        if t is True:
            return self.ev(n.body, frame)
        if t is False:
            return self.ev(n.orelse, frame)
        return join(self.ev(n.body, frame), self.ev(n.orelse, frame))

    def ev_BoolOp(self, n: ast.BoolOp, frame: Frame) -> Value:
        """`a and b` / `a or b`: a definitely deciding operand wins; its value keeps the right truth."""
        decisive = not isinstance(n.op, ast.And)
        undecided = False
        v: Value = UNK
        for e in n.values:
            v = self.ev(e, frame)
            t = truth(v)
            if t is decisive:
                return v
            if t is None:
                undecided = True
        return UNK if undecided else v

    def ev_UnaryOp(self, n: ast.UnaryOp, frame: Frame) -> Value:
        v = self.ev(n.operand, frame)
        if isinstance(n.op, ast.Not):
            t = truth(v)
            return Const(not t) if t is not None else UNK
        if isinstance(v, Const) and isinstance(v.value, (int, float, complex)) and not isinstance(v.value, bool):
            if isinstance(n.op, ast.USub):
                return Const(-v.value)
            if isinstance(n.op, ast.UAdd):
                return v
        return UNK

    def ev_Compare(self, n: ast.Compare, frame: Frame) -> Value:
        left = self.ev(n.left, frame)
        result: Value = Const(True)
        for op, comp in zip(n.ops, n.comparators, strict=False):
            right = self.ev(comp, frame)
            r = _compare(op, left, right)
            t = truth(r)
            if t is False:
                return Const(False)
            if t is None:
                result = UNK
            left = right
        return result

    def _binop(self, op: ast.operator, a: Value, b: Value) -> Value:
        if isinstance(a, Const) and isinstance(b, Const):
            fn = _BIN.get(type(op))
            if fn is not None:
                try:
                    r = fn(a.value, b.value)
                except Exception:  # noqa: BLE001 - any arithmetic error just means "unknown"
                    return UNK
                if isinstance(r, (str, int, float, bool, bytes)) and (not isinstance(r, str) or len(r) < 200):
                    return Const(r)
        if isinstance(a, Seq) and isinstance(b, Seq) and isinstance(op, ast.Add):
            return bounded(Seq(a.items + b.items, a.kind))
        if isinstance(a, Const) and isinstance(a.value, str) and isinstance(op, ast.Add):
            kind = a.value.split(":", 1)[0].lower()
            if kind in torch_api.ACCELERATORS:
                return Const(a.value + "?")
        return UNK

    def ev_BinOp(self, n: ast.BinOp, frame: Frame) -> Value:
        return self._binop(n.op, self.ev(n.left, frame), self.ev(n.right, frame))

    def ev_Subscript(self, n: ast.Subscript, frame: Frame) -> Value:
        obj = self.ev(n.value, frame)
        idx = self.ev(n.slice, frame)
        if isinstance(obj, Seq) and isinstance(idx, Const) and isinstance(idx.value, int):
            try:
                return obj.items[idx.value]
            except IndexError:
                return UNK
        if isinstance(obj, DictV) and isinstance(idx, Const):
            for k, v in obj.items:
                if k == idx:
                    return v
        return UNK

    def ev_Lambda(self, n: ast.Lambda, frame: Frame) -> Value:
        return self.make_function(n, frame)

    def ev_Await(self, n: ast.Await, frame: Frame) -> Value:
        return self.ev(n.value, frame)

    def ev_Yield(self, n: ast.Yield, frame: Frame) -> Value:
        frame.returns.append(self.ev(n.value, frame) if n.value is not None else Const(None))
        return UNK

    def ev_YieldFrom(self, n: ast.YieldFrom, frame: Frame) -> Value:
        self.ev(n.value, frame)
        return UNK

    def ev_Starred(self, n: ast.Starred, frame: Frame) -> Value:
        return self.ev(n.value, frame)

    def _comprehension(self, n: Any, elts: list[ast.expr], frame: Frame) -> Value:
        listed = self._listed_comprehension(n, elts, frame)
        if listed is not None:
            return listed
        inner = self._branch(frame)
        for gen in n.generators:
            it = self.ev(gen.iter, inner)
            if isinstance(it, Seq) and it.kind == "range" and not it.items:
                return Seq((), "list")  # nothing is evaluated: `[... for i in range(device_count())]` on a CPU
            elem = join_all(list(it.items)) if isinstance(it, Seq) and it.items else UNK
            self.bind(gen.target, elem, inner)
            for cond in gen.ifs:
                self.ev(cond, inner)
        vals = [self.ev(e, inner) for e in elts]
        # `[x.to("cuda") for x in xs]` keeps its device; `next(t.device for t in args)` is an existing tensor's
        keep = len(vals) == 1 and (accel_device(vals[0]) or isinstance(vals[0], DeviceV) or vals[0] == EXISTING_DEVICE)
        return Seq((vals[0],), "list") if keep else UNK

    def _listed_comprehension(self, n: Any, elts: list[ast.expr], frame: Frame) -> Value | None:
        """`[item for item in range(10)]`, `[f"k{i}" for i in (1, 2)]` (fixture params, parametrize values): one
        generator over known constants whose elements come out constant is evaluated element by element."""
        if len(elts) != 1 or len(n.generators) != 1 or n.generators[0].ifs or n.generators[0].is_async:
            return None
        gen = n.generators[0]
        it = self.ev(gen.iter, frame)
        if not isinstance(it, Seq) or not it.items or len(it.items) > 64 or not all(
                isinstance(i, Const) for i in it.items):
            return None
        vals: list[Value] = []
        for item in it.items:
            inner = self._branch(frame)
            self.bind(gen.target, item, inner)
            v = self.ev(elts[0], inner)
            if not isinstance(v, Const):
                return None
            vals.append(v)
        return Seq(tuple(vals), "list")

    def ev_ListComp(self, n: ast.ListComp, frame: Frame) -> Value:
        return self._comprehension(n, [n.elt], frame)

    def ev_SetComp(self, n: ast.SetComp, frame: Frame) -> Value:
        return self._comprehension(n, [n.elt], frame)

    def ev_GeneratorExp(self, n: ast.GeneratorExp, frame: Frame) -> Value:
        return self._comprehension(n, [n.elt], frame)

    def ev_DictComp(self, n: ast.DictComp, frame: Frame) -> Value:
        self._comprehension(n, [n.key, n.value], frame)
        return UNK

    def ev_Attribute(self, n: ast.Attribute, frame: Frame) -> Value:
        obj = self.ev(n.value, frame)
        if n.attr == "device" and isinstance(obj, Unknown) and _device_of_existing(n):
            return EXISTING_DEVICE
        return self.getattr_v(obj, n.attr, frame, n)

    def getattr_v(self, obj: Value, name: str, frame: Frame, node: ast.AST) -> Value:
        if isinstance(obj, OneOf) and all(isinstance(a, Inst) for a in obj.alts):
            # `if ...: self.buffer_class = A else: self.buffer_class = B` leaves two objects: read from each
            return join_all([self.getattr_v(a, name, frame, node) for a in alternatives(obj)])
        if isinstance(obj, Ext):
            if obj.path.startswith("<devices>"):
                return UNK
            if obj.path.startswith(DYNAMIC):
                return UNK  # a method of a looked-up value dispatches on its type, like any unknown object's
            return self.ext_value(f"{obj.path}.{name}", frame.world)
        if isinstance(obj, ModV):
            if obj.rel:
                return self.module_attr(obj.rel, name, frame.world, obj.dotted)
            sub = self.source.resolve_import(f"{obj.dotted}.{name}", obj.importer, 0, "")
            if sub or self.source.is_package_dir(f"{obj.dotted}.{name}"):
                return ModV(sub, f"{obj.dotted}.{name}", obj.importer)
            return UNK
        if isinstance(obj, Inst):
            v = obj.attr(name)
            if v is not None:
                return v
            found = self.class_lookup(obj.cls, name, frame.world)
            if isinstance(found, FuncV):
                bound = FuncV(found.rel, found.pos, found.name, bound=obj, captured=found.captured, cls=found.cls)
                if self._is_property(found):
                    return self.call_function_from(bound, [], {}, getattr(node, "lineno", 0), frame)
                return bound
            return found if found is not None else UNK
        if isinstance(obj, EnumV):
            if name == "value":
                return obj.value
            if name == "name":
                return Const(obj.name)
            return UNK
        if isinstance(obj, ClassV):
            member = self.enum_member(obj, name, frame.world)
            if member is not None:
                return member
            found = self.class_lookup(obj, name, frame.world)
            if found is None and name in ("__name__", "__qualname__"):
                return Const(obj.name)
            return found if found is not None else UNK
        if isinstance(obj, SuperV):
            mro = self.mro(obj.cls, frame.world)
            first_ext: Ext | None = None
            for c in mro[1:]:
                if isinstance(c, ClassV):
                    body = self.class_body(c, frame.world)
                    if name in body:
                        v = body[name]
                        if isinstance(v, FuncV):
                            bound = FuncV(v.rel, v.pos, v.name, bound=obj.obj, captured=v.captured, cls=v.cls)
                            if self._is_property(v):
                                return self.call_function_from(bound, [], {}, getattr(node, "lineno", 0), frame)
                            return bound
                        return v
                elif isinstance(c, Ext) and first_ext is None:
                    # an external base (often a mixin) before an in-repo class: prefer the in-repo definition
                    first_ext = Ext(f"{c.path}.{name}")
            return first_ext if first_ext is not None else UNK
        if isinstance(obj, (TensorV, DeviceV)):
            if name == "device":
                return DeviceV(obj.device)
            if name == "type":
                return Const(obj.device.split(":", 1)[0])
            if name == "is_cuda":
                return Const(obj.device.startswith("cuda"))
            if name == "index" and isinstance(obj, DeviceV):
                return Const(torch_api.device_index(obj.device))
            return UNK
        if isinstance(obj, RequestV) and name == "param":
            return obj.param
        if isinstance(obj, (FuncV, ClassV)) and name in ("__name__", "__qualname__"):
            return Const(obj.name)
        return UNK

    # -- classes -----------------------------------------------------------------------------------
    def enum_kind(self, cls: ClassV, world: int) -> str | None:
        """None: not an Enum; else "" (plain), "int"/"str" (IntEnum/StrEnum: str() is the value's), or
        "builtins.str"/"builtins.int"/... (`class E(str, Enum)`: compares like its value, str() is `E.NAME`)."""
        if (cls, world) in self.enum_kinds:
            return self.enum_kinds[(cls, world)]
        self.enum_kinds[(cls, world)] = None  # a cycle through the MRO: not an Enum
        kind: str | None = None
        mixin = ""
        for c in self.mro(cls, world):
            if isinstance(c, Ext):
                last = c.path.rsplit(".", 1)[-1]
                if c.path.startswith("enum.") and last in ENUM_BASES and kind is None:
                    kind = ENUM_BASES[last]
                elif c.path in ("builtins.str", "builtins.int", "builtins.float"):
                    mixin = mixin or c.path
        got = None if kind is None else mixin if mixin and not kind else kind
        self.enum_kinds[(cls, world)] = got
        return got

    def enum_member(self, cls: ClassV, name: str, world: int) -> EnumV | None:
        if name.startswith("_"):
            return None
        node = self.class_node(cls)
        if node is None or not any(isinstance(s, (ast.Assign, ast.AnnAssign)) for s in node.body):
            return None
        body = self.class_body(cls, world)
        if name not in body or isinstance(body[name], (FuncV, ClassV)):
            return None
        kind = self.enum_kind(cls, world)
        if kind is None:
            return None
        value = body[name]
        text = f"{cls.name}.{name}"
        if kind in ("int", "str", "value") and isinstance(value, Const):
            text = str(value.value)
        custom = self.class_lookup(cls, "__str__", world)
        member = EnumV(cls, name, value, text, kind != "")
        if isinstance(custom, FuncV):
            got = self.call_function(FuncV(custom.rel, custom.pos, custom.name, bound=member, cls=custom.cls), [],
                                     {}, world, 1).value
            text = str(got.value) if isinstance(got, Const) and isinstance(got.value, str) else text
        # pytest tests `isinstance(val, str)` before Enum: a str-mixin member is id'd by its (escaped) value
        pid = text
        if kind in ("str", "builtins.str") and isinstance(value, Const) and isinstance(value.value, str):
            pid = value.value
        return EnumV(cls, name, value, text, kind != "", pid)

    def enum_members(self, cls: ClassV, world: int) -> Seq | None:
        """`list(Color)`, `for c in Color`: the members in definition order."""
        node = self.class_node(cls)
        if node is None or self.enum_kind(cls, world) is None:
            return None
        names = [t.id for s in node.body if isinstance(s, (ast.Assign, ast.AnnAssign))
                 for t in (s.targets if isinstance(s, ast.Assign) else [s.target]) if isinstance(t, ast.Name)]
        members = [m for m in (self.enum_member(cls, n, world) for n in dict.fromkeys(names)) if m is not None]
        return Seq(tuple(members), "list")

    def class_node(self, cls: ClassV) -> ast.ClassDef | None:
        node = self.source.module(cls.rel).defs.get(cls.pos)
        return node if isinstance(node, ast.ClassDef) else None

    def class_body(self, cls: ClassV, world: int) -> dict[str, Value]:
        key = (cls, world)
        got = self.class_bodies.get(key)
        if got is not None:
            return got
        env: dict[str, Value] = {}
        self.class_bodies[key] = env
        node = self.class_node(cls)
        if node is not None:
            frame = Frame(cls.rel, world, env, self.module_state(cls.rel, world).env, [], cls=cls)
            for s in node.body:
                if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    if s.name in env and any(isinstance(d, ast.Attribute) and d.attr in ("setter", "deleter")
                                             for d in s.decorator_list):
                        continue  # `@x.setter`: the attribute stays the property's getter
                    env[s.name] = FuncV(cls.rel, (s.lineno, s.col_offset), s.name, cls=cls)
                elif isinstance(s, ast.ClassDef):
                    env[s.name] = ClassV(cls.rel, (s.lineno, s.col_offset), s.name)
                else:
                    try:
                        self.budgeted(UNIT_BUDGET, self.exec_stmt, s, frame)
                    except (RecursionError, BudgetExceeded):
                        pass
        env.update(self.class_overrides.get(cls, ()))
        return env

    def bases(self, cls: ClassV, world: int) -> list[Value]:
        node = self.class_node(cls)
        if node is None:
            return []
        frame = Frame(cls.rel, world, {}, self.module_state(cls.rel, world).env, [])
        out: list[Value] = []
        for b in node.bases:
            v = self.ev(b, frame)
            if isinstance(b, ast.Subscript):  # Generic[T], Base[...]
                v = self.ev(b.value, frame)
            if isinstance(v, (ClassV, Ext)):
                out.append(v)
            elif isinstance(v, OneOf):
                out.extend(a for a in alternatives(v) if isinstance(a, (ClassV, Ext)))
        return out

    def mro(self, cls: ClassV, world: int) -> tuple[Value, ...]:
        """C3 linearisation over in-repo classes (external bases are leaves)."""
        key = (cls, world)
        got = self.mros.get(key)
        if got is not None:
            return got
        self.mros[key] = (cls,)  # cycle guard
        seqs: list[list[Value]] = []
        try:
            bases = self.budgeted(UNIT_BUDGET, self.bases, cls, world)[0]
        except BudgetExceeded:
            bases = []
        for b in bases:
            seqs.append(list(self.mro(b, world)) if isinstance(b, ClassV) else [b])
        seqs.append(list(bases))
        out: list[Value] = [cls]
        while True:
            seqs = [s for s in seqs if s]
            if not seqs:
                break
            for s in seqs:
                head = s[0]
                if not any(head in t[1:] for t in seqs):
                    break
            else:  # inconsistent: fall back to depth-first order
                for s in seqs:
                    for c in s:
                        if c not in out:
                            out.append(c)
                break
            out.append(head)
            seqs = [t[1:] if t[0] == head else t for t in seqs]
        result = tuple(out)
        self.mros[key] = result
        return result

    def class_lookup(self, cls: ClassV, name: str, world: int) -> Value | None:
        for c in self.mro(cls, world):
            if isinstance(c, ClassV):
                body = self.class_body(c, world)
                if name in body:
                    return body[name]
        return None

    # -- calls -------------------------------------------------------------------------------------
    def ev_Call(self, n: ast.Call, frame: Frame) -> Value:
        f = n.func
        args: list[Value] = []
        for a in n.args:
            v = self.ev(a, frame)
            if isinstance(a, ast.Starred):
                if isinstance(v, Seq):
                    args.extend(v.items)
                else:
                    args.append(UNK)
            else:
                args.append(v)
        kwargs: dict[str, Value] = {}
        for k in n.keywords:
            v = self.ev(k.value, frame)
            if k.arg is not None:
                kwargs[k.arg] = v
            elif isinstance(v, DictV):  # `f(**kwargs)` forwarding keyword arguments the analysis knows
                kwargs.update((str(kk.value), vv) for kk, vv in v.items
                              if isinstance(kk, Const) and isinstance(kk.value, str))
            else:
                kwargs[UNKNOWN_KWARGS] = UNK  # the callee's `**kwargs` is not known to be complete
        if isinstance(f, ast.Attribute):
            recv = self.ev(f.value, frame)
            if f.attr in MUTATORS and not kwargs and _mutable_target(f.value):
                got = _mutated(recv, f.attr, args)
                if got is not None:
                    # `DEVICES.append("cuda")`, `device_args.add(d)`: values are immutable, so the name (or
                    # `self.attr`) is rebound to the grown/shrunk container
                    self.bind(f.value, got[0], frame)
                    return got[1]
            return self.method_call(recv, f.attr, args, kwargs, n, frame)
        callee = self.ev(f, frame)
        name = f.id if isinstance(f, ast.Name) else ""
        return self.call(callee, args, kwargs, n, frame, name)

    def method_call(self, recv: Value, name: str, args: list[Value], kwargs: dict[str, Value], n: ast.Call,
                    frame: Frame) -> Value:
        if isinstance(recv, (Ext, ModV, ClassV, SuperV)) or (
                isinstance(recv, Inst) and (recv.attr(name) is not None
                                            or self.class_lookup(recv.cls, name, frame.world) is not None)):
            callee = self.getattr_v(recv, name, frame, n)
            if isinstance(recv, ClassV) and isinstance(callee, FuncV) and self._is_classmethod(callee):
                callee = FuncV(callee.rel, callee.pos, callee.name, bound=recv, captured=callee.captured,
                               cls=callee.cls)
            return self.call(callee, args, kwargs, n, frame, name)
        return self.tensor_method(recv, name, args, kwargs, n, frame)

    def _is_property(self, fv: FuncV) -> bool:
        """`@property` (also cached_property, abstractproperty): reading the attribute runs the getter."""
        node = self.source.module(fv.rel).defs.get(fv.pos)
        return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
            _last_name(d) in PROPERTY_DECORATORS for d in node.decorator_list)

    def _is_classmethod(self, fv: FuncV) -> bool:
        node = self.source.module(fv.rel).defs.get(fv.pos)
        return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
            isinstance(d, ast.Name) and d.id == "classmethod" for d in node.decorator_list)

    def tensor_method(self, recv: Value, name: str, args: list[Value], kwargs: dict[str, Value], n: ast.Call,
                      frame: Frame) -> Value:
        """Methods on values the analysis does not model (tensors, modules, external objects)."""
        line = n.lineno
        if isinstance(recv, Const) and isinstance(recv.value, str) and name in STR_METHODS and not kwargs and all(
                isinstance(a, Const) and isinstance(a.value, (str, int, tuple)) for a in args):
            # `device.startswith("cuda")`, `dev.split(":")[0]`: plain string methods on a known string
            try:
                r = getattr(recv.value, name)(*(a.value for a in args if isinstance(a, Const)))
            except (TypeError, ValueError):
                return UNK
            if isinstance(r, list):
                return Seq(tuple(Const(x) for x in r), "list")
            return Const(r) if isinstance(r, (str, bool, int)) else UNK
        if name == "cuda":
            dev = f"cuda:{args[0].value}" if args and isinstance(args[0], Const) and isinstance(
                args[0].value, int) else "cuda"
            frame.add(Finding(GPU, (step(frame.rel, line, ".cuda() needs a CUDA device"),), gpu_count_of(dev)))
            return TensorV(dev)
        if name in ("to", "to_empty", "register_buffer"):
            cands = list(args[:1]) + [kwargs[k] for k in ("device",) if k in kwargs]
            for c in cands:
                d = accel_device(c)
                if d:
                    frame.add(Finding(GPU, (step(frame.rel, line, f".{name}({d!r}) needs a {_accel_name(d)} "
                                                                 "device"),), gpu_count_of(d)))
                    return TensorV(d)
            exprs = list(n.args[:1]) + [k.value for k in n.keywords if k.arg == "device"]
            for e, c in zip(exprs, cands, strict=False):
                if isinstance(c, Unknown) and _smells_like_device(e) and not _device_of_existing(e):
                    frame.add(Finding(UNKNOWN, (step(frame.rel, line, f".{name}({ast.unparse(e)}) with a device "
                                                                     "the analysis cannot resolve"
                                                                     + _why_unknown(e, frame)),)))
            for c in cands:
                d = device_of(c) if not isinstance(c, OneOf) else None
                if d:
                    return TensorV(d)
            return recv if isinstance(recv, TensorV) else UNK
        if name in ("pin_memory", "record_stream"):
            if not (kwargs.get("device") and device_of(kwargs["device"]) == "cpu"):
                frame.add(Finding(GPU, (step(frame.rel, line, f".{name}() needs an accelerator"),)))
            return recv
        if name == "cpu":
            return TensorV("cpu")
        if name == "skipTest":
            frame.add(Finding(SKIP, (step(frame.rel, line, "self.skipTest()"),), key=f"{frame.rel}:{line}"))
            return NORETURN
        if name in ("setattr", "setitem", "object", "patch", "delattr"):
            if args and _mocks_cuda(args[0], args[1] if len(args) > 1 else None):
                frame.add(Finding(MOCK, (step(frame.rel, line, f"patches {_mock_target(args)}: CUDA is faked, "
                                                              "the test runs on a CPU"),)))
                return MockV(f"{frame.rel}:{line}")
            return UNK
        if name == "getfixturevalue" and args and isinstance(args[0], Const) and self.fixture_hook:
            return self.fixture_hook(str(args[0].value), frame)
        if name in ("get", "setdefault", "pop") and isinstance(recv, DictV):
            for k, v in recv.items:
                if args and k == args[0]:
                    return v
            return args[1] if len(args) > 1 else Const(None)
        if name in ("append", "extend", "insert", "add", "update") and isinstance(recv, (Seq, DictV)):
            return Const(None)
        if isinstance(recv, Inst) and name in ("__call__", "forward"):
            return UNK
        return UNK

    def call(self, callee: Value, args: list[Value], kwargs: dict[str, Value], n: ast.AST, frame: Frame,
             name: str) -> Value:
        line = getattr(n, "lineno", 0)
        if isinstance(callee, OneOf):
            return join_all([self.call(c, args, kwargs, n, frame, name) for c in alternatives(callee)])
        if isinstance(callee, Ext):
            return self.call_ext(callee.path, args, kwargs, n, frame)
        if isinstance(callee, (FuncV, ClassV)):
            kc = conventions.known_call(callee.name, frame.world)
            if kc is not NotImplemented:
                return Const(kc)
            fn_arg = len(args) == 1 and not kwargs and isinstance(args[0], (TestFnV, FuncV, ClassV))
            req = conventions.decorator_requirement(callee.name, [] if fn_arg else [_py(a) for a in args],
                                                    {} if fn_arg else {k: _py(v) for k, v in kwargs.items()})
            if req is not None:
                rv = ReqV(req.gpu_count, req.vram_gb, step(frame.rel, line, f"@{callee.name}: {req.note}"),
                          req.manual, req.cpu, req.hint_only)
                if not fn_arg:
                    return rv
                followed = self.call_function_from(callee, args, kwargs, line, frame) if isinstance(
                    callee, FuncV) else args[0]
                target = followed if isinstance(followed, TestFnV) else args[0]
                return self._apply_mark(rv, target)
        if isinstance(callee, FuncV):
            return self.call_function_from(callee, args, kwargs, line, frame)
        if isinstance(callee, ClassV):
            inst: Value = Inst(callee)
            init = self.class_lookup(callee, "__init__", frame.world)
            if isinstance(init, FuncV):
                res = self.invoke(FuncV(init.rel, init.pos, init.name, bound=inst, captured=init.captured,
                                        cls=init.cls), args, kwargs, frame)
                self._absorb(res, frame, line, f"{callee.name}.__init__")
                if res.self_after is not None:
                    inst = res.self_after
            else:
                self._ext_args_check(f"{callee.name}()", args, kwargs, n, frame)
            return inst
        if isinstance(callee, Inst):
            for meth in ("__call__", "forward"):
                m = self.class_lookup(callee.cls, meth, frame.world)
                if isinstance(m, FuncV):
                    bound = FuncV(m.rel, m.pos, m.name, bound=callee, captured=m.captured, cls=m.cls)
                    return self.call_function_from(bound, args, kwargs, line, frame)
            return UNK
        if isinstance(callee, (MarkV, SkipV, ReqV, MockV)):
            if len(args) == 1 and not kwargs and isinstance(args[0], (TestFnV, FuncV, ClassV)):
                return self._apply_mark(callee, args[0])
            if isinstance(callee, MarkV) and not callee.args and not callee.kwargs:
                return self.make_mark(callee.name, args, kwargs, n, frame)
            return callee
        if isinstance(callee, TestFnV):
            return UNK
        return UNK

    def _apply_mark(self, mark: Value, target: Value) -> Value:
        if isinstance(target, TestFnV):
            return TestFnV(target.key, (*target.marks, mark))
        return target

    def _absorb(self, res: CallResult, frame: Frame, line: int, what: str) -> None:
        for f in res.findings:
            frame.add(f.prefixed(step(frame.rel, line, f"calls {what}()")))

    def call_function_from(self, fv: FuncV, args: list[Value], kwargs: dict[str, Value], line: int,
                           frame: Frame) -> Value:
        res = self.invoke(fv, args, kwargs, frame)
        self._absorb(res, frame, line, fv.name)
        if res.self_after is not None and frame.self_name and fv.bound == frame.env.get(frame.self_name):
            frame.env[frame.self_name] = res.self_after
        return res.value

    def invoke(self, fv: FuncV, args: list[Value], kwargs: dict[str, Value], frame: Frame) -> CallResult:
        return self.call_function(fv, args, kwargs, frame.world, frame.depth + 1)

    def call_function(self, fv: FuncV, args: list[Value], kwargs: dict[str, Value], world: int,
                      depth: int) -> CallResult:
        """Analyse a call of an in-repo function with these argument values (memoised, cycle-safe). Argument
        values past the size bounds are widened first (values.bounded), so the key hashes in bounded time."""
        fv = bounded(fv)  # type: ignore[assignment]
        if not isinstance(fv, FuncV):  # a bound receiver too large to track
            return CallResult(UNK, ())
        args = [bounded(a) for a in args]
        kwargs = {k: bounded(v) for k, v in kwargs.items()}
        try:
            key: tuple[Any, ...] = (fv, tuple(args), tuple(sorted(kwargs.items(), key=lambda kv: kv[0])), world)
            hash(key)
        except TypeError:
            key = (fv, "unhashable", world)
        got = self.calls.get(key)
        if got is not None:
            self.charge(got.cost)
            return got
        if key in self.active:
            return CallResult(UNK, ())
        if depth > MAX_DEPTH:
            return CallResult(UNK, (Finding(UNKNOWN, (step(fv.rel, fv.pos[0], f"call chain deeper than {MAX_DEPTH} "
                                                                              f"at {fv.name}()"),)),))
        node = self.source.module(fv.rel).defs.get(fv.pos)
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return CallResult(UNK, ())
        self.active.add(key)
        start = self.steps
        try:
            result = self._run_function(fv, node, args, kwargs, world, depth)
        except RecursionError:
            result = CallResult(UNK, (Finding(UNKNOWN, (step(fv.rel, fv.pos[0], "too deeply nested to analyse"),)),))
        finally:
            self.active.discard(key)
        result.value = bounded(result.value)
        if result.self_after is not None:
            after = bounded(result.self_after)
            result.self_after = after if isinstance(after, Inst) else None
        result.cost = self.steps - start
        self.calls[key] = result
        return result

    def _run_function(self, fv: FuncV, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda,
                      args: list[Value], kwargs: dict[str, Value], world: int, depth: int) -> CallResult:
        mod_env = self.module_state(fv.rel, world).env
        frame = Frame(fv.rel, world, {}, mod_env, [], depth, [], None, fv.cls, dict(fv.captured))
        a = node.args
        params = [p.arg for p in (*a.posonlyargs, *a.args)]
        defaults = list(a.defaults)
        default_for = dict(zip(params[len(params) - len(defaults):], defaults, strict=False))
        positional = list(args)
        if fv.bound is not None and params:
            positional = [fv.bound, *positional]
            frame.self_name = params[0]
        for i, p in enumerate(params):
            if i < len(positional):
                frame.env[p] = positional[i]
            elif p in kwargs:
                frame.env[p] = kwargs[p]
            elif p in default_for:
                frame.env[p] = self.ev(default_for[p], Frame(fv.rel, world, {}, mod_env, []))
            else:
                frame.env[p] = UNK
        if a.vararg:
            frame.env[a.vararg.arg] = Seq(tuple(positional[len(params):]), "tuple")
        for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=False):
            if p.arg in kwargs:
                frame.env[p.arg] = kwargs[p.arg]
            else:
                frame.env[p.arg] = self.ev(d, Frame(fv.rel, world, {}, mod_env, [])) if d is not None else UNK
        if a.kwarg:
            known = set(params) | {p.arg for p in a.kwonlyargs}
            frame.env[a.kwarg.arg] = UNK if UNKNOWN_KWARGS in kwargs else DictV(
                tuple((Const(k), v) for k, v in sorted(kwargs.items()) if k not in known))
        if isinstance(node, ast.Lambda):
            value = self.ev(node.body, frame)
            return CallResult(value, tuple(frame.findings))
        self.exec_block(node.body, frame)
        value = join_all(frame.returns) if frame.returns else Const(None)
        if isinstance(value, NoReturn):
            value = UNK
        self_after = frame.env.get(frame.self_name) if frame.self_name else None
        return CallResult(value, tuple(frame.findings), self_after if isinstance(self_after, Inst) else None)

    # -- external calls ----------------------------------------------------------------------------
    def make_mark(self, name: str, args: list[Value], kwargs: dict[str, Value], n: ast.AST, frame: Frame) -> Value:
        where = step(frame.rel, getattr(n, "lineno", 0), "")
        if name == "skipif":
            conds = list(args) + ([kwargs["condition"]] if "condition" in kwargs else [])
            ts = [truth(c) for c in conds]
            active = True if any(t is True for t in ts) else (None if any(t is None for t in ts) else False)
            src = _src(n)
            return SkipV(active, where + f"skipif({src})", _cuda_text(src))
        if name == "skip":
            return SkipV(True, where + "skip")
        req = conventions.mark_requirement(name, [_py(a) for a in args], {k: _py(v) for k, v in kwargs.items()})
        if req is not None:
            return ReqV(req.gpu_count, req.vram_gb, where + req.note, req.manual, req.cpu, req.hint_only)
        return MarkV(name, tuple(args), tuple(sorted(kwargs.items(), key=lambda kv: kv[0])), where)

    def call_ext(self, path: str, args: list[Value], kwargs: dict[str, Value], n: ast.AST, frame: Frame) -> Value:
        line = getattr(n, "lineno", 0)
        if path.startswith(DYNAMIC):
            frame.add(Finding(UNKNOWN, (step(frame.rel, line, "calls") + f" {path[len(DYNAMIC):]}",)))
            return args[0] if len(args) == 1 and not kwargs and isinstance(args[0], TestFnV) else UNK
        if path == "re.compile" and args and isinstance(args[0], Const) and isinstance(args[0].value, str):
            return Ext(REGEX_PREFIX + args[0].value)  # a parametrize value: pytest ids it by its pattern
        world = frame.world
        last = path.rsplit(".", 1)[-1]
        here = step(frame.rel, line, "")
        q = torch_api.query_value(path, world)
        if q is not NotImplemented:
            return Const(q)
        # -- pytest / unittest / mock -----------------------------------------------------------
        if path.startswith("pytest.mark.") and path.count(".") == 2:
            if len(args) == 1 and not kwargs and isinstance(args[0], (TestFnV, FuncV, ClassV)):
                return self._apply_mark(self.make_mark(last, [], {}, n, frame), args[0])
            return self.make_mark(last, args, kwargs, n, frame)
        if path in ("pytest.skip", "pytest.fail", "pytest.xfail", "pytest.exit"):
            if path != "pytest.exit":
                frame.add(Finding(SKIP, (step(frame.rel, line, f"{path}() reached"),), key=f"{frame.rel}:{line}"))
            return NORETURN
        if path.endswith(("parameterized.expand", "parameterized.parameterized.expand")):
            # the `parameterized` package: test_x -> test_x_0_<first str arg>, ... (see collect.py)
            return MarkV(PARAMETERIZED_EXPAND, tuple(args[:1]) or (kwargs.get("input", UNK),),
                         tuple(sorted(((k, v) for k, v in kwargs.items() if k == "name_func"), key=lambda kv: kv[0])),
                         step(frame.rel, line, "parameterized.expand"))
        if path in ("parameterized.param", "parameterized.parameterized.param"):
            return ParamV(tuple(args))
        if path in ("pytest.param",):
            marks = kwargs.get("marks")
            mlist = marks.items if isinstance(marks, Seq) else ((marks,) if marks is not None else ())
            pid = kwargs.get("id")
            return ParamV(tuple(args), tuple(mlist), pid.value if isinstance(pid, Const) and isinstance(
                pid.value, str) else None)
        if path in ("unittest.skipIf", "unittest.skipUnless", "unittest.case.skipIf", "unittest.case.skipUnless"):
            t = truth(args[0]) if args else None
            if path.endswith("skipUnless") and t is not None:
                t = not t
            src = _src(n)
            return SkipV(t, here + f"{last}({src})", _cuda_text(src))
        if path in ("unittest.skip", "unittest.case.skip"):
            if args and isinstance(args[0], (TestFnV, FuncV)):
                return self._apply_mark(SkipV(True, here + "skip"), args[0])
            return SkipV(True, here + "skip")
        if path.endswith(("SkipTest", "Skipped")) or path == "pytest.skip.Exception":
            return Ext(path + "()")
        if last in ("patch", "object") and ("mock" in path or path.startswith("unittest")):
            if args and _mocks_cuda(args[0], args[1] if len(args) > 1 else None):
                frame.add(Finding(MOCK, (step(frame.rel, line, f"patches {_mock_target(args)}: CUDA is faked, "
                                                              "the test runs on a CPU"),)))
                return MockV(here)
            return Ext("mock.patch()")
        if path in ("functools.wraps", "functools.lru_cache", "functools.cache"):
            return Ext("functools.wraps()")
        if path == "functools.wraps()":
            return args[0] if args else UNK
        # -- os / builtins ----------------------------------------------------------------------
        if path in ("os.environ.get", "os.getenv"):
            return args[1] if len(args) > 1 else kwargs.get("default", Const(None))
        if path.startswith("builtins."):
            return self.call_builtin(last, args, kwargs, n, frame)
        if path in ("importlib.import_module",) and args and not isinstance(args[0], Const):
            return Ext(DYNAMIC + step(frame.rel, line, "importlib.import_module() of a computed name: "
                                                       "dynamic dispatch"))
        if path.startswith("torch.testing"):
            got = self.call_torch_testing(path, last, args, kwargs, n, frame)
            if got is not None:
                return got
        # -- torch -----------------------------------------------------------------------------------
        if path.startswith("torch.") and "testing" not in path:
            return self.call_torch(path, args, kwargs, n, frame)
        # -- conventions for names from installed packages --------------------------------------
        if path.startswith("<devices>."):
            kinds = conventions.DEVICE_LIST_HELPERS.get(last, ())
            items: list[Value] = []
            for k in kinds:
                if k == "cpu":
                    items.append(Const(k))
                else:
                    items.append(ParamV((Const(k),), (ReqV(1, 0, here + f"{last}() marks {k!r} needs_{k}"),)))
            return Seq(tuple(items), "tuple")
        kc = conventions.known_call(last, world)
        if kc is not NotImplemented:
            return Const(kc)
        fn_arg = len(args) == 1 and not kwargs and isinstance(args[0], (TestFnV, FuncV, ClassV))
        req = conventions.decorator_requirement(last, [] if fn_arg else [_py(a) for a in args],
                                                {} if fn_arg else {k: _py(v) for k, v in kwargs.items()})
        if req is not None:
            rv = ReqV(req.gpu_count, req.vram_gb, here + f"@{last}: {req.note}", req.manual, req.cpu, req.hint_only)
            return self._apply_mark(rv, args[0]) if fn_arg else rv
        if fn_arg:
            return args[0]  # an unknown decorator: assume it keeps the test
        self._ext_args_check(path, args, kwargs, n, frame)
        return UNK

    def call_torch_testing(self, path: str, last: str, args: list[Value], kwargs: dict[str, Value], n: ast.AST,
                           frame: Frame) -> Value | None:
        """torch.testing._internal generators and decorators (see torch_testing.py); None: not one of them."""
        line = getattr(n, "lineno", 0)
        if last == "instantiate_device_type_tests" and args and isinstance(args[0], ClassV):
            cls = args[0]
            only = torch_testing.device_only_for(kwargs.get("only_for", args[3] if len(args) > 3 else None))
            exc = torch_testing.device_only_for(kwargs.get("except_for", args[2] if len(args) > 2 else None))
            if frame.env.get(cls.name) == cls:
                del frame.env[cls.name]
            for dev in torch_testing.DEVICE_TYPES:
                if (only is None or dev in only) and (exc is None or dev not in exc):
                    frame.env[cls.name + dev.upper()] = GenClassV(
                        cls, dev, step(frame.rel, line, f"instantiate_device_type_tests({cls.name}) makes "
                                                        f"{cls.name}{dev.upper()}"))
            return Const(None)
        if last == "instantiate_parametrized_tests" and args and isinstance(args[0], ClassV):
            self.param_classes.add(args[0])
            return args[0]
        if last in torch_testing.DTYPES_DECORATORS:
            dev = torch_testing.DTYPES_DECORATORS[last]
            kw = kwargs.get("device_type", Const(dev))
            return MarkV(torch_testing.DTYPES_MARK, tuple(args), (("device_type", kw),), step(frame.rel, line, last))
        if last == "parametrize":
            return MarkV(torch_testing.PARAMETRIZE_MARK, tuple(args), tuple(sorted(kwargs.items(),
                                                                                   key=lambda kv: kv[0])),
                         step(frame.rel, line, "parametrize"))
        if last == "subtest":
            decos = kwargs.get("decorators", args[2] if len(args) > 2 else None)
            name = kwargs.get("name", args[1] if len(args) > 1 else None)
            return ParamV((args[0] if args else kwargs.get("arg_values", UNK),),
                          tuple(decos.items) if isinstance(decos, Seq) else (),
                          name.value if isinstance(name, Const) and isinstance(name.value, str) else None)
        if last in torch_testing.OPAQUE_DECORATORS:
            return MarkV(torch_testing.OPAQUE_MARK, (), (), step(frame.rel, line, last))
        return torch_testing.dtype_helper(last, args, kwargs)

    def _ext_args_check(self, path: str, args: list[Value], kwargs: dict[str, Value], n: ast.AST,
                        frame: Frame) -> None:
        for k in ("device", "device_map"):
            if k in kwargs:
                d = accel_device(kwargs[k])
                if d is None and isinstance(kwargs[k], DictV):
                    d = next((accel_device(v) for _, v in kwargs[k].items if accel_device(v)), None)
                if d:
                    frame.add(Finding(GPU, (step(frame.rel, getattr(n, "lineno", 0),
                                                 f"{_short(path)}({k}={d!r}) needs a {_accel_name(d)} device"),),
                                      gpu_count_of(d)))

    def call_builtin(self, name: str, args: list[Value], kwargs: dict[str, Value], n: ast.AST,
                     frame: Frame) -> Value:
        line = getattr(n, "lineno", 0)
        if name == "getattr" and len(args) >= 2:
            obj, attr = args[0], args[1]
            if isinstance(attr, Const) and isinstance(attr.value, str):
                v = self.getattr_v(obj, attr.value, frame, n)
                return v if not (isinstance(v, Unknown) and len(args) > 2) else args[2]
            if isinstance(obj, (ModV, ClassV, Inst)):
                # reading an attribute is harmless; calling what it names is dynamic dispatch
                return Ext(DYNAMIC + step(frame.rel, line, f"getattr({_src_arg(n, 0)}, {_src_arg(n, 1)}) with a "
                                                          "computed name: dynamic dispatch"))
            return UNK
        if name == "next" and args and isinstance(args[0], Seq) and args[0].items:
            return join_all(list(args[0].items))  # the first element of a known sequence (or generator)
        if name in ("eval", "exec") and args and not isinstance(args[0], Const):
            frame.add(Finding(UNKNOWN, (step(frame.rel, line, f"{name}() of computed code: dynamic dispatch"),)))
            return UNK
        if name == "__import__" and args and not isinstance(args[0], Const):
            return Ext(DYNAMIC + step(frame.rel, line, "__import__ of a computed name: dynamic dispatch"))
        if name == "super":
            cls = frame.cls
            obj = frame.env.get(frame.self_name) if frame.self_name else None
            if cls is not None and obj is not None:
                return SuperV(cls, obj)
            return UNK
        if name == "type" and len(args) == 1:
            t = type_path(args[0])
            return Ext(TYPE_PREFIX + t) if t else UNK
        if name == "isinstance" and len(args) == 2:
            return isinstance_of(args[0], args[1])
        if name == "str" and len(args) == 1 and isinstance(args[0], EnumV):
            return Const(args[0].text)
        if name in ("str", "int", "float", "bool") and len(args) == 1 and isinstance(args[0], Const):
            try:
                return Const({"str": str, "int": int, "float": float, "bool": bool}[name](args[0].value))
            except (TypeError, ValueError):
                return UNK
        if name == "range" and 1 <= len(args) <= 3 and all(
                isinstance(a, Const) and type(a.value) is int for a in args):
            r = range(*(int(a.value) for a in args if isinstance(a, Const)))  # type: ignore[call-overload]
            return Seq(tuple(Const(i) for i in r), "range") if len(r) <= 64 and not (
                len(args) == 3 and args[2] == Const(0)) else UNK
        if name == "len" and args and isinstance(args[0], Seq):
            return Const(len(args[0].items))
        if name in ("list", "tuple") and len(args) == 1 and isinstance(args[0], ClassV):
            members = self.enum_members(args[0], frame.world)
            if members is not None:
                return Seq(members.items, name)
        if name in ("list", "tuple") and args and isinstance(args[0], Seq):
            return Seq(args[0].items, name)
        if name in ("list", "tuple", "set") and not args and not kwargs:
            return Seq((), name)
        if name == "set" and len(args) == 1 and isinstance(args[0], Seq):
            return Seq(tuple(dict.fromkeys(args[0].items)), "set")
        if name in ("min", "max") and args and all(isinstance(a, Const) for a in args):
            try:
                return Const((min if name == "min" else max)(a.value for a in args))  # type: ignore[union-attr]
            except TypeError:
                return UNK
        if name in ("staticmethod", "classmethod", "property") and args:
            return args[0]
        if name == "setattr" and args and _mocks_cuda(args[0], args[1] if len(args) > 1 else None):
            frame.add(Finding(MOCK, (step(frame.rel, line, "setattr on torch.cuda fakes CUDA"),)))
        return UNK

    def call_torch(self, path: str, args: list[Value], kwargs: dict[str, Value], n: ast.AST, frame: Frame) -> Value:
        line = getattr(n, "lineno", 0)
        last = path.rsplit(".", 1)[-1]
        if path == "torch.device":
            if args:
                d = device_of(args[0])
                if d and len(args) > 1 and isinstance(args[1], Const) and isinstance(args[1].value, int):
                    d = f"{d}:{args[1].value}"
                if d:
                    return DeviceV(d)
                if args[0] == EXISTING_DEVICE:
                    return EXISTING_DEVICE  # torch.device(p.device) of an existing tensor: still that device
                if isinstance(args[0], OneOf):
                    alts = [DeviceV(device_of(a)) if device_of(a) else a if a == EXISTING_DEVICE else UNK
                            for a in alternatives(args[0])]
                    return join_all(alts)
            t = kwargs.get("type")
            return DeviceV(t.value) if isinstance(t, Const) and isinstance(t.value, str) else UNK
        if path in ("torch.set_default_device", "torch.Generator", "torch.cuda.set_device",
                    "torch.set_default_tensor_type"):
            cand = args[0] if args else kwargs.get("device")
            d = accel_device(cand) if cand is not None else None
            if path == "torch.set_default_tensor_type" and isinstance(cand, Ext) and ".cuda." in cand.path:
                d = "cuda"
            if path == "torch.cuda.set_device":
                d = d or "cuda"
            if path == "torch.Generator" and cand is None:
                return UNK
            if d:
                frame.add(Finding(GPU, (step(frame.rel, line, f"{_short(path)}({d!r}) needs a {_accel_name(d)} "
                                                              "device"),), gpu_count_of(d)))
            return UNK
        if path in ("torch.distributed.init_process_group", "torch.distributed.new_group",
                    "torch.distributed.device_mesh.init_device_mesh", "torch.distributed.init_device_mesh"):
            backend = args[0] if args else kwargs.get("backend", kwargs.get("device_type"))
            ws = kwargs.get("world_size")
            if path.endswith("init_device_mesh"):
                shape = args[1] if len(args) > 1 else kwargs.get("mesh_shape")
                if isinstance(shape, Seq) and all(isinstance(i, Const) for i in shape.items):
                    prod = 1
                    for i in shape.items:
                        prod *= int(i.value) if isinstance(i, Const) and isinstance(i.value, int) else 1
                    ws = Const(prod)
            b = backend.value if isinstance(backend, Const) and isinstance(backend.value, str) else ""
            if "nccl" in b or accel_device(Const(b)) if b else False:
                count = ws.value if isinstance(ws, Const) and isinstance(ws.value, int) else 1
                frame.add(Finding(GPU, (step(frame.rel, line, f"{_short(path)}({b!r}) needs CUDA devices"
                                                              + (f" (world size {count})" if count > 1 else "")),),
                                  max(count, 1)))
            return UNK
        api = torch_api.BY_PATH.get(path)
        if api is not None and path not in torch_api.DEVICE_ARG_APIS:
            if api.need != torch_api.CPU:
                frame.add(Finding(GPU, (step(frame.rel, line, f"{_short(path)}() {api.note}"),)))
                return UNK
            if path in ("torch.autocast", "torch.amp.autocast", "torch.amp.GradScaler", "torch.cuda.stream"):
                return UNK
        if path.startswith("torch.cuda.") and api is None and last not in ("amp",):
            frame.add(Finding(UNKNOWN, (step(frame.rel, line, f"{_short(path)}() is not in the torch API table"),)))
            return UNK
        d = None
        for k in ("device",):
            if k in kwargs:
                d = accel_device(kwargs[k])
        if d:
            frame.add(Finding(GPU, (step(frame.rel, line, f"{_short(path)}(device={d!r}) needs a "
                                                          f"{_accel_name(d)} device"),), gpu_count_of(d)))
            return TensorV(d)
        if "device" in kwargs and isinstance(kwargs["device"], Unknown) and isinstance(n, ast.Call):
            e = next((k.value for k in n.keywords if k.arg == "device"), None)
            if isinstance(e, (ast.Name, ast.Attribute)) and not _device_of_existing(e):
                frame.add(Finding(UNKNOWN, (step(frame.rel, line, f"{_short(path)}(device={ast.unparse(e)}) with a "
                                                                  "device the analysis cannot resolve"
                                                                  + _why_unknown(e, frame)),)))
                return UNK
        if last in torch_api.TENSOR_FACTORIES:
            if "device" in kwargs:
                dv = device_of(kwargs["device"])
                if dv:
                    return TensorV(dv)
            return TensorV("cpu")
        if path.startswith(("torch.xpu.", "torch.mps.")) and api is None:
            frame.add(Finding(GPU, (step(frame.rel, line, f"{_short(path)}() needs that accelerator"),)))
        return UNK


MUTATORS = frozenset({"append", "extend", "insert", "add", "update", "remove", "discard", "pop", "clear"})
MAX_UNROLL = 16
MAX_CONTAINER = 64


def _mutable_target(e: ast.expr) -> bool:
    """A container the analysis can rebind after mutating it: a name or `self.attr`/`obj.attr`."""
    return isinstance(e, ast.Name) or (isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name))


def _mutate_seq(seq: Seq, name: str, args: list[Value]) -> tuple[Seq, Value] | None:
    items = list(seq.items)
    is_set = seq.kind == "set"
    if name in ("append", "add") and len(args) == 1:
        if not (is_set and args[0] in items):
            items.append(args[0])
        return Seq(tuple(items[:MAX_CONTAINER]), seq.kind), Const(None)
    if name in ("extend", "update") and len(args) == 1 and isinstance(args[0], Seq):
        for a in args[0].items:
            if not (is_set and a in items):
                items.append(a)
        return Seq(tuple(items[:MAX_CONTAINER]), seq.kind), Const(None)
    if name == "insert" and len(args) == 2 and isinstance(args[0], Const) and type(args[0].value) is int:
        items.insert(args[0].value, args[1])
        return Seq(tuple(items[:MAX_CONTAINER]), seq.kind), Const(None)
    if name in ("remove", "discard") and len(args) == 1:
        if args[0] in items:
            items.remove(args[0])
        elif any(not isinstance(i, Const) for i in items) or not isinstance(args[0], Const):
            return None  # may or may not be there
        return Seq(tuple(items), seq.kind), Const(None)
    if name == "pop" and not args and items:
        if is_set:  # an arbitrary element: exact only when there is one
            return Seq((), "set") if len(items) == 1 else seq, items[0] if len(items) == 1 else join_all(items)
        return Seq(tuple(items[:-1]), seq.kind), items[-1]
    if name == "pop" and len(args) == 1 and isinstance(args[0], Const) and type(args[0].value) is int and not is_set:
        try:
            got = items.pop(args[0].value)
        except IndexError:
            return None
        return Seq(tuple(items), seq.kind), got
    if name == "clear" and not args:
        return Seq((), seq.kind), Const(None)
    return None


def _mutated(recv: Value, name: str, args: list[Value]) -> tuple[Value, Value] | None:
    """(container after, call result) of a list/set mutation on a known container (or a join of them)."""
    if isinstance(recv, Seq) and recv.kind in ("list", "set"):
        return _mutate_seq(recv, name, args)
    if isinstance(recv, OneOf) and all(isinstance(a, Seq) and a.kind in ("list", "set") for a in recv.alts):
        afters: list[Value] = []
        results: list[Value] = []
        for a in alternatives(recv):
            if name == "pop" and isinstance(a, Seq) and not a.items:
                continue  # IndexError/KeyError on this path
            got = _mutate_seq(a, name, args) if isinstance(a, Seq) else None
            if got is None:
                return None
            afters.append(got[0])
            results.append(got[1])
        if not afters:
            return None
        return join_all(afters), join_all(results)
    return None


def _grows_containers(loop: ast.For | ast.AsyncFor) -> bool:
    """A loop body that mutates a container (`xs.append(...)`, `xs += [...]`) and has no break/continue of its
    own: worth unrolling so that the container's elements come out exact."""
    mutates = False
    todo: list[ast.AST] = list(loop.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Break, ast.Continue)):
            return False
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.For,
                             ast.AsyncFor, ast.While)):
            if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
                mutates = mutates or any(isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute)
                                         and c.func.attr in MUTATORS for c in ast.walk(node))
            continue  # their own break/continue are theirs
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MUTATORS:
            mutates = True
        elif isinstance(node, ast.AugAssign):
            mutates = True
        todo.extend(ast.iter_child_nodes(node))
    return mutates


def _accel_name(device: str) -> str:
    kind = torch_api.accelerator_of(device) or device
    return {"cuda": "CUDA", "xpu": "XPU", "mps": "MPS"}.get(kind, kind.upper())


def _short(path: str) -> str:
    return path


def _py(v: Value) -> object:
    """A Python literal for convention arguments (UNSET when unknown)."""
    if isinstance(v, Const):
        return v.value
    return conventions.UNSET


def _src(n: ast.AST) -> str:
    if isinstance(n, ast.Call) and n.args:
        s = ast.unparse(n.args[0])
    elif isinstance(n, ast.Call) and n.keywords:
        s = ast.unparse(n.keywords[0].value)
    else:
        s = ""
    return s if len(s) <= 80 else s[:77] + "..."


def _src_arg(n: ast.AST, i: int) -> str:
    if isinstance(n, ast.Call) and len(n.args) > i:
        return ast.unparse(n.args[i])[:40]
    return "?"


def _cuda_text(src: str) -> bool:
    s = src.lower()
    return any(w in s for w in ("cuda", "gpu", "device", "accelerator"))


def _smells_like_device(e: ast.expr) -> bool:
    name = e.attr if isinstance(e, ast.Attribute) else e.id if isinstance(e, ast.Name) else ""
    low = name.lower()
    return low in DEVICE_NAME_HINTS or low.endswith("device") or low.startswith("device")


def _device_of_existing(e: ast.expr) -> bool:
    """`x.device` of an object other than `self` or a configuration: the device of a tensor that already
    exists. Following it moves nothing to a new device (creating `x` on an accelerator is where a need
    would be found)."""
    return isinstance(e, ast.Attribute) and e.attr == "device" and not (
        isinstance(e.value, ast.Name) and e.value.id in CONFIG_NAMES)


CONFIG_NAMES = frozenset({"self", "cls", "args", "config", "cfg", "conf", "opt", "opts", "options", "hparams",
                          "settings", "params", "kwargs"})


def _mocks_cuda(target: Value, attr: Value | None) -> bool:
    if isinstance(target, Const) and isinstance(target.value, str):
        return target.value.startswith(("torch.cuda", "torch.backends.cuda", "torch.backends.cudnn"))
    if isinstance(target, Ext):
        return target.path.startswith("torch.cuda") or target.path in ("torch.backends.cudnn",)
    return False


def _mock_target(args: list[Value]) -> str:
    t = args[0]
    base = t.value if isinstance(t, Const) else t.path if isinstance(t, Ext) else "?"
    if len(args) > 1 and isinstance(args[1], Const) and isinstance(args[1].value, str) and isinstance(t, Ext):
        return f"{base}.{args[1].value}"
    return str(base)


def _why_unknown(e: ast.expr, frame: Frame) -> str:
    """A hint at where an unresolved device came from (a parameter nobody provides, an attribute...)."""
    if isinstance(e, ast.Name):
        if e.id in frame.env:
            return f" ({e.id} is a parameter or local with no known value: no fixture, caller or default gives one)"
        return f" ({e.id} is not defined in the repository)"
    if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == frame.self_name:
        return f" (self.{e.attr} is not set in setUp/__init__ to a value the analysis can follow)"
    if isinstance(e, ast.Attribute):
        return f" ({ast.unparse(e.value)[:40]} comes from outside the repository)"
    return ""


# Exceptions a CPU-only torch raises when code needs CUDA: "Torch not compiled with CUDA enabled" is an
# AssertionError, "No CUDA GPUs are available" / "Found no NVIDIA driver" a RuntimeError.
_DEVICE_ERRORS = frozenset({"Exception", "BaseException", "RuntimeError", "AssertionError", "AcceleratorError"})
_ESCAPES = frozenset({"skip", "fail", "xfail", "skipTest", "exit"})


def _swallows_device_errors(s: ast.Try) -> bool:
    """Whether a handler of this try catches the errors of CUDA calls and neither re-raises nor skips/fails."""
    for h in s.handlers:
        types = h.type.elts if isinstance(h.type, ast.Tuple) else [h.type] if h.type is not None else []
        if h.type is not None and not any(_last_name(t) in _DEVICE_ERRORS for t in types):
            continue
        escapes = False
        todo: list[ast.AST] = list(h.body)
        while todo and not escapes:
            n = todo.pop()
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                continue
            if isinstance(n, ast.Raise) or (isinstance(n, ast.Call) and _last_name(n.func) in _ESCAPES):
                escapes = True
            todo.extend(ast.iter_child_nodes(n))
        if not escapes:
            return True
    return False


def _safe_name(s: str) -> str:
    """parameterized.to_safe_name."""
    return re.sub("[^a-zA-Z0-9_]+", "_", s)


def _last_name(e: ast.expr) -> str:
    e = e.func if isinstance(e, ast.Call) else e
    return e.attr if isinstance(e, ast.Attribute) else e.id if isinstance(e, ast.Name) else ""


def _free_names(node: ast.AST) -> frozenset[str]:
    return frozenset(n.id for n in ast.walk(node) if isinstance(n, ast.Name))


def _hashable(v: object) -> bool:
    try:
        hash(v)
    except TypeError:
        return False
    return True
