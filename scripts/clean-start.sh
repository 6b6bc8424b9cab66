#!/usr/bin/env bash
# Drop what earlier runs left on this machine, so that `scripts/setup.sh` + `scripts/test.sh` then
# run as on a new machine (.ci/run calls it first; a green run cannot come from machine state):
#   1. the project's .venv (setup.sh recreates it; pip's download cache is kept);
#   2. with the offline kit (third_party/bazel_offline): every Bazel server of the kit root in use
#      (BAZEL_OFFLINE_ROOT) under the output root in use (BAZEL_OFFLINE_OUTPUT_ROOT), and the kit
#      root's mount namespace, so every bind is made afresh (bin/bazel-offline-cleanup); then this
#      workspace's output base and those of workspaces that no longer exist (e.g. tests' temporary
#      workspaces). The chroot itself and the repository cache (<output root>/cache) are kept;
#   3. with a native bazel on PATH: this workspace's server and output base (the repository cache
#      lives outside it and is kept).
# Other kit roots and output roots are not touched.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
KIT="$ROOT/third_party/bazel_offline"
log() { printf '[clean-start] %s\n' "$*" >&2; }

log "removing $ROOT/.venv"
rm -rf "$ROOT/.venv"

# A copy of an offline kit (ours, installed by setup.sh, or the team's) has lib/common.sh beside bin/.
on_path="$(command -v bazel || true)"
if [[ -n "$on_path" && ! -f "$(dirname "$(readlink -f "$on_path")")/../lib/common.sh" ]]; then
  log "native bazel ($on_path): stopping this workspace's server and deleting its output base"
  base="$(cd "$ROOT" && bazel info output_base 2>/dev/null)"
  (cd "$ROOT" && bazel shutdown)
  rm -rf "$base"
  exit 0
fi

"$KIT/bin/bazel-offline-cleanup"
out="${BAZEL_OFFLINE_OUTPUT_ROOT:-${XDG_CACHE_HOME:-$HOME/.cache}/bazel-offline}"
[[ -d "$out" ]] || exit 0
out="$(readlink -f "$out")"
# Bazel's output base for a workspace is <output root>/<md5 of the workspace path>.
own="$out/$(printf '%s' "$ROOT" | md5sum | cut -c1-32)"
for base in "$out"/*/; do
  base="${base%/}"
  [[ -f "$base/DO_NOT_BUILD_HERE" || "$base" == "$own" ]] || continue   # install/, cache/, ...
  ws="$(cat "$base/DO_NOT_BUILD_HERE" 2>/dev/null || true)"
  if [[ "$base" == "$own" || ! -d "$ws" ]]; then
    log "deleting output base $base (workspace ${ws:-$ROOT})"
    rm -rf "$base"
  fi
done
log "kept the repository cache ($out/cache) and the chroot (${BAZEL_OFFLINE_ROOT:-/var/lib/bazel-offline/root})"
