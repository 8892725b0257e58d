#!/usr/bin/env bash
# Create the Python environment of one external memory system that `memskill eval --adapter`
# runs as a baseline (docs/adapter-protocol.md). Everything comes from PyPI.
#   scripts/baselines/setup.sh mem0      -> ${MEMSKILL_CACHE:-~/.cache/memskill}/mem0-venv    (mem0ai)
#   scripts/baselines/setup.sh langmem   -> ${MEMSKILL_CACHE:-~/.cache/memskill}/langmem-venv (langmem)
# Versions are pinned (override with MEM0_SPEC / LANGMEM_SPEC); the adapters were tested with
# these. WITH_SENTENCE_TRANSFORMERS=1 also installs sentence-transformers (the MiniLM embedder
# for runs without an /embeddings server; it brings PyTorch, a large download).
# Prints the venv's python on its last line. Idempotent: an existing venv whose package
# imports is left as it is.
set -euo pipefail
WHICH="${1:-}"
PY="${PYTHON:-python3}"
case "$WHICH" in
  mem0)
    SPEC=("${MEM0_SPEC:-mem0ai==2.2.1}")
    PROBE='import mem0'
    ;;
  langmem)
    SPEC=("${LANGMEM_SPEC:-langmem==0.0.30}" "langchain-openai" "langgraph")
    PROBE='import langmem, langchain_openai, langgraph'
    ;;
  *)
    echo "usage: $0 mem0|langmem" >&2
    exit 2
    ;;
esac
. "$(dirname "$0")/../lib/venv.sh"
memskill_venv "$WHICH" "$PY" "$PROBE" "${SPEC[@]}"
VENV="${VENV_PY%/bin/python}"
if [ "${WITH_SENTENCE_TRANSFORMERS:-0}" = 1 ] && \
   ! "$VENV/bin/python" -c 'import sentence_transformers' 2>/dev/null; then
  "$VENV/bin/python" -m pip install --quiet sentence-transformers >&2
fi
"$VENV/bin/python" -c "$PROBE" >&2
echo "$VENV/bin/python"
