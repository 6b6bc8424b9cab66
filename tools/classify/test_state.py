"""State a test sets before it calls library code: environment variables and replaced module constants.

`monkeypatch.setenv("MYLIB_DEVICE", "cuda")` or `monkeypatch.setattr(settings, "DEFAULT_DEVICE", "cuda")` decides the
device the library picks afterwards. Both are kept as shared namespace entries (interp_base.STORE) of the frame, so
calls see them and a summary's context includes them: ENVIRON, the variables set (name -> value; a name absent from
it reads as unset, as everywhere else in the analysis), and one PATCHED entry per replaced module attribute.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from tools.classify.interp_base import MOCK_OBJECT, STORE, Frame, _last_name
from tools.classify.values import (
    UNRESOLVED,
    Const,
    DeviceV,
    DictV,
    Ext,
    MarkV,
    Value,
    alternatives,
    bounded,
    join,
    join_all,
)

ENVIRON = STORE + "os.environ"
PATCHED = STORE + "patched:"


def set_environ(frame: Frame, names: Value, value: Value | None) -> bool:
    """Record that the code set the environment variable `names` names (value None: deleted it). A choice of names
    may be any of them (each is then either its old value or this one); a name the analysis cannot compute is not
    seen (accelerate's `patch_environment` sets `key.upper()` of its keywords: making every variable unknown there
    cost its suite 58 % more summaries for no label). Whether anything was recorded."""
    choices = [n.value for n in alternatives(names) if isinstance(n, Const) and isinstance(n.value, str)]
    for name in choices:
        cur = frame.env.get(ENVIRON)
        items = cur.items if isinstance(cur, DictV) else ()
        new: Value = value if value is not None else Const(None)
        if len(alternatives(names)) > 1:
            old = next((v for k, v in items if k == Const(name)), Const(None))
            new = bounded(join(old, new))
        frame.env[ENVIRON] = DictV((*(kv for kv in items if kv[0] != Const(name)), (Const(name), new)))
    return bool(choices)


def environ_value(frame: Frame, name: Value) -> Value | None:
    """What the code set environment variable `name` to (Const(None): deleted it, or not set on some paths: one of
    the alternatives); None: it did not set it."""
    cur = frame.env.get(ENVIRON)
    paths = alternatives(cur) if cur is not None else []
    if not paths or not all(isinstance(p, DictV) for p in paths):
        return None
    if not isinstance(name, Const):
        return UNRESOLVED  # (some variable was set: an unknown name may be it)
    found = [next((v for k, v in p.items if k == name), None) for p in paths]  # type: ignore[union-attr]
    if all(v is None for v in found):
        return None
    return join_all([Const(None) if v is None else v for v in found])  # (`if flag: monkeypatch.setenv(...)`)


def environ_get(frame: Frame, name: Value, default: Value) -> Value:
    """`os.environ.get(name, default)`: what the code set, or `default` where it set nothing (on some paths)."""
    got = environ_value(frame, name)
    if got is None:
        return default
    return join_all([default if v == Const(None) else v for v in alternatives(got)])


def patch_module_attr(frame: Frame, rel: str, name: str, value: Value | None) -> bool:
    """`settings.DEFAULT_DEVICE = "cuda"` (or monkeypatch.setattr, mock.patch.object): the module's code reads the
    new value from here on, when it is configuration (a string, number, flag or device) or a mock in a function's
    place (`patch.object(mod, "fn", return_value=...)`: calling it runs none of the function). A patched-in function
    is not followed: linear_operator's tests wrap its solvers so, which cost its suite 57 % more summaries for no
    label. Whether it was recorded."""
    if not isinstance(value, (Const, DeviceV)) and value != Ext(MOCK_OBJECT):
        return False
    frame.env[f"{PATCHED}{rel}:{name}"] = value
    return True


def patched_value(frame: Frame, rel: str, name: str) -> Value | None:
    """The value a test replaced module rel's attribute `name` with; None: not replaced."""
    return frame.env.get(f"{PATCHED}{rel}:{name}")


# -- state set before the body runs ------------------------------------------------------------
PATCH_MARK = "<patch>"  # MarkV name: state a `@mock.patch(...)` / `@mock.patch.dict(...)` decorator sets for a test


def is_test_state(key: str) -> bool:
    """Whether a shared-namespace entry is one this module keeps (an environment variable or a patched attribute)."""
    return key == ENVIRON or key.startswith(PATCHED)


def test_state_of(stores: Iterable[tuple[str, Value]]) -> tuple[tuple[str, Value], ...]:
    """The entries of a call's shared namespaces (CallResult.stores) that are test state."""
    return tuple((k, v) for k, v in stores if is_test_state(k))


def merge_stores(*layers: Iterable[tuple[str, Value]]) -> tuple[tuple[str, Value], ...]:
    """Test state set one layer after another (fixtures in set-up order, then a test's patch decorators, inner to
    outer): a later entry replaces an earlier one; environment variables are merged variable by variable. Sorted,
    as frame_stores gives them."""
    out: dict[str, Value] = {}
    for layer in layers:
        for k, v in layer:
            old = out.get(k)
            if k == ENVIRON and isinstance(old, DictV) and isinstance(v, DictV):
                names = {name for name, _ in v.items}
                v = DictV((*(kv for kv in old.items if kv[0] not in names), *v.items))
            out[k] = v
    return tuple(sorted(out.items()))


def decorator_patches(env: dict[str, Value], before: dict[str, Value], where: str,
                      owner: tuple[str, int, int]) -> list[MarkV]:
    """The test state that evaluating a def's decorators set in `env` (was `before`): module attributes
    `@mock.patch.object(mod, "fn")` / `@mock.patch("pkg.mod.fn", ...)` replaced, environment variables
    `@mock.patch.dict(os.environ, ...)` set. As marks of the test: unittest.mock applies them around each call of
    the test function (a class decorator around each `test*` method), not at import. `owner`: the decorated def or
    class, (module, line, column)."""
    return [MarkV(PATCH_MARK, (Const(k), v), (("owner", Const(owner)),), where) for k, v in env.items()
            if is_test_state(k) and before.get(k) != v]


def patch_owner(m: Value) -> object:
    """The def or class whose decorator made patch mark `m` ((module, line, column)); None for any other mark."""
    owner = m.kw("owner") if isinstance(m, MarkV) and m.name == PATCH_MARK else None
    return owner.value if isinstance(owner, Const) else None


def patch_stores(marks: Iterable[Value]) -> tuple[tuple[str, Value], ...]:
    """The test state a test's patch marks (closest first: a class decorator's patch is entered after the method's
    own, and wins) put in place for its body."""
    return merge_stores(*(((str(m.args[0].value), m.args[1]),) for m in marks if isinstance(m, MarkV)
                          and m.name == PATCH_MARK and isinstance(m.args[0], Const)))


def passes_mock(d: ast.expr) -> bool:
    """Whether decorator `d` is a `patch(target)` / `patch.object(obj, name)` without `new`: unittest.mock then
    passes the mock it makes to the test as one more positional argument."""
    if not isinstance(d, ast.Call):
        return False
    name = _last_name(d)
    if name == "patch":
        positional = 2  # patch(target, new)
    elif name == "object" and isinstance(d.func, ast.Attribute) and _last_name(d.func.value) == "patch":
        positional = 3  # patch.object(target, attribute, new)
    else:
        return False
    return len(d.args) < positional and all(k.arg != "new" for k in d.keywords)
