"""Where the keys of a dict attribute come from: only from devices of tensors that already exist?

A memory profiler groups live tensors by device (`self.by_device[t.device].append(t)`), copies the grouping
(`for d, ts in self.by_device.items(): self.stats[d] = ...`) and later reports on each key
(`for d, s in self.stats.items(): if d != torch.device("cpu"): with torch.cuda.device(d): ...`). When every
key that can ever enter the dict is the device of an existing value, a key is such a device too, and a CUDA
call guarded by "this key is not the CPU" can never be the test's first CUDA use (guards.cuda_guard).

Decided from the source of the classes alone (no interpreter state), so the answer is the same wherever the
loop is met. Read coinductively: a dict filled only from other such dicts (or itself) holds existing devices.
Only the classes given are read: code elsewhere that writes into the attribute of an instance
(`obj.stats[torch.device("cuda")] = 0` from outside the class) is not seen, as with any attribute.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from tools.classify.devices import _device_of_existing

# `self.<attr> = ...` that starts an empty dict
_EMPTY_DICTS = frozenset({"dict", "defaultdict", "OrderedDict"})
# methods of a dict that add no key from outside (`setdefault` is checked on its key)
_READ_METHODS = frozenset({"items", "keys", "values", "get", "clear", "pop", "popitem", "copy", "__len__",
                           "__contains__", "__getitem__", "__delitem__"})
# builtins that only read the dict they are given
_READERS = frozenset({"len", "bool", "sorted", "list", "tuple", "iter", "print", "str", "repr", "any", "all"})


def iterated_dict_attr(it: ast.expr) -> tuple[str, str, bool] | None:
    """`self.stats.items()` -> ("self", "stats", True); `self.stats` / `self.stats.keys()` -> (..., False); the
    flag says whether the loop's elements are (key, value) pairs. None: not a loop over a dict attribute."""
    pairs = False
    if isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and not it.args and not it.keywords \
            and it.func.attr in ("items", "keys"):
        pairs = it.func.attr == "items"
        it = it.func.value
    if isinstance(it, ast.Attribute) and isinstance(it.value, ast.Name):
        return it.value.id, it.attr, pairs
    return None


def iterated_local_dict(it: ast.expr) -> tuple[str, str] | None:
    """`devices.items()` -> ("devices", "items"); `.values()`, `.keys()`. None: not such a loop over a local
    name (a plain `for x in name:` is not looked at: most loops over an unknown name are over no dict)."""
    if isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and not it.args and not it.keywords \
            and it.func.attr in ("items", "keys", "values") and isinstance(it.func.value, ast.Name):
        return it.func.value.id, it.func.attr
    return None


def local_dict_of_existing_devices(func: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> tuple[bool, bool]:
    """For a local `name` bound only to dict comprehensions and never written into or handed to other code
    (`devices = {n: p.device for n, p in module.named_parameters()}`): whether its keys, and whether its values,
    are all devices of existing values. (False, False) when the name is anything else."""
    comps = []
    for holder, value in _bindings(func, name):
        if not (isinstance(holder, ast.Assign) and len(holder.targets) == 1
                and isinstance(holder.targets[0], ast.Name) and isinstance(value, ast.DictComp)):
            return False, False
        comps.append(value)
    if not comps or not all(_local_use_ok(node, parent) for node, parent in _uses(func, name)):
        return False, False
    return all(_existing(c.key) for c in comps), all(_existing(c.value) for c in comps)


def _existing(e: ast.expr) -> bool:
    """`t.device` of a local name other than a configuration (devices._device_of_existing)."""
    return isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and _device_of_existing(e)


def _uses(func: ast.AST, name: str) -> Iterator[tuple[ast.Name, ast.AST | None]]:
    parents = {c: p for p in ast.walk(func) for c in ast.iter_child_nodes(p)}
    for node in ast.walk(func):
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load):
            yield node, parents.get(node)


def _local_use_ok(node: ast.Name, up: ast.AST | None) -> bool:
    """A read that cannot add a key or value: a read-only method, iteration, a test, a reading builtin, `d[k]`."""
    if isinstance(up, ast.Attribute) and up.value is node:
        return up.attr in _READ_METHODS
    if isinstance(up, ast.Subscript) and up.value is node:
        return isinstance(up.ctx, ast.Load)
    if isinstance(up, (ast.For, ast.AsyncFor, ast.comprehension)) and up.iter is node:
        return True
    if isinstance(up, (ast.Compare, ast.If, ast.While, ast.IfExp, ast.BoolOp)) or (
            isinstance(up, ast.UnaryOp) and isinstance(up.op, ast.Not)):
        return True
    return isinstance(up, ast.Call) and isinstance(up.func, ast.Name) and up.func.id in _READERS and node in up.args


def keys_are_existing_devices(classes: list[ast.ClassDef], attr: str) -> bool:
    """Whether every key `self.<attr>` can hold, written by methods of `classes` (an object's in-repo MRO), is
    the device of an existing value (`t.device`, or a key of another such dict)."""
    return _Keys(classes).ok(attr, frozenset())


def _functions(classes: list[ast.ClassDef]) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    for c in classes:
        for node in c.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield node


class _Keys:
    """One question about one set of classes (the parents of a method's nodes computed once, and only for the
    methods that use the attribute: a large class' every method cost 0.16 s per question on linear_operator)."""

    def __init__(self, classes: list[ast.ClassDef]) -> None:
        self.classes = classes
        self.funcs = list(_functions(classes))
        self.parent: dict[ast.AST, ast.AST] = {}
        self.with_parents: set[ast.AST] = set()

    def _parents_of(self, f: ast.AST) -> None:
        if f not in self.with_parents:
            self.with_parents.add(f)
            for node in ast.walk(f):
                for child in ast.iter_child_nodes(node):
                    self.parent[child] = node

    def ok(self, attr: str, assumed: frozenset[str]) -> bool:
        assumed = assumed | {attr}
        if not all(_class_level_ok(c, attr) for c in self.classes):
            return False
        for f in self.funcs:
            me = _self_name(f)
            if me is None:
                continue
            for node in ast.walk(f):
                if isinstance(node, ast.Attribute) and node.attr == attr and isinstance(node.value, ast.Name) \
                        and node.value.id == me:
                    self._parents_of(f)
                    if not self._use_ok(node, f, me, assumed):
                        return False
        return True

    def _use_ok(self, node: ast.Attribute, f: ast.AST, me: str, assumed: frozenset[str]) -> bool:
        up = self.parent.get(node)
        if isinstance(node.ctx, ast.Store):
            if isinstance(up, ast.AnnAssign) and up.value is None:
                return True  # `self.stats: dict[torch.device, int]` binds nothing
            return isinstance(up, (ast.Assign, ast.AnnAssign)) and up.value is not None and _empty_dict(up.value)
        if isinstance(node.ctx, ast.Del):
            return True
        if isinstance(up, ast.Subscript) and up.value is node:
            return self._key_ok(up.slice, f, me, assumed)
        if isinstance(up, ast.Attribute) and up.value is node:
            call = self.parent.get(up)
            if up.attr == "setdefault" and isinstance(call, ast.Call) and call.func is up and call.args:
                return self._key_ok(call.args[0], f, me, assumed)
            return up.attr in _READ_METHODS
        if isinstance(up, (ast.For, ast.AsyncFor, ast.comprehension)) and up.iter is node:
            return True
        if isinstance(up, (ast.Compare, ast.If, ast.While, ast.IfExp, ast.BoolOp)) or (
                isinstance(up, ast.UnaryOp) and isinstance(up.op, ast.Not)):
            return True
        return isinstance(up, ast.Call) and isinstance(up.func, ast.Name) and up.func.id in _READERS \
            and node in up.args
        # anything else (an argument, an alias, a return) lets other code add keys

    def _key_ok(self, key: ast.expr, f: ast.AST, me: str, assumed: frozenset[str]) -> bool:
        if _device_of_existing(key) and isinstance(key, ast.Attribute) and isinstance(key.value, ast.Name) \
                and key.value.id != me:
            return True
        if not isinstance(key, ast.Name):
            return False
        bindings = list(_bindings(f, key.id))
        return bool(bindings) and all(self._binding_ok(b, f, me, assumed) for b in bindings)

    def _binding_ok(self, b: tuple[ast.AST, ast.expr | None], f: ast.AST, me: str, assumed: frozenset[str]) -> bool:
        """A name bound by `for k, v in self.other.items()` (its key) or `k = t.device`."""
        holder, value = b
        if isinstance(holder, (ast.For, ast.AsyncFor)):
            got = iterated_dict_attr(holder.iter)
            if got is None or got[0] != me or not _is_key_target(holder.target, value, got[2]):
                return False
            return got[1] in assumed or self.ok(got[1], assumed)
        if isinstance(holder, ast.Assign) and value is not None:
            return self._key_ok(value, f, me, assumed) if not isinstance(value, ast.Name) else False
        return False


def _class_level_ok(c: ast.ClassDef, attr: str) -> bool:
    """A class attribute of that name, read through `self`, must be an empty dict too."""
    for node in c.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, (ast.AnnAssign, ast.AugAssign)) else []
        value = getattr(node, "value", None)
        if any(isinstance(t, ast.Name) and t.id == attr for t in targets) and not (
                (value is None and isinstance(node, ast.AnnAssign))
                or (isinstance(value, ast.expr) and _empty_dict(value) and not isinstance(node, ast.AugAssign))):
            return False
    return True


def _self_name(f: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    if any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in f.decorator_list):
        return None
    args = [*f.args.posonlyargs, *f.args.args]
    return args[0].arg if args else None


def _empty_dict(e: ast.expr) -> bool:
    if isinstance(e, ast.Dict):
        return not e.keys
    if isinstance(e, ast.Call) and not e.keywords:
        name = e.func.id if isinstance(e.func, ast.Name) else e.func.attr if isinstance(e.func, ast.Attribute) else ""
        # defaultdict(list) takes a factory for values, never keys
        return name in _EMPTY_DICTS and (not e.args or (name == "defaultdict" and len(e.args) == 1))
    return False


def _is_key_target(target: ast.expr, name_node: ast.expr | None, pairs: bool) -> bool:
    if pairs:
        return isinstance(target, ast.Tuple) and len(target.elts) == 2 and target.elts[0] is name_node
    return target is name_node


def _bindings(f: ast.AST, name: str) -> Iterator[tuple[ast.AST, ast.expr | None]]:
    """Every place in `f` (nested functions included, conservatively) that binds `name`: (the statement, the
    Name node for a loop target, or the assigned value for `name = value`). A parameter, `global`, an import,
    a `with ... as`, a walrus... are yielded as (node, None) and refused."""
    if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)):
        a = f.args
        if any(p.arg == name for p in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg] if p):
            yield f, None
    for node in ast.walk(f):
        if isinstance(node, (ast.For, ast.AsyncFor)):
            for t in ast.walk(node.target):
                if isinstance(t, ast.Name) and t.id == name and isinstance(t.ctx, ast.Store):
                    yield node, t
        elif isinstance(node, ast.Assign):
            for tgt in node.targets:
                for t in ast.walk(tgt):
                    if isinstance(t, ast.Name) and t.id == name and isinstance(t.ctx, ast.Store):
                        yield node, (node.value if tgt is t else None)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.NamedExpr, ast.comprehension, ast.withitem,
                               ast.Global, ast.Nonlocal, ast.ExceptHandler, ast.Import, ast.ImportFrom)):
            names = {t.id for t in ast.walk(node) if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store)}
            if isinstance(node, (ast.Global, ast.Nonlocal)):
                names |= set(node.names)
            if isinstance(node, ast.ExceptHandler) and node.name:
                names.add(node.name)
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names |= {(al.asname or al.name).split(".")[0] for al in node.names}
            if name in names:
                yield node, None
