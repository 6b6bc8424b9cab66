"""Round 37: code bound to a class, or reached through it, in ways its body does not show (corpus
tests/round37/test_late_bound.py, run with pytest on CPU-only torch first; labels in fixtures/expected.json)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tools.classify.analyzer import Analyzer
from tools.classify.interp_statements import _grows_containers
from tools.classify.modules import walk_python_files
from tools.classify.registries import calls_setattr
from tools.classify.sources import Sources

ROOT = Path(__file__).resolve().parent / "fixtures" / "repo"
LATE = "tests/round37/test_late_bound.py"


@pytest.fixture(scope="module")
def late() -> dict[str, object]:
    return Analyzer(ROOT, walk_python_files(ROOT, [])).classify_file(LATE).tests


@pytest.mark.parametrize(("name", "callee"), [
    ("test_method_set_after_class_on_gpu", "_run_on_gpu()"),  # `Job.run_on_gpu = _run_on_gpu` after the class
    ("test_method_set_by_setattr_on_gpu", "_run_here()"),  # `setattr(Job, "run_named", _run_here)`
    ("test_late_method_of_a_plain_class", "_launch()"),  # a class whose text names no device: not proven inert
    ("test_method_installed_by_a_class_decorator", "_step()"),  # `cls.step = _step` in a class decorator
    ("test_method_installed_by_a_function_at_import", "_step()"),  # `setattr(Worker, name, _step)` over names
    ("test_property_object_on_gpu", "_get_buffer()"),  # `buffer = property(fget=_get_buffer)`
    ("test_property_object_of_a_plain_class", "_make_block()"),  # `block = property(_make_block)`
    ("test_subclasses_of_a_base", "late_bound.py:58: torch.zeros"),  # `Backend.__subclasses__()`
    ("test_attrgetter_call_on_gpu", "go()"),  # `operator.attrgetter(name)(obj)()`
    ("test_methodcaller_on_gpu", "go()"),  # `operator.methodcaller(name)(obj)`
])
def test_late_bound_code_is_followed(late, name: str, callee: str) -> None:
    # each was a dropped call or an attribute read as the bare function: a false CPU (pytest fails each for want of
    # CUDA)
    verdict = late[name]
    assert (verdict.label, verdict.gpu_count) == ("gpu", 1)
    assert any(callee in r for r in verdict.reasons), verdict.reasons


@pytest.mark.parametrize("name", ["test_method_set_after_class_on_cpu", "test_property_object_on_cpu",
                                  "test_attrgetter_call_on_cpu", "test_methodcaller_on_cpu",
                                  "test_first_of_sorted_on_cpu"])
def test_late_bound_code_on_cpu_stays_cpu(late, name: str) -> None:
    assert late[name].label == "cpu"


def test_subclasses_are_found_in_modules_importing_the_base(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "base.py").write_text(
        "class Base:\n    def make(self):\n        return None\n\n\ndef every():\n"
        "    return [c() for c in Base.__subclasses__()]\n")
    (tmp_path / "pkg" / "gpu.py").write_text(
        "import torch\n\nfrom pkg.base import Base\n\n\nclass OnGpu(Base):\n    def make(self):\n"
        "        return torch.zeros(1, device='cuda')\n")
    (tmp_path / "pkg" / "other.py").write_text("Base = 1\n")  # names Base without importing it: not read
    (tmp_path / "test_all.py").write_text(
        "from pkg.base import every\n\n\ndef test_every():\n    for b in every():\n        b.make()\n")
    files = walk_python_files(tmp_path, [])
    sources = Sources(tmp_path, files)
    assert sources.importers_naming("pkg/base.py", ("Base",)) == ("pkg/gpu.py",)
    # (a module the test never imports still counts: pytest may have imported it, and the answer must not depend on
    # which files the analysis was given)
    verdict = Analyzer(tmp_path, files).classify_file("test_all.py").tests["test_every"]
    assert verdict.label == "gpu"
    assert any("pkg/gpu.py:8" in r for r in verdict.reasons), verdict.reasons


@pytest.mark.parametrize(("src", "installs"), [
    ("def deco(cls):\n    cls.run = _run\n    return cls\n", True),
    ("def deco(cls):\n    setattr(cls, 'run', _run)\n    return cls\n", True),
    ("def deco(cls):\n    other.run = _run\n    return cls\n", False),
    ("def deco(cls):\n    return cls\n", False),
])
def test_class_decorators_that_set_attributes_are_run(src: str, installs: bool) -> None:
    assert calls_setattr(ast.parse(src).body[0]) is installs


def test_loops_filling_a_container_held_by_an_attribute_are_unrolled() -> None:
    # `self.heads[name] = Head()` over names: one joined key per loop would leave the ModuleDict's children unknown
    loop = ast.parse("for name in ('cls', 'box'):\n    self.heads[name] = Head()\n").body[0]
    assert isinstance(loop, ast.For)
    assert _grows_containers(loop)


CONTAINERS = "tests/round37/test_containers.py"


@pytest.fixture(scope="module")
def containers() -> dict[str, object]:
    return Analyzer(ROOT, walk_python_files(ROOT, [])).classify_file(CONTAINERS).tests


@pytest.mark.parametrize("name", [
    "test_sequential",  # `nn.Sequential(Block(), nn.ReLU())(x)`: each child called in turn
    "test_sequential_of_a_filled_list",  # `nn.Sequential(*layers)`
    "test_module_list_appended",  # `self.layers.append(Block())` in a loop: the holder rebound
    "test_module_list_extended",
    "test_module_list_extended_by_unknown",  # an iterable not listed: the child the list already held still runs
    "test_module_dict_by_key",  # `self.heads[name] = Block()` in a loop, run by key
    "test_module_dict_values",
    "test_module_dict_items",
])
def test_children_of_torch_containers_are_run(containers, name: str) -> None:
    # each CUDA case was `cpu` (a call of the container ran no in-repo child, or its children were a stale copy)
    assert containers[f"{name}[cuda]"].label == "gpu"
    assert any("Block.forward()" in r or "calls forward()" in r for r in containers[f"{name}[cuda]"].reasons)
    assert containers[f"{name}[cpu]"].label == "cpu"


@pytest.mark.parametrize("order", ["backwards", "tail", "numbered", "paired"])
def test_children_run_in_another_order_or_in_part(containers, order: str) -> None:
    # `reversed(self.layers)`, `self.layers[1:]`, `enumerate(...)`, `zip(...)`
    assert containers[f"test_children_in_another_order[{order}-cuda]"].label == "gpu"
    assert containers[f"test_children_in_another_order[{order}-cpu]"].label == "cpu"


def test_a_child_replaced_by_index_is_the_one_run(containers) -> None:
    assert containers["test_replaced_by_index"].label == "gpu"
    assert containers["test_torch_layers_only"].label == "cpu"  # torch's own layers: a shape, no child code


OPERATORS = "tests/round37/test_operators.py"


@pytest.fixture(scope="module")
def operators() -> dict[str, object]:
    return Analyzer(ROOT, walk_python_files(ROOT, [])).classify_file(OPERATORS).tests


@pytest.mark.parametrize(("name", "method"), [
    ("test_add_moves_to_gpu", "__add__()"),
    ("test_reflected_mul_moves_to_gpu", "__rmul__()"),  # `2 * x`: int has no `__mul__` for it
    ("test_negation_moves_to_gpu", "__neg__()"),
    ("test_iterator_object[cuda]", "__next__()"),  # `for batch in Batches(...)`, `__iter__` returning self
    ("test_next_of_iterator[cuda]", "__next__()"),  # `next(Batches(...))`
    ("test_decorated_descriptor[cuda]", "__get__()"),  # `@cached_value def weights(self)`
    ("test_descriptor_in_class_body[cuda]", "__get__()"),  # `buffer = OnDevice()`
    ("test_item_assignment[cuda]", "__setitem__()"),  # `store["x"] = t`
])
def test_methods_python_runs_for_the_code_are_followed(operators, name: str, method: str) -> None:
    # each was evaluated on values (an unknown result) or read as the bare function: a false CPU
    verdict = operators[name]
    assert verdict.label == "gpu"
    assert any(f"calls {method}" in r for r in verdict.reasons), verdict.reasons


@pytest.mark.parametrize("name", [
    "test_matmul_of_operators_on_cpu", "test_inplace_add_on_cpu", "test_iterator_object[cpu]",
    "test_next_of_iterator[cpu]", "test_decorated_descriptor[cpu]", "test_descriptor_in_class_body[cpu]",
    "test_item_assignment[cpu]",
])
def test_methods_python_runs_on_cpu_stay_cpu(operators, name: str) -> None:
    assert operators[name].label == "cpu"


def test_an_inplace_operator_keeps_the_object(operators) -> None:
    # `a += 1` runs `__iadd__`, which returns the object itself: its method is then found
    assert operators["test_inplace_add_then_gpu"].label == "gpu"


def test_code_a_library_runs_for_the_caller_is_followed() -> None:
    tests = Analyzer(ROOT, walk_python_files(ROOT, [])).classify_file("tests/round37/test_run_later.py").tests
    # `checkpoint(self.block, x, use_reentrant=False)` runs the block on x (an object, not only a function)
    assert tests["test_checkpointed_block[cuda]"].label == "gpu"
    assert tests["test_checkpointed_block[cpu]"].label == "cpu"
    # a field's `default_factory` runs for each object made, not when the class body runs (its findings were lost)
    assert tests["test_field_factory_on_gpu"].label == "gpu"
    assert any("_cuda_buffer()" in r for r in tests["test_field_factory_on_gpu"].reasons)
    assert tests["test_field_given_skips_the_factory"].label == "cpu"
    assert tests["test_field_factory_on_cpu"].label == "cpu"


def test_cuda_work_for_values_already_on_cuda_is_no_need() -> None:
    tests = Analyzer(ROOT, walk_python_files(ROOT, [])).classify_file("tests/round37/test_transfers.py").tests
    # `on_cuda = [t for t in ts if t.device.type == "cuda"]; if on_cuda: ...`: empty unless CUDA values exist
    # and `if any(t.is_cuda for t in ts):`
    for name in ("test_copies_only_tensors_on_cuda", "test_copies_only_flagged_tensors",
                 "test_syncs_only_if_any_is_on_cuda"):
        assert tests[name].label == "cpu", tests[name].reasons
        assert any("not a first CUDA use" in r for r in tests[name].reasons)
    assert tests["test_filter_that_is_no_device_test"].label == "gpu"  # `numel() > 1` guards nothing


def test_a_loop_over_devices_that_skips_cuda_is_cpu() -> None:
    # `for device in ["cpu", "cuda"]: if device == "cuda" and not torch.cuda.is_available(): continue`: each device
    # on its own path, so the CUDA one ends at the `continue` (one joined device was a false GPU)
    tests = Analyzer(ROOT, walk_python_files(ROOT, [])).classify_file("tests/round37/test_transfers.py").tests
    assert tests["test_loop_skips_the_cuda_case"].label == "cpu"
    assert tests["test_loop_skips_the_cuda_case_by_module_flag"].label == "cpu"
    assert tests["test_loop_over_devices_without_a_skip"].label == "gpu"
