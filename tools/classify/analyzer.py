"""Per-test classification: marks, fixtures (conftest chain, parametrized), parametrizations, worlds.

A test is analysed in world 0 (no GPU). A skip reached there is GPU-related when it disappears in a
world with GPUs; the smallest such world is the GPU count. Everything else comes from the findings of
the interpreter (dataflow.py) and is turned into a label by evidence.decide.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import itertools
from dataclasses import field
from pathlib import Path

from tools.bounded_read import MAX_FILE_BYTES
from tools.classify import conventions
from tools.classify.collect import (
    UNKNOWN_ID,
    ParamCase,
    TestItem,
    collect_items,
    def_scope,
    param_argnames,
    parametrize_cases,
)
from tools.classify.dataflow import (
    CASE_BUDGET,
    FILE_BUDGET,
    OVER_BUDGET_CHARGE,
    BudgetExceeded,
    Frame,
    Interp,
)
from tools.classify.devices import accel_device
from tools.classify.evidence import (
    ERROR,
    GPU,
    GPU_REASON,
    GUARDED,
    IMPORTS,
    MARK_SKIP_KEY,
    MOCK,
    SKIP,
    SKIPPED_EVERYWHERE,
    UNKNOWN,
    Finding,
    Verdict,
    decide,
    join_verdicts,
    step,
)
from tools.classify.fixtures import Fixture, Fixtures, idfn, instance_name
from tools.classify.frozen import frozen
from tools.classify.hooks import MODIFY_HOOK, Hooks
from tools.classify.hypothesis_given import given_arguments
from tools.classify.interp_base import CALLED_UNRESOLVED, MOCK_OBJECT, MODULE_FINDINGS, lost_name
from tools.classify.interp_base import WORLDS as ANALYSIS_WORLDS
from tools.classify.interp_calls import is_generator
from tools.classify.item_hooks import ItemHooks
from tools.classify.marks import mark_findings
from tools.classify.modules import RepoIndex
from tools.classify.plugins import (
    DTYPES_MARK,
    PYTEST_TORCH_REL,
    declares_pytest_torch,
)
from tools.classify.results import FileResult
from tools.classify.scope import TestNames
from tools.classify.sources import Sources
from tools.classify.test_state import (
    decorator_patches,
    merge_stores,
    passes_mock,
    patch_owner,
    patch_stores,
    test_state_of,
)
from tools.classify.values import (
    MAX_ALTERNATIVES,
    ClassV,
    Const,
    DeviceV,
    Ext,
    FuncV,
    Inst,
    MarkV,
    RequestV,
    ReqV,
    Seq,
    TestFnV,
    UnknownParameter,
    Unresolved,
    Value,
    alternatives,
    join_all,
)
from tools.classify.values import (
    UNRESOLVED as UNK,
)

WORLDS = ANALYSIS_WORLDS[1:]  # the worlds with GPUs
# one case's values: the parametrized arguments by name, the parametrized fixtures' chosen params, its marks
CaseValues = tuple[dict[str, Value], dict[str, ParamCase], list[Value]]

# The module-level xunit hooks pytest runs around a test, in order: of each group, the first the module has
# (unittest's spelling before pytest's); `*_function` only around module-level test functions
MODULE_SETUP = (("setUpModule", "setup_module"), ("setup_function",))
MODULE_TEARDOWN = (("teardown_function",), ("tearDownModule", "teardown_module"))
# At most this many parametrizations per test are analysed one by one; a test with more gets one function-level key
# that says so. Each case costs about 1.3 ms of CPU (curvlinops-for-pytorch, one process: 12,702 keys in 17 s at
# 1,024, 26,523 keys in 34 s at 8,192): the cost follows the ids emitted, and the file budget still caps a file.
MAX_CASES = 8192
# why a case analysed with a GPU world's values needs its GPUs (Analyzer.classify_case)
ONLY_THERE = "exists only on a machine with a GPU (an accelerator query is false on a CPU-only one)"
NAMED_THERE = "names another case on a machine with a GPU (a parametrization that an accelerator query changes)"
# A test with at least this many cases is first analysed once for each group of them, its parameters bound to the
# join of their values (joined_cases); fewer are analysed one by one
JOIN_MIN_CASES = 3
# A test's group of cases none of whose joined runs settled anything after this many fixture parameter sets failed
# their own runs is analysed case by case (Analyzer._settle_group)
JOIN_GIVE_UP = 2
# A joined run that lost code where its first case alone lost it too is checked by analysing, each alone, cases that
# show every value of every argument (_lost_by_every_value); at most this share of the run's cases
JOIN_COVER_SHARE = 0.5
# A test over MAX_CASES still has its ids spelled, each with the one verdict of its function-level analysis, when
# there are at most this many and no case has marks of its own (deepinv's test_hdf5dataset: 15,360 cases of 13 flags)
MAX_SPELLED_IDS = 65536


class _TooManyCases(Exception):
    """A test with more than MAX_CASES parametrizations: it gets one function-level key that says so, and its ids
    (`suffixes`) when they can be spelled without analysing each case."""

    def __init__(self, total: int, suffixes: list[str] | None = None) -> None:
        super().__init__(total)
        self.total = total
        self.suffixes = suffixes


@frozen
class CaseContext:
    """What a case sees before its body runs (see Analyzer.case_context); fixture findings are prefixed
    with the test's own line by the caller."""

    findings: tuple[Finding, ...]
    fixture_findings: tuple[tuple[str, str, tuple[Finding, ...]], ...]  # (fixture, where, findings)
    kwargs: dict[str, Value] = field(hash=False, compare=False)
    fixture_modules: frozenset[str] = frozenset()
    wrappers: tuple[FuncV, ...] = ()
    cost: int = 0  # steps it took to compute
    cls_attrs: tuple[tuple[str, Value], ...] = ()  # what its fixtures set on `request.cls`, in setup order
    stores: tuple[tuple[str, Value], ...] = ()  # the test state its fixtures set (test_state.py), merged in order


class Analyzer:
    """Classifies the test files of one root: collection, parametrizations, case contexts, worlds and verdicts.
    Code comes from `source` (Sources), fixtures from `fixtures` (Fixtures)."""

    def __init__(self, root: Path, files: list[str] | RepoIndex, sources: dict[str, bytes] | None = None,
                 pytest_torch: bool | None = None, prove_inert: bool = True,
                 max_file_bytes: int = MAX_FILE_BYTES, join_cases: bool = True,
                 test_names: TestNames | None = None) -> None:
        """prove_inert=False interprets every test body, even those inert.py proves yield nothing;
        join_cases=False analyses every parametrization on its own (joined_cases). The equivalence tests compare
        both ways. `test_names`: pytest's python_classes/python_functions (scope.load_scope; default pytest's)."""
        self.source = Sources(root, files, sources, max_file_bytes)
        # pytest-torch declared: its pytest_generate_tests also parametrizes a repo-defined torch_device
        self.pytest_torch = declares_pytest_torch(root) if pytest_torch is None else pytest_torch
        self.interp = Interp(self.source, test_names)
        self.fixtures = Fixtures(self.source, self.interp)
        self.hooks = Hooks(self.interp)
        self.item_hooks = ItemHooks(self.interp)
        self.marks_memo: dict[tuple[object, ...], tuple[list[tuple[Value, str]], list[FuncV],
                                                               tuple[Finding, ...]]] = {}
        self.fixture_modules: set[str] = set()
        # param_memo's key -> the number of cases of a test whose parametrizations exceed MAX_CASES, and their id
        # suffixes when they can be spelled (MAX_SPELLED_IDS)
        self.over_bound: dict[tuple[object, ...], tuple[int, list[str] | None]] = {}
        self.param_memo: dict[tuple[object, ...], list[
            tuple[str, dict[str, Value], dict[str, ParamCase], list[Value]]] | None] = {}
        # param_memo's key -> its cases by id suffix (the first of equal suffixes), so a case is found in O(1)
        self.case_index: dict[tuple[object, ...], dict[
            str, tuple[dict[str, Value], dict[str, ParamCase], list[Value]]]] = {}
        self.context_memo: dict[tuple[object, ...], CaseContext] = {}
        # (memo, key) -> computing that entry of marks_memo or context_memo read the world: a hit reads it too
        self.memo_reads_world: dict[tuple[str, object], bool] = {}
        self.neutral_memo: dict[tuple[str, int], bool] = {}
        self.shape_memo: dict[tuple[int, str, int], tuple[TestItem, tuple[object, ...]]] = {}  # per file
        self.quiet_verdicts: dict[int, Verdict] = {}  # per file: "no GPU use found" by the test's line
        self.fixture_world_memo: dict[tuple[str, tuple[ClassV, ...]], bool] = {}
        self.literal_memo: dict[tuple[str, tuple[int, int]], bool] = {}
        self.by_name_memo: dict[tuple[str, tuple[int, int]], list[str] | None] = {}
        self.given_memo: dict[tuple[FuncV, int], dict[str, Value]] = {}
        self.prove_inert = prove_inert
        self.join_cases = join_cases
        self.defined_names: dict[str, frozenset[str]] = {}  # test file -> the functions its imports define (code_lost)
        self.inert = self.interp.inert


    def decorate(self, node: ast.AST, key: tuple[str, int, int], rel: str, world: int,
                 findings: list[Finding], scope: dict[str, Value] | None = None) -> tuple[list[Value], list[FuncV]]:
        """Apply a def's decorators to a placeholder; return the marks and any wrapper closures. `scope`: the
        names of the class body a method's decorators also see (collect.def_scope)."""
        decos = getattr(node, "decorator_list", [])
        value: Value = TestFnV(key)
        wrappers: list[FuncV] = []
        if not decos:
            return [], []
        frame = Frame(rel, world, scope or {}, self.interp.module_state(rel, world, ()).env, findings)
        before = dict(frame.env)
        for d in reversed(decos):
            dv = self.interp.ev(d, frame)
            r = self.interp.call(dv, [value], {}, d, frame, "decorator") if not isinstance(dv, Unresolved) \
                else value
            if isinstance(r, TestFnV):
                value = r
            elif isinstance(r, FuncV):
                wrappers.append(r)
                inner = next((v for _, v in r.captured if isinstance(v, TestFnV)), None)
                if inner is not None:
                    value = inner
        marks = list(value.marks) if isinstance(value, TestFnV) else []
        return [*marks, *decorator_patches(frame.env, before, step(rel, node.lineno, "decorator"), key)], wrappers

    def pytestmark(self, holder: dict[str, Value]) -> list[Value]:
        v = holder.get("pytestmark")
        if isinstance(v, Seq):
            return list(v.items)
        return [v] if v is not None else []

    def item_marks(self, rel: str, item: TestItem, world: int, findings: list[Finding]) -> tuple[
            list[tuple[Value, str]], list[FuncV]]:
        """All marks of a test, closest first (function, classes inner to outer, module); memoised."""
        key = (self.shape(rel, item, world), world)
        got = self.marks_memo.get(key)
        if got is None:
            produced: list[Finding] = []
            before = self.interp.world_reads
            marks, wrappers = self._item_marks(rel, item, world, produced)
            got = self.marks_memo[key] = (marks, wrappers, tuple(produced))
            self.memo_reads_world[("marks", key)] = self.interp.world_reads != before
        else:
            self.interp.world_memo_hit(self.memo_reads_world, ("marks", key))
        findings.extend(got[2])
        return list(got[0]), list(got[1])

    def _item_marks(self, rel: str, item: TestItem, world: int, findings: list[Finding]) -> tuple[
            list[tuple[Value, str]], list[FuncV]]:
        out: list[tuple[Value, str]] = []
        fnode = self.source.module(item.func.rel).defs.get(item.func.pos)
        marks, wrappers = self.decorate(fnode, (item.func.rel, *item.func.pos), item.func.rel, world, findings,
                                        def_scope(self.interp, item.func, world))
        out.extend((m, step(item.func.rel, item.func.pos[0], "decorator")) for m in marks)
        for cls in reversed(item.classes):
            for c in self.interp.mro(cls, world):
                if not isinstance(c, ClassV):
                    continue
                cnode = self.interp.class_node(c)
                cm, _ = self.decorate(cnode, (c.rel, *c.pos), c.rel, world, findings)
                out.extend((m, step(c.rel, c.pos[0], f"class {c.name}")) for m in cm)
                out.extend((m, step(c.rel, c.pos[0], f"class {c.name}.pytestmark"))
                           for m in self.pytestmark(self.interp.class_body(c, world)))
        st = self.interp.module_state(rel, world, ("pytestmark",))
        out.extend((m, step(rel, 1, "module pytestmark")) for m in self.pytestmark(st.env))
        return out, wrappers

    # -- classification ----------------------------------------------------------------------------
    def shape(self, rel: str, item: TestItem, world: int) -> tuple[object, ...]:
        """What a test's marks, parametrizations and fixtures depend on: for a test without decorators its
        file, classes, kind and fixture arguments (most tests of a file share one shape), else the test. A
        module-level test of a file that adds nothing of its own (no fixtures, no pytestmark, no findings at
        its top level) shares its shape with such tests of every file under the same conftests."""
        key = (id(item), rel, world)
        got = self.shape_memo.get(key)
        if got is not None and got[0] is item:  # the item itself is kept: its id cannot be reused meanwhile
            return got[1]
        node = self.source.module(item.func.rel).defs.get(item.func.pos)
        # a `pytest_generate_tests` hook may look at the test itself (`metafunc.function`)
        own = getattr(node, "decorator_list", None) or self.hooks.has_hooks(rel, item.classes, world)
        sh = (rel, item) if own else self._undecorated_shape(rel, item, world)
        self.shape_memo[key] = (item, sh)
        return sh

    def _undecorated_shape(self, rel: str, item: TestItem, world: int) -> tuple[object, ...]:
        base = (item.classes, item.unittest, self.fixtures.fixture_args(item.func))
        if not item.classes and self.module_neutral(rel, world):
            return ("conftests", tuple(self.source.conftests_for(rel)), *base)
        return (rel, *base)

    def module_neutral(self, rel: str, world: int) -> bool:
        """The file adds nothing to its tests' context: no fixture (defined or imported), no pytestmark, no
        finding at its top level."""
        key = (rel, world)
        got = self.neutral_memo.get(key)
        if got is None:
            st = self.interp.module_state(rel, world)
            got = self.neutral_memo[key] = (not st.findings and "pytestmark" not in st.env
                                            and not self.fixtures.module_fixtures(rel))
        return got

    def context_shape(self, rel: str, item: TestItem, world: int) -> tuple[object, ...]:
        """shape(), widened for case contexts: decorators that are only parametrize marks add no finding, no
        fixture and no wrapper, so such tests share their context with the undecorated ones."""
        sh = self.shape(rel, item, world)
        if sh[1] is not item:
            return sh
        produced: list[Finding] = []
        marks, wrappers = self.item_marks(rel, item, world, produced)
        here = step(item.func.rel, item.func.pos[0], "decorator")
        if produced or wrappers or any(where == here and not (isinstance(m, MarkV) and m.name == "parametrize")
                                       for m, where in marks):
            return sh
        return self._undecorated_shape(rel, item, world)

    def context_key(self, rel: str, item: TestItem, direct: dict[str, Value], choice: dict[str, ParamCase],
                    world: int) -> tuple[object, ...] | None:
        """The key case contexts are memoised on; None when a parameter value cannot be hashed."""
        try:
            key: tuple[object, ...] = (self.context_shape(rel, item, world), world, tuple(sorted(direct)),
                                       tuple(sorted(choice.items())))
            hash(key)
        except TypeError:
            return None
        return key

    def case_context(self, rel: str, item: TestItem, direct: dict[str, Value], choice: dict[str, ParamCase],
                     world: int) -> CaseContext:
        """Everything a case's analysis needs before its body runs, memoised per context shape, parameter
        names and fixture parameters (its cost is charged again on every use, so budgets do not depend on the
        order of analysis). Parametrized argument values are not part of it: the caller passes them."""
        key = self.context_key(rel, item, direct, choice, world)
        if key is None:  # an unhashable parameter value: not memoised
            return self._case_context(rel, item, direct, choice, world)
        got = self.context_memo.get(key)
        if got is not None:
            self.interp.charge(got.cost)
            self.interp.world_memo_hit(self.memo_reads_world, ("context", key))
            return got
        start, before = self.interp.steps, self.interp.world_reads
        got = self._case_context(rel, item, direct, choice, world)
        got = dataclasses.replace(got, cost=self.interp.steps - start)
        self.context_memo[key] = got
        self.memo_reads_world[("context", key)] = self.interp.world_reads != before
        return got

    def _case_context(self, rel: str, item: TestItem, direct: dict[str, Value], choice: dict[str, ParamCase],
                      world: int) -> CaseContext:
        findings: list[Finding] = []
        tables = self.fixtures.scopes(rel, item)
        for f in self.interp.module_state(rel, world, (MODULE_FINDINGS,)).findings:
            findings.append(f)
        for cls in item.classes:  # class bodies (bases' too) run at import, like the module's top level
            for c in self.interp.mro(cls, world):
                if isinstance(c, ClassV):
                    where = step(c.rel, c.pos[0], f"class {c.name} body")
                    findings.extend(f.prefixed(where) for f in self.interp.class_body_findings(c, world))
        for c in self.source.conftests_for(rel):
            for f in self.interp.module_state(c, world, (MODULE_FINDINGS,)).findings:
                if f.kind in (GPU, SKIP, IMPORTS):
                    findings.append(f.prefixed(step(c, 1, "conftest module")))
            for f in self.interp.startup_hook_findings(c, world):
                if f.kind in (GPU, SKIP, IMPORTS):
                    findings.append(f.prefixed(step(c, 1, "conftest startup hook")))
        marks, wrappers = self.item_marks(rel, item, world, findings)
        usefixtures: list[str] = []
        for m, where in marks:
            findings.extend(mark_findings([m], where))
            if isinstance(m, MarkV) and m.name == "usefixtures":
                usefixtures.extend(str(a.value) for a in m.args if isinstance(a, Const))
        args = self.fixtures.fixture_args(item.func)
        autouse = [fx.name for t in reversed(tables) for fx in t.values() if fx.autouse]
        kwargs: dict[str, Value] = {}
        fixture_findings: list[tuple[str, str, tuple[Finding, ...]]] = []
        fixture_modules: set[str] = set()
        cls_attrs: dict[str, Value] = {}
        stores: list[tuple[tuple[str, Value], ...]] = []
        for name in list(dict.fromkeys([*autouse, *usefixtures, *([] if item.unittest else args)])):
            if name in direct:
                continue  # a parametrized argument: the caller passes its value
            if name == "request":
                kwargs[name] = RequestV(UNK)
                continue
            fx = self.fixtures.find(tables, name)
            if fx is None:
                kwargs[name] = UNK
                continue
            if name not in autouse:
                fixture_modules.add(fx.fv.rel)
            if fx.on_instance:  # its body runs on the test's object (_instance_fixtures); its set-up is here
                kwargs[name] = UNK
                fs = tuple(self.fixtures.fixture_kwargs(fx, tables, choice, world)[1])
            else:
                kwargs[name], fs = self.fixtures.fixture_value(fx, tables, choice, world, ())
                cls_attrs.update(self.fixtures.cls_attrs(fx, choice, world))
                stores.append(self.fixtures.stores(fx, choice, world))
            if fs:
                fixture_findings.append((name, fx.where.split(": ")[0], fs))
        return CaseContext(tuple(findings), tuple(fixture_findings), kwargs, frozenset(fixture_modules),
                           tuple(wrappers), cls_attrs=tuple(cls_attrs.items()), stores=merge_stores(*stores))

    def analyse_case(self, rel: str, item: TestItem, direct: dict[str, Value], choice: dict[str, ParamCase],
                     case_marks: list[Value], world: int, body: bool = True,
                     suffix: str | None = None) -> list[Finding]:
        """The findings of one case (its id suffix: `suffix`) in one world: its context (marks, module and conftest
        findings, fixtures), then, unless `body` is false, its setup hooks, body and decorator wrappers."""
        findings: list[Finding] = []
        del self.interp.lost[:]  # (what earlier analyses lost: code_lost reads this one's)
        if item.bindings:
            direct = {**dict(item.bindings), **direct}
        if item.requirement:
            findings.append(Finding(GPU, (step(rel, item.line, item.key.split("::")[-1]), item.requirement),
                                    key="requirement"))
        if item.marks:
            findings.extend(mark_findings(list(item.marks), step(rel, item.line, "generated case")))
        ctx = self.case_context(rel, item, direct, choice, world)
        findings.extend(ctx.findings)
        findings.extend(mark_findings(case_marks, step(rel, item.line, "parameter marks")))
        if self.item_hooks.of(rel, world):
            # conftest hooks that skip tests by their markers (item_hooks.py)
            own = [m for m, _ in self.item_marks(rel, item, world, [])[0]]
            findings.extend(self.item_hooks.findings(rel, [*own, *case_marks], item.func.name, world,
                                                     f"{item.key}{suffix or ''}"))
        for name, where, fs in ctx.fixture_findings:
            findings.extend(f.prefixed(step(rel, item.line, f"uses fixture {name} ({where})")) for f in fs)
        self.fixture_modules.update(ctx.fixture_modules)
        if not body:
            return findings
        kwargs, wrappers = ctx.kwargs, ctx.wrappers
        args = self.fixtures.fixture_args(item.func)
        self_v: Value | None = None
        instance_stores: tuple[tuple[str, Value], ...] = ()
        hook_stores: list[tuple[tuple[str, Value], ...]] = []  # the test state the set-up hooks left
        findings.extend(self._module_hooks(rel, item, MODULE_SETUP, world))
        if item.classes:
            cls = item.classes[-1]
            self_v = Inst(cls, item.self_attrs)
            for k, v in ctx.cls_attrs:  # `request.cls.device = ...` in a fixture
                self_v = self_v.with_attr(k, v)
            hooks = ("setUpClass", "setUp") if item.unittest else ("setup_class", "setup_method", "setup")
            for hook in hooks:
                fs, after, set_up = self._class_hook(cls, hook, self_v, world)
                findings.extend(fs)
                hook_stores.append(set_up)
                if after is not None:
                    self_v = after
            kwargs = dict(kwargs)
            fs, self_v, instance_stores = self._instance_fixtures(rel, item, kwargs, self_v, choice, world)
            findings.extend(fs)
        fv = item.func
        if self_v is not None:
            fv = FuncV(fv.rel, fv.pos, fv.name, bound=self_v, captured=fv.captured, cls=fv.cls)
        call_kwargs = {k: v for k, v in kwargs.items() if k in args}
        params = self.fixtures.param_names(item.func)
        for k, v in direct.items():
            if k in params:
                call_kwargs[k] = v
        for k, v in self.given_arguments(item.func, world).items():
            if k in params and k not in direct:
                call_kwargs[k] = v  # drawn by hypothesis' @given (hypothesis_given.py)
        request = call_kwargs.get("request")
        if isinstance(request, RequestV):
            fs, values = self.by_name_fixtures(rel, item, direct, choice, world)
            findings.extend(fs)
            if values:
                call_kwargs["request"] = RequestV(request.param, values)
        for k in self.mock_arguments(item, args):
            call_kwargs[k] = Ext(MOCK_OBJECT)
        # what its fixtures set (`monkeypatch.setenv` in an autouse fixture), then its patch decorators
        stores = merge_stores(ctx.stores, *hook_stores, instance_stores, self.decorator_patches(rel, item, world))
        if stores:
            self.interp.stores_seen = True  # (lookups then consult them)
        if stores or not self.body_inert(item, call_kwargs, self_v, world):
            findings.extend(self.interp.call_function(fv, [], call_kwargs, world, 1, stores=stores).findings)
        for w in wrappers:
            # pytest calls the wrapper as it calls a test, by keyword: the fixture and parametrized values the
            # test's signature asks for (functools.wraps shows the test's), which a `**kwargs` wrapper takes whole;
            # a parametrization the decorator put on the wrapper (wrapper_marks.py) reaches its own parameters
            own = self.fixtures.param_names(w)
            node = self.interp.source.module(w.rel).defs.get(w.pos)
            takes_all = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.args.kwarg is not None
            wkw = {k: v for k, v in {**call_kwargs, **direct}.items() if k in own or takes_all and k in call_kwargs}
            wargs: list[Value] = [self_v] if self_v is not None else []
            # the wrapper was made around a placeholder of the test (decorate); it calls the test itself, with the
            # arguments it chooses (`fn(*args, device="cuda", **kwargs)`)
            w = dataclasses.replace(w, captured=tuple((k, item.func if isinstance(v, TestFnV) else v)
                                                      for k, v in w.captured))
            wr = self.interp.call_function(w, wargs, wkw, world, 1, stores=stores)
            findings.extend(f.prefixed(step(w.rel, w.pos[0], "decorator wrapper")) for f in wr.findings)
        if item.classes and isinstance(self_v, Inst):
            hooks = ("tearDown", "tearDownClass") if item.unittest else ("teardown_method", "teardown_class")
            for hook in hooks:
                findings.extend(self._class_hook(item.classes[-1], hook, self_v, world)[0])
        findings.extend(self._module_hooks(rel, item, MODULE_TEARDOWN, world))
        return findings

    def _instance_fixtures(self, rel: str, item: TestItem, kwargs: dict[str, Value], self_v: Value,
                           choice: dict[str, ParamCase], world: int) -> tuple[
                               list[Finding], Value, tuple[tuple[str, Value], ...]]:
        """Function-scoped fixtures that are methods of the test's class, run on the test's own object as pytest
        runs them (bound to `request.instance`), in the order they are set up: what they set on `self`
        (`self.device = ...` in an autouse fixture) is what the body reads; a generator fixture hands over its
        object as it is at the yield, before its teardown. Their bodies' findings are these runs' (the case
        context has those of their own fixtures and marks), and a test asking for one gets this run's value. Also
        the test state they set (test_state.py)."""
        findings: list[Finding] = []
        stores: list[tuple[tuple[str, Value], ...]] = []
        tables = self.fixtures.scopes(rel, item)
        for name in list(kwargs):
            fx = self.fixtures.find(tables, name)
            if fx is None or not fx.on_instance:
                continue
            fkw = self.fixtures.fixture_kwargs(fx, tables, choice, world)[0]  # (their findings: the context's)
            fv = FuncV(fx.fv.rel, fx.fv.pos, fx.fv.name, bound=self_v, captured=fx.fv.captured, cls=fx.fv.cls)
            given = self.fixtures.dependency_stores(fx, tables, choice, world)
            res = self.interp.call_function(fv, [], fkw, world, 1, stores=given)
            stores.append(merge_stores(given, test_state_of(res.stores)))
            where = step(rel, item.line, f"uses fixture {name} ({fx.where.split(': ')[0]}) on the test's object")
            findings.extend(f.prefixed(where) for f in res.findings)
            kwargs[name] = res.value
            node = self.source.module(fx.fv.rel).defs.get(fx.fv.pos)
            generator = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and is_generator(node)
            after = res.self_at_yield if generator else res.self_after
            if after is not None:
                self_v = after
            for k, v in res.cls_attrs:  # `request.cls.device = ...` in a fixture method
                self_v = self_v.with_attr(k, v) if isinstance(self_v, Inst) else self_v
        return findings, self_v, merge_stores(*stores)

    def _class_hook(self, cls: ClassV, hook: str, self_v: Value, world: int) -> tuple[
            list[Finding], Value | None, tuple[tuple[str, Value], ...]]:
        """Run the test class's xunit hook (`setUp`, `teardown_method`...) on the test's object, if the class has
        one: its findings, the object as it left it and the test state it set (`lib.DEVICE = "cuda"`)."""
        h = self.interp.class_lookup(cls, hook, world)
        if not isinstance(h, FuncV):
            return [], None, ()
        res = self.interp.call_function(FuncV(h.rel, h.pos, h.name, bound=self_v, captured=h.captured, cls=h.cls),
                                        [], {}, world, 1)
        return ([f.prefixed(step(h.rel, h.pos[0], f"{hook}()")) for f in res.findings], res.self_after,
                test_state_of(res.stores))

    def by_name_fixtures(self, rel: str, item: TestItem, direct: dict[str, Value], choice: dict[str, ParamCase],
                         world: int) -> tuple[list[Finding], tuple[tuple[str, Value], ...]]:
        """The fixtures a test asks for by name with `request.getfixturevalue(...)`: a literal name in its body, or
        a string among the case's parameter values (`@parametrize("name", ["cuda_buf", "host_buf"])` then
        `request.getfixturevalue(name)`) that names a visible fixture. Their findings count as the test's (each
        is set up when asked for), and `request` hands their values over."""
        literals = self.getfixturevalue_literals(item.func)
        if literals is None:
            return [], ()
        names = [*literals, *(v.value for v in direct.values() if isinstance(v, Const) and isinstance(v.value, str))]
        tables = self.fixtures.scopes(rel, item)
        findings: list[Finding] = []
        values: dict[str, Value] = {}
        for name in dict.fromkeys(names):
            fx = self.fixtures.find(tables, name)
            if fx is None:
                continue
            v, fs = self.fixtures.fixture_value(fx, tables, choice, world, ())
            values[name] = v
            self.fixture_modules.add(fx.fv.rel)
            findings.extend(f.prefixed(step(rel, item.line, f"request.getfixturevalue({name!r}) "
                                                            f"({fx.where.split(': ')[0]})")) for f in fs)
        return findings, tuple(sorted(values.items()))

    def given_arguments(self, fv: FuncV, world: int) -> dict[str, Value]:
        """The arguments a test's hypothesis `@given(...)` draws (hypothesis_given.py); memoised per test and world."""
        key = (fv, world)
        got = self.given_memo.get(key)
        if got is None:
            node = self.source.module(fv.rel).defs.get(fv.pos)
            got = self.given_memo[key] = given_arguments(self.interp, fv, node, world) if isinstance(
                node, (ast.FunctionDef, ast.AsyncFunctionDef)) else {}
        return got

    def getfixturevalue_literals(self, fv: FuncV) -> list[str] | None:
        """The literal names a test function passes to `request.getfixturevalue` (None: it never calls it);
        memoised per function."""
        key = (fv.rel, fv.pos)
        if key not in self.by_name_memo:
            node = self.source.module(fv.rel).defs.get(fv.pos)
            calls = [c for c in ast.walk(node) if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute)
                     and c.func.attr == "getfixturevalue"] if node is not None else []
            self.by_name_memo[key] = [c.args[0].value for c in calls if c.args and isinstance(
                c.args[0], ast.Constant) and isinstance(c.args[0].value, str)] if calls else None
        return self.by_name_memo[key]

    def _module_hooks(self, rel: str, item: TestItem, hooks: tuple[tuple[str, ...], ...], world: int) -> list[
            Finding]:
        """The findings of the test module's xunit-style hooks that pytest runs around this test (`setup_module`,
        unittest's `setUpModule`, `setup_function` for a plain function; their teardowns): a skip there skips
        the test, a CUDA use there fails it."""
        env = self.interp.module_state(rel, world, tuple(h for group in hooks for h in group)).env
        out: list[Finding] = []
        for group in hooks:
            if group[0].endswith("_function") and item.classes:
                continue  # (pytest calls setup_function/teardown_function for module-level functions only)
            hook = next((h for h in group if h in env), None)
            h = env.get(hook) if hook else None
            if not isinstance(h, FuncV):
                continue
            node = self.source.module(h.rel).defs.get(h.pos)
            params = len(node.args.posonlyargs) + len(node.args.args) if isinstance(
                node, (ast.FunctionDef, ast.AsyncFunctionDef)) else 0
            res = self.interp.call_function(h, [UNK] * min(params, 1), {}, world, 1)
            out.extend(f.prefixed(step(rel, item.line, f"{hook}()")) for f in res.findings)
        return out

    def decorator_patches(self, rel: str, item: TestItem, world: int) -> tuple[tuple[str, Value], ...]:
        """The test state the test's patch decorators and its classes' put in place for its body. A class's applies
        to the test methods the class has when made (patched_by): marks are shared by tests of one shape, so those
        of classes that do not patch this test are left out here."""
        patches = [m for m, _ in self.item_marks(rel, item, world, [])[0] if patch_owner(m) is not None]
        if not patches:
            return ()
        foreign = {(c.rel, *c.pos) for cls in item.classes for c in self.interp.mro(cls, world)
                   if isinstance(c, ClassV) and not self.patched_by(c, item, world)}
        return patch_stores(m for m in patches if patch_owner(m) not in foreign)

    def mock_arguments(self, item: TestItem, requested: tuple[str, ...]) -> tuple[str, ...]:
        """The parameters `@mock.patch(...)` decorators hand their mocks to, which pytest does not take for fixtures
        (its num_mock_patch_args): the first requested ones, one per patch without `new`, of the def and of its
        classes (a class decorator patches each `test*` method)."""
        nodes = [self.source.module(item.func.rel).defs.get(item.func.pos)]
        nodes += [self.interp.class_node(c) for cls in item.classes for c in self.interp.mro(cls, 0)
                  if isinstance(c, ClassV) and self.patched_by(c, item, 0)]
        n = sum(passes_mock(d) for node in nodes for d in getattr(node, "decorator_list", ()))
        return requested[:n]

    def patched_by(self, cls: ClassV, item: TestItem, world: int) -> bool:
        """Whether a patch decorator of class `cls` applies to the test: it patches the `test*` methods the class has
        when it is made (its own and inherited ones), not those a subclass defines."""
        return not item.classes or any(isinstance(c, ClassV) and self._written_inside(item.func, c)
                                       for c in self.interp.mro(cls, world))

    def body_inert(self, item: TestItem, call_kwargs: dict[str, Value], self_v: Value | None, world: int) -> bool:
        """Whether running the test body with these arguments provably yields no finding (inert.py): then it
        is not interpreted. A method that uses its instance needs its whole class (and the instance's) inert."""
        if not self.prove_inert or item.func.captured:
            return False
        p = self.inert
        if not all(p.value_plain(v, world) for v in call_kwargs.values()):
            return False
        if self_v is None:
            return item.func.cls is None and p.callable_inert(item.func, world)
        if item.func.cls is not None and p.method_inert(item.func, world):
            return True
        if not isinstance(self_v, Inst) or not all(p.value_plain(v, world) for _, v in self_v.attrs):
            return False
        classes = {*item.classes, self_v.cls, *([item.func.cls] if item.func.cls is not None else [])}
        if not any(self._written_inside(item.func, c) for c in classes):
            # a method given to the class from outside its text (`setattr(TestX, "test_y", lambda self: ...)`): the
            # class' text says nothing of it
            return False
        return all(p.callable_inert(c, world) for c in sorted(classes, key=lambda c: (c.rel, c.pos)))

    def _written_inside(self, fv: FuncV, cls: ClassV) -> bool:
        """Whether the def of `fv` lies in the text of class `cls`'s body."""
        node = self.source.module(cls.rel).defs.get(cls.pos)
        return fv.rel == cls.rel and isinstance(node, ast.ClassDef) and node.lineno <= fv.pos[0] <= (
            node.end_lineno or node.lineno)

    def may_be_quiet(self, rel: str, item: TestItem) -> bool:
        """Whether quiet_case can apply to the item's cases: a module-level test function, not generated,
        whose body is inert (memoised per function), in a module without xunit hooks (`setup_module`...)."""
        return not (item.classes or item.bindings or item.marks or item.requirement or item.fallback
                    or not self.prove_inert or item.func.captured or self.has_module_hooks(rel)) and \
            self.inert.callable_inert(item.func, 0)

    def has_module_hooks(self, rel: str) -> bool:
        env = self.interp.module_state(rel, 0).env
        return any(h in env for group in (*MODULE_SETUP, *MODULE_TEARDOWN) for h in group)

    def quiet_case(self, rel: str, item: TestItem, direct: dict[str, Value], choice: dict[str, ParamCase],
                   case_marks: list[Value]) -> Verdict | None:
        """The verdict of a case of an item that may_be_quiet, without the general machinery, when its marks,
        parameters and fixtures yield no finding. None: take the general path (budgeted_case), which gives the
        same verdict for such a case, only slower."""
        if case_marks or self.interp.steps >= self.interp.limit or self.item_hooks.of(rel, 0):
            return None  # (the caller asked may_be_quiet(rel, item); conftest item hooks may skip it by its marks)
        key = self.context_key(rel, item, direct, choice, 0)
        known = self.context_memo.get(key) if key is not None else None
        if known is not None:  # what case_context under CASE_BUDGET would give, without the calls
            if known.cost > CASE_BUDGET:
                return None
            ctx, cost = known, known.cost
        else:
            try:
                ctx, cost = self.interp.budgeted(CASE_BUDGET, self.case_context, rel, item, direct, choice, 0)
            except BudgetExceeded:
                return None
        if ctx.findings or ctx.fixture_findings or ctx.wrappers:
            return None
        # the body is inert (checked above) when every value it is called with is plain (body_inert)
        plain = self.inert.value_plain
        args = self.fixtures.fixture_args(item.func)
        if not all(plain(v, 0) for k, v in ctx.kwargs.items() if k in args):
            return None
        if direct:
            params = self.fixtures.param_names(item.func)
            if not all(plain(v, 0) for k, v in direct.items() if k in params):
                return None
        self.fixture_modules.update(ctx.fixture_modules)
        self.interp.steps += cost
        got = self.quiet_verdicts.get(item.line)  # (one per test function: its cases share it)
        if got is None:
            got = self.quiet_verdicts[item.line] = _nothing_found(rel, item)
        return got

    def joined_cases(self, rel: str, item: TestItem, suffixes: list[tuple[str, int]],
                     first: dict[str, CaseValues], extra: list[Finding]) -> dict[str, dict[str, Verdict]]:
        """Verdicts of cases settled by one analysis for many, by suffix and part: "here" the test a machine
        without GPUs collects (a case's own verdict, unless its id names another case there), "there" the one a
        machine with GPUs collects in its place or besides (classify_case). Cases that share their part, marks,
        argument names and fixture parameters with marks are analysed once with each argument, and each other fixture
        parameter (`request.param`), bound to the join of their values.
        The analysis follows every value a joined argument may take (an undecided branch runs both ways, a call of
        a choice calls each), so what it finds bounds what each case would find:

        * "here": a run's first case is analysed on its own; when it finds nothing, the others are analysed
          joined, and nothing found (or only IMPORTS, which decides no label alone) settles each as "no GPU use
          found", the verdict its own analysis gives;
        * "there": the case needs the GPUs of the world that collects it (a requirement, ONLY_THERE or
          NAMED_THERE); when the joined analysis finds nothing that could add GPUs, memory, skips or another
          requirement, each case's verdict is that requirement's.

        What a joined value loses on the way is not followed: an operation the analysis cannot compute gives
        UNRESOLVED, and calling that (`getattr(m, name)()`, `import_module(name).f()`) counts as a loss
        (code_lost), unless the first case alone, and cases showing each other value, lose at the same sites
        (_lost_by_every_value). Anything else, a budget exceeded, or a join that is itself UNRESOLVED leaves the
        cases to runs of one fixture parameter set each, and a set whose run fails to be analysed one by one, its
        later runs too."""
        if not self.join_cases or extra or len(suffixes) < JOIN_MIN_CASES or self.item_hooks.of(rel, 0) or \
                self.getfixturevalue_literals(item.func) is not None:
            return {}  # (a fixture asked for by a parameter's name: by_name_fixtures needs each case's own)
        groups: dict[tuple[object, ...], list[tuple[str, CaseValues]]] = {}
        named: set[str] = set()  # ids that name another case on a machine with GPUs: two parts each
        for suffix, first_world in suffixes:
            units: list[tuple[str, int]] = [("there", first_world)] if first_world else \
                [("there", 1), ("here", 0)] if self.named_twice(rel, item, suffix) else [("here", 0)]
            if len(units) == 2:
                named.add(suffix)
            for part, world in units:
                values = first[suffix] if part == "here" else self.parametrization(rel, item, world, suffix)
                if values is None:
                    continue
                direct, choice, marks = values
                # a case whose argument names an accelerator (`device="cuda"`) would make its group find a GPU use:
                # it joins only cases of the same device (the CPU cases of a device parametrization on their own)
                accelerators = tuple(v if _names_accelerator(v) else None
                                     for _, v in sorted(_joinable(values).items()))
                text = "" if part == "here" else ONLY_THERE if first_world else NAMED_THERE  # (the requirement's)
                # fixture parameters with marks are the group's own (their marks are evaluated per case); the others
                # join like arguments (_joinable)
                kept = tuple(sorted((k, c) for k, c in choice.items() if not _joinable_param(c)))
                key = (part, world, text, kept, tuple(sorted(choice)), tuple(marks), tuple(sorted(direct)),
                       accelerators)
                try:
                    hash(key)
                except TypeError:
                    continue
                groups.setdefault(key, []).append((suffix, values))
        out: dict[str, dict[str, Verdict]] = {}
        for (part, world, text, *_), members in groups.items():
            self._settle_group(rel, item, (part, world, text), members, extra, named, out)
        return out

    def _settle_group(self, rel: str, item: TestItem, unit: tuple[str, int, str],
                      members: list[tuple[str, CaseValues]], extra: list[Finding], named: set[str],
                      out: dict[str, dict[str, Verdict]]) -> None:
        """joined_cases for one group (`unit`: its part, world and requirement text), into `out`: runs across
        fixture parameter sets first; once one fails, runs of one set each, and once such a run fails, that set's
        cases one by one (what made it fail, a skip for some configurations, code it could not follow, is most often
        in its later runs too). A group none of whose runs settled anything after JOIN_GIVE_UP sets failed is left
        case by case (backpack's `test_param_mjp`: 240 runs of one problem each, each losing `request.node`)."""
        part, world, text = unit
        heads_lost: dict[str, frozenset[str]] = {}  # what the analysis of each run's first case alone lost

        def settle(run: list[tuple[str, CaseValues]]) -> bool:
            settled = self._joined_here(rel, item, run, extra, named, out, heads_lost) if part == "here" else \
                self._joined_there(rel, item, run, world, text)
            for suffix, v in settled.items():
                out.setdefault(suffix, {})[part if suffix in named else "case"] = v
            return bool(settled)

        across = True  # runs across fixture parameter sets are still tried
        settled_any = False
        failed: set[tuple[tuple[str, ParamCase], ...]] = set()  # the sets whose own run failed
        for chunk in _joinable_chunks([_joinable(values) for _, values in members],
                                      tuple(sorted(_joinable(members[0][1])))):
            run = [members[i] for i in chunk]
            if len(run) < JOIN_MIN_CASES:
                continue
            by_choice: dict[tuple[tuple[str, ParamCase], ...], list[tuple[str, CaseValues]]] = {}
            for member in run:
                by_choice.setdefault(tuple(sorted(member[1][1].items())), []).append(member)
            if across:
                if settle(run):
                    settled_any = True
                    continue
                across = False
                if len(by_choice) == 1:  # (that was the set's own run)
                    failed.update(by_choice)
                    continue
            for choice, sub in by_choice.items():
                if choice in failed or len(sub) < JOIN_MIN_CASES:
                    continue
                if settle(sub):
                    settled_any = True
                    continue
                failed.add(choice)
                if not settled_any and len(failed) >= JOIN_GIVE_UP:
                    return

    def _joined_here(self, rel: str, item: TestItem, run: list[tuple[str, CaseValues]], extra: list[Finding],
                     named: set[str], out: dict[str, dict[str, Verdict]],
                     heads_lost: dict[str, frozenset[str]]) -> dict[str, Verdict]:
        """joined_cases' "here" part of one run: the first case on its own (its verdict kept in `out`, what it lost
        in `heads_lost`) unless its id is `named` twice, then, when it found nothing, the others joined (one that
        finds something says the join would too: the join follows every value of that case). The cases settled,
        empty if none."""
        nothing = _nothing_found(rel, item)
        first = run[0]
        head = first[0]
        head_lost: frozenset[str] = frozenset()
        if head not in named:
            got = out.get(head, {}).get("case")  # (analysed already when a larger run it led failed)
            if got is None:
                got = out.setdefault(head, {})["case"] = self.budgeted_case(rel, item, head, extra)
                # (a verdict of nothing found comes from one analysis, in world 0: no skip sent it to other worlds)
                heads_lost[head] = frozenset(self.interp.lost)
            if got != nothing:
                return {}
            head_lost = heads_lost.get(head, frozenset())
            run = run[1:]
        findings = self._joined_findings(rel, item, [values for _, values in run], head_lost)
        if findings is None or any(f.kind != IMPORTS for f in findings):
            # (IMPORTS: code reached a package whose objects a guarded branch may ask about; no label by itself,
            # nor with any part of these findings, IF_IMPORTED absent)
            return {}
        lost = self.code_lost(rel)  # (the join's, each where the head alone lost too: _joined_findings)
        if lost and not self._lost_by_every_value(rel, item, first, run, lost, extra, named, out):
            return {}
        return {suffix: nothing for suffix, _ in run}

    def _lost_by_every_value(self, rel: str, item: TestItem, first: tuple[str, CaseValues],
                             run: list[tuple[str, CaseValues]], lost: frozenset[str], extra: list[Finding],
                             named: set[str], out: dict[str, dict[str, Verdict]]) -> bool:
        """Whether code a join lost where its first case alone lost it too (`lost`) is lost by a case alone for
        each value of each argument: cases of `run` that show a value the ones analysed so far did not are analysed
        alone (their verdicts kept in `out`), and each must find nothing and lose all of `lost`. A loss that one
        value makes (`importlib.import_module(mod).build()`, a module without `build` in the first case) is then
        seen not to be lost by the case of another value, which follows that code. At most JOIN_COVER_SHARE of the
        run is analysed so."""

        def values_by_name(values: CaseValues) -> dict[str, object]:
            # (`1 == True` in Python, not here; the values of a run are hashable: _joinable_chunks sets them)
            return {name: (type(getattr(v, "value", None)), v) for name, v in _joinable(values).items()}

        seen: dict[str, set[object]] = {name: {key} for name, key in values_by_name(first[1]).items()}
        todo = [(suffix, values_by_name(values)) for suffix, values in run]
        budget = int(len(run) * JOIN_COVER_SHARE)
        while True:  # (greedily: the case that shows the most values not seen yet, the first of those)
            best = max(((len(new), -i, suffix, new) for i, (suffix, keys) in enumerate(todo)
                        if (new := [(n, k) for n, k in keys.items() if k not in seen.setdefault(n, set())])),
                       default=None)
            if best is None:
                return True
            _, _, suffix, new = best
            budget -= 1
            if budget < 0 or suffix in named:
                return False
            got = out.setdefault(suffix, {})["case"] = self.budgeted_case(rel, item, suffix, extra)
            if got != _nothing_found(rel, item) or not lost <= frozenset(self.interp.lost):
                return False  # (a verdict of nothing found: world 0's analysis only, so interp.lost is its)
            for name, key in new:
                seen[name].add(key)

    def _joined_there(self, rel: str, item: TestItem, run: list[tuple[str, CaseValues]], world: int,
                      text: str) -> dict[str, Verdict]:
        """joined_cases' "there" part of one run: each case needs `world` GPUs (its requirement, `text`), and the
        joined analysis finds nothing that adds to it (a GPU use of more GPUs, memory, a skip, a requirement of its
        own, a manual label, an error): each verdict is the requirement's. The cases settled, empty if none."""
        findings = self._joined_findings(rel, item, [values for _, values in run])
        if findings is None or not all(
                f.kind in (IMPORTS, UNKNOWN, GUARDED, MOCK) or f.kind == GPU and f.key != "requirement" and
                f.gpu_count <= world and not f.vram_gb for f in findings):
            return {}
        default = step(rel, item.line, "no GPU use found")
        return {suffix: decide(mark_findings([ReqV(world, 0, step(rel, item.line, f"parametrization {suffix} {text}"))],
                                             step(rel, item.line, "parameter marks")), {}, default)
                for suffix, _ in run}

    def _joined_findings(self, rel: str, item: TestItem, cases: list[CaseValues],
                         head_lost: frozenset[str] = frozenset()) -> list[Finding] | None:
        """The findings of one analysis (in world 0) of these cases, which share their marks, each argument and
        fixture parameter bound to the join of their values (_joined_choice); None when it cannot stand for them: a
        join UNRESOLVED, the budget exceeded, or code lost on the way (code_lost) where the analysis of the run's
        first case alone did not lose it (`head_lost`)."""
        # (the cases share their argument names: joined_cases groups by them)
        # (each distinct value once: a run of a thousand cases has a handful, and joining one again changes nothing)
        joined = {n: join_all(list(dict.fromkeys(direct[n] for direct, _, _ in cases))) for n in cases[0][0]}
        choice = _joined_choice([choice for _, choice, _ in cases])
        # (an argument unknown alike in every case is bound as each case's own analysis binds it)
        if any(isinstance(v, Unresolved) and any(direct[n] != v for direct, _, _ in cases)
               for n, v in joined.items()) or choice is None or \
                self.interp.steps >= self.interp.limit:
            return None
        marks = cases[0][2]
        try:
            findings, cost = self.interp.budgeted(CASE_BUDGET, self.analyse_case, rel, item, joined, choice,
                                                  list(marks), 0)
        except BudgetExceeded:
            findings, cost = None, OVER_BUDGET_CHARGE
        self.interp.steps += cost
        return None if findings is None or not self.code_lost(rel) <= head_lost else findings

    def code_lost(self, rel: str) -> frozenset[str]:
        """What the analysis just run lost of code (InterpBase.lost, by site: lost_entry): calls of a value it could
        not resolve, and methods of one that code rel imports defines. What that value is in a case of its own may
        be that code, so a joined analysis that lost code settles nothing, unless the analysis of its first case
        alone lost it at the same sites and cases showing each other value do too (_lost_by_every_value:
        `self._covariances[name].det()` with a dict the analysis cannot fill, in every case)."""
        if not self.interp.lost:
            return frozenset()
        got = self.defined_names.get(rel)
        if got is None:
            deps = self.source.file_deps(rel)
            got = self.defined_names[rel] = frozenset(
                node.name for d in deps for node in self.source.module(d).defs.values()
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)))
        return frozenset(e for e in self.interp.lost if (name := lost_name(e)) == CALLED_UNRESOLVED or name in got)

    @staticmethod
    def _over_budget(rel: str, item: TestItem, limit: int, where: str) -> Verdict:
        return Verdict("unknown", 0, 0, (step(rel, item.line, f"analysis budget exceeded ({limit} steps) in "
                                                              f"{where}"),))

    def budgeted_case(self, rel: str, item: TestItem, suffix: str | None, extra: list[Finding],
                      first_world: int = 0, given: CaseValues | None = None,
                      parts: dict[str, Verdict] | None = None) -> Verdict:
        """classify_case within CASE_BUDGET steps, charged to the file's budget; past either, `unknown`."""
        if self.interp.steps >= self.interp.limit:
            return self._over_budget(rel, item, FILE_BUDGET, rel)
        try:
            v, cost = self.interp.budgeted(CASE_BUDGET, self.classify_case, rel, item, suffix, extra, first_world,
                                           given, parts)
        except BudgetExceeded:
            v, cost = self._over_budget(rel, item, CASE_BUDGET, item.func.name), OVER_BUDGET_CHARGE
        self.interp.steps += cost
        return v

    def classify_case(self, rel: str, item: TestItem, suffix: str | None, extra: list[Finding],
                      first_world: int = 0, given: CaseValues | None = None,
                      parts: dict[str, Verdict] | None = None) -> Verdict:
        """Label one parametrization (its id suffix in parametrizations(), None: the bare test). A case that
        exists only from world `first_world` on (`DEVICES.append("cuda")` under `torch.cuda.is_available()`)
        is analysed with that world's values and needs its GPUs. An id that names another case on a machine
        with GPUs (`device0` of `[cuda:0, cpu]` there, of `[cpu]` here) is two tests under one key: the one
        a GPU machine collects must run on a GPU runner, so it is labelled like a case that exists only there;
        the one a machine without GPUs collects is analysed on its own, and a CPU test there says so
        (`cpu_without_gpus`: the runner decides by what the test process sees). `given`: the case's values, for a
        case its suffix does not single out (an id the analysis cannot spell), taken in every world. `parts`: the
        verdicts of the two tests of such an id that joined_cases settled already ("there", "here")."""
        if given is not None:
            return self._classify_case(rel, item, suffix, extra, first_world, given=given)
        if suffix is None or first_world or not self.named_twice(rel, item, suffix):
            return self._classify_case(rel, item, suffix, extra, first_world)
        parts = parts or {}
        there = parts.get("there") or self._classify_case(rel, item, suffix, extra, 1, NAMED_THERE)
        here = parts.get("here") or self._classify_case(rel, item, suffix, extra, 0, values_from_cpu_world=True)
        if here.label != "cpu":
            return join_verdicts(there, here)
        without = step(rel, item.line, f"on a machine without GPUs, {suffix} is this CPU case: {here.reasons[-1]}")
        return Verdict(there.label, there.gpu_count, there.vram_gb, (*there.reasons, without), there.label != "cpu")

    def named_twice(self, rel: str, item: TestItem, suffix: str) -> bool:
        """Whether a machine with a GPU collects another case under this id than one without (its values in
        the first GPU world differ from the CPU world's); only for tests whose values may depend on the world."""
        if not self.world_dependent(rel, item):
            return False
        here = self.parametrization(rel, item, 0, suffix)
        there = self.parametrization(rel, item, WORLDS[0], suffix)
        if here is None or there is None:
            return False

        def values(case: tuple[dict[str, Value], dict[str, ParamCase], list[Value]]) -> tuple[object, ...]:
            # the parameters' values, not the marks: a mark evaluated per world (a skipif on CUDA) is that
            # world's view of the same case
            return tuple(sorted(case[0].items())), tuple(sorted((k, p.bindings) for k, p in case[1].items()))

        a, b = values(here), values(there)
        # (by repr too: a NaN computed in each world is not equal to itself, `float("nan")` is the same case)
        return a != b and repr(a) != repr(b)

    def _classify_case(self, rel: str, item: TestItem, suffix: str | None, extra: list[Finding],
                       first_world: int = 0, only_there: str = ONLY_THERE, values_from_cpu_world: bool = False,
                       given: CaseValues | None = None) -> Verdict:
        """classify_case's analysis of one case; `values_from_cpu_world`: the case a machine without GPUs collects,
        with its values in every world (else each world's own values, as its skips are checked); `given`: these
        values in every world."""

        def case(world: int) -> CaseValues:
            if given is not None:
                return given
            if suffix is None:
                return {}, {}, []
            for w in dict.fromkeys((0,) if values_from_cpu_world else (max(world, first_world), first_world)):
                got = self.parametrization(rel, item, w, suffix)
                if got is not None:
                    return got
            return {}, {}, []

        direct, choice, case_marks = case(0)
        if first_world:
            case_marks = [*case_marks, ReqV(first_world, 0, step(rel, item.line, f"parametrization {suffix} "
                                                                 f"{only_there}"))]
        findings = self.analyse_case(rel, item, direct, choice, case_marks, 0, suffix=suffix) + extra
        skips = {f.key for f in findings if f.kind == SKIP}
        # skips a machine without GPUs certainly reaches: where a GPU world reaches one only on a path the analysis
        # cannot decide (`if config.get("skip_reason")` set by a fixture from the GPU count and the OS), the test
        # may run there, and it never runs here
        certain = {f.key for f in findings if f.kind == SKIP and not f.maybe}
        gpu_skips: dict[str, int] = {}
        if skips:
            remaining = set(skips)
            for i, w in enumerate(WORLDS):
                # skips that are all marks are settled by the context alone (MARK_SKIP_KEY)
                body = not all(k.startswith(MARK_SKIP_KEY) for k in remaining)
                values = case(w)
                reads_before = self.interp.world_reads
                fw = self.analyse_case(rel, item, *values, w, body, suffix)
                surely = {f.key for f in fw if f.kind == SKIP and not f.maybe}
                present = {f.key for f in fw if f.kind == SKIP and f.key in remaining
                           and (f.key in surely or f.key not in certain)}
                for k in remaining - present:
                    gpu_skips[k] = w
                remaining = present
                if not remaining:
                    break
                # an analysis the world decided nothing in finds the same in every later world given the same
                # values and the same `body`: those worlds would keep every remaining skip. (Checked against the
                # last world too: a memo table that does not report its reads of the world would hide one.)
                later = WORLDS[i + 1:]
                if len(later) > 1 and self.interp.world_reads == reads_before and body == (
                        not all(k.startswith(MARK_SKIP_KEY) for k in remaining)) and all(
                        values == case(v) for v in later) and self.analyse_case(
                        rel, item, *case(later[-1]), later[-1], body, suffix) == fw:
                    break
            everywhere = {k for k in remaining & certain if k.endswith(GPU_REASON) and not k.startswith(MARK_SKIP_KEY)}
            findings += [Finding(GPU, (*f.steps[:-1], f.steps[-1] + SKIPPED_EVERYWHERE), 1, f.vram_gb, "requirement")
                         for f in findings if f.kind == SKIP and f.key in everywhere]  # (marks: evidence.decide)
        return decide(findings, gpu_skips, step(rel, item.line, "no GPU use found"))

    def _function_key(self, rel: str, item: TestItem, params: list[
            tuple[str, dict[str, Value], dict[str, ParamCase], list[Value]]], extra: list[Finding]) -> Verdict:
        """One verdict for every parametrization of a test whose ids cannot all be computed: the join of its cases
        (gpu if any is), each analysed with its own values, under the function's own key. (Cases whose ids are
        unknown share one suffix: looking a case up by it found the first only, and a CUDA case after a CPU one was
        lost.)"""
        distinct: dict[tuple[object, ...], tuple[str, CaseValues]] = {}
        for sfx, direct, choice, marks in params:
            key = (tuple(sorted(direct.items(), key=lambda kv: kv[0])),
                   tuple(sorted(choice.items(), key=lambda kv: kv[0])), tuple(marks))
            distinct.setdefault(key, (sfx, (direct, choice, marks)))
        verdicts = [self.budgeted_case(rel, item, sfx, extra, given=case) for sfx, case in distinct.values()]
        v = functools.reduce(join_verdicts, verdicts)
        note = step(rel, item.line, f"{item.func.name}: parametrize ids cannot be computed statically; this "
                                    "function-level key covers them")
        return Verdict(v.label, v.gpu_count, v.vram_gb, (note, *v.reasons))

    def suffixes_in_all_worlds(self, rel: str, item: TestItem, params: list[
            tuple[str, dict[str, Value], dict[str, ParamCase], list[Value]]]) -> list[tuple[str, int]]:
        """(id suffix, first world that collects it): world 0's, then those only a machine with GPUs collects
        (`DEVICES = ["cpu"]; if torch.cuda.is_available(): DEVICES.append("cuda")` gives `[cuda]` there).
        Worlds beyond the first are looked at only when the first one adds a case."""
        out = {p[0]: 0 for p in params}
        if not self.world_dependent(rel, item):
            return list(out.items())
        for w in WORLDS:
            added = False
            for sfx, *_ in self.parametrizations(rel, item, w) or ():
                if sfx not in out and UNKNOWN_ID not in sfx:  # (an id not spelled: the rest of the file's label)
                    out[sfx] = w
                    added = True
            if not added and w == WORLDS[0]:
                break
        return list(out.items())

    def world_dependent(self, rel: str, item: TestItem) -> bool:
        """Whether the parametrization values may differ between worlds: a parametrize mark or parametrized
        fixture whose values are names (not literals) — literal lists are the same everywhere."""
        if item.unittest:
            return False
        if not self.literal_decorators(item.func.rel, item.func.pos) or not all(
                self.literal_decorators(c.rel, c.pos) for c in item.classes):
            return True
        key = (rel, item.classes)
        got = self.fixture_world_memo.get(key)
        if got is None:
            got = self.fixture_world_memo[key] = any(
                fx.params and not fx.plugin_rank and not self.literal_decorators(fx.fv.rel, fx.fv.pos)
                for t in self.fixtures.scopes(rel, item) for fx in t.values())
        return got

    def literal_decorators(self, rel: str, pos: tuple[int, int]) -> bool:
        """Whether every decorator of the def at (rel, pos) is literal-only (_literal_only); memoised."""
        key = (rel, pos)
        got = self.literal_memo.get(key)
        if got is None:
            decos = getattr(self.source.module(rel).defs.get(pos), "decorator_list", ())
            got = self.literal_memo[key] = all(_literal_only(d) for d in decos)
        return got

    def parametrizations(self, rel: str, item: TestItem, world: int = 0) -> list[
            tuple[str, dict[str, Value], dict[str, ParamCase], list[Value]]] | None:
        """(id suffix, direct bindings, fixture param choice, marks) per parametrization; None: one bare key."""
        key = (self.shape(rel, item, world), world)
        if key not in self.param_memo:
            try:
                self.param_memo[key] = self._parametrizations(rel, item, world)
            except _TooManyCases as exc:
                self.param_memo[key], self.over_bound[key] = None, (exc.total, exc.suffixes)
        return self.param_memo[key]

    def parametrization(self, rel: str, item: TestItem, world: int, suffix: str) -> tuple[
            dict[str, Value], dict[str, ParamCase], list[Value]] | None:
        """The (direct bindings, fixture param choice, marks) of parametrizations()'s first case with this id
        suffix; None if it has none."""
        key = (self.shape(rel, item, world), world)
        index = self.case_index.get(key)
        if index is None:
            index = self.case_index[key] = {}
            for sfx, direct, choice, marks in self.parametrizations(rel, item, world) or ():
                index.setdefault(sfx, (direct, choice, marks))
        return index.get(suffix)

    def cases_over_bound(self, rel: str, item: TestItem) -> tuple[int, list[str] | None] | None:
        """How many cases a test has whose parametrizations() gave None for exceeding MAX_CASES, and their id
        suffixes when they can be spelled; else None."""
        return self.over_bound.get((self.shape(rel, item, 0), 0))

    def _parametrizations(self, rel: str, item: TestItem, world: int) -> list[
            tuple[str, dict[str, Value], dict[str, ParamCase], list[Value]]] | None:
        if item.unittest:
            return [("", {}, {}, [])]
        marks, _ = self.item_marks(rel, item, world, [])
        dims: list[list[ParamCase]] = []
        direct_names: set[str] = set()
        for m, _where in marks:
            if isinstance(m, MarkV) and m.name == "parametrize":
                cases = self._mark_cases(m, world)
                if cases is None:
                    return None
                dims.append(cases)
                direct_names.update(n for n, _ in cases[0].bindings)
        tables = self.fixtures.scopes(rel, item)
        autouse = [fx.name for t in reversed(tables) for fx in t.values() if fx.autouse]
        # pytest's closure: autouse, then `@pytest.mark.usefixtures(...)` (their params make ids too), then args
        usefixtures = [str(a.value) for m, _ in marks if isinstance(m, MarkV) and m.name == "usefixtures"
                       for a in m.args if isinstance(a, Const)]
        args = self.fixtures.fixture_args(item.func)
        initial = [*autouse, *usefixtures, *(a for a in args if a not in direct_names)]
        closure = self.fixtures.closure_names(tables, initial)
        found = self.fixtures.closure_fixtures(tables, closure)
        early: list[list[ParamCase]] = []
        late: list[list[ParamCase]] = []  # deeper conftests' hooks
        at_start: list[list[ParamCase]] = []  # the hooks of conftests every run loads at the start
        if self.hooks.has_hooks(rel, item.classes, world):
            names = list(dict.fromkeys([*autouse, *usefixtures, *args, *closure]))
            calls = self.hooks.calls(rel, item.classes, item.func, names, world)
            for hook_marks, into in ((calls.early, early), (calls.conftest, late), (calls.initial, at_start)):
                for m in hook_marks if hook_marks is not None else ():
                    cases = self._mark_cases(m, world)
                    if cases is None:
                        return None
                    into.append(cases)
                    direct_names.update(n for n, _ in cases[0].bindings)
            if calls.early is None or calls.conftest is None or calls.initial is None:
                # a hook whose calls are not known: the test is keyed by its function (classify_file)
                early.append([ParamCase(UNKNOWN_ID, (), ())])
        fx_dims: list[tuple[str, list[ParamCase]]] = []
        closure = [self.fixtures.fixture_in(fx, world) if fx.params else fx for fx in found]
        if self.pytest_torch:
            plugin = self.fixtures.module_fixtures(PYTEST_TORCH_REL)
            closure = [Fixture(fx.name, fx.fv, fx.autouse, fx.scope_rank, plugin[fx.name].params, fx.where,
                               plugin[fx.name].plugin_rank)
                       if fx.name in ("torch_device", "torch_dtype") and fx.params is None and not fx.plugin_rank
                       else fx for fx in closure]
        for fx in sorted(closure, key=lambda f: f.plugin_rank):
            if fx.params is not None and fx.name not in direct_names:
                if not fx.params:
                    return None
                params = list(fx.params)
                if fx.plugin_rank and fx.name == "torch_dtype":
                    params = self._torch_dtypes(marks) or params
                fx_dims.append((fx.name, params))
        if late and fx_dims:
            # a deeper conftest's hook runs before or after the fixture manager depending on when pytest registered
            # its conftest (see hooks.py): the order of the ids is not known
            late.append([ParamCase(UNKNOWN_ID, (), ())])
        # pytest's call order (hooks.py): class and module hooks, deeper conftest hooks, parametrized fixtures,
        # the hooks of conftests loaded at the start, marks; each call's ids follow the earlier ones' and its cases
        # vary fastest
        ordered: list[tuple[str | None, list[ParamCase]]] = [
            *((None, d) for d in early), *((None, d) for d in late), *fx_dims, *((None, d) for d in at_start),
            *((None, d) for d in dims)]
        total = 1
        for _, d in ordered:
            total *= max(len(d), 1)
        if total > MAX_CASES:
            spelled = total <= MAX_SPELLED_IDS and not self.hooks.tested_keywords(rel, world) and not any(
                c.marks or UNKNOWN_ID in c.id for _, d in ordered for c in d)
            raise _TooManyCases(total, [f"[{'-'.join(c.id for c in combo)}]" for combo in itertools.product(
                *(d for _, d in ordered))] if spelled else None)
        out = []
        for combo in itertools.product(*(d for _, d in ordered)):
            direct: dict[str, Value] = {}
            choice: dict[str, ParamCase] = {}
            cmarks: list[Value] = []
            for (fx_name, _), c in zip(ordered, combo, strict=True):
                if fx_name is not None:
                    choice[fx_name] = c
                else:
                    direct.update(dict(c.bindings))
                    cmarks.extend(c.marks)
            ident = "-".join(c.id for c in combo)
            cmarks.extend(self._keyword_marks(rel, item, ident, world, [*(m for m, _ in marks), *cmarks]))
            suffix = f"[{ident}]" if combo else ""
            out.append((suffix, direct, choice, cmarks))
        return out

    def _keyword_marks(self, rel: str, item: TestItem, ident: str, world: int, has: list[Value]) -> list[Value]:
        """The GPU requirement of a marker a case's id spells when a conftest hook matches item.keywords against
        it (sbi: `"gpu" in item.keywords` also holds for `test_process_device[gpu]`); none where the marks the
        case `has` already require as many GPUs by hand (`pytest.param("gpu", marks=pytest.mark.gpu)`)."""
        where = self.hooks.tested_keywords(rel, world).get(ident) if ident else None
        req = conventions.mark_requirement(ident, [], {}) if where is not None else None
        if req is None or req.gpu_count <= 0 or req.cpu or req.hint_only or any(
                (isinstance(m, MarkV) and m.name == ident) or (isinstance(m, Ext) and m.path == f"pytest.mark.{ident}")
                or (isinstance(m, ReqV) and m.manual and m.gpu_count >= req.gpu_count) for m in has):
            return []
        note = f"id [{ident}] is in item.keywords, which {MODIFY_HOOK} tests at {where}: {req.note}"
        return [ReqV(req.gpu_count, req.vram_gb, step(rel, item.line, note), req.manual)]

    def _mark_cases(self, m: MarkV, world: int) -> list[ParamCase] | None:
        """The cases of one parametrize mark (a decorator's or a hook's `metafunc.parametrize`); values or ids
        that cannot be evaluated give one UNKNOWN_ID case (the other dimensions, a device parametrization beside
        it, still count; the test is keyed by its function); None: argument names that cannot be evaluated."""
        argnames = m.args[0] if m.args else m.kw("argnames")
        argvalues = m.args[1] if len(m.args) > 1 else m.kw("argvalues")
        ids = m.args[2] if len(m.args) > 2 else m.kw("ids")
        # pytest iterates argvalues: an Enum class gives its members, a dict its keys
        values = self.interp.iteration(argvalues, world) if argvalues is not None else UNK
        cases = parametrize_cases(argnames or UNK, values, ids, idfn(self.interp, ids, world),
                                  instance_name(self.interp, world))
        if cases is None:
            names = param_argnames(argnames or UNK)
            if names is None:
                return None
            # values that cannot be computed (a registry filled by decorators): calling one is a dynamic dispatch
            where = m.where.rstrip(": ") or "parametrize"
            cases = [ParamCase(UNKNOWN_ID, tuple((n, UnknownParameter(f"{where}: {n}")) for n in names), ())]
        return cases

    @staticmethod
    def _torch_dtypes(marks: list[tuple[Value, str]]) -> list[ParamCase] | None:
        """pytest-torch's `@pytest.mark.torch_dtypes(...)` (closest mark): the torch_dtype parameters."""
        for m, _ in marks:
            if isinstance(m, MarkV) and m.name == DTYPES_MARK and m.args:
                names: list[str] = []
                for a in m.args:
                    if isinstance(a, Const) and isinstance(a.value, str):
                        names.append(a.value.replace("torch.", ""))
                    elif isinstance(a, Ext) and a.path.startswith("torch."):
                        names.append(a.path[len("torch."):])
                    else:
                        return None
                return [ParamCase(n, (("torch_dtype", Const(n)),), ()) for n in names]
        return None


    def classify_file(self, rel: str, deps: list[str] | None = None) -> FileResult:
        """Every test of rel with its verdict. `deps`: file_deps(rel), when the caller has it already."""
        pm = self.source.module(rel)
        if deps is None:
            deps = self.source.file_deps(rel)
        if pm.tree is None:
            return FileResult(rel, True, {}, pm.error, deps)
        broken = sorted(d for d in deps if d != rel and self.source.module(d).tree is None)
        extra = [Finding(ERROR, (step(d, 1, self.source.module(d).error or "cannot analyse"),)) for d in broken]
        self.fixture_modules = set()
        self.shape_memo.clear()
        self.quiet_verdicts.clear()
        # The file's budget: collection and parametrizations are charged as they run, each case what it took.
        self.interp.steps, self.interp.limit = 0, FILE_BUDGET
        try:
            items = collect_items(self.interp, rel)
            tests: dict[str, Verdict] = {}
            for item in items:
                try:
                    params = self.parametrizations(rel, item)
                except BudgetExceeded:
                    tests[item.key] = self._over_budget(rel, item, FILE_BUDGET, rel)
                    continue
                if item.fallback:
                    v = self.budgeted_case(rel, item, None, extra)
                    note = item.note or (f"{item.func.name}: generated test names cannot be computed statically; "
                                         "this class-level key covers them")
                    v = Verdict(v.label, v.gpu_count, v.vram_gb, (step(rel, item.line, note), *v.reasons))
                    tests[item.key] = join_verdicts(tests[item.key], v) if item.key in tests else v
                    continue
                if params is None:
                    v = self.budgeted_case(rel, item, None, extra)
                    over = self.cases_over_bound(rel, item)
                    if over is not None:
                        total, spelled = over
                        note = step(rel, item.line, f"{item.func.name}: {total:,} parametrizations, over the "
                                                    f"classifier's bound of {MAX_CASES:,} cases per test "
                                                    "(analyzer.MAX_CASES); " + (
                                                        "each id has this function-level verdict" if spelled else
                                                        "this function-level key covers them"))
                        v = Verdict(v.label, v.gpu_count, v.vram_gb, (note, *v.reasons))
                        for suffix in spelled or ():
                            tests[item.key + suffix] = v
                    tests[item.key] = v
                    continue
                unknown = [p for p in params if UNKNOWN_ID in p[0]]
                if unknown:
                    # the cases whose ids cannot be spelled share a function-level key, which covers every
                    # parametrization not listed separately; the others keep their exact ids
                    tests[item.key] = self._function_key(rel, item, unknown, extra)
                    params = [p for p in params if UNKNOWN_ID not in p[0]]
                    if not params:
                        continue
                try:
                    suffixes = self.suffixes_in_all_worlds(rel, item, params)
                except BudgetExceeded:
                    suffixes = [(sfx, 0) for sfx, *_ in params]
                first: dict[str, tuple[dict[str, Value], dict[str, ParamCase], list[Value]]] = {}
                for sfx, direct, choice, marks in params:
                    first.setdefault(sfx, (direct, choice, marks))
                may_be_quiet = not extra and self.may_be_quiet(rel, item)
                joined = {} if may_be_quiet else self.joined_cases(rel, item, suffixes, first, extra)
                for suffix, first_world in suffixes:
                    parts = joined.get(suffix, {})
                    quick = parts.get("case")
                    if not parts and may_be_quiet and not first_world:
                        quick = self.quiet_case(rel, item, *first[suffix])
                    tests[item.key + suffix] = quick or self.budgeted_case(rel, item, suffix, extra, first_world,
                                                                           parts=parts)
            import_needs_gpu = None if items else self.import_needs_gpu(rel)
        except RecursionError:
            return FileResult(rel, True, {}, "expression nesting too deep to analyse", deps)
        except BudgetExceeded as exc:
            return FileResult(rel, True, {}, f"{exc} collecting the tests", deps)
        imports_torch = self.source.imports_torch
        torch = imports_torch(rel) or any(imports_torch(u) for u in sorted(self.fixture_modules))
        if not torch:
            tests = {k: Verdict("cpu", 0, 0, (step(rel, 1, "does not import torch"),)) if v.label != "gpu" else v
                     for k, v in tests.items()}
        return FileResult(rel, torch, tests, None, deps, import_needs_gpu=import_needs_gpu)

    def import_needs_gpu(self, rel: str) -> Verdict | None:
        """For a file without tests: the `gpu` verdict of importing it on a machine without GPUs (its top level and
        its conftests' run at collection, as for a test's context), else None."""
        findings = [*self.interp.module_state(rel, 0, (MODULE_FINDINGS,)).findings]
        for c in self.source.conftests_for(rel):
            findings.extend(f.prefixed(step(c, 1, "conftest module"))
                            for f in self.interp.module_state(c, 0, (MODULE_FINDINGS,)).findings if f.kind == GPU)
        v = decide(findings, {}, step(rel, 1, "no GPU use found"))
        if v.label != "gpu":
            return None
        note = step(rel, 1, "no tests, but pytest imports the file to collect it and the import needs a GPU")
        return Verdict(v.label, v.gpu_count, v.vram_gb, (note, *v.reasons))


def _names_accelerator(v: Value) -> bool:
    """A parameter value that is (or may be) an accelerator device's name or a torch.device of one; numbers, which
    may index a device, do not count."""
    return any(isinstance(a, DeviceV) or isinstance(a, Const) and isinstance(a.value, str) and accel_device(a)
               for a in alternatives(v))


def _joinable_param(case: ParamCase) -> bool:
    """Whether cases may join on this fixture parameter: one value (`request.param`) and no marks."""
    return not case.marks and len(case.bindings) == 1


def _joinable(values: CaseValues) -> dict[str, Value]:
    """What joined_cases joins of a case: its arguments, and each fixture parameter without marks under a key no
    argument can have (`request.param of <fixture>`)."""
    direct, choice, _ = values
    return {**direct, **{f"request.param of {k}": c.bindings[0][1] for k, c in choice.items() if _joinable_param(c)}}


def _joined_choice(choices: list[dict[str, ParamCase]]) -> dict[str, ParamCase] | None:
    """The fixture parameters of a joined analysis: a parameter the cases share as it is (its fixture's memoised
    value is reused), else one whose value is the join of theirs; None when such a join is UNRESOLVED."""
    out: dict[str, ParamCase] = {}
    for name, first in choices[0].items():
        cases = [c[name] for c in choices]
        if all(c == first for c in cases):
            out[name] = first
            continue
        value = join_all([c.bindings[0][1] for c in cases])
        if isinstance(value, Unresolved):
            return None
        out[name] = ParamCase("|".join(dict.fromkeys(c.id for c in cases)), ((first.bindings[0][0], value),), ())
    return out


def _nothing_found(rel: str, item: TestItem) -> Verdict:
    """The verdict of a case whose analysis found nothing (what a joined analysis settles cases with)."""
    return Verdict("cpu", 0, 0, (step(rel, item.line, "no GPU use found"),))


def _joinable_chunks(directs: list[dict[str, Value]], names: tuple[str, ...]) -> list[list[int]]:
    """The cases (by index, in order; each its `_joinable` values: arguments and fixture parameters) cut into runs
    whose values of each name join without loss: at most MAX_ALTERNATIVES distinct values each (a larger join is
    UNRESOLVED), and an UNRESOLVED value only in a run where it is that name's one value (each case's own analysis
    sees that same unknown: _joined_findings binds it as it is)."""
    chunks: list[list[int]] = []
    seen: dict[str, set[Value]] | None = None  # the current run's values by argument; None: no run open
    for i, direct in enumerate(directs):
        if seen is None or any(direct[n] not in seen[n] and (len(seen[n]) >= MAX_ALTERNATIVES or seen[n] and (
                isinstance(direct[n], Unresolved) or any(isinstance(v, Unresolved) for v in seen[n])))
                for n in names):
            seen = {n: set() for n in names}
            chunks.append([])
        for n in names:
            seen[n].add(direct[n])
        chunks[-1].append(i)
    return chunks


def _literal_only(node: ast.AST) -> bool:
    """A mark or parametrize decorator whose parameter values are all literals (no names, calls or attributes in
    them); a bare `@pytest.mark.slow` too. An alias (`@on_devices`) may stand for a parametrize mark, and a call of
    a decorator factory (`@device_dtype_float_test(only64=True)`, xitorch) may compute its values from the machine
    (`devices = [cpu] if not torch.cuda.is_available()`): not literal."""
    if not isinstance(node, ast.Call):
        return isinstance(node, ast.Attribute)
    if not (isinstance(node.func, ast.Attribute) and (node.func.attr in _LITERAL_FACTORIES or _names_mark(node.func))):
        return False
    return all(_literal(a) for a in node.args) and all(_literal(k.value) for k in node.keywords)


_LITERAL_FACTORIES = frozenset({"parametrize", "expand"})  # pytest's and parameterized's, whatever the prefix


def _names_mark(func: ast.Attribute) -> bool:
    """`pytest.mark.<name>`, `mark.<name>`: a mark whose arguments are its values."""
    return isinstance(func.value, ast.Attribute) and func.value.attr == "mark" or isinstance(
        func.value, ast.Name) and func.value.id == "mark"


_NOT_LITERAL = (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Starred)


def _literal(node: ast.AST) -> bool:
    """No name, attribute, call, subscript or star anywhere in the expression."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return all(_literal(e) for e in node.elts)
    return not any(isinstance(n, _NOT_LITERAL) for n in ast.walk(node))

