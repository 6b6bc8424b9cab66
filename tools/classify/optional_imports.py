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

A module is looked up without being imported: `importlib.util.find_spec` of a top-level name only searches the
finders (site-packages, editable installs, the standard library). Whether it is present is part of a result's
cache entry, like a data file's state (runner.data_unchanged), so installing it later recomputes the result.
"""

from __future__ import annotations

import ast
import importlib.util

from tools.classify.interp_base import _last_name

PRESENCE_PREFIX = "<module>/"  # a result's `data` entry: (PRESENCE_PREFIX + top-level name, PRESENT or ABSENT)
PRESENT = "present"
ABSENT = "absent"
# what an `except` clause must name to catch a failed import
IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})


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
