"""`--run_under` wrapper: take GPUs, export them to the test, exec the test (which keeps the locks).

Exec (not fork+wait) so the test process itself holds the flock fds: the locks live exactly as long
as the test, Bazel's timeout signals reach the test directly, and the exit code is the test's own.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Callable, Mapping, Sequence

from tools.contract import runtime
from tools.gpu_assign import gpu_flocks as locks
from tools.gpu_assign.probe import Gpu, ProbeError, SmiRunner, probe

EXIT_NO_GPU = 2
EXIT_TIMEOUT = 3

Exec = Callable[[Sequence[str], Mapping[str, str]], int]


def exec_command(argv: Sequence[str], env: Mapping[str, str]) -> int:
    try:
        os.execvpe(argv[0], list(argv), dict(env))
    except OSError as err:
        print(f"gpu_assign: cannot run {argv[0]!r}: {err}", file=sys.stderr)
    return 127


def _number(kind: type[int] | type[float], minimum: float, maximum: float = math.inf) -> Callable[[str], float]:
    """argparse type: a finite number in [minimum, maximum] (argparse turns the ValueError into exit 2)."""
    def parse(text: str) -> float:
        value = kind(text)
        if not (math.isfinite(value) and minimum <= value <= maximum):
            raise ValueError(text)
        return value
    parse.__name__ = f"{kind.__name__} in [{minimum:g}, {maximum:g}]"
    return parse


def parse_args(argv: Sequence[str], env: Mapping[str, str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="gpu_assign", description=__doc__,
                                     usage="%(prog)s [options] -- COMMAND [ARGS...]")
    # Defaults come from the environment as strings, so argparse checks them like typed options.
    parser.add_argument("--gpus", type=_number(int, 0), default=env.get(runtime.GPU_COUNT) or "0",
                        help=f"GPUs the test needs (default ${runtime.GPU_COUNT}, 0 = run without assignment)")
    parser.add_argument("--vram-gb", type=_number(float, 0), default=env.get(runtime.VRAM_GB) or "0",
                        help=f"GiB per GPU (default ${runtime.VRAM_GB}; 0 = unknown, take whole GPUs)")
    parser.add_argument("--slots-per-gpu", type=_number(int, 1, 64),
                        default=env.get("TORCH_GPU_SLOTS_PER_GPU") or str(locks.DEFAULT_SLOTS_PER_GPU))
    parser.add_argument("--contiguous", action="store_true", help="adjacent GPUs only")
    parser.add_argument("--timeout", type=_number(float, 0), default=env.get("TORCH_GPU_WAIT_TIMEOUT_S") or "3600",
                        help="seconds to wait for free GPUs before failing")
    parser.add_argument("--lock-dir", default=None, help=f"default ${locks.LOCK_DIR_ENV} or {locks.DEFAULT_LOCK_DIR}")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(list(argv))
    if args.command and args.command[0] == "--":
        args.command = args.command[1:]
    if not args.command:
        parser.error("missing COMMAND after --")
    return args


def child_env(env: Mapping[str, str], gpus: Sequence[Gpu], fraction: float) -> dict[str, str]:
    """CUDA sees exactly the held GPUs, in PCI bus order so indices match nvidia-smi."""
    out = dict(env)
    out["CUDA_VISIBLE_DEVICES"] = ",".join(str(g.index) for g in gpus)
    out["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"
    out[runtime.GPU_MEMORY_FRACTION] = f"{fraction:g}"
    return out


def main(argv: Sequence[str], env: Mapping[str, str] | None = None, smi: SmiRunner | None = None,
         run: Exec = exec_command) -> int:
    env = dict(os.environ if env is None else env)
    args = parse_args(argv, env)
    if args.gpus == 0:
        return run(args.command, env)  # not a GPU test: nothing to assign
    try:
        gpus = probe(env, smi)
    except ProbeError as err:
        print(f"gpu_assign: this test needs {args.gpus} GPU(s) but none are usable: {err}", file=sys.stderr)
        return EXIT_NO_GPU
    if args.gpus > len(gpus):
        print(f"gpu_assign: this test needs {args.gpus} GPUs; only {len(gpus)} visible", file=sys.stderr)
        return EXIT_NO_GPU
    memory = min(g.memory_gb for g in gpus)
    slots = locks.slots_needed(args.vram_gb, memory, args.slots_per_gpu)
    directory = locks.lock_dir({locks.LOCK_DIR_ENV: args.lock_dir} if args.lock_dir else env)
    try:
        held = locks.acquire(gpus, directory, args.gpus, slots, args.slots_per_gpu,
                             args.contiguous, args.timeout)
    except locks.AssignTimeout as err:
        print(f"gpu_assign: {err}", file=sys.stderr)
        return EXIT_TIMEOUT
    except OSError as err:  # LockDirError, or the file system refused (read-only, full, EIO)
        print(f"gpu_assign: cannot take GPU locks: {err}".replace("\n", " "), file=sys.stderr)
        return EXIT_NO_GPU
    for fd in held.fds:
        os.set_inheritable(fd, True)  # the exec'd test inherits, and so holds, the locks
    child = child_env(env, held.gpus, held.memory_fraction)
    # One line in the test's log says which GPUs it ran on (what a user looks for first).
    print(f"gpu_assign: {env.get('TEST_TARGET', 'test')}: CUDA_VISIBLE_DEVICES={child['CUDA_VISIBLE_DEVICES']} "
          f"({', '.join(g.name for g in held.gpus)}), memory fraction {held.memory_fraction:g}", file=sys.stderr)
    return run(args.command, child)
