"""Abstract interpretation of Python code in a world with a given number of CUDA devices.

World 0 is the CPU-only machine a `cpu` label promises: `torch.cuda.is_available()` is False there, so
`"cuda" if torch.cuda.is_available() else "cpu"` is "cpu" and code under that guard is never reached.
Calls into in-repo functions, classes and methods are followed with their argument values, memoised on
(function, arguments, world), and cut at cycles; the findings of a call come back with a `calls` step.

This module holds Interp: its memo tables, work budgets, module top levels and name lookup, composed with
one mixin per concern:
- interp_statements.py: statements, control flow, imports, function and class definitions
- interp_expressions.py: expressions, comprehensions, attribute reads
- interp_classes.py: class bodies, MRO, Enum members, properties
- interp_calls.py: call sites and following in-repo functions (memoised)
- interp_external.py: pytest/unittest/mock/builtins and other calls leaving the repository; methods of
  pytest/unittest objects (getoption, skipTest, patching) and of known strings, dicts and lists
- interp_torch.py: torch calls, tensor and module methods, torch.testing
Shared by them: interp_base.py (budgets, Frame, CallResult, the interface between the parts) and devices.py
(pure functions on values: devices, truthiness, comparisons, types). The names other modules import from
here are re-exported (__all__).
"""

from __future__ import annotations

import builtins
import math
import sys
from collections.abc import Callable
from typing import Any

from tools.classify import conventions, registries, torch_api, versions
from tools.classify.datafiles import module_path
from tools.classify.devices import TORCH_DTYPE_NAMES
from tools.classify.evidence import UNKNOWN, Finding, step
from tools.classify.interp_base import (
    CASE_BUDGET,
    FILE_BUDGET,
    MODULE_FINDINGS,
    OVER_BUDGET_CHARGE,
    UNIT_BUDGET,
    WORLDS,
    BudgetExceeded,
    Frame,
    ModuleState,
    is_fixture_def,
)
from tools.classify.interp_calls import CallsMixin
from tools.classify.interp_classes import ClassesMixin
from tools.classify.interp_configs import ConfigsMixin
from tools.classify.interp_datafiles import DataFilesMixin
from tools.classify.interp_expressions import ExpressionsMixin
from tools.classify.interp_external import PARAMETERIZED_EXPAND, REGEX_PREFIX, ExternalMixin
from tools.classify.interp_statements import StatementsMixin
from tools.classify.interp_torch import TorchMixin
from tools.classify.test_state import patched_value
from tools.classify.values import (
    PARAMETER_VALUE,
    Const,
    DictV,
    Ext,
    FuncV,
    ModV,
    Seq,
    Unresolved,
    Value,
    bounded,
    extended,
)
from tools.classify.values import UNRESOLVED as UNK

# The numbers the standard library, numpy and torch name: their values (one NaN object, so that equal constants
# compare equal)
NUMBER_CONSTANTS: dict[str, float | int] = {
    f"{module}.{name}": value for module in ("math", "cmath", "numpy", "torch")
    for name, value in (("pi", math.pi), ("e", math.e), ("inf", math.inf), ("nan", math.nan))
} | {"math.tau": math.tau, "cmath.tau": math.tau, "sys.maxsize": sys.maxsize, "numpy.euler_gamma": 0.5772156649015329}

__all__ = [
    "CASE_BUDGET",
    "FILE_BUDGET",
    "OVER_BUDGET_CHARGE",
    "PARAMETERIZED_EXPAND",
    "REGEX_PREFIX",
    "TORCH_DTYPE_NAMES",
    "UNIT_BUDGET",
    "BudgetExceeded",
    "Frame",
    "Interp",
    "is_fixture_def",
]

BUILTIN_NAMES = frozenset(dir(builtins))
TYPE_CHECKING_FLAGS = frozenset({"typing.TYPE_CHECKING", "typing_extensions.TYPE_CHECKING"})


# pytest hooks a conftest implements that run before the first test (pluggy calls every conftest's)
STARTUP_HOOKS = ("pytest_configure", "pytest_sessionstart")


class Interp(StatementsMixin, ExpressionsMixin, ClassesMixin, CallsMixin, ExternalMixin, DataFilesMixin,
             ConfigsMixin, TorchMixin):
    """The interpreter. One per analysis run; all memo tables live in it (set up by InterpBase.__init__; no
    module-level state)."""

    # -- budgets -----------------------------------------------------------------------------------
    def charge(self, n: int) -> None:
        self.steps += n
        if self.steps > self.limit:
            raise BudgetExceeded(self.limit)

    def budgeted(self, limit: int, fn: Callable[..., Any], *args: Any) -> tuple[Any, int]:
        """fn(*args) under a fresh budget of `limit` steps: (its result, the steps it took). The enclosing
        budget is not charged; BudgetExceeded propagates."""
        saved = self.steps, self.limit
        self.steps, self.limit = 0, limit
        try:
            out = fn(*args)
            return out, self.steps
        finally:
            self.steps, self.limit = saved

    # -- modules -------------------------------------------------------------------------------
    def module_state(self, rel: str, world: int, names: tuple[str, ...] | None = None) -> ModuleState:
        """Top-level statements of `rel` run once per world, after those of the packages enclosing it (as
        Python imports them); cycles see the partial namespace. Running the packages first makes a cycle
        inside a package start where Python starts it, at the package, whichever module a test imported first:
        otherwise a module's memoised namespace depended on the file analysed before (accelerate:
        `is_xpu_available` undecided after test_hooks.py, decided when test_state_checkpointing.py came
        first)."""
        key = (rel, world)
        st = self.modules.get(key)
        if st is not None:
            # an import cycle sees a partial namespace: as the world decided it, if it decided anything since.
            # `names`: the reader takes only these names (a global lookup); () none (a frame for the module's
            # code, whose global reads are lookups); None: anything of the module
            if not st.done:
                if self.world_reads != st.reads_at_start:
                    self.world_reads += 1
            elif st.world_dependent and (names is None or any(self.name_varies(rel, n) for n in names)):
                self.world_reads += 1
            return st
        for init in self.source.package_inits(rel):
            self.module_state(init, world)
        if key in self.modules:  # a package imported rel
            return self.module_state(rel, world)
        st = ModuleState({}, [], [], reads_at_start=self.world_reads)
        self.modules[key] = st
        parsed = self.source.module(rel)
        if registries.fills_on_subclass(parsed.defs.values()):
            self.subclass_registrars.add(rel)
        if parsed.tree is not None:
            frame = Frame(rel, world, st.env, None, st.findings)
            try:
                st.ended = self.budgeted(UNIT_BUDGET, self.exec_block, parsed.tree.body, frame)[0]
            except RecursionError:
                st.findings.append(Finding(UNKNOWN, (step(rel, 1, "module too deeply nested to analyse"),)))
            except BudgetExceeded as exc:
                st.findings.append(Finding(UNKNOWN, (step(rel, 1, f"module top level: {exc}"),)))
        st.done = True
        st.world_dependent = self.world_reads != st.reads_at_start
        return st

    def name_varies(self, rel: str, name: str) -> bool:
        """Whether module `rel` binds `name` differently in some world (or may: a namespace not done there). A
        module whose top level read the world (`DEVICES = ["cpu"]; if torch.cuda.is_available(): ...`) still binds
        most names alike everywhere (`import pytest`, its defs): reading those is not a read of the world, so a
        case analysed in one world stands for the others (analyzer._classify_case). Memoised per name; the other
        worlds' namespaces are run for it without counting their reads for the reader."""
        key = (rel, name)
        got = self.varying_names.get(key)
        if got is None:
            reads = self.world_reads
            seen: set[tuple[Value | None, tuple[Value, ...]]] = set()
            got = False
            for w in WORLDS:
                st = self.module_state(rel, w)
                if not st.done:
                    got = True
                    break
                if name == MODULE_FINDINGS:
                    seen.add((None, tuple(st.findings)))  # type: ignore[arg-type]
                else:
                    v = st.env.get(name)
                    seen.add((v, () if v is not None else tuple(st.stars)))
                if len(seen) > 1:
                    got = True
                    break
            self.world_reads = reads
            self.varying_names[key] = got
        return got

    # -- registries (registries.py) ---------------------------------------------------------------
    def module_registries(self, rel: str) -> frozenset[str]:
        got = self.registry_names_memo.get(rel)
        if got is None:
            tree = self.source.module(rel).tree
            got = self.registry_names_memo[rel] = registries.registry_names(tree) if tree is not None else frozenset()
        return got

    def registry_view(self, v: Value, world: int) -> Value:
        """A registry as it is now: the dict its module bound, with the entries import-time calls stored since. Read
        for the first time, the modules that may fill it are run first (the analysis imports lazily; Python has run
        them by the time a test runs: registries.py)."""
        if type(v) is not DictV and type(v) is not Seq or v.origin in (None, PARAMETER_VALUE):  # type: ignore[union-attr]
            return v
        key = (v.origin, world)
        loaded = self.registries_loaded.get(key)
        if loaded is None and self._imported(registries.origin_module(v.origin), world):
            # (not while its module is still importing: a writer importing it would see it half-run, and keep that)
            self.registries_loaded[key] = False
            writers = sorted(self.writers_of(v.origin))
            for m in writers:
                self.module_state(m, world)
            loaded = self.registries_loaded[key] = any(self.modules[m, world].world_dependent for m in writers)
        if loaded:
            self.world_reads += 1  # (a writer's top level let the world decide what it stored: as module_state)
        added = self.registered.get(key)
        held = v.__dict__.get(registries.HOLDS, 0)  # (a view read again: `from models import CASES`)
        if not added or held == len(added):
            return v
        cached = self.registry_views.get(key)  # (the value last viewed, how many entries, its view)
        grown: Value = v
        if cached is not None and cached[0] is v:
            if cached[1] == len(added):
                return cached[2]
            if type(cached[2]) is type(v):
                grown, held = cached[2], cached[1]  # (grown by the new entries only)
        new = added[held:]
        view = extended(grown, new) if isinstance(grown, DictV) else bounded(
            Seq((*grown.items, *(item for _, item in new)), "list", v.origin))  # type: ignore[union-attr]
        if type(view) is type(v):
            view.__dict__[registries.HOLDS] = len(added)  # (a frozen value: its __dict__ directly)
        self.registry_views[key] = (v, len(added), view)
        return view

    def _imported(self, rel: str, world: int) -> bool:
        """Whether `rel` and the packages enclosing it have finished importing in this world."""
        for m in (*self.source.package_inits(rel), rel):
            st = self.modules.get((m, world))
            if st is None or not st.done:
                return False
        return True

    def writers_of(self, origin: str) -> frozenset[str]:
        """The modules whose import fills a registry: what importing its module runs, the library modules importing
        that module by name to call what fills it, and the test modules and conftests that may store into it (pytest
        imports every one it collects before the first test runs: registries.py)."""
        got = self.registry_writers.get(origin)
        if got is None:
            home, root = registries.origin_module(origin), registries.origin_root(origin)
            tree = self.source.module(home).tree
            names = (root, *registries.registering_functions(tree, root)) if tree is not None else (root,)
            got = self.registry_writers[origin] = frozenset(
                (*self.source.import_time_closure(home), *self.source.registering_importers(home, names)))
        return got

    def register(self, origin: str, key: Value, value: Value, writer: str, world: int) -> None:
        """An entry an import-time call of `writer`'s top level stored into a registry: kept when `writer` is one of
        the registry's writers (registry_view runs them all before the first read, so the entries do not depend on
        which test file was analysed first); an entry another module stores is not (registries.py)."""
        if writer in self.writers_of(origin):
            self.registered.setdefault((origin, world), []).append((key, bounded(value)))

    def startup_hook_findings(self, conftest: str, world: int) -> tuple[Finding, ...]:
        """What a conftest's `pytest_configure(config)` and `pytest_sessionstart(session)` do before any test runs
        (`torch.set_default_device("cuda")` there makes every test use CUDA, as at the conftest's top level): the
        hooks run once per world on unknown arguments, in the module's namespace (`config.getoption` reads the
        declared default, as in tests)."""
        key = (conftest, world)
        got = self.startup_hooks.get(key)
        if got is not None:
            self.world_memo_hit(self.startup_reads_world, key)
        else:
            before = self.world_reads
            st = self.module_state(conftest, world)
            found: list[Finding] = []
            frame = Frame(conftest, world, dict(st.env), None, found)
            for name in STARTUP_HOOKS:
                fv = st.env.get(name)
                node = self.source.module(conftest).defs.get(fv.pos) if isinstance(fv, FuncV) else None
                if isinstance(fv, FuncV) and fv.rel == conftest and node is not None:
                    try:
                        self.budgeted(UNIT_BUDGET, self.call, fv, [UNK], {}, node, frame, name)
                    except (RecursionError, BudgetExceeded):
                        found.append(Finding(UNKNOWN, (step(conftest, fv.pos[0], f"{name}() too large to analyse"),)))
            got = self.startup_hooks[key] = tuple(found)
            self.startup_reads_world[key] = self.world_reads != before
        return got

    def module_attr(self, rel: str, name: str, world: int, dotted: str = "") -> Value:
        st = self.module_state(rel, world)
        if name in st.env:
            return self.registry_view(st.env[name], world)
        for star in st.stars:
            if isinstance(star, ModV) and star.rel and star.rel != rel:
                v = self.module_attr(star.rel, name, world)
                if not isinstance(v, Unresolved):
                    return v
            elif isinstance(star, Ext):
                return self.ext_value(f"{star.path}.{name}", world)
        if dotted:
            sub = self.source.resolve_import(f"{dotted}.{name}", rel, 0, "")
            if sub:
                return ModV(sub, f"{dotted}.{name}", rel)
        return UNK

    def ext_value(self, path: str, world: int) -> Value:
        """An external name; machine-dependent well-known constants get their value in this world."""
        if path in TYPE_CHECKING_FLAGS:
            # False when the code runs: `if TYPE_CHECKING:` imports are for type checkers only, and following
            # them makes import cycles Python never has (peft: `mapping.py` -> `tuners` while `config.py` is
            # still half-run, so `PeftConfig` is unknown in every tuner config module)
            return Const(False)
        if path in NUMBER_CONSTANTS:
            return Const(NUMBER_CONSTANTS[path])  # `math.pi` as a parameter: pytest ids it by its value
        if path == "torch.__version__":
            return self.decided_by_world(versions.torch_version_in, path, world)  # type: ignore[return-value]
        q = self.decided_by_world(torch_api.query_value, path, world) if path.startswith(
            torch_api.CONSTANT_PREFIXES) else NotImplemented
        if q is not NotImplemented:
            return Const(q)
        last = path.rsplit(".", 1)[-1]
        if "." in path and not path.startswith(("pytest.", "unittest.", "torch.cuda", "torch.nn", "os.")):
            kv = self.decided_by_world(conventions.known_value, last, world)
            if kv is not NotImplemented:
                return Const(kv)
            if last in conventions.DEVICE_LIST_HELPERS:
                return Ext(f"<devices>.{last}")
        return Ext(path)

    # -- name lookup -------------------------------------------------------------------------------
    def lookup(self, name: str, frame: Frame) -> Value:
        if name in frame.env:
            return self.registry_view(frame.env[name], frame.world)
        if name in frame.captured:
            return self.registry_view(frame.captured[name], frame.world)
        return self.lookup_global(name, frame)

    def lookup_global(self, name: str, frame: Frame) -> Value:
        """A module-level name of the module `frame` runs code of, past the frame's own locals and closure (what a
        function reads as a global, and `globals()[name]` gives)."""
        if self.stores_seen and (patched := patched_value(frame, frame.rel, name)) is not None:
            return patched  # a module global the test replaced
        st = self.module_state(frame.rel, frame.world, (name,))
        if name in st.env:
            return self.registry_view(st.env[name], frame.world)
        ext_star: Ext | None = None
        for star in st.stars:
            if isinstance(star, ModV) and star.rel and star.rel != frame.rel:
                v = self.module_attr(star.rel, name, frame.world)
                if not isinstance(v, Unresolved):
                    return v
            elif isinstance(star, Ext):
                v = self.ext_value(f"{star.path}.{name}", frame.world)
                if not isinstance(v, Ext):
                    return v
                ext_star = ext_star or v
        if name == "__name__":
            # pytest imports a module under its own name, never as "__main__": `if __name__ == "__main__":`
            # blocks (benchmarks, scripts at the bottom of a test file) do not run under it
            return Const(frame.rel.removesuffix(".py").replace("/", "."))
        if name == "__file__":
            return module_path(frame.rel)  # (a data file found from it: datafiles.py)
        if name in BUILTIN_NAMES:
            return Ext(f"builtins.{name}")
        return ext_star if ext_star is not None else UNK
