"""The explicit table of torch APIs and what they need on a machine without a GPU.

Measured on the CPU build torch 2.13.0+cpu; `tests/tools/classify/test_torch_api_table.py` runs every
`example` against the installed torch: CPU-safe entries must run, the others must raise. XPU and MPS are
accelerators of their own, not CUDA, but a CPU-only machine has none of them either.
"""

from __future__ import annotations

from dataclasses import dataclass

CPU = "cpu"
CUDA = "cuda"
XPU = "xpu"
MPS = "mps"
ACCELERATORS = ("cuda", "xpu", "mps", "npu", "hpu", "mlu", "musa", "privateuseone")


@dataclass(frozen=True)
class TorchApi:
    path: str
    need: str
    note: str
    example: str  # run by the table test: must succeed for CPU, raise otherwise


def _t(path: str, need: str, note: str, example: str = "") -> TorchApi:
    return TorchApi(path, need, note, example or f"{path}()")


TABLE: tuple[TorchApi, ...] = (
    # -- queries and bookkeeping that work without a GPU -------------------------------------------
    _t("torch.cuda.is_available", CPU, "returns False on a CPU-only machine"),
    _t("torch.cuda.device_count", CPU, "returns 0"),
    _t("torch.cuda.is_initialized", CPU, "returns False"),
    _t("torch.cuda.manual_seed", CPU, "silently deferred until CUDA is used", "torch.cuda.manual_seed(0)"),
    _t("torch.cuda.manual_seed_all", CPU, "silently deferred", "torch.cuda.manual_seed_all(0)"),
    _t("torch.cuda.seed", CPU, "deferred"),
    _t("torch.cuda.seed_all", CPU, "deferred"),
    _t("torch.cuda.empty_cache", CPU, "no-op without CUDA"),
    _t("torch.cuda.memory_allocated", CPU, "returns 0"),
    _t("torch.cuda.max_memory_allocated", CPU, "returns 0"),
    _t("torch.cuda.memory_reserved", CPU, "returns 0"),
    _t("torch.cuda.max_memory_reserved", CPU, "returns 0"),
    _t("torch.cuda.memory_cached", CPU, "deprecated alias, returns 0"),
    _t("torch.cuda.max_memory_cached", CPU, "deprecated alias, returns 0"),
    _t("torch.cuda.memory_stats", CPU, "returns an empty dict"),
    _t("torch.cuda.host_memory_stats", CPU, "returns an empty dict"),
    _t("torch.cuda.is_bf16_supported", CPU, "returns False"),
    _t("torch.cuda.is_tf32_supported", CPU, "returns False"),
    _t("torch.cuda.get_arch_list", CPU, "returns []"),
    _t("torch.cuda.get_gencode_flags", CPU, "returns ''"),
    _t("torch.cuda.get_rng_state_all", CPU, "returns [] with no devices"),
    _t("torch.cuda.set_rng_state_all", CPU, "sets none with no devices", "torch.cuda.set_rng_state_all([])"),
    _t("torch.cuda.memory_stats_as_nested_dict", CPU, "returns an empty dict"),
    _t("torch.cuda.host_memory_stats_as_nested_dict", CPU, "returns an empty dict"),
    _t("torch.cuda.caching_allocator_enable", CPU, "a flag", "torch.cuda.caching_allocator_enable(True)"),
    _t("torch.cuda.set_rng_state", CPU, "deferred", "torch.cuda.set_rng_state(torch.ByteTensor(8))"),
    _t("torch.cuda.stream", CPU, "stream(None) is a no-op context", "torch.cuda.stream(None)"),
    _t("torch.cuda.amp.GradScaler", CPU, "warns and disables itself"),
    # the same functions under their submodules' names (`torch.cuda.random`, `torch.cuda.memory`)
    *(_t(f"torch.cuda.random.{name}", CPU, "deferred, or none with no devices", f"torch.cuda.random.{name}({arg})")
      for name, arg in (("manual_seed", "0"), ("manual_seed_all", "0"), ("seed", ""), ("seed_all", ""),
                        ("get_rng_state_all", ""), ("set_rng_state_all", "[]"))),
    *(_t(f"torch.cuda.memory.{name}", CPU, "returns 0 or an empty dict, or does nothing, without CUDA")
      for name in ("empty_cache", "memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved",
                   "memory_stats", "memory_stats_as_nested_dict", "host_memory_stats")),
    _t("torch.cuda.amp.common.amp_definitely_not_available", CPU, "returns True"),
    _t("torch.cuda.device_of", CPU, "device_of(t) of a CPU tensor selects nothing (a CUDA tensor is a device use "
       "already)", "torch.cuda.device_of(torch.zeros(1)).__enter__()"),
    _t("torch.cuda._is_compiled", CPU, "returns False"),
    _t("torch.cuda.nccl.is_available", CPU, "returns False", "torch.cuda.nccl.is_available([torch.zeros(1)])"),
    _t("torch.cuda.amp.autocast", CPU, "warns and disables itself"),
    _t("torch.device", CPU, "creating a device object touches no device", "torch.device('cuda')"),
    _t("torch.autocast", CPU, "autocast('cuda') only warns", "torch.autocast('cuda')"),
    _t("torch.amp.autocast", CPU, "only warns", "torch.amp.autocast('cuda')"),
    _t("torch.amp.GradScaler", CPU, "GradScaler('cuda') warns and disables itself", "torch.amp.GradScaler('cuda')"),
    _t("torch.backends.cudnn.is_available", CPU, "returns False"),
    _t("torch.backends.cudnn.version", CPU, "returns None"),
    _t("torch.backends.cudnn.benchmark", CPU, "plain flag", "torch.backends.cudnn.benchmark"),
    _t("torch.backends.cudnn.deterministic", CPU, "plain flag", "torch.backends.cudnn.deterministic"),
    _t("torch.backends.cudnn.enabled", CPU, "plain flag", "torch.backends.cudnn.enabled"),
    _t("torch.backends.cudnn.allow_tf32", CPU, "plain flag", "torch.backends.cudnn.allow_tf32"),
    _t("torch.backends.cuda.matmul.allow_tf32", CPU, "plain flag", "torch.backends.cuda.matmul.allow_tf32"),
    _t("torch.backends.cuda.is_built", CPU, "returns False"),
    _t("torch.backends.mps.is_available", CPU, "returns False"),
    _t("torch.backends.mps.is_built", CPU, "returns False"),
    _t("torch.xpu.is_available", CPU, "returns False"),
    _t("torch.xpu.device_count", CPU, "returns 0"),
    _t("torch.mps.manual_seed", CPU, "deferred", "torch.mps.manual_seed(0)"),
    _t("torch.accelerator.is_available", CPU, "returns False"),
    _t("torch.accelerator.device_count", CPU, "returns 0"),
    _t("torch.accelerator.current_accelerator", CPU, "returns None"),
    _t("torch.accelerator.device_index", CPU, "device_index(None) is a no-op context; an index is a device use",
       "torch.accelerator.device_index(None).__enter__()"),
    _t("torch.Stream", CPU, "a CPU stream without a device argument (device='cuda' is a device use)"),
    _t("torch.Event", CPU, "a CPU event without a device argument (device='cuda' is a device use)"),
    _t("torch.distributed.is_available", CPU, "gloo is built in"),
    _t("torch.distributed.is_nccl_available", CPU, "returns False"),
    _t("torch.distributed.is_gloo_available", CPU, "returns True"),
    _t("torch.distributed.is_initialized", CPU, "returns False"),
    _t("torch.get_device_module", CPU, "returns the torch.cuda module", "torch.get_device_module('cuda')"),
    _t("torch.set_default_device", CPU, "set_default_device('cpu') is fine; 'cuda' is handled as a device use",
       "torch.set_default_device('cpu')"),
    _t("torch.utils.data.DataLoader", CPU, "pin_memory=True is ignored without an accelerator",
       "list(torch.utils.data.DataLoader([1, 2], pin_memory=True))"),
    _t("torch.compile", CPU, "compiles for CPU tensors", "torch.compile(lambda x: x + 1)(torch.zeros(2))"),
    _t("torch.Tensor.is_pinned", CPU, "returns False", "torch.zeros(2).is_pinned()"),
    _t("torch.Tensor.is_cuda", CPU, "attribute, False", "torch.zeros(2).is_cuda"),
    _t("torch.Tensor.cpu", CPU, "stays on the CPU", "torch.zeros(2).cpu()"),
    # -- CUDA runtime calls that raise without a GPU ----------------------------------------------
    _t("torch.cuda.initial_seed", CUDA, "initialises CUDA"),
    _t("torch.cuda.can_device_access_peer", CUDA, "queries two CUDA devices",
       "torch.cuda.can_device_access_peer(0, 1)"),
    _t("torch.cuda.current_blas_handle", CUDA, "needs the CUDA runtime"),
    _t("torch.cuda.get_per_process_memory_fraction", CUDA, "queries a CUDA device"),
    _t("torch.cuda.reset_max_memory_cached", CUDA, "needs the CUDA allocator"),
    _t("torch.cuda.reset_peak_host_memory_stats", CUDA, "needs the CUDA host allocator"),
    _t("torch.cuda.get_allocator_backend", CUDA, "needs the CUDA allocator"),
    _t("torch.cuda.graph_pool_handle", CUDA, "needs CUDA graphs"),
    _t("torch.cuda.memory_usage", CUDA, "reads the GPU through NVML"),
    _t("torch.cuda.device_memory_used", CUDA, "reads the GPU through NVML"),
    _t("torch.cuda.power_draw", CUDA, "reads the GPU through NVML"),
    _t("torch.cuda.clock_rate", CUDA, "reads the GPU through NVML"),
    _t("torch.cuda.init", CUDA, "initialises CUDA"),
    _t("torch.cuda.ipc_collect", CUDA, "needs the CUDA runtime"),
    _t("torch.cuda.synchronize", CUDA, "waits on a CUDA device"),
    _t("torch.cuda.current_device", CUDA, "queries the active CUDA device"),
    _t("torch.cuda.get_device_name", CUDA, "queries a CUDA device"),
    _t("torch.cuda.get_device_properties", CUDA, "queries a CUDA device", "torch.cuda.get_device_properties(0)"),
    _t("torch.cuda.get_device_capability", CUDA, "queries a CUDA device"),
    _t("torch.cuda.set_device", CUDA, "selects a CUDA device", "torch.cuda.set_device(0)"),
    _t("torch.nn.parallel.scatter", CUDA, "scatters onto CUDA devices",
       "torch.nn.parallel.scatter(torch.zeros(2), [0])"),
    _t("torch.nn.parallel.scatter_gather.scatter", CUDA, "scatters onto CUDA devices",
       "torch.nn.parallel.scatter_gather.scatter(torch.zeros(2), [0])"),
    _t("torch.nn.parallel.replicate", CUDA, "copies a module onto CUDA devices",
       "torch.nn.parallel.replicate(torch.nn.Linear(1, 1), [0])"),
    _t("torch.cuda.comm.broadcast", CUDA, "copies onto CUDA devices", "torch.cuda.comm.broadcast(torch.zeros(2), [0])"),
    _t("torch.cuda.comm.scatter", CUDA, "scatters onto CUDA devices", "torch.cuda.comm.scatter(torch.zeros(2), [0])"),
    _t("torch.cuda.Stream", CUDA, "creates a CUDA stream"),
    _t("torch.cuda.Event", CUDA, "creates a CUDA event"),
    _t("torch.cuda.CUDAGraph", CUDA, "creates a CUDA graph"),
    _t("torch.cuda.graph", CUDA, "captures a CUDA graph", "torch.cuda.graph(torch.cuda.CUDAGraph())"),
    _t("torch.cuda.mem_get_info", CUDA, "queries device memory"),
    _t("torch.cuda.memory.mem_get_info", CUDA, "queries device memory"),
    _t("torch.cuda.get_rng_state", CUDA, "reads a device generator"),
    _t("torch.cuda.set_sync_debug_mode", CUDA, "CUDA runtime setting", "torch.cuda.set_sync_debug_mode(0)"),
    _t("torch.cuda.get_sync_debug_mode", CUDA, "CUDA runtime setting"),
    _t("torch.cuda.reset_peak_memory_stats", CUDA, "missing from the CPU build"),
    _t("torch.cuda.reset_max_memory_allocated", CUDA, "missing from the CPU build"),
    _t("torch.cuda.reset_accumulated_memory_stats", CUDA, "missing from the CPU build"),
    _t("torch.cuda.memory_summary", CUDA, "fails on empty stats"),
    _t("torch.cuda.memory_snapshot", CUDA, "missing from the CPU build"),
    _t("torch.cuda.caching_allocator_alloc", CUDA, "allocates device memory", "torch.cuda.caching_allocator_alloc(8)"),
    _t("torch.cuda.set_per_process_memory_fraction", CUDA, "device memory setting",
       "torch.cuda.set_per_process_memory_fraction(0.5)"),
    _t("torch.cuda.current_stream", CUDA, "queries a CUDA stream"),
    _t("torch.cuda.default_stream", CUDA, "queries a CUDA stream"),
    _t("torch.cuda.is_current_stream_capturing", CUDA, "queries a CUDA stream"),
    _t("torch.cuda.device", CUDA, "entering the device context needs CUDA", "torch.cuda.device(0).__enter__()"),
    _t("torch.cuda.utilization", CUDA, "needs NVML and a device"),
    _t("torch.cuda.temperature", CUDA, "needs NVML and a device"),
    # with nvidia-ml-py installed it reads NVML (raises without a driver); without, it returns a message that says so
    _t("torch.cuda.list_gpu_processes", CUDA, "reads the GPUs through NVML",
       "torch.cuda.list_gpu_processes().startswith('pynvml module not found') and 1 / 0"),
    _t("torch.cuda.FloatTensor", CUDA, "legacy CUDA tensor type", "torch.cuda.FloatTensor(2)"),
    _t("torch.cuda.HalfTensor", CUDA, "legacy CUDA tensor type", "torch.cuda.HalfTensor(2)"),
    _t("torch.cuda.LongTensor", CUDA, "legacy CUDA tensor type", "torch.cuda.LongTensor(2)"),
    _t("torch.cuda.nvtx.range_push", CUDA, "NVTX needs a CUDA build", "torch.cuda.nvtx.range_push('a')"),
    _t("torch.cuda.nvtx.range_pop", CUDA, "NVTX needs a CUDA build"),
    _t("torch.cuda.nvtx.range", CUDA, "NVTX needs a CUDA build", "torch.cuda.nvtx.range('a').__enter__()"),
    _t("torch.cuda.nvtx.mark", CUDA, "NVTX needs a CUDA build", "torch.cuda.nvtx.mark('a')"),
    _t("torch.cuda.tunable.is_enabled", CUDA, "missing from the CPU build"),
    *(_t(f"torch.cuda.memory.{name}", CUDA, "needs the CUDA allocator", f"torch.cuda.memory.{name}({arg})")
      for name, arg in (("reset_peak_memory_stats", ""), ("reset_accumulated_memory_stats", ""),
                        ("memory_summary", ""), ("memory_snapshot", ""), ("_record_memory_history", ""),
                        ("_snapshot", ""), ("_dump_snapshot", "'x.pickle'"), ("caching_allocator_alloc", "8"),
                        ("set_per_process_memory_fraction", "0.5"), ("MemPool", ""))),
    _t("torch.cuda.MemPool", CUDA, "a CUDA memory pool"),
    _t("torch.cuda.cudart", CUDA, "loads the CUDA runtime"),
    _t("torch.cuda.profiler.start", CUDA, "starts the CUDA profiler"),
    _t("torch.cuda.profiler.stop", CUDA, "stops the CUDA profiler"),
    _t("torch.cuda.profiler.profile", CUDA, "entering it starts the CUDA profiler",
       "torch.cuda.profiler.profile().__enter__()"),
    _t("torch.cuda.nccl.version", CUDA, "missing from the CPU build"),
    _t("torch.cuda.get_stream_from_external", CUDA, "wraps a CUDA stream", "torch.cuda.get_stream_from_external(0)"),
    _t("torch.cuda.ExternalStream", CUDA, "wraps a CUDA stream", "torch.cuda.ExternalStream(0)"),
    _t("torch.Generator", CUDA, "Generator('cuda') needs the CUDA library (device argument checked)",
       "torch.Generator('cuda')"),
    _t("torch.Tensor.cuda", CUDA, "moves a tensor or module to a CUDA device", "torch.zeros(2).cuda()"),
    _t("torch.Tensor.to", CUDA, ".to('cuda') moves to a CUDA device (device argument checked)",
       "torch.zeros(2).to('cuda')"),
    _t("torch.Tensor.pin_memory", CUDA, "page-locking needs an accelerator", "torch.zeros(2).pin_memory()"),
    _t("torch.nn.Module.cuda", CUDA, "moves parameters to CUDA", "torch.nn.Linear(2, 2).cuda()"),
    _t("torch.zeros", CUDA, "device='cuda' tensor factories allocate on CUDA (device argument checked)",
       "torch.zeros(2, device='cuda')"),
    _t("torch.distributed.init_process_group", CUDA, "the NCCL backend needs CUDA devices",
       "torch.distributed.init_process_group('nccl', init_method='tcp://127.0.0.1:1', rank=0, world_size=1)"),
    # -- torch.accelerator: the current accelerator, which a CPU-only machine lacks (unlike their torch.cuda
    # counterparts, the memory calls raise too) ---------------------------------------------------------------
    *(_t(f"torch.accelerator.{name}", CUDA, "needs an accelerator", f"torch.accelerator.{name}({arg})")
      for name, arg in (("synchronize", ""), ("current_device_index", ""), ("current_device_idx", ""),
                        ("set_device_index", "0"), ("set_device_idx", "0"), ("current_stream", ""),
                        ("set_stream", "torch.Stream()"), ("empty_cache", ""), ("empty_host_cache", ""),
                        ("get_device_capability", ""), ("get_memory_info", ""), ("memory_allocated", ""),
                        ("max_memory_allocated", ""), ("memory_reserved", ""), ("max_memory_reserved", ""),
                        ("memory_stats", ""), ("reset_peak_memory_stats", ""), ("reset_accumulated_memory_stats", ""),
                        ("Graph", ""))),
    *(_t(f"torch.accelerator.memory.{name}", CUDA, "needs an accelerator", f"torch.accelerator.memory.{name}()")
      for name in ("empty_cache", "memory_allocated", "max_memory_allocated", "memory_reserved", "memory_stats",
                   "reset_peak_memory_stats", "get_memory_info")),
    # -- other accelerators ------------------------------------------------------------------------
    _t("torch.xpu.synchronize", XPU, "needs an Intel XPU"),
    _t("torch.xpu.current_device", XPU, "needs an Intel XPU"),
    _t("torch.xpu.set_device", XPU, "needs an Intel XPU", "torch.xpu.set_device(0)"),
    _t("torch.mps.synchronize", MPS, "needs Apple MPS"),
    _t("torch.mps.empty_cache", MPS, "needs Apple MPS"),
)

BY_PATH: dict[str, TorchApi] = {api.path: api for api in TABLE}

# Functions whose device argument decides (checked by the analysis, not by the table lookup).
DEVICE_ARG_APIS = frozenset({"torch.Generator", "torch.set_default_device", "torch.zeros"})

# Results of queries in a world with `n` CUDA devices (n == 0 is the CPU-only machine we route for).
QUERIES_BOOL_AVAILABLE = frozenset({
    "torch.cuda.is_available", "torch.backends.cudnn.is_available", "torch.distributed.is_nccl_available",
    "torch.cuda.is_bf16_supported", "torch.accelerator.is_available", "torch.backends.cuda.is_built",
    "torch.cuda.is_tf32_supported", "torch.backends.mps.is_available", "torch.xpu.is_available",
    "torch.backends.mps.is_built", "torch.mps.is_available", "torch.is_cuda_available",
})
QUERIES_COUNT = frozenset({"torch.cuda.device_count", "torch.xpu.device_count", "torch.accelerator.device_count"})
# Deprecated attributes (not calls) that alias build queries: `torch.has_cuda` is `torch.backends.cuda.is_built()`,
# False on the CPU build the CPU runners use (neuraloperator: `if torch.has_cuda: device = "cuda"`). Checked
# against the installed torch by tests/tools/classify/test_torch_api_table.py.
ATTRIBUTES_BOOL_AVAILABLE = frozenset({"torch.has_cuda", "torch.has_cudnn", "torch.has_mps"})

TENSOR_FACTORIES = frozenset({
    "tensor", "as_tensor", "zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm", "arange",
    "linspace", "logspace", "eye", "zeros_like", "ones_like", "empty_like", "full_like", "rand_like",
    "randn_like", "randint_like", "from_numpy", "empty_strided", "sparse_coo_tensor", "normal", "tril_indices",
    "triu_indices", "complex", "scalar_tensor", "bernoulli", "multinomial", "frombuffer", "asarray",
})

# Tensor methods whose result is a tensor on the receiver's device (shape, view, dtype and elementwise
# operations; never one that takes a device or returns a Python value). A tensor on a known device keeps it
# through them: `torch.tensor(x, device=d).repeat(n)` is still on d (torchsde passes such a tensor as `W` and
# the Brownian interval takes its device from it). Checked against the installed torch by
# tests/tools/classify/test_torch_api_table.py.
SAME_DEVICE_METHODS = frozenset({
    "abs", "add", "add_", "bmm", "bool", "clamp", "clamp_", "clone", "contiguous", "cumsum", "detach", "div",
    "div_", "double", "exp", "expand", "expand_as", "fill_", "flatten", "flip", "float", "half", "index_select",
    "int", "log", "long", "masked_fill", "matmul", "mean", "mm", "mul", "mul_", "narrow", "neg", "normal_",
    "permute", "pow", "relu", "repeat", "requires_grad_", "reshape", "roll", "sigmoid", "softmax", "sqrt",
    "squeeze", "sub", "sub_", "sum", "t", "tanh", "transpose", "uniform_", "unsqueeze", "view", "view_as",
    "zero_",
})

# Constants whose value is known: torch.distributed.Backend is a str subclass whose members equal their names
# in lower case (`backend == dist.Backend.NCCL` with backend "gloo" is False). Checked against the installed
# torch by tests/tools/classify/test_torch_api_table.py.
CONSTANTS: dict[str, str] = {f"torch.distributed.Backend.{n}": n.lower()
                             for n in ("FAKE", "GLOO", "MPI", "NCCL", "UCC", "UNDEFINED", "XCCL")}
CONSTANT_PREFIXES = ("torch.version", "torch.distributed.Backend.", "torch.has_")


def query_value(path: str, world: int) -> object:
    """The value a device query returns in a world with `world` CUDA devices (or a known constant), or
    NotImplemented."""
    if path in CONSTANTS:
        return CONSTANTS[path]
    if path in QUERIES_BOOL_AVAILABLE or path in ATTRIBUTES_BOOL_AVAILABLE:
        return world > 0
    if path in QUERIES_COUNT:
        return world
    if path == "torch.version.cuda":
        return "12.4" if world else None
    if path == "torch.version.hip":
        return None
    return NotImplemented


def accelerator_of(device: str) -> str | None:
    """'cuda:1' -> 'cuda'; 'cpu'/'meta' -> None."""
    kind = device.split(":", 1)[0].strip().lower()
    if kind in ("gpu",):
        return "cuda"
    return kind if kind in ACCELERATORS else None


def device_index(device: str) -> int:
    """Index in 'cuda:1' (0 when absent or malformed)."""
    _, _, idx = device.partition(":")
    return int(idx) if idx.strip().isdigit() else 0


# `inspect.signature(cls).parameters` of torch's optimizers, as the pinned torch (the CPU lock's) defines them,
# checked against the installed one by tests/tools/classify/test_torch_api_table.py. Optimizer suites filter their
# cases by them (pytorch_optimizer: `name for name, cls in OPTIMIZERS.items() if "foreach" in
# signature(cls).parameters`), over torch's classes and their own.
OPTIMIZER_PARAMETERS: dict[str, tuple[str, ...]] = {
    "torch.optim.ASGD": ("params", "lr", "lambd", "alpha", "t0", "weight_decay", "foreach", "maximize",
                         "differentiable", "capturable"),
    "torch.optim.Adadelta": ("params", "lr", "rho", "eps", "weight_decay", "foreach", "capturable", "maximize",
                             "differentiable"),
    "torch.optim.Adafactor": ("params", "lr", "beta2_decay", "eps", "d", "weight_decay", "foreach", "maximize"),
    "torch.optim.Adagrad": ("params", "lr", "lr_decay", "weight_decay", "initial_accumulator_value", "eps", "foreach",
                            "maximize", "differentiable", "fused"),
    "torch.optim.Adam": ("params", "lr", "betas", "eps", "weight_decay", "amsgrad", "foreach", "maximize",
                         "capturable", "differentiable", "fused", "decoupled_weight_decay"),
    "torch.optim.AdamW": ("params", "lr", "betas", "eps", "weight_decay", "amsgrad", "maximize", "foreach",
                          "capturable", "differentiable", "fused"),
    "torch.optim.Adamax": ("params", "lr", "betas", "eps", "weight_decay", "foreach", "maximize", "differentiable",
                           "capturable"),
    "torch.optim.LBFGS": ("params", "lr", "max_iter", "max_eval", "tolerance_grad", "tolerance_change", "history_size",
                          "line_search_fn"),
    "torch.optim.Muon": ("params", "lr", "weight_decay", "momentum", "nesterov", "ns_coefficients", "eps", "ns_steps",
                         "adjust_lr_fn"),
    "torch.optim.NAdam": ("params", "lr", "betas", "eps", "weight_decay", "momentum_decay", "decoupled_weight_decay",
                          "foreach", "maximize", "capturable", "differentiable"),
    "torch.optim.RAdam": ("params", "lr", "betas", "eps", "weight_decay", "decoupled_weight_decay", "foreach",
                          "maximize", "capturable", "differentiable"),
    "torch.optim.RMSprop": ("params", "lr", "alpha", "eps", "weight_decay", "momentum", "centered", "capturable",
                            "foreach", "maximize", "differentiable"),
    "torch.optim.Rprop": ("params", "lr", "etas", "step_sizes", "capturable", "foreach", "maximize", "differentiable"),
    "torch.optim.SGD": ("params", "lr", "momentum", "dampening", "weight_decay", "nesterov", "maximize", "foreach",
                        "differentiable", "fused"),
    "torch.optim.SparseAdam": ("params", "lr", "betas", "eps", "maximize"),
}
