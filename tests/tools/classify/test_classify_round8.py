"""Routing rules of the eighth round (issue 12): "this existing device is not the CPU" guards, dict keys that
are devices of existing tensors, and branches for objects only a quantization package makes. The corpus files
under tests/tools/classify/fixtures/repo/tests/round8_routing carry the same idioms with expected labels."""

from __future__ import annotations

import ast
import textwrap

import pytest

from tools.classify.evidence import GPU, IF_IMPORTED, IMPORTS, Finding, decide
from tools.classify.guards import cuda_guard, foreign_class_test
from tools.classify.provenance import keys_are_existing_devices, local_dict_of_existing_devices


def _test(src: str) -> ast.expr:
    return ast.parse(src, mode="eval").body


def _existing(e: ast.expr) -> bool:
    return ast.unparse(e) in ("d", "t.device")  # what the interpreter would answer


@pytest.mark.parametrize(("src", "want"), [
    ("d != torch.device('cpu')", True),
    ("torch.device('cpu') != t.device", True),
    ("t.device.type != 'cpu'", True),
    ("str(d) != 'cpu'", True),
    ("not d == torch.device('cpu')", True),
    ("d.type == 'cpu'", False),
    ("d != torch.device('cpu') and n > 1", True),
    # a torch.device never equals a string: `d != "cpu"` is always true and guards nothing
    ("d != 'cpu'", None),
    # `cpu:0` is not how a CPU tensor's device is spelled
    ("d != torch.device('cpu:0')", None),
    # not an existing value's device
    ("other != torch.device('cpu')", None),
    ("d != torch.device('cpu') or n > 1", None),
])
def test_not_cpu_guard_forms(src: str, want: bool | None) -> None:
    assert cuda_guard(_test(src), _existing) is want


def test_not_cpu_guard_needs_the_interpreter() -> None:
    assert cuda_guard(_test("d != torch.device('cpu')")) is None


@pytest.mark.parametrize(("src", "want"), [
    ("type(p).__name__ == 'Int8Params'", True),
    ("cls.__name__ in ['Int8Params', 'Params4bit']", True),
    ("m.__class__.__name__ != 'Linear8bitLt'", False),
    ("device == 'cpu' and cls.__name__ == 'Int8Params'", True),
    ("cls.__name__ == 'Parameter'", None),  # a class anyone makes
    ("cls.__name__ in ['Int8Params', 'MyParams']", None),  # one name outside the table
    ("device == 'cpu' or cls.__name__ == 'Int8Params'", None),
])
def test_foreign_class_test_forms(src: str, want: bool | None) -> None:
    got = foreign_class_test(_test(src))
    assert (got[0] if got else None) is want
    if got:
        assert "bitsandbytes" in got[1] and "transformers" in got[1]


def _classes(src: str) -> list[ast.ClassDef]:
    return [n for n in ast.parse(textwrap.dedent(src)).body if isinstance(n, ast.ClassDef)]


REPORTER = """
class R:
    def __init__(self):
        self.by_device = defaultdict(list)
        self.stats = {}

    def collect(self, tensors):
        for t in tensors:
            self.by_device[t.device].append(t)

    def summarise(self):
        self.stats.clear()
        for device, ts in self.by_device.items():
            self.stats[device] = len(ts)
"""


def test_dict_keys_from_existing_devices() -> None:
    assert keys_are_existing_devices(_classes(REPORTER), "stats")
    assert keys_are_existing_devices(_classes(REPORTER), "by_device")


@pytest.mark.parametrize("extra", [
    "    def pin(self):\n        self.stats[torch.device('cuda')] = 0\n",
    "    def merge(self, other):\n        self.stats.update(other)\n",
    "    def share(self):\n        fill(self.stats)\n",
    "    def reset(self, seed):\n        self.stats = dict(seed)\n",
    "    def pick(self, device):\n        self.stats[device] = 0\n",
])
def test_dict_keys_refused_when_other_keys_can_enter(extra: str) -> None:
    assert not keys_are_existing_devices(_classes(REPORTER + extra), "stats")


def _func(src: str) -> ast.FunctionDef:
    node = ast.parse(textwrap.dedent(src)).body[0]
    assert isinstance(node, ast.FunctionDef)
    return node


def test_local_dict_comprehension_of_devices() -> None:
    f = _func("""
        def f(module):
            devices = {n: p.device for n, p in module.named_parameters()}
            for n, d in devices.items():
                pass
        """)
    assert local_dict_of_existing_devices(f, "devices") == (False, True)
    written = _func("""
        def f(module):
            devices = {n: p.device for n, p in module.named_parameters()}
            devices["w"] = torch.device("cuda")
        """)
    assert local_dict_of_existing_devices(written, "devices") == (False, False)
    handed = _func("""
        def f(module):
            devices = {n: p.device for n, p in module.named_parameters()}
            change(devices)
        """)
    assert local_dict_of_existing_devices(handed, "devices") == (False, False)


def test_conditional_need_counts_only_where_the_package_is_reached() -> None:
    need = Finding(IF_IMPORTED, ("m.py:3: runs only for ...", "m.py:4: .to('cuda:0') needs a CUDA device"),
                   key=f"{GPU}|bitsandbytes,transformers")
    alone = decide([need], {}, "t.py:1: no GPU use found")
    assert alone.label == "cpu" and "needs a CUDA device" in alone.reasons[0]
    reached = decide([need, Finding(IMPORTS, ("t.py:2: reaches transformers",), key="transformers")], {},
                     "t.py:1: no GPU use found")
    assert reached.label == "gpu" and reached.gpu_count == 1
    other = decide([need, Finding(IMPORTS, ("t.py:2: reaches torchao",), key="torchao")], {}, "t.py:1")
    assert other.label == "cpu"
