"""Function summaries (tools/classify/summaries.py): one analysis per function and context, recursion
widened and cut, results independent of which test reaches a function first."""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from tools.classify import interp_calls
from tools.classify.receivers import ReceiverUses, receiver_uses
from tools.classify.runner import run
from tools.classify.summaries import widen
from tools.classify.values import UNRESOLVED, ClassV, Const, DeviceV, Inst, OneOf, Seq, TensorV

TreeWriter = Callable[[Path, dict[str, str]], Path]  # the write_tree fixture (conftest.py)


def _count_analyses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The name of each function analysed from now on (a summary computed, not reused), in order."""
    analysed: list[str] = []
    original = interp_calls.CallsMixin._run_function

    def counting(self, fv, *args, **kwargs):  # type: ignore[no-untyped-def]
        analysed.append(fv.name)
        return original(self, fv, *args, **kwargs)

    monkeypatch.setattr(interp_calls.CallsMixin, "_run_function", counting)
    return analysed


def test_widen_forgets_numbers_and_keeps_device_facts() -> None:
    cls = ClassV("m.py", (1, 0), "Node")
    node = Inst(cls, (("depth", Const(3)), ("device", DeviceV("cuda")), ("name", Const("left")),
                      ("shape", Seq((Const(2), Const(3)), "tuple")), ("t", TensorV("cpu"))))
    wide = widen(node)
    assert isinstance(wide, Inst)
    attrs = dict(wide.attrs)
    assert attrs["depth"] == UNRESOLVED
    assert attrs["shape"] == Seq((UNRESOLVED, UNRESOLVED), "tuple")
    assert attrs["device"] == DeviceV("cuda")
    assert attrs["name"] == Const("left")
    assert attrs["t"] == TensorV("cpu")
    assert widen(Const(True)) == Const(True)  # a flag decides a branch, not a depth
    assert widen(OneOf(frozenset({Const(1), Const(2)}))) == UNRESOLVED


MUTUAL = {
    "pkg/__init__.py": "",
    "pkg/walk.py": """
        import torch


        def down(n, x, device):
            if n > 0:
                return up(n - 1, x, device)
            return x


        def up(n, x, device):
            if n > 3:
                return x.to(device)
            return down(n + 2, x, device)
    """,
    "tests/test_x.py": """
        import torch

        from pkg.walk import down, up


        def test_down_first_cpu():
            down(5, torch.zeros(2), "cpu")


        def test_down_first_cuda():
            down(5, torch.zeros(2), "cuda")


        def test_up_first_cpu():
            up(1, torch.zeros(2), "cpu")


        def test_up_first_cuda():
            up(1, torch.zeros(2), "cuda")
    """,
}


def test_mutual_recursion_is_sound_and_independent_of_order(tmp_path: Path, write_tree: TreeWriter) -> None:
    root = write_tree(tmp_path, MUTUAL)
    whole = run(root, cache_dir=None, workers=1).files["tests/test_x.py"].tests
    assert {k: v.label for k, v in whole.items()} == {
        "test_down_first_cpu": "cpu", "test_down_first_cuda": "gpu",
        "test_up_first_cpu": "cpu", "test_up_first_cuda": "gpu"}
    # the same verdicts, reasons included, when the other entry point is analysed first
    reordered = write_tree(tmp_path / "b", {**MUTUAL, "tests/test_x.py": MUTUAL["tests/test_x.py"].replace(
        "test_down_first", "test_z_down_first")})
    other = run(reordered, cache_dir=None, workers=1).files["tests/test_x.py"].tests
    for k, v in whole.items():
        got = other[k.replace("test_down_first", "test_z_down_first")]
        assert (got.label, got.gpu_count) == (v.label, v.gpu_count)


def test_a_summary_is_computed_once_for_every_test_that_reaches_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, write_tree: TreeWriter) -> None:
    tests = "".join(f"\n\ndef test_{i}():\n    prepare(torch.zeros(2), 'cpu')\n" for i in range(40))
    root = write_tree(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/lib.py": """
            def prepare(x, device):
                return normalise(x.to(device))


            def normalise(x):
                return x / x.sum()
        """,
        "tests/test_x.py": "import torch\nfrom pkg.lib import prepare\n" + tests,
    })
    analysed = _count_analyses(monkeypatch)
    got = run(root, cache_dir=None, workers=1).files["tests/test_x.py"].tests
    assert {v.label for v in got.values()} == {"cpu"}
    assert analysed.count("prepare") == 1
    assert analysed.count("normalise") == 1


def test_a_summary_that_reads_no_world_is_shared_by_every_world(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, write_tree: TreeWriter) -> None:
    # a skip for lack of GPUs is analysed again in the worlds with GPUs (1, 2, 3, 4, 8): `prepare` reads
    # nothing a world decides and is analysed once; `pick` asks torch, so each world has its own summary,
    # and a module whose top level asks torch makes every summary that reads its globals a per-world one
    root = write_tree(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/lib.py": """
            import torch


            def prepare(x):
                return x * 2


            def pick():
                return torch.cuda.device_count()
        """,
        "pkg/flags.py": """
            import torch

            MANY = torch.cuda.device_count() >= 2


            def many():
                return MANY
        """,
        "tests/test_x.py": """
            import pytest
            import torch
            from pkg.flags import many
            from pkg.lib import pick, prepare


            def test_two_gpus():
                prepare(torch.zeros(2))
                if pick() < 2:
                    pytest.skip("needs 2 GPUs")


            def test_flag():
                prepare(torch.zeros(2))
                if not many():
                    pytest.skip("needs 2 GPUs")
        """,
    })
    analysed: list[tuple[str, int]] = []
    original = interp_calls.CallsMixin._run_function

    def counting(self, fv, node, args, kwargs, world, *rest):  # type: ignore[no-untyped-def]
        analysed.append((fv.name, world))
        return original(self, fv, node, args, kwargs, world, *rest)

    monkeypatch.setattr(interp_calls.CallsMixin, "_run_function", counting)
    got = run(root, cache_dir=None, workers=1).files["tests/test_x.py"].tests
    assert {k: (v.label, v.gpu_count) for k, v in got.items()} == {
        "test_two_gpus": ("gpu", 2), "test_flag": ("gpu", 2)}
    assert [w for name, w in analysed if name == "prepare"] == [0]
    assert [w for name, w in analysed if name == "pick"] == [0, 1, 2]
    assert [w for name, w in analysed if name == "many"] == [0, 1, 2]


def test_a_method_is_shared_by_receivers_that_differ_only_in_attributes_it_does_not_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, write_tree: TreeWriter) -> None:
    # each test builds its own engine (its own closure as `step`); `fire` reads `device` and `log` (a method):
    # analysed once per device, not once per engine. `remember` sets an attribute: shared too, and what it set
    # is set on each receiver it is reused for (`fire_last` then reads it)
    tests = "".join(f"""

def test_cpu_{i}():
    e = Engine(lambda x: x + {i}, "cpu")
    e.fire(torch.zeros(2))
    e.remember("cpu")
    e.fire_last(torch.zeros(2))
""" for i in range(6))
    root = write_tree(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/engine.py": """
            class Engine:
                def __init__(self, step, device):
                    self.step = step
                    self.device = device

                def log(self, x):
                    return x

                def fire(self, x):
                    return self.log(x.to(self.device))

                def remember(self, device):
                    self.last = device

                def fire_last(self, x):
                    return x.to(self.last)
        """,
        "tests/test_x.py": "import torch\nfrom pkg.engine import Engine\n" + tests + """

def test_gpu():
    e = Engine(lambda x: x, "cuda")
    e.fire(torch.zeros(2))


def test_gpu_last():
    e = Engine(lambda x: x - 1, "cpu")
    e.remember("cuda")
    e.fire_last(torch.zeros(2))
""",
    })
    analysed = _count_analyses(monkeypatch)
    got = run(root, cache_dir=None, workers=1).files["tests/test_x.py"].tests
    assert {k: v.label for k, v in got.items()} == {
        **{f"test_cpu_{i}": "cpu" for i in range(6)}, "test_gpu": "gpu", "test_gpu_last": "gpu"}
    assert analysed.count("fire") == 2  # cpu and cuda
    assert analysed.count("remember") == 2
    assert analysed.count("fire_last") == 2


def test_a_method_that_never_names_its_receiver_is_one_summary_for_every_test_class(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, write_tree: TreeWriter) -> None:
    # a test base's helper (linear_operator's `assertAllClose`) inherited by many test classes: analysed once per
    # argument values, not once per class; a helper that reads `self` stays per class
    classes = "".join(f"""

class TestOp{i}(Base):
    def test_close(self):
        self.assert_close(torch.zeros(2), torch.zeros(2))
        self.on_own_device(torch.zeros(2))
""" for i in range(4))
    root = write_tree(tmp_path, {
        "tests/base.py": """
            import unittest

            import torch


            class Base(unittest.TestCase):
                device = "cpu"

                def assert_close(self, a, b):
                    assert torch.allclose(a, b)

                def on_own_device(self, x):
                    return x.to(self.device)
        """,
        "tests/test_ops.py": "import torch\nfrom tests.base import Base\n" + classes + """

class TestOnGpu(Base):
    device = "cuda"

    def test_close(self):
        self.assert_close(torch.zeros(2), torch.zeros(2))
        self.on_own_device(torch.zeros(2))
""",
    })
    analysed = _count_analyses(monkeypatch)
    got = run(root, cache_dir=None, workers=1).files["tests/test_ops.py"].tests
    assert {k: v.label for k, v in got.items()} == {
        **{f"TestOp{i}::test_close": "cpu" for i in range(4)}, "TestOnGpu::test_close": "gpu"}
    assert analysed.count("assert_close") == 1
    assert analysed.count("on_own_device") == 5


def test_receiver_uses_are_attribute_reads_sets_and_calls_or_none() -> None:
    def uses(src: str) -> ReceiverUses | None:
        node = ast.parse(textwrap.dedent(src)).body[0]
        assert isinstance(node, ast.FunctionDef)
        return receiver_uses(node)

    assert uses("""
        def fire(self, e):
            self.last = e
            for h in self.handlers[e]:
                h(self.state)
            self.log(e)
            self.count += 1
    """) == ReceiverUses(("count", "handlers", "log", "state"), ("last",))
    assert uses("def f(self):\n    return [self.a for _ in self.b]\n") == ReceiverUses(("a", "b"), ())
    assert uses("def __init__(self, x):\n    super().__init__(x)\n    self.x = self.__class__.X\n") == \
        ReceiverUses(("__class__",), ("x",), ("__init__",))
    for escapes in (
        "def f(self):\n    helper(self)\n",  # passed on
        "def f(self):\n    return self\n",
        "def f(self):\n    s = super()\n    return s.f()\n",
        "def f(self):\n    return super(C, self).f()\n",
        "def f(self):\n    return lambda: super().f()\n",
        "def f(self):\n    return isinstance(self, int)\n",
        "def f(self):\n    return self.__dict__\n",
        "def f(self):\n    del self.a\n",
        "def f(self):\n    self = other\n",
        "def f(self):\n    return lambda: self.a\n",  # a closure holding the receiver
        "def f(self):\n    def g(self):\n        return self\n    return self.a\n",
        "def f():\n    pass\n",
    ):
        assert uses(escapes) is None, escapes


def test_explain_shows_the_chain_of_summaries(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                              write_tree: TreeWriter) -> None:
    from tools.classify.cli import main

    root = write_tree(tmp_path, MUTUAL)
    assert main(["--root", str(root), "--no-cache", "--explain", "tests/test_x.py::test_up_first_cuda"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "tests/test_x.py::test_up_first_cuda: gpu (gpu_count=1, vram_gb=0)"
    # the test calls up(); up's summary says it calls down(), whose summary (a recursive call: widened)
    # calls up() again, whose summary moves the tensor
    assert out[1:] == [
        "  1. tests/test_x.py:20: calls up()",
        "     -> summary of up(): pkg/walk.py:14: calls down()",
        "     -> summary of down(): pkg/walk.py:7: calls up() [recursive: widened context]",
        "     -> summary of up() [recursive: widened context]: pkg/walk.py:13: .to('cuda') needs a CUDA device",
    ]
