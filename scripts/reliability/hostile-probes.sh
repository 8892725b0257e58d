#!/usr/bin/env bash
# Probes of hostile input and faults (the cases of issue 46): each case run as a
# user or an attacker would, one Markdown row per case saying "held" or "NOT held" with
# what was measured (exit status, wall seconds, peak memory). Called by
# scripts/reliability.sh; also runs alone:
#
#   scripts/reliability/hostile-probes.sh BIN WORK_DIR SYNTHETIC_TOML
#
# env: TRAINER_TESTS / EXECUTOR_TESTS, the unit-test executables of memskill-trainer and
# memskill-executor (cases 7 and 8 run one test of each; skipped when unset).
# Exit status 1 when a case does not hold. Everything runs on 127.0.0.1.
set -uo pipefail
BIN=$1
W=$2/hostile-probes
SYN_TOML=$3
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$W"
FAILS=0
SERVER=""
trap '[ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null' EXIT

row() { # row CASE OK(0/1) DETAIL
  if [ "$2" = 0 ]; then echo "| $1 | held: $3 |"; else echo "| $1 | NOT held: $3 |"; FAILS=$((FAILS + 1)); fi
}
have_time=$([ -x /usr/bin/time ] && echo 1 || echo 0)
measure() { # measure TIMEOUT CMD...: sets RC, WALL (s), RSS (MB); stdout/stderr in $W/out, $W/err
  local t=$1 s
  shift
  s=$(date +%s.%N)
  if [ "$have_time" = 1 ]; then
    /usr/bin/time -f "%M" -o "$W/rss" timeout "$t" "$@" >"$W/out" 2>"$W/err"
    RC=$?
    RSS=$(($(tail -1 "$W/rss" | grep -E '^[0-9]+$' || echo 0) / 1024))
  else
    timeout "$t" "$@" >"$W/out" 2>"$W/err"
    RC=$?
    RSS="?"
  fi
  WALL=$(python3 -c "print(f'{$(date +%s.%N) - $s:.1f}')")
}
refused() { # refused WORD: the last command failed (not killed, no panic), naming WORD
  [ "$RC" != 0 ] && [ "$RC" != 124 ] && [ "$RC" -lt 128 ] && ! grep -q panicked "$W/err" \
    && grep -q -- "$1" "$W/err"
}
serve() { # serve MODE: a hostile server; sets URL
  [ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null
  rm -f "$W/port"
  python3 "$HERE/hostile_server.py" "$1" "$W/port" &
  SERVER=$!
  for _ in $(seq 100); do [ -s "$W/port" ] && break; sleep 0.1; done
  URL="http://127.0.0.1:$(cat "$W/port")/v1"
}
TRAIN=("$BIN" train --runs-dir "$W/runs" --no-progress --config "$SYN_TOML"
  --set 'executor.backend="scripted-synthetic"' --set run.outer_epochs=1 --set run.inner_epochs=2)

# 1. hostile torch checkpoints: each an error naming the file, fast, in bounded memory
python3 "$HERE/hostile_checkpoints.py" "$W/ck" >/dev/null
ok=0; d=""
for f in nested overflow huge claimed; do
  measure 120 "$BIN" import-reference "$W/ck/$f.pt" --out "$W/ck/out-$f"
  if refused "$f.pt" && [ ! -e "$W/ck/out-$f" ] && [ "$RSS" = "?" -o "${RSS:-0}" -lt 1024 ]; then s=refused; else s="rc $RC"; ok=1; fi
  d+="$f.pt $s (${WALL} s, ${RSS} MB); "
done
row "1 hostile checkpoints (1M nested wrappers, overflowing shape, 2^40 shape, 10^8 elements claimed over 4)" $ok "$d"

# 2. numeric config keys out of range: refused by key at load, no run folder
ok=0; d=""
for set in policy.hidden=1000000000 executor.temperature=nan executor.temperature=-5.0 ppo.minibatch_size=0 controller.retrieve=1000000000000; do
  key=${set%%=*}
  measure 60 "${TRAIN[@]}" --run-name "cfg-${key//./-}" --set "$set"
  if refused "$key" && [ ! -e "$W/runs/cfg-${key//./-}" ]; then s=refused; else s="rc $RC"; ok=1; fi
  d+="$set $s; "
done
row "2 config ranges (every numeric key: trainer config::limits tests)" $ok "$d"

# 3. an embeddings server answering zero vectors, and one that hangs
serve zeros
ok=0
measure 60 "$BIN" embed --base-url "$URL" --model m hello
refused "zero vector" || ok=1
d="embed against zeros: $([ $ok = 0 ] && echo refused || echo "rc $RC"); "
measure 60 "${TRAIN[@]}" --run-name zeros --set 'encoder.kind="openai"' \
  --set "encoder.openai.base_urls=[\"$URL\"]" --set 'encoder.openai.model="m"'
if refused "zero vector" && [ ! -e "$W/runs/zeros" ]; then d+="train against zeros: refused, no run folder; "; else ok=1; d+="train against zeros: rc $RC; "; fi
serve hang
measure 60 "$BIN" embed --base-url "$URL" --model m --timeout 2 --max-retries 1 hello
if refused "$URL" && python3 -c "import sys; sys.exit(0 if $WALL < 15 else 1)"; then d+="embed --timeout 2 --max-retries 1 against a hung server: error after ${WALL} s"; else ok=1; d+="hung server: rc $RC after ${WALL} s"; fi
row "3 zero vectors, embed --timeout" $ok "$d"

# 4. a 50 MB reply: stopped at max_reply_bytes, naming the endpoint, in bounded memory
serve huge
measure 120 "${TRAIN[@]}" --run-name huge --set run.batch_size=2 --set 'executor.backend="openai"' \
  --set "executor.base_urls=[\"$URL\"]" --set 'executor.model="m"' --set executor.max_retries=0
ok=1
if grep -q "max_reply_bytes" "$W/err" && grep -q "$URL" "$W/err" && ! grep -q panicked "$W/err" \
  && [ "$RSS" = "?" -o "${RSS:-0}" -lt 600 ]; then ok=0; fi
row "4 a 50 MB reply" $ok "the reply refused as above max_reply_bytes, naming the endpoint (exit $RC, ${WALL} s, ${RSS} MB)"
kill "$SERVER" 2>/dev/null; SERVER=""

# 5. two writers of one run, and a resume over a metrics file whose steps do not increase
"${TRAIN[@]}" --run-name dup --set executor.scripted_latency_ms=20 --set run.outer_epochs=2 \
  --set run.inner_epochs=3 >/dev/null 2>"$W/first.err" &
first=$!
sleep 0.3
measure 30 "${TRAIN[@]}" --run-name dup --set executor.scripted_latency_ms=20 --set run.outer_epochs=2 --set run.inner_epochs=3
second_ok=$(refused "in use by another memskill process" && echo 1 || echo 0)
second_wall=$WALL
wait "$first"; first_rc=$?
steps=$(python3 -c "import json; print(','.join(str(json.loads(l)['step']) for l in open('$W/runs/dup/metrics.jsonl') if json.loads(l)['type']=='update'))")
"${TRAIN[@]}" --run-name bad --set run.inner_epochs=3 --max-updates 2 >/dev/null 2>&1
python3 - "$W/runs/bad/metrics.jsonl" <<'PY'
import json, sys
p = sys.argv[1]
lines = open(p).read().splitlines()
ups = [i for i, l in enumerate(lines) if json.loads(l)["type"] == "update"]
# the second update says step 1 again (same length: the checkpoint's byte count holds)
lines[ups[1]] = lines[ups[1]].replace('"step":2', '"step":1', 1)
assert json.loads(lines[ups[1]])["step"] == 1, lines[ups[1]][:200]
open(p, "w").write("\n".join(lines) + "\n")
PY
measure 60 "$BIN" train --resume --run-name bad --runs-dir "$W/runs" --no-progress
resume_ok=$(refused "the steps must increase" && echo 1 || echo 0)
ok=$([ "$second_ok" = 1 ] && [ "$first_rc" = 0 ] && [ "$steps" = "1,2,3,4,5,6" ] && [ "$resume_ok" = 1 ] && echo 0 || echo 1)
row "5 one writer per run" $ok "second train 0.3 s later refused after ${second_wall} s ($([ "$second_ok" = 1 ] && echo yes || echo no)), first exit $first_rc, update steps [$steps]; --resume over steps 1,1: $([ "$resume_ok" = 1 ] && echo refused || echo "rc $RC")"

# 6. folder-atomic export: kill -9 at random moments never leaves a mix; a mix made by
#    hand is refused; a linked --out is refused
E=$W/export; mkdir -p "$E"
"$BIN" skills init --out "$E/a.json" >/dev/null
# bank B: bank A with one skill's text changed (the issue's mix: one SKILL.md of B, the rest of A)
python3 - "$E/a.json" "$E/b.json" <<'PY'
import json, sys
bank = json.load(open(sys.argv[1]))
skills = bank["skills"] if isinstance(bank.get("skills"), list) else list(bank["skills"].values())
s = next(x for x in skills if x["name"] == "insert")
s["instructions"] += " Keep every date exactly as it was said."
json.dump(bank, open(sys.argv[2], "w"), indent=2)
PY
ha=$("$BIN" skills export "$E/a.json" --out "$E/ea" | grep -o 'hash [0-9a-f]*')
hb=$("$BIN" skills export "$E/b.json" --out "$E/eb" | grep -o 'hash [0-9a-f]*')
"$BIN" skills export "$E/a.json" --out "$E/exp" >/dev/null
mixes=0; kills=0
for i in $(seq 12); do
  src=$([ $((i % 2)) = 0 ] && echo a || echo b)
  "$BIN" skills export "$E/$src.json" --out "$E/exp" --force >/dev/null 2>&1 &
  pid=$!
  sleep "0.0$((RANDOM % 6))"
  kill -9 "$pid" 2>/dev/null && kills=$((kills + 1))
  wait "$pid" 2>/dev/null
  got=$("$BIN" skills import "$E/exp" --out "$E/back-$i.json" 2>&1 | grep -o 'hash [0-9a-f]*' || echo refused)
  [ "$got" = "$ha" ] || [ "$got" = "$hb" ] || mixes=$((mixes + 1))
done
stray=$(find "$E" -maxdepth 2 -name '.*tmp-*' -o -maxdepth 2 -name '.exp.export-*' | grep -c . || true)
cp "$E/eb/insert/SKILL.md" "$E/ea/insert/SKILL.md"
measure 30 "$BIN" skills import "$E/ea" --out "$E/mixed.json"
mix_refused=$(refused "does not match" && echo 1 || echo 0)
ln -s "$E/eb" "$E/link"
measure 30 "$BIN" skills export "$E/a.json" --out "$E/link" --force
link_refused=$(refused "symbolic link" && echo 1 || echo 0)
ok=$([ "$mixes" = 0 ] && [ "$mix_refused" = 1 ] && [ "$link_refused" = 1 ] && echo 0 || echo 1)
row "6 folder-atomic export" $ok "$kills kill -9 of export --force at random moments: $mixes mixed or unreadable folders; temp folders left after the next export: $stray; a hand-made mix: $([ "$mix_refused" = 1 ] && echo refused || echo accepted); export --force through a linked --out: $([ "$link_refused" = 1 ] && echo refused || echo written)"

# 7 and 8: the process-group and cache-redaction tests
if [ -n "${TRAINER_TESTS:-}" ]; then
  measure 120 "$TRAINER_TESTS" what_the_adapter_started_is_stopped_with_it --exact adapter::process::tests::what_the_adapter_started_is_stopped_with_it
  row "7 adapter grandchildren" $([ "$RC" = 0 ] && grep -q "1 passed" "$W/out" && echo 0 || echo 1) "a sleep the adapter started in its process group and one it started in a session of its own (setsid) are both killed with it, the second reported (test, exit $RC)"
fi
if [ -n "${EXECUTOR_TESTS:-}" ]; then
  measure 120 "$EXECUTOR_TESTS" no_secret_value_reaches_the_cache_file
  row "8 secrets in the response cache" $([ "$RC" = 0 ] && grep -q "1 passed" "$W/out" && echo 0 || echo 1) "the SQLite file grepped for the injected key after a read-write run (test, exit $RC)"
fi

# 9. a full disk on the first checkpoint, and a dataset with a 60 MB turn
T=$W/tmpfs; mkdir -p "$T"
if mount -t tmpfs -o size=64k tmpfs "$T" 2>/dev/null; then
  measure 60 "$BIN" train --runs-dir "$T/runs" --no-progress --config "$SYN_TOML" \
    --set 'executor.backend="scripted-synthetic"' --set run.outer_epochs=1 --set run.inner_epochs=2 \
    --run-name full
  left=$(find "$T" -mindepth 1 | wc -l)
  umount "$T"
  ok=$(refused "ENOSPC" && [ "$left" -le 1 ] && echo 0 || echo 1)
  d="64 KB tmpfs: the error says the disk is full (exit $RC), entries left: $left (the runs folder); "
else
  ok=0; d="ENOSPC skipped (mounting a tmpfs needs root; the unit test checkpoint::a_full_disk_while_saving... covers it); "
fi
python3 - "$W/big.json" <<'PY'
import json, sys
turn = {"speaker": "A", "dia_id": "D1:1", "text": "x" * (60 << 20)}
json.dump([{"sample_id": "a", "conversation": {"speaker_a": "A", "speaker_b": "B",
  "session_1": [turn], "session_1_date_time": "1:56 pm on 8 May, 2023"},
  "qa": [{"question": "q", "answer": "a", "category": 1, "evidence": []}]}], open(sys.argv[1], "w"))
PY
measure 60 "$BIN" train --run-name big --runs-dir "$W/runs" --no-progress --config configs/locomo.toml \
  --set "data.path=\"$W/big.json\"" --set 'executor.backend="scripted-synthetic"' \
  --set 'encoder.kind="hashing"' --set encoder.dim=32 --set 'memory.retriever="encoder"'
if refused "turn \"D1:1\"" && [ ! -e "$W/runs/big" ]; then d+="60 MB turn: refused naming it after ${WALL} s (${RSS} MB), no run folder"; else ok=1; d+="60 MB turn: rc $RC after ${WALL} s"; fi
row "9 full disk, oversized turn" $ok "$d"

exit $([ "$FAILS" = 0 ] && echo 0 || echo 1)
