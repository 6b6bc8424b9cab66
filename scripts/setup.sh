#!/usr/bin/env bash
# One-time set-up of a machine for this repository (idempotent; fast when already done):
#   1. the project's virtual environment .venv (git-ignored) with the Python packages the tools and
#      their unit tests need (requirements_dev.txt); the machine's own site-packages are not touched;
#   2. a working `bazel`: the one on PATH if there is one (bazelisk, with internet), else Debian
#      sid's packaged Bazel 7.7.1 in a chroot (third_party/bazel_offline), installed as
#      /usr/local/bin/bazel; this works without internet access beyond the Debian archive;
#   3. on machines with NVIDIA GPUs, .bazelrc.gpus (the GPU count for `bazel test --config=gpu`);
#   4. Slurm 22.05 + munge from Debian, for the live Slurm end-to-end test (tests/tools/plan/test_slurm_e2e.py).
# Knobs: PYTHON (the interpreter .venv is made from), BAZEL_OFFLINE_HOME (where the kit is copied),
# BAZEL_OFFLINE_SHIM (the `bazel` link, default /usr/local/bin/bazel), and the kit's own
# (BAZEL_OFFLINE_ROOT, BAZEL_OFFLINE_OUTPUT_ROOT; third_party/bazel_offline/README.md).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-python3}"   # the interpreter .venv is made from
VENV="$ROOT/.venv"
KIT_HOME="${BAZEL_OFFLINE_HOME:-/usr/local/lib/rules_torch_test/bazel_offline}"
SHIM="${BAZEL_OFFLINE_SHIM:-/usr/local/bin/bazel}"
log() { printf '[setup] %s\n' "$*" >&2; }

# A plain venv (no --system-site-packages): only what requirements_dev.txt names is importable.
if ! "$VENV/bin/python" -c '' 2>/dev/null; then
  log "creating $VENV from $("$PYTHON" -c 'import sys; print(sys.executable)')"
  rm -rf "$VENV"
  "$PYTHON" -m venv "$VENV"
fi
log "Python packages into $VENV (requirements_dev.txt)"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$ROOT/requirements_dev.txt"

# Is the bazel on PATH one we installed earlier (a link into an older copy of the kit)?
ours() { [[ -L "$SHIM" && "$(readlink "$SHIM")" == "$KIT_HOME/bin/bazel" ]]; }

if command -v bazel >/dev/null && ! ours; then
  log "using $(command -v bazel)"
else
  # Keep a copy of the kit outside the checkout, so the installed bazel outlives this clone.
  if ! diff -rq "$ROOT/third_party/bazel_offline" "$KIT_HOME" >/dev/null 2>&1; then
    log "installing the offline Bazel kit into $KIT_HOME"
    rm -rf "$KIT_HOME.new"
    mkdir -p "$(dirname "$KIT_HOME")"
    cp -a "$ROOT/third_party/bazel_offline" "$KIT_HOME.new"
    rm -rf "$KIT_HOME"
    mv "$KIT_HOME.new" "$KIT_HOME"
  fi
  mkdir -p "$(dirname "$SHIM")"
  ln -sfn "$KIT_HOME/bin/bazel" "$SHIM"
  "$KIT_HOME/setup"   # builds the sid chroot once (~1-2 min); returns at once afterwards
  log "bazel: $SHIM -> $KIT_HOME/bin/bazel ($(bazel --version 2>/dev/null))"
fi

# GPU lock files of //tools:gpu_run_under: outside /tmp (Bazel sandboxes may get a private /tmp),
# writable by every user, declared writable for sandboxes in .bazelrc (test:gpu). The offline kit
# shows the host's /var/tmp to Bazel at the same path.
install -d -m 1777 /var/tmp/torch-gpu-locks

if command -v nvidia-smi >/dev/null; then
  (cd "$ROOT" && "$VENV/bin/python" -m tools.gpu_assign.local_resources --bazelrc --write .bazelrc.gpus)
  log "wrote .bazelrc.gpus: $(tail -n1 "$ROOT/.bazelrc.gpus")"
fi
# --- Slurm (live end-to-end test of the planner's Slurm rendering, tests/tools/plan/test_slurm_e2e.py) ---
# Debian 12's slurm-wlm 22.05: the test starts its own munged/slurmctld/slurmd under a temp dir
# (nothing is configured system-wide; the packages' services are not started). Skipped without
# apt-get or root, or with SETUP_SLURM=0; the test then skips and says why.
if [[ "${SETUP_SLURM:-1}" == 1 ]] && ! command -v slurmd >/dev/null && command -v apt-get >/dev/null \
   && [[ "$(id -u)" == 0 ]]; then
  log "Slurm + munge (apt-get install slurm-wlm slurmctld slurmd munge)"
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
       slurm-wlm slurmctld slurmd slurm-client munge >/dev/null; then
    apt-get update >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
       slurm-wlm slurmctld slurmd slurm-client munge >/dev/null \
      || log "could not install Slurm; tests/tools/plan/test_slurm_e2e.py will skip"
  fi
fi

log "done"
