"""Hypothesis' `@given(...)`: the values a property-based test's arguments take, read from its strategies.

Hypothesis runs the test on many examples drawn from each strategy, and `sampled_from(["cpu", "cuda"])` reaches every
element within its example budget: the argument is the choice of them all, a possible CUDA use as a parametrization
over both would be. Strategies that draw no device (integers, floats, text, composites) give an unknown value, as an
argument nothing provides does."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from tools.classify.collect import def_scope
from tools.classify.interp_base import Frame
from tools.classify.values import UNRESOLVED, Const, Ext, FuncV, Seq, Value, join_all

if TYPE_CHECKING:
    from tools.classify.dataflow import Interp

GIVEN = Ext("hypothesis.given")
STRATEGIES = "hypothesis.strategies."


def given_arguments(interp: Interp, fv: FuncV, node: ast.FunctionDef | ast.AsyncFunctionDef,
                    world: int) -> dict[str, Value]:
    """The test's arguments that its `@given(...)` draws, each the join of the values its strategy yields
    (positional strategies fill the rightmost parameters, as hypothesis fills them)."""
    given = [d for d in node.decorator_list if isinstance(d, ast.Call)]
    if not given:
        return {}
    frame = Frame(fv.rel, world, def_scope(interp, fv, world), interp.module_state(fv.rel, world, ()).env, [])
    for d in given:
        if interp.ev(d.func, frame) != GIVEN:
            continue
        params = [p.arg for p in (*node.args.posonlyargs, *node.args.args)][1 if fv.cls is not None else 0:]
        out: dict[str, Value] = {}
        if d.args and len(d.args) <= len(params):
            for name, e in zip(params[len(params) - len(d.args):], d.args, strict=True):
                out[name] = strategy_value(interp, e, frame)
        for kw in d.keywords:
            if kw.arg is not None:
                out[kw.arg] = strategy_value(interp, kw.value, frame)
        return out
    return {}


def strategy_value(interp: Interp, e: ast.expr, frame: Frame) -> Value:
    """What a strategy expression draws: `sampled_from(xs)` any element, `just(x)` x, `booleans()` either,
    `none()` None, `one_of(...)` any of its strategies' values; anything else unknown."""
    if not isinstance(e, ast.Call):
        return UNRESOLVED
    f = interp.ev(e.func, frame)
    if not isinstance(f, Ext) or not f.path.startswith(STRATEGIES):
        return UNRESOLVED
    name = f.path[len(STRATEGIES):]
    if name == "sampled_from" and len(e.args) == 1:
        xs = interp.iteration(interp.ev(e.args[0], frame), frame.world)
        return join_all(list(xs.items)) if isinstance(xs, Seq) and xs.items else UNRESOLVED
    if name == "just" and len(e.args) == 1:
        return interp.ev(e.args[0], frame)
    if name == "booleans":
        return join_all([Const(True), Const(False)])
    if name == "none":
        return Const(None)
    if name == "one_of":
        parts = e.args[0].elts if len(e.args) == 1 and isinstance(e.args[0], (ast.List, ast.Tuple)) else e.args
        return join_all([strategy_value(interp, a, frame) for a in parts]) if parts else UNRESOLVED
    return UNRESOLVED
