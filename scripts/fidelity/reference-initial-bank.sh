#!/usr/bin/env bash
# Writes the reference's initial skill bank, built by the reference's own
# `prompts/operation_templates.get_initial_operations` in YOUR checkout (nothing of its text
# is stored in this repository), as the reference's OperationBank JSON, which memskill reads
# as a bank:
#
#   scripts/fidelity/reference-initial-bank.sh REFERENCE_CHECKOUT OUT.json [--skip-noop]
#   memskill train --config configs/locomo.toml --set 'run.skill_bank="OUT.json"'
#   memskill skills export OUT.json --out initial-bank/      (an Agent Skills folder)
#
# The reference's bank holds NOOP unless its trainer runs with --skip-noop
# (`get_initial_operations(include_noop=not skip_noop)`); pass --skip-noop to match such a
# run. (memskill orders a bank by name; FIDELITY.md, "Skill bank".) Python:
# $MEMSKILL_PYTHON, else python3 (no packages needed: operation_templates.py is plain Python).
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 REFERENCE_CHECKOUT OUT.json [--skip-noop]" >&2
  exit 2
fi
ref="$1" out="$2" include_noop=True
case "${3:-}" in
  "") ;;
  --skip-noop) include_noop=False ;;
  *) echo "error: unknown argument ${3} (only --skip-noop)" >&2; exit 2 ;;
esac
[ $# -le 3 ] || { echo "error: too many arguments" >&2; exit 2; }
[ -f "$ref/prompts/operation_templates.py" ] \
  || { echo "error: $ref/prompts/operation_templates.py not found (is $ref a MemSkill checkout?)" >&2; exit 1; }
py="${MEMSKILL_PYTHON:-python3}"
tmp="$out.tmp.$$"
trap 'rm -f "$tmp"' EXIT
"$py" - "$ref" "$include_noop" >"$tmp" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[1])
from prompts.operation_templates import get_initial_operations
ops = get_initial_operations(include_noop=sys.argv[2] == "True")
print(json.dumps({"operations": ops, "skip_noop": sys.argv[2] != "True"}, indent=2, ensure_ascii=False))
PY
mv "$tmp" "$out"
trap - EXIT
echo "wrote $out: the reference's initial operations ($(grep -c '"update_type"' "$out") skills) from $ref" >&2
