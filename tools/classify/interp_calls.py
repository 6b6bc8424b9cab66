"""The interpreter's calls: call sites (arguments, method calls, in-place mutation of known containers),
dispatch on the callee, and following in-repo functions through their summaries (summaries.py: one
analysis per function and context, recursion widened, cycles cut, at most MAX_DEPTH calls deep). Calls
leaving the repository go to interp_external and interp_torch; so do methods of objects the analysis does
not model (`method_call`: pytest/unittest objects, known containers, then tensors and modules).
"""

from __future__ import annotations

import ast
import dataclasses
import string
from typing import Any

from tools.classify import (
    argparse_model,
    click_model,
    conventions,
    installed,
    nn_modules,
    omegaconf_model,
    registries,
    typer_model,
    versions,
)
from tools.classify.closures import decorated_by_local_defs
from tools.classify.dataclass_fields import GeneratedInit
from tools.classify.devices import _compare, truth
from tools.classify.evidence import GPU, SKIP, UNKNOWN, Finding, step
from tools.classify.interp_base import (
    CALLED_UNRESOLVED,
    DEFAULT_PREFIX,
    DISPATCH,
    EMPTY_DICT,
    MODULE_WITHIN,
    MUTATORS,
    WRAPPER,
    BudgetExceeded,
    CallResult,
    Frame,
    Generated,
    InterpBase,
    _call_requirement,
    _mutable_target,
    decorated_object,
    frame_stores,
    is_fixture_def,
    kept_on_node,
    lost_entry,
)
from tools.classify.interp_external import (
    FIELD_FACTORY,
    HOOK_ARGUMENTS,
    REGEX_PREFIX,
    RUNS_ITS_CALLABLE,
    made_class,
    regex_match,
    regex_sub,
)
from tools.classify.module_device import DEVICE_PROPERTY_SUFFIXES
from tools.classify.receivers import apply_delta, receiver_delta, receiver_uses
from tools.classify.summaries import SUMMARY_BUDGET, class_walk_shape, context_size, widen_call
from tools.classify.values import (
    MAX_ALTERNATIVES,
    MODULE_CONTAINERS,
    NORETURN,
    ClassV,
    Const,
    DictV,
    EnumV,
    Ext,
    FuncV,
    Inst,
    MarkV,
    MockV,
    ModV,
    NNModV,
    NoReturn,
    OneOf,
    PartialV,
    PathV,
    RequestV,
    ReqV,
    Seq,
    SkipV,
    SuperV,
    TensorV,
    TestFnV,
    UnknownParameter,
    Unresolved,
    Value,
    alternatives,
    bounded,
    decided_key,
    holds_code_of,
    is_objects,
    join,
    join_all,
    keywords_of,
    module_children,
)
from tools.classify.values import UNRESOLVED as UNK
from tools.classify.wrapper_marks import FUNCTION_NODES, checked_parametrize, visible_names

MAX_DEPTH = 24
SETATTR = Ext("builtins.setattr")
UPDATE_WRAPPER = Ext("functools.update_wrapper")
GETATTR = Ext("builtins.getattr")
UNKNOWN_KWARGS = "**"  # a keyword no call can spell: the call passed `**x` with an unknown x
MAX_CONTAINER = 1024  # items of a list or set grown one call at a time (parameter tables: as itertools.product's)
# pydantic's model methods the analysis follows on in-repo models (CallsMixin._model_method; v1 names too)
MODEL_METHODS = frozenset({"model_validate", "parse_obj", "model_construct", "model_copy", "copy", "model_dump",
                           "dict"})


class CallsMixin(InterpBase):
    """Call sites and in-repo calls; a part of dataflow.Interp."""

    def ev_Call(self, n: ast.Call, frame: Frame) -> Value:
        f = n.func
        reads_before = self.world_reads
        if len(n.args) == 2 and not n.keywords and isinstance(n.args[0], ast.Name) and (
                isinstance(f, ast.Name) and f.id == "update_wrapper" or isinstance(f, ast.Attribute) and
                f.attr == "update_wrapper") and self.ev(f, frame) == UPDATE_WRAPPER:
            # `functools.update_wrapper(self, fn)` in a callable wrapper's `__init__`: the object takes the function's
            # name (pytest ids a parameter by its `__name__`) and keeps it as `__wrapped__`
            wrapped = self.ev(n.args[1], frame)
            if isinstance(wrapped, FuncV):
                target = n.args[0]
                for attr, value in (("__name__", Const(wrapped.name)), ("__wrapped__", wrapped)):
                    self.bind(ast.copy_location(ast.Attribute(target, attr, ast.Store()), n), value, frame)
                return self.ev(target, frame)
        obj = _setattr_object(n)
        if obj is not None and (isinstance(f, ast.Attribute) or self.lookup("setattr", frame) == SETATTR):
            attr = self._attribute_name(self.ev(obj, frame), self.ev(n.args[1], frame), frame.world)
            if attr is not None:
                # `setattr(self, "device", d)`, `object.__setattr__(self, "device", d)` (frozen dataclasses),
                # `for k, v in options.items(): setattr(self, k, v)` over known options: the assignment
                # `self.device = d`; reading the class attribute instead would keep a stale device
                self.bind(_attribute_target(obj, attr, n), self.ev(n.args[2], frame), frame)
                return Const(None)
            cls = self.lookup(obj.id, frame)
            fn = self.ev(n.args[2], frame)
            tree = self.source.module(frame.rel).tree
            names = alternatives(self.ev(n.args[1], frame))
            sets_function = isinstance(cls, ClassV) and any(isinstance(a, FuncV) for a in alternatives(fn))
            if sets_function and len(names) > 1 and all(isinstance(a, Const) and isinstance(a.value, str)
                                                        for a in names):
                # `for name in ("start", "restart"): setattr(Worker, name, _step)` (one joined name per loop): a
                # method under each of the names
                for a in names:
                    self.add_generated_test(Seq((cls, a), "tuple"), bounded(fn), frame)
                return Const(None)
            if sets_function and not (
                    isinstance(n.args[1], ast.Name) and tree is not None and registries.names_own_attributes(
                        tree, n.args[1].id)):
                # a function set on a class under a name not known (`f"test_{path.stem}"` over a directory
                # listing): maybe a test pytest collects (registries.UNNAMED_METHODS)
                self.add_generated_test(Seq((cls, UNK), "tuple"), bounded(fn), frame)
                return Const(None)
        namespace = self.namespace_of(f.value, frame) if isinstance(f, ast.Attribute) and f.attr == "get" and \
            1 <= len(n.args) <= 2 and not n.keywords else None
        if namespace is not None:  # `globals().get(name, default)`
            default = self.ev(n.args[1], frame) if len(n.args) == 2 else Const(None)
            return self.namespace_entry(namespace, self.ev(n.args[0], frame), default, n, frame)
        if nn_modules.add_module_call(n):
            holder = n.func.value  # type: ignore[attr-defined]
            recv, name = self.ev(holder, frame), self.ev(n.args[0], frame)
            if isinstance(recv, Inst) and recv.nn is not None:
                child = self.ev(n.args[1], frame)
                attr = self._attribute_name(recv, name, frame.world)
                if attr is not None:
                    # `self.add_module(str(idx), module)` in a torch module's `__init__` (backpack's `_Branch`):
                    # the child registered under that name, as `self.<name> = module` registers it (and prints it)
                    self.bind(_attribute_target(holder, attr, n), child, frame)
                else:
                    self.bind(holder, nn_modules.unprintable(recv), frame)  # a child under a name not known
                return Const(None)
        args: list[Value] = []
        for a in n.args:
            v = self.ev(a, frame)
            if isinstance(a, ast.Starred):
                if isinstance(v, Seq):
                    args.extend(v.items)
                else:
                    args.append(UNK)
            else:
                args.append(v)
        if isinstance(f, ast.Attribute) and f.attr in UNITTEST_ASSERTS and isinstance(f.value, ast.Name) \
                and len(args) >= UNITTEST_ASSERTS[f.attr][0]:
            # `self.assertTrue(torch.cuda.is_available())` is `assert torch.cuda.is_available()`
            self.world_decided_assert(_unittest_assertion_holds(f.attr, args), reads_before, frame, n.lineno,
                                      short_source(n))
        variants: list[dict[str, Value]] = [{}]
        for k in n.keywords:
            v = self.ev(k.value, frame)
            if k.arg is not None:
                for kw in variants:
                    kw[k.arg] = v
                continue
            choices = [a for a in alternatives(v) if isinstance(a, DictV)]
            if choices and len(choices) == len(alternatives(v)) and len(variants) * len(choices) <= MAX_ALTERNATIVES:
                # `f(**kwargs)` forwarding keyword arguments the analysis knows; a choice of dicts (one per path
                # after `if cond: kwargs.setdefault("envoys", ...)`) makes one call per choice, as an undecided
                # callee does: which keywords a call gets decides what the callee does with them
                variants = [{**kw, **keywords_of(d)} for kw in variants for d in choices]
            else:
                for kw in variants:
                    kw[UNKNOWN_KWARGS] = UNK  # the callee's `**kwargs` is not known to be complete
        if len(variants) > 1:
            return join_all([self._dispatch_call(n, args, kw, frame) for kw in variants])
        return self._dispatch_call(n, args, variants[0], frame)

    def _dispatch_call(self, n: ast.Call, args: list[Value], kwargs: dict[str, Value], frame: Frame) -> Value:
        """The call `n` with its arguments evaluated: a container mutation, a method, or a callee's call."""
        f = n.func
        if isinstance(f, ast.Attribute):
            if f.attr in ("update", "clear") and isinstance(f.value, ast.Attribute) and not kwargs and \
                    self.namespace_call(f.value, f.attr, args, frame):
                return Const(None)  # `self.__dict__.update(d)`, `Cls._shared_state.clear()`
            recv = self.ev(f.value, frame)
            if argparse_model.is_parser(recv):
                return self._parser_call(recv, f, args, kwargs, frame)
            if argparse_model.is_group(recv) and isinstance(recv, Inst):
                return self._group_call(recv, f.attr, args, kwargs, frame)
            if argparse_model.is_subparsers(recv) and isinstance(recv, Inst):
                return self._subparsers_call(recv, f.attr, args, kwargs, n, frame)
            if click_model.is_runner(recv) or click_model.command_of(recv) is not None:
                got = self._click_call(recv, f, args, kwargs, n, frame)
                if got is not None:
                    return got
            if omegaconf_model.is_config(recv) and isinstance(recv, Inst):
                if f.attr in omegaconf_model.MUTATORS and _mutable_target(f.value):
                    # `cfg.merge_from_list([...])` (yacs), `cfg.update(...)`: the name holds the changed configuration
                    self.bind(f.value, omegaconf_model.changed_in_place(recv, f.attr, args, kwargs), frame)
                    return UNK if f.attr in ("pop", "setdefault") else Const(None)
                got = self.config_method(recv, f.attr, args, kwargs)
                if got is not None:
                    return got
            if typer_model.is_app(recv) and isinstance(recv, Inst):
                if f.attr == "add_typer" and _mutable_target(f.value):
                    self.bind(f.value, typer_model.incomplete(recv), frame)  # (sub-applications: not followed)
                    return Const(None)
                got = typer_model.app_method(recv, f.attr, args, kwargs)
                if got is not None:
                    return got
            if isinstance(recv, NNModV) and f.attr in CONTAINER_GROWERS and recv.name in MODULE_CONTAINERS and \
                    not kwargs and _mutable_target(f.value):
                # `self.layers.append(Block())`: values are immutable, so the holder is rebound to the container with
                # the child. A change the analysis cannot follow leaves a name's container unprintable and an
                # attribute's as it was (the children it knows, whose code still runs), as before this rule
                after = nn_modules.grown(recv, f.attr, args)
                if after is not None or isinstance(f.value, ast.Name):
                    self.bind(f.value, after if after is not None else nn_modules.unprintable(recv), frame)
                return after if after is not None else UNK
            if f.attr in REGISTRY_STORES and type(recv) is DictV and recv.origin and isinstance(
                    reg := self.registry_target(f.value, frame), DictV):
                return self._store_by_method(f, reg, recv, args, kwargs, frame)
            if f.attr in registries.LIST_STORES and type(recv) is Seq and recv.origin and isinstance(
                    reg := self.registry_target(f.value, frame), Seq):
                # `CASES.append(fn)` in a decorator, `CASES.extend([...])`; `insert` keeps the items, not the place
                added = args[:1] if f.attr == "append" else args[1:2] if f.attr == "insert" else (
                    list(args[0].items) if args and isinstance(args[0], Seq) else [UNK])
                self.store_into_registry(f.value, reg, [(Const(None), a) for a in added], frame)
                return Const(None)
            if f.attr in registries.ENTRY_MUTATORS and isinstance(f.value, ast.Subscript) and not kwargs and \
                    isinstance(reg := self.registry_target(f.value.value, frame), DictV):
                # `BY_KIND[kind].append(fn)`: the registry's entry for `kind` changed (a defaultdict's missing one is
                # empty)
                outer = self.ev(f.value.slice, frame)
                entry = self.registry_entry(reg, outer, frame.world)
                empty: Value = Seq((), "list") if f.attr in registries.LIST_STORES else Seq((), "set") if \
                    f.attr == "add" else DictV(())
                changed = _mutated(empty if entry is None else entry, f.attr, args)
                self.store_into_registry(f.value.value, reg, [(outer, changed[0] if changed else UNK)], frame)
                return changed[1] if changed else Const(None)
            if f.attr in MUTATORS and not kwargs and _mutable_target(f.value):
                got = _mutated(recv, f.attr, args)
                if got is not None:
                    # `DEVICES.append("cuda")`, `device_args.add(d)`: values are immutable, so the name (or
                    # `self.attr`) is rebound to the grown/shrunk container
                    self.bind(f.value, registries.changed_in_place(recv, got[0]), frame)
                    return got[1]
                if _known_containers(recv):
                    # a change the analysis cannot follow exactly: the contents are no longer known (a stale copy
                    # would give ids for cases that are not collected, or miss some)
                    got_v = self.method_call(recv, f.attr, args, kwargs, n, frame)
                    self.bind(f.value, UNK, frame)
                    return got_v
            if isinstance(recv, DictV) and f.attr in DICT_MUTATORS and _mutable_target(f.value):
                known = _mutate_dict(recv, f.attr, args, kwargs)
                if known is not None:
                    # `kwargs.setdefault("envoys", tp_envoys())` with a constant key on a dict whose keys are known
                    self.bind(f.value, registries.changed_in_place(recv, known[0]), frame)
                    return known[1]
                # `d.update(...)`, `d.pop(k)` otherwise: the dict's contents are no longer known (a stale copy would
                # let `d.values()` or `d.get(k)` miss what was stored)
                got_v = self.method_call(recv, f.attr, args, kwargs, n, frame)
                self.bind(f.value, UNK, frame)
                return got_v
            return self.method_call(recv, f.attr, args, kwargs, n, frame)
        if isinstance(f, ast.Call) and isinstance(f.func, ast.Name) and f.func.id == "getattr" and len(f.args) == 2 \
                and not f.keywords and isinstance(f.args[1], ast.Constant) and isinstance(f.args[1].value, str) \
                and self.lookup("getattr", frame) == GETATTR:
            # `getattr(x, "cuda")()`: the method call `x.cuda()`, as for an attribute spelled out
            return self.method_call(self.ev(f.args[0], frame), f.args[1].value, args, kwargs, n, frame)
        if isinstance(f, ast.Subscript):
            kernel = self.ev(f.value, frame)
            if isinstance(kernel, FuncV) and self._triton_kernel(kernel, frame.world):
                # `add_kernel[grid](x, y, out, n)`: a Triton kernel launches on a GPU, and fails without one (but in
                # Triton's interpreter, TRITON_INTERPRET=1 in the environment pytest starts in, which the analysis
                # does not see: such a suite's kernels are routed to GPU runners)
                frame.add(Finding(GPU, (step(frame.rel, n.lineno, f"launches the Triton kernel {kernel.name}() "
                                                                  "(Triton kernels run on GPUs)"),), 1))
                return UNK
        callee = self.ev(f, frame)
        name = f.id if isinstance(f, ast.Name) else ""
        return self.call(callee, args, kwargs, n, frame, name)

    def autograd_apply(self, cls: ClassV, args: list[Value], kwargs: dict[str, Value], n: ast.AST,
                       frame: Frame) -> Value:
        """`MyFunction.apply(x, ...)` of a custom `torch.autograd.Function`: torch runs the class's `forward` (with a
        context first, or without one when the class has `setup_context`, then that), and its `backward` when the
        output is differentiated, with a context object the analysis does not model; the result is forward's.
        Whether the test differentiates is not tracked: the backward's GPU needs count (liger-kernel's Triton kernels
        launch from both), what it leaves unknown does not (its inputs come from the context: pyqtorch's
        parameter-shift backward reads its devices from `ctx.saved_tensors`, and 119 CPU tests became `unknown`)."""
        line = getattr(n, "lineno", 0)
        forward = self.class_lookup(cls, "forward", frame.world)
        if not isinstance(forward, FuncV):
            return UNK
        setup = self.class_lookup(cls, "setup_context", frame.world)
        if isinstance(setup, FuncV):
            out = self.call_function_from(forward, args, kwargs, line, frame)
            self.call_function_from(setup, [UNK, Seq(tuple(args), "tuple"), out], {}, line, frame)
        else:
            out = self.call_function_from(forward, [UNK, *args], kwargs, line, frame)
        backward = self.class_lookup(cls, "backward", frame.world)
        if isinstance(backward, FuncV):
            outputs = len(out.items) if isinstance(out, Seq) and out.kind == "tuple" else 1
            aside = dataclasses.replace(frame, findings=[])
            self.call_function_from(backward, [UNK] * (outputs + 1), {}, line, aside)
            for f in aside.findings:
                if f.kind == GPU:
                    frame.add(f)
        return out

    def _triton_kernel(self, fv: FuncV, world: int) -> bool:
        """Whether a def is decorated by Triton (`@triton.jit`, `@triton.autotune(...)`, `@jit` imported from
        triton): a decorator whose callee is an external name under `triton`. Memoised per def."""
        key = (fv.rel, fv.pos, world)
        got = self.triton_kernels.get(key)
        if got is None:
            node = self.source.module(fv.rel).defs.get(fv.pos)
            frame = Frame(fv.rel, world, {}, self.module_state(fv.rel, world, ()).env, [])
            got = self.triton_kernels[key] = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                isinstance(v := self.ev(d.func if isinstance(d, ast.Call) else d, frame), Ext) and (
                    v.path == "triton" or v.path.startswith("triton.")) for d in node.decorator_list)
        return got

    def method_call(self, recv: Value, name: str, args: list[Value], kwargs: dict[str, Value], n: ast.Call,
                    frame: Frame) -> Value:
        if (made := decorated_object(recv)) is not None and isinstance(
                self.class_lookup(made.cls, name, frame.world), FuncV):
            recv = made  # `logaddexp.make(...)` of `@Op.make def logaddexp`: a method of the object the name holds
        if name in MODEL_METHODS and isinstance(recv, (Inst, ClassV)):
            got = self._model_method(recv, name, args, kwargs, n, frame)
            if got is not None:
                return got
        if name in HOOK_ARGUMENTS and args and isinstance(args[0], FuncV) and frame.module_env is not None and not (
                isinstance(recv, Inst) and isinstance(self.class_lookup(recv.cls, name, frame.world), FuncV)):
            # `model.register_forward_hook(hook)`, `x.register_hook(fn)`: torch runs the hook when the module runs
            # (or the gradient is computed), so what it does belongs to the caller: run here, with unknown
            # arguments (it was never run: a hook moving outputs to CUDA was a false CPU)
            self.call(args[0], [UNK] * HOOK_ARGUMENTS[name], {}, n, frame, name)
            return UNK  # (a handle)
        if isinstance(recv, Ext) and recv.path.startswith(REGEX_PREFIX) and name in ("match", "fullmatch", "search") \
                and len(args) == 1 and not kwargs:
            return regex_match(name, recv, args[0])  # `PATTERN.match(device)` of `PATTERN = re.compile(...)`
        if isinstance(recv, Ext) and recv.path.startswith(REGEX_PREFIX) and name == "sub" and len(args) == 2 and \
                not kwargs:
            return regex_sub(recv, args[0], args[1])
        if isinstance(recv, Ext) and recv.path.startswith(MODULE_WITHIN):
            return module_startswith(recv.path[len(MODULE_WITHIN):], args) if name == "startswith" and not \
                kwargs else UNK
        recv = versions.as_text(recv)  # `torch.__version__.split(".")`: a str
        if isinstance(recv, OneOf) and (not is_objects(recv) and any(
                isinstance(a, (ClassV, ModV, Inst)) for a in recv.alts) or is_objects(recv) and len({
                self._has_member(a, name, frame.world) for a in alternatives(recv) if isinstance(a, Inst)}) > 1):
            # `REGISTRY[key].quantize(...)` with an undecided key: the method of each candidate class (or module,
            # object) runs on some path, so each is analysed and its findings kept; so with objects of which only
            # some have the method in-repo (`REGISTRY[key](params).step()` over an in-repo optimizer and one
            # inheriting torch's `step`)
            return join_all([self.method_call(a, name, args, kwargs, n, frame) for a in alternatives(recv)])
        if isinstance(recv, ClassV) and name == "__subclasses__" and not args and not kwargs:
            return self.subclasses_of(recv, frame.world)
        if isinstance(recv, RequestV) and name == "param":
            # `request.param()` in a fixture whose params are builders (`params=[make_cpu, make_cuda]`): the
            # parameter is called (was: a method of the request, so a CUDA builder went unseen, a false CPU)
            return self.call(recv.param, args, kwargs, n, frame, name)
        if isinstance(recv, (Ext, ModV, ClassV, SuperV)) or (is_objects(recv) and all(
                self._has_member(a, name, frame.world) for a in alternatives(recv) if isinstance(a, Inst))) or (
                isinstance(recv, EnumV) and isinstance(self.class_lookup(recv.cls, name, frame.world), FuncV)):
            return self.call(self.getattr_v(recv, name, frame, n), args, kwargs, n, frame, name)
        if isinstance(recv, PathV):
            return self.path_method_call(recv, name, args, kwargs, frame)
        if isinstance(recv, Unresolved):
            self.lost.append(lost_entry(name, frame.rel, n))
        if isinstance(recv, Unresolved) and name in RUNS_ITS_CALLABLE and self.run_passed_callable(
                name, args, kwargs, n, frame):
            return UNK  # `executor.submit(fn, x)`
        # a method of an object the analysis does not model (their names are disjoint: the order is not a priority)
        got = self.framework_method(recv, name, args, kwargs, n, frame)
        if got is None and name in ("keys", "values", "items") and recv == EMPTY_DICT and not args and \
                isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name) and \
                n.func.value.id in frame.empty_defaults:
            return Seq((), "list")  # `def factory(extra={}): names + list(extra.keys())` called without `extra`
        if got is None and name == "format" and isinstance(recv, Const) and isinstance(recv.value, str):
            args, kwargs = self._printed_format_args(recv.value, args, kwargs, n, frame)
        if got is None:
            got = self.container_method(recv, name, args, kwargs)
        return got if got is not None else self.tensor_method(recv, name, args, kwargs, n, frame)

    def _printed_format_args(self, template: str, args: list[Value], kwargs: dict[str, Value], n: ast.AST,
                             frame: Frame) -> tuple[list[Value], dict[str, Value]]:
        """`"{}-{}".format(op, domain)`: objects whose class says how they print (printed_by_class) replaced by
        their text, when every field of the template is a plain `{}` (no conversion or spec: each is `format(x,
        "")`, the object's `__format__`, `__str__` or `__repr__`); the arguments as they are otherwise."""
        try:
            fields = [(spec, conv) for _, name, spec, conv in string.Formatter().parse(template) if name is not None]
        except ValueError:
            return args, kwargs
        if any(spec or conv for spec, conv in fields):
            return args, kwargs

        def text(v: Value) -> Value:
            got = self.printed_by_class(v, "", "", n, frame)
            return Const(got) if got is not None else v
        return [text(a) for a in args], {k: text(v) for k, v in kwargs.items()}

    def _has_member(self, obj: Inst, name: str, world: int) -> bool:
        """Whether `obj.<name>` is something the analysis knows: an attribute, what its class gives, or its class
        (`self.__class__(**config)`), or what its class's `__getattr__` forwards."""
        return obj.attr(name) is not None or name == "__class__" or self.class_lookup(
            obj.cls, name, world) is not None or self.attribute_hook(obj, name, world) is not None

    def _group_call(self, group: Inst, method: str, args: list[Value], kwargs: dict[str, Value],
                    frame: Frame) -> Value:
        """A method of an argument group (argparse_model.group): `add_argument` adds the option to the parser the
        group's name holds here (rebound); a nested group is the same group. A parser not held here (the group was
        handed to a helper) is not changed: its namespace lacks the option, whose value is then unknown."""
        if method in argparse_model.GROUP_METHODS:
            return group
        held = group.attr("parser")
        name = held.value if isinstance(held, Const) and isinstance(held.value, str) else None
        parser = frame.env.get(name) if name is not None else None
        if method == "add_argument" and name is not None and argparse_model.is_parser(parser) and \
                isinstance(parser, Inst):
            self._rebind_parser(name, argparse_model.with_option(parser, args, kwargs), frame)
        return UNK

    def _subparsers_call(self, subs: Inst, method: str, args: list[Value], kwargs: dict[str, Value], n: ast.Call,
                         frame: Frame) -> Value:
        """`subparsers.add_parser(name, aliases=...)`: a new parser, recorded by where it was made on the parser the
        sub-parsers' name holds here (rebound); another method is not followed (the parser becomes incomplete)."""
        held = subs.attr("parser")
        name = held.value if isinstance(held, Const) and isinstance(held.value, str) else None
        parser = frame.env.get(name) if name is not None else None
        if name is None or not (argparse_model.is_parser(parser) and isinstance(parser, Inst)):
            return UNK
        if method != "add_parser":
            frame.env[name] = argparse_model.incomplete(parser)
            return UNK
        child = argparse_model.sub_parser(f"{frame.rel}:{n.lineno}:{n.col_offset}", name)
        self._rebind_parser(name, argparse_model.with_subcommand(parser, args, kwargs, child), frame)
        return child

    def _rebind_parser(self, name: str, parser: Inst, frame: Frame) -> None:
        """`name` rebound to a parser that changed; a sub-parser's parents (held by names here) record the change."""
        frame.env[name] = parser
        up = argparse_model.parent_of(parser)
        while up is not None:
            parent = frame.env.get(up[0])
            if not (argparse_model.is_parser(parent) and isinstance(parent, Inst)):
                return
            parser = frame.env[up[0]] = argparse_model.with_child(parent, up[1], parser)
            up = argparse_model.parent_of(parser)

    def _parser_call(self, parser: Inst, f: ast.Attribute, args: list[Value], kwargs: dict[str, Value],
                     frame: Frame) -> Value:
        """A method of an argparse parser (argparse_model.py): `add_argument` rebinds the parser's name to the parser
        with that option; `parse_args(argv)` / `parse_known_args(argv)` read argv, or, without one, the command line
        of the program being run (argparse_model.ARGV; outside a program it is pytest's own: unknown)."""
        if f.attr in argparse_model.GROUP_METHODS and isinstance(f.value, ast.Name):
            return argparse_model.group(f.value.id)
        if f.attr == "add_subparsers" and isinstance(f.value, ast.Name):
            self._rebind_parser(f.value.id, argparse_model.with_subparsers(parser, kwargs), frame)
            return argparse_model.subparsers(f.value.id)
        if f.attr in ("set_defaults", "add_argument") and isinstance(f.value, ast.Name):
            self._rebind_parser(f.value.id, argparse_model.with_option(parser, args, kwargs) if f.attr == "add_argument"
                                else argparse_model.with_defaults(parser, kwargs) if not args else
                                argparse_model.incomplete(parser), frame)
            return UNK if f.attr == "add_argument" else Const(None)
        if f.attr == "add_argument" or f.attr in argparse_model.UNFOLLOWED or f.attr in argparse_model.GROUP_METHODS \
                or f.attr in ("add_subparsers", "set_defaults"):
            if _mutable_target(f.value):
                self.bind(f.value, argparse_model.with_option(parser, args, kwargs) if f.attr == "add_argument" else
                          argparse_model.incomplete(parser), frame)
            return UNK
        if f.attr in ("parse_args", "parse_known_args"):
            given = args[0] if args else kwargs.get("args")
            argv = frame.env.get(argparse_model.ARGV) if given is None or given == Const(None) else given
            ns = argparse_model.parse(parser, argv)
            if f.attr == "parse_known_args":
                return Seq((ns, Seq((), "list")), "tuple") if not isinstance(ns, Unresolved) else UNK
            return ns
        return UNK

    def _click_call(self, recv: Value, f: ast.Attribute, args: list[Value], kwargs: dict[str, Value], n: ast.Call,
                    frame: Frame) -> Value | None:
        """click's runner and commands (click_model.py): `CliRunner().invoke(cmd, args)` and `cmd.main(args)` run the
        command's callbacks on that command line; `@group.command()` makes a sub-command and `group.add_command(cmd)`
        rebinds the group's name to the group with it. None: a method the model does not know."""
        if click_model.is_runner(recv):
            if f.attr != "invoke" or not (args or "cli" in kwargs):
                return None
            cmd = args[0] if args else kwargs["cli"]
            given = args[1] if len(args) > 1 else kwargs.get("args")
            return self.run_click(cmd, click_model.argv_of(given), n, frame)
        assert isinstance(recv, FuncV)
        if f.attr == "main":
            return self.run_click(recv, self._command_line(args[0] if args else kwargs.get("args"), frame), n, frame)
        if f.attr in ("command", "group"):
            return click_model.maker(f.attr, args, kwargs)
        if f.attr == "add_command" and args and _mutable_target(f.value):
            self.bind(f.value, click_model.with_subcommand(recv, args[0], args[1] if len(args) > 1 else
                                                           kwargs.get("name")), frame)
            return Const(None)
        return None

    @staticmethod
    def _command_line(given: Value | None, frame: Frame) -> list[str | None] | None:
        """The words a click command reads: those given, else the process' own command line, which is known inside
        a program a test runs (argparse_model.ARGV, programs.py) and is pytest's otherwise (None: unknown)."""
        if given is None or given == Const(None):
            given = frame.env.get(argparse_model.ARGV)
            if given is None:
                return None
        return click_model.argv_of(given)

    def run_click(self, cmd: Value, words: list[str | None] | None, n: ast.AST, frame: Frame) -> Value:
        """The callbacks click runs for a command line (click_model.invocations), each with what the command line,
        the defaults and the options' callbacks give; a command the model does not know is run as an unknown
        callable given the function is (run_passed_callable). The result (click's Result) is unknown."""
        line = getattr(n, "lineno", 0)
        if isinstance(cmd, OneOf):
            for c in alternatives(cmd):
                self.run_click(c, words, n, frame)
            return UNK
        if typer_model.is_app(cmd) and isinstance(cmd, Inst):
            runs, complete = typer_model.invocations(cmd, words)
            what = "a typer application"
        elif isinstance(cmd, FuncV) and click_model.command_of(cmd) is not None:
            runs, complete = click_model.invocations(cmd, words)
            what = f"{cmd.name}()"
        else:
            self.run_passed_callable(None, [cmd], {}, n, frame)
            return UNK
        if not complete:
            frame.add(Finding(UNKNOWN, (step(frame.rel, line, f"runs a command of {what} the analysis cannot name, "
                                                              "or did not see registered"),)))
        for run in runs:
            kwargs: dict[str, Value] = {}
            if run.unknown:
                node = self.source.module(run.callback.rel).defs.get(run.callback.pos)
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    a = node.args
                    names = [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
                    kwargs = dict.fromkeys(names[1:] if run.pass_context else names, UNK)
            for name, value, callback, value_only in run.values:
                if callback is not None:
                    value = self.call(callback, [value] if value_only else [UNK, UNK, value], {}, n, frame,
                                      "an option's callback")
                kwargs[name] = value
            self.call(run.callback, [UNK] if run.pass_context else [], kwargs, n, frame, run.callback.name)
        return UNK

    def call(self, callee: Value, args: list[Value], kwargs: dict[str, Value], n: ast.AST, frame: Frame,
             name: str) -> Value:
        line = getattr(n, "lineno", 0)
        if isinstance(callee, OneOf):
            return join_all([self.call(c, args, kwargs, n, frame, name) for c in alternatives(callee)])
        if isinstance(callee, FuncV) and click_model.command_of(callee) is not None or typer_model.is_app(callee):
            # `cmd(["--device", "cpu"], standalone_mode=False)`: click's main on that command line; without one, the
            # process' own: a program's (programs.py), else pytest's (unknown)
            return self.run_click(callee, self._command_line(args[0] if args else kwargs.get("args"), frame), n,
                                  frame)
        if isinstance(callee, Inst) and (click_model.is_param(callee) or click_model.is_maker(callee)) and \
                len(args) == 1 and isinstance(args[0], FuncV) and not kwargs:
            # `option(command)`: a click decorator applied by a call (pykeen's CLI builder)
            return click_model.decorate(args[0], callee, "") or args[0]
        if isinstance(callee, PartialV):
            return self.call(callee.func, [*callee.args, *args], {**dict(callee.kwargs), **kwargs}, n, frame, name)
        if isinstance(callee, Ext):
            return self.call_ext(callee.path, args, kwargs, n, frame)
        if isinstance(callee, UnknownParameter):
            frame.add(Finding(UNKNOWN, (step(frame.rel, line, f"calls {callee.where}, a parametrized value the "
                                                              "analysis cannot compute"),)))
            return UNK
        if isinstance(callee, (FuncV, ClassV)):
            kc = self.decided_by_world(conventions.known_call, callee.name, frame.world)
            if kc is not NotImplemented:
                return Const(kc)
            fn_arg = len(args) == 1 and not kwargs and isinstance(args[0], (TestFnV, FuncV, ClassV))
            req = _call_requirement(callee.name, args, kwargs, fn_arg)
            if req is not None:
                rv = ReqV(req.gpu_count, req.vram_gb, step(frame.rel, line, f"@{callee.name}: {req.note}"),
                          req.manual, req.cpu, req.hint_only)
                if not fn_arg:
                    if isinstance(callee, FuncV):
                        # an in-repo function of a known decorator's name may be a plain helper
                        # (`def require_cuda(): raise SkipTest`): what its body does counts too
                        self.call_function_from(callee, args, kwargs, line, frame)
                    return rv
                followed = self.call_function_from(callee, args, kwargs, line, frame) if isinstance(
                    callee, FuncV) else args[0]
                target = followed if isinstance(followed, TestFnV) else args[0]
                return self._apply_mark(rv, target)
        regs = callee.attr(DISPATCH) if isinstance(callee, FuncV) and callee.attrs else None
        if isinstance(callee, FuncV) and isinstance(regs, Seq):
            chosen = self.dispatched(callee.without_attr(DISPATCH), regs, args[0] if args else UNK, frame.world)
            return join_all([self.call(c, args, kwargs, n, frame, name) for c in chosen])
        wrapper = callee.attr(WRAPPER) if isinstance(callee, FuncV) and callee.attrs else None
        if isinstance(callee, FuncV) and wrapper is not None:
            # a helper under in-repo decorators (StatementsMixin.decorated_def): the function itself runs with these
            # arguments, as before decorators were applied, so a wrapper the analysis cannot follow to its call loses
            # nothing; the wrapper runs too and adds what it needs for sure (a `.cuda()` on the arguments, a raise or
            # skip without CUDA), not what it leaves undecided (a generic decorator's device of "whatever tensors
            # came in", kept in a class attribute: evotorch's `expects_ndim`, 26 CPU tests `unknown` otherwise)
            own = self.call(callee.without_attr(WRAPPER), args, kwargs, n, frame, name)
            aside = dataclasses.replace(frame, findings=[])
            through = self.call(wrapper, [callee.bound, *args] if callee.bound is not None else args, kwargs, n,
                                aside, name)
            for f in aside.findings:
                if f.kind != UNKNOWN:
                    frame.add(f)
            return own if isinstance(through, Unresolved) else through
        if isinstance(callee, FuncV):
            return self.call_function_from(callee, args, kwargs, line, frame, n)
        if isinstance(callee, ClassV) and self.enum_kind(callee, frame.world) is not None:
            return self._enum_by_value(callee, args, kwargs, frame)
        if isinstance(callee, ClassV) and len(args) == 3 and not kwargs and self.is_metaclass(callee, frame.world):
            # `OpMeta(name, (Base,), namespace)` (funsor's `Op.make`): a new class, as `type(...)` makes it; the
            # metaclass's own `__new__`/`__init__` are not run (bookkeeping: caches, registries)
            return made_class(args, n, frame, meta=callee)
        if isinstance(callee, ClassV):
            module = self.prints_as_module(callee, frame.world)
            inst: Value = Inst(callee, nn=() if module else None)
            generated = self.generated_init(callee, frame.world)
            if generated is not None and isinstance(inst, Inst):
                return self._dataclass_instance(inst, *generated, args, kwargs, n, frame)
            new = self.class_lookup(callee, "__new__", frame.world)
            if isinstance(new, FuncV):
                # Python calls `cls.__new__(cls, *args)` first (a static method): what it does runs; what it returns
                # is left to the model below (an object of the class, a tensor subclass's wrapper)
                self.call_function_from(FuncV(new.rel, new.pos, new.name, captured=new.captured, cls=new.cls),
                                        [callee, *args], kwargs, line, frame)
            init = self.class_lookup(callee, "__init__", frame.world)
            if isinstance(init, FuncV):
                res = self.invoke(FuncV(init.rel, init.pos, init.name, bound=inst, captured=init.captured,
                                        cls=init.cls), args, kwargs, frame)
                self._absorb(res, frame, line, f"{callee.name}.__init__")
                if res.self_after is not None:
                    inst = res.self_after
                if module and isinstance(inst, Inst) and (res.self_after is None or any(
                        f.kind == UNKNOWN for f in res.findings)):
                    # the constructor was not followed to its end: attributes (children) may be missing
                    inst = Inst(inst.cls, inst.attrs)
            else:
                self._ext_args_check(f"{callee.name}()", args, kwargs, n, frame)
            return inst
        if isinstance(callee, NNModV) and callee.name == "Sequential" and len(args) == 1 and not kwargs and (
                held := module_children(callee)) and all(isinstance(m, Seq) for m in held) and any(
                not isinstance(c, NNModV) for m in held for c in m.items):  # type: ignore[attr-defined]
            # `nn.Sequential(Block(), nn.ReLU())(x)` with an in-repo child: each child called on what the one before
            # gave, in order (one chain per path when they differ); torch's own layers alone give just a shape, below
            outs: list[Value] = []
            for m in held:
                x = args[0]
                for child in m.items:  # type: ignore[attr-defined]
                    x = self.call(child, [x], {}, n, frame, "forward")
                outs.append(x)
            return join_all(outs)
        if isinstance(callee, NNModV):
            x = args[0] if len(args) == 1 and not kwargs else None
            shape = nn_modules.output_shape(callee, x.shape) if isinstance(x, TensorV) and x.shape else None
            return TensorV(x.device, shape) if isinstance(x, TensorV) and shape is not None else UNK
        if isinstance(callee, Inst):
            for meth in ("__call__", "forward"):
                m = self.class_lookup(callee.cls, meth, frame.world)
                if isinstance(m, FuncV):
                    bound = FuncV(m.rel, m.pos, m.name, bound=callee, captured=m.captured, cls=m.cls, attrs=m.attrs)
                    return self.call(bound, args, kwargs, n, frame, meth) if m.attr(WRAPPER) is not None else \
                        self.call_function_from(bound, args, kwargs, line, frame)
            return UNK
        if isinstance(callee, (MarkV, SkipV, ReqV, MockV)):
            if len(args) == 1 and not kwargs and isinstance(args[0], (TestFnV, FuncV, ClassV)):
                return self._apply_mark(callee, args[0])
            if isinstance(callee, MarkV) and not callee.args and not callee.kwargs:
                return self.make_mark(callee.name, args, kwargs, n, frame)
            return callee
        if isinstance(callee, TestFnV):
            return UNK
        if isinstance(callee, Unresolved):
            self.lost.append(lost_entry(CALLED_UNRESOLVED, frame.rel, n))
            self.run_passed_callable(None, args, kwargs, n, frame)  # `benchmark(fn)`: a plugin fixture's value
        return UNK

    def _attribute_name(self, obj: Value, name: Value, world: int) -> str | None:
        """The attribute `setattr(obj, name, v)` or `obj.add_module(name, m)` sets as `obj.<name> = v` does: a
        string the analysis knows, unless it is a property of the object's class; None: not followed."""
        if isinstance(name, Const) and isinstance(name.value, str) and not self._property_of(obj, name.value, world):
            return name.value
        return None

    def _property_of(self, obj: Value, name: str, world: int) -> bool:
        """Whether `name` is a property of the object's class: `setattr` runs its setter, or raises where it has
        none (transformers' and Lightning's read-only `device`, module_device.py), instead of storing the value."""
        if not isinstance(obj, Inst):
            return False
        found = self.class_lookup(obj.cls, name, world)
        if isinstance(found, FuncV) and self._is_property(found):
            return True
        return name == "device" and any(isinstance(c, Ext) and c.path.endswith(DEVICE_PROPERTY_SUFFIXES)
                                        for c in self.mro(obj.cls, world))

    def _enum_by_value(self, cls: ClassV, args: list[Value], kwargs: dict[str, Value], frame: Frame) -> Value:
        """`Device("cuda")`: the member of an Enum class whose value that is (a member given: itself); unknown for a
        value no member has (Python raises) or one the analysis does not know."""
        if len(args) != 1 or kwargs:
            return UNK
        given = args[0]
        members = self.enum_members(cls, frame.world)
        if isinstance(given, EnumV) and given.cls == cls:
            return given
        if not isinstance(given, Const) or members is None:
            return UNK
        for m in members.items:
            if isinstance(m, EnumV) and isinstance(m.value, Const) and m.value.value == given.value and type(
                    m.value.value) is type(given.value):
                return m
        return UNK

    def _model_method(self, recv: Inst | ClassV, name: str, args: list[Value], kwargs: dict[str, Value], n: ast.Call,
                      frame: Frame) -> Value | None:
        """pydantic's model methods on an in-repo model (dataclass_fields.py): `Cfg.model_validate(d)` /
        `parse_obj` / `model_construct(**kw)` build it as `Cfg(**d)` does; `cfg.model_copy(update=d)` / `copy` is
        the object with those fields replaced; `cfg.model_dump()` / `dict()` its fields as a dict, nested models
        as dicts. None: not a model, or an in-repo method of that name."""
        cls = recv if isinstance(recv, ClassV) else recv.cls
        if not self._is_model(cls, frame.world) or isinstance(
                self.class_lookup(cls, name, frame.world), (FuncV, ClassV)):
            return None
        if isinstance(recv, ClassV):
            if name in ("model_validate", "parse_obj") and len(args) == 1 and isinstance(args[0], DictV):
                given = {k.value: v for k, v in args[0].items if isinstance(k, Const) and isinstance(k.value, str)}
                if len(given) != len(args[0].items):
                    return UNK
                return self.call(recv, [], given, n, frame, cls.name)
            if name == "model_construct" and not args:
                return self.call(recv, [], kwargs, n, frame, cls.name)
            return None
        if name in ("model_copy", "copy") and not args:
            update = kwargs.get("update", Const(None))
            if update == Const(None):
                return recv
            if not isinstance(update, DictV) or not all(
                    isinstance(k, Const) and isinstance(k.value, str) for k, _ in update.items):
                return UNK
            for k, v in update.items:
                assert isinstance(k, Const)
                recv = recv.with_attr(str(k.value), v)
            return recv
        if name in ("model_dump", "dict") and not args and not kwargs:
            return self._model_dict(recv, frame.world)
        return None

    def _is_model(self, cls: ClassV, world: int) -> bool:
        """Whether the class is a pydantic model whose constructor the analysis reads."""
        generated = self.generated_init(cls, world)
        return generated is not None and generated[0].style == "pydantic"

    def _model_dict(self, obj: Inst, world: int) -> Value:
        """`model_dump()` of a pydantic model: its fields in declaration order, nested models dumped too."""
        generated = self.generated_init(obj.cls, world)
        if generated is None:
            return UNK
        items: list[tuple[Value, Value]] = []
        for f in generated[0].fields:
            v = obj.attr(f.name)
            if v is None:
                return UNK
            if isinstance(v, Inst) and self._is_model(v.cls, world):
                v = self._model_dict(v, world)
            items.append((Const(f.name), v))
        return DictV(tuple(items))

    def _dataclass_instance(self, inst: Inst, generated: GeneratedInit, owners: list[ClassV], args: list[Value],
                            kwargs: dict[str, Value], n: ast.AST, frame: Frame) -> Value:
        """`cls(...)` of a dataclass, attrs class or pydantic model (dataclass_fields.py): each field from its
        argument, else its default from the class body that declares it, then the post-init hook (dataclass'
        `__post_init__` with the `InitVar`s, attrs' `__attrs_post_init__`, pydantic's `model_post_init`). A field
        that an unknown `*args` or `**kwargs` may have set is unknown; a call the generated `__init__` would
        reject (too many arguments, positional ones to pydantic, an unknown keyword) leaves the instance without
        attributes, as before this rule."""
        fields = generated.fields
        names = [f.keyword for f in fields]
        spread = any(isinstance(a, ast.Starred) for a in getattr(n, "args", ())) or UNKNOWN_KWARGS in kwargs
        if len(args) > (len(names) if generated.positional else 0) or any(
                k not in names for k in kwargs if k != UNKNOWN_KWARGS):
            return inst
        given: dict[str, Value] = dict(zip(names, args, strict=False))
        given.update((k, v) for k, v in kwargs.items() if k != UNKNOWN_KWARGS)
        for f in fields:
            if f.keyword not in given:
                default = self.class_body(owners[f.owner], frame.world).get(f.name, UNK) if (
                    f.has_default and not spread) else UNK
                if isinstance(default, PartialV) and default.func == Ext(FIELD_FACTORY):
                    default = self.call(default, [], {}, n, frame, "default_factory")  # run for this object
                given[f.keyword] = default
        built = inst
        for f in fields:
            if not f.init_var:
                built = built.with_attr(f.name, given[f.keyword])
        post = self.class_lookup(inst.cls, generated.post_init, frame.world)
        if isinstance(post, FuncV):
            line = getattr(n, "lineno", 0)
            extra = [UNK] if generated.post_init == "model_post_init" else [
                given[f.keyword] for f in fields if f.init_var]
            res = self.invoke(FuncV(post.rel, post.pos, post.name, bound=built, captured=post.captured, cls=post.cls),
                              extra, {}, frame)
            self._absorb(res, frame, line, f"{inst.cls.name}.{generated.post_init}")
            # not followed to its end (a bound, a cut cycle): it may have changed any field
            return res.self_after if isinstance(res.self_after, Inst) else inst
        return built

    def _apply_mark(self, mark: Value, target: Value) -> Value:
        if isinstance(target, TestFnV):
            return TestFnV(target.key, (*target.marks, mark))
        if isinstance(target, FuncV):
            return self._mark_wrapper(mark, target)
        return target

    def _mark_wrapper(self, mark: Value, wrapper: FuncV) -> Value:
        """A mark put on a wrapper closure of the test (wrapper_marks.py): pytest collects the wrapper, so the
        mark goes to the test the wrapper captured; a parametrization only for names the wrapper requests."""
        at = next((i for i, (_, v) in enumerate(wrapper.captured) if isinstance(v, TestFnV)), None)
        if at is None:
            return wrapper
        name, test = wrapper.captured[at]
        assert isinstance(test, TestFnV)
        if isinstance(mark, MarkV) and mark.name == "parametrize":
            wm, tm = self.source.module(wrapper.rel), self.source.module(test.key[0])
            wnode, tnode = wm.defs.get(wrapper.pos), tm.defs.get(test.key[1:])
            if wm.tree is None or not isinstance(wnode, FUNCTION_NODES) or not isinstance(tnode, FUNCTION_NODES):
                return wrapper
            mark = checked_parametrize(mark, visible_names(wm.tree, wnode, tnode))
        captured = (*wrapper.captured[:at], (name, TestFnV(test.key, (*test.marks, mark))),
                    *wrapper.captured[at + 1:])
        return FuncV(wrapper.rel, wrapper.pos, wrapper.name, wrapper.bound, captured, wrapper.cls)

    def dispatched(self, base: FuncV, regs: Seq, arg: Value, world: int) -> list[FuncV]:
        """The implementations a `functools.singledispatch` call may run for an argument with this value: the one
        registered for its type (an in-repo class through its MRO), else the undecorated function; when the
        argument's type is not known, or a registered type cannot be compared with it, each of them may run."""
        known = _type_names(arg)
        classes = [c for c in self.mro(arg.cls, world) if isinstance(c, ClassV)] if isinstance(arg, Inst) else []
        maybe: list[FuncV] = []
        for reg in regs.items:
            kind, impl = reg.items if isinstance(reg, Seq) else (UNK, UNK)
            if not isinstance(impl, FuncV):
                continue
            bound = dataclasses.replace(impl, bound=base.bound)
            if isinstance(kind, ClassV) and classes:
                if kind in classes:
                    return [bound]
                continue
            if isinstance(kind, Ext) and known is not None:
                if kind.path in known:
                    return [bound]
                if kind.path.startswith(("builtins.", "torch.")) or classes:
                    continue  # (a type of its own that is not this value's)
            maybe.append(bound)
        return [*maybe, base]

    def set_property(self, obj: Inst, name: str, v: Value, line: int, frame: Frame) -> Value | None:
        """`obj.<name> = v` where `name` is a property with a setter: the setter runs on the object (`self._dev =
        torch.device(value)`); the object as the setter left it. None: no setter, a plain attribute is set."""
        setter = self.property_setter(obj.cls, name, frame.world)
        if setter is None:
            return None
        res = self.invoke(self.bound_method(setter, obj, obj.cls), [v], {}, frame)
        self._absorb(res, frame, line, f"{name}.setter")
        return res.self_after if res.self_after is not None else obj

    def _absorb(self, res: CallResult, frame: Frame, line: int, what: str) -> None:
        via = step(frame.rel, line, f"calls {what}()" + (" [recursive: widened context]" if res.widened else ""))
        for f in res.findings:
            frame.add(f.prefixed(via))
        if res.stores:
            frame.env.update(res.stores)  # the shared namespaces as the call left them
        for origin, key, value in res.registrations:  # what it stored into registries (registries.py)
            if frame.module_env is None and origin == registries.GENERATED_TESTS:
                self.add_generated_test(key, value, frame)
            elif frame.module_env is None:
                self.register(origin, key, value, frame.rel, frame.world)
            else:
                frame.registrations.append((origin, key, value))

    def add_generated_test(self, key: Value, value: Value, frame: Frame) -> None:
        """A test or a method code gave a class (registries.GENERATED_TESTS, key `(class, name)`): in a function,
        part of the call's summary; back at the top level of the module that defines the class, in its body, as the
        same `setattr` written there is (pytest collects it; calls find the method). Under a name not known, kept with
        the others so named (registries.UNNAMED_METHODS)."""
        if frame.module_env is not None:
            frame.registrations.append((registries.GENERATED_TESTS, key, value))
            return
        cls, name = key.items if isinstance(key, Seq) and len(key.items) == 2 else (None, None)
        if not isinstance(cls, ClassV) or cls.rel != frame.rel:
            return
        body = self.class_body(cls, frame.world)
        if isinstance(name, Const) and isinstance(name.value, str):
            self.set_class_attribute(cls, name.value, value, frame.world)
        else:
            held = body.get(registries.UNNAMED_METHODS)
            body[registries.UNNAMED_METHODS] = join(held, value) if held is not None else value

    def call_function_from(self, fv: FuncV, args: list[Value], kwargs: dict[str, Value], line: int,
                           frame: Frame, site: ast.AST | None = None) -> Value:
        cells = self.cell_names.get((fv.rel, fv.pos)) if fv.captured else None
        if cells:
            # a closure that shares locals with this frame (closures.shared_cells): handed their current values
            current = {n: frame.env[n] for n in cells if n in frame.env}
            fv = FuncV(fv.rel, fv.pos, fv.name, fv.bound, tuple(sorted({**dict(fv.captured), **current}.items())),
                       fv.cls)
        res = self.invoke(fv, args, kwargs, frame)
        if res.findings and self._within_torch_free_library(fv, args, kwargs):
            res = dataclasses.replace(res, findings=tuple(f for f in res.findings if f.kind != UNKNOWN))
        self._absorb(res, frame, line, fv.name)
        if res.cells:
            frame.env.update(res.cells)  # and what the call left in them
        if res.self_after is not None and frame.self_name:
            self._replace_object(frame.self_name, fv.bound, res.self_after, frame)
        if res.self_after is not None and res.self_after != fv.bound and isinstance(site, ast.Call) and \
                isinstance(site.func, ast.Attribute) and isinstance(site.func.value, ast.Name) and \
                site.func.value.id != frame.self_name:
            # `engine.remember(x)` on a local object: the object as the method left it (its attributes set)
            self._replace_object(site.func.value.id, fv.bound, res.self_after, frame)
        if res.args_after and isinstance(site, ast.Call) and not any(isinstance(e, ast.Starred) for e in site.args):
            # `attach(model)` where `attach` sets `model.extra`: the caller's variable holds the object as it was left
            for i, p, after in res.args_after:
                given = site.args[i] if i < len(site.args) and i < len(args) else next(
                    (k.value for k in site.keywords if k.arg == p), None)
                before = args[i] if i < len(site.args) and i < len(args) else kwargs.get(p)
                if isinstance(given, ast.Name) and before is not None:
                    self._replace_object(given.id, before, after, frame)
                elif isinstance(given, ast.Attribute) and before is not None:
                    self.replace_at_path(given, before, after, frame)
        if res.generated is not None:
            return Seq(res.generated, "tuple")  # what iterating the generator gives (`parametrize(.., gen())`)
        return res.value

    def _within_torch_free_library(self, fv: FuncV, args: list[Value], kwargs: dict[str, Value]) -> bool:
        """A call of a function of a small installed library that never names torch (installed.torch_free: the
        `regex` package's parser under a tokenizer's `re.findall`), handed no code of the repository: nothing it
        runs can reach a device, so where the analysis stops inside it (a call chain too deep, a budget, dynamic
        dispatch) decides nothing about the test, and is not `unknown`."""
        return installed.is_installed(fv.rel) and self.source.installed.torch_free(fv.rel) and not holds_code_of(
            Seq((fv, *args, *kwargs.values())), lambda rel: not installed.is_installed(rel))

    def _store_by_method(self, f: ast.Attribute, reg: DictV, now: DictV, args: list[Value], kwargs: dict[str, Value],
                         frame: Frame) -> Value:
        """`HANDLERS.update(cpu=f, gpu=g)`, `BACKENDS.setdefault(name, fn)`, `MODELS.__setitem__(k, v)` on a registry
        (`now`: as it is now): the entries it stores (StatementsMixin.store_into_registry) and the call's result."""
        if f.attr == "setdefault" and 1 <= len(args) <= 2:
            default = args[1] if len(args) == 2 else Const(None)
            held = next((v for k, v in now.items if k == args[0]), None) if decided_key(args[0]) else None
            if held is not None:
                return held
            self.store_into_registry(f.value, reg, [(args[0], default)], frame)
            return default
        if f.attr == "__setitem__" and len(args) == 2:
            self.store_into_registry(f.value, reg, [(args[0], args[1])], frame)
            return Const(None)
        given = args[0] if len(args) == 1 else DictV(())
        if f.attr == "update" and len(args) <= 1 and isinstance(given, DictV) and UNKNOWN_KWARGS not in kwargs:
            self.store_into_registry(f.value, reg, [*given.items, *((Const(k), v) for k, v in kwargs.items())], frame)
        else:  # (entries the analysis cannot list: any key may now be there)
            self.store_into_registry(f.value, reg, [(UNK, UNK)], frame)
        return Const(None)

    def _replace_object(self, name: str, before: Value | None, after: Value, frame: Frame) -> None:
        """The variable `name` after a method of the object it holds (`before`) left that object as `after`;
        when it holds a choice of objects (one per earlier path), the one the method was read from."""
        cur = frame.env.get(name)
        if before == cur:
            frame.env[name] = after
        elif isinstance(cur, OneOf) and before in cur.alts:
            frame.env[name] = bounded(join_all([after if a == before else a for a in alternatives(cur)]))

    def invoke(self, fv: FuncV, args: list[Value], kwargs: dict[str, Value], frame: Frame) -> CallResult:
        return self.call_function(fv, args, kwargs, frame.world, frame.depth + 1,
                                  frame_stores(frame) if self.stores_seen else ())

    def call_function(self, fv: FuncV, args: list[Value], kwargs: dict[str, Value], world: int,
                      depth: int, stores: tuple[tuple[str, Value], ...] = ()) -> CallResult:
        """The summary of a call of an in-repo function in this context (see summaries.py: computed once,
        under its own budget; a recursive call is widened first, a cycle cut). Argument values past the size
        bounds are widened too (values.bounded), so the key hashes in bounded time. `stores`: the caller's
        shared namespaces (state the call reads and may change: CallResult.stores)."""
        fv = bounded(fv)  # type: ignore[assignment]
        if not isinstance(fv, FuncV):  # a bound receiver too large to track
            return CallResult(UNK, ())
        frames = self.frames
        widened_size = shape = None
        if frames.recursive(fv):
            wide, args, kwargs = widen_call(fv, args, kwargs)
            if not isinstance(wide, FuncV):
                return CallResult(UNK, ())
            fv = wide
            widened_size = context_size(fv, args, kwargs)
            shape = class_walk_shape(fv, args, kwargs)
            if frames.cut_recursion(fv, widened_size, shape):
                return CallResult(UNK, ())
        else:
            args = [bounded(a) for a in args]
            kwargs = {k: bounded(v) for k, v in kwargs.items()}
        try:
            context: tuple[Any, ...] = (fv, tuple(args), tuple(sorted(kwargs.items(), key=lambda kv: kv[0])), stores)
            hash(context)
        except TypeError:
            context = (fv, "unhashable", stores)
        key = (*context, world)
        # a summary that did not read the world is stored for every world (under None), one that did for its own
        got = self.calls.get(key) or self.calls.get((*context, None))
        projected = self._receiver_projection(fv, world) if got is None and widened_size is None else None
        if projected is not None:
            projected = (projected, *context[1:])
            shared = self.receiver_summaries.get((*projected, world)) or self.receiver_summaries.get(
                (*projected, None))
            if shared is not None:
                res = shared[0]
                got = CallResult(res.value, res.findings, apply_delta(fv.bound, shared[1]), res.stores, res.generated,
                                 res.widened, res.world_dependent, res.lost, registrations=res.registrations)
        if got is not None:
            self.world_reads += got.world_dependent
            self.lost.extend(got.lost)
            return got
        if frames.cut(key):
            return CallResult(UNK, ())
        if frames.provisional:
            early = frames.provisional.get(key)
            if early is not None:
                frames.lowest_cut = min(frames.lowest_cut, early[0])
                self.world_reads += early[1].world_dependent
                self.lost.extend(early[1].lost)
                return early[1]
        if depth > MAX_DEPTH:
            frames.lowest_cut = 0  # the bound depends on the whole stack: nothing above is stored
            return CallResult(UNK, (Finding(UNKNOWN, (step(fv.rel, fv.pos[0], f"call chain deeper than {MAX_DEPTH} "
                                                                              f"at {fv.name}()"),)),))
        node = self.source.module(fv.rel).defs.get(fv.pos)
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return CallResult(UNK, ())
        pos, saved = frames.push(key, fv, widened_size, shape)
        before, lost_before = self.world_reads, len(self.lost)
        try:
            result = self.budgeted(SUMMARY_BUDGET, self._run_function, fv, node, args, kwargs, world, depth,
                                   stores)[0]
        except BudgetExceeded as exc:
            result = CallResult(UNK, (Finding(UNKNOWN, (step(fv.rel, fv.pos[0], f"{exc} in {fv.name}()"),)),))
        except RecursionError:
            result = CallResult(UNK, (Finding(UNKNOWN, (step(fv.rel, fv.pos[0], "too deeply nested to analyse"),)),))
        finally:
            cut = frames.pop(key, fv, pos, saved)
        result.value = bounded(result.value)
        if result.self_after is not None:
            after = bounded(result.self_after)
            result.self_after = after if is_objects(after) else None
        if result.args_after:
            result.args_after = tuple((i, p, after) for i, p, after in (
                (i, p, bounded(v)) for i, p, v in result.args_after) if is_objects(after))
        if result.self_at_yield is not None:
            at_yield = bounded(result.self_at_yield)
            result.self_at_yield = at_yield if is_objects(at_yield) else None
        result.widened = widened_size is not None
        result.world_dependent = self.world_reads != before
        if len(self.lost) != lost_before:
            result.lost = frozenset(self.lost[lost_before:])
            del self.lost[lost_before:]
            self.lost.extend(result.lost)
        if cut >= pos:  # every cycle it met closed on itself (or on its callees): what this context alone gives
            self.calls[key if result.world_dependent else (*context, None)] = result
            if projected is not None and result.self_at_yield is None and not result.cls_attrs and \
                    not result.args_after:
                # (a receiver at a yield, or what the call set on `request.cls`, is not a delta of the receiver)
                held = [result.value, *(v for _, v in result.stores), *(result.generated or ())]
                delta = receiver_delta(fv.bound, result.self_after, held)
                if delta is not None:
                    self.receiver_summaries[(*projected, world if result.world_dependent else None)] = (result, delta)
        else:  # it relied on a cut of the computation at `cut`: valid only while that one is on the stack
            frames.provisional[key] = (cut, result)
        return result

    def _receiver_projection(self, fv: FuncV, world: int) -> tuple[Any, ...] | None:
        """What the summary of a method call depends on of its receiver (receivers.py): the method (unbound),
        the receiver's class and, for each name it and the methods and properties it reaches on `self` read, the
        value the name has on this receiver (an attribute, a class attribute, a method, or absent). None when
        one of them uses the receiver otherwise, or touches a shared namespace or a tensor subclass' `device`:
        then the whole receiver is the key. A receiver that is a choice of objects (one per path of a setUp)
        is projected object by object. The class stays in the key: rules read the source of an object's
        classes (provenance.py), not only its attributes."""
        recv = fv.bound
        if not is_objects(recv):
            return None
        memo_key = (fv.rel, fv.pos, fv.captured, recv, world)  # (the projection holds the closure's values)
        if memo_key in self.projections:
            return self.projections[memo_key]
        parts: list[tuple[ClassV, tuple[tuple[str, Any], ...]]] | None = []
        for obj in alternatives(recv):
            assert isinstance(obj, Inst) and parts is not None
            got = self._project(fv, obj, world)
            if got is None:
                parts = None
                break
            parts.append((obj.cls, got))
        if parts is not None and self._ignores_receiver(fv):
            parts = []  # nothing of the receiver is read, not even its class: one summary for every receiver
        out = None if parts is None else (FuncV(fv.rel, fv.pos, fv.name, captured=fv.captured, cls=fv.cls),
                                          tuple(parts))
        self.projections[memo_key] = out
        return out

    def _ignores_receiver(self, fv: FuncV) -> bool:
        """Whether a method never names its receiver (`def assertAllClose(self, a, b, ...)` of a test base that
        every test class inherits): its analysis is the same whatever object or class it is called on."""
        node = self.source.module(fv.rel).defs.get(fv.pos)
        uses = receiver_uses(node) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
        return uses is not None and not (uses.reads or uses.writes or uses.super_calls)

    def _project(self, fv: FuncV, recv: Inst, world: int) -> tuple[tuple[str, Any], ...] | None:
        """The projection's entries for one object (see above), or None: the plan of its class and attribute
        names (memoised: which names are read and how the class resolves them), with this object's values."""
        present = frozenset(k for k, _ in recv.attrs)
        plan_key = (fv.rel, fv.pos, recv.cls, present, world)
        plan = self.projection_plans.get(plan_key, False)
        if plan is False:
            plan = self.projection_plans[plan_key] = self._projection_plan(fv, recv.cls, present, world)
        if plan is None:
            return None
        return tuple((name, recv.attr(name) if how is _INSTANCE else how) for name, how in plan)

    def _projection_plan(self, fv: FuncV, cls: ClassV, present: frozenset[str],
                         world: int) -> tuple[tuple[str, Any], ...] | None:
        """For an object of class `cls` with attributes `present`: each name the method's closure reads, with
        _INSTANCE (its attribute) or what the class gives; None when the receiver is used otherwise."""
        entries: list[tuple[str, Any]] = []
        visited: set[tuple[str, tuple[int, int]]] = set()

        def visit(m: FuncV) -> bool:
            if (m.rel, m.pos) in visited:
                return True
            visited.add((m.rel, m.pos))
            node = self.source.module(m.rel).defs.get(m.pos)
            uses = receiver_uses(node) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
            if uses is None:
                return False
            for name in uses.writes:
                if self.store_key(cls, name, world) is not None:
                    return False
            for name in uses.reads:
                if name in present:
                    entries.append((name, _INSTANCE))
                    continue
                if self.store_key(cls, name, world) is not None or name == "device":
                    return False
                found = self.class_lookup(cls, name, world)
                if found is None:
                    # read: unresolved; called: a framework or tensor method by its name and arguments
                    entries.append((name, "absent"))
                elif isinstance(found, FuncV):
                    # called, read as a property, or passed on as a bound method (`register_hook(self.check)`):
                    # whatever runs it runs it on this receiver, and the bound method itself reveals nothing else
                    # of it (a result holding it is not shared: receiver_delta)
                    entries.append((name, ("method", found)))
                    if not visit(found):
                        return False
                else:
                    entries.append((name, ("class attribute", found)))
            for name in uses.super_calls:
                # found after the method's own class in the receiver's MRO (its class is part of the key)
                after = self.super_lookup(m.cls, name, world, cls) if m.cls is not None else None
                if isinstance(after, FuncV) and not visit(after):
                    return False
            return True

        return tuple(entries) if visit(fv) else None

    def _run_function(self, fv: FuncV, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda,
                      args: list[Value], kwargs: dict[str, Value], world: int, depth: int,
                      stores: tuple[tuple[str, Value], ...] = ()) -> CallResult:
        mod_env = self.module_state(fv.rel, world, ()).env  # (its global reads are lookups)
        frame = Frame(fv.rel, world, dict(stores), mod_env, [], depth, [], None, fv.cls, dict(fv.captured))
        a = node.args
        params = [p.arg for p in (*a.posonlyargs, *a.args)]
        defaults = list(a.defaults)
        default_for = dict(zip(params[len(params) - len(defaults):], defaults, strict=False))
        positional = list(args)
        if fv.bound is not None and params:
            positional = [fv.bound, *positional]
            frame.self_name = params[0]
        for i, p in enumerate(params):
            if i < len(positional):
                frame.env[p] = positional[i]
            elif p in kwargs:
                frame.env[p] = kwargs[p]
            elif DEFAULT_PREFIX + p in frame.captured:
                frame.env[p] = frame.captured[DEFAULT_PREFIX + p]  # bound when the def ran
            elif p in default_for:
                frame.env[p] = self.ev(default_for[p], Frame(fv.rel, world, {}, mod_env, []))
                if isinstance(default_for[p], ast.Dict) and not default_for[p].keys:
                    frame.empty_defaults |= {p}
            else:
                frame.env[p] = UNK
        if a.vararg:
            frame.env[a.vararg.arg] = Seq(tuple(positional[len(params):]), "tuple")
        for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=False):
            if p.arg in kwargs:
                frame.env[p.arg] = kwargs[p.arg]
            elif DEFAULT_PREFIX + p.arg in frame.captured:
                frame.env[p.arg] = frame.captured[DEFAULT_PREFIX + p.arg]
            else:
                frame.env[p.arg] = self.ev(d, Frame(fv.rel, world, {}, mod_env, [])) if d is not None else UNK
        # the objects handed in as arguments (by position or keyword), to give back those the call changes in place
        own = params[1:] if fv.bound is not None else params
        entry = {p: frame.env[p] for i, p in enumerate(own) if (i < len(args) or p in kwargs) and is_objects(
            frame.env[p])}
        if a.kwarg:
            known = set(params) | {p.arg for p in a.kwonlyargs}
            frame.env[a.kwarg.arg] = UNK if UNKNOWN_KWARGS in kwargs else DictV(
                tuple((Const(k), v) for k, v in sorted(kwargs.items()) if k not in known))
            if frame.env[a.kwarg.arg] == EMPTY_DICT:
                frame.empty_defaults |= {a.kwarg.arg}  # (made by the call: nothing outside it can have filled it)
        if isinstance(node, ast.Lambda):
            value = self.ev(node.body, frame)
            return CallResult(value, tuple(frame.findings), registrations=tuple(frame.registrations))
        if is_generator(node) and (not node.decorator_list or self._raw_generator(fv, node)):
            frame.generated = Generated()
        fixture = not isinstance(node, ast.Lambda) and is_fixture_def(node)
        if fixture and is_generator(node):
            frame.at_yield = []
        cells = [n for n in self.cell_names.get((fv.rel, fv.pos), ()) if n in frame.captured]
        for n in cells:
            frame.env.setdefault(n, frame.captured[n])  # on every path, so each branch keeps or changes it
        ended = self.exec_block(node.body, frame)
        if ended and not frame.returns and not fixture and frame.generated is None and any(
                f.kind == SKIP for f in frame.findings):
            # a helper that skips the test on every path (`_skip_if_merging_not_supported(model_id, config_cls)`
            # with a config class it does not support): the caller's path ends there, as at a skip in its own body
            return CallResult(NORETURN, tuple(frame.findings), registrations=tuple(frame.registrations))
        value = join_all(frame.returns) if frame.returns else Const(None)
        if isinstance(value, NoReturn):
            value = UNK
        self_after = frame.env.get(frame.self_name) if frame.self_name else None
        at_yield = join_all([s for s, _ in frame.at_yield if s is not None]) if frame.at_yield and \
            frame.self_name else None
        requests = [r for _, r in frame.at_yield] if frame.at_yield else [frame.env.get("request")] if \
            fixture else []
        gen = frame.generated
        rebound = rebound_names(node) if entry else frozenset()
        args_after = tuple((i, p, after) for i, p in enumerate(own) if p in entry and p not in rebound and (
            after := frame.env.get(p)) != entry[p] and is_objects(after))
        return CallResult(value, tuple(frame.findings), self_after if is_objects(self_after) else None,
                          stores=frame_stores(frame) if self.stores_seen else (),
                          generated=tuple(gen.items) if gen is not None and gen.exact else None,
                          cells=tuple((n, frame.env[n]) for n in sorted(cells) if n in frame.env),
                          self_at_yield=at_yield if is_objects(at_yield) else None,
                          cls_attrs=_cls_attrs(requests), registrations=tuple(frame.registrations),
                          args_after=args_after)

    def _raw_generator(self, fv: FuncV, node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        """A decorated generator whose decorators are in-repo defs of its enclosing function: what they call is
        the generator itself (closures.decorated_by_local_defs); memoised."""
        key = (fv.rel, fv.pos)
        got = self.raw_generators.get(key)
        if got is None:
            got = self.raw_generators[key] = decorated_by_local_defs(self.source.module(fv.rel).defs, node)
        return got


_INSTANCE = "<the object's attribute>"  # in a projection plan: read the name from the object itself


# unittest.TestCase assertions: (arguments they compare, the comparison; None: the truth of the first)
UNITTEST_ASSERTS: dict[str, tuple[int, ast.cmpop | ast.unaryop | None]] = {
    "assertTrue": (1, None), "assertFalse": (1, ast.Not()),
    "assertEqual": (2, ast.Eq()), "assertNotEqual": (2, ast.NotEq()), "assertGreater": (2, ast.Gt()),
    "assertGreaterEqual": (2, ast.GtE()), "assertLess": (2, ast.Lt()), "assertLessEqual": (2, ast.LtE()),
    "assertIs": (2, ast.Is()), "assertIsNot": (2, ast.IsNot()),
    "assertIsNone": (1, ast.Is()), "assertIsNotNone": (1, ast.IsNot()),
}


def _unittest_assertion_holds(name: str, args: list[Value]) -> bool | None:
    """Whether `self.<name>(*args)` holds (None: undecided)."""
    count, op = UNITTEST_ASSERTS[name]
    if op is None:
        return truth(args[0])
    if isinstance(op, ast.unaryop):
        t = truth(args[0])
        return None if t is None else not t
    other = args[1] if count == 2 else Const(None)
    return truth(_compare(op, args[0], other))


def _type_names(v: Value) -> frozenset[str] | None:
    """The dotted names a singledispatch registration may give for the type of a value (None: not known)."""
    if isinstance(v, TensorV):
        return frozenset({"torch.Tensor"})
    if isinstance(v, Const):
        names = {f"builtins.{type(v.value).__name__}", "builtins.object"}
        if isinstance(v.value, bool):
            names.add("builtins.int")
        return frozenset(names)
    if isinstance(v, Seq) and v.kind in ("list", "tuple"):
        return frozenset({f"builtins.{v.kind}", "builtins.object"})
    if isinstance(v, DictV):
        return frozenset({"builtins.dict", "builtins.object"})
    if isinstance(v, Inst):
        return frozenset({"builtins.object"})
    return None


def short_source(n: ast.AST) -> str:
    """A node's source for a reason, cut at 80 characters. Kept on the node: reasons are written for every case
    that reaches an assert (an unparse per run was 3 % of a run on peft)."""
    def cut() -> str:
        text = ast.unparse(n)
        return text if len(text) <= 80 else text[:77] + "..."

    return kept_on_node(n, "_classify_short_source", cut)


def is_generator(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A `def` with a yield of its own (not one of a nested function, class or lambda). Kept on the node: a
    walk of the whole body per call was 30% of a run on torchsde."""
    return kept_on_node(node, "_classify_is_generator", lambda: _yields(node))


def _yields(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    found = False
    todo: list[ast.AST] = list(node.body)
    while todo and not found:
        n = todo.pop()
        found = isinstance(n, (ast.Yield, ast.YieldFrom))
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            todo.extend(ast.iter_child_nodes(n))
    return found


# methods that add children to a torch.nn container (nn_modules.grown)
CONTAINER_GROWERS = frozenset({"append", "extend", "insert", "update"})
DICT_MUTATORS = frozenset({"update", "setdefault", "pop", "popitem", "clear", "__setitem__", "__delitem__"})
REGISTRY_STORES = frozenset({"update", "setdefault", "__setitem__"})  # what fills a registry (registries.py)


def _mutate_dict(d: DictV, name: str, args: list[Value], kwargs: dict[str, Value]) -> tuple[DictV, Value] | None:
    """(dict after, result) of `d.pop(key[, default])` or `d.setdefault(key[, default])` with a constant key on a
    dict whose keys are all constants (`device = kwargs.pop("device", "cpu")` after `kwargs.pop("model", None)` on a
    known `**kwargs`; `kwargs.setdefault("envoys", tp_envoys())`), or `d.update(other, key=value)` with a dict of
    constant keys. pop: the entry goes and its value is the result, else the default and the dict is unchanged;
    setdefault: the value there, else the default (None without one), added at the end; update: each entry set in
    place or added at the end. None where it is not known exactly (another key, a pop with no default for an absent
    key: a KeyError)."""
    if not all(isinstance(k, Const) for k, _ in d.items):
        return None
    if name == "update" and len(args) <= 1 and UNKNOWN_KWARGS not in kwargs:
        given = args[0] if args else DictV(())
        if not (isinstance(given, DictV) and all(isinstance(k, Const) for k, _ in given.items)):
            return None
        items = dict(d.items)
        items.update(given.items)
        items.update((Const(k), v) for k, v in kwargs.items())
        return DictV(tuple(items.items())), Const(None)
    if name not in ("pop", "setdefault") or kwargs or not args or len(args) > 2 or not isinstance(args[0], Const):
        return None
    for k, v in d.items:
        if k == args[0]:
            return (DictV(tuple(kv for kv in d.items if kv[0] != k)) if name == "pop" else d), v
    if name == "setdefault":
        default = args[1] if len(args) == 2 else Const(None)
        return DictV((*d.items, (args[0], default))), default
    return (d, args[1]) if len(args) == 2 else None


def _mutate_seq(seq: Seq, name: str, args: list[Value]) -> tuple[Seq, Value] | None:
    """(list or set after, call result) of one mutation; None where the result is not known exactly (it would
    pass MAX_CONTAINER items, or an element may or may not be removed)."""
    got = _mutate_items(seq, name, args)
    if got is not None and len(got[0].items) > MAX_CONTAINER:
        return None  # a truncated list would give exact-looking ids with cases missing
    return got


def _mutate_items(seq: Seq, name: str, args: list[Value]) -> tuple[Seq, Value] | None:
    items = list(seq.items)
    is_set = seq.kind == "set"
    if name in ("append", "add") and len(args) == 1:
        if not (is_set and args[0] in items):
            items.append(args[0])
        return Seq(tuple(items), seq.kind), Const(None)
    if name in ("extend", "update") and len(args) == 1 and isinstance(args[0], Seq):
        for a in args[0].items:
            if not (is_set and a in items):
                items.append(a)
        return Seq(tuple(items), seq.kind), Const(None)
    if name == "insert" and len(args) == 2 and isinstance(args[0], Const) and type(args[0].value) is int:
        items.insert(args[0].value, args[1])
        return Seq(tuple(items), seq.kind), Const(None)
    if name in ("remove", "discard") and len(args) == 1:
        if args[0] in items:
            items.remove(args[0])
        elif any(not isinstance(i, Const) for i in items) or not isinstance(args[0], Const):
            return None  # may or may not be there
        return Seq(tuple(items), seq.kind), Const(None)
    if name == "pop" and not args and items:
        if is_set:  # an arbitrary element: exact only when there is one
            return Seq((), "set") if len(items) == 1 else seq, items[0] if len(items) == 1 else join_all(items)
        return Seq(tuple(items[:-1]), seq.kind), items[-1]
    if name == "pop" and len(args) == 1 and isinstance(args[0], Const) and type(args[0].value) is int and not is_set:
        try:
            got = items.pop(args[0].value)
        except IndexError:
            return None
        return Seq(tuple(items), seq.kind), got
    if name == "clear" and not args:
        return Seq((), seq.kind), Const(None)
    return None


def _known_containers(v: Value) -> bool:
    """A known list or set, or a choice of them (what _mutated models)."""
    return all(isinstance(a, Seq) and a.kind in ("list", "set") for a in alternatives(v))


def _mutated(recv: Value, name: str, args: list[Value]) -> tuple[Value, Value] | None:
    """(container after, call result) of a list/set mutation on a known container (or a join of them), or of
    `d.pop(key[, default])` on a known dict."""
    if isinstance(recv, Seq) and recv.kind in ("list", "set"):
        return _mutate_seq(recv, name, args)
    if isinstance(recv, DictV):
        return _mutate_dict(recv, name, args, {})
    if isinstance(recv, OneOf) and all(isinstance(a, Seq) and a.kind in ("list", "set") for a in recv.alts):
        afters: list[Value] = []
        results: list[Value] = []
        for a in alternatives(recv):
            if name == "pop" and isinstance(a, Seq) and not a.items:
                continue  # IndexError/KeyError on this path
            got = _mutate_seq(a, name, args) if isinstance(a, Seq) else None
            if got is None:
                return None
            afters.append(got[0])
            results.append(got[1])
        if not afters:
            return None
        return join_all(afters), join_all(results)
    return None


def _attribute_target(obj: ast.expr, attr: str, n: ast.AST) -> ast.Attribute:
    """The target `obj.<attr>` of an assignment, placed at n (bind reads only its shape)."""
    return ast.copy_location(ast.Attribute(value=obj, attr=attr, ctx=ast.Store()), n)


def _setattr_object(n: ast.Call) -> ast.Name | None:
    """The object `setattr(x, name, v)` or `object.__setattr__(x, name, v)` sets an attribute of, when it is a
    plain name `x`; None for any other call."""
    f = n.func
    plain = isinstance(f, ast.Name) and f.id == "setattr"
    dunder = isinstance(f, ast.Attribute) and f.attr == "__setattr__" and isinstance(f.value, ast.Name) and (
        f.value.id == "object")
    if not (plain or dunder) or len(n.args) != 3 or n.keywords or any(isinstance(a, ast.Starred) for a in n.args):
        return None
    return n.args[0] if isinstance(n.args[0], ast.Name) else None


def module_startswith(module: str, args: list[Value]) -> Value:
    """`cls.__module__.startswith(prefix)` (a prefix or a tuple of them) where the module is `module` or one of its
    submodules: true when `module` starts with a prefix; false when no prefix starts with `module` either (the
    name cannot start with it); else unknown (`"torch.optim.ada"` of `torch.optim`)."""
    if len(args) != 1:
        return UNK
    prefixes = args[0].items if isinstance(args[0], Seq) else (args[0],)
    if not all(isinstance(p, Const) and isinstance(p.value, str) for p in prefixes):
        return UNK
    texts = [p.value for p in prefixes if isinstance(p, Const)]
    if any(module.startswith(t) for t in texts):
        return Const(True)
    if any(t.startswith(module) for t in texts):
        return UNK
    return Const(False)


def _cls_attrs(requests: list[Value | None]) -> tuple[tuple[str, Value], ...]:
    """The attributes a fixture set on `request.cls` at every handover (each yield, or its return): those it
    set alike on all of them."""
    got = [r.cls_attrs if isinstance(r, RequestV) else () for r in requests]
    return got[0] if got and all(g == got[0] for g in got) else ()


def rebound_names(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> frozenset[str]:
    """The names a function's body binds again (an assignment, a loop or `with` target, `del`, `global`...): a
    parameter among them may no longer hold the object the caller handed in."""
    def compute() -> frozenset[str]:
        out = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))}
        out.update(name for n in ast.walk(node) if isinstance(n, (ast.Global, ast.Nonlocal)) for name in n.names)
        return frozenset(out)
    return kept_on_node(node, "_classify_rebound_names", compute)
