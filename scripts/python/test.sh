#!/usr/bin/env bash
# The Python package's tests (python/tests): builds a venv with maturin and pytest from PyPI,
# builds the native module into it with `maturin develop` (the workspace's target/ and dev
# profile, so after `cargo test --workspace` only the Python crate itself is compiled and
# linked), and runs pytest. Where the venv cannot be built (no python3, no PyPI) it prints
# `skipped: <reason>` and exits 0. scripts/test.sh runs it after the Rust tests.
# Venv: ${MEMSKILL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memskill}/python-venv
# Usage: scripts/python/test.sh [pytest args...]
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT="$PWD"
PY="${PYTHON:-python3}"
CACHE="${MEMSKILL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memskill}"
VENV="$CACHE/python-venv"
skip() {
  echo "skipped: python package tests: $*"
  exit 0
}
command -v "$PY" >/dev/null 2>&1 || skip "no $PY on PATH"
mkdir -p "$CACHE"
if [ ! -x "$VENV/bin/python" ]; then
  "$PY" -m venv "$VENV" >&2 || { rm -rf "$VENV"; skip "$PY -m venv failed (python3-venv missing?)"; }
fi
if ! [ -x "$VENV/bin/maturin" ] || ! "$VENV/bin/python" -c 'import pytest' 2>/dev/null; then
  "$VENV/bin/python" -m pip install --quiet "maturin>=1.9,<2" "pytest>=7" >&2 ||
    skip "could not install maturin and pytest from PyPI"
fi
# The workspace's target dir (shared with cargo test) and its dev profile.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
t0=$(date +%s)
(cd python && VIRTUAL_ENV="$VENV" PATH="$VENV/bin:$PATH" \
  "$VENV/bin/maturin" develop --profile dev >&2)
echo "maturin develop: $(( $(date +%s) - t0 )) s" >&2
"$VENV/bin/python" -c 'import memskill' || { echo "error: memskill did not build" >&2; exit 1; }
cd python
exec "$VENV/bin/python" -m pytest -q -p no:cacheprovider "$@"
