"""Pure functions on abstract values about devices and types: the device a value names, truthiness, how
comparisons come out (`==`, `in`, `is`, `type(x) is torch.device`, `isinstance`, enum members), and how a
device is named in evidence. They hold no interpreter state; every part of the interpreter uses them.
"""

from __future__ import annotations

import ast
import builtins
import functools
import itertools
import math
import operator
from collections.abc import Callable
from typing import Any

from tools.classify import nn_modules, torch_api, torch_testing, versions
from tools.classify.pytest_objects import pytest_object_text
from tools.classify.values import (
    NOT_LITERAL,
    PARAMETER_VALUE,
    SLICE,
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
    NotNone,
    OneOf,
    ReqV,
    Seq,
    Shown,
    SkipV,
    TensorV,
    TestFnV,
    Unresolved,
    Value,
    alternatives,
    plain,
    printed,
)
from tools.classify.values import UNRESOLVED as UNK

TORCH_DTYPE_NAMES = torch_testing.DTYPE_ATTRIBUTES  # every `torch.<name>` that is a dtype, aliases included
# dtype aliases by their canonical name, as str() spells them: str(torch.float) == "torch.float32" (the table
# common_utils.dtype_name uses too)
TORCH_DTYPE_ALIASES = torch_testing.DTYPE_ALIASES
# Other torch constants that are instances without `__name__` (pytest ids them `argname<index>`; `str()` of one
# is "torch.<name>"): layouts, memory formats, quantization schemes
TORCH_UNNAMED_CONSTANTS = frozenset({
    "strided", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc", "jagged", "_mkldnn",
    "contiguous_format", "channels_last", "channels_last_3d", "preserve_format", "legacy_contiguous_format",
    "per_tensor_affine", "per_channel_affine", "per_channel_affine_float_qparams", "per_tensor_symmetric",
    "per_channel_symmetric",
})
# Types whose instances the analysis recognises; `type(x) is torch.device`, `isinstance(x, torch.Tensor)` on
# one of them is decided (no instance is of two of these).
KNOWN_TYPES = frozenset({"torch.dtype", "torch.device", "torch.Tensor", "builtins.str", "builtins.int",
                         "builtins.float", "builtins.bool", "builtins.NoneType", "builtins.bytes",
                         "builtins.complex", "builtins.list", "builtins.tuple", "builtins.dict", "builtins.set",
                         "builtins.slice"})
TYPE_PREFIX = "<type>"  # Ext(TYPE_PREFIX + path): type(x) of a value whose type is known
EXISTING_DEVICE = Ext("<existing tensor>.device")  # `x.device` of a tensor the analysis does not track
# `model.hf_device_map` of a model the analysis does not track: accelerate's record of where it placed each module
# (`{"model.layers.0": 0, "lm_head": "cpu"}`), set by `from_pretrained(device_map=...)` or `dispatch_model`. Each
# value is where that module's weights already are, as `model.device` is; the number of entries is unknown
HF_DEVICE_MAP = DictV(((UNK, EXISTING_DEVICE),))
# `x.is_cuda` of a tensor the analysis does not track: undecided, but true only where a CUDA tensor exists
# (`use_cuda = next(model.parameters()).is_cuda; if use_cuda: ...cuda()`, guards.cuda_guard)
EXISTING_IS_CUDA = Ext("<existing tensor>.is_cuda")
# `[t for t in tensors if t.device.type == "cuda"]` (a filter that keeps only values on CUDA): empty unless a CUDA value
# exists, so `if cuda_tensors:` is a guard as `if x.is_cuda:` is (tensorizer's device-to-host transfer, guards.py)
EXISTING_CUDA_VALUES = Ext("<existing tensors on CUDA>")


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
            # a negative index is no CUDA device: transformers' `pipeline(device=-1)` is the CPU, and torch rejects
            # it on every machine (`torch.cuda.device(-1)` is a no-op)
            return f"cuda:{v.value}" if v.value >= 0 else "cpu"
        return None
    if isinstance(v, (DeviceV, TensorV)):
        return v.device
    if isinstance(v, NNModV):
        return v.device  # a module moved with `.to(device)`, as a tensor
    if isinstance(v, Inst) and v.nn is not None:
        return v.device  # (an in-repo torch.nn.Module subclass that prints, moved the same way)
    if isinstance(v, EnumV) and v.mixin:
        return device_of(v.value)
    return None


def accel_device(v: Value) -> str | None:
    """The accelerator device among the alternatives of v (may-analysis), the one of the highest index when
    several are (`for rank in range(2): torch.cuda.set_device(rank)` needs two GPUs), else None."""
    found = None
    for alt in alternatives(v):
        d = device_of(alt)
        if d and torch_api.accelerator_of(d) and (found is None or torch_api.device_index(d) > torch_api.device_index(
                found)):
            found = d
    return found


def gpu_count_of(device: str) -> int:
    return torch_api.device_index(device) + 1


_CMP: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Is: operator.is_, ast.IsNot: operator.is_not,
}


def truth(v: Value) -> bool | None:
    """Truthiness of an abstract value: True, False or None (undecided)."""
    if isinstance(v, KnownTruth):
        return v.truth
    if isinstance(v, Const):
        return bool(v.value)
    if isinstance(v, Seq):
        return bool(v.items)
    if isinstance(v, DictV) and v.items:  # (`args = test_args or {}`: a dict with an entry is truthy)
        return True
    if isinstance(v, DictV) and v.origin == PARAMETER_VALUE:
        return False  # (`if not inputs: return "()"` in an `ids=` callable)
    if isinstance(v, OneOf):
        ts = {truth(a) for a in v.alts}
        return ts.pop() if len(ts) == 1 else None
    if isinstance(v, (DeviceV, TensorV, FuncV, ClassV, ModV, MarkV, SkipV, ReqV, TestFnV)):
        return True
    if isinstance(v, EnumV):
        return truth(v.value) if v.mixin else True
    if isinstance(v, NNModV):
        return True if v.name not in nn_modules.CONTAINERS else None  # (a container has a length)
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
            and const.value.lower() in OTHER_DEVICE_KINDS and isinstance(opaque, (Unresolved, Ext))):
        return None
    if isinstance(opaque, Ext) and not opaque.path.startswith(("<", "torch.")) and "device" not in opaque.path:
        return None
    if isinstance(op, (ast.Eq, ast.Is, ast.In)):
        return Const(False)
    if isinstance(op, (ast.NotEq, ast.IsNot, ast.NotIn)):
        return Const(True)
    return None


_NONE = Const(None)


# functions and classes of standard modules code passes around as values (`Op.make(operator.add)`, `key=math.fabs`)
STDLIB_CALLABLES = frozenset(f"{m.__name__}.{name}" for m in (builtins, functools, itertools, math, operator)
                             for name, v in vars(m).items() if callable(v) and not name.startswith("_"))


def existing_cuda_flag(v: Value) -> bool:
    """A flag true only when a value that exists is on CUDA (`x.is_cuda`, `any(t.is_cuda for t in ts)`): the
    marker, or on some paths False."""
    alts = alternatives(v)
    return EXISTING_IS_CUDA in alts and all(a == EXISTING_IS_CUDA or a == Const(False) for a in alts)


def _never_none(v: Value) -> bool:
    """A value that is certainly not None: a device, a tensor, an in-repo object, class or function, a
    container (an existing tensor's `.device` too), a standard module's function."""
    return isinstance(v, (DeviceV, TensorV, NNModV, Inst, Seq, DictV, FuncV, ClassV, ModV, NotNone)) or \
        v == EXISTING_DEVICE or isinstance(v, KnownTruth) and v.truth or (  # (None is falsy)
            isinstance(v, Ext) and v.path in STDLIB_CALLABLES)


def _torch_prints(text: str) -> bool:
    """Whether `str(torch.device(...))` may print text ('cpu', 'cuda:1', 'mps'; not 'gpu', 'auto' or 'CUDA')."""
    kind, colon, index = text.partition(":")
    return (kind in torch_api.ACCELERATORS or kind in ("cpu", "meta")) and (not colon or index.isdigit())


def _compare(op: ast.cmpop, a: Value, b: Value) -> Value:
    if isinstance(a, OneOf) or isinstance(b, OneOf):
        outs = {_compare(op, x, y) for x in alternatives(a) for y in alternatives(b)}
        return outs.pop() if len(outs) == 1 else UNK
    if isinstance(a, EnumV) or isinstance(b, EnumV):
        return _compare_enum(op, a, b)
    tensor_vs_text = _compare_tensor_with_text(op, a, b)
    if tensor_vs_text is not None:
        return tensor_vs_text
    got = versions.compare(op, a, b)
    if got is not None:
        return got
    if isinstance(op, (ast.In, ast.NotIn)):
        if isinstance(b, Ext) and b.path == "os.environ":
            return Const(isinstance(op, ast.NotIn))
        if isinstance(b, Seq) and b.kind in ("list", "tuple", "set") and isinstance(a, Seq):
            # `(x, y) in cases`: a tuple in a known collection of tuples, compared as Python compares them
            pa, pb = plain(a), plain(b)
            if pa is not NOT_LITERAL and pb is not NOT_LITERAL:
                return Const((pa in pb) == isinstance(op, ast.In))  # type: ignore[operator]
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
        if isinstance(b, Seq) and b.kind in ("list", "tuple", "set"):
            # `math_dtype not in [None]`, `dtype in (torch.float16, torch.bfloat16)`: each element compared
            equal = [_compare(ast.Eq(), a, i) for i in b.items]
            if all(isinstance(e, Const) for e in equal):
                hit = any(bool(e.value) for e in equal if isinstance(e, Const))
                return Const(hit == isinstance(op, ast.In))
        return UNK
    if isinstance(a, Seq) and isinstance(b, Seq) and isinstance(op, (ast.Eq, ast.NotEq)):
        pa, pb = plain(a), plain(b)  # `picked - cases == set()`
        if pa is not NOT_LITERAL and pb is not NOT_LITERAL:
            return Const((pa == pb) == isinstance(op, ast.Eq))
    if isinstance(a, DictV) and isinstance(b, DictV) and isinstance(op, (ast.Eq, ast.NotEq)):
        return _compare_dicts(op, a, b)
    if isinstance(op, (ast.Eq, ast.NotEq)) and _container_vs_scalar(a, b):
        # `if out_order != "col32":` with `out_order` the module's list of orders (a typo bitsandbytes' tests
        # run): a list, tuple, set or dict never equals a string, number or None
        return Const(isinstance(op, ast.NotEq))
    other = _other_accelerator_test(op, a, b) or _compare_types(op, a, b)
    if other is not None:
        return other
    if isinstance(op, (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)) and isinstance(a, ClassV) and isinstance(b, ClassV) \
            and not (a.captured or a.made or b.captured or b.made):
        # `if cls is MAE:` over a parametrization of classes: a class defined once at a module's top level is
        # one object (one made by a factory or in a function may be made again)
        return Const((a == b) == isinstance(op, (ast.Eq, ast.Is)))
    ta, tb = torch_constant_str(a), torch_constant_str(b)
    if ta is not None and tb is not None and isinstance(op, (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)):
        # `layout == torch.sparse_coo`, `dtype is torch.float64`: torch's dtypes and layouts are singletons,
        # aliases included (`torch.float is torch.float32`)
        return Const((ta == tb) == isinstance(op, (ast.Eq, ast.Is)))
    if isinstance(op, (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)) and (
            ta is not None and isinstance(b, Const) or tb is not None and isinstance(a, Const)):
        # `math_dtype == None`, `dtype != "float32"`: a torch dtype or layout is no Python constant
        return Const(isinstance(op, (ast.NotEq, ast.IsNot)))
    if isinstance(op, (ast.Is, ast.IsNot)) and _NONE in (a, b) and _never_none(b if a == _NONE else a):
        return Const(isinstance(op, ast.IsNot))  # `if device is None:` with a known device, object or list
    if isinstance(op, (ast.Eq, ast.NotEq)) and EXISTING_DEVICE in (a, b):
        s = b if a == EXISTING_DEVICE else a
        if isinstance(s, Const) and isinstance(s.value, str) and not _torch_prints(s.value):
            # `if device == "auto":`, `device == "gpu"` (an alias libraries accept) with an existing tensor's device:
            # neither a torch.device nor its str() is ever such a string
            return Const(isinstance(op, ast.NotEq))
    ka, va = _const_of(a)
    kb, vb = _const_of(b)
    if isinstance(a, DeviceV) and isinstance(b, Const) and isinstance(b.value, str):
        va = a.device
    if isinstance(a, Seq) and isinstance(b, Seq) and a.kind == b.kind and a.kind in ("tuple", "list") and all(
            isinstance(i, Const) for i in (*a.items, *b.items)) and not isinstance(op, (ast.Is, ast.IsNot)):
        # `version.parse(torch.__version__).release >= (2, 4)`: sequences of constants compare item by item
        ka, va = True, tuple(i.value for i in a.items)  # type: ignore[union-attr]
        kb, vb = True, tuple(i.value for i in b.items)  # type: ignore[union-attr]
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


def _container_vs_scalar(a: Value, b: Value) -> bool:
    """One side a known container (whatever its items), the other a constant str, number, bool or None."""
    for x, y in ((a, b), (b, a)):
        if isinstance(x, (Seq, DictV)) and isinstance(y, Const) and (
                y.value is None or isinstance(y.value, (str, bytes, int, float, complex))):
            return True
    return False


def type_path(v: Value) -> str | None:
    """The dotted type of a value the analysis recognises (`torch.float64` -> torch.dtype), else None."""
    if isinstance(v, Const):
        return f"builtins.{type(v.value).__name__}"
    if isinstance(v, DeviceV):
        return "torch.device"
    if isinstance(v, Seq) and v.kind in ("list", "tuple", "set", SLICE):
        return f"builtins.{v.kind}"
    if isinstance(v, DictV):
        return "builtins.dict"
    if isinstance(v, Ext) and v.path.count(".") == 1 and v.path.startswith("torch.") and (
            v.path[6:] in TORCH_DTYPE_NAMES):
        return "torch.dtype"
    return None


def is_tensor(v: Value) -> bool | None:
    """`torch.is_tensor(v)`: True for a value on a known device that is not a torch.device (a module moved
    with `.to()` is one too, unless it is a torch.nn module the analysis knows), False for a value of a known
    other type, None when the analysis cannot tell."""
    if isinstance(v, TensorV):
        return True
    if isinstance(v, NNModV):
        return False
    return None if type_path(v) is None else False


def _class_path(v: Value) -> str | None:
    if isinstance(v, Ext):
        path = v.path[len(TYPE_PREFIX):] if v.path.startswith(TYPE_PREFIX) else v.path
        return path if path in KNOWN_TYPES else None
    return None


def _compare_tensor_with_text(op: ast.cmpop, a: Value, b: Value) -> Value | None:
    """`param_name == ""`, `x != None` with a tensor: a tensor is never equal to a str or None (torch's `==` gives
    False for them, not an element-wise tensor); None when this is not such a comparison."""
    if not isinstance(op, (ast.Eq, ast.NotEq)):
        return None
    tensor, other = (a, b) if isinstance(a, TensorV) else (b, a)
    if not isinstance(tensor, TensorV) or not (isinstance(other, Const) and (
            other.value is None or isinstance(other.value, str))):
        return None
    return Const(isinstance(op, ast.NotEq))


# standard classes no plain Python value of another type is an instance of (`isinstance((), (dict, OrderedDict))`);
# a dict the analysis holds may have been made by one of the dict subclasses
_DICT_SUBCLASSES = frozenset({"collections.OrderedDict", "collections.defaultdict", "collections.Counter"})
_NOT_PLAIN_TYPES = frozenset({"collections.deque", "collections.ChainMap"})


def isinstance_of(v: Value, classes: Value) -> Value:
    """`isinstance(x, torch.Tensor)` for an x of a known type and classes among KNOWN_TYPES. A value on a known
    device (a tensor, or a module moved with `.to()`) is none of the others; it is a torch.Tensor when a factory
    made it (its shape is known), else that stays undecided."""
    t = type_path(v)
    wanted = [_class_path(c) for c in (classes.items if isinstance(classes, Seq) else (classes,))]
    if isinstance(v, TensorV) and all(w is not None for w in wanted):
        if "torch.Tensor" not in wanted:
            return Const(False)
        return Const(True) if v.shape is not None else UNK
    if t is not None and t.startswith("builtins.") and any(w is None for w in wanted):
        # a plain Python value is never an instance of a torch class (`isinstance(0.01, (torch.Tensor,
        # torch.Generator))`, deepinv's _infer_device over a noise level and an rng)
        others = [c for c, w in zip(classes.items if isinstance(classes, Seq) else (classes,), wanted, strict=True)
                  if w is None]
        if all(isinstance(c, Ext) and (c.path.startswith("torch.") or c.path in _NOT_PLAIN_TYPES or (
                c.path in _DICT_SUBCLASSES and t != "builtins.dict")) for c in others):
            wanted = [w for w in wanted if w is not None]
    if t is None:
        return UNK
    hit = t in wanted or (t == "builtins.bool" and "builtins.int" in wanted)
    return Const(True) if hit else UNK if any(w is None for w in wanted) else Const(False)  # (one match decides)


def _compare_dicts(op: ast.cmpop, a: DictV, b: DictV) -> Value:
    """`state._shared_state != {}`, `indexing != SHORT_INDEXING[0]`: dicts whose keys are known constants are
    equal only with the same keys; two empty ones are equal. Values are compared as `==` compares them (tuples
    of constants, nested dicts, devices): unequal if one pair is, equal if every pair is."""
    ka = [_const_of(k) for k, _ in a.items]
    kb = [_const_of(k) for k, _ in b.items]
    if not all(k for k, _ in ka) or not all(k for k, _ in kb):
        return UNK
    same: bool | None
    if {v for _, v in ka} != {v for _, v in kb}:
        same = False
    else:
        vb = {_const_of(k)[1]: x for k, x in b.items}
        pairs = [_compare(ast.Eq(), x, vb[_const_of(k)[1]]) for k, x in a.items]
        if any(p == Const(False) for p in pairs):
            same = False
        else:
            same = True if all(p == Const(True) for p in pairs) else None
    if same is None:
        return UNK
    return Const(same == isinstance(op, ast.Eq))


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
        # the same member: its class and name (its printed text is filled in once its `__str__` has run, and
        # that `__str__` may compare `self` with the members: `if self == Layout.mul_ir`)
        same = (a.cls, a.name) == (b.cls, b.name)
        if isinstance(op, (ast.Eq, ast.Is)):
            return Const(same)
        if isinstance(op, (ast.NotEq, ast.IsNot)):
            return Const(not same)
        return UNK
    if isinstance(a, EnumV) and a.mixin and not isinstance(op, (ast.Is, ast.IsNot)):
        return _compare(op, a.value, b)
    if isinstance(b, EnumV) and b.mixin and not isinstance(op, (ast.Is, ast.IsNot)):
        return _compare(op, a, b.value)
    other = b if isinstance(a, EnumV) else a
    if isinstance(other, Const) and isinstance(op, (ast.Eq, ast.Is, ast.NotEq, ast.IsNot)):
        return Const(isinstance(op, (ast.NotEq, ast.IsNot)))
    return UNK


def _accel_name(device: str) -> str:
    kind = torch_api.accelerator_of(device) or device
    return {"cuda": "CUDA", "xpu": "XPU", "mps": "MPS"}.get(kind, kind.upper())


def _device_of_existing(e: ast.expr, attr: str = "device") -> bool:
    """`x.device` (or another `attr` of it, `x.is_cuda`) of an object other than `self` or a configuration: the
    device of a tensor that already exists. Following it moves nothing to a new device (creating `x` on an
    accelerator is where a need would be found). A configuration anywhere on the path (`self.cfg.device`,
    `cfg.trainer.device`, `args.hw.device`) is a setting, not a tensor's device."""
    if not (isinstance(e, ast.Attribute) and e.attr == attr):
        return False
    node = e.value
    while isinstance(node, ast.Attribute):
        if node.attr in CONFIG_NAMES and node.attr not in ("self", "cls"):
            return False
        node = node.value
    return not (isinstance(node, ast.Name) and node.id in CONFIG_NAMES and (node is e.value or node.id != "self"))


CONFIG_NAMES = frozenset({"self", "cls", "args", "config", "cfg", "conf", "opt", "opts", "options", "hparams",
                          "settings", "params", "kwargs"})


def torch_constant_str(v: Value) -> str | None:
    """str() of a torch dtype, layout or memory format (`torch.float32`, `torch.strided`), else None."""
    if not (isinstance(v, Ext) and v.path.startswith("torch.") and v.path.count(".") == 1):
        return None
    name = v.path[len("torch."):]
    if name in TORCH_DTYPE_NAMES:
        return "torch." + TORCH_DTYPE_ALIASES.get(name, name)
    if name == "legacy_contiguous_format":
        return "torch.contiguous_format"  # the same memory format under its old name
    return v.path if name in TORCH_UNNAMED_CONSTANTS else None


def shown_constant(v: Value) -> Shown | None:
    """A torch dtype, layout or memory format (`torch.float32`), a torch.nn module built from known arguments
    (`Linear(in_features=2, out_features=3, bias=True)`; an in-repo subclass too) or a pytest mark or param as it
    prints (str and repr alike), for `values.literal_of`; None for anything else."""
    text = nn_modules.module_repr(v, shown_constant) if isinstance(v, NNModV) or isinstance(v, Inst) and \
        v.nn is not None else torch_constant_str(v)
    if text is None:
        text = pytest_object_text(v, shown_constant)  # a pytest mark or ParameterSet (round 12)
    return Shown(text, text) if text is not None else None


def spelled(v: Value, conversion: str = "s", spec: str = "") -> str | None:
    """`str(v)`, `repr(v)`, `ascii(v)` or `format(v, spec)` as Python prints it (`values.printed`), torch dtypes
    included; None when it cannot be printed exactly."""
    return printed(v, conversion, spec, shown_constant)
