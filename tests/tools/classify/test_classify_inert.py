"""The inert-body shortcut (tools/classify/inert.py): same results as interpreting every body, and it refuses
whatever it cannot prove."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tools.classify.analyzer import Analyzer
from tools.classify.inert import word_triggers
from tools.classify.modules import is_test_file, walk_python_files
from tools.classify.values import FuncV

CORPUS = Path(__file__).resolve().parent / "fixtures" / "repo"


def _results(root: Path, prove_inert: bool) -> dict[str, object]:
    files = walk_python_files(root, [])
    an = Analyzer(root, files, prove_inert=prove_inert)
    out = {}
    for rel in files:
        if is_test_file(rel.rsplit("/", 1)[-1]):
            r = an.classify_file(rel)
            out[rel] = (r.torch, r.error, r.tests)
    return out


def test_corpus_results_are_identical_with_and_without_the_shortcut() -> None:
    assert _results(CORPUS, True) == _results(CORPUS, False)


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(text))


HELPERS = """
import torch

def close(a, b):
    return torch.allclose(a, b)

def to_gpu(x):
    return x.cuda()

def indirect(x):
    return to_gpu(x)

class Plain:
    def run(self, x):
        return x + 1

class Mover:
    def run(self, x):
        return x + 1

    def other(self, x):
        return x.cuda()
"""


def _inert(tmp_path: Path, body: str, extra_imports: str = "") -> bool:
    """Whether test_x (defined after the imports) is proven inert in world 0."""
    extra_imports = "from unittest import mock\nTARGET = 'torch.cuda.is_available'\n" + extra_imports
    _write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/helpers.py": HELPERS,
        "tests/test_m.py": "import torch\nimport json\nfrom pkg.helpers import close, to_gpu, indirect, Plain, Mover\n"
                           + extra_imports + "\n\ndef test_x(a=1):\n" + textwrap.indent(textwrap.dedent(body), "    "),
    })
    files = walk_python_files(tmp_path, [])
    an = Analyzer(tmp_path, files)
    pm = an.source.module("tests/test_m.py")
    pos = next(p for p, n in pm.defs.items() if getattr(n, "name", "") == "test_x")
    return an.inert.callable_inert(FuncV("tests/test_m.py", pos, "test_x"), 0)


@pytest.mark.parametrize(("body", "inert"), [
    ("x = torch.ones(3)\nassert close(x.sum(), torch.tensor(3.0))\n", True),
    ("assert json.dumps({'output': a}) == '{\"output\": 1}'\n", True),  # `dumps`/`output` hold no trigger word
    ("Plain().run(torch.ones(1))\n", True),
    ("torch.ones(3).cuda()\n", False),
    ("torch.ones(3).to(d)\n", False),  # `.to(` of anything
    ("torch.zeros(3, device=a)\n", False),
    ("s = 'cuda'\n", False),  # a trigger word in a string counts
    ("to_gpu(torch.ones(1))\n", False),  # an in-repo function that needs a GPU
    ("indirect(torch.ones(1))\n", False),  # ... two calls away
    ("Mover().run(torch.ones(1))\n", False),  # any method of the class may run
    ("pytest.skip('later')\n", False),
    ("f = getattr(torch, name)\n", False),
    ("import os\n", False),
    ("assert is_tpu_available()\n", False),
    ("x = 'caf\u00e9'\n", False),  # non-ASCII: not proven
    ("m = torch.nn.Linear(2, 2)\nm.eval()\n", True),  # a method named eval is harmless
    ("eval('1')\n", False),  # the builtin is not
    ("with mock.patch('torch.cuda.is_available', return_value=True):\n    pass\n", False),
    ("with mock.patch(TARGET):\n    pass\n", False),  # a constant naming torch.cuda is not plain
    ("x.record_stream(s)\n", False),
    ("pytest.fail('no')\n", False),
])
def test_what_is_proven_inert(tmp_path: Path, body: str, inert: bool) -> None:
    assert _inert(tmp_path, body) is inert


def test_a_star_import_defeats_the_proof(tmp_path: Path) -> None:
    assert _inert(tmp_path, "x = torch.ones(3)\n") is True
    assert _inert(tmp_path, "x = torch.ones(3)\n", "from pkg.helpers import *\n") is False


def test_module_constants_only_count_when_plain(tmp_path: Path) -> None:
    assert _inert(tmp_path, "x = torch.ones(N)\n", "N = 3\n") is True
    assert _inert(tmp_path, "x = torch.ones(1) + K\n", "K = torch.ones(1)\n") is True  # a CPU tensor
    assert _inert(tmp_path, "x = torch.ones(1) + K\n", "K = to_gpu(torch.ones(1))\n") is False  # a CUDA tensor
    assert _inert(tmp_path, "f = H\nf(torch.ones(1))\n", "H = to_gpu\n") is False  # a name for a GPU function


def test_short_accelerator_names_are_words_of_their_own() -> None:
    assert word_triggers("is_tpu_available") and word_triggers("MPS") and word_triggers("xla")
    assert not word_triggers("output") and not word_triggers("dumps") and not word_triggers("parameters")


def test_a_shortcut_case_keeps_its_label_and_reason(tmp_path: Path) -> None:
    _write(tmp_path, {"tests/test_a.py": """
        import pytest
        import torch

        @pytest.fixture
        def dev():
            return "cuda"

        def test_plain():
            assert torch.ones(2).sum() == 2

        def test_fixture_gpu(dev):
            assert torch.ones(2, device=dev).sum() == 2

        @pytest.mark.skipif(not torch.cuda.is_available(), reason="cuda")
        def test_skipped():
            assert torch.ones(2).sum() == 2
        """})
    for prove in (True, False):
        tests = _results(tmp_path, prove)["tests/test_a.py"][2]  # type: ignore[index]
        assert tests["test_plain"].label == "cpu"  # type: ignore[index]
        assert tests["test_fixture_gpu"].label == "gpu"  # type: ignore[index]
        assert tests["test_skipped"].label == "gpu"  # type: ignore[index]


def test_a_method_that_never_uses_self_needs_only_its_own_text(tmp_path: Path) -> None:
    _write(tmp_path, {"tests/test_c.py": """
        import torch

        class TestThings:
            def helper(self):
                return torch.ones(1).cuda()

            def test_free(self):
                assert torch.ones(2).sum() == 2

            def test_uses_helper(self):
                assert self.helper().sum() == 1
        """})
    for prove in (True, False):
        tests = _results(tmp_path, prove)["tests/test_c.py"][2]  # type: ignore[index]
        assert tests["TestThings::test_free"].label == "cpu"  # type: ignore[index]
        assert tests["TestThings::test_uses_helper"].label == "gpu"  # type: ignore[index]
    an = Analyzer(tmp_path, walk_python_files(tmp_path, []))
    pm = an.source.module("tests/test_c.py")
    cls = next(n for n in pm.defs.values() if getattr(n, "name", "") == "TestThings")
    methods = {n.name: FuncV("tests/test_c.py", (n.lineno, n.col_offset), n.name, cls=None)
               for n in cls.body}  # type: ignore[attr-defined]
    assert an.inert.method_inert(methods["test_free"], 0)
    assert not an.inert.method_inert(methods["test_uses_helper"], 0)
