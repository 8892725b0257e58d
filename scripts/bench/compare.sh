#!/usr/bin/env bash
# Runs the PyTorch twin and then the Rust bench, which prints rust/pytorch ratios.
# Usage: scripts/bench/compare.sh            (PYTHON=/path/to/python with torch + sentence-transformers)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
PY="${PYTHON:-python3}"
out="$(mktemp -d)/torch.json"
if "$PY" -c 'import torch, sentence_transformers' 2>/dev/null; then
  "$PY" "$root/scripts/bench/encoder_ppo_torch.py" --json "$out"
  export TORCH_BENCH_JSON="$out"
else
  echo "note: $PY has no torch/sentence-transformers; printing Rust numbers only" >&2
fi
cd "$root" && cargo bench -p memskill-controller --bench controller
