"""A throw-away one-node Slurm 22.05 cluster (munged + slurmctld + slurmd) under one directory.

GPUs are GRES over placeholder device nodes (`gres.conf Name=gpu File=DIR/dev/nvidia[0-7]`; regular
files where mknod is not allowed): no driver is needed, Slurm itself allocates them and sets
CUDA_VISIBLE_DEVICES / SLURM_JOB_GPUS per job. No cgroups in a container: proctrack/linuxproc and
task/none. Everything (config, state, logs, sockets, pid files) lives under the directory, on
free ports, so it never touches a system Slurm and `stop()` leaves nothing running.

    python tests/tools/plan/slurm_cluster.py DIR     # start, print `export SLURM_CONF=...`, wait for Ctrl-C
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

DAEMONS = ("munged", "slurmctld", "slurmd")
NODE = "e2enode"


class ClusterUnavailable(RuntimeError):
    """Slurm cannot run here; the message says why (missing package, not root, daemon logs)."""


def missing_requirements() -> str | None:
    """Why a cluster cannot even be attempted here, or None."""
    missing = [d for d in (*DAEMONS, "sbatch", "scontrol", "sinfo") if shutil.which(d) is None]
    if missing:
        return (f"Slurm/munge not installed ({', '.join(missing)} missing): run scripts/setup.sh "
                "(apt-get install slurm-wlm slurmctld slurmd munge)")
    if os.geteuid() != 0:
        return "the test cluster runs slurmd as root (it starts jobs as the submitting user); not root here"
    return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


@dataclass
class Cluster:
    """A running cluster; `env` points Slurm's client commands at it."""

    root: Path
    gpus: int
    features: tuple[str, ...]
    cpus: int = 16

    @property
    def conf(self) -> Path:
        return self.root / "slurm.conf"

    @property
    def env(self) -> dict[str, str]:
        return dict(os.environ, SLURM_CONF=str(self.conf))

    def _pidfile(self, daemon: str) -> Path:
        return self.root / "run" / f"{daemon}.pid"

    def pids(self) -> dict[str, int]:
        """Live daemon pids (from their pid files)."""
        alive = {}
        for daemon in DAEMONS:
            try:
                pid = int(self._pidfile(daemon).read_text().strip())
                os.kill(pid, 0)
            except (OSError, ValueError):
                continue
            alive[daemon] = pid
        return alive

    def _write_config(self) -> None:
        for sub in ("run", "log", "state", "spool", "dev"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        os.chmod(self.root, 0o755)  # munged refuses group/world-writable socket and key directories
        for i in range(self.gpus):
            dev = self.root / "dev" / f"nvidia{i}"
            if not dev.exists():
                try:
                    os.mknod(dev, 0o666 | 0o020000, os.makedev(195, i))  # like the real /dev/nvidiaN
                except OSError:
                    dev.touch()
        key = self.root / "run" / "munge.key"
        key.write_bytes(os.urandom(1024))
        os.chmod(key, 0o400)
        host = socket.gethostname().split(".")[0]
        r = self.root
        self.conf.write_text("\n".join([
            "ClusterName=torche2e",
            f"SlurmctldHost={host}(127.0.0.1)",
            f"SlurmctldPort={_free_port()}",
            f"SlurmdPort={_free_port()}",
            "AuthType=auth/munge", "CredType=cred/munge", f"AuthInfo=socket={r}/run/munge.sock",
            "SlurmUser=root", "SlurmdUser=root",
            f"StateSaveLocation={r}/state", f"SlurmdSpoolDir={r}/spool",
            f"SlurmctldPidFile={r}/run/slurmctld.pid", f"SlurmdPidFile={r}/run/slurmd.pid",
            f"SlurmctldLogFile={r}/log/slurmctld.log", f"SlurmdLogFile={r}/log/slurmd.log",
            "SlurmctldDebug=info", "SlurmdDebug=info",
            # No cgroups in a container: plain process tracking, no task confinement.
            "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none",
            "JobAcctGatherType=jobacct_gather/none", "AccountingStorageType=accounting_storage/none",
            "JobCompType=jobcomp/none", "MpiDefault=none",
            "SelectType=select/cons_tres", "SelectTypeParameters=CR_Core",
            "SchedulerType=sched/backfill", "SchedulerParameters=bf_interval=1,sched_min_interval=100000",
            "GresTypes=gpu", "ReturnToService=2", "MinJobAge=3600", "KillWait=2", "InactiveLimit=0",
            # The node's CPU count is declared, not probed: GPUs, not this VM's cores, bound concurrency.
            "SlurmdParameters=config_overrides",
            f"NodeName={NODE} NodeAddr=127.0.0.1 CPUs={self.cpus} RealMemory=1000 Gres=gpu:{self.gpus} "
            f"Features={','.join(self.features)} State=UNKNOWN",
            f"PartitionName=gpu Nodes={NODE} Default=YES MaxTime=INFINITE State=UP",
            "",
        ]))
        (self.root / "gres.conf").write_text(
            f"NodeName={NODE} Name=gpu File={r}/dev/nvidia[0-{self.gpus - 1}]\n")

    def start(self, timeout_s: float = 30) -> None:
        """Start all three daemons and wait for the node to be idle; on failure stop and raise with logs."""
        why = missing_requirements()
        if why:
            raise ClusterUnavailable(why)
        self._write_config()
        r = self.root
        env = self.env
        steps = [
            ["munged", f"--key-file={r}/run/munge.key", f"--socket={r}/run/munge.sock",
             f"--pid-file={self._pidfile('munged')}", f"--log-file={r}/log/munged.log",
             f"--seed-file={r}/run/munged.seed", "--force"],
            ["slurmctld", "-c", "-i"],
            ["slurmd", "-N", NODE],
        ]
        try:
            for argv in steps:
                result = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=30, check=False)
                if result.returncode != 0:
                    raise ClusterUnavailable(f"{argv[0]} exited {result.returncode}: "
                                             f"{(result.stderr or result.stdout).strip()}\n{self.logs()}")
            deadline = time.monotonic() + timeout_s
            state = ""
            while time.monotonic() < deadline:
                result = subprocess.run(["sinfo", "-h", "-n", NODE, "-o", "%t"], env=env, capture_output=True,
                                        text=True, timeout=10, check=False)
                state = result.stdout.strip()
                if state == "idle":
                    return
                time.sleep(0.5)
            raise ClusterUnavailable(f"node {NODE} not idle after {timeout_s:g} s (state {state!r})\n{self.logs()}")
        except BaseException:
            self.stop()
            raise

    def logs(self) -> str:
        return "\n".join(f"--- {name}:\n{_tail(self.root / 'log' / name)}"
                         for name in ("munged.log", "slurmctld.log", "slurmd.log"))

    def _wait_gone(self, daemons: Sequence[str], timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while any(d in self.pids() for d in daemons):
            if time.monotonic() > deadline:
                return False
            time.sleep(0.2)
        return True

    def stop(self) -> None:
        """Cancel every job, `scontrol shutdown`, then SIGTERM/SIGKILL whatever is left (by pid file)."""
        if "slurmctld" in self.pids():
            env = self.env
            subprocess.run(["scancel", "--full", "-u", "root"], env=env, capture_output=True, timeout=15, check=False)
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                queue = subprocess.run(["squeue", "-h", "-o", "%i"], env=env, capture_output=True, text=True,
                                       timeout=10, check=False)
                if queue.returncode != 0 or not queue.stdout.strip():
                    break
                time.sleep(0.3)
            subprocess.run(["scontrol", "shutdown"], env=env, capture_output=True, timeout=15, check=False)
            self._wait_gone(("slurmctld", "slurmd"), 10)
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for pid in self.pids().values():
                try:
                    os.kill(pid, sig)
                except OSError:
                    pass
            if self._wait_gone(DAEMONS, 5):
                return


def main(argv: Sequence[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    cluster = Cluster(Path(argv[0]).resolve(), 8, ("h100", "nvlink", "cuda12_4"))
    try:
        cluster.start()
    except ClusterUnavailable as err:
        print(f"slurm_cluster: cannot start Slurm here: {err}", file=sys.stderr)
        return 1
    print(f"export SLURM_CONF={cluster.conf}")
    try:
        signal.pause()
    except KeyboardInterrupt:
        pass
    finally:
        cluster.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
