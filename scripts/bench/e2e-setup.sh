#!/usr/bin/env bash
# Create the Python environment in which scripts/bench/e2e-reference.sh runs the reference
# trainer: the bench venv's PyTorch, transformers and sentence-transformers (scripts/bench/setup.sh,
# reached through a .pth file, so torch is not downloaded twice) plus the light packages the
# reference's trainer imports (openai, tiktoken, json-repair, nltk, wandb), from PyPI.
# Venv: ${MEMSKILL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memskill}/e2e-venv
# Usage: scripts/bench/e2e-setup.sh [python3]      prints the venv's python on its last line
set -euo pipefail
PY="${1:-${PYTHON:-python3}}"
CACHE="${MEMSKILL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memskill}"
VENV="$CACHE/e2e-venv"
BENCH="$CACHE/bench-venv"
if [ ! -x "$BENCH/bin/python" ] || ! "$BENCH/bin/python" -c 'import torch, sentence_transformers' 2>/dev/null; then
  echo "e2e-setup: the bench venv ($BENCH) is missing or lacks torch / sentence-transformers;" >&2
  echo "e2e-setup: run scripts/bench/setup.sh first" >&2
  exit 1
fi
mkdir -p "$CACHE"
if [ ! -x "$VENV/bin/python" ]; then
  "$BENCH/bin/python" -m venv "$VENV"
fi
# the bench venv's packages come after the e2e venv's own
site=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
bench_site=$("$BENCH/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
echo "$bench_site" > "$site/memskill-bench-venv.pth"
if ! "$VENV/bin/python" -c 'import openai, tiktoken, json_repair, nltk, wandb, torch, sentence_transformers' 2>/dev/null; then
  "$VENV/bin/python" -m pip install --quiet openai tiktoken json-repair nltk wandb >&2
fi
"$VENV/bin/python" -c 'import openai, tiktoken, json_repair, nltk, wandb, torch, sentence_transformers' >&2
echo "$VENV/bin/python"
