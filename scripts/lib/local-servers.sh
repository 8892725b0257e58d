# Sourced by the scripts that run memskill against real servers on 127.0.0.1
# (scripts/baselines/real-servers.sh, scripts/servers/preflight-check.sh): llama-cpp-python's
# OpenAI-compatible server with the SmolLM2-135M asset, and infinity-emb serving MiniLM.
# The caller sets LPY (a python with llama_cpp.server), IVENV (the infinity venv), MODEL (the
# GGUF), MINILM (the MiniLM folder), WORK (a scratch folder for the logs) and PIDS=() (the
# processes started, for its cleanup trap).

# A free port on 127.0.0.1.
free_port() { "$LPY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# wait_for URL PID LOG: until URL answers (at most 300 s); the server's log tail and an exit
# when it dies first.
wait_for() {
  local me
  me=$(basename "$0")
  for _ in $(seq 1 300); do
    curl -sf -m 2 "$1" >/dev/null 2>&1 && return 0
    kill -0 "$2" 2>/dev/null || { tail -20 "$3" >&2; echo "$me: $1 exited" >&2; exit 1; }
    sleep 1
  done
  echo "$me: $1 did not answer in 300 s" >&2
  exit 1
}

# start_llama N_CTX: llama-cpp-python serving SmolLM2 as `smollm2`; sets LPORT.
start_llama() {
  LPORT=$(free_port)
  "$LPY" -m llama_cpp.server --model "$MODEL" --model_alias smollm2 --host 127.0.0.1 \
    --port "$LPORT" --n_ctx "$1" >"$WORK/llama.log" 2>&1 &
  PIDS+=($!)
  wait_for "http://127.0.0.1:$LPORT/v1/models" "${PIDS[-1]}" "$WORK/llama.log"
}

# start_infinity: infinity-emb serving MiniLM as `minilm` (offline, CPU); sets EPORT.
start_infinity() {
  EPORT=$(free_port)
  HF_HUB_OFFLINE=1 DO_NOT_TRACK=1 INFINITY_ANONYMOUS_USAGE_STATS=0 "$IVENV/bin/infinity_emb" v2 \
    --model-id "$MINILM" --served-model-name minilm --host 127.0.0.1 --port "$EPORT" \
    --engine torch --device cpu --dtype float32 --no-bettertransformer >"$WORK/infinity.log" 2>&1 &
  PIDS+=($!)
  wait_for "http://127.0.0.1:$EPORT/models" "${PIDS[-1]}" "$WORK/infinity.log"
}
