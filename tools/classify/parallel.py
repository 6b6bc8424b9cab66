"""Run the per-file analysis in forked worker processes on multi-core machines.

The work is a list of test files, cut into contiguous chunks (files of one directory share conftests and
helpers, so a worker's memo tables serve the whole chunk). Workers are forked after the parent has read
every source, so they start with the parent's memory and nothing is pickled on the way in; each chunk's
results come back in the order the chunks were given, whichever worker finished first. Each worker keeps
its analyser across its chunks; the analysis is memoised but not order-dependent, so the output is the
same for any worker count (tests/tools/classify/test_classify_parallel.py checks it).

Where `fork` is unavailable (Windows, macOS's default) or the work is small, everything runs in-process.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")

JOBS_ENV = "TORCH_CLASSIFY_JOBS"
MIN_FILES_PER_WORKER = 64  # below this a fork costs more than it saves
CHUNKS_PER_WORKER = 8  # enough to balance load, few enough to keep memo tables warm
MAX_CHUNK = 512
MIN_CHUNK = 16  # the smallest tail chunk: a few milliseconds of work

_TASK: Callable[[Any], Any] | None = None  # what forked workers run (inherited, never pickled)


def cpu_count() -> int:
    """CPUs this process may run on (the affinity mask where the platform has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def fork_ok() -> bool:
    return sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods()


def resolve_workers(requested: int | None, items: int) -> int:
    """Worker processes for `items` files: `requested` (or $TORCH_CLASSIFY_JOBS) when given, else one per
    CPU but no more than the work is worth (MIN_FILES_PER_WORKER each); 1 (in-process) where fork is
    unavailable."""
    n = requested
    if n is None:
        env = os.environ.get(JOBS_ENV, "").strip()
        n = int(env) if env.isdigit() else 0
    if not fork_ok():
        return 1
    if n <= 0:
        return max(1, min(cpu_count(), items // MIN_FILES_PER_WORKER))
    return max(1, min(n, items))


def chunked(items: Sequence[T], workers: int) -> list[list[T]]:
    """Contiguous chunks, shrinking towards the end (guided scheduling): early chunks are large (memo tables
    stay warm across a directory), the last ones small, so workers run out of work at about the same time
    instead of one waiting for another's last big chunk."""
    if not items:
        return []
    size = max(1, min(MAX_CHUNK, -(-len(items) // (workers * CHUNKS_PER_WORKER))))
    out: list[list[T]] = []
    start = 0
    while start < len(items):
        left = len(items) - start
        n = min(size, max(min(MIN_CHUNK, size), -(-left // (2 * workers))))
        out.append(list(items[start:start + n]))
        start += n
    return out


def _call(chunk: Any) -> Any:
    assert _TASK is not None
    return _TASK(chunk)


def map_ordered(task: Callable[[list[T]], R], items: Sequence[T], workers: int,
                encode: Callable[[R], bytes] | None = None, decode: Callable[[bytes], R] | None = None) -> Iterator[R]:
    """task(chunk) for each chunk of items, in order; in `workers` forked processes when workers > 1.

    `task` and everything it reads are inherited by the fork; only each chunk (a list of plain values)
    and its result cross the process boundary, the result as `encode` makes it (decoded in this process:
    a flat encoding spares the worker pickling objects). A worker that dies (killed, out of memory) costs
    time, not results: the chunks not yet done are analysed in-process."""
    global _TASK
    chunks = chunked(items, max(workers, 1))
    done = 0
    if workers > 1 and len(chunks) > 1:
        _TASK = task if encode is None else (lambda chunk: encode(task(chunk)))
        pool = ProcessPoolExecutor(min(workers, len(chunks)), multiprocessing.get_context("fork"))
        try:
            for r in pool.map(_call, chunks):
                done += 1
                yield r if decode is None else decode(r)
        except BrokenProcessPool as exc:
            print(f"classify: a worker process died ({exc}); continuing in-process", file=sys.stderr)
        finally:
            _TASK = None
            # Idle workers exit on their own (returning their memory to the system takes a while); the
            # executor reaps them in the background, and at the latest when the interpreter exits.
            pool.shutdown(wait=False, cancel_futures=True)
    for c in chunks[done:]:
        yield task(c)
