"""The interpreter's expressions: one ev_<node> method per ast node (ev_Call is in
interp_calls.py), operators, f-strings, comprehensions, and attribute reads on every kind of value
(getattr_v).
"""

from __future__ import annotations

import ast
import dataclasses
import operator
import re
from collections.abc import Callable
from typing import Any

from tools.classify import limits, nn_modules, omegaconf_model, torch_api, torch_testing, versions
from tools.classify.datafiles import path_attribute
from tools.classify.devices import (
    EXISTING_CUDA_VALUES,
    EXISTING_DEVICE,
    EXISTING_IS_CUDA,
    HF_DEVICE_MAP,
    _compare,
    _device_of_existing,
    accel_device,
    existing_cuda_flag,
    shown_constant,
    spelled,
    torch_constant_str,
    truth,
)
from tools.classify.evidence import UNKNOWN as UNKNOWN_KIND
from tools.classify.evidence import Finding, step
from tools.classify.guards import cuda_guard, dropping_gpu_findings, guard_note
from tools.classify.interp_base import (
    AUTOGRAD_APPLY,
    AUTOGRAD_FUNCTIONS,
    DYNAMIC,
    EMPTY_DICT,
    MAX_GENERATED,
    MOCK_OBJECT,
    MODULE_WITHIN,
    WRAPPER,
    BudgetExceeded,
    Frame,
    InterpBase,
    attrs_dict,
    chosen_by_name,
    decorated_object,
    namespace_key,
)
from tools.classify.interp_datafiles import path_binop, path_fstring
from tools.classify.provenance import (
    iterated_dict_attr,
    iterated_local_dict,
    keys_are_existing_devices,
    local_dict_of_existing_devices,
)
from tools.classify.test_state import environ_get, patched_value
from tools.classify.values import (
    NOT_LITERAL,
    SIZE,
    SLICE,
    UNKNOWN_SCALAR,
    ClassV,
    Const,
    DeviceV,
    DictV,
    EnumV,
    Ext,
    FuncV,
    Inst,
    KnownTruth,
    MarkV,
    ModV,
    NNModV,
    OneOf,
    PartialV,
    PathV,
    RequestV,
    Seq,
    SuperV,
    TensorV,
    UnknownScalar,
    Unresolved,
    Value,
    alternatives,
    bounded,
    decided_key,
    dict_items,
    exact_keys,
    hashable,
    is_objects,
    iterated,
    join,
    join_all,
    literal_of,
    module_children,
    slice_of,
    too_long_to_print,
    undecided_entry,
)
from tools.classify.values import UNRESOLVED as UNK

TENSOR_CLASSES = frozenset({"torch.Tensor", "torch.nn.Parameter", "torch.nn.parameter.Parameter",
                            "torch._tensor.Tensor"})
# library module classes whose `device` property is the device of the module's parameters (Lightning's
# DeviceDtypeModuleMixin, transformers' ModuleUtilsMixin, diffusers' ModelMixin), by class and top-level package
DEVICE_REPORTING_MODULES = frozenset({"LightningModule", "DeviceDtypeModuleMixin", "PreTrainedModel", "ModelMixin"})
DEVICE_REPORTING_PACKAGES = frozenset({"lightning", "pytorch_lightning", "lightning_fabric", "transformers",
                                       "diffusers"})
_PRINTF_FIELD = re.compile(r"%[-+ #0-9.*]*[a-zA-Z%]")  # a `%` conversion of a printf-style format
MAX_LISTED_ELEMENTS = 256  # iterations of a comprehension evaluated one by one (parameter tables)
# characters of a string `+` builds (ids that print a torch.nn Sequential are several hundred); longer is unknown
MAX_CONCAT = 4096
MAX_REPEATED = 256  # items of a list or tuple repeated by `*` (`(n,) * 2`)
MAX_STRING_CHOICES = 16  # alternatives an f-string or `+` of one-of-several constants is spelled out for
_BIN: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
    ast.BitXor: operator.xor, ast.BitAnd: operator.and_, ast.BitOr: operator.or_, ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
}


# Python's operators and the methods an object's class defines them by (`__add__`, `__radd__`, `__iadd__`)
BINARY_DUNDERS: dict[type[ast.operator], str] = {
    ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.MatMult: "matmul", ast.Div: "truediv",
    ast.FloorDiv: "floordiv", ast.Mod: "mod", ast.Pow: "pow", ast.LShift: "lshift", ast.RShift: "rshift",
    ast.BitOr: "or", ast.BitXor: "xor", ast.BitAnd: "and"}
UNARY_DUNDERS: dict[type[ast.unaryop], str] = {ast.USub: "__neg__", ast.UAdd: "__pos__", ast.Invert: "__invert__"}
# a comparison's method and the one the right operand reflects it with
COMPARISON_DUNDERS: dict[type[ast.cmpop], tuple[str, str]] = {
    ast.Eq: ("__eq__", "__eq__"), ast.NotEq: ("__ne__", "__ne__"), ast.Lt: ("__lt__", "__gt__"),
    ast.LtE: ("__le__", "__ge__"), ast.Gt: ("__gt__", "__lt__"), ast.GtE: ("__ge__", "__le__")}

# a `%` template whose only conversions are `%s` (and `%%`)
_PERCENT_STRINGS = re.compile(r"(?:[^%]|%%|%s)*", re.DOTALL)


@dataclasses.dataclass(frozen=True)
class Printed:
    """An f-string field already formatted by the class of its value (ExpressionsMixin.printed_by_class)."""

    value: str


class ExpressionsMixin(InterpBase):
    """Expressions other than calls; a part of dataflow.Interp."""

    def ev(self, node: ast.expr | None, frame: Frame) -> Value:
        if node is None:
            return Const(None)
        self.steps += 1
        if self.steps > self.limit:
            raise BudgetExceeded(self.limit)
        m = self.ev_methods.get(type(node))
        if m is None:
            m = self.ev_methods[type(node)] = getattr(self, "ev_" + type(node).__name__, self._ev_children)
        try:
            return m(node, frame)
        except limits.TooLarge as exc:  # (the innermost expression that asked): unknown, with the reason
            frame.add(Finding(UNKNOWN_KIND, (step(frame.rel, node.lineno, str(exc)),)))
            return UNK

    def _ev_children(self, node: ast.expr, frame: Frame) -> Value:
        """An expression kind without a rule of its own: its parts still run (calls in them count)."""
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self.ev(child, frame)
        return UNK

    def _index(self, e: ast.expr, frame: Frame) -> Value:
        """An index as Python builds it: a `...` in it is the Ellipsis constant (`desugar_getitem[..., 0]`, which
        funsor's tests id by str(): `(Ellipsis, 0)`). Elsewhere `...` stays unknown: a placeholder value or default
        (`device: str = ...`), which says nothing of what code will hold there."""
        if isinstance(e, ast.Constant) and e.value is Ellipsis:
            return Const(Ellipsis)
        if isinstance(e, ast.Tuple) and any(isinstance(x, ast.Constant) and x.value is Ellipsis for x in e.elts) and \
                not any(isinstance(x, ast.Starred) for x in e.elts):
            return Seq(tuple(self._index(x, frame) for x in e.elts), "tuple")
        return self.ev(e, frame)

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
        if kind == "set" and exact:
            return set_literal(items)
        return bounded(Seq(tuple(items), kind)) if exact else UNK

    def ev_Dict(self, n: ast.Dict, frame: Frame) -> Value:
        pairs: list[tuple[Value, Value]] = []
        for k, v in zip(n.keys, n.values, strict=False):
            vv = self.ev(v, frame)
            if k is None:  # `{**base, "x": 1}`: the items of a known dict
                if not isinstance(vv, DictV):
                    return UNK
                pairs.extend(vv.items)
                continue
            pairs.append((self.ev(k, frame), vv))
        return bounded(DictV(dict_items(pairs)))

    def ev_JoinedStr(self, n: ast.JoinedStr, frame: Frame) -> Value:
        formatted = [(v, self.ev(v.value, frame)) for v in n.values if isinstance(v, ast.FormattedValue)]
        path = path_fstring(n, formatted)
        if path is not None:
            return path  # f"{os.path.dirname(__file__)}/data/cases.yaml"
        formatted = [(v, self._printed_field(v, inner, frame)) for v, inner in formatted]
        choices = [(v, inner) for v, inner in formatted if isinstance(inner, OneOf)
                   and _const_alternatives(inner) and v.format_spec is None and v.conversion == -1]
        if len(choices) == 1 and len(alternatives(choices[0][1])) <= MAX_STRING_CHOICES:
            # f"run_{kind}" with kind one of known constants: one string per constant
            node, inner = choices[0]
            fixed = {id(v): x for v, x in formatted}
            return join_all([self._joined(n, {**fixed, id(node): alt}) for alt in alternatives(inner)])
        return self._joined(n, {id(v): x for v, x in formatted})

    def _printed_field(self, field: ast.FormattedValue, inner: Value, frame: Frame) -> Value:
        """An f-string field's value, or, for an object whose class says how it prints (printed_by_class), its
        text as a `Printed` constant."""
        if not isinstance(inner, (Inst, ClassV)) or field.conversion not in (-1, ord("s"), ord("r")) or (
                field.format_spec is not None and not (isinstance(field.format_spec, ast.JoinedStr) and all(
                    isinstance(x, ast.Constant) for x in field.format_spec.values))):
            return inner
        spec = "".join(str(x.value) for x in field.format_spec.values if isinstance(x, ast.Constant)) if \
            field.format_spec is not None else ""
        text = self.printed_by_class(inner, "r" if field.conversion == ord("r") else "", spec, field, frame)
        return Printed(text) if text is not None else inner

    def _joined(self, n: ast.JoinedStr, values: dict[int, Value]) -> Value:
        """An f-string whose formatted parts have the given values (by id of their node)."""
        parts: list[str] = []
        exact = True
        for v in n.values:
            if isinstance(v, ast.Constant):
                parts.append(str(v.value))
            elif isinstance(v, ast.FormattedValue):
                inner = values[id(v)]
                dt = torch_testing.dtype_name(inner)
                if isinstance(inner, Printed):
                    parts.append(inner.value)  # (already formatted with its conversion and spec)
                elif dt and v.format_spec is None and v.conversion in (-1, ord("s")):
                    parts.append(f"torch.{dt}")  # str(torch.float) == "torch.float32"
                elif isinstance(inner, Const) and v.format_spec is None and v.conversion in (-1, ord("s")):
                    parts.append(limits.text(inner.value))
                else:
                    # f"dim{[0, 1]}", f"dev={device}-in={shape}-out={torch.Size(...)}", f"{x!r}", f"{lr:.0e}": as
                    # Python prints them; anything it cannot print exactly (an object, a module) stays unknown
                    text = _formatted(v, inner)
                    parts.append("?" if text is None else text)
                    exact = exact and text is not None
        limits.check_text(sum(map(len, parts)), "an f-string")
        s = "".join(parts)
        if exact:
            return Const(s)
        kind = s.split(":", 1)[0].lower()
        return Const(s) if kind in torch_api.ACCELERATORS else UNKNOWN_SCALAR

    def ev_IfExp(self, n: ast.IfExp, frame: Frame) -> Value:
        t = self.truth_of(n.test, frame)
        if t is True:
            return self.ev(n.body, frame)
        if t is False:
            return self.ev(n.orelse, frame)
        guarded = self.device_guard(n.test, frame)
        body = self._guarded_ev(n.body, n.test, frame) if guarded is True else self.ev(n.body, frame)
        orelse = self._guarded_ev(n.orelse, n.test, frame) if guarded is False else self.ev(n.orelse, frame)
        if guarded is not None:
            # `T = torch.cuda.FloatTensor if x.is_cuda else torch.FloatTensor`: the CUDA side is chosen only when
            # an existing value is already on CUDA, so (as for a CUDA call in that branch) a later `T(...)` is
            # never the test's first CUDA use: the value is the other side's
            return orelse if guarded is True else body
        return join(body, orelse)

    def device_guard(self, test: ast.expr, frame: Frame) -> bool | None:
        """guards.cuda_guard of an undecided condition, knowing which names hold an existing value's device."""
        return cuda_guard(test, lambda e: self._holds_existing(e, frame, EXISTING_DEVICE, DeviceV("cpu")),
                          lambda e: self._holds_existing(e, frame, EXISTING_IS_CUDA, Const(False)) or
                          self._holds_existing(e, frame, EXISTING_CUDA_VALUES, Seq((), "list")))

    def _holds_existing(self, e: ast.expr, frame: Frame, marker: Value, plain: Value) -> bool:
        """`e` (a name or attribute path) holds what `marker` stands for of a value that exists (its device,
        `EXISTING_DEVICE`; its `.is_cuda`, `EXISTING_IS_CUDA`), or on some paths the CPU's answer `plain`."""
        alts = alternatives(self.ev(e, frame))
        return marker in alts and all(a == marker or a == plain for a in alts)

    def existing_device_elements(self, it: ast.expr, frame: Frame) -> Value | None:
        """What `for d, v in self.stats.items():` gives when the analysis does not know the dict's content but
        every key the object's classes ever put in it is the device of an existing tensor
        (provenance.keys_are_existing_devices): (that device, unknown); likewise the keys and values of a local
        dict comprehension (`for n, d in devices.items()` after `devices = {n: p.device for ...}`). None: not
        such a loop."""
        local = iterated_local_dict(it)
        if local is not None:
            return self._local_dict_elements(local[0], local[1], it.lineno, frame)
        got = iterated_dict_attr(it)
        if got is None:
            return None
        owner, attr, pairs = got
        objs = alternatives(frame.env.get(owner, UNK))
        if not all(isinstance(o, Inst) for o in objs):
            return None
        for o in objs:
            assert isinstance(o, Inst)
            mro = tuple(k for k in self.mro(o.cls, frame.world) if isinstance(k, ClassV))
            known = self.existing_device_keys.get((mro, attr))
            if known is None:  # (read from the classes' source: once per MRO and attribute, not per loop)
                classes = [c for c in (self.class_node(k) for k in mro) if c is not None]
                known = self.existing_device_keys[mro, attr] = keys_are_existing_devices(classes, attr)
            if not known:
                return None
        return Seq((EXISTING_DEVICE, UNK), "tuple") if pairs else EXISTING_DEVICE

    def _local_dict_elements(self, name: str, part: str, line: int, frame: Frame) -> Value | None:
        func = self._enclosing_function(frame.rel, line) if frame.module_env is not None else None
        if func is None:
            return None
        keys, values = local_dict_of_existing_devices(func, name)
        key = EXISTING_DEVICE if keys else UNK
        value = EXISTING_DEVICE if values else UNK
        if not (keys or values) or (part == "keys" and not keys) or (part == "values" and not values):
            return None
        return Seq((key, value), "tuple") if part == "items" else key if part == "keys" else value

    def _enclosing_function(self, rel: str, line: int) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """The innermost function of module `rel` whose source spans `line`."""
        best: ast.FunctionDef | ast.AsyncFunctionDef | None = None
        for node in self.source.module(rel).defs.values():
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                    and node.lineno <= line <= (node.end_lineno or node.lineno) \
                    and (best is None or node.lineno >= best.lineno):
                best = node
        return best

    def _guarded_ev(self, node: ast.expr, test: ast.expr, frame: Frame) -> Value:
        with dropping_gpu_findings(frame, note=guard_note(frame.rel, test)):
            return self.ev(node, frame)

    def ev_BoolOp(self, n: ast.BoolOp, frame: Frame) -> Value:
        """`a and b` / `a or b`: a definitely deciding operand wins; its value keeps the right truth."""
        decisive = not isinstance(n.op, ast.And)
        maybe: list[Value] = []  # operands whose truth is unknown: each may be the result
        v: Value = UNK
        for e in n.values:
            v = self.ev(e, frame)
            t = truth(v)
            if t is decisive:
                # an undecided operand is the result only in its deciding state: `x and False` is falsy
                # whatever x is, `d or "cpu"` with d one of (cuda, None) is cuda or "cpu"
                # (the flag that a value is on CUDA, in its deciding state, is that bool)
                out = join_all([Const(decisive) if a == EXISTING_IS_CUDA else a for m in maybe
                                for a in alternatives(m) if truth(a) is not (not decisive)] + [v])
                return KnownTruth(decisive) if isinstance(out, Unresolved) else out
            if t is None:
                maybe.append(v)
        # no operand decided: the last one is the result, or an undecided one before it (`None or next(...)`
        # is the last operand: an operand that surely does not decide is never the result)
        if not maybe or maybe[-1] is not v:
            maybe.append(v)
        if isinstance(n.op, ast.And) and existing_cuda_flag(v):
            # `hasattr(v, "device") and v.device == torch.device("cuda")`: falsy, or true only when a value that
            # exists is on CUDA (the earlier operands' falsy values are not the flag's, but decide nothing more)
            return join(Const(False), EXISTING_IS_CUDA)
        return join_all(maybe)

    def ev_UnaryOp(self, n: ast.UnaryOp, frame: Frame) -> Value:
        v = self.ev(n.operand, frame)
        dunder = UNARY_DUNDERS.get(type(n.op))
        got = self.call_own_method(v, dunder, [], n, frame) if dunder else None
        if got is not None:
            return got  # `-op`: `__neg__`
        if isinstance(n.op, ast.Not):
            t = truth(self.truth_value(v, n, frame))
            return Const(not t) if t is not None else UNK
        if isinstance(v, Const) and isinstance(v.value, (int, float, complex)) and not isinstance(v.value, bool):
            if isinstance(n.op, ast.USub):
                return Const(-v.value)
            if isinstance(n.op, ast.UAdd):
                return v
            if isinstance(n.op, ast.Invert) and isinstance(v.value, int):
                return Const(~v.value)
        return UNK

    def ev_Compare(self, n: ast.Compare, frame: Frame) -> Value:
        left = self.ev(n.left, frame)
        result: Value = Const(True)
        for op, comp in zip(n.ops, n.comparators, strict=False):
            right = self.ev(comp, frame)
            r = self.comparison_method(op, left, right, n, frame)
            if r is None:
                r = _compare(op, left, right)
            t = truth(r)
            if t is False:
                return Const(False)
            if t is None:
                result = UNK
            left = right
        if isinstance(result, Unresolved) and len(n.ops) == 1 and self.device_guard(n, frame) is True:
            # `value.device == torch.device("cuda")`, `x.device.type == "cuda"` undecided: true only when a value
            # that exists is on CUDA, as `x.is_cuda` (the flag carries into names, `any(...)`, `and`)
            return EXISTING_IS_CUDA
        return result

    def _binop(self, op: ast.operator, a: Value, b: Value) -> Value:
        got = path_binop(op, a, b)
        if got is not None:
            return got
        got = _tensor_arithmetic(op, a, b)
        if got is not None:
            return got
        if (isinstance(a, OneOf) or isinstance(b, OneOf)) and _const_alternatives(a) and _const_alternatives(b):
            # `"run_" + kind` with kind one of known strings: one of the results
            return join_all([self._binop(op, x, y) for x in alternatives(a) for y in alternatives(b)])
        if isinstance(a, Const) and isinstance(b, Const):
            fn = _BIN.get(type(op))
            if fn is not None:
                limits.check_binop(type(op), a.value, b.value)
                try:
                    r = fn(a.value, b.value)
                except Exception:  # noqa: BLE001 - any arithmetic error just means "unknown"
                    return UNK
                if isinstance(r, (str, int, float, complex, bool, bytes)) and (not isinstance(r, str) or len(
                        r) <= MAX_CONCAT):
                    return Const(r)
        if (isinstance(a, UnknownScalar) or isinstance(b, UnknownScalar)) and all(
                isinstance(x, UnknownScalar) or isinstance(x, Const) and type(x.value) in (int, float)
                for x in (a, b)) and type(op) in _BIN and not isinstance(op, ast.Mod):
            return UNKNOWN_SCALAR  # `1 - math.sqrt(x)` of an unknown x: a number pytest spells in an id
        if isinstance(a, Seq) and isinstance(b, Seq) and isinstance(op, ast.Add):
            return bounded(Seq(a.items + b.items, a.kind))
        if isinstance(a, Seq) and isinstance(b, Seq) and a.kind == b.kind == "set" and isinstance(op, ast.Sub):
            return Seq(tuple(i for i in a.items if i not in b.items), "set")  # `picked - set(cases)`
        if isinstance(a, Seq) and isinstance(b, Seq) and a.kind == b.kind == "set" and isinstance(
                op, (ast.BitOr, ast.BitAnd)) and all(isinstance(i, Const) for i in (*a.items, *b.items)):
            # `NATIVE | {"demo"}`, `A & B` over constants (equal constants are one element, as in Python)
            if isinstance(op, ast.BitOr):
                return bounded(Seq(a.items + tuple(i for i in b.items if i not in a.items), "set"))
            return Seq(tuple(i for i in a.items if i in b.items), "set")
        if isinstance(op, ast.Mod) and isinstance(a, Const) and isinstance(a.value, str) and isinstance(b, Seq) \
                and b.kind == "tuple":
            return _percent_format(a.value, b)
        if isinstance(a, Const) and isinstance(a.value, str) and isinstance(op, ast.Add):
            kind = a.value.split(":", 1)[0].lower()
            if kind in torch_api.ACCELERATORS:
                return Const(a.value + "?")
        if isinstance(op, ast.Add) and (isinstance(a, UnknownScalar) or isinstance(b, UnknownScalar)) and all(
                isinstance(x, UnknownScalar) or isinstance(x, Const) and isinstance(x.value, str) for x in (a, b)):
            return UNKNOWN_SCALAR  # `str(sym) + "->"`: a string (its id is its text, never `argname<index>`)
        if isinstance(op, ast.Mod) and isinstance(a, Const) and isinstance(a.value, str):
            # `"run-%s" % name` of an unknown name: a string; `"cuda:%d" % rank` names an accelerator whatever the
            # rank is (as an f-string does)
            kind = a.value.split(":", 1)[0].lower()
            return Const(_PRINTF_FIELD.sub("?", a.value)) if kind in torch_api.ACCELERATORS else UNKNOWN_SCALAR
        return UNK

    def ev_BinOp(self, n: ast.BinOp, frame: Frame) -> Value:
        left, right = self.ev(n.left, frame), self.ev(n.right, frame)
        if isinstance(n.op, ast.Mod) and isinstance(left, Const) and isinstance(left.value, str) and isinstance(
                right, (Inst, ClassV, Seq)) and _PERCENT_STRINGS.fullmatch(left.value):
            # `"%s-%s" % (op, domain)`: `%s` prints an object as `str()` does, through its class if that says how
            items = right.items if isinstance(right, Seq) and right.kind == "tuple" else (right,)
            texts = [self.printed_by_class(i, "", "", n, frame) if isinstance(i, (Inst, ClassV)) else None
                     for i in items]
            if any(t is not None for t in texts):
                printed = tuple(Const(t) if t is not None else i for t, i in zip(texts, items, strict=True))
                right = Seq(printed, "tuple") if isinstance(right, Seq) and right.kind == "tuple" else printed[0]
        got = self.operator_method(n.op, left, right, n, frame)
        if got is None and isinstance(n.op, ast.Mult) and frame.module_env is None:
            got = _repeated(left, right)
        return got if got is not None else self._binop(n.op, left, right)

    def operator_method(self, op: ast.operator, left: Value, right: Value, n: ast.AST, frame: Frame,
                        inplace: bool = False) -> Value | None:
        """`a @ b`, `a + b`, `a += b` where an operand is an object of an in-repo class defining the operator
        (`__matmul__`; `__iadd__` first for `+=`; the right operand's `__rmatmul__` when the left one's class does not
        define it): what the method returns, its findings kept (a linear operator's product on CUDA); None where no
        in-repo method applies (then the operator is evaluated on values)."""
        name = BINARY_DUNDERS.get(type(op))
        if name is None or not (isinstance(left, Inst) or isinstance(right, Inst)):
            return None
        tried = ((left, right, f"__i{name}__"),) if inplace else ()
        for obj, other, dunder in (*tried, (left, right, f"__{name}__"), (right, left, f"__r{name}__")):
            got = self.call_own_method(obj, dunder, [other], n, frame)
            if got is not None:
                return got
        return None

    def comparison_method(self, op: ast.cmpop, left: Value, right: Value, n: ast.AST, frame: Frame) -> Value | None:
        """`a == b`, `a < b`, `x in box` where an operand is an object of an in-repo class defining the comparison
        (`__eq__`, then the right operand's reflection, `__gt__` for `<`; `__contains__` of the container): what the
        method returns, its findings kept; None where no in-repo method applies. `!=` without `__ne__` is the
        negation of `__eq__`, `not in` of `__contains__`."""
        if not (isinstance(left, Inst) or isinstance(right, Inst)):
            return None
        if isinstance(op, (ast.In, ast.NotIn)):
            got = self.call_own_method(right, "__contains__", [left], n, frame)
            return _negated(got) if isinstance(op, ast.NotIn) and got is not None else got
        names = COMPARISON_DUNDERS.get(type(op))
        if names is None:
            return None
        own, reflected = names
        for obj, other, dunder in ((left, right, own), (right, left, reflected)):
            got = self.call_own_method(obj, dunder, [other], n, frame)
            if got is not None:
                return got
        if isinstance(op, ast.NotEq):
            got = self.comparison_method(ast.Eq(), left, right, n, frame)
            return _negated(got) if got is not None else None
        return None

    def truth_of(self, test: ast.expr, frame: Frame) -> bool | None:
        """Whether a branch's test holds (`if`, `while`, `assert`, `x if test else y`): its value's truth, an in-repo
        `__bool__`/`__len__` run (truth_value); None where undecided."""
        return truth(self.truth_value(self.ev(test, frame), test, frame))

    def truth_value(self, v: Value, n: ast.AST, frame: Frame) -> Value:
        """What decides `if v:` (and `not v`, `x if v else y`, `while v:`): an in-repo `__bool__` or `__len__` of v's
        class runs and its result decides (what it does counted); anything else is v itself."""
        if isinstance(v, Inst):
            for dunder in ("__bool__", "__len__"):
                got = self.call_own_method(v, dunder, [], n, frame)
                if got is not None:
                    return got
        return v

    def call_own_method(self, obj: Value, name: str, args: list[Value], n: ast.AST, frame: Frame) -> Value | None:
        """`obj.<name>(*args)` where obj's in-repo class defines that method (what Python calls for an operator or
        an item store): what the call returns; None where obj is no in-repo object or its class lacks the method."""
        cls = obj.cls if isinstance(obj, Inst) else self.metaclass_of(obj, frame.world) if isinstance(
            obj, ClassV) else None  # (a class made by an in-repo metaclass: the metaclass's method, on the class)
        found = self.class_lookup(cls, name, frame.world) if cls is not None else None
        if not (isinstance(found, FuncV) and cls is not None):
            return None
        return self.call(self.bound_method(found, obj, cls), args, {}, n, frame, name)

    def printed_by_class(self, v: Value, conversion: str, spec: str, n: ast.AST, frame: Frame) -> str | None:
        """How an object of an in-repo class (or a class an in-repo metaclass made) prints in an f-string,
        `str.format` or `%` when its class says how: `repr()` ("r") through `__repr__`; `format(v, spec)` ("")
        through an in-repo `__format__`, else, with no spec, through `__str__` or `__repr__` as object's do. What
        those methods do runs; None for any other value or a text the analysis does not know."""
        got = self.printed_value(v, conversion, spec, n, frame)
        return got.value if isinstance(got, Const) and isinstance(got.value, str) else None

    def printed_value(self, v: Value, conversion: str, spec: str, n: ast.AST, frame: Frame) -> Value | None:
        """What the in-repo method Python picks to print v returns (what it does runs): `str()` ("s") calls
        `__str__`, else `__repr__`; `repr()` ("r") `__repr__`; `format(v, spec)` ("") `__format__`, else, with no
        spec, as `str()`. A class made by an in-repo metaclass prints through the metaclass's. None where its class
        defines none of them."""
        if not isinstance(v, (Inst, ClassV)):
            return None
        if conversion == "":
            got = self.call_own_method(v, "__format__", [Const(spec)], n, frame)
            if got is not None or spec:
                return got
        got = self.call_own_method(v, "__str__", [], n, frame) if conversion != "r" else None
        return got if got is not None else self.call_own_method(v, "__repr__", [], n, frame)

    def ev_Subscript(self, n: ast.Subscript, frame: Frame) -> Value:
        namespace = self.namespace_of(n.value, frame)
        if namespace is not None:  # `globals()[NAMES[kind]]`, `module.__dict__[name]`
            return self.namespace_entry(namespace, self.ev(n.slice, frame), None, n, frame)
        obj = self.ev(n.value, frame)
        idx = self._index(n.slice, frame)
        if obj == Ext("os.environ"):
            return environ_get(frame, idx, UNK)  # what the code set (unset: a KeyError, or unknown)
        if obj == Ext("sys.modules") and isinstance(idx, Const) and isinstance(idx.value, str):
            # `sys.modules["pkg.mod"]` of an in-repo module (a test's handle for `patch.object(MOD, ...)`), and
            # `sys.modules[__name__]` at a module's top level (`inspect.getmembers(sys.modules[__name__], ...)`)
            rel = self.source.resolve_import(idx.value, "", 0, "")
            return ModV(rel, idx.value, frame.rel) if rel else UNK
        if isinstance(obj, Ext) and obj.path in ("numpy.s_", "numpy.index_exp") and isinstance(idx, Const) \
                and not isinstance(n.slice, ast.Slice):
            return idx if obj.path == "numpy.s_" else Seq((idx,), "tuple")  # numpy's index builders: `np.s_[2]` is 2
        if isinstance(obj, Seq) and isinstance(idx, Const) and isinstance(idx.value, int):
            try:
                return obj.items[idx.value]
            except IndexError:
                return UNK
        held = module_children(obj)
        if held and isinstance(idx, Const) and type(idx.value) is int:
            # `self.operations[0].device`: the child the list was built with (on each path, when the list differs)
            if all(isinstance(m, Seq) and -len(m.items) <= idx.value < len(m.items) for m in held):
                return join_all([m.items[idx.value] for m in held if isinstance(m, Seq)])
        if held and (cut := slice_of(idx)) is not None and isinstance(obj, NNModV) and obj.name != "ModuleDict" and \
                all(isinstance(m, Seq) for m in held):
            # `self.layers[1:]`: a container of the same kind holding those children
            return join_all([NNModV(obj.name, (("modules", Seq(m.items[cut], "list")),)) for m in held
                             if isinstance(m, Seq)])
        if held and isinstance(idx, Const) and isinstance(idx.value, str) and all(isinstance(m, DictV) for m in held):
            # `self.heads["cls"](x)`: a ModuleDict's child by its key (a missing key is a KeyError in torch)
            found = [v for m in held if isinstance(m, DictV) for k, v in m.items if k == idx]
            return join_all(found) if found else UNK
        if omegaconf_model.is_config(obj) and isinstance(obj, Inst) and isinstance(idx, Const) and isinstance(
                idx.value, str):
            got = obj.attr(idx.value)  # `cfg["device"]` of a configuration (omegaconf_model.py)
            return got if got is not None else UNK
        if isinstance(obj, ClassV) and isinstance(idx, Const) and isinstance(idx.value, str) and self.enum_kind(
                obj, frame.world) is not None:
            return self.enum_member(obj, idx.value, frame.world) or UNK  # `Backend["GPU"]`: the member by name
        if isinstance(obj, Inst):
            meth = self.class_lookup(obj.cls, "__getitem__", frame.world)
            if isinstance(meth, FuncV):  # `cases(...)[:, ["a"]]`: the class's own indexing
                bound = FuncV(meth.rel, meth.pos, meth.name, bound=obj, captured=meth.captured, cls=meth.cls)
                return self.call_function_from(bound, [idx], {}, n.lineno, frame)
        if isinstance(obj, ClassV) and isinstance(meta := self.metaclass_of(obj, frame.world), ClassV) and isinstance(
                meth := self.class_lookup(meta, "__getitem__", frame.world), FuncV):
            # `Bint[2]` of `class Bint(metaclass=BintType)`: the metaclass's indexing, on the class (funsor's domains)
            bound = FuncV(meth.rel, meth.pos, meth.name, bound=obj, captured=meth.captured, cls=meth.cls)
            return self.call_function_from(bound, [idx], {}, n.lineno, frame)
        cut = slice_of(idx)
        if isinstance(obj, Const) and isinstance(obj.value, (str, bytes)) and isinstance(n.slice, ast.Slice):
            bounds = [self.ev(b, frame) if b is not None else Const(None)
                      for b in (n.slice.lower, n.slice.upper, n.slice.step)]
            if all(isinstance(b, Const) and (b.value is None or type(b.value) is int) for b in bounds) \
                    and bounds[2] != Const(0):
                return Const(obj.value[slice(*(b.value for b in bounds if isinstance(b, Const)))])  # `"abc"[::-1]`
        if isinstance(obj, Const) and isinstance(obj.value, (str, bytes)) and isinstance(idx, Const) and type(
                idx.value) is int and -len(obj.value) <= idx.value < len(obj.value):
            return Const(obj.value[idx.value])  # `_einsum_symbols_base[i]`
        if isinstance(obj, Seq) and obj.kind in ("tuple", "list") and cut is not None:
            return Seq(obj.items[cut], obj.kind)  # `cases[s]` with a slice value (`slice(0, 2)`, `case slice() as s`)
        if isinstance(obj, Seq) and obj.kind in ("tuple", "list") and isinstance(n.slice, ast.Slice):
            bounds = [self.ev(b, frame) if b is not None else Const(None)
                      for b in (n.slice.lower, n.slice.upper, n.slice.step)]
            if all(isinstance(b, Const) and (b.value is None or type(b.value) is int) for b in bounds) \
                    and bounds[2] != Const(0):
                # `v[1:]` of a known tuple (parameter values, ids functions)
                return Seq(obj.items[slice(*(b.value for b in bounds if isinstance(b, Const)))], obj.kind)
        if isinstance(obj, DictV) and decided_key(idx) and exact_keys(obj):  # `d["x"]`, `{A: .., B: ..}[A]`
            for k, v in obj.items:
                if k == idx:
                    return v
        if isinstance(obj, OneOf) and all(isinstance(a, DictV) for a in obj.alts):
            # a dict filled in a loop that may not have run (`{}` or `{idx: device}`): the entries of the paths
            # where one may be there; on the others the lookup raises KeyError and goes no further
            found = [v for a in obj.ordered() if isinstance(a, DictV) and (v := _dict_entry(a, idx)) is not None]
            if found:
                return bounded(join_all(found))
        if isinstance(obj, DictV) and torch_constant_str(idx) is not None:
            # `{torch.sparse_coo: "coo", torch.sparse_csr: "csr"}[layout]`: torch's constants, aliases included
            for k, v in obj.items:
                if torch_constant_str(k) == torch_constant_str(idx):
                    return v
        joined = undecided_entry(obj, idx)
        return joined if joined is not None else UNK

    def attribute_hook(self, obj: Inst, name: str, world: int) -> FuncV | None:
        """The in-repo `__getattr__` Python calls for `obj.<name>` when neither the object nor its class has the
        name, bound to obj; None without one (and for dunder names, which Python's own protocols probe)."""
        if name.startswith("__"):
            return None
        hook = self.class_lookup(obj.cls, "__getattr__", world)
        if not isinstance(hook, FuncV):
            return None
        if (name in nn_modules.MODULE_PUBLIC_ATTRS or name.startswith("_")) and (
                obj.nn is not None or self.derives_from_torch_module(obj.cls, world)):
            # a torch module: Python finds `model.eval()` and its private state (`_modules`) on torch.nn.Module and
            # never calls the hook. (Other external bases, mixins such as transformers' PushToHubMixin, are not
            # listed: their names are taken as absent, so the hook is followed)
            return None
        return self.bound_method(hook, obj, obj.cls)

    def own_iterator(self, v: Value, line: int, frame: Frame) -> Value:
        """`for runner in pool` over objects whose in-repo class defines `__iter__`: what that method returns (or
        yields: the generated values); else `v` itself."""
        if not is_objects(v):
            return v
        out: list[Value] = []
        for obj in alternatives(v):
            assert isinstance(obj, Inst)
            meth = self.class_lookup(obj.cls, "__iter__", frame.world)
            if not isinstance(meth, FuncV):
                return v
            got = self.call_function_from(self.bound_method(meth, obj, obj.cls), [], {}, line, frame)
            out.append(self.own_next(got, line, frame))
        return join_all(out)

    def own_next(self, it: Value, line: int, frame: Frame) -> Value:
        """An iterator object whose in-repo class defines `__next__` (`__iter__` returning self): its `__next__` runs
        once, for what it does (a batch moved to CUDA there); the elements it gives are unknown (how many, and
        each one). Anything else is returned as it is."""
        step = self.class_lookup(it.cls, "__next__", frame.world) if isinstance(it, Inst) else None
        if not (isinstance(step, FuncV) and isinstance(it, Inst)):
            return it
        self.call_function_from(self.bound_method(step, it, it.cls), [], {}, line, frame)
        return UNK

    def namespace_of(self, e: ast.expr, frame: Frame) -> tuple[str, Callable[[str], Value | None]] | None:
        """When `e` is a namespace read as a dict: (how it is spelled, the lookup of a name in it: None, or
        unknown, for a name it lacks): `globals()` (at a module's top level what it bound so far, in a function
        the global it reads), `locals()`, and `vars(x)` / `x.__dict__` of an in-repo module or class. None for
        anything else (an object's `__dict__` is a dict of its attributes: attrs_dict)."""
        if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and not e.keywords and \
                e.func.id in ("globals", "locals", "vars") and len(e.args) == (e.func.id == "vars") and \
                self.lookup(e.func.id, frame) == Ext(f"builtins.{e.func.id}"):
            if e.func.id == "globals" and frame.module_env is not None:
                return "globals()", lambda name: self.lookup_global(name, frame)
            if e.func.id in ("globals", "locals"):
                return f"{e.func.id}()", frame.env.get
            holder: ast.expr = e.args[0]
        elif isinstance(e, ast.Attribute) and e.attr == "__dict__" and _plain_reference(e.value):
            holder = e.value  # (evaluated here and, for an object's `__dict__`, again by the caller: no calls in it)
        else:
            return None
        owner = self.ev(holder, frame)
        spelled = f"vars({ast.unparse(holder)[:40]})"
        if isinstance(owner, ModV):
            return spelled, lambda name: self.getattr_v(owner, name, frame, e)
        if isinstance(owner, ClassV):  # (the class's own namespace: its body, not its bases')
            return spelled, lambda name: self.class_body(owner, frame.world).get(name)
        return None

    def namespace_entry(self, namespace: tuple[str, Callable[[str], Value | None]], name: Value,
                        default: Value | None, n: ast.AST, frame: Frame) -> Value:
        """`globals()[name]` (`default` None), `globals().get(name, default)`, the same of another namespace_of:
        the value bound to that name, one of them for a choice of names (a table of class names,
        `globals()[NAMES[kind]](...)`). A name the analysis cannot list is a dynamic dispatch: it may name any
        function or class there, and a call of an unknown value would not be followed."""
        spelled, lookup = namespace
        line = getattr(n, "lineno", 0)
        names = alternatives(name)
        if not all(isinstance(a, Const) and isinstance(a.value, str) for a in names):
            return Ext(DYNAMIC + step(frame.rel, line, f"{spelled} looked up by a computed name: dynamic dispatch"))
        found: list[Value] = []
        for a in names:
            assert isinstance(a, Const)
            got = lookup(a.value)
            if got is None:
                got = default  # (None: a KeyError, no value on that path)
            if got is not None:
                found.append(got)
        return chosen_by_name(found, frame.rel, line, f"{spelled}[...]") if found else UNK

    def ev_Slice(self, n: ast.Slice, frame: Frame) -> Value:
        """`a:b:c` inside a subscript, as the slice object `__getitem__` receives (`x[:, ["a"]]` on an in-repo
        object)."""
        bounds = [self.ev(b, frame) if b is not None else Const(None) for b in (n.lower, n.upper, n.step)]
        return Seq(tuple(bounds), SLICE)

    def ev_Lambda(self, n: ast.Lambda, frame: Frame) -> Value:
        return self.make_function(n, frame)

    def ev_Await(self, n: ast.Await, frame: Frame) -> Value:
        return self.ev(n.value, frame)

    def ev_Yield(self, n: ast.Yield, frame: Frame) -> Value:
        v = self.ev(n.value, frame) if n.value is not None else Const(None)
        frame.returns.append(v)
        _generate(frame, (v,))
        _receiver_at_yield(frame)
        return UNK

    def ev_YieldFrom(self, n: ast.YieldFrom, frame: Frame) -> Value:
        v = self.ev(n.value, frame)
        _generate(frame, v.items if isinstance(v, Seq) else None)
        _receiver_at_yield(frame)
        return UNK

    def ev_Starred(self, n: ast.Starred, frame: Frame) -> Value:
        return self.ev(n.value, frame)

    def _comprehension(self, n: Any, elts: list[ast.expr], frame: Frame) -> list[list[Value]] | Value:
        """The rows of a listable comprehension (_listed_comprehension), else what one pass over joined elements
        shows: its findings, and a value only where the element keeps a device."""
        listed = self._listed_comprehension(n, elts, frame)
        if listed is not None:
            return listed
        inner = self._branch(frame)
        cuda_only = False
        for gen in n.generators:
            it = iterated(self.own_iterator(self.ev(gen.iter, inner), gen.iter.lineno, inner))
            if isinstance(it, Seq) and it.kind == "range" and not it.items:
                return Seq((), "list")  # nothing is evaluated: `[... for i in range(device_count())]` on a CPU
            elem = join_all(list(it.items)) if isinstance(it, Seq) and it.items else UNK
            self.bind(gen.target, elem, inner)
            for cond in gen.ifs:
                kept = truth(self.ev(cond, inner))
                cuda_only = cuda_only or kept is None and self.device_guard(cond, inner) is True
        vals = [self.ev(e, inner) for e in elts]
        if cuda_only and not isinstance(n, ast.DictComp):
            # `[t for t in tensors if t.device.type == "cuda"]`: only values already on CUDA, or none
            return EXISTING_CUDA_VALUES
        # `[x.to("cuda") for x in xs]` keeps its device; `next(t.device for t in args)` is an existing tensor's;
        # `any(_is_cuda(v) for v in values)` asks whether an existing value is on CUDA (EXISTING_IS_CUDA)
        keep = accel_device(vals[-1]) or isinstance(vals[-1], DeviceV) or vals[-1] == EXISTING_DEVICE or (
            existing_cuda_flag(vals[-1]) and not isinstance(n, ast.DictComp))
        if keep and isinstance(n, ast.DictComp) and hashable(vals[0]):
            # `{idx: device for idx in range(n)}`: no entry, or entries holding that device under such keys
            return join(DictV(()), DictV(dict_items([(vals[0], vals[1])])))
        return Seq((vals[0],), "list") if keep and len(vals) == 1 else UNK

    def _listed_comprehension(self, n: Any, elts: list[ast.expr], frame: Frame) -> list[list[Value]] | None:
        """The elements of a comprehension evaluated one by one, as Python runs it, when every generator runs
        over a known sequence and every `if` is decided: `[name for name in NAMES if name not in SKIP]`,
        `{cls.__name__.lower(): cls for cls in CLASSES}`, `[(d, t) for d in DEVICES for t in DTYPES]` (parameter
        values and ids). Each row holds the values of `elts` for one iteration; None: not listable (an
        unknown or too long iterable, an undecided condition, more than MAX_LISTED_ELEMENTS iterations)."""
        if any(gen.is_async for gen in n.generators):
            return None
        rows: list[list[Value]] = []
        left = [MAX_LISTED_ELEMENTS]
        local = {t.id for gen in n.generators for t in ast.walk(gen.target) if isinstance(t, ast.Name)}

        def run(level: int, outer: Frame) -> bool:
            if level == len(n.generators):
                rows.append([self.ev(e, outer) for e in elts])
                return True
            gen = n.generators[level]
            it = iterated(self.own_iterator(self.ev(gen.iter, outer), gen.iter.lineno, outer))
            if not isinstance(it, Seq):
                return False
            for item in it.items:
                left[0] -= 1
                if left[0] < 0:
                    return False
                inner = self._branch(outer)
                self.bind(gen.target, item, inner)
                kept: bool | None = True
                for cond in gen.ifs:  # in order, up to the first false one, as Python does
                    kept = truth(self.ev(cond, inner))
                    if not kept:
                        break
                if kept is None or kept and not run(level + 1, inner):
                    return False
                # what an iteration did to names outside the comprehension (`{k: kwargs.pop(k) for k in
                # list(kwargs) if k in ENVOY_KWARGS}` rebinds `kwargs`, as the pop changes the dict) holds after it
                outer.env.update((k, v) for k, v in inner.env.items() if k not in local and outer.env.get(k) is not v)
            return True

        return rows if run(0, frame) else None

    def ev_ListComp(self, n: ast.ListComp, frame: Frame) -> Value:
        got = self._comprehension(n, [n.elt], frame)
        return Seq(tuple(row[0] for row in got), "list") if isinstance(got, list) else got

    def ev_SetComp(self, n: ast.SetComp, frame: Frame) -> Value:
        got = self._comprehension(n, [n.elt], frame)
        return set_literal([row[0] for row in got]) if isinstance(got, list) else got

    def ev_GeneratorExp(self, n: ast.GeneratorExp, frame: Frame) -> Value:
        got = self._comprehension(n, [n.elt], frame)
        return Seq(tuple(row[0] for row in got), "list") if isinstance(got, list) else got

    def ev_DictComp(self, n: ast.DictComp, frame: Frame) -> Value:
        got = self._comprehension(n, [n.key, n.value], frame)
        if isinstance(got, list):
            return DictV(dict_items((row[0], row[1]) for row in got))
        return got if isinstance(got, (DictV, OneOf)) else UNK

    def ev_Attribute(self, n: ast.Attribute, frame: Frame) -> Value:
        obj = self.ev(n.value, frame)
        if isinstance(obj, OneOf) and not n.attr.startswith("__"):
            # `points.device` where `points` may be None: None has no such attribute, so the paths where it is
            # None raise here and only the others go on (torchphysics' Points returned on some paths only)
            rest = [a for a in alternatives(obj) if not (isinstance(a, Const) and a.value is None)]
            if rest and len(rest) < len(obj.alts):
                obj = join_all(rest)
        if n.attr == "device" and (isinstance(obj, Unresolved) or isinstance(obj, NNModV) and obj.device is None) \
                and _device_of_existing(n):
            return EXISTING_DEVICE
        if n.attr == "is_cuda" and isinstance(obj, Unresolved) and _device_of_existing(n, "is_cuda"):
            return EXISTING_IS_CUDA
        if n.attr == "hf_device_map" and isinstance(obj, Unresolved) and _device_of_existing(n, "hf_device_map"):
            return HF_DEVICE_MAP  # (a loading that put the model on CUDA is a need where it is called)
        if n.attr == "device" and isinstance(obj, Inst) and obj.attr("device") is None and \
                self._reports_existing_device(obj, frame):
            # `self.device` of a tensor subclass (`_make_wrapper_subclass(cls, ..., device=elem.device)`): the
            # device of a tensor that exists; `model.device` of a LightningModule or a transformers model: the
            # device its parameters are on now (`x.to(model.device)` keeps x with them)
            return EXISTING_DEVICE
        return self.registry_view(self.getattr_v(obj, n.attr, frame, n), frame.world)  # (`Base.registry`)

    def _reports_existing_device(self, obj: Inst, frame: Frame) -> bool:
        """Whether obj's `device` is where something that exists already is: its class does not define `device` and
        derives from torch.Tensor (or nn.Parameter), or from a library module class whose `device` property
        reports where the module's parameters are (DEVICE_REPORTING_MODULES)."""
        if self.class_lookup(obj.cls, "device", frame.world) is not None:
            return False
        return any(isinstance(c, Ext) and (c.path in TENSOR_CLASSES or c.path.rpartition(".")[2] in
                                           DEVICE_REPORTING_MODULES and c.path.partition(".")[0] in
                                           DEVICE_REPORTING_PACKAGES) for c in self.mro(obj.cls, frame.world))

    def _method_value(self, found: FuncV, obj: Value, cls: ClassV | None, node: ast.AST, frame: Frame) -> Value:
        """`obj.<name>` where the class defines the function `found`: the method as bound_method binds it (to obj
        when its class is unknown), or, for a property, what its getter returns."""
        wrapper = found.attr(WRAPPER) if found.attrs else None
        if isinstance(wrapper, Inst) and cls is not None:
            got = self.descriptor_get(wrapper, obj, cls, node, frame)  # `@cached_value def table(self)`
            if got is not None and not isinstance(got, Unresolved):
                return got  # (`types.MethodType(self.fn, obj)` and the like: the method, bound as before)
        bound = self.bound_method(found, obj, cls) if cls is not None else FuncV(
            found.rel, found.pos, found.name, bound=obj, captured=found.captured, cls=found.cls)
        if self._is_property(found):
            return self.call_function_from(bound, [], {}, getattr(node, "lineno", 0), frame)
        return bound

    def descriptor_get(self, desc: Inst, obj: Value, cls: ClassV, node: ast.AST, frame: Frame) -> Value | None:
        """A class attribute that is an object of an in-repo class defining `__get__` (a descriptor: a hand-written
        cached property, a lazy tensor), read on an object: what `__get__(obj, cls)` returns; None for another
        object."""
        get = self.class_lookup(desc.cls, "__get__", frame.world)
        if not isinstance(get, FuncV):
            return None
        return self.call_function_from(self.bound_method(get, desc, desc.cls), [obj, cls], {},
                                       getattr(node, "lineno", 0), frame)

    def getattr_v(self, obj: Value, name: str, frame: Frame, node: ast.AST) -> Value:
        if isinstance(obj, OneOf) and all(isinstance(a, Inst) for a in obj.alts):
            # `if ...: self.buffer_class = A else: self.buffer_class = B` leaves two objects: read from each
            return join_all([self.getattr_v(a, name, frame, node) for a in alternatives(obj)])
        if isinstance(obj, Ext):
            if obj.path.startswith("<devices>"):
                return UNK
            if versions.is_version(obj):  # `.release` of a version; a str method of torch.__version__ is called
                return versions.attribute(obj, name) or UNK
            if obj.path == MOCK_OBJECT:
                return obj
            last = obj.path.rsplit(".", 1)[-1]
            if name == "__name__" and "." in obj.path and last.isidentifier() and not obj.path.startswith("<"):
                # an imported class or function is named by its attribute (what ids by value assume too)
                return Const(last)
            if obj.path.startswith(DYNAMIC):
                return UNK  # a method of a looked-up value dispatches on its type, like any unknown object's
            if name == "__module__" and obj.path.startswith("torch.") and obj.path.count(".") >= 2:
                # torch's classes are defined in submodules of the namespace that exports them
                # (`torch.optim.AdamW.__module__` is `torch.optim.adamw`): known by that prefix
                return Ext(MODULE_WITHIN + obj.path.rpartition(".")[0])
            return self.ext_value(f"{obj.path}.{name}", frame.world)
        if isinstance(obj, MarkV) and name in ("name", "args", "kwargs"):
            # pytest's Mark, as a conftest hook reads it (`item.get_closest_marker("gpus").args[0]`)
            return Const(obj.name) if name == "name" else Seq(obj.args, "tuple") if name == "args" else DictV(
                tuple((Const(k), v) for k, v in obj.kwargs))
        if isinstance(obj, ModV):
            if obj.rel and self.stores_seen and (patched := patched_value(frame, obj.rel, name)) is not None:
                return patched
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
            if name == "__dict__":
                return attrs_dict(obj)
            if name == "__class__":
                return obj.cls  # `self.__class__(**config)`, `obj.__class__.method(obj)`: as `type(obj)`
            key = self.store_key(obj.cls, name, frame.world)
            if key is not None:
                # a shared namespace (the Borg idiom): the object's own attributes when it adopted this one
                return attrs_dict(obj) if namespace_key(obj) == key else frame.env.get(key, EMPTY_DICT)
            found = self.class_lookup(obj.cls, name, frame.world)
            if isinstance(found, FuncV):
                return self._method_value(found, obj, obj.cls, node, frame)
            if isinstance(found, Inst) and not isinstance(got := self.descriptor_get(found, obj, obj.cls, node, frame),
                                                          (Unresolved, type(None))):
                return got  # `value = Lazy(...)` in the class body: what its `__get__` gives for the object
            if found is None and (hook := self.attribute_hook(obj, name, frame.world)) is not None:
                # `Wrapper(model).forward(x)` where the class forwards what it lacks (`def __getattr__(self, name):
                # return getattr(self._inner, name)`): what the hook gives for that name. A value from outside the
                # repository is taken as unknown, as before: the object may well have the attribute, set where the
                # analysis did not see it, and the hook is then never called
                got = self.call_function_from(hook, [Const(name)], {}, getattr(node, "lineno", 0), frame)
                return UNK if isinstance(got, Ext) else got
            return found if found is not None else UNK
        if isinstance(obj, EnumV):
            if name == "value":
                return obj.value
            if name == "name":
                return Const(obj.name)
            found = self.class_lookup(obj.cls, name, frame.world)
            if isinstance(found, FuncV):
                # a method of the Enum class (`layout.shape(x)`, `self.__repr__()` inside its `__str__`)
                return self._method_value(found, obj, obj.cls, node, frame)
            return UNK
        if isinstance(obj, ClassV):
            member = self.enum_member(obj, name, frame.world)
            if member is not None:
                return member
            key = self.store_key(obj, name, frame.world)
            if key is not None:
                return frame.env.get(key, EMPTY_DICT)  # `PartialState._shared_state`: empty in a fresh process
            if name == "__name__":
                return Const(obj.name)  # (type's data descriptor: a `__name__` property the class defines is not it)
            found = self.class_lookup(obj, name, frame.world)
            if found is None and name == "__qualname__":
                return Const(obj.name)
            if found is None and name == "__module__":
                return Const(self.source.module_name(obj.rel))
            if found is None and name == "__dataclass_fields__":
                return self._dataclass_fields(obj, frame.world)
            if found is None and name == "apply" and any(
                    isinstance(c, Ext) and c.path in AUTOGRAD_FUNCTIONS for c in self.mro(obj, frame.world)):
                # `MyFunction.apply` of a custom autograd function, called now or bound first (`op = F.apply`)
                return PartialV(Ext(AUTOGRAD_APPLY), (obj,))
            if isinstance(found, FuncV) and found.bound is None and self._is_classmethod(found):
                return self.bound_method(found, obj, obj)  # `AssociativeOp.make`, called now or later (a decorator)
            return found if found is not None else UNK
        if isinstance(obj, SuperV):
            owner = obj.obj.cls if isinstance(obj.obj, Inst) else obj.obj if isinstance(obj.obj, ClassV) else None
            v = self.super_lookup(obj.cls, name, frame.world, owner)
            if isinstance(v, FuncV):
                return self._method_value(v, obj.obj, owner, node, frame)
            return v
        if isinstance(obj, NNModV) and name in ("weight", "bias"):
            got = nn_modules.parameter(obj, name)  # `m.bias is not None` of `nn.Linear(2, 2, bias=False)`
            if got is not None and got is not nn_modules.ABSENT:
                return got  # type: ignore[return-value]
        if isinstance(obj, NNModV) and obj.device is not None:
            obj = TensorV(obj.device)  # a module moved to a device: read as a tensor there, as before
        if isinstance(obj, (TensorV, DeviceV)):
            if name == "device":
                return DeviceV(obj.device)
            if name == "type":
                return Const(obj.device.split(":", 1)[0])
            if name == "is_cuda":
                return Const(obj.device.startswith("cuda"))
            if name == "shape" and isinstance(obj, TensorV) and obj.shape is not None:
                return Seq(tuple(Const(i) for i in obj.shape), SIZE)
            if name == "index" and isinstance(obj, DeviceV):
                return Const(torch_api.device_index(obj.device))
            return UNK
        if isinstance(obj, RequestV) and name == "param":
            return obj.param
        if isinstance(obj, PathV):
            got = path_attribute(obj, name)
            return got if got is not None else UNK
        if isinstance(obj, FuncV) and (set_on := obj.attr(name)) is not None:
            return set_on
        made = decorated_object(obj)
        if made is not None and not isinstance(got := self.getattr_v(made, name, frame, node), Unresolved):
            return got  # `logaddexp.name` of `@Op.make def logaddexp(...)`
        if isinstance(obj, (FuncV, ClassV)) and name in ("__name__", "__qualname__"):
            return Const(obj.name)
        if name == "__dataclass_fields__" and isinstance(obj, Inst):
            return self._dataclass_fields(obj.cls, frame.world)
        return UNK

    def _dataclass_fields(self, cls: ClassV, world: int) -> Value:
        """`cls.__dataclass_fields__`, as far as its keys (`{k: v for k, v in d.items() if k in
        cls.__dataclass_fields__}`: a configuration built from a dict)."""
        names = self.dataclass_field_names(cls, world)
        return DictV(tuple((Const(f), UNK) for f in names)) if names is not None else UNK

    def dataclass_field_names(self, cls: ClassV, world: int) -> list[str] | None:
        """The field names of an in-repo dataclass (its generated `__init__`'s parameters, InitVars included, as
        `__dataclass_fields__` holds them); None: not a dataclass the analysis reads."""
        got = self.generated_init(cls, world)
        return [f.name for f in got[0].fields] if got is not None else None


_TENSOR_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)


def _tensor_arithmetic(op: ast.operator, a: Value, b: Value) -> Value | None:
    """`x + y`, `2 * x` of tensors the analysis tracks: a tensor on their device (shape not followed); tensors on
    two devices (torch raises unless one is a CPU scalar) and other operands are not decided here."""
    if not isinstance(op, _TENSOR_ARITHMETIC) or not (isinstance(a, TensorV) or isinstance(b, TensorV)):
        return None
    devices = {v.device for v in (a, b) if isinstance(v, TensorV)}
    others_plain = all(isinstance(v, TensorV) or (isinstance(v, Const) and type(v.value) in (int, float, bool))
                       for v in (a, b))
    return TensorV(devices.pop()) if len(devices) == 1 and others_plain else None


def set_literal(items: list[Value]) -> Value:
    """`{a, b, ...}` as Python builds it: equal constants kept once (the first one), which is what pytest
    parametrizes over (`{False, torch.cuda.is_available()}` is one case on a CPU). Constants are id'd by value,
    so their order does not change an id. A set with other values is kept as written."""
    if not all(isinstance(i, Const) for i in items):
        return bounded(Seq(tuple(items), "set"))
    try:
        unique = dict.fromkeys(i.value for i in items if isinstance(i, Const))
    except TypeError:
        return UNK
    return bounded(Seq(tuple(Const(c) for c in unique), "set"))


def _const_alternatives(v: Value) -> bool:
    """Whether every alternative of v is a constant (a Const, or a OneOf of a few of them)."""
    alts = alternatives(v)
    return len(alts) <= MAX_STRING_CHOICES and all(isinstance(a, Const) for a in alts)


def _generate(frame: Frame, items: tuple[Value, ...] | None) -> None:
    """Record yielded values on a generator's frame; None (`yield from` an unknown iterable) or a yield on an
    undecided path makes the sequence inexact."""
    gen = frame.generated
    if gen is None or not gen.exact:
        return
    if items is None or frame.branch or len(gen.items) + len(items) > MAX_GENERATED:
        gen.exact = False
        return
    gen.items.extend(items)


def _receiver_at_yield(frame: Frame) -> None:
    """Record a fixture's receiver and `request` as they are when it hands over to the test (Frame.at_yield)."""
    if frame.at_yield is not None:
        frame.at_yield.append((frame.env.get(frame.self_name, UNK) if frame.self_name else None,
                               frame.env.get("request")))


_PERCENT_PLAIN = re.compile(r"(?:[^%]|%[sdrif%])*")


def _repeated(a: Value, b: Value) -> Value | None:
    """`shape + event_shape * 2` at a module's top level (a table of cases built there): the items repeated, for a
    bounded count. Not inside functions: a shape made known there (`[2] * n_qubits`) leads the analysis into code
    whose devices it then cannot resolve, which turned CPU tests `unknown` (pyqtorch, transformer-lens)."""
    if isinstance(a, Const) and isinstance(b, Seq):
        a, b = b, a
    if not (isinstance(a, Seq) and a.kind in ("list", "tuple") and isinstance(b, Const) and type(b.value) is int):
        return None
    if len(a.items) * max(b.value, 0) > MAX_REPEATED:
        return None
    return Seq(a.items * b.value, a.kind)


def _formatted(node: ast.FormattedValue, inner: Value) -> str | None:
    """One `{...}` field of an f-string with a constant format spec (or none), printed exactly; None when it
    cannot be."""
    spec = ""
    if node.format_spec is not None:
        if not isinstance(node.format_spec, ast.JoinedStr) or not all(
                isinstance(x, ast.Constant) for x in node.format_spec.values):
            return None
        spec = "".join(str(x.value) for x in node.format_spec.values if isinstance(x, ast.Constant))
    conversion = {-1: "", ord("s"): "s", ord("r"): "r", ord("a"): "a"}.get(node.conversion)
    if conversion is None:
        return None
    if conversion:  # f"{x!r:>10}": the converted text, then formatted as a string
        text = spelled(inner, conversion)
        text = spelled(Const(text), "", spec) if text is not None and spec else text
    else:
        text = spelled(inner, "", spec)
    if text is not None:
        limits.check_text(len(text), "an f-string field")
    return text


def _percent_format(template: str, args: Seq) -> Value:
    """`"%s_%s" % (cls.__name__, i)` (an id built in a loop), `"%s-%r" % (device, shape)`: plain conversions (no
    width or precision, so the result stays small) of values Python prints exactly (`values.literal_of`: constants,
    tuples, lists, dicts, devices, sizes, dtypes); anything else is unknown."""
    if len(template) > 200 or not _PERCENT_PLAIN.fullmatch(template) or any(
            isinstance(a, Const) and (isinstance(a.value, str) and len(a.value) > 200
                                      or type(a.value) is int and a.value.bit_length() > 64) or too_long_to_print(a)
            for a in args.items):
        return UNK
    values = [literal_of(a, shown_constant) for a in args.items]
    if NOT_LITERAL in values:
        return UNK
    try:
        return Const(template % tuple(values))
    except (TypeError, ValueError):
        return UNK


def _dict_entry(d: DictV, idx: Value) -> Value | None:
    """`d[idx]` of a known dict: the entry a definite key names, else the join of those an undecided key may
    select (values.undecided_entry); None where no entry can hold the key (Python raises KeyError)."""
    if decided_key(idx) and exact_keys(d):
        for k, v in d.items:
            if k == idx:
                return v
    return undecided_entry(d, idx)


def _plain_reference(e: ast.expr) -> bool:
    """Whether `e` only names something: `mod`, `pkg.mod`, `sys.modules[__name__]` (no call in it)."""
    while isinstance(e, (ast.Attribute, ast.Subscript)):
        if isinstance(e, ast.Subscript) and not isinstance(e.slice, (ast.Name, ast.Constant)):
            return False
        e = e.value
    return isinstance(e, ast.Name)


def _negated(v: Value) -> Value:
    """`not v` for a comparison method's result: decided where its truth is, else unknown."""
    t = truth(v)
    return Const(not t) if t is not None else UNK
