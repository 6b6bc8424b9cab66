"""`self.device` of a torch.nn.Module that the repository never sets: the device of the module's own parameters.

`x.to(self.device)` inside a model is the commonest way ML code keeps inputs where the model is. When no in-repo
class of the object defines or assigns `device`, the name comes from a framework base (transformers'
`PreTrainedModel.device`, Lightning's `LightningModule.device`: where the module's parameters are) or from a
`__getattr__` that forwards to a wrapped module (peft's `PeftModel`). Either way it is the device of something
that already exists, like `x.device` of a tensor (devices._device_of_existing): following it moves nothing to a
new device, and creating that module on an accelerator is where a need would be found.

The rule is syntactic about what could set the name, so that it never hides a configured device: a class in the
MRO that assigns any `<obj>.device`, calls `setattr`, touches `__dict__`, or has a `__getattr__` forwarding to
something other than a module of this same kind, keeps the device unresolved. A `__getattr__` forwarding to an object
the analysis does not know counts as `self.<attr>.device` written out (the model peft wraps, loaded from the Hub),
unless `<attr>` names a configuration (`self.cfg`): then the device is a chosen one.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from tools.classify.devices import CONFIG_NAMES
from tools.classify.values import ClassV, Ext, Inst, NNModV, TensorV, Unresolved, Value, alternatives

# External bases whose instances are torch modules; `device`, if they have it, is where their parameters are.
MODULE_BASE_PREFIXES = ("torch.nn.",)
# Of those, the ones whose `device` is a read-only property (transformers, Lightning, diffusers): no `setattr`,
# `__dict__` entry or `__getattr__` can give their instances another one (`self.device = x` raises).
DEVICE_PROPERTY_SUFFIXES = (".PreTrainedModel", ".LightningModule", ".ModelMixin")
MAX_FORWARDING = 3  # wrappers of wrappers followed through `__getattr__`


def is_module_base(v: Value) -> bool:
    return isinstance(v, Ext) and (v.path.startswith(MODULE_BASE_PREFIXES) or v.path.endswith(
        DEVICE_PROPERTY_SUFFIXES))


def class_sets_device(node: ast.ClassDef) -> bool:
    """Whether a class body could give its instances a `device` the analysis does not see: it assigns
    `<obj>.device`, calls `setattr` with a name that is not a literal other than "device" (or any
    `__setattr__`), or reaches its own
    namespace (`self.__dict__`, `vars(self)`); a `def device` is found by class lookup. Reading another object's
    `__dict__` (`self.base_model.__dict__.get(...)`) sets nothing here."""
    selves = {f.args.args[0].arg for f in ast.walk(node)
              if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and f.args.args}
    for n in ast.walk(node):
        if isinstance(n, ast.Attribute) and n.attr == "device" and isinstance(n.ctx, (ast.Store, ast.Del)):
            return True
        if isinstance(n, ast.Attribute) and n.attr == "__dict__" and isinstance(n.value, ast.Name) and (
                n.value.id in selves):
            return True
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "__setattr__":
            return True  # `object.__setattr__(self, name, value)`, `super().__setattr__(...)`
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name):
            if n.func.id == "vars" and any(isinstance(a, ast.Name) and a.id in selves for a in n.args):
                return True
            if n.func.id == "setattr" and not (
                    len(n.args) > 1 and isinstance(n.args[1], ast.Constant) and isinstance(n.args[1].value, str)
                    and n.args[1].value != "device"):
                return True
    return False


def forwarded_attributes(node: ast.ClassDef) -> frozenset[str] | None:
    """The attributes `self.<a>` a `__getattr__` of this class reads (where it forwards missing names to), the
    empty set without one; None when it reads something else than `self.<a>`, `super()`, its own name and
    exceptions (a lookup table, a global config)."""
    getattr_def = next((s for s in node.body if isinstance(s, ast.FunctionDef) and s.name == "__getattr__"), None)
    if getattr_def is None:
        return frozenset()
    params = {a.arg for a in (*getattr_def.args.posonlyargs, *getattr_def.args.args)}
    self_name = getattr_def.args.args[0].arg if getattr_def.args.args else "self"
    out: set[str] = set()
    allowed_names = params | {"super", "getattr", "AttributeError", "KeyError", "hasattr", "isinstance", "str"}
    body = [n for stmt in getattr_def.body for n in ast.walk(stmt)]  # not the annotations
    local = {n.id for n in body if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    for n in body:
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == self_name:
            out.add(n.attr)
        elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in allowed_names | local:
            return None
    return frozenset(out)


ClassFacts = tuple[bool, frozenset[str] | None]  # (class_sets_device, forwarded_attributes)


def class_facts(node: ast.ClassDef | None) -> ClassFacts | None:
    """What the rule reads of one class's source (None: no source): computed once per class by the caller."""
    return None if node is None else (class_sets_device(node), forwarded_attributes(node))


def device_is_module_own(obj: Value, world: int, mro: Callable[[ClassV, int], tuple[Value, ...]],
                         facts: Callable[[ClassV], ClassFacts | None],
                         defines: Callable[[ClassV, str, int], bool], existing: Callable[[Value], bool],
                         depth: int = 0) -> bool:
    """Whether `obj.device` is, for every object `obj` may be, the device of a torch module's own parameters
    (see the module docstring). A torch.nn module itself has no `device`: nothing to move to either. `defines`:
    whether an in-repo class of the MRO defines or shares the name; `existing`: whether the analysis already
    reads `obj.device` as an existing device (a `device` property over `self.parameters()`), asked of the
    modules a `__getattr__` forwards to."""
    alts = alternatives(obj)
    return bool(alts) and all(_one(a, world, mro, facts, defines, existing, depth) for a in alts)


def _one(obj: Value, world: int, mro: Callable[[ClassV, int], tuple[Value, ...]],
         facts: Callable[[ClassV], ClassFacts | None], defines: Callable[[ClassV, str, int], bool],
         existing: Callable[[Value], bool], depth: int) -> bool:
    if isinstance(obj, NNModV):
        return True
    if not isinstance(obj, Inst) or obj.attr("device") is not None or depth > MAX_FORWARDING:
        return False
    order = mro(obj.cls, world)
    if not any(is_module_base(c) for c in order):
        return False
    if defines(obj.cls, "device", world):
        return depth > 0 and existing(obj)
    if any(isinstance(c, Ext) and c.path.endswith(DEVICE_PROPERTY_SUFFIXES) for c in order):
        return True
    for c in order:
        if not isinstance(c, ClassV):
            continue
        known = facts(c)
        if known is None or known[0] or known[1] is None:
            return False
        forwards = known[1]
        for a in forwards:
            target = obj.attr(a)
            if target is None or not all(_forwarded_existing(a, t) or _one(t, world, mro, facts, defines, existing,
                                                                           depth + 1) for t in alternatives(target)):
                return False
    return True


def _forwarded_existing(attr: str, target: Value) -> bool:
    """`self.<attr>.device` as if written out, for an object the analysis does not know (peft's `base_model`, a
    transformers model loaded from the Hub) or a tensor-like value it placed: the device of something that exists,
    as devices._device_of_existing reads `self.model.device`, unless `<attr>` names a configuration."""
    return (type(target) is Unresolved or isinstance(target, TensorV)) and attr not in CONFIG_NAMES
