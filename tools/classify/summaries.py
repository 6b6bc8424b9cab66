"""Function summaries: what a call of an in-repo function does to devices, computed once per context.

A summary is the CallResult of a function analysed in one *context*: the function, its argument values,
the world and the shared namespaces it reads. The interpreter (interp_calls.CallsMixin.call_function)
computes each summary once and reuses it at every call site, in every test, at O(1) cost. Three rules make
that linear and independent of the order of analysis:

* **Recursion is widened** (`widen`). When a function is called while it is already being analysed (direct
  or mutual recursion), the call's context is abstracted: numbers become unknown, so a recursion over
  dimensions (`f(dim + 1)` until a shape the analysis cannot see) explores both branches once instead of
  unrolling until the call-depth bound, and its entry points share one summary. Device facts survive
  widening: tensors, devices, strings, booleans and objects with their attributes are kept, so a recursive
  function moving tensors to `cuda` is still seen doing so.
* **A widened recursion goes on only while it shrinks** (`context_size`): a recursive call of a function
  whose widened context is being computed proceeds when its own widened context is smaller (a property
  reading `self._args[0].device` down a tree of nested operators, a walk to a node's children) and is a
  cycle back to the widened one otherwise (a tree walk that builds new nodes, an accumulator list that grows).
  A walk of the class hierarchy goes on too (`for sub in cls.__subclasses__(): yield from walk(sub)`,
  class_resolver's `get_subclasses`): a call whose context is the active one's with other classes in the places
  that held classes (`class_walk_shape`). The repository's classes are finitely many and a context already on
  the stack is a cycle, so such a walk ends too.
  Sizes are finite, so every recursion ends.
* **A cycle is cut with the least informative answer** (an unknown value, no findings), and a result that
  relied on such a cut of an *enclosing* call (`Frames.lowest_cut`) is provisional: it is reused while that
  call is being analysed and dropped afterwards, never stored. Only results whose cuts all lead back to
  themselves are stored, so a stored summary is what analysing that context alone gives: the same whatever
  test, file or process reaches it first (`--jobs`, `--paths`). Such a result is sound: every function of a
  cycle is analysed, from the context that closed it, in the frame of the call that stores it.
* **A summary that read no world is stored for every world.** The interpreter counts each time the world
  decides something (InterpBase.world_reads: a machine query, a well-known constant, or a module, class or
  summary that read one); the analysis before the first such read is the same in every world, so a summary
  whose computation saw none is reused in all of them (interp_calls.CallsMixin.call_function).
* **A summary says what it lost.** The method names it called on values it could not resolve, and whether it
  called one (InterpBase.lost), travel with it (CallResult.lost) and are added again at every reuse, so an analysis
  of many cases at once (analyzer.Analyzer.joined_cases) sees every call it could not follow, wherever the summary
  was first computed.
* **Each summary has its own step budget** (`SUMMARY_BUDGET`, the callee's own steps; the callees'
  summaries are budgeted on their own). A summary that exceeds it says so in an `unknown` finding naming the
  function. A caller is charged one step per reuse, so the same library code reached from a thousand tests
  costs its analysis once, and no budget depends on which test came first.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tools.classify.values import (
    UNRESOLVED,
    ClassV,
    Const,
    DictV,
    FuncV,
    Inst,
    NNModV,
    OneOf,
    Seq,
    TensorV,
    Value,
    bounded,
    join_all,
    size_of,
)

SUMMARY_BUDGET = 10_000_000  # own steps of one summary (see CASE_BUDGET: the same scale as a test body)


def widen(v: Value) -> Value:
    """The context class of a value in a recursive call: numbers are unknown, wherever they are (they decide
    how deep a recursion goes and which shapes it builds, never on which device it runs). Everything else is
    kept, objects with all their attributes: a sub-operator's `self.device` is still known one level down."""
    if isinstance(v, Const):
        return UNRESOLVED if type(v.value) in (int, float, complex) else v
    if isinstance(v, Seq):
        return Seq(tuple(widen(i) for i in v.items), v.kind)
    if isinstance(v, DictV):
        return DictV(tuple((widen(k), widen(x)) for k, x in v.items))
    if isinstance(v, OneOf):
        return join_all([widen(a) for a in v.alts])
    if isinstance(v, Inst):
        return Inst(v.cls, tuple((k, widen(x)) for k, x in v.attrs))
    if isinstance(v, FuncV) and v.bound is not None:
        return FuncV(v.rel, v.pos, v.name, bound=widen(v.bound), captured=v.captured, cls=v.cls)
    if isinstance(v, NNModV):
        return NNModV(v.name, tuple((k, widen(x)) for k, x in v.args), v.device)
    if isinstance(v, TensorV) and v.shape is not None:
        return TensorV(v.device)
    return v


def context_size(fv: FuncV, args: list[Value], kwargs: dict[str, Value]) -> int:
    """How large a call's context is (value nodes, shared parts counted once per use)."""
    return sum(size_of(v)[0] for v in (fv, *args, *kwargs.values()))


def class_walk_shape(fv: FuncV, args: list[Value], kwargs: dict[str, Value]) -> tuple[Any, ...] | None:
    """A call's context with its class arguments blanked (what stays the same down a walk of the class hierarchy);
    None when no argument is a class."""
    if not any(isinstance(a, ClassV) for a in (*args, *kwargs.values())):
        return None
    return (fv, tuple(None if isinstance(a, ClassV) else a for a in args),
            tuple(sorted(((k, None if isinstance(v, ClassV) else v) for k, v in kwargs.items()), key=lambda kv: kv[0])))


def widen_call(fv: FuncV, args: list[Value], kwargs: dict[str, Value]) -> tuple[Value, list[Value], dict[str, Value]]:
    """(callee, args, kwargs) of a recursive call in its widened context."""
    return (bounded(widen(fv)), [bounded(widen(a)) for a in args],
            {k: bounded(widen(v)) for k, v in kwargs.items()})


@dataclass
class Frames:
    """The summaries being computed (the analysis stack) and what their computation relied on."""

    keys: dict[tuple[Any, ...], int] = field(default_factory=dict)  # context -> its position on the stack
    functions: dict[tuple[str, tuple[int, int]], int] = field(default_factory=dict)  # (rel, pos) -> how many
    # (rel, pos) -> (position, context size, class_walk_shape) of each widened computation of that function on the stack
    widened: dict[tuple[str, tuple[int, int]], list[tuple[int, int, tuple[Any, ...] | None]]] = field(
        default_factory=dict)
    lowest_cut: int = 1 << 30  # lowest stack position a cycle was cut at, in the current computation
    provisional: dict[tuple[Any, ...], tuple[int, Any]] = field(default_factory=dict)  # context -> (cut, result)

    def recursive(self, fv: FuncV) -> bool:
        return self.functions.get((fv.rel, fv.pos), 0) > 0

    def cut_recursion(self, fv: FuncV, size: int, shape: tuple[Any, ...] | None) -> bool:
        """A widened call of a function whose widened recursion is being computed with a context that is
        not larger, unless it walks the class hierarchy (the same `class_walk_shape`): a cycle back to it."""
        active = self.widened.get((fv.rel, fv.pos))
        if not active or size < active[-1][1] or shape is not None and size == active[-1][1] and \
                shape == active[-1][2]:
            return False
        self.lowest_cut = min(self.lowest_cut, active[-1][0])
        return True

    def push(self, key: tuple[Any, ...], fv: FuncV, widened_size: int | None,
             shape: tuple[Any, ...] | None = None) -> tuple[int, int]:
        """Enter a computation: (its position, the enclosing computation's lowest cut so far)."""
        pos = len(self.keys)
        self.keys[key] = pos
        fid = (fv.rel, fv.pos)
        self.functions[fid] = self.functions.get(fid, 0) + 1
        if widened_size is not None:
            self.widened.setdefault(fid, []).append((pos, widened_size, shape))
        saved, self.lowest_cut = self.lowest_cut, 1 << 30
        return pos, saved

    def pop(self, key: tuple[Any, ...], fv: FuncV, pos: int, saved: int) -> int:
        """Leave a computation: the lowest stack position a cycle it met was cut at (its result may be stored
        when that is not below `pos`). Provisional results that depended on this computation are dropped; the
        enclosing one inherits the cuts."""
        del self.keys[key]
        fid = (fv.rel, fv.pos)
        self.functions[fid] -= 1
        active = self.widened.get(fid)
        if active and active[-1][0] == pos:
            active.pop()
        cut = self.lowest_cut
        if self.provisional:
            for k in [k for k, (c, _) in self.provisional.items() if c >= pos]:
                del self.provisional[k]
        self.lowest_cut = min(saved, cut)
        return cut

    def cut(self, key: tuple[Any, ...]) -> bool:
        """A call of a context being computed: record the cycle; True when it is one."""
        pos = self.keys.get(key)
        if pos is None:
            return False
        self.lowest_cut = min(self.lowest_cut, pos)
        return True

