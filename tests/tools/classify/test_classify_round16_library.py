"""Round 16: idioms met on pyqtorch and cuequivariance-torch (tests/round16_library, labels in expected.json).

* `if logger.isEnabledFor(logging.DEBUG):` guards diagnostics (NVTX ranges raise on a CPU build): false unless a
  module the caller loads may lower a level to DEBUG (log_levels.py); a level computed at import is the value
  the module's top level gives it.
* `random.choice/choices/sample` over a known population: each element drawn is one of its elements.
* `next(iter(xs))`: the elements of a known sequence, as `next(xs)` reads them.

Found on cuequivariance-torch (tests/round16_library/test_registries.py):
* a container a function changes in place from an enclosing scope (a registry a module-level decorator
  fills) is unknown after the def: a function-level key, not the `[NOTSET]` case of an empty list; calling a
  parametrized value the analysis cannot compute is a dynamic dispatch (`unknown`), not "no GPU use";
* a torch dtype compared with a Python constant (`math_dtype not in [None]`) is decided;
* no id is made from a lower-case attribute of an installed package (`cue.mul_ir`: an enum member whose str()
  the package defines)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tools.classify.collect import idval
from tools.classify.interp_external import _drawn
from tools.classify.log_levels import level_settings, lowest_level, written_level
from tools.classify.runner import run
from tools.classify.values import Const, Ext, OneOf, Seq


def _settings(src: str) -> list[tuple[int, int | None, bool]]:
    return [(s.line, written_level(s.arg) if s.arg is not None else None, s.top_level)
            for s in level_settings(ast.parse(src))]


def test_level_settings_are_read_from_the_syntax() -> None:
    src = """import logging
logging.basicConfig(format="%(message)s")
logging.basicConfig(level="INFO")
log = logging.getLogger(__name__)
log.setLevel(logging.WARNING)
LEVEL = 10
log.setLevel(LEVEL)


def enable(caplog):
    caplog.set_level(logging.DEBUG)
    logging.config.dictConfig({})
"""
    # basicConfig without a level keeps the root's; a computed level is None (asked of the module's state)
    assert _settings(src) == [(3, 20, True), (5, 30, True), (7, None, True), (11, 10, False), (12, None, False)]


@pytest.mark.parametrize(("value", "level"), [
    (Ext("logging.DEBUG"), 10), (Const("info"), 20), (Const(5), 5),
    (OneOf(frozenset({Ext("logging.INFO"), Ext("logging.DEBUG")})), 10),
    (OneOf(frozenset({Ext("logging.INFO"), Const(None)})), None), (Ext("logging.getLogger"), None),
])
def test_lowest_level(value, level) -> None:
    assert lowest_level(value) == level


def test_random_draws_from_a_known_population() -> None:
    pop = Seq((Const("a"), Const("b")), "list")
    one = OneOf(frozenset({Const("a"), Const("b")}))
    assert _drawn("random.choice", [pop], {}) == one
    assert _drawn("random.choices", [pop], {"k": Const(3)}) == Seq((one, one, one), "list")
    assert _drawn("random.choices", [pop], {}) == Seq((one,), "list")
    assert _drawn("random.sample", [pop, Const(2)], {}) == Seq((one, one), "list")
    assert _drawn("random.sample", [pop, Const(3)], {}) is None  # Python raises: larger than the population
    assert _drawn("random.choices", [pop], {"k": Const(None)}) is None
    assert _drawn("random.choice", [Seq((), "list")], {}) is None  # (IndexError)


def _label(tmp_path: Path, files: dict[str, str], test: str) -> tuple[str, tuple[str, ...]]:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    v = run(tmp_path, paths=["test_x.py"], cache_dir=None).files["test_x.py"].tests[test]
    return v.label, v.reasons


LIB = """import logging
import torch

logger = logging.getLogger(__name__)


def traced(x):
    if logger.isEnabledFor(logging.DEBUG):
        torch.cuda.synchronize()
    return x
"""


def test_a_level_lowered_inside_a_function_keeps_the_guard_open(tmp_path: Path) -> None:
    # the library's own helper may turn DEBUG on when called: the guard stays undecided
    lib = LIB + """

def verbose():
    logger.setLevel(logging.DEBUG)
"""
    label, reasons = _label(tmp_path, {"lib.py": lib, "test_x.py": "from lib import traced\n\n\n"
                                       "def test_t():\n    traced(1)\n"}, "test_t")
    assert label == "gpu", reasons


def test_without_any_setting_debug_is_off(tmp_path: Path) -> None:
    label, reasons = _label(tmp_path, {"lib.py": LIB, "test_x.py": "from lib import traced\n\n\n"
                                       "def test_t():\n    traced(1)\n"}, "test_t")
    assert label == "cpu", reasons


def test_an_unread_configuration_keeps_the_guard_open(tmp_path: Path) -> None:
    pkg = "import logging.config\n\nlogging.config.fileConfig('logging.ini')\n"
    files = {"pkg/__init__.py": pkg, "pkg/lib.py": LIB,
             "test_x.py": "from pkg.lib import traced\n\n\ndef test_t():\n    traced(1)\n"}
    label, reasons = _label(tmp_path, files, "test_t")
    assert label == "gpu", reasons


ROUND16 = "tests/round16_library"
REGISTRIES = f"{ROUND16}/test_registries.py"


def test_registries_get_their_cases_not_empty_ones(ids_vs_pytest) -> None:
    # a list a module-level decorator fills is not the empty list it starts as: no `[NOTSET]` case (which pytest
    # would skip, so `cpu`); since round 26 it is a registry whose items the import stores (registries.py): exact
    # ids, and the registered case's CUDA use seen; one a nested decorator fills in a helper is followed call by call
    # (round 18, test_classify_round18.py)
    got = ids_vs_pytest(REGISTRIES)
    assert got.collected == {f"{REGISTRIES}::test_registered[case_cuda]", f"{REGISTRIES}::test_generated[a-1]",
                             f"{REGISTRIES}::test_dtype_skip[math_dtype0]", f"{REGISTRIES}::test_dtype_skip[None]"}
    assert got.function_only == set() and got.not_collected == set()
    assert got.tests[f"{REGISTRIES}::test_registered[case_cuda]"].label == "gpu"
    # `math_dtype not in [None]` with a dtype is decided: that case is skipped before the CUDA check
    assert got.tests[f"{REGISTRIES}::test_dtype_skip[math_dtype0]"].label == "cpu"
    assert got.tests[f"{REGISTRIES}::test_dtype_skip[None]"].label == "gpu"


@pytest.mark.parametrize(("path", "expected"), [
    ("cuequivariance.mul_ir", None),  # an enum member pytest ids `(mul,irrep)`
    ("pkg.Layout.ir_mul", None),
    ("pkg.Model", "Model"),  # a class: its __name__
    ("torch.relu", "relu"),
    ("numpy.sum", "sum"),
    ("math.sin", "sin"),
])
def test_ids_of_installed_attributes(path: str, expected: str | None) -> None:
    assert idval(Ext(path), "arg", 0) == expected


def test_a_moved_module_list_is_not_read_as_its_children() -> None:
    from tools.classify.values import NNModV, iterated
    children = Seq((Const("a"), Const("b")), "list")
    built = NNModV("ModuleList", (("modules", children),))
    assert iterated(built) == Seq(children.items, "list")
    moved = NNModV("ModuleList", (("modules", children),), device="cuda")
    assert iterated(moved) == moved  # its children are on CUDA now: not what they were built as
