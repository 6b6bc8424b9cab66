"""Conftest hooks that skip tests by their markers: `pytest_collection_modifyitems` and `pytest_runtest_setup`.

A repository's own marker (`@pytest.mark.needs_gpu`) means nothing by its name: a conftest gives it its meaning,
typically `if not torch.cuda.is_available(): for item in items: if "needs_gpu" in item.keywords:
item.add_marker(skip)`, or `pytest_runtest_setup(item)` calling `pytest.skip(...)` when
`item.get_closest_marker("multi_gpu")` and too few GPUs. Such a test is skipped on a CPU runner because it needs a
GPU, whatever its name says.

Each hook is run by the interpreter, in each world, on one item that models the test: its marker names and its
function's name in `item.keywords`, `item.get_closest_marker(name)`, `item.iter_markers()`, `item.name`. The body is
rewritten so that what the model cannot follow by value becomes a value: `<x>.add_marker(m)` appends `m` to a
list, `<x>.get_closest_marker(n)` reads a dict of the test's marks, `<x>.iter_markers(...)` a list of them. The marks
added and the skips reached are the test's, like its own: checked in the GPU worlds, so a skip that GPUs lift
is a GPU need (Analyzer.analyse_case). Other hooks, and other uses of the items, are not modelled.
"""

from __future__ import annotations

import ast
import copy

from tools.classify.datafiles import module_path
from tools.classify.dataflow import Frame, Interp
from tools.classify.evidence import ALWAYS_SKIP_KEY, SKIP, Finding, step
from tools.classify.marks import mark_findings
from tools.classify.plugins import ITEM_REL
from tools.classify.values import UNRESOLVED as UNK
from tools.classify.values import ClassV, Const, DictV, Ext, FuncV, Inst, MarkV, PathV, Seq, Value

MODIFY_ITEMS = "pytest_collection_modifyitems"
RUNTEST_SETUP = "pytest_runtest_setup"
ITEM = ClassV(ITEM_REL, (1, 0), "Item")
# names no Python source can spell: the list `add_marker` appends to, the test's marks by name, all of them
_ADDED = "<added marks>"
_BY_NAME = "<marks by name>"
_ALL = "<all marks>"
_LISTS = "<mark lists by name>"


class _Rewrite(ast.NodeTransformer):
    """`x.add_marker(m)` -> `<added>.append(m)`, `x.get_closest_marker(n)` -> `<by name>.get(n)`,
    `x.iter_markers()` -> `<all>`, `x.iter_markers(n)` / `(name=n)` -> `<lists>.get(n, [])`, for any name `x`."""

    def visit_Call(self, node: ast.Call) -> ast.AST:
        node = self.generic_visit(node)  # type: ignore[assignment]
        f = node.func
        if not (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)):
            return node
        arg = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "name"), None)
        if f.attr == "add_marker" and node.args:
            return _call(_ADDED, "append", [node.args[0]], node)
        if f.attr == "get_closest_marker" and arg is not None:
            return _call(_BY_NAME, "get", [arg], node)
        if f.attr == "iter_markers":
            if arg is None:
                return ast.copy_location(ast.Name(_ALL, ast.Load()), node)
            return _call(_LISTS, "get", [arg, ast.List([], ast.Load())], node)
        return node


def _call(holder: str, method: str, args: list[ast.expr], at: ast.AST) -> ast.Call:
    attr = ast.copy_location(ast.Attribute(ast.Name(holder, ast.Load()), method, ast.Load()), at)
    return ast.copy_location(ast.Call(attr, args, []), at)


class ItemHooks:
    """The item hooks a test file sees (its module's and its conftests'), run per test model and world."""

    def __init__(self, interp: Interp) -> None:
        self.interp = interp
        self.bodies: dict[tuple[str, tuple[int, int]], tuple[list[ast.stmt], list[str], str] | None] = {}
        self.hooks: dict[tuple[str, int], list[FuncV]] = {}
        self.memo: dict[tuple[object, ...], list[Finding]] = {}
        self.reads_world: dict[tuple[str, object], bool] = {}  # a key of hooks or memo -> computing it read the world

    def of(self, rel: str, world: int) -> list[FuncV]:
        """The in-repo item hooks of a test file's conftests and of the file itself."""
        key = (rel, world)
        got = self.hooks.get(key)
        if got is None:
            got = []
            before = self.interp.world_reads
            for c in (*self.interp.source.conftests_for(rel), rel):
                env = self.interp.module_state(c, world, (MODIFY_ITEMS, RUNTEST_SETUP)).env
                got.extend(h for name in (MODIFY_ITEMS, RUNTEST_SETUP) if isinstance(h := env.get(name), FuncV)
                           and h.rel == c and self._body(h) is not None)
            self.hooks[key] = got
            self.reads_world[("hooks", key)] = self.interp.world_reads != before
        else:
            self.interp.world_memo_hit(self.reads_world, ("hooks", key))
        return got

    def findings(self, rel: str, marks: list[Value], test_name: str, world: int, key_in_file: str = "") -> list[
            Finding]:
        """What the item hooks do to a test with these marks in this world: the marks they add and the skips they
        reach, as findings (each under the hook's location). `key_in_file`: the test's node id after its file
        (`TestX::test_y[cuda]`), which `item.name` and `item.nodeid` end with."""
        hooks = self.of(rel, world)
        if not hooks:
            return []
        named = _named(marks)
        key = (rel, tuple(named), test_name, world, key_in_file)
        got = self.memo.get(key)
        if got is None:
            got = []
            before = self.interp.world_reads
            for h in hooks:
                got.extend(self._run(h, named, test_name, world, rel, key_in_file or test_name))
            self.memo[key] = got
            self.reads_world[("findings", key)] = self.interp.world_reads != before
        else:
            self.interp.world_memo_hit(self.reads_world, ("findings", key))
        return got

    def _run(self, hook: FuncV, named: list[tuple[str, Value]], test_name: str, world: int, rel: str,
             key_in_file: str) -> list[Finding]:
        body = self._body(hook)
        assert body is not None
        stmts, params, items_param = body
        marks = [m for _, m in named]
        name = key_in_file.rsplit("::", 1)[-1]  # with its parametrization id: `test_y[cuda]`
        item = Inst(ITEM, (
            ("fspath", Const(module_path(rel).text)),  # (`"cuda_tests" in str(item.fspath)`: the test's own file)
            ("keywords", Seq(tuple(Const(n) for n in dict.fromkeys([*(n for n, _ in named), name, test_name])),
                             "list")),
            ("name", Const(name)),
            ("nodeid", Const(f"{rel}::{key_in_file}")),
            ("originalname", Const(test_name)),
            ("path", PathV(module_path(rel).text, "path")),
        ))
        by_name: dict[str, list[Value]] = {}
        for n, m in named:
            by_name.setdefault(n, []).append(m)
        env: dict[str, Value] = dict(hook.captured)
        env.update({p: UNK for p in params})
        env[items_param] = Seq((item,), "list") if hook.name == MODIFY_ITEMS else item
        env[_ADDED] = Seq((), "list")
        env[_ALL] = Seq(tuple(marks), "list")
        env[_BY_NAME] = DictV(tuple((Const(n), ms[0]) for n, ms in by_name.items()))
        env[_LISTS] = DictV(tuple((Const(n), Seq(tuple(ms), "list")) for n, ms in by_name.items()))
        frame = Frame(hook.rel, world, env, self.interp.module_state(hook.rel, world, ()).env, [], 1)
        ended = self.interp.exec_block(stmts, frame)
        where = step(hook.rel, hook.pos[0], hook.name)
        added = frame.env.get(_ADDED)
        out = mark_findings(list(added.items), where) if isinstance(added, Seq) else []
        skipped = [f for f in frame.findings if f.kind == SKIP]
        if ended and not frame.returns and skipped:
            # every path of the hook ends in a skip: the test does not run in this world, as under a skip mark
            # without a condition (a world where the hook lets it run lifts it)
            return out + [Finding(SKIP, f.steps, f.gpu_count, f.vram_gb, ALWAYS_SKIP_KEY + f.key).prefixed(where)
                          for f in skipped]
        return out + [f.prefixed(where) for f in frame.findings]

    def _body(self, hook: FuncV) -> tuple[list[ast.stmt], list[str], str] | None:
        """(rewritten body, its parameters, the items/item parameter); None: a hook this model cannot run (a method,
        one without parameters)."""
        key = (hook.rel, hook.pos)
        if key in self.bodies:
            return self.bodies[key]
        node = self.interp.source.module(hook.rel).defs.get(hook.pos)
        got = None
        if isinstance(node, ast.FunctionDef) and hook.cls is None:
            params = [a.arg for a in (*node.args.posonlyargs, *node.args.args)]
            wanted = "items" if node.name == MODIFY_ITEMS else "item"
            if params:
                items_param = wanted if wanted in params else params[-1]
                stmts = [_Rewrite().visit(s) for s in copy.deepcopy(node).body]
                got = ([ast.fix_missing_locations(s) for s in stmts], params, items_param)
        self.bodies[key] = got
        return got


def _named(marks: list[Value]) -> list[tuple[str, Value]]:
    """(name, mark) of each mark pytest would list for the item: `pytest.mark.<name>` with or without a call."""
    out: list[tuple[str, Value]] = []
    for m in marks:
        if isinstance(m, MarkV):
            out.append((m.name, m))
        elif isinstance(m, Ext) and m.path.startswith("pytest.mark.") and m.path.count(".") == 2:
            name = m.path[len("pytest.mark."):]
            out.append((name, MarkV(name)))
    return out
