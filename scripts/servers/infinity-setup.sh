#!/usr/bin/env bash
# Create the venv of the embedding server the checks in scripts/servers/ start: infinity-emb
# (PyPI) with its server and torch extras, a real OpenAI-compatible `/v1/embeddings` server.
# Venv: ${MEMSKILL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memskill}/infinity-venv
# Usage: scripts/servers/infinity-setup.sh [python3]   prints the venv's python on its last line
set -euo pipefail
PY="${1:-${PYTHON:-python3}}"
CACHE="${MEMSKILL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memskill}"
VENV="$CACHE/infinity-venv"
INFINITY="${INFINITY_EMB:-infinity-emb[server,torch]==0.0.78}"
mkdir -p "$CACHE"
[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
if ! "$VENV/bin/python" -c 'import infinity_emb, torch, sentence_transformers, uvicorn' 2>/dev/null; then
  "$VENV/bin/python" -m pip install --quiet --upgrade pip >&2
  "$VENV/bin/python" -m pip install --quiet "$INFINITY" >&2
fi
"$VENV/bin/python" -c 'import infinity_emb, torch, sentence_transformers, uvicorn' >&2
echo "$VENV/bin/python"
