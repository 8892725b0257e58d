#!/usr/bin/env bash
# Writes a prompts.dir folder that reproduces the reference's prompts (executor, LoCoMo /
# LongMemEval / HotpotQA answers, judge) byte for byte, built from the reference's own prompt
# builders in YOUR checkout (nothing of its text is stored in this repository), and
# self-checked on random inputs.
#
#   scripts/fidelity/reference-prompts.sh REFERENCE_CHECKOUT OUT_DIR [CHECKS]
#   memskill train --config configs/locomo.toml --set 'prompts.dir="OUT_DIR"'
#
# Python: $MEMSKILL_PYTHON, else the fidelity venv (scripts/fidelity/setup.sh), else python3;
# it needs jinja2 for the self-check.
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 REFERENCE_CHECKOUT OUT_DIR [CHECKS]" >&2
  exit 2
fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/memskill"
py="${MEMSKILL_PYTHON:-}"
if [ -z "$py" ]; then
  if [ -x "$cache/fidelity-venv/bin/python" ]; then py="$cache/fidelity-venv/bin/python"; else py="python3"; fi
fi
exec "$py" "$here/reference_prompts.py" build --reference "$1" --out "$2" --checks "${3:-500}"
