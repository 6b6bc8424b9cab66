"""Registries: dicts that code fills while the modules of a package import.

`MODELS = {}` with `def register(name): def deco(cls): MODELS[name] = cls; ...` and `@register("big") class Big`
elsewhere: Python fills the dict while the package imports, and a test reaches the registered class through
`create_model("big")` (`MODELS[name]()`). Values are immutable in the interpreter, so the dict bound at the top
level never sees what a call stores into it: a lookup of "big" found nothing, and what `Big` does on CUDA was lost.
The same holds for a class's dict filled by `__init_subclass__` (`Base.registry`) and for an in-repo registry
object's (`MODELS = Registry("models")`, `self._module_dict[key] = cls`).

This module is the syntactic side: which dicts are registries, which functions fill them, whether a module may store
into one. The interpreter gives a registry an identity (values.DictV.origin), records what functions store into it
(Frame.registrations, CallResult.registrations: part of a call's summary), and keeps what import-time code stores in a
side table read back whenever the registry is read (dataflow.Interp.registry_view). The entries that count are those
of the registry's writers: what importing its module runs, and the modules importing that module by name to fill it
(Sources.import_time_closure, Sources.registering_importers), test modules and conftests included when their code may
store into it (may_store: pytest imports every module it collects before the first test runs). All of them run
before the registry is first read, so its entries do not depend on which test file was analysed first, on `--jobs` or
on `--paths`: a superset of what one pytest run holds. A key the registry lacks is a KeyError, as in Python.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from tools.classify.closures import CONTAINER_MUTATORS, mutated_outer_names
from tools.classify.interp_base import _last_name
from tools.classify.values import DictV, Seq, Value

# The number of registered entries a registry's view already holds, kept on the view (dataflow.Interp.registry_view)
HOLDS = "_registered"

# The origin of a registration that gives a test class a method (`setattr(TestX, f"test_{name}", fn)` in a function
# the module calls at import, or in a class decorator): its key is `(class, name)`, applied to the class' body when the
# call returns to the module's top level (CallsMixin.add_generated_test)
GENERATED_TESTS = "<generated test methods>"
# The entry of a class' body that holds the functions set on it under names the analysis cannot compute
# (`setattr(TestX, f"test_{path.stem}", make(path))` over a directory listing): pytest may collect any of them, so a
# class-level key covers them (collect.py), labelled from what they do
UNNAMED_METHODS = "<methods set under names not known>"

# Calls that make an empty or filled dict or list at a module's top level (`dict()`, `collections.OrderedDict()`)
CONTAINER_FACTORIES = frozenset({"dict", "OrderedDict", "defaultdict", "list"})
# Methods that add to a list registry (`CASES.append(fn)`)
LIST_STORES = frozenset({"append", "extend", "insert"})


def _is_container_expr(e: ast.expr | None) -> bool:
    if isinstance(e, (ast.Dict, ast.List)):
        return True
    return isinstance(e, ast.Call) and _last_name(e) in CONTAINER_FACTORIES


def _top_level_containers(body: list[ast.stmt], out: set[str]) -> None:
    """Names a module's top level (or a class body) binds to a dict or a list (also under top-level `if`/`try`)."""
    for s in body:
        if isinstance(s, ast.Assign) and _is_container_expr(s.value):
            out.update(t.id for t in s.targets if isinstance(t, ast.Name))
        elif isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name) and _is_container_expr(s.value):
            out.add(s.target.id)
        elif isinstance(s, ast.If):
            _top_level_containers(s.body, out)
            _top_level_containers(s.orelse, out)
        elif isinstance(s, ast.Try):
            for block in (s.body, s.orelse, s.finalbody, *(h.body for h in s.handlers)):
                _top_level_containers(block, out)


def defaultdict_names(tree: ast.Module) -> frozenset[str]:
    """Names a module's top level binds to `defaultdict(...)` (a registry of registries: `NESTED[kind][name] = fn`)."""
    return frozenset(t.id for s in tree.body if isinstance(s, ast.Assign) and isinstance(s.value, ast.Call)
                     and _last_name(s.value) == "defaultdict" for t in s.targets if isinstance(t, ast.Name))


# Methods that change an entry of a registry of containers in place (`BY_KIND[kind].append(fn)`)
ENTRY_MUTATORS = LIST_STORES | {"add", "update"}
# Methods that store into a registry or one of its entries (`HANDLERS.update(...)`, `BY_KIND[kind].append(fn)`)
STORE_METHODS = ENTRY_MUTATORS | {"setdefault", "__setitem__"}


def _nested_stores(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """Names whose entries a function changes in place: `NESTED[kind][name] = fn`, `BY_KIND[kind].append(fn)`."""
    out: set[str] = set()
    for n in ast.walk(fn):
        if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store) and isinstance(n.value, ast.Subscript) \
                and isinstance(n.value.value, ast.Name):
            out.add(n.value.value.id)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ENTRY_MUTATORS and \
                isinstance(n.func.value, ast.Subscript) and isinstance(n.func.value.value, ast.Name):
            out.add(n.func.value.value.id)
    return out


def _class_dicts(tree: ast.Module) -> dict[str, set[str]]:
    """Attribute name -> the top-level classes whose bodies bind it to a dict (`registry = {}`)."""
    out: dict[str, set[str]] = {}
    for c in tree.body:
        if isinstance(c, ast.ClassDef):
            names: set[str] = set()
            _top_level_containers(c.body, names)
            for n in names:
                out.setdefault(n, set()).add(c.name)
    return out


def _stored_attributes(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """Attributes whose dict a function stores into: `X.attr[k] = v` (`Base.registry[...]`, `cls.registry[...]`)."""
    return {n.value.attr for n in ast.walk(fn) if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store)
            and isinstance(n.value, ast.Attribute) and isinstance(n.value.value, ast.Name)}


def registry_names(tree: ast.Module) -> frozenset[str]:
    """The module-level dicts and lists of `tree` that one of its functions or methods changes in place (`NAME[k] =
    v`, `NAME.update(...)`, `NAME.setdefault(...)`, `NAME.append(fn)`, or a binding under `global NAME`) or hands to
    a function of the module that stores into that parameter (`_register(cls, name, NAME)`), and the
    dicts of its top-level classes a function stores into by attribute (`Base.registry[key] = cls` in
    `__init_subclass__`), as `Class.attr`: syntactic, so it does not depend on what the analysis follows."""
    dicts: set[str] = set()
    _top_level_containers(tree.body, dicts)
    class_dicts = _class_dicts(tree)
    if not dicts and not class_dicts:
        return frozenset()
    names, attrs = _changed_anywhere(tree)
    passed = _passed_to_storing(tree, names) if dicts else {}
    filled: set[str] = set(passed.keys() & dicts)
    dicts &= names
    class_attrs = class_dicts.keys() & attrs
    if not dicts and not class_attrs:
        return frozenset(filled)  # (most modules: `__all__ = [...]` and constants nothing changes; one walk decided it)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            filled.update((mutated_outer_names(node) | _nested_stores(node)) & dicts)
            for attr in _stored_attributes(node) & class_attrs:
                filled.update(f"{c}.{attr}" for c in class_dicts[attr])
    return frozenset(filled)


def _stored_root(n: ast.AST) -> str | None:
    """The name whose container `n` stores into: `NAME[k] = v`, `NAME.update(...)`."""
    if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store):
        return _root_name(n.value)
    if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in STORE_METHODS:
        return _root_name(n.func.value)
    return None


def _passed_to_storing(tree: ast.Module, changed: set[str]) -> dict[str, set[str]]:
    """Module-level names handed to a top-level function of the module that stores into that parameter (`def
    _register(cls, name, target): target[name] = cls` called as `_register(cls, name, _USER_LOSSES)` in
    `register_loss`, neuralforecast's registries), each with the top-level functions that hand it on. `changed`
    (the roots of stores anywhere, _changed_anywhere) rules out most modules without a second walk."""
    storing: dict[str, tuple[list[str], set[str]]] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            positional = [a.arg for a in (*node.args.posonlyargs, *node.args.args)]
            params = {*positional, *(a.arg for a in node.args.kwonlyargs)}
            if params & changed:
                stored = {r for n in ast.walk(node) if (r := _stored_root(n)) in params}
                if stored:
                    storing[node.name] = (positional, stored)
    out: dict[str, set[str]] = {}
    if not storing:
        return out
    for node in tree.body:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for call in ast.walk(node):
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in storing):
                continue
            positional, stored = storing[call.func.id]
            handed = [(positional[i] if i < len(positional) else None, a) for i, a in enumerate(call.args)]
            handed += [(k.arg, k.value) for k in call.keywords]
            for param, arg in handed:
                if param in stored and isinstance(arg, ast.Name):
                    out.setdefault(arg.id, set()).add(node.name)
    return out


def _changed_anywhere(tree: ast.Module) -> tuple[set[str], set[str]]:
    """The names whose containers some code of the module may change (the root of a subscript store or delete, of a
    mutating method call, a `global`/`nonlocal` name) and the attributes stored into by subscript (`X.attr[k] = v`):
    a superset of what registry_names' per-function pass finds, in one walk, so that a module whose containers nothing
    changes costs no more (timm: 157 modules with a top-level list or dict, 4.9 of 35 s profiled before)."""
    names: set[str] = set()
    attrs: set[str] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Subscript) and isinstance(n.ctx, (ast.Store, ast.Del)):
            if isinstance(n.value, ast.Attribute):
                attrs.add(n.value.attr)
            root = _root_name(n.value)
            if root:
                names.add(root)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and (
                n.func.attr in STORE_METHODS or n.func.attr in CONTAINER_MUTATORS):
            root = _root_name(n.func.value)
            if root:
                names.add(root)
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            names.update(n.names)
    return names, attrs


def self_filled_attributes(cls: ast.ClassDef) -> frozenset[str]:
    """Attributes whose dict a class's methods store into through their first parameter (`self._module_dict[key] =
    module`, a registry object's): one instance bound at a module's top level (`MODELS = Registry("models")`) is
    then a registry of that module, under the name it is bound to."""
    out: set[str] = set()
    for fn in cls.body:
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and fn.args.args:
            me = fn.args.args[0].arg
            out.update(n.value.attr for n in ast.walk(fn) if isinstance(n, ast.Subscript) and isinstance(
                n.ctx, ast.Store) and isinstance(n.value, ast.Attribute) and isinstance(n.value.value, ast.Name)
                and n.value.value.id == me)
    return frozenset(out)


def fills_on_subclass(defs: Iterable[ast.AST]) -> bool:
    """Whether one of a module's defs is an `__init_subclass__` that stores into a dict (a subclass registry):
    only then does defining a subclass need running it (StatementsMixin.init_subclass)."""
    return any(isinstance(d, ast.FunctionDef) and d.name == "__init_subclass__" and any(
        isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store) for n in ast.walk(d)) for d in defs)


def registering_functions(tree: ast.Module, name: str) -> tuple[str, ...]:
    """The top-level functions and classes of a module that store into its registry `name` (`MODELS`, `Base` of
    `Base.registry`) anywhere in their code: the names a module filling the registry calls (`@register_model`)."""
    out = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and any(
                isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store) and _root_name(n.value) == name
                or isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in STORE_METHODS
                and _root_name(n.func.value) == name for n in ast.walk(node)):
            out.append(node.name)
    out.extend(_passed_to_storing(tree, _changed_anywhere(tree)[0]).get(name, ()))
    for node in tree.body:  # a second name bound at the top level (`register_op = register_impl`)
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and node.value.id in out:
            out.extend(t.id for t in node.targets if isinstance(t, ast.Name))
    return tuple(sorted(set(out)))


def may_store(tree: ast.Module, root: str, functions: tuple[str, ...]) -> bool:
    """Whether a module's code may store into the registry hanging from `root`: a subscript store under that name,
    a call of one of the `functions` that fill it, or of a method of `root` (`MODELS.register_module()`)."""
    for n in ast.walk(tree):
        if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store) and _root_name(n.value) == root:
            return True
        if isinstance(n, ast.Call):
            f = n.func
            if isinstance(f, ast.Name) and f.id in functions or isinstance(f, ast.Attribute) and (
                    f.attr in functions or _root_name(f) == root):
                return True
    return False


def _root_name(e: ast.expr) -> str | None:
    """The name an attribute or subscript chain starts from (`Base` of `Base.registry[kind]`)."""
    while isinstance(e, (ast.Attribute, ast.Subscript)):
        e = e.value
    return e.id if isinstance(e, ast.Name) else None


def origin_of(rel: str, name: str) -> str:
    """The identity of the registry `name` of module `rel` (DictV.origin)."""
    return f"{rel}::{name}"


def origin_module(origin: str) -> str:
    return origin.rsplit("::", 1)[0]


def origin_root(origin: str) -> str:
    """The module-level name a registry hangs from (`MODELS`, `Base` of `Base.registry`, `MODELS` of
    `MODELS._module_dict`)."""
    return origin.rsplit("::", 1)[1].split(".", 1)[0]


def calls_setattr(node: ast.AST | None) -> bool:
    """Whether a def calls `setattr` or sets an attribute of its first parameter (a class decorator that may give
    the class test methods by name, or methods: `cls.run = _run`)."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    params = [*node.args.posonlyargs, *node.args.args]
    first = params[0].arg if params else None
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "setattr" or isinstance(
        n, ast.Assign) and any(isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == first
                               for t in n.targets) for n in ast.walk(node))


# Calls listing an object's own attributes by name: `dir(cls)`, `vars(cls)`, `inspect.getmembers(cls)`
ATTRIBUTE_LISTINGS = frozenset({"dir", "vars", "getmembers"})


def names_own_attributes(tree: ast.AST, name: str) -> bool:
    """Whether a loop in `tree` binds `name` from a listing of an object's own attributes (`for name in dir(cls)`,
    `for name, fn in vars(cls).items()`, `cls.__dict__`): a `setattr(cls, name, wrap(fn))` under it re-sets what the
    class has (a decorator wrapping each test method), it gives the class no test pytest would not see already."""
    return any(isinstance(n, (ast.For, ast.AsyncFor, ast.comprehension)) and _lists_attributes(n.iter) and any(
        isinstance(t, ast.Name) and t.id == name for t in ast.walk(n.target)) for n in ast.walk(tree))


def _lists_attributes(e: ast.expr) -> bool:
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr in ("items", "keys"):
        e = e.func.value
    if isinstance(e, ast.Call):
        return _last_name(e.func) in ATTRIBUTE_LISTINGS
    return isinstance(e, ast.Attribute) and e.attr == "__dict__"


def changed_in_place(before: Value, after: Value) -> Value:
    """A registry's view changed by the module that binds it (`CASES.append(x)` at the top level, after a call
    registered entries): the changed list or dict holds the registered entries the view held, so reading it again
    does not add them a second time (`[a, b, a]`: ids `a0`, `b`, `a1` pytest never makes)."""
    held = before.__dict__.get(HOLDS) if type(before) in (Seq, DictV) else None
    if held is None or type(after) is not type(before):
        return after
    kept = DictV(after.items, before.origin) if isinstance(after, DictV) else Seq(  # type: ignore[union-attr]
        after.items, after.kind, before.origin)  # type: ignore[union-attr]
    kept.__dict__[HOLDS] = held  # (a frozen value: its __dict__ directly, as registry_view does)
    return kept
