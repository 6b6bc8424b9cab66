"""Round 38: a device request canonicalised by loops that fold constants into it, string methods of a choice of
constants and regular expressions on it, `model.device` of library model classes, and the methods Python or torch
calls for a builtin, a comparison, a construction, a copy or a hook (corpus tests/round38/test_folds.py and
test_dunders.py, run with pytest on CPU-only torch first; labels in fixtures/expected.json)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tools.classify import datafiles
from tools.classify.analyzer import Analyzer
from tools.classify.interp_external import _sorted, memory_bound_gib, regex_match
from tools.classify.interp_statements import _folds_names
from tools.classify.modules import walk_python_files
from tools.classify.values import UNRESOLVED, Const, DictV, KnownTruth, Seq

ROOT = Path(__file__).resolve().parent / "fixtures" / "repo"


@pytest.fixture(scope="module")
def folds() -> dict[str, object]:
    return Analyzer(ROOT, walk_python_files(ROOT, [])).classify_file("tests/round38/test_folds.py").tests


@pytest.mark.parametrize("name", ["test_default_device_is_cpu", "test_none_string_is_cpu", "test_cpu_request"])
def test_a_device_request_canonicalised_by_a_loop_is_decided(folds, name: str) -> None:
    # `for remove in "cuda:", "none", " ": device = device.replace(remove, "")` then `if device and device != "cpu":
    # raise unless CUDA`: each constant in turn decides the request (one joined constant left it unknown, and the
    # raise a GPU need: a false GPU, ultralytics' select_device); so does `str(device).startswith(("gpu", ...))`, a
    # tuple of prefixes (was: unknown, and `device = 0` a CUDA request on every path)
    assert folds[name].label == "cpu", folds[name].reasons


@pytest.mark.parametrize("name", ["test_cuda_request_raises_without_gpu", "test_index_request_raises_without_gpu"])
def test_a_cuda_request_still_raises_without_cuda(folds, name: str) -> None:
    verdict = folds[name]
    assert (verdict.label, verdict.gpu_count) == ("gpu", 1)
    assert any("raises unless on CUDA" in r for r in verdict.reasons), verdict.reasons


@pytest.mark.parametrize(("src", "folds_names"), [
    ("for r in 'a', 'b':\n    s = s.replace(r, '')\n", True),
    ("for w in (1, 2):\n    total += w\n", True),
    ("for r in 'a', 'b':\n    if r == s:\n        continue\n    s = s + r\n", True),
    ("for r in 'a', 'b':\n    t = r.upper()\n", False),  # nothing carried from one element to the next
    ("for r in 'a', 'b':\n    if r:\n        s = s + r\n", False),  # a block: not a short fold
    ("for r in 'a', 'b':\n    s = s + r\n    s = s + r\n    s = s + r\n    s = s + r\n", False),  # too long
    ("for r in 'a', 'b':\n    s = (lambda: s + r)()\n", False),
])
def test_which_loops_are_folds(src: str, folds_names: bool) -> None:
    loop = ast.parse(src).body[0]
    assert isinstance(loop, ast.For)
    assert _folds_names(loop) is folds_names


def test_a_string_method_of_a_choice_of_constants_is_decided(tmp_path: Path) -> None:
    # deeper than a test's own loops, `for backend in ("npu", "xpu"): if device.startswith(backend): return ...` runs
    # once with the backends joined: `"".startswith(<npu or xpu>)` is False for each, so decided
    (tmp_path / "test_pick.py").write_text(
        "import torch\n\n\ndef pick(device):\n    for backend in ('npu', 'xpu'):\n"
        "        if device.startswith(backend):\n            return torch.device('cuda')\n"
        "    return torch.device('cpu')\n\n\ndef outer(device):\n    return middle(device)\n\n\n"
        "def middle(device):\n    return pick(device)\n\n\n"
        "def test_pick_cpu():\n    torch.zeros(1, device=outer(''))\n\n\n"
        "def test_pick_npu():\n    torch.zeros(1, device=outer('npu:0'))\n")
    tests = Analyzer(tmp_path, walk_python_files(tmp_path, [])).classify_file("test_pick.py").tests
    assert tests["test_pick_cpu"].label == "cpu", tests["test_pick_cpu"].reasons
    assert tests["test_pick_npu"].label == "gpu"


def test_a_regex_of_a_known_device_string_is_decided(folds) -> None:
    # `ACCELERATOR.match(str(device))`, `re.fullmatch(r"\d+", str(device))` (was: unknown, a false GPU for "cpu")
    assert folds["test_regex_cpu_request"].label == "cpu"
    assert folds["test_regex_cuda_request"].label == "gpu"
    assert folds["test_regex_index_request"].label == "gpu"


@pytest.mark.parametrize(("pattern", "text", "got"), [
    (r"cuda(:\d+)?$", "cuda:0", KnownTruth(True)),
    (r"cuda(:\d+)?$", "cpu", Const(None)),
    (r"(a+)+$", "a" * 40 + "b", UNRESOLVED),  # may backtrack without bound: not run
    (r"(\w+)*x", "cpu", UNRESOLVED),
    (r"((a+))+$", "a" * 40 + "b", UNRESOLVED),  # nested
    (r"(a|aa)*$", "a" * 40 + "b", UNRESOLVED),  # alternatives that overlap
    (r"^(cpu|cuda)(:[0-9]+)?$", "cuda:1", KnownTruth(True)),  # a group under `?` is not repeated: run
    (r"(a)\1", "aa", UNRESOLVED),
    (r"[", "cpu", UNRESOLVED),  # not a pattern
    (r"cpu", "c" * 300, UNRESOLVED),  # too long to run
])
def test_regex_matching_runs_only_safe_patterns(pattern: str, text: str, got: object) -> None:
    assert regex_match("match", Const(pattern), Const(text)) == got


@pytest.fixture(scope="module")
def dunders() -> dict[str, object]:
    return Analyzer(ROOT, walk_python_files(ROOT, [])).classify_file("tests/round38/test_dunders.py").tests


@pytest.mark.parametrize(("name", "method"), [
    ("test_len_on_gpu", "__len__()"),  # `len(obj)`
    ("test_contains_on_gpu", "__contains__()"),  # `x in obj`
    ("test_eq_on_gpu", "__eq__()"),  # `a == b`
    ("test_reflected_lt_on_gpu", "__lt__()"),  # `a > b` where only b's class defines the comparison
    ("test_new_allocates[cuda]", "__new__()"),  # `Cls(...)` runs `__new__` before `__init__`
    ("test_deepcopy_on_gpu", "__deepcopy__()"),  # `copy.deepcopy(obj)`
    ("test_repr_on_gpu", "__repr__()"),  # `repr(obj)`
    ("test_forward_hook_on_gpu", "move_output()"),  # `layer.register_forward_hook(hook)` then `layer(x)`
    ("test_truth_on_gpu", "__bool__()"),  # `assert obj`, `if obj:`
])
def test_methods_python_or_torch_call_are_followed(dunders, name: str, method: str) -> None:
    # each was never run: a false CPU (pytest fails each for want of CUDA)
    verdict = dunders[name]
    assert (verdict.label, verdict.gpu_count) == ("gpu", 1)
    assert any(method in r for r in verdict.reasons), verdict.reasons


@pytest.mark.parametrize("name", ["test_len_on_cpu", "test_not_in_on_cpu", "test_comparisons_on_cpu",
                                  "test_new_allocates[cpu]", "test_repr_and_copy_on_cpu",
                                  "test_forward_hook_on_cpu", "test_truth_on_cpu"])
def test_methods_python_or_torch_call_on_cpu_stay_cpu(dunders, name: str) -> None:
    assert dunders[name].label == "cpu", dunders[name].reasons


def test_tuples_sorted_by_their_known_leading_elements_give_exact_ids() -> None:
    # `sorted([(task, WEIGHTS / TASK2MODEL[task]) for task in TASKS])` with WEIGHTS from the user's settings: the
    # tasks order every pair, so the cases and their ids are known (was: one function-level key, `gpu` for all)
    tests = Analyzer(ROOT, walk_python_files(ROOT, [])).classify_file("tests/round38/test_sorted_ids.py").tests
    assert {k: v.label for k, v in tests.items()} == {
        "test_model_path[classify-model0]": "cpu", "test_model_path[detect-model1]": "cpu",
        "test_model_path[segment-model2]": "gpu"}


@pytest.mark.parametrize(("items", "order"), [
    ([("b", UNRESOLVED), ("a", UNRESOLVED)], ["a", "b"]),
    ([("a", 2, UNRESOLVED), ("a", 1, UNRESOLVED)], [1, 2]),
    ([("a", UNRESOLVED), ("a", UNRESOLVED)], None),  # the unknown elements decide
    ([("a", UNRESOLVED), (1, UNRESOLVED)], None),  # Python does not compare a str with an int
])
def test_which_tuples_sort_by_a_known_prefix(items: list[tuple[object, ...]], order: list[object] | None) -> None:
    def value(x: object) -> object:
        return x if x is UNRESOLVED else Const(x)
    seq = Seq(tuple(Seq(tuple(value(x) for x in t), "tuple") for t in items), "list")
    got = _sorted(seq, Const(False))
    if order is None:
        assert got is None
    else:
        assert got is not None
        assert [t.items[-2].value for t in got.items] == order  # type: ignore[attr-defined]


def test_parameters_from_a_toml_file_are_read() -> None:
    # `tomllib.load(open(HERE / "data" / "devices.toml", "rb"))` (was: unknown, one function-level key)
    tests = Analyzer(ROOT, walk_python_files(ROOT, [])).classify_file("tests/round38/test_toml_params.py").tests
    assert {k: v.label for k, v in tests.items()} == {
        "test_device_from_toml[cpu]": "cpu", "test_device_from_toml[cuda]": "gpu",
        "test_default_device_from_toml": "cpu"}


@pytest.mark.parametrize(("text", "got"), [
    ('device = "cpu"\n', DictV(((Const("device"), Const("cpu")),))),
    ("device = \n", UNRESOLVED),  # not TOML
    (b"\xff", UNRESOLVED),  # not UTF-8
])
def test_toml_text_is_parsed_as_data(text: str | bytes, got: object) -> None:
    assert datafiles.load("toml", text) == got


def test_a_module_that_skips_itself_without_cuda_keeps_its_tests() -> None:
    # `if not torch.cuda.is_available(): pytest.skip(..., allow_module_level=True)`: the tests exist where GPUs do,
    # each a GPU need (was: no test at all and a `cpu` file, so a CPU runner took the file and its GPU tests ran
    # nowhere)
    result = Analyzer(ROOT, walk_python_files(ROOT, [])).classify_file("tests/round38/test_module_skip.py")
    assert {k: (v.label, v.gpu_count) for k, v in result.tests.items()} == {
        "test_plain": ("gpu", 1), "test_on_gpu[1]": ("gpu", 1), "test_on_gpu[2]": ("gpu", 1)}
    assert any("pytest.skip() reached" in r for r in result.tests["test_plain"].reasons)


def test_skipif_conditions_given_as_strings_are_evaluated() -> None:
    # `skipif("not torch.cuda.is_available()")`: pytest evaluates the string in the module's globals (a non-empty
    # string was taken as a true condition: skipped everywhere, `cpu`)
    tests = Analyzer(ROOT, walk_python_files(ROOT, [])).classify_file(
        "tests/round38/test_string_conditions.py").tests
    assert (tests["test_string_condition_on_cuda"].label, tests["test_string_condition_on_cuda"].gpu_count) == (
        "gpu", 1)
    assert (tests["test_string_condition_two_gpus"].label, tests["test_string_condition_two_gpus"].gpu_count) == (
        "gpu", 2)
    assert tests["test_string_condition_elsewhere"].label == "cpu"


def test_gpus_detected_through_nvidia_smi_are_absent_without_gpus() -> None:
    # `shutil.which("nvidia-smi")` is None and `subprocess.check_output(["nvidia-smi", "-L"])` raises (caught:
    # `return 0`) on a machine without the driver (was: a false CPU and an unknown)
    tests = Analyzer(ROOT, walk_python_files(ROOT, [])).classify_file("tests/round38/test_driver_probes.py").tests
    assert (tests["test_needs_driver"].label, tests["test_needs_driver"].gpu_count) == ("gpu", 1)
    assert (tests["test_needs_a_listed_gpu"].label, tests["test_needs_a_listed_gpu"].gpu_count) == ("gpu", 1)
    assert tests["test_counts_no_gpu_here"].label == "cpu"


def test_a_skip_on_a_devices_total_memory_gives_the_vram() -> None:
    # `total_memory < 24 * 2**30` (skipif), `mem_get_info()[1] / 2**30 >= 40` (skipUnless): the planner's VRAM
    # (was: 0, so a small GPU could be given the test)
    tests = Analyzer(ROOT, walk_python_files(ROOT, [])).classify_file("tests/round38/test_driver_probes.py").tests
    assert (tests["test_needs_24_gib"].label, tests["test_needs_24_gib"].vram_gb) == ("gpu", 24)
    assert tests["TestBigMemory::test_needs_40_gib"].vram_gb == 40


@pytest.mark.parametrize(("condition", "gib"), [
    ("torch.cuda.get_device_properties(0).total_memory < 16e9", 14.9),
    ("props.total_memory / 1024**3 < 80", 80),
    ("16 * 2**30 > torch.cuda.get_device_properties(0).total_memory", 16),
    ("torch.cuda.mem_get_info()[0] < 8e9", 0),  # free memory: a state of the machine, not its size
    ("x.total_memory < 2 ** 100000", 0),  # not a number worth computing
    ("torch.cuda.device_count() < 2", 0),
])
def test_memory_bounds_read_from_conditions(condition: str, gib: float) -> None:
    assert memory_bound_gib([ast.parse(condition, mode="eval").body]) == gib


def test_parameters_named_by_their_name_attribute_and_unknown_strings() -> None:
    # an object pytest ids by its `__name__` (set by `functools.update_wrapper(self, fn)`, or a property), and a
    # string a helper joins from parts the analysis cannot spell: was `op0`, `op1`, `tag0`, `tag1` (ids pytest
    # never collects: the GPU case fell back to the file's label); now pytest's ids, and a function-level key
    tests = Analyzer(ROOT, walk_python_files(ROOT, [])).classify_file("tests/round38/test_named_params.py").tests
    assert {k: v.label for k, v in tests.items()} == {
        "test_named[_add]": "cpu", "test_named[to_gpu]": "gpu", "test_named[op2]": "cpu", "test_tagged": "cpu"}


@pytest.mark.parametrize(("base", "label"), [
    ("lightning.LightningModule", "cpu"),
    ("pytorch_lightning.LightningModule", "cpu"),
    ("transformers.PreTrainedModel", "cpu"),
    ("torch.nn.Module", "unknown"),  # torch.nn.Module has no `device`: nothing says where it is
])
def test_the_device_a_library_model_reports_is_where_it_is(tmp_path: Path, base: str, label: str) -> None:
    # `model.to(model.device)` (pyannote's Inference: `device = device or self.model.device`): the device the
    # model's parameters are on already, never a first CUDA use
    package, _, name = base.rpartition(".")
    (tmp_path / "test_infer.py").write_text(
        f"import torch\nimport {package}\n\n\nclass Net({base}):\n    def __init__(self):\n"
        "        super().__init__()\n        self.lin = torch.nn.Linear(2, 2)\n\n\n"
        "class Inference:\n    def __init__(self, model, device=None):\n        if device is None:\n"
        "            device = model.device\n        self.model = model.to(device)\n\n\n"
        "def test_infer():\n    Inference(Net())\n")
    verdict = Analyzer(tmp_path, walk_python_files(tmp_path, [])).classify_file("test_infer.py").tests["test_infer"]
    assert verdict.label == label, verdict.reasons
