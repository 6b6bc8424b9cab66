"""Round 19: idiom batteries run on CPU-only torch (tests/round19_idioms, tests/round19_ids; labels in expected.json).

Each corpus test was run with pytest first; here the node ids are checked against pytest's and the rules' edges
against small sources."""

from __future__ import annotations

import pytest

from tools.classify.interp_external import runs_nvidia_smi
from tools.classify.runner import run
from tools.classify.values import Const, Seq

IDS = "tests/round19_ids/test_value_ids.py"
IDIOMS = "tests/round19_idioms"


def test_value_ids_equal_pytest(ids_vs_pytest) -> None:
    got = ids_vs_pytest(IDS)
    assert got.not_collected == set()  # every collected id exact: no function-level key, no guess
    assert len(got.collected) == 28


def test_round19_idiom_ids_equal_pytest(ids_vs_pytest) -> None:
    got = ids_vs_pytest(IDIOMS)
    assert got.not_collected == set()
    assert got.tests[f"{IDIOMS}/by_name/test_getfixturevalue.py::test_by_parametrized_name[big_buffer]"].label == "gpu"
    assert got.tests[f"{IDIOMS}/by_name/test_getfixturevalue.py::test_by_parametrized_name[small_buffer]"].label \
        == "cpu"


def _cmd(*items: str) -> Seq:
    return Seq(tuple(Const(i) for i in items), "list")


@pytest.mark.parametrize(("path", "args", "kwargs", "needs"), [
    ("subprocess.run", [_cmd("nvidia-smi")], {}, True),
    ("subprocess.run", [_cmd("/usr/bin/nvidia-smi", "-L")], {}, True),
    ("subprocess.check_output", [Const("nvidia-smi -L")], {"shell": Const(True)}, True),  # checks the exit
    ("subprocess.run", [Const("nvidia-smi")], {"shell": Const(True)}, False),  # only sets a status
    ("subprocess.run", [Const("nvidia-smi")], {"shell": Const(True), "check": Const(True)}, True),
    ("subprocess.run", [_cmd("python3", "-V")], {}, False),
    ("os.system", [Const("nvidia-smi")], {}, False),
])
def test_which_subprocess_calls_run_nvidia_smi(path, args, kwargs, needs) -> None:
    assert runs_nvidia_smi(path, args, kwargs) is needs


def test_what_pytest_runs_around_a_test_says_why(corpus) -> None:
    """The reasons name the hook, the context manager method or the fixture asked for by name (`--explain`)."""
    def tests(rel: str) -> dict:
        path = f"{IDIOMS}/{rel}"
        return run(corpus, paths=[path], cache_dir=None).files[path].tests

    setup = tests("test_function_setup.py")
    assert "setup_function() ->" in setup["test_uses_state"].reasons[0]
    assert setup["TestNotAffected::test_method"].label == "cpu"  # (pytest runs it around module functions only)
    managed = tests("test_context_manager_classes.py")
    assert "calls __enter__()" in managed["test_timer_on_cuda"].reasons[0]
    assert "calls __exit__()" in managed["test_synchronized_on_exit"].reasons[0]
    by_name = tests("by_name/test_getfixturevalue.py")
    assert "request.getfixturevalue('big_buffer')" in by_name["test_by_literal_name"].reasons[0]
    configured = tests("test_configured_devices.py")
    assert "cfg is a TrainConfig whose device the analysis cannot follow" in configured[
        "test_config_read_from_a_file"].reasons[0]
    assert configured["test_partial_made_at_import_not_called"].label == "cpu"
    assert "calls scratch()" in configured["test_partial_made_at_import_called"].reasons[0]
