"""Function summaries: what a call of an in-repo function does to devices, computed once per context.

A summary is the CallResult of a function analysed in one *context*: the function, its argument values,
the world and the shared namespaces it reads. The interpreter (interp_calls.CallsMixin.call_function)
computes each summary once and reuses it at every call site, in every test, at O(1) cost. Three rules make
that linear and independent of the order of analysis:

* **Recursion is widened** (`widen`). When a function is called while it is already being analysed (direct
  or mutual recursion), the call's context is abstracted: numbers become unknown and objects nested deeper
  than `NESTING` keep only their device-like attributes. A recursion over shrinking dimensions
  (`f(dim + 1)` until a shape the analysis cannot see), or over a growing tree of objects (a Brownian
  interval splitting itself), then reaches a context it has already entered after a step or two, instead of
  unrolling until the call-depth bound. Device facts survive widening: tensors, devices, strings and
  booleans are kept, so a recursive function moving tensors to `cuda` is still seen doing so.
* **A widened recursion is cut** when it recurses again: a function is on the stack at most twice, once
  in the context its first caller gave and once widened; a further call of it (whatever its arguments: a
  tree walk passes a new node and a longer accumulator list each time) is a cycle back to the widened one.
* **A cycle is cut with the least informative answer** (an unknown value, no findings), and a result that
  relied on such a cut of an *enclosing* call (`Frames.lowest_cut`) is provisional: it is reused while that
  call is being analysed and dropped afterwards, never stored. Only results whose cuts all lead back to
  themselves are stored, so a stored summary is what analysing that context alone gives: the same whatever
  test, file or process reaches it first (`--jobs`, `--paths`). Such a result is sound: every function of a
  cycle is analysed, from the context that closed it, in the frame of the call that stores it.
* **Each summary has its own step budget** (`SUMMARY_BUDGET`, the callee's own steps; the callees'
  summaries are budgeted on their own). A summary that exceeds it says so in an `unknown` finding naming the
  function. A caller is charged one step per reuse, so the same library code reached from a thousand tests
  costs its analysis once, and no budget depends on which test came first.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tools.classify.values import UNKNOWN, Const, DictV, FuncV, Inst, OneOf, Seq, Value, bounded, join_all

NESTING = 2  # objects inside objects: attributes kept whole down to this depth in a widened context
SUMMARY_BUDGET = 10_000_000  # own steps of one summary (see CASE_BUDGET: the same scale as a test body)


def widen(v: Value, depth: int = 0) -> Value:
    """The context class of a value in a recursive call: numbers are unknown (they decide how deep a
    recursion goes, never on which device), nested objects keep their structure down to NESTING and only
    their non-object attributes below it (each dropped one becomes unknown, never the class default)."""
    if isinstance(v, Const):
        return UNKNOWN if type(v.value) in (int, float, complex) else v
    if isinstance(v, Seq):
        return Seq(tuple(widen(i, depth + 1) for i in v.items), v.kind)
    if isinstance(v, DictV):
        return DictV(tuple((widen(k, depth + 1), widen(x, depth + 1)) for k, x in v.items))
    if isinstance(v, OneOf):
        return join_all([widen(a, depth) for a in v.alts])
    if isinstance(v, Inst):
        if depth >= NESTING:
            return Inst(v.cls, tuple((k, UNKNOWN if _holds_object(x) else widen(x, depth + 1)) for k, x in v.attrs))
        return Inst(v.cls, tuple((k, widen(x, depth + 1)) for k, x in v.attrs))
    if isinstance(v, FuncV) and v.bound is not None:
        return FuncV(v.rel, v.pos, v.name, bound=widen(v.bound, depth), captured=v.captured, cls=v.cls)
    return v


def _holds_object(v: Value) -> bool:
    return isinstance(v, (Inst, Seq, DictV, OneOf)) or isinstance(v, FuncV) and v.bound is not None


def widen_call(fv: FuncV, args: list[Value], kwargs: dict[str, Value]) -> tuple[Value, list[Value], dict[str, Value]]:
    """(callee, args, kwargs) of a recursive call in its widened context."""
    return (bounded(widen(fv)), [bounded(widen(a)) for a in args],
            {k: bounded(widen(v)) for k, v in kwargs.items()})


@dataclass
class Frames:
    """The summaries being computed (the analysis stack) and what their computation relied on."""

    keys: dict[tuple[Any, ...], int] = field(default_factory=dict)  # context -> its position on the stack
    functions: dict[tuple[str, tuple[int, int]], int] = field(default_factory=dict)  # (rel, pos) -> how many
    widened: dict[tuple[str, tuple[int, int]], int] = field(default_factory=dict)  # (rel, pos) -> its position
    lowest_cut: int = 1 << 30  # lowest stack position a cycle was cut at, in the current computation
    provisional: dict[tuple[Any, ...], tuple[int, Any]] = field(default_factory=dict)  # context -> (cut, result)

    def recursive(self, fv: FuncV) -> bool:
        return self.functions.get((fv.rel, fv.pos), 0) > 0

    def cut_recursion(self, fv: FuncV) -> bool:
        """A call of a function whose widened recursion is being computed: a cycle back to it."""
        pos = self.widened.get((fv.rel, fv.pos))
        if pos is None:
            return False
        self.lowest_cut = min(self.lowest_cut, pos)
        return True

    def push(self, key: tuple[Any, ...], fv: FuncV, widened: bool) -> tuple[int, int]:
        """Enter a computation: (its position, the enclosing computation's lowest cut so far)."""
        pos = len(self.keys)
        self.keys[key] = pos
        fid = (fv.rel, fv.pos)
        self.functions[fid] = self.functions.get(fid, 0) + 1
        if widened:
            self.widened[fid] = pos
        saved, self.lowest_cut = self.lowest_cut, 1 << 30
        return pos, saved

    def pop(self, key: tuple[Any, ...], fv: FuncV, pos: int, saved: int) -> bool:
        """Leave a computation; True when its result may be stored (no cut above it). Provisional results
        that depended on this computation are dropped; the enclosing one inherits the cuts above it."""
        del self.keys[key]
        fid = (fv.rel, fv.pos)
        self.functions[fid] -= 1
        if self.widened.get(fid) == pos:
            del self.widened[fid]
        cut = self.lowest_cut
        if self.provisional:
            for k in [k for k, (c, _) in self.provisional.items() if c >= pos]:
                del self.provisional[k]
        self.lowest_cut = min(saved, cut)
        return cut >= pos

    def cut(self, key: tuple[Any, ...]) -> bool:
        """A call of a context being computed: record the cycle; True when it is one."""
        pos = self.keys.get(key)
        if pos is None:
            return False
        self.lowest_cut = min(self.lowest_cut, pos)
        return True
