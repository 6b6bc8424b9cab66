#!/usr/bin/env bash
# The repository's whole test suite, as CI runs it:
#   1. ruff on the Python code;
#   2. the classification file is up to date and covers every torch test (`classify --check`);
#   3. the repository's tests: the tools' and rules' unit tests and the Bazel e2e tests (plain pytest, tests/);
#   4. every CPU-classified test inside Bazel: `bazel test //... --test_tag_filters=-requires-gpu`.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# The tools run from the project's virtual environment (scripts/setup.sh makes it).
PYTHON="${PYTHON:-$ROOT/.venv/bin/python}"
if ! "$PYTHON" -c 'import pytest, ruff' 2>/dev/null; then
  echo "test.sh: $PYTHON cannot import pytest and ruff; run 'bash scripts/setup.sh' first" >&2
  exit 1
fi
CONFIG=()
[[ -z "${CI:-}" ]] || CONFIG=(--config=ci)

echo "== ruff"
"$PYTHON" -m ruff check .

echo "== classification lint (bazel run //tools:classify -- --check)"
bazel run "${CONFIG[@]}" //tools:classify -- --check

echo "== tests (pytest tests)"
"$PYTHON" -m pytest -q -p no:cacheprovider

echo "== bazel test //... --test_tag_filters=-requires-gpu"
SECONDS=0
bazel test "${CONFIG[@]}" //... --test_tag_filters=-requires-gpu
echo "bazel test took ${SECONDS}s"
