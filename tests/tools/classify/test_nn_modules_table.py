"""The torch.nn printing table (tools/classify/nn_modules.py) against the installed torch: every entry's parameters
are torch's, and every module below prints as torch prints it, or is refused when torch refuses it. This test
imports torch; the classifier never does."""

from __future__ import annotations

import ast
import inspect
import warnings

import pytest

from tools.classify.devices import shown_constant, spelled
from tools.classify.nn_modules import (
    ABSENT,
    BASES,
    CONTAINERS,
    MODULE_PUBLIC_ATTRS,
    REQUIRED,
    SAME_MODULE_METHODS,
    TABLE,
    VAR,
    constructed,
    isinstance_module,
    module_repr,
    parameter,
)
from tools.classify.values import NOT_NONE, UNRESOLVED, Const, DictV, Ext, NNModV, Seq, Value

torch = pytest.importorskip("torch")
nn = torch.nn

# Built with torch and with the table; each table entry appears at least once (test_every_entry_has_a_case)
CASES = [
    "Linear(10, 5)", "Linear(in_features=3, out_features=2, bias=False)", "Linear(2, 3, 0)",
    "Bilinear(2, 3, 4)", "Bilinear(2, 3, 4, bias=False)",
    "Identity()", "Identity(54, unused_argument1=0.1, unused_argument2=False)",
    "Conv1d(3, 9, 2)", "Conv1d(3, 9, kernel_size=2, stride=2, padding=1, dilation=2, groups=3, bias=False, "
    "padding_mode='circular')", "Conv1d(2, 4, 3, padding='same')", "Conv1d(2, 4, 3, padding='valid')",
    "Conv2d(3, 2, 2)", "Conv2d(3, 2, (2, 3), stride=[1, 2], padding=(0, 1))", "Conv2d(2, 3, 2, padding_mode='reflect')",
    "Conv3d(2, 4, kernel_size=2, groups=2)", "Conv3d(3, 2, 2, stride=4, padding=2, bias=False)",
    "ConvTranspose1d(2, 3, 2)", "ConvTranspose1d(2, 4, 3, 2, 1, 1, 2, False, 1)",
    "ConvTranspose2d(3, 2, 2, output_padding=0, dilation=2)",
    "ConvTranspose2d(3, 2, (2, 3), stride=2, output_padding=1)", "ConvTranspose2d(4, 4, 2, padding='same')",
    "ConvTranspose3d(2, 3, 2, padding=(1, 0, 1))", "ConvTranspose3d(2, 4, 2, groups=2, bias=False)",
    "BatchNorm1d(7)", "BatchNorm1d(7, eps=0.001, momentum=None, affine=False)",
    "BatchNorm2d(3, track_running_stats=False)", "BatchNorm3d(3, 1e-3, 0.2, True, True, bias=False)",
    "InstanceNorm1d(4)", "InstanceNorm2d(4, affine=True)", "InstanceNorm3d(4, affine=True, bias=False)",
    "LayerNorm(5)", "LayerNorm([4, 5], eps=1e-6, elementwise_affine=False)", "LayerNorm((3,), bias=False)",
    "GroupNorm(2, 4)", "GroupNorm(1, 3, affine=False)", "GroupNorm(2, 6, bias=False)",
    "MaxPool1d(2)", "MaxPool1d(3, stride=2, padding=1, dilation=2, ceil_mode=True)", "MaxPool2d(2)",
    "MaxPool2d((2, 3), stride=(1, 1))", "MaxPool3d(2, 1)", "MaxPool3d(kernel_size=3, return_indices=True)",
    "AvgPool1d(2)", "AvgPool1d(3, 2, 1, True, False)", "AvgPool2d(2)", "AvgPool2d((2, 3), stride=1, padding=(1, 1))",
    "AvgPool3d(2)", "AvgPool3d(3, 2, divisor_override=2)",
    "AdaptiveAvgPool1d(3)", "AdaptiveAvgPool2d((2, None))", "AdaptiveAvgPool3d((None, 2, None))",
    "AdaptiveMaxPool1d(3)", "AdaptiveMaxPool2d(2, return_indices=True)", "AdaptiveMaxPool3d((1, 2, 3))",
    "Dropout()", "Dropout(0.2)", "Dropout(p=0, inplace=True)", "Dropout1d(0.3)", "Dropout2d()", "Dropout3d(1)",
    "AlphaDropout(0.1)", "FeatureAlphaDropout()",
    "Embedding(10, 3)", "Embedding(10, 3, padding_idx=-1, max_norm=1.0, norm_type=1.0, scale_grad_by_freq=True, "
    "sparse=True)", "Embedding(5, 2, 0)",
    "ReLU()", "ReLU(inplace=True)", "ReLU6()", "ReLU6(True)", "ELU()", "ELU(alpha=0.5, inplace=True)", "CELU(2.0)",
    "SELU()", "SELU(inplace=True)", "GELU()", "GELU(approximate='tanh')", "SiLU()", "Mish(True)", "Sigmoid()",
    "Tanh()", "LeakyReLU()", "LeakyReLU(negative_slope=0.1)", "LeakyReLU(0.2, True)", "LogSigmoid()",
    "Softmax()", "Softmax(dim=1)", "LogSoftmax(dim=-1)", "Softmin(0)", "Softplus()", "Softplus(beta=2, threshold=10)",
    "Softsign()", "Hardtanh()", "Hardtanh(-2, 2)", "Hardtanh(min_value=-3.0)", "Hardsigmoid()", "Hardswish(True)",
    "Tanhshrink()", "Hardshrink()", "Hardshrink(0.3)", "Softshrink(lambd=1)", "Threshold(0.1, 20)",
    "Threshold(0.1, 20.0, True)", "PReLU()", "PReLU(3, 0.1)", "GLU()", "GLU(1)", "RReLU()", "RReLU(0.1, 0.3, True)",
    "Flatten()", "Flatten(0, 2)", "Unflatten(1, (2, 5))", "Unflatten(-1, [3, 4])",
    "ZeroPad1d(2)", "ZeroPad1d((1, 2))", "ZeroPad2d(1)", "ZeroPad2d((1, 0, 2, 3))", "ZeroPad3d(1)",
    "ZeroPad2d((1, 2))", "ConstantPad1d((1, 2, 3), 0)",
    "ConstantPad1d(2, 3.5)", "ConstantPad2d((1, 2, 3, 4), 0)", "ConstantPad3d(1, -1.0)",
    "ReflectionPad1d(2)", "ReflectionPad2d((1, 1, 2, 0))", "ReflectionPad3d(1)",
    "ReplicationPad1d((3, 1))", "ReplicationPad2d(2)", "ReplicationPad3d((1, 2, 3, 4, 5, 6))",
    "MSELoss()", "MSELoss(reduction='sum')", "L1Loss()", "CrossEntropyLoss()", "CrossEntropyLoss(label_smoothing=0.1)",
    "NLLLoss(ignore_index=0)", "BCELoss()", "BCEWithLogitsLoss(reduction='none')", "SmoothL1Loss(beta=0.5)",
    "HuberLoss(delta=2.0)", "KLDivLoss(reduction='batchmean', log_target=True)",
    "PixelShuffle(2)",
    "RNN(3, 4)", "RNN(3, 4, 2, 'relu', False, True, 0.5, True)",
    "RNN(input_size=2, hidden_size=3, nonlinearity='relu')",
    "LSTM(3, 4)", "LSTM(3, 4, num_layers=2, dropout=0, bidirectional=True, proj_size=2)", "LSTM(3, 4, 1, True, True)",
    "GRU(3, 4)", "GRU(3, 4, batch_first=True, dropout=1)",
    "Sequential()", "Sequential(Linear(10, 5))", "Sequential(Linear(10, 7), ReLU(), Linear(7, 5))",
    "Sequential(Conv3d(3, 2, kernel_size=2, stride=4, padding=2, bias=False), ReLU(), Flatten(), Linear(36, 5))",
    "Sequential(Sequential(Linear(2, 2), Sigmoid()), Sequential(), Tanh())",
    "ModuleList()", "ModuleList([Linear(2, 2), Linear(2, 2), Linear(2, 2), ReLU(), Linear(2, 2)])",
    "ModuleList(modules=(Sequential(Linear(2, 3), ReLU()), Sequential(Linear(2, 3), ReLU())))",
    "ModuleDict()", "ModuleDict({'a': Linear(2, 3), 'b': Sequential(ReLU(), Tanh()), 'a': Sigmoid()})",
]

# torch refuses these (or, for the last ones, the table cannot know the argument): the table must not print them
REFUSED = [
    "Linear(2)", "Linear(2, 3, True, None, None, 4)", "Linear(2, 3, bias_=True)", "Conv2d(3, 4, 2, groups=2)",
    "Conv2d(4, 4, 2, padding='same', stride=2)", "Conv2d(4, 4, 2, padding='full')", "Conv2d(4, 4, 2, padding_mode='x')",
    "Conv2d(4, 4, 2, groups=0)", "Dropout(1.5)", "Dropout(-0.1)",
    "Embedding(5, 2, padding_idx=5)", "Hardtanh(1, -1)", "GroupNorm(2, 3)", "RNN(3, 4, nonlinearity='gelu')",
    "GRU(3, 4, dropout=2)", "Sequential(Linear(2, 2), 3)", "Sigmoid(3)", "Tanh(a=1)",
    "Embedding(5, 2, _weight=UNKNOWN)", "Linear(UNKNOWN, 3)", "Sequential(Linear(2, 2), UNKNOWN)",
    "ModuleList(UNKNOWN)", "Sequential({'a': Linear(2, 2)})", "Upsample(2)",
]


def _value(e: ast.expr) -> Value:
    """The abstract value of a constructor argument written in CASES: constants, tuples, lists, dicts, nested
    module constructions, and UNKNOWN (a value the analysis does not know)."""
    if isinstance(e, ast.Call):
        got = _construct(e)
        return got if got is not None else UNRESOLVED
    if isinstance(e, ast.Name) and e.id == "UNKNOWN":
        return UNRESOLVED
    if isinstance(e, (ast.Tuple, ast.List)):
        return Seq(tuple(_value(i) for i in e.elts), "tuple" if isinstance(e, ast.Tuple) else "list")
    if isinstance(e, ast.Dict):
        return DictV(tuple((_value(k), _value(v)) for k, v in zip(e.keys, e.values, strict=True)))  # type: ignore[arg-type]
    return Const(ast.literal_eval(e))


def _construct(call: ast.Call) -> Value | None:
    assert isinstance(call.func, ast.Name)
    return constructed(f"torch.nn.{call.func.id}", [_value(a) for a in call.args],
                       {k.arg: _value(k.value) for k in call.keywords if k.arg is not None})


def _table_repr(src: str) -> str | None:
    got = _construct(ast.parse(src, mode="eval").body)  # type: ignore[arg-type]
    return None if got is None else module_repr(got, shown_constant)


def _torch_repr(src: str) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return repr(eval(src, {name: getattr(nn, name) for name in dir(nn)}))


@pytest.mark.parametrize("src", CASES)
def test_module_prints_as_torch_prints_it(src: str) -> None:
    assert _table_repr(src) == _torch_repr(src)


@pytest.mark.parametrize("src", REFUSED)
def test_refused_or_unknown_arguments_print_nothing(src: str) -> None:
    if "UNKNOWN" not in src and "Upsample" not in src:
        with pytest.raises((TypeError, ValueError, AssertionError)):
            _torch_repr(src)
    assert _table_repr(src) is None


def test_every_entry_has_a_case() -> None:
    used = {ast.parse(src, mode="eval").body.func.id for src in CASES}  # type: ignore[attr-defined]
    assert set(TABLE) | {"Sequential", "ModuleList", "ModuleDict"} <= used


@pytest.mark.parametrize("name", sorted(n for n in TABLE if n not in ("RNN", "LSTM", "GRU")))
def test_parameters_are_torchs(name: str) -> None:
    """Names, order, defaults and keyword-only parameters as in torch's `__init__` (`device`/`dtype` left out:
    a module built on a device is a device use). RNN/LSTM/GRU take `*args, **kwargs` and are checked by CASES."""
    spec = TABLE[name]
    params = [p for p in inspect.signature(getattr(nn, name).__init__).parameters.values()
              if p.name not in ("self", "device", "dtype")]
    if [p.kind for p in params] == [inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD]:
        # `*args, **kwargs`: Identity ignores them, the others pass them to Module.__init__, which refuses any
        if spec.params == VAR:
            assert repr(getattr(nn, name)(1, x=2)) == f"{name}()"
        else:
            assert spec.params == () and not spec.kwonly
            with pytest.raises(TypeError):
                getattr(nn, name)(1)
        return

    def default(p: inspect.Parameter) -> object:
        return REQUIRED if p.default is inspect.Parameter.empty else p.default
    assert [(p.name, default(p)) for p in params if p.kind != p.KEYWORD_ONLY] == list(spec.params)
    assert [(p.name, default(p)) for p in params if p.kind == p.KEYWORD_ONLY] == list(spec.kwonly)


def test_printed_in_ids_as_str_repr_format_and_fstrings() -> None:
    """A module inside a tuple prints by repr, alone by str (the same text); a format spec is refused as torch
    refuses it."""
    conv = _construct(ast.parse("Conv1d(3, 9, 2)", mode="eval").body)  # type: ignore[arg-type]
    assert conv is not None
    text = _torch_repr("Conv1d(3, 9, 2)")
    assert spelled(conv) == text and spelled(conv, "r") == text and spelled(conv, "", "") == text
    assert spelled(Seq((conv, Const(1)), "tuple"), "s") == repr((nn.Conv1d(3, 9, 2), 1))
    assert spelled(conv, "", ">5") is None


def _torch_module(src: str) -> object:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return eval(src, {name: getattr(nn, name) for name in dir(nn)})


@pytest.mark.parametrize("src", CASES)
def test_weight_and_bias_are_torchs(src: str) -> None:
    """Round 12: `hasattr(m, "weight")`, `m.weight is None` (and `bias`) of every module the table builds, as torch
    sets them (a parameter, None, the argument itself, or no such attribute)."""
    got = _construct(ast.parse(src, mode="eval").body)  # type: ignore[arg-type]
    assert isinstance(got, NNModV)
    module = _torch_module(src)
    for name in ("weight", "bias"):
        table = parameter(got, name)
        assert table is not None, (src, name)
        assert (table is not ABSENT) == hasattr(module, name), (src, name)
        if table is ABSENT:
            continue
        real = getattr(module, name)
        if table is NOT_NONE:
            assert isinstance(real, torch.Tensor), (src, name)
        else:
            assert isinstance(table, Const) and table.value == real, (src, name)


def test_bases_are_torchs() -> None:
    """Round 12: the torch.nn classes between each table class and Module (isinstance(m, _Loss), `_ConvNd`...)."""
    for name in [*TABLE, *CONTAINERS]:
        mro = [c.__name__ for c in getattr(nn, name).__mro__[1:] if c.__name__ not in ("Module", "object")]
        assert BASES.get(name, ()) == tuple(mro), name


@pytest.mark.parametrize(("src", "cls"), [
    ("MSELoss()", "modules.loss._Loss"), ("CrossEntropyLoss()", "modules.loss._WeightedLoss"),
    ("Linear(2, 3)", "modules.loss._Loss"), ("ZeroPad2d(1)", "ConstantPad2d"), ("Conv2d(2, 3, 1)", "Module"),
    ("Sequential()", "Sequential"), ("ReLU()", "Linear"), ("ConvTranspose1d(2, 3, 1)", "modules.conv._ConvNd"),
])
def test_isinstance_of_torch_classes(src: str, cls: str) -> None:
    got = _construct(ast.parse(src, mode="eval").body)  # type: ignore[arg-type]
    real = isinstance(_torch_module(src), eval(f"nn.{cls}"))
    assert isinstance_module(got, Ext(f"torch.nn.{cls}")) == Const(real)  # type: ignore[arg-type]
    assert isinstance_module(got, Seq((Ext("torch.fx.GraphModule"), Ext(f"torch.nn.{cls}")), "tuple")) == Const(real)  # type: ignore[arg-type]


def test_module_public_attributes_are_torchs() -> None:
    assert {n for n in dir(nn.Module()) if not n.startswith("_")} == MODULE_PUBLIC_ATTRS


def test_methods_kept_as_the_same_module_return_it() -> None:
    """Round 12: `m.train(False)`, `m.eval()`... are the module itself (it prints the same)."""
    module = nn.Linear(2, 2)
    assert all(getattr(module, name)() is module for name in SAME_MODULE_METHODS)
