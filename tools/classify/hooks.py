"""`pytest_generate_tests` hooks in the repository: which `metafunc.parametrize(...)` calls they make for a test.

pytest 9 (`_pytest/python.py`, `PyCollector._genfunctions`) calls the hook with `call_extra`: the test module's
`pytest_generate_tests` and its class's (`cls().pytest_generate_tests`, inherited ones too) join the registered
implementations, and pluggy calls the newest first, so the order of `metafunc.parametrize` calls is: the
class's hook, the module's, then the conftests' (deepest first), then pytest's own plugins: the fixture
manager (parametrized fixtures) and, last, `@pytest.mark.parametrize`. An initial conftest (one pytest loads
before the session starts: in the directories of the command line's paths and above them, and in their `test*`
subdirectories) is registered before the fixture manager and is called after it, a deeper one before it. The
command line is not known here, but every run from the repository root loads the root's conftest and those of
its `test*` directories at the start (a path below one of them has it among its parents; no path, or the root
itself, loads them by pytest's `test*` rule), so their hooks come after the parametrized fixtures
(`HookCalls.initial`: flair's `tests/conftest.py`, `[resume1.txt-False]`). Where another conftest hook and a
parametrized fixture both make ids, their order is not known statically and the test is keyed by its function.

A hook is run by the interpreter on a copy of its body in which every `metafunc.parametrize(...)` becomes
`<calls>.append(pytest.mark.parametrize(...))`: what it parametrizes is then an ordinary value (a list of
parametrize marks, in call order), decided or not like any other. A hook that hands `metafunc` to other code,
or reads an attribute this model does not give, is opaque: its tests are keyed by their function.
"""

from __future__ import annotations

import ast
import copy

from tools.classify.dataflow import Frame, Interp
from tools.classify.frozen import frozen
from tools.classify.values import (
    UNRESOLVED as UNK,
)
from tools.classify.values import (
    ClassV,
    Const,
    Ext,
    FuncV,
    Inst,
    MarkV,
    Seq,
    Value,
)

HOOK = "pytest_generate_tests"
MODIFY_HOOK = "pytest_collection_modifyitems"
METAFUNC = ClassV("<metafunc>", (0, 0), "Metafunc")  # what a hook receives: .fixturenames, .function, .cls
# names no Python source can spell: the list the rewritten calls append to, and pytest.mark.parametrize
_CALLS = "<metafunc calls>"
_MARK = "<parametrize>"
# attributes of Metafunc the model gives; `config` is unknown (`metafunc.config.getoption(...)` reads the
# option's declared default, as everywhere)
_ATTRS = frozenset({"fixturenames", "function", "cls", "module", "config", "parametrize"})


@frozen
class HookCalls:
    """The parametrize marks the hooks of one test make, in call order: `early` (class and module hooks, before
    parametrized fixtures), `conftest` (deeper conftests' hooks) and `initial` (conftest hooks every run loads at
    the start); None in any: a hook whose calls are not known."""

    early: tuple[MarkV, ...] | None
    conftest: tuple[MarkV, ...] | None  # deeper conftests: before or after the parametrized fixtures
    initial: tuple[MarkV, ...] | None  # the root's and its `test*` directories' conftests: after them


def always_initial(conftest: str) -> bool:
    """Whether every pytest run from the repository root loads this conftest before the session starts: the
    root's own, or one in a `test*` directory directly under the root (see the module docstring)."""
    parts = conftest.split("/")
    return len(parts) == 1 or len(parts) == 2 and parts[0].startswith("test")


class _Rewrite(ast.NodeTransformer):
    """`metafunc.parametrize(a, b, ...)` -> `<calls>.append(<parametrize>(a, b, ...))`; counts other uses of
    the metafunc name that the model does not give (`opaque`)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.opaque = False

    def visit_Call(self, node: ast.Call) -> ast.AST:
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr == "parametrize" and isinstance(f.value, ast.Name) \
                and f.value.id == self.name:
            node.args = [self.visit(a) for a in node.args]
            node.keywords = [self.visit(k) for k in node.keywords]
            mark = ast.copy_location(ast.Call(ast.Name(_MARK, ast.Load()), node.args, node.keywords), node)
            append = ast.copy_location(ast.Attribute(ast.Name(_CALLS, ast.Load()), "append", ast.Load()), node)
            return ast.copy_location(ast.Call(append, [mark], []), node)
        return self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        if isinstance(node.value, ast.Name) and node.value.id == self.name:
            if node.attr not in _ATTRS or node.attr == "parametrize" or not isinstance(node.ctx, ast.Load):
                self.opaque = True  # `metafunc.definition`, a stored attribute, `metafunc.parametrize` as a value
            return node
        return self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id == self.name:
            self.opaque = True  # `helper(metafunc)`, `m = metafunc`: its calls happen elsewhere
        return node


class Hooks:
    """The `pytest_generate_tests` hooks a test sees, and the calls they make; rewritten bodies are kept per
    hook definition."""

    def __init__(self, interp: Interp) -> None:
        self.interp = interp
        self.bodies: dict[tuple[str, tuple[int, int]], tuple[list[ast.stmt], str, str | None] | None] = {}
        self.keyword_memo: dict[tuple[str, int], dict[str, str]] = {}

    def hooks_of(self, rel: str, classes: tuple[ClassV, ...],
                 world: int) -> tuple[list[Value], list[Value], list[Value]]:
        """(class and module hooks, in call order; deeper conftest hooks, deepest first; initial conftest hooks,
        deepest first) for a test of `rel`."""
        early: list[Value] = []
        if classes:
            found = self.interp.class_lookup(classes[-1], HOOK, world)
            if found is not None:
                early.append(found)
        found = self.interp.module_state(rel, world).env.get(HOOK)
        if found is not None:
            early.append(found)
        conftest: list[Value] = []
        initial: list[Value] = []
        for c in reversed(self.interp.source.conftests_for(rel)):
            found = self.interp.module_state(c, world).env.get(HOOK)
            if found is not None and c != rel:
                (initial if always_initial(c) else conftest).append(found)
        return early, conftest, initial

    def tested_keywords(self, rel: str, world: int) -> dict[str, str]:
        """Keywords a conftest's `pytest_collection_modifyitems` over a test of `rel` looks for
        (`"gpu" in item.keywords`), each with where. pytest puts a parametrized test's whole id among its
        keywords beside its marks' names, so a case whose id is such a keyword is treated as if marked with it."""
        key = (rel, world)
        got = self.keyword_memo.get(key)
        if got is None:
            got = {}
            for c in self.interp.source.conftests_for(rel):
                hook = self.interp.module_state(c, world).env.get(MODIFY_HOOK)
                node = self.interp.source.module(hook.rel).defs.get(hook.pos) if isinstance(hook, FuncV) else None
                if node is not None and isinstance(hook, FuncV):
                    for word, line in keyword_tests(node):
                        got.setdefault(word, f"{hook.rel}:{line}")
            self.keyword_memo[key] = got
        return got

    def has_hooks(self, rel: str, classes: tuple[ClassV, ...], world: int) -> bool:
        return any(self.hooks_of(rel, classes, world))

    def calls(self, rel: str, classes: tuple[ClassV, ...], fv: FuncV, fixturenames: list[str],
              world: int) -> HookCalls:
        """What the hooks parametrize for test `fv` whose fixture closure is `fixturenames`."""
        early, conftest, initial = self.hooks_of(rel, classes, world)
        metafunc = Inst(METAFUNC, (
            ("cls", classes[-1] if classes else Const(None)),
            ("config", UNK),
            ("fixturenames", Seq(tuple(Const(n) for n in fixturenames), "list")),
            ("function", fv),
        ))
        cls = classes[-1] if classes else None
        return HookCalls(self._run_all(early, metafunc, cls, world), self._run_all(conftest, metafunc, None, world),
                         self._run_all(initial, metafunc, None, world))

    def _run_all(self, hooks: list[Value], metafunc: Inst, cls: ClassV | None,
                 world: int) -> tuple[MarkV, ...] | None:
        out: list[MarkV] = []
        for h in hooks:
            got = self._run(h, metafunc, cls, world)
            if got is None:
                return None
            out.extend(got)
        return tuple(out)

    def _run(self, hook: Value, metafunc: Inst, cls: ClassV | None, world: int) -> list[MarkV] | None:
        """The parametrize marks one hook makes; None: not known (not an in-repo function, opaque, undecided)."""
        if not isinstance(hook, FuncV):
            return None
        body = self._body(hook)
        if body is None:
            return None
        stmts, param, self_name = body
        env: dict[str, Value] = dict(hook.captured)
        env.update({param: metafunc, _CALLS: Seq((), "list"), _MARK: Ext("pytest.mark.parametrize")})
        if self_name is not None:
            if cls is None:
                return None
            env[self_name] = Inst(cls)
        frame = Frame(hook.rel, world, env, self.interp.module_state(hook.rel, world, ()).env, [], 1,
                      self_name=self_name, cls=hook.cls)
        self.interp.exec_block(stmts, frame)
        got = frame.env.get(_CALLS)
        if not isinstance(got, Seq) or not all(isinstance(m, MarkV) for m in got.items):
            return None
        return [m for m in got.items if isinstance(m, MarkV)]

    def _body(self, hook: FuncV) -> tuple[list[ast.stmt], str, str | None] | None:
        """(rewritten body, metafunc parameter, self parameter or None); None: a hook this model cannot run."""
        key = (hook.rel, hook.pos)
        if key in self.bodies:
            return self.bodies[key]
        node = self.interp.source.module(hook.rel).defs.get(hook.pos)
        got: tuple[list[ast.stmt], str, str | None] | None = None
        if isinstance(node, ast.FunctionDef):
            params = [a.arg for a in (*node.args.posonlyargs, *node.args.args)]
            self_name = params[0] if hook.cls is not None and params else None
            rest = params[1:] if self_name is not None else params
            if len(rest) == 1 and not node.decorator_list:
                tree = copy.deepcopy(node)
                rewrite = _Rewrite(rest[0])
                stmts = [rewrite.visit(s) for s in tree.body]
                if not rewrite.opaque:
                    got = ([ast.fix_missing_locations(s) for s in stmts], rest[0], self_name)
        self.bodies[key] = got
        return got


def keyword_tests(node: ast.AST) -> list[tuple[str, int]]:
    """(keyword, line) of each `"<keyword>" in <item>.keywords` test in a hook's body."""
    return [(t.left.value, t.lineno) for t in ast.walk(node)
            if isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], ast.In)
            and isinstance(t.left, ast.Constant) and isinstance(t.left.value, str)
            and isinstance(t.comparators[0], ast.Attribute) and t.comparators[0].attr == "keywords"]
