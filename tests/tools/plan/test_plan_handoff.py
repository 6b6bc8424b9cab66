"""Batched hand-off: one engine job per planned node running `bazel test` over the node's targets."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
import yaml

from tools.gpu_manifest import schema
from tools.gpu_manifest.schema import ManifestTest, command_for
from tools.plan import __main__ as plan_cli
from tools.plan import render_k8s, render_slurm
from tools.plan.fleet import Fleet, Pool
from tools.plan.jobs import engine_jobs
from tools.plan.policies import PolicyConfig
from tools.plan.scheduler import schedule

FLEET = Path(__file__).resolve().parent / "fixtures" / "fleet_example.yaml"
# A label Bazel accepts that a shell would expand: it must reach Bazel verbatim.
ODD = "//t:a$(touch x)b"


def _test(label: str, gpus: int = 1, vram: float = 4, duration: float = 60, **kw) -> ManifestTest:
    return ManifestTest(label=label, gpu_count=gpus, vram_gb=vram, size="medium", timeout_s=300,
                        estimated_duration_s=duration, duration_source="size", command=command_for(label), **kw)


def _plan(tests: list[ManifestTest], fleet: Fleet, policy: str = "packed"):
    return schedule(tests, fleet, PolicyConfig(policy)), {t.label: t for t in tests}


def test_node_jobs_cover_every_test_once_and_hold_the_gpus_used() -> None:
    fleet = Fleet((Pool("n", 2, 8, "h100", 80, "12.4", "nvlink"),))
    tests = [_test(f"//t:one_{i}", duration=60 + i) for i in range(5)] + [_test("//t:two", gpus=2)]
    plan, by_label = _plan(tests, fleet)
    jobs = engine_jobs(plan, by_label, fleet)
    assert len(jobs) == len({p.node for p in plan.placements})
    assert sorted(label for j in jobs for label in j.labels) == sorted(by_label)
    for job in jobs:
        used = {g for p in plan.placements if p.node == job.planned_node for g in p.gpus}
        assert job.gpus == (8 if job.whole_node else len(used))
        assert job.bazel_argv()[:4] == ["bazel", "test", "--config=gpu", f"--local_resources=gpu={job.gpus}"]
    per_test = engine_jobs(plan, by_label, fleet, "test")
    assert [j.labels for j in per_test] == [(p.label,) for p in plan.placements]
    with pytest.raises(ValueError, match="handoff: expected one of"):
        engine_jobs(plan, by_label, fleet, "pod")


def test_whole_node_placement_makes_the_node_job_exclusive() -> None:
    fleet = Fleet((Pool("n", 1, 8, "h100", 80, "12.4", "nvlink"),))
    plan, by_label = _plan([_test("//t:excl", exclusive=True), _test("//t:small")], fleet)
    (job,) = engine_jobs(plan, by_label, fleet)
    assert job.whole_node and job.gpus == 8
    script = render_slurm.render(plan, by_label, fleet)[f"{job.name}.sbatch"]
    directives = {d.option: d.value for d in render_slurm.parse_directives(script, "node.sbatch")}
    assert directives["gres"] == "gpu:8" and "exclusive" in directives


def test_slurm_node_script_quotes_labels_and_collects_logs(tmp_path: Path) -> None:
    fleet = Fleet((Pool("n", 1, 4, "l4", 24, "12.2", slurm_partition="l4"),))
    plan, by_label = _plan([_test(ODD, vram=20), _test("//p/q:r", vram=20)], fleet)  # a GPU each
    (text,) = render_slurm.render(plan, by_label, fleet).values()
    run = next(line for line in text.splitlines() if line.startswith('"$bazel"'))
    assert shlex.split(run)[1:5] == ["test", "--config=gpu", "--local_resources=gpu=2", "--"]
    assert sorted(shlex.split(run)[5:]) == sorted([ODD, "//p/q:r"])
    loop = next(line for line in text.splitlines() if line.startswith("for dir in"))
    assert sorted(shlex.split(loop.removesuffix("; do"))[3:]) == ["p/q/r", "t/a$(touch x)b"]
    directives = {d.option: d.value for d in render_slurm.parse_directives(text, "n.sbatch")}
    assert directives["partition"] == "l4" and directives["gres"] == "gpu:2" and "exclusive" not in directives


def test_cli_default_is_node_handoff_and_writes_jobs_json(tmp_path: Path) -> None:
    tests = [_test("//t:a"), _test("//t:b", gpus=2), _test("//t:c", vram=0), _test("//t:d", gpu_model="l4")]
    manifest = tmp_path / "m.yaml"
    schema.write(schema.Manifest(tests=tuple(tests)), manifest)
    out = tmp_path / "plan"
    assert plan_cli.main([str(manifest), "--fleet", str(FLEET), "--out", str(out), "--render", "k8s,slurm",
                          "--sbatch-check", "no"]) == 0
    plan = json.loads((out / "plan.json").read_text())
    nodes = {p["node"] for p in plan["placements"]}
    jobs = list(yaml.safe_load_all((out / "k8s-jobs.yaml").read_text()))
    render_k8s.validate_all(jobs)
    assert len(jobs) == len(nodes)
    argv = [j["spec"]["template"]["spec"]["containers"][0]["command"] for j in jobs]
    assert sorted(a for cmd in argv for a in cmd[cmd.index("--") + 1:]) == sorted(t.label for t in tests)
    doc = json.loads((out / "slurm" / "jobs.json").read_text())
    assert doc["handoff"] == "node" and len(doc["jobs"]) == len(nodes)
    assert sorted(sum((j["labels"] for j in doc["jobs"]), [])) == sorted(t.label for t in tests)
    assert sorted(p.name for p in (out / "slurm").glob("*.sbatch")) == sorted(j["script"] for j in doc["jobs"])


def test_gantt_stacks_tests_sharing_a_gpu() -> None:
    from tools.plan.gantt import stack_offsets

    quarters = [(0, 10, 0.25), (0, 4, 0.25), (1, 9, 0.25), (2, 8, 0.25), (4, 10, 0.25)]
    offsets = stack_offsets(quarters)
    assert sorted(offsets[:4]) == [0, 0.25, 0.5, 0.75]  # four at once: four levels
    assert offsets[4] == offsets[1]  # takes the level freed at t=4
    assert stack_offsets([(0, 5, 1.0), (5, 9, 1.0)]) == [0, 0]


def test_node_job_time_limit_covers_whole_gpu_admission() -> None:
    # Four 100 s tests share one GPU in the plan (light, small), but Bazel admits them by whole GPUs:
    # on the job's one GPU they run one after another, 400 s, which the limit must cover.
    fleet = Fleet((Pool("n", 1, 8, "h100", 80, "12.4"),))
    plan, by_label = _plan([_test(f"//t:{i}", vram=4, duration=100, gpu_util=0.1) for i in range(4)], fleet)
    assert len({p.gpus for p in plan.placements}) == 1 and max(p.end_s for p in plan.placements) == 100
    (job,) = engine_jobs(plan, by_label, fleet)
    assert job.gpus == 1 and job.time_limit_s == 2 * 400 + 300 + 600
