"""Tests of the two committed lock files and of tools/locks (compare.py, regenerate.py's rendering).

Why: a lock without hashes, a `.in` requirement missing from its lock, or a test tool that differs
between the CPU and GPU locks would each make CPU and GPU runners test different things; these tests
run offline and catch all three before Bazel ever fetches a wheel.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tools.locks import compare, regenerate

ROOT = Path(__file__).resolve().parents[3]
LOCKS = {spec.lockfile: spec.infile for spec in regenerate.LOCKS.values()}
HASH_A = "a" * 64
HASH_B = "b" * 64


def _lock(*pins: str) -> str:
    """A small synthetic lock in pip-compile layout, one hash per pin."""
    lines = ["# synthetic", ""]
    for pin in pins:
        lines += [f"{pin} \\", f"    --hash=sha256:{HASH_A}", "    # via -r x.in"]
    return "\n".join(lines) + "\n"


def test_committed_locks_compare_ok_and_report_torch(capsys: pytest.CaptureFixture[str]) -> None:
    assert compare.main([]) == 0
    out = capsys.readouterr().out
    assert "torch: 2.13.0+cpu (cpu) != 2.6.0 (cu124)  [expected]" in out
    assert out.rstrip().endswith("OK")


def test_committed_locks_agree_on_guarded_tools() -> None:
    cpu = compare.load_lock(ROOT / compare.CPU_LOCK)
    gpu = compare.load_lock(ROOT / compare.GPU_LOCK)
    result = compare.compare(cpu, gpu)
    assert result.ok, compare.format_report(result)
    assert "torch" in {d.name for d in result.differences}
    for name in compare.GUARDED:
        assert cpu[name].version == gpu[name].version


@pytest.mark.parametrize("lockfile", sorted(LOCKS))
def test_every_requirement_has_sha256_hash(lockfile: str) -> None:
    pins = compare.load_lock(ROOT / lockfile)  # raises, naming file:line, on a line without hash
    assert pins
    for pin in pins.values():
        assert pin.hashes, pin.location
        assert all(len(h) == 64 for h in pin.hashes), pin.location


@pytest.mark.parametrize("lockfile", sorted(LOCKS))
def test_every_in_requirement_is_pinned_in_its_lock(lockfile: str) -> None:
    infile = LOCKS[lockfile]
    parsed = regenerate.parse_in((ROOT / infile).read_text(encoding="utf-8"), infile)
    pins = compare.load_lock(ROOT / lockfile)
    assert parsed.requirements
    for req in parsed.requirements:
        name = canonicalize_name(req.name)
        assert name in pins, f"{infile}: {req} is missing from {lockfile}"
        assert req.specifier.contains(pins[name].version, prereleases=True), (
            f"{lockfile} pins {name}=={pins[name].version}, outside {infile}'s {req}"
        )


def test_index_options_of_each_lock() -> None:
    cpu = (ROOT / compare.CPU_LOCK).read_text(encoding="utf-8")
    gpu = (ROOT / compare.GPU_LOCK).read_text(encoding="utf-8")
    assert "--extra-index-url https://download.pytorch.org/whl/cpu\n" in cpu
    assert "--index-url" not in cpu
    assert "--index-url" not in gpu
    assert "--extra-index-url" not in gpu
    assert "--find-links" not in cpu + gpu


def test_differing_pytest_fails_naming_pytest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    common = ("pytest-xdist==3.8.0", "pytest-torch==1.1.1", "PyYAML==6.0.4", "coverage==7.17.5")
    (tmp_path / "cpu.txt").write_text(_lock("torch==2.13.0+cpu", "pytest==9.2.0", *common))
    (tmp_path / "gpu.txt").write_text(_lock("torch==2.6.0", "pytest==8.3.0", *common))
    rc = compare.main(["--cpu", str(tmp_path / "cpu.txt"), "--gpu", str(tmp_path / "gpu.txt")])
    out = capsys.readouterr().out
    assert rc == 1
    assert "pytest: 9.2.0 (cpu) != 8.3.0 (cu124)  [FAIL" in out
    assert "FAILED: pytest" in out
    assert "torch: 2.13.0+cpu (cpu) != 2.6.0 (cu124)  [expected]" in out


def test_only_torch_differing_passes() -> None:
    common = ("pytest==9.2.0", "pytest-xdist==3.8.0", "pytest-torch==1.1.1", "pyyaml==6.0.4", "coverage==7.17.5")
    cpu = compare.parse_lock(_lock("torch==2.13.0+cpu", "sympy==1.14.0", *common), "cpu.txt")
    gpu = compare.parse_lock(_lock("torch==2.6.0", "sympy==1.13.1", "triton==3.2.0", *common), "gpu.txt")
    result = compare.compare(cpu, gpu)
    assert result.ok
    assert [d.name for d in result.differences] == ["sympy", "torch", "triton"]


def test_guarded_package_missing_from_one_lock_fails() -> None:
    common = ("pytest==9.2.0", "pytest-torch==1.1.1", "pyyaml==6.0.4", "coverage==7.17.5")
    cpu = compare.parse_lock(_lock("pytest-xdist==3.8.0", *common), "cpu.txt")
    gpu = compare.parse_lock(_lock(*common), "gpu.txt")
    result = compare.compare(cpu, gpu)
    assert [d.describe() for d in result.failures] == ["pytest-xdist: 3.8.0 (cpu) != absent (cu124)"]


def test_names_are_pep503_normalised() -> None:
    pins = compare.parse_lock(_lock("PyYAML==6.0.4", "typing_extensions==4.16.0", "Foo.Bar==1"), "x")
    assert sorted(pins) == ["foo-bar", "pyyaml", "typing-extensions"]


def test_requirement_without_hash_names_file_and_line(tmp_path: Path) -> None:
    text = _lock("pytest==9.2.0") + "pyyaml==6.0.4\n    # via -r x.in\n"
    with pytest.raises(compare.LockParseError, match=r"^cpu\.txt:6: pyyaml==6\.0\.4 has no --hash"):
        compare.parse_lock(text, "cpu.txt")
    path = tmp_path / "bad.txt"
    path.write_text(text)
    assert compare.main(["--cpu", str(path), "--gpu", str(path)]) == 2


def test_unpinned_requirement_is_an_error() -> None:
    with pytest.raises(compare.LockParseError, match=r"^a\.txt:3: not a pinned requirement"):
        compare.parse_lock(f"# x\n\npytest>=9 \\\n    --hash=sha256:{HASH_A}\n", "a.txt")


def test_duplicate_pin_is_an_error() -> None:
    with pytest.raises(compare.LockParseError, match=r"pyyaml is pinned twice"):
        compare.parse_lock(_lock("PyYAML==6.0.4", "pyyaml==6.0.4"), "a.txt")


def test_regenerate_renders_pip_compile_layout_deterministically() -> None:
    report = {
        "environment": {"python_version": "3.11", "sys_platform": "linux"},
        "install": [
            {
                "metadata": {
                    "name": "pytest-xdist",
                    "version": "3.8.0",
                    "requires_dist": ["execnet>=2.1", "pytest>=7", "psutil; extra == 'psutil'"],
                },
                "download_info": {"url": "u", "archive_info": {"hashes": {"sha256": HASH_B}}},
            },
            {
                "metadata": {"name": "Pytest", "version": "9.2.0", "requires_dist": []},
                "download_info": {"url": "u", "archive_info": {"hash": f"sha256={HASH_A}"}},
            },
            {
                "metadata": {"name": "execnet", "version": "2.1.2"},
                "download_info": {"url": "u", "archive_info": {"hashes": {"sha256": HASH_A}}},
            },
        ],
    }
    spec = regenerate.LockSpec("demo", "demo.in", "demo.txt")
    infile = regenerate.parse_in(
        "--extra-index-url https://download.pytorch.org/whl/cpu\npytest\npytest-xdist\n", "demo.in"
    )
    entries = regenerate.locked_from_report(report, infile, "demo.in")
    entries["execnet"].hashes.add(HASH_B)
    text = regenerate.render(spec, infile, entries)
    body = text.split("--extra-index-url https://download.pytorch.org/whl/cpu\n\n", 1)[1]
    assert body == (
        f"execnet==2.1.2 \\\n    --hash=sha256:{HASH_A} \\\n    --hash=sha256:{HASH_B}\n"
        "    # via pytest-xdist\n"
        f"pytest==9.2.0 \\\n    --hash=sha256:{HASH_A}\n"
        "    # via\n    #   -r demo.in\n    #   pytest-xdist\n"
        f"pytest-xdist==3.8.0 \\\n    --hash=sha256:{HASH_B}\n"
        "    # via -r demo.in\n"
    )
    assert compare.parse_lock(text, "demo.txt")["pytest"].hashes == {HASH_A}
    again = regenerate.locked_from_report(report, infile, "demo.in")
    again["execnet"].hashes.add(HASH_B)
    assert regenerate.render(spec, infile, again) == text  # no timestamps or set-order leaks


def test_regenerate_pip_command_and_env_ignore_local_configuration(tmp_path: Path) -> None:
    cmd = regenerate.pip_command(tmp_path / "r.in", tmp_path / "r.json", tmp_path / "t", [])
    assert cmd[cmd.index("--python-version") + 1] == "3.11"
    platforms = [cmd[i + 1] for i, arg in enumerate(cmd) if arg == "--platform"]
    assert platforms[0] == "manylinux_2_28_x86_64"
    assert "manylinux2014_x86_64" in platforms
    assert "--dry-run" in cmd
    assert "--find-links" not in cmd
    env = regenerate.pip_env({"PIP_CONSTRAINT": "c.txt", "PIP_FIND_LINKS": "/w", "PIP_CERT": "ca", "HOME": "/h"})
    assert env["PIP_CONFIG_FILE"] == os.devnull
    assert "PIP_CONSTRAINT" not in env
    assert "PIP_FIND_LINKS" not in env
    assert env["PIP_CERT"] == "ca"
    assert env["HOME"] == "/h"


def test_write_atomically_replaces_whole_file(tmp_path: Path) -> None:
    path = tmp_path / "lock.txt"
    path.write_text("old\n")
    regenerate.write_atomically(path, "new\n")
    assert path.read_text() == "new\n"
    assert [p.name for p in tmp_path.iterdir()] == ["lock.txt"]


def test_in_file_parsing_keeps_index_options_only() -> None:
    parsed = regenerate.parse_in(
        "# c\n--extra-index-url=https://download.pytorch.org/whl/cpu\n--find-links /w\ntorch==2.6.0  # why\n",
        "a.in",
    )
    assert parsed.options == ["--extra-index-url https://download.pytorch.org/whl/cpu"]
    assert [str(r) for r in parsed.requirements] == [str(Requirement("torch==2.6.0"))]
