"""The interpreter's calls to code outside the repository other than torch: pytest and unittest marks and
skips, mock.patch, parameterized, functools, os.environ, builtins (getattr, super, type, isinstance...),
the naming conventions of installed packages (conventions.py); and methods of objects the analysis does not
model that are not torch's: pytest/unittest ones (`config.getoption`, `self.skipTest`, `monkeypatch.setattr`)
and those of known strings, dicts and lists.
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import itertools
import math
import os
import re
import string

from tools.classify import (
    click_model,
    conventions,
    limits,
    log_levels,
    nn_modules,
    omegaconf_model,
    torch_api,
    typer_model,
    versions,
)
from tools.classify.argparse_model import ARGV, declared_options, new_parser
from tools.classify.devices import (
    EXISTING_CUDA_VALUES,
    EXISTING_DEVICE,
    EXISTING_IS_CUDA,
    TYPE_PREFIX,
    _accel_name,
    accel_device,
    existing_cuda_flag,
    gpu_count_of,
    is_tensor,
    isinstance_of,
    shown_constant,
    spelled,
    truth,
    type_path,
)
from tools.classify.evidence import (
    GPU,
    GPU_REASON,
    MOCK,
    NVML_KEY,
    PROCESS_KEY,
    SKIP,
    UNKNOWN,
    Finding,
    names_accelerator,
    step,
)
from tools.classify.guards import off_cuda_taken, reached_package
from tools.classify.installed import is_installed, top_package
from tools.classify.interp_base import (
    AUTOGRAD_APPLY,
    DYNAMIC,
    MOCK_OBJECT,
    PROPERTY,
    UNIT_BUDGET,
    BudgetExceeded,
    Frame,
    InterpBase,
    _call_requirement,
    _last_name,
    _py,
    chosen_by_name,
    decorated_object,
)
from tools.classify.optional_imports import (
    ABSENT,
    SOFT_DEPENDENCY_CHECKS,
    cuda_build,
    distribution_installed,
    soft_dependency_names,
)
from tools.classify.plugins import NAMESPACE_CONSTRUCTORS, NAMESPACE_POS, NAMESPACE_REL
from tools.classify.programs import PROCESS_CALLS, RUNPY_CALLS, Program, parses, program_of
from tools.classify.test_state import environ_get, environ_value, patch_module_attr, set_environ
from tools.classify.values import (
    MAX_ALTERNATIVES,
    NORETURN,
    NOT_LITERAL,
    SLICE,
    UNKNOWN_ID,
    UNKNOWN_SCALAR,
    ClassV,
    Const,
    DeviceV,
    DictV,
    EnumV,
    Ext,
    FuncV,
    Inst,
    KnownTruth,
    MarkV,
    MockV,
    ModV,
    NNModV,
    OneOf,
    ParamV,
    PartialV,
    PathV,
    RequestV,
    ReqV,
    Seq,
    SkipV,
    SuperV,
    TensorV,
    TestFnV,
    Unresolved,
    Value,
    alternatives,
    bounded,
    decided_key,
    exact_keys,
    iterated,
    join_all,
    keywords_of,
    literal_of,
    module_children,
    undecided_entry,
)
from tools.classify.values import UNRESOLVED as UNK

# what makes a mock object (MOCK_OBJECT): unittest.mock's classes, also as pytest-mock's `mocker.MagicMock()`
MOCK_FACTORIES = frozenset({"Mock", "MagicMock", "NonCallableMock", "NonCallableMagicMock", "AsyncMock",
                            "PropertyMock", "create_autospec"})
REGEX_PREFIX = "<regex>"  # Ext(REGEX_PREFIX + pattern): re.compile(pattern)
PARAMETERIZED_EXPAND = "<parameterized.expand>"  # MarkV name of @parameterized.expand([...])
# MarkV name of the decorator `parameterized_class(attrs, input_values, class_name_func=...)` returns: a value that
# remembers its arguments, so that a class decorated with it however it was reached (`@expand()` returning it,
# `PC = parameterized_class(...)` then `@PC`) is expanded like the literal form (interp_statements)
PARAMETERIZED_CLASS = "<parameterized_class>"
# builtins that call a method of their argument's class: `len(x)` is `type(x).__len__(x)`
OWN_METHOD_BUILTINS = {"len": "__len__", "abs": "__abs__", "hash": "__hash__", "bool": "__bool__",
                       "round": "__round__", "reversed": "__reversed__"}
MAX_PREFIX_SORTED = 64  # tuples sorted by their known leading elements (_ordered_by_prefix)
REGEX_MATCHERS = frozenset({"re.match", "re.fullmatch", "re.search"})
# attributes every torch.Tensor has (`hasattr(x, "device")` of a tensor)
TENSOR_ATTRIBUTES = frozenset({"device", "dtype", "shape", "is_cuda", "ndim", "grad", "data", "requires_grad",
                               "layout", "T", "size", "dim", "to", "cuda", "cpu"})
MAX_REGEX = 256  # characters of a pattern or a text matched (regex_match)
# a repeated group (`(a+)+`, `(a|aa)*`, `((a+))+`) or a backreference: may backtrack without bound (a group under
# `?` is not repeated: `cuda(:\d+)?$` runs)
_BACKTRACKS = re.compile(r"\)\s*[*+{]|\\[1-9]")
# characters of a text `re.sub` rewrites with a pattern of one quantifier (`\s+`): its cost is at most quadratic
MAX_REWRITTEN = 2048
STR_METHODS = frozenset({"startswith", "endswith", "lower", "upper", "strip", "lstrip", "rstrip", "split",
                         "rsplit", "partition", "rpartition", "replace", "casefold", "find", "rfind", "count",
                         "isdigit", "removeprefix", "removesuffix", "title", "capitalize", "swapcase", "isalpha",
                         "isalnum", "isupper", "islower", "isspace", "isidentifier", "isnumeric", "isdecimal",
                         "encode"})


# The `ids=` entry make_mark gives a parametrize case whose unknown values are strings built at run time: pytest
# spells them by their text, so no id is made for them (collect.parametrize_cases)
UNKNOWN_TEXT = Ext("<unknown text id>")
# The same for a value that is a Python number made at run time (`np.ones(1).item()`): pytest spells it with
# str(), digits that cannot be mistaken for a name-like id (collect.NUMBER_ID)
UNKNOWN_NUMBER = Ext("<unknown number id>")


# pydantic's constrained numbers, by name: the builtin a call of one converts with
_PYDANTIC_NUMBERS = {f"{kind}{t}": t.lower()
                     for kind in ("Positive", "Negative", "NonNegative", "NonPositive", "Strict")
                     for t in ("Int", "Float")} | {"FiniteFloat": "float"}


def _pydantic_number(path: str) -> str | None:
    """"float" for `pydantic.PositiveFloat`, "int" for `pydantic.v1.PositiveInt`...; None for anything else."""
    module, _, name = path.rpartition(".")
    if module in ("pydantic", "pydantic.v1", "pydantic.types", "pydantic.v1.types"):
        return _PYDANTIC_NUMBERS.get(name)
    return None


# External functions that call their first argument before they return: path -> how many arguments they pass it
CALLS_ITS_FUNCTION = {
    "functools.reduce": 2, "torch.utils._pytree.tree_map": 1, "torch.utils._pytree.tree_map_only": 1,
    "torch.autograd.gradcheck": 1, "torch.autograd.gradgradcheck": 1,
    "torch.autograd.functional.jacobian": 1, "torch.autograd.functional.hessian": 1, "optree.tree_map": 1,
    "jax.tree_util.tree_map": 1, "timeit.timeit": 0, "timeit.repeat": 0, "timeit.Timer": 0,
}
# torch's activation checkpointing: `checkpoint(fn, *args, use_reentrant=False)` runs fn(*args) now (the options are
# checkpoint's own)
CHECKPOINTS = frozenset({"torch.utils.checkpoint.checkpoint"})
CHECKPOINT_OPTIONS = frozenset({"use_reentrant", "preserve_rng_state", "context_fn", "determinism_check", "debug"})
# Methods that run the callable they are given, on objects the analysis does not model: an executor's or a process
# pool's `submit(fn, *args)` / `map(fn, xs)`, pytest-benchmark's `benchmark.pedantic(fn, args=...)`, asyncio's
# `loop.run_in_executor(executor, fn, *args)` (the position of the callable)
# torch's hook registrations (on a module, a tensor): the positional arguments torch calls the hook with
HOOK_ARGUMENTS = {"register_forward_hook": 3, "register_forward_pre_hook": 2, "register_full_backward_hook": 3,
                  "register_full_backward_pre_hook": 2, "register_backward_hook": 3, "register_hook": 1,
                  "register_post_accumulate_grad_hook": 1}
RUNS_ITS_CALLABLE = {"submit": 0, "map": 0, "imap": 0, "imap_unordered": 0, "starmap": 0, "apply": 0,
                     "apply_async": 0, "pedantic": 0, "run_in_executor": 1}
MAPS_ITS_CALLABLE = frozenset({"map", "imap", "imap_unordered"})  # ...on each item of what follows it
# Function transforms whose result calls the function given (the device work is the function's)
RETURNS_ITS_FUNCTION = frozenset({
    "torch.func.vmap", "torch.vmap", "functorch.vmap", "torch.func.grad", "torch.func.grad_and_value",
    "torch.func.jacrev", "torch.func.jacfwd", "torch.func.hessian", "functools.cache",
})


# Functions that run a function in other processes or threads: (the parameter order of its function and arguments)
STARTS_WORKERS = {
    "torch.multiprocessing.spawn": ("fn", "args", "nprocs"), "torch.multiprocessing.start_processes": (
        "fn", "args", "nprocs"),
    "multiprocessing.Process": ("group", "target", "name", "args"), "torch.multiprocessing.Process": (
        "group", "target", "name", "args"),
    "threading.Thread": ("group", "target", "name", "args"),
}
MAX_RANKS = 8  # ranks a spawned worker is analysed with, as a choice of values (values.MAX_ALTERNATIVES)


def _callable(v: Value | None) -> bool:
    """An in-repo function or lambda, or a bound method of one: what a higher-order call runs."""
    return isinstance(v, FuncV)


# NVIDIA's management library (nvidia-ml-py's `pynvml`, the older `py3nvml`): every `nvml*` function fails without the
# driver's libnvidia-ml (NVMLError_LibraryNotFound, or NVMLError_Uninitialized after a failed nvmlInit)
NVML_FUNCTIONS = ("pynvml.nvml", "py3nvml.py3nvml.nvml", "py3nvml.nvml")
# GPUtil's listings of the machine's GPUs (it runs nvidia-smi and returns [] when that fails)
GPUTIL_LISTS = frozenset({"GPUtil.getGPUs", "GPUtil.getAvailable", "GPUtil.GPUtil.getGPUs",
                          "GPUtil.GPUtil.getAvailable"})
# calls that declare a dataclass, attrs or pydantic field in a class body (their value: the field's default)
FIELD_DECLARATIONS = frozenset({"dataclasses.field", "attr.ib", "attr.attrib", "attr.field", "attrs.field",
                                "pydantic.Field", "pydantic.fields.Field"})
# the names pytest adds to a module's globals to evaluate a skipif condition given as a string
CONDITION_GLOBALS: dict[str, Value] = {"os": Ext("os"), "sys": Ext("sys"), "platform": Ext("platform")}
MAX_MAPPED = 256  # rows of `map(fn, xs)` called one by one (as many as a container-filling loop unrolls)


# classes whose methods a test may call unbound, the object first (`torch.nn.Module.to(model, "cuda")`)
UNBOUND_METHOD_OWNERS = ("torch.Tensor.", "torch.nn.Module.", "torch.nn.modules.module.Module.")


class ExternalMixin(InterpBase):
    """Calls leaving the repository, torch excepted; a part of dataflow.Interp."""

    def _condition_strings(self, conds: list[Value], nodes: list[ast.expr], frame: Frame
                           ) -> tuple[list[Value], list[ast.expr]]:
        """`skipif("not torch.cuda.is_available()")`: pytest evaluates a condition given as a string as Python
        in the test module's globals (with `os`, `sys` and `platform` where the module lacks them); so does this,
        each string parsed and evaluated here (a string that does not parse is unknown). Other conditions and
        their nodes are kept."""
        values, exprs = list(conds), list(nodes)
        scratch = dataclasses.replace(frame, env={**CONDITION_GLOBALS, **frame.env}, findings=[])
        for i, c in enumerate(conds):
            if not (isinstance(c, Const) and isinstance(c.value, str)):
                continue
            try:
                expr = ast.parse(c.value.strip(), mode="eval").body
            except (SyntaxError, ValueError):
                values[i] = UNK
                continue
            if i < len(nodes):
                ast.increment_lineno(expr, nodes[i].lineno - 1)  # (steps name the mark's line)
                exprs[i] = expr
            values[i] = self.ev(expr, scratch)
        return values, exprs

    def make_mark(self, name: str, args: list[Value], kwargs: dict[str, Value], n: ast.AST, frame: Frame) -> Value:
        where = step(frame.rel, getattr(n, "lineno", 0), "")
        if name == "skipif":
            conds = list(args) + ([kwargs["condition"]] if "condition" in kwargs else [])
            nodes = _cond_nodes(n)
            if any(isinstance(c, Const) and isinstance(c.value, str) for c in conds):
                conds, nodes = self._condition_strings(conds, nodes, frame)
            ts = [truth(c) for c in conds]
            active = True if any(t is True for t in ts) else (None if any(t is None for t in ts) else False)
            src = _src(n)
            off = any(t is True and off_cuda_taken(c, True, availability=False)
                      for t, c in zip(ts, nodes, strict=False))
            return SkipV(active, where + f"skipif({src})", _cuda_text(src), off, always=_literally(nodes, True),
                         vram_gb=memory_bound_gib(nodes))
        if name == "skip":
            return SkipV(True, where + "skip", always=True,
                         gpu_reason=_names_accelerator(kwargs.get("reason", args[0] if args else None)))
        req = conventions.mark_requirement(name, [_py(a) for a in args], {k: _py(v) for k, v in kwargs.items()})
        if req is not None:
            return ReqV(req.gpu_count, req.vram_gb, where + req.note, req.manual, req.cpu, req.hint_only)
        if name == "parametrize" and len(args) < 3 and "ids" not in kwargs and isinstance(n, ast.Call):
            # a value spelled as a string (or number) whose text is not known: pytest's id is that text, so that
            # case has none
            unknown: list[Value] = []
            for leaves in _text_leaves(n):
                kinds = {kind for leaf, kind in leaves if not isinstance(self.ev(leaf, frame), Const)}
                unknown.append(UNKNOWN_TEXT if "text" in kinds else UNKNOWN_NUMBER if kinds else Const(None))
            if any(u != Const(None) for u in unknown):
                kwargs = {**kwargs, "ids": Seq(tuple(unknown), "list")}
        return MarkV(name, tuple(args), tuple(sorted(kwargs.items(), key=lambda kv: kv[0])), where)

    def _def_of(self, fn: Value) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """The `def` of an in-repo function or test; None for anything else."""
        if isinstance(fn, TestFnV):
            rel, pos = fn.key[0], fn.key[1:]
        elif isinstance(fn, FuncV):
            rel, pos = fn.rel, fn.pos
        else:
            return None
        node = self.source.module(rel).defs.get(pos)
        return node if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None

    def _arg_names(self, fn: Value) -> list[str] | None:
        """The positional parameter names of an in-repo function or test, as `inspect.getfullargspec(f).args`
        lists them (a decorator's wrapper is not followed: getfullargspec does not follow `__wrapped__`)."""
        node = self._def_of(fn)
        return None if node is None else [a.arg for a in (*node.args.posonlyargs, *node.args.args)]

    def _signature_names(self, fn: Value, world: int) -> list[str] | None:
        """The parameter names `inspect.signature(fn).parameters` lists, in order, for an in-repo function (a
        bound method without its first), or class (its dataclass fields, else its in-repo `__init__` without
        `self`); None for anything else (an external callable, a class whose constructor is not in the
        repository, a decorated function whose wrapper may change what signature reports); a torch optimizer's
        from torch_api.OPTIMIZER_PARAMETERS."""
        if isinstance(fn, Ext) and fn.path in torch_api.OPTIMIZER_PARAMETERS:
            return list(torch_api.OPTIMIZER_PARAMETERS[fn.path])
        if isinstance(fn, ClassV):
            generated = self.generated_init(fn, world)
            if generated is not None:
                return [f.keyword for f in generated[0].fields] if generated[0].positional else None
            init = self.class_lookup(fn, "__init__", world)
            if not isinstance(init, FuncV):
                return None
            names = self._signature_names(init, world)
            return names[1:] if names else None
        node = self._def_of(fn) if isinstance(fn, FuncV) else None
        if not isinstance(fn, FuncV) or node is None or node.decorator_list:
            return None
        a = node.args
        names = [x.arg for x in (*a.posonlyargs, *a.args)]
        names += [a.vararg.arg] if a.vararg else []
        names += [x.arg for x in a.kwonlyargs] + ([a.kwarg.arg] if a.kwarg else [])
        return names[1:] if fn.bound is not None and names else names

    def _find_spec(self, name: Value, frame: Frame) -> Value | None:
        """`importlib.util.find_spec("x")` of a top-level module outside the repository: None where it is not
        installed, a spec (not None) where it is (optional_imports.py); None here when not decided."""
        if not (isinstance(name, Const) and isinstance(name.value, str) and name.value.isidentifier()):
            return None
        got = self.source.external_presence(name.value, frame.rel, frame.rel)
        if got is None:
            return None
        if got == ABSENT and not self.absent_in_world(name.value, frame.world):
            return None  # (a CUDA build may be there on a GPU machine)
        return Const(None) if got == ABSENT else KnownTruth(True)  # (a spec is an object: truthy, not None)

    def absent_in_world(self, dotted: str, world: int) -> bool:
        """Whether a module missing where the classifier runs is missing in `world` too: yes, but for a CUDA build's
        module in a world with GPUs (optional_imports.cuda_build), which makes the answer a read of the world."""
        if not cuda_build(dotted):
            return True
        self.world_reads += 1
        return not world

    def _package_missing(self, name: str, frame: Frame) -> bool:
        """A package `_check_soft_dependencies` names is missing: no distribution of that name and no module of
        its import name (`cpflows`), so installing either recomputes the result (module presence is recorded)."""
        module = name.replace("-", "_").lower()
        return module.isidentifier() and self.source.external_presence(module, frame.rel, frame.rel) == ABSENT \
            and not distribution_installed(name)

    def call_ext(self, path: str, args: list[Value], kwargs: dict[str, Value], n: ast.AST, frame: Frame) -> Value:
        line = getattr(n, "lineno", 0)
        if path.startswith(MOCK_OBJECT) or (path.rsplit(".", 1)[-1] in MOCK_FACTORIES and "mock" in path):
            return Ext(MOCK_OBJECT)
        if path.startswith(UNBOUND_METHOD_OWNERS) and args and isinstance(n, ast.Call):
            # `nn.Module.to(model, "cuda")`, `torch.Tensor.to(x, "cpu")`: the method, called unbound on its object
            method = path[len(next(o for o in UNBOUND_METHOD_OWNERS if path.startswith(o))):]
            if "." not in method:
                return self.method_call(args[0], method, args[1:], kwargs, n, frame)
        if path == AUTOGRAD_APPLY and args and isinstance(args[0], ClassV):
            return self.autograd_apply(args[0], args[1:], kwargs, n, frame)
        if path == FIELD_FACTORY and len(args) == 1 and not kwargs:
            return self.call(args[0], [], {}, n, frame, "default_factory")  # a field's factory, as an object is made
        if path in OPERATOR_GETTERS or path in (ATTRGETTER_CALL, METHODCALLER_CALL):
            return self._operator_getter(path, args, kwargs, n, frame)
        if path.startswith(DYNAMIC):
            frame.add(Finding(UNKNOWN, (step(frame.rel, line, "calls") + f" {path[len(DYNAMIC):]}",)))
            return args[0] if len(args) == 1 and not kwargs and isinstance(args[0], TestFnV) else UNK
        if path.startswith(NVML_FUNCTIONS):
            frame.add(Finding(GPU, (step(frame.rel, line, f"{path}() calls NVIDIA's management library, which needs an "
                                                         "NVIDIA driver"),), key=NVML_KEY))
            return UNK
        if path in GPUTIL_LISTS:
            # GPUtil lists the GPUs nvidia-smi reports: none without a driver (its failure is caught inside)
            self.world_reads += 1
            return Seq((), "list") if frame.world == 0 else UNK
        if path == "GPUtil.getFirstAvailable":
            self.world_reads += 1
            if frame.world == 0:
                frame.add(Finding(GPU, (step(frame.rel, line, f"{path}() raises without an available GPU"),)))
            return UNK
        if runs_nvidia_smi(path, args, kwargs):
            frame.add(Finding(GPU, (step(frame.rel, line, f"{path}() runs nvidia-smi, which needs an NVIDIA driver"),),
                              key=PROCESS_KEY))
        if path == "shutil.which" and len(args) == 1 and isinstance(args[0], Const) and isinstance(
                args[0].value, str) and os.path.basename(args[0].value) == "nvidia-smi":
            # `HAS_GPU = shutil.which("nvidia-smi") is not None`: installed with the NVIDIA driver only
            self.world_reads += 1
            return Const(None) if frame.world == 0 else Const("/usr/bin/nvidia-smi")
        if path in PROCESS_CALLS or path in RUNPY_CALLS:
            self._run_program(path, args, kwargs, line, frame)
        if not kwargs:
            made = versions.construct(path, args)
            if made is not None:
                return made
        if path in FIELD_DECLARATIONS:
            # a class attribute holding a field's default (dataclass_fields.py): the value, or what the factory
            # makes (values are immutable: one product stands for each instance's)
            return self._field_default(path, args, kwargs, n, frame)
        if path == "importlib.util.find_spec" and len(args) == 1 and not kwargs:
            got = self._find_spec(args[0], frame)
            if got is not None:
                return got
        if path in SOFT_DEPENDENCY_CHECKS and set(kwargs) <= {"severity", "obj", "msg"} and kwargs.get(
                "severity") in (Const("none"), Const("warning")):
            names = soft_dependency_names([a.value if isinstance(a, Const) else None for a in args])
            if names is not None and any(self._package_missing(n, frame) for n in names):
                return Const(False)  # (True would need every version, and import names equal to PyPI's)
            return UNK
        number = _pydantic_number(path)
        if number and len(args) == 1 and not kwargs and isinstance(args[0], Const):
            # `PositiveFloat(1.5)`: pydantic's constrained numbers are `Annotated[float, Gt(0)]` (v2: calling one
            # calls float) or float/int subclasses (v1): a number, which pytest ids by its value
            return self.call_builtin(number, args, {}, n, frame)
        if path == "dataclasses.fields" and len(args) == 1 and not kwargs and isinstance(args[0], (ClassV, Inst)):
            # `{f.name for f in fields(cls)}`: objects whose `name` is each field's
            names = self.dataclass_field_names(args[0] if isinstance(args[0], ClassV) else args[0].cls, frame.world)
            if names is not None:
                return Seq(tuple(_namespace({"name": Const(f)}) for f in names), "tuple")
        if path == "argparse.ArgumentParser":
            return new_parser()  # (argparse_model.py: its options, as add_argument adds them)
        if path in ("typer.run", "typer.main.run") and len(args) == 1 and isinstance(args[0], FuncV) and not kwargs:
            return self.typer_run(args[0], n, frame)
        if click_model.is_click(path) or typer_model.is_typer(path):
            got = click_model.ext_call(path, args, kwargs) if click_model.is_click(path) else \
                typer_model.ext_call(path, args, kwargs)
            if got is not None:
                return got
        if path == "functools.partial" and args:
            return PartialV(args[0], tuple(args[1:]), tuple(sorted(kwargs.items(), key=lambda kv: kv[0])))
        if path in ("numpy.float64", "numpy.double") and len(args) == 1 and not kwargs and isinstance(
                args[0], Const) and type(args[0].value) in (int, float):
            return Const(float(args[0].value))  # a float subclass: pytest ids it by its value (`np.float32` not)
        if path == "typing.cast" and len(args) == 2 and not kwargs:
            return args[1]  # `cast(Literal["cpu", "cuda"], device.type)`: the value itself
        if path.startswith("math.") and path[len("math."):] in _MATH_FUNCTIONS and not kwargs:
            return _math(path[len("math."):], args)
        if path == "itertools.product" and args and set(kwargs) <= {"repeat"}:
            # `product(xs, repeat=2)` is `product(xs, xs)`
            repeat = kwargs.get("repeat", Const(1))
            if not (isinstance(repeat, Const) and type(repeat.value) is int and 0 <= repeat.value <= 16):
                return UNK
            return _product([_characters(a) for a in args] * repeat.value)
        if path in _CHOOSING and 1 <= len(args) <= 2 and not kwargs:
            return _choose(path, [_characters(args[0]), *args[1:]])
        if path in CHECKPOINTS and args and self._runs_as_callable(args[0], frame.world):
            # `checkpoint(self.block, x, use_reentrant=False)`: the block runs now, on these arguments
            given = {k: v for k, v in kwargs.items() if k not in CHECKPOINT_OPTIONS}
            return self.call(args[0], list(args[1:]), given, n, frame, "checkpoint")
        if path in CALLS_ITS_FUNCTION and args and self._runs_as_callable(args[0], frame.world):
            # `functools.reduce(f, xs)`, `tree_map(f, tree)`: f runs now, on what the items may be
            self.call(args[0], [UNK] * CALLS_ITS_FUNCTION[path], {}, n, frame, path.rsplit(".", 1)[-1])
            return UNK
        if path in STARTS_WORKERS:
            self._run_worker(path, args, kwargs, n, frame)
        if path in RETURNS_ITS_FUNCTION and len(args) == 1 and self._runs_as_callable(args[0], frame.world):
            return args[0]  # `torch.func.vmap(f)(x)`: calling the transform calls f (on slices of x)
        if path in RANDOM_DRAWS:
            got = _drawn(path, args, kwargs)
            if got is not None:
                return got
        if path in ("inspect.signature", "inspect.Signature.from_callable") and len(args) == 1 and not kwargs:
            # `name in inspect.signature(Envoy.__init__).parameters` (nnsight), `signature(cls).parameters`
            params = self._signature_names(args[0], frame.world)
            if params is not None:
                return _namespace({"parameters": DictV(tuple((Const(p), UNK) for p in params))})
        if path == "inspect.isclass" and len(args) == 1 and not kwargs:
            return _is_class_value(args[0])
        if path == "inspect.getmembers" and len(args) in (1, 2) and not kwargs and isinstance(args[0], ModV) and \
                args[0].rel:
            return self._module_members(args[0], args[1] if len(args) == 2 else None, n, frame)
        if path == "inspect.getfullargspec" and len(args) == 1 and not kwargs:
            names = self._arg_names(args[0])  # `",".join(inspect.getfullargspec(test_fn).args)`: argnames
            return _namespace({"args": Seq(tuple(Const(a) for a in names), "list")}) if names is not None else UNK
        if path in ("copy.copy", "copy.deepcopy") and len(args) == 1 and not kwargs:
            # values are immutable: a copy (shallow or deep) is the same value; `d = copy.deepcopy(setting);
            # d["device"] = dev` rebinds `d` alone (bind), so the original keeps its items. An in-repo
            # `__deepcopy__`/`__copy__` runs (what it does counts), its result left aside
            self.call_own_method(args[0], "__deepcopy__" if path == "copy.deepcopy" else "__copy__",
                                 [DictV(())] if path == "copy.deepcopy" else [], n, frame)
            return args[0]
        if path == "collections.OrderedDict":
            return _dict_of(args, kwargs)
        if path in ("weakref.WeakValueDictionary", "weakref.WeakKeyDictionary") and not args and not kwargs:
            return DictV(())  # a cache (`_type_cache.get(key)` finds nothing the first time: the value is computed)
        if path in NAMESPACE_CONSTRUCTORS and not args:
            return _namespace(kwargs)
        if path == "re.compile" and args and isinstance(args[0], Const) and isinstance(args[0].value, str):
            return Ext(REGEX_PREFIX + args[0].value)  # a parametrize value: pytest ids it by its pattern
        if path in REGEX_MATCHERS and len(args) == 2 and not kwargs:
            return regex_match(path[len("re."):], args[0], args[1])
        if path == "re.sub" and len(args) == 3 and not kwargs:
            return regex_sub(args[0], args[1], args[2])  # `re.sub(r"\s+", " ", raw)` in a case's printed name
        got = self.data_call(path, args, kwargs, frame)
        if got is not None:
            return got
        if path in omegaconf_model.ATTRIBUTE_DICTS:
            return omegaconf_model.attribute_dict(args, kwargs)
        if path.startswith(("omegaconf.", "hydra.")):
            got = self.config_call(path, args, kwargs, n, frame)
            if got is not None:
                return got
        world = frame.world
        last = path.rsplit(".", 1)[-1]
        reached_package(path, line, frame)
        q = self.decided_by_world(torch_api.query_value, path, world)
        if q is not NotImplemented:
            return Const(q)
        if path == "torch.accelerator.current_accelerator" and not args and not kwargs:
            # None on a machine without an accelerator (pytest ids it `None`); a CUDA device where CUDA exists
            has = self.decided_by_world(torch_api.query_value, "torch.accelerator.is_available", world)
            return DeviceV("cuda") if has else Const(None)
        if path == "torch.get_device_module" and len(args) + len(kwargs) <= 1:
            # the module of a device type (`torch.get_device_module("cuda").synchronize()` is torch.cuda's); with no
            # argument, the current accelerator's, torch.cpu where there is none
            device = args[0] if args else kwargs.get("device", Const(None))
            if device == Const(None):
                has = self.decided_by_world(torch_api.query_value, "torch.accelerator.is_available", world)
                return Ext("torch.cuda" if has else "torch.cpu")
            text = device.device if isinstance(device, DeviceV) else device.value if isinstance(
                device, Const) and isinstance(device.value, str) else ""
            kind = text.split(":")[0]
            return Ext(f"torch.{kind}") if kind in ("cuda", "cpu", "xpu", "mps") else UNK
        if path == "torch.is_tensor" and len(args) == 1 and not kwargs:
            got = is_tensor(args[0])
            return UNK if got is None else Const(got)
        # -- pytest / unittest / mock -----------------------------------------------------------
        if path.startswith("pytest.mark.") and path.count(".") == 2:
            if len(args) == 1 and not kwargs and isinstance(args[0], (TestFnV, FuncV, ClassV)):
                return self._apply_mark(self.make_mark(last, [], {}, n, frame), args[0])
            return self.make_mark(last, args, kwargs, n, frame)
        if path in ("pytest.skip", "pytest.fail", "pytest.xfail", "pytest.exit"):
            if path != "pytest.exit":
                _reached_skip(frame, line, f"{path}() reached", (args[0] if args else kwargs.get(
                    "reason", kwargs.get("msg"))) if path == "pytest.skip" else None)
            return NORETURN
        if path.endswith(("parameterized.expand", "parameterized.parameterized.expand")):
            # the `parameterized` package: test_x -> test_x_0_<first str arg>, ... (see collect.py)
            return MarkV(PARAMETERIZED_EXPAND, tuple(args[:1]) or (kwargs.get("input", UNK),),
                         tuple(sorted(((k, v) for k, v in kwargs.items() if k == "name_func"), key=lambda kv: kv[0])),
                         step(frame.rel, line, "parameterized.expand"))
        if path.endswith(("parameterized.parameterized_class", "parameterized.parameterized.parameterized_class")):
            return MarkV(PARAMETERIZED_CLASS, tuple(args), tuple(sorted(kwargs.items(), key=lambda kv: kv[0])),
                         step(frame.rel, line, "parameterized_class"))
        if path in ("parameterized.param", "parameterized.parameterized.param"):
            return ParamV(tuple(args))
        if path in ("pytest.param",):
            marks = kwargs.get("marks")
            mlist = marks.items if isinstance(marks, Seq) else ((marks,) if marks is not None else ())
            pid = kwargs.get("id")
            known_id = pid is None or isinstance(pid, Const) and (pid.value is None or isinstance(pid.value, str))
            kind = "tuple" if marks is None or not isinstance(marks, Seq) else marks.kind
            text = pid.value if isinstance(pid, Const) and isinstance(pid.value, str) else \
                None if known_id else UNKNOWN_ID
            return ParamV(tuple(args), tuple(mlist), text, kind if known_id and kind in ("list", "tuple") and not (
                isinstance(marks, (Unresolved, OneOf))) else "")
        if path in ("unittest.skipIf", "unittest.skipUnless", "unittest.case.skipIf", "unittest.case.skipUnless"):
            t = truth(args[0]) if args else None
            unless = path.endswith("skipUnless")
            if unless and t is not None:
                t = not t
            src = _src(n)
            nodes = _cond_nodes(n)
            off = t is True and bool(nodes) and off_cuda_taken(nodes[0], not unless, availability=False)
            return SkipV(t, step(frame.rel, line, f"{last}({src})"), _cuda_text(src), off,
                         always=_literally(nodes[:1], not unless), vram_gb=memory_bound_gib(nodes[:1]))
        if path in ("unittest.skip", "unittest.case.skip"):
            if args and isinstance(args[0], (TestFnV, FuncV)):
                return self._apply_mark(SkipV(True, step(frame.rel, line, "skip"), always=True), args[0])
            return SkipV(True, step(frame.rel, line, "skip"), always=True,
                         gpu_reason=_names_accelerator(args[0] if args else kwargs.get("reason")))
        if path.endswith(("SkipTest", "Skipped")) or path == "pytest.skip.Exception":
            return Ext(path + "()")
        if last in ("patch", "object") and ("mock" in path or path.startswith("unittest")):
            if args and _mocks_cuda(args[0], args[1] if len(args) > 1 else None):
                frame.add(Finding(MOCK, (step(frame.rel, line, f"patches {_mock_target(args)}: CUDA is faked, "
                                                              "the test runs on a CPU"),)))
                return MockV(step(frame.rel, line, ""))
            self._patch_module_attr(args if last == "object" else self._patch_target(args), kwargs, frame)
            return Ext("mock.patch()")
        if path in ("functools.wraps", "functools.lru_cache", "functools.cache"):
            return Ext("functools.wraps()")
        if path == "functools.wraps()":
            return args[0] if args else UNK
        # -- os / builtins ----------------------------------------------------------------------
        if path in ("os.environ.get", "os.getenv"):
            default = args[1] if len(args) > 1 else kwargs.get("default", Const(None))
            return environ_get(frame, args[0], default) if args else default
        if path in ("os.environ.update", "os.environ.setdefault", "os.environ.pop") or path.endswith(
                "mock.patch.dict") and args and args[0] in (Ext("os.environ"), Const("os.environ")):
            # `os.environ.update(X="cuda")`, `with mock.patch.dict(os.environ, {"X": "cuda"}):` (from the call on)
            self._set_environ(path, args, kwargs, frame)
            return Ext("mock.patch()") if path.endswith("mock.patch.dict") else UNK
        if path == "builtins.dict.fromkeys" and 1 <= len(args) <= 2 and not kwargs:
            # `list(dict.fromkeys([cpu, get_device()]))` (deepinv's device list): the keys de-duplicated in order
            keys = iterated(args[0])
            if isinstance(keys, Seq) and all(isinstance(k, DeviceV) or decided_key(k) for k in keys.items):
                # (constants, devices, classes and functions: equal exactly when the analysis' values are)
                value = args[1] if len(args) > 1 else Const(None)
                return DictV(tuple((k, value) for k in dict.fromkeys(keys.items)))
            return UNK
        if path.startswith("builtins."):
            return self.call_builtin(last, args, kwargs, n, frame)
        if path in ("importlib.import_module",) and args and not isinstance(args[0], Const):
            return Ext(DYNAMIC + step(frame.rel, line, "importlib.import_module() of a computed name: "
                                                       "dynamic dispatch"))
        if path == "importlib.import_module" and len(args) == 1 and not kwargs:
            got = self._imported_by_name(args[0], frame)
            if got is not None:
                return got
        if path.startswith("torch.testing"):
            got = self.call_torch_testing(path, last, args, kwargs, n, frame)
            if got is not None:
                return got
        # -- torch -----------------------------------------------------------------------------------
        if path.startswith("torch.") and "testing" not in path:
            return self.call_torch(path, args, kwargs, n, frame)
        # -- conventions for names from installed packages --------------------------------------
        if path.startswith("<devices>."):
            kinds = conventions.DEVICE_LIST_HELPERS.get(last, ())
            items: list[Value] = []
            for k in kinds:
                if k == "cpu":
                    items.append(Const(k))
                else:
                    note = step(frame.rel, line, f"{last}() marks {k!r} needs_{k}")
                    items.append(ParamV((Const(k),), (ReqV(1, 0, note),)))
            return Seq(tuple(items), "tuple")
        kc = self.decided_by_world(conventions.known_call, last, world)
        if kc is not NotImplemented:
            return Const(kc)
        fn_arg = len(args) == 1 and not kwargs and isinstance(args[0], (TestFnV, FuncV, ClassV))
        req = _call_requirement(last, args, kwargs, fn_arg)
        if req is not None:
            rv = ReqV(req.gpu_count, req.vram_gb, step(frame.rel, line, f"@{last}: {req.note}"), req.manual, req.cpu,
                      req.hint_only)
            return self._apply_mark(rv, args[0]) if fn_arg else rv
        if fn_arg:
            return args[0]  # an unknown decorator: assume it keeps the test
        self._ext_args_check(path, args, kwargs, n, frame)
        return UNK

    def _imported_by_name(self, name: Value, frame: Frame) -> ModV | None:
        """`importlib.import_module("pkg.models")` of one of the repository's modules: that module, as `import`
        gives it. Its files count as read by the caller's module (they are not in its import closure), so a
        cached result is recomputed when they change."""
        if not isinstance(name, Const) or not isinstance(name.value, str) or name.value.startswith("."):
            return None
        rel = self._repo_module(name.value, frame)
        if rel is None:
            return None
        self._reads_module_files(rel, frame)
        return ModV(rel, name.value, frame.rel)

    def _repo_module(self, dotted: str, frame: Frame) -> str | None:
        """The repository's file of the absolute module name `dotted`, imported from frame's module; None for an
        installed or missing one."""
        got = self.source.resolve_import(dotted, frame.rel, 0, dotted)
        return got if got in self.source.index.file_set else None

    def _reads_module_files(self, rel: str, frame: Frame) -> None:
        """Record the repository's files of rel's import closure as read by the caller's module (data files:
        a cached result depending on that module is recomputed when they change); installed modules are keyed by
        their digests already (runner.py)."""
        files = self.source.index.file_set
        for f in sorted(self.source.closure(rel)):
            if f in files:
                self.source.data_file(f, frame.rel)

    def _run_program(self, path: str, args: list[Value], kwargs: dict[str, Value], line: int, frame: Frame) -> None:
        """A Python program of the repository that the call runs (programs.py): its findings are the caller's. The
        program's files count as read by the caller's module, so a cached result is recomputed when they change."""
        program = program_of(path, args, kwargs, self.source.index.file_set,
                             lambda dotted: self._repo_module(dotted, frame))
        if program is None:
            return
        if program.code is not None:
            if not parses(program.code):
                return  # (the program fails at once, whatever the machine)
            # `python -c` code: a module of its own, named after where it is run (its defs have positions there)
            code = program.code
            digest = hashlib.sha256(code.encode()).hexdigest()[:12]
            program = Program(rel=f"{frame.rel}::python -c@{line}#{digest}", argv=program.argv)
            self.source.sources.setdefault(program.rel, code.encode())
        assert program.rel is not None
        key = (program, frame.world)
        got = self.program_runs.get(key)
        if got is None:
            self.program_runs[key] = ((), True)  # a program that runs itself: cut there
            before = self.world_reads
            found = self._program_findings(program, frame.world)
            got = self.program_runs[key] = (found, self.world_reads != before)
        else:
            self.world_reads += got[1]
        self._reads_module_files(program.rel, frame)
        for f in got[0]:
            frame.add(f.prefixed(step(frame.rel, line, f"{path}() runs {program.rel} as a program")))

    def _field_default(self, path: str, args: list[Value], kwargs: dict[str, Value], n: ast.Call,
                       frame: Frame) -> Value:
        """The default a field declaration gives: `field(default=x)`, `attr.ib(x)`, `attrs.field(factory=f)`,
        `attr.ib(default=attr.Factory(f))`, pydantic's `Field(x)`/`Field(default_factory=f)`; unknown when it has
        none (a required field) or a form not read."""
        node = next((k.value for k in n.keywords if k.arg == "default"), n.args[0] if n.args else None)
        if isinstance(node, ast.Call) and _last_name(node.func) == "Factory" and node.args:
            return PartialV(Ext(FIELD_FACTORY), (self.ev(node.args[0], frame),))  # `attr.Factory(list)`
        default = kwargs.get("default", args[0] if args and path != "dataclasses.field" else None)
        if default is not None:
            return UNK if isinstance(default, Const) and default.value is Ellipsis else default
        factory = kwargs.get("default_factory", kwargs.get("factory"))
        # (the factory runs for each object made, not when the class body runs: CallsMixin._dataclass_instance)
        return PartialV(Ext(FIELD_FACTORY), (factory,)) if factory is not None else UNK

    def _program_findings(self, program: Program, world: int) -> tuple[Finding, ...]:
        """Run a program's top level as `__main__`, in a namespace of its own, its arguments where argparse reads
        them (argparse_model.ARGV)."""
        rel = program.rel
        assert rel is not None
        tree = self.source.module(rel).tree
        if tree is None:
            return (Finding(UNKNOWN, (step(rel, 1, f"runs {rel}, which the analysis cannot read"),)),)
        findings: list[Finding] = []
        main = Frame(rel, world, {"__name__": Const("__main__")}, None, findings)
        main.env[ARGV] = Seq(tuple(Const(a) if a is not None else UNK for a in program.argv), "list")
        self.stores_seen = True
        try:
            self.budgeted(UNIT_BUDGET, self.exec_block, tree.body, main)
        except BudgetExceeded as exc:
            findings.append(Finding(UNKNOWN, (step(rel, 1, f"program {rel}: {exc}"),)))
        except RecursionError:
            findings.append(Finding(UNKNOWN, (step(rel, 1, f"program {rel} too deeply nested to analyse"),)))
        return tuple(findings)

    def run_passed_callable(self, method: str | None, args: list[Value], kwargs: dict[str, Value], n: ast.AST,
                            frame: Frame) -> bool:
        """A call the analysis cannot follow that is given an in-repo function to run: the call of an unknown
        value (`method` None: pytest-benchmark's `benchmark(fn, *args)`, a plugin's fixture) or a RUNS_ITS_CALLABLE
        method of an object the analysis does not model (an executor's `submit(fn, *args)`, `map(fn, xs)`). The
        function runs with the arguments that follow it (on each item, for a map): a callee the analysis does not
        know may call what it is given, and a function that uses CUDA is why a test passes it, so not following it
        would route the test to a CPU runner. At a module's top level (registrations: `register(fn)`) and for
        anything but an in-repo function, nothing is run. Returns whether it ran one."""
        at = RUNS_ITS_CALLABLE.get(method, 0) if method else 0
        if frame.module_env is None or len(args) <= at or not _callable(args[at]):
            return False
        fn, rest = args[at], list(args[at + 1:])
        if method is None and click_model.in_the_making(fn):
            return False  # pykeen's `command = option(command)`: decorated, not run
        if method in MAPS_ITS_CALLABLE:
            # `pool.map(fn, xs)` on each item; `dataset.map(fn)` (its items are the receiver's) on what they may be
            self._mapped(fn, rest or [UNK], n, frame)
        elif method == "pedantic":  # `benchmark.pedantic(fn, args=(x,), kwargs={...}, rounds=3)`
            given, named = kwargs.get("args"), kwargs.get("kwargs")
            self.call(fn, list(given.items) if isinstance(given, Seq) else [],
                      keywords_of(named) if isinstance(named, DictV) else {}, n, frame, "pedantic")
        else:
            self.call(fn, rest, kwargs, n, frame, method or "a function passed to a call not followed")
        return True

    def framework_method(self, recv: Value, name: str, args: list[Value], kwargs: dict[str, Value], n: ast.Call,
                         frame: Frame) -> Value | None:
        """pytest and unittest methods on objects the analysis does not model: `config.getoption`, pytest-mock's
        `mocker.MagicMock()`, `self.skipTest`, patching (`monkeypatch.setattr`, `mocker.patch.object`...);
        None: not one of them."""
        line = n.lineno
        if name == "getoption" and args and isinstance(args[0], Const) and isinstance(args[0].value, str):
            return self.option_default(args[0].value, frame.rel)
        if name in MOCK_FACTORIES:  # pytest-mock's `mocker.MagicMock()`
            return Ext(MOCK_OBJECT)
        if name in ("setenv", "delenv") and args and isinstance(args[0], Const) and isinstance(args[0].value, str):
            # pytest's `monkeypatch.setenv(name, value)`: library code reads it from here on (ENVIRON)
            set_environ(frame, args[0], bounded(args[1]) if name == "setenv" and len(args) > 1 else None)
            self.stores_seen = True
            return Const(None)
        if name == "getfixturevalue" and isinstance(recv, RequestV) and len(args) == 1 and isinstance(args[0], Const):
            return dict(recv.fixtures).get(str(args[0].value), UNK)
        if name == "skipTest":
            _reached_skip(frame, line, "self.skipTest()", args[0] if args else kwargs.get("reason"))
            return NORETURN
        if name == "isEnabledFor" and len(args) == 1 and not kwargs:
            # `if logger.isEnabledFor(logging.DEBUG):` around diagnostics (log_levels.py)
            level = log_levels.lowest_level(args[0])
            if level is not None and level <= log_levels.DEBUG and not self.debug_logging_possible(frame):
                return Const(False)
            return UNK
        if name in ("setattr", "setitem", "object", "patch", "delattr"):
            if args and _mocks_cuda(args[0], args[1] if len(args) > 1 else None):
                frame.add(Finding(MOCK, (step(frame.rel, line, f"patches {_mock_target(args)}: CUDA is faked, "
                                                              "the test runs on a CPU"),)))
                return MockV(f"{frame.rel}:{line}")
            if name == "setattr" and len(args) == 2 and isinstance(args[0], Const):
                # `monkeypatch.setattr("pkg.mod.DEVICE", "cuda")`: the target named by a dotted string
                self._patch_module_attr(self._patch_target(args), kwargs, frame)
            elif name in ("setattr", "object"):
                self._patch_module_attr(args, kwargs, frame)
            elif name == "patch":
                self._patch_module_attr(self._patch_target(args), kwargs, frame)
            return UNK
        return None

    def _run_worker(self, path: str, args: list[Value], kwargs: dict[str, Value], n: ast.AST, frame: Frame) -> None:
        """`mp.spawn(worker, args=(world_size,), nprocs=2)`: the worker runs now, with each rank (a choice of
        0..nprocs-1: `torch.cuda.set_device(rank)` then needs nprocs GPUs) and its arguments; `nprocs=0`
        (`torch.cuda.device_count()` on a CPU-only machine) starts none. `Process(target=f, args=...)` and
        `threading.Thread(...)` run `f(*args)`."""
        order = STARTS_WORKERS[path]
        given = {**dict(zip(order, args, strict=False)), **kwargs}
        fn = given.get("fn", given.get("target"))
        if not _callable(fn):
            return
        extra = given.get("args", Seq(()))
        call_args = list(extra.items) if isinstance(extra, Seq) else []
        if "nprocs" in order:
            nprocs = given.get("nprocs", Const(1))
            if isinstance(nprocs, Const) and type(nprocs.value) is int:
                if nprocs.value <= 0:
                    return
                rank: Value = join_all([Const(i) for i in range(nprocs.value)]) if nprocs.value <= MAX_RANKS else UNK
            else:
                rank = UNK
            call_args = [rank, *call_args]
        self.call(fn, call_args, {}, n, frame, path.rsplit(".", 1)[-1])

    def _patch_target(self, args: list[Value]) -> list[Value]:
        """`patch("pkg.mod.NAME", new)` as `patch.object`'s arguments (module, name, new) when pkg.mod is an
        in-repo module; else no arguments."""
        if not args or not isinstance(args[0], Const) or not isinstance(args[0].value, str) or "." not in args[0].value:
            return []
        dotted, _, attr = args[0].value.rpartition(".")
        rel = self.source.resolve_import(dotted, "", 0, "")
        return [ModV(rel, dotted, ""), Const(attr), *args[1:]] if rel else []

    def _patch_module_attr(self, args: list[Value], kwargs: dict[str, Value], frame: Frame) -> None:
        """`monkeypatch.setattr(settings, "DEFAULT_DEVICE", "cuda")`, `mock.patch.object(settings, ..., "cuda")`:
        that module's code reads the new value from here on (test_state.py)."""
        new = args[2] if len(args) >= 3 else kwargs.get("new") if len(args) == 2 else None
        if new == Ext(MOCK_OBJECT):
            new = None  # a mock handed in (`new=MagicMock(wraps=fn)` may run the original): the original is followed
        elif new is None and len(args) == 2 and _replaced_by_a_mock(kwargs):
            new = Ext(MOCK_OBJECT)  # `patch.object(mod, "fn", return_value=...)`: the code calls a MagicMock
        if len(args) >= 2 and isinstance(args[0], ModV) and args[0].rel and isinstance(args[1], Const) and \
                isinstance(args[1].value, str) and patch_module_attr(frame, args[0].rel, args[1].value, new):
            self.stores_seen = True

    def _set_environ(self, path: str, args: list[Value], kwargs: dict[str, Value], frame: Frame) -> None:
        """The variables `os.environ.update/setdefault/pop` or `mock.patch.dict(os.environ, ...)` set
        (test_state.set_environ)."""
        last = path.rsplit(".", 1)[-1]
        pairs: list[tuple[Value, Value | None]] = []
        if last == "dict":
            d = args[1] if len(args) > 1 else DictV(())
            pairs = list(d.items) if isinstance(d, DictV) else []
            pairs += [(Const(k), v) for k, v in kwargs.items() if k != "clear"]
        elif last == "update":
            d = args[0] if args else DictV(())
            pairs = list(d.items) if isinstance(d, DictV) else []
            pairs += [(Const(k), v) for k, v in kwargs.items()]
        elif last == "setdefault" and len(args) == 2:
            if environ_value(frame, args[0]) is None:
                pairs = [(args[0], args[1])]
        elif last == "pop" and args:
            pairs = [(args[0], None)]
        for k, v in pairs:
            if set_environ(frame, k, bounded(v) if v is not None else None):
                self.stores_seen = True

    def debug_logging_possible(self, frame: Frame) -> bool:
        """Whether a module frame.rel loads (its import closure, its package `__init__`s) may lower a logging
        level to DEBUG: a setting of a written level at or below it, of a computed level the module's top level
        does not decide above it, or inside a function (log_levels.py). Memoised per module and world, unless
        a module's import was still running (asked again later, so the answer does not depend on the order)."""
        key = (frame.rel, frame.world)
        got = self.debug_logging.get(key)
        if got is None:
            before = self.world_reads
            modules = sorted(self.source.closure(frame.rel) | set(self.source.package_inits(frame.rel)))
            answers = [self._may_lower_to_debug(m, frame.world) for m in modules]
            if None in answers:
                return True
            got = self.debug_logging[key] = any(answers)
            self.debug_logging_reads_world[key] = self.world_reads != before
        else:
            self.world_memo_hit(self.debug_logging_reads_world, key)
        return got

    def _may_lower_to_debug(self, rel: str, world: int) -> bool | None:
        """None: a level computed at import, while that import is still running."""
        tree = self.source.module(rel).tree
        for setting in log_levels.level_settings(tree) if tree is not None else ():
            if setting.arg is None:
                return True
            level = log_levels.written_level(setting.arg)
            if level is None and setting.top_level:
                st = self.module_state(rel, world)
                if not st.done:
                    return None
                level = log_levels.lowest_level(self.ev(setting.arg, Frame(rel, world, dict(st.env), None, [])))
            if level is None or level <= log_levels.DEBUG:
                return True
        return False

    def container_method(self, recv: Value, name: str, args: list[Value], kwargs: dict[str, Value]) -> Value | None:
        """Methods of a known str, dict, list or set (`"{}".format(x)`, `device.startswith("cuda")`, `d.get(k)`,
        `xs.append(x)`); None: not one of them."""
        if isinstance(recv, Const) and isinstance(recv.value, str) and name == "format":
            # "{} {}".format(cls.__name__, v[1:]): an `ids=` function's id, spelled exactly
            pos = [literal_of(a, shown_constant) for a in args]
            kw = {k: literal_of(a, shown_constant) for k, a in kwargs.items()}
            if NOT_LITERAL in pos or NOT_LITERAL in kw.values() or not _small_format(recv.value):
                return UNKNOWN_SCALAR
            try:
                return Const(recv.value.format(*pos, **kw))
            except (IndexError, KeyError, ValueError, TypeError, AttributeError):
                return UNK
        if isinstance(recv, Const) and isinstance(recv.value, str) and name == "join" and len(args) == 1 and \
                not kwargs and isinstance(args[0], Seq) and all(
                    isinstance(i, Const) and isinstance(i.value, str) for i in args[0].items):
            # `",".join(["dtype", "device"] + list(extra.keys()))`: parametrize argnames built from known names
            parts = [i.value for i in args[0].items if isinstance(i, Const) and isinstance(i.value, str)]
            limits.check_text(sum(map(len, parts)) + len(recv.value) * len(parts), f"{recv.value!r}.join(...)")
            return Const(recv.value.join(parts))
        if isinstance(recv, Const) and isinstance(recv.value, str) and name == "join" and len(args) == 1 and \
                not kwargs:
            return UNKNOWN_SCALAR  # `",".join(inputs)` of strings the analysis cannot spell: a string all the same
        if isinstance(recv, Const) and isinstance(recv.value, str) and name in STR_METHODS and not kwargs and all(
                _str_argument(c) is not NOT_LITERAL for a in args for c in alternatives(a)) and \
                math.prod(len(alternatives(a)) for a in args) <= MAX_ALTERNATIVES:
            # `device.startswith("cuda")`, `dev.split(":")[0]`, `s.startswith(("tpu", "intel"))`: plain string
            # methods on a known string; `device.startswith(backend)` in a loop over `("npu", "xpu")` run once with
            # the backends joined: the method of each choice, joined (False for both: decided)
            return join_all([_str_method(recv.value, name, [_str_argument(c) for c in combo])
                             for combo in itertools.product(*(alternatives(a) for a in args))])
        if name == "copy" and not args and not kwargs and isinstance(recv, (Seq, DictV)):
            return recv  # `kwargs = kwargs.copy()`: the same items
        if name in ("get", "setdefault", "pop") and isinstance(recv, DictV):
            for k, v in recv.items if exact_keys(recv) else ():
                if args and k == args[0]:
                    return v
            default = args[1] if len(args) > 1 else Const(None)
            # `REGISTRY.get(name, Fallback)` by a key the analysis cannot decide: any entry, or the default
            joined = undecided_entry(recv, args[0], default) if args else None
            return joined if joined is not None else default
        if name in ("append", "extend", "insert", "add", "update") and isinstance(recv, (Seq, DictV)):
            return Const(None)
        if name in ("keys", "values", "items") and isinstance(recv, DictV) and (
                recv.items or recv.origin is not None) and not args and not kwargs:
            # `@pytest.mark.parametrize("name", MODEL_DICT.keys())`, `SPACES.values()`: in insertion order (an
            # empty dict is left unknown: it is usually filled by `d[k] = v` later, which the analysis skips; not a
            # registry, whose view holds what its writers stored: registries.py)
            return Seq(tuple(k if name == "keys" else v if name == "values" else Seq((k, v), "tuple")
                             for k, v in recv.items), "list")
        return None

    def option_default(self, name: str, rel: str) -> Value:
        """`config.getoption("--device")`: the default a conftest's `parser.addoption` declares (torch_py_test
        runs pytest without the project's own options); unknown when no conftest of rel declares it."""
        dest = name.lstrip("-").replace("-", "_")
        for c in self.source.conftests_for(rel):
            table = self.option_defaults.get(c)
            if table is None:
                tree = self.source.module(c).tree
                table = self.option_defaults[c] = declared_options(tree) if tree is not None else {}
            if dest in table:
                return table[dest]
        return UNK

    def _ext_args_check(self, path: str, args: list[Value], kwargs: dict[str, Value], n: ast.AST,
                        frame: Frame) -> None:
        if _is_lightning_launcher(path):
            self._lightning_accelerator(path, kwargs, n, frame)
        for k in ("device", "device_map"):
            if k in kwargs:
                d = accel_device(kwargs[k])
                if d is None and isinstance(kwargs[k], DictV):
                    d = next((accel_device(v) for _, v in kwargs[k].items if accel_device(v)), None)
                if d:
                    frame.add(Finding(GPU, (step(frame.rel, getattr(n, "lineno", 0),
                                                 f"{path}({k}={d!r}) needs a {_accel_name(d)} device"),),
                                      gpu_count_of(d)))

    def _lightning_accelerator(self, path: str, kwargs: dict[str, Value], n: ast.AST, frame: Frame) -> None:
        """Lightning's `Trainer(accelerator="gpu", devices=2)` / `Fabric(accelerator="cuda")` (and the old
        `Trainer(gpus=2)`): on a machine without CUDA the constructor raises, so the test needs that many GPUs. An
        accelerator the analysis cannot resolve may be one: unknown. `"auto"` and the default fall back to the CPU."""
        line = getattr(n, "lineno", 0)
        what = path.rsplit(".", 1)[-1]
        accelerator = kwargs.get("accelerator")
        names = {a.value.lower() for a in alternatives(accelerator) if isinstance(a, Const) and isinstance(
            a.value, str)} if accelerator is not None else set()
        if accelerator is not None and (not names or len(names) != len(alternatives(accelerator))):
            frame.add(Finding(UNKNOWN, (step(frame.rel, line, f"{what}(accelerator=...) with an accelerator the "
                                                              "analysis cannot resolve"),)))
            return
        gpus = kwargs.get("gpus")
        wanted = names & {"gpu", "cuda"}
        if wanted:
            count = _lightning_device_count(kwargs.get("devices"))
            frame.add(Finding(GPU, (step(frame.rel, line, f"{what}(accelerator={sorted(wanted)[0]!r}) needs "
                                                          f"{count} CUDA GPU{'s' if count > 1 else ''}"),), count))
        elif gpus is not None and accelerator is None:
            count = _lightning_device_count(gpus)
            if gpus not in (Const(0), Const(None), Const("0"), Seq((), "list")):
                frame.add(Finding(GPU, (step(frame.rel, line, f"{what}(gpus=...) needs {count} CUDA "
                                                              f"GPU{'s' if count > 1 else ''}"),), count))

    def _isinstance_in_repo(self, v: Value, classes: Value, world: int) -> Value | None:
        """`isinstance(obj, Cls)` for in-repo objects (or a choice of them, one per path) and in-repo classes:
        decided by each object's MRO (linear_operator's `isinstance(linear_ops[0], DiagLinearOperator)`)."""
        wanted = classes.items if isinstance(classes, Seq) else (classes,)
        objs = alternatives(v)
        if isinstance(v, Const) and any(isinstance(c, ClassV) for c in wanted) and all(
                isinstance(b, ClassV) or isinstance(b, Ext) and (b.path == "builtins.object" or b.path.startswith(
                    "torch.")) for c in wanted if isinstance(c, ClassV) for b in self.mro(c, world)):
            # a plain Python value is no instance of an in-repo class built on in-repo and torch classes (no ABC
            # that may register it, no Protocol): `isinstance(0.01, (torch.Tensor, dinv.utils.TensorList))`
            rest = tuple(c for c in wanted if not isinstance(c, ClassV))
            return isinstance_of(v, Seq(rest, "tuple")) if rest else Const(False)
        if not wanted or not all(isinstance(o, Inst) for o in objs):
            return None
        if all(isinstance(c, Ext) and c.path in _BUILTIN_VALUE_TYPES for c in wanted) and all(
                isinstance(b, ClassV) or isinstance(b, Ext) and (b.path in _PLAIN_BASES or b.path.startswith(
                    "torch.")) for o in objs if isinstance(o, Inst) for b in self.mro(o.cls, world)):
            # `operations if isinstance(operations, list) else [operations]` with an in-repo object whose bases
            # are in-repo classes, torch's, object or the typing/abc markers: no list, tuple, dict, str or number
            return Const(False)
        modules = all(isinstance(o, Inst) and o.nn is not None for o in objs)
        if not all(isinstance(c, ClassV) or modules and isinstance(c, Ext) and (
                c.path == "builtins.object" or c.path.startswith("torch.")) for c in wanted):
            return None
        # a printable in-repo module (Inst.nn) has only torch.nn.Module and object outside the repository in its
        # MRO: `isinstance(Pad(...), _Loss)` is False, `isinstance(Pad(...), nn.Module)` True
        hits = {any(c in self.mro(o.cls, world) if isinstance(c, ClassV) else c.path == "builtins.object"
                    or c.path.rsplit(".", 1)[-1] == "Module" for c in wanted) for o in objs if isinstance(o, Inst)}
        return Const(hits.pop()) if len(hits) == 1 else UNK

    def _module_members(self, mod: ModV, predicate: Value | None, n: ast.AST, frame: Frame) -> Value:
        """`inspect.getmembers(module, predicate)` of an in-repo module (`sys.modules[__name__]` at its own top level
        included: the names bound so far): its (name, value) pairs sorted by name, those the predicate is true of.
        Unknown when the predicate is not decided for one of them. The module's dunders (`__spec__`, `__loader__`,
        `__builtins__`) are left out: no registry's predicate (`inspect.isclass`, a subclass test) keeps them."""
        env = self.module_state(mod.rel, frame.world).env
        pairs = []
        for name in sorted(k for k in env if not (k.startswith("__") and k.endswith("__"))):
            value = env[name]
            if predicate is not None:
                keep = self.call(predicate, [value], {}, n, frame, "getmembers")
                if not isinstance(keep, Const):
                    return UNK
                if not keep.value:
                    continue
            pairs.append(Seq((Const(name), value), "tuple"))
        return bounded(Seq(tuple(pairs), "list"))

    def _issubclass_in_repo(self, v: Value, classes: Value, world: int) -> Value | None:
        """`issubclass(Cls, Base)` for in-repo classes (or a choice of them): True when Base is in Cls's MRO, False
        when it is not and Base cannot be registered as a virtual base (no ABC or Protocol in its MRO, no metaclass).
        The MRO's external classes (`PushToHubMixin` under peft's configs) are not subclasses of Base: a library
        installed beside the repository does not derive from its classes. None where the analysis does not know."""
        wanted = classes.items if isinstance(classes, Seq) and classes.kind == "tuple" else (classes,)
        if not wanted or not all(isinstance(c, ClassV) for c in wanted):
            return None
        if not all(isinstance(a, ClassV) for a in alternatives(v)):
            return None
        virtual = any(isinstance(b, Ext) and b.path in ("abc.ABC", "typing.Protocol") or not isinstance(
            b, (ClassV, Ext)) for c in wanted for b in self.mro(c, world)) or any(
            node is not None and any(k.arg == "metaclass" for k in node.keywords)
            for node in (self.class_node(c) for c in wanted if isinstance(c, ClassV)))
        outs = set()
        for a in alternatives(v):
            mro = self.mro(a, world) if isinstance(a, ClassV) else ()
            if any(c in mro for c in wanted):
                outs.add(True)
            elif not virtual and all(isinstance(b, (ClassV, Ext)) for b in mro):
                outs.add(False)
            else:
                return None
        return Const(outs.pop()) if len(outs) == 1 else UNK

    def _hasattr_module(self, v: Inst, name: str, world: int) -> Value | None:
        """`hasattr(m, name)` of a printable in-repo module (Inst.nn): an attribute it holds or an in-repo class
        defines, or a public attribute of torch.nn.Module, is there; another public name is not, unless a method
        registers buffers or parameters (`register_buffer("bias", ...)`); None for private names."""
        if v.attr(name) is not None or self.class_lookup(v.cls, name, world) is not None \
                or name in nn_modules.MODULE_PUBLIC_ATTRS:
            return Const(True)
        if name.startswith("_") or any(self._registers_tensors(c) for c in self.mro(v.cls, world)
                                       if isinstance(c, ClassV)):
            return None
        return Const(False)

    def _holds_attribute(self, obj: Value, name: str, world: int) -> bool:
        """Whether an object of an in-repo class has the attribute (set on it, or defined by a class of its MRO), on
        every path: `getattr(obj, name, default)` then gives its value, known or not, never the default."""
        objs = alternatives(obj)
        return all(isinstance(o, Inst) and (o.attr(name) is not None or self.class_lookup(o.cls, name, world)
                                            is not None) for o in objs)

    def _registers_tensors(self, cls: ClassV) -> bool:
        node = self.class_node(cls)
        return node is None or any(isinstance(n, ast.Attribute) and n.attr in ("register_buffer", "register_parameter")
                                   for n in ast.walk(node))

    def _mapped(self, fn: Value, iterables: list[Value], n: ast.AST, frame: Frame) -> Value:
        """`map(fn, xs, ...)`: `fn` called on each row of known sequences (`list(map(str, sizes))`,
        `map(lambda t: t.cuda(), tensors)`), else once on what the elements may be, so that what it does to
        devices counts even when the rows are not known."""
        rows = [i.items if isinstance(i, Seq) and i.kind != SLICE else None for i in iterables]
        if all(r is not None for r in rows) and min(len(r) for r in rows if r is not None) <= MAX_MAPPED:
            return Seq(tuple(self.call(fn, list(row), {}, n, frame, "map")
                             for row in zip(*(r for r in rows if r is not None), strict=False)), "list")
        self.call(fn, [join_all(list(r)) if r else UNK for r in rows], {}, n, frame, "map")
        return UNK

    def _hasattr_function(self, fv: FuncV, name: str) -> Value | None:
        """`hasattr(fn, name)` of an in-repo function or bound method: True for an attribute the analysed code set
        on it (FuncV.attrs); False for another plain name when its def has no decorator (nothing the analysis
        did not run can have set one); else unknown (None)."""
        if fv.attr(name) is not None:
            return Const(True)
        if name.startswith("__"):
            return None  # `__wrapped__`, `__self__`, `__dict__`: what Python itself puts there
        node = self.source.module(fv.rel).defs.get(fv.pos)
        if isinstance(node, ast.Lambda) or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                not node.decorator_list:
            return Const(False)
        return None

    def _evaluated_text(self, text: Value, line: int, frame: Frame) -> Value | None:
        """`eval(f"get_{kind}_pattern(tokens)")`, `eval("torch.float16")` in the caller's namespace: each text the
        analysis knows is parsed and evaluated there, as if written at the call (its calls and device uses are the
        caller's). None when a text is not known (computed code: call_builtin's dynamic dispatch)."""
        texts = alternatives(text)
        if not all(isinstance(t, Const) and isinstance(t.value, str) for t in texts):
            return None
        got: list[Value] = []
        for t in texts:
            assert isinstance(t, Const)
            try:
                tree = ast.parse(t.value.strip(), mode="eval")
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                continue  # (a SyntaxError at run time: no value on that path)
            ast.increment_lineno(tree, line - 1)
            got.append(self.ev(tree.body, frame))
        return bounded(join_all(got)) if got else UNK

    def _torch_free_library(self, obj: ModV | ClassV, rel: str) -> bool:
        """Whether code at rel looks a name up on obj inside one installed library that never names torch."""
        home = obj.rel
        return home is not None and is_installed(rel) and is_installed(home) and \
            top_package(home) == top_package(rel) and self.source.installed.torch_free(rel)

    def _runs_as_callable(self, v: Value, world: int) -> bool:
        """What a higher-order call runs: an in-repo function, lambda or bound method, a partial of one, or an
        object whose in-repo class defines `__call__` or `forward` (a torch module: `checkpoint(self.block, x)`)."""
        if isinstance(v, PartialV):
            v = v.func
        return _callable(v) or isinstance(v, Inst) and any(
            isinstance(self.class_lookup(v.cls, m, world), FuncV) for m in ("__call__", "forward"))

    def _operator_getter(self, path: str, args: list[Value], kwargs: dict[str, Value], n: ast.AST,
                         frame: Frame) -> Value:
        """`operator.attrgetter(name)(obj)` is `obj.<name>` (a dotted name: along the path), `operator.methodcaller(
        name, *a, **kw)(obj)` is `obj.<name>(*a, **kw)`: the getter is a partial of a private callee that gets the
        object last. A name the analysis does not know: unknown, as `getattr` with one."""
        if path in OPERATOR_GETTERS:
            one_name = path == "operator.methodcaller" or len(args) == 1 and not kwargs
            if args and isinstance(args[0], Const) and isinstance(args[0].value, str) and one_name:
                callee = ATTRGETTER_CALL if path == "operator.attrgetter" else METHODCALLER_CALL
                return PartialV(Ext(callee), tuple(args), tuple(sorted(kwargs.items(), key=lambda kv: kv[0])))
            return UNK
        name, *given, obj = args
        if not (isinstance(name, Const) and isinstance(name.value, str)):
            return UNK
        if path == METHODCALLER_CALL and isinstance(n, ast.Call):
            return self.method_call(obj, name.value, given, kwargs, n, frame)
        got = obj
        for part in name.value.split("."):
            got = self.getattr_v(got, part, frame, n)
        return got

    def call_builtin(self, name: str, args: list[Value], kwargs: dict[str, Value], n: ast.AST,
                     frame: Frame) -> Value:
        line = getattr(n, "lineno", 0)
        if name in ("type", "str", "repr", "isinstance") and args and (made := decorated_object(args[0])) is not None:
            args = [made, *args[1:]]  # `str(logaddexp)` of `@Op.make def logaddexp`
        if name in ("list", "tuple", "sorted") and len(args) == 1 and args[0] == EXISTING_CUDA_VALUES:
            return args[0]  # `list(t for t in ts if t.is_cuda)`: still only values already on CUDA
        if name == "getattr" and len(args) >= 2:
            obj, attr = args[0], args[1]
            if isinstance(attr, Const) and isinstance(attr.value, str):
                v = self.getattr_v(obj, attr.value, frame, n)
                if not (isinstance(v, Unresolved) and len(args) > 2) or self._holds_attribute(obj, attr.value,
                                                                                              frame.world):
                    return v
                return args[2]
            names = alternatives(attr)
            if isinstance(attr, OneOf) and all(isinstance(a, Const) and isinstance(a.value, str) for a in names):
                # `getattr(self, f"run_{kind}")` over a known set of names: one of those attributes
                return chosen_by_name([self.call_builtin("getattr", [obj, a, *args[2:]], kwargs, n, frame)
                                       for a in names], frame.rel, line, f"getattr({_src_arg(n, 0)}, ...)")
            if isinstance(obj, (ModV, ClassV)) and self._torch_free_library(obj, frame.rel):
                # a torch-free library's own module or class (installed.InstalledIndex.torch_free): external code (an
                # object's attribute may hold a callable the caller handed it, so objects stay dynamic dispatch)
                return UNK
            if isinstance(obj, (ModV, ClassV, Inst)):
                # reading an attribute is harmless; calling what it names is dynamic dispatch
                return Ext(DYNAMIC + step(frame.rel, line, f"getattr({_src_arg(n, 0)}, {_src_arg(n, 1)}) with a "
                                                          "computed name: dynamic dispatch"))
            return UNK
        evaluated = self._evaluated_text(args[0], line, frame) if name == "eval" and len(args) == 1 and \
            not kwargs else None
        if evaluated is not None:
            return evaluated
        if name == "any" and len(args) == 1 and not kwargs and isinstance(args[0], Seq) and args[0].kind != SLICE \
                and all(isinstance(i, Const) and not i.value or existing_cuda_flag(i) for i in args[0].items) \
                and any(existing_cuda_flag(i) for i in args[0].items):
            return EXISTING_IS_CUDA  # `any(_is_cuda(v) for v in values)`: true only when one is on CUDA already
        if name == "hasattr" and len(args) == 2 and not kwargs and isinstance(args[0], Const) and isinstance(
                args[1], Const) and isinstance(args[1].value, str):
            return Const(hasattr(args[0].value, args[1].value))  # `hasattr(2.0, "device")`: a plain value's own
        if name == "hasattr" and len(args) == 2 and not kwargs and (isinstance(args[0], DeviceV) or args[
                0] == EXISTING_DEVICE) and isinstance(
                args[1], Const) and isinstance(args[1].value, str) and not args[1].value.startswith("__"):
            # a torch.device has `type` and `index` (`hasattr(val, "double")` over an operator's keyword arguments,
            # linear_operator's `type()`: a device is handed on as it is)
            return Const(args[1].value in ("type", "index"))
        if name == "hasattr" and len(args) == 2 and not kwargs and isinstance(args[0], TensorV) and isinstance(
                args[1], Const) and args[1].value in TENSOR_ATTRIBUTES:
            return Const(True)  # `hasattr(value, "device") and value.device == ...` of a tensor the analysis made
        if name in ("any", "all") and len(args) == 1 and not kwargs and isinstance(args[0], Seq) \
                and args[0].kind != SLICE and all(isinstance(i, Const) for i in args[0].items):
            # `any("big" in a for a in args)` over known constants (a comprehension the analysis could not list
            # stands for its items by one device value: never decided here)
            return Const(any(bool(i.value) for i in args[0].items if isinstance(i, Const)) if name == "any"
                         else all(bool(i.value) for i in args[0].items if isinstance(i, Const)))
        if name == "slice" and 1 <= len(args) <= 3 and not kwargs:
            bounds = [Const(None), args[0], Const(None)] if len(args) == 1 else [*args, Const(None)][:3]
            return Seq(tuple(bounds), SLICE)
        if name == "map" and len(args) >= 2 and not kwargs:
            return self._mapped(args[0], args[1:], n, frame)
        if name in ("sorted", "min", "max") and args and _callable(kwargs.get("key")):
            items = iterated(args[0]) if len(args) == 1 else Seq(tuple(args), "tuple")
            keys = self._mapped(kwargs["key"], [items], n, frame)
            if name == "sorted" and len(args) == 1 and set(kwargs) <= {"key", "reverse"} and isinstance(keys, Seq):
                # `sorted(REGISTRY.values(), key=lambda c: c.__name__)`: ordered by the keys the function gives
                got = _sorted(items, kwargs.get("reverse", Const(False)), keys)
                if got is not None:
                    return got
        if name == "filter" and len(args) == 2 and not kwargs and _callable(args[0]):
            self._mapped(args[0], [args[1]], n, frame)  # the predicate runs on each item
        if name == "filter" and len(args) == 2 and not kwargs and isinstance(args[1], Seq):
            kept = _filtered(args[0], args[1].items)  # `list(filter(torch.is_tensor, (W, H)))`
            if kept is not None:
                return Seq(kept, "list")
        if name == "iter" and len(args) == 1 and not kwargs and isinstance(iterated(args[0]), Seq) \
                and iterated(args[0]).kind != SLICE:  # type: ignore[union-attr]
            return iterated(args[0])  # `next(iter(set(op.device for op in ops)))`: the elements, as next() reads
        if name in ("iter", "next") and len(args) == 1 and not kwargs and isinstance(args[0], Inst):
            # `next(loader_iter)`, `iter(pool)` of an object whose in-repo class defines `__next__` / `__iter__`
            return self.own_next(args[0], line, frame) if name == "next" else self.own_iterator(args[0], line, frame)
        if name == "next" and args and isinstance(args[0], Seq) and args[0].items:
            return join_all(list(args[0].items))  # the first element of a known sequence (or generator)
        if name == "next" and len(args) == 2 and isinstance(args[0], Seq) and not args[0].items:
            return args[1]  # `next((p.device for p in []), torch.device("cpu"))`: the default
        if name in ("eval", "exec") and args and not isinstance(args[0], Const):
            frame.add(Finding(UNKNOWN, (step(frame.rel, line, f"{name}() of computed code: dynamic dispatch"),)))
            return UNK
        if name == "__import__" and args and not isinstance(args[0], Const):
            return Ext(DYNAMIC + step(frame.rel, line, "__import__ of a computed name: dynamic dispatch"))
        if name == "super":
            cls = frame.cls
            obj = frame.env.get(frame.self_name) if frame.self_name else None
            if cls is not None and obj is not None:
                return SuperV(cls, obj)
            return UNK
        if name == "type" and len(args) == 1 and all(isinstance(a, ClassV) for a in alternatives(args[0])):
            # a class: the metaclass that made it (`metaclass = type(cls)` in a class factory), else `type`
            return join_all([self.metaclass_of(a, frame.world) or Ext("builtins.type")
                             for a in alternatives(args[0]) if isinstance(a, ClassV)])
        if name == "type" and len(args) == 1 and all(isinstance(a, Inst) for a in alternatives(args[0])):
            # an object of an in-repo class: that class (`type(strategy).__name__` in ids, `type(self)(...)`)
            return join_all([a.cls for a in alternatives(args[0]) if isinstance(a, Inst)])
        if name == "type" and len(args) == 1:
            t = type_path(args[0])
            return Ext(TYPE_PREFIX + t) if t else UNK
        if name == "type" and len(args) == 3 and not kwargs:
            return made_class(args, n, frame)
        if name == "hasattr" and len(args) == 2 and isinstance(args[0], NNModV) and isinstance(args[1], Const) \
                and isinstance(args[1].value, str) and not kwargs:
            got = nn_modules.parameter(args[0], args[1].value)  # `hasattr(module, "weight")`
            if got is not None:
                return Const(got is not nn_modules.ABSENT)
        if name == "hasattr" and len(args) == 2 and isinstance(args[0], Inst) and args[0].nn is not None and \
                isinstance(args[1], Const) and isinstance(args[1].value, str) and not kwargs:
            known = self._hasattr_module(args[0], args[1].value, frame.world)
            if known is not None:
                return known
        if name in ("hasattr", "isinstance") and len(args) == 2 and isinstance(args[0], OneOf):
            # one of several values (chosen on an undecided path): decided when every one gives the same answer
            outs = {self.call_builtin(name, [a, args[1]], kwargs, n, frame) for a in alternatives(args[0])}
            return outs.pop() if len(outs) == 1 else UNK
        if name == "hasattr" and len(args) == 2 and isinstance(args[0], FuncV) and isinstance(args[1], Const) \
                and isinstance(args[1].value, str) and not kwargs:
            known = self._hasattr_function(args[0], args[1].value)
            if known is not None:
                return known
        if name == "isinstance" and len(args) == 2 and isinstance(args[1], Ext) and args[1].path == "builtins.type" \
                and all(isinstance(a, (ClassV, FuncV)) for a in alternatives(args[0])):
            # `isinstance(obj, type) and issubclass(obj, Base)` over a module's names: the question
            # `inspect.isclass` asks (neuralforecast's registry of losses read from `losses.__all__`)
            return _is_class_value(args[0])
        if name == "issubclass" and len(args) == 2 and not kwargs:
            got = self._issubclass_in_repo(args[0], args[1], frame.world)
            if got is not None:
                return got
        if name == "isinstance" and len(args) == 2:
            got = self._isinstance_in_repo(args[0], args[1], frame.world)
            if got is None:
                got = nn_modules.isinstance_module(args[0], args[1])
            return got if got is not None else isinstance_of(args[0], args[1])
        if name == "str" and len(args) == 1 and isinstance(args[0], EnumV):
            return Const(args[0].text)
        if name == "str" and len(args) == 1 and all(isinstance(a, DeviceV) or a == EXISTING_DEVICE
                                                    for a in alternatives(args[0])):
            # `str(torch.device("cpu"))` is "cpu"; `str(x.device)` of an existing tensor names that device
            return join_all([Const(a.device) if isinstance(a, DeviceV) else a for a in alternatives(args[0])])
        if name in ("str", "repr") and len(args) == 1 and not kwargs and isinstance(args[0], (Inst, ClassV)):
            # an in-repo `__str__` (str only) or `__repr__` (of a class: its in-repo metaclass's): what it returns,
            # what it does counted
            got = self.printed_value(args[0], name[0], "", n, frame)
            if got is not None:
                return got
        if name in ("str", "repr", "ascii") and len(args) == 1 and not kwargs and not (
                name == "str" and isinstance(args[0], Const)):
            # str() of a tuple, dict, torch.Size or dtype (`ids=str`), repr() of a device or a string: as Python
            # prints them; anything else (an object, a torch module) is unknown
            text = spelled(args[0], name[0])
            if text is None:
                return UNKNOWN_SCALAR
            limits.check_text(len(text), f"{name}() of a value")
            return Const(text)
        if name in ("str", "int", "float", "bool") and len(args) == 1 and isinstance(args[0], Const):
            try:
                return Const({"str": str, "int": int, "float": float, "bool": bool}[name](args[0].value))
            except (TypeError, ValueError, OverflowError):
                return UNK
        if name in ("chr", "ord") and len(args) == 1 and not kwargs and isinstance(args[0], Const) and type(
                args[0].value) is (int if name == "chr" else str):
            try:  # `chr(i + 140)` (opt_einsum's `get_symbol`: einsum equations pytest ids)
                return Const(chr(args[0].value) if name == "chr" else ord(args[0].value))  # type: ignore[arg-type]
            except (TypeError, ValueError, OverflowError):
                return UNK
        if name == "complex" and len(args) <= 2 and not kwargs and all(
                isinstance(a, Const) and type(a.value) in (int, float, complex) for a in args):
            return Const(complex(*(a.value for a in args if isinstance(a, Const))))  # `complex(1, 2)`: an id `(1+2j)`
        if name == "range" and 1 <= len(args) <= 3 and all(
                isinstance(a, Const) and type(a.value) is int for a in args):
            r = range(*(int(a.value) for a in args if isinstance(a, Const)))  # type: ignore[call-overload]
            if not -(1 << 62) < r.start < (1 << 62) or not -(1 << 62) < r.stop < (1 << 62):
                return UNK  # (len() of a range past a machine word raises)
            return Seq(tuple(Const(i) for i in r), "range") if len(r) <= 64 and not (
                len(args) == 3 and args[2] == Const(0)) else UNK
        if name in ("zip", "enumerate"):
            got = _zipped(name, args, kwargs)
            if got is not None:
                return got
        if name == "len" and args and isinstance(args[0], Seq):
            return Const(len(args[0].items))
        if name == "len" and len(args) == 1 and isinstance(args[0], Const) and isinstance(args[0].value, (str, bytes)):
            return Const(len(args[0].value))
        if name in OWN_METHOD_BUILTINS and len(args) == 1 and not kwargs and isinstance(args[0], Inst):
            got = self.call_own_method(args[0], OWN_METHOD_BUILTINS[name], [], n, frame)
            if got is not None:
                return got  # `len(dataset)`: the in-repo `__len__` (what it does runs; it may touch a device)
        if name == "len" and len(args) == 1 and not kwargs:
            return UNKNOWN_SCALAR
        if name == "dict":
            return _dict_of(args, kwargs)
        if name in ("list", "tuple") and len(args) == 1 and isinstance(args[0], ClassV):
            members = self.enum_members(args[0], frame.world)
            if members is not None:
                return Seq(members.items, name)
        if name in ("list", "tuple", "set", "frozenset") and len(args) == 1 and not kwargs and isinstance(
                args[0], Const) and isinstance(chars := _characters(args[0]), Seq):
            # a string's characters (funsor's `"".join(sorted(set(obs_plates + hidden_plates)))`); a set's once each
            items = chars.items if name in ("list", "tuple") else tuple(dict.fromkeys(chars.items))
            return Seq(items, name if name in ("list", "tuple") else "set")
        if name in ("list", "tuple") and args and isinstance(args[0], Seq):
            return Seq(args[0].items, name)
        if name in ("list", "tuple") and len(args) == 1 and isinstance(args[0], DictV):
            return Seq(iterated(args[0]).items, name)  # type: ignore[attr-defined]  # `list(d)`: its keys, in order
        if name in ("list", "tuple", "set", "frozenset") and not args and not kwargs:
            return Seq((), "set" if name == "frozenset" else name)
        if name == "sorted" and len(args) == 1 and set(kwargs) <= {"reverse"}:
            # `parametrize("arch", sorted(REGISTRY))`: a registry's names, in order
            got = _sorted(iterated(args[0]), kwargs.get("reverse", Const(False)))
            if got is not None:
                return got
        if name in ("set", "frozenset") and len(args) == 1 and not kwargs and isinstance(iterated(args[0]), Seq):
            # (a frozenset is a set the analysis never mutates: values are immutable anyway)
            return Seq(tuple(dict.fromkeys(iterated(args[0]).items)), "set")  # type: ignore[union-attr]
        if name == "sum" and len(args) == 1 and not kwargs and isinstance(args[0], Seq) and all(
                isinstance(i, Const) and type(i.value) in (int, float) for i in args[0].items):
            # `(MultiCategoricalDistribution([2, 3]), sum([2, 3]))`: a parameter pytest ids by its value
            return Const(sum(i.value for i in args[0].items))  # type: ignore[union-attr]
        if name in ("min", "max") and len(args) == 1 and not kwargs and isinstance(iterated(args[0]), Seq):
            args = list(iterated(args[0]).items)  # type: ignore[union-attr]  # `max(DEVICES)`: of its items
        if name in ("min", "max") and args and all(isinstance(a, Const) for a in args):
            try:
                return Const((min if name == "min" else max)(a.value for a in args))  # type: ignore[union-attr]
            except (TypeError, ValueError):
                return UNK
        if name == "reversed" and len(args) == 1 and not kwargs and module_children(args[0]):
            args = [iterated(args[0])]  # `reversed(self.layers)`: the children a torch.nn container holds
        if name == "reversed" and len(args) == 1 and not kwargs and isinstance(args[0], Seq) and \
                args[0].kind in ("list", "tuple", "range"):
            return Seq(tuple(reversed(args[0].items)), "tuple")
        if name == "property" and isinstance(getter := args[0] if args else kwargs.get("fget"), FuncV):
            return getter.with_attr(PROPERTY, Const(True))  # `device = property(_get_device)`: read, it runs
        if name in ("staticmethod", "classmethod", "property") and args:
            return args[0]
        if name == "setattr" and args and _mocks_cuda(args[0], args[1] if len(args) > 1 else None):
            frame.add(Finding(MOCK, (step(frame.rel, line, "setattr on torch.cuda fakes CUDA"),)))
        return UNK



# A field's default made by a factory (`field(default_factory=f)`, `attrs.field(factory=f)`, `attr.Factory(f)`): a
# partial of this private callee, called for each object made (CallsMixin._dataclass_instance)
FIELD_FACTORY = "<field default factory>"
OPERATOR_GETTERS = frozenset({"operator.attrgetter", "operator.methodcaller"})
# the private callees of the partials those make (never a real module's name)
ATTRGETTER_CALL = "<operator.attrgetter of>"
METHODCALLER_CALL = "<operator.methodcaller of>"
_BUILTIN_VALUE_TYPES = frozenset(f"builtins.{t}" for t in ("list", "tuple", "dict", "set", "frozenset", "str", "bytes",
                                                             "int", "float", "complex", "bool"))
_PLAIN_BASES = frozenset({"builtins.object", "abc.ABC", "typing.Generic", "typing.Protocol"})
# subprocess functions -> whether they raise when the program exits non-zero (all raise when it is not installed)
_PROCESS_CALLS = {"subprocess.run": False, "subprocess.call": False, "subprocess.Popen": False,
                  "subprocess.check_call": True, "subprocess.check_output": True}


def runs_nvidia_smi(path: str, args: list[Value], kwargs: dict[str, Value]) -> bool:
    """`subprocess.run(["nvidia-smi", ...])`, `check_output("nvidia-smi")`: fails (FileNotFoundError, or a non-zero
    exit it checks) where no NVIDIA driver is installed. Through a shell without a check, only the exit status
    says so: no need."""
    if path not in _PROCESS_CALLS or not args:
        return False
    cmd = args[0]
    first = cmd.items[0] if isinstance(cmd, Seq) and cmd.items else cmd
    if not isinstance(first, Const) or not isinstance(first.value, str) or not first.value.split():
        return False
    program = first.value.split()[0] if isinstance(cmd, Const) else first.value
    if os.path.basename(program) != "nvidia-smi":
        return False
    return _PROCESS_CALLS[path] or kwargs.get("check") == Const(True) or kwargs.get("shell") != Const(True)


RANDOM_DRAWS = frozenset({"random.choice", "random.choices", "random.sample"})


def _drawn(path: str, args: list[Value], kwargs: dict[str, Value]) -> Value | None:
    """What `random.choice(xs)`, `random.choices(xs, k=n)` and `random.sample(xs, n)` draw from a known
    population: each element drawn is one of its elements (a choice), in a list of n; None when the population
    or the count is not known (`random.choices(OPS, k=n_terms)` builds a test's circuit of known gate classes)."""
    population = iterated(args[0]) if args else kwargs.get("population")
    if not isinstance(population, Seq) or population.kind == SLICE or not population.items:
        return None
    one = join_all(list(population.items))
    if path == "random.choice":
        return one if len(args) == 1 and not kwargs else None
    if path == "random.choices":
        if len(args) != 1 or set(kwargs) - {"k", "weights", "cum_weights"}:
            return None
        count = kwargs.get("k", Const(1))
    else:
        if len(args) + len(kwargs) != 2 or set(kwargs) - {"k", "counts"} or "counts" in kwargs:
            return None
        count = args[1] if len(args) == 2 else kwargs.get("k")
    if not (isinstance(count, Const) and type(count.value) is int and 0 <= count.value <= 64):
        return None
    if path == "random.sample" and count.value > len(population.items):
        return None  # (Python raises)
    return Seq((one,) * int(count.value), "list")


def made_class(args: list[Value], n: ast.AST, frame: Frame, meta: ClassV | None = None) -> Value:
    """`type("TestOps_cuda", (OpsBase, unittest.TestCase), {"device": "cuda"})`, or the same call to an in-repo
    metaclass (`meta`): a class with those bases and that namespace, at the call's position (values.ClassV.made);
    unknown unless the name, the bases (in-repo or external classes) and the namespace's keys are known."""
    name, bases, namespace = args
    if not (isinstance(name, Const) and isinstance(name.value, str) and isinstance(bases, Seq) and isinstance(
            namespace, DictV)) or not all(isinstance(b, (ClassV, Ext)) for b in bases.items) or not all(
                isinstance(k, Const) and isinstance(k.value, str) for k, _ in namespace.items):
        return UNK
    entries = tuple((k.value, v) for k, v in namespace.items if isinstance(k, Const) and isinstance(k.value, str))
    return ClassV(frame.rel, (getattr(n, "lineno", 0), getattr(n, "col_offset", 0)), name.value,
                  made=(bases.items, entries), meta=meta)


def _sorted(items: Value, reverse: Value, keys: Seq | None = None) -> Seq | None:
    """`sorted(xs)` of strings, numbers or tuples of them the analysis knows (a dict gives its keys, a set its
    elements), or `sorted(xs, key=f)` by the known results of `f` (`keys`); None for anything else: items of other
    kinds, mixed kinds Python would not compare, an unknown `reverse`."""
    if not isinstance(items, Seq) or items.kind == SLICE or not isinstance(reverse, Const):
        return None
    if keys is not None:
        if len(keys.items) != len(items.items):
            return None
        return _ordered(items, [_comparable(k) for k in keys.items], reverse)
    paths = [i for i in items.items if isinstance(i, PathV)]
    if paths and len(paths) == len(items.items) and len({p.kind for p in paths}) == 1 and paths[0].kind != "file":
        # pathlib paths order by their parts, path strings (`glob.glob`) by their text
        by_parts = paths[0].kind == "path"
        return Seq(tuple(sorted(paths, key=lambda p: p.text.split("/") if by_parts else [p.text],
                                reverse=bool(reverse.value))), "list")
    got = _ordered(items, [_comparable(i) for i in items.items], reverse)
    return got if got is not None else _ordered_by_prefix(items, reverse)


def _ordered_by_prefix(items: Seq, reverse: Const) -> Seq | None:
    """`sorted([(task, WEIGHTS / TASK2MODEL[task]) for task in TASKS])`: tuples whose unknown elements come after
    a known part that already orders every pair (Python compares tuples element by element and stops at the first
    that differs); None where a pair's known parts do not decide it."""
    if not 1 < len(items.items) <= MAX_PREFIX_SORTED or not all(
            isinstance(i, Seq) and i.kind == "tuple" for i in items.items):
        return None
    prefixes: list[tuple[object, ...]] = []
    for item in items.items:
        known: list[object] = []
        for part in item.items:  # type: ignore[attr-defined]
            c = _comparable(part)
            if c is None:
                break
            known.append(c)
        prefixes.append(tuple(known))
    for a, b in itertools.combinations(prefixes, 2):
        if not any(x != y for x, y in zip(a, b, strict=False)):
            return None  # equal as far as both are known: the unknown elements decide
    return _ordered(items, prefixes, reverse)  # type: ignore[arg-type]


def _ordered(items: Seq, values: list[str | int | float | tuple | None], reverse: Const) -> Seq | None:
    """The items in the order of their comparable `values`: Python's own order, stable, and its TypeError for kinds
    it does not compare (None)."""
    if any(v is None for v in values):
        return None
    try:
        order = sorted(range(len(values)), key=values.__getitem__, reverse=bool(reverse.value))
    except TypeError:
        return None
    return Seq(tuple(items.items[i] for i in order), "list")


def _comparable(v: Value) -> str | int | float | tuple | None:
    """The Python value `sorted` compares for a known string, number or tuple of them (`sorted((impl.rank,
    impl.name) for impl in impls)`: a dispatcher's preference order); None for anything else."""
    if isinstance(v, Const) and isinstance(v.value, (str, int, float)):
        return v.value
    if isinstance(v, Seq) and v.kind == "tuple":
        parts = [_comparable(i) for i in v.items]
        return None if any(p is None for p in parts) else tuple(parts)
    return None


def _zipped(name: str, args: list[Value], kwargs: dict[str, Value]) -> Value | None:
    """`zip(keys, combo)` and `enumerate(xs, start)` of known sequences (a dict counts as its keys): the tuples,
    in order (`dict(zip(options.keys(), combo))` builds a config per combination); None when not known."""
    seqs = [iterated(a) for a in (args[:1] if name == "enumerate" else args)]
    items = [s.items for s in seqs if isinstance(s, Seq) and s.kind != "set"]
    if not seqs or len(items) != len(seqs):
        return None
    if name == "zip":
        strict = kwargs.get("strict", Const(False)) if set(kwargs) <= {"strict"} else None
        if strict is None or strict != Const(False) and len({len(i) for i in items}) > 1:
            return None  # (`strict=True` raises on sequences of different lengths)
        return bounded(Seq(tuple(Seq(t, "tuple") for t in zip(*items, strict=False)), "list"))
    start = args[1] if len(args) > 1 else kwargs.get("start", Const(0))
    if len(args) > 2 or set(kwargs) - {"start"} or not (isinstance(start, Const) and type(start.value) is int):
        return None
    first = int(start.value)  # type: ignore[arg-type]
    return bounded(Seq(tuple(Seq((Const(first + i), x), "tuple") for i, x in enumerate(items[0])), "list"))


def _literally(conditions: list[ast.expr], value: bool) -> bool:
    """Whether a skip condition is written as a constant of this truth (`@unittest.skipIf(True, "...")`): then it
    skips in every world, like a skip without a condition."""
    return any(isinstance(c, ast.Constant) and type(c.value) in (bool, int) and bool(c.value) is value
               for c in conditions)  # (a string is a condition pytest evaluates, not a constant)


def _namespace(kwargs: dict[str, Value]) -> Value:
    """`argparse.Namespace(device="cpu", lr=0.1)`: an object with those attributes (`args.device` is "cpu");
    unknown when a `**x` of unknown keys may set any attribute (a keyword that is no identifier, as in _dict_of)."""
    if any(not k.isidentifier() for k in kwargs):
        return UNK
    return Inst(ClassV(NAMESPACE_REL, NAMESPACE_POS, "Namespace"), tuple(sorted(kwargs.items(), key=lambda kv: kv[0])))


def _dict_of(args: list[Value], kwargs: dict[str, Value]) -> Value:
    """`dict(pairs, **kw)` / `collections.OrderedDict(pairs)` of known (key, value) pairs; a later key wins.
    Unknown after `**x` with an unknown x (its keyword is no identifier: interp_calls.UNKNOWN_KWARGS)."""
    if any(not k.isidentifier() for k in kwargs):
        return UNK
    if len(args) > 1 or args and not (isinstance(args[0], Seq) and all(
            isinstance(i, Seq) and len(i.items) == 2 for i in args[0].items)):
        return args[0] if len(args) == 1 and not kwargs and isinstance(args[0], DictV) else UNK
    out: dict[Value, Value] = {}
    for pair in args[0].items if args else ():
        assert isinstance(pair, Seq)
        out[pair.items[0]] = pair.items[1]
    out.update((Const(k), v) for k, v in kwargs.items())
    return DictV(tuple(out.items()))


def _text_leaves(call: ast.Call) -> list[list[tuple[ast.expr, str]]]:
    """Per case of a parametrize call's literal argvalues (`[(a, b), pytest.param(c)]`), its values spelled as
    strings built at run time (f-strings, `"...".format(...)`, `"..." % x`, `"..." + x`, `str(x)`, `repr(x)`:
    "text") or numbers made at run time (`x.item()`: "number"). Empty when the argvalues are not a literal list
    or tuple of cases."""
    values = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "argvalues"),
                                                             None)
    if not isinstance(values, (ast.List, ast.Tuple)) or any(isinstance(e, ast.Starred) for e in values.elts):
        return []
    out: list[list[tuple[ast.expr, str]]] = []
    for case in values.elts:
        leaves: list[tuple[ast.expr, str]] = []
        todo = [case]
        while todo:
            e = todo.pop()
            if isinstance(e, (ast.List, ast.Tuple)):
                todo.extend(e.elts)
            elif isinstance(e, ast.Call) and _last_name(e.func) == "param":
                if not any(k.arg == "id" for k in e.keywords):  # `pytest.param(..., id=...)`: its id is given
                    todo.extend(a for a in e.args if not isinstance(a, ast.Starred))
            elif _builds_text(e):
                leaves.append((e, "text"))
            elif isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr == "item" and not (
                    e.args or e.keywords):
                leaves.append((e, "number"))  # a tensor's or array's one element as a Python number
        out.append(leaves)
    return out


def _builds_text(e: ast.expr) -> bool:
    """An expression that makes a string at run time."""
    if isinstance(e, ast.JoinedStr):
        return True
    if isinstance(e, ast.Call):
        f = e.func
        return (isinstance(f, ast.Attribute) and f.attr == "format" and isinstance(f.value, ast.Constant)
                and isinstance(f.value.value, str)) or (isinstance(f, ast.Name) and f.id in ("str", "repr"))
    return isinstance(e, ast.BinOp) and isinstance(e.op, (ast.Mod, ast.Add)) and isinstance(e.left, ast.Constant) \
        and isinstance(e.left.value, str)


MAX_PRODUCT = 1024  # tuples `itertools.product` is spelled out to (parametrize values; pytest's own cases bound)


# `math` functions of numbers, computed as Python does (`1 - math.sqrt(0.5)` in a parametrize list: pytest ids the
# float); bounded in cost whatever the arguments (no factorial, comb or perm of a huge int)
_MATH_FUNCTIONS = frozenset({
    "sqrt", "exp", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "asin", "acos", "atan", "atan2",
    "sinh", "cosh", "tanh", "floor", "ceil", "trunc", "fabs", "pow", "hypot", "radians", "degrees", "copysign",
    "fmod", "isfinite", "isinf", "isnan", "cbrt", "exp2"})


def _math(name: str, args: list[Value]) -> Value:
    """math.<name>(*args) of int and float constants; a number the analysis cannot spell otherwise."""
    values = [a.value for a in args if isinstance(a, Const) and type(a.value) in (int, float)]
    if len(values) != len(args) or any(type(v) is int and v.bit_length() > limits.MAX_INT_BITS for v in values):
        return UNKNOWN_SCALAR
    try:
        got = getattr(math, name)(*values)
    except (ValueError, OverflowError, TypeError, AttributeError):
        return UNKNOWN_SCALAR
    return Const(got)


_CHOOSING = {"itertools.combinations": itertools.combinations, "itertools.permutations": itertools.permutations,
             "itertools.combinations_with_replacement": itertools.combinations_with_replacement}


def _characters(v: Value) -> Value:
    """A string iterated by itertools (`combinations("abc", 2)`, funsor's input names): its characters, as a
    tuple; any other value as it is."""
    if isinstance(v, Const) and isinstance(v.value, str) and len(v.value) <= MAX_PRODUCT:
        return Seq(tuple(Const(c) for c in v.value), "tuple")
    return v


def _choose(path: str, args: list[Value]) -> Value:
    """`itertools.combinations(GENERATORS, 2)` (and permutations, combinations_with_replacement) of a known list,
    tuple or range: the tuples in Python's order, at most MAX_PRODUCT of them; a set's order is not known."""
    seq, r = args[0], args[1] if len(args) > 1 else None
    if not isinstance(seq, Seq) or seq.kind not in ("list", "tuple", "range") or not (
            r is None and path.endswith("permutations") or isinstance(r, Const) and type(r.value) is int
            and 0 <= r.value and (r.value <= len(seq.items) or not path.endswith("replacement"))):
        return UNK  # (a width past the sequence's length chooses nothing, as in Python, but with replacement)
    width = len(seq.items) if r is None else int(r.value)  # type: ignore[union-attr]
    combos = list(itertools.islice(_CHOOSING[path](seq.items, width), MAX_PRODUCT + 1))  # (stops past the bound)
    if len(combos) > MAX_PRODUCT:
        return UNK
    return Seq(tuple(Seq(c, "tuple") for c in combos), "list")


def _product(args: list[Value]) -> Value:
    """`itertools.product(xs, ys, ...)` of known lists, tuples, ranges or sets (`parameterized.expand(product(...))`):
    the tuples in Python's order. With a set among them the order is the hash order, which the analysis does not
    know: the result is a set of those (distinct) tuples, which pytest ids by value as it does a set literal's
    items, and which nothing that names cases by position accepts (collect._expand_cases). An unknown argument
    gives an unknown value."""
    seqs = [a for a in args if isinstance(a, Seq) and a.kind in ("list", "tuple", "range", "set")]
    if len(seqs) != len(args) or math.prod(len(a.items) for a in seqs) > MAX_PRODUCT:
        return UNK
    kind = "set" if any(a.kind == "set" for a in seqs) else "list"
    return Seq(tuple(Seq(combo, "tuple") for combo in itertools.product(*(a.items for a in seqs))), kind)


_PATCHED_CUDA = re.compile(r"(?:^|\.)torch\.(?:cuda|accelerator|backends\.cudnn|backends\.cuda)(?:\.|$)")


def _replaced_by_a_mock(kwargs: dict[str, Value]) -> bool:
    """Whether `patch(...)`/`patch.object(...)` without `new` puts a mock in the attribute's place that runs none of
    the original's code: not with `wraps=` (it calls the original) nor a `side_effect=`/`new_callable=` the analysis
    cannot tell from code of the repository (it would run in the original's place)."""
    if "wraps" in kwargs or "new_callable" in kwargs:
        return False
    effect = kwargs.get("side_effect")
    return effect is None or isinstance(effect, (Const, Seq)) or isinstance(effect, Ext) and effect.path.startswith(
        "builtins.")


def _mocks_cuda(target: Value, attr: Value | None) -> bool:
    if isinstance(target, Const) and isinstance(target.value, str):
        # "torch.cuda.x", or torch as seen from a module that imported it: "pkg.mod.torch.cuda.x"
        return _PATCHED_CUDA.search(target.value) is not None
    if isinstance(target, Ext):
        return target.path.startswith(("torch.cuda", "torch.accelerator")) or target.path in ("torch.backends.cudnn",)
    return False


def _mock_target(args: list[Value]) -> str:
    t = args[0]
    base = t.value if isinstance(t, Const) else t.path if isinstance(t, Ext) else "?"
    if len(args) > 1 and isinstance(args[1], Const) and isinstance(args[1].value, str) and isinstance(t, Ext):
        return f"{base}.{args[1].value}"
    return str(base)

def _filtered(pred: Value, items: tuple[Value, ...]) -> tuple[Value, ...] | None:
    """The items `filter(pred, items)` keeps, for `None` (truthiness) and `torch.is_tensor` as the
    predicate; None when any item cannot be decided."""
    if isinstance(pred, Const) and pred.value is None:
        test = truth
    elif isinstance(pred, Ext) and pred.path == "torch.is_tensor":
        test = is_tensor
    else:
        return None
    kept: list[Value] = []
    for item in items:
        t = test(item)
        if t is None:
            return None
        if t:
            kept.append(item)
    return tuple(kept)


def _src(n: ast.AST) -> str:
    if isinstance(n, ast.Call) and n.args:
        s = ast.unparse(n.args[0])
    elif isinstance(n, ast.Call) and n.keywords:
        s = ast.unparse(n.keywords[0].value)
    else:
        s = ""
    return s if len(s) <= 80 else s[:77] + "..."


def memory_bound_gib(conditions: list[ast.expr]) -> float:
    """The GPU memory (GiB) a skip condition asks for: `get_device_properties(0).total_memory < 16e9` (skipif),
    `mem_get_info()[1] / 2**30 >= 40` (skipUnless), either side, as the planner's VRAM; 0 where no condition
    compares a device's total memory with a number."""
    best = 0.0
    for cond in conditions:
        for node in ast.walk(cond):
            if not (isinstance(node, ast.Compare) and len(node.ops) == 1):
                continue
            if not isinstance(node.ops[0], (ast.Lt, ast.LtE, ast.Gt, ast.GtE)):
                continue
            for memory, other in ((node.left, node.comparators[0]), (node.comparators[0], node.left)):
                scale = 1.0
                if isinstance(memory, ast.BinOp) and isinstance(memory.op, (ast.Div, ast.FloorDiv)):
                    divisor = _number(memory.right)
                    if not divisor:
                        continue
                    memory, scale = memory.left, divisor
                bound = _number(other)
                if bound is not None and bound > 0 and _total_memory(memory):
                    best = max(best, bound * scale / 2**30)
    r = round(best, 1)
    return int(r) if r == int(r) else r  # (whole numbers as ints: the JSON stays short and stable)


def _total_memory(e: ast.expr) -> bool:
    """`<...>.total_memory` (a device's properties), `torch.cuda.mem_get_info()[1]` (free and total)."""
    if isinstance(e, ast.Attribute):
        return e.attr == "total_memory"
    return isinstance(e, ast.Subscript) and isinstance(e.value, ast.Call) and isinstance(e.value.func, ast.Attribute) \
        and e.value.func.attr == "mem_get_info" and isinstance(e.slice, ast.Constant) and e.slice.value == 1


def _number(e: ast.expr) -> float | None:
    """A number spelled by constants and arithmetic (`16e9`, `24 * 1024**3`, `2 ** 30`); None for anything else."""
    if isinstance(e, ast.Constant) and type(e.value) in (int, float):
        return float(e.value)
    if isinstance(e, ast.BinOp) and isinstance(e.op, (ast.Mult, ast.Pow, ast.Add, ast.Sub, ast.Div)):
        a, b = _number(e.left), _number(e.right)
        if a is None or b is None or isinstance(e.op, ast.Pow) and (abs(b) > 64 or abs(a) > 2**16):
            return None
        try:
            return float(_BIN_NUMERIC[type(e.op)](a, b))
        except (ZeroDivisionError, OverflowError):
            return None
    return None


_BIN_NUMERIC = {ast.Mult: lambda a, b: a * b, ast.Pow: lambda a, b: a ** b, ast.Add: lambda a, b: a + b,
                ast.Sub: lambda a, b: a - b, ast.Div: lambda a, b: a / b}


def _cond_nodes(n: ast.AST) -> list[ast.expr]:
    """The condition expressions of a skipif/skipIf/skipUnless call, positional first, as make_mark orders them."""
    if not isinstance(n, ast.Call):
        return []
    return list(n.args) + [k.value for k in n.keywords if k.arg == "condition"]


def _src_arg(n: ast.AST, i: int) -> str:
    if isinstance(n, ast.Call) and len(n.args) > i:
        return ast.unparse(n.args[i])[:40]
    return "?"


def _names_accelerator(reason: Value | None) -> bool:
    """Whether a skip's reason is a constant text that names an accelerator (evidence.names_accelerator)."""
    return isinstance(reason, Const) and names_accelerator(reason.value)


def _is_class_value(v: Value) -> Value:
    """`inspect.isclass(v)` (and `isinstance(v, type)`) of a value or a choice of values: decided when every
    alternative gives the same answer (_is_class), else unknown."""
    outs = {_is_class(a) for a in alternatives(v)}
    return Const(outs.pop()) if len(outs) == 1 and None not in outs else UNK


def _is_class(v: Value) -> bool | None:
    """`inspect.isclass(v)`: an in-repo class is one; functions, constants, containers, modules are not (an external
    name without a dot is a module: `import numpy as np`); None for other external names and unknown values."""
    if isinstance(v, ClassV):
        return True
    if isinstance(v, (FuncV, Const, Seq, DictV, ModV, TensorV, DeviceV)) or isinstance(v, Ext) and "." not in v.path:
        return False
    return None


def _reached_skip(frame: Frame, line: int, what: str, reason: Value | None) -> None:
    """A skip call reached: keyed by its location, and GPU_REASON when its reason names an accelerator."""
    suffix = GPU_REASON if _names_accelerator(reason) else ""
    frame.add(Finding(SKIP, (step(frame.rel, line, what),), key=f"{frame.rel}:{line}{suffix}"))


def _cuda_text(src: str) -> bool:
    s = src.lower()
    return any(w in s for w in ("cuda", "gpu", "device", "accelerator"))


def _small_format(template: str) -> bool:
    """Whether a format string's fields ask for no width or precision of 1000 or more, nor nested fields
    (`"{:1000000000}".format(x)` in hostile code would build a gigabyte string)."""
    try:
        fields = list(string.Formatter().parse(template))
    except ValueError:
        return False
    return all(not spec or ("{" not in spec and not re.search(r"\d{4,}", spec)) for _, _, spec, _ in fields)


# Lightning's entry points that take `accelerator=` / `devices=` (interp_external._lightning_accelerator)
_LIGHTNING_ROOTS = frozenset({"lightning", "pytorch_lightning", "lightning_fabric"})


def _is_lightning_launcher(path: str) -> bool:
    return path.split(".", 1)[0] in _LIGHTNING_ROOTS and path.rsplit(".", 1)[-1] in ("Trainer", "Fabric")


def _lightning_device_count(devices: Value | None) -> int:
    """How many GPUs `devices=` asks for: n, a list of indices, `"0,1"`; 1 for `-1`/`"auto"`/unknown (at least one)."""
    if isinstance(devices, Const) and type(devices.value) is int and devices.value > 0:
        return devices.value
    if isinstance(devices, Seq) and devices.items:
        return len(devices.items)
    if isinstance(devices, Const) and isinstance(devices.value, str):
        text = devices.value.strip()
        if text.isdigit() and int(text) > 0:
            return int(text)
        if "," in text:
            return len([t for t in text.split(",") if t.strip()])
    return 1


def _runnable_pattern(pattern: Value) -> str | None:
    """A known regular expression (a string, or what `re.compile` made of one) that is short and cannot backtrack
    without bound (no repeated group, no backreference); None for any other."""
    if isinstance(pattern, Ext) and pattern.path.startswith(REGEX_PREFIX):
        pattern = Const(pattern.path[len(REGEX_PREFIX):])
    if not (isinstance(pattern, Const) and isinstance(pattern.value, str)) or len(pattern.value) > MAX_REGEX or \
            _BACKTRACKS.search(pattern.value):
        return None
    return pattern.value


def regex_match(how: str, pattern: Value, text: Value) -> Value:
    """`re.match(r"cuda(:\\d+)?$", device)` (`how`: match, fullmatch or search) of a known pattern and string: None
    where it does not match, a truthy match object where it does; unknown otherwise. Patterns that may backtrack
    without bound (a repeated group, a backreference) and long texts are not run."""
    regex = _runnable_pattern(pattern)
    if regex is None or not (isinstance(text, Const) and isinstance(text.value, str)) or len(text.value) > MAX_REGEX:
        return UNK
    try:
        found = getattr(re, how)(regex, text.value)
    except re.error:
        return UNK
    return Const(None) if found is None else KnownTruth(True)


def regex_sub(pattern: Value, repl: Value, text: Value) -> Value:
    """`re.sub(pattern, repl, text)` of a known pattern (bounded as regex_match's; a longer text for a pattern of one
    quantifier, funsor's multi-line case names), replacement string and text: the string Python gives; unknown
    otherwise (a replacement function is not run)."""
    regex = _runnable_pattern(pattern)
    if regex is None or not (isinstance(repl, Const) and isinstance(repl.value, str) and isinstance(text, Const) and
                             isinstance(text.value, str)) or len(repl.value) > MAX_REGEX or \
            len(text.value) > (MAX_REWRITTEN if len(re.findall(r"[*+?}]", regex)) <= 1 else MAX_REGEX):
        return UNK
    try:
        return Const(re.sub(regex, repl.value, text.value))
    except re.error:
        return UNK


def _str_argument(v: Value) -> object:
    """The Python value of a string method's argument: a string, an int, a tuple of strings (`startswith`'s
    prefixes); NOT_LITERAL for anything else."""
    if isinstance(v, Const) and isinstance(v.value, (str, int, tuple)):
        return v.value
    if isinstance(v, Seq) and v.kind == "tuple" and all(isinstance(i, Const) and isinstance(i.value, str)
                                                         for i in v.items):
        return tuple(i.value for i in v.items if isinstance(i, Const))
    return NOT_LITERAL


def _str_method(text: str, name: str, args: list[object]) -> Value:
    """`text.<name>(*args)` for a plain string method (STR_METHODS) of known arguments."""
    limits.check_str_method(text, name, args)
    try:
        r = getattr(text, name)(*args)
    except (TypeError, ValueError):
        return UNK
    if isinstance(r, list):
        return Seq(tuple(Const(x) for x in r), "list")
    return Const(r) if isinstance(r, (str, bytes, bool, int)) else UNK
