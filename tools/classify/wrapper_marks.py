"""Marks a decorator puts on the wrapper it returns instead of the test (compressed-tensors' `device_parametrize`:
`return pytest.mark.parametrize("_device", ["meta", "cpu", "cuda"])(wrapper)`). pytest collects the wrapper, so
its marks are the test's; a parametrization is valid only for argument names the wrapper's signature, as pytest
reads it, requests (else pytest fails collecting the file, and no id can be spelled)."""

from __future__ import annotations

import ast

from tools.classify.values import UNRESOLVED, Const, MarkV, Seq, Value

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef
FUNCTION_NODES = (ast.FunctionDef, ast.AsyncFunctionDef)


def param_argnames(argnames: Value) -> list[str] | None:
    """The argument names of a parametrize mark: "a, b", ("a", "b") or ["a", "b"]; None when not constant."""
    if isinstance(argnames, Const) and isinstance(argnames.value, str):
        return [a.strip() for a in argnames.value.split(",") if a.strip()]
    if isinstance(argnames, Seq) and all(isinstance(i, Const) and isinstance(i.value, str) for i in argnames.items):
        return [str(i.value) for i in argnames.items if isinstance(i, Const)]
    return None


def requested_names(node: FunctionNode) -> list[str]:
    """The parameters pytest's getfuncargnames reads from a def: positional-or-keyword and keyword-only ones
    without a default (positional-only ones never)."""
    a = node.args
    first_default = len(a.args) - len(a.defaults) + len(a.posonlyargs)
    names = [p.arg for i, p in enumerate([*a.posonlyargs, *a.args]) if i < first_default and p not in a.posonlyargs]
    return names + [p.arg for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=False) if d is None]


def _is_wraps(d: ast.expr) -> bool:
    """`@functools.wraps(test)` / `@wraps(test)`: the wrapper's signature is the wrapped test's for pytest."""
    f = d.func if isinstance(d, ast.Call) else d
    return (isinstance(f, ast.Name) and f.id == "wraps") or (isinstance(f, ast.Attribute) and f.attr == "wraps")


def _sets_signature(tree: ast.Module, wrapper: FunctionNode) -> bool:
    """Whether the def that encloses `wrapper` assigns `wrapper.__signature__` (inspect.signature then stops
    there instead of following `__wrapped__`)."""
    for fn in ast.walk(tree):
        if isinstance(fn, FUNCTION_NODES) and any(s is wrapper for s in fn.body):
            return any(isinstance(n, ast.Assign) and any(
                isinstance(t, ast.Attribute) and t.attr == "__signature__" and isinstance(t.value, ast.Name)
                and t.value.id == wrapper.name for t in n.targets) for n in ast.walk(fn))
    return False


def visible_names(tree: ast.Module, wrapper: FunctionNode, test: FunctionNode) -> set[str]:
    """The argument names pytest sees on the wrapper: its own parameters; the test's if `functools.wraps` made
    it follow `__wrapped__`; both where a `__signature__` is assigned (the idiom appends the wrapper's own
    parameter to the test's signature; what exactly it holds is not evaluated)."""
    test_names = requested_names(test)
    if test_names and test_names[0] in ("self", "cls"):
        test_names = test_names[1:]
    if not any(_is_wraps(d) for d in wrapper.decorator_list):
        return set(requested_names(wrapper))
    if _sets_signature(tree, wrapper):
        return {*requested_names(wrapper), *test_names}
    return set(test_names)


def checked_parametrize(mark: MarkV, visible: set[str]) -> MarkV:
    """A parametrize mark put on a wrapper, unchanged when pytest accepts its argument names; else one whose
    values are unknown (its test is keyed by its function, never by a guessed id)."""
    argnames = mark.args[0] if mark.args else mark.kw("argnames")
    names = param_argnames(argnames or UNRESOLVED)
    if names is None or set(names) <= visible:
        return mark
    return MarkV(mark.name, (argnames or UNRESOLVED, UNRESOLVED), (), mark.where)
