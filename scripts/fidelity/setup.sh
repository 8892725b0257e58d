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
. "$(dirname "$0")/../lib/venv.sh"
memskill_venv fidelity "$PY" \
  'import numpy, torch, transformers, sentence_transformers, nltk, tiktoken, json_repair, regex, sklearn, openai' \
  numpy torch transformers sentence-transformers nltk tiktoken json-repair regex scikit-learn \
  openai tqdm safetensors
echo "$VENV_PY"
