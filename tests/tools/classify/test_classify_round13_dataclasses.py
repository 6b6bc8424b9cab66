"""Dataclass constructors (tools/classify/dataclass_fields.py) and `TYPE_CHECKING`: the edges the corpus file
tests/round13_dataclasses does not show. A `gpu` test here fails on a CPU-only machine for want of CUDA, a `cpu`
one passes there; `unknown` is where the arguments the analysis cannot see may set any field."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tools.classify.dataclass_fields import dataclass_init, declared_fields
from tools.classify.runner import run

HEADER = '''from dataclasses import KW_ONLY, dataclass, field
from typing import ClassVar

import torch
'''


def _labels(root: Path, body: str) -> dict[str, str]:
    (root / "test_x.py").write_text(HEADER + body)
    result = run(root, paths=["test_x.py"], cache_dir=None)
    return {k: v.label for k, v in result.files["test_x.py"].tests.items()}


def _classes(src: str) -> list[ast.ClassDef]:
    return [n for n in ast.parse(src).body if isinstance(n, ast.ClassDef)]


def test_fields_in_declaration_order_with_a_redeclared_default() -> None:
    base, sub = _classes('''
@dataclass
class Base:
    device: str = "cpu"
    size: int
    LIMIT: ClassVar[int] = 3
    note: "ClassVar[str]" = "x"

@dataclass
class Sub(Base):
    extra: int = 1
    device: str = "cuda"
''')
    fields = declared_fields([base, sub])
    assert fields is not None
    assert [(f.name, f.has_default, f.owner) for f in fields] == [("device", True, 1), ("size", False, 0),
                                                                 ("extra", True, 1)]


@pytest.mark.parametrize(("decorator", "expected"), [
    ("@dataclass", True), ("@dataclasses.dataclass(frozen=True)", True), ("@dataclass(init=False)", False),
    ("@total_ordering", None)])
def test_which_decorators_write_an_init(decorator: str, expected: bool | None) -> None:
    (node,) = _classes(f"{decorator}\nclass C:\n    x: int = 1\n")
    assert dataclass_init(node) is expected


@pytest.mark.parametrize("src", ["@dataclass\nclass C:\n    a: int = 1\n    _: KW_ONLY\n    b: int = 2\n",
                                 "@dataclass(kw_only=True)\nclass C:\n    a: int = 1\n"])
def test_keyword_only_fields_are_not_followed(src: str) -> None:
    (node,) = _classes(src)
    assert declared_fields([node]) is None


def test_default_device_of_a_dataclass_field(tmp_path: Path) -> None:
    assert _labels(tmp_path, '''
@dataclass
class Options:
    device: str = "cuda"
    LIMIT: ClassVar[str] = "cpu"


def test_default():
    torch.ones(1, device=Options().device)


def test_overridden():
    torch.ones(1, device=Options(device="cpu").device)


def test_class_variable_is_not_a_parameter():
    torch.ones(1, device=Options.LIMIT)
''') == {"test_default": "gpu", "test_overridden": "cpu", "test_class_variable_is_not_a_parameter": "cpu"}


def test_an_own_init_wins_over_the_generated_one(tmp_path: Path) -> None:
    """`@dataclass(init=False)` keeps the class's `__init__`; a plain subclass's `__init__` runs instead of its
    dataclass base's."""
    assert _labels(tmp_path, '''
@dataclass(init=False)
class Manual:
    device: str = "cpu"

    def __init__(self):
        self.device = "cuda"


@dataclass
class Generated:
    device: str = "cpu"


class Custom(Generated):
    def __init__(self):
        self.device = "cuda"


def test_init_false():
    torch.ones(1, device=Manual().device)


def test_subclass_init():
    torch.ones(1, device=Custom().device)
''') == {"test_init_false": "gpu", "test_subclass_init": "gpu"}


HAND_WRITTEN = '''
class Options:
    def __init__(self, device="cpu", size=1):
        self.device = device
        self.size = size
'''
GENERATED = '''
@dataclass
class Options:
    device: str = "cpu"
    size: int = 1
'''
CALLS = '''
import json
import os


def test_unknown_positional():
    torch.ones(1, device=Options(*json.loads(os.environ.get("OPTIONS", "[]"))).device)


def test_unknown_keywords():
    torch.ones(1, device=Options(size=2, **json.loads(os.environ.get("OPTIONS", "{}"))).device)


def test_keyword():
    torch.ones(1, device=Options(size=2, device="cuda").device)


def test_positional():
    torch.ones(1, device=Options("cuda").device)
'''


def test_generated_init_reads_like_the_hand_written_one(tmp_path: Path) -> None:
    """Arguments bind to fields as they bind to an `__init__` with the same parameters, including a `*args` or
    `**kwargs` the analysis cannot see (a field it may set is as unknown as such a parameter)."""
    hand = _labels(tmp_path, HAND_WRITTEN + CALLS)
    assert hand == _labels(tmp_path, GENERATED + CALLS)
    assert hand["test_keyword"] == hand["test_positional"] == "gpu"


def test_a_call_the_generated_init_rejects(tmp_path: Path) -> None:
    """Too many arguments: TypeError on every machine. The instance then has no fields, as before dataclasses
    were modelled, and the class attribute is what the analysis reads."""
    assert _labels(tmp_path, GENERATED + '''

def test_too_many():
    torch.ones(1, device=Options("cuda", 1, "extra").device)
''') == {"test_too_many": "cpu"}


def test_type_checking_block_is_not_run(tmp_path: Path) -> None:
    (tmp_path / "gpu_module.py").write_text('import torch\n\nBUFFER = torch.empty(1, device="cuda")\n')
    assert _labels(tmp_path, '''
from typing import TYPE_CHECKING

import typing_extensions

if TYPE_CHECKING:
    import gpu_module  # noqa: F401

if typing_extensions.TYPE_CHECKING:
    from gpu_module import BUFFER  # noqa: F401


def test_cpu():
    torch.ones(1)
''') == {"test_cpu": "cpu"}
