"""Ecosystem conventions: decorators, markers and constants that real test suites use for GPU tests.

Used for names that cannot be followed into the repository (they live in an installed package) and as a
fallback for in-repo definitions whose code is too dynamic to evaluate (Lightning's `RunIf`). The
analysis follows in-repo definitions first; a convention only adds what the name is documented to need.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from tools.classify.torch_api import accelerator_of

UNSET = object()  # an argument whose value the analysis could not resolve


@dataclass(frozen=True)
class Requirement:
    """What a decorator or marker needs: GPUs, GiB per GPU, and whether it is a manual override."""

    gpu_count: int
    vram_gb: float
    note: str
    manual: bool = False  # @pytest.mark.gpu: wins over inference
    cpu: bool = False  # @pytest.mark.cpu
    hint_only: bool = False  # memory hint that applies only if the test needs a GPU anyway


def _num(value: object, default: float) -> float:
    if isinstance(value, bool) or value is UNSET or value is None:
        return default
    if isinstance(value, (int, float)):
        return float(value)
    return default


def _gib_from_size(value: object) -> float:
    """largeTensorTest sizes: bytes, or 'N GB' strings (torch multiplies by 1024**3)."""
    if isinstance(value, str):
        m = re.fullmatch(r"\s*([\d.]+)\s*([GgMmKkTt]?)[Bb]?\s*", value)
        if not m:
            return 0
        scale = {"t": 1024, "g": 1, "m": 1 / 1024, "k": 1 / 1024**2, "": 1 / 1024**3}[m.group(2).lower()]
        return _clean(float(m.group(1)) * scale)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return _clean(value / 1024**3)
    return 0


def _clean(x: float) -> float:
    """Whole numbers as ints so the JSON stays short and stable."""
    r = round(x, 3)
    return int(r) if r == int(r) else r


def _arg(args: list[object], kwargs: Mapping[str, object], index: int, name: str) -> object:
    if name in kwargs:
        return kwargs[name]
    return args[index] if len(args) > index else UNSET


# name -> (gpu_count, vram_gb, note); applied as plain decorators `@name` or `@name(...)`.
SIMPLE: dict[str, tuple[int, float, str]] = {
    # Hugging Face transformers / diffusers / peft
    "require_torch_gpu": (1, 0, "Hugging Face: skipped unless torch_device is cuda"),
    "require_torch_cuda": (1, 0, "needs CUDA"),
    "require_torch_accelerator": (1, 0, "Hugging Face: skipped on CPU-only machines"),
    "require_torch_accelerator_with_fp16": (1, 0, "diffusers: needs an accelerator with fp16"),
    "require_torch_accelerator_with_fp64": (1, 0, "diffusers: needs an accelerator"),
    "require_torch_accelerator_with_training": (1, 0, "diffusers: needs an accelerator"),
    "require_torch_multi_gpu": (2, 0, "Hugging Face: needs more than one CUDA GPU"),
    "require_torch_multi_accelerator": (2, 0, "Hugging Face: needs more than one accelerator"),
    "require_torch_gpu_if_bnb_not_multi_backend_enabled": (1, 0, "Hugging Face: bitsandbytes on CUDA"),
    "require_torch_tf32": (1, 0, "needs TF32-capable CUDA"),
    "require_flash_attn": (1, 0, "flash-attention needs CUDA"),
    "require_flash_attn_3": (1, 0, "flash-attention needs CUDA"),
    "require_torch_xpu": (1, 0, "needs an Intel XPU (not CUDA)"),
    "require_torch_multi_xpu": (2, 0, "needs several Intel XPUs"),
    "require_torch_npu": (1, 0, "needs an Ascend NPU (not CUDA)"),
    "require_torch_mps": (1, 0, "needs Apple MPS (not CUDA)"),
    "require_big_gpu_with_torch_cuda": (1, 40, "diffusers: BIG_GPU_MEMORY defaults to 40 GB"),
    "require_big_accelerator": (1, 40, "diffusers: BIG_GPU_MEMORY defaults to 40 GB"),
    "require_torch_2_gpu": (2, 0, "needs two GPUs"),
    # accelerate
    "require_cuda": (1, 0, "accelerate: needs CUDA"),
    "require_cuda_or_xpu": (1, 0, "accelerate: needs CUDA or XPU"),
    "require_cuda_or_hpu": (1, 0, "accelerate: needs CUDA or HPU"),
    "require_non_cpu": (1, 0, "accelerate: needs an accelerator"),
    "require_single_gpu": (1, 0, "accelerate: needs one GPU"),
    "require_single_device": (1, 0, "accelerate: needs one accelerator"),
    "require_multi_gpu": (2, 0, "accelerate: needs several GPUs"),
    "require_multi_device": (2, 0, "accelerate: needs several accelerators"),
    "require_multi_gpu_or_xpu": (2, 0, "accelerate: needs several GPUs"),
    "require_xpu": (1, 0, "needs an Intel XPU"),
    "require_mps": (1, 0, "needs Apple MPS"),
    "require_fp8": (1, 0, "fp8 needs a recent GPU"),
    "require_fp16": (1, 0, "accelerate: fp16 needs an accelerator"),
    "require_triton": (1, 0, "Triton needs a GPU"),
    # PyTorch's own test helpers
    "onlyCUDA": (1, 0, "PyTorch: runs only for the CUDA device type"),
    "onlyCUDAAndPRIVATEUSE1": (1, 0, "PyTorch: accelerator device types only"),
    "onlyXPU": (1, 0, "PyTorch: XPU only"),
    "onlyMPS": (1, 0, "PyTorch: MPS only"),
    "requires_cuda": (1, 0, "skipped without CUDA"),
    "requires_gpu": (1, 0, "skipped without a GPU"),
    "requires_cuda_and_triton": (1, 0, "CUDA + Triton"),
    "requires_multigpu": (2, 0, "skipped without two GPUs"),
    "requires_nccl": (1, 0, "NCCL needs CUDA"),
    "skip_if_no_gpu": (1, 0, "skipped without a GPU"),
    "skipIfNoCuda": (1, 0, "skipped without CUDA"),
    "skip_if_no_cuda": (1, 0, "skipped without CUDA"),
    "requires_cuda_p2p_access": (2, 0, "peer-to-peer needs two GPUs"),
    # torchvision and others
    "needs_cuda": (1, 0, "torchvision: skipped without CUDA"),
    "needs_mps": (1, 0, "torchvision: MPS only"),
    "gpu_test": (1, 0, "skipped without a GPU"),
    "cuda_only": (1, 0, "skipped without CUDA"),
    "requires_gpu_test": (1, 0, "skipped without a GPU"),
}

# @pytest.mark.<name> -> requirement. gpu/cpu are manual annotations that win over inference.
MARKS: dict[str, Requirement] = {
    "gpu": Requirement(1, 0, "@pytest.mark.gpu (manual)", manual=True),
    "cuda": Requirement(1, 0, "@pytest.mark.cuda (manual)", manual=True),
    "cpu": Requirement(0, 0, "@pytest.mark.cpu (manual)", manual=True, cpu=True),
    "needs_cuda": Requirement(1, 0, "torchvision: @pytest.mark.needs_cuda is skipped without CUDA"),
    "needs_mps": Requirement(1, 0, "@pytest.mark.needs_mps is skipped without MPS"),
    "requires_cuda": Requirement(1, 0, "marker skipped without CUDA"),
    "requires_gpu": Requirement(1, 0, "marker skipped without a GPU"),
    "require_gpu": Requirement(1, 0, "marker skipped without a GPU"),
    "multi_gpu": Requirement(2, 0, "marker for several GPUs"),
    "multigpu": Requirement(2, 0, "marker for several GPUs"),
    "gpu_only": Requirement(1, 0, "marker skipped without a GPU"),
    "pytest_torch_cuda_device": Requirement(1, 0, "pytest-torch parametrizes torch_device over the available "
                                                  "devices: [cuda] is collected only on a CUDA machine"),
}


LARGE_GPU = frozenset({"require_torch_large_gpu", "require_torch_large_accelerator"})
GPU_COUNT_AT_LEAST = frozenset({"deviceCountAtLeast", "skip_if_lt_x_gpu", "require_n_gpus", "requires_n_gpus",
                                "skip_if_lt_n_gpu"})
ARGUMENT_DECORATORS = frozenset({"largeTensorTest", "torch_max_memory", "RunIf"})


def decorator_requirement(name: str, args: list[object], kwargs: Mapping[str, object]) -> Requirement | None:
    """The requirement of decorator `name` applied as `@name` (no args) or `@name(*args, **kwargs)`."""
    if name in SIMPLE:
        count, vram, note = SIMPLE[name]
        if name in ("require_big_accelerator", "require_big_gpu_with_torch_cuda"):
            vram = _num(_arg([], kwargs, 0, "memory"), vram)
        return Requirement(count, _clean(vram), note)
    if name in LARGE_GPU:
        gib = _num(_arg(args, kwargs, 1, "memory") if len(args) > 1 else kwargs.get("memory", UNSET), 20)
        return Requirement(1, _clean(gib), f"Hugging Face: needs a GPU with more than {_clean(gib)} GiB")
    if name in GPU_COUNT_AT_LEAST:
        n = int(_num(_arg(args, kwargs, 0, "num_required_devices"), 2))
        return Requirement(max(n, 1), 0, f"{name}({n}) skips with fewer GPUs")
    if name == "largeTensorTest":
        size = _arg(args, kwargs, 0, "size")
        device = _arg(args, kwargs, 1, "device")
        gib = _gib_from_size(size)
        on_gpu = isinstance(device, str) and accelerator_of(device) is not None
        return Requirement(1, gib, f"largeTensorTest({size!r}) needs {gib} GiB", hint_only=not on_gpu)
    if name == "torch_max_memory":
        mb = _num(_arg(args, kwargs, 0, "mb"), 0)
        gib = _clean(mb / 1024)
        return Requirement(1, gib, f"torch_max_memory(mb={mb:g}) needs {gib} GiB", hint_only=True)
    if name == "RunIf":
        return _runif(kwargs)
    return None


# Every name decorator_requirement knows: a call of any other name needs no argument conversion.
DECORATOR_NAMES = frozenset({*SIMPLE, *LARGE_GPU, *GPU_COUNT_AT_LEAST, *ARGUMENT_DECORATORS})


def _runif(kwargs: Mapping[str, object]) -> Requirement | None:
    """Lightning's RunIf(min_cuda_gpus=N, bf16_cuda=True, mps=True, ...)."""
    for key in ("min_cuda_gpus", "min_gpus"):
        n = kwargs.get(key, 0)
        if isinstance(n, int) and not isinstance(n, bool) and n > 0:
            return Requirement(n, 0, f"Lightning RunIf({key}={n})")
        if n is UNSET:
            return Requirement(1, 0, f"Lightning RunIf({key}=...)")
    for key in ("bf16_cuda", "mps", "tpu", "xpu"):
        if kwargs.get(key) is True:
            return Requirement(1, 0, f"Lightning RunIf({key}=True) needs an accelerator")
    return None


def mark_requirement(name: str, args: list[object], kwargs: Mapping[str, object]) -> Requirement | None:
    """`@pytest.mark.<name>(...)`: manual gpu/cpu marks, conventional GPU markers, pytest-torch memory."""
    if name in MARKS:
        req = MARKS[name]
        if req.manual and not req.cpu:
            count = kwargs.get("count", kwargs.get("gpus", args[0] if args else 1))
            n = count if isinstance(count, int) and not isinstance(count, bool) and count > 0 else 1
            vram = _num(kwargs.get("vram_gb", kwargs.get("memory", 0)), 0)
            return Requirement(max(n, req.gpu_count), _clean(vram), req.note, manual=True)
        return req
    if name == "torch_max_memory":
        return decorator_requirement(name, args, kwargs)
    return None


# Names of well-known constants whose value depends on the machine. world = number of CUDA devices.
DEVICE_NAME_CONSTANTS = frozenset({"torch_device", "TORCH_DEVICE", "DEVICE", "device_type", "default_device"})
CUDA_FLAG_CONSTANTS = frozenset({
    "TEST_CUDA", "HAS_CUDA", "HAS_GPU", "RUN_CUDA", "TEST_CUDNN", "CUDA_AVAILABLE", "GPU_AVAILABLE",
    "IS_CUDA_AVAILABLE", "TEST_GPU", "RUN_GPU", "HAS_CUDA_AND_TRITON", "TEST_ACCELERATOR"})
MULTI_GPU_CONSTANTS = frozenset({"TEST_MULTIGPU", "HAS_MULTIGPU", "RUN_CUDA_MULTI_GPU", "TEST_MULTI_GPU", "MULTI_GPU"})
OTHER_ACCELERATOR_CONSTANTS = frozenset({"TEST_WITH_ROCM", "TEST_XPU", "TEST_MPS", "HAS_XPU", "HAS_MPS"})
GPU_COUNT_CONSTANTS = frozenset({"NUM_GPUS"})


def known_value(name: str, world: int) -> object:
    """Value of a well-known testing constant (transformers' torch_device, PyTorch's TEST_CUDA...)."""
    if name in DEVICE_NAME_CONSTANTS:
        return "cuda" if world else "cpu"
    if name in CUDA_FLAG_CONSTANTS:
        return world > 0
    if name in MULTI_GPU_CONSTANTS:
        return world >= 2
    if name in OTHER_ACCELERATOR_CONSTANTS:
        return False
    if name in GPU_COUNT_CONSTANTS:
        return world
    return NotImplemented


ALWAYS_TRUE_CALLS = frozenset({"is_torch_available", "is_torch_greater_or_equal_than_1_13"})
CUDA_AVAILABLE_CALLS = frozenset({"is_torch_cuda_available", "is_cuda_available", "is_torch_gpu_available",
                                  "has_cuda", "is_torch_accelerator_available", "cuda_is_available"})
GPU_COUNT_CALLS = frozenset({"num_gpus_available", "get_gpu_count", "backend_device_count", "num_cuda_devices",
                             "get_device_count"})


def known_call(name: str, world: int) -> object:
    """Result of calling a well-known availability helper (transformers' is_torch_available...)."""
    if name in ALWAYS_TRUE_CALLS:
        return True
    if name in CUDA_AVAILABLE_CALLS:
        return world > 0
    if name in GPU_COUNT_CALLS:
        return world
    if OTHER_ACCELERATOR_CHECK.fullmatch(name):
        return False
    if CUDA_CHECK.fullmatch(name):
        return world > 0
    return NotImplemented


# Availability checks of accelerators other than CUDA (accelerate's is_mlu_available(), transformers'
# is_torch_npu_available(), is_torch_xla_available(), ...): False on a CPU-only machine and in the
# analysis' CUDA worlds alike. Their bodies probe optional packages and drivers the analysis cannot follow.
OTHER_ACCELERATOR_CHECK = re.compile(
    r"is_(?:torch_)?(?:xpu|npu|mps|hpu|mlu|musa|sdaa|neuron|xla|tpu|ipu|dipu|gaudi|habana|ascend|torch_xla)"
    r"(?:_bf16)?_available")
CUDA_CHECK = re.compile(r"is_(?:torch_)?(?:cuda|gpu)(?:_device)?_available")


# torchvision's cpu_and_cuda(): ("cpu", pytest.param("cuda", marks=pytest.mark.needs_cuda))
DEVICE_LIST_HELPERS = {"cpu_and_cuda": ("cpu", "cuda"), "cpu_and_cuda_and_mps": ("cpu", "cuda", "mps"),
                       "cpu_and_gpu": ("cpu", "cuda")}


# Classes that only a few packages define or make: bitsandbytes' quantized parameters and layers, optimum-quanto's
# and torchao's quantized tensors. An object of one exists only in code that reached one of these packages
# (imported it, called into it), so code that tests `type(p).__name__ == "Int8Params"` (accelerate's
# set_module_tensor_to_device) takes that branch only then. The packages listed are the class's own and the
# libraries that build models with it on a user's behalf (transformers' `load_in_8bit=True`, peft, diffusers).
_BNB_MAKERS = frozenset({"bitsandbytes", "transformers", "peft", "diffusers", "optimum", "trl", "accelerate"})
_QUANTO_MAKERS = frozenset({"optimum", "quanto", "transformers", "diffusers", "accelerate"})
_TORCHAO_MAKERS = frozenset({"torchao", "transformers", "diffusers", "accelerate"})
FOREIGN_CLASSES: Mapping[str, frozenset[str]] = {
    **dict.fromkeys(("Int8Params", "Params4bit", "FP4Params", "Linear8bitLt", "Linear4bit", "LinearFP4",
                     "LinearNF4"), _BNB_MAKERS),
    **dict.fromkeys(("QTensor", "QBitsTensor", "WeightQBytesTensor", "QModuleMixin"), _QUANTO_MAKERS),
    **dict.fromkeys(("AffineQuantizedTensor",), _TORCHAO_MAKERS),
}
# every package above: reaching one of them is recorded (evidence.IMPORTS)
FOREIGN_CLASS_PACKAGES = frozenset().union(*FOREIGN_CLASSES.values())


def reacting_names() -> frozenset[str]:
    """Every name some convention here gives a meaning to (decorators, marks, constants, helper calls): code
    that mentions none of them, nor a name the regexes above match, meets no convention (see inert.py)."""
    return frozenset({*SIMPLE, *MARKS, *LARGE_GPU, *GPU_COUNT_AT_LEAST, *ARGUMENT_DECORATORS, *DEVICE_NAME_CONSTANTS,
                      *CUDA_FLAG_CONSTANTS, *MULTI_GPU_CONSTANTS, *OTHER_ACCELERATOR_CONSTANTS, *GPU_COUNT_CONSTANTS,
                      *ALWAYS_TRUE_CALLS, *CUDA_AVAILABLE_CALLS, *GPU_COUNT_CALLS, *DEVICE_LIST_HELPERS,
                      *FOREIGN_CLASS_PACKAGES})
