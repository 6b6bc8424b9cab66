"""Version checks (tools/classify/versions.py): compared as Python compares them, on the installed torch; what
raises at run time or cannot be read stays unknown; another torch is another cache key."""

from __future__ import annotations

import ast
import importlib.metadata

import pytest

from tools.classify import cache, versions
from tools.classify.values import UNRESOLVED, Const, Seq


def _cmp(op: ast.cmpop, a, b):
    return versions.compare(op, a, b)


def test_torch_version_compares_with_texts_tuples_and_versions() -> None:
    torch_v = versions.made("2.13.0+cpu", torch_str=True)
    assert _cmp(ast.Lt(), torch_v, Const("2.4")) == Const(False)  # as a version, not as text ("2.13" < "2.4")
    assert _cmp(ast.GtE(), torch_v, Seq((Const(2), Const(4)), "tuple")) == Const(True)
    assert _cmp(ast.Gt(), torch_v, versions.made("2.13.0")) == Const(True)  # the local label sorts after
    assert _cmp(ast.Eq(), torch_v, Const("2.13.0+cpu")) == Const(True)


def test_packaging_version_against_text_or_nonsense_is_unknown() -> None:
    v = versions.construct("packaging.version.parse", [Const("2.1")])
    assert v == versions.made("2.1")
    assert _cmp(ast.Lt(), v, Const("2.4")) == UNRESOLVED  # TypeError at run time
    assert versions.construct("packaging.version.Version", [Const("not a version")]) == UNRESOLVED
    assert versions.construct("packaging.version.parse", [UNRESOLVED]) == UNRESOLVED
    assert _cmp(ast.Lt(), Const("a"), Const("b")) is None  # not a version check: the caller decides


def test_version_attributes() -> None:
    v = versions.made("2.13.0+cpu")
    assert versions.attribute(v, "release") == Seq((Const(2), Const(13), Const(0)), "tuple")
    assert versions.attribute(v, "local") == Const("cpu")
    assert versions.attribute(v, "split") is None
    assert versions.as_text(versions.made("2.13.0", torch_str=True)) == Const("2.13.0")


def test_without_torch_installed_the_version_is_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(name: str) -> str:
        raise importlib.metadata.PackageNotFoundError(name)

    versions.installed.cache_clear()
    monkeypatch.setattr(importlib.metadata, "version", missing)
    try:
        assert versions.torch_version() == UNRESOLVED
    finally:
        versions.installed.cache_clear()


def test_another_torch_is_another_cache_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache, "installed", lambda name: "2.13.0+cpu")
    first = cache.tool_version()
    monkeypatch.setattr(cache, "installed", lambda name: "2.14.0+cpu")
    assert cache.tool_version() != first


def test_version_is_decided_on_the_cpu_machine_only(tmp_path) -> None:
    """The GPU runners may run another lock's torch (this repository's cu124 lock pins an older one): a skip that
    the CPU lock's version turns on is not taken as a skip on a GPU machine, so the CUDA body keeps the test gpu;
    a skip that only the CPU machine could take on an old torch does not fire here."""
    from tools.classify.runner import run

    assert versions.torch_version_in("torch.__version__", 1) == UNRESOLVED
    (tmp_path / "test_x.py").write_text('''import pytest
import torch
from packaging import version


@pytest.mark.skipif(version.parse(torch.__version__) > version.parse("2.10"), reason="old torch only")
def test_old_torch_on_gpu():
    torch.ones(1).cuda()


def test_cpu_skip_on_old_torch():
    if not torch.cuda.is_available() and version.parse(torch.__version__) <= version.parse("2.1"):
        pytest.skip("old torch on the CPU")
''')
    tests = run(tmp_path, paths=["test_x.py"], cache_dir=None).files["test_x.py"].tests
    assert {k: v.label for k, v in tests.items()} == {"test_old_torch_on_gpu": "gpu",
                                                      "test_cpu_skip_on_old_torch": "cpu"}
