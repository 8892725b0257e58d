#!/usr/bin/env bash
# Create the Python environment for the differential checks against the reference implementation
# (scripts/fidelity/diff.sh) and for rendering the reference's prompts
# (scripts/fidelity/reference-prompts.sh). Packages come from PyPI: the reference's own
# requirements that its pure functions import (numpy, torch CPU, transformers,
# sentence-transformers, nltk, tiktoken, json-repair, regex, scikit-learn, openai).
# Venv: ${MEMSKILL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memskill}/fidelity-venv
# Usage: scripts/fidelity/setup.sh [python3]      prints the venv's python on its last line
set -euo pipefail
PY="${1:-${PYTHON:-python3}}"
CACHE="${MEMSKILL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memskill}"
VENV="$CACHE/fidelity-venv"
mkdir -p "$CACHE"
if [ ! -x "$VENV/bin/python" ]; then
  "$PY" -m venv "$VENV"
fi
if ! "$VENV/bin/python" -c 'import numpy, torch, transformers, sentence_transformers, nltk, tiktoken, json_repair, regex, sklearn, openai' 2>/dev/null; then
  "$VENV/bin/python" -m pip install --quiet --upgrade pip >&2
  "$VENV/bin/python" -m pip install --quiet numpy torch transformers sentence-transformers \
    nltk tiktoken json-repair regex scikit-learn openai tqdm safetensors >&2
fi
echo "$VENV/bin/python"
