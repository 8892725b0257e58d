#!/usr/bin/env bash
# Create the Python environment for the ALFWorld bridge (scripts/alfworld/bridge.py).
# Installs PyPI alfworld==0.4.2 (base install: TextWorld engine + PDDL support; no torch/vision extras)
# into ${MEMSKILL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memskill}/alfworld-venv.
# Usage: scripts/alfworld/setup.sh [python3]
set -euo pipefail
PY="${1:-${PYTHON:-python3}}"
CACHE="${MEMSKILL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memskill}"
VENV="$CACHE/alfworld-venv"
mkdir -p "$CACHE"
start=$(date +%s)
if [ ! -x "$VENV/bin/python" ]; then
  "$PY" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install --quiet --upgrade pip
"$VENV/bin/python" -m pip install --quiet "alfworld==0.4.2"
"$VENV/bin/python" - <<'PY'
import textworld, textworld.gym, alfworld
from alfworld.agents.environment.alfred_tw_env import AlfredDemangler, AlfredInfos
print("alfworld bridge deps ok: textworld", textworld.__version__)
PY
echo "alfworld venv ready at $VENV in $(( $(date +%s) - start ))s"
