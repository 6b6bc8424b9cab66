"""The interpreter's statements: control flow (branches run apart and joined, loops, try/except, match),
assignment, imports, and the creation of functions (closures capture what they read) and classes
(@parameterized_class, instantiate_parametrized_tests).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable

from tools.classify import click_model, limits, nn_modules, omegaconf_model, registries, typer_model
from tools.classify.closures import enclosing_function, free_names, mutated_outer_names, shared_cells
from tools.classify.devices import EXISTING_DEVICE, _compare, accel_device, gpu_count_of, isinstance_of, truth
from tools.classify.evidence import GPU, IMPORTS, NVML_KEY, PROCESS_KEY, SKIP, UNKNOWN, Finding, step
from tools.classify.guards import (
    EXPECTS_ERROR,
    RAISES_OFF_CUDA,
    SKIPS_OFF_CUDA,
    dropping_gpu_findings,
    foreign_class_note,
    foreign_class_test,
    guard_note,
    keeping_gpu_findings_only,
    off_cuda_branch,
    off_cuda_taken,
    raises_error,
    reached_package,
    requiring_packages,
)
from tools.classify.installed import absolute_name, is_installed
from tools.classify.interp_base import (
    DEFAULT_PREFIX,
    DISPATCH,
    EMPTY_DICT,
    MUTATORS,
    NAMESPACE,
    SINGLEDISPATCH,
    STORE,
    WRAPPER,
    BudgetExceeded,
    Frame,
    InterpBase,
    _last_name,
    _mutable_target,
    dict_alternatives,
    is_fixture_def,
    kept_on_node,
    namespace_key,
    own_attrs,
    script_function,
)
from tools.classify.interp_calls import short_source
from tools.classify.interp_external import NVML_FUNCTIONS, PARAMETERIZED_CLASS, runs_nvidia_smi
from tools.classify.optional_imports import (
    ABSENT,
    catches_import_error,
    imported_tops,
    imports_torch_only,
    leading_imports,
    raising_call,
)
from tools.classify.test_state import PATCHED, patch_module_attr, set_environ
from tools.classify.values import (
    MAX_ALTERNATIVES,
    MODULE_CONTAINERS,
    PARAMETER_VALUE,
    ClassV,
    Const,
    DeviceV,
    DictV,
    Ext,
    FuncV,
    Inst,
    MarkV,
    ModV,
    NNModV,
    NoReturn,
    OneOf,
    ParamV,
    PathV,
    RequestV,
    Seq,
    Unresolved,
    Value,
    alternatives,
    bounded,
    decided_key,
    dict_items,
    extended,
    hashable,
    is_objects,
    join_all,
    module_kind,
)
from tools.classify.values import UNRESOLVED as UNK

MAX_IMPORT_CHAIN = 2  # modules an import is followed through to one of a package that is not installed
MAX_UNROLL = 256  # iterations of a container-filling loop run one by one (linear: each runs the body once)
MAX_UNROLLED_TABLE = 1024  # iterations of a loop that only appends call-free values (a parameter table)
MAX_FOLDED = 16  # constants of a loop folding them into a name, run one by one
MAX_FOLD_STATEMENTS = 3  # statements of such a loop's body


def _branches_on_target(s: ast.For | ast.AsyncFor) -> bool:
    """Whether a loop's body decides something on a name its target binds (`if name == "l1":`, `if n:`): only then
    does keeping each element's names together change what runs. Each element on its own path costs a run of the body
    per element, so it is done in a test's own body and at a module's top level only: in every loop over a few tuples
    it cost transformer-lens +14 % CPU and +20 % peak RSS, in those branching on their names still +11 %, for two
    evidence lines and no label (bench: 45.6 / 43.9 s vs 50.2 / 51.9 s; then 46.1 / 47.9 vs 51.8 / 52.4 s)."""
    names = {n.id for n in ast.walk(s.target) if isinstance(n, ast.Name)}
    return any(isinstance(n, (ast.If, ast.IfExp, ast.While)) and any(
        isinstance(m, ast.Name) and m.id in names for m in ast.walk(n.test)) for b in s.body for n in ast.walk(b))


def _held(e: ast.expr, frame: Frame) -> Value | None:
    """What a name, or an attribute of an object a name holds, holds now, read without evaluating anything (no
    property getter, no `__getattr__`: evaluating the holder of every `x[k] = v` again made summaries read the world
    and cost timm 3x its CPU time); None for anything else."""
    if isinstance(e, ast.Name):
        return frame.env.get(e.id)
    if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and isinstance(obj := frame.env.get(e.value.id),
                                                                                    Inst):
        return obj.attr(e.attr)
    return None


def _distinct_constants(it: Value) -> list[Value] | None:
    """The elements of a loop over a few known constants (`for device in ["cpu", "cuda"]:`), each once, in order; None
    for anything else. A body that decides on the name (`if device == "cuda" and not torch.cuda.is_available():
    continue`) then runs once per value, each on its own path: one joined value left the `continue` undecided and the
    CUDA iteration's work a need (a false GPU, tensorizer's tests). In a test's body and what it calls directly."""
    if not isinstance(it, Seq) or not 1 < len(it.items) <= MAX_ALTERNATIVES:
        return None
    out: list[Value] = []
    for item in it.items:
        if not isinstance(item, Const):
            return None
        if item not in out:
            out.append(item)
    return out if len(out) > 1 else None


def _distinct_tuples(it: Value) -> list[Value] | None:
    """The elements of a loop over a few known tuples (`D.items()`, `[("cpu", 1), ("cuda", 2)]`), each once, in
    order; None for anything else (one joined element is then unpacked)."""
    if not isinstance(it, Seq) or not 1 < len(it.items) <= MAX_ALTERNATIVES:
        return None
    out: list[Value] = []
    for item in it.items:
        if not isinstance(item, Seq) or item.kind != "tuple":
            return None
        if item not in out:
            out.append(item)
    return out if len(out) > 1 else None


def _holds_registry_object(fv: FuncV) -> bool:
    """A method of, or a closure over, an object holding a registry (`MODELS.register_module()`'s inner function)."""
    return any(isinstance(v, Inst) and any(type(a) is DictV and a.origin for _, a in v.attrs)
               for v in (fv.bound, *(x for _, x in fv.captured)))


class StatementsMixin(InterpBase):
    """Statements; a part of dataflow.Interp."""

    def exec_block(self, body: list[ast.stmt], frame: Frame) -> bool:
        """Run statements; True when every path ends (return, raise, skip)."""
        for i, stmt in enumerate(body):
            self.guarded_fallthrough = None  # (set by this statement alone, if it is such an `if`)
            try:
                if self.exec_stmt(stmt, frame):
                    return True
            except limits.TooLarge as exc:  # (a statement, not an expression, asked): unknown, with the reason
                frame.add(Finding(UNKNOWN, (step(frame.rel, stmt.lineno, str(exc)),)))
                continue
            if self.guarded_fallthrough is stmt:
                # `if x.device.type != "cuda": return fallback(x)` then CUDA code: what follows runs only when the
                # existing value is on CUDA, as an `else:` branch would
                self.guarded_fallthrough = None
                return self._off_cuda_block(stmt, body[i + 1:], frame, False, True)
        return False

    def _branch(self, frame: Frame) -> Frame:
        return Frame(frame.rel, frame.world, dict(frame.env), frame.module_env, frame.findings, frame.depth,
                     frame.returns, frame.self_name, frame.cls, frame.captured, frame.generated, True,
                     frame.empty_defaults, frame.at_yield, frame.registrations)

    def _merge(self, frame: Frame, branches: list[tuple[Frame, bool]]) -> bool:
        live = [b for b, ended in branches if not ended]
        if not live:
            return True
        keys = sorted(set().union(*(b.env.keys() for b in live)))
        merged: dict[str, Value] = {}
        for k in keys:
            if k.startswith(PATCHED) and any(k not in b.env for b in live):
                # a module attribute replaced on some paths only: the original on the others
                rel, _, name = k[len(PATCHED):].rpartition(":")
                original = self.module_attr(rel, name, frame.world)
                merged[k] = join_all([b.env.get(k, original) for b in live])
                continue
            if k.startswith(STORE):  # a shared namespace not written on a path is empty there
                merged[k] = join_all([b.env.get(k, EMPTY_DICT) for b in live])
                continue
            vals = [b.env[k] for b in live if k in b.env]
            merged[k] = join_all(vals)
        frame.env.clear()
        frame.env.update(merged)
        frame.empty_defaults = frozenset.intersection(*(b.empty_defaults for b in live))  # not rebound on any path
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
                if isinstance(t, ast.Attribute) and t.attr == "__dict__" and self._adopt_namespace(t, s.value, v,
                                                                                                   frame):
                    continue
                self.bind(t, v, frame)
            return isinstance(v, NoReturn)
        if isinstance(s, ast.Assert):  # (early: test bodies are full of them)
            before = self.world_reads
            holds = self.truth_of(s.test, frame)
            self.world_decided_assert(holds, before, frame, s.lineno, f"assert {short_source(s.test)}")
            return False
        if isinstance(s, ast.AnnAssign):
            if s.value is not None:
                self.bind(s.target, self.ev(s.value, frame), frame)
            return False
        if isinstance(s, ast.AugAssign):
            cur = self.ev(s.target, frame) if _mutable_target(s.target) else UNK
            rhs = self.ev(s.value, frame)
            got = self.operator_method(s.op, cur, rhs, s, frame, inplace=True)
            self.bind(s.target, got if got is not None else self._binop(s.op, cur, rhs), frame)
            return False
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if frame.module_env is None and s.decorator_list:
                self._decorator_env(s, frame)
            fv = self.make_function(s, frame)
            if frame.module_env is None and any(_is_jit_script(d) for d in s.decorator_list):
                fv = script_function(fv)
            value: Value = fv
            if s.decorator_list and self._click_command_def(s, frame.rel):
                value = self._click_decorated(s, fv, frame)
            elif frame.module_env is not None and not is_fixture_def(s):
                # a nested def (wrapper closures): in-repo decorators are followed
                for d in reversed(s.decorator_list):
                    dv = self.ev(d, frame)
                    if isinstance(dv, FuncV):
                        r = self.call(dv, [value], {}, d, frame, "decorator")
                        value = r if isinstance(r, FuncV) else value
            else:
                value = self.decorated_def(s, fv, frame)
            frame.env[s.name] = value
            return False
        if isinstance(s, ast.ClassDef):
            cv = ClassV(frame.rel, (s.lineno, s.col_offset), s.name, self.closure_values(s, frame))
            frame.env[s.name] = cv
            if any(_last_name(d) == "instantiate_parametrized_tests" for d in s.decorator_list):
                self.param_classes.add(cv)
            for d in s.decorator_list:
                if isinstance(d, ast.Call) and _last_name(d) == "parameterized_class":
                    self._parameterized_class(cv, [self.ev(a, frame) for a in d.args],
                                              {k.arg: self.ev(k.value, frame) for k in d.keywords if k.arg}, d,
                                              frame)
                elif _last_name(d) != "instantiate_parametrized_tests":
                    # a decorator that evaluates to one (`@expand()`, `@PC`); what evaluating it finds is not this
                    # module's: the class body decides that
                    scratch = Frame(frame.rel, frame.world, frame.env, frame.module_env, [])
                    dv = self.ev(d, scratch)
                    if isinstance(dv, MarkV) and dv.name == PARAMETERIZED_CLASS:
                        self._parameterized_class(cv, list(dv.args), dict(dv.kwargs), d, frame)
                    elif frame.module_env is None and isinstance(dv, FuncV) and (
                            self.module_registries(dv.rel) or _holds_registry_object(dv) or registries.calls_setattr(
                                self.source.module(dv.rel).defs.get(dv.pos))):
                        # `@register("big") class Big`, `@MODELS.register_module() class Big`: what the decorator
                        # stores into registries (registries.py); `@add_device_tests class TestX` gives the class
                        # test methods (`setattr(cls, f"test_{dev}", ...)`, registries.GENERATED_TESTS)
                        self.call_function_from(dv, [cv], {}, d.lineno, scratch)
            if frame.module_env is None and s.bases and self.subclass_registrars:
                self.init_subclass(cv, s, frame)
            return False
        if isinstance(s, ast.Return):
            frame.returns.append(self.ev(s.value, frame) if s.value is not None else Const(None))
            return True
        if isinstance(s, ast.If):
            t = self.truth_of(s.test, frame)
            self._raises_off_cuda(s, t, frame)
            if t is not None:
                return self._off_cuda_block(s, s.body if t else s.orelse, frame,
                                            off_cuda_taken(s.test, t, availability=False))
            split = self._refine(s.test, frame)
            if split is not None:
                var, yes, no = split
                if yes is None or no is None:  # every object decides the test the same way
                    frame.env[var] = yes if no is None else no  # type: ignore[assignment]
                    self._sync_stores(frame.env[var], frame)
                    return self._off_cuda_block(s, s.body if no is None else s.orelse, frame,
                                                off_cuda_taken(s.test, no is None, availability=False))
            a, b = self._branch(frame), self._branch(frame)
            if split is not None:
                a.env[var], b.env[var] = yes, no  # type: ignore[assignment]
                self._sync_stores(yes, a)  # type: ignore[arg-type]
                self._sync_stores(no, b)  # type: ignore[arg-type]
            guarded = self.device_guard(s.test, frame)
            off = off_cuda_branch(s.test, availability=False)
            foreign = foreign_class_test(s.test)
            needs, which = foreign if foreign is not None else (None, frozenset())
            ea = self._off_cuda_block(s, s.body, a, off is True, guarded is True, which if needs is True else None)
            eb = self._off_cuda_block(s, s.orelse, b, off is False, guarded is False, which if needs is False else None)
            if guarded is False and ea and not s.orelse:
                self.guarded_fallthrough = s  # (exec_block runs the statements after it as the guarded branch)
            return self._merge(frame, [(a, ea), (b, eb)])
        if isinstance(s, (ast.For, ast.AsyncFor)):
            it = self.iteration(self.own_iterator(self.ev(s.iter, frame), s.iter.lineno, frame), frame.world)
            if isinstance(it, Seq) and (it.kind in ("range", "tuple") or _fresh_iterator(s.iter) or _own_dict_view(
                    s.iter, frame.empty_defaults)) and not it.items:
                # `for i in range(torch.cuda.device_count()):` runs no iteration on a CPU-only machine; nor does
                # `for a in args:` with no positional arguments, `for i, a in enumerate(args):`, or `for k, v in
                # sorted(kwargs.items()):` with no keyword arguments (a list may have been filled by a callee; the
                # call's own `**kwargs` or `{}` default is empty)
                return self.exec_block(s.orelse, frame)
            if isinstance(it, Seq) and _unrolled(s, it, frame.module_env is None):
                for item in it.items:
                    self.bind(s.target, item.values[0] if isinstance(item, ParamV) and len(item.values) == 1
                              else item, frame)
                    if self._iteration(s.body, frame):
                        return True
                return self.exec_block(s.orelse, frame)
            pairs = _distinct_tuples(it) if frame.depth <= 1 and isinstance(s.target, ast.Tuple) and \
                _branches_on_target(s) else _distinct_constants(it) if frame.depth <= 2 and isinstance(
                    s.target, ast.Name) and _branches_on_target(s) else None
            if pairs is not None:
                # `for name, fn in OPS.items(): if name == "neg": fn(x)` in a test: each element unpacked on a path of
                # its own, so the names keep belonging together (one joined element pairs every name with every
                # function)
                branches: list[tuple[Frame, bool]] = [(frame, False)]
                for item in pairs:
                    loop = self._branch(frame)
                    self.bind(s.target, item, loop)
                    branches.append((loop, self._iteration(s.body, loop)))
                self._merge(frame, branches)
                self.exec_block(s.orelse, frame)
                return False
            elem: Value = UNK
            if isinstance(it, Seq) and it.items:
                elem = join_all([i.values[0] if isinstance(i, ParamV) and len(i.values) == 1 else i
                                 for i in it.items])
            elif isinstance(it, Unresolved):
                elem = self.existing_device_elements(s.iter, frame) or UNK
            loop = self._branch(frame)
            self.bind(s.target, elem, loop)
            ended = self.exec_block(s.body, loop)
            self._merge(frame, [(frame, False), (loop, ended)])
            self.exec_block(s.orelse, frame)
            return False
        if isinstance(s, ast.While):
            t = self.truth_of(s.test, frame)
            if t is False:
                return self.exec_block(s.orelse, frame)
            loop = self._branch(frame)
            ended = self.exec_block(s.body, loop)
            self._merge(frame, [(frame, False), (loop, ended)])
            return False
        if isinstance(s, (ast.With, ast.AsyncWith)):
            expects = [i.context_expr for i in s.items if isinstance(i.context_expr, ast.Call) and _last_name(
                i.context_expr) in EXPECTS_ERROR]
            if expects:
                # `with pytest.raises(RuntimeError):` expects the error a non-CUDA run raises; one that catches what
                # CPU-only torch raises at a CUDA call (`AssertionError: Torch not compiled with CUDA enabled`)
                # expects every CUDA call in it to fail: the test passes without a GPU (and fails with one)
                # The error it expects is swallowed: what follows the block runs though its body ended in a raise.
                if any(_catches_cpu_torch_errors(e) for e in expects):
                    with dropping_gpu_findings(frame, note=step(frame.rel, s.lineno, "expects the error a CUDA call "
                                                                                     "raises without a GPU")):
                        self._exec_with(s, frame)
                        return False
                with dropping_gpu_findings(frame, RAISES_OFF_CUDA):
                    self._exec_with(s, frame)
                    return False
            ended = self._exec_with(s, frame)
            # `with contextlib.suppress(ValueError):` swallows an error its body raises
            return ended and not any(isinstance(i.context_expr, ast.Call) and _last_name(i.context_expr) == "suppress"
                                     for i in s.items)
        if isinstance(s, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            # the body stops at a statement that certainly raises here, and the handler that catches it runs: an
            # import of a module that is not installed, `pynvml.nvmlInit()` on a machine without a driver
            # (`except pynvml.NVMLError: return 0`), torch's Module.__getattr__ in a module's own `__getattr__`
            failing = self._missing_import(s, frame) or self._nvml_fails(s, frame) or self._nvidia_smi_fails(
                s, frame) or self._module_lookup_fails(s, frame)
            if failing is not None:
                at, handler = failing
                for st in s.body[:at]:
                    self.exec_stmt(st, frame)
                if handler.name:
                    frame.env[handler.name] = UNK
                ended = self.exec_block(handler.body, frame)
                return self.exec_block(s.finalbody, frame) or ended
            if imports_torch_only(s):
                # `try: import torch; return True` / `except ImportError: return False`: torch imports where the
                # classifier runs (its CPU lock), and nothing else in the body can raise
                ended = self.exec_block(s.body, frame) or self.exec_block(s.orelse, frame)
                return self.exec_block(s.finalbody, frame) or ended
            body = self._branch(frame)
            body.findings = []
            ended = self.exec_block(s.body, body)
            swallowed = {"": _swallows(s, _DEVICE_ERRORS), PROCESS_KEY: _swallows(s, _PROCESS_ERRORS),
                         NVML_KEY: _swallows(s, _NVML_ERRORS)}
            for f in body.findings:
                # `try: torch.tensor(0, device=i) except Exception: continue` cannot fail the test
                if not (swallowed.get(f.key, swallowed[""]) and f.kind in (GPU, UNKNOWN)):
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
        if isinstance(s, ast.Match):
            return self._match(s, frame)
        if isinstance(s, ast.Delete):
            for t in s.targets:
                if isinstance(t, ast.Name):
                    frame.env.pop(t.id, None)
                elif isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and isinstance(
                        frame.env.get(t.value.id), (DictV, Seq)):
                    frame.env[t.value.id] = UNK  # `del d[k]`: as for `d[k] = v` (bind)
                elif isinstance(t, (ast.Attribute, ast.Subscript)) and isinstance(t.value, ast.Name) and \
                        nn_modules.is_module(frame.env.get(t.value.id)):
                    # `del model.fc`, `del seq[0]`: a child removed, the module no longer prints as known
                    frame.env[t.value.id] = nn_modules.unprintable(frame.env[t.value.id])
            return False
        return False

    def _match(self, s: ast.Match, frame: Frame) -> bool:
        """A `match` statement: the first case whose pattern is decided to match runs alone (`case slice() as s`
        on a known value, round 12); from the first undecided case on, every remaining case is a branch, as is
        matching none. Captured names are bound to the subject (or its part) where known."""
        subject = self.ev(s.subject, frame)
        branches = []
        for case in s.cases:
            b = self._branch(frame)
            hit = self._pattern(case.pattern, subject, b)
            if hit is not False and case.guard is not None:
                g = truth(self.ev(case.guard, b))
                hit = False if g is False else hit if g is True else None
            if hit is False:
                continue
            branches.append((b, self.exec_block(case.body, b)))
            if hit is True:
                return self._merge(frame, branches)
        branches.append((self._branch(frame), False))
        return self._merge(frame, branches)

    def _pattern(self, p: ast.pattern, subject: Value, frame: Frame) -> bool | None:
        """Whether `p` matches `subject` (None: cannot tell); binds the names it captures in `frame`. Decided
        for wildcards and captures, `Cls()` of a builtin type the analysis knows values of (isinstance), literal
        values, `None`/`True`/`False` and `|` of those; anything else is undecided."""
        if isinstance(p, ast.MatchAs):
            hit = True if p.pattern is None else self._pattern(p.pattern, subject, frame)
            if p.name is not None:
                self.bind(ast.Name(id=p.name, ctx=ast.Store()), subject if hit is True else UNK, frame)
            return hit
        if isinstance(p, ast.MatchClass) and not p.patterns and not p.kwd_patterns:
            got = isinstance_of(subject, self.ev(p.cls, frame))
            return got.value if isinstance(got, Const) and isinstance(got.value, bool) else None
        if isinstance(p, ast.MatchValue):
            return truth(_compare(ast.Eq(), subject, self.ev(p.value, frame)))
        if isinstance(p, ast.MatchSingleton):  # `case None:` compares by identity
            return truth(_compare(ast.Is(), subject, Const(p.value)))
        if isinstance(p, ast.MatchOr):
            hits = [self._pattern(alt, subject, frame) for alt in p.patterns]
            return True if any(h is True for h in hits) else False if all(h is False for h in hits) else None
        return None

    def _click_command_def(self, s: ast.FunctionDef | ast.AsyncFunctionDef, rel: str) -> bool:
        """Whether a def is decorated by click's or typer's decorators (a name click_model models, in a module that
        imports click or typer)."""
        if not any(click_model.decorator_name(d) in click_model.DECORATORS for d in s.decorator_list):
            return False
        got = self.click_modules.get(rel)
        if got is None:
            got = self.click_modules[rel] = click_model.imports_any(self.source.module(rel).imports,
                                                                   ("click", "typer"))
        return got

    def _click_decorated(self, s: ast.FunctionDef | ast.AsyncFunctionDef, fv: FuncV, frame: Frame) -> Value:
        """The function after its decorators, bottom up (click_model.py): click's make it a command with its
        parameters, `@group.command()` registers it on the group too (the group's name is rebound), typer's
        `@app.command()` builds the command from the signature (typer_model.py) and registers it; in a nested
        def an in-repo decorator is followed as elsewhere (pykeen's `@_decorate_model_kwargs` adds options); any
        other decorator is assumed to keep the function, as for any def."""
        value: Value = fv
        for d in reversed(s.decorator_list):
            dv = self.ev(d, frame)
            if typer_model.is_maker(dv) and isinstance(value, FuncV) and isinstance(dv, Inst):
                made = self._typer_command(s, value, dv, frame)
                self._typer_registered(d, dv, made, frame)
                value = made if made is not None else value
                continue
            alts = alternatives(value)
            if not all(isinstance(a, FuncV) for a in alts):
                break
            applied = [click_model.decorate(a, dv, click_model.decorator_name(d)) for a in alts
                       if isinstance(a, FuncV)]
            if all(a is not None for a in applied):
                value = bounded(join_all([a for a in applied if a is not None]))
                self._click_registered(d, value, frame)
                continue
            if frame.module_env is not None and isinstance(dv, FuncV) and isinstance(value, FuncV):
                r = self.call(dv, [value], {}, d, frame, "decorator")
                value = r if all(isinstance(a, FuncV) for a in alternatives(r)) else value.with_attr(
                    click_model.INCOMPLETE, Const(True))
        return value

    def _click_registered(self, d: ast.expr, sub: Value, frame: Frame) -> None:
        """`@cli.command()` on a def: the group named `cli` here, rebound to the group with this sub-command."""
        name = _registrar(d, ("command", "group"))
        group = frame.env.get(name) if name is not None else None
        if name is not None and isinstance(group, FuncV) and click_model.command_of(group) is not None:
            frame.env[name] = click_model.with_subcommand(group, sub)

    def _typer_command(self, s: ast.FunctionDef | ast.AsyncFunctionDef, fv: FuncV, maker: Inst,
                       frame: Frame) -> FuncV | None:
        """The click command typer builds from a function's signature (typer_model.py): one parameter per
        function parameter, from its annotation and default; None when the signature has `*args`/`**kwargs`."""
        a = s.args
        if a.vararg or a.kwarg:
            return None
        positional = [*a.posonlyargs, *a.args]
        defaults: dict[str, ast.expr] = dict(zip([p.arg for p in positional][len(positional) - len(a.defaults):],
                                                 a.defaults, strict=True))
        defaults.update((p.arg, d) for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d is not None)
        params: list[Value] = []
        for p in (*positional, *a.kwonlyargs):
            ann = typer_model.annotated(p.annotation)
            type_node = ann[0] if ann else p.annotation
            if type_node is not None and _last_name(type_node) == "Context":
                continue  # `ctx: typer.Context`: given the context, not a parameter of the command line
            marker = next((v for v in (self.ev(m, frame) for m in (ann[1] if ann else ()))
                           if typer_model.is_param(v)), None)
            default = self.ev(defaults[p.arg], frame) if p.arg in defaults else None
            legacy = marker is None and default is not None and typer_model.is_param(default)
            if legacy:
                marker, default = default, None
            params.append(typer_model.click_param(p.arg, typer_model.annotation_type(type_node),
                                                  marker if isinstance(marker, Inst) else None, legacy, default))
        kind = "group" if maker.attr("kind") == Const("callback") else "command"
        return click_model.as_command(fv.with_attr(click_model.PARAMS, Seq(tuple(params), "tuple")),
                                      click_model.maker(kind, [typer_model.command_name(fv, maker)], {}))

    def typer_run(self, fv: FuncV, n: ast.AST, frame: Frame) -> Value:
        """`typer.run(main)`: an application of that one command, run on the process' command line."""
        node = self.source.module(fv.rel).defs.get(fv.pos)
        maker = typer_model.app_method(typer_model.new_app(), "command", [], {})
        command = self._typer_command(node, fv, maker, frame) if isinstance(
            node, (ast.FunctionDef, ast.AsyncFunctionDef)) and isinstance(maker, Inst) else None
        app = typer_model.with_command(typer_model.new_app(), maker, command) if isinstance(maker, Inst) else None
        return self.call(app, [], {}, n, frame, "typer.run") if app is not None else UNK

    def _typer_registered(self, d: ast.expr, maker: Inst, command: FuncV | None, frame: Frame) -> None:
        """`@app.command()` / `@app.callback()`: the application named `app` here, rebound with the command."""
        name = _registrar(d, ("command", "callback"))
        app = frame.env.get(name) if name is not None else None
        if name is not None and typer_model.is_app(app) and isinstance(app, Inst):
            frame.env[name] = typer_model.with_command(app, maker, command)

    def decorated_def(self, s: ast.FunctionDef | ast.AsyncFunctionDef, fv: FuncV, frame: Frame) -> FuncV:
        """A module-level helper or a method under in-repo decorators (`@to_cuda def double(x)`): the function
        keeps its own identity (its name in ids, its code for the inert proof) and carries what the decorators
        made of it (WRAPPER), which its calls run (CallsMixin.call). Decorators outside the repository are not
        applied; one that hands back the function itself (`@register("name")`) changes nothing, nor one that
        provably adds nothing (_transparent_wrapper). A `functools.singledispatch` function carries its
        registrations instead (DISPATCH, _registers_dispatch). Tests and fixtures keep their own handling
        (wrapper_marks.py, fixtures.py). What running the decorators finds at import is not this module's (as for
        class decorators)."""
        if not s.decorator_list or is_fixture_def(s) or s.name.startswith("test"):
            return fv
        value: Value = fv
        scratch = Frame(frame.rel, frame.world, frame.env, frame.module_env, [])
        for d in reversed(s.decorator_list):
            if self._registers_dispatch(d, s, fv, scratch, frame):
                continue
            dv = self.ev(d, scratch)
            if isinstance(dv, Ext) and dv.path in SINGLEDISPATCH and value == fv:
                return fv.with_attr(DISPATCH, Seq(()))
            if not isinstance(dv, (FuncV, ClassV)):
                continue
            # (called as code even under a skip decorator's name: a helper is not a test, its wrapper runs)
            r = self.call_function_from(dv, [value], {}, d.lineno, scratch) if isinstance(dv, FuncV) else self.call(
                dv, [value], {}, d, scratch, "decorator")
            if isinstance(r, FuncV) or isinstance(r, Inst) and any(isinstance(
                    self.class_lookup(r.cls, m, frame.world), FuncV) for m in ("__call__", "__get__")):
                value = r  # (an object with `__get__`: a descriptor, read on the object: _method_value)
        if value == fv or self._transparent_wrapper(value, fv, frame.world):
            return fv
        return fv.with_attr(WRAPPER, value)

    def _transparent_wrapper(self, wrapper: Value, fv: FuncV, world: int) -> bool:
        """A wrapper that provably adds nothing to a call of the function it wraps (a timer, a memoiser: its text
        and the in-repo code it names are inert, inert.py, and it captured nothing but the function and plain
        values): calling the function alone says the same, at the cost of one analysis instead of two
        (linear_operator's `@cached` methods: +8 % CPU when their wrapper ran too)."""
        if not isinstance(wrapper, FuncV) or wrapper.bound is not None or wrapper.attrs:
            return False
        bare = FuncV(wrapper.rel, wrapper.pos, wrapper.name)
        return self.inert.callable_inert(bare, world) and all(
            isinstance(v, FuncV) and (v.rel, v.pos) == (fv.rel, fv.pos) or self.inert.value_plain(v, world)
            for _, v in wrapper.captured)

    def _registers_dispatch(self, d: ast.expr, s: ast.FunctionDef | ast.AsyncFunctionDef, fv: FuncV, scratch: Frame,
                            frame: Frame) -> bool:
        """`@move.register(torch.Tensor)` / `@move.register` (the type from the first parameter's annotation, after
        `self` for a singledispatchmethod) on a `functools.singledispatch` function `move` of this scope: `move` is
        rebound with the implementation added (register hands the function back, so the def keeps its own name).
        Whether `d` was such a registration."""
        func = d.func if isinstance(d, ast.Call) else d
        if not (isinstance(func, ast.Attribute) and func.attr == "register" and isinstance(func.value, ast.Name)):
            return False
        target = frame.env.get(func.value.id)
        regs = target.attr(DISPATCH) if isinstance(target, FuncV) else None
        if not isinstance(target, FuncV) or not isinstance(regs, Seq):
            return False
        if isinstance(d, ast.Call) and d.args:
            kind = self.ev(d.args[0], scratch)
        else:
            params = [*s.args.posonlyargs, *s.args.args]
            first = params[1] if frame.cls is not None and len(params) > 1 else params[0] if params else None
            kind = self.ev(first.annotation, scratch) if first is not None and first.annotation is not None else UNK
        frame.env[func.value.id] = target.with_attr(DISPATCH, Seq((*regs.items, Seq((kind, fv), "tuple"))))
        return True

    def _iteration(self, body: list[ast.stmt], frame: Frame) -> bool:
        """One iteration of an unrolled loop (exec_block's result): a top-level `if cond: continue` ends it where
        cond holds (`for path in sorted(d.iterdir()): if path.suffix != ".json": continue`); where cond is undecided
        the rest runs on a path of its own, joined with the one that skipped it."""
        start = 0
        for i, st in enumerate(body):
            if not _continues_if(st):
                continue
            if self.exec_block(body[start:i], frame):
                return True
            assert isinstance(st, ast.If)
            t = truth(self.ev(st.test, frame))
            if t is True:
                return False
            if t is None:
                rest = self._branch(frame)
                self._merge(frame, [(frame, False), (rest, self._iteration(body[i + 1:], rest))])
                return False
            start = i + 1
        return self.exec_block(body[start:], frame)

    def _decorator_env(self, s: ast.FunctionDef | ast.AsyncFunctionDef, frame: Frame) -> None:
        """Python evaluates a def's decorators when the def runs: keep the values of the names they read that
        the module binds again after it (`params`/`ids` rebound per data file in torchsparsegradutils'
        test_encoders.py); the decorators are evaluated after the whole top level ran (collect.def_scope).
        Names only mutated later (`DEVICES.append(...)`, `+=`) keep their final value: the decorator holds
        the same object."""
        binds = self.module_binds.get(frame.rel)
        if binds is None:
            tree = self.source.module(frame.rel).tree
            binds = self.module_binds[frame.rel] = last_bindings(tree.body) if tree is not None else {}
        end = s.end_lineno or s.lineno
        names = {n.id for d in s.decorator_list for n in ast.walk(d) if isinstance(n, ast.Name)}
        snap = {k: frame.env[k] for k in sorted(names) if binds.get(k, 0) > end and k in frame.env}
        if snap:
            self.decorator_envs[frame.rel, frame.world, (s.lineno, s.col_offset)] = snap

    def _exec_with(self, s: ast.With | ast.AsyncWith, frame: Frame) -> bool:
        exits: list[Value] = []
        swallows = False  # an in-repo `__exit__` may return True: what its body raised is swallowed
        enter, leave = ("__aenter__", "__aexit__") if isinstance(s, ast.AsyncWith) else ("__enter__", "__exit__")
        for item in s.items:
            cv = self.ev(item.context_expr, frame)
            swallows = swallows or any(isinstance(c, Inst) and isinstance(self.class_lookup(c.cls, leave, frame.world),
                                                                          FuncV) for c in alternatives(cv))
            d = accel_device(cv) if isinstance(cv, DeviceV) else None
            if d:
                frame.add(Finding(GPU, (step(frame.rel, s.lineno, f"with torch.device({d!r}) makes {d} the "
                                                              "default device"),), gpu_count_of(d)))
            entered = self._context_method(cv, enter, [], s, frame)
            if entered is not None:
                # an in-repo context manager class: `with Timer("cuda") as t` runs Timer.__enter__ (`t` is what it
                # returns) and, after the body, __exit__
                exits.append(entered if isinstance(entered, Inst) and entered.cls == getattr(cv, "cls", None) else cv)
            if item.optional_vars is not None:
                # (`with open(path) as f`: an open file is its own context value)
                self.bind(item.optional_vars, entered if entered is not None else cv if isinstance(
                    cv, (DeviceV, Inst, PathV)) else UNK, frame)
        ended = self.exec_block(s.body, frame)
        for cv in reversed(exits):
            with keeping_gpu_findings_only(frame):
                self._context_method(cv, leave, [Const(None)] * 3, s, frame)
        return ended and not swallows

    def _context_method(self, cv: Value, name: str, args: list[Value], s: ast.stmt, frame: Frame) -> Value | None:
        """The value of `cv.<name>(*args)` when cv is an object of an in-repo class that defines it; None
        otherwise (a torch or library context manager, modelled elsewhere)."""
        if not isinstance(cv, Inst) or not isinstance(self.class_lookup(cv.cls, name, frame.world), FuncV):
            return None
        if self.inert.callable_inert(cv.cls, frame.world):
            return None  # (linear_operator's settings: following them cost 57 % more summaries for no finding)
        method = self.getattr_v(cv, name, frame, s)
        return self.call_function_from(method, args, {}, s.lineno, frame) if isinstance(method, FuncV) else None

    def _raises_off_cuda(self, s: ast.If, taken: bool | None, frame: Frame) -> None:
        """`if accelerator != "cuda": raise RuntimeError(...)`: code that raises unless it runs on CUDA is a GPU
        need (issue 12, root cause 7). Decided in this world: the branch taken raises and its condition names
        CUDA; undecided: the branch the condition sends non-CUDA code to raises."""
        decided = taken is not None
        if taken is None:
            taken = off_cuda_branch(s.test)
            if taken is None:
                return
        raise_stmt = raises_error(s.body if taken else s.orelse)
        if raise_stmt is not None and (not decided or "cuda" in ast.unparse(s.test).lower()):
            frame.add(Finding(GPU, (step(frame.rel, raise_stmt.lineno, f"raises unless on CUDA (if "
                                                                      f"{ast.unparse(s.test)[:80]})"),),
                              key=RAISES_OFF_CUDA))

    def _off_cuda_block(self, s: ast.If, body: list[ast.stmt], frame: Frame, off: bool,
                        guarded: bool = False, needs: frozenset[str] | None = None) -> bool:
        """Run one branch of `s`; `off`: the branch that non-CUDA code takes by a device test (`device.type !=
        "cuda"`, `not x.is_cuda`; not `torch.cuda.is_available()`, which the worlds decide). A skip reached
        there fires because the device is not CUDA, in every world: the test body only runs on CUDA, a GPU
        need like the raise of `_raises_off_cuda`. `guarded`: a `cuda_guard`
        branch: its GPU findings are kept only as notes (`dropping_gpu_findings`). `needs`: a branch taken only
        for objects these packages make (`guards.foreign_class_test`)."""
        def run(body: list[ast.stmt], frame: Frame) -> bool:
            if guarded:
                env, returned = dict(frame.env), len(frame.returns)
                with dropping_gpu_findings(frame, note=guard_note(frame.rel, s.test)):
                    ended = self.exec_block(body, frame)
                # a device made only where an existing device is CUDA (`if resolved.type == "cuda": return
                # f"cuda:{torch.cuda.current_device()}"`, sbi's canonical_device) names that existing device
                for k, v in frame.env.items():
                    if v is not env.get(k) and _made_device(v):
                        frame.env[k] = EXISTING_DEVICE
                frame.returns[returned:] = [EXISTING_DEVICE if _made_device(r) else r
                                            for r in frame.returns[returned:]]
                return ended
            if needs:
                with requiring_packages(frame, needs, foreign_class_note(frame.rel, s.test, needs)):
                    return self.exec_block(body, frame)
            return self.exec_block(body, frame)

        if not off:
            return run(body, frame)
        outer, frame.findings = frame.findings, []
        try:
            ended = run(body, frame)
        finally:
            inner, frame.findings = frame.findings, outer
        for f in inner:
            frame.add(f)
        skip = next((f for f in inner if f.kind == SKIP), None)
        if skip is not None:
            frame.add(Finding(GPU, (step(frame.rel, s.lineno, f"skips unless on CUDA (if "
                                                            f"{ast.unparse(s.test)[:80]})"), *skip.steps),
                              key=SKIPS_OFF_CUDA))
        return ended

    def _parameterized_class(self, cv: ClassV, args: list[Value], kwargs: dict[str, Value], d: ast.expr,
                             frame: Frame) -> None:
        """`@parameterized_class(attrs, input_values, class_name_func=...)` with these evaluated arguments: binds
        `<Name>_<i>[_<suffix>]` classes carrying the attributes (names as the package's default_class_name_func
        makes them)."""
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
            gen = ClassV(cv.rel, cv.pos, name, cv.captured)
            self.class_overrides[gen] = params
            frame.env[name] = gen

    def make_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda, frame: Frame) -> FuncV:
        pos = (node.lineno, node.col_offset)
        if isinstance(node, ast.Lambda):
            self.source.module(frame.rel).defs.setdefault(pos, node)  # lambdas are indexed when met
        name = getattr(node, "name", "<lambda>")
        mutated = self.outer_mutations.get((frame.rel, pos))
        if mutated is None:
            mutated = self.outer_mutations[frame.rel, pos] = mutated_outer_names(node)
        if frame.module_env is not None and isinstance(node, ast.FunctionDef):
            cells = self.cell_names.get((frame.rel, pos))
            if cells is None:
                outer = enclosing_function(self.source.module(frame.rel).defs, node)
                cells = self.cell_names[frame.rel, pos] = shared_cells(outer, node) if outer else frozenset()
            mutated -= cells  # followed call by call instead (CallsMixin.call_function_from)
        for n in mutated:
            cur = frame.env.get(n)
            if isinstance(cur, (Seq, DictV)) and not cur.origin:  # (a registry's changes are followed: registries.py)
                # `def register(fn): CASES.append(fn)`: calls change the container here, which values (immutable)
                # cannot follow; it is unknown from now on rather than stale (an empty list would be no cases)
                frame.env[n] = UNK
        captured = self.closure_values(node, frame)
        if frame.module_env is not None or isinstance(node, ast.Lambda):
            captured = tuple(sorted((*captured, *self._bound_defaults(node, frame))))
        return FuncV(frame.rel, pos, name, captured=captured, cls=frame.cls)

    def _bound_defaults(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda,
                        frame: Frame) -> list[tuple[str, Value]]:
        """Defaults that name a variable, as Python binds them: when the def or lambda runs (`lambda self, d=dev:`
        in a loop keeps each `dev`), under DEFAULT_PREFIX + the parameter's name (CallsMixin._run_function reads
        them there). A module-level def's defaults are read from the module when called (the same value unless
        the module rebinds the name later)."""
        a = node.args
        params = [p.arg for p in (*a.posonlyargs, *a.args)]
        pairs = [*zip(params[len(params) - len(a.defaults):], a.defaults, strict=True),
                 *((p.arg, d) for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d is not None)]
        out = []
        for p, d in pairs:
            if isinstance(d, ast.Name):
                v = self.ev(d, frame)
                if hashable(v):
                    out.append((DEFAULT_PREFIX + p, v))
        return out

    def closure_values(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef,
                       frame: Frame) -> tuple[tuple[str, Value], ...]:
        """What a def or class inside a function captures: the enclosing locals its code reads as free variables
        (values only, hashable); nothing at module level, where names are looked up in the module. Only free
        names: a method's own `self` must not capture the enclosing method's `self`, which would make the class
        one per caller (gpytorch builds model classes inside test methods)."""
        if frame.module_env is None:
            return ()
        key = (frame.rel, (node.lineno, node.col_offset))
        names = self.free_names.get(key)
        if names is None:
            names = self.free_names[key] = free_names(node)
        captured = dict(frame.captured)
        captured.update(frame.env)
        return tuple(sorted((k, v) for k, v in captured.items() if k in names and hashable(v)))

    def _nvml_fails(self, s: ast.Try, frame: Frame) -> tuple[int, ast.ExceptHandler] | None:
        """A `try` whose body reaches a call of NVIDIA's management library (interp_external.NVML_FUNCTIONS:
        `pynvml.nvmlInit()`), with a handler for what it raises without a driver (_fails_without_driver)."""
        return self._fails_without_driver(s, frame, _NVML_ERRORS,
                                          lambda call, callee: callee.path.startswith(NVML_FUNCTIONS))

    def _nvidia_smi_fails(self, s: ast.Try, frame: Frame) -> tuple[int, ast.ExceptHandler] | None:
        """A `try` whose body runs `nvidia-smi` in a subprocess in a way that fails without an NVIDIA driver
        (interp_external.runs_nvidia_smi: not installed, or a non-zero exit it checks), with a handler for that
        (`except (OSError, subprocess.CalledProcessError): return 0`; _fails_without_driver)."""
        def runs(call: ast.Call, callee: Ext) -> bool:
            if not call.args or any(k.arg is None for k in call.keywords) or not callee.path.startswith(
                    "subprocess."):
                return False
            kwargs = {str(k.arg): self.ev(k.value, frame) for k in call.keywords if k.arg in ("check", "shell")}
            return runs_nvidia_smi(callee.path, [self.ev(call.args[0], frame)], kwargs)
        return self._fails_without_driver(s, frame, _PROCESS_ERRORS, runs)

    def _fails_without_driver(self, s: ast.Try, frame: Frame, errors: frozenset[str],
                              fails: Callable[[ast.Call, Ext], bool]) -> tuple[int, ast.ExceptHandler] | None:
        """(index in the body, handler) when a `try`'s body, a run of plain statements, reaches a call that `fails`
        without an NVIDIA driver and a handler catches one of `errors`, in the world without GPUs (a read of the
        world: with GPUs the call succeeds and the body goes on)."""
        handler = next((h for h in s.handlers if h.type is None or any(
            _last_name(t) in errors for t in (h.type.elts if isinstance(h.type, ast.Tuple) else [h.type]))), None)
        if handler is None:
            return None
        for i, st in enumerate(s.body):
            call = raising_call(st)
            if call is None:
                return None
            callee = self.ev(call.func, frame) if isinstance(call.func, (ast.Name, ast.Attribute)) else None
            if isinstance(callee, Ext) and fails(call, callee):
                self.world_reads += 1
                return (i, handler) if frame.world == 0 else None
        return None

    def _module_lookup_fails(self, s: ast.Try, frame: Frame) -> tuple[int, ast.ExceptHandler] | None:
        """(0, handler) for `try: return super().__getattr__(name)` / `except AttributeError:` at the start of an
        in-repo `__getattr__` whose class is a torch module (peft's PeftModel forwarding to its base model): the
        hook runs for a name the analysis knows the object lacks (ExpressionsMixin.attribute_hook), so torch's
        Module.__getattr__, which finds only registered children and parameters, raises."""
        if frame.cls is None or not s.body or not isinstance(s.body[0], (ast.Return, ast.Assign, ast.Expr)):
            return None
        call = s.body[0].value
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "__getattr__"
                and isinstance(call.func.value, ast.Call) and isinstance(call.func.value.func, ast.Name)
                and call.func.value.func.id == "super"):
            return None
        handler = next((h for h in s.handlers if h.type is None or any(
            _last_name(t) in ("AttributeError", "Exception", "BaseException")
            for t in (h.type.elts if isinstance(h.type, ast.Tuple) else [h.type]))), None)
        if handler is None or not isinstance(self.super_lookup(frame.cls, "__getattr__", frame.world), Ext) or \
                not self.derives_from_torch_module(frame.cls, frame.world):
            return None
        return 0, handler

    def _missing_import(self, s: ast.Try, frame: Frame) -> tuple[int, ast.ExceptHandler] | None:
        """(index in the body, handler) when a `try` whose body starts with imports imports a module that is not
        installed, and a handler catches the ImportError (optional_imports.py): decided by the environment the
        classifier runs in, in every world but for a CUDA build's module in a world with GPUs
        (optional_imports.cuda_build)."""
        handler = next((h for h in s.handlers if catches_import_error(h)), None)
        if handler is None:
            return None
        for i, st in enumerate(s.body):
            if not isinstance(st, (ast.Import, ast.ImportFrom)):
                call = raising_call(st)
                return (i, handler) if call is not None and self._call_imports_missing(call, frame) else None
            if self._imports_missing(st, frame.rel, frame.rel, frame.world):
                return i, handler
        return None

    def _imports_missing(self, st: ast.Import | ast.ImportFrom, rel: str, reader: str, world: int,
                         depth: int = 0) -> bool:
        """Whether an import statement in module `rel` names an external module that is not installed (in a world
        with GPUs, one that is not a CUDA build's: a read of the world when there is one), or a module the analysis
        reads whose top level does so unguarded, up to MAX_IMPORT_CHAIN modules deep (`try: from
        pykeen.contrib.lightning import lit_module_resolver` / `except ImportError:`, with `import
        pytorch_lightning` on that module's top level and the package not installed)."""
        if any(self.source.external_presence(dotted, rel, reader) == ABSENT and self.absent_in_world(dotted, world)
               for dotted, _ in imported_tops(st)):
            return True
        if depth >= MAX_IMPORT_CHAIN:
            return False
        loaded = [self.source.resolve_import(a.name, rel, 0, a.name) for a in st.names] if isinstance(
            st, ast.Import) else [self.source.resolve_import(st.module or "", rel, st.level, st.module or "")]
        for target in loaded:
            tree = self.source.module(target).tree if target else None
            if tree is not None and any(isinstance(t, (ast.Import, ast.ImportFrom)) and self._imports_missing(
                    t, target, reader, world, depth + 1) for t in tree.body):
                return True
        return False

    def _call_imports_missing(self, call: ast.Call, frame: Frame) -> bool:
        """Whether `call` certainly raises ImportError: every function it may run (a class: its `__init__`)
        starts by importing a module that is not installed (optional_imports.leading_imports)."""
        callee = self.ev(call.func, frame)
        alts = callee.alts if isinstance(callee, OneOf) else (callee,)
        for c in alts:
            fn = self.class_lookup(c, "__init__", frame.world) if isinstance(c, ClassV) else c
            if not isinstance(fn, FuncV):
                return False
            node = self.source.module(fn.rel).defs.get(fn.pos)
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or not any(
                    self._imports_missing(st, fn.rel, frame.rel, frame.world) for st in leading_imports(node)):
                return False
        return True

    def do_import(self, s: ast.Import | ast.ImportFrom, frame: Frame) -> None:
        rel = frame.rel
        if isinstance(s, ast.Import):
            for a in s.names:
                target = self.source.resolve_import(a.name, rel, 0, "")
                if not target and frame.module_env is not None:
                    reached_package(a.name, s.lineno, frame)
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
        level, dotted = s.level, s.module or ""
        if level and is_installed(rel):  # a relative import in an installed module names an installed module
            level, dotted = 0, absolute_name(rel, level, dotted)
        mod_rel = self.source.resolve_import(dotted, rel, level, dotted)
        in_repo = mod_rel is not None or (level > 0) or (dotted and self.source.is_package_dir(dotted))
        if not in_repo and frame.module_env is not None:
            # an import inside a function announces a use; a module-level one makes no object by itself (a call
            # into the package does: interp_external.call_ext)
            reached_package(dotted, s.lineno, frame)
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
                sub = self.source.resolve_import(f"{dotted}.{a.name}" if dotted else a.name, rel, level,
                                                 f"{dotted}.{a.name}" if dotted else a.name)
                if mod_rel and mod_rel != sub:
                    v = self.module_attr(mod_rel, a.name, frame.world)
                    if isinstance(v, Unresolved) and sub:
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
            if f.kind in (GPU, SKIP, IMPORTS):
                frame.add(f.prefixed(step(frame.rel, line, f"imports {target}")))

    def bind(self, target: ast.expr, v: Value, frame: Frame) -> None:
        if isinstance(target, ast.Name):
            if frame.module_env is None and (type(v) is DictV or type(v) is Seq and v.kind == "list") and \
                    target.id in self.module_registries(frame.rel):
                # `MODELS = {}`, `CASES = []` (registries.py)
                origin = registries.origin_of(frame.rel, target.id)
                if v.origin != origin:  # (the registry itself changed in place keeps what its view holds)
                    v = DictV(v.items, origin) if isinstance(v, DictV) else Seq(v.items, "list", origin)
            elif frame.module_env is None and isinstance(v, Unresolved) and target.id in self.module_registries(
                    frame.rel) and target.id in registries.defaultdict_names(self.source.module(frame.rel).tree):
                v = DictV((), registries.origin_of(frame.rel, target.id))  # `NESTED = defaultdict(dict)`: empty
            elif frame.module_env is None and isinstance(v, Inst) and v.attrs:
                v = self._registry_object(v, target.id, frame)
            frame.env[target.id] = v
            if target.id in frame.empty_defaults:
                frame.empty_defaults -= {target.id}  # no longer the parameter's own `{}` default
        elif isinstance(target, (ast.Tuple, ast.List)):
            items = _unpacked(v, len(target.elts)) if isinstance(v, Seq) else \
                _unpacked_choice(v, len(target.elts)) if isinstance(v, OneOf) else None
            for i, t in enumerate(target.elts):
                if isinstance(t, ast.Starred):
                    self.bind(t.value, UNK, frame)
                else:
                    self.bind(t, items[i] if items else UNK, frame)
        elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and isinstance(
                mod := self.lookup(target.value.id, frame), ModV) and mod.rel and patch_module_attr(
                    frame, mod.rel, target.attr, v):
            self.stores_seen = True  # `runtime.DEFAULT_DEVICE = "cuda"` in a test (test_state.py)
        elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Attribute) and \
                target.value.attr in ("cls", "instance") and isinstance(target.value.value, ast.Name) and \
                isinstance(req := frame.env.get(target.value.value.id), RequestV):
            # `request.cls.device = ...` in a fixture: an attribute of the test's object (CallResult.cls_attrs)
            frame.env[target.value.value.id] = req.with_cls_attr(target.attr, bounded(v) if hashable(v) else UNK)
        elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and frame.module_env is None \
                and isinstance(cls := frame.env.get(target.value.id), ClassV) and cls.rel == frame.rel:
            # `setattr(TestOps, f"test_zeros_{dev}", make(dev))`, `Job.run = _run` at the top level of the module that
            # defines the class: its attribute from then on (a method pytest collects, a method calls find)
            self.set_class_attribute(cls, target.attr, v, frame.world)
        elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and (target.attr.startswith(
                "test") or isinstance(v, FuncV)) and isinstance(cls := self.lookup(target.value.id, frame), ClassV):
            # the same in a function the module calls at import (`def _append(): ... setattr(TestX, fn.__name__, fn)`)
            # or in a class decorator (`setattr(cls, f"test_{dev}", ...)`, `cls.run = _run`): a test or a method,
            # part of the call's summary, given to the class when the call returns to the top level of the module
            # that defines it (add_generated_test)
            self.add_generated_test(Seq((cls, Const(target.attr)), "tuple"), bounded(v) if hashable(v) else UNK,
                                    frame)
        elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
            owner = target.value.id
            cur = frame.env.get(owner)
            if isinstance(cur, Inst) and hashable(v):
                after = self.set_property(cur, target.attr, bounded(v), target.lineno, frame)  # a property's setter
                frame.env[owner] = new = bounded(after if after is not None else cur.with_attr(target.attr, bounded(v)))
                if namespace_key(cur):
                    self._sync_stores(new, frame)
            elif isinstance(cur, FuncV) and cur.bound is None and hashable(v):
                # `fn.device = torch.device(d)` / `setattr(fn, "device", ...)` in a decorator: read back by
                # `fn.device` and `hasattr(fn, "device")` (a bound method cannot take attributes)
                frame.env[owner] = bounded(cur.with_attr(target.attr, bounded(v)))
            elif isinstance(cur, NNModV) and module_kind(v) is not False:
                # `layer.extra = nn.ReLU()` registers a child torch prints: the module's text is no longer known
                frame.env[owner] = nn_modules.unprintable(cur)
            elif cur is not None and is_objects(cur) and hashable(v):
                # `self` after a branch that set its attributes differently on each path (stable-baselines3's
                # `if isinstance(space, Dict): self.buffer_class = A else: ... = B`): one object per path, each
                # keeping its attributes together; the write goes to each
                frame.env[owner] = new = bounded(join_all([a.with_attr(target.attr, bounded(v))
                                                           for a in alternatives(cur) if isinstance(a, Inst)]))
                self._sync_stores(new, frame)
        elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Attribute) and \
                (chain := _attribute_chain(target)) is not None and isinstance(frame.env.get(chain[0]), Inst) \
                and hashable(v):
            # `cfg.trainer.accelerator = "cpu"`, `self.model.device = d`: the objects along the path rebuilt with it
            # (an object on the path the analysis does not know: the write is not seen, as before)
            got = _with_path(frame.env[chain[0]], chain[1:], bounded(v))
            if got is not None:
                frame.env[chain[0]] = bounded(got)
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and omegaconf_model.is_config(
                frame.env.get(target.value.id)) and isinstance(key := self.ev(target.slice, frame), Const) and \
                isinstance(key.value, str) and hashable(v):
            cfg = frame.env[target.value.id]
            assert isinstance(cfg, Inst)
            frame.env[target.value.id] = bounded(cfg.with_attr(key.value, bounded(v)))  # `cfg["device"] = "cpu"`
        elif isinstance(target, ast.Subscript) and frame.module_env is None and isinstance(target.value, ast.Call) \
                and isinstance(target.value.func, ast.Name) and target.value.func.id == "globals" and \
                not target.value.args and isinstance(key := self.ev(target.slice, frame), Const) and \
                isinstance(key.value, str):
            frame.env[key.value] = v  # `globals()[f"test_{dev}"] = make(dev)` at a module's top level
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Subscript) and isinstance(
                reg := self.registry_target(target.value.value, frame), DictV):
            # `NESTED[kind][name] = fn`: the registry's entry for `kind` with that entry added (a defaultdict's
            # missing entry is empty)
            outer = self.ev(target.value.slice, frame)
            entry = self.registry_entry(reg, outer, frame.world)
            entry = DictV(()) if entry is None else entry
            new = DictV(dict_items([*entry.items, (self.ev(target.slice, frame), v)])) if isinstance(
                entry, DictV) else UNK
            self.store_into_registry(target.value.value, reg, [(outer, new)], frame)
        elif isinstance(target, ast.Subscript) and isinstance(holder := _held(target.value, frame), Inst) and \
                isinstance(self.class_lookup(holder.cls, "__setitem__", frame.world), FuncV):
            # `buffer[key] = x` where the object's in-repo class defines `__setitem__` (a store that moves what it
            # is given): the method, called as Python calls it
            self.call_own_method(holder, "__setitem__", [self.ev(target.slice, frame), v], target, frame)
        elif isinstance(target, ast.Subscript) and (reg := self.registry_target(target.value, frame)):
            # `MODELS[name] = cls` in a function, `registry.MODELS["x"] = X` at another module's top level
            self.store_into_registry(target.value, reg, [(self.ev(target.slice, frame), v)], frame)
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) \
                and isinstance(frame.env.get(target.value.id), DictV):
            # `PROBLEMS[f"{name}-regression"] = (cls, 1)` in a module-level loop: the dict with that entry. With a key
            # the analysis does not know exactly (`layer_map[idx] = device` in a loop), one more entry under that
            # key, which any lookup may select (values.exact_keys); a registry keeps its identity (registries.py)
            d = frame.env[target.value.id]
            assert isinstance(d, DictV)
            key = self.ev(target.slice, frame)
            frame.env[target.value.id] = bounded(DictV(dict_items([*d.items, (key, bounded(v))]), d.origin)) \
                if hashable(v) else UNK
        elif isinstance(target, ast.Subscript) and isinstance(held := _held(target.value, frame), NNModV) and \
                held.name in MODULE_CONTAINERS:
            # `self.heads[name] = Head()`, `self.layers[0] = m`: the container with that child (the holder rebound:
            # values are immutable). A key the analysis does not know leaves a name's container unprintable and an
            # attribute's as it was (the children it knows, whose code still runs), as before this rule
            after = nn_modules.grown(held, "__setitem__", [self.ev(target.slice, frame), v]) if hashable(v) else None
            if after is not None or isinstance(target.value, ast.Name):
                self.bind(target.value, after if after is not None else nn_modules.unprintable(held), frame)
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and nn_modules.is_module(
                frame.env.get(target.value.id)):
            frame.env[target.value.id] = nn_modules.unprintable(frame.env[target.value.id])  # `seq[0] = layer`
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and isinstance(
                frame.env.get(target.value.id), Seq):
            frame.env[target.value.id] = UNK  # `xs[i] = v`: its contents are no longer known
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Attribute) and self.ev(
                target.value, frame) == Ext("os.environ"):
            # `os.environ["MYLIB_DEVICE"] = "cuda"`: what library code reads from here on (test_state.py)
            if set_environ(frame, self.ev(target.slice, frame), bounded(v) if hashable(v) else UNK):
                self.stores_seen = True
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Attribute) and isinstance(
                target.value.value, ast.Name) and target.value.value.id == frame.self_name and isinstance(
                    root := frame.env.get(target.value.value.id), Inst) and (isinstance(
                        held := root.attr(target.value.attr), DictV) or isinstance(held, Seq) and held.kind == "list"):
            # `self.lookup_dict[key] = cls` in a method (an object filling a table of its own: class_resolver's
            # `register`): the object rebuilt with the dict holding that entry (a key the analysis does not know is one
            # more entry any lookup may select, values.exact_keys); a list so written is no longer known. The write
            # was dropped, and a table filled in a loop over values the analysis does not know read as empty. A
            # table of another object (`self.interleaver.envoys[id(m)] = self`) is left as before
            new = extended(held, [(self.ev(target.slice, frame), bounded(v))]) if isinstance(held, DictV) and hashable(
                v) else UNK
            after = bounded(root.with_attr(target.value.attr, new))
            if isinstance(after, Unresolved):  # past the size bounds: the table unknown, the object kept
                after = bounded(root.with_attr(target.value.attr, UNK))
            if not isinstance(after, Unresolved):
                frame.env[target.value.value.id] = after
                if namespace_key(root):
                    self._sync_stores(after, frame)
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Attribute) and hashable(v):
            # `PartialState._shared_state["distributed_type"] = ...`: a write into a shared namespace
            key = self.ev(target.slice, frame)
            if isinstance(key, Const) and isinstance(key.value, str):
                name, item = key.value, bounded(v)
                self._update_namespace(target.value, lambda items: (*(kv for kv in items if kv[0] != name),
                                                                    (name, item)), frame)

    def replace_at_path(self, given: ast.Attribute, before: Value, after: Value, frame: Frame) -> None:
        """`attach(self.model)`, `attach(holder.inner)` where the call changed that object in place
        (CallResult.args_after): the objects along the path rebuilt with it, when the path holds `before` as an
        attribute of objects the analysis follows (a property or an object it does not know: left as it was)."""
        chain = _attribute_chain(given)
        root = frame.env.get(chain[0]) if chain is not None else None
        if chain is None or not isinstance(root, Inst) or _at_path(root, chain[1:]) != before:
            return
        got = _with_path(root, chain[1:], after)
        if got is not None:
            frame.env[chain[0]] = bounded(got)

    def init_subclass(self, cv: ClassV, s: ast.ClassDef, frame: Frame) -> None:
        """A class statement at a module's top level whose base defines `__init_subclass__` that fills a registry
        (`Base.registry[cls.__name__.lower()] = cls`): Python runs it on the new class, with the statement's
        keywords; what it stores is kept (registries.py), what else it finds is the class body's business."""
        for base in self.mro(cv, frame.world)[1:]:
            if isinstance(base, ClassV) and base.rel in self.subclass_registrars:
                hook = self.class_body(base, frame.world).get("__init_subclass__")
                if isinstance(hook, FuncV):
                    scratch = Frame(frame.rel, frame.world, frame.env, None, [])
                    kwargs = {k.arg: self.ev(k.value, scratch) for k in s.keywords if k.arg and k.arg != "metaclass"}
                    self.call_function_from(FuncV(hook.rel, hook.pos, hook.name, bound=cv, captured=hook.captured,
                                                  cls=hook.cls), [], kwargs, s.lineno, scratch)
                    return

    def _registry_object(self, obj: Inst, name: str, frame: Frame) -> Inst:
        """`MODELS = Registry("models")` at a module's top level, where Registry's methods store into a dict of
        theirs (`self._module_dict[key] = cls`): that dict is a registry of this module (registries.py)."""
        filled: set[str] = set()
        for c in self.mro(obj.cls, frame.world):
            if isinstance(c, ClassV):
                got = self.self_filled.get(c)
                if got is None:
                    node = self.class_node(c)
                    got = self.self_filled[c] = registries.self_filled_attributes(node) if node else frozenset()
                filled |= got
        for attr in sorted(filled):
            d = obj.attr(attr)
            if type(d) is DictV and d.origin is None:
                obj = obj.with_attr(attr, DictV(d.items, registries.origin_of(frame.rel, f"{name}.{attr}")))
        return obj

    def store_into_registry(self, e: ast.expr, reg: DictV | Seq, pairs: list[tuple[Value, Value]],
                            frame: Frame) -> None:
        """`e[key] = value` for each pair (a list's items: `e.append(value)`, the key unused), where `e` is the
        registry `reg` (registry_target): kept at a module's top level, recorded for the call's summary in a function
        (registries.py); and what the code reads back from `e` afterwards (`cache[key] = v; return cache[key]`,
        `self._cache[key] = v` likewise)."""
        assert reg.origin is not None
        stored = [(bounded(k), bounded(v) if hashable(v) else UNK) for k, v in pairs]
        for key, item in stored:
            if frame.module_env is None:
                self.register(reg.origin, key, item, frame.rel, frame.world)
            else:
                frame.registrations.append((reg.origin, key, item))
        filled = bounded(DictV(dict_items([*reg.items, *stored]), reg.origin) if isinstance(reg, DictV) else
                         Seq((*reg.items, *(v for _, v in stored)), "list", reg.origin))
        if isinstance(e, ast.Name):
            frame.env[e.id] = filled
        elif isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and isinstance(
                owner := frame.env.get(e.value.id), Inst):
            frame.env[e.value.id] = bounded(owner.with_attr(e.attr, filled))

    def registry_entry(self, reg: DictV, key: Value, world: int) -> Value | None:
        """The entry of a dict registry under a definite key, as the registry is now (registry_view); None when it
        holds none or the key is not definite."""
        view = self.registry_view(reg, world)
        if not isinstance(view, DictV) or not decided_key(key):
            return None
        return next((v for k, v in view.items if k == key), None)

    def registry_target(self, e: ast.expr, frame: Frame) -> DictV | Seq | None:
        """The registry (registries.py) that `e[...] = v` stores into, as bound (without the entries stored since: a
        store needs only its identity): a module-level registry named from a function (`MODELS`) or from another
        module (`registry.MODELS`, or imported by name), a class's (`Base.registry`, `cls.registry`), an object's
        own (`self._module_dict`, never a property's). At its own module's top level the name is that module's
        variable (bind's dict branch)."""
        if isinstance(e, ast.Name):
            got = frame.env[e.id] if e.id in frame.env else frame.captured[e.id] if e.id in frame.captured else \
                self.module_state(frame.rel, frame.world).env.get(e.id)
        elif isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and isinstance(
                owner := self.lookup(e.value.id, frame), (ModV, ClassV, Inst)):
            got = self.module_state(owner.rel, frame.world).env.get(e.attr) if isinstance(owner, ModV) and \
                owner.rel else self.getattr_v(owner, e.attr, frame, e) if isinstance(owner, ClassV) else \
                owner.attr(e.attr) if isinstance(owner, Inst) else None
        else:
            return None
        if not isinstance(got, (DictV, Seq)) or got.origin in (None, PARAMETER_VALUE) or \
                frame.module_env is None and isinstance(
                e, ast.Name) and registries.origin_module(got.origin) == frame.rel:
            return None
        return got

    def _refine(self, test: ast.expr, frame: Frame) -> tuple[str, Value | None, Value | None] | None:
        """A test the analysis cannot decide, while `self` is a choice of objects (one per earlier path), a
        shared namespace a choice of contents, or a local it names a choice of values: the test evaluated with
        each alternative alone. Returns (the name, the alternatives for which it may be true, those for which it
        may be false; None: none), or None when no alternative decides it."""
        names = []
        if frame.self_name and isinstance(frame.env.get(frame.self_name), OneOf) and is_objects(
                frame.env[frame.self_name]):
            names.append(frame.self_name)
        if self.stores_seen:
            names.extend(k for k, v in frame.env.items() if k.startswith(STORE) and isinstance(v, OneOf))
        # a local that is one of several values (`fitness_device` None on one path, a device on another):
        # `if x is None:`, `if hasattr(fn, "device"):` narrow it in each branch, as a type checker does
        names.extend(dict.fromkeys(n for n in _narrowed_names(test) if n not in names
                                   and isinstance(frame.env.get(n), OneOf)))
        for var in names:
            alts = alternatives(frame.env[var])
            yes: list[Value] = []
            no: list[Value] = []
            for alt in alts:
                scratch = self._branch(frame)
                scratch.findings = []  # the test's findings were recorded when it was evaluated as a whole
                scratch.env[var] = alt
                t = truth(self.ev(test, scratch))
                if t is not False:
                    yes.append(alt)
                if t is not True:
                    no.append(alt)
            if len(yes) < len(alts) or len(no) < len(alts):
                return var, join_all(yes) if yes else None, join_all(no) if no else None
        return None

    # -- shared namespaces (the Borg idiom) -----------------------------------------------------------
    def _adopt_namespace(self, target: ast.Attribute, src: ast.expr, v: Value, frame: Frame) -> bool:
        """`self.__dict__ = self._shared_state` (or any dict of known keys): the object's attributes become the
        dict's items; when the dict is a shared namespace (interp_classes.store_key) the object keeps its key,
        so that later writes go to the namespace too. False: not an object, or a dict the analysis cannot list."""
        if not isinstance(target.value, ast.Name):
            return False
        owner = target.value.id
        cur = frame.env.get(owner)
        dicts = dict_alternatives(v)
        if not is_objects(cur) or dicts is None or cur is None:
            return False
        key = self._store_of(src, frame)
        out: list[Value] = []
        for a in alternatives(cur):
            if isinstance(a, Inst):
                for items in dicts:
                    out.append(_with_attrs(a, items, key))
        frame.env[owner] = new = bounded(join_all(out))
        if key is not None:
            self.stores_seen = True
            self._sync_stores(new, frame)
        return True

    def _store_of(self, e: ast.expr, frame: Frame) -> str | None:
        """The shared namespace `<name>.<attr>` is (`self._shared_state`, `PartialState._shared_state`)."""
        if not (isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name)):
            return None
        base = self.lookup(e.value.id, frame)
        keys = set()
        for a in alternatives(base):
            if isinstance(a, ClassV):
                keys.add(self.store_key(a, e.attr, frame.world))
            elif isinstance(a, Inst) and a.attr(e.attr) is None:
                keys.add(self.store_key(a.cls, e.attr, frame.world))
            else:
                return None
        return keys.pop() if len(keys) == 1 else None

    def _sync_stores(self, v: Value, frame: Frame) -> None:
        """After a write to objects sharing a namespace: the namespace holds their attributes."""
        by_key: dict[str, list[Value]] = {}
        for a in alternatives(v):
            k = namespace_key(a)
            if k is not None and isinstance(a, Inst):
                by_key.setdefault(k, []).append(DictV(tuple((Const(n), x) for n, x in own_attrs(a))))
        for k, dicts in by_key.items():
            frame.env[k] = bounded(join_all(dicts))

    def namespace_call(self, holder: ast.Attribute, method: str, args: list[Value], frame: Frame) -> bool:
        """`obj.__dict__.update(d)` / `.clear()`, `Cls._shared_state.update(d)` / `.clear()`: True when
        `holder` is an object's namespace or a shared one, updated here."""
        if method == "clear" and not args:
            return self._update_namespace(holder, lambda items: (), frame)
        if method == "update" and len(args) == 1:
            dicts = dict_alternatives(args[0])
            if dicts is None:
                return False
            if len(dicts) == 1:
                new = dict(dicts[0])
                return self._update_namespace(holder, lambda items: (
                    *(kv for kv in items if kv[0] not in new), *new.items()), frame)
            # a choice of dicts: one namespace per choice
            return self._update_namespace(holder, None, frame, dicts)
        return False

    def _update_namespace(self, holder: ast.Attribute, fn: Callable[[tuple[tuple[str, Value], ...]],
                                                                    tuple[tuple[str, Value], ...]] | None,
                          frame: Frame, updates: list[tuple[tuple[str, Value], ...]] | None = None) -> bool:
        if not isinstance(holder.value, ast.Name):
            return False

        def apply(items: tuple[tuple[str, Value], ...]) -> list[tuple[tuple[str, Value], ...]]:
            if fn is not None:
                return [fn(items)]
            out = []
            for upd in updates or ():
                new = dict(upd)
                out.append((*(kv for kv in items if kv[0] not in new), *new.items()))
            return out

        name = holder.value.id
        cur = frame.env.get(name)
        key = None if holder.attr == "__dict__" else self._store_of(holder, frame)
        if is_objects(cur) and cur is not None and (holder.attr == "__dict__" or key is not None and all(
                namespace_key(a) == key for a in alternatives(cur))):
            # the object's own namespace (shared or not)
            out: list[Value] = []
            for a in alternatives(cur):
                if isinstance(a, Inst):
                    out.extend(_with_attrs(a, items, namespace_key(a)) for items in apply(own_attrs(a)))
            frame.env[name] = new_v = bounded(join_all(out))
            self._sync_stores(new_v, frame)
            return True
        if key is None:
            return False
        dicts = dict_alternatives(frame.env.get(key, EMPTY_DICT))
        if dicts is None:
            return False
        self.stores_seen = True
        frame.env[key] = bounded(join_all([DictV(tuple((Const(k), x) for k, x in sorted(items, key=lambda kv: kv[0])))
                                           for d in dicts for items in apply(d)]))
        return True


def _with_attrs(a: Inst, items: tuple[tuple[str, Value], ...], key: str | None) -> Inst:
    """An instance of a's class with exactly these attributes (and the shared namespace `key`, if any)."""
    attrs = sorted(((k, bounded(x)) for k, x in items if k != NAMESPACE and hashable(x)), key=lambda kv: kv[0])
    return Inst(a.cls, (((NAMESPACE, Const(key)),) if key is not None else ()) + tuple(attrs))


def _unpacked(v: Seq, n: int) -> tuple[Value, ...] | None:
    """The n values `a, b = v` binds, or None when they are not known. A set holds equal elements once: `(device,) =
    {t.device for t in tensors}` over tensors on one device is that device (when its distinct elements are more than
    n, Python raises; fewer elements than n without duplicates cannot be unpacked either)."""
    if len(v.items) == n:
        return v.items
    if v.kind != "set" or not all(hashable(i) for i in v.items):
        return None
    unique = tuple(dict.fromkeys(v.items))
    if len(unique) != n:
        return None
    return unique if n == 1 else (join_all(list(unique)),) * n


_NARROWING_CALLS = frozenset({"isinstance", "hasattr", "callable"})


def _narrowed_names(test: ast.expr) -> list[str]:
    """The locals a test narrows, as a type checker reads it: `x`, `not x`, `x is None`, `x == "gpu"`,
    `x.type == torch.device("cuda").type`, `isinstance(x, str)`, `hasattr(fn, "device")`, and `and`/`or` of those
    (a name, or an attribute path from it, compared with anything). Other tests (`if self.check(x):`, calls into
    code) are not evaluated once per alternative: e3nn's suite took 20 % longer for no label."""
    if isinstance(test, ast.BoolOp):
        return [n for v in test.values for n in _narrowed_names(v)]
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _narrowed_names(test.operand)
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id in _NARROWING_CALLS \
            and test.args and not test.keywords:
        return _narrowed_names(test.args[0])
    if isinstance(test, ast.Compare):
        return [r for r in map(_path_root, [test.left, *test.comparators]) if r is not None]
    root = _path_root(test)
    return [root] if root is not None else []


def _path_root(e: ast.expr) -> str | None:
    """`x` of `x`, `x.a.b`; None for anything else."""
    while isinstance(e, ast.Attribute):
        e = e.value
    return e.id if isinstance(e, ast.Name) else None


def _unpacked_choice(v: OneOf, n: int) -> tuple[Value, ...] | None:
    """`name, cfg = item` where item is one of several sequences (`for name, cfg in [("a", {}), ("b", {...})]`
    iterates over the join of the rows): each name is one of the values at its position."""
    rows = [_unpacked(a, n) if isinstance(a, Seq) else None for a in alternatives(v)]
    if any(r is None for r in rows):
        return None
    return tuple(join_all([r[i] for r in rows if r is not None]) for i in range(n))


def _grows_containers(loop: ast.For | ast.AsyncFor) -> bool:
    """A loop body that mutates a container (`xs.append(...)`, `xs += [...]`) and has no break/continue of its
    own (but guards `if cond: continue` at its top level, which an unrolled run follows): worth unrolling so that
    the container's elements come out exact. Kept on the node: asked at every run of the loop (a walk of the body
    each time was 14 % of a run on deepinv)."""
    return kept_on_node(loop, "_classify_grows_containers", lambda: _walk_grows_containers(loop))


def _walk_grows_containers(loop: ast.For | ast.AsyncFor) -> bool:
    mutates = False
    todo: list[ast.AST] = [st for st in loop.body if not _continues_if(st)]  # (those the unrolled run follows)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Break, ast.Continue)):
            return False
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.For,
                             ast.AsyncFor, ast.While)):
            if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
                mutates = mutates or any(isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute)
                                         and c.func.attr in MUTATORS or isinstance(c, (ast.Yield, ast.YieldFrom))
                                         or _sets_item(c) for c in ast.walk(node))
            continue  # their own break/continue are theirs
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MUTATORS:
            mutates = True
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr in nn_modules.ADD_MODULE:
            mutates = True  # `self.add_module(str(i), m)`: a module's children, in order (they print)
        elif isinstance(node, (ast.Yield, ast.YieldFrom)):
            mutates = True  # a generator's output, in order
        elif isinstance(node, ast.AugAssign) or _rebinds_grown(node) or _sets_item(node):
            mutates = True
        todo.extend(ast.iter_child_nodes(node))
    return mutates


def _unrolled(loop: ast.For | ast.AsyncFor, it: Seq, top_level: bool) -> bool:
    """Whether a loop over the known elements `it` runs element by element rather than once over them joined:
    `for d in ("cpu", "cuda"): if ...: devices.append(d)`, so that the container ends up with exactly the elements
    appended (_grows_containers, _fills_table); `for shape in SHAPES: Case(...)` at a module's top level, so that
    what each call registers is its own (_calls_for_effect); `for remove in "cuda:", "none", " ": device =
    device.replace(remove, "")`, so that the name carried from one element to the next comes out exact (one joined
    constant made it unknown: ultralytics' parse_device, and every device it selects: _folds_names)."""
    n = len(it.items)
    return 0 < n <= MAX_UNROLL and (_grows_containers(loop) or top_level and _calls_for_effect(loop)) or \
        MAX_UNROLL < n <= MAX_UNROLLED_TABLE and _fills_table(loop) or \
        1 < n <= MAX_FOLDED and all(isinstance(i, Const) for i in it.items) and _folds_names(loop)


def _fills_table(loop: ast.For | ast.AsyncFor) -> bool:
    """A loop whose body only appends values made without a call (`result.append((src, i, j, reduced))` over an
    `itertools.product`): cheap per iteration whatever the count, so run one by one up to MAX_UNROLLED_TABLE
    iterations (funsor's 585-case tables). Kept on the node."""
    return kept_on_node(loop, "_classify_fills_table", lambda: all(
        isinstance(st, ast.Expr) and isinstance(st.value, ast.Call) and isinstance(st.value.func, ast.Attribute)
        and st.value.func.attr in registries.LIST_STORES and isinstance(st.value.func.value, ast.Name)
        and not any(isinstance(c, (ast.Call, ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr)) for a in
                    (*st.value.args, *(k.value for k in st.value.keywords)) for c in ast.walk(a))
        for st in loop.body) and bool(loop.body))


def _calls_for_effect(loop: ast.For | ast.AsyncFor) -> bool:
    """A loop whose body calls something for what it does (`for shape in SHAPES: Case(f"rand({shape})")`, where
    the constructor appends itself to a module's list of cases), without break/continue: at a module's top level
    worth unrolling, so that what each call registers is made of its own element (one joined element gave one
    case of unknown name). Kept on the node."""
    return kept_on_node(loop, "_classify_calls_for_effect", lambda: _walk_calls_for_effect(loop))


def _walk_calls_for_effect(loop: ast.For | ast.AsyncFor) -> bool:
    calls = False
    todo: list[ast.AST] = list(loop.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Break, ast.Continue)):
            return False
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.For, ast.AsyncFor,
                             ast.While)):
            continue  # (their own break/continue are theirs)
        calls = calls or isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
        todo.extend(ast.iter_child_nodes(node))
    return calls


def _folds_names(loop: ast.For | ast.AsyncFor) -> bool:
    """A short body of plain statements that rebinds a name from its own value (`device = device.replace(r, "")`,
    `total += w`): a fold over the elements, whose result only exists element by element. Plain: assignments and
    expressions (and `if cond: continue` guards, which an unrolled run follows), no block, break or definition, so
    an unrolled run costs at most a few statements per element. Kept on the node (asked at every run)."""
    return kept_on_node(loop, "_classify_folds_names", lambda: _walk_folds_names(loop))


def _walk_folds_names(loop: ast.For | ast.AsyncFor) -> bool:
    body = [st for st in loop.body if not _continues_if(st)]
    if not body or len(body) > MAX_FOLD_STATEMENTS or not all(isinstance(st, (ast.Assign, ast.AugAssign, ast.Expr))
                                                               for st in body):
        return False
    if any(isinstance(n, (ast.Lambda, ast.NamedExpr, ast.Yield, ast.YieldFrom, ast.Await)) for st in body
           for n in ast.walk(st)):
        return False
    for st in body:
        if isinstance(st, ast.AugAssign) and isinstance(st.target, ast.Name):
            return True
        if isinstance(st, ast.Assign) and any(isinstance(t, ast.Name) and any(
                isinstance(n, ast.Name) and n.id == t.id for n in ast.walk(st.value)) for t in st.targets):
            return True
    return False


def _continues_if(st: ast.stmt) -> bool:
    """`if cond: continue` (nothing else, no else): a guard that skips the rest of a loop's iteration."""
    return isinstance(st, ast.If) and not st.orelse and len(st.body) == 1 and isinstance(st.body[0], ast.Continue)


def _fresh_iterator(e: ast.expr) -> bool:
    """`enumerate(...)`, `zip(...)`, `cls.__subclasses__()`: an iterator or list made here, which no callee could
    have filled."""
    return isinstance(e, ast.Call) and (isinstance(e.func, ast.Name) and e.func.id in ("enumerate", "zip") or
                                        isinstance(e.func, ast.Attribute) and e.func.attr == "__subclasses__" and
                                        not e.args)


def _own_dict_view(e: ast.expr, empty: frozenset[str]) -> bool:
    """`kwargs`, `kwargs.items()` (`.keys()`, `.values()`), maybe in `sorted(...)`/`list(...)`/`tuple(...)`, where
    `kwargs` is a dict the call made that nothing outside it can have filled (Frame.empty_defaults)."""
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id in ("sorted", "list", "tuple") and \
            len(e.args) == 1 and not e.keywords:
        e = e.args[0]
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr in ("items", "keys", "values") \
            and not e.args:
        e = e.func.value
    return isinstance(e, ast.Name) and e.id in empty


def _made_device(v: Value) -> bool:
    """An accelerator device as a string or a torch.device (not a tensor on one)."""
    return isinstance(v, (Const, DeviceV)) and bool(accel_device(v))


def _sets_item(node: ast.AST) -> bool:
    """`table[key] = value` on a name or an attribute (`self.heads[name] = Head()`): a dict (a ModuleDict) filled
    entry by entry; `globals()[name] = ...` and `setattr(cls, name, ...)`: a module or class given tests one by one
    (`for dev in DEVICES: setattr(TestOps, f"test_{dev}", make(dev))`)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr" and \
            len(node.args) == 3 and (isinstance(node.args[1], (ast.JoinedStr, ast.BinOp)) or isinstance(
                node.args[1], ast.Attribute) and node.args[1].attr == "__name__"):
        # (a name built per item, or the name given to the function set: `fn.__name__ = f"test_{x}"; setattr(TestX,
        # fn.__name__, fn)`; `setattr(self, key, value)` over options is followed unrolled or not)
        return True
    return isinstance(node, ast.Assign) and any(isinstance(t, ast.Subscript) and (_mutable_target(t.value) or (
        isinstance(t.value, ast.Call) and isinstance(t.value.func, ast.Name) and t.value.func.id == "globals"))
        for t in node.targets)


def _rebinds_grown(node: ast.AST) -> bool:
    """`xs = xs + [...]`: a name rebound to itself grown, the spelled-out `xs += [...]`."""
    return isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
        and isinstance(node.value, ast.BinOp) and isinstance(node.value.op, ast.Add) \
        and isinstance(node.value.left, ast.Name) and node.value.left.id == node.targets[0].id


# Exceptions a CPU-only torch raises when code needs CUDA: "Torch not compiled with CUDA enabled" is an
# AssertionError, "No CUDA GPUs are available" / "Found no NVIDIA driver" a RuntimeError.
_DEVICE_ERRORS = frozenset({"Exception", "BaseException", "RuntimeError", "AssertionError", "AcceleratorError"})
_PROCESS_ERRORS = frozenset({"Exception", "BaseException", "OSError", "FileNotFoundError", "SubprocessError",
                             "CalledProcessError"})
_NVML_ERRORS = frozenset({"Exception", "BaseException", "NVMLError", "NVMLError_LibraryNotFound",
                          "NVMLError_DriverNotLoaded", "NVMLError_Uninitialized"})
_ESCAPES = frozenset({"skip", "fail", "xfail", "skipTest", "exit"})


_CPU_TORCH_ERRORS = frozenset({"AssertionError", "Exception", "BaseException"})  # what a CUDA call raises there


def _catches_cpu_torch_errors(call: ast.Call) -> bool:
    """`pytest.raises((AssertionError, RuntimeError))`, `self.assertRaises(Exception)`: the expected exception
    types (the first argument, or `expected_exception=`) include the one CPU-only torch raises at a CUDA call."""
    arg = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg in (
        "expected_exception", "exception")), None)
    types = arg.elts if isinstance(arg, ast.Tuple) else [arg] if arg is not None else []
    return any(_last_name(t) in _CPU_TORCH_ERRORS for t in types)


def _swallows(s: ast.Try, errors: frozenset[str]) -> bool:
    """Whether a handler of this try catches one of these errors (those of CUDA calls, those of starting a program)
    and neither re-raises nor skips/fails, nor keeps the error for later (`errors.append(e)`, `queue.put(e)`,
    `self.error = e`: a worker thread's failure the test asserts on afterwards)."""
    for h in s.handlers:
        types = h.type.elts if isinstance(h.type, ast.Tuple) else [h.type] if h.type is not None else []
        if h.type is not None and not any(_last_name(t) in errors for t in types):
            continue
        if h.name is not None and _keeps_error(h, h.name):
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


def _keeps_error(h: ast.ExceptHandler, name: str) -> bool:
    """Whether the handler stores the caught error where code after the try can see it: passed to a container's
    `append`/`add`/`put`/`put_nowait`/`extend`, or assigned to an attribute or an item."""
    for n in ast.walk(h):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _KEEPERS and any(
                isinstance(a, ast.Name) and a.id == name for a in n.args):
            return True
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Name) and n.value.id == name and any(
                isinstance(t, (ast.Attribute, ast.Subscript)) for t in n.targets):
            return True
    return False


_KEEPERS = frozenset({"append", "add", "put", "put_nowait", "extend", "appendleft"})


def _safe_name(s: str) -> str:
    """parameterized.to_safe_name."""
    return re.sub("[^a-zA-Z0-9_]+", "_", s)


def last_bindings(body: list[ast.stmt]) -> dict[str, int]:
    """The last line where a module's top level (not its functions or classes) binds each name by assignment,
    a loop or `with` target, an import, a def or a class."""
    out: dict[str, int] = {}

    def targets(t: ast.AST, line: int) -> None:
        if isinstance(t, ast.Name):
            out[t.id] = max(out.get(t.id, 0), line)
        elif isinstance(t, (ast.Tuple, ast.List)):
            for e in t.elts:
                targets(e, line)
        elif isinstance(t, ast.Starred):
            targets(t.value, line)

    todo = list(body)
    while todo:
        s = todo.pop()
        line = s.lineno
        if isinstance(s, ast.Assign):
            for t in s.targets:
                targets(t, line)
        elif isinstance(s, ast.AnnAssign) and s.value is not None:
            targets(s.target, line)
        elif isinstance(s, (ast.For, ast.AsyncFor)):
            targets(s.target, line)
        elif isinstance(s, (ast.With, ast.AsyncWith)):
            for item in s.items:
                if item.optional_vars is not None:
                    targets(item.optional_vars, line)
        elif isinstance(s, (ast.Import, ast.ImportFrom)):
            for a in s.names:
                name = a.asname or a.name.split(".", 1)[0]
                out[name] = max(out.get(name, 0), line)
        elif isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out[s.name] = max(out.get(s.name, 0), line)
            continue
        for field in ("body", "orelse", "finalbody", "handlers"):
            todo.extend(x for x in getattr(s, field, ()) if isinstance(x, (ast.stmt, ast.excepthandler)))
    return out


def _is_jit_script(d: ast.expr) -> bool:
    """A bare `@torch.jit.script` / `@jit.script` decorator."""
    return isinstance(d, ast.Attribute) and d.attr == "script" and (
        (isinstance(d.value, ast.Attribute) and d.value.attr == "jit") or (isinstance(d.value, ast.Name)
                                                                           and d.value.id == "jit"))


def _registrar(d: ast.expr, methods: tuple[str, ...]) -> str | None:
    """`x` for a decorator `@x.<method>(...)` with one of `methods` (a click group or typer application that
    registers the def), else None."""
    if isinstance(d, ast.Call) and isinstance(d.func, ast.Attribute) and d.func.attr in methods and isinstance(
            d.func.value, ast.Name):
        return d.func.value.id
    return None


def _attribute_chain(target: ast.Attribute) -> list[str] | None:
    """`a.b.c` -> ["a", "b", "c"]; None unless the chain starts at a name."""
    names: list[str] = []
    e: ast.expr = target
    while isinstance(e, ast.Attribute):
        names.append(e.attr)
        e = e.value
    return [e.id, *reversed(names)] if isinstance(e, ast.Name) else None


def _at_path(obj: Value, attrs: list[str]) -> Value | None:
    """`obj.<attrs[0]>.<attrs[1]>...` read through the attributes the objects hold; None where one is not held."""
    for name in attrs:
        if not isinstance(obj, Inst) or (obj := obj.attr(name)) is None:
            return None
    return obj


def _with_path(obj: Value, attrs: list[str], v: Value) -> Value | None:
    """obj with `obj.<attrs[0]>.<attrs[1]>... = v` done, each object on the way rebuilt; None when one of them is
    not an object the analysis follows."""
    if not isinstance(obj, Inst):
        return None
    if len(attrs) == 1:
        return obj.with_attr(attrs[0], v)
    inner = obj.attr(attrs[0])
    if inner is None and omegaconf_model.is_config(obj):
        inner = omegaconf_model.config({})  # addict's `cfg.train.device = "cuda"` makes `train` (OmegaConf raises)
    got = _with_path(inner, attrs[1:], v) if inner is not None else None
    return obj.with_attr(attrs[0], got) if got is not None else None
