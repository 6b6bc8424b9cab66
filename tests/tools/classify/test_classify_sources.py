"""The parts the Analyzer is composed of, used on their own: Sources (sources.py: parsing, release, the
import closure, whether running a file imports torch) and Fixtures (fixtures.py: what pytest resolves)."""

from __future__ import annotations

import ast
from pathlib import Path

from tools.classify.dataflow import Interp
from tools.classify.fixtures import SCOPES, Fixtures
from tools.classify.sources import Sources

FILES = {
    "tests/conftest.py": b"import pytest\nimport helpers.gpu\n\n\n@pytest.fixture(scope='module', params=[1, 2])\n"
                         b"def dev(request):\n    return request.param\n\n\n@pytest.fixture(autouse=True)\n"
                         b"def seed():\n    pass\n",
    "tests/test_a.py": b"import helpers.lazy\nfrom helpers import cyc\n\n\ndef test_a():\n    pass\n",
    "helpers/__init__.py": b"",
    "helpers/lazy.py": b"def f():\n    import torch\n    return torch\n",
    "helpers/gpu.py": b"import torch\n",
    "helpers/cyc.py": b"from helpers import cyc2\n",
    "helpers/cyc2.py": b"from helpers import cyc\nto_gpu = lambda t: t.cuda()\n",
    "tests/test_broken.py": b"def test_x(:\n    pass\n",
}


def _sources(files: dict[str, bytes] = FILES) -> Sources:
    return Sources(Path("/nonexistent"), sorted(files), dict(files))


def test_file_deps_are_the_import_closure_with_the_conftests_and_cycles_end() -> None:
    src = _sources()
    assert src.file_deps("tests/test_a.py") == ["helpers/__init__.py", "helpers/cyc.py", "helpers/cyc2.py",
                                                "helpers/gpu.py", "helpers/lazy.py", "tests/conftest.py",
                                                "tests/test_a.py"]


def test_imports_torch_counts_only_imports_that_run_when_the_file_is_loaded() -> None:
    src = _sources()
    # helpers.lazy imports torch inside a function: loading tests/test_a.py does not import torch
    assert not src.imports_torch("tests/test_a.py")
    assert src.imports_torch("tests/conftest.py")  # through helpers.gpu's top level
    assert src.imports_torch("helpers/lazy.py")  # its own body's imports count (test and fixture bodies run)


def test_a_file_that_does_not_parse_is_reported_once_by_name() -> None:
    src = _sources()
    pm = src.module("tests/test_broken.py")
    assert pm.tree is None
    src.module("tests/test_broken.py")
    assert [rel for rel, _ in src.parse_errors] == ["tests/test_broken.py"]
    assert "line 1" in src.parse_errors[0][1]


def test_a_released_module_is_parsed_again_with_the_same_definitions_and_lambdas() -> None:
    src = _sources()
    first = src.module("helpers/cyc2.py")
    src.release("helpers/cyc2.py")
    assert "helpers/cyc2.py" not in src.parsed and src.lines_of("helpers/cyc2.py") is not None
    again = src.module("helpers/cyc2.py")
    assert again is not first and again.tree is not None
    assert set(first.defs) <= set(again.defs)
    # the interpreter indexes lambdas when it meets them; values made from the first tree may refer to any
    assert isinstance(again.defs[(2, 9)], ast.Lambda)
    assert src.parse_errors == []


def test_files_not_given_are_read_from_disk_and_listed(tmp_path: Path) -> None:
    (tmp_path / "test_d.py").write_text("def test_d():\n    pass\n")
    src = Sources(tmp_path, ["test_d.py"], {})
    assert src.module("test_d.py").tree is not None
    assert src.read_from_disk == ["test_d.py"]
    assert src.lines_of("test_d.py") == [b"def test_d():\n", b"    pass\n"]


def test_fixtures_reads_conftest_declarations_through_sources_and_the_interpreter() -> None:
    src = _sources()
    fixtures = Fixtures(src, Interp(src))
    table = fixtures.module_fixtures("tests/conftest.py")
    assert sorted(table) == ["dev", "seed"]
    dev, seed = table["dev"], table["seed"]
    assert dev.scope_rank == SCOPES["module"] and not dev.autouse
    assert [c.id for c in dev.params or ()] == ["1", "2"]
    assert seed.autouse and seed.params is None and seed.scope_rank == SCOPES["function"]
    assert fixtures.fixture_args(dev.fv) == ("request",)
    assert fixtures.module_fixtures("tests/conftest.py") is table  # memoised across files
