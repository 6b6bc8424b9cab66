"""Gantt chart of a plan (one row per GPU, one bar per test) for people who would rather look.

Tests sharing a GPU are stacked inside its row (bar height = their share of the GPU) and hatched,
so a shared GPU reads as several thin bars side by side in time, never as one bar over another.
"""

from __future__ import annotations

from pathlib import Path

from tools.plan.scheduler import Plan

_COLORS = {1: "tab:blue", 2: "tab:green", 4: "tab:orange", 8: "tab:red"}


def stack_offsets(spans: list[tuple[float, float, float]]) -> list[float]:
    """Vertical offset (0..1) of each (start, end, share) bar within its GPU row: the lowest level at
    which it overlaps no bar running at the same time (first fit, in start order)."""
    order = sorted(range(len(spans)), key=lambda i: (spans[i][0], spans[i][1]))
    offsets = [0.0] * len(spans)
    placed: list[int] = []
    for i in order:
        start, end, share = spans[i]
        busy = sorted((offsets[j], offsets[j] + spans[j][2]) for j in placed
                      if spans[j][0] < end and start < spans[j][1])
        level = 0.0
        for low, high in busy:
            if level + share <= low + 1e-9:
                break
            level = max(level, high)
        offsets[i] = min(level, max(0.0, 1 - share))  # fragmented: stay inside the row, overlapping
        placed.append(i)
    return offsets


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
    per_row: dict[int, list[tuple[float, float, float, str]]] = {}
    for placement in plan.placements:
        color = _COLORS.get(placement.gpu_count, "tab:purple")
        for gpu in placement.gpus:
            per_row.setdefault(index[(placement.node, gpu)], []).append(
                (placement.start_s, placement.end_s, placement.slot_fraction, color))
    bars: dict[tuple[float, str, float], list[tuple[float, float]]] = {}
    for y, spans in per_row.items():
        offsets = stack_offsets([(start, end, share) for start, end, share, _ in spans])
        for (start, end, share, color), offset in zip(spans, offsets, strict=True):
            bars.setdefault((y - 0.4 + 0.8 * offset, color, share), []).append((start, end - start))
    for (bottom, color, share), spans in bars.items():  # one broken_barh per level/colour: big plans stay fast
        ax.broken_barh(spans, (bottom, 0.8 * share), facecolors=color, edgecolors="black",
                       linewidth=0.2, alpha=0.7, hatch="//" if share < 1 else None)
    ax.set_yticks(range(len(ordered)))
    ax.set_yticklabels([f"{node}/gpu{gpu}" for node, gpu in ordered],
                       fontsize=6 if len(ordered) > 40 else 8)
    ax.set_xlabel("seconds from start")
    ax.set_title(title or f"GPU test plan ({plan.policy.name})")
    ax.invert_yaxis()
    handles = [Patch(color=c, label=f"{n} GPU") for n, c in _COLORS.items()]
    handles.append(Patch(facecolor="white", edgecolor="black", hatch="//", label="shares its GPU (height = share)"))
    ax.legend(handles=handles, loc="upper right")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=80)
    plt.close(fig)
