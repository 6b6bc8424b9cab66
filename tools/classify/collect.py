"""pytest's collection rules, statically: which functions are tests and what their node ids are.

Defaults of pytest 8/9: files `test_*.py`/`*_test.py`, functions `test*`, classes `Test*` without
`__init__`, any `unittest.TestCase` subclass (methods `test*`, no parametrization), inherited methods,
nested `Test*` classes, `__test__ = False`. Parametrize ids follow `_idval`: literals by value, names
of classes/functions, else `argname<index>`; duplicates get a numeric suffix.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from tools.classify.dataflow import Interp, is_fixture_def
from tools.classify.values import ClassV, Const, Ext, FuncV, ParamV, Seq, Value

UNITTEST_BASES = ("TestCase", "IsolatedAsyncioTestCase", "TestCasePlus", "DistributedTestBase", "MultiProcessTestCase",
                  "MultiProcContinousTest", "DTensorTestBase", "FSDPTest", "TestCaseBase")
TORCH_DTYPE_NAMES = frozenset({
    "float", "float16", "float32", "float64", "bfloat16", "half", "double", "int", "int8", "int16", "int32",
    "int64", "uint8", "bool", "long", "short", "complex64", "complex128", "cfloat", "cdouble", "float8_e4m3fn",
    "float8_e5m2", "uint16", "uint32", "uint64", "qint8", "quint8", "chalf",
})


@dataclass(frozen=True)
class TestItem:
    """One collected test function or method (before parametrization)."""

    key: str  # "test_fn" or "TestClass::test_method"
    func: FuncV
    classes: tuple[ClassV, ...]  # outermost first
    unittest: bool
    line: int


def ascii_escaped(s: str) -> str:
    """pytest's ascii_escaped for str ids."""
    return s.encode("unicode_escape").decode("ascii")


def idval(value: Value, argname: str, idx: int) -> str:
    """The id pytest derives for one parameter value."""
    if isinstance(value, Const):
        v = value.value
        if isinstance(v, str):
            return ascii_escaped(v)
        if isinstance(v, bytes):
            return ascii_escaped(v.decode("latin-1")) if v.isascii() else repr(v)[2:-1]
        if v is None or isinstance(v, (bool, int, float, complex)):
            return str(v)
    if isinstance(value, (FuncV, ClassV)):
        return value.name
    if isinstance(value, Ext):
        last = value.path.rsplit(".", 1)[-1]
        if value.path.startswith("builtins."):
            return last
        if last in TORCH_DTYPE_NAMES or not last or last.endswith("()") or last.isupper():
            return f"{argname}{idx}"
        return last
    return f"{argname}{idx}"


def dedupe_ids(ids: list[str]) -> list[str]:
    """Suffix duplicate ids the way pytest does (`a0`, `a1`; `x1_0` after a digit)."""
    counts: dict[str, int] = {}
    for i in ids:
        counts[i] = counts.get(i, 0) + 1
    if all(c == 1 for c in counts.values()):
        return ids
    out = list(ids)
    suffixes: dict[str, int] = {}
    used = set(ids)
    for index, i in enumerate(ids):
        if counts[i] > 1:
            sep = "_" if i and i[-1].isdigit() else ""
            n = suffixes.get(i, 0)
            new = f"{i}{sep}{n}"
            while new in used:
                n += 1
                new = f"{i}{sep}{n}"
            out[index] = new
            used.add(new)
            suffixes[i] = n + 1
    return out


@dataclass(frozen=True)
class ParamCase:
    """One parameter set of one parametrize dimension."""

    id: str
    bindings: tuple[tuple[str, Value], ...]
    marks: tuple[Value, ...]


def parametrize_cases(argnames: Value, argvalues: Value, ids: Value | None) -> list[ParamCase] | None:
    """The cases of `@pytest.mark.parametrize(argnames, argvalues, ids=...)`; None when not enumerable."""
    if isinstance(argnames, Const) and isinstance(argnames.value, str):
        names = [a.strip() for a in argnames.value.split(",") if a.strip()]
    elif isinstance(argnames, Seq) and all(isinstance(i, Const) and isinstance(i.value, str) for i in argnames.items):
        names = [str(i.value) for i in argnames.items if isinstance(i, Const)]
    else:
        return None
    if not isinstance(argvalues, Seq):
        return None
    explicit: list[str | None] | None = None
    if isinstance(ids, Seq):
        explicit = [str(i.value) if isinstance(i, Const) and i.value is not None else None for i in ids.items]
    elif ids is not None and not (isinstance(ids, Const) and ids.value is None):
        explicit = None  # an id function: fall back to the default ids (best effort)
    if not argvalues.items:
        return [ParamCase("NOTSET" if len(names) == 1 else "-".join(["NOTSET"] * len(names)),
                          tuple((n, Const(None)) for n in names), ())]
    cases: list[ParamCase] = []
    raw_ids: list[str] = []
    for idx, item in enumerate(argvalues.items):
        marks: tuple[Value, ...] = ()
        pid: str | None = None
        if isinstance(item, ParamV):
            values = list(item.values)
            marks, pid = item.marks, item.id
        elif len(names) == 1:
            values = [item]
        elif isinstance(item, Seq) and len(item.items) == len(names):
            values = list(item.items)
        else:
            return None
        if len(values) != len(names):
            return None
        if explicit is not None and idx < len(explicit) and explicit[idx] is not None and pid is None:
            pid = explicit[idx]
        if pid is None:
            pid = "-".join(idval(v, n, idx) for v, n in zip(values, names, strict=True))
        raw_ids.append(pid)
        cases.append(ParamCase(pid, tuple(zip(names, values, strict=True)), marks))
    final = dedupe_ids(raw_ids)
    return [ParamCase(i, c.bindings, c.marks) for i, c in zip(final, cases, strict=True)]


def _is_unittest(interp: Interp, cls: ClassV) -> bool:
    for c in interp.mro(cls, 0):
        if isinstance(c, Ext):
            last = c.path.rsplit(".", 1)[-1]
            if c.path in ("unittest.TestCase", "unittest.case.TestCase") or last in UNITTEST_BASES or last.endswith(
                    "TestCase"):
                return True
    return False


def _class_flag(interp: Interp, cls: ClassV, name: str) -> Value | None:
    return interp.class_lookup(cls, name, 0)


def _has_init(interp: Interp, cls: ClassV) -> bool:
    return isinstance(interp.class_lookup(cls, "__init__", 0), FuncV)


def _methods(interp: Interp, cls: ClassV) -> list[tuple[str, FuncV]]:
    """Test-named methods visible on cls (inherited ones included), in definition order of the MRO."""
    seen: dict[str, FuncV | None] = {}
    for c in interp.mro(cls, 0):
        if not isinstance(c, ClassV):
            continue
        for name, v in interp.class_body(c, 0).items():
            if name not in seen:
                seen[name] = v if isinstance(v, FuncV) else None
    out = []
    for name, v in seen.items():
        if v is not None and name.startswith("test"):
            node = interp.source.module(v.rel).defs.get(v.pos)
            if node is not None and not is_fixture_def(node):
                out.append((name, v))
    return out


def collect_items(interp: Interp, rel: str) -> list[TestItem]:
    """Tests pytest would collect from test module `rel` (module namespace, incl. imported classes)."""
    st = interp.module_state(rel, 0)
    out: list[TestItem] = []
    for name, value in st.env.items():
        if isinstance(value, FuncV) and name.startswith("test") and value.bound is None:
            node = interp.source.module(value.rel).defs.get(value.pos)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not is_fixture_def(node):
                out.append(TestItem(name, value, (), False, value.pos[0]))
        elif isinstance(value, ClassV):
            out.extend(_collect_class(interp, value, name, ()))
    return sorted(out, key=lambda i: i.key)


def _collect_class(interp: Interp, cls: ClassV, name: str, outer: tuple[ClassV, ...]) -> list[TestItem]:
    flag = _class_flag(interp, cls, "__test__")
    if isinstance(flag, Const) and flag.value is False:
        return []
    unit = _is_unittest(interp, cls)
    if not unit and (not name.startswith("Test") or _has_init(interp, cls)):
        return []
    chain = (*outer, cls)
    prefix = "::".join(c.name for c in outer)
    prefix = f"{prefix}::{name}" if prefix else name
    items = [TestItem(f"{prefix}::{m}", fv, chain, unit, fv.pos[0]) for m, fv in _methods(interp, cls)]
    if not unit:
        for inner_name, v in interp.class_body(cls, 0).items():
            if isinstance(v, ClassV) and inner_name.startswith("Test"):
                items.extend(_collect_class(interp, v, inner_name, chain))
    return items
