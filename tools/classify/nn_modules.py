"""How torch 2.13 prints torch.nn modules (`Module.__repr__` with each layer's `extra_repr()`), without importing
torch: pytest ids printed from modules (`"{}".format(self.make_module())`, `f"model={model}"`) are spelled
exactly when every argument the print reads is known.

`TABLE` holds, per class, the constructor's parameters (names and defaults in signature order, as torch's
`__init__` declares them; `device`/`dtype` are left out: a module built with `device=` is a device use, handled
by interp_torch) and a function of the bound arguments giving `extra_repr()`. Containers (`Sequential`,
`ModuleList`, `ModuleDict`) print their children. tests/tools/classify/test_nn_modules_table.py checks every
entry against the installed torch (signatures and printed modules).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import repeat

from tools.classify.values import (
    MODULE_CONTAINERS,
    NOT_LITERAL,
    NOT_NONE,
    UNRESOLVED,
    ClassV,
    Const,
    DictV,
    Ext,
    Inst,
    NNModV,
    Seq,
    TensorV,
    Value,
    alternatives,
    literal_of,
    module_children,
    module_kind,
)

REQUIRED = object()  # a parameter without a default
VAR = "*"  # the parameter list of a class that accepts any arguments and prints none (`Identity(*args)`)
CONTAINERS = MODULE_CONTAINERS


class NotKnown(Exception):
    """An argument the printed text reads is not exactly known, or torch would refuse the arguments."""


Args = Callable[[str], object]  # a bound argument by name, as the Python object torch receives


@dataclass(frozen=True)
class Spec:
    """One torch.nn class: how its constructor binds arguments, and how its `extra_repr()` reads them."""

    params: tuple[tuple[str, object], ...] | str  # (name, default or REQUIRED), or VAR
    extra: Callable[[Args], str]  # extra_repr() from the bound arguments
    kwonly: tuple[tuple[str, object], ...] = ()


def _ntuple(n: int) -> Callable[[object], tuple[object, ...]]:
    """torch.nn.modules.utils._ntuple: an iterable becomes a tuple, anything else is repeated n times."""
    def parse(x: object) -> tuple[object, ...]:
        return tuple(x) if isinstance(x, Iterable) else tuple(repeat(x, n))
    return parse


def _p(*names: str | tuple[str, object]) -> tuple[tuple[str, object], ...]:
    """A parameter list: a bare name is required, a (name, default) pair has its default."""
    return tuple((n, REQUIRED) if isinstance(n, str) else n for n in names)


def _check(ok: bool) -> None:
    if not ok:
        raise NotKnown


def _none(_a: Args) -> str:
    return ""


def _inplace(a: Args) -> str:
    return "inplace=True" if a("inplace") else ""


def _comma_inplace(a: Args) -> str:
    return ", inplace=True" if a("inplace") else ""


def _conv(n: int, transposed: bool) -> Callable[[Args], str]:
    """_ConvNd.extra_repr over the attributes Conv{n}d / ConvTranspose{n}d store (ints made n-tuples)."""
    tup = _ntuple(n)

    def extra(a: Args) -> str:
        cin, cout, groups, mode = a("in_channels"), a("out_channels"), a("groups"), a("padding_mode")
        _check(type(groups) is int and groups > 0 and type(cin) is int and type(cout) is int)
        _check(cin % groups == 0 and cout % groups == 0)
        _check(mode in ("zeros", "reflect", "replicate", "circular"))
        raw = a("padding")
        stride = tup(a("stride"))
        if isinstance(raw, str) and not transposed:  # (ConvTranspose makes a string a tuple of characters)
            _check(raw in ("same", "valid") and not (raw == "same" and any(s != 1 for s in stride)))
            padding: object = raw
        else:
            padding = tup(raw)
        dilation = tup(a("dilation"))
        output_padding = tup(a("output_padding")) if transposed else tup(0)
        s = f"{cin}, {cout}, kernel_size={tup(a('kernel_size'))}, stride={stride}"
        if padding != (0,) * len(padding):  # type: ignore[arg-type]
            s += f", padding={padding}"
        if dilation != (1,) * len(dilation):
            s += f", dilation={dilation}"
        if output_padding != (0,) * len(output_padding):
            s += f", output_padding={output_padding}"
        if groups != 1:
            s += f", groups={groups}"
        if not a("bias"):
            s += ", bias=False"
        if mode != "zeros":
            s += f", padding_mode={mode}"
        return s
    return extra


def _norm(a: Args) -> str:
    """_NormBase.extra_repr (BatchNorm, InstanceNorm): the bias exists when affine and bias are both set."""
    return (f"{a('num_features')}, eps={a('eps')}, momentum={a('momentum')}, affine={a('affine')}, "
            f"bias={bool(a('affine') and a('bias'))}, track_running_stats={a('track_running_stats')}")


def _layer_norm(a: Args) -> str:
    shape = a("normalized_shape")
    shape = (shape,) if type(shape) is int else tuple(shape)  # type: ignore[arg-type]
    affine = a("elementwise_affine")
    return f"{shape}, eps={a('eps')}, elementwise_affine={affine}, bias={bool(affine and a('bias'))}"


def _group_norm(a: Args) -> str:
    groups, channels = a("num_groups"), a("num_channels")
    _check(type(groups) is int and type(channels) is int and groups > 0 and channels % groups == 0)
    return f"{groups}, {channels}, eps={a('eps')}, affine={a('affine')}, bias={bool(a('affine') and a('bias'))}"


def _max_pool(a: Args) -> str:
    stride = a("stride")
    return (f"kernel_size={a('kernel_size')}, stride={a('kernel_size') if stride is None else stride}, "
            f"padding={a('padding')}, dilation={a('dilation')}, ceil_mode={a('ceil_mode')}")


def _avg_pool(one_d: bool) -> Callable[[Args], str]:
    """AvgPool1d stores 1-tuples; AvgPool2d/3d keep the arguments as given."""
    conv = _ntuple(1) if one_d else (lambda x: x)

    def extra(a: Args) -> str:
        stride = a("stride")
        return (f"kernel_size={conv(a('kernel_size'))}, stride={conv(a('kernel_size') if stride is None else stride)}, "
                f"padding={conv(a('padding'))}")
    return extra


def _dropout(a: Args) -> str:
    p = a("p")
    _check(isinstance(p, (int, float)) and not isinstance(p, bool) and 0 <= p <= 1)
    return f"p={p}, inplace={a('inplace')}"


def _embedding(a: Args) -> str:
    num, dim, pad = a("num_embeddings"), a("embedding_dim"), a("padding_idx")
    _check(a("_weight") is None and type(num) is int)
    s = f"{num}, {dim}"
    if pad is not None:
        _check(type(pad) is int and -num <= pad < num)
        s += f", padding_idx={pad + num if pad < 0 else pad}"
    if a("max_norm") is not None:
        s += f", max_norm={a('max_norm')}"
    if a("norm_type") != 2:
        s += f", norm_type={a('norm_type')}"
    if a("scale_grad_by_freq") is not False:
        s += f", scale_grad_by_freq={a('scale_grad_by_freq')}"
    if a("sparse") is not False:
        s += ", sparse=True"
    return s


def _hardtanh(a: Args) -> str:
    low, high = a("min_val"), a("max_val")
    if a("min_value") is not None:
        low = a("min_value")
    if a("max_value") is not None:
        high = a("max_value")
    _check(high > low)  # type: ignore[operator]
    return f"min_val={low}, max_val={high}{_comma_inplace(a)}"


def _pad(n: int, value: bool) -> Callable[[Args], str]:
    """The padding layers: an int is repeated n times, a sequence kept whatever its length (torch checks it only
    when the layer runs)."""
    tup = _ntuple(n)

    def extra(a: Args) -> str:
        padding = tup(a("padding"))
        return f"padding={padding}, value={a('value')}" if value else f"{padding}"
    return extra


def _rnn(kind: str) -> Callable[[Args], str]:
    """RNNBase.extra_repr (RNN, LSTM, GRU); dropout is stored as a float."""
    return lambda a: _rnn_extra(kind, a)


def _rnn_extra(kind: str, a: Args) -> str:
    if kind == "RNN":
        _check(a("nonlinearity") in ("tanh", "relu"))
    dropout = a("dropout")
    _check(isinstance(dropout, (int, float)) and not isinstance(dropout, bool) and 0 <= dropout <= 1)
    s = f"{a('input_size')}, {a('hidden_size')}"
    proj = a("proj_size") if kind == "LSTM" else 0
    if proj != 0:
        s += f", proj_size={proj}"
    if a("num_layers") != 1:
        s += f", num_layers={a('num_layers')}"
    if a("bias") is not True:
        s += f", bias={a('bias')}"
    if a("batch_first") is not False:
        s += f", batch_first={a('batch_first')}"
    if float(dropout) != 0:
        s += f", dropout={float(dropout)}"
    if a("bidirectional") is not False:
        s += f", bidirectional={a('bidirectional')}"
    return s


_REDUCTION = (("size_average", None), ("reduce", None), ("reduction", "mean"))
_WEIGHTED = (("weight", None), ("size_average", None), ("ignore_index", -100), ("reduce", None),
             ("reduction", "mean"))
_RNN = (("num_layers", 1), ("bias", True), ("batch_first", False), ("dropout", 0.0), ("bidirectional", False))
_CONV = _p("in_channels", "out_channels", "kernel_size", ("stride", 1), ("padding", 0), ("dilation", 1),
           ("groups", 1), ("bias", True), ("padding_mode", "zeros"))
_CONV_T = _p("in_channels", "out_channels", "kernel_size", ("stride", 1), ("padding", 0), ("output_padding", 0),
             ("groups", 1), ("bias", True), ("dilation", 1), ("padding_mode", "zeros"))
_NORM_BIAS = (("bias", True),)


def _table() -> dict[str, Spec]:
    t: dict[str, Spec] = {
        "Linear": Spec(_p("in_features", "out_features", ("bias", True)), lambda a: (
            f"in_features={a('in_features')}, out_features={a('out_features')}, bias={bool(a('bias'))}")),
        "Bilinear": Spec(_p("in1_features", "in2_features", "out_features", ("bias", True)), lambda a: (
            f"in1_features={a('in1_features')}, in2_features={a('in2_features')}, "
            f"out_features={a('out_features')}, bias={bool(a('bias'))}")),
        "LayerNorm": Spec(_p("normalized_shape", ("eps", 1e-05), ("elementwise_affine", True), ("bias", True)),
                          _layer_norm),
        "GroupNorm": Spec(_p("num_groups", "num_channels", ("eps", 1e-05), ("affine", True)), _group_norm,
                          _NORM_BIAS),
        "Embedding": Spec(_p("num_embeddings", "embedding_dim", ("padding_idx", None), ("max_norm", None),
                             ("norm_type", 2.0), ("scale_grad_by_freq", False), ("sparse", False), ("_weight", None),
                             ("_freeze", False)), _embedding),
        "ELU": Spec(_p(("alpha", 1.0), ("inplace", False)), lambda a: f"alpha={a('alpha')}{_comma_inplace(a)}"),
        "CELU": Spec(_p(("alpha", 1.0), ("inplace", False)), lambda a: f"alpha={a('alpha')}{_comma_inplace(a)}"),
        "GELU": Spec(_p(("approximate", "none")), lambda a: f"approximate={a('approximate')!r}"),
        "LeakyReLU": Spec(_p(("negative_slope", 0.01), ("inplace", False)),
                          lambda a: f"negative_slope={a('negative_slope')}{_comma_inplace(a)}"),
        "Softplus": Spec(_p(("beta", 1.0), ("threshold", 20.0)),
                         lambda a: f"beta={a('beta')}, threshold={a('threshold')}"),
        "Hardtanh": Spec(_p(("min_val", -1.0), ("max_val", 1.0), ("inplace", False), ("min_value", None),
                            ("max_value", None)), _hardtanh),
        "Hardshrink": Spec(_p(("lambd", 0.5)), lambda a: f"{a('lambd')}"),
        "Softshrink": Spec(_p(("lambd", 0.5)), lambda a: str(a("lambd"))),
        "Threshold": Spec(_p("threshold", "value", ("inplace", False)),
                          lambda a: f"threshold={a('threshold')}, value={a('value')}{_comma_inplace(a)}"),
        "PReLU": Spec(_p(("num_parameters", 1), ("init", 0.25)), lambda a: f"num_parameters={a('num_parameters')}"),
        "GLU": Spec(_p(("dim", -1)), lambda a: f"dim={a('dim')}"),
        "RReLU": Spec(_p(("lower", 1.0 / 8), ("upper", 1.0 / 3), ("inplace", False)),
                      lambda a: f"lower={a('lower')}, upper={a('upper')}{_comma_inplace(a)}"),
        "Flatten": Spec(_p(("start_dim", 1), ("end_dim", -1)),
                        lambda a: f"start_dim={a('start_dim')}, end_dim={a('end_dim')}"),
        "Unflatten": Spec(_p("dim", "unflattened_size"),
                          lambda a: f"dim={a('dim')}, unflattened_size={a('unflattened_size')}"),
        "PixelShuffle": Spec(_p("upscale_factor"), lambda a: f"upscale_factor={a('upscale_factor')}"),
        "RNN": Spec(_p("input_size", "hidden_size", ("num_layers", 1), ("nonlinearity", "tanh"), *_RNN[1:]),
                    _rnn("RNN")),
        "LSTM": Spec(_p("input_size", "hidden_size", *_RNN, ("proj_size", 0)), _rnn("LSTM")),
        "GRU": Spec(_p("input_size", "hidden_size", *_RNN), _rnn("GRU")),
    }
    for name in ("ReLU", "ReLU6", "SELU", "SiLU", "Mish"):
        t[name] = Spec(_p(("inplace", False)), _inplace)
    for name in ("Hardsigmoid", "Hardswish"):
        t[name] = Spec(_p(("inplace", False)), _none)
    t["Identity"] = Spec(VAR, _none)  # (takes and ignores any arguments)
    for name in ("Sigmoid", "Tanh", "LogSigmoid", "Softsign", "Tanhshrink"):
        t[name] = Spec((), _none)  # (declared `*args, **kwargs`, but Module.__init__ refuses any)
    for name in ("Softmax", "LogSoftmax", "Softmin"):
        t[name] = Spec(_p(("dim", None)), lambda a: f"dim={a('dim')}")
    for name in ("Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"):
        t[name] = Spec(_p(("p", 0.5), ("inplace", False)), _dropout)
    for n in (1, 2, 3):
        t[f"Conv{n}d"] = Spec(_CONV, _conv(n, False))
        t[f"ConvTranspose{n}d"] = Spec(_CONV_T, _conv(n, True))
        t[f"BatchNorm{n}d"] = Spec(_p("num_features", ("eps", 1e-05), ("momentum", 0.1), ("affine", True),
                                      ("track_running_stats", True)), _norm, _NORM_BIAS)
        t[f"InstanceNorm{n}d"] = Spec(_p("num_features", ("eps", 1e-05), ("momentum", 0.1), ("affine", False),
                                         ("track_running_stats", False)), _norm, _NORM_BIAS)
        t[f"MaxPool{n}d"] = Spec(_p("kernel_size", ("stride", None), ("padding", 0), ("dilation", 1),
                                    ("return_indices", False), ("ceil_mode", False)), _max_pool)
        avg = _p("kernel_size", ("stride", None), ("padding", 0), ("ceil_mode", False), ("count_include_pad", True))
        t[f"AvgPool{n}d"] = Spec(avg if n == 1 else (*avg, ("divisor_override", None)), _avg_pool(n == 1))
        t[f"AdaptiveAvgPool{n}d"] = Spec(_p("output_size"), lambda a: f"output_size={a('output_size')}")
        t[f"AdaptiveMaxPool{n}d"] = Spec(_p("output_size", ("return_indices", False)),
                                         lambda a: f"output_size={a('output_size')}")
        t[f"ZeroPad{n}d"] = Spec(_p("padding"), _pad(2 * n, False))
        t[f"ConstantPad{n}d"] = Spec(_p("padding", "value"), _pad(2 * n, True))
        t[f"ReflectionPad{n}d"] = Spec(_p("padding"), _pad(2 * n, False))
        t[f"ReplicationPad{n}d"] = Spec(_p("padding"), _pad(2 * n, False))
    for name in ("MSELoss", "L1Loss"):
        t[name] = Spec(_REDUCTION, _none)
    t["CrossEntropyLoss"] = Spec((*_WEIGHTED, ("label_smoothing", 0.0)), _none)
    t["NLLLoss"] = Spec(_WEIGHTED, _none)
    t["BCELoss"] = Spec((("weight", None), *_REDUCTION), _none)
    t["BCEWithLogitsLoss"] = Spec((("weight", None), *_REDUCTION, ("pos_weight", None)), _none)
    t["SmoothL1Loss"] = Spec((*_REDUCTION, ("beta", 1.0)), _none)
    t["HuberLoss"] = Spec(_p(("reduction", "mean"), ("delta", 1.0)), _none)
    t["KLDivLoss"] = Spec((*_REDUCTION, ("log_target", False)), _none)
    return t


TABLE = _table()


# The torch.nn classes between each class of the table and `Module` in its MRO (torch 2.13; checked against the
# installed torch by tests/tools/classify/test_nn_modules_table.py): `isinstance(m, _Loss)` of a module it builds.
_BASE_GROUPS: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (("RNNBase",), ("RNN", "LSTM", "GRU")),
    (("Hardtanh",), ("ReLU6",)),
    (("_DropoutNd",), ("Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout")),
    (("_ConvNd",), ("Conv1d", "Conv2d", "Conv3d")),
    (("_ConvTransposeNd", "_ConvNd"), ("ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d")),
    (("_BatchNorm", "_NormBase"), ("BatchNorm1d", "BatchNorm2d", "BatchNorm3d")),
    (("_InstanceNorm", "_NormBase"), ("InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d")),
    (("_MaxPoolNd",), ("MaxPool1d", "MaxPool2d", "MaxPool3d")),
    (("_AvgPoolNd",), ("AvgPool1d", "AvgPool2d", "AvgPool3d")),
    (("_AdaptiveAvgPoolNd",), ("AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d")),
    (("_AdaptiveMaxPoolNd",), ("AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d")),
    (("_ConstantPadNd",), ("ConstantPad1d", "ConstantPad2d", "ConstantPad3d")),
    (("ConstantPad1d", "_ConstantPadNd"), ("ZeroPad1d",)),
    (("ConstantPad2d", "_ConstantPadNd"), ("ZeroPad2d",)),
    (("ConstantPad3d", "_ConstantPadNd"), ("ZeroPad3d",)),
    (("_ReflectionPadNd",), ("ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d")),
    (("_ReplicationPadNd",), ("ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d")),
    (("_Loss",), ("MSELoss", "L1Loss", "BCEWithLogitsLoss", "SmoothL1Loss", "HuberLoss", "KLDivLoss")),
    (("_WeightedLoss", "_Loss"), ("CrossEntropyLoss", "NLLLoss", "BCELoss")),
)
BASES: dict[str, tuple[str, ...]] = {name: bases for bases, names in _BASE_GROUPS for name in names}


def isinstance_module(v: Value, classes: Value) -> Value | None:
    """`isinstance(m, C)` (C a class or a tuple of classes) for a torch.nn module the table builds, or a choice
    of them: its class is exactly known, so a torch class (`torch.nn.modules.loss._Loss`, `torch.fx.GraphModule`,
    by its name) is one of its bases or not, an in-repo class never is, `object` always is; None (not decided
    here) for anything else."""
    mods = alternatives(v)
    wanted = classes.items if isinstance(classes, Seq) and classes.kind == "tuple" else (classes,)
    if not mods or not all(isinstance(m, NNModV) for m in mods) or not wanted:
        return None
    hits: set[bool] = set()
    for m in mods:
        assert isinstance(m, NNModV)
        names = {m.name, *BASES.get(m.name, ()), "Module"}
        hit = False
        for c in wanted:
            if isinstance(c, Ext) and c.path == "builtins.object":
                hit = True
            elif isinstance(c, Ext) and c.path.startswith("torch.") and "<" not in c.path:
                hit = hit or c.path.rsplit(".", 1)[-1] in names
            elif not isinstance(c, ClassV):
                return None
        hits.add(hit)
    return Const(hits.pop()) if len(hits) == 1 else None


# Module methods that add, replace or remove children (a container's too), or may (`apply` runs any function on
# every submodule): the module they are called on no longer prints as the analysis knows it
ADD_MODULE = frozenset({"add_module", "register_module"})  # torch.nn.Module methods that register a child by name
MUTATORS = frozenset({"add_module", "register_module", "append", "extend", "insert", "update", "pop", "clear",
                      "__setitem__", "__delitem__", "__setattr__", "__delattr__", "apply", "load_state_dict"})
# Module methods that return the module itself, printing the same (training mode is not printed)
SAME_MODULE_METHODS = frozenset({"train", "eval", "requires_grad_", "share_memory"})


# torch.nn.Module as an external base of an in-repo class
TORCH_MODULE_CLASSES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})
# The public attributes of a torch.nn.Module (torch 2.13; checked by tests/tools/classify/test_nn_modules_table.py)
MODULE_PUBLIC_ATTRS = frozenset({
    "T_destination", "add_module", "apply", "bfloat16", "buffers", "call_super_init", "children", "compile", "cpu",
    "cuda", "double", "dump_patches", "eval", "extra_repr", "float", "forward", "get_buffer", "get_extra_state",
    "get_parameter", "get_submodule", "half", "ipu", "load_state_dict", "modules", "mtia", "named_buffers",
    "named_children", "named_modules", "named_parameters", "parameters", "register_backward_hook", "register_buffer",
    "register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook",
    "register_full_backward_pre_hook", "register_load_state_dict_post_hook", "register_load_state_dict_pre_hook",
    "register_module", "register_parameter", "register_state_dict_post_hook", "register_state_dict_pre_hook",
    "requires_grad_", "set_extra_state", "set_submodule", "share_memory", "state_dict", "to", "to_empty", "train",
    "training", "type", "xpu", "zero_grad"})
ABSENT = object()  # `hasattr(m, name)` is False
_WEIGHTED = frozenset({"Linear", "Bilinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
                       "ConvTranspose3d"})  # a weight, and a bias unless `bias=False`
_AFFINE = {**{f"{k}{n}d": "affine" for k in ("BatchNorm", "InstanceNorm") for n in (1, 2, 3)},
           "GroupNorm": "affine", "LayerNorm": "elementwise_affine"}  # weight and bias only when affine
_WEIGHT_BUFFER = frozenset({"CrossEntropyLoss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss"})  # `weight=` kept as is


def add_module_call(n: ast.AST) -> bool:
    """`x.add_module(name, module)` / `x.register_module(name, module)` on a plain name, two positional arguments:
    the form interp_calls models (the child set as an attribute when the name is known, the object no longer
    printed otherwise), so interp_classes does not count it as registering children it cannot see."""
    return isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ADD_MODULE \
        and isinstance(n.func.value, ast.Name) and len(n.args) == 2 and not n.keywords \
        and not any(isinstance(a, ast.Starred) for a in n.args)


def parameter(v: NNModV, name: str) -> object:
    """`m.weight` / `m.bias` of a torch.nn module the table builds, as torch 2.13 sets them in `__init__`: a
    parameter (values.NOT_NONE: its values are unknown, it is not None), None, the argument itself (a loss's
    `weight` buffer, an RNN's `bias` flag), ABSENT (no such attribute: `hasattr` is False), or None (not known
    here). tests/tools/classify/test_nn_modules_table.py checks every case against torch."""
    if name not in ("weight", "bias") or v.name not in TABLE and v.name not in CONTAINERS:
        return None
    args = dict(v.args)

    def flag(arg: str) -> bool | None:
        got = args.get(arg)
        return bool(got.value) if isinstance(got, Const) else None

    def param(*flags: str) -> Value | None:
        known = [flag(f) for f in flags]
        if any(k is False for k in known):
            return Const(None)
        return NOT_NONE if all(k is True for k in known) else None

    if v.name in _WEIGHTED:
        return NOT_NONE if name == "weight" else param("bias")
    if v.name in _AFFINE:
        return param(_AFFINE[v.name]) if name == "weight" else param(_AFFINE[v.name], "bias")
    if v.name in ("Embedding", "PReLU"):
        return NOT_NONE if name == "weight" else ABSENT
    if v.name in _WEIGHT_BUFFER:
        return args.get("weight") if name == "weight" else ABSENT
    if v.name in ("RNN", "LSTM", "GRU"):
        return args.get("bias") if name == "bias" else ABSENT
    return ABSENT


def is_module(v: Value) -> bool:
    """A module whose print the analysis knows: a torch.nn one it built, or a printable in-repo subclass."""
    return isinstance(v, NNModV) or isinstance(v, Inst) and v.nn is not None


def grown(v: NNModV, name: str, args: list[Value]) -> NNModV | None:
    """The container after `layers.append(m)`, `layers.extend([...])`, `layers.insert(i, m)`, `layers[i] = m`
    (ModuleList, Sequential), `heads.update({...})` or `heads[key] = m` (ModuleDict) with children the analysis knows:
    it holds them in order (and prints them); None for anything else."""
    held = module_children(v)
    if len(held) != 1:
        return None
    mods = held[0]
    if isinstance(mods, Seq) and v.name != "ModuleDict":
        items = list(mods.items)
        if name == "append" and len(args) == 1:
            items.append(args[0])
        elif name == "extend" and len(args) == 1 and isinstance(args[0], Seq) and args[0].kind != "set":
            items.extend(args[0].items)
        elif name == "insert" and len(args) == 2 and isinstance(args[0], Const) and type(args[0].value) is int:
            items.insert(args[0].value, args[1])
        elif name == "__setitem__" and len(args) == 2 and isinstance(args[0], Const) and type(
                args[0].value) is int and -len(items) <= args[0].value < len(items):
            items[args[0].value] = args[1]  # `layers[0] = Block()`: the child replaced in place
        else:
            return None
        return NNModV(v.name, (("modules", Seq(tuple(items), mods.kind)),))
    if isinstance(mods, DictV) and v.name == "ModuleDict":
        if name == "__setitem__" and len(args) == 2:
            added: tuple[tuple[Value, Value], ...] = ((args[0], args[1]),)
        elif name == "update" and len(args) == 1 and isinstance(args[0], DictV):
            added = args[0].items
        else:
            return None
        if not all(isinstance(k, Const) and isinstance(k.value, str) for k, _ in added):
            return None
        entries = dict(mods.items)
        entries.update(added)  # (a key set again keeps its place, as in a dict)
        return NNModV(v.name, (("modules", DictV(tuple(entries.items()))),))
    return None


def container_view(v: Value, method: str) -> Seq | None:
    """What `values()`, `keys()`, `items()` of a ModuleDict, or `children()` of any container, gives when the
    analysis knows its children (a list: iterating it, or indexing it, reads them); None for anything else."""
    held = module_children(v)
    if len(held) != 1 or not isinstance(v, NNModV):
        return None
    mods = held[0]
    if isinstance(mods, DictV) and method in ("values", "keys", "items"):
        return Seq(tuple(c if method == "values" else k if method == "keys" else Seq((k, c), "tuple")
                         for k, c in mods.items), "list")
    if method == "children":
        children = mods.items if isinstance(mods, Seq) else tuple(c for _, c in mods.items) if isinstance(
            mods, DictV) else None
        return Seq(tuple(children), "list") if children is not None else None
    return None


def unprintable(v: Value) -> Value:
    """The module `v` after something the analysis does not follow changed its children: an in-repo object keeps
    its attributes (no longer printed); a torch.nn module is a tensor-like value on its device, as before modules
    were modelled (its text is unknown)."""
    if isinstance(v, Inst):
        return Inst(v.cls, v.attrs)
    if isinstance(v, NNModV):
        return TensorV(v.device) if v.device is not None else UNRESOLVED
    return v


def constructed(path: str, args: list[Value], kwargs: dict[str, Value]) -> NNModV | None:
    """The module `path(*args, **kwargs)` builds (path a torch.nn class: `torch.nn.Conv2d`,
    `torch.nn.modules.conv.Conv2d`), its arguments bound to the parameters, defaults filled in; None for a class
    outside the table or arguments Python would refuse (too many, an unknown or repeated keyword)."""
    name = path.rsplit(".", 1)[-1]
    if not (path == f"torch.nn.{name}" or path.startswith("torch.nn.modules.")):
        return None
    if name in CONTAINERS:
        return _container(name, args, kwargs)
    spec = TABLE.get(name)
    if spec is None:
        return None
    if spec.params == VAR:
        return NNModV(name, ())
    params = (*spec.params, *spec.kwonly)
    if len(args) > len(spec.params) or any(k not in dict(params) for k in kwargs):
        return None
    bound: list[tuple[str, Value]] = []
    for i, (pname, default) in enumerate(params):
        if i < len(args):
            if pname in kwargs:
                return None
            bound.append((pname, args[i]))
        elif pname in kwargs:
            bound.append((pname, kwargs[pname]))
        elif default is REQUIRED:
            return None
        else:
            bound.append((pname, Const(default)))
    return NNModV(name, tuple(bound))


def _container(name: str, args: list[Value], kwargs: dict[str, Value]) -> NNModV | None:
    """Sequential(*modules), ModuleList(modules), ModuleDict(modules): the children, in order, as one argument
    (a sequence; a dict for ModuleDict)."""
    if name == "Sequential":
        if kwargs or len(args) == 1 and isinstance(args[0], DictV):
            return None  # (`Sequential(OrderedDict(...))` names its children; a plain dict is refused)
        return NNModV(name, (("modules", Seq(tuple(args), "tuple")),))
    got = args[0] if len(args) == 1 and not kwargs else kwargs.get("modules") if set(kwargs) == {"modules"} \
        and not args else Const(None) if not args and not kwargs else None
    if got is None:
        return None
    if isinstance(got, Const) and got.value is None:
        got = DictV(()) if name == "ModuleDict" else Seq(())
    return NNModV(name, (("modules", got),))


def module_repr(v: NNModV | Inst, shown: Callable[[Value], object]) -> str | None:
    """repr() (and str()) of the module as torch prints it; None when some argument it reads is not exactly
    known. `shown` prints torch constants inside arguments (values.literal_of)."""
    try:
        return _repr(v, shown)
    except (NotKnown, TypeError, ValueError, ZeroDivisionError):
        return None


def _inst_repr(v: Inst, shown: Callable[[Value], object]) -> str:
    """An in-repo torch.nn.Module subclass (values.Inst.nn): `Name()`, or its child modules, a line each, in the
    order they were set; NotKnown unless every attribute is known to be a module or not (Inst.nn)."""
    if v.nn is None or {k for k, _ in v.attrs} != set(v.nn):
        raise NotKnown
    attrs = dict(v.attrs)
    kinds = {k: module_kind(x) for k, x in attrs.items()}
    if None in kinds.values():
        raise NotKnown
    return _main_repr(v.cls.name, "", [(k, _repr(attrs[k], shown)) for k in v.nn if kinds[k]])


def _repr(v: Value, shown: Callable[[Value], object]) -> str:
    if isinstance(v, Inst):
        return _inst_repr(v, shown)
    if not isinstance(v, NNModV):
        raise NotKnown
    if v.name in CONTAINERS:
        children = _children(v)
        if v.name == "ModuleList" and children:
            return _list_repr(v.name, [_repr(c, shown) for _, c in children])
        return _main_repr(v.name, "", [(k, _repr(c, shown)) for k, c in children])
    bound = dict(v.args)

    def arg(name: str) -> object:
        got = literal_of(bound[name], shown)
        if got is NOT_LITERAL:
            raise NotKnown
        return got
    spec = TABLE[v.name]
    return _main_repr(v.name, spec.extra(arg), [])


def _children(v: NNModV) -> list[tuple[str, Value]]:
    """(name, module) of a container's children; NotKnown unless every child is a module the table prints."""
    got = v.args[0][1]
    if isinstance(got, DictV):
        pairs = [(k.value, c) if isinstance(k, Const) and isinstance(k.value, str) else (None, c) for k, c in got.items]
        pairs = list(dict(pairs).items())  # a later equal key replaces the child in place, as in a dict
    elif isinstance(got, Seq) and got.kind in ("list", "tuple"):
        pairs = [(str(i), c) for i, c in enumerate(got.items)]
    else:
        raise NotKnown
    if any(k is None or module_kind(c) is not True for k, c in pairs):
        raise NotKnown
    return pairs  # type: ignore[return-value]


def _addindent(s: str, spaces: int) -> str:
    """torch.nn.modules.module._addindent: indent every line after the first (blank lines stay empty)."""
    first, *rest = s.split("\n")
    if not rest:
        return s
    return "\n".join([first, *((" " * spaces + line) if line.strip() else "" for line in rest)])


def _main_repr(name: str, extra: str, children: list[tuple[str, str]]) -> str:
    """Module.__repr__: the extra_repr lines, then `(key): child` lines, on one line when there is one extra line
    and no child."""
    extra_lines = extra.split("\n") if extra else []
    lines = extra_lines + [f"({k}): " + _addindent(r, 2) for k, r in children]
    body = ""
    if lines:
        body = extra_lines[0] if len(extra_lines) == 1 and not children else "\n  " + "\n  ".join(lines) + "\n"
    return f"{name}({body})"


def _list_repr(name: str, reprs: list[str]) -> str:
    """ModuleList.__repr__: runs of equal children are one line, `(0-2): 3 x Linear(...)`."""
    blocks: list[tuple[int, int, str]] = []
    for i, r in enumerate(reprs):
        if blocks and blocks[-1][2] == r:
            blocks[-1] = (blocks[-1][0], i, r)
        else:
            blocks.append((i, i, r))
    lines = [_addindent(f"({s}): {r}" if s == e else f"({s}-{e}): {e - s + 1} x {r}", 2) for s, e, r in blocks]
    return f"{name}(\n  " + "\n  ".join(lines) + "\n)"


def moved(v: NNModV, device: str | None) -> NNModV:
    """The module after `.to(device)`/`.cuda()`/`.cpu()` (None: a device the analysis does not know): it prints
    the same; its device is what device analysis reads."""
    return NNModV(v.name, v.args, device)


# Modules whose output has the input's shape.
_SAME_SHAPE = frozenset({
    "ReLU", "ReLU6", "SELU", "SiLU", "Mish", "Hardsigmoid", "Hardswish", "Identity", "Sigmoid", "Tanh", "LogSigmoid",
    "Softsign", "Tanhshrink", "Softmax", "LogSoftmax", "Softmin", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d",
    "AlphaDropout", "FeatureAlphaDropout", "ELU", "CELU", "GELU", "LeakyReLU", "Softplus", "Hardtanh", "Hardshrink",
    "Softshrink", "Threshold", "PReLU", "RReLU", "LayerNorm", "GroupNorm", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d",
    "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"})


def output_shape(v: NNModV, shape: tuple[int, ...]) -> tuple[int, ...] | None:
    """The shape of `v(x)` for an input of `shape`, by torch's size formulas (docs of each layer) for the layers
    that size the next one in test models (convolutions, pooling, Flatten, Linear, activations, Sequential):
    `Linear(_get_output_dim(conv(x)), 5)` (backpack-for-pytorch) prints the size in its ids. None where the layer
    is outside these, an argument is unknown, or torch would refuse the input."""
    try:
        return _output_shape(v, shape)
    except NotKnown:
        return None


def _output_shape(v: NNModV, shape: tuple[int, ...]) -> tuple[int, ...] | None:
    if v.name == "Sequential":
        for _, child in _children(v):
            if not isinstance(child, NNModV):
                return None
            got = _output_shape(child, shape)
            if got is None:
                return None
            shape = got
        return shape
    if v.name in _SAME_SHAPE:
        return shape
    bound = dict(v.args)

    def arg(name: str) -> object:
        got = literal_of(bound[name]) if name in bound else NOT_LITERAL
        _check(got is not NOT_LITERAL)
        return got

    def ints(name: str, n: int) -> tuple[int, ...]:
        got = _ntuple(n)(arg(name))
        _check(len(got) == n and all(type(i) is int for i in got))
        return got  # type: ignore[return-value]

    name = v.name
    if name == "Linear":
        _check(bool(shape) and shape[-1] == arg("in_features") and type(arg("out_features")) is int)
        return (*shape[:-1], arg("out_features"))  # type: ignore[return-value]
    if name == "Flatten":
        start, end = arg("start_dim"), arg("end_dim")
        _check(type(start) is int and type(end) is int)
        start, end = start % len(shape) if shape else 0, end % len(shape) if shape else 0  # type: ignore[operator]
        _check(start <= end)
        size = 1
        for i in shape[start:end + 1]:
            size *= i
        return (*shape[:start], size, *shape[end + 1:])
    for kind in ("ConvTranspose", "Conv", "MaxPool", "AvgPool", "AdaptiveAvgPool", "AdaptiveMaxPool"):
        if name.startswith(kind) and name[len(kind):] in ("1d", "2d", "3d"):
            n = int(name[len(kind)])
            break
    else:
        return None
    _check(len(shape) in (n + 1, n + 2))
    batch, (channels, *spatial) = shape[:len(shape) - n - 1], shape[len(shape) - n - 1:]
    if kind.startswith("Adaptive"):
        size = _ntuple(n)(arg("output_size"))
        _check(len(size) == n and all(o is None or type(o) is int and o > 0 for o in size))
        return (*batch, channels, *(i if o is None else o for i, o in zip(spatial, size, strict=True)))
    kernel = ints("kernel_size", n)
    if kind in ("Conv", "ConvTranspose"):
        _check(channels == arg("in_channels") and type(arg("out_channels")) is int)
        channels = arg("out_channels")  # type: ignore[assignment]
        stride, dilation = ints("stride", n), ints("dilation", n)
        _check(all(i > 0 for i in (*kernel, *stride, *dilation)))
        if kind == "Conv" and arg("padding") == "same":
            return (*batch, channels, *spatial)
        padding = (0,) * n if kind == "Conv" and arg("padding") == "valid" else ints("padding", n)
        if kind == "ConvTranspose":
            extra = ints("output_padding", n)
            out = [(size - 1) * s - 2 * p + d * (k - 1) + e + 1
                   for size, s, p, d, k, e in zip(spatial, stride, padding, dilation, kernel, extra, strict=True)]
        else:
            out = [(size + 2 * p - d * (k - 1) - 1) // s + 1
                   for size, s, p, d, k in zip(spatial, stride, padding, dilation, kernel, strict=True)]
    else:
        stride = kernel if arg("stride") is None else ints("stride", n)
        padding = ints("padding", n)
        dilation = ints("dilation", n) if kind == "MaxPool" else (1,) * n
        ceil = arg("ceil_mode")
        _check(type(ceil) is bool)
        out = []
        for size, s, p, d, k in zip(spatial, stride, padding, dilation, kernel, strict=True):
            _check(s > 0 and 2 * p <= k)
            span = size + 2 * p - d * (k - 1) - 1
            o = (-(-span // s) if ceil else span // s) + 1
            if ceil and (o - 1) * s >= size + p:
                o -= 1  # (the last window must start inside the input or its left padding)
            out.append(o)
    _check(all(o > 0 for o in out))
    return (*batch, channels, *out)  # type: ignore[return-value]
