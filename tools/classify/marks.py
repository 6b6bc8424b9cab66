"""Findings from pytest marks: shared by a test's own marks and the marks of fixture parameters."""

from __future__ import annotations

from tools.classify import conventions
from tools.classify.evidence import (
    ALWAYS_SKIP_KEY,
    GPU,
    GPU_REASON,
    MANUAL_CPU,
    MANUAL_GPU,
    MARK_SKIP_KEY,
    MOCK,
    SKIP,
    UNKNOWN,
    VRAM,
    Finding,
)
from tools.classify.guards import SKIPS_OFF_CUDA
from tools.classify.values import Ext, MarkV, MockV, ReqV, SkipV, Value


def mark_findings(marks: list[Value], where: str) -> list[Finding]:
    """The findings marks evaluated in world 0 give (active skips, requirements, CUDA mocks), each under
    `where`: the same for a test's own marks, its parameters' and a parametrized fixture's."""
    out: list[Finding] = []
    for m in marks:
        if isinstance(m, Ext) and m.path.startswith("pytest.mark.") and m.path.count(".") == 2:
            m = bare_mark(m.path[len("pytest.mark."):], where)  # `marks=pytest.mark.gpu`, no call
        if isinstance(m, SkipV):
            if m.active is True:
                out.append(Finding(SKIP, (where, m.where), vram_gb=m.vram_gb,
                                   key=(ALWAYS_SKIP_KEY if m.always else MARK_SKIP_KEY) + m.where + (
                                       GPU_REASON if m.gpu_reason else "")))
                if m.off_cuda:  # skipped because a device it tests is not CUDA: a GPU need
                    out.append(Finding(GPU, (where, m.where + " skips unless on CUDA"), key=SKIPS_OFF_CUDA))
            elif m.active is None and m.cuda_related:
                out.append(Finding(UNKNOWN, (where, m.where + " (condition cannot be evaluated statically)")))
        elif isinstance(m, ReqV):
            kind = MANUAL_CPU if m.cpu else MANUAL_GPU if m.manual else VRAM if m.hint_only else GPU
            out.append(Finding(kind, (where, m.where), m.gpu_count, m.vram_gb,
                               key="requirement" if kind == GPU else ""))
        elif isinstance(m, MockV):
            out.append(Finding(MOCK, (where, m.where + " patches torch.cuda")))
    return out


def bare_mark(name: str, where: str) -> Value:
    """`pytest.mark.<name>` used as a mark without being called (in pytestmark or pytest.param)."""
    if name == "skip":
        return SkipV(True, where.split(": ", 1)[0] + ": skip", always=True)
    req = conventions.mark_requirement(name, [], {})
    if req is not None:
        loc = where.split(": ", 1)[0]
        return ReqV(req.gpu_count, req.vram_gb, f"{loc}: @pytest.mark.{name}: {req.note}", req.manual, req.cpu,
                    req.hint_only)
    return MarkV(name, (), (), where)

