#!/usr/bin/env bash
# Embeddings from a real server against our local encoder (issue 22). Starts infinity-emb
# (PyPI) on 127.0.0.1 serving the all-MiniLM-L6-v2 asset folder, offline, then embeds 200
# LoCoMo turn texts with `memskill embed --json` three ways:
#   local:  --model <asset folder>
#   server: --base-url http://127.0.0.1:PORT --model sentence-transformers/all-MiniLM-L6-v2
#   hub:    --model sentence-transformers/all-MiniLM-L6-v2 through a temporary Hugging Face
#           cache folder (HF_HUB_CACHE) laid out with the asset
# and checks cosine >= 0.99999 between local and each other way (prints the minimum).
# --train: also a reduced configs/locomo.toml training run with encoder.kind = "openai" and
# memory.retriever = "openai" against that server, the LLM roles served by
# `memskill llm serve-scripted`; it must finish with 0 LLM errors.
#
# Usage: scripts/servers/embeddings-check.sh [--train] [--no-install]
#   --no-install  print `skipped: ...` and exit 0 when the venv is missing (for tests)
# Env: MEMSKILL_BIN (default target/debug/memskill, built when missing), LOCOMO (locomo10.json),
#      MINILM (asset folder), KEEP=1 keeps the work folder.
set -euo pipefail
cd "$(dirname "$0")/../.."
TRAIN=0
INSTALL=1
for a in "$@"; do
  case "$a" in
    --train) TRAIN=1 ;;
    --no-install) INSTALL=0 ;;
    *) echo "unknown argument $a" >&2; exit 2 ;;
  esac
done
CACHE="${MEMSKILL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memskill}"
VENV="$CACHE/infinity-venv"
MINILM="${MINILM:-$CACHE/assets/all-MiniLM-L6-v2}"
NAME=sentence-transformers/all-MiniLM-L6-v2
LOCOMO="${LOCOMO:-}"
for p in "$CACHE/data/locomo/locomo10.json" "../shared/data/locomo/locomo10.json"; do
  [ -z "$LOCOMO" ] && [ -f "$p" ] && LOCOMO="$p"
done
skip() { echo "skipped: $*"; exit 0; }
[ -f "$MINILM/model.safetensors" ] || skip "MiniLM asset missing at $MINILM (scripts/fetch-assets.sh)"
[ -n "$LOCOMO" ] && [ -f "$LOCOMO" ] || skip "locomo10.json not found (scripts/fetch-data.sh --from DIR locomo)"
if [ ! -x "$VENV/bin/infinity_emb" ]; then
  [ "$INSTALL" = 1 ] || skip "no infinity-emb venv at $VENV (scripts/servers/infinity-setup.sh)"
  scripts/servers/infinity-setup.sh >/dev/null
fi
PY="$VENV/bin/python"
BIN="${MEMSKILL_BIN:-target/debug/memskill}"
[ -x "$BIN" ] || cargo build -q --bin memskill

WORK=$(mktemp -d "${TMPDIR:-/tmp}/memskill-emb.XXXXXX")
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  if [ "${KEEP:-0}" = 1 ]; then echo "kept $WORK" >&2; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

# 200 turn texts, one per line
"$PY" - "$LOCOMO" >"$WORK/texts.txt" <<'EOF'
import json, re, sys
out = []
for s in json.load(open(sys.argv[1])):
    conv = s["conversation"]
    keys = sorted((k for k in conv if re.fullmatch(r"session_\d+", k)), key=lambda k: int(k[8:]))
    for k in keys:
        out += [" ".join(t["text"].split()) for t in conv[k]]
for t in out[:200]:
    print(t)
EOF
[ "$(wc -l <"$WORK/texts.txt")" = 200 ] || { echo "FAILED: fewer than 200 LoCoMo texts" >&2; exit 1; }

# infinity-emb on a free port, offline
PORT=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
HF_HUB_OFFLINE=1 DO_NOT_TRACK=1 INFINITY_ANONYMOUS_USAGE_STATS=0 "$VENV/bin/infinity_emb" v2 \
  --model-id "$MINILM" --served-model-name "$NAME" --host 127.0.0.1 --port "$PORT" \
  --engine torch --device cpu --dtype float32 --no-bettertransformer >"$WORK/infinity.log" 2>&1 &
PIDS+=($!)
URL="http://127.0.0.1:$PORT"
for _ in $(seq 300); do
  curl -sf -m 2 "$URL/models" >/dev/null 2>&1 && break
  kill -0 "${PIDS[0]}" 2>/dev/null || { tail -20 "$WORK/infinity.log" >&2; echo "FAILED: infinity exited" >&2; exit 1; }
  sleep 1
done
curl -sf -m 2 "$URL/models" >/dev/null || { echo "FAILED: infinity did not answer in 300 s" >&2; exit 1; }

# a Hugging Face cache folder laid out with the asset
REV=0123456789abcdef0123456789abcdef01234567
SNAP="$WORK/hub/models--sentence-transformers--all-MiniLM-L6-v2/snapshots/$REV"
mkdir -p "$SNAP" "$WORK/hub/models--sentence-transformers--all-MiniLM-L6-v2/refs"
printf '%s' "$REV" >"$WORK/hub/models--sentence-transformers--all-MiniLM-L6-v2/refs/main"
for f in "$MINILM"/*; do ln -s "$(cd "$(dirname "$f")" && pwd)/$(basename "$f")" "$SNAP/"; done

"$BIN" embed --json --input "$WORK/texts.txt" --model "$MINILM" >"$WORK/local.jsonl"
"$BIN" embed --json --input "$WORK/texts.txt" --base-url "$URL" --model "$NAME" >"$WORK/server.jsonl"
HF_HUB_CACHE="$WORK/hub" "$BIN" embed --json --input "$WORK/texts.txt" --model "$NAME" >"$WORK/hub.jsonl"

"$PY" - "$WORK" <<'EOF'
import json, math, sys
d = sys.argv[1]
load = lambda n: [json.loads(l) for l in open(f"{d}/{n}.jsonl")]
local = load("local")
ok = True
for way in ("server", "hub"):
    other = load(way)
    assert len(local) == len(other) == 200, (way, len(local), len(other))
    cos = []
    for a, b in zip(local, other):
        dot = sum(x * y for x, y in zip(a, b))
        cos.append(dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))))
    m = min(cos)
    print(f"min cosine local vs {way}: {m:.7f} over {len(cos)} texts (dim {len(local[0])})")
    ok &= m >= 0.99999
sys.exit(0 if ok else 1)
EOF

if [ "$TRAIN" = 1 ]; then
  "$BIN" llm serve-scripted --port-file "$WORK/llm-port" 2>"$WORK/scripted.log" &
  PIDS+=($!)
  for _ in $(seq 100); do [ -s "$WORK/llm-port" ] && break; sleep 0.1; done
  LLM="http://127.0.0.1:$(cat "$WORK/llm-port")/v1"
  EMB=(--set 'encoder.kind="openai"' --set "encoder.openai.base_urls=[\"$URL\"]"
       --set "encoder.openai.model=\"$NAME\"" --set 'memory.retriever="openai"'
       --set "memory.retriever_openai.base_urls=[\"$URL\"]"
       --set "memory.retriever_openai.model=\"$NAME\"")
  "$BIN" train --config configs/locomo.toml --run-name locomo-openai-encoder \
    --runs-dir "$WORK/runs" --no-progress "${EMB[@]}" \
    --set "data.path=\"$(cd "$(dirname "$LOCOMO")" && pwd)/$(basename "$LOCOMO")\"" \
    --set data.max_samples=2 --set data.max_sessions=2 --set data.max_queries=4 \
    --set run.outer_epochs=1 --set run.inner_epochs=2 --set run.batch_size=2 \
    --set "executor.base_urls=[\"$LLM\"]" --set executor.cache='"off"' \
    --set designer.enabled=false 2>&1 | tee "$WORK/train.log" | tail -5
  "$PY" - "$WORK/runs/locomo-openai-encoder/metrics.jsonl" <<'EOF'
import json, sys
ups = [json.loads(l) for l in open(sys.argv[1])]
ups = [u for u in ups if "llm_errors" in u]
errs = {k: sum(u.get(k, 0) for u in ups) for k in ("llm_errors", "span_errors", "query_errors")}
calls = sum(u.get("llm_calls", 0) for u in ups)
print(f"training: {len(ups)} updates, {calls} LLM calls, errors {errs}")
sys.exit(0 if ups and not any(errs.values()) else 1)
EOF
fi
echo "embeddings check: ok"
