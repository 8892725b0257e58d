#!/usr/bin/env bash
# Create the venv of the embedding server the checks in scripts/servers/ start: infinity-emb
# (PyPI) with its server and torch extras, a real OpenAI-compatible `/v1/embeddings` server.
# Venv: ${MEMSKILL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memskill}/infinity-venv
# Usage: scripts/servers/infinity-setup.sh [python3]   prints the venv's python on its last line
set -euo pipefail
PY="${1:-${PYTHON:-python3}}"
. "$(dirname "$0")/../lib/venv.sh"
memskill_venv infinity "$PY" 'import infinity_emb, torch, sentence_transformers, uvicorn' \
  "${INFINITY_EMB:-infinity-emb[server,torch]==0.0.78}"
echo "$VENV_PY"
