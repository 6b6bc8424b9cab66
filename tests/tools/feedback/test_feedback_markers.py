"""The marker codemod: adds what is missing, keeps every byte else, is idempotent, registers the markers."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from feedback_helpers import REPO, classification, file_entry, test_entry

pytest.importorskip("libcst")

from tools.feedback.markers import (  # noqa: E402
    add_ini_markers,
    add_markers,
    add_toml_markers,
    plan,
    register_markers,
    write_markers,
)

SOURCE = '''"""Tests of a module; comments and odd spacing must survive."""
import os  # not pytest


# a comment above test_cpu
def test_cpu():
    assert os.sep   # trailing comment


class TestPair:
    # inside the class
    def test_one(self):  # trailing
        pass

    def test_two(self):
        pass


@decorated_by_user
def test_gpu(  x ):
    """doc"""


def test_params(n):
    pass


@pytest.mark.gpu
def test_already():
    pass
'''

ENTRY = file_entry({
    "test_cpu": test_entry("cpu"),
    "TestPair::test_one": test_entry("gpu", gpu_count=2, vram_gb=8),
    "TestPair::test_two": test_entry("gpu", gpu_count=2, vram_gb=8),
    "test_gpu": test_entry("gpu", vram_gb=2.5),
    "test_params[1]": test_entry("cpu"),
    "test_params[2]": test_entry("gpu"),
    "test_already": test_entry("gpu"),
    "test_removed": test_entry("cpu"),
})


def test_markers_added_and_everything_else_kept():
    new, report = add_markers(SOURCE.encode(), ENTRY, "t.py")
    text = new.decode()
    assert "@pytest.mark.cpu\ndef test_cpu():" in text
    assert "# a comment above test_cpu\n@pytest.mark.cpu" in text
    assert "@pytest.mark.gpu(count=2, vram_gb=8)\nclass TestPair:" in text  # the class, once
    assert "@pytest.mark.gpu(vram_gb=2.5)\n@decorated_by_user\ndef test_gpu(  x ):" in text
    assert "import os  # not pytest\nimport pytest\n" in text
    assert text.count("@pytest.mark.gpu\ndef test_already") == 1
    # Removing the added lines gives the original back, byte for byte.
    added = {"import pytest", "@pytest.mark.cpu", "@pytest.mark.gpu(count=2, vram_gb=8)",
             "@pytest.mark.gpu(vram_gb=2.5)"}
    assert "".join(ln for ln in text.splitlines(keepends=True) if ln.strip() not in added) == SOURCE
    assert report.already == ["test_already"]
    assert report.not_found == ["test_removed"]
    assert any("test_params: parametrizations differ" in c for c in report.conflicts)


def test_idempotent():
    once, _ = add_markers(SOURCE.encode(), ENTRY, "t.py")
    twice, report = add_markers(once, ENTRY, "t.py")
    assert twice == once and not report.added and not report.changed


def test_conflicting_manual_mark_is_reported_not_changed():
    source = b"import pytest\n\n\n@pytest.mark.cpu\ndef test_x():\n    pass\n"
    new, report = add_markers(source, file_entry({"test_x": test_entry("gpu")}), "t.py")
    assert new == source and "marked cpu in source, classified gpu" in report.conflicts[0]


def test_module_pytestmark_and_alias_are_respected():
    source = b"import pytest as pt\n\npytestmark = [pt.mark.gpu]\n\n\ndef test_x():\n    pass\n"
    new, report = add_markers(source, file_entry({"test_x": test_entry("gpu")}), "t.py")
    assert new == source and report.already == ["test_x"]
    source = b"import pytest as pt\n\n\ndef test_x():\n    pass\n"
    new, _ = add_markers(source, file_entry({"test_x": test_entry("cpu")}), "t.py")
    assert new == b"import pytest as pt\n\n\n@pt.mark.cpu\ndef test_x():\n    pass\n"


def test_crlf_and_syntax_errors(tmp_path: Path):
    source = b"def test_x():\r\n    pass\r\n"
    new, _ = add_markers(source, file_entry({"test_x": test_entry("cpu")}), "t.py")
    assert new == b"import pytest\r\n\r\n@pytest.mark.cpu\r\ndef test_x():\r\n    pass\r\n"
    broken = b"def test_x(:\n"
    same, report = add_markers(broken, file_entry({"test_x": test_entry("cpu")}), "t.py")
    assert same == broken and "not parseable" in (report.error or "")


PYPROJECT = """[project]
name = "x"

[tool.pytest.ini_options]
# keep this comment
testpaths = ["tests"]
markers = [
    "slow: a slow test",  # why
    "net: needs the network"
]

[tool.other]
key = 1
"""


def test_toml_markers_are_appended_keeping_comments():
    new = add_toml_markers(PYPROJECT, ["cpu", "gpu"], "tool.pytest.ini_options")
    markers = tomllib.loads(new)["tool"]["pytest"]["ini_options"]["markers"]
    assert markers[:2] == ["slow: a slow test", "net: needs the network"]
    assert [m.split(":")[0].split("(")[0] for m in markers[2:]] == ["cpu", "gpu"]
    assert "# keep this comment" in new and '"slow: a slow test",  # why' in new
    assert new.endswith("[tool.other]\nkey = 1\n")


@pytest.mark.parametrize("body", [
    '[tool.pytest.ini_options]\nmarkers = ["slow: x"]\n',
    "[tool.pytest.ini_options]\nmarkers = []\n",
    '[tool.pytest.ini_options]\ntestpaths = ["t"]\n\n[tool.x]\na = 1\n',
    '[project]\nname = "x"\n',
    '[tool.pytest]\nmarkers = [\n  "slow: x",\n]\n',
])
def test_register_markers_in_pyproject_variants(tmp_path: Path, body: str):
    (tmp_path / "pyproject.toml").write_text(body)
    message = register_markers(tmp_path)
    data = tomllib.loads((tmp_path / "pyproject.toml").read_text())["tool"]["pytest"]
    markers = data.get("ini_options", data)["markers"]
    assert {m.split(":")[0].split("(")[0] for m in markers} >= {"cpu", "gpu"}, message
    before = (tmp_path / "pyproject.toml").stat().st_mtime_ns
    assert "already registered" in register_markers(tmp_path)
    assert (tmp_path / "pyproject.toml").stat().st_mtime_ns == before  # not rewritten


@pytest.mark.parametrize(("name", "section"), [("pytest.ini", "pytest"), ("tox.ini", "pytest"),
                                               ("setup.cfg", "tool:pytest")])
def test_register_markers_in_ini_files(tmp_path: Path, name: str, section: str):
    original = f"[{section}]\n# comment\nmarkers =\n    slow: a slow test\naddopts = -q\n"
    (tmp_path / name).write_text(original)
    assert "registered cpu, gpu" in register_markers(tmp_path)
    text = (tmp_path / name).read_text()
    assert text.startswith(f"[{section}]\n# comment\nmarkers =\n    slow: a slow test\n    cpu: ")
    assert text.endswith("addopts = -q\n")
    assert add_ini_markers("[other]\na = 1\n", ["cpu"], "pytest").endswith("[pytest]\nmarkers =\n    cpu: the test "
                                                                           "runs on a CPU (manual classification)\n")


def test_repository_pyproject_already_registers_both():
    text = (REPO / "pyproject.toml").read_text()
    assert add_toml_markers(text, [], "tool.pytest.ini_options") is not None
    data = tomllib.loads(text)["tool"]["pytest"]["ini_options"]["markers"]
    assert {m.split(":")[0].split("(")[0] for m in data} >= {"cpu", "gpu"}


def test_write_markers_end_to_end_passes_strict_markers(tmp_path: Path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests/test_m.py").write_text("def test_cpu():\n    pass\n\n\ndef test_gpu():\n    pass\n")
    (tmp_path / "tests/test_same.py").write_text("def test_x():\n    pass\n")
    (tmp_path / "pyproject.toml").write_text('[tool.pytest.ini_options]\ntestpaths = ["tests"]\n')
    data = classification({
        "tests/test_m.py": file_entry({"test_cpu": test_entry("cpu"), "test_gpu": test_entry("gpu", gpu_count=2)}),
        "tests/test_same.py": file_entry({"test_x": test_entry("unknown")}),
        "tests/test_gone.py": file_entry({"test_y": test_entry("cpu")}),
    })
    untouched = tmp_path / "tests/test_same.py"
    inode = untouched.stat().st_ino
    report = write_markers(tmp_path, data)
    assert "@pytest.mark.gpu(count=2)\ndef test_gpu" in (tmp_path / "tests/test_m.py").read_text()
    assert untouched.stat().st_ino == inode  # a file without changes is never rewritten
    assert any("not on disk" in (f.error or "") for f in report.files)
    lines = "\n".join(report.lines())
    assert "added 2 marker(s) in 1 file(s)" in lines and "pyproject.toml: registered cpu, gpu" in lines
    m_inode = (tmp_path / "tests/test_m.py").stat().st_ino
    write_markers(tmp_path, data)
    assert (tmp_path / "tests/test_m.py").stat().st_ino == m_inode  # idempotent: second run writes nothing
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    run = subprocess.run([sys.executable, "-m", "pytest", "--strict-markers", "-p", "no:cacheprovider", "-q",
                          "-m", "gpu", "--collect-only"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1/3 tests collected" in run.stdout


def test_a_key_naming_a_cpu_case_without_gpus_gets_no_marker():
    """`test_ones[device0]` is gpu on a GPU machine and a CPU test where no GPU is seen: `@pytest.mark.gpu`
    would pin the CPU case to GPU runners, so the function is left for a person, as parametrizations that differ."""
    entry = file_entry({"test_ones[device0]": test_entry("gpu", gpu_count=1, without_gpus="cpu"),
                        "test_ones[device1]": test_entry("gpu", gpu_count=1)})
    specs, problems = plan(entry)
    assert specs == {} and problems == ["test_ones: parametrizations differ (cpu and gpu); mark the pytest.param()s"]
