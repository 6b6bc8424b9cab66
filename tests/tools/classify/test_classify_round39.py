"""Round 39: ids of objects made by class factories and metaclasses (funsor's operators and domains), of case
objects a module-level loop registers, and of long parameter tables (corpus tests/round39/test_factory_ids.py and
mypkg/op_factory.py, run with pytest on CPU-only torch first; labels in fixtures/expected.json)."""

from __future__ import annotations

import ast

import pytest

from tools.classify.devices import isinstance_of, spelled
from tools.classify.guards import cuda_guard
from tools.classify.interp_external import REGEX_PREFIX, regex_sub
from tools.classify.interp_statements import _calls_for_effect, _fills_table
from tools.classify.values import SLICE, UNRESOLVED, Const, DictV, Ext, Seq

FILE = "tests/round39/test_factory_ids.py"


def test_ids_match_pytest_collect_only(ids_vs_pytest) -> None:
    got = ids_vs_pytest(FILE)
    assert len(got.collected) == 293, got.output
    assert not got.function_only and not got.not_collected
    # operators made by `metaclass(name, bases, namespace)()` are named by their class's `name`, through a
    # `__name__` property (pytest's own id) or an in-repo `__str__` (`ids=str`); before: `sum_op0`, a guess
    assert {f"{FILE}::test_ops_by_name[add-mul]", f"{FILE}::test_ops_by_name[logaddexp-add]",
            f"{FILE}::test_ops_printed[sample-mul]", f"{FILE}::test_domains[Bint[2]-Bint[3]]"} <= set(got.tests)
    # a module's list registered into by a call, then appended to at the top level: each entry once (was: the
    # call's entry twice, ids `first0`/`first1` pytest never makes)
    assert {k for k in got.tests if "test_registry_extended_at_top_level" in k} == {
        f"{FILE}::test_registry_extended_at_top_level[first]", f"{FILE}::test_registry_extended_at_top_level[second]"}
    assert sum(1 for k in got.tests if "::test_scatter_table[" in k) == 272
    # `ids=lambda d: ",".join(d.keys())` of an empty OrderedDict: "" (an empty dict pytest hands an ids callable
    # is settled; was: unknown, and every case of the test a function-level key)
    assert f"{FILE}::test_ids_of_dicts[]" in got.tests and f"{FILE}::test_ids_of_dicts[a,b]" in got.tests


def test_a_decorated_operator_still_runs_its_own_code(ids_vs_pytest) -> None:
    # the name holds the object `@BinaryOp.make` made (its ids, attributes and methods), and calling it still runs
    # the function under the decorator: its `.cuda()` is a GPU need
    tests = ids_vs_pytest(FILE).tests
    for name in ("add", "to_cuda_add"):
        verdict = tests[f"{FILE}::test_decorated_op_still_runs_its_function[{name}]"]
        assert (verdict.label, verdict.gpu_count) == ("gpu", 1), verdict.reasons
    assert all(v.label == "cpu" for k, v in tests.items() if "test_decorated_op" not in k)


@pytest.mark.parametrize(("src", "expected"), [
    ("for x in xs:\n    Case(x)\n", True),
    ("for x in xs:\n    if x:\n        register(x)\n", True),
    ("for x in xs:\n    y = f(x)\n", False),  # a value kept, not a call for its effect
    ("for x in xs:\n    Case(x)\n    break\n", False),
    ("for x in xs:\n    def g():\n        h()\n", False),  # the call is the nested function's
])
def test_which_top_level_loops_call_for_effect(src: str, expected: bool) -> None:
    loop = ast.parse(src).body[0]
    assert isinstance(loop, ast.For)
    assert _calls_for_effect(loop) is expected


@pytest.mark.parametrize(("src", "expected"), [
    ("for i, j in pairs:\n    out.append((src, i, j))\n", True),
    ("for i in xs:\n    out.append(f'{i}-x')\n", True),
    ("for i in xs:\n    out.append(make(i))\n", False),  # a call per element: not cheap whatever the count
    ("for i in xs:\n    out.append(i)\n    n += 1\n", False),
    ("for i in xs:\n    self.out.append(i)\n", False),
])
def test_which_loops_only_fill_a_table(src: str, expected: bool) -> None:
    loop = ast.parse(src).body[0]
    assert isinstance(loop, ast.For)
    assert _fills_table(loop) is expected


def test_re_sub_is_computed_within_bounds() -> None:
    assert regex_sub(Const(r"\s+"), Const(" "), Const("  a \n  b ")) == Const(" a b ")
    assert regex_sub(Ext(REGEX_PREFIX + r"\d"), Const("#"), Const("a1b22")) == Const("a#b##")
    long_text = "x " * 600  # over regex_match's bound, within the one for a pattern of one quantifier
    assert regex_sub(Const(r"\s+"), Const(" "), Const(long_text)) == Const(long_text)
    assert regex_sub(Const(r"\s+x+"), Const(" "), Const(long_text)) is UNRESOLVED  # two quantifiers: bounded
    assert regex_sub(Const(r"(a+)+"), Const(""), Const("aaa")) is UNRESOLVED  # may backtrack without bound
    assert regex_sub(Const(r"\s"), UNRESOLVED, Const("a b")) is UNRESOLVED  # a replacement function is not run


def test_isinstance_of_a_standard_dict_subclass() -> None:
    ordered = (Ext("builtins.dict"), Ext("collections.OrderedDict"))
    assert isinstance_of(Seq((), "tuple"), Seq(ordered, "tuple")) == Const(False)
    assert isinstance_of(DictV(()), Seq(ordered, "tuple")) == Const(True)  # one match decides
    # a dict the analysis holds may have been made by OrderedDict: not decided
    assert isinstance_of(DictV(()), Ext("collections.OrderedDict")) is UNRESOLVED
    assert isinstance_of(Const("a"), Ext("collections.OrderedDict")) == Const(False)


@pytest.mark.parametrize(("src", "guard"), [
    ("value.device == torch.device('cuda')", True),
    ("x.device == torch.device('cuda:1')", True),
    ("x.device == torch.device('cpu')", None),
    ("cfg == torch.device('cuda')", None),  # not the device of a value
])
def test_a_device_compared_with_cuda_is_a_guard(src: str, guard: bool | None) -> None:
    test = ast.parse(src, mode="eval").body
    assert cuda_guard(test) is guard


@pytest.mark.parametrize(("name", "label"), [
    ("test_known_cpu_values", "cpu"), ("test_values_the_analysis_cannot_see", "cpu"),
    ("test_is_cuda_flag_in_a_name", "cpu"), ("test_a_cuda_value_given", "gpu"),
    # `(data.device.type == "cuda" and torch.version.cuda) and torch.cuda.get_device_capability(...)`: without a
    # CUDA build the parenthesised `and` is false whatever the flag is, so the capability is never asked
    # (optimum-quanto's QBytesTensor.create: 53 CPU tests `gpu` when the flag kept the `and` undecided)
    ("test_a_flag_and_a_build_without_cuda", "cpu")])
def test_existing_cuda_flags(ids_vs_pytest, name: str, label: str) -> None:
    # botorch's get_device_of_sequence: `any(hasattr(v, "device") and v.device == torch.device("cuda") for v in
    # values)` picks `torch.device("cuda") if any_cuda else torch.device("cpu")`: was a GPU need for every caller
    # whatever the values (botorch's community tests: 2 CPU tests `gpu`)
    tests = ids_vs_pytest("tests/round39/test_existing_cuda_flags.py").tests
    verdict = tests[f"tests/round39/test_existing_cuda_flags.py::{name}"]
    assert verdict.label == label, verdict.reasons


def test_a_slice_prints_as_python_prints_it() -> None:
    # `desugar_getitem[1::2]` with `ids=str` (funsor's getitem tests): `slice(1, None, 2)`, in a tuple too
    cut = Seq((Const(1), Const(None), Const(2)), SLICE)
    assert spelled(cut) == "slice(1, None, 2)"
    assert spelled(Seq((cut, Const(None)), "tuple")) == "(slice(1, None, 2), None)"
    assert spelled(Seq((UNRESOLVED, Const(None), Const(None)), SLICE)) is None


def _chain(prefix: str, depth: int, last: str) -> str:
    """Functions prefix0 -> prefix1 -> ... calling each other `depth` deep, the last one running `last`."""
    return "".join(f"def {prefix}{i}(x):\n    return {prefix}{i + 1}(x)\n\n" for i in range(depth)) + \
        f"def {prefix}{depth}(x):\n    return {last}\n"


def test_where_a_torch_free_library_is_too_deep_to_follow_decides_nothing(tmp_path, monkeypatch) -> None:
    # a tokenizer's `re.findall` of the installed `regex` package: its parser, read as code, nests past the call
    # depth (open_clip: 8 CPU tests `unknown` once `len()` of a string was known). A library that never names torch
    # cannot reach a device but through code of the repository it is handed: that case stays `unknown`
    from tools.classify.runner import run

    site = tmp_path / "site" / "deeplib"
    site.mkdir(parents=True)
    (site / "__init__.py").write_text(_chain("parse", 30, "len(x)") + "\n" + _chain("visit", 30, "x()"))
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "test_mine.py").write_text(
        "import torch\nimport deeplib\n\n\n"
        "def test_tokens():\n    assert deeplib.parse0('abc') == 3\n\n\n"
        "def test_callback():\n    deeplib.visit0(lambda: torch.zeros(1, device='cuda'))\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    tests = run(repo, paths=["test_mine.py"], cache_dir=None, workers=1).files["test_mine.py"].tests
    assert tests["test_tokens"].label == "cpu", tests["test_tokens"].reasons
    assert tests["test_callback"].label == "unknown", tests["test_callback"].reasons
    assert any("deeper than" in r for r in tests["test_callback"].reasons)
