"""CLI: `bazel run //tools:plan -- MANIFEST --fleet FLEET.yaml [--policy packed] [--out DIR] [--render ...]`.

Exit codes: 0 all tests planned; 3 some tests are infeasible (listed, with reasons); 1 bad input or
a rendering that failed its engine's checks.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from tools.bazel_paths import in_workspace
from tools.gpu_manifest import schema
from tools.plan import fleet as fleet_mod
from tools.plan import gantt, render_gha, render_k8s, render_slurm
from tools.plan.jobs import HANDOFFS
from tools.plan.metrics import compute
from tools.plan.policies import POLICIES, PolicyConfig
from tools.plan.scheduler import Plan, schedule

RENDERERS = ("k8s", "slurm", "gha", "gantt")
EXIT_INFEASIBLE = 3


def plan_document(plan: Plan, metrics: dict[str, Any], other: dict[str, Any] | None = None) -> dict[str, Any]:
    placements = []
    for p in plan.placements:
        entry = asdict(p)
        entry["gpus"] = list(p.gpus)
        placements.append(entry)
    return {
        "schema_version": 1,
        "policy": asdict(plan.policy),
        "metrics": metrics,
        # packed only: the same plan made under the other compute model (memory-only vs compute-aware)
        "metrics_other_compute_model": other,
        "placements": placements,
        "infeasible": [{"label": i.label, "reasons": list(i.reasons)} for i in plan.infeasible],
        "warnings": list(plan.warnings),
    }


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="plan", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("manifest", type=Path)
    parser.add_argument("--fleet", type=Path, required=True)
    parser.add_argument("--policy", choices=POLICIES, default="packed")
    parser.add_argument("--slots-per-gpu", type=int, default=PolicyConfig.slots_per_gpu)
    parser.add_argument("--headroom", type=float, default=PolicyConfig.headroom)
    parser.add_argument("--compute-headroom", type=float, default=PolicyConfig.compute_headroom,
                        help="packed: extra compute share on top of each test's measured GPU utilisation")
    parser.add_argument("--ignore-compute", action="store_true",
                        help="packed: share GPUs by memory only, as if shared tests ran at full speed "
                             "(the pre-utilisation model; optimistic for compute-bound tests)")
    parser.add_argument("--out", type=Path, default=Path("gpu_plan"))
    parser.add_argument("--render", default="k8s,slurm,gha",
                        help=f"comma-separated subset of {','.join(RENDERERS)} ('' for none)")
    parser.add_argument("--handoff", choices=HANDOFFS, default="node",
                        help="k8s/slurm: one job per planned node running `bazel test` over its targets "
                             "(default), or one job per test")
    parser.add_argument("--image", default=render_k8s.DEFAULT_IMAGE, help="container image for k8s Jobs")
    parser.add_argument("--namespace", default=None)
    parser.add_argument("--sbatch-check", choices=("auto", "yes", "no"), default="auto",
                        help="also run Slurm's own `sbatch --test-only` (auto: when installed)")
    return parser.parse_args(argv)


def _resolve(path: Path) -> Path:
    return in_workspace(path)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    renders = [r for r in args.render.split(",") if r]
    unknown = sorted(set(renders) - set(RENDERERS))
    if unknown:
        print(f"plan: error: --render: unknown renderer(s) {unknown}; choose from {RENDERERS}", file=sys.stderr)
        return 1
    try:
        manifest = schema.read(_resolve(args.manifest))
        fleet = fleet_mod.read(_resolve(args.fleet))
        policy = PolicyConfig(args.policy, args.slots_per_gpu, args.headroom,
                              compute_aware=not args.ignore_compute, compute_headroom=args.compute_headroom)
    except (schema.ManifestError, fleet_mod.FleetError, OSError, ValueError) as err:
        print(f"plan: error: {err}", file=sys.stderr)
        return 1
    plan = schedule(manifest.tests, fleet, policy)
    metrics = compute(plan, fleet)
    # The other compute model, for comparison: what packing by memory alone would promise.
    other = replace(policy, compute_aware=not policy.compute_aware)
    other_metrics = compute(schedule(manifest.tests, fleet, other), fleet) if policy.name == "packed" else None
    out = _resolve(args.out)
    tests = {t.label: t for t in manifest.tests}
    try:
        document = plan_document(plan, metrics.to_dict(), other_metrics.to_dict() if other_metrics else None)
        schema.atomic_write_text(out / "plan.json", json.dumps(document, indent=2) + "\n")
        if "k8s" in renders:
            jobs = render_k8s.render(plan, tests, fleet, args.image, args.namespace, args.handoff)
            render_k8s.validate_all(jobs)
            schema.atomic_write_text(out / "k8s-jobs.yaml", render_k8s.dumps(jobs))
        if "slurm" in renders:
            scripts = render_slurm.render(plan, tests, fleet, args.handoff)
            for name, text in scripts.items():
                render_slurm.parse_directives(text, name)
            if args.sbatch_check == "yes" or (args.sbatch_check == "auto" and render_slurm.sbatch_available()):
                render_slurm.check_with_sbatch(scripts, fleet)
            for name, text in scripts.items():
                schema.atomic_write_text(out / "slurm" / name, text)
            schema.atomic_write_text(out / "slurm" / "submit.sh", render_slurm.submit_script(list(scripts)))
            jobs_doc = render_slurm.jobs_document(plan, tests, fleet, args.handoff)
            schema.atomic_write_text(out / "slurm" / "jobs.json", json.dumps(jobs_doc, indent=2) + "\n")
        if "gha" in renders:
            matrices = render_gha.render(plan, tests, fleet)
            render_gha.validate(matrices)
            for i, matrix in enumerate(matrices):
                name = "gha-matrix.json" if i == 0 else f"gha-matrix-{i + 1}.json"
                schema.atomic_write_text(out / name, json.dumps(matrix, indent=2) + "\n")
        if "gantt" in renders:
            gantt.render_png(plan, out / "gantt.png", f"{len(plan.placements)} GPU tests, {policy.name} policy")
    except (render_k8s.RenderError, OSError) as err:
        print(f"plan: error: {err}", file=sys.stderr)
        return 1
    m = metrics
    ratio = f"{m.makespan_over_lower_bound:.3f}" if m.makespan_over_lower_bound is not None else "n/a"
    print(f"policy {policy.name}: {m.tests_planned} planned, {m.tests_infeasible} infeasible; "
          f"makespan {m.makespan_s:.0f}s (lower bound {m.lower_bound_s:.0f}s, ratio {ratio}); "
          f"GPU-hours reserved {m.gpu_hours_reserved:.2f} / requested {m.gpu_hours_requested:.2f}; "
          f"idle {m.idle_fraction:.1%}; wrote {out}")
    if other_metrics is not None:
        label = "memory-only sharing" if policy.compute_aware else "compute-aware sharing"
        print(f"  ({label} would plan makespan {other_metrics.makespan_s:.0f}s, GPU-hours reserved "
              f"{other_metrics.gpu_hours_reserved:.2f})")
    for warning in plan.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    for item in plan.infeasible:
        print(f"infeasible: {item.label}: {'; '.join(item.reasons)}", file=sys.stderr)
    return EXIT_INFEASIBLE if plan.infeasible else 0


if __name__ == "__main__":
    sys.exit(main())
