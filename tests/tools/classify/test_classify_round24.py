"""Round 24: configuration objects built by attrs and pydantic, Enum members looked up by value or name, cooperative
constructors (a mixin's `super()`) and keywords added to `**kwargs` (corpus tests/round24, labels in expected.json,
each test run with pytest on CPU-only torch first)."""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Callable
from pathlib import Path

from tools.classify.dataclass_fields import attrs_fields, attrs_init, pydantic_fields
from tools.classify.evidence import Verdict
from tools.classify.runner import run


def _tests(corpus: Path, path: str) -> dict:
    return run(corpus, paths=[path], cache_dir=None).files[path].tests


def _test_main(repo_with_test: Callable[[str], Path], text: str) -> Verdict:
    root = repo_with_test(textwrap.dedent(text))
    return run(root, paths=["test_mine.py"], cache_dir=None, workers=1).files["test_mine.py"].tests["test_main"]


def _class(text: str) -> ast.ClassDef:
    node = ast.parse(textwrap.dedent(text)).body[-1]
    assert isinstance(node, ast.ClassDef)
    return node


def test_attrs_classes_are_built_by_their_generated_constructor(corpus: Path) -> None:
    tests = _tests(corpus, "tests/round24/test_config_objects.py")
    # before: `attr.ib(default="cuda")`, `attrs.field(default=...)` and positional arguments were not read: `cpu`
    for name in ("test_attr_ib_cuda", "test_attrs_frozen_cuda", "test_attrs_positional_cuda", "test_attr_s_cuda",
                 "test_attrs_evolve_cuda"):
        assert tests[name].label == "gpu", (name, tests[name].reasons)
    for name in ("test_attr_ib_override_cpu", "test_attrs_define_cpu"):
        assert tests[name].label == "cpu", (name, tests[name].reasons)


def test_pydantic_models_take_their_keywords(corpus: Path) -> None:
    tests = _tests(corpus, "tests/round24/test_config_objects.py")
    # before: `PydCfg(device="cpu")` kept the class body's "cuda" (a CPU test sent to a GPU runner)
    assert tests["test_pydantic_override_cpu"].label == "cpu"
    assert tests["test_pydantic_override_cuda"].label == "gpu"
    assert tests["test_pydantic_nested_cpu"].label == "cpu"
    # model_copy(update=...), model_validate(dict), model_dump(): were `unknown`
    assert tests["test_pydantic_model_copy_cuda"].label == "gpu"
    assert tests["test_pydantic_model_validate_cuda"].label == "gpu"
    assert tests["test_pydantic_model_dump_cpu"].label == "cpu"


def test_enum_members_by_value_and_by_name(corpus: Path) -> None:
    tests = _tests(corpus, "tests/round24/test_config_objects.py")
    assert tests["test_enum_call_cuda"].label == "gpu"  # `Device("cuda").value`
    assert tests["test_enum_item_cuda"].label == "gpu"  # `Backend["GPU"].value`
    assert tests["test_enum_member_cpu"].label == "cpu"


def test_a_mixins_super_runs_the_next_class_of_the_objects_mro(corpus: Path) -> None:
    tests = _tests(corpus, "tests/round24/test_cooperative_init.py")
    # before: the mixin's `super().__init__(**kwargs)` looked in the mixin's own MRO, so the base that sets
    # `self.device` never ran and the CUDA strategy was `cpu`
    assert tests["test_mixin_chain_cuda"].label == "gpu"
    assert tests["test_mixin_chain_default"].label == "cpu"


def test_keywords_added_to_kwargs_are_passed_on(corpus: Path) -> None:
    tests = _tests(corpus, "tests/round24/test_cooperative_init.py")
    assert tests["test_kwargs_updated_with_a_keyword"].label == "gpu"  # `kw.update(device="cuda")`: was `cpu`


def test_an_attrs_private_field_is_passed_without_its_underscore() -> None:
    node = _class("""
        import attr

        @attr.s
        class Cfg:
            _device = attr.ib(default="cpu")
            n = attr.ib(factory=list)
            scale: float = 1.0
        """)
    assert attrs_init(node) is True
    fields = attrs_fields([node])
    assert fields is not None
    # `@attr.s` without auto_attribs: only the attr.ib() assignments are fields; `_device` is the keyword `device`
    assert [(f.name, f.keyword, f.has_default) for f in fields] == [("_device", "device", True), ("n", "n", True)]


def test_attrs_forms_not_followed_leave_the_constructor_unread() -> None:
    converted = _class("""
        import attrs

        @attrs.define
        class Cfg:
            device: str = attrs.field(default="cpu", converter=str)
        """)
    keyword_only = _class("""
        import attrs

        @attrs.define(kw_only=True)
        class Cfg:
            device: str = "cpu"
        """)
    assert attrs_fields([converted]) is None
    assert attrs_fields([keyword_only]) is None
    assert attrs_init(_class("""
        import attrs

        @attrs.define(init=False)
        class Cfg:
            device: str = "cpu"
        """)) is False


def test_pydantic_fields_skip_private_and_class_variables_and_validated_models_are_not_read() -> None:
    model = _class("""
        from typing import ClassVar
        from pydantic import BaseModel, Field

        class Cfg(BaseModel):
            model_config = {"frozen": True}
            registry: ClassVar[dict] = {}
            _cache: dict = {}
            device: str = "cuda"
            layers: int = Field(default=2)
            name: str = Field(...)
        """)
    fields = pydantic_fields([model])
    assert fields is not None
    assert [(f.name, f.has_default) for f in fields] == [("device", True), ("layers", True), ("name", False)]
    validated = _class("""
        from pydantic import BaseModel, field_validator

        class Cfg(BaseModel):
            device: str = "cpu"

            @field_validator("device")
            @classmethod
            def check(cls, v):
                return v
        """)
    assert pydantic_fields([validated]) is None


def test_model_copy_without_an_update_is_the_same_model(repo_with_test: Callable[[str], Path]) -> None:
    got = _test_main(repo_with_test, """
        import torch
        from pydantic import BaseModel

        class Cfg(BaseModel):
            device: str = "cpu"

        def test_main():
            cfg = Cfg(device="cuda")
            torch.zeros(1, device=cfg.model_copy().device)
        """)
    assert got.label == "gpu", got.reasons


def test_nvidias_management_library_needs_a_driver(corpus: Path) -> None:
    tests = _tests(corpus, "tests/round24/test_gpu_monitoring.py")
    # before: pynvml was an unknown library whose calls needed nothing (`cpu`: false CPUs)
    assert tests["test_nvml_direct"].label == "gpu"
    assert tests["test_nvml_memory"].label == "gpu"
    assert "NVIDIA's management library" in tests["test_nvml_direct"].reasons[0]
    # `try: nvmlInit()` / `except NVMLError: return 0`: without a driver the handler runs, the code after it does not
    assert tests["test_safe_memory"].label == "cpu"
    assert tests["test_nvml_guarded"].label == "cpu"  # `n = 0` in the handler, then `"cuda" if n else "cpu"`


def test_gputil_lists_no_gpu_without_one(corpus: Path) -> None:
    tests = _tests(corpus, "tests/round24/test_gpu_monitoring.py")
    assert tests["test_pick_device"].label == "cpu"  # `cuda:{ids[0]}" if ids else "cpu"` over GPUtil.getGPUs()
    assert tests["test_free_gpus_list"].label == "cpu"
    assert tests["test_first_available"].label == "gpu"  # getFirstAvailable() raises without a GPU


def test_an_nvml_call_a_handler_does_not_catch_stays_a_need(repo_with_test: Callable[[str], Path]) -> None:
    got = _test_main(repo_with_test, """
        import pynvml

        def test_main():
            try:
                pynvml.nvmlInit()
            except ImportError:
                pass
        """)
    assert got.label == "gpu", got.reasons


def test_attribute_dictionaries_hold_their_keys(corpus: Path) -> None:
    tests = _tests(corpus, "tests/round24/test_attribute_dicts.py")
    # before: easydict, munch, box and ml_collections were read as code (or unknown): `unknown`; addict's
    # `cfg.train.device = "cuda"` on a key it makes on first use was lost (`cpu`, a false CPU)
    for name in ("test_easydict_cuda", "test_addict_cuda", "test_munch_cuda", "test_box_cuda", "test_configdict_cuda",
                 "test_yacs_default_cuda", "test_yacs_clone_cuda", "test_easydict_set_cuda"):
        assert tests[name].label == "gpu", (name, tests[name].reasons)
    for name in ("test_easydict_cpu", "test_addict_cpu", "test_munchify_cpu", "test_box_cpu", "test_configdict_cpu",
                 "test_easydict_nested_cpu", "test_yacs_override_cpu"):
        assert tests[name].label == "cpu", (name, tests[name].reasons)


def test_yacs_merge_from_list_sets_dotted_keys(corpus: Path) -> None:
    tests = _tests(corpus, "tests/round24/test_attribute_dicts.py")
    assert tests["test_yacs_merge_list_cpu"].label == "cpu"  # was `gpu`: the merge was not seen


def test_a_change_the_model_does_not_follow_makes_the_configuration_unknown(
        repo_with_test: Callable[[str], Path]) -> None:
    got = _test_main(repo_with_test, """
        import torch
        from yacs.config import CfgNode as CN

        def test_main():
            cfg = CN({"device": "cpu"})
            cfg.merge_from_file("experiment.yaml")
            torch.zeros(1, device=cfg.device)
        """)
    assert got.label == "unknown", got.reasons


def test_a_device_read_through_a_configuration_is_not_an_existing_tensors(corpus: Path) -> None:
    tests = _tests(corpus, "tests/round24/test_config_paths.py")
    # `self.cfg.device` of a configuration the analysis cannot read: was the device of an existing tensor, `cpu` (a
    # false CPU: the file it came from said "cuda")
    got = tests["test_unknown_config_device"]
    assert got.label == "unknown", got.reasons
    assert tests["test_existing_tensor_device"].label == "cpu"


def test_a_bare_frozen_decorator_on_a_class_with_its_own_init_is_not_attrs() -> None:
    node = _class("""
        from mylib import frozen

        @frozen
        class Cfg:
            def __init__(self, device="cuda"):
                self.device = device
        """)
    assert attrs_init(node) is None


def test_an_error_kept_for_later_is_not_swallowed(corpus: Path) -> None:
    tests = _tests(corpus, "tests/round24/test_worker_errors.py")
    # a worker thread's `except Exception as e: errors.append(e)`, then `assert not errors`: was `cpu` (a false CPU)
    assert tests["test_thread_error_kept_in_a_list"].label == "gpu"
    assert tests["test_thread_error_put_on_a_queue"].label == "gpu"
    assert tests["test_error_only_reported"].label == "cpu"  # printed only: the test passes without CUDA
