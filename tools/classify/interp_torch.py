"""The interpreter's torch semantics: torch.* calls (torch.device, default devices, distributed init, the
torch API table, factories), tensor and module methods (`.cuda()`, `.to(device)`, `.pin_memory()`),
torch.testing._internal generators and decorators.
"""

from __future__ import annotations

import ast
import math

from tools.classify import nn_modules, torch_api, torch_testing
from tools.classify.devices import (
    EXISTING_DEVICE,
    _accel_name,
    _device_of_existing,
    accel_device,
    device_of,
    gpu_count_of,
    truth,
)
from tools.classify.evidence import GPU, UNKNOWN, Finding, step
from tools.classify.interp_base import (
    Frame,
    InterpBase,
    script_function,
)
from tools.classify.module_device import ClassFacts, class_facts, device_is_module_own, is_module_base
from tools.classify.values import (
    SIZE,
    ClassV,
    Const,
    DeviceV,
    Ext,
    FuncV,
    GenClassV,
    Inst,
    MarkV,
    NNModV,
    OneOf,
    ParamV,
    PartialV,
    PathV,
    Seq,
    TensorV,
    Unresolved,
    Value,
    alternatives,
    join_all,
)
from tools.classify.values import UNRESOLVED as UNK

DEVICE_NAME_HINTS = ("device", "dev", "device_map")
# calls that give back something running as the function or module they are given does
COMPILERS = frozenset({"torch.compile", "torch.jit.script", "torch.jit.freeze", "torch.jit.optimize_for_inference"})


class TorchMixin(InterpBase):
    """torch calls, tensor and module methods and torch.testing; a part of dataflow.Interp."""

    def tensor_method(self, recv: Value, name: str, args: list[Value], kwargs: dict[str, Value], n: ast.Call,
                      frame: Frame) -> Value:
        """Methods of tensors and modules (and of any other value the analysis does not model, read as one):
        the ones that move data to a device or need one."""
        line = n.lineno
        if name == "apply" and len(args) == 1 and not kwargs and isinstance(args[0], FuncV):
            # `model.apply(init_fn)`: torch calls it on each submodule and the module itself, now
            self.call(args[0], [recv], {}, n, frame, "apply")
            return recv
        if nn_modules.is_module(recv):
            if name in nn_modules.SAME_MODULE_METHODS:
                return recv
            held = nn_modules.container_view(recv, name) if not args and not kwargs else None
            if held is not None:
                return held  # `self.heads.values()`, `self.blocks.children()`: the children it holds
            if name in nn_modules.MUTATORS:
                # `seq.append(layer)`, `m.add_module("x", layer)`: the variable's module no longer prints as known
                holder = n.func.value if isinstance(n.func, ast.Attribute) else None
                if isinstance(holder, ast.Name) and frame.env.get(holder.id) == recv:
                    frame.env[holder.id] = nn_modules.unprintable(recv)
                return UNK
        if name == "cuda":
            dev = f"cuda:{args[0].value}" if args and isinstance(args[0], Const) and isinstance(
                args[0].value, int) else "cuda"
            frame.add(Finding(GPU, (step(frame.rel, line, ".cuda() needs a CUDA device"),), gpu_count_of(dev)))
            return _on(recv, dev)
        if name in ("to", "to_empty", "register_buffer"):
            cands = list(args[:1]) + [kwargs[k] for k in ("device",) if k in kwargs]
            for c in cands:
                d = accel_device(c)
                if d:
                    frame.add(Finding(GPU, (step(frame.rel, line, f".{name}({d!r}) needs a {_accel_name(d)} "
                                                                 "device"),), gpu_count_of(d)))
                    return _on(recv, d) if name != "register_buffer" else TensorV(d)
            exprs = list(n.args[:1]) + [k.value for k in n.keywords if k.arg == "device"]
            for e, c in zip(exprs, cands, strict=False):
                if isinstance(c, Unresolved) and _smells_like_device(e) and not self._device_existing(e, frame):
                    frame.add(Finding(UNKNOWN, (step(frame.rel, line, f".{name}({ast.unparse(e)}) with a device "
                                                                     "the analysis cannot resolve"
                                                                     + _why_unknown(e, frame)),)))
            if name == "to" and self._module_object(recv, frame.world):
                return recv  # `Model().to(torch.float32)`, `.to("cpu")`: nn.Module.to returns the module itself
            for c in cands:
                d = device_of(c) if not isinstance(c, OneOf) else None
                if d:
                    return _on(recv, d) if name != "register_buffer" else TensorV(d)
            return recv if (isinstance(recv, (TensorV, NNModV)) or _printable_module(recv)) and \
                name != "register_buffer" else UNK
        if name == "type" and len(args) + len(kwargs) >= 1:
            # `x.type("torch.cuda.FloatTensor")`, `x.type(torch.cuda.HalfTensor)`: a CUDA tensor type is a copy on the
            # GPU (torch raises where there is none)
            t = args[0] if args else kwargs.get("dtype")
            text = t.value if isinstance(t, Const) and isinstance(t.value, str) else t.path if isinstance(t, Ext) \
                else None
            if text is not None and text.startswith("torch.cuda."):
                frame.add(Finding(GPU, (step(frame.rel, line, f".type({text!r}) makes a CUDA tensor"),)))
                return TensorV("cuda") if isinstance(recv, TensorV) else UNK
        if name in ("pin_memory", "record_stream"):
            if not (kwargs.get("device") and device_of(kwargs["device"]) == "cpu"):
                frame.add(Finding(GPU, (step(frame.rel, line, f".{name}() needs an accelerator"),)))
            return recv if isinstance(recv, TensorV) else UNK
        if name in MODULE_SELF_METHODS and self._module_object(recv, frame.world):
            return recv  # `model.cpu()`, `model.eval()`, `model.float()`: an in-repo module returns itself
        if name == "cpu":
            return _on(recv, "cpu")
        if (isinstance(recv, (TensorV, NNModV)) or _printable_module(recv)) and name in torch_api.SAME_DEVICE_METHODS \
                and "device" not in kwargs:
            return recv if name in SAME_SHAPE_METHODS or not isinstance(recv, TensorV) else TensorV(recv.device)
        if name == "size" and not args and not kwargs and isinstance(recv, TensorV) and recv.shape is not None:
            return Seq(tuple(Const(i) for i in recv.shape), SIZE)
        if name == "numel" and not args and not kwargs and isinstance(recv, TensorV) and recv.shape is not None:
            return Const(math.prod(recv.shape))
        # a method the analysis does not model (of an unknown object: `REGISTRY[key].quantize(m, device="cuda")`
        # where an entry is unknown): an accelerator passed as its device is a need, as for an external function
        self._ext_args_check(f".{name}", args, kwargs, n, frame)
        return UNK

    def _module_object(self, recv: Value, world: int) -> bool:
        """Whether every object `recv` may be is an instance of an in-repo torch module class (module_device.py):
        the torch.nn.Module methods it does not override return the object itself."""
        alts = alternatives(recv)
        return bool(alts) and all(isinstance(a, Inst) and any(is_module_base(c) for c in self.mro(a.cls, world))
                                  for a in alts)

    def _module_class_facts(self, cls: ClassV) -> ClassFacts | None:
        if cls not in self.module_class_facts:
            self.module_class_facts[cls] = class_facts(self.class_node(cls))
        return self.module_class_facts[cls]

    def _holds_own_device(self, v: Value | None, world: int) -> bool:
        """Whether every object `v` may be is an instance of an in-repo class, not a torch module, with a `device`
        attribute set on it (`TrainConfig(device=...)`)."""
        alts = alternatives(v) if v is not None else ()
        return bool(alts) and all(isinstance(a, Inst) and a.attr("device") is not None and not any(
            is_module_base(c) for c in self.mro(a.cls, world)) for a in alts)

    def _device_existing(self, e: ast.expr, frame: Frame) -> bool:
        """`x.device` of an existing tensor (devices._device_of_existing), or `self.device` of a torch module
        that the repository never sets (module_device.py): following it moves nothing to a new device."""
        if _device_of_existing(e):
            # unless `x` is an in-repo object other than a torch module that holds a `device` attribute of its own
            # (a configuration built from a dict the analysis could not follow): that device is chosen, not had
            return not (isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and self._holds_own_device(
                frame.env.get(e.value.id), frame.world))
        if not (isinstance(e, ast.Attribute) and e.attr == "device" and isinstance(e.value, ast.Name)
                and e.value.id == frame.self_name and e.value.id in frame.env):
            return False
        return device_is_module_own(
            frame.env[e.value.id], frame.world, self.mro, self._module_class_facts,
            lambda cls, name, world: self.class_lookup(cls, name, world) is not None
            or self.store_key(cls, name, world) is not None,
            lambda obj: self.getattr_v(obj, "device", frame, e) == EXISTING_DEVICE)

    def call_torch_testing(self, path: str, last: str, args: list[Value], kwargs: dict[str, Value], n: ast.AST,
                           frame: Frame) -> Value | None:
        """torch.testing._internal generators and decorators (see torch_testing.py); None: not one of them."""
        line = getattr(n, "lineno", 0)
        if last == "instantiate_device_type_tests" and args and isinstance(args[0], ClassV):
            cls = args[0]
            only = torch_testing.device_only_for(kwargs.get("only_for", args[3] if len(args) > 3 else None))
            exc = torch_testing.device_only_for(kwargs.get("except_for", args[2] if len(args) > 2 else None))
            if frame.env.get(cls.name) == cls:
                del frame.env[cls.name]
            for dev in torch_testing.DEVICE_TYPES:
                if (only is None or dev in only) and (exc is None or dev not in exc):
                    frame.env[cls.name + dev.upper()] = GenClassV(
                        cls, dev, step(frame.rel, line, f"instantiate_device_type_tests({cls.name}) makes "
                                                        f"{cls.name}{dev.upper()}"))
            return Const(None)
        if last == "instantiate_parametrized_tests" and args and isinstance(args[0], ClassV):
            self.param_classes.add(args[0])
            return args[0]
        if last in torch_testing.DTYPES_DECORATORS:
            dev = torch_testing.DTYPES_DECORATORS[last]
            kw = kwargs.get("device_type", Const(dev))
            return MarkV(torch_testing.DTYPES_MARK, tuple(args), (("device_type", kw),), step(frame.rel, line, last))
        if last == "parametrize":
            return MarkV(torch_testing.PARAMETRIZE_MARK, tuple(args), tuple(sorted(kwargs.items(),
                                                                                   key=lambda kv: kv[0])),
                         step(frame.rel, line, "parametrize"))
        if last == "subtest":
            decos = kwargs.get("decorators", args[2] if len(args) > 2 else None)
            name = kwargs.get("name", args[1] if len(args) > 1 else None)
            return ParamV((args[0] if args else kwargs.get("arg_values", UNK),),
                          tuple(decos.items) if isinstance(decos, Seq) else (),
                          name.value if isinstance(name, Const) and isinstance(name.value, str) else None)
        if last in torch_testing.OPAQUE_DECORATORS:
            return MarkV(torch_testing.OPAQUE_MARK, (), (), step(frame.rel, line, last))
        return torch_testing.dtype_helper(last, args, kwargs)

    def call_torch(self, path: str, args: list[Value], kwargs: dict[str, Value], n: ast.AST, frame: Frame) -> Value:
        line = getattr(n, "lineno", 0)
        last = path.rsplit(".", 1)[-1]
        if path.startswith("torch.nn.") and "device" not in kwargs and not (
                isinstance(n, ast.Call) and any(isinstance(a, ast.Starred) for a in n.args)
                and any(isinstance(a, Unresolved) for a in args)):
            # `torch.nn.Conv2d(3, 8, 2)`: a module that prints as torch prints it (an unknown `*args` may stand
            # for any number of arguments, an unknown `**kwargs` is a keyword no table entry has, and `device=`
            # is a device use, below)
            module = nn_modules.constructed(path, args, kwargs)
            if module is not None:
                return module
        if path == "torch.Size" and not kwargs and len(args) <= 1:
            # `Size((4, 3))` in a settings table: a tuple of ints that prints as `torch.Size([4, 3])` in an id
            items = args[0] if args else Seq(())
            if isinstance(items, Seq) and items.kind in ("tuple", "list", SIZE) and all(
                    isinstance(i, Const) and type(i.value) is int for i in items.items):
                return Seq(items.items, SIZE)
            return UNK
        if path in COMPILERS:
            # `torch.compile(fn)(x)`, `torch.jit.script(model)(x)`: the compiled function runs as the original does
            # (a decorator factory without the function, `torch.compile(mode=...)`, gives it back when applied)
            if not args:
                return PartialV(Ext(path), (), tuple(sorted(kwargs.items())))
            return script_function(args[0]) if path == "torch.jit.script" and isinstance(args[0], FuncV) else args[0]
        if path == "torch.jit.trace":
            # tracing runs the function (or module) on the example inputs now, and gives back what runs as it does:
            # an object without a `__name__` (pytest ids it by position), as a partial without arguments is
            fn = args[0] if args else kwargs.get("func")
            example = args[1] if len(args) > 1 else kwargs.get("example_inputs")
            if fn is None:
                return UNK
            if example is not None:
                inputs = list(example.items) if isinstance(example, Seq) and example.kind == "tuple" else [example]
                self.call(fn, inputs, {}, n, frame, "trace")
            return PartialV(fn)
        if path == "torch.get_default_device" and not args and not kwargs:
            # the CPU unless the test made it another: `torch.set_default_device("cuda")` and `with
            # torch.device("cuda"):` are needs of their own where they run, so on every path where the default is an
            # accelerator that need was found already
            return DeviceV("cpu")
        if path == "torch.device":
            if args:
                if any(isinstance(a, Const) and type(a.value) is int for a in alternatives(args[0])):
                    # `torch.device(0)` asks torch for the current accelerator's type: without one it raises
                    frame.add(Finding(GPU, (step(frame.rel, line, "torch.device(<index>) needs an accelerator"),)))
                d = device_of(args[0])
                if d and len(args) > 1 and isinstance(args[1], Const) and isinstance(args[1].value, int):
                    d = f"{d}:{args[1].value}"
                if d:
                    return DeviceV(d)
                if args[0] == EXISTING_DEVICE:
                    return EXISTING_DEVICE  # torch.device(p.device) of an existing tensor: still that device
                if isinstance(args[0], OneOf):
                    alts = [DeviceV(device_of(a)) if device_of(a) else a if a == EXISTING_DEVICE else UNK
                            for a in alternatives(args[0])]
                    return join_all(alts)
            t = kwargs.get("type")
            return DeviceV(t.value) if isinstance(t, Const) and isinstance(t.value, str) else UNK
        if path in ("torch.set_default_device", "torch.Generator", "torch.cuda.set_device",
                    "torch.set_default_tensor_type"):
            cand = args[0] if args else kwargs.get("device")
            d = accel_device(cand) if cand is not None else None
            named = cand.path if isinstance(cand, Ext) else cand.value if isinstance(cand, Const) else None
            if path == "torch.set_default_tensor_type" and isinstance(named, str) and ".cuda." in named:
                d = "cuda"  # torch.cuda.FloatTensor, or its name ("torch.cuda.FloatTensor")
            if path == "torch.cuda.set_device":
                d = d or "cuda"
            if path == "torch.Generator" and cand is None:
                return UNK
            if d:
                frame.add(Finding(GPU, (step(frame.rel, line, f"{path}({d!r}) needs a {_accel_name(d)} "
                                                              "device"),), gpu_count_of(d)))
            return UNK
        if path in ("torch.distributed.init_process_group", "torch.distributed.new_group",
                    "torch.distributed.device_mesh.init_device_mesh", "torch.distributed.init_device_mesh"):
            backend = args[0] if args else kwargs.get("backend", kwargs.get("device_type"))
            ws = kwargs.get("world_size")
            if path.endswith("init_device_mesh"):
                shape = args[1] if len(args) > 1 else kwargs.get("mesh_shape")
                if isinstance(shape, Seq) and all(isinstance(i, Const) for i in shape.items):
                    prod = 1
                    for i in shape.items:
                        prod *= int(i.value) if isinstance(i, Const) and isinstance(i.value, int) else 1
                    ws = Const(prod)
            b = backend.value if isinstance(backend, Const) and isinstance(backend.value, str) else ""
            if "nccl" in b or accel_device(Const(b)) if b else False:
                count = ws.value if isinstance(ws, Const) and isinstance(ws.value, int) else 1
                frame.add(Finding(GPU, (step(frame.rel, line, f"{path}({b!r}) needs CUDA devices"
                                                              + (f" (world size {count})" if count > 1 else "")),),
                                  max(count, 1)))
            return UNK
        if path == "torch.accelerator.device_index":
            index = args[0] if args else kwargs.get("device", UNK)
            if index != Const(None):  # (`device_index(None)` selects nothing: a no-op context)
                frame.add(Finding(GPU, (step(frame.rel, line, f"{path}() selects an accelerator"),)))
            return UNK
        api = torch_api.BY_PATH.get(path)
        if api is not None and path not in torch_api.DEVICE_ARG_APIS:
            if api.need != torch_api.CPU:
                count = _devices_named(path, args, kwargs)
                frame.add(Finding(GPU, (step(frame.rel, line, f"{path}() {api.note}"
                                             + (f" ({count} of them)" if count > 1 else "")),), count))
                return UNK
            if path in ("torch.autocast", "torch.amp.autocast", "torch.amp.GradScaler", "torch.cuda.stream"):
                return UNK
        if path.startswith(("torch.cuda.", "torch.accelerator.")) and api is None and last not in ("amp",):
            frame.add(Finding(UNKNOWN, (step(frame.rel, line, f"{path}() is not in the torch API table"),)))
            return UNK
        d = None
        for k in ("device",):
            if k in kwargs:
                d = accel_device(kwargs[k])
        if d:
            frame.add(Finding(GPU, (step(frame.rel, line, f"{path}(device={d!r}) needs a "
                                                          f"{_accel_name(d)} device"),), gpu_count_of(d)))
            return TensorV(d)
        if "device" in kwargs and isinstance(kwargs["device"], Unresolved) and isinstance(n, ast.Call):
            e = next((k.value for k in n.keywords if k.arg == "device"), None)
            # (any expression: `device=torch.device(args.device)`, `device=cfg["device"]` name a device as much as
            # `device=dev` does)
            if e is not None and not self._device_existing(e, frame):
                frame.add(Finding(UNKNOWN, (step(frame.rel, line, f"{path}(device={ast.unparse(e)}) with a "
                                                                  "device the analysis cannot resolve"
                                                                  + _why_unknown(e, frame)),)))
                return UNK
        if path == "torch.Tensor" and not kwargs:
            # the legacy constructor of a CPU tensor: `torch.Tensor([[1, 2], [3, 4]])`, `torch.Tensor(3, 4)`; only
            # of known data or sizes (anything else stays unknown, as before shapes were known)
            shape = data_shape(args[0]) if len(args) == 1 and isinstance(args[0], Seq) else factory_shape(
                "empty", args, kwargs)
            if shape is not None:
                return TensorV("cpu", shape)
        if last in torch_api.TENSOR_FACTORIES and truth(kwargs.get("pin_memory", Const(False))) is not False:
            # `torch.empty(n, pin_memory=True)` raises without an accelerator (a DataLoader's only warns)
            frame.add(Finding(GPU, (step(frame.rel, line, f"{path}(pin_memory=True) needs an accelerator to "
                                                          "page-lock memory"),)))
        if path in CUDA_BUILDS and _builds_cuda(path, args, kwargs):
            frame.add(Finding(GPU, (step(frame.rel, line, f"{path}() compiles CUDA code (nvcc and CUDA_HOME)"),)))
            return UNK
        if last in torch_api.TENSOR_FACTORIES:
            shape = factory_shape(last, args, kwargs) if path == f"torch.{last}" else None
            if last in ("tensor", "as_tensor") and args and isinstance(args[0], Seq):
                shape = data_shape(args[0])
            if "device" in kwargs:
                dv = device_of(kwargs["device"])
                if dv:
                    return TensorV(dv, shape)
            return TensorV("cpu", shape)
        if path.startswith(("torch.xpu.", "torch.mps.")) and api is None:
            frame.add(Finding(GPU, (step(frame.rel, line, f"{path}() needs that accelerator"),)))
        return UNK


# torch.utils.cpp_extension builders that compile CUDA sources when given some (CUDAExtension always): they need the
# CUDA toolkit (`OSError: CUDA_HOME environment variable is not set` on a CPU runner)
CUDA_BUILDS = frozenset({"torch.utils.cpp_extension.CUDAExtension", "torch.utils.cpp_extension.load",
                         "torch.utils.cpp_extension.load_inline"})


def _builds_cuda(path: str, args: list[Value], kwargs: dict[str, Value]) -> bool:
    """Whether this cpp_extension call compiles CUDA code: CUDAExtension, `with_cuda=True`, a `.cu`/`.cuh` source
    among `load`'s sources, or `load_inline`'s `cuda_sources`. An undecided source list is not (most builds in
    tests are of C++ sources)."""
    if path.endswith("CUDAExtension") or truth(kwargs.get("with_cuda", Const(None))) is True:
        return True
    if path.endswith("load_inline"):
        cuda = args[2] if len(args) > 2 else kwargs.get("cuda_sources")
        return cuda is not None and truth(cuda) is not False  # (`None` and "" are False)
    sources = args[1] if len(args) > 1 else kwargs.get("sources")
    items = sources.items if isinstance(sources, Seq) else (sources,) if sources is not None else ()
    return any(isinstance(i, Const) and isinstance(i.value, str) and i.value.endswith((".cu", ".cuh")) or isinstance(
        i, PathV) and i.text.endswith((".cu", ".cuh")) for i in items)


# the argument of these that names the CUDA devices they use (a device index, or a list of them): (position, keyword)
_DEVICES_ARGUMENT = {
    "torch.cuda.device": (0, "device"), "torch.nn.parallel.scatter": (1, "target_gpus"),
    "torch.nn.parallel.scatter_gather.scatter": (1, "target_gpus"), "torch.nn.parallel.replicate": (1, "devices"),
    "torch.cuda.comm.broadcast": (1, "devices"), "torch.cuda.comm.scatter": (1, "devices"),
}


def _devices_named(path: str, args: list[Value], kwargs: dict[str, Value]) -> int:
    """How many GPUs a call needs by the devices it names: the highest index plus one (`with
    torch.cuda.device(2)`: 3; `scatter(x, target_gpus=[0, 1])`: 2); 1 when it names none the analysis knows."""
    pos, kw = _DEVICES_ARGUMENT.get(path, (-1, ""))
    v = args[pos] if 0 <= pos < len(args) else kwargs.get(kw)
    items = v.items if isinstance(v, Seq) else (v,) if v is not None else ()
    counts = [gpu_count_of(d) for d in (accel_device(i) for i in items) if d]
    return max(counts, default=1)


def _smells_like_device(e: ast.expr) -> bool:
    """Whether an argument of `.to(...)` names a device by its spelling: `device`, `self.dev`, and calls of such names
    (`torch.device(name)`, `get_device()`)."""
    if isinstance(e, ast.Call):
        e = e.func
    name = e.attr if isinstance(e, ast.Attribute) else e.id if isinstance(e, ast.Name) else ""
    low = name.lower()
    return low in DEVICE_NAME_HINTS or low.endswith("device") or low.startswith("device")


def _why_unknown(e: ast.expr, frame: Frame) -> str:
    """A hint at where an unresolved device came from (a parameter nobody provides, an attribute...)."""
    if isinstance(e, ast.Name):
        if e.id in frame.env:
            return f" ({e.id} is a parameter or local with no known value: no fixture, caller or default gives one)"
        return f" ({e.id} is not defined in the repository)"
    if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == frame.self_name:
        return f" (self.{e.attr} is not set in setUp/__init__ to a value the analysis can follow)"
    if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and isinstance(frame.env.get(e.value.id), Inst):
        obj = frame.env[e.value.id]
        assert isinstance(obj, Inst)
        return f" ({e.value.id} is a {obj.cls.name} whose {e.attr} the analysis cannot follow)"
    if isinstance(e, ast.Attribute):
        return f" ({ast.unparse(e.value)[:40]} comes from outside the repository)"
    return ""


def _on(recv: Value, device: str) -> Value:
    """What moving recv to device gives: a tensor there (of the same shape), or the same torch.nn module (it
    prints the same)."""
    if isinstance(recv, NNModV):
        return nn_modules.moved(recv, device)
    if isinstance(recv, Inst) and recv.nn is not None:
        return recv.moved(device)
    return TensorV(device, recv.shape if isinstance(recv, TensorV) else None)


# torch.nn.Module methods that return the module itself and move it to no accelerator (`.to()` is decided by its
# arguments, above): an in-repo module class keeps its object through them (`apply` runs any function on every
# submodule: not followed)
MODULE_SELF_METHODS = nn_modules.SAME_MODULE_METHODS | {"cpu", "float", "double", "half", "bfloat16", "type"}

# methods of torch.api.SAME_DEVICE_METHODS whose result also has the receiver's shape (the others keep the device)
SAME_SHAPE_METHODS = frozenset({"bool", "clone", "contiguous", "detach", "double", "float", "half", "int", "long",
                                "requires_grad_"})
# factories whose size is their positional arguments or one sequence of them (`rand(3, 4)`, `zeros((3, 4))`), or
# the `size=` keyword
_SIZED_FACTORIES = frozenset({"rand", "randn", "zeros", "ones", "empty"})


def factory_shape(name: str, args: list[Value], kwargs: dict[str, Value]) -> tuple[int, ...] | None:
    """The shape of `torch.<name>(...)` when its size is given by constant ints (`rand(3, 4)`, `rand((3, 4))`,
    `rand(size=(3, 4))`, `randint(0, 5, (3,))`, `full((2, 2), 1.0)`); None otherwise."""
    size: Value | list[Value] | None = kwargs.get("size")
    if size is None and name in _SIZED_FACTORIES and args:
        size = args[0] if len(args) == 1 and isinstance(args[0], Seq) else list(args)
    elif size is None and name == "randint" and len(args) in (2, 3):
        size = args[-1]
    elif size is None and name == "full" and args:
        size = args[0]
    items = size.items if isinstance(size, Seq) and size.kind in ("tuple", "list", SIZE) else size
    if not isinstance(items, (list, tuple)) or not all(
            isinstance(i, Const) and type(i.value) is int and 0 <= i.value for i in items):
        return None
    return tuple(int(i.value) for i in items)  # type: ignore[union-attr]


def data_shape(v: Value, depth: int = 0) -> tuple[int, ...] | None:
    """The shape of a tensor made from nested lists or tuples of numbers (`torch.tensor([[1, 2], [3, 4]])` is
    (2, 2)); None when ragged, not numbers, or deeper than a tensor's 64 dimensions."""
    if isinstance(v, Const) and type(v.value) in (int, float, bool):
        return ()
    if not (isinstance(v, Seq) and v.kind in ("list", "tuple")) or depth > 64:
        return None
    inner = [data_shape(i, depth + 1) for i in v.items]
    if any(i is None for i in inner) or len(set(inner)) > 1:
        return None
    return (len(v.items), *(inner[0] or ())) if inner else (0,)


def _printable_module(v: Value) -> bool:
    """An in-repo torch.nn.Module subclass whose print is known (values.Inst.nn): `.to()`, `.double()`... of it is
    the same module, as of a torch.nn one."""
    return isinstance(v, Inst) and v.nn is not None
