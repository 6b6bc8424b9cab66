"""Version checks: `version.parse(torch.__version__) >= version.parse("2.4")`, `torch.__version__ < "2.0"`.

Test suites guard code on the torch version (a skip for old releases, an API that moved). The answer is the one
the tests get: the torch that runs them is the one installed beside the classifier (the repository's lock, whose
CPU build the CPU runners use), read from its metadata without importing it. Where torch is not installed, or a
text is not a version, the check stays unknown as before. The version is part of the cache key
(cache.tool_version): another torch never reuses old results.

Values are `Ext` leaves with a prefix (like `re.compile` patterns), so the rest of the interpreter carries them
unchanged: VERSION for a `packaging.version.Version` (or LooseVersion...) of a known text, TORCH_VERSION for
`torch.__version__` itself, a `str` subclass (torch.torch_version.TorchVersion) that compares as a version with
strings, tuples and versions, and otherwise behaves as its text (`.split(".")`, f-strings).
"""

from __future__ import annotations

import ast
import functools
import importlib.metadata

from packaging.version import InvalidVersion, Version

from tools.classify.values import UNRESOLVED, Const, Ext, Seq, Value

VERSION = "<version>"
TORCH_VERSION = "<torch-version>"

# Calls that make a version object of a text (or of another version)
CONSTRUCTORS = frozenset({
    "packaging.version.parse", "packaging.version.Version", "pkg_resources.parse_version",
    "distutils.version.LooseVersion", "distutils.version.StrictVersion", "looseversion.LooseVersion",
    "setuptools._distutils.version.LooseVersion",
})
TORCH_VERSION_CLASS = "torch.torch_version.TorchVersion"

_ORDER = {ast.Lt: "__lt__", ast.LtE: "__le__", ast.Gt: "__gt__", ast.GtE: "__ge__", ast.Eq: "__eq__",
          ast.NotEq: "__ne__"}


@functools.cache
def installed(distribution: str) -> str | None:
    """The installed version of a distribution (its metadata; nothing is imported), None when absent."""
    try:
        return importlib.metadata.version(distribution)
    except (importlib.metadata.PackageNotFoundError, ValueError):
        return None


def installed_at_least(distribution: str, minimum: str) -> bool:
    """Whether the installed distribution's version is `minimum` or later (False when absent or unreadable)."""
    version = _parse(installed(distribution) or "")
    return version is not None and version >= Version(minimum)


def torch_version() -> Value:
    """`torch.__version__` as the tests will see it, or unknown."""
    text = installed("torch")
    return made(text, torch_str=True) if text is not None else UNRESOLVED


def torch_version_in(path: str, world: int) -> Value:
    """`torch.__version__` in an analysis world (for InterpBase.decided_by_world): the installed torch's on the
    CPU-only machine (world 0), whose runners run this lock; unknown in a world with GPUs, whose runners may run
    another lock's torch (this repository's cu124 lock pins an older one), so no decision about a GPU machine rests
    on the CPU lock's version."""
    return torch_version() if world == 0 else UNRESOLVED


def made(text: str, torch_str: bool = False) -> Value:
    """A version value of `text`; unknown when it is not a version packaging can read."""
    if _parse(text) is None:
        return UNRESOLVED
    return Ext((TORCH_VERSION if torch_str else VERSION) + text)


def construct(path: str, args: list[Value]) -> Value | None:
    """`version.parse(x)`, `Version(x)`, `LooseVersion(x)`, `TorchVersion(x)` of a known text or version; None
    when `path` is not such a constructor."""
    if path not in CONSTRUCTORS and path != TORCH_VERSION_CLASS:
        return None
    text = text_of(args[0]) if len(args) == 1 else None
    if text is None:
        return UNRESOLVED
    return made(text, torch_str=path == TORCH_VERSION_CLASS)


def text_of(v: Value) -> str | None:
    """The text of a version value or of a string constant."""
    if isinstance(v, Ext):
        for prefix in (VERSION, TORCH_VERSION):
            if v.path.startswith(prefix):
                return v.path[len(prefix):]
        return None
    return v.value if isinstance(v, Const) and isinstance(v.value, str) else None


def is_version(v: Value) -> bool:
    return isinstance(v, Ext) and v.path.startswith((VERSION, TORCH_VERSION))


def as_text(v: Value) -> Value:
    """`torch.__version__` where a string is used (a method, an index, a format): its text; anything else as is."""
    if isinstance(v, Ext) and v.path.startswith(TORCH_VERSION):
        return Const(v.path[len(TORCH_VERSION):])
    return v


def compare(op: ast.cmpop, a: Value, b: Value) -> Value | None:
    """An ordering or equality of a version with a version, a version text or a tuple of ints (TorchVersion
    accepts all three); None when neither side is a version."""
    if not (is_version(a) or is_version(b)):
        return None
    method = _ORDER.get(type(op))
    # only TorchVersion compares with texts and tuples (a packaging Version raises TypeError: left unknown)
    loose = any(isinstance(x, Ext) and x.path.startswith(TORCH_VERSION) for x in (a, b))
    va, vb = _operand(a, loose), _operand(b, loose)
    if method is None or va is None or vb is None:
        return UNRESOLVED
    return Const(bool(getattr(va, method)(vb)))


def attribute(v: Value, name: str) -> Value | None:
    """`.release`, `.major`, `.minor`, `.micro`, `.base_version`, `.public`, `.local`, `.is_prerelease`... of
    a version object; None for a name that is not one (a `str` method of `torch.__version__`)."""
    if not isinstance(v, Ext) or not v.path.startswith(VERSION):
        return None
    parsed = _parse(v.path[len(VERSION):])
    if parsed is None:
        return None
    if name == "release":
        return Seq(tuple(Const(i) for i in parsed.release), "tuple")
    if name in ("major", "minor", "micro", "base_version", "public", "local", "is_prerelease", "is_devrelease",
                "is_postrelease", "epoch"):
        return Const(getattr(parsed, name))
    return None


def _operand(v: Value, loose: bool) -> Version | None:
    if is_version(v):
        return _parse(text_of(v) or "")
    if not loose:
        return None
    if isinstance(v, Seq) and v.kind == "tuple" and v.items and all(
            isinstance(i, Const) and type(i.value) is int for i in v.items):
        return _parse(".".join(str(i.value) for i in v.items))  # type: ignore[union-attr]
    text = text_of(v)
    return _parse(text) if text is not None else None


def _parse(text: str) -> Version | None:
    try:
        return Version(text)
    except InvalidVersion:
        return None
