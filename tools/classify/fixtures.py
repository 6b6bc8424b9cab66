"""Fixtures as pytest resolves them for a test: tables per class, module, conftest and plugin, scopes,
closures, parametrized fixtures (in every world) and their values (memoised with what they cost).

A Fixtures object belongs to one Analyzer and reads code through its Sources and its interpreter.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from tools.classify.collect import ParamCase, TestItem, def_scope, parametrize_cases
from tools.classify.dataflow import UNIT_BUDGET, Frame, Interp, is_fixture_def
from tools.classify.devices import spelled
from tools.classify.evidence import Finding, step
from tools.classify.frozen import frozen
from tools.classify.interp_base import decorated_object
from tools.classify.marks import mark_findings
from tools.classify.plugins import PYTEST_TORCH_PARAM_ORDER, PYTEST_TORCH_REL
from tools.classify.sources import Sources
from tools.classify.test_state import merge_stores, test_state_of
from tools.classify.values import (
    PARAMETER_VALUE,
    ClassV,
    Const,
    DictV,
    EnumV,
    Ext,
    FuncV,
    Inst,
    ModV,
    RequestV,
    Seq,
    Unresolved,
    Value,
)
from tools.classify.values import UNRESOLVED as UNK
from tools.classify.wrapper_marks import requested_names

SCOPES = {"session": 0, "package": 1, "module": 2, "class": 3, "function": 4}


@frozen
class Fixture:
    name: str
    fv: FuncV
    autouse: bool
    scope_rank: int
    params: tuple[ParamCase, ...] | None
    where: str
    plugin_rank: int = 0  # >0: parametrized by a plugin's pytest_generate_tests, after fixture params

    @property
    def on_instance(self) -> bool:
        """A function-scoped fixture defined in a test class: pytest runs it on the test's own object (a
        class-scoped one gets an object of its own, so what it sets on `self` never reaches the test)."""
        return self.fv.cls is not None and self.scope_rank == SCOPES["function"]


def idfn(interp: Interp, ids: Value | None, world: int) -> Callable[[Value], Value] | None:
    """An `ids=` callable defined in the repository (or `str`), evaluated on one parameter value."""
    if isinstance(ids, FuncV):
        return lambda v: interp.call_function(ids, [_settled(v)], {}, world, 1).value
    if isinstance(ids, Ext) and ids.path in ("builtins.str", "builtins.repr"):
        conversion = "s" if ids.path == "builtins.str" else "r"
        return lambda v: Const(v.text) if isinstance(v, EnumV) and conversion == "s" else _printed_object(
            interp, decorated_object(v) or v, conversion, world) if isinstance(
                printed := _printed(v, conversion), Unresolved) else printed
    return None


def _settled(v: Value) -> Value:
    """A parameter value as pytest hands it to an `ids=` callable: an empty dict is empty for good
    (`ids=lambda d: ",".join(d.keys())` of `OrderedDict()` is ""; elsewhere an empty dict's keys stay unknown, as
    code may fill it where the analysis does not see)."""
    return DictV((), PARAMETER_VALUE) if v == DictV(()) else v


def _printed_object(interp: Interp, obj: Value, conversion: str, world: int) -> Value:
    """str() or repr() of an object of an in-repo class, or of a class made by an in-repo metaclass, as its class
    prints it (funsor's ops and domains print their names: Interp.printed_value); unknown for any other value or
    a class that says nothing (object's default prints an address)."""
    if not isinstance(obj, (Inst, ClassV)):
        return UNK
    frame, where = _at_class(obj.cls if isinstance(obj, Inst) else obj, world)
    got = interp.printed_value(obj, conversion, "", where, frame)
    return got if got is not None else UNK


def _at_class(cls: ClassV, world: int) -> tuple[Frame, ast.AST]:
    """A frame and a node at a class's line, where pytest's own reads of a parameter value run (the steps they
    record name the class)."""
    where = ast.Name("__name__", ast.Load(), lineno=cls.pos[0], col_offset=0, end_lineno=cls.pos[0],
                     end_col_offset=0)
    return Frame(cls.rel, world, {}, {}, []), where


def instance_name(interp: Interp, world: int) -> Callable[[Inst], Value | None]:
    """`getattr(obj, "__name__", None)` for an object of an in-repo class, as pytest asks it of a parameter value:
    None where neither the object nor its class has the name (pytest ids it `<argname><index>`), else what reading
    it gives (a property's getter runs; unknown where a `__getattr__` may answer)."""
    def named(obj: Inst) -> Value | None:
        if obj.attr("__name__") is None and interp.class_lookup(obj.cls, "__name__", world) is None:
            return UNK if interp.class_lookup(obj.cls, "__getattr__", world) is not None else None
        frame, where = _at_class(obj.cls, world)
        return interp.getattr_v(obj, "__name__", frame, where)
    return named


def _printed(v: Value, conversion: str) -> Value:
    """str() or repr() of a parameter value as Python prints it (constants, containers of them, devices, sizes,
    dtypes, torch.nn modules: devices.spelled), else unknown."""
    text = spelled(v, conversion)
    return Const(text) if text is not None else UNK


class Fixtures:
    """The fixtures of one root: declarations (per world), the tables a test sees, and memoised values."""

    def __init__(self, source: Sources, interp: Interp) -> None:
        self.source = source
        self.interp = interp
        self.fixture_tables: dict[str, dict[str, Fixture]] = {}
        self.own_tables: dict[str, dict[str, Fixture]] = {}  # without star-imported modules' fixtures
        self.fixture_memo: dict[tuple[object, ...], tuple[Value, tuple[Finding, ...]]] = {}
        self.fixture_costs: dict[tuple[object, ...], int] = {}  # steps each memoised fixture value took
        # fixture_memo's key -> what the fixture set on `request.cls` (CallResult.cls_attrs)
        self.fixture_cls_attrs: dict[tuple[object, ...], tuple[tuple[str, Value], ...]] = {}
        # fixture_memo's key -> the test state it and the fixtures it uses set (test_state.py)
        self.fixture_stores: dict[tuple[object, ...], tuple[tuple[str, Value], ...]] = {}
        self.scope_memo: dict[tuple[str, tuple[ClassV, ...]], list[dict[str, Fixture]]] = {}
        self.world_fixtures: dict[tuple[FuncV, int], Fixture] = {}
        # a key of fixture_memo or world_fixtures -> computing it read the world: a hit reads it too
        self.fixture_reads_world: dict[tuple[object, ...], bool] = {}
        self.names_memo: dict[tuple[str, tuple[int, int], bool, bool], tuple[str, ...]] = {}  # parameter names

    def _fixture_from(self, fv: FuncV, node: ast.FunctionDef | ast.AsyncFunctionDef, world: int = 0) -> Fixture:
        name, autouse, scope, params = node.name, False, 4, None
        for d in node.decorator_list:
            if not isinstance(d, ast.Call):
                continue
            frame = Frame(fv.rel, world, def_scope(self.interp, fv, world),
                          self.interp.module_state(fv.rel, world, ()).env, [])
            kw = {k.arg: self.interp.ev(k.value, frame) for k in d.keywords if k.arg}
            if isinstance(kw.get("name"), Const):
                name = str(kw["name"].value)  # type: ignore[union-attr]
            autouse = isinstance(kw.get("autouse"), Const) and bool(kw["autouse"].value)  # type: ignore[union-attr]
            sc = kw.get("scope") or (self.interp.ev(d.args[0], frame) if d.args else None)
            if isinstance(sc, Const) and isinstance(sc.value, str):
                scope = SCOPES.get(sc.value, 4)
            if "params" in kw:
                # pytest makes a tuple of params: an Enum class gives its members, a dict its keys
                cases = parametrize_cases(Const(name), self.interp.iteration(kw["params"], world), kw.get("ids"),
                                          idfn(self.interp, kw.get("ids"), world), instance_name(self.interp, world))
                params = tuple(cases) if cases is not None else ()
        rank = PYTEST_TORCH_PARAM_ORDER.index(name) + 1 if (
            fv.rel == PYTEST_TORCH_REL and name in PYTEST_TORCH_PARAM_ORDER) else 0
        return Fixture(name, fv, autouse, scope, params, step(fv.rel, node.lineno, f"fixture {name}"), rank)

    def fixture_in(self, fx: Fixture, world: int) -> Fixture:
        """The fixture's declaration evaluated in `world` (its params may differ: `params=DEVICES`)."""
        if not world or fx.plugin_rank:
            return fx
        key = (fx.fv, world)
        got = self.world_fixtures.get(key)
        if got is None:
            before = self.interp.world_reads
            node = self.source.module(fx.fv.rel).defs.get(fx.fv.pos)
            got = self.interp.budgeted(UNIT_BUDGET, self._fixture_from, fx.fv, node, world)[0] if isinstance(
                node, (ast.FunctionDef, ast.AsyncFunctionDef)) else fx
            if got.name != fx.name:
                got = fx
            self.world_fixtures[key] = got
            self.fixture_reads_world[key] = self.interp.world_reads != before
        else:
            self.interp.world_memo_hit(self.fixture_reads_world, key)
        return got


    def case_marks_in(self, fx: Fixture, case: ParamCase, world: int) -> tuple[Value, ...]:
        """The marks of a fixture parameter evaluated in `world` (`skipif(torch.cuda.device_count() < 1)` in
        `params=[pytest.param("nccl", marks=...)]` is active in world 0 only)."""
        if not world or not case.marks:
            return case.marks
        got = self.fixture_in(fx, world)
        same = [c for c in got.params or () if c.id == case.id]
        return same[0].marks if len(same) == 1 else case.marks

    def _fixtures_in(self, env_items: list[tuple[str, Value]]) -> dict[str, Fixture]:
        out: dict[str, Fixture] = {}
        for _, v in env_items:
            if isinstance(v, FuncV):
                node = self.source.module(v.rel).defs.get(v.pos)
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and is_fixture_def(node):
                    fx = self._fixture_from(v, node)
                    out.setdefault(fx.name, fx)
        return out

    def module_fixtures(self, rel: str) -> dict[str, Fixture]:
        """The fixtures a module defines or imports, those of `from fixtures import *` included (a conftest
        gathering fixture modules that way; public names, as the star import binds; the module's own first, then
        each star-imported module's in import order, depth first)."""
        got = self.fixture_tables.get(rel)
        if got is None:
            got = dict(self._own_fixtures(rel))
            seen = {rel}
            todo = list(reversed(self._star_modules(rel)))
            while todo:
                m = todo.pop()
                if m in seen:
                    continue
                seen.add(m)
                for name, fx in self._own_fixtures(m).items():
                    if not fx.fv.name.startswith("_"):
                        got.setdefault(name, fx)
                todo.extend(reversed(self._star_modules(m)))
            self.fixture_tables[rel] = got
        return got

    def _own_fixtures(self, rel: str) -> dict[str, Fixture]:
        got = self.own_tables.get(rel)
        if got is None:
            # memoised across files: its work counts toward no test's budget (so none depends on the order)
            got = self.own_tables[rel] = self.interp.budgeted(UNIT_BUDGET, self._fixtures_in, sorted(
                self.interp.module_state(rel, 0).env.items(), key=lambda kv: kv[0]))[0]
        return got

    def _star_modules(self, rel: str) -> list[str]:
        return [star.rel for star in self.interp.module_state(rel, 0).stars
                if isinstance(star, ModV) and star.rel and star.rel != rel]

    def plugin_modules(self, rel: str) -> list[str]:
        """The in-repo modules a module's `pytest_plugins` names (`pytest_plugins = ["tests.fixtures"]` in the root
        conftest): pytest imports them as plugins, and their fixtures are visible to every test."""
        v = self.interp.module_state(rel, 0).env.get("pytest_plugins")
        names = [v] if isinstance(v, Const) else list(v.items) if isinstance(v, Seq) else []
        out: list[str] = []
        for n in names:
            if isinstance(n, Const) and isinstance(n.value, str):
                got = self.source.resolve_import(n.value, rel, 0, "")
                if got and got not in out:
                    out.append(got)
        return out

    def class_fixtures(self, cls: ClassV) -> dict[str, Fixture]:
        out: dict[str, Fixture] = {}
        for c in self.interp.mro(cls, 0):
            if isinstance(c, ClassV):
                for k, v in self._fixtures_in(sorted(self.interp.class_body(c, 0).items(),
                                                     key=lambda kv: kv[0])).items():
                    out.setdefault(k, v)
        return out

    def scopes(self, rel: str, item: TestItem) -> list[dict[str, Fixture]]:
        """Fixture tables visible to a test, closest first."""
        key = (rel, item.classes)
        got = self.scope_memo.get(key)
        if got is None:
            got = self.scope_memo[key] = self._scopes(rel, item)
        return got

    def _scopes(self, rel: str, item: TestItem) -> list[dict[str, Fixture]]:
        tables = [self.class_fixtures(c) for c in reversed(item.classes)]
        tables.append(self.module_fixtures(rel))
        for c in reversed(self.source.conftests_for(rel)):
            tables.append(self.module_fixtures(c))
            tables.extend(self.module_fixtures(p) for p in self.plugin_modules(c))
        tables.append(self.module_fixtures(PYTEST_TORCH_REL))  # installed plugins: only when nothing closer
        return tables

    @staticmethod
    def find(tables: list[dict[str, Fixture]], name: str, skip: Fixture | None = None) -> Fixture | None:
        for t in tables:
            fx = t.get(name)
            if fx is not None and fx != skip:
                return fx
        return None

    def fixture_args(self, fv: FuncV) -> tuple[str, ...]:
        """The fixtures a function requests (parameters without defaults, as pytest's getfuncargnames)."""
        return self._names(fv, False)

    def param_names(self, fv: FuncV) -> tuple[str, ...]:
        """Every parameter name (without self/cls)."""
        return self._names(fv, True)

    def _names(self, fv: FuncV, with_defaults: bool) -> tuple[str, ...]:
        key = (fv.rel, fv.pos, fv.cls is not None, with_defaults)
        got = self.names_memo.get(key)
        if got is None:
            node = self.source.module(fv.rel).defs.get(fv.pos)
            got = self.names_memo[key] = tuple(self._arg_names(fv, node, with_defaults) if isinstance(
                node, (ast.FunctionDef, ast.AsyncFunctionDef)) else ())
        return got

    @staticmethod
    def _arg_names(fv: FuncV, node: ast.FunctionDef | ast.AsyncFunctionDef, with_defaults: bool) -> list[str]:
        """Parameter names (without self/cls). Like pytest's getfuncargnames, fixtures are only requested
        for parameters without a default (positional-only ones never)."""
        a = node.args
        if with_defaults:
            names = [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
        else:
            names = requested_names(node)
            if fv.cls is not None and a.posonlyargs and a.posonlyargs[0].arg in ("self", "cls"):
                return names
        return names[1:] if fv.cls is not None and names and names[0] in ("self", "cls") else names

    def closure_fixtures(self, tables: list[dict[str, Fixture]], closure: list[str]) -> list[Fixture]:
        """The fixtures of a closure (closure_names), sorted by scope (stable): the order of parametrized fixtures
        in a node id (`[1-False-False]` when `a` uses `b` uses parametrized `n`, and parametrized `c` and `d`
        follow `a`)."""
        found = [self.find(tables, n) for n in closure]
        return sorted((fx for fx in found if fx is not None), key=lambda f: f.scope_rank)

    def closure_names(self, tables: list[dict[str, Fixture]], initial: list[str]) -> list[str]:
        """pytest's fixture closure (pytest >= 9, the version the locks pin): the initial names, then the
        dependencies each brings in, depth first, those no fixture defines included. It is `metafunc.fixturenames`,
        where a hook finds the argument a fixture asks for and only the hook provides (flair: an autouse fixture
        takes `force_cpu`, which `pytest_generate_tests` parametrizes)."""
        names = list(dict.fromkeys(initial))
        seen: set[str] = set()

        def visit(name: str) -> None:
            if name in seen:
                return
            seen.add(name)
            if name not in names:
                names.append(name)
            fx = self.find(tables, name)
            if fx is not None:
                for a in self.fixture_args(fx.fv):
                    visit(a)

        for name in list(names):
            visit(name)
        return names

    def fixture_value(self, fx: Fixture, tables: list[dict[str, Fixture]], choice: dict[str, ParamCase],
                      world: int, stack: tuple[str, ...]) -> tuple[Value, tuple[Finding, ...]]:
        case = choice.get(fx.name)
        key = (fx, case, world, tuple(sorted((k, v) for k, v in choice.items())))
        got = self.fixture_memo.get(key)
        if got is not None:
            self.interp.charge(self.fixture_costs[key])  # what it cost when first computed
            self.interp.world_memo_hit(self.fixture_reads_world, key)
            return got
        if fx.name in stack:
            return UNK, ()
        start, before = self.interp.steps, self.interp.world_reads
        kwargs, findings = self.fixture_kwargs(fx, tables, choice, world, stack)
        fv = fx.fv
        if fv.cls is not None:
            fv = FuncV(fv.rel, fv.pos, fv.name, bound=Inst(fv.cls), captured=fv.captured, cls=fv.cls)
        given = self.dependency_stores(fx, tables, choice, world)
        res = self.interp.call_function(fv, [], kwargs, world, 1, stores=given)
        findings.extend(res.findings)
        self.interp.used_modules.add(fx.fv.rel)
        result = (res.value, tuple(findings))
        if res.cls_attrs:
            self.fixture_cls_attrs[key] = res.cls_attrs
        stores = merge_stores(given, test_state_of(res.stores))
        if stores:
            self.fixture_stores[key] = stores
        self.fixture_memo[key] = result
        self.fixture_costs[key] = self.interp.steps - start
        self.fixture_reads_world[key] = self.interp.world_reads != before
        return result

    def fixture_kwargs(self, fx: Fixture, tables: list[dict[str, Fixture]], choice: dict[str, ParamCase],
                       world: int, stack: tuple[str, ...] = ()) -> tuple[dict[str, Value], list[Finding]]:
        """The arguments pytest calls a fixture with (`request`, the fixtures it asks for), and the findings of
        setting those up and of its parameter's marks: all but its own body's."""
        case = choice.get(fx.name)
        findings: list[Finding] = []
        kwargs: dict[str, Value] = {}
        for a in self.fixture_args(fx.fv):
            if a == "request":
                kwargs[a] = RequestV(case.bindings[0][1] if case else UNK)
                continue
            dep = self.find(tables, a, skip=fx if a == fx.name else None)
            if dep is None:
                kwargs[a] = UNK
                continue
            v, fs = self.fixture_value(dep, tables, choice, world, (*stack, fx.name))
            kwargs[a] = v
            findings.extend(f.prefixed(step(fx.fv.rel, fx.fv.pos[0], f"fixture {fx.name} uses {a}")) for f in fs)
        if case is not None:
            findings.extend(mark_findings(list(self.case_marks_in(fx, case, world)), fx.where))
        return kwargs, findings

    def stores(self, fx: Fixture, choice: dict[str, ParamCase], world: int) -> tuple[tuple[str, Value], ...]:
        """The test state (test_state.py) the fixture (its value computed by fixture_value) and the fixtures it uses
        set: `monkeypatch.setenv("LIB_DEVICE", "cuda")` in it is what the test's library calls read."""
        return self.fixture_stores.get((fx, choice.get(fx.name), world, tuple(sorted(choice.items()))), ())

    def dependency_stores(self, fx: Fixture, tables: list[dict[str, Fixture]], choice: dict[str, ParamCase],
                          world: int) -> tuple[tuple[str, Value], ...]:
        """The test state the fixtures `fx` asks for set (after fixture_kwargs computed them), in set-up order."""
        deps = (self.find(tables, a, skip=fx if a == fx.name else None) for a in self.fixture_args(fx.fv))
        return merge_stores(*(self.stores(d, choice, world) for d in deps if d is not None))

    def cls_attrs(self, fx: Fixture, choice: dict[str, ParamCase], world: int) -> tuple[tuple[str, Value], ...]:
        """What the fixture (its value computed by fixture_value) set on `request.cls` / `request.instance`."""
        return self.fixture_cls_attrs.get((fx, choice.get(fx.name), world, tuple(sorted(choice.items()))), ())
