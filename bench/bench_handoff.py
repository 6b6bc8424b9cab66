"""Hand-off benchmark: engine jobs submitted and Bazel starts for 10,000 GPU tests, per form.

Plans bench_plan's synthetic workload (64 nodes x 8 GPUs, `packed`), renders it for Slurm and
Kubernetes in both hand-off forms (`node`: one job per planned node running one `bazel test` over
its targets; `test`: one job per test), runs each engine's checks, and prints per form: jobs
submitted, Bazel starts (one per job), tests per Bazel start, bytes rendered and render+check time.
Figures only; no asserts.

    python bench/bench_handoff.py [--tests 10000] [--seed 20240601]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_plan import bench_setup  # noqa: E402

from tools.plan import render_k8s, render_slurm  # noqa: E402
from tools.plan.jobs import HANDOFFS  # noqa: E402
from tools.plan.policies import PolicyConfig  # noqa: E402
from tools.plan.scheduler import schedule  # noqa: E402


def main() -> int:
    fleet, tests = bench_setup(__doc__)
    by_label = {t.label: t for t in tests}
    plan = schedule(tests, fleet, PolicyConfig("packed"))
    print(f"workload: {len(plan.placements)} tests planned on 64 nodes x 8 GPUs (packed)")
    for handoff in HANDOFFS:
        start = time.perf_counter()
        scripts = render_slurm.render(plan, by_label, fleet, handoff)
        for name, text in scripts.items():
            render_slurm.parse_directives(text, name)
        slurm_s = time.perf_counter() - start
        start = time.perf_counter()
        jobs = render_k8s.render(plan, by_label, fleet, handoff=handoff)
        render_k8s.validate_all(jobs)
        k8s_text = render_k8s.dumps(jobs)
        k8s_s = time.perf_counter() - start
        slurm_bytes = sum(len(t) for t in scripts.values())
        print(f"{handoff:4s} hand-off: Slurm {len(scripts)} jobs submitted = {len(scripts)} Bazel starts "
              f"({len(plan.placements) / len(scripts):.1f} tests per start), {slurm_bytes / 1e6:.2f} MB of sbatch, "
              f"render+check {slurm_s:.2f} s | Kubernetes {len(jobs)} Jobs = {len(jobs)} pods/Bazel starts, "
              f"{len(k8s_text) / 1e6:.2f} MB YAML, render+check {k8s_s:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
