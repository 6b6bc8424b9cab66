"""Receiver projection: what a method's summary depends on of the object it is called on.

A summary is keyed on its whole context (summaries.py), the receiver included: two objects of one class that
differ in any attribute are two contexts. Real suites build a fresh object per test (an engine holding the
test's own closure, a test case whose setUp left an attribute on one path only), so the same method was
analysed once per test. Most methods use their receiver only as `self.<name>`: reading attributes, calling
methods on it, setting attributes. Such a method's analysis depends on the receiver only through the values
those names have on it (and, for methods and properties it calls on `self`, the names those read, and so on):
interp_calls.CallsMixin._receiver_projection computes that projection, and a summary is also stored under it
and reused for any receiver with the same projection, the receiver's changes replayed as a delta
(`receiver_delta`, `apply_delta`).

Sound because everything the analysis of such a method can observe of its receiver goes through those
names: a receiver passed on, compared, rebound, read through `__dict__`/`super()`, or captured by a nested
function (`receiver_uses` is None) keeps the whole-receiver key, and so does a result that holds the
receiver (`receiver_delta` is None).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from tools.classify.values import Inst, OneOf, Value, mentions


@dataclass(frozen=True)
class ReceiverUses:
    """How a method uses its first parameter: names read (`self.x`, `self.m(...)`, `self.x += 1`), names set
    (`self.x = v`), and the names it calls through `super()` (`super().__init__(...)`)."""

    reads: tuple[str, ...]
    writes: tuple[str, ...]
    super_calls: tuple[str, ...] = ()


_USES = "_classify_receiver_uses"  # not an ast field: the memo of receiver_uses on the def node


def receiver_uses(node: ast.FunctionDef | ast.AsyncFunctionDef) -> ReceiverUses | None:
    """The method's uses of its receiver when each is a `self.<name>` (a plain name, not a dunder) read, set or
    called in its own body; None when the receiver is used any other way (passed on, returned, compared,
    deleted from, rebound, captured by a nested function or lambda) or `super` is named. Kept on the node."""
    known = node.__dict__.get(_USES, False)
    if known is not False:
        return known  # type: ignore[no-any-return]
    got = _uses(node)
    node.__dict__[_USES] = got
    return got


def _uses(node: ast.FunctionDef | ast.AsyncFunctionDef) -> ReceiverUses | None:
    params = [*node.args.posonlyargs, *node.args.args]
    if not params:
        return None
    me = params[0].arg
    reads: set[str] = set()
    writes: set[str] = set()
    super_calls: set[str] = set()
    allowed: set[int] = set()  # the `self` and `super` Name nodes of the uses above
    todo: list[tuple[ast.AST, bool]] = [(s, False) for s in node.body]
    todo += [(d, False) for d in (*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None))]
    while todo:
        n, nested = todo.pop()
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and _is_bare_super(n.func.value):
            if nested:
                return None
            super_calls.add(n.func.attr)  # `super().m(...)`: m of the class after the method's, bound to self
            allowed.add(id(n.func.value.func))  # type: ignore[attr-defined]
        if isinstance(n, ast.Name) and n.id == "super" and id(n) not in allowed:
            return None
        if isinstance(n, ast.arg) and n.arg == me:
            return None  # a nested function's own parameter of that name: not worth telling apart
        if isinstance(n, (ast.Global, ast.Nonlocal)) and me in n.names:
            return None
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == me:
            if nested or (n.attr.startswith("__") and n.attr != "__class__") or isinstance(n.ctx, ast.Del):
                return None  # (`__class__` is read like any attribute; `__dict__` is all of them)
            allowed.add(id(n.value))
            (writes if isinstance(n.ctx, ast.Store) else reads).add(n.attr)
        elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Attribute):
            if isinstance(n.target.value, ast.Name) and n.target.value.id == me:
                reads.add(n.target.attr)  # `self.x += 1` reads x too
        elif isinstance(n, ast.Name) and n.id == me and id(n) not in allowed:
            return None
        inner = nested or isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef))
        # children after the node itself: an Attribute is seen before its `self` Name (a stack: pushed last)
        todo.extend((c, inner) for c in reversed(list(ast.iter_child_nodes(n))))
    return ReceiverUses(tuple(sorted(reads)), tuple(sorted(writes - reads)), tuple(sorted(super_calls)))


def _is_bare_super(e: ast.expr) -> bool:
    return isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id == "super" and not e.args \
        and not e.keywords


Delta = tuple[tuple[str, Value], ...]


def receiver_delta(recv: Value, after: Value | None, held: list[Value]) -> Delta | None:
    """The attributes a call set on its receiver (`after`: the receiver when it returned), when the call's
    result holds nothing of the receiver itself (`held`: its value, yields and shared state) and only set
    attributes; None otherwise (then the summary is not shared with other receivers). A receiver that is a
    choice of objects (one per path of a `setUp`) must come back as it was."""
    if any(mentions(v, recv) for v in held):
        return None
    if isinstance(recv, OneOf):
        return () if after == recv else None
    if not isinstance(recv, Inst) or not isinstance(after, Inst) or after.cls != recv.cls:
        return None
    if recv.nn is not None:
        return None  # a printable torch module: the order its attributes were set in is part of it
    before = dict(recv.attrs)
    now = dict(after.attrs)
    if any(k not in now for k in before):
        return None
    delta = tuple((k, v) for k, v in after.attrs if before.get(k) != v)
    if any(mentions(v, recv) for _, v in delta):
        return None
    return delta


def apply_delta(recv: Value, delta: Delta) -> Value:
    """recv with the attributes a shared summary set (a choice of objects comes back as it was)."""
    for k, v in delta:
        assert isinstance(recv, Inst)
        recv = recv.with_attr(k, v)
    return recv
