"""State a test sets before it calls library code: environment variables and replaced module constants.

`monkeypatch.setenv("MYLIB_DEVICE", "cuda")` or `monkeypatch.setattr(settings, "DEFAULT_DEVICE", "cuda")` decides the
device the library picks afterwards. Both are kept as shared namespace entries (interp_base.STORE) of the frame, so
calls see them and a summary's context includes them: ENVIRON, the variables set (name -> value; a name absent from
it reads as unset, as everywhere else in the analysis), and one PATCHED entry per replaced module attribute.
"""

from __future__ import annotations

from tools.classify.interp_base import MOCK_OBJECT, STORE, Frame
from tools.classify.values import UNRESOLVED, Const, DeviceV, DictV, Ext, Value, alternatives, bounded, join

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
    """What the code set environment variable `name` to (Const(None): deleted it); None: it did not set it."""
    cur = frame.env.get(ENVIRON)
    if not isinstance(cur, DictV):
        return None
    if not isinstance(name, Const):
        return UNRESOLVED  # (some variable was set: an unknown name may be it)
    return next((v for k, v in cur.items if k == name), None)


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
