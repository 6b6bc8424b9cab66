"""Branch conditions that say "a CUDA value already exists" (issue 12, root cause 3).

`b.cuda(a.get_device()) if a.is_cuda else b.cpu()` or `if device.type == "cuda": torch.cuda.synchronize()`
only reach CUDA when the tensor or device they test is already on CUDA: that value was made elsewhere, so the
guarded CUDA call can never be the test's first CUDA use. When the analysis cannot decide such a condition,
the GPU findings of the branch it guards are dropped (evidence of the value's own origin decides instead).
Purely syntactic, so the same condition is read the same way wherever it appears.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager

from tools.classify.conventions import FOREIGN_CLASS_PACKAGES, FOREIGN_CLASSES
from tools.classify.evidence import GPU, GUARDED, IF_IMPORTED, IMPORTS, UNKNOWN, Finding, step
from tools.classify.interp_base import Frame

# attributes whose value is the device (or device type) of an existing tensor, module or device object
_DEVICE_ATTRS = frozenset({"type", "device", "device_type"})


def _is_cuda_text(node: ast.expr) -> bool:
    """`"cuda"`, `"cuda:0"`, or the device `torch.device("cuda")` (botorch's `value.device == torch.device("cuda")`)."""
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords and ast.unparse(node.func) in (
            "torch.device", "device"):
        node = node.args[0]
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.split(":")[0] == "cuda"


def _names_existing_device(node: ast.expr) -> bool:
    """`x.device`, `dev.type`, `x.device.type`, `str(x.device)`: the device of a value that exists."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "str" \
            and len(node.args) == 1 and not node.keywords:
        node = node.args[0]
    return isinstance(node, ast.Attribute) and node.attr in _DEVICE_ATTRS


def cuda_guard(test: ast.expr, existing: Callable[[ast.expr], bool] | None = None,
               is_cuda: Callable[[ast.expr], bool] | None = None) -> bool | None:
    """True: the body of `if test:` runs only when a CUDA value exists; False: the `else` branch does;
    None: neither. `existing(e)` says whether the name or attribute path `e` holds the device of a value that
    already exists (the interpreter's answer); with it, "that device is not the CPU" is a guard too. `is_cuda(e)`
    says whether it holds an existing value's `.is_cuda` (`use_cuda = next(model.parameters()).is_cuda`)."""
    if isinstance(test, ast.Attribute) and test.attr == "is_cuda":
        return True
    if is_cuda is not None and isinstance(test, (ast.Name, ast.Attribute)) and _simple_path(test) and is_cuda(test):
        return True
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = cuda_guard(test.operand, existing, is_cuda)
        return None if inner is None else not inner
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "any" and not test.keywords \
            and len(test.args) == 1 and isinstance(gen := test.args[0], (ast.GeneratorExp, ast.ListComp)):
        # `any(t.is_cuda for t in tensors)`, `any(... for t in ts if t.device.type == "cuda")`: true only when some
        # value is already on CUDA (the element's own test is read from its text)
        return True if cuda_guard(gen.elt) is True or any(
            cuda_guard(c) is True for g in gen.generators for c in g.ifs) else None
    if isinstance(test, ast.BoolOp):
        # `a.is_cuda and n > 1`: the body runs only when every operand holds; `not a.is_cuda or x`: the else
        # branch runs only when every operand fails
        want = isinstance(test.op, ast.And)
        return want if any(cuda_guard(v, existing, is_cuda) is want for v in test.values) else None
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Eq, ast.NotEq)):
        left, right = test.left, test.comparators[0]
        if (_is_cuda_text(right) and _names_existing_device(left)) or \
                (_is_cuda_text(left) and _names_existing_device(right)):
            return isinstance(test.ops[0], ast.Eq)
        if existing is not None and (_not_cpu_test(left, right, existing) or _not_cpu_test(right, left, existing)):
            return isinstance(test.ops[0], ast.NotEq)
    return None


def _is_cpu_device(node: ast.expr) -> bool:
    """`torch.device("cpu")` (no index: a CPU tensor's device is `cpu`, never `cpu:0`)."""
    return isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords \
        and isinstance(node.args[0], ast.Constant) and node.args[0].value == "cpu" \
        and ast.unparse(node.func) in ("torch.device", "device")


def _not_cpu_test(side: ast.expr, cpu: ast.expr, existing: Callable[[ast.expr], bool]) -> bool:
    """`d != torch.device("cpu")`, `d.type != "cpu"`, `str(d) != "cpu"` (and their `==`) with `d` an existing
    value's device. Not `d != "cpu"`: a torch.device never equals a string, so that test is always true."""
    if _is_cpu_device(cpu):
        return _simple_path(side) and existing(side)
    if not (isinstance(cpu, ast.Constant) and cpu.value == "cpu"):
        return False
    if isinstance(side, ast.Call) and isinstance(side.func, ast.Name) and side.func.id == "str" \
            and len(side.args) == 1 and not side.keywords:
        inner = side.args[0]
    elif isinstance(side, ast.Attribute) and side.attr == "type":
        inner = side.value
    else:
        return False
    return _simple_path(inner) and existing(inner)


def _simple_path(node: ast.expr) -> bool:
    """A name or a chain of attributes of one: evaluating it again adds nothing (no call)."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def guard_note(rel: str, test: ast.expr) -> str:
    """The step that says why a CUDA use under `test` (a cuda_guard) is not a need."""
    return step(rel, test.lineno, f"not a first CUDA use: runs only when a value that already exists is "
                                  f"off the CPU (if {ast.unparse(test)[:80]})")


@contextmanager
def _rewriting_findings(frame: Frame, rewrite: Callable[[Finding], Finding | None]) -> Iterator[None]:
    """Run a branch on `frame` and pass each of its findings through `rewrite` (None: dropped)."""
    outer, frame.findings = frame.findings, []
    try:
        yield
    finally:
        inner, frame.findings = frame.findings, outer
        for f in inner:
            got = rewrite(f)
            if got is not None:
                frame.add(got)


def dropping_gpu_findings(frame: Frame, key: str | None = None,
                          note: str | None = None) -> AbstractContextManager[None]:
    """Run a guarded branch (cuda_guard, undecided) on `frame`: its GPU findings (only those with `key`, when
    given) are dropped, every other finding (skips, unknowns, mocks) reaches the frame. With `note` (a step),
    each dropped one stays as a GUARDED finding, the reason `--explain` gives for a `cpu` label."""
    def rewrite(f: Finding) -> Finding | None:
        if f.kind != GPU or (key is not None and f.key != key):
            return f
        return Finding(GUARDED, (note, *f.steps)) if note is not None else None
    return _rewriting_findings(frame, rewrite)


def keeping_gpu_findings_only(frame: Frame) -> AbstractContextManager[None]:
    """Run code whose other findings would say more about the analysis than about the test: a context manager's
    `__exit__` (interp_statements.StatementsMixin._exec_with), where a CUDA call fails the test but a tracing
    library's `exec` of the block it captured (nnsight) or a patch it undoes is no need of its own."""
    return _rewriting_findings(frame, lambda f: f if f.kind == GPU else None)


def foreign_class_test(test: ast.expr) -> tuple[bool, frozenset[str]] | None:
    """`type(p).__name__ == "Int8Params"`, `p.__class__.__name__ in ["Int8Params", "Params4bit"]`, `cls.__name__
    != "QTensor"` (conventions.FOREIGN_CLASSES): (True: the body runs only for an object of such a class, False:
    the else branch does; the packages that make those classes). None: not such a test. `and`/`or`/`not` as in
    cuda_guard."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = foreign_class_test(test.operand)
        return None if inner is None else (not inner[0], inner[1])
    if isinstance(test, ast.BoolOp):
        want = isinstance(test.op, ast.And)
        hits = [r for r in (foreign_class_test(v) for v in test.values) if r is not None and r[0] is want]
        return (want, frozenset().union(*(r[1] for r in hits))) if hits else None
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    op, left, right = test.ops[0], test.left, test.comparators[0]
    if not (isinstance(left, ast.Attribute) and left.attr == "__name__"):
        return None
    if isinstance(op, (ast.Eq, ast.NotEq)):
        names = [right]
    elif isinstance(op, (ast.In, ast.NotIn)) and isinstance(right, (ast.List, ast.Tuple, ast.Set)):
        names = right.elts
    else:
        return None
    if not names or not all(isinstance(c, ast.Constant) and c.value in FOREIGN_CLASSES for c in names):
        return None
    packages = frozenset().union(*(FOREIGN_CLASSES[c.value] for c in names if isinstance(c, ast.Constant)))
    return isinstance(op, (ast.Eq, ast.In)), packages


def reached_package(dotted: str, line: int, frame: Frame) -> None:
    """Record that code called into `dotted` (or imported it inside a function) when its package makes
    FOREIGN_CLASSES objects: only from then on can such an object exist."""
    top = dotted.split(".", 1)[0]
    if top in FOREIGN_CLASS_PACKAGES:
        frame.add(Finding(IMPORTS, (step(frame.rel, line, f"reaches {top}"),), key=top))


def foreign_class_note(rel: str, test: ast.expr, packages: frozenset[str]) -> str:
    """The step that says a CUDA use under `test` (a foreign_class_test) counts only where `packages` are reached."""
    return step(rel, test.lineno, f"runs only for an object that {', '.join(sorted(packages))} make: counts only "
                                  f"where the test calls into one (if {ast.unparse(test)[:80]})")


def requiring_packages(frame: Frame, packages: frozenset[str], note: str) -> AbstractContextManager[None]:
    """Run a branch that foreign_class_test says runs only for objects the `packages` make: its GPU and unknown
    findings become IF_IMPORTED findings (key `<kind>|<packages>`), which count only where the test reaches one
    of the packages (evidence.decide)."""
    key = ",".join(sorted(packages))
    return _rewriting_findings(frame, lambda f: Finding(IF_IMPORTED, (note, *f.steps), f.gpu_count, f.vram_gb,
                                                        f"{f.kind}|{key}") if f.kind in (GPU, UNKNOWN) else f)


# Finding.key of "this code raises unless it runs on CUDA" (issue 12, root cause 7); `with pytest.raises(...)`
# expects the error and drops it
RAISES_OFF_CUDA = "raises-off-cuda"
# Finding.key of "this code skips unless it runs on CUDA": a skip on the non-CUDA side of a device test
SKIPS_OFF_CUDA = "skips-off-cuda"
# context managers that expect the error their block raises
EXPECTS_ERROR = frozenset({"raises", "assertRaises", "assertRaisesRegex"})


def _is_available_check(test: ast.expr) -> bool:
    """`torch.cuda.is_available()` (or any `...cuda...is_available()`)."""
    return isinstance(test, ast.Call) and isinstance(test.func, ast.Attribute) \
        and test.func.attr == "is_available" and "cuda" in ast.unparse(test.func.value)


def off_cuda_branch(test: ast.expr, availability: bool = True) -> bool | None:
    """Which branch of `if test:` runs when the code is not on CUDA, read from the condition alone: True the
    body (`accelerator != "cuda"`, `not x.is_cuda`, `"cuda" not in str(d)`, `not torch.cuda.is_available()`),
    False the else branch, None: the condition does not say. `availability=False` ignores
    `torch.cuda.is_available()`, which the worlds decide (a skip on it disappears where GPUs exist)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = off_cuda_branch(test.operand, availability)
        return None if inner is None else not inner
    if isinstance(test, ast.BoolOp):
        # `d.type != "cuda" or not bf16`: off CUDA one operand is true, so the body runs; `d.type == "cuda" and
        # x`: off CUDA one operand is false, so the else branch runs
        want = isinstance(test.op, ast.Or)
        return want if any(off_cuda_branch(v, availability) is want for v in test.values) else None
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        op, left, right = test.ops[0], test.left, test.comparators[0]
        if isinstance(op, (ast.Eq, ast.NotEq)) and (_is_cuda_text(left) or _is_cuda_text(right)):
            return isinstance(op, ast.NotEq)
        if isinstance(op, (ast.In, ast.NotIn)) and _is_cuda_text(left):
            return isinstance(op, ast.NotIn)
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Attribute) and test.func.attr == "startswith" \
            and len(test.args) == 1 and _is_cuda_text(test.args[0]):
        return False
    if (availability and _is_available_check(test)) or (isinstance(test, ast.Attribute) and test.attr == "is_cuda"):
        return False
    return None


def off_cuda_taken(test: ast.expr, taken: bool, availability: bool = True) -> bool:
    """Whether `if test:`, decided `taken` in a world, takes that branch because a device is not CUDA:
    `off_cuda_branch` says so, or an operand that has the value of the whole does (`compiled and d.type !=
    "cuda"` true: every operand is true, `d.type != "cuda"` among them)."""
    if off_cuda_branch(test, availability) is taken:
        return True
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return off_cuda_taken(test.operand, not taken, availability)
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And if taken else ast.Or):
        return any(off_cuda_taken(v, taken, availability) for v in test.values)
    return False


def raises_error(branch: list[ast.stmt]) -> ast.Raise | None:
    """The `raise` that ends a branch, unless it raises a skip (SkipTest, pytest's Skipped)."""
    last = branch[-1] if branch else None
    if isinstance(last, ast.Raise) and last.exc is not None and "Skip" not in ast.unparse(last.exc):
        return last
    return None
