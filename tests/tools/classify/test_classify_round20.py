"""Round 20: fixtures that hand the test its object (tests/round20_fixtures; labels in expected.json).

Each corpus test was run with pytest on CPU-only torch first; here the node ids are checked against pytest's, and
the reasons (`--explain`) name the fixture that set the test up."""

from __future__ import annotations

import pytest

from tools.classify.analyzer import Analyzer
from tools.classify.argparse_model import incomplete, new_parser, parse, with_option
from tools.classify.collect import collect_items
from tools.classify.programs import program_of
from tools.classify.runner import run
from tools.classify.values import UNRESOLVED, Const, Ext, Inst, Seq, Unresolved, alternatives

FIXTURES = "tests/round20_fixtures"


@pytest.mark.parametrize(("path", "count"), [
    (FIXTURES, 28), ("tests/round20_callbacks", 20), ("tests/round20_names", 7), ("tests/round20_programs", 12)])
def test_round20_ids_equal_pytest(ids_vs_pytest, path, count) -> None:
    """Every id pytest collects has its exact key (hypothesis' directory is left out: not a dependency here)."""
    got = ids_vs_pytest(path)
    assert got.not_collected == set()
    assert got.function_only == set()
    assert len(got.collected) == count


def _tests(corpus, name: str) -> dict:
    path = f"{FIXTURES}/{name}"
    return run(corpus, paths=[path], cache_dir=None).files[path].tests


def test_fixture_methods_set_up_the_tests_object(corpus) -> None:
    tests = _tests(corpus, "test_instance_fixtures.py")
    # an autouse fixture's `self.device`: the body's device, cpu or cuda alike
    assert tests["TestAutouseDevice::test_add"].label == "cpu"
    assert tests["TestAutouseCuda::test_add"].label == "gpu"
    # the object at the yield, not after the teardown that resets `self.device = None`
    assert tests["TestTeardownResets::test_uses"].label == "gpu"
    # a skip in the fixture method is the test's, and names the fixture
    assert "uses fixture _need_gpu" in tests["TestSkipInFixture::test_uses"].reasons[0]
    assert "on the test's object" in tests["TestSkipInFixture::test_uses"].reasons[0]
    # setup_method runs first; the fixture reads what it set
    assert tests["TestSetupMethodThenFixture::test_uses"].label == "cpu"


def test_request_cls_attributes_reach_the_test(corpus) -> None:
    tests = _tests(corpus, "test_request_cls.py")
    assert tests["TestClsCuda::test_uses"].label == "gpu"
    assert tests["TestClsCpu::test_uses"].label == "cpu"
    assert tests["TestClassFixtureMethod::test_uses"].label == "cpu"


def test_class_set_up_reaches_every_test(corpus) -> None:
    tests = _tests(corpus, "test_class_setup.py")
    assert tests["TestUnitSetUpClass::test_uses"].label == "gpu"  # `cls.device = cuda` in setUpClass
    assert tests["TestUnitSetUpClassCpu::test_uses"].label == "cpu"
    assert tests["TestSetupClass::test_uses"].label == "gpu"


def test_hypothesis_given_draws_devices(corpus) -> None:
    tests = _tests_in(corpus, "tests/round20_hypothesis/test_given.py")
    assert tests["test_sampled_devices"].label == "gpu"  # sampled_from(["cpu", "cuda"]): both are drawn
    assert "torch.zeros(device='cuda')" in tests["test_sampled_devices"].reasons[0]
    assert tests["test_available_devices"].label == "cpu"  # sampled_from(DEVICES): ["cpu"] without GPUs
    assert tests["test_sizes"].label == "cpu"
    assert tests["test_draw_device"].label == "unknown"  # data().draw(...) inside the body: not followed


@pytest.mark.parametrize(("strategy", "drawn"), [
    ("st.sampled_from(['cpu', 'cuda'])", {"cpu", "cuda"}),
    ("st.just('cuda:1')", {"cuda:1"}),
    ("st.one_of(st.just('cpu'), st.none())", {"cpu", None}),
    ("st.one_of([st.just('cpu'), st.just('mps')])", {"cpu", "mps"}),
    ("st.booleans()", {True, False}),
    ("st.integers(0, 3)", None),
    ("st.sampled_from(DEVICES).map(torch.device)", None),
])
def test_what_a_strategy_draws(tmp_path, strategy, drawn) -> None:
    (tmp_path / "test_s.py").write_text(
        "import torch\nfrom hypothesis import given\nfrom hypothesis import strategies as st\n"
        f"DEVICES = ['cpu']\n\n@given(x={strategy})\ndef test_x(x):\n    pass\n")
    analyzer = Analyzer(tmp_path, ["test_s.py"])
    item = next(i for i in collect_items(analyzer.interp, "test_s.py") if i.func.name == "test_x")
    got = analyzer.given_arguments(item.func, 0)["x"]
    if drawn is None:
        assert isinstance(got, Unresolved)
    else:
        assert {a.value for a in alternatives(got)} == drawn


def _tests_in(corpus, path: str) -> dict:
    return run(corpus, paths=[path], cache_dir=None).files[path].tests


CALLBACKS = "tests/round20_callbacks"


def test_functions_handed_to_code_not_followed_run(corpus) -> None:
    """Three false CPUs of the battery: pytest-benchmark's fixture, timeit, an executor; each CPU twin stays
    `cpu`."""
    tests = _tests_in(corpus, f"{CALLBACKS}/test_passed_functions.py")
    for name in ("test_benchmark_fixture_cuda", "test_timeit_lambda", "test_executor_submit"):
        assert tests[name].label == "gpu", name
    assert "calls make_cuda()" in tests["test_benchmark_fixture_cuda"].reasons[0]
    assert tests["test_benchmark_fixture_cpu"].label == "cpu"
    mapped = _tests_in(corpus, f"{CALLBACKS}/test_mapped_functions.py")
    assert mapped["test_executor_map"].label == "gpu"  # on each item: "cuda" is one
    assert mapped["test_executor_map_cpu"].label == "cpu"
    assert mapped["test_benchmark_pedantic"].label == "gpu"  # args=("cuda",) reach the function
    assert mapped["test_benchmark_pedantic_cpu"].label == "cpu"


def test_a_function_registered_at_import_is_not_run(tmp_path) -> None:
    """At a module's top level a function handed to an unknown callee is a registration, not a call."""
    (tmp_path / "test_reg.py").write_text(
        "import torch\nfrom somewhere import register\n\n\n"
        "def kernel():\n    return torch.zeros(1, device='cuda')\n\n\nregister(kernel)\n\n\n"
        "def test_plain():\n    assert torch.ones(1).sum() == 1\n")
    assert run(tmp_path, paths=["test_reg.py"], cache_dir=None).files["test_reg.py"].tests["test_plain"].label == "cpu"


PROGRAMS = "tests/round20_programs/test_programs.py"


def test_programs_a_test_runs(corpus) -> None:
    tests = _tests_in(corpus, PROGRAMS)
    assert "runs round20_tools/bench_cuda.py as a program" in tests["test_module_cuda"].reasons[0]
    assert "calls main()" in tests["test_module_cuda"].reasons[0]  # its `if __name__ == "__main__":` block ran
    args = _tests_in(corpus, "tests/round20_programs/test_argparse.py")
    assert args["test_script_on_cpu"].label == "cpu"  # `--device cpu` reaches the script's argparse
    assert args["test_script_default_cuda"].label == "gpu"  # its default
    assert args["test_parse_args_defaults_cuda"].label == "gpu"
    assert args["test_parse_args_list_cpu"].label == "cpu"
    assert tests["test_module_guarded"].label == "cpu"  # returns early without CUDA
    assert tests["test_python_c_cuda"].label == "gpu"
    assert tests["test_python_c_cpu"].label == "cpu"


_FILES = frozenset({"scripts/train.py", "pkg/__init__.py", "pkg/tool.py"})


def _module_file(dotted: str) -> str | None:
    return {"pkg.tool": "pkg/tool.py"}.get(dotted)


def _words(*items: object) -> Seq:
    return Seq(tuple(i if not isinstance(i, str) else Const(i) for i in items), "list")


@pytest.mark.parametrize(("path", "cmd", "kwargs", "expected"), [
    ("subprocess.run", _words(Ext("sys.executable"), "scripts/train.py", "--device", "cuda"), {}, "scripts/train.py"),
    ("subprocess.run", _words("python3", "-u", "scripts/train.py"), {}, "scripts/train.py"),
    ("subprocess.run", _words("python", "-W", "ignore", "-m", "pkg.tool"), {}, "pkg/tool.py"),
    ("subprocess.check_call", _words("torchrun", "--nproc_per_node", "2", "scripts/train.py"), {}, "scripts/train.py"),
    ("subprocess.run", _words("accelerate", "launch", "--num_processes=2", "scripts/train.py"), {}, "scripts/train.py"),
    ("subprocess.run", _words("python", "-m", "torch.distributed.run", "scripts/train.py"), {}, "scripts/train.py"),
    ("os.system", Const("python scripts/train.py --fast"), {}, "scripts/train.py"),
    ("subprocess.run", _words("python", "scripts/other.py"), {}, None),  # not a file of the repository
    ("subprocess.run", _words("python", "-m", "json.tool"), {}, None),  # an installed module
    ("subprocess.run", _words("bash", "scripts/train.py"), {}, None),  # not python
    ("subprocess.run", _words(Ext("sys.executable"), Const(None)), {}, None),  # a program it cannot name
    ("subprocess.run", _words("python", "-c", "print(1)"), {}, "-c"),
    ("subprocess.run", _words("torchrun", "-c", "print(1)"), {}, None),
    ("runpy.run_path", Const("scripts/train.py"), {}, "scripts/train.py"),
    ("runpy.run_module", Const("pkg.tool"), {"run_name": Const("__main__")}, "pkg/tool.py"),
    ("runpy.run_module", Const("pkg.tool"), {}, None),  # run as an import: its main block does not run
])
def test_which_program_a_command_runs(path, cmd, kwargs, expected) -> None:
    got = program_of(path, [cmd], kwargs, _FILES, _module_file)
    assert (None if got is None else "-c" if got.code is not None else got.rel) == expected


def test_python_c_code_runs_as_a_module_of_its_own(tmp_path) -> None:
    """`python -c` code with definitions: its defs are its own (not the test file's at the same positions); code
    that does not parse runs nothing."""
    (tmp_path / "test_c.py").write_text(
        "import subprocess\nimport sys\n\n\ndef test_defs():\n    subprocess.run([sys.executable, '-c', "
        "'import torch\\ndef f():\\n    return torch.zeros(1, device=\"cuda\")\\nf()'], check=True)\n\n\n"
        "def test_broken():\n    subprocess.run([sys.executable, '-c', 'def ('], check=True)\n")
    tests = run(tmp_path, ["test_c.py"], None).files["test_c.py"].tests
    assert tests["test_defs"].label == "gpu"
    assert "python -c@6" in tests["test_defs"].reasons[0]
    assert tests["test_broken"].label == "cpu"


def test_a_cached_result_follows_the_program_it_ran(tmp_path) -> None:
    """Editing the script a test runs recomputes the test's label (the script is not in its import closure)."""
    root, cache = tmp_path / "r", tmp_path / "cache"
    (root / "scripts").mkdir(parents=True)
    (root / "scripts" / "train.py").write_text("import torch\n\ntorch.zeros(1)\n")
    (root / "test_run.py").write_text("import subprocess\nimport sys\n\n\ndef test_run():\n"
                                      "    subprocess.run([sys.executable, 'scripts/train.py'], check=True)\n")
    assert run(root, None, cache).files["test_run.py"].tests["test_run"].label == "cpu"
    (root / "scripts" / "train.py").write_text("import torch\n\ntorch.zeros(1, device='cuda')\n")
    again = run(root, None, cache)
    assert again.cache_hits == 0
    assert again.files["test_run.py"].tests["test_run"].label == "gpu"


NAMES = "tests/round20_names"


def test_hooks_see_a_cases_full_name_and_node_id(corpus) -> None:
    tests = _tests_in(corpus, f"{NAMES}/test_named.py")
    assert tests["test_backend[cuda]"].label == "gpu"  # `"cuda" in item.name`: the case id is part of it
    assert tests["test_gpu_smoke"].label == "gpu"  # `"gpu" in item.nodeid`
    assert "pytest_collection_modifyitems" in tests["test_gpu_smoke"].reasons[0]
    assert tests["TestGpuKernels::test_add"].label == "cpu"  # ("Gpu": the hook's test is case-sensitive)
    assert tests["test_backend[cpu]"].label == "cpu"


def test_a_module_imported_by_constant_name_is_followed(tmp_path) -> None:
    """`importlib.import_module("models")` is the repository's module (a CUDA use in it counts), and editing it
    recomputes a cached result (it is not in the test's import closure)."""
    (tmp_path / "models.py").write_text("import torch\n\n\ndef build():\n    return torch.zeros(1)\n")
    (tmp_path / "test_dyn.py").write_text("import importlib\n\n\ndef test_build():\n"
                                          "    importlib.import_module('models').build()\n")
    cache = tmp_path / "cache"
    assert run(tmp_path, ["test_dyn.py"], cache).files["test_dyn.py"].tests["test_build"].label == "cpu"
    (tmp_path / "models.py").write_text("import torch\n\n\ndef build():\n    return torch.zeros(1, device='cuda')\n")
    again = run(tmp_path, ["test_dyn.py"], cache)
    assert again.cache_hits == 0 and again.files["test_dyn.py"].tests["test_build"].label == "gpu"


def test_a_map_without_iterables_runs_on_the_receivers_items(tmp_path) -> None:
    """`dataset.map(fn)` (datasets, pandas): fn runs on the receiver's items, which the analysis does not know."""
    (tmp_path / "test_ds.py").write_text(
        "import torch\n\n\ndef to_cuda(example):\n    return torch.zeros(1, device='cuda')\n\n\n"
        "def test_map(dataset):\n    dataset.map(to_cuda)\n")
    assert run(tmp_path, ["test_ds.py"], None).files["test_ds.py"].tests["test_map"].label == "gpu"


GENERATED = "tests/round20_generated"


def test_tests_made_at_a_modules_top_level(ids_vs_pytest) -> None:
    """setattr on a test class and globals() in a loop: each test is listed under pytest's id, with its own
    closure's device (a receiver projection shared between two closures of one def made the CUDA one cpu)."""
    got = ids_vs_pytest(GENERATED)
    assert got.not_collected == set() and got.function_only == set()
    assert len(got.collected) == 6
    for dev, label in (("cpu", "cpu"), ("cuda", "gpu")):
        assert got.tests[f"{GENERATED}/test_generated.py::TestOps::test_zeros_{dev}"].label == label
        assert got.tests[f"{GENERATED}/test_generated.py::TestPlain::test_ones_{dev}"].label == label  # `d=_dev`
        assert got.tests[f"{GENERATED}/test_generated.py::test_fn_{dev}"].label == label


def test_a_module_imported_by_name_keeps_warm_runs_warm(tmp_path) -> None:
    """Only the repository's files of the imported module's closure are recorded as read: an installed module
    among them (tqdm, read as code: installed.py) is keyed by its digest already, and recording it as a data file
    made every warm run of transformer-lens analyse three files again (1.3 s warm)."""
    (tmp_path / "models.py").write_text("import tqdm\nimport torch\n\n\ndef build():\n    return torch.zeros(1)\n")
    (tmp_path / "test_dyn.py").write_text("import importlib\n\n\ndef test_build():\n"
                                          "    importlib.import_module('models').build()\n")
    cache = tmp_path / "cache"
    cold = run(tmp_path, ["test_dyn.py"], cache)
    assert [d for d, _ in cold.files["test_dyn.py"].data if not d.startswith("<")] == ["models.py"]
    assert run(tmp_path, ["test_dyn.py"], cache).cache_hits == 1


def _parser(*options: tuple[list[str], dict]) -> Inst:
    p = new_parser()
    for flags, kw in options:
        p = with_option(p, [Const(f) for f in flags], kw)
    return p


def _argv(*words: str) -> Seq:
    return Seq(tuple(Const(w) for w in words), "list")


@pytest.mark.parametrize(("argv", "expected"), [
    ((), {"device": "cuda", "steps": 2, "fast": False, "path": None}),
    (("--device", "cpu"), {"device": "cpu"}),
    (("--device=cpu", "-n", "5"), {"device": "cpu", "steps": 5}),
    (("--fast", "--path", "data.txt"), {"fast": True, "path": "data.txt"}),
    (("stray",), None),  # a positional argument the parser has none for
    (("--steps", "x"), None),  # int("x"): argparse exits
    (("--unknown", "1"), None),  # an option the parser lacks: argparse exits
    (("--device",), None),  # its value is missing
])
def test_what_a_parser_reads_from_a_command_line(argv, expected) -> None:
    p = _parser((["--device"], {"default": Const("cuda")}), (["-n", "--steps"], {"type": Ext("builtins.int"),
                                                                                 "default": Const(2)}),
                (["--fast"], {"action": Const("store_true")}), (["--path"], {}))
    ns = parse(p, _argv(*argv))
    if expected is None:
        assert isinstance(ns, Unresolved)
    else:
        assert isinstance(ns, Inst)
        assert {k: ns.attr(k).value for k in expected} == expected


def test_a_parser_the_model_cannot_list_reads_as_unknown() -> None:
    assert isinstance(parse(_parser((["--xs"], {"nargs": Const("+")})), _argv()), Unresolved)
    assert isinstance(parse(incomplete(_parser()), _argv()), Unresolved)  # add_argument_group and the like
    assert isinstance(parse(_parser((["path"], {})), _argv()), Unresolved)  # a positional argument missing
    assert isinstance(parse(_parser(), UNRESOLVED), Unresolved)  # pytest's own command line


def test_a_word_the_analysis_cannot_spell_is_an_unknown_value() -> None:
    """`[script, "--out", str(tmp_path), "--device", "cpu"]`: the unknown path is the value of `--out` only."""
    p = _parser((["--out"], {}), (["--device"], {"default": Const("cuda")}))
    ns = parse(p, Seq((Const("--out"), UNRESOLVED, Const("--device"), Const("cpu")), "list"))
    assert isinstance(ns, Inst) and ns.attr("device") == Const("cpu") and isinstance(ns.attr("out"), Unresolved)
    assert isinstance(parse(p, Seq((UNRESOLVED, Const("cpu")), "list")), Unresolved)  # which option it is: unknown
