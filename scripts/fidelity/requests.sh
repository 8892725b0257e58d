#!/usr/bin/env bash
# Request-level equivalence with the reference trainer (issue 41): the reference's trainer
# (from YOUR checkout, through scripts/bench/e2e_reference_runner.py) and memskill run the same
# reduced LoCoMo configuration, with the reference's prompts (scripts/fidelity/reference-prompts.sh)
# and its initial skill bank (scripts/fidelity/reference-initial-bank.sh), each against its own
# scripted server that records every chat request (`memskill llm serve-scripted --record`);
# scripts/fidelity/compare_requests.py then compares the two logs role by role.
#
#   scripts/fidelity/requests.sh REFERENCE_CHECKOUT [OUT_DIR]
#
# Settings: one training conversation (the first; both trainers draw conversations at random,
# with different generators), SESSIONS sessions and QUESTIONS questions of it, UPDATES updates
# of batch 1, K = the bank's size (4: every skill is selected, so which skills a step applies
# is not left to the two random streams), retrieval with the MiniLM asset on both sides,
# F1 reward (REWARD=judge: the LLM judge's, so judge requests are compared too), no designer.
# The scripted replies: a numbered memory for every executor request (they come one after
# another), a readable verdict for every judge request (its prompt names the ground truth),
# one fixed answer for every other request (answers come concurrently, so a numbered answer
# would depend on arrival order). Python: $MEMSKILL_PYTHON, else the fidelity venv
# (scripts/fidelity/setup.sh; the reference's trainer also needs `wandb`, installed in
# offline mode use only). The memskill binary: $MEMSKILL_BIN, else target/debug/memskill.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 REFERENCE_CHECKOUT [OUT_DIR]" >&2; exit 2; }
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
REF="$(cd "$1" && pwd)"
OUT="${2:-$(mktemp -d "${TMPDIR:-/tmp}/memskill-requests.XXXXXX")}"
CACHE="${MEMSKILL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memskill}"
PY="${MEMSKILL_PYTHON:-$CACHE/fidelity-venv/bin/python}"
BIN="${MEMSKILL_BIN:-$ROOT/target/debug/memskill}"
ENCODER="$CACHE/assets/all-MiniLM-L6-v2"
if [ -n "${MEMSKILL_LOCOMO:-}" ]; then
  DATA="$MEMSKILL_LOCOMO"
else
  DATA="$ROOT/../shared/data/locomo/locomo10.json"
  [ -f "$DATA" ] || DATA="$CACHE/data/locomo/locomo10.json"
fi
SESSIONS="${SESSIONS:-2}" QUESTIONS="${QUESTIONS:-4}" UPDATES="${UPDATES:-1}" K=4 RETRIEVE=10
case "${REWARD:-f1}" in
  f1) ref_reward=f1 ours_reward=f1 ;;
  judge) ref_reward=llm_judge ours_reward=judge ;;
  *) echo "requests: REWARD must be f1 or judge" >&2; exit 2 ;;
esac
die() { echo "requests: $*" >&2; exit 1; }
[ -x "$PY" ] || die "no python at $PY (scripts/fidelity/setup.sh, or MEMSKILL_PYTHON)"
[ -x "$BIN" ] || die "no memskill binary at $BIN (cargo build, or MEMSKILL_BIN)"
[ -f "$DATA" ] || die "no LoCoMo file (MEMSKILL_LOCOMO)"
mkdir -p "$OUT"
"$ROOT/scripts/fidelity/reference-prompts.sh" "$REF" "$OUT/prompts" 50 >&2
"$ROOT/scripts/fidelity/reference-initial-bank.sh" "$REF" "$OUT/initial.json"
python3 "$ROOT/scripts/bench/e2e_reduce_locomo.py" "$DATA" "$OUT/all.json" "$SESSIONS" "$QUESTIONS"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); json.dump(d[:1], open(sys.argv[2], "w"))' \
  "$OUT/all.json" "$OUT/locomo.json"
cat >"$OUT/replies.json" <<'JSON'
{"rules": [
  {"contains": "MEMORY_INDEX", "reply": "ACTION: INSERT\nMEMORY_ITEM: Scripted memory {n}: the two speakers talked about their week and a trip they are planning."},
  {"contains": "Ground Truth", "reply": "{\"score\": 1.0}"},
  {"reply": "scripted answer"}
]}
JSON

serve() {  # serve NAME: a recording scripted server; sets URL
  rm -f "$OUT/$1.port" "$OUT/$1.requests.jsonl"
  "$BIN" llm serve-scripted --replies "$OUT/replies.json" \
    --record "$OUT/$1.requests.jsonl" --port-file "$OUT/$1.port" >"$OUT/$1.server.log" 2>&1 &
  PIDS+=($!)
  for _ in $(seq 100); do [ -s "$OUT/$1.port" ] && break; sleep 0.1; done
  [ -s "$OUT/$1.port" ] || die "the scripted server did not start ($OUT/$1.server.log)"
  URL="http://127.0.0.1:$(cat "$OUT/$1.port")/v1"
}
PIDS=()
trap 'kill "${PIDS[@]}" 2>/dev/null || true' EXIT

serve reference
"$PY" "$ROOT/scripts/bench/e2e_reference_runner.py" --reference "$REF" --encoder "$ENCODER" \
  --data "$OUT/locomo.json" --base-url "$URL" --updates "$UPDATES" --out "$OUT/reference.jsonl" \
  --work "$OUT/reference" --batch 1 --top-k "$K" --retrieve "$RETRIEVE" \
  --reward-metric "$ref_reward" >"$OUT/reference.log" 2>&1 \
  || die "the reference trainer failed (see $OUT/reference.log)"

serve memskill
sets=(data.path="\"$OUT/locomo.json\"" run.outer_epochs=1 run.inner_epochs="$UPDATES"
  run.batch_size=1 run.checkpoint_every=1000000 run.skill_bank="\"$OUT/initial.json\""
  prompts.dir="\"$OUT/prompts\"" encoder.kind='"minilm"' encoder.path="\"$ENCODER\""
  memory.retriever='"encoder"' controller.top_k="$K" controller.retrieve="$RETRIEVE"
  answer.retrieve="$RETRIEVE" designer.enabled=false executor.base_urls="[\"$URL\"]"
  reward.kind="\"$ours_reward\""
  executor.model='"scripted"' executor.api_key_envs='[]' executor.cache='"off"')
args=()
for kv in "${sets[@]}"; do args+=(--set "$kv"); done
# the judge must be the recording server: a judge server named in the environment is ignored
env -u MEMSKILL_JUDGE_BASE_URL "$BIN" train --config "$ROOT/configs/locomo.toml" --runs-dir "$OUT/runs" --run-name memskill \
  --no-progress "${args[@]}" >"$OUT/memskill.log" 2>&1 || die "memskill failed (see $OUT/memskill.log)"

echo "requests: files in $OUT" >&2
# exit status 1 when any request differs
python3 "$ROOT/scripts/fidelity/compare_requests.py" "$OUT/reference.requests.jsonl" \
  "$OUT/memskill.requests.jsonl" --prompts "$OUT/prompts"
