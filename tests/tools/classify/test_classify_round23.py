"""Round 23: click command-line interfaces run by tests (click_model.py; corpus tests/round23, labels in
expected.json, each test run with pytest on CPU-only torch first)."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from tools.classify.evidence import Verdict
from tools.classify.runner import run

CORPUS_FILE = "tests/round23/test_click_cli.py"


def _tests(corpus: Path, path: str = CORPUS_FILE) -> dict:
    return run(corpus, paths=[path], cache_dir=None).files[path].tests


def _test_main(repo_with_test: Callable[[str], Path], text: str) -> Verdict:
    """The verdict of `test_main` in a one-file repository holding `text`."""
    root = repo_with_test(textwrap.dedent(text))
    return run(root, paths=["test_mine.py"], cache_dir=None, workers=1).files["test_mine.py"].tests["test_main"]


def _assert_gpu_exactly(tests: dict, gpu: set[str]) -> None:
    assert {k for k, v in tests.items() if v.label == "gpu"} == gpu
    assert all(v.label == "cpu" for k, v in tests.items() if k not in gpu), {k: v.reasons for k, v in tests.items()}


def test_a_command_runs_with_the_command_lines_values(corpus: Path) -> None:
    tests = _tests(corpus)
    # before click was modelled, every one of these was `cpu`: the command handed to click was never run
    for name in ("test_train_cuda", "test_train_string_command_line", "test_cuda_default", "test_flag_on",
                 "test_switch_on", "test_place[cuda]", "test_choose_cuda", "test_main_standalone_off_cuda",
                 "test_resolved_second_gpu"):
        assert tests[name].label == "gpu", (name, tests[name].reasons)
    assert "calls train()" in tests["test_train_cuda"].reasons[0]
    for name in ("test_train_default", "test_train_cpu_equals", "test_cuda_default_short_cpu",
                 "test_cuda_default_attached_cpu", "test_flag_off", "test_switch_off", "test_place[cpu]",
                 "test_choose_with_context", "test_main_standalone_off", "test_callback_called_directly"):
        assert tests[name].label == "cpu", (name, tests[name].reasons)


def test_an_options_callback_decides_its_value(corpus: Path) -> None:
    tests = _tests(corpus)
    # `resolve_device(None)` and `resolve_device("cuda")` fall back to the CPU without CUDA; "cuda:1" does not
    assert tests["test_resolved_default"].label == "cpu"
    assert tests["test_resolved_cuda"].label == "cpu"
    assert tests["test_resolved_second_gpu"].label == "gpu"


def test_a_group_runs_the_sub_command_named(corpus: Path) -> None:
    tests = _tests(corpus)
    assert tests["test_group_fit_cpu"].label == "cpu"
    assert tests["test_group_fit_default"].label == "gpu"
    assert tests["test_group_evaluate"].label == "cpu"  # `@cli.command(name="evaluate")` on `evaluate_cmd`
    assert tests["test_group_added_command"].label == "gpu"  # `cli.add_command(export)`
    assert tests["test_group_help"].label == "cpu"  # `--help`: click prints the help, no command runs


def test_a_command_built_by_a_function_keeps_the_options_it_reads(corpus: Path) -> None:
    tests = _tests(corpus)
    # one of its options (`nargs=2`) is not modelled: the others still have their defaults
    assert tests["test_built_command_default_cpu"].label == "cpu"
    assert tests["test_built_command_default_cuda"].label == "gpu"


def test_a_command_line_the_analysis_cannot_spell_is_unknown(corpus: Path) -> None:
    got = _tests(corpus)["test_unknown_command_line"]
    assert got.label == "unknown"
    assert "device is a parameter or local with no known value" in got.reasons[0]


GROUP = textwrap.dedent('''
    import click
    import torch
    from click.testing import CliRunner


    @click.group()
    def cli():
        pass


    @cli.command()
    def small():
        torch.ones(1)


    def register(group):
        @group.command()
        def big():
            torch.ones(1, device="cuda")


    register(cli)


    def test_small():
        assert CliRunner().invoke(cli, ["small"]).exit_code == 0


    def test_registered_elsewhere():
        assert CliRunner().invoke(cli, ["big"]).exit_code == 0


    def test_unknown_words(tmp_path):
        assert CliRunner().invoke(cli, [tmp_path.name]).exit_code == 0
''')


def test_a_sub_command_the_analysis_did_not_see_registered_is_unknown(repo_with_test: Callable[[str], Path]) -> None:
    root = repo_with_test(GROUP)
    tests = run(root, paths=["test_mine.py"], cache_dir=None, workers=1).files["test_mine.py"].tests
    assert tests["test_small"].label == "cpu"
    # `big` is registered by a function on a group passed to it: the group named here never holds it
    assert tests["test_registered_elsewhere"].label == "unknown"
    assert "a command of cli() the analysis cannot name" in tests["test_registered_elsewhere"].reasons[0]
    assert tests["test_unknown_words"].label == "unknown"


@pytest.mark.parametrize(("declaration", "argv", "label"), [
    ('@click.option("--device", envvar="DEVICE", default="cpu")', "[]", "unknown"),  # the environment may set it
    ('@click.option("--device", default="cpu", required=True)', '["--device", "cuda"]', "gpu"),
    ('@click.option("--device", multiple=True, default=["cpu"])', '["--device", "cuda"]', "gpu"),
    ('@click.option("--device", default="cpu")', '["--devices", "cuda"]', "cpu"),  # click rejects the option
    ('@click.option("--device", type=click.Choice(["cpu", "cuda"]))', '["--device", "cuda"]', "gpu"),
    ('@click.option("--device", type=MyType(), default="cpu")', '["--device", "cuda"]', "unknown"),
])
def test_option_declarations(repo_with_test: Callable[[str], Path], declaration: str, argv: str,
                             label: str) -> None:
    got = _test_main(repo_with_test, f'''
        import click
        import torch
        from click.testing import CliRunner


        class MyType(click.ParamType):
            name = "mine"


        @click.command()
        {declaration}
        def main(device):
            for d in (device if isinstance(device, tuple) else [device]):
                torch.ones(1, device=d)


        def test_main():
            assert CliRunner().invoke(main, {argv}).exit_code == 0
    ''')
    assert got.label == label, got.reasons


TYPER_FILE = "tests/round23/test_typer_cli.py"


def test_a_typer_command_runs_with_its_signatures_values(corpus: Path) -> None:
    tests = _tests(corpus, TYPER_FILE)
    # before typer was modelled, all of them were `cpu` (`@app.command()` was never applied at a module's top level)
    _assert_gpu_exactly(tests, {
        "test_train_cuda", "test_train_gpu_flag", "test_place_cuda", "test_fit_default", "test_legacy_cuda",
        "test_single_default", "test_grouped_run_cuda", "test_grouped_command_with_context_default"})
    # `--no-gpu` is the switch typer makes of a bool parameter; `fit-model` the name given to `fit`
    assert tests["test_train_no_gpu_flag"].label == "cpu"
    assert "calls fit()" in tests["test_fit_default"].reasons[0]


@pytest.mark.parametrize(("signature", "argv", "label"), [
    ('device: str = "cpu"', '["--device", "cuda"]', "gpu"),
    ('device: "str" = "cpu"', '["--device", "cpu"]', "cpu"),
    ("device: Optional[str] = None", '["--device", "cuda"]', "gpu"),
    ('device: MyDevice = "cpu"', '["--device", "cuda"]', "unknown"),  # a type the model does not convert
    ('device: str = typer.Option("cpu", envvar="DEVICE")', "[]", "unknown"),  # the environment may set it
    ('*devices: str', '["cuda"]', "unknown"),
    # typer hands an option's callback the value alone: `resolve("cuda")` falls back to the CPU without CUDA
    ('device: str = typer.Option("cuda", callback=resolve)', "[]", "cpu"),
    ('device: str = typer.Option("cuda:1", callback=resolve)', "[]", "gpu"),
])
def test_typer_signatures(repo_with_test: Callable[[str], Path], signature: str, argv: str, label: str) -> None:
    got = _test_main(repo_with_test, f'''
        from typing import Optional

        import torch
        import typer
        from typer.testing import CliRunner

        app = typer.Typer()


        class MyDevice(str):
            pass


        def resolve(value: str):
            return "cpu" if value == "cuda" and not torch.cuda.is_available() else value


        @app.command()
        def main({signature}):
            torch.ones(1, device=device)


        def test_main():
            assert CliRunner().invoke(app, {argv}).exit_code == 0
    ''')
    assert got.label == label, got.reasons


CONFIGS_FILE = "tests/round23/test_configs.py"


def test_a_device_read_from_a_configuration(corpus: Path) -> None:
    tests = _tests(corpus, CONFIGS_FILE)
    # on main 18 were `unknown` and 2 `cpu` although they use CUDA: OmegaConf was read as code
    _assert_gpu_exactly(tests, {
        "test_load_cuda", "test_create_cuda", "test_structured_default", "test_subscript", "test_to_container",
        "test_hydra_compose_default", "test_groups_default", "test_groups_interpolation", "test_fixture_then_cuda",
        "test_get_missing", "test_select"})
    assert "torch.ones(device='cuda')" in tests["test_groups_interpolation"].reasons[0]


def test_configuration_values() -> None:
    from tools.classify import omegaconf_model as oc
    from tools.classify.values import UNRESOLVED, Const, Inst

    base = oc.config({"trainer": oc.config({"device": Const("cuda"), "epochs": Const(1)}),
                      "run_device": Const("${trainer.device}"), "tag": Const("on-${trainer.device}"),
                      "env": Const("${oc.env:DEVICE}")})
    got = oc.resolved(oc.merge(base, oc.from_dotlist([Const("trainer.device=cpu")])))
    assert isinstance(got, Inst)
    assert oc.select(got, "trainer.device") == Const("cpu")
    assert oc.select(got, "trainer.epochs") == Const(1)  # merged key by key
    assert got.attr("run_device") == Const("cpu") and got.attr("tag") == Const("on-cpu")
    assert got.attr("env") == UNRESOLVED  # a resolver: not followed
    assert oc.select(oc.override(got, "~trainer.device"), "trainer.device") is None
    assert oc.override(got, "not a key=1") == UNRESOLVED


@pytest.mark.parametrize(("defaults", "overrides", "device"), [
    ("[{trainer: gpu}, _self_]", [], "cuda"),
    ("[{trainer: gpu}, _self_]", ["trainer=cpu"], "cpu"),
    ("[{trainer: gpu}]", ["trainer.device=cpu"], "cpu"),
    ("[{trainer: gpu}, {optional db: x}]", [], None),  # `optional`: not modelled
    ("[{trainer@t: gpu}]", [], None),  # a package: not modelled
])
def test_hydra_composition(defaults: str, overrides: list[str], device: str | None) -> None:
    from tools.classify import datafiles
    from tools.classify import omegaconf_model as oc
    from tools.classify.values import UNRESOLVED, Const

    files = {"main.yaml": f"defaults: {defaults}\nseed: 1\n", "trainer/gpu.yaml": "device: cuda\n",
             "trainer/cpu.yaml": "device: cpu\n"}

    def load(rel: str):  # noqa: ANN202
        return oc.to_config(datafiles.load("yaml", files[rel])) if rel in files else UNRESOLVED

    got = oc.compose(load, "main", [Const(o) for o in overrides])
    if device is None:
        assert got == UNRESOLVED
    else:
        assert oc.select(got, "trainer.device") == Const(device) and oc.select(got, "seed") == Const(1)


LIGHTNING_FILE = "tests/round23/test_lightning.py"


def test_a_lightning_trainer_for_an_accelerator(corpus: Path) -> None:
    tests = _tests(corpus, LIGHTNING_FILE)
    # on main all `cpu`: Lightning is external and its constructor's `accelerator=` was not read
    _assert_gpu_exactly(tests, {"test_trainer_gpu", "test_trainer_cuda_two", "test_param[gpu]", "test_fabric_cuda",
                                "test_trainer_kwargs"})
    assert tests["test_trainer_cuda_two"].gpu_count == 2


@pytest.mark.parametrize(("call", "label", "count"), [
    ("pl.Trainer(gpus=2)", "gpu", 2),  # Lightning 1.x
    ("pl.Trainer(gpus=[0, 1, 2])", "gpu", 3),
    ("pl.Trainer(gpus=0)", "cpu", 0),
    ('pl.Trainer(accelerator="gpu", devices="0,1")', "gpu", 2),
    ('pl.Trainer(accelerator="auto", devices=2)', "cpu", 0),  # falls back to the CPU
    ("pl.Trainer(accelerator=os.environ['ACCELERATOR'])", "unknown", 0),
])
def test_lightning_arguments(repo_with_test: Callable[[str], Path], call: str, label: str, count: int) -> None:
    got = _test_main(repo_with_test, f'''
        import os

        import pytorch_lightning as pl


        def test_main():
            {call}
    ''')
    assert (got.label, got.gpu_count) == (label, count), got.reasons


INSTANTIATE_FILE = "tests/round23/test_instantiate.py"


def test_objects_hydra_instantiates(corpus: Path) -> None:
    tests = _tests(corpus, INSTANTIATE_FILE)
    # on main all `cpu`: the file imports no torch, and `instantiate` was an external call that ran nothing
    _assert_gpu_exactly(tests, {"test_trainer_gpu", "test_net_cuda", "test_nested_cuda", "test_partial_cuda",
                                "test_call_torch"})
    assert "Net.__init__()" in tests["test_net_cuda"].reasons[0]


def test_a_target_the_analysis_cannot_read_is_an_unknown_call(repo_with_test: Callable[[str], Path]) -> None:
    got = _test_main(repo_with_test, '''
        import os

        import torch
        from hydra.utils import instantiate


        def test_main():
            instantiate({"_target_": os.environ["MODEL"]})
            torch.ones(1)
    ''')
    assert got.label == "unknown"
    assert "whose target the analysis cannot read" in got.reasons[0]


def test_a_test_handing_a_configuration_to_hydra_is_never_proven_inert() -> None:
    from tools.classify.inert import InertProver
    from tools.classify.values import Ext

    prover = InertProver(lambda rel: None, lambda rel, pos: None, lambda rel, world: ({}, False))
    assert prover.value_plain(Ext("omegaconf.OmegaConf.load"), 0)
    # what `instantiate` runs is named by the configuration, not by the test's text
    assert not prover.value_plain(Ext("hydra.utils.instantiate"), 0)


def test_argument_groups_add_to_their_parser(corpus: Path) -> None:
    tests = _tests(corpus, "tests/round23/test_argparse_groups.py")
    assert tests["test_group_default"].label == "gpu"  # `--device` declared on a group, default "cuda"
    assert tests["test_group_cpu"].label == "cpu"
    # a group filled by a helper the parser is not handed to: the option is not seen, its value unknown
    assert tests["test_group_filled_by_helper"].label == "unknown"


def test_sub_commands_parse_the_words_after_their_name(corpus: Path) -> None:
    tests = _tests(corpus, "tests/round23/test_argparse_groups.py")
    # `args.func(args)` with `set_defaults(func=train)` on the `train` sub-parser (alias `fit`), `--device` default
    # "cuda": on main `cpu` (the namespace was unknown, and so the function called through it)
    assert tests["test_sub_train_default"].label == "gpu"
    assert tests["test_sub_alias"].label == "gpu"
    assert "calls train()" in tests["test_sub_train_default"].reasons[0]
    assert tests["test_sub_train_cpu"].label == "cpu"  # `--verbose` before the sub-command, `--device cpu` after
    assert tests["test_sub_eval"].label == "cpu" and tests["test_sub_none"].label == "cpu"


@pytest.mark.parametrize(("device", "label"), [("0", "gpu"), ("-1", "cpu")])
def test_a_negative_device_index_is_no_cuda_device(repo_with_test: Callable[[str], Path], device: str,
                                                   label: str) -> None:
    # transformers' pipelines take -1 for the CPU; torch rejects a negative index on every machine
    got = _test_main(repo_with_test, f'''
        from transformers import pipeline


        def test_main():
            pipeline("fill-mask", model="bert-base-uncased", device={device})
    ''')
    assert got.label == label, got.reasons


def test_a_script_reads_its_command_line_through_click_or_typer(corpus: Path) -> None:
    # `if __name__ == "__main__": main()` / `app()` / `typer.run(main)` in a script a test runs with `--device cuda`:
    # click reads the program's command line (on main all `cpu`: pytest's own command line was assumed, unknown,
    # and the file imports no torch)
    tests = _tests(corpus, "tests/round23/test_cli_scripts.py")
    _assert_gpu_exactly(tests, {"test_click_cuda", "test_typer_run_cuda", "test_typer_app_cuda"})


def test_a_triton_kernel_launch_needs_a_gpu(corpus: Path) -> None:
    tests = _tests(corpus, "tests/round23/test_triton.py")
    # `kernel[grid](...)` of a `@triton.jit` (or `@triton.autotune` over `@jit`) def: "0 active drivers" without a GPU
    _assert_gpu_exactly(tests, {"test_launch_jit_kernel", "test_launch_autotuned_kernel"})
    assert "launches the Triton kernel add_kernel()" in tests["test_launch_jit_kernel"].reasons[0]
