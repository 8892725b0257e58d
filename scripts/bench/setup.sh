#!/usr/bin/env bash
# Create the Python environment of the baselines that `memskill bench` runs interleaved with ours
# (scripts/bench/baseline.py): PyTorch (CPU use) + sentence-transformers for the encoder and PPO
# twins, llama.cpp through llama-cpp-python for the local LLM. Everything comes from PyPI.
# llama-cpp-python is built from source with a portable x86-64 feature set: a native build
# (-march=native) has been seen to die with an illegal instruction on these CPUs.
# Venv: ${MEMSKILL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memskill}/bench-venv
# Usage: scripts/bench/setup.sh [python3]      prints the venv's python on its last line
set -euo pipefail
PY="${1:-${PYTHON:-python3}}"
CACHE="${MEMSKILL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memskill}"
VENV="$CACHE/bench-venv"
LLAMA_CPP_PYTHON="${LLAMA_CPP_PYTHON:-llama-cpp-python==0.3.36}"
. "$(dirname "$0")/../lib/venv.sh"
memskill_venv bench "$PY" 'import torch, sentence_transformers' \
  numpy torch sentence-transformers safetensors
if ! "$VENV/bin/python" -c 'import llama_cpp' 2>/dev/null; then
  if [ "$(uname -m)" = "x86_64" ]; then
    export CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON}"
  fi
  "$VENV/bin/python" -m pip install --quiet --no-cache-dir --no-binary=llama-cpp-python \
    "$LLAMA_CPP_PYTHON" >&2
fi
"$VENV/bin/python" -c 'import torch, sentence_transformers, llama_cpp' >&2
echo "$VENV/bin/python"
