"""Which test bodies can be left uninterpreted: those that provably yield no evidence.

Most tests in a torch suite do CPU tensor arithmetic: no device, no skip, no mock, and nothing in the
repository that does any of these. Interpreting such a body costs more than half of a cold run and always
ends in "no GPU use found". A function is *inert* when

- its source text mentions none of the words an evidence rule reacts to (`TRIGGER_SUBSTRINGS`,
  `SHORT_WORD`, `EXACT_NAMES`: device and accelerator words, distributed backends, skips, CUDA-only tensor
  methods, imports, scope tricks, the exact names of the torch API table and of the ecosystem conventions)
  and calls no builtin that looks names up or runs code by a computed name (`BARE_BUILTIN`), and
- every module-level name it mentions is a plain value (constants and external objects whose text holds
  no trigger word, sequences of those) or an in-repo function or class that is itself inert;
  a module with a star import, a nested closure or a method is never proven inert.

Evidence comes only from calls, attributes and names the rules know; an inert body reaches none of them, so
interpreting it yields no findings. The proof is textual and deliberately coarse (a word inside a string
counts too): whatever it cannot prove is interpreted as before. tests/tools/classify/test_classify_inert.py
classifies the fixture corpus with and without the shortcut and requires byte-identical results.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable

from tools.classify import conventions, torch_api
from tools.classify.values import (
    ClassV,
    Const,
    DictV,
    Ext,
    FuncV,
    NNModV,
    OneOf,
    Seq,
    TensorV,
    Unresolved,
    Value,
)

# Substrings (any case) of words some rule reacts to: device and accelerator words, distributed backends,
# skips, CUDA-only tensor methods, scope tricks, imports (a local import runs a module's top level) and programs
# run (programs.py), extension builds (torch.utils.cpp_extension: CUDA sources).
# Names under torch.cuda/torch.backends.cuda (streams, events, graphs, memory queries, mocks of them) all
# carry `cuda` in the text or in the value they come from.
TRIGGER_SUBSTRINGS = (
    "cuda", "gpu", "device", "accelerat", "gaudi", "habana", "ascend", "nccl", "gloo", "distributed",
    "process_group", "world_size", "skip", "xfail", "nvtx", "pin_memory", "record_stream", "register_buffer",
    "to_empty", "tensor_type", "import", "global", "nonlocal", "__dict__", "nvidia", "subprocess", "runpy", "triton",
    "cpp_extension", "__subclasses__", "attrgetter", "methodcaller",
)
TRIGGER_SUBSTRING = re.compile("|".join(re.escape(w) for w in TRIGGER_SUBSTRINGS))
# Short accelerator names count only as words of their own (`is_tpu_available`, not `output`, `dumps`).
SHORT_WORD = re.compile(r"(?<![a-z])(?:xpu|mps|npu|hpu|mlu|musa|sdaa|neuron|xla|tpu|ipu|rocm|hip|mpi|rank)(?![a-z])")
# Builtins that look names up or run code by a computed name; as methods (`model.eval()`) they are harmless.
DYNAMIC_BUILTINS = ("eval", "exec", "getattr", "setattr", "delattr", "__import__", "vars", "globals", "locals")
DYNAMIC_BUILTIN_SET = frozenset(DYNAMIC_BUILTINS)
# External packages whose functions run code a configuration names (`hydra.utils.instantiate(cfg.model)`): like the
# builtins above, the text of the caller does not show what runs
RUNS_CONFIGURED_CODE = ("hydra.",)
BARE_BUILTIN = re.compile(r"(?<![\w.])(?:" + "|".join(DYNAMIC_BUILTINS) + r")(?!\w)")
# Every word of a text, strings and comments included: a trigger word inside a string counts too.
WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def word_triggers(word: str) -> bool:
    """Whether one word (an identifier, a dotted path's part, a word of a string) is a trigger word."""
    low = word.lower()
    return word in EXACT_NAMES or bool(TRIGGER_SUBSTRING.search(low)) or bool(SHORT_WORD.search(low))


def _exact_names() -> frozenset[str]:
    """Names the rules match exactly, from the tables the rules themselves use; `to` is the `.to(` method."""
    # an API under a trigger-word namespace (torch.cuda.*) is reached only through text or a value that shows it
    api = {a.path.rsplit(".", 1)[-1] for a in torch_api.TABLE if a.need != torch_api.CPU
           and not TRIGGER_SUBSTRING.search(a.path.rsplit(".", 1)[0].lower())}
    api -= {p.rsplit(".", 1)[-1] for p in torch_api.DEVICE_ARG_APIS}  # these act only on a device argument
    # `cpu` is a manual mark's name, but in a body (`x.cpu()`, `pytest.mark.cpu`) it yields no finding;
    # `fail` is pytest.fail (a skip-like exit)
    # `system`: os.system runs a program (programs.py)
    return frozenset({*api, *conventions.reacting_names(), "cuda", "to", "fail", "system"} - {"cpu"})


EXACT_NAMES = _exact_names()
PLAIN_TYPES = (Unresolved, TensorV)


class InertProver:
    """Memoised inertness of in-repo functions and classes, per world (module constants may differ)."""

    def __init__(self, lines_of: Callable[[str], list[bytes] | None],
                 node_of: Callable[[str, tuple[int, int]], ast.AST | None],
                 module_env: Callable[[str, int], tuple[dict[str, Value], bool]]) -> None:
        """lines_of(rel): the module's source lines (None: unavailable); node_of(rel, pos): a def node;
        module_env(rel, world): (the module's top-level names, whether it has a star import)."""
        self.lines_of = lines_of
        self.node_of = node_of
        self.module_env = module_env
        self.memo: dict[tuple[object, ...], bool] = {}
        self.clean: set[str] = set()  # words known not to trigger (words repeat across a suite)
        self.leaves: dict[Value, bool] = {}  # constants and external names: plain or not
        self.late_bound: set[tuple[ClassV, int]] = set()  # classes given attributes outside their body, per world

    def mark_late_bound(self, cls: ClassV, world: int) -> None:
        """`Job.run = _run` after the class: its text no longer shows what its objects do, so it is never inert."""
        self.late_bound.add((cls, world))
        self.memo.pop((cls, world), None)

    def _any_trigger(self, words: set[str]) -> bool:
        for w in words - self.clean:
            if word_triggers(w):
                return True
            self.clean.add(w)
        return False

    def _text_triggers(self, text: str) -> bool:
        return self._any_trigger(set(WORD.findall(text)))

    def callable_inert(self, v: FuncV | ClassV, world: int) -> bool:
        """Calling v (a function) or instantiating it (a class) can yield no findings."""
        key = (v, world)
        got = self.memo.get(key)
        if got is not None:
            return got
        self.memo[key] = False  # a cycle is not proven inert
        # (a function carrying attributes may be run otherwise: a click command runs its sub-commands' callbacks)
        ok = (not isinstance(v, FuncV) or (v.bound is None and v.cls is None and not v.captured and not v.attrs)) \
            and (v, world) not in self.late_bound and self._text_inert(v.rel, v.pos, world)
        self.memo[key] = ok
        return ok

    def method_inert(self, fv: FuncV, world: int) -> bool:
        """A method that never uses its instance (its `self` appears only as the parameter, and no
        `super()`): calling it can reach no other method, so its own text decides."""
        key = ("method", fv, world)
        got = self.memo.get(key)
        if got is not None:
            return got
        self.memo[key] = False
        node = self.node_of(fv.rel, fv.pos)
        ok = False
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not fv.captured:
            params = [*node.args.posonlyargs, *node.args.args]
            text = self._text_of(fv.rel, node)
            words = WORD.findall(text) if text is not None else []
            ok = bool(params) and words.count(params[0].arg) == 1 and "super" not in words \
                and self._text_inert(fv.rel, fv.pos, world)
        self.memo[key] = ok
        return ok

    def value_plain(self, v: Value, world: int, depth: int = 0) -> bool:
        """A value no rule reacts to, wherever it flows."""
        if isinstance(v, (Const, Ext)):
            got = self.leaves.get(v)
            if got is None:
                got = self.leaves[v] = self._leaf_plain(v)
            return got
        if isinstance(v, PLAIN_TYPES):
            return not isinstance(v, TensorV) or v.device == "cpu"
        if depth > 8:
            return False
        if isinstance(v, Seq):  # (a registry is filled by calls the text of its readers does not show)
            return v.origin is None and all(self.value_plain(i, world, depth + 1) for i in v.items)
        if isinstance(v, DictV):
            # (a registry is filled by calls the text of its readers does not show: registries.py)
            return v.origin is None and all(
                self.value_plain(k, world, depth + 1) and self.value_plain(i, world, depth + 1) for k, i in v.items)
        if isinstance(v, OneOf):
            return all(self.value_plain(i, world, depth + 1) for i in v.alts)
        if isinstance(v, NNModV):  # a torch.nn module: plain like a CPU tensor, when its arguments are
            return v.device in (None, "cpu") and all(self.value_plain(x, world, depth + 1) for _, x in v.args)
        if isinstance(v, (FuncV, ClassV)):
            return self.callable_inert(v, world)
        return False

    def _leaf_plain(self, v: Const | Ext) -> bool:
        if isinstance(v, Const):
            return not isinstance(v.value, (str, bytes)) or not self._text_triggers(
                v.value if isinstance(v.value, str) else v.value.decode("latin-1"))
        return not v.path.startswith(("<", *RUNS_CONFIGURED_CODE)) and v.path.rsplit(".", 1)[-1] not in \
            DYNAMIC_BUILTINS and not self._text_triggers(v.path)

    def _text_of(self, rel: str, node: ast.AST) -> str | None:
        """The def's source (signature with defaults, and body; decorators apart); None: not ASCII (a
        non-ASCII identifier would slip past WORD) or unavailable."""
        lines = self.lines_of(rel)
        end = getattr(node, "end_lineno", None)
        if lines is None or end is None:
            return None
        text = b"".join(lines[node.lineno - 1:end])  # type: ignore[attr-defined]
        return text.decode("ascii") if text.isascii() else None

    def _decorated_by_trigger(self, rel: str, node: ast.AST) -> bool:
        """Whether a def's decorators name a trigger word (`@triton.jit`: calling the kernel launches it on a GPU)."""
        lines = self.lines_of(rel)
        decorators = getattr(node, "decorator_list", [])
        if not decorators or lines is None:
            return False
        first, last = decorators[0].lineno, node.lineno  # type: ignore[attr-defined]
        return self._text_triggers(b"".join(lines[first - 1:last - 1]).decode("utf-8", "replace"))

    def _text_inert(self, rel: str, pos: tuple[int, int], world: int) -> bool:
        node = self.node_of(rel, pos)
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return False
        text = self._text_of(rel, node)
        if text is None or self._decorated_by_trigger(rel, node):
            return False
        words = set(WORD.findall(text))
        env, has_star = self.module_env(rel, world)
        own = env.get(node.name)
        if own is None or (isinstance(own, (FuncV, ClassV)) and own.rel == rel and own.pos == pos):
            # its own name (the def line, recursion) stands for itself: inert exactly when the rest is
            words.discard(node.name)
        if self._any_trigger(words) or (not DYNAMIC_BUILTIN_SET.isdisjoint(words) and BARE_BUILTIN.search(text)):
            return False
        names = words & env.keys()
        if has_star and len(names) < len(words):
            return False  # a word that is no module name may come from the star import
        return all(self.value_plain(env[name], world) for name in sorted(names))
