#!/usr/bin/env bash
# The quickstart's LLM calls against a real server, as a new user would run them: starts
# llama-cpp-python's OpenAI-compatible server (the bench venv's llama-cpp-python with its
# `[server]` extra, installed here if missing without rebuilding llama-cpp-python) on
# 127.0.0.1 with the SmolLM2 asset, then trains the quickstart config (executor, answer and
# designer calls) against it twice: structured outputs on (`structured = "json_schema"`,
# `structured_dialect = "auto"` unless STRUCTURED_DIALECT says otherwise), then off. For each
# run it prints the parse problems, the LLM errors and retries, the designer's outcome and
# the structured-output dialect each endpoint took (from the run's metrics.jsonl). The
# server is stopped on exit.
#   scripts/servers/check.sh [extra --set KEY=VALUE ...]
# Env: PORT (default: a free one), RUNS_DIR (default: a temporary folder), N_CTX (4096),
#      STRUCTURED_DIALECT (auto).
set -euo pipefail
cd "$(dirname "$0")/../.."

CACHE="${MEMSKILL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memskill}"
PY="$CACHE/bench-venv/bin/python"
MODEL="$CACHE/assets/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
[ -x "$PY" ] || { echo "check.sh: no bench venv at $CACHE/bench-venv (run scripts/bench/setup.sh)" >&2; exit 2; }
"$PY" -c 'import llama_cpp' 2>/dev/null ||
  { echo "check.sh: llama-cpp-python missing in $CACHE/bench-venv (run scripts/bench/setup.sh)" >&2; exit 2; }
[ -f "$MODEL" ] || { echo "check.sh: $MODEL missing (run scripts/fetch-assets.sh)" >&2; exit 2; }
[ -s "$CACHE/data/locomo/locomo10.json" ] ||
  { echo "check.sh: LoCoMo missing (run scripts/fetch-data.sh locomo)" >&2; exit 2; }

VER="$("$PY" -c 'import importlib.metadata as m; print(m.version("llama-cpp-python"))')"
if ! "$PY" -c 'import uvicorn, fastapi, sse_starlette, starlette_context, pydantic_settings' 2>/dev/null; then
  echo "== installing the [server] extra of llama-cpp-python $VER (the installed build is kept)"
  # --only-binary: pip may use the installed llama-cpp-python, never build it again
  "$PY" -m pip install --quiet --only-binary=llama-cpp-python "llama-cpp-python[server]==$VER"
fi

PORT="${PORT:-$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}"
WORK="$(mktemp -d)"
RUNS="${RUNS_DIR:-$WORK/runs}"
SERVER=""
stop_server() {
  if [ -n "$SERVER" ]; then
    kill "$SERVER" 2>/dev/null || true
    wait "$SERVER" 2>/dev/null || true
  fi
}
trap stop_server EXIT
trap 'exit 130' INT TERM

echo "== llama-cpp-python $VER server on 127.0.0.1:$PORT ($MODEL; log $WORK/server.log)"
"$PY" -m llama_cpp.server --model "$MODEL" --model_alias smollm2 --host 127.0.0.1 \
  --port "$PORT" --n_ctx "${N_CTX:-4096}" >"$WORK/server.log" 2>&1 &
SERVER=$!
for _ in $(seq 1 120); do
  if "$PY" -c "import urllib.request as u; u.urlopen('http://127.0.0.1:$PORT/v1/models', timeout=1)" 2>/dev/null; then
    break
  fi
  kill -0 "$SERVER" 2>/dev/null || { echo "check.sh: the server exited:" >&2; tail -20 "$WORK/server.log" >&2; exit 1; }
  sleep 1
done
"$PY" -c "import urllib.request as u; u.urlopen('http://127.0.0.1:$PORT/v1/models', timeout=2)" ||
  { echo "check.sh: the server did not answer within 120 s" >&2; tail -20 "$WORK/server.log" >&2; exit 1; }

echo "== building memskill (dev profile)"
cargo build --quiet --bin memskill
BIN="${CARGO_TARGET_DIR:-target}/debug/memskill"

sets=(
  --set 'executor.backend="openai"'
  --set "executor.base_urls=[\"http://127.0.0.1:$PORT/v1\"]"
  --set 'executor.model="smollm2"'
  --set 'executor.api_key_envs=[]'
  --set 'executor.max_concurrency=1'
  --set "executor.structured_dialect=\"${STRUCTURED_DIALECT:-auto}\""
)
for s in "$@"; do sets+=(--set "$s"); done

status=0
for mode in json_schema off; do
  name="server-check-$mode"
  echo "== training the quickstart against the server, structured = \"$mode\" (run $RUNS/$name)"
  if ! "$BIN" train --config configs/quickstart.toml --run-name "$name" --runs-dir "$RUNS" \
      "${sets[@]}" --set "executor.structured=\"$mode\"" 2>"$WORK/$name.stderr"; then
    echo "   the run failed (last lines of its log):"
    tail -5 "$WORK/$name.stderr" | sed 's/^/   /'
    status=1
  fi
  grep -i "dialect" "$WORK/$name.stderr" | sed 's/^/   log: /' || true
  "$PY" - "$RUNS/$name/metrics.jsonl" "$mode" <<'EOF' || status=1
import json, sys
path, mode = sys.argv[1], sys.argv[2]
try:
    lines = [json.loads(l) for l in open(path) if l.strip()]
except OSError as e:
    sys.exit(f"   no metrics: {e}")
ups = [l for l in lines if l.get("type") == "update"]
stages = [l for l in lines if l.get("type") == "stage"]
def total(key, rows):
    return sum(r.get(key, 0) for r in rows)
errors = total("llm_errors", ups) + sum(v["errors"] for s in stages for v in s["llm"].values())
retries = sum(sum(r.get("retries", {}).values()) for r in ups + stages)
dialects = {}
for r in ups + stages:
    dialects.update(r.get("structured_dialects", {}))
print(f"   structured={mode}: {len(ups)} updates, {total('parse_problems', ups)} parse problems "
      f"in {sum(u['llm']['executor']['calls'] for u in ups)} executor replies, "
      f"{errors} LLM errors, {retries} retries, span errors {total('span_errors', ups)}, "
      f"query errors {total('query_errors', ups)}")
for s in stages:
    extra = f" ({s['designer_error']})" if s.get("designer_error") else ""
    calls = s["llm"]["designer"]["calls"]
    print(f"   designer stage {s['stage']}: {s['designer']}{extra}, {calls} designer calls")
print("   dialect: " + (", ".join(f"{u} -> {d}" for u, d in sorted(dialects.items())) or "none recorded"))
EOF
done
exit "$status"
