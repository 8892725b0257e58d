#!/usr/bin/env bash
# Create the Python environment of one external memory system that `memskill eval --adapter`
# runs as a baseline (docs/adapter-protocol.md). Everything comes from PyPI.
#   scripts/baselines/setup.sh mem0      -> ${MEMSKILL_CACHE:-~/.cache/memskill}/mem0-venv     (mem0ai)
#   scripts/baselines/setup.sh langmem   -> ${MEMSKILL_CACHE:-~/.cache/memskill}/langmem-venv  (langmem)
#   scripts/baselines/setup.sh amem      -> ${MEMSKILL_CACHE:-~/.cache/memskill}/amem-venv     (A-MEM's requirements)
#   scripts/baselines/setup.sh memoryos  -> ${MEMSKILL_CACHE:-~/.cache/memskill}/memoryos-venv (MemoryOS eval/'s requirements)
# Versions are pinned (override with MEM0_SPEC / LANGMEM_SPEC); the adapters were tested with
# these. WITH_SENTENCE_TRANSFORMERS=1 also installs sentence-transformers (the MiniLM embedder
# for runs without an /embeddings server; it brings PyTorch, a large download: about 6 GB
# with its CUDA libraries from PyPI).
# A-MEM and MemoryOS are not on PyPI: their code is your checkout, named by AMEM_DIR /
# MEMORYOS_DIR (docs/adapter-protocol.md has the pinned commits and the one-line git clone);
# only their requirements come from PyPI, without PyTorch (their sentence-transformers embedder
# is the run's /embeddings server unless WITH_SENTENCE_TRANSFORMERS=1). When the variable is
# set, the adapter imports the checkout with this venv (`--check`); otherwise the clone line
# is printed.
# Prints the venv's python on its last line. Idempotent: an existing venv whose packages
# import is left as it is.
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
  amem)
    # agiresearch/A-mem's requirements.txt / pyproject.toml, less sentence-transformers (see
    # above), ollama (its other LLM backend) and pre-commit (development)
    SPEC=("chromadb==1.5.9" "litellm==1.110.2" "transformers==5.25.0" "openai==3.63.0"
          "nltk==3.10.4" "rank-bm25==0.2.2" "scikit-learn==1.9.1" "numpy==2.4.6")
    PROBE='import chromadb, litellm, transformers, openai, nltk, rank_bm25, sklearn, numpy'
    export LITELLM_LOCAL_MODEL_COST_MAP=True  # litellm: no download of its price list at import
    DIR_VAR=AMEM_DIR CLONE_DIR=A-mem
    CLONE="git clone https://github.com/agiresearch/A-mem A-mem && git -C A-mem checkout ceffb860f0712bbae97b184d440df62bc910ca8d"
    ;;
  memoryos)
    # what MemoryOS's eval/ imports: faiss (CPU; its requirements name faiss-gpu), openai (the
    # 1.x API its code was written for), numpy, tiktoken; sentence-transformers as above
    SPEC=("faiss-cpu==1.15.1" "openai==1.109.1" "numpy==2.4.6" "tiktoken==0.14.0")
    PROBE='import faiss, openai, numpy, tiktoken'
    DIR_VAR=MEMORYOS_DIR CLONE_DIR=MemoryOS
    CLONE="git clone https://github.com/BAI-LAB/MemoryOS MemoryOS && git -C MemoryOS checkout 1d717060350931af33d1d0dc3d4e50a72c125a48"
    ;;
  *)
    echo "usage: $0 mem0|langmem|amem|memoryos" >&2
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
if [ -n "${DIR_VAR:-}" ]; then
  if [ -n "${!DIR_VAR:-}" ]; then
    "$VENV/bin/python" "$(dirname "$0")/${WHICH}_adapter.py" --check >&2
  else
    echo "$DIR_VAR is not set: the adapter runs the system from your checkout. Fetch it with" >&2
    echo "  $CLONE" >&2
    echo "then: export $DIR_VAR=\$PWD/$CLONE_DIR" >&2
  fi
fi
echo "$VENV/bin/python"
