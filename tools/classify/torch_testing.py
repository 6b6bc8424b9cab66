"""PyTorch's own test generators (torch.testing._internal), statically.

`instantiate_device_type_tests(TestFoo, globals(), only_for=..., except_for=...)` removes `TestFoo` and adds
`TestFooCPU` / `TestFooCUDA` (`Generic + device_type.upper()`); each test `test_x` defined in TestFoo's own
body becomes `test_x[_<params>]_<device>[_<dtypes>]` (common_device_type.instantiate_test). On a CPU-only
machine only the CPU class exists, so everything in the CUDA class is `gpu`. `@dtypes(...)`,
`@dtypesIfCPU/CUDA(...)` pick the dtypes per device; `@parametrize(...)` (common_utils) adds
`_<name>` parts, top decorator first; `instantiate_parametrized_tests(TestFoo)` renames `test_x` to
`test_x_<params>` in place. Names that cannot be computed statically (`@ops(op_db)`, computed values)
fall back to one class-level key (`TestFooCPU`), which covers the class's tests not listed separately.
"""

from __future__ import annotations

from tools.classify.values import Const, DeviceV, Ext, MarkV, ParamV, Seq, Value

# Device types instantiate_device_type_tests generates on the machines this project routes to.
DEVICE_TYPES = ("cpu", "cuda")
PRIMARY_DEVICE = {"cpu": "cpu", "cuda": "cuda:0"}

DTYPES_MARK = "<torch.dtypes>"
PARAMETRIZE_MARK = "<torch.parametrize>"
OPAQUE_MARK = "<torch.ops>"  # @ops / @modules: parametrized over OpInfo databases

DTYPES_DECORATORS = {"dtypes": "all", "dtypesIfCPU": "cpu", "dtypesIfCUDA": "cuda", "dtypesIfXPU": "xpu",
                     "dtypesIfMPS": "mps", "dtypesIfHPU": "hpu", "dtypesIfPRIVATEUSE1": "privateuse1"}
OPAQUE_DECORATORS = frozenset({"ops", "modules", "reparametrize", "decorateIf"})

# str(torch.<alias>) for the aliases torch defines; other dtype attributes print as their own name.
DTYPE_ALIASES = {"float": "float32", "double": "float64", "half": "float16", "long": "int64", "int": "int32",
                 "short": "int16", "cfloat": "complex64", "cdouble": "complex128", "chalf": "complex32",
                 "bit": "uint1"}
# The canonical names of torch 2.13's dtypes (str(dtype) is "torch.<name>"); tests/tools/classify/
# test_classify_torch_tables.py compares this and DTYPE_ALIASES with the installed torch.
DTYPE_NAMES = frozenset({
    "float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "uint16", "uint32",
    "uint64", "bool", "complex32", "complex64", "complex128", "qint8", "quint8", "qint32", "quint4x2",
    "quint2x4", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu",
    "float4_e2m1fn_x2", "bits8", "bits16", "bits1x8", "bits2x4", "bits4x2",
    "int1", "int2", "int3", "int4", "int5", "int6", "int7", "uint1", "uint2", "uint3", "uint4", "uint5", "uint6",
    "uint7",
})
# Every attribute `torch.<name>` that is a dtype: the canonical names and the aliases.
DTYPE_ATTRIBUTES = DTYPE_NAMES | frozenset(DTYPE_ALIASES)

_F = ("float32", "float64")
_I = ("uint8", "int8", "int16", "int32", "int64")
_C = ("complex64", "complex128")
_F8 = ("float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz")
# common_dtype helpers: name -> dtypes (the `_and` variants append their arguments).
DTYPE_HELPERS: dict[str, tuple[str, ...]] = {
    "empty_types": (), "custom_types": (),
    "floating_types": _F, "floating_types_and": _F, "floating_types_and_half": (*_F, "float16"),
    "floating_and_complex_types": (*_F, *_C), "floating_and_complex_types_and": (*_F, *_C),
    "double_types": ("float64", "complex128"),
    "integral_types": _I, "integral_types_and": _I,
    "all_types": (*_F, *_I), "all_types_and": (*_F, *_I),
    "complex_types": _C, "complex_types_and": _C,
    "all_types_and_complex": (*_F, *_I, *_C), "all_types_and_complex_and": (*_F, *_I, *_C),
    "all_types_and_half": (*_F, *_I, "float16"),
    "float8_types": _F8, "float8_types_and": _F8, "all_types_complex_float8_and": (*_F, *_I, *_C, *_F8),
    "get_all_int_dtypes": _I, "get_all_complex_dtypes": _C,
}


def dtype_name(v: Value) -> str | None:
    """common_utils.dtype_name: `torch.float` -> `float32`; None when v is not a known dtype."""
    if isinstance(v, Ext) and v.path.startswith("torch.") and v.path.count(".") == 1:
        last = v.path[len("torch."):]
        name = DTYPE_ALIASES.get(last, last)
        return name if name in DTYPE_NAMES else None
    return None


def dtype_helper(name: str, args: list[Value], kwargs: dict[str, Value]) -> Value | None:
    """The value of a common_dtype helper call (a tuple of torch dtypes), or None if not one."""
    if name == "get_all_fp_dtypes":
        half, bf16 = _flags(args, kwargs, (("include_half", True), ("include_bfloat16", True)))
        if half is None or bf16 is None:
            return None
        return _dtypes((*_F, *(("float16",) if half else ()), *(("bfloat16",) if bf16 else ())))
    if name == "get_all_dtypes":
        half, bf16, boolean, cplx, c32, qint = _flags(args, kwargs, (
            ("include_half", True), ("include_bfloat16", True), ("include_bool", True), ("include_complex", True),
            ("include_complex32", False), ("include_qint", False)))
        if None in (half, bf16, boolean, cplx, c32, qint):
            return None
        names = [*_I, *_F, *(["float16"] if half else []), *(["bfloat16"] if bf16 else []),
                 *(["bool"] if boolean else [])]
        if cplx:
            names += ["complex32", *_C] if c32 else list(_C)
        if qint:
            names += ["qint8", "quint8", "qint32", "quint4x2", "quint2x4"]
        return _dtypes(tuple(names))
    base = DTYPE_HELPERS.get(name)
    if base is None:
        return None
    extra: list[Value] = []
    if name.endswith("_and") or name == "custom_types":
        for a in args:
            if dtype_name(a) is None:
                return None
            extra.append(a)
    return Seq((*_dtypes(base).items, *extra), "tuple")


def _flags(args: list[Value], kwargs: dict[str, Value], spec: tuple[tuple[str, bool], ...]) -> list[bool | None]:
    out: list[bool | None] = []
    for i, (key, default) in enumerate(spec):
        v = kwargs.get(key, args[i] if i < len(args) else None)
        out.append(default if v is None else bool(v.value) if isinstance(v, Const) else None)
    return out


def _dtypes(names: tuple[str, ...]) -> Seq:
    return Seq(tuple(Ext(f"torch.{n}") for n in names), "tuple")


def _dtype_suffix(v: Value) -> str | None:
    """_dtype_test_suffix of one @dtypes argument (a dtype, or a tuple of dtypes)."""
    if isinstance(v, Seq):
        names = [dtype_name(i) for i in v.items]
        if any(n is None for n in names):
            return None
        return "_" + "_".join(n for n in names if n) if names else ""
    n = dtype_name(v)
    return f"_{n}" if n else None


def _formatted(idx: int, name: str, v: Value) -> str:
    """parametrize._formatted_str_repr."""
    dn = dtype_name(v)
    if dn:
        return dn
    if isinstance(v, DeviceV):
        return v.device
    if isinstance(v, Const) and isinstance(v.value, (int, float, str)):
        return f"{name}_{str(v.value).replace('.', '_')}"
    return f"{name}{idx}"


Case = tuple[str, tuple[tuple[str, Value], ...], tuple[Value, ...]]  # (name part, bindings, marks)


def parametrize_cases(mark: MarkV, call_name_fn: object = None) -> list[Case] | None:
    """Cases of one common_utils `@parametrize(arg_str, arg_values, name_fn=None)`; None if not enumerable."""
    arg_str = mark.args[0] if mark.args else mark.kw("arg_str")
    values = mark.args[1] if len(mark.args) > 1 else mark.kw("arg_values")
    name_fn = mark.args[2] if len(mark.args) > 2 else mark.kw("name_fn")
    if not (isinstance(arg_str, Const) and isinstance(arg_str.value, str)) or not isinstance(values, Seq):
        return None
    names = [s.strip() for s in arg_str.value.split(",") if s != ""]
    if not names:
        return [("", (), ())]
    out: list[Case] = []
    for idx, item in enumerate(values.items):
        explicit: str | None = None
        marks: tuple[Value, ...] = ()
        if isinstance(item, ParamV):  # subtest(arg_values, name=..., decorators=[...])
            explicit, marks = item.id, item.marks
            item = item.values[0] if item.values else Const(None)
        vals = list(item.items) if len(names) > 1 and isinstance(item, Seq) else [item]
        if len(vals) != len(names):
            return None
        if explicit is None and name_fn is not None and not (isinstance(name_fn, Const) and name_fn.value is None):
            got = call_name_fn(name_fn, vals) if callable(call_name_fn) else None
            if not (isinstance(got, Const) and isinstance(got.value, str)):
                return None
            explicit = got.value
        label = explicit if explicit else "_".join(_formatted(idx, a, v) for a, v in zip(names, vals, strict=True))
        out.append((label, tuple(zip(names, vals, strict=True)), marks))
    return out


def dtype_variants(marks: list[Value], device: str) -> list[tuple[str, tuple[tuple[str, Value], ...]]] | None:
    """(suffix, bindings) per dtype variant for `device`; [("", ())] without @dtypes; None if not literal."""
    per: dict[str, MarkV] = {}
    for m in marks:
        if isinstance(m, MarkV) and m.name == DTYPES_MARK:
            dt = m.kw("device_type")
            key = dt.value if isinstance(dt, Const) and isinstance(dt.value, str) else "all"
            per.setdefault(key, m)
    if not per:
        return [("", ())]
    chosen = per.get(device, per.get("all"))
    if chosen is None:
        return None
    out = []
    for a in chosen.args:
        suffix = _dtype_suffix(a)
        if suffix is None:
            return None
        out.append((suffix, (("dtypes" if isinstance(a, Seq) else "dtype", a),)))
    return out


def device_only_for(value: Value | None) -> set[str] | None:
    """only_for / except_for argument as a set of device types (None: absent or not literal)."""
    if value is None or (isinstance(value, Const) and value.value is None):
        return None
    if isinstance(value, Const) and isinstance(value.value, str):
        return {value.value}
    if isinstance(value, Seq) and all(isinstance(i, Const) and isinstance(i.value, str) for i in value.items):
        return {str(i.value) for i in value.items if isinstance(i, Const)}
    return None
