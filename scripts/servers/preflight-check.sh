#!/usr/bin/env bash
# `memskill preflight` against real servers, all on 127.0.0.1 and offline: llama-cpp-python's
# OpenAI-compatible server with the SmolLM2-135M asset (--n_ctx N_CTX, default 3072) for
# every LLM role, and infinity-emb serving the all-MiniLM-L6-v2 asset as the embeddings
# server (`encoder.kind = "openai"`). It runs:
#   1. preflight on configs/quickstart.toml (LoCoMo, one conversation's first two sessions):
#      its prompts fit the window, so it passes;
#   2. preflight on configs/longmemeval.toml over a LongMemEval-S stand-in (LongMemEval is
#      not on this machine: the stand-in, written to a temporary folder, has LongMemEval's
#      schema and LoCoMo's text, four LoCoMo sessions per haystack session, about as long as
#      LongMemEval-S's sessions): its full-session prompts and its 2048-token reply budget
#      overflow the window, so it fails naming them;
#   3. a short real run of the quickstart against the same servers (train, then eval of the
#      checkpoint), and its LLM calls per role (metrics.jsonl, results.json) against step 1's
#      estimate: executor and answer calls within 10%, designer calls within the estimated
#      range (its attempts depend on what the model answers). The prompt tokens the server
#      counted are printed beside the estimate's (which leaves out retrieved memories).
# Prints "skipped: <reason>" and exits 0 when a venv or asset is missing.
# Usage: scripts/servers/preflight-check.sh   Env: N_CTX (3072), KEEP=1 keeps the work folder.
set -euo pipefail
cd "$(dirname "$0")/../.."
CACHE="${MEMSKILL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memskill}"
LPY="${LLAMA_VENV:-$CACHE/llama-venv}/bin/python"
IVENV="$CACHE/infinity-venv"
MODEL="$CACHE/assets/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
MINILM="$CACHE/assets/all-MiniLM-L6-v2"
LOCOMO="$CACHE/data/locomo/locomo10.json"
skip() { echo "skipped: $1"; exit 0; }
[ -x "$LPY" ] && "$LPY" -c 'import llama_cpp.server' 2>/dev/null || skip "no llama-cpp-python[server] venv at $LPY"
[ -x "$IVENV/bin/infinity_emb" ] || skip "no infinity-emb in $IVENV (scripts/servers/infinity-setup.sh)"
[ -f "$MODEL" ] && [ -f "$MINILM/model.safetensors" ] || skip "model assets missing (scripts/fetch-assets.sh)"
[ -s "$LOCOMO" ] || skip "LoCoMo missing (scripts/fetch-data.sh locomo)"

WORK="$(mktemp -d)"
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  [ -n "${KEEP:-}" ] || rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
. scripts/lib/local-servers.sh

N_CTX="${N_CTX:-3072}"
start_llama "$N_CTX"
start_infinity
echo "== llama-cpp-python (SmolLM2-135M, n_ctx $N_CTX) on :$LPORT, infinity-emb (MiniLM) on :$EPORT; work $WORK"

cargo build --quiet --bin memskill
BIN="${CARGO_TARGET_DIR:-target}/debug/memskill"
sets=(
  --set 'executor.backend="openai"' --set "executor.base_urls=[\"http://127.0.0.1:$LPORT/v1\"]"
  --set 'executor.model="smollm2"' --set 'executor.api_key_envs=[]'
  --set 'executor.max_concurrency=1' --set 'executor.timeout_secs=300'
  --set 'encoder.kind="openai"' --set "encoder.openai.base_urls=[\"http://127.0.0.1:$EPORT\"]"
  --set 'encoder.openai.model="minilm"' --set 'encoder.openai.api_key_envs=[]'
  --set 'memory.retriever="encoder"'
  --set "preflight.context_tokens=$N_CTX" --set 'preflight.timeout_secs=120'
)

# the LongMemEval-S stand-in: 6 questions (train 3, test 3), each over 4 haystack sessions
"$LPY" - "$LOCOMO" "$WORK/lme" <<'PY'
import json, os, sys
convs = json.load(open(sys.argv[1]))
out = sys.argv[2]
os.makedirs(out, exist_ok=True)
items = []
for i in range(6):
    c = convs[i]
    conv = c["conversation"]
    a = conv["speaker_a"]
    keys = sorted((k for k in conv if k.startswith("session_") and not k.endswith("date_time")),
                  key=lambda k: int(k.split("_")[1]))
    turns = [[{"role": "user" if t["speaker"] == a else "assistant", "content": t["text"]}
              for t in conv[k]] for k in keys]
    hay = [sum(turns[j:j + 4], []) for j in range(0, 16, 4)]
    qa = next(q for q in c["qa"] if q.get("category") != 5 and "answer" in q)
    items.append({
        "question_id": f"standin-{i}", "question_type": "multi-session",
        "question": qa["question"], "answer": str(qa["answer"]),
        "question_date": "2023/06/30 (Fri) 10:00",
        "haystack_dates": [f"2023/05/{d + 1:02d} (Mon) 10:00" for d in range(len(hay))],
        "haystack_session_ids": [f"standin-{i}-{d}" for d in range(len(hay))],
        "haystack_sessions": hay, "answer_session_ids": [f"standin-{i}-0"],
    })
json.dump(items, open(os.path.join(out, "longmemeval_s_cleaned.json"), "w"))
json.dump({"train": [0, 1, 2], "val": [], "test": [3, 4, 5]},
          open(os.path.join(out, "longmemeval_s_splits.json"), "w"))
PY

status=0
echo "== 1. preflight: configs/quickstart.toml"
"$BIN" preflight --config configs/quickstart.toml "${sets[@]}" | tee "$WORK/quickstart.txt" || status=1
"$BIN" preflight --config configs/quickstart.toml "${sets[@]}" --json --no-throughput >"$WORK/quickstart.json" || true
echo "== 2. preflight: configs/longmemeval.toml over the LongMemEval-S stand-in (an overflow is expected)"
rc=0
"$BIN" preflight --config configs/longmemeval.toml "${sets[@]}" \
  --set "data.path=\"$WORK/lme/longmemeval_s_cleaned.json\"" \
  --set "data.splits_path=\"$WORK/lme/longmemeval_s_splits.json\"" \
  --set 'executor.max_concurrency=4' >"$WORK/longmemeval.txt" 2>&1 || rc=$?
cat "$WORK/longmemeval.txt"
if [ "$rc" = 0 ] || ! grep -q "the context window of $N_CTX tokens" "$WORK/longmemeval.txt"; then
  echo "preflight-check.sh: the LongMemEval overflow was not found (exit $rc)" >&2; status=1
fi

echo "== 3. a short real run of the quickstart against the same servers"
t0=$(date +%s)
"$BIN" train --config configs/quickstart.toml --run-name real --runs-dir "$WORK/runs" "${sets[@]}" \
  >"$WORK/train.out" 2>"$WORK/train.err" || { tail -5 "$WORK/train.err"; exit 1; }
"$BIN" eval --checkpoint "$WORK/runs/real" --dataset locomo --split test "${sets[@]}" \
  >"$WORK/eval.out" 2>"$WORK/eval.err" || { tail -5 "$WORK/eval.err"; exit 1; }
echo "real run: $(( $(date +%s) - t0 )) s wall (train + eval)"
"$LPY" - "$WORK/quickstart.json" "$WORK/runs/real" <<'PY' || status=1
import json, sys
est = {(e["phase"], e["role"]): e for e in json.load(open(sys.argv[1]))["estimate"]}
run = sys.argv[2]
made = {("train", r): [0, 0] for r in ("executor", "answer", "judge", "designer")}
for line in open(f"{run}/metrics.jsonl"):
    m = json.loads(line)
    for role, s in (m.get("llm") or {}).items():
        made[("train", role)][0] += s["calls"]
        made[("train", role)][1] += s["prompt_tokens"]
res = json.load(open(f"{run}/eval/locomo-test/results.json"))
made[("eval", "executor")] = [res["memory_calls"], None]
made[("eval", "answer")] = [len(res["queries"]), None]
ok = True
print("\n| phase | role | estimated calls | made | estimated prompt tokens (no memories) | server-counted prompt tokens | check |")
print("|---|---|---|---|---|---|---|")
for key, e in est.items():
    calls, tokens = made.get(key, [0, None])
    lo, hi = e["calls"], e["calls_max"]
    if key[1] == "designer":
        good = lo <= calls <= hi
        shown, rule = f"{lo:.0f}-{hi:.0f}", "in range"
    else:
        good = calls > 0 and abs(lo - calls) <= 0.1 * calls
        shown, rule = f"{lo:.0f}", "within 10%"
    ok &= good
    tok = "-" if tokens is None else str(tokens)
    print(f"| {key[0]} | {key[1]} | {shown} | {calls} | {e['prompt_tokens']:.0f} | {tok} | {'ok' if good else 'FAILED'} ({rule}) |")
sys.exit(0 if ok else 1)
PY
exit "$status"
