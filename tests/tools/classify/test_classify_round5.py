"""Idioms of the fifth accuracy round (issue 12), each on a minimal tree of its own; the corpus files under
tests/tools/classify/fixtures/repo/tests/round5 carry the same idioms with their expected labels."""

from __future__ import annotations

import ast
import shutil
import textwrap
from pathlib import Path

import pytest

from tools.classify.argparse_model import declared_options
from tools.classify.collect import UNKNOWN_ID, idval, parametrize_cases
from tools.classify.devices import TYPE_PREFIX, torch_constant_str
from tools.classify.guards import cuda_guard, off_cuda_branch, off_cuda_taken, raises_error
from tools.classify.interp_expressions import set_literal
from tools.classify.runner import run
from tools.classify.scope import bazel_test_srcs
from tools.classify.values import NOT_LITERAL, UNRESOLVED, Const, DictV, Ext, Seq, literal_of


def _labels(tmp_path: Path, files: dict[str, str]) -> dict[str, str]:
    """{test key: label} of tests/test_x.py in a tree made of `files` (path -> source)."""
    for rel, src in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(src))
    res = run(tmp_path, cache_dir=None, workers=1)
    return {k: v.label for k, v in res.files["tests/test_x.py"].tests.items()}


def test_main_block_does_not_run_under_pytest(tmp_path: Path) -> None:
    got = _labels(tmp_path, {"tests/test_x.py": """
        import torch

        def test_a():
            pass

        if __name__ == "__main__":
            torch.ones(1).cuda()
        """})
    assert got == {"test_a": "cpu"}


def test_module_name_is_not_main_inside_functions_either(tmp_path: Path) -> None:
    got = _labels(tmp_path, {"tests/test_x.py": """
        import torch

        def helper():
            if __name__ != "__main__":
                return torch.ones(1).cuda()

        def test_a():
            helper()
        """})
    assert got == {"test_a": "gpu"}


@pytest.mark.parametrize(("test", "want"), [
    ("a.is_cuda", True),
    ("not a.is_cuda", False),
    ("device.type == 'cuda'", True),
    ("x.device.type != 'cuda'", False),
    ("str(x.device) == 'cuda:0'", True),
    ("'cuda' == dev.type", True),
    ("a.is_cuda and n > 1", True),
    ("not a.is_cuda or n > 1", False),
    ("a.is_cuda or n > 1", None),
    ("device == 'cuda'", None),  # a plain string says nothing about an existing CUDA value
    ("torch.cuda.is_available()", None),
    ("x.device.type == 'cpu'", None),
])
def test_cuda_guards_are_read_from_the_condition(test: str, want: bool | None) -> None:
    assert cuda_guard(ast.parse(test, mode="eval").body) is want


def test_guard_covers_only_its_own_branch(tmp_path: Path) -> None:
    # the CUDA call after a guarded one is a first CUDA use
    got = _labels(tmp_path, {"tests/test_x.py": """
        import torch

        def test_guarded(t):
            if t.device.type == "cuda":
                torch.cuda.synchronize()

        def test_unguarded_after(t):
            y = t.cuda() if t.is_cuda else t
            torch.cuda.synchronize()
        """, "tests/conftest.py": """
        import pytest

        @pytest.fixture
        def t():
            return make_somehow()
        """})
    assert got == {"test_guarded": "cpu", "test_unguarded_after": "gpu"}


def test_mock_objects_and_patched_module_paths(tmp_path: Path) -> None:
    got = _labels(tmp_path, {"tests/test_x.py": """
        from unittest import mock

        import torch

        def test_mock_method(mocker):
            m = mocker.MagicMock()
            m.cuda().to("cuda:1")

        @mock.patch("pkg.sub.torch.cuda.synchronize")
        def test_patched_through_module(_sync):
            torch.cuda.synchronize()

        @mock.patch("pkg.torch_cuda_helpers.run")  # not torch.cuda: a module that merely has it in its name
        def test_not_torch_cuda(_run):
            torch.cuda.synchronize()
        """})
    assert got == {"test_mock_method": "cpu", "test_patched_through_module": "cpu", "test_not_torch_cuda": "gpu"}


@pytest.mark.parametrize(("test", "want"), [
    ("accelerator != 'cuda'", True),
    ("accelerator == 'cuda'", False),
    ("not x.is_cuda", True),
    ("not torch.cuda.is_available()", True),
    ("torch.cuda.is_available()", False),
    ("device in ('cpu', 'mps')", None),
    ("n > 1", None),
    ("d.type != 'cuda' or not torch.cuda.is_bf16_supported()", True),
    ("d.type == 'cuda' and n > 1", False),
    ("d.type == 'cuda' or n > 1", None),
    ("'cuda' not in str(d)", True),
    ("'cuda' in str(d)", False),
    ("not d.startswith('cuda')", True),
])
def test_off_cuda_branch_is_read_from_the_condition(test: str, want: bool | None) -> None:
    assert off_cuda_branch(ast.parse(test, mode="eval").body) is want


def test_off_cuda_branch_can_leave_availability_to_the_worlds() -> None:
    assert off_cuda_branch(ast.parse("not torch.cuda.is_available()", mode="eval").body, False) is None
    assert off_cuda_branch(ast.parse("not torch.cuda.is_available() or d != 'cuda'", mode="eval").body,
                           False) is True


@pytest.mark.parametrize(("test", "taken", "want"), [
    ("compiled and d.type != 'cuda'", True, True),  # true: every operand is, the device test among them
    ("compiled and d.type != 'cuda'", False, False),  # false: maybe only because `compiled` is
    ("d.type == 'cuda' or fast", False, True),
    ("not (compiled and d.type != 'cuda')", False, True),
    ("compiled and not torch.cuda.is_available()", True, False),
])
def test_off_cuda_taken_in_a_decided_world(test: str, taken: bool, want: bool) -> None:
    assert off_cuda_taken(ast.parse(test, mode="eval").body, taken, availability=False) is want


def test_skip_off_cuda_needs_a_gpu(tmp_path: Path) -> None:
    got = _labels(tmp_path, {"tests/conftest.py": """
        import pytest
        import torch

        def pytest_addoption(parser):
            parser.addoption("--device", default="cpu")

        @pytest.fixture
        def device(pytestconfig):
            return torch.device(pytestconfig.getoption("--device"))
        """, "tests/test_x.py": """
        import pytest
        import torch

        def test_type_off_cuda(device):
            if device.type != "cuda" or not torch.cuda.is_bf16_supported():
                pytest.skip("Requires CUDA with bfloat16")
            torch.ones(1, device=device)

        def test_skip_on_cuda(device):
            if device.type == "cuda":
                pytest.skip("CPU only")
            torch.ones(1, device=device)

        def test_branch_without_skip(device):
            if device.type != "cuda":
                x = 1
            torch.ones(1, device=device)
        """})
    assert got == {"test_type_off_cuda": "gpu", "test_skip_on_cuda": "cpu", "test_branch_without_skip": "cpu"}


def test_raise_off_cuda_needs_a_gpu_unless_expected(tmp_path: Path) -> None:
    got = _labels(tmp_path, {"tests/test_x.py": """
        import pytest

        def kernel(x):
            if not x.is_cuda:
                raise ValueError("kernel needs a CUDA tensor")
            return x

        def test_unknown_tensor(t):
            kernel(t)

        def test_expected(t):
            with pytest.raises(ValueError):
                kernel(t)
        """})
    assert got == {"test_unknown_tensor": "gpu", "test_expected": "cpu"}


def test_a_raised_skip_is_not_an_error() -> None:
    assert raises_error(ast.parse("raise unittest.SkipTest('no CUDA')").body) is None
    assert raises_error(ast.parse("x = 1\nraise RuntimeError('CUDA only')").body) is not None


def test_set_literals_drop_equal_constants() -> None:
    assert set_literal([Const(False), Const(False), Const(True)]) == Seq((Const(False), Const(True)), "set")
    assert set_literal([Const(1), Const(True)]) == Seq((Const(1),), "set")  # 1 == True: Python keeps the first


def test_ids_of_torch_constants_and_types() -> None:
    assert idval(Ext("torch.strided"), "layout", 1) == "layout1"  # no __name__: pytest uses argname+index
    assert idval(Ext("torch.channels_last"), "fmt", 0) == "fmt0"
    assert idval(Ext(TYPE_PREFIX + "builtins.NoneType"), "kind", 0) == "NoneType"
    assert torch_constant_str(Ext("torch.float")) == "torch.float32"  # str() spells the canonical name
    assert torch_constant_str(Ext("torch.sparse_coo")) == "torch.sparse_coo"


def test_an_ids_callable_that_cannot_be_evaluated_gives_no_guessed_id() -> None:
    assert idval(Const(1), "x", 0, lambda v: UNRESOLVED) is None
    assert idval(Const(1), "x", 0, lambda v: Const(None)) == "1"  # None from the callable: the default id
    # the case gets no id of its own (UNKNOWN_ID: the test's function-level key covers it)
    cases = parametrize_cases(Const("x"), Seq((Const(1),), "list"), None, lambda v: UNRESOLVED)
    assert cases is not None and [c.id for c in cases] == [UNKNOWN_ID]


def test_files_a_torch_py_test_names_are_classified_under_norecursedirs(tmp_path: Path) -> None:
    files = {
        "pkg/BUILD.bazel": """
            load("@rules_torch_test//rules:defs.bzl", tpt = "torch_py_test")

            tpt(name = "named", srcs = ["dist/test_named.py", "dist/check_gpu.py"])
            """,
        "pkg/dist/test_named.py": "import torch\n\ndef test_a():\n    torch.ones(1).cuda()\n",
        "pkg/dist/check_gpu.py": "def test_b():\n    pass\n",  # a helper module: torch_py_test runs test files only
        "pkg/dist/test_unnamed.py": "def test_c():\n    pass\n",  # under dist/, not named: pytest skips it
        "pkg/build/BUILD": "torch_py_test(name = 'x', srcs = ['test_other.py'])\n",  # its own package
        "pkg/build/test_other.py": "def test_d():\n    pass\n",
    }
    for rel, src in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(textwrap.dedent(src))
    res = run(tmp_path, cache_dir=None, workers=1)
    got = {rel: {k: v.label for k, v in r.tests.items()} for rel, r in res.files.items()}
    assert got == {"pkg/dist/test_named.py": {"test_a": "gpu"}, "pkg/build/test_other.py": {"test_d": "cpu"}}


def test_an_unparsable_build_file_is_reported(tmp_path: Path) -> None:
    (tmp_path / "dist").mkdir()
    (tmp_path / "dist" / "BUILD").write_text("torch_py_test(name = \n")
    (tmp_path / "dist" / "test_x.py").write_text("def test_a():\n    pass\n")
    assert bazel_test_srcs(tmp_path, ["dist/test_x.py"], problems := []) == frozenset()
    assert problems and problems[0].startswith("dist/BUILD: cannot read torch_py_test srcs")


def test_ids_functions_that_format_parameter_values(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text(textwrap.dedent("""
        import pytest
        from external_pkg import Ranger

        def ids(v):
            return "{} {}".format(v[0].__name__, v[1:])

        @pytest.mark.parametrize("cfg", [(Ranger, {"lr": 1e-3}, 200)], ids=ids)
        def test_a(cfg):
            pass
        """))
    res = run(tmp_path, cache_dir=None, workers=1)
    assert list(res.files["tests/test_x.py"].tests) == ["test_a[Ranger ({'lr': 0.001}, 200)]"]


def test_literals_of_values() -> None:
    assert literal_of(Seq((Const(1), DictV(((Const("a"), Const(None)),))), "tuple")) == (1, {"a": None})
    assert literal_of(Seq((Const(1), UNRESOLVED), "list")) is NOT_LITERAL


def test_a_file_alone_is_labelled_as_in_the_whole_corpus(tmp_path: Path) -> None:
    corpus = Path(__file__).resolve().parent / "fixtures" / "repo"
    root = tmp_path / "repo"
    shutil.copytree(corpus, root)
    whole = run(root, cache_dir=None, workers=2).files
    for rel in sorted(r for r in whole if r.startswith("tests/round5/")):
        alone = run(root, paths=[rel], cache_dir=None, workers=1).files
        assert alone[rel] == whole[rel], rel


def test_declared_options_and_their_defaults() -> None:
    tree = ast.parse(textwrap.dedent("""
        def pytest_addoption(parser):
            parser.addoption("--device", default="cpu")
            parser.addoption("-s", "--slow-tests", action="store_true")
            group.addoption("--n", dest="count", default=3)
            parser.addoption("--plain")
            parser.addoption("--computed", default=os.environ["X"])
        """))
    assert declared_options(tree) == {"device": Const("cpu"), "slow_tests": Const(False), "count": Const(3),
                                      "plain": Const(None), "computed": UNRESOLVED}


def test_or_with_a_falsy_first_operand_is_the_last_operand(tmp_path: Path) -> None:
    # pytorch_optimizer's get_global_gradient_norm: `device = device or next(<existing devices>, cpu)`
    got = _labels(tmp_path, {"tests/test_x.py": """
        import torch

        def norm(param_groups=None, device=None):
            param_groups = param_groups or []
            device = device or next((p.device for g in param_groups for p in g["params"]), torch.device("cpu"))
            return torch.zeros(1, device=device)

        def test_default():
            norm()

        def test_given_cuda():
            norm(device="cuda")
        """})
    assert got == {"test_default": "cpu", "test_given_cuda": "gpu"}


def test_a_skip_reached_through_a_helper_of_a_known_decorator_name(tmp_path: Path) -> None:
    # `require_cuda` is also accelerate's decorator; defined here as a plain function, its body is what runs
    got = _labels(tmp_path, {"tests/test_x.py": """
        import unittest

        import pytest
        import torch

        def require_cuda():
            if not torch.cuda.is_available():
                raise unittest.SkipTest("needs CUDA")

        def require_fp16():
            return None  # the name of a known decorator, but this one skips nothing

        @pytest.fixture
        def cuda_required():
            require_cuda()

        def test_helper():
            require_cuda()

        def test_fixture(cuda_required):
            pass

        def test_no_skip():
            require_fp16()

        class TestSetUp(unittest.TestCase):
            def setUp(self):
                require_cuda()

            def test_a(self):
                pass
        """})
    assert got == {"test_helper": "gpu", "test_fixture": "gpu", "test_no_skip": "cpu", "TestSetUp::test_a": "gpu"}
