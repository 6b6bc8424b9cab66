"""What nested functions share with the function that defines them: free variables and closure cells.

Values are immutable in the interpreter, so a def inside a function captures the enclosing locals it reads as
they are when the def runs (interp_statements.StatementsMixin.closure_values). A nested function that changes
such a local in place (`result.append(x)`, `nonlocal n; n += 1`) changes what the enclosing function sees
afterwards, which a snapshot cannot follow: in general the local becomes unknown from the def on.

`shared_cells` finds the common case that can be followed exactly: the nested function is called only by
name in the enclosing function's own body (a call, or a bare `@name` decorator on a def there), never passed
on, decorated, returned or named by another scope. Every call of it is then a call site the interpreter runs
in the enclosing frame, which hands the callee the locals' current values and takes back what the call left
in them (cuequivariance-torch builds its parametrize list with `@yield_from` over a closure's `result`).
"""

from __future__ import annotations

import ast
import symtable

from tools.classify.interp_base import MUTATORS, kept_on_node

CONTAINER_MUTATORS = MUTATORS | {"setdefault", "popitem", "sort", "reverse"}  # list, dict and set methods
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
Def = ast.FunctionDef | ast.AsyncFunctionDef


def mutated_outer_names(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> frozenset[str]:
    """Names of the enclosing scopes whose containers a function changes in place: `name.append(...)` (and the
    other list, dict and set mutators), `name[k] = v`, `del name[k]`, or any binding under `global`/`nonlocal`,
    where `name` is not one of the function's own locals (its parameters and plain assignments)."""
    declared: set[str] = set()
    local: set[str] = set()
    used: set[str] = set()
    a = node.args
    local.update(x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs, *(p for p in (a.vararg, a.kwarg) if p)))
    for n in ast.walk(node):
        if isinstance(n, (ast.Global, ast.Nonlocal)):
            declared.update(n.names)
        elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            local.add(n.id)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in CONTAINER_MUTATORS \
                and isinstance(n.func.value, ast.Name):
            used.add(n.func.value.id)
        elif isinstance(n, ast.Subscript) and isinstance(n.ctx, (ast.Store, ast.Del)) and isinstance(n.value, ast.Name):
            used.add(n.value.id)
    return frozenset((used - local) | declared)


def free_names(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef) -> frozenset[str]:
    """The names the code of a def, lambda or class reads from enclosing scopes: referenced in its body (and in
    its methods and nested functions) without being bound there, as Python's symbol table sees it. Where the
    code alone does not compile (a `nonlocal` naming a variable of the enclosing function), every name it uses."""
    try:
        table = symtable.symtable(ast.unparse(node), "<closure>", "exec")
    except (SyntaxError, ValueError, RecursionError):
        return frozenset(n.id for n in ast.walk(node) if isinstance(n, ast.Name))
    out: set[str] = set()
    todo = list(table.get_children())
    while todo:
        t = todo.pop()
        out.update(sym.get_name() for sym in t.get_symbols()
                   if sym.is_referenced() and sym.is_global() and not sym.is_declared_global())
        todo.extend(t.get_children())
    return frozenset(out)


def enclosing_function(defs: dict[tuple[int, int], ast.AST], node: ast.AST) -> Def | None:
    """The function whose own body holds the def `node` (not inside a class or another def of it), or None."""
    pos = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
    around = [d for d in defs.values() if isinstance(d, (*_DEFS, ast.ClassDef)) and d is not node
              and (d.lineno, d.col_offset) < pos <= (d.end_lineno or 0, d.end_col_offset or 0)]
    if not around:
        return None
    inner = max(around, key=lambda d: (d.lineno, d.col_offset))
    if isinstance(inner, _DEFS) and any(n is node for n in _own_nodes(inner)):
        return inner
    return None


_CELLS = "_classify_shared_cells"  # not an ast field: the memo of shared_cells on the outer def node


def shared_cells(outer: Def, inner: Def) -> frozenset[str]:
    """The locals of `outer` that calls of `inner` (a def in `outer`'s own body) read and may change, when they
    can be followed call by call: `inner` is undecorated, neither a generator nor async, returns only at the
    end of its body, and is named in `outer` only as the callee of a call or a bare decorator in `outer`'s own
    body; and every other scope in `outer` that reads such a local qualifies the same way (they are all handed
    the current values when called). Empty when none can be. Kept on the outer node."""
    return kept_on_node(outer, _CELLS, lambda: _cells_of(outer)).get(id(inner), frozenset())


def _cells_of(outer: Def) -> dict[int, frozenset[str]]:
    own = list(_own_nodes(outer))
    scopes = [n for n in own if isinstance(n, _SCOPES)]
    changed = {n for s in scopes if isinstance(s, _DEFS) for n in mutated_outer_names(s)}
    if not changed:
        return {}
    changed &= _own_locals(outer, own)
    reads = {id(s): free_names(s) & changed for s in scopes}
    followable = {id(s) for s in scopes if isinstance(s, _DEFS) and reads[id(s)] and _followable(outer, s, own)}
    for s in scopes:
        if id(s) not in followable:
            changed -= reads[id(s)]  # a snapshot that no call site refreshes: left to the general rule
    return {id(s): frozenset(reads[id(s)] & changed) for s in scopes if id(s) in followable and reads[id(s)] & changed}


def _own_nodes(fn: Def) -> list[ast.AST]:
    """Every node of a function's own scope (its body, decorators and defaults of defs in it), and the nested
    scopes' nodes themselves but not their bodies."""
    out: list[ast.AST] = []
    todo: list[ast.AST] = list(reversed(fn.body))
    while todo:
        n = todo.pop()
        out.append(n)
        if isinstance(n, _SCOPES):
            inner: list[ast.AST] = list(n.decorator_list) if not isinstance(n, ast.Lambda) else []
            if not isinstance(n, ast.ClassDef):
                inner += [*n.args.defaults, *(d for d in n.args.kw_defaults if d is not None)]
            else:
                inner += [*n.bases, *(k.value for k in n.keywords)]
            todo.extend(reversed(inner))
            continue
        todo.extend(reversed(list(ast.iter_child_nodes(n))))
    return out


def _own_locals(fn: Def, own: list[ast.AST]) -> set[str]:
    a = fn.args
    names = {x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs, *(p for p in (a.vararg, a.kwarg) if p))}
    names.update(n.id for n in own if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))
    declared = {x for n in own if isinstance(n, (ast.Global, ast.Nonlocal)) for x in n.names}
    return names - declared


def _followable(outer: Def, fn: Def, own: list[ast.AST]) -> bool:
    """`fn` can only run at call sites in `outer`'s own body, and its effects end with its body."""
    if not isinstance(fn, ast.FunctionDef) or fn.decorator_list:
        return False
    for n in _own_nodes(fn):
        if isinstance(n, (ast.Yield, ast.YieldFrom, ast.Await)):
            return False
        if isinstance(n, ast.Return) and n is not fn.body[-1]:
            return False
    callees = {id(n.func) for n in own if isinstance(n, ast.Call)}
    callees |= {id(d) for n in own if isinstance(n, _DEFS) for d in n.decorator_list}
    for n in ast.walk(outer):
        if isinstance(n, ast.Name) and n.id == fn.name and (id(n) not in callees or not isinstance(n.ctx, ast.Load)):
            return False
        if isinstance(n, (ast.Global, ast.Nonlocal)) and fn.name in n.names:
            return False
    return sum(isinstance(n, _SCOPES) and getattr(n, "name", None) == fn.name for n in ast.walk(outer)) == 1


def decorated_by_local_defs(defs: dict[tuple[int, int], ast.AST], node: Def) -> bool:
    """Every decorator of the def `node` is the bare name of a def in the same enclosing function's own body
    (`@yield_from` over `def yield_from(fn): result.extend(fn())`): such a decorator is followed and handed
    the function itself, so calling what it received runs the def's own code (a generator gives its yields)."""
    outer = enclosing_function(defs, node) if node.decorator_list else None
    if outer is None:
        return False
    local_defs = {n.name for n in _own_nodes(outer) if isinstance(n, _DEFS)}
    return all(isinstance(d, ast.Name) and d.id in local_defs for d in node.decorator_list)
