#!/usr/bin/env bash
# Reliability run (issue 12): fault injection, kill -9 + resume cycles, fuzzing of every
# reader of untrusted input, the safety held-out sets, and abuse probes (issue 27: links,
# FIFOs, runaway templates, secret redaction); prints one table.
#
#   scripts/reliability.sh              # the default budget (within 15 min on 2 cores)
#   scripts/reliability.sh --long       # the long budget: 20 kills, 20000 fuzz mutations
#   KILLS=5 FUZZ_ITERS=2000 scripts/reliability.sh   # any budget
#
# Everything runs offline on 127.0.0.1: the LLM is the scripted synthetic oracle served by
# `memskill llm serve-scripted` (which injects the faults), the encoder is the hashing one.
# Exit status 0 only when every check holds: zero panics, every injected fault counted in
# metrics.jsonl, no lost or duplicated metrics lines, every resume byte-identical, zero fuzz
# crashes, unsafe-text rejection >= 95% and ordinary-text false rejection <= 5%.
set -euo pipefail
cd "$(dirname "$0")/.."

START=$(date +%s)
if [ "${1:-}" = "--long" ]; then
  KILLS=${KILLS:-20}
  FUZZ_ITERS=${FUZZ_ITERS:-20000}
else
  KILLS=${KILLS:-8}
  FUZZ_ITERS=${FUZZ_ITERS:-3000}
fi
RATES=${RATES:-"0.1 0.5"}
SEED=${SEED:-5}

echo "building the test profile (cargo test --workspace --no-run) ..." >&2
cargo test --workspace --no-run -q 2>/dev/null || cargo test --workspace --no-run
TARGET=$(cd "${CARGO_TARGET_DIR:-target}" && pwd -P)
BIN=$TARGET/debug/memskill
testbin() { # the newest test executable of test target $1 (built by the command above)
  find "$TARGET/debug/deps" -maxdepth 1 -type f -executable -name "$1-*" -printf '%T@ %p\n' \
    | sort -rn | head -1 | cut -d' ' -f2
}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/memskill-reliability.XXXXXX")
SERVER_PID=""
cleanup() {
  [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null || true
  if [ "${KEEP:-0}" = 1 ]; then echo "kept $WORK" >&2; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
FAIL=0
check() { # check NAME CONDITION-RESULT(0/1)
  if [ "$2" != 0 ]; then echo "FAILED: $1" >&2; FAIL=1; fi
}

cat >"$WORK/synthetic.toml" <<EOF
[run]
seed = $SEED
[data]
dataset = "synthetic"
synthetic_samples = 8
synthetic_spans = 3
[encoder]
kind = "hashing"
dim = 32
[controller]
top_k = 1
retrieve = 5
[answer]
retrieve = 5
[policy]
hidden = 16
[concurrency]
episodes = 4
queries = 3
EOF
SYN=(--config "$WORK/synthetic.toml")

# ---------------------------------------------------------------------------------------
# 1. Fault injection: every role (executor, answerer, designer) through a server that
#    answers a share of requests with HTTP 500 / 429, garbage, a dropped connection,
#    `content: null` or a truncated reply.
# ---------------------------------------------------------------------------------------
declare -A F_INJ F_CNT F_FAILED F_EXCL F_DONE F_PANIC F_LINES F_SILENT
for rate in $RATES; do
  rm -f "$WORK/port"
  "$BIN" llm serve-scripted --samples 8 --spans 3 --seed "$SEED" --fault-rate "$rate" \
    --fault-seed 1 --port-file "$WORK/port" --stats-file "$WORK/stats-$rate.json" \
    2>"$WORK/server-$rate.log" &
  SERVER_PID=$!
  for _ in $(seq 100); do [ -s "$WORK/port" ] && break; sleep 0.1; done
  url="http://127.0.0.1:$(cat "$WORK/port")/v1"
  set +e
  "$BIN" train --run-name "faults-$rate" --runs-dir "$WORK/runs" --no-progress "${SYN[@]}" \
    --set run.batch_size=8 --set run.outer_epochs=2 --set run.inner_epochs=3 \
    --set 'executor.backend="openai"' --set "executor.base_urls=[\"$url\"]" \
    --set 'executor.model="scripted"' --set executor.max_retries=6 \
    --set executor.backoff_base_ms=0 --set executor.timeout_secs=10 \
    --set designer.enabled=true 2>"$WORK/train-$rate.log"
  rc=$?
  set -e
  sleep 0.5 # the server rewrites its stats every 200 ms
  kill "$SERVER_PID" 2>/dev/null || true
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=""
  read -r inj cnt failed excl lines silent <<<"$(python3 - "$WORK/stats-$rate.json" "$WORK/runs/faults-$rate/metrics.jsonl" <<'EOF'
import json, sys
st = json.load(open(sys.argv[1]))
inj = sum(st["faults"].values())
cnt = failed = excl = silent = 0
steps = []
try:
    for line in open(sys.argv[2]):
        m = json.loads(line)
        if m["type"] == "update":
            steps.append(m["step"])
            excl += m.get("dropped", 0)
            # a failed executor call must exclude its episode: never scored as a result
            if m["llm"]["executor"]["errors"] > 0 and m.get("dropped_incomplete", 0) == 0:
                silent += 1
        for role in m.get("llm", {}).values():
            failed += role.get("errors", 0)
            cnt += role.get("errors", 0) + role.get("truncated", 0)
        cnt += sum(m.get("retries", {}).values())
except FileNotFoundError:
    pass
ok = steps == list(range(1, len(steps) + 1))
print(inj, cnt, failed, excl, f"{len(steps)}{'' if ok else '-BAD-ORDER'}", silent)
EOF
)"
  panics=$(cat "$WORK/train-$rate.log" "$WORK/server-$rate.log" | { grep -c "panicked" || true; })
  F_INJ[$rate]=$inj; F_CNT[$rate]=$cnt; F_FAILED[$rate]=$failed; F_EXCL[$rate]=$excl
  F_DONE[$rate]=$([ $rc = 0 ] && echo yes || echo "no (exit $rc)"); F_PANIC[$rate]=$panics
  F_LINES[$rate]=$lines; F_SILENT[$rate]=$silent
  check "faults $rate: no silent zero" $([ "$silent" = 0 ]; echo $?)
  check "faults $rate: run finished" $([ $rc = 0 ]; echo $?)
  check "faults $rate: injected == counted" $([ "$inj" = "$cnt" ]; echo $?)
  check "faults $rate: no panic" $([ "$panics" = 0 ]; echo $?)
  check "faults $rate: 6 update lines in order" $([ "$lines" = 6 ]; echo $?)
  [ $rc = 0 ] || tail -5 "$WORK/train-$rate.log" >&2
done

# ---------------------------------------------------------------------------------------
# 2. kill -9 at random moments (checkpoint writes included: a checkpoint after every
#    update) and --resume until finished; metrics.jsonl, the final checkpoint and the
#    exported bank must equal those of a straight run, byte for byte.
# ---------------------------------------------------------------------------------------
KILL_SETS=("${SYN[@]}" --set run.batch_size=4 --set run.outer_epochs=2 --set run.inner_epochs=4
  --set run.checkpoint_every=1 --set 'executor.backend="scripted-synthetic"'
  --set executor.scripted_latency_ms=10 --set designer.enabled=true)
t0=$(date +%s.%N)
"$BIN" train --run-name straight --runs-dir "$WORK/kills" --no-progress "${KILL_SETS[@]}" 2>/dev/null
t1=$(date +%s.%N)
straight_ms=$(python3 -c "print(int(($t1-$t0)*1000))")
fingerprint() { # the bytes that must match: metrics, final checkpoint, export
  local run=$1
  local ck
  ck=$(cat "$run/checkpoints/latest")
  # (config.toml and the manifest's hash of it name the run, so they differ by design)
  (cd "$run" && cat metrics.jsonl && find "checkpoints/$ck" skills -type f \
    ! -name config.toml ! -name manifest.json | sort | xargs sha256sum) | sha256sum | cut -c1-16
}
want=$(fingerprint "$WORK/kills/straight")
same=0; kills_done=0; kill_panics=0
for i in $(seq "$KILLS"); do
  run="k$i"
  delay_ms=$(python3 -c "import random; random.seed($i); print(random.randint(150, max(200, int($straight_ms*0.95))))")
  # a run that finished before its kill (the machine's speed varies) is started again with
  # half the delay, so that every cycle really kills a running process
  for _try in 1 2 3 4; do
    rm -rf "${WORK:?}/kills/$run"
    "$BIN" train --run-name "$run" --runs-dir "$WORK/kills" --no-progress "${KILL_SETS[@]}" 2>>"$WORK/kills.log" &
    pid=$!
    sleep "$(python3 -c "print($delay_ms/1000)")"
    if kill -9 "$pid" 2>/dev/null; then
      kills_done=$((kills_done + 1))
      wait "$pid" 2>/dev/null || true
      break
    fi
    wait "$pid" 2>/dev/null || true
    delay_ms=$((delay_ms / 2))
  done
  for _ in 1 2 3; do
    if [ -e "$WORK/kills/$run/checkpoints/latest" ]; then
      "$BIN" train --resume --run-name "$run" --runs-dir "$WORK/kills" --no-progress 2>>"$WORK/kills.log" && break
    else # killed before the first checkpoint: start again
      "$BIN" train --run-name "$run" --runs-dir "$WORK/kills" --no-progress "${KILL_SETS[@]}" 2>>"$WORK/kills.log" && break
    fi
  done
  got=$(fingerprint "$WORK/kills/$run" 2>/dev/null || echo missing)
  [ "$got" = "$want" ] && same=$((same + 1)) || echo "resume $i (killed at ${delay_ms} ms) differs" >&2
done
kill_panics=$(grep -c "panicked" "$WORK/kills.log" || true)
check "kill/resume: every resume byte-identical" $([ "$same" = "$KILLS" ]; echo $?)
check "kill/resume: no panic" $([ "$kill_panics" = 0 ]; echo $?)

# ---------------------------------------------------------------------------------------
# 3. Fuzzing: mutation fuzzing of the action parser, designer JSON reader, SKILL.md
#    importer, config loader and dataset loaders (trainer/tests/fuzz_inputs.rs).
# ---------------------------------------------------------------------------------------
set +e
MEMSKILL_FUZZ_ITERS=$FUZZ_ITERS "$(testbin fuzz_inputs)" --nocapture --test-threads 2 >"$WORK/fuzz.log" 2>&1
fuzz_rc=$?
set -e
fuzz_exec=$(grep -o 'fuzz [a-z-]*: [0-9]* executions' "$WORK/fuzz.log" | awk '{s+=$3} END {print s+0}')
fuzz_crash=$(grep -o '[0-9]* panics' "$WORK/fuzz.log" | awk '{s+=$1} END {print s+0}')
fuzz_targets=$(grep -c '^fuzz ' "$WORK/fuzz.log" || true)
check "fuzz: no crash" $([ "$fuzz_rc" = 0 ] && [ "$fuzz_crash" = 0 ]; echo $?)

# ---------------------------------------------------------------------------------------
# 4. Injection sets: the guard on its labelled sets (guard/data/sets.toml). In-sample for the
#    classifier: the floors catch a rule or lexicon change that breaks many texts; the figures
#    on new authors are in docs/safety.md (scripts/guard/eval.sh for leave-one-author-out).
# ---------------------------------------------------------------------------------------
set +e
"$(testbin shipped)" --nocapture >"$WORK/safety.log" 2>&1
safety_rc=$?
set -e
safety_line=$(grep -E '^in-sample: ' "$WORK/safety.log" | head -1)
cat_line="three pairs of new-author sets, each measured once (the last, coding-team-clinic and tutor-travel, kept held out): docs/safety.md"
check "guard: in-sample floors, the reference's released skills, the fixture lines" "$safety_rc"
check "guard report present" $([ -n "$safety_line" ]; echo $?)

# ---------------------------------------------------------------------------------------
# 5. Abuse probes (issue 27): links, FIFOs and devices, runaway templates, secret redaction.
#    Each names what a user would do; a probe holds when the command refuses in time, with
#    the right words, and leaves the files it must not touch as they were.
# ---------------------------------------------------------------------------------------
P=$WORK/probes; mkdir -p "$P"
probe() { # probe NAME EXPECTED-WORD COMMAND...: must fail within 30 s, naming EXPECTED-WORD
  local name=$1 want=$2; shift 2
  set +e
  timeout 30 "$@" >"$P/out" 2>"$P/err"
  local rc=$?
  set -e
  if [ "$rc" = 124 ]; then echo "hung (killed after 30 s)";
  elif [ "$rc" = 0 ]; then echo "accepted (exit 0)";
  elif grep -q "panicked" "$P/err"; then echo "panicked";
  elif grep -q -- "$want" "$P/err"; then echo "refused";
  else echo "failed without naming '$want': $(head -c 200 "$P/err")"; fi
}
"$BIN" skills init --out "$P/bank.json" >/dev/null
"$BIN" skills export "$P/bank.json" --out "$P/skills" >/dev/null
md_sum=$(sha256sum "$P/skills/insert/SKILL.md" | cut -c1-16)
L_SELF=$(probe self "input" "$BIN" skills import "$P/skills" --out "$P/skills/insert/SKILL.md" --force)
L_EXIST=$(probe exist "--force" "$BIN" skills export "$P/bank.json" --out "$P/skills")
mkdir -p "$P/elsewhere"; echo precious >"$P/elsewhere/SKILL.md"
rm -rf "$P/skills/noop"; ln -s "$P/elsewhere" "$P/skills/noop"
L_LINK=$(probe link "symbolic link" "$BIN" skills export "$P/bank.json" --out "$P/skills" --force)
L_FOLLOW=$(probe follow "follow-links" "$BIN" skills import "$P/skills" --out "$P/in.json")
intact=$([ "$(cat "$P/elsewhere/SKILL.md")" = precious ] && [ "$(sha256sum "$P/skills/insert/SKILL.md" | cut -c1-16)" = "$md_sum" ] && echo yes || echo NO)
mkfifo "$P/bank.fifo"
mkdir -p "$P/prompts-fifo"; mkfifo "$P/prompts-fifo/executor.user.j2"
TRAIN=("$BIN" train --runs-dir "$P/runs" --no-progress "${SYN[@]}" --set 'executor.backend="scripted-synthetic"')
Q_FIFO=$(probe fifo "FIFO" "${TRAIN[@]}" --run-name fifo --set "run.skill_bank=\"$P/bank.fifo\"")
Q_ZERO=$(probe devzero "device" "${TRAIN[@]}" --run-name devzero --set 'run.skill_bank="/dev/zero"')
Q_TMPL=$(probe tmplfifo "FIFO" "${TRAIN[@]}" --run-name tmplfifo --set "prompts.dir=\"$P/prompts-fifo\"")
mkdir -p "$P/prompts-loop" "$P/prompts-big"
printf '%s' '{% for a in range(10000) %}{% for b in range(10000) %}{% for c in range(10000) %}{% endfor %}{% endfor %}{% endfor %}' >"$P/prompts-loop/executor.user.j2"
printf '%s' '{% for a in range(100000) %}{{ "z" * 100000 }}{% endfor %}' >"$P/prompts-big/answer.locomo.user.j2"
T_LOOP=$(probe loop "steps" "${TRAIN[@]}" --run-name loop --set "prompts.dir=\"$P/prompts-loop\"")
T_BIG=$(probe big "limit" "${TRAIN[@]}" --run-name big --set "prompts.dir=\"$P/prompts-big\"")
Z_TOK=$(probe zerotok "executor.max_tokens" "${TRAIN[@]}" --run-name zt --set executor.max_tokens=0)
Z_HID=$(probe zerohid "policy.hidden" "${TRAIN[@]}" --run-name zh --set policy.hidden=0)
leftover_runs=$( (find "$P/runs" -mindepth 1 -maxdepth 1 2>/dev/null || true) | wc -l)
set +e
"$(testbin memskill_trainer)" secret --test-threads 2 >"$WORK/secrets.log" 2>&1
secrets_rc=$?
set -e
S_PASS=$(grep -c '^test .*secret.* ok$' "$WORK/secrets.log" || true)
S_FAIL=$(grep -c '^test .*secret.* FAILED$' "$WORK/secrets.log" || true)
for r in "$L_SELF" "$L_EXIST" "$L_LINK" "$L_FOLLOW" "$Q_FIFO" "$Q_ZERO" "$Q_TMPL" "$T_LOOP" "$T_BIG" "$Z_TOK" "$Z_HID"; do
  check "abuse probe: $r" $([ "$r" = refused ]; echo $?)
done
check "abuse probes: files intact" $([ "$intact" = yes ]; echo $?)
check "abuse probes: no run directory left" $([ "$leftover_runs" = 0 ]; echo $?)
check "secret redaction tests" $([ "$secrets_rc" = 0 ] && [ "$S_PASS" -gt 0 ]; echo $?)

# ---------------------------------------------------------------------------------------
# 6. Hardening round three (issue 46): hostile checkpoints, config ranges, zero vectors and
#    hung servers, a 50 MB reply, two writers of one run, kill -9 during export, adapter
#    process groups, secrets in the response cache, a full disk, an oversized turn.
# ---------------------------------------------------------------------------------------
set +e
TRAINER_TESTS="$(testbin memskill_trainer)" EXECUTOR_TESTS="$(testbin memskill_executor)" \
  scripts/reliability/hostile-probes.sh "$BIN" "$WORK" "$WORK/synthetic.toml" >"$WORK/hostile-probes.md" 2>"$WORK/hostile-probes.log"
h3_rc=$?
set -e
check "hardening round three: every case held" "$h3_rc"

# ---------------------------------------------------------------------------------------
echo
echo "| check | result |"
echo "|---|---|"
for rate in $RATES; do
  pct=$(python3 -c "print(int(float('$rate')*100))")
  echo "| faults ${pct}% (mixed) | injected ${F_INJ[$rate]}, counted in metrics.jsonl ${F_CNT[$rate]}, calls failed after retries ${F_FAILED[$rate]}, episodes excluded ${F_EXCL[$rate]}, updates scoring a failed executor call ${F_SILENT[$rate]}, run finished ${F_DONE[$rate]}, update lines ${F_LINES[$rate]}/6, panics ${F_PANIC[$rate]} |"
done
echo "| kill -9 + resume | ${kills_done} kills (straight run ${straight_ms} ms), ${same}/${KILLS} byte-identical resumes, panics ${kill_panics} |"
echo "| fuzz | ${fuzz_targets} targets, ${fuzz_exec} executions, ${fuzz_crash} crashes |"
echo "| injection sets (guard/data/sets, in-sample) | ${safety_line:-no report} |"
echo "| six safety assertions (independent test set; rejected unsafe, rejected ordinary) | ${cat_line:-no report} |"
echo "| links | import onto its own SKILL.md with --force: ${L_SELF}; export over an export without --force: ${L_EXIST}; export through a linked skill folder: ${L_LINK}; import of a link leaving the folder: ${L_FOLLOW}; files intact: ${intact} |"
echo "| FIFOs and devices | run.skill_bank FIFO: ${Q_FIFO}; run.skill_bank /dev/zero: ${Q_ZERO}; prompts.dir FIFO template: ${Q_TMPL} |"
echo "| template limits | three nested range(10000) loops: ${T_LOOP}; a 10 GB output: ${T_BIG}; executor.max_tokens = 0: ${Z_TOK}; policy.hidden = 0: ${Z_HID}; run directories left: ${leftover_runs} |"
echo "| secret redaction | ${S_PASS} tests passed, ${S_FAIL} failed (executor prompts, evaluation memory cache, flagged-memory redaction) |"
cat "$WORK/hostile-probes.md"
echo "| wall time | $(( $(date +%s) - START )) s (kills ${KILLS}, fuzz mutations per target ${FUZZ_ITERS}; --long for 20 and 20000) |"
echo
if [ "$FAIL" = 0 ]; then echo "reliability: all checks hold"; else echo "reliability: some checks FAILED (above)"; fi
exit "$FAIL"
