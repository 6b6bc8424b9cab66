"""How pytest's own objects print, for ids made by `str()`/`repr()` of them (round 12).

Suites that build their cases as `pytest.param(*case, marks=[...])` sometimes id each case by the printed
ParameterSet (cola-ml's `ids=[str(case) for case in cases]`), and `ids=str` prints a mark passed as a value. The
texts below are pytest's NamedTuple and dataclass reprs (pytest 7-9: `ParameterSet(values=(...), marks=[...],
id=None)`, `MarkDecorator(mark=Mark(name='x', args=(), kwargs={}))`); anything inside them that the analysis cannot
print exactly (an object, a function, a skip condition) makes the whole text unknown, so the test keeps a
function-level key rather than a guessed id.
"""

from __future__ import annotations

from collections.abc import Callable

from tools.classify.values import NOT_LITERAL, Ext, MarkV, ParamV, Seq, Shown, Value, literal_of

MARK_PREFIX = "pytest.mark."
# MarkV names the interpreter gives values that are not plain pytest marks, or marks whose arguments it rewrote
# (`parametrize` gets placeholder ids for texts it cannot know): never printed
_NOT_PRINTED = frozenset({"parametrize"})


def _mark_text(name: str, args: tuple[Value, ...], kwargs: tuple[tuple[str, Value], ...],
               shown: Callable[[Value], Shown | None]) -> str | None:
    """`MarkDecorator(mark=Mark(name=..., args=(...), kwargs={...}))`, or None when a part cannot be printed."""
    if not name.isidentifier() or name in _NOT_PRINTED or len(kwargs) > 1:
        return None  # (MarkV keeps keyword arguments sorted by name: the call's order is lost past one)
    values = literal_of(Seq(args, "tuple"), shown) if args else ()
    kw = {k: literal_of(v, shown) for k, v in kwargs}
    if values is NOT_LITERAL or any(v is NOT_LITERAL for v in kw.values()):
        return None
    return f"MarkDecorator(mark=Mark(name={name!r}, args={values!r}, kwargs={kw!r}))"


def pytest_object_text(v: Value, shown: Callable[[Value], Shown | None]) -> str | None:
    """str() (= repr()) of a pytest mark or `pytest.param(...)` value; None for anything else, or when a part
    (a value, a mark's argument, the id) cannot be printed exactly. `shown` prints the other non-literal values
    (torch dtypes, devices, modules) as `values.literal_of` expects."""
    if isinstance(v, Ext) and v.path.startswith(MARK_PREFIX) and v.path.count(".") == 2:
        return _mark_text(v.path[len(MARK_PREFIX):], (), (), shown)  # `pytest.mark.slow`, not called
    if isinstance(v, MarkV):
        return _mark_text(v.name, v.args, v.kwargs, shown)
    if isinstance(v, ParamV) and v.marks_kind in ("list", "tuple"):
        values = literal_of(Seq(v.values, "tuple"), shown)
        marks = [pytest_object_text(m, shown) for m in v.marks]
        if values is NOT_LITERAL or any(m is None for m in marks):
            return None
        inner = ", ".join(m for m in marks if m is not None)
        text = f"[{inner}]" if v.marks_kind == "list" else f"({inner},)" if len(marks) == 1 else f"({inner})"
        return f"ParameterSet(values={values!r}, marks={text}, id={v.id!r})"
    return None
