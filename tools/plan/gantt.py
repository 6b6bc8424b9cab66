"""Gantt chart of a plan (one row per GPU, one bar per test) for people who would rather look."""

from __future__ import annotations

from pathlib import Path

from tools.plan.scheduler import Plan

_COLORS = {1: "tab:blue", 2: "tab:green", 4: "tab:orange", 8: "tab:red"}


def render_png(plan: Plan, path: Path, title: str = "") -> None:
    import matplotlib

    matplotlib.use("Agg")  # headless: CI and bazel run have no display
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    rows: dict[tuple[str, int], int] = {}
    for placement in sorted(plan.placements, key=lambda p: (p.node, p.gpus)):
        for gpu in placement.gpus:
            rows.setdefault((placement.node, gpu), 0)
    ordered = sorted(rows, key=lambda r: (r[0].rsplit("-", 1)[0], int(r[0].rsplit("-", 1)[-1])
                                          if r[0].rsplit("-", 1)[-1].isdigit() else 0, r[1]))
    index = {row: i for i, row in enumerate(ordered)}
    height = min(60.0, 1.5 + 0.25 * max(len(ordered), 1))
    fig, ax = plt.subplots(figsize=(14, height))
    bars: dict[tuple[int, str, float], list[tuple[float, float]]] = {}
    for placement in plan.placements:  # one broken_barh call per row/colour keeps big plans fast
        color = _COLORS.get(placement.gpu_count, "tab:purple")
        for gpu in placement.gpus:
            key = (index[(placement.node, gpu)], color, placement.slot_fraction)
            bars.setdefault(key, []).append((placement.start_s, placement.end_s - placement.start_s))
    for (y, color, share), spans in bars.items():
        ax.broken_barh(spans, (y - 0.4, 0.8 * share), facecolors=color, edgecolors="black",
                       linewidth=0.2, alpha=0.7)
    ax.set_yticks(range(len(ordered)))
    ax.set_yticklabels([f"{node}/gpu{gpu}" for node, gpu in ordered],
                       fontsize=6 if len(ordered) > 40 else 8)
    ax.set_xlabel("seconds from start")
    ax.set_title(title or f"GPU test plan ({plan.policy.name})")
    ax.invert_yaxis()
    ax.legend(handles=[Patch(color=c, label=f"{n} GPU") for n, c in _COLORS.items()], loc="upper right")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=80)
    plt.close(fig)
