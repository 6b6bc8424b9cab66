"""`try: import x` / `except ImportError:` decided by whether `x` is installed where the CPU tests run.

Test files choose parametrizations and flags by optional dependencies: `try: from torch_scatter import
segment_csr; use_torch_scatter = [True, False]` / `except ImportError: use_torch_scatter = [False]`
(neuraloperator). Taking both paths makes the list one of two, and the test's ids unknown. Where the module is not
installed, the import raises and the handler runs: that is certain, so the analysis follows it.

Which environment decides: the one the classifier runs in. `bazel run //tools:classify` runs it with
`//rules:torch_runtime`, the CPU lock, the environment of the CPU runners. It decides every world, machines with
GPUs included, although those may run another lock with other packages (a CUDA build of `torch_scatter`).
Leaving the GPU worlds open was measured and rejected (docs/classifier-accuracy.md, round 13): a skip such as
`skipif(not tensorboard_installed)` then seemed to vanish with GPUs, and 27 CPU tests of two suites (tensorboard,
torch_xla, horovod) went to GPU runners; each open question also made its module's summaries per world (+50 % on
pykeen). A GPU lock's extra packages are what they were before this rule: code the analysis does not see.

The same holds one call deep: a class whose constructor starts by importing its framework (`class
PyTensorBackend: def __init__(self): from pytensor import tensor`, einops' optional backends), called first in a
`try` body that catches ImportError (`try: result.append(backend_type()) except ImportError: warn(...)`), raises
there when the framework is missing, so the handler runs (`raising_call`, `leading_imports`).

Libraries ask the same question as a call: `importlib.util.find_spec("x")` (None where `x` is missing) and the
scikit-base family's `_check_soft_dependencies("x", severity="none")` (False where a package is missing; sktime,
pytorch-forecasting: `if _check_soft_dependencies("cpflows", severity="none"): LOADERS += [...]`).
`soft_dependency_names` reads the package names of the latter.

The other way round, `try: import torch` / `except ImportError:` (einx's `torch_is_available()`, array libraries
that support several frameworks) takes the body alone: torch is the one package the classifier's environment is
known to import (it is the CPU lock's torch), so an installed module's import is otherwise not assumed to work (a
broken build fails at import: PyPI's torchvision beside the CPU torch). `imports_torch_only` says when nothing else
in the body can raise.

One kind of module is left open on machines with GPUs: a CUDA build's (`attention_cuda_extension`, `cupy`,
`selective_scan_cuda`). A package's `setup.py` compiles its CUDA extension only where CUDA is there, so the module
is missing on every CPU runner and may well be present on a GPU machine: `try: import attention_cuda_extension;
_cuda_extension_available = True` then `skipUnless(torch.cuda.is_available() and _cuda_extension_available)`
(torch-harmonics) is a GPU test, not one skipped everywhere (`cuda_build`).

A module is looked up without being imported: `importlib.util.find_spec` of a top-level name only searches the
finders (site-packages, editable installs, the standard library). Whether it is present is part of a result's
cache entry, like a data file's state (runner.data_unchanged), so installing it later recomputes the result.
"""

from __future__ import annotations

import ast
import importlib.metadata
import importlib.util
import re

from tools.classify.interp_base import _last_name

PRESENCE_PREFIX = "<module>/"  # a result's `data` entry: (PRESENCE_PREFIX + top-level name, PRESENT or ABSENT)
PRESENT = "present"
ABSENT = "absent"
# what an `except` clause must name to catch a failed import
IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})


# a module name that says it is built for CUDA: a `cuda`/`gpu` word in it (`attention_cuda_extension`,
# `fused_layer_norm_cuda`, `gpu_ops`), or a CUDA-only package (cupy and its `cupy_cuda12x` wheels, pycuda)
_CUDA_BUILD = re.compile(r"(?:^|_)(?:cuda|gpu)(?:_|\d|$)|^(?:cupy|pycuda)(?:_|$)", re.IGNORECASE)


def cuda_build(dotted: str) -> bool:
    """Whether a module is a CUDA build's, present only where CUDA is (compiled by `setup.py` on a GPU machine): by
    its top-level name, the one whose presence is looked up (`vllm.v1.worker.gpu_worker` is vllm's)."""
    return _CUDA_BUILD.search(dotted.split(".", 1)[0]) is not None


def presence(top: str) -> str:
    """PRESENT or ABSENT: whether `import top` can find the module in the running Python (never imported)."""
    try:
        return PRESENT if importlib.util.find_spec(top) is not None else ABSENT
    except (ImportError, ValueError):  # a broken finder or a module whose __spec__ is unset: not decided here
        return PRESENT


def catches_import_error(h: ast.ExceptHandler) -> bool:
    """Whether the clause catches the ImportError a missing module raises (bare `except:`, `except Exception`,
    a tuple naming one of IMPORT_ERRORS)."""
    if h.type is None:
        return True
    names = h.type.elts if isinstance(h.type, ast.Tuple) else [h.type]
    return any(_last_name(n) in IMPORT_ERRORS for n in names)


def imported_tops(s: ast.Import | ast.ImportFrom) -> list[tuple[str, str]]:
    """(dotted name, top-level name) of the absolute imports of one statement, in order; none for a relative
    import (in-repo)."""
    if isinstance(s, ast.Import):
        return [(a.name, a.name.split(".", 1)[0]) for a in s.names]
    if s.level or not s.module:
        return []
    return [(s.module, s.module.split(".", 1)[0])]


# expressions whose parts run later or not at all: a call inside them is not evaluated when the statement starts
_DEFERRED = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.IfExp, ast.BoolOp,
             ast.Await, ast.NamedExpr)


def raising_call(stmt: ast.stmt) -> ast.Call | None:
    """The call a simple statement evaluates first, when its calls nest in one chain (`a.append(f())`: `f()`),
    so that nothing else the statement calls runs before it; None for compound statements, statements without
    calls or with calls side by side (`f(g(), h())`), or where a part may not run (lambdas, comprehensions,
    `x if c else y`, `and`/`or`)."""
    if not isinstance(stmt, (ast.Expr, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Return)):
        return None
    calls: list[ast.Call] = []
    for n in ast.walk(stmt):
        if isinstance(n, _DEFERRED):
            return None
        if isinstance(n, ast.Call):
            calls.append(n)
    if not calls:
        return None
    innermost = calls[-1]  # ast.walk is breadth first: a chain's deepest call comes last
    if any(innermost is not c and not any(d is innermost for d in ast.walk(c)) for c in calls):
        return None  # a call that does not enclose the innermost one: side by side
    if any(isinstance(d, ast.Call) and d is not innermost for d in ast.walk(innermost)):
        return None
    return innermost


def leading_imports(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.Import | ast.ImportFrom]:
    """The imports a function body starts with (after its docstring): they run before anything else it does."""
    body = fn.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(
            body[0].value.value, str):
        body = body[1:]
    out: list[ast.Import | ast.ImportFrom] = []
    for st in body:
        if not isinstance(st, (ast.Import, ast.ImportFrom)):
            break
        out.append(st)
    return out


SOFT_DEPENDENCY_CHECKS = ("skbase.utils.dependencies._check_soft_dependencies",
                          "skbase.utils.dependencies._dependencies._check_soft_dependencies",
                          "sktime.utils.dependencies._check_soft_dependencies")
_REQUIREMENT_NAME = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def soft_dependency_names(args: list[object]) -> list[str] | None:
    """The name of each package `_check_soft_dependencies("a", "b>=1")` requires (all of them: plain strings are a
    conjunction), without its version or marker; None for anything else (nested lists are disjunctions)."""
    names = [m.group(1) for a in args if isinstance(a, str) and (m := _REQUIREMENT_NAME.match(a))]
    return names if names and len(names) == len(args) else None


def distribution_installed(name: str) -> bool:
    """Whether a distribution of that name (PyPI's, `scikit-learn`) is installed where the classifier runs."""
    try:
        importlib.metadata.distribution(name)
    except (importlib.metadata.PackageNotFoundError, ValueError):
        return False
    return True


def imports_torch_only(t: ast.Try) -> bool:
    """A `try` whose body is `import torch` (as any name) and statements that cannot raise (`pass`, `return` or
    an assignment to names of a constant or a name, a docstring): the handlers never run."""
    saw = False
    for st in t.body:
        if isinstance(st, ast.Import) and all(a.name == "torch" for a in st.names):
            saw = True
        elif not (isinstance(st, ast.Pass) or isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant)
                  or isinstance(st, (ast.Return, ast.Assign)) and _plain(st.value)
                  and all(isinstance(x, ast.Name) for x in getattr(st, "targets", ()))):
            return False
    return saw


def _plain(e: ast.expr | None) -> bool:
    return e is None or isinstance(e, (ast.Constant, ast.Name))
