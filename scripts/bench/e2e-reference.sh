#!/usr/bin/env bash
# A whole training update, timed against the reference trainer. The reference (a MemSkill
# checkout, run by scripts/bench/e2e_reference_runner.py in the e2e venv, W&B off) and memskill
# (`memskill train --config configs/locomo.toml` with the overrides below) train on the same
# reduced LoCoMo file against one scripted OpenAI-compatible server (`memskill llm
# serve-scripted --replies scripts/bench/e2e-replies.json`: a fixed latency, the same replies
# in the same order: an INSERT of a distinct memory for every executor prompt, a short answer
# for every question). Rounds are interleaved (reference, memskill, reference, ...); each
# round starts both processes afresh. Prints seconds per update (min / median / max over every
# update of every round), the per-round ratio, memskill's critical-path fraction (the ideal
# update, (spans + answer rounds) x latency, over the measured one) and where each side's time
# goes, with the 1-minute load at start and end (a ratio counts only with load <= 1.0).
#
# Settings matched (reference flag = memskill key):
#   dataset         reduced LoCoMo: first SESSIONS sessions, first QUESTIONS non-adversarial
#                   questions of each conversation; training conversations 0-5 on both sides
#   spans           --session-mode full-session = spans.mode "full-session" (locomo.toml)
#   K               --action-top-k 3 = controller.top_k 3
#   retrieval       --mem-top-k / --mem-top-k-eval 20 = controller.retrieve / answer.retrieve 20
#   batch           --batch-size 4 = run.batch_size 4; episodes in parallel: 4 threads =
#                   concurrency.episodes 4
#   LLM concurrency answers: 32 threads per episode (the reference's evaluator fixes 32) =
#                   concurrency.queries 32, executor.max_concurrency 128 (4 x 32, no shared cap
#                   below it as in the reference); executor: one call per span on both sides
#   PPO             --ppo-epochs 2, --minibatch-size 32 = ppo.ppo_epochs 2, ppo.minibatch_size 32
#                   (other PPO values: both defaults / locomo.toml, which mirrors them)
#   encoder         all-MiniLM-L6-v2 from the asset folder for the state, skill and retrieval
#                   encoders on both sides (encoder.kind "minilm", memory.retriever "encoder";
#                   the runner points the reference's sentence-transformers name and its
#                   contriever retriever at the same folder); --encode-batch-size 64
#   designer        off on both (no --enable-designer = designer.enabled false): updates only
#   LLM             temperature 0, max tokens 2048 / 32 (answers); no response cache
#                   (executor.cache "off"); seed 42; reward F1
#   checkpoints     none inside the timed updates (the reference saves per outer epoch only;
#                   run.checkpoint_every above the update count)
# Not matched: memskill's memory filter stays at its default ("flag"), work the reference does
# not do. memskill embeds in-process with its own encoder and caches span embeddings across
# updates; the reference re-encodes them (that is part of what is measured).
#
# Usage: scripts/bench/e2e-reference.sh [--rounds 3] [--updates 4] [--latency-ms 200]
#          [--sessions 4] [--questions 10] [--bin target/debug/memskill]
#          [--reference ../shared/reference/MemSkill] [--python PY] [--data FILE] [--out DIR]
# Needs: the e2e venv (scripts/bench/e2e-setup.sh), the MiniLM asset (scripts/fetch-assets.sh),
# LoCoMo (scripts/fetch-data.sh) and a built memskill (cargo build --workspace).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
CACHE="${MEMSKILL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memskill}"
ROUNDS=3 UPDATES=4 LATENCY=200 SESSIONS=4 QUESTIONS=10
BIN="$ROOT/target/debug/memskill"
REF="$ROOT/../shared/reference/MemSkill"
PY="$CACHE/e2e-venv/bin/python"
DATA="$CACHE/data/locomo/locomo10.json"
ENCODER="$CACHE/assets/all-MiniLM-L6-v2"
OUT=""
BATCH=4 TOPK=3 RETRIEVE=20 PPO_EPOCHS=2 MINIBATCH=32 QCONC=32
usage() { sed -n '/^# Usage:/,/^# Needs:/s/^# //p' "$0" >&2; exit 2; }
while [ $# -gt 0 ]; do
  [ $# -ge 2 ] || usage
  case "$1" in
    --rounds) ROUNDS=$2 ;; --updates) UPDATES=$2 ;; --latency-ms) LATENCY=$2 ;;
    --sessions) SESSIONS=$2 ;; --questions) QUESTIONS=$2 ;; --bin) BIN=$2 ;;
    --reference) REF=$2 ;; --python) PY=$2 ;; --data) DATA=$2 ;; --out) OUT=$2 ;;
    *) usage ;;
  esac
  shift 2
done
for n in "$ROUNDS" "$UPDATES" "$LATENCY" "$SESSIONS" "$QUESTIONS"; do
  [[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] || { echo "e2e: numbers must be integers >= 1, got '$n'" >&2; exit 2; }
done
die() { echo "e2e: $*" >&2; exit 1; }
[ -f "$REF/src/trainer.py" ] || die "no reference checkout at $REF (src/trainer.py missing); pass --reference DIR"
[ -x "$PY" ] || die "no python at $PY; run scripts/bench/e2e-setup.sh (or pass --python)"
"$PY" -c 'import openai, tiktoken, json_repair, nltk, wandb, torch, sentence_transformers' 2>/dev/null \
  || die "$PY lacks the reference's packages; run scripts/bench/e2e-setup.sh"
[ -x "$BIN" ] || die "no memskill binary at $BIN; run cargo build --workspace (or pass --bin)"
[ -f "$DATA" ] || die "no LoCoMo file at $DATA; run scripts/fetch-data.sh (or pass --data)"
[ -f "$ENCODER/config.json" ] || die "no all-MiniLM-L6-v2 folder at $ENCODER; run scripts/fetch-assets.sh"
WORK="${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/memskill-e2e.XXXXXX")}"
mkdir -p "$WORK/runs"
load() { cut -d' ' -f1 /proc/loadavg; }
LOAD0=$(load)

python3 "$ROOT/scripts/bench/e2e_reduce_locomo.py" "$DATA" "$WORK/locomo.json" "$SESSIONS" "$QUESTIONS"
rm -f "$WORK/port"
"$BIN" llm serve-scripted --replies "$ROOT/scripts/bench/e2e-replies.json" --latency-ms "$LATENCY" \
  --port-file "$WORK/port" >"$WORK/server.log" 2>&1 &
SERVER=$!
trap 'kill "$SERVER" 2>/dev/null || true' EXIT
for _ in $(seq 100); do [ -s "$WORK/port" ] && break; sleep 0.1; done
[ -s "$WORK/port" ] || die "the scripted server did not start (see $WORK/server.log)"
URL="http://127.0.0.1:$(cat "$WORK/port")/v1"

run_ref() {
  "$PY" "$ROOT/scripts/bench/e2e_reference_runner.py" --reference "$REF" --encoder "$ENCODER" \
    --data "$WORK/locomo.json" --base-url "$URL" --updates "$UPDATES" --out "$WORK/ref-$1.jsonl" \
    --work "$WORK/ref-$1" --batch "$BATCH" --top-k "$TOPK" --retrieve "$RETRIEVE" \
    --ppo-epochs "$PPO_EPOCHS" --minibatch "$MINIBATCH" >"$WORK/ref-$1.log" 2>&1 \
    || die "reference round $1 failed (see $WORK/ref-$1.log)"
}
run_ours() {
  local s=(data.path="\"$WORK/locomo.json\"" run.outer_epochs=1 run.inner_epochs="$UPDATES"
    run.batch_size="$BATCH" run.checkpoint_every=1000000 encoder.kind='"minilm"'
    encoder.path="\"$ENCODER\"" memory.retriever='"encoder"' controller.top_k="$TOPK"
    controller.retrieve="$RETRIEVE" answer.retrieve="$RETRIEVE" ppo.ppo_epochs="$PPO_EPOCHS"
    ppo.minibatch_size="$MINIBATCH" designer.enabled=false executor.base_urls="[\"$URL\"]"
    executor.model='"scripted"' executor.api_key_envs='[]' executor.max_concurrency=$((BATCH * QCONC))
    executor.cache='"off"' concurrency.episodes="$BATCH" concurrency.queries="$QCONC")
  local sets=()
  for kv in "${s[@]}"; do sets+=(--set "$kv"); done
  "$BIN" train --config "$ROOT/configs/locomo.toml" --runs-dir "$WORK/runs" --run-name "ours-$1" \
    --no-progress "${sets[@]}" >"$WORK/ours-$1.log" 2>&1 \
    || die "memskill round $1 failed (see $WORK/ours-$1.log)"
}

for r in $(seq "$ROUNDS"); do
  echo "e2e: round $r/$ROUNDS: reference" >&2
  run_ref "$r"
  echo "e2e: round $r/$ROUNDS: memskill" >&2
  run_ours "$r"
done
LOAD1=$(load)
echo "e2e: $ROUNDS rounds x $UPDATES updates, batch $BATCH, K $TOPK, $SESSIONS spans + $QUESTIONS questions per episode, latency $LATENCY ms; files in $WORK"
python3 "$ROOT/scripts/bench/e2e_summary.py" "$WORK" "$ROUNDS" "$LATENCY" "$SESSIONS" "$QUESTIONS" \
  "$QCONC" "$LOAD0" "$LOAD1"
