"""What the parts of the interpreter share: work budgets, the frame and call-result records, the
interface the parts call on each other, and small helpers used by more than one part.

The interpreter (dataflow.Interp) is composed of mixins, one module per concern (interp_statements,
interp_expressions, interp_classes, interp_calls, interp_external, interp_torch). They import this module
and devices.py, never each other or dataflow.py, and reach each other's methods only through `self`.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from tools.classify import conventions
from tools.classify.evidence import ASSERT_KEY, IF_IMPORTED, IMPORTS, SKIP, Finding, step
from tools.classify.inert import InertProver
from tools.classify.modules import ParsedModule
from tools.classify.scope import TestNames
from tools.classify.summaries import Frames
from tools.classify.values import (
    ClassV,
    Const,
    DictV,
    EnumV,
    Ext,
    FuncV,
    Inst,
    PathV,
    Seq,
    Unresolved,
    Value,
    alternatives,
    choice_of_names,
    join_all,
)

if TYPE_CHECKING:
    from tools.classify.dataclass_fields import GeneratedInit

# Deterministic work budgets, in interpreter steps (statements and expressions evaluated). An in-repo call is
# a function summary with a budget of its own (summaries.SUMMARY_BUDGET) and costs its caller one step, so no
# budget depends on what was analysed before; a memoised fixture value or case context counts what it cost
# when first computed. CASE_BUDGET bounds one test case's own steps (all its worlds), FILE_BUDGET one test
# file's (collection and all its cases); a case that runs out is charged OVER_BUDGET_CHARGE (its pathology
# is usually shared by its neighbours: a file gives up after three). UNIT_BUDGET bounds a module's top level,
# a class body or a base-class list, which are memoised apart and count toward no test. Largest legitimate
# figures measured before summaries (fixture corpus, tests/, ten real suites, callees included): 3.3 million
# steps for a case, 52 million for a file.
CASE_BUDGET = 10_000_000
# The worlds a test is analysed in: the number of CUDA devices of the machine (0: the CPU-only one a `cpu`
# label promises; the others find the GPU count a skip asks for).
_T = TypeVar("_T")
WORLDS = (0, 1, 2, 3, 4, 8)
FILE_BUDGET = 100_000_000
OVER_BUDGET_CHARGE = 4 * CASE_BUDGET
UNIT_BUDGET = 20_000_000

MOCK_OBJECT = "<mock>"  # Ext path of a mock object (Mock(), MagicMock(), create_autospec()): every attribute and
# call of it is the mock again, and none of them touches a device (issue 12, root cause 6)
# Ext path of `Function.apply` of an in-repo `torch.autograd.Function`, called with the class first (a PartialV):
# runs the class's forward, then its backward (interp_calls.autograd_apply)
AUTOGRAD_APPLY = "<autograd apply>"
# the bases that make a class a custom autograd function
AUTOGRAD_FUNCTIONS = frozenset({"torch.autograd.Function", "torch.autograd.function.Function",
                                "torch.autograd.function.InplaceFunction"})
DYNAMIC = "<dynamic>"  # Ext path prefix of a value looked up by a computed name; the rest is the evidence step
# Ext path prefix of a module name known to be the rest of the path or a submodule of it (a torch class's
# `__module__`); only `.startswith(prefix)` decides anything on it (interp_calls.method_call)
MODULE_WITHIN = "<module-within>."
MAX_FINDINGS_PER_KIND = 4
KEYED_KINDS = frozenset({IMPORTS, IF_IMPORTED})
MUTATORS = frozenset({"append", "extend", "insert", "add", "update", "remove", "discard", "pop", "clear"})
# A shared namespace (the Borg idiom, `self.__dict__ = self._shared_state`): a class attribute holding the dict
# that instances adopt as their attributes. Its contents are state that calls pass along, kept in a frame's env
# under `STORE + <class rel>:<line>:<col>.<attr>` (not an identifier, so no Python name collides); absent is
# empty (a fresh process). An instance sharing one keeps the key under its attribute NAMESPACE.
STORE = "<store>"
NAMESPACE = "<namespace>"


class BudgetExceeded(Exception):  # noqa: N818 - a condition, not an error in the analysed code
    """The work budget of the current test case, file or unit is spent."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"analysis budget exceeded ({limit} steps)")
        self.limit = limit


class ModuleSource(Protocol):
    def module(self, rel: str) -> ParsedModule: ...
    def resolve_import(self, dotted: str, importer: str, level: int, module: str) -> str | None: ...
    def is_package_dir(self, dotted: str) -> bool: ...
    def conftests_for(self, rel: str) -> tuple[str, ...]: ...
    def package_inits(self, rel: str) -> tuple[str, ...]: ...
    def module_name(self, rel: str) -> str: ...
    def closure(self, rel: str) -> frozenset[str]: ...
    def import_time_closure(self, rel: str) -> tuple[str, ...]: ...
    def registering_importers(self, home: str, names: tuple[str, ...]) -> tuple[str, ...]: ...
    def importers_naming(self, home: str, names: tuple[str, ...]) -> tuple[str, ...]: ...
    def data_file(self, rel: str, reader: str) -> bytes | None: ...
    def installed_class_module(self, dotted: str, importer: str) -> str | None: ...
    def external_presence(self, dotted: str, importer: str, reader: str) -> str | None: ...
    def lines_of(self, rel: str) -> list[bytes] | None: ...


@dataclass
class Generated:
    """What a generator function yields, in order, while every yield is reached on the one path the analysis
    follows (decided branches, unrolled loops); `exact` turns False at a yield on an undecided path. A
    parametrization from a generator (`parametrize("a, b", _cases())`) then has exact ids."""

    items: list[Value] = field(default_factory=list)
    exact: bool = True


# An assertion whose source says it is about devices (InterpBase.world_decided_assert)
_DEVICE_WORDS = re.compile(r"cuda|gpu|device|accelerat", re.IGNORECASE)
DEFAULT_PREFIX = "<default>"  # a captured default bound when its def ran (StatementsMixin._bound_defaults)
# FuncV attribute: what a helper's or method's in-repo decorators made of it (the wrapper a call runs;
# StatementsMixin.decorated_def, CallsMixin.call)
WRAPPER = "<decorated>"
# FuncV attribute of a `functools.singledispatch(method)` function: its registered implementations, a Seq of
# (type, implementation) pairs in registration order (StatementsMixin.decorated_def, CallsMixin.dispatched)
DISPATCH = "<singledispatch>"
SINGLEDISPATCH = frozenset({"functools.singledispatch", "functools.singledispatchmethod"})
# FuncV attribute of a getter made a property by a call, `device = property(_get_device)` in a class body: reading
# the attribute runs it, as for `@property` (ClassesMixin._is_property)
PROPERTY = "<property>"
MAX_GENERATED = 1024  # yields kept: more is not a parametrization anyone spells out


@dataclass
class CallResult:
    value: Value
    findings: tuple[Finding, ...]
    self_after: Value | None = None
    stores: tuple[tuple[str, Value], ...] = ()  # shared namespaces (STORE keys) as the call left them
    generated: tuple[Value, ...] | None = None  # an undecorated generator's exact yields (Generated)
    widened: bool = False  # the summary of a recursive call, in its widened context (summaries.widen)
    world_dependent: bool = True  # its computation let the world decide something (InterpBase.world_reads)
    lost: frozenset[str] = frozenset()  # what its computation called on unresolved values (InterpBase.lost)
    cells: tuple[tuple[str, Value], ...] = ()  # the enclosing locals it shares, as it left them (closures.py)
    self_at_yield: Value | None = None  # a generator fixture method's receiver at its yield (Frame.at_yield)
    # what a fixture set on `request.cls` / `request.instance` by the time it handed over (RequestV.cls_attrs)
    cls_attrs: tuple[tuple[str, Value], ...] = ()
    # what the call stored into registries, in order (registries.py, Frame.registrations)
    registrations: tuple[tuple[str, Value, Value], ...] = ()
    # arguments that were objects and that the call changed in place (`def attach(m): m.extra = x`), as (position of
    # the parameter after any receiver, its name, the object as the call left it)
    args_after: tuple[tuple[int, str, Value], ...] = ()


# InterpBase.lost's name for a call of a value the analysis cannot resolve (not a method name: has no letters)
CALLED_UNRESOLVED = "()"


def decorated_object(v: Value) -> Inst | None:
    """The object an in-repo decorator made of a function (`@Op.make def logaddexp`: an Op): what the function's
    name holds for pytest's ids, attribute reads, methods and builtins; calls still run the function itself under
    the decorator (CallsMixin.call). None for anything else."""
    made = v.attr(WRAPPER) if isinstance(v, FuncV) and v.attrs else None
    return made if isinstance(made, Inst) else None


def chosen_by_name(found: list[Value], rel: str, line: int, what: str) -> Value:
    """What a lookup by one of several known names gives (`getattr(self, f"run_{kind}")`, `globals()[NAMES[key]]`):
    one of the values `found` (classes and functions: up to values.MAX_NAMES of them). Past the bound of a choice
    their join is unknown, and a call of an unknown value is not followed: it is a dynamic dispatch then, so that
    the call is not dropped."""
    names = choice_of_names(found)
    got = names if names is not None else join_all(found)
    if isinstance(got, Unresolved) and not any(isinstance(v, Unresolved) for v in found):
        return Ext(DYNAMIC + step(rel, line, f"{what} over {len(found)} names: dynamic dispatch"))
    return got


def lost_entry(name: str, rel: str, n: ast.AST | None) -> str:
    """InterpBase.lost's entry for `name` (a method, or CALLED_UNRESOLVED) lost at node `n` of file `rel`: the
    site tells a loss every case of a test meets from one a joined value made (Analyzer.code_lost)."""
    return f"{name}@{rel}:{getattr(n, 'lineno', 0)}:{getattr(n, 'col_offset', 0)}"


def lost_name(entry: str) -> str:
    """The method name (or CALLED_UNRESOLVED) of a lost_entry."""
    return entry.partition("@")[0]

# the name under which `module_state(rel, world, names)` reads a module's top-level findings (not a Python name)
MODULE_FINDINGS = "<findings>"


@dataclass
class ModuleState:
    env: dict[str, Value]
    findings: list[Finding]
    stars: list[Value]
    done: bool = False
    world_dependent: bool = False  # running the top level let the world decide something (world_reads)
    reads_at_start: int = 0  # world_reads when the top level started running
    ended: bool = False  # every path through the top level ended early (a module-level skip, a raise)


@dataclass
class Frame:
    rel: str
    world: int
    env: dict[str, Value]
    module_env: dict[str, Value] | None  # None: this frame runs module top level
    findings: list[Finding]
    depth: int = 0
    returns: list[Value] = field(default_factory=list)
    self_name: str | None = None
    cls: ClassV | None = None
    captured: dict[str, Value] = field(default_factory=dict)
    generated: Generated | None = None  # a generator function's yields, in order (see Generated)
    branch: bool = False  # a path the analysis could not decide (an if, a loop body run once, a try)
    # parameters bound to their default `{}`: an empty dict that nothing outside the call can have filled (an
    # empty dict elsewhere may be a registry that functions fill, which the analysis does not follow)
    empty_defaults: frozenset[str] = frozenset()
    # a generator fixture's receiver and `request` at each of its yields (None: not recorded): what the test
    # runs with, before the teardown after the yield changes it (CallResult.self_at_yield, CallResult.cls_attrs)
    at_yield: list[tuple[Value | None, Value | None]] | None = None
    # entries stored into registries (registries.py) on the way: (DictV.origin, key, value); shared by branches
    registrations: list[tuple[str, Value, Value]] = field(default_factory=list)

    def add(self, finding: Finding) -> None:
        if self.branch and finding.kind == SKIP and not finding.maybe:
            finding = replace(finding, maybe=True)
        if finding.kind in KEYED_KINDS:
            # one per key, never capped: a package reached, a need conditional on packages (evidence.decide)
            if not any(f.kind == finding.kind and f.key == finding.key for f in self.findings):
                self.findings.append(finding)
            return
        same = [f for f in self.findings if f.kind == finding.kind]
        if finding.kind == SKIP or len(same) < MAX_FINDINGS_PER_KIND:
            if finding not in self.findings:
                self.findings.append(finding)


def script_function(fv: FuncV) -> FuncV:
    """What `torch.jit.script` makes of a function (as a decorator or called): it runs as the function does, and its
    `__name__` is its class's, so pytest ids it `ScriptFunction` (xitorch)."""
    return FuncV(fv.rel, fv.pos, "ScriptFunction", fv.bound, fv.captured, fv.cls)


def is_fixture_def(node: ast.AST) -> bool:
    """Syntactic: decorated with `fixture`, `pytest.fixture(...)`, `pytest_asyncio.fixture`..."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    for d in node.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        if isinstance(target, ast.Attribute) and target.attr in ("fixture", "yield_fixture"):
            return True
        if isinstance(target, ast.Name) and target.id in ("fixture", "yield_fixture"):
            return True
    return False


EMPTY_DICT = DictV(())


def namespace_key(v: Value) -> str | None:
    """The shared namespace an instance adopted as its attributes (its NAMESPACE entry sorts first)."""
    if isinstance(v, Inst) and v.attrs and v.attrs[0][0] == NAMESPACE:
        got = v.attrs[0][1]
        return got.value if isinstance(got, Const) and isinstance(got.value, str) else None
    return None


def own_attrs(v: Inst) -> tuple[tuple[str, Value], ...]:
    """The attributes of an instance, without its NAMESPACE entry."""
    return v.attrs[1:] if v.attrs and v.attrs[0][0] == NAMESPACE else v.attrs


def attrs_dict(v: Inst) -> DictV:
    """`obj.__dict__` of an instance: its attributes as a dict."""
    return DictV(tuple((Const(k), x) for k, x in own_attrs(v)))


def dict_alternatives(v: Value) -> list[tuple[tuple[str, Value], ...]] | None:
    """A dict (or a choice of dicts) whose keys are all known strings, as attribute items per alternative."""
    out: list[tuple[tuple[str, Value], ...]] = []
    for a in alternatives(v):
        if not isinstance(a, DictV) or not all(isinstance(k, Const) and isinstance(k.value, str) for k, _ in a.items):
            return None
        out.append(tuple((str(k.value), x) for k, x in a.items if isinstance(k, Const)))
    return out


def frame_stores(frame: Frame) -> tuple[tuple[str, Value], ...]:
    """The shared namespaces (STORE entries) of a frame, sorted: passed to its callees."""
    return tuple(sorted((k, v) for k, v in frame.env.items() if k.startswith(STORE)))


def _mutable_target(e: ast.expr) -> bool:
    """A container the analysis can rebind after mutating it: a name or `self.attr`/`obj.attr`."""
    return isinstance(e, ast.Name) or (isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name))


def _py(v: Value) -> object:
    """A Python literal for convention arguments (UNSET when unknown)."""
    if isinstance(v, Const):
        return v.value
    return conventions.UNSET


def _call_requirement(name: str, args: list[Value], kwargs: dict[str, Value],
                      fn_arg: bool) -> conventions.Requirement | None:
    """conventions.decorator_requirement for a call of `name`; `fn_arg`: it is applied to a function (`@name`).
    Arguments are converted only for the names the table knows (most calls are of other names)."""
    if name not in conventions.DECORATOR_NAMES:
        return None
    return conventions.decorator_requirement(name, [] if fn_arg else [_py(a) for a in args],
                                             {} if fn_arg else {k: _py(v) for k, v in kwargs.items()})


def kept_on_node(node: ast.AST, slot: str, compute: Callable[[], _T]) -> _T:
    """`compute()`, answered once per AST node and kept in its `__dict__` under `slot` (not an ast field:
    ast.unparse/dump and the fields ignore it): for the pure syntactic questions asked at every run of the code
    (`is_generator`, a loop's `_grows_containers`, an assert's `short_source`...)."""
    d = node.__dict__
    if slot not in d:
        d[slot] = compute()
    return d[slot]  # type: ignore[no-any-return]


def _last_name(e: ast.expr) -> str:
    e = e.func if isinstance(e, ast.Call) else e
    return e.attr if isinstance(e, ast.Attribute) else e.id if isinstance(e, ast.Name) else ""


class InterpBase:
    """The interpreter's state (memo tables and budget counters, one set per Interp) and, for the type checker
    only, the methods one part of the interpreter calls on another (each is defined once: in dataflow.Interp
    or in one mixin)."""

    def __init__(self, source: ModuleSource, test_names: TestNames | None = None) -> None:
        self.source = source
        self.test_names = test_names or TestNames()  # which classes and functions are tests (pytest's options)
        self.ev_methods: dict[type, Callable[[Any, Frame], Value]] = {}  # expression type -> its ev_* method
        self.modules: dict[tuple[str, int], ModuleState] = {}
        self.startup_hooks: dict[tuple[str, int], tuple[Finding, ...]] = {}  # Interp.startup_hook_findings
        self.startup_reads_world: dict[tuple[str, int], bool] = {}  # ... and computing them read the world
        # ClassesMixin.property_setter: (the setter, whether finding it read the world) by (class, name, world)
        self.setters: dict[tuple[Any, ...], tuple[FuncV | None, bool]] = {}
        self.calls: dict[tuple[Any, ...], CallResult] = {}
        # summaries of methods keyed on what they read of their receiver (receivers.py): (result, the attributes
        # the call set on its receiver); and the projections computed, by (function, receiver, world)
        self.receiver_summaries: dict[tuple[Any, ...], tuple[CallResult, tuple[tuple[str, Value], ...]]] = {}
        self.projections: dict[tuple[Any, ...], tuple[Any, ...] | None] = {}
        self.projection_plans: dict[tuple[Any, ...], tuple[tuple[str, Any], ...] | None] = {}  # (see _project)
        # provenance.keys_are_existing_devices by (in-repo MRO, attribute): it reads the classes' source
        self.existing_device_keys: dict[tuple[tuple[ClassV, ...], str], bool] = {}
        # module_device.class_facts by class: (could it set `device`, where its `__getattr__` forwards)
        self.module_class_facts: dict[ClassV, tuple[bool, frozenset[str] | None] | None] = {}
        self.frames = Frames()  # the summaries being computed (summaries.py)
        # which functions and classes provably yield no finding (inert.py): the test bodies left uninterpreted,
        # the context manager classes whose __enter__/__exit__ are not followed
        self.inert = InertProver(source.lines_of, lambda rel, pos: source.module(rel).defs.get(pos),
                                 self._module_env)
        self.class_bodies: dict[tuple[ClassV, int], dict[str, Value]] = {}
        # what running a class body found (a bound hit, a device use): it runs when the module is imported
        self.class_findings: dict[tuple[ClassV, int], tuple[Finding, ...]] = {}
        self.mros: dict[tuple[ClassV, int], tuple[Value, ...]] = {}
        self.used_modules: set[str] = set()
        # (program, world) -> (its findings, whether running it read the world); programs.py
        self.program_runs: dict[tuple[object, int], tuple[tuple[Finding, ...], bool]] = {}
        self.param_classes: set[ClassV] = set()  # instantiate_parametrized_tests(cls)
        # the `parameterized` package's @parameterized_class: generated class -> the attributes it sets;
        # the decorated original keeps only inherited tests (the package deletes its own test* methods)
        self.class_overrides: dict[ClassV, tuple[tuple[str, Value], ...]] = {}
        self.emptied_classes: set[ClassV] = set()
        self.enum_kinds: dict[tuple[ClassV, int], str | None] = {}
        self.module_registrars: dict[ClassV, bool] = {}  # class -> a method registers children otherwise
        self.module_classes: dict[tuple[ClassV, int], bool] = {}  # (class, world) -> prints as a torch module
        self.module_classes_world: dict[tuple[ClassV, int], bool] = {}  # ... and deciding it read the world
        self.shared_attrs: dict[ClassV, frozenset[str]] = {}  # class -> its attributes instances adopt as __dict__
        self.store_keys: dict[tuple[ClassV, str, int], str | None] = {}
        self.option_defaults: dict[str, dict[str, Value]] = {}  # conftest -> its addoption defaults by dest
        self.click_modules: dict[str, bool] = {}  # module -> it imports click or typer (click_model.imports_any)
        self.triton_kernels: dict[tuple[str, tuple[int, int], int], bool] = {}  # def -> decorated by Triton
        self.stores_seen = False  # a shared namespace was met: calls pass the STORE entries along
        # How many times the world decided something so far: a machine query, a well-known constant or helper,
        # or a module, class body, MRO or summary that itself depended on one. A computation during which it
        # did not grow is the same in every world, so its result is shared by all of them (summaries.py).
        self.world_reads = 0
        # What was called on values the analysis cannot resolve, their code (if any) not followed, with where
        # (lost_entry): the method names (`m.run()` of an unknown `m`), CALLED_UNRESOLVED for a call of one. A
        # joined analysis (analyzer.joined_cases) that lost a method some in-repo code defines, or a call, where the
        # analysis of a case alone did not, may have missed what that analysis follows, so it settles nothing.
        # Summaries carry what they lost (CallResult.lost), as they carry world_reads; each case analysis starts it
        # empty (Analyzer.analyse_case).
        self.lost: list[str] = []
        # the `if` statement just run whose body ends and whose fall-through a cuda_guard guards (exec_block)
        self.guarded_fallthrough: ast.If | None = None
        self.debug_logging: dict[tuple[str, int], bool] = {}  # (module, world) -> may lower a level to DEBUG
        self.debug_logging_reads_world: dict[tuple[str, int], bool] = {}  # ... and deciding it read the world
        # (module, def position) -> the enclosing scopes' names whose containers the function changes in place
        self.outer_mutations: dict[tuple[str, tuple[int, int]], frozenset[str]] = {}
        self.free_names: dict[tuple[str, tuple[int, int]], frozenset[str]] = {}  # def/class -> its free variables
        self.cell_names: dict[tuple[str, tuple[int, int]], frozenset[str]] = {}  # def -> closures.shared_cells
        self.raw_generators: dict[tuple[str, tuple[int, int]], bool] = {}  # closures.decorated_by_local_defs
        # whether computing an entry of a per-world class table read the world (absent: still being computed),
        # by the entry's key in class_bodies, mros, enum_kinds, store_keys
        self.body_reads_world: dict[tuple[ClassV, int], bool] = {}
        self.mro_reads_world: dict[tuple[ClassV, int], bool] = {}
        self.enum_reads_world: dict[tuple[ClassV, int], bool] = {}
        self.store_reads_world: dict[tuple[ClassV, str, int], bool] = {}
        # class_lookup by (class, name, world) once every class of the MRO is complete: (found, read the world)
        self.lookups: dict[tuple[ClassV, str, int], tuple[Value | None, bool]] = {}
        self.steps = 0  # spent in the current budget (see CASE_BUDGET)
        self.limit = FILE_BUDGET
        # (rel, world, def position) -> the names a top-level def's decorators read that the module binds again
        # later, as they were when the def ran (`params = ...` read from one data file per test); rel -> the
        # lines where its top level binds each name
        self.decorator_envs: dict[tuple[str, int, tuple[int, int]], dict[str, Value]] = {}
        self.module_binds: dict[str, dict[str, int]] = {}
        self.registry_names_memo: dict[str, frozenset[str]] = {}  # module -> registries.registry_names of its tree
        # (DictV.origin, world) -> the entries import-time calls stored into that registry (registries.py)
        self.registered: dict[tuple[str, int], list[tuple[Value, Value]]] = {}
        # (DictV.origin, world) -> its writers were run (registries.py), and one of them let the world decide something
        self.registries_loaded: dict[tuple[str, int], bool] = {}
        self.varying_names: dict[tuple[str, str], bool] = {}  # (module, name): bound differently by world
        # (DictV.origin, world) -> the last view of it: (the dict it was made from, how many entries, the view)
        self.registry_views: dict[tuple[str, int], tuple[Value, int, Value]] = {}
        self.registry_writers: dict[str, frozenset[str]] = {}  # DictV.origin -> the modules whose import fills it
        self.subclass_registrars: set[str] = set()  # modules with an `__init_subclass__` that fills a registry
        self.self_filled: dict[ClassV, frozenset[str]] = {}  # class -> registries.self_filled_attributes

    def decided_by_world(self, query: Callable[[str, int], object], name: str, world: int) -> object:
        """query(name, world): what a machine query or a well-known name gives in this world (NotImplemented:
        the name is not one). A read of the world unless every world gives the same."""
        got = query(name, world)
        if got is not NotImplemented and any(query(name, w) != got for w in WORLDS):
            self.world_reads += 1
        return got

    def world_decided_assert(self, holds: bool | None, reads_before: int, frame: Frame, line: int, text: str) -> None:
        """An assertion that fails here and that the world may decide: it read the world (`assert
        torch.cuda.is_available()`, `self.assertGreater(torch.cuda.device_count(), 1)`), or it is about devices
        (`assert dev.type == "cuda"`, where `dev` read the world statements earlier). Checked in the GPU worlds
        like a skip (ASSERT_KEY), so a world where it holds makes it a GPU need; one that fails in every world is
        no need (evidence.decide ignores a skip no world lifts). Any other assert the analysis decides false (its
        values imprecise: library code's `assert reduction in _REDUCTIONS`) is left alone, as rechecking it in
        every GPU world would cost a case three analyses. The path goes on either way (an assert the analysis
        decides wrongly must not hide what follows)."""
        if holds is False and (self.world_reads != reads_before or _DEVICE_WORDS.search(text)):
            frame.add(Finding(SKIP, (step(frame.rel, line, f"{text} fails on a machine without the GPUs it asks "
                                                           "for"),), key=f"{ASSERT_KEY}{frame.rel}:{line}"))

    def world_memo_hit(self, reads_world: dict[Any, bool], key: Any) -> None:
        """A hit in a per-world class table (class bodies, MROs...): it counts as a read of the world when
        computing it read one, or while it is still being computed (a cycle: not known yet)."""
        if reads_world.get(key, True):
            self.world_reads += 1

    def _module_env(self, rel: str, world: int) -> tuple[dict[str, Value], bool]:
        st = self.module_state(rel, world)
        return st.env, bool(st.stars)

    if TYPE_CHECKING:
        # dataflow.Interp
        def charge(self, n: int) -> None: ...
        def budgeted(self, limit: int, fn: Callable[..., Any], *args: Any) -> tuple[Any, int]: ...
        def module_state(self, rel: str, world: int, names: tuple[str, ...] | None = None) -> ModuleState: ...
        def module_attr(self, rel: str, name: str, world: int, dotted: str = "") -> Value: ...
        def module_registries(self, rel: str) -> frozenset[str]: ...
        def registry_view(self, v: Value, world: int) -> Value: ...
        def register(self, origin: str, key: Value, value: Value, writer: str, world: int) -> None: ...
        def writers_of(self, origin: str) -> frozenset[str]: ...
        def ext_value(self, path: str, world: int) -> Value: ...
        def lookup(self, name: str, frame: Frame) -> Value: ...
        def lookup_global(self, name: str, frame: Frame) -> Value: ...

        # interp_statements.StatementsMixin
        def exec_block(self, body: list[ast.stmt], frame: Frame) -> bool: ...
        def exec_stmt(self, s: ast.stmt, frame: Frame) -> bool: ...
        def _branch(self, frame: Frame) -> Frame: ...
        def make_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda,
                          frame: Frame) -> FuncV: ...
        def bind(self, target: ast.expr, v: Value, frame: Frame) -> None: ...
        def replace_at_path(self, given: ast.Attribute, before: Value, after: Value, frame: Frame) -> None: ...
        def namespace_call(self, holder: ast.Attribute, method: str, args: list[Value], frame: Frame) -> bool: ...
        def decorated_def(self, s: ast.FunctionDef | ast.AsyncFunctionDef, fv: FuncV, frame: Frame) -> FuncV: ...
        def registry_target(self, e: ast.expr, frame: Frame) -> DictV | Seq | None: ...
        def registry_entry(self, reg: DictV, key: Value, world: int) -> Value | None: ...
        def store_into_registry(self, e: ast.expr, reg: DictV | Seq, pairs: list[tuple[Value, Value]],
                                frame: Frame) -> None: ...

        # interp_expressions.ExpressionsMixin
        def ev(self, node: ast.expr | None, frame: Frame) -> Value: ...
        def _binop(self, op: ast.operator, a: Value, b: Value) -> Value: ...
        def operator_method(self, op: ast.operator, left: Value, right: Value, n: ast.AST, frame: Frame,
                            inplace: bool = False) -> Value | None: ...
        def printed_value(self, v: Value, conversion: str, spec: str, n: ast.AST, frame: Frame) -> Value | None: ...
        def call_own_method(self, obj: Value, name: str, args: list[Value], n: ast.AST,
                            frame: Frame) -> Value | None: ...
        def truth_value(self, v: Value, n: ast.AST, frame: Frame) -> Value: ...
        def truth_of(self, test: ast.expr, frame: Frame) -> bool | None: ...
        def getattr_v(self, obj: Value, name: str, frame: Frame, node: ast.AST) -> Value: ...
        def device_guard(self, test: ast.expr, frame: Frame) -> bool | None: ...
        def existing_device_elements(self, it: ast.expr, frame: Frame) -> Value | None: ...
        def dataclass_field_names(self, cls: ClassV, world: int) -> list[str] | None: ...
        def attribute_hook(self, obj: Inst, name: str, world: int) -> FuncV | None: ...
        def own_iterator(self, v: Value, line: int, frame: Frame) -> Value: ...
        def own_next(self, it: Value, line: int, frame: Frame) -> Value: ...
        def descriptor_get(self, desc: Inst, obj: Value, cls: ClassV, node: ast.AST, frame: Frame) -> Value | None: ...
        def namespace_of(self, e: ast.expr, frame: Frame) -> tuple[str, Callable[[str], Value | None]] | None: ...
        def namespace_entry(self, namespace: tuple[str, Callable[[str], Value | None]], name: Value,
                            default: Value | None, n: ast.AST, frame: Frame) -> Value: ...

        # interp_classes.ClassesMixin
        def enum_member(self, cls: ClassV, name: str, world: int) -> EnumV | None: ...
        def enum_members(self, cls: ClassV, world: int) -> Seq | None: ...
        def iteration(self, v: Value, world: int) -> Value: ...
        def class_node(self, cls: ClassV) -> ast.ClassDef | None: ...
        def class_body(self, cls: ClassV, world: int) -> dict[str, Value]: ...
        def add_generated_test(self, key: Value, value: Value, frame: Frame) -> None: ...
        def class_body_findings(self, cls: ClassV, world: int) -> tuple[Finding, ...]: ...
        def generated_init(self, cls: ClassV, world: int) -> tuple[GeneratedInit, list[ClassV]] | None: ...
        def mro(self, cls: ClassV, world: int, depth: int = 0) -> tuple[Value, ...]: ...
        def metaclass_of(self, cls: ClassV, world: int) -> ClassV | None: ...
        def is_metaclass(self, cls: ClassV, world: int) -> bool: ...
        def class_lookup(self, cls: ClassV, name: str, world: int) -> Value | None: ...
        def set_class_attribute(self, cls: ClassV, name: str, v: Value, world: int) -> None: ...
        def subclasses_of(self, base: ClassV, world: int) -> Seq: ...
        def autograd_apply(self, cls: ClassV, args: list[Value], kwargs: dict[str, Value], n: ast.AST,
                           frame: Frame) -> Value: ...
        def derives_from_torch_module(self, cls: ClassV, world: int) -> bool: ...
        def prints_as_module(self, cls: ClassV, world: int) -> bool: ...
        def super_lookup(self, cls: ClassV, name: str, world: int, of: ClassV | None = None) -> Value: ...
        def _is_property(self, fv: FuncV) -> bool: ...
        def _is_classmethod(self, fv: FuncV) -> bool: ...
        def property_setter(self, cls: ClassV, name: str, world: int) -> FuncV | None: ...
        def bound_method(self, found: FuncV, obj: Value, cls: ClassV) -> FuncV: ...
        def store_key(self, cls: ClassV, name: str, world: int) -> str | None: ...

        # interp_calls.CallsMixin
        def call(self, callee: Value, args: list[Value], kwargs: dict[str, Value], n: ast.AST, frame: Frame,
                 name: str) -> Value: ...
        def _apply_mark(self, mark: Value, target: Value) -> Value: ...
        def set_property(self, obj: Inst, name: str, v: Value, line: int, frame: Frame) -> Value | None: ...
        def absent_in_world(self, dotted: str, world: int) -> bool: ...
        def call_function_from(self, fv: FuncV, args: list[Value], kwargs: dict[str, Value], line: int,
                               frame: Frame) -> Value: ...
        def call_function(self, fv: FuncV, args: list[Value], kwargs: dict[str, Value], world: int,
                          depth: int, stores: tuple[tuple[str, Value], ...] = ()) -> CallResult: ...

        # interp_external.ExternalMixin
        def make_mark(self, name: str, args: list[Value], kwargs: dict[str, Value], n: ast.AST,
                      frame: Frame) -> Value: ...
        def call_ext(self, path: str, args: list[Value], kwargs: dict[str, Value], n: ast.AST,
                     frame: Frame) -> Value: ...
        def framework_method(self, recv: Value, name: str, args: list[Value], kwargs: dict[str, Value],
                             n: ast.Call, frame: Frame) -> Value | None: ...
        def run_passed_callable(self, method: str | None, args: list[Value], kwargs: dict[str, Value], n: ast.AST,
                                frame: Frame) -> bool: ...
        def container_method(self, recv: Value, name: str, args: list[Value],
                             kwargs: dict[str, Value]) -> Value | None: ...
        def _ext_args_check(self, path: str, args: list[Value], kwargs: dict[str, Value], n: ast.AST,
                            frame: Frame) -> None: ...
        def _repo_module(self, dotted: str, frame: Frame) -> str | None: ...
        def _reads_module_files(self, rel: str, frame: Frame) -> None: ...

        # interp_datafiles.DataFilesMixin
        def data_call(self, path: str, args: list[Value], kwargs: dict[str, Value],
                      frame: Frame) -> Value | None: ...
        def path_method_call(self, recv: PathV, name: str, args: list[Value], kwargs: dict[str, Value],
                             frame: Frame) -> Value: ...
        def _bytes(self, p: PathV, frame: Frame) -> bytes | None: ...

        # interp_configs.ConfigsMixin
        def config_call(self, path: str, args: list[Value], kwargs: dict[str, Value], n: ast.AST,
                        frame: Frame) -> Value | None: ...
        def config_method(self, cfg: Inst, name: str, args: list[Value], kwargs: dict[str, Value]) -> Value | None: ...

        # interp_statements.StatementsMixin (typer)
        def typer_run(self, fv: FuncV, n: ast.AST, frame: Frame) -> Value: ...

        # interp_torch.TorchMixin
        def tensor_method(self, recv: Value, name: str, args: list[Value], kwargs: dict[str, Value], n: ast.Call,
                          frame: Frame) -> Value: ...
        def call_torch(self, path: str, args: list[Value], kwargs: dict[str, Value], n: ast.AST,
                       frame: Frame) -> Value: ...
        def call_torch_testing(self, path: str, last: str, args: list[Value], kwargs: dict[str, Value],
                               n: ast.AST, frame: Frame) -> Value | None: ...
