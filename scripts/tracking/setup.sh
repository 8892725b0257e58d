#!/usr/bin/env bash
# The Python environment of the tracking checks (scripts/tracking/check.sh): TensorBoard (to
# read our event files back with its own EventAccumulator), an MLflow tracking server, and
# wandb (offline sync of the TensorBoard files). Everything from PyPI.
# Venv: ${MEMSKILL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memskill}/tracking-venv
# Usage: scripts/tracking/setup.sh [python3]      prints the venv's python on its last line
set -euo pipefail
PY="${1:-${PYTHON:-python3}}"
. "$(dirname "$0")/../lib/venv.sh"
memskill_venv tracking "$PY" 'import tensorboard, mlflow, wandb' tensorboard mlflow wandb
echo "$VENV_PY"
