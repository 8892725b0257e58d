#!/usr/bin/env bash
# Every external memory system's adapter against real servers once, all on 127.0.0.1 and
# offline: llama-cpp-python's OpenAI-compatible server with the SmolLM2-135M asset as the LLM
# of the system and of memskill's answerer, and infinity-emb serving the all-MiniLM-L6-v2
# asset as the embedder (the run's `/embeddings` server, which memskill hands to adapters).
# Each system evaluates the quickstart's LoCoMo split; the table says, per system, the
# adapter requests, the protocol failures among them (timed out, malformed, exited), the
# requests its library refused (answered with an error, e.g. on a reply it could not use),
# the memory-building requests that failed (counted, never scored), the questions answered
# and the wall time. SmolLM2-135M cannot do these libraries' JSON and
# tool-call tasks well: the scores say nothing, the point is that nothing crashes and every
# failure is counted. Every reply is capped at CAP tokens (default 256) by
# scripts/baselines/cap_proxy.py in front of the server, so the tiny model's rambling cannot
# turn one call into minutes; a library then sees a reply cut at the cap.
#
# Needs: the llama venv (llama-cpp-python[server]; LLAMA_VENV, default the cache's llama-venv,
# else bench-venv), the infinity venv (scripts/servers/infinity-setup.sh), the adapters' venvs
# (scripts/baselines/setup.sh NAME) and, for A-MEM and MemoryOS, AMEM_DIR / MEMORYOS_DIR. A
# system whose venv or checkout is missing is skipped with the reason.
# Usage: scripts/baselines/real-servers.sh [system ...]   (default: every system)
set -euo pipefail
cd "$(dirname "$0")/../.."
CACHE="${MEMSKILL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memskill}"
LLAMA_VENV="${LLAMA_VENV:-$CACHE/llama-venv}"
[ -x "$LLAMA_VENV/bin/python" ] || LLAMA_VENV="$CACHE/bench-venv"
LPY="$LLAMA_VENV/bin/python"
"$LPY" -c 'import llama_cpp.server' 2>/dev/null ||
  { echo "real-servers.sh: no llama-cpp-python[server] in $LLAMA_VENV" >&2; exit 2; }
IVENV="$CACHE/infinity-venv"
[ -x "$IVENV/bin/infinity_emb" ] ||
  { echo "real-servers.sh: no infinity-emb in $IVENV (scripts/servers/infinity-setup.sh)" >&2; exit 2; }
MODEL="$CACHE/assets/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
MINILM="$CACHE/assets/all-MiniLM-L6-v2"
[ -f "$MODEL" ] && [ -f "$MINILM/model.safetensors" ] ||
  { echo "real-servers.sh: model assets missing (scripts/fetch-assets.sh)" >&2; exit 2; }

WORK="$(mktemp -d)"
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
trap 'exit 130' INT TERM
. scripts/lib/local-servers.sh

start_llama "${N_CTX:-8192}"
# every reply capped at CAP tokens (default 256): SmolLM2-135M rarely stops by itself, and a
# library that asks for 2000 tokens (or none) would wait minutes per call
# SCHEMA=json-object: OpenAI's json_schema requests passed on as llama.cpp's json_object+schema
"$LPY" scripts/baselines/cap_proxy.py "http://127.0.0.1:$LPORT" "${CAP:-256}" "$WORK/proxy.port" ${SCHEMA:-} &
PIDS+=($!)
for _ in $(seq 1 50); do [ -s "$WORK/proxy.port" ] && break; sleep 0.1; done
LPORT=$(cat "$WORK/proxy.port")
wait_for "http://127.0.0.1:$LPORT/v1/models" "${PIDS[-1]}" "$WORK/llama.log"
start_infinity
echo "== llama-cpp-python (SmolLM2-135M) behind a ${CAP:-256}-token reply cap on :$LPORT, infinity-emb on :$EPORT (MiniLM); work $WORK"

cargo build --quiet --bin memskill
BIN="${CARGO_TARGET_DIR:-target}/debug/memskill"
sets=(
  --set 'executor.backend="openai"' --set "executor.base_urls=[\"http://127.0.0.1:$LPORT/v1\"]"
  --set 'executor.model="smollm2"' --set 'executor.api_key_envs=[]'
  --set 'executor.max_concurrency=1' --set 'executor.timeout_secs=300'
  --set 'encoder.kind="openai"' --set "encoder.openai.base_urls=[\"http://127.0.0.1:$EPORT\"]"
  --set 'encoder.openai.model="minilm"' --set 'encoder.openai.api_key_envs=[]'
  --set 'memory.retriever="encoder"' --set 'eval.max_error_rate=1.0'
)
py() { echo "$CACHE/$1-venv/bin/python"; }
declare -A CMD=(
  [mem0]="$(py mem0) scripts/baselines/mem0_adapter.py"
  [langmem]="$(py langmem) scripts/baselines/langmem_adapter.py"
  [a-mem]="$(py amem) scripts/baselines/amem_adapter.py"
  [memoryos]="$(py memoryos) scripts/baselines/memoryos_adapter.py"
  [memoryos-answers]="$(py memoryos) scripts/baselines/memoryos_adapter.py --answer"
)
systems=("$@")
[ ${#systems[@]} -gt 0 ] || systems=(mem0 langmem a-mem memoryos memoryos-answers)
ran=()
for s in "${systems[@]}"; do
  exe="${CMD[$s]%% *}"
  if [ ! -x "$exe" ]; then echo "skipped: $s (no venv: scripts/baselines/setup.sh)"; continue; fi
  case "$s" in
    a-mem) [ -n "${AMEM_DIR:-}" ] || { echo "skipped: a-mem (AMEM_DIR unset)"; continue; } ;;
    memoryos*) [ -n "${MEMORYOS_DIR:-}" ] || { echo "skipped: $s (MEMORYOS_DIR unset)"; continue; } ;;
  esac
  echo "== $s"
  t0=$(date +%s.%N)
  rc=0
  "$BIN" eval --adapter "${CMD[$s]}" --method "$s" --config configs/quickstart.toml --no-judge \
    --out "$WORK/$s" "${sets[@]}" >"$WORK/$s.out" 2>"$WORK/$s.err" || rc=$?
  t1=$(date +%s.%N)
  echo "$s $rc $("$LPY" -c "print(round($t1-$t0,1))")" >>"$WORK/times"
  [ "$rc" = 0 ] || tail -5 "$WORK/$s.err"
  ran+=("$s")
done

"$LPY" - "$WORK" "${ran[@]}" <<'PY'
import json, os, sys
work, names = sys.argv[1], sys.argv[2:]
times = {l.split()[0]: l.split()[1:] for l in open(os.path.join(work, "times"))} if names else {}
print("\n| system | requests | protocol errors | library errors (refused requests) | memory-building failures | questions answered | F1 | wall time |")
print("|---|---|---|---|---|---|---|---|")
for n in names:
    rc, wall = times[n]
    p = os.path.join(work, n, "results.json")
    if not os.path.exists(p):
        err = open(os.path.join(work, n + ".err")).read().strip().splitlines()
        print(f"| {n} | - | - | - | - | exit {rc}: {err[-1][:120] if err else ''} | - | {wall} s |")
        continue
    r = json.load(open(p))
    a = r.get("adapter") or {}
    qs = r["queries"]
    answered = sum(1 for q in qs if not q.get("error"))
    f1 = r["overall"].get("f1")
    f1 = "-" if f1 is None else f"{100 * f1:.2f}"
    errs, refused = a.get("errors", 0), a.get("refused", 0)
    print(f"| {n} | {a.get('requests', '-')} | {errs - refused} | {refused} | {r['memory_call_errors']} of {r['memory_calls']} "
          f"| {answered} of {len(qs)} | {f1} | {wall} s |")
PY
