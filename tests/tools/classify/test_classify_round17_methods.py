"""Round 17: how a method reaches its receiver (tests/round17_library, labels in expected.json).

Found on stable-baselines3 (read as sb3-contrib's base classes, see test_classify_library_bases.py):
* a `@staticmethod` called through an object gets no object (`env = self._wrap_env(env)` had made the
  constructor's `self` the wrapped environment: a later `self.device` use was lost, a false-CPU);
* a `@classmethod` called through an object gets the object's class (`cls(...)` builds one).

Found on cuequivariance-torch:
* a method of an Enum member is the class's (`layout.shape(x)`, `self.__repr__()` in `__str__`), and two
  members are the same member by class and name, so a `__str__` comparing `self` with the members gives
  pytest's id (`(mul,irrep)`), and a method choosing a device per member is followed;
* a class defined inside a function reads the function's locals (`device` of the function that builds it).

Found on pytorch_optimizer: a class's `__module__` (an in-repo class's is its module's name; a torch class's is
known by prefix, enough for `startswith`), and `|`/`&` of sets of constants.

Found on pyqtorch: a tensor compared with a str or None, `isinstance()` of a tensor, tensor arithmetic."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tools.classify.devices import isinstance_of
from tools.classify.interp_calls import module_startswith
from tools.classify.interp_expressions import _tensor_arithmetic
from tools.classify.runner import run
from tools.classify.values import UNRESOLVED, Const, Ext, Seq, TensorV


def test_enum_ids_and_method_kinds_equal_pytest(ids_vs_pytest) -> None:
    for path in ("tests/round17_library/test_enum_members.py", "tests/round17_library/test_method_kinds.py",
                 "tests/round17_library/test_local_classes.py", "tests/round17_library/test_class_modules.py",
                 "tests/round17_library/test_tensor_values.py"):
        got = ids_vs_pytest(path)
        assert set(got.tests) == got.collected, got.output
        assert not got.function_only and not got.not_collected


def test_explain_names_the_method_that_decided(corpus: Path) -> None:
    path = "tests/round17_library/test_method_kinds.py"
    tests = run(corpus, paths=[path], cache_dir=None).files[path].tests
    reasons = tests["test_class_method_through_the_object_on_cuda"].reasons
    assert any("calls zeros()" in r and "torch.zeros(device='cuda') needs a CUDA device" in r for r in reasons), reasons
    enum_path = "tests/round17_library/test_enum_members.py"
    enum_tests = run(corpus, paths=[enum_path], cache_dir=None).files[enum_path].tests
    assert enum_tests["test_placement[(accel)]"].label == "gpu"
    assert any("torch.zeros(device='cuda')" in r for r in enum_tests["test_placement[(accel)]"].reasons)


@pytest.mark.parametrize(("prefixes", "expected"), [
    (Const("torch.optim"), Const(True)), (Const("torch."), Const(True)), (Const("torch.nn"), Const(False)),
    (Const("torch.optim.ada"), UNRESOLVED),  # (`torch.optim.adamw` would; `torch.optim.sgd` would not)
    (Seq((Const("numpy"), Const("torch.op")), "tuple"), Const(True)), (Const(3), UNRESOLVED),
])
def test_a_module_known_by_prefix(prefixes, expected) -> None:
    """`torch.optim.AdamW.__module__` is `torch.optim` or one of its submodules."""
    assert module_startswith("torch.optim", [prefixes]) == expected


def test_tensor_arithmetic_and_types() -> None:
    cpu, cuda, made = TensorV("cpu"), TensorV("cuda"), TensorV("cpu", (3,))
    assert _tensor_arithmetic(ast.Add(), cpu, made) == cpu
    assert _tensor_arithmetic(ast.Mult(), Const(2), cuda) == cuda
    assert _tensor_arithmetic(ast.Add(), cpu, cuda) is None  # (torch raises)
    assert _tensor_arithmetic(ast.MatMult(), cpu, cpu) is None
    assert _tensor_arithmetic(ast.Add(), cpu, UNRESOLVED) is None
    tensor, text = Ext("torch.Tensor"), Ext("builtins.str")
    assert isinstance_of(made, Seq((Ext("builtins.float"), tensor), "tuple")) == Const(True)
    assert isinstance_of(cpu, text) == Const(False)
    # (a value on a known device that no factory made may be a module moved with `.to()`)
    assert isinstance_of(cpu, tensor) == UNRESOLVED
