"""The runner's side of Bazel's test protocol, in process: filter, fail fast, warnings, coverage paths.

tests/e2e/test_protocol.py checks the same behaviour through real `bazel test` runs; these
cover the cases that are slow or awkward to set up there (sharding with a filter, bad seeds).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rules.private import pytest_runner as runner
from rules.private import pytest_torch_glue as glue

TESTS = """\
import pytest

def test_alpha():
    pass

@pytest.mark.parametrize("n", [1, 2])
def test_beta(n):
    pass

class TestGamma:
    def test_delta(self):
        pass
"""


def test_filter_with_path_separators_is_node_ids_else_a_keyword_expression():
    assert runner.test_filter(None) is None and runner.test_filter("  ") is None
    assert runner.test_filter("alpha or beta").node_ids == ()
    assert runner.test_filter("pkg/test_a.py::test_x, pkg/test_b.py").node_ids == ("pkg/test_a.py::test_x",
                                                                                   "pkg/test_b.py")
    assert runner.test_filter("test_a.py").node_ids == ("test_a.py",)
    assert runner.test_filter("tests/pkg/").node_ids == ("tests/pkg",)


def test_node_id_selects_parametrizations_methods_files_and_directories_not_prefixes():
    nodeid = "tests/pkg/test_a.py::TestGamma::test_delta[2]"
    for selector in ("tests/pkg/test_a.py::TestGamma::test_delta", "tests/pkg/test_a.py::TestGamma",
                     "tests/pkg/test_a.py", "tests/pkg", nodeid):
        assert runner.matches_node_id(nodeid, selector), selector
    for selector in ("tests/pkg/test_a.py::TestGam", "tests/pk", "tests/pkg/test_a.py::TestGamma::test_delta[1]"):
        assert not runner.matches_node_id(nodeid, selector), selector


def test_fail_fast_and_keyword_filter_become_pytest_options():
    args = runner.pytest_arguments({}, {"TESTBRIDGE_TEST_RUNNER_FAIL_FAST": "1", "TESTBRIDGE_TEST_ONLY": "beta"}, "/r")
    assert "--exitfirst" in args and args[args.index("-k") + 1] == "beta"
    args = runner.pytest_arguments({}, {"TESTBRIDGE_TEST_ONLY": "t.py::test_x"}, "/r")
    assert "-k" not in args and "--exitfirst" not in args


def run(tmp_path: Path, filter_value: str | None, routing: dict | None = None, shards: int = 1, index: int = 0):
    (tmp_path / "test_sample.py").write_text(TESTS)
    plugin = runner.BazelPytestPlugin(
        routing=routing or {}, part="cpu" if routing else None, total_shards=shards, shard_index=index,
        selection=runner.test_filter(filter_value),
    )
    args = runner.pytest_arguments({}, {"TESTBRIDGE_TEST_ONLY": filter_value or ""}, str(tmp_path))
    args += ["-q", "--import-mode=importlib", str(tmp_path)]
    code = pytest.main(args, plugins=[plugin])
    return runner.exit_code(int(code), plugin), plugin


def test_filter_intersects_the_part_and_shards_split_what_it_kept(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # no torch import: each run takes ~0.5 s
    routing = {"test_sample.py": {"test_alpha": "cpu", "test_beta": "cpu", "TestGamma": "gpu"}}
    code, plugin = run(tmp_path, "test_sample.py::TestGamma", routing)
    assert code == runner.NO_TESTS_COLLECTED and plugin.matched == 0  # the GPU part's test is not this part's

    code, plugin = run(tmp_path, "beta or delta", routing)
    assert code == 0 and plugin.matched == 2  # test_beta[1], test_beta[2]; delta is in the GPU part

    selected = []
    for index in range(3):
        code, plugin = run(tmp_path, "test_sample.py::test_beta", shards=3, index=index)
        assert code == 0 and plugin.matched == 2  # the empty third shard passes: the filter matched
        selected.append(plugin.selected)
    assert sorted(selected) == [0, 1, 1]


def test_a_filter_that_selects_nothing_fails_and_says_why(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # no torch import: each run takes ~0.5 s
    for shards in (1, 2):
        code, _ = run(tmp_path, "test_sample.py::test_omega", shards=shards)
        assert code == runner.NO_TESTS_COLLECTED
    err = capsys.readouterr().err
    assert "--test_filter='test_sample.py::test_omega' (node ids) selected no test of this target (4 collected)" in err
    code, _ = run(tmp_path, "not (")
    assert code == pytest.ExitCode.USAGE_ERROR  # pytest rejects a malformed -k expression


def test_warning_lines_are_workspace_relative_and_counted():
    records = [("t.py::test_a", "/root/t.py", 3, "UserWarning", "old"), ("t.py::test_a", "/root/t.py", 3,
               "UserWarning", "old"), ("", "/elsewhere/m.py", 1, "DeprecationWarning", "gone")]
    assert runner.warning_lines(records, "/root") == [
        "t.py::test_a: t.py:3: UserWarning: old (2 times)",
        "<no test>: /elsewhere/m.py:1: DeprecationWarning: gone",
    ]


def test_coverage_reports_use_the_manifests_paths(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "lib.py").write_text("x = 1\n")
    (tmp_path / "runfiles").mkdir()
    os.symlink(tmp_path / "src", tmp_path / "runfiles" / "pkg")
    sources = runner.instrumented_sources("pkg/lib.py\npkg/BUILD\npkg/missing.py\n", str(tmp_path / "runfiles"))
    assert sources == {str(tmp_path / "src" / "lib.py"): "pkg/lib.py"}
    lcov = f"SF:{tmp_path / 'src' / 'lib.py'}\nDA:1,1\nend_of_record\nSF:other.py\nend_of_record\n"
    expected = "SF:pkg/lib.py\nDA:1,1\nend_of_record\nSF:other.py\nend_of_record\n"
    assert runner.unresolve_sources(lcov, sources) == expected


def test_seed_options_and_report_line():
    args = glue.pytest_torch_args({"TEST_RANDOM_SEED": "7"}, "/r", user_set_threads=True)
    assert args[args.index("--torch-seed") + 1] == "7" and "--torch-autoseed" in args
    assert "--torch-seed" not in glue.pytest_torch_args({}, "/r", user_set_threads=True)
    assert glue.seed_report({"TEST_RANDOM_SEED": "7", "TEST_RUN_NUMBER": "7"}).startswith(
        "torch_py_test: TEST_RANDOM_SEED=7 (run 7): random, numpy and torch seeded with 7"
    )
    assert glue.seed_report({}) is None
    with pytest.raises(ValueError, match="TEST_RANDOM_SEED='x' is not a non-negative integer"):
        glue.pytest_torch_args({"TEST_RANDOM_SEED": "x"}, "/r", user_set_threads=True)


def test_an_id_that_names_another_case_without_gpus_goes_by_what_the_process_sees():
    """`test_beta[1]` is the CPU case where no GPU is seen and the CUDA case where one is (a positional id over
    a device list that CUDA extends): the CPU part runs it only without GPUs, the GPU part only with them."""
    routing = {"test_sample.py": {"test_alpha": "cpu", "test_beta[1]": runner.contract.ROUTE_CPU_WITHOUT_GPUS,
                                  "test_beta": "gpu", "TestGamma": "gpu"}}
    asked = []

    def sees(gpus: bool):
        def probe() -> bool:
            asked.append(gpus)
            return gpus
        return probe

    def kept(part: str, gpus: bool) -> set[str]:
        ids = ["test_sample.py::test_alpha", "test_sample.py::test_beta[1]", "test_sample.py::test_beta[2]",
               "test_sample.py::TestGamma::test_delta"]
        return {i for i in ids if runner.in_part(routing, part, i, sees(gpus))}

    assert kept("cpu", False) == {"test_sample.py::test_alpha", "test_sample.py::test_beta[1]"}
    assert kept("gpu", False) == {"test_sample.py::test_beta[2]", "test_sample.py::TestGamma::test_delta"}
    assert kept("cpu", True) == {"test_sample.py::test_alpha"}
    assert kept("gpu", True) == {"test_sample.py::test_beta[1]", "test_sample.py::test_beta[2]",
                                 "test_sample.py::TestGamma::test_delta"}
    assert len(asked) == 4  # only for the one id that depends on it


def test_the_plugin_asks_whether_there_are_gpus_once(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    (tmp_path / "test_sample.py").write_text(TESTS)
    calls = []

    def no_gpus() -> bool:
        calls.append(1)
        return False

    routing = {"test_sample.py": {"test_alpha": "gpu", "test_beta": runner.contract.ROUTE_CPU_WITHOUT_GPUS,
                                  "TestGamma": "gpu"}}
    plugin = runner.BazelPytestPlugin(routing=routing, part="cpu", total_shards=1, shard_index=0, gpus=no_gpus)
    code = pytest.main(["-q", "-p", "no:cacheprovider", "--import-mode=importlib", str(tmp_path)], plugins=[plugin])
    assert code == 0 and plugin.selected == 2 and calls == [1]
