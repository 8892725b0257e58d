#!/usr/bin/env bash
# The Python environment of the tracking checks (scripts/tracking/check.sh): TensorBoard (to
# read our event files back with its own EventAccumulator), an MLflow tracking server, and
# wandb (offline sync of the TensorBoard files). Everything from PyPI.
# Venv: ${MEMSKILL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memskill}/tracking-venv
# Usage: scripts/tracking/setup.sh [python3]      prints the venv's python on its last line
set -euo pipefail
PY="${1:-${PYTHON:-python3}}"
CACHE="${MEMSKILL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memskill}"
VENV="$CACHE/tracking-venv"
mkdir -p "$CACHE"
[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
if ! "$VENV/bin/python" -c 'import tensorboard, mlflow, wandb' 2>/dev/null; then
  "$VENV/bin/python" -m pip install --quiet --upgrade pip >&2
  "$VENV/bin/python" -m pip install --quiet tensorboard mlflow wandb >&2
fi
"$VENV/bin/python" -c 'import tensorboard, mlflow, wandb' >&2
echo "$VENV/bin/python"
