"""Planner: export → plan → Kubernetes / Slurm / GitHub Actions renderings, policies, bad input."""

from __future__ import annotations

import dataclasses
import json
import random
from pathlib import Path

import pytest
import yaml

from tools.gpu_manifest import __main__ as export_cli
from tools.gpu_manifest import schema
from tools.gpu_manifest.schema import ManifestTest, command_for
from tools.plan import __main__ as plan_cli
from tools.plan import fleet as fleet_mod
from tools.plan import render_gha, render_k8s, render_slurm
from tools.plan.fleet import Fleet, Pool
from tools.plan.jobs import STARTUP_MARGIN_S, job_name
from tools.plan.metrics import compute
from tools.plan.policies import PolicyConfig
from tools.plan.scheduler import schedule

FLEET = Path(__file__).resolve().parent / "fixtures" / "fleet_example.yaml"
# Saved `bazel query` output: the exporter's fixtures, read here to plan what it exports.
QUERIES = Path(__file__).resolve().parents[1] / "gpu_manifest" / "fixtures"


def _test(label: str, gpus: int = 1, vram: float = 4, duration: float = 60, **kw) -> ManifestTest:
    return ManifestTest(label=label, gpu_count=gpus, vram_gb=vram, size="medium", timeout_s=300,
                        estimated_duration_s=duration, duration_source="size", command=command_for(label), **kw)


@pytest.fixture
def manifest_path(tmp_path: Path) -> Path:
    path = tmp_path / "gpu_manifest.yaml"
    assert export_cli.main(["--query-output", str(QUERIES / "query_gpu_examples.xml"), "--output", str(path)]) == 0
    return path


@pytest.mark.parametrize("policy", ["exclusive", "packed"])
def test_export_plan_render_end_to_end(manifest_path: Path, tmp_path: Path, policy: str) -> None:
    out = tmp_path / "plan"
    rc = plan_cli.main([str(manifest_path), "--fleet", str(FLEET), "--policy", policy, "--out", str(out),
                        "--render", "k8s,slurm,gha,gantt", "--handoff", "test"])
    assert rc == 0
    manifest = schema.read(manifest_path)
    plan = json.loads((out / "plan.json").read_text())
    assert sorted(p["label"] for p in plan["placements"]) == sorted(t.label for t in manifest.tests)
    assert plan["infeasible"] == []
    by_label = {p["label"]: p for p in plan["placements"]}
    assert by_label["//examples/torch_gpu:test_nccl_allreduce"]["whole_node"]  # `exclusive` tag
    assert by_label["//examples/torch_gpu:test_amp_h100"]["pool"] == "h100-nvlink"  # gpu-model:h100
    assert by_label["//examples/torch_gpu:test_two_gpu"]["pool"] == "h100-nvlink"  # NVLink preferred

    jobs = list(yaml.safe_load_all((out / "k8s-jobs.yaml").read_text()))
    assert len(jobs) == len(manifest.tests)
    render_k8s.validate_all(jobs)  # re-check what was written, through kubernetes.client.V1Job
    two = next(j for j in jobs if j["metadata"]["annotations"]["torch-ci/bazel-label"].endswith("test_two_gpu"))
    pod = two["spec"]["template"]["spec"]
    assert pod["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == ("8" if policy == "exclusive" else "2")
    assert pod["nodeSelector"]["torch-ci/gpu-model"] == "h100"
    assert pod["tolerations"][0]["key"] == "nvidia.com/gpu"
    assert two["spec"]["activeDeadlineSeconds"] == 300 + STARTUP_MARGIN_S
    assert pod["containers"][0]["command"][-1] == "bazel test --config=gpu //examples/torch_gpu:test_two_gpu"
    assert two["spec"]["template"]["spec"]["containers"][0]["env"][0] == {"name": "TORCH_TEST_GPU_COUNT",
                                                                         "value": "2"}

    scripts = sorted((out / "slurm").glob("*.sbatch"))
    assert len(scripts) == len(manifest.tests)
    for script in scripts:
        directives = {d.option: d.value for d in render_slurm.parse_directives(script.read_text(), script.name)}
        assert directives["gres"].startswith("gpu:")
    l4 = [s.read_text() for s in scripts if "--partition=l4" in s.read_text()]
    assert all("--constraint=l4&pcie&cuda12_2" in text for text in l4)

    matrix = json.loads((out / "gha-matrix.json").read_text())
    render_gha.validate([matrix])
    targets = " ".join(e["targets"] for e in matrix["include"]).split()
    assert sorted(targets) == sorted(t.label for t in manifest.tests)
    assert (out / "gantt.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_infeasible_tests_reported_with_reasons(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tests = (
        _test("//t:ok"),
        _test("//t:sixteen", gpus=16),
        _test("//t:new_cuda", cuda_min="12.8"),
        _test("//t:huge", vram=200),
        _test("//t:b200", gpu_model="b200"),
        _test("//t:l4_big_cuda", gpu_model="l4", cuda_min="12.4"),
    )
    path = tmp_path / "m.json"
    schema.write(schema.Manifest(tests=tests), path)
    out = tmp_path / "plan"
    assert plan_cli.main([str(path), "--fleet", str(FLEET), "--out", str(out), "--render", "k8s,slurm"]) == 3
    err = capsys.readouterr().err
    plan = json.loads((out / "plan.json").read_text())
    reasons = {i["label"]: " ".join(i["reasons"]) for i in plan["infeasible"]}
    assert [p["label"] for p in plan["placements"]] == ["//t:ok"]
    assert sorted(reasons) == sorted(t.label for t in tests if t.label != "//t:ok")
    assert "needs 16 GPUs on one node; largest node has 8" in reasons["//t:sixteen"]
    assert "needs CUDA >= 12.8; fleet has at most 12.4" in reasons["//t:new_cuda"]
    assert "needs 200 GB VRAM per GPU; largest GPU has 80 GB" in reasons["//t:huge"]
    assert "needs GPU model b200; fleet has h100, l4" in reasons["//t:b200"]
    assert "pool l4-pcie: CUDA 12.2 < 12.4" in reasons["//t:l4_big_cuda"]
    assert "infeasible: //t:sixteen" in err


def test_policies_reserve_differently() -> None:
    fleet = Fleet((Pool("n", 2, 8, "h100", 80, "12.4", "nvlink"),))
    light = {"gpu_util": 0.2}  # measured: a fifth of a GPU's compute, so compute lets them share
    tests = [_test("//t:two", gpus=2, vram=10, **light), _test("//t:one_a", vram=10, **light),
             _test("//t:one_b", vram=10, **light), _test("//t:unknown_mem", vram=0, **light),
             _test("//t:excl", exclusive=True)]
    excl = {p.label: p for p in schedule(tests, fleet, PolicyConfig("exclusive")).placements}
    packed = {p.label: p for p in schedule(tests, fleet, PolicyConfig("packed")).placements}
    assert len(excl["//t:two"].gpus) == 8 and excl["//t:two"].whole_node
    assert excl["//t:one_a"].gpus != excl["//t:one_b"].gpus or excl["//t:one_a"].node != excl["//t:one_b"].node
    assert len(packed["//t:two"].gpus) == 2 and packed["//t:two"].slot_fraction == 0.25
    assert packed["//t:unknown_mem"].slot_fraction == 1.0  # unknown VRAM never shares
    assert packed["//t:excl"].whole_node and len(packed["//t:excl"].gpus) == 8
    # Two 10 GB tests share one GPU (10 GB × 1.1 headroom fits one 20 GB slot).
    shared = [p for p in packed.values() if p.slot_fraction == 0.25 and len(p.gpus) == 1]
    assert len(shared) == 2


def test_packing_never_puts_more_than_a_gpu_of_compute_on_a_gpu() -> None:
    fleet = Fleet((Pool("n", 1, 1, "h100", 80, "12.4"),))
    tests = [_test("//t:busy", vram=4, gpu_util=0.9), _test("//t:light_a", vram=4, gpu_util=0.2),
             _test("//t:light_b", vram=4, gpu_util=0.24), _test("//t:unmeasured", vram=4),
             _test("//t:light_c", vram=4, gpu_util=0.1)]
    plan = {p.label: p for p in schedule(tests, fleet, PolicyConfig("packed")).placements}
    assert plan["//t:busy"].slot_fraction == 1.0 and plan["//t:unmeasured"].slot_fraction == 1.0
    assert {plan[f"//t:light_{x}"].slot_fraction for x in "abc"} == {0.25}
    events = sorted((t, kind, p.slot_fraction) for p in plan.values() for t, kind in ((p.start_s, 1), (p.end_s, 0)))
    load = 0.0
    for _, kind, share in events:
        load += share if kind else -share
        assert load <= 1 + 1e-9
    # Headroom: 0.24 x 1.1 no longer fits one quarter-GPU slot.
    roomy = schedule(tests, fleet, PolicyConfig("packed", compute_headroom=0.1)).placements
    assert next(p for p in roomy if p.label == "//t:light_b").slot_fraction == 0.5
    # The memory-only model (today's) shares the compute-bound tests too.
    memory_only = schedule(tests, fleet, PolicyConfig("packed", compute_aware=False)).placements
    assert {p.slot_fraction for p in memory_only} == {0.25}
    assert max(p.end_s for p in memory_only) < max(p.end_s for p in plan.values())


def test_bad_gpu_util_is_named() -> None:
    doc = schema.to_dict(schema.Manifest(tests=(_test("//t:a", gpu_util=0.5),)))
    assert schema.from_dict(doc).tests[0].gpu_util == 0.5
    doc["tests"][0]["gpu_util"] = 1.5
    with pytest.raises(schema.ManifestError, match=r"tests\[0\].gpu_util: expected a number in \[0, 1\] or null"):
        schema.from_dict(doc)


def test_packing_never_oversubscribes_a_gpu() -> None:
    rng = random.Random(3)
    fleet = Fleet((Pool("a", 3, 8, "h100", 80, "12.4", "nvlink"), Pool("b", 2, 4, "l4", 24, "12.2")))
    tests = [_test(f"//t:{i}", gpus=rng.choice([1, 1, 2, 4, 8]), vram=rng.choice([0, 2, 7, 20, 60]),
                   duration=rng.uniform(1, 100)) for i in range(400)]
    plan = schedule(tests, fleet, PolicyConfig("packed"))
    assert len(plan.placements) + len(plan.infeasible) == 400
    events = []
    for p in plan.placements:
        for g in p.gpus:
            events += [(p.start_s, 1, (p.node, g), p.slot_fraction), (p.end_s, 0, (p.node, g), -p.slot_fraction)]
    load: dict = {}
    for _, _, gpu, delta in sorted(events):  # ends (0) before starts (1) at equal times
        load[gpu] = load.get(gpu, 0) + delta
        assert load[gpu] <= 1 + 1e-9


def test_ten_thousand_tests_all_planned_once() -> None:
    rng = random.Random(11)
    fleet = Fleet((Pool("n", 64, 8, "h100", 80, "12.4", "nvlink"),))
    tests = [_test(f"//b:t{i}", gpus=rng.choice([1, 1, 1, 2, 4, 8]), vram=rng.uniform(2, 80),
                   duration=rng.lognormvariate(4, 1)) for i in range(10_000)]
    for policy in ("exclusive", "packed"):
        plan = schedule(tests, fleet, PolicyConfig(policy))
        assert len({p.label for p in plan.placements}) == 10_000 and not plan.infeasible
        m = compute(plan, fleet)
        assert m.makespan_s >= m.reserved_lower_bound_s - 1e-6


def test_metrics_lower_bound() -> None:
    fleet = Fleet((Pool("n", 1, 2, "h100", 80, "12.4"),))
    plan = schedule([_test("//t:a", duration=100), _test("//t:b", gpus=2, duration=10, vram=0)],
                    fleet, PolicyConfig("exclusive"))
    m = compute(plan, fleet)
    assert m.lower_bound_s == max((100 + 2 * 10) / 2, 100)
    assert m.makespan_s == 110 and m.gpu_hours_reserved == round((100 + 2 * 10) / 3600, 4)


# ---------------------------------------------------------------- bad fleet input

@pytest.mark.parametrize("pool_edit,message", [
    ({"gpus_per_node": 0}, "pools[0].gpus_per_node: expected int in [1, 64], got 0"),
    ({"vram_gb": -80}, "pools[0].vram_gb: expected a finite number in (0, 65536] (GiB per GPU), got -80"),
    ({"nodes": "four"}, "pools[0].nodes: expected int in [1, 10000], got 'four'"),
    ({"cuda": 12.4}, "pools[0].cuda: expected a quoted version like \"12.4\", got 12.4"),
    ({"gpus": 8}, "pools[0].gpus: unknown field"),
])
def test_bad_fleet_errors_name_the_field(tmp_path: Path, pool_edit: dict, message: str,
                                         manifest_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = yaml.safe_load(FLEET.read_text())
    doc["pools"][0].update(pool_edit)
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump(doc))
    with pytest.raises(fleet_mod.FleetError) as err:
        fleet_mod.read(path)
    assert message in str(err.value)
    assert plan_cli.main([str(manifest_path), "--fleet", str(path), "--out", str(tmp_path / "p")]) == 1
    assert message in capsys.readouterr().err


def test_example_fleet_in_docs_is_valid() -> None:
    repo = Path(__file__).resolve().parents[3]
    fleet = fleet_mod.read(repo / "examples" / "fleet.yaml")
    assert fleet.total_gpus > 0


# ---------------------------------------------------------------- renderer checks catch bad output

def _one_job() -> dict:
    fleet = fleet_mod.read(FLEET)
    test = _test("//examples/torch_gpu:test_cuda_ops")
    plan = schedule([test], fleet, PolicyConfig("packed"))
    return render_k8s.render(plan, {test.label: test}, fleet)[0]


@pytest.mark.parametrize("edit,message", [
    (lambda j: j["spec"]["template"]["spec"].__setitem__("nodeSelectr", {}), "lost in V1Job round trip"),
    (lambda j: j["spec"]["template"]["spec"]["containers"][0].pop("name"), "rejected by kubernetes.client"),
    (lambda j: j["spec"]["template"]["spec"]["nodeSelector"].__setitem__("torch-ci/cuda", "12.4 "),
     "not a valid label value"),
    (lambda j: j["spec"]["template"]["spec"]["containers"][0]["resources"].__setitem__("limits", {}),
     "nvidia.com/gpu"),
    (lambda j: j["metadata"].__setitem__("name", "Bad_Name"), "DNS-1123"),
])
def test_k8s_validation_rejects_bad_jobs(edit, message: str) -> None:
    job = _one_job()
    render_k8s.validate_job(job)
    edit(job)
    with pytest.raises(render_k8s.RenderError, match=message):
        render_k8s.validate_job(job)


def test_job_names_are_dns_labels_and_unique() -> None:
    long = "//" + "very/deep/package/" * 6 + ":Test_With_CAPS"
    names = {job_name(lbl) for lbl in (long, long + "2", "//a:b", "//a/b:c")}
    assert len(names) == 4 and all(len(n) <= 63 and render_k8s._DNS_LABEL.match(n) for n in names)


@pytest.mark.parametrize("line,message", [
    ("#SBATCH --time=ten", "invalid --time value 'ten'"),
    ("#SBATCH --gres=gpu:0", "invalid --gres value"),
    ("#SBATCH --gress=gpu:1", "unknown sbatch option --gress"),
    ("#SBATCH --constraint=h100&&nvlink", "invalid --constraint"),
    ("#SBATCH --job-name=x", "--job-name repeated"),
])
def test_slurm_strict_parser_rejects(line: str, message: str) -> None:
    good = "#!/bin/bash\n#SBATCH --job-name=x\n#SBATCH --gres=gpu:2\n#SBATCH --time=1-02:03:00\n"
    render_slurm.parse_directives(good, "ok.sbatch")
    with pytest.raises(render_slurm.RenderError, match=r"bad.sbatch: line 5: " + message.replace("-", "-")):
        render_slurm.parse_directives(good + line + "\necho\n", "bad.sbatch")


def test_slurm_time_format() -> None:
    assert render_slurm.slurm_time(60) == "00:01:00"
    assert render_slurm.slurm_time(3601) == "01:01:00"
    assert render_slurm.slurm_time(2 * 86400 + 90) == "2-00:02:00"


@pytest.mark.skipif(not render_slurm.sbatch_available(), reason="slurm-client (sbatch) not installed")
def test_sbatch_itself_accepts_rendered_and_rejects_bad(manifest_path: Path) -> None:
    fleet = fleet_mod.read(FLEET)
    manifest = schema.read(manifest_path)
    plan = schedule(manifest.tests, fleet, PolicyConfig("packed"))
    tests = {t.label: t for t in manifest.tests}
    scripts = render_slurm.render(plan, tests, fleet, "test")
    assert render_slurm.check_with_sbatch(scripts, fleet) == len(manifest.tests)
    nodes = render_slurm.render(plan, tests, fleet)
    assert render_slurm.check_with_sbatch(nodes, fleet) == len({p.node for p in plan.placements})
    with pytest.raises(render_slurm.RenderError, match="Invalid --time"):
        render_slurm.check_with_sbatch({"bad.sbatch": "#!/bin/bash\n#SBATCH --time=bogus\ntrue\n"}, fleet)


def test_gha_matrix_splits_at_256(tmp_path: Path) -> None:
    fleet = Fleet((Pool("n", 300, 1, "l4", 24, "12.2"),))
    tests = [_test(f"//t:{i}", vram=0, duration=10) for i in range(300)]
    plan = schedule(tests, fleet, PolicyConfig("exclusive"))
    matrices = render_gha.render(plan, {t.label: t for t in tests}, fleet)
    render_gha.validate(matrices)
    assert [len(m["include"]) for m in matrices] == [256, 44]
    with pytest.raises(render_k8s.RenderError, match="limit of 256"):
        render_gha.validate([{"include": matrices[0]["include"] + matrices[1]["include"]}])


def test_interconnect_preference_falls_back_with_warning() -> None:
    fleet = Fleet((Pool("p", 1, 8, "l4", 24, "12.2", "pcie"),))
    test = dataclasses.replace(_test("//t:nv", gpus=2), interconnect="nvlink")
    plan = schedule([test], fleet, PolicyConfig("packed"))
    assert plan.placements and "prefers nvlink" in plan.warnings[0]


def test_real_bazel_query_of_this_repo_end_to_end(tmp_path: Path) -> None:
    """Fixtures captured with Bazel 7.7.1 from this repository's own GPU targets (both formats)."""
    manifests = []
    for name in ("query_repo_gpu_tests.xml", "query_repo_gpu_tests.streamed_jsonproto.jsonl"):
        path = tmp_path / (name + ".yaml")
        assert export_cli.main(["--query-output", str(QUERIES / name), "--output", str(path)]) == 0
        manifests.append(schema.read(path))
    assert manifests[0].tests == manifests[1].tests
    labels = [t.label for t in manifests[0].tests]
    assert "//examples/torch_gpu:test_cuda_ops" in labels and "//examples/torch_gpu:test_two_gpu" in labels
    two = next(t for t in manifests[0].tests if t.label == "//examples/torch_gpu:test_two_gpu")
    assert two.gpu_count == 2
    out = tmp_path / "plan"
    assert plan_cli.main([str(tmp_path / "query_repo_gpu_tests.xml.yaml"), "--fleet", str(FLEET), "--out",
                          str(out), "--render", "k8s,slurm,gha"]) == 0
    jobs = list(yaml.safe_load_all((out / "k8s-jobs.yaml").read_text()))
    render_k8s.validate_all(jobs)
    nodes = {p["node"] for p in json.loads((out / "plan.json").read_text())["placements"]}
    assert len(jobs) == len(nodes) == len(list((out / "slurm").glob("*.sbatch")))
