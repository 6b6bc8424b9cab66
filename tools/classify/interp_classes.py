"""The interpreter's classes: class bodies, bases and MRO (memoised per world), attribute lookup through
them, Enum members, and the decorators that change how a method is read (property, classmethod).
"""

from __future__ import annotations

import ast

from tools.classify import limits, nn_modules, registries
from tools.classify.dataclass_fields import (
    PYDANTIC_BASES,
    GeneratedInit,
    attrs_fields,
    attrs_init,
    dataclass_init,
    declared_fields,
    pydantic_fields,
)
from tools.classify.evidence import Finding
from tools.classify.interp_base import (
    PROPERTY,
    STORE,
    UNIT_BUDGET,
    BudgetExceeded,
    Frame,
    InterpBase,
    _last_name,
)
from tools.classify.values import (
    NOT_LITERAL,
    UNRESOLVED,
    ClassV,
    Const,
    DictV,
    EnumV,
    Ext,
    FuncV,
    OneOf,
    Seq,
    Value,
    alternatives,
    iterated,
    plain,
)

PROPERTY_DECORATORS = frozenset({"property", "cached_property", "abstractproperty", "lazy_property",
                                 "lazyproperty", "cache_readonly"})
# torch.nn.Module as a base (its public path and its defining module's), and object
MODULE_BASES = nn_modules.TORCH_MODULE_CLASSES | {"builtins.object"}
# names that change how a module prints, or register children other than by `self.<name> = <module>`
MODULE_PRINT_OVERRIDES = frozenset({"__repr__", "__str__", "__format__", "extra_repr", "_get_name", "__setattr__",
                                    "__getattr__", "__getattribute__", "__delattr__", "__init_subclass__"})
MODULE_REGISTRARS = frozenset({"add_module", "register_module", "_modules", "__dict__", "setattr", "__setattr__",
                               "delattr", "__delattr__", "vars"})
MAX_REEXPORTS = 4  # an installed base re-exported through this many modules is still followed
ENUM_BASES = {"Enum": "", "IntEnum": "int", "StrEnum": "str", "Flag": "", "IntFlag": "int", "ReprEnum": "value"}


class ClassesMixin(InterpBase):
    """Classes, their MRO and Enum members; a part of dataflow.Interp."""

    def enum_kind(self, cls: ClassV, world: int) -> str | None:
        """None: not an Enum; else "" (plain), "int"/"str" (IntEnum/StrEnum: str() is the value's), or
        "builtins.str"/"builtins.int"/... (`class E(str, Enum)`: compares like its value, str() is `E.NAME`)."""
        if (cls, world) in self.enum_kinds:
            self.world_memo_hit(self.enum_reads_world, (cls, world))
            return self.enum_kinds[(cls, world)]
        self.enum_kinds[(cls, world)] = None  # a cycle through the MRO: not an Enum
        before = self.world_reads
        kind: str | None = None
        mixin = ""
        for c in self.mro(cls, world):
            if isinstance(c, Ext):
                last = c.path.rsplit(".", 1)[-1]
                if c.path.startswith("enum.") and last in ENUM_BASES and kind is None:
                    kind = ENUM_BASES[last]
                elif c.path in ("builtins.str", "builtins.int", "builtins.float"):
                    mixin = mixin or c.path
        got = None if kind is None else mixin if mixin and not kind else kind
        self.enum_kinds[(cls, world)] = got
        self.enum_reads_world[cls, world] = self.world_reads != before
        return got

    def enum_member(self, cls: ClassV, name: str, world: int) -> EnumV | None:
        if name.startswith("_"):
            return None
        node = self.class_node(cls)
        if node is None or not any(isinstance(s, (ast.Assign, ast.AnnAssign)) for s in node.body):
            return None
        body = self.class_body(cls, world)
        if name not in body or isinstance(body[name], (FuncV, ClassV)):
            return None
        kind = self.enum_kind(cls, world)
        if kind is None:
            return None
        value = body[name]
        text = f"{cls.name}.{name}"
        if kind in ("int", "str", "value") and isinstance(value, Const):
            text = str(value.value)
        custom = self.class_lookup(cls, "__str__", world)
        member = EnumV(cls, name, value, text, kind != "")
        if isinstance(custom, FuncV):
            got = self.call_function(FuncV(custom.rel, custom.pos, custom.name, bound=member, cls=custom.cls), [],
                                     {}, world, 1).value
            text = str(got.value) if isinstance(got, Const) and isinstance(got.value, str) else text
        # pytest tests `isinstance(val, str)` before Enum: a str-mixin member is id'd by its (escaped) value
        pid = text
        if kind in ("str", "builtins.str") and isinstance(value, Const) and isinstance(value.value, str):
            pid = value.value
        return EnumV(cls, name, value, text, kind != "", pid)

    def enum_members(self, cls: ClassV, world: int) -> Seq | None:
        """`list(Color)`, `for c in Color`: the members in definition order."""
        node = self.class_node(cls)
        if node is None or self.enum_kind(cls, world) is None:
            return None
        names = [t.id for s in node.body if isinstance(s, (ast.Assign, ast.AnnAssign))
                 for t in (s.targets if isinstance(s, ast.Assign) else [s.target]) if isinstance(t, ast.Name)]
        members = [m for m in (self.enum_member(cls, n, world) for n in dict.fromkeys(names)) if m is not None]
        flag = any(isinstance(c, Ext) and c.path in ("enum.Flag", "enum.IntFlag") for c in self.mro(cls, world))
        kept: list[EnumV] = []
        seen: list[object] = []
        for m in members:
            value = plain(m.value)
            if flag:
                # a Flag iterates its canonical members only: no zero, no alias, no multi-bit combination
                if not isinstance(value, int) or isinstance(value, bool):
                    return None
                if value <= 0 or value & (value - 1) or value in seen:
                    continue
            elif value is not NOT_LITERAL and value in seen:
                continue  # an alias (`B = 1` after `A = 1`, or `B = True`): the same member, not iterated again
            seen.append(value)
            kept.append(m)
        return Seq(tuple(kept), "list")

    def iteration(self, v: Value, world: int) -> Value:
        """What `for x in v` (and pytest, over parametrize argvalues or fixture params) runs over: a dict's keys
        in insertion order, an Enum class's members in definition order without aliases; else v itself."""
        if isinstance(v, ClassV):
            return self.enum_members(v, world) or v
        return iterated(v)

    def class_node(self, cls: ClassV) -> ast.ClassDef | None:
        node = self.source.module(cls.rel).defs.get(cls.pos)
        return node if isinstance(node, ast.ClassDef) else None

    def class_body(self, cls: ClassV, world: int) -> dict[str, Value]:
        key = (cls, world)
        got = self.class_bodies.get(key)
        if got is not None:
            self.world_memo_hit(self.body_reads_world, key)
            return got
        env: dict[str, Value] = {}
        self.class_bodies[key] = env
        before = self.world_reads
        node = self.class_node(cls)
        found: list[Finding] = []
        if node is not None:
            frame = Frame(cls.rel, world, env, self.module_state(cls.rel, world, ()).env, found, cls=cls,
                          captured=dict(cls.captured))
            for s in node.body:
                if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    if s.name in env and any(isinstance(d, ast.Attribute) and d.attr in ("setter", "deleter")
                                             for d in s.decorator_list):
                        continue  # `@x.setter`: the attribute stays the property's getter
                    env[s.name] = self.decorated_def(s, FuncV(cls.rel, (s.lineno, s.col_offset), s.name, cls=cls,
                                                              captured=cls.captured), frame)
                elif isinstance(s, ast.ClassDef):
                    env[s.name] = ClassV(cls.rel, (s.lineno, s.col_offset), s.name, cls.captured)
                else:
                    try:
                        self.budgeted(UNIT_BUDGET, self.exec_stmt, s, frame)
                    except (RecursionError, BudgetExceeded):
                        pass
        if cls.made is not None:
            env.update(cls.made[1])  # `type(name, bases, namespace)`: the namespace is the body
        env.update(self.class_overrides.get(cls, ()))
        if cls.pos[1] == 0 and cls.made is None:
            # a top-level class's dicts a function stores into: registries (registries.py)
            filled = self.module_registries(cls.rel)
            for name, v in env.items():
                if type(v) is DictV and f"{cls.name}.{name}" in filled:
                    env[name] = DictV(v.items, registries.origin_of(cls.rel, f"{cls.name}.{name}"))
        self.class_findings[key] = tuple(found)
        self.body_reads_world[key] = self.world_reads != before
        return env

    def generated_init(self, cls: ClassV, world: int) -> tuple[GeneratedInit, list[ClassV]] | None:
        """The `__init__` that `@dataclass`, attrs or pydantic wrote, when that is the constructor `cls(...)` runs
        (dataclass_fields.py): the first in-repo class of the MRO that is a dataclass, an attrs class, a pydantic
        model or defines `__init__` is one of the first three. Also the classes whose bodies hold the fields'
        defaults (`Field.owner` indexes them). None: another constructor runs, or a form not followed."""
        mro = self.mro(cls, world)
        if any(isinstance(c, Ext) and c.path in PYDANTIC_BASES for c in mro):
            return self._pydantic_init(mro, world)
        owner: ClassV | None = None
        style = ""
        for c in mro:
            if not isinstance(c, ClassV):
                continue
            node = self.class_node(c)
            if node is None:
                return None
            style = "dataclass" if dataclass_init(node) else "attrs" if attrs_init(node) else ""
            if style:
                owner = c
                break
            if "__init__" in self.class_body(c, world):
                return None
        if owner is None:
            return None
        made = dataclass_init if style == "dataclass" else attrs_init
        classes = [c for c in reversed(self.mro(owner, world)) if isinstance(c, ClassV)]
        nodes = [self.class_node(c) for c in classes]
        kept = [(c, n) for c, n in zip(classes, nodes, strict=True) if n is not None and made(n) is not None]
        fields = (declared_fields if style == "dataclass" else attrs_fields)([n for _, n in kept])
        if fields is None:
            return None
        return GeneratedInit(fields, style), [c for c, _ in kept]

    def _pydantic_init(self, mro: list[Value], world: int) -> tuple[GeneratedInit, list[ClassV]] | None:
        """A pydantic model's keyword-only constructor: fields from every in-repo model class of its MRO (those
        deriving from a pydantic base), unless one of them defines `__init__`."""
        kept: list[tuple[ClassV, ast.ClassDef]] = []
        for c in mro:
            if not isinstance(c, ClassV):
                continue
            node = self.class_node(c)
            if node is None or "__init__" in self.class_body(c, world):
                return None
            if any(isinstance(b, Ext) and b.path in PYDANTIC_BASES for b in self.mro(c, world)):
                kept.append((c, node))
        kept.reverse()
        fields = pydantic_fields([n for _, n in kept])
        return None if fields is None else (GeneratedInit(fields, "pydantic"), [c for c, _ in kept])

    def class_body_findings(self, cls: ClassV, world: int) -> tuple[Finding, ...]:
        """The findings of running the class body (`X = 2 ** 10 ** 10` as a class attribute): the body runs
        when its module is imported, so they belong to every test of the class."""
        self.class_body(cls, world)
        return self.class_findings.get((cls, world), ())

    def bases(self, cls: ClassV, world: int) -> list[Value]:
        if cls.made is not None:
            return [self.installed_base(b, cls.rel, world) if isinstance(b, Ext) else b for b in cls.made[0]]
        node = self.class_node(cls)
        if node is None:
            return []
        frame = Frame(cls.rel, world, {}, self.module_state(cls.rel, world, ()).env, [])
        out: list[Value] = []
        for b in node.bases:
            v = self.ev(b, frame)
            if isinstance(b, ast.Subscript):  # Generic[T], Base[...]
                v = self.ev(b.value, frame)
            if isinstance(v, (ClassV, Ext)):
                out.append(v)
            elif isinstance(v, OneOf):
                out.extend(a for a in alternatives(v) if isinstance(a, (ClassV, Ext)))
        return [self.installed_base(b, cls.rel, world) if isinstance(b, Ext) else b for b in out]

    def metaclass_of(self, cls: ClassV, world: int) -> ClassV | None:
        """The in-repo metaclass Python makes `cls` with: the `metaclass=` of the first class along its MRO that
        names one, or the metaclass a class made by a call went through (None: `type`, or not in-repo)."""
        for c in self.mro(cls, world):
            if not isinstance(c, ClassV):
                continue
            if c.meta is not None:
                return c.meta
            node = self.class_node(c) if c.made is None else None
            given = next((k.value for k in node.keywords if k.arg == "metaclass"), None) if node is not None else None
            if given is not None:
                meta = self.ev(given, Frame(c.rel, world, {}, self.module_state(c.rel, world, ()).env, []))
                return meta if isinstance(meta, ClassV) else None
        return None

    def is_metaclass(self, cls: ClassV, world: int) -> bool:
        """Whether an in-repo class derives from `type`: calling it with a name, bases and a namespace makes a
        class, as `type(name, bases, namespace)` does."""
        return Ext("builtins.type") in self.mro(cls, world)

    def installed_base(self, base: Ext, importer: str, world: int, depth: int = 0) -> Value:
        """The class an external base names in an installed test base module that importer's results depend on
        (installed.py): read like repository code, so the tests it defines are collected with their ids; else
        the external base as it is. A name the module imports from another such module is followed, bounded."""
        module, _, name = base.path.rpartition(".")
        rel = self.source.installed_class_module(module, importer) if module else None
        if rel is None:
            return base
        got = self.module_state(rel, world).env.get(name)
        if isinstance(got, ClassV):
            return got
        if isinstance(got, Ext) and got != base and depth < MAX_REEXPORTS:
            return self.installed_base(got, rel, world, depth + 1)
        return base

    def mro(self, cls: ClassV, world: int, depth: int = 0) -> tuple[Value, ...]:
        """C3 linearisation over in-repo classes (external bases are leaves), bounded (limits.c3_merge)."""
        key = (cls, world)
        got = self.mros.get(key)
        if got is not None:
            self.world_memo_hit(self.mro_reads_world, key)
            if not got:  # past the bound before
                limits.check_mro_length(cls.name, limits.MAX_MRO_LENGTH + 1)
            return got
        limits.check_mro_length(cls.name, depth + 1)  # (a chain deeper than the bound is longer than it)
        self.mros[key] = (cls,)  # cycle guard
        before = self.world_reads
        try:
            bases = self.budgeted(UNIT_BUDGET, self.bases, cls, world)[0]
        except BudgetExceeded:
            bases = []
        try:
            seqs = [list(self.mro(b, world, depth + 1)) if isinstance(b, ClassV) else [b] for b in bases]
            result = tuple(limits.c3_merge(cls, [*seqs, list(bases)], cls.name))
        except limits.TooLarge:
            self.mros[key] = ()
            raise
        self.mros[key] = result
        self.mro_reads_world[key] = self.world_reads != before
        return result

    def class_lookup(self, cls: ClassV, name: str, world: int) -> Value | None:
        """What `cls.<name>` finds in the class bodies along the MRO (None: no in-repo class defines it).
        Memoised once the MRO and every body it went through are complete (a body still running, in an import
        cycle, may define the name later): method calls look names up on every call (linear_operator: 230k
        lookups for 5k tests)."""
        key = (cls, name, world)
        got = self.lookups.get(key)
        if got is not None:
            if got[1]:
                self.world_reads += 1
            return got[0]
        before = self.world_reads
        found: Value | None = None
        mro = self.mro(cls, world)
        complete = (cls, world) in self.mro_reads_world
        for c in mro:
            if isinstance(c, ClassV):
                body = self.class_body(c, world)
                complete = complete and (c, world) in self.body_reads_world
                if name in body:
                    found = body[name]
                    break
        if complete:
            self.lookups[key] = (found, self.world_reads != before)
        return found

    def set_class_attribute(self, cls: ClassV, name: str, v: Value, world: int) -> None:
        """`cls.<name> = v` at the top level of the module that defines the class: its body gains the name, and
        what lookups of the name found before (along any MRO) is forgotten."""
        self.class_body(cls, world)[name] = v
        self.inert.mark_late_bound(cls, world)
        for key in [k for k in self.lookups if k[1] == name and k[2] == world]:
            del self.lookups[key]

    def subclasses_of(self, base: ClassV, world: int) -> Seq:
        """`Base.__subclasses__()`: the classes defined at the top level of base's module, or of a module that imports
        it and names it, whose class statement lists `Base` among its bases (by the name the module binds it to), by
        module then position. A superset of what one pytest run has imported when the call runs (a subclass in a
        module it never imports), so that the answer does not depend on which files the analysis was given. Read from
        the modules' text, not by running them: running every importer's top level at the call (class_resolver's
        `ClassResolver.from_subclasses(Model)` at a module's top level) imported them in an order Python never does,
        and what a later import cycle saw (pykeen's `Model` a class or not) depended on which test file came first."""
        found: set[ClassV] = set()
        for rel in (base.rel, *self.source.importers_naming(base.rel, (base.name,))):
            if rel != base.rel:
                self.source.data_file(rel, base.rel)  # (a dependency of code in base's module, as a registry's writer)
            tree = self.source.module(rel).tree
            if tree is not None:
                found.update(_subclass_statements(rel, tree, base))
        return Seq(tuple(sorted(found, key=lambda c: (c.rel, c.pos, c.name))), "list")

    def super_lookup(self, cls: ClassV, name: str, world: int, of: ClassV | None = None) -> Value:
        """`super().<name>` in a method of `cls` called on an object of class `of`: the first class after `cls` in
        the MRO of `of` (as Python's `super()` reads `type(self).__mro__`: a cooperative mixin's
        `super().__init__(**kwargs)` runs the next class of the object's MRO, not of the mixin's) that defines the
        name (unbound), else the attribute of the first external base (often a mixin) before an in-repo class,
        else unresolved."""
        mro = self.mro(of, world) if of is not None else []
        mro = mro[mro.index(cls):] if cls in mro else self.mro(cls, world)
        first_ext: Ext | None = None
        for c in mro[1:]:
            if isinstance(c, ClassV):
                body = self.class_body(c, world)
                if name in body:
                    return body[name]
            elif isinstance(c, Ext) and first_ext is None:
                first_ext = Ext(f"{c.path}.{name}")
        return first_ext if first_ext is not None else UNRESOLVED

    def _is_property(self, fv: FuncV) -> bool:
        """`@property` (also cached_property, abstractproperty) or `property(getter)`: reading the attribute runs
        the getter."""
        if fv.attr(PROPERTY) is not None:
            return True
        node = self.source.module(fv.rel).defs.get(fv.pos)
        return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
            _last_name(d) in PROPERTY_DECORATORS for d in node.decorator_list)

    def property_setter(self, cls: ClassV, name: str, world: int) -> FuncV | None:
        """The `@<name>.setter` method that `obj.<name> = v` runs on an object of class `cls`: in the first class of
        the MRO that defines `name` (the class body keeps the getter under the name, class_body). Read from the
        classes' source, memoised (every attribute assignment asks; a hit counts the world read the MRO made)."""
        key = (cls, name, world)
        got = self.setters.get(key)
        if got is None:
            before = self.world_reads
            found = self._find_setter(self.mro(cls, world), name)
            got = self.setters[key] = (found, self.world_reads != before)
        else:
            self.world_reads += got[1]
        return got[0]

    def _find_setter(self, mro: tuple[Value, ...], name: str) -> FuncV | None:
        for c in mro:
            node = self.class_node(c) if isinstance(c, ClassV) else None
            if node is None or not isinstance(c, ClassV):
                return None
            defined = [s for s in node.body if _defines(s, name)]
            if not defined:
                continue
            for s in defined:
                if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                        isinstance(d, ast.Attribute) and d.attr == "setter" and isinstance(d.value, ast.Name) and
                        d.value.id == name for d in s.decorator_list):
                    return FuncV(c.rel, (s.lineno, s.col_offset), s.name, cls=c, captured=c.captured)
            return None
        return None

    def _is_classmethod(self, fv: FuncV) -> bool:
        return self._decorated_as(fv, "classmethod")

    def _decorated_as(self, fv: FuncV, decorator: str) -> bool:
        node = self.source.module(fv.rel).defs.get(fv.pos)
        return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
            isinstance(d, ast.Name) and d.id == decorator for d in node.decorator_list)

    def bound_method(self, found: FuncV, obj: Value, cls: ClassV) -> FuncV:
        """A method found on an object of class `cls` (or through `super()`), as the call receives it: bound to
        the object, to its class for a `@classmethod`, unbound for a `@staticmethod` (`env =
        self._wrap_env(env)` of stable-baselines3 must not pass the object as `env`)."""
        if self._decorated_as(found, "staticmethod"):
            return found
        receiver = cls if self._is_classmethod(found) else obj
        return FuncV(found.rel, found.pos, found.name, bound=receiver, captured=found.captured, cls=found.cls,
                     attrs=found.attrs)  # (a bound method reads its function's attributes)

    def store_key(self, cls: ClassV, name: str, world: int) -> str | None:
        """The shared namespace that `cls.<name>` / `obj.<name>` is, or None: a class attribute (found through
        the MRO) that a method of a class in the MRO adopts as an instance's attributes (the Borg idiom,
        `self.__dict__ = self._shared_state`, accelerate's PartialState/AcceleratorState/GradientState)."""
        key = (cls, name, world)
        if key in self.store_keys:
            self.world_memo_hit(self.store_reads_world, key)
            return self.store_keys[key]
        before = self.world_reads
        got: str | None = None
        mro = [c for c in self.mro(cls, world) if isinstance(c, ClassV)]
        if any(name in self._shared_attrs(c) for c in mro):
            owner = next((c for c in mro if name in self.class_body(c, world)), None)
            if owner is not None:
                got = f"{STORE}{owner.rel}:{owner.pos[0]}:{owner.pos[1]}.{name}"
        self.store_keys[key] = got
        self.store_reads_world[key] = self.world_reads != before
        return got

    def _shared_attrs(self, cls: ClassV) -> frozenset[str]:
        """Names X of `<obj>.__dict__ = <expr>.X` statements in the methods of `cls` (syntactic)."""
        got = self.shared_attrs.get(cls)
        if got is not None:
            return got
        names: set[str] = set()
        node = self.class_node(cls)
        if node is not None:
            for fn in node.body:
                if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                for n in ast.walk(fn):
                    if isinstance(n, ast.Assign) and isinstance(n.value, ast.Attribute) and any(
                            isinstance(t, ast.Attribute) and t.attr == "__dict__" for t in n.targets):
                        names.add(n.value.attr)
        got = frozenset(names)
        self.shared_attrs[cls] = got
        return got

    def derives_from_torch_module(self, cls: ClassV, world: int) -> bool:
        """Whether torch.nn.Module is an (external) base in the MRO of `cls`."""
        return any(isinstance(b, Ext) and b.path in nn_modules.TORCH_MODULE_CLASSES for b in self.mro(cls, world))

    def prints_as_module(self, cls: ClassV, world: int) -> bool:
        """Whether instances of `cls` print as torch's `Module.__repr__` prints them, from their attributes alone:
        its MRO is in-repo classes over `torch.nn.Module` only (every base resolved, no metaclass), none of them
        defines a method that changes the print (`extra_repr`, `__repr__`...) and no method registers children
        otherwise than by setting attributes (`add_module`, `setattr`, `self._modules`). Then the instance
        prints `Name()`, or `Name(` + its child modules in the order they were set + `)`."""
        key = (cls, world)
        got = self.module_classes.get(key)
        if got is not None:
            self.world_memo_hit(self.module_classes_world, key)
            return got
        before = self.world_reads
        got = self._prints_as_module(cls, world)
        self.module_classes[key] = got
        self.module_classes_world[key] = self.world_reads != before
        return got

    def _prints_as_module(self, cls: ClassV, world: int) -> bool:
        mro = self.mro(cls, world)
        if not any(isinstance(c, Ext) and c.path != "builtins.object" for c in mro):
            return False
        for c in mro:
            if isinstance(c, Ext):
                if c.path not in MODULE_BASES:
                    return False
                continue
            if not isinstance(c, ClassV):
                return False
            node = self.class_node(c)
            if node is None or node.keywords or len(self.bases(c, world)) != len(node.bases):
                return False
            if any(name in self.class_body(c, world) for name in MODULE_PRINT_OVERRIDES):
                return False
            if self._registers_modules(c):
                return False
        return True

    def _registers_modules(self, cls: ClassV) -> bool:
        """Whether a method of `cls` names add_module, register_module, setattr, `_modules`, `__dict__`...
        (syntactic: a child registered so is not an attribute the analysis sees set)."""
        got = self.module_registrars.get(cls)
        if got is None:
            node = self.class_node(cls)
            got = node is None
            modelled: set[int] = set()  # (ast.walk is breadth first: a call comes before its `func`)
            for n in ast.walk(node) if node is not None else ():
                if nn_modules.add_module_call(n):
                    modelled.add(id(n.func))  # type: ignore[attr-defined]
                elif isinstance(n, ast.Name) and n.id in MODULE_REGISTRARS or isinstance(
                        n, ast.Attribute) and n.attr in MODULE_REGISTRARS and id(n) not in modelled:
                    got = True
                    break
            self.module_registrars[cls] = got
        return got


def _defines(s: ast.stmt, name: str) -> bool:
    """Whether a class-body statement binds `name` (a def, an assignment, an annotated one)."""
    if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return s.name == name
    targets = s.targets if isinstance(s, ast.Assign) else [s.target] if isinstance(s, (ast.AnnAssign, ast.AugAssign)) \
        else []
    return any(isinstance(n, ast.Name) and n.id == name for t in targets for n in ast.walk(t))


def _subclass_statements(rel: str, tree: ast.Module, base: ClassV) -> list[ClassV]:
    """The classes a module's top level (its `if`/`try` blocks included) defines with `base` among the bases its
    class statement names: by base's own name, or the name an import gave it (`from .nbase import ERModel as ER`),
    as a name or an attribute (`models.ERModel`), generic or not (`ERModel[H, R, T]`). The class statement's value,
    as interp_statements makes it."""
    names = {base.name} | {a.asname for s in tree.body if isinstance(s, ast.ImportFrom) for a in s.names
                           if a.name == base.name and a.asname}
    out: list[ClassV] = []
    todo: list[ast.stmt] = list(tree.body)
    while todo:
        s = todo.pop()
        if isinstance(s, ast.ClassDef):
            if rel != base.rel or (s.lineno, s.col_offset) != base.pos:
                if any(_names_class(b.value if isinstance(b, ast.Subscript) else b, names, base.name)
                       for b in s.bases):
                    out.append(ClassV(rel, (s.lineno, s.col_offset), s.name))
        elif isinstance(s, ast.If):
            todo.extend((*s.body, *s.orelse))
        elif isinstance(s, ast.Try):
            todo.extend((*s.body, *s.orelse, *s.finalbody, *(st for h in s.handlers for st in h.body)))
    return out


def _names_class(e: ast.expr, names: set[str], name: str) -> bool:
    """Whether a base expression names the class: a name bound to it, or an attribute of its name."""
    return isinstance(e, ast.Name) and e.id in names or isinstance(e, ast.Attribute) and e.attr == name
