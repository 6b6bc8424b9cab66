"""Idioms found by the accuracy study on real suites (docs/classifier-accuracy.md)."""

from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path

import pytest

from tools.classify import conventions
from tools.classify.collect import to_safe_name
from tools.classify.interp_statements import _DEVICE_ERRORS, _PROCESS_ERRORS, _swallows
from tools.classify.runner import run

CORPUS = Path(__file__).resolve().parent / "fixtures"
REL = "tests/realworld/test_library_idioms.py"


@pytest.fixture(scope="module")
def realworld(tmp_path_factory: pytest.TempPathFactory):
    """Every file of the corpus' tests/realworld, classified once for this module."""
    dst = tmp_path_factory.mktemp("idioms") / "repo"
    shutil.copytree(CORPUS / "repo", dst)
    return run(dst, paths=["tests/realworld"], cache_dir=None).files


def _labels_and_expected(rel: str, tests) -> tuple[dict[str, list[object]], dict[str, list[object]]]:
    """(what the classifier says, what expected.json says) for the tests of one corpus file."""
    expected = json.loads((CORPUS / "expected.json").read_text())
    want = {k: v for k, v in expected.items() if k.startswith(rel + "::")}
    got = {f"{rel}::{k}": [v.label, v.gpu_count, v.vram_gb] for k, v in tests.items()}
    return got, want


@pytest.fixture(scope="module")
def tests(realworld):
    return realworld[REL].tests


def test_other_accelerator_checks_are_false_everywhere() -> None:
    for name in ("is_mlu_available", "is_torch_npu_available", "is_torch_xla_available", "is_sdaa_available",
                 "is_musa_available", "is_neuron_available", "is_torch_mlu_bf16_available"):
        assert conventions.known_call(name, 0) is False and conventions.known_call(name, 2) is False, name
    assert conventions.known_call("is_torch_cuda_available", 1) is True
    assert conventions.known_call("is_cuda_available", 0) is False
    assert conventions.known_call("is_available_somewhere", 0) is NotImplemented


def test_parameterized_safe_names() -> None:
    assert to_safe_name("fp16 / bf16") == "fp16_bf16"
    assert to_safe_name("use-cuda") == "use_cuda"


@pytest.mark.parametrize(("src", "swallowed"), [
    ("try:\n    f()\nexcept Exception:\n    continue_ = 1\n", True),
    ("try:\n    f()\nexcept:\n    pass\n", True),
    ("try:\n    f()\nexcept (ValueError, RuntimeError):\n    pass\n", True),
    ("try:\n    f()\nexcept RuntimeError:\n    raise ValueError()\n", False),
    ("try:\n    f()\nexcept Exception:\n    pytest.skip('no cuda')\n", False),
    ("try:\n    f()\nexcept ImportError:\n    pass\n", False),
    ("try:\n    f()\nfinally:\n    pass\n", False),
    ("try:\n    f()\nexcept FileNotFoundError:\n    pass\n", False),  # not an error CUDA raises
])
def test_which_handlers_swallow_device_errors(src: str, swallowed: bool) -> None:
    node = ast.parse(src).body[0]
    assert isinstance(node, ast.Try)
    assert _swallows(node, _DEVICE_ERRORS) is swallowed


@pytest.mark.parametrize(("src", "swallowed"), [
    ("try:\n    f()\nexcept FileNotFoundError:\n    pass\n", True),
    ("try:\n    f()\nexcept (OSError, subprocess.CalledProcessError):\n    pass\n", True),
    ("try:\n    f()\nexcept Exception:\n    pass\n", True),
    ("try:\n    f()\nexcept RuntimeError:\n    pass\n", False),  # not what starting a program raises
    ("try:\n    f()\nexcept FileNotFoundError:\n    pytest.skip('no driver')\n", False),
])
def test_which_handlers_swallow_process_errors(src: str, swallowed: bool) -> None:
    node = ast.parse(src).body[0]
    assert isinstance(node, ast.Try)
    assert _swallows(node, _PROCESS_ERRORS) is swallowed


def test_parameterized_expand_names_match_the_package(tests) -> None:
    names = sorted(k.split("::")[-1] for k in tests if "expand" in k)
    assert names == ["test_expand_default_0_fp32", "test_expand_default_1_fp16", "test_expand_device_0_cpu",
                     "test_expand_device_1_cuda", "test_expand_named_use_pytorch", "test_expand_named_use_safetensors",
                     "test_expand_numbers_0", "test_expand_numbers_1"]
    assert tests["BackendTests::test_expand_device_1_cuda"].label == "gpu"
    assert tests["BackendTests::test_expand_device_0_cpu"].label == "cpu"


def test_library_idioms_labels(tests) -> None:
    labels = {k: v.label for k, v in tests.items()}
    expected = json.loads((CORPUS / "expected.json").read_text())
    assert labels == {k.split("::", 1)[1]: v[0] for k, v in expected.items() if k.startswith(REL + "::")}
    # the evidence of the cases that stay gpu / unknown says why
    assert "re-raised" not in tests["BackendTests::test_reraised_probe"].reasons[0]
    assert "torch.tensor(device='cuda:0')" in tests["BackendTests::test_reraised_probe"].reasons[0]
    assert "dynamic dispatch" in tests["BackendTests::test_computed_attribute_call"].reasons[0]
    assert "calls fit()" in tests["BackendTests::test_mixin_super_init_cuda"].reasons[0]
    assert "pytest.skip() reached" in tests["test_string_method_guard[cuda]"].reasons[0]


def test_numpy_dtype_ids_use_the_class_name() -> None:
    from tools.classify.collect import idval
    from tools.classify.values import Ext

    assert idval(Ext("numpy.float16"), "dtype", 1) == "float16"  # pytest: np.float16.__name__
    assert idval(Ext("torch.float16"), "dtype", 1) == "dtype1"  # a torch.dtype has no __name__


# -- round 2 (pytorch-ignite, e3nn, linear_operator; gpytorch/accelerate leftovers) ---------------------
REL2 = "tests/realworld/test_round2_idioms.py"
MIRROR = "tests/realworld/mirror/tests/mypkg/backends/test_mirror.py"


@pytest.fixture(scope="module")
def round2(realworld):
    return realworld


def test_round2_labels_match_expected(round2) -> None:
    for rel in (REL2, MIRROR):
        got, want = _labels_and_expected(rel, round2[rel].tests)
        assert got == want


def test_usefixtures_parameters_make_ids_and_their_marks_follow_the_world(round2) -> None:
    tests = round2[REL2].tests
    assert sorted(k for k in tests if k.startswith("TestWithBackend::")) == [
        "TestWithBackend::test_collective[gloo_cpu-1]", "TestWithBackend::test_collective[gloo_cpu-2]",
        "TestWithBackend::test_collective[nccl-1]", "TestWithBackend::test_collective[nccl-2]"]
    # skipif(torch.cuda.device_count() < 1) in the nccl parameter's marks is a GPU skip: gone where a GPU exists
    assert tests["TestWithBackend::test_collective[nccl-1]"].label == "gpu"
    assert tests["test_backend_argument[nccl]"].label == "gpu"
    assert tests["test_backend_argument[gloo_cpu]"].label == "cpu"


def test_external_base_class_gets_a_class_level_key(round2) -> None:
    tests = round2[REL2].tests
    assert tests["TestInheritedOnCpu"].label == "cpu"
    assert "inherits tests from externallib.testing.ExternalOperatorTestCase" in tests["TestInheritedOnCpu"].reasons[0]
    assert tests["TestInheritedOnCuda"].label == "gpu"  # its own setUp skips without CUDA
    assert "TestFrameworkBaseOnly" not in tests  # unittest.TestCase has no tests to inherit
    from tools.contract.runtime import route_label  # the key routes like any class-level key (the runner's rule)

    labels = {k: v.label for k, v in tests.items()}
    assert route_label(labels, "TestInheritedOnCuda::test_matmul") == "gpu"
    assert route_label(labels, "TestInheritedOnCpu::test_own") == "cpu"


def test_parameterized_class_names_and_attributes(round2) -> None:
    tests = round2[REL2].tests
    assert sorted(k for k in tests if "Test_" in k or k.startswith(("DeviceParamTest", "DefaultNamesTest"))) == [
        "DefaultNamesTest_0_small_fp32::test_size", "DefaultNamesTest_1_large::test_size",
        "DeviceParamTest_cpu::test_zeros", "DeviceParamTest_cuda::test_zeros"]
    assert tests["DeviceParamTest_cuda::test_zeros"].label == "gpu"
    assert tests["DeviceParamTest_cpu::test_zeros"].label == "cpu"


def test_test_package_named_like_the_library_does_not_shadow_it(round2) -> None:
    # tests/ is a package: tests/mypkg/backends/ is `tests.mypkg.backends`, so `mypkg.backends` is the library
    assert round2[MIRROR].tests["test_library_device_through_mirror_package"].label == "cpu"
    from tools.classify.modules import RepoIndex

    index = RepoIndex(["mypkg/__init__.py", "mypkg/backends.py", "t/tests/__init__.py", "t/tests/mypkg/__init__.py",
                       "t/tests/mypkg/backends/__init__.py", "t/tests/mypkg/backends/test_x.py",
                       "src/tests/lib/__init__.py"])
    assert index.resolve_module("mypkg.backends", "t/tests/mypkg/backends/test_x.py") == "mypkg/backends.py"
    assert index.resolve_module("lib", "src/tests/lib/__init__.py") == "src/tests/lib/__init__.py"  # tests/ no pkg


def test_constant_comprehensions_are_listed() -> None:
    from tools.classify.analyzer import Analyzer

    src = b"import pytest\n\n@pytest.fixture(params=[i for i in range(3)])\ndef data(request):\n    return 1\n\n\n" \
          b"@pytest.mark.parametrize('s', [f'k{i}' for i in (1, 2)])\ndef test_x(data, s):\n    pass\n"
    a = Analyzer(Path("/nonexistent"), ["tests/test_c.py"], sources={"tests/test_c.py": src})
    assert sorted(a.classify_file("tests/test_c.py").tests) == ["test_x[0-k1]", "test_x[0-k2]", "test_x[1-k1]",
                                                                 "test_x[1-k2]", "test_x[2-k1]", "test_x[2-k2]"]


def test_device_of_the_first_tensor_argument_is_existing() -> None:
    from tools.classify.analyzer import Analyzer

    # e3nn's assert_equivariant: `device = next(t.device for t in args_in if isinstance(t, torch.Tensor))`
    src = b"import torch\n\ndef helper(*args_in):\n    device = next(t.device for t in args_in if isinstance(" \
          b"t, torch.Tensor))\n    return torch.full((1,), 0.0, device=device)\n\n\ndef test_x():\n" \
          b"    helper(torch.zeros(1))\n"
    a = Analyzer(Path("/nonexistent"), ["tests/test_n.py"], sources={"tests/test_n.py": src})
    assert a.classify_file("tests/test_n.py").tests["test_x"].label == "cpu"


REL3 = "tests/realworld/test_round3_idioms.py"


@pytest.fixture(scope="module")
def round3(realworld):
    return realworld[REL3].tests


def test_round3_labels_match_expected(round3) -> None:
    got, want = _labels_and_expected(REL3, round3)
    assert got == want


def test_device_lists_grown_by_mutation_get_a_gpu_only_case(round3) -> None:
    # DEVICES = ["cpu"]; if torch.cuda.is_available(): DEVICES.append("cuda") -> [cpu] here, [cuda] on a GPU
    for name in ("test_appended_devices", "test_loop_devices", "test_fixture_devices"):
        assert round3[f"{name}[cpu]"].label == "cpu"
        assert round3[f"{name}[cuda]"].label == "gpu"
        assert round3[f"{name}[cuda]"].gpu_count == 1
        assert name not in round3


def test_set_add_pop_carries_the_device(round3) -> None:
    assert round3["test_set_helper_dtype_only"].label == "cpu"
    assert round3["test_set_helper_cuda_keyword"].label == "gpu"


def test_parametrize_ids_follow_pytest_idval(round3) -> None:
    ids = {k.split("[", 1)[1][:-1] for k in round3 if "[" in k}
    for want in ("Events.STARTED", "Events.EPOCH_COMPLETED", "1", "2", "None", "1.5", "ab\\x00", "a.b", "_helper",
                 "Events", "3j", "n1"):
        assert want in ids, want
    assert round3["test_str_enum_device[cuda]"].label == "gpu"  # a str-mixin member is id'd and used as its value


def test_existing_device_is_never_a_non_device_string(round3) -> None:
    # stable-baselines3: get_device(param.device) compares it with "auto" before torch.device(...)
    assert round3["test_algo_auto_device"].label == "cpu"


def test_container_mutation_rules() -> None:
    from tools.classify.interp_calls import _mutated
    from tools.classify.values import Const, OneOf, Seq

    lst = Seq((Const("cpu"),), "list")
    assert _mutated(lst, "append", [Const("cuda")]) == (Seq((Const("cpu"), Const("cuda")), "list"), Const(None))
    assert _mutated(lst, "insert", [Const(0), Const("x")])[0] == Seq((Const("x"), Const("cpu")), "list")
    st = Seq((Const("cpu"),), "set")
    assert _mutated(st, "add", [Const("cpu")])[0] == st
    assert _mutated(st, "pop", []) == (Seq((), "set"), Const("cpu"))
    either = OneOf(frozenset({Seq((), "set"), st}))
    assert _mutated(either, "pop", [])[1] == Const("cpu")  # the empty path raises
    assert _mutated(Seq((), "tuple"), "append", [Const(1)]) is None  # tuples do not mutate


REL4 = "tests/realworld/test_round4_idioms.py"


@pytest.fixture(scope="module")
def round4(realworld):
    return realworld[REL4].tests


def test_round4_labels_match_expected(round4) -> None:
    got, want = _labels_and_expected(REL4, round4)
    assert got == want


def test_objects_per_path_keep_their_attributes(round4) -> None:
    # stable-baselines3: `self` is one of two objects after `if isinstance(space, Dict)`; writes, methods and
    # the object after __init__ go to each, so `self.device` stays known
    assert round4["test_branchy_algo_cpu"].label == "cpu"
    assert round4["test_branchy_algo_cuda"].label == "gpu"
    # a method that moves only one of the objects to CUDA is not lost (never cpu)
    assert round4["test_method_on_one_path_moves_to_cuda"].label == "gpu"


def test_shared_state_is_read_across_instances(round4) -> None:
    # accelerate's `self.__dict__ = self._shared_state`: one instance's attributes are every instance's
    for name in ("test_shared_state_device_follows_the_machine", "test_shared_state_cpu",
                 "test_shared_state_read_on_another_instance", "test_shared_state_reset",
                 "test_shared_state_copied_between_classes"):
        assert round4[name].label == "cpu", name
    for name in ("test_shared_state_moves_to_cuda", "test_shared_state_set_on_another_instance_to_cuda"):
        assert round4[name].label == "gpu", name


def test_shared_state_device_follows_each_world(tmp_path: Path) -> None:
    shutil.copytree(CORPUS / "repo" / "mypkg", tmp_path / "mypkg")
    (tmp_path / "probe.py").write_text(
        "from mypkg.shared_state import ProcessState, Trainer\n"
        "DEVICE = Trainer().device\n"
        "ProcessState(cpu=True)\n"
        "FORCED = ProcessState().device\n")
    from tools.classify.analyzer import Analyzer
    from tools.classify.values import DeviceV

    files = ["probe.py", *(f"mypkg/{p.name}" for p in (tmp_path / "mypkg").glob("*.py"))]
    interp = Analyzer(tmp_path, files).interp
    assert interp.module_state("probe.py", 0).env["DEVICE"] == DeviceV("cpu")
    assert interp.module_state("probe.py", 1).env["DEVICE"] == DeviceV("cuda")
    # a fresh process: the first construction initialises the shared state, later ones read it
    assert interp.module_state("probe.py", 1).env["FORCED"] == DeviceV("cuda")


def test_dict_comparisons() -> None:
    import ast as _ast

    from tools.classify.devices import _compare
    from tools.classify.values import UNRESOLVED, Const, DictV

    empty = DictV(())
    one = DictV(((Const("device"), Const("cpu")),))
    assert _compare(_ast.Eq(), empty, DictV(())) == Const(True)
    assert _compare(_ast.NotEq(), one, empty) == Const(True)
    assert _compare(_ast.Eq(), one, DictV(((Const("device"), Const("cpu")),))) == Const(True)
    assert _compare(_ast.Eq(), one, DictV(((Const("device"), Const("cuda")),))) == Const(False)
    assert _compare(_ast.Eq(), one, DictV(((Const("device"), UNRESOLVED),))) == UNRESOLVED
