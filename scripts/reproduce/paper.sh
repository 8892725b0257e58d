#!/usr/bin/env bash
# The paper's experiments in one sequence, then one report:
#   1. MemSkill on LoCoMo (Table 1 row), evaluated on the test split;
#   2. the Table 2 ablations (no-controller: random skills; no-designer: the static initial
#      skills; refine-only), trained and evaluated;
#   3. the Table 1 baselines in the same harness (no-memory, raw-rag, static-skills), and the
#      external memory systems whose venvs exist (MEMSKILL_ADAPTERS, default "mem0 langmem
#      amem memoryos memoryos-answers"; empty for none) through the adapter protocol; A-MEM
#      and MemoryOS also need their checkouts (AMEM_DIR, MEMORYOS_DIR), memoryos-answers is
#      MemoryOS answering itself;
#   4. cross-model transfer: the same checkpoint with another executor model (when given);
#   5. the Figure 3 sweep: HotpotQA context length (eval_50 / 100 / 200) x K = 3, 5, 7 (when
#      the files are in the cache);
#   6. `memskill report` over all of it: report.md, report.html, figure3.png.
#
# Endpoints and models (see README.md in this folder):
#   MEMSKILL_URLS='["http://127.0.0.1:8000/v1"]' MEMSKILL_MODEL=meta-llama/Llama-3.3-70B-Instruct \
#   MEMSKILL_OTHER_URLS='["http://127.0.0.1:8001/v1"]' MEMSKILL_OTHER_MODEL=Qwen/Qwen3-Next-80B-A3B-Instruct \
#   scripts/reproduce/paper.sh
# Other settings:
#   MEMSKILL_BIN       the memskill binary (default: build target/release/memskill)
#   MEMSKILL_RUNS      where runs, evaluations and the report go (default: runs/paper)
#   MEMSKILL_SETS      extra `--set` values for every command, one per line (the end-to-end
#                      test uses this to run everything on the scripted synthetic task)
#   MEMSKILL_OTHER_SETS  the transfer's own `--set` values, one per line, instead of the
#                      model / URL sets built from MEMSKILL_OTHER_MODEL / _URLS (the model
#                      name still triggers the transfer and names its row)
#   MEMSKILL_SWEEP     the sweep's `--sweep` arguments, one per line (default: the HotpotQA
#                      context lengths x eval.top_k=3,5,7)
#   MEMSKILL_EVAL_SPLIT  evaluation split (default: test)
#   MEMSKILL_REFERENCE a MemSkill checkout: training and the static-skills baseline start from
#                      the reference's initial skills, written from it by
#                      scripts/fidelity/reference-initial-bank.sh (default: memskill's seed bank)
#   MEMSKILL_REFERENCE_CHECKPOINT  a checkpoint saved by the reference trainer: imported
#                      (`memskill import-reference`, with MEMSKILL_REFERENCE_CONFIG, default
#                      configs/locomo.toml) and evaluated as the row reference-released
set -euo pipefail
# a relative MEMSKILL_REFERENCE is the caller's, not the repository root's
if [ -n "${MEMSKILL_REFERENCE:-}" ]; then
  MEMSKILL_REFERENCE="$(cd "$MEMSKILL_REFERENCE" && pwd)" || { echo "MEMSKILL_REFERENCE: no such folder" >&2; exit 1; }
fi
cd "$(dirname "$0")/../.."

RUNS="${MEMSKILL_RUNS:-runs/paper}"
SPLIT="${MEMSKILL_EVAL_SPLIT:-test}"
if [ -n "${MEMSKILL_BIN:-}" ]; then
  BIN="$MEMSKILL_BIN"
else
  cargo build --release --bin memskill
  BIN=target/release/memskill
fi
mkdir -p "$RUNS/eval"

sets=()
if [ -n "${MEMSKILL_URLS:-}" ]; then
  sets+=(--set "executor.base_urls=${MEMSKILL_URLS}")
fi
if [ -n "${MEMSKILL_MODEL:-}" ]; then
  sets+=(--set "executor.model=\"${MEMSKILL_MODEL}\"")
fi
while IFS= read -r line; do
  [ -n "$line" ] && sets+=(--set "$line")
done <<< "${MEMSKILL_SETS:-}"

step() { printf '\n== %s\n' "$*" >&2; }

# The starting bank of training runs and of the static-skills baseline (not of evaluations of
# a checkpoint, which use the checkpoint's bank).
bank=()
if [ -n "${MEMSKILL_REFERENCE:-}" ]; then
  scripts/fidelity/reference-initial-bank.sh "$MEMSKILL_REFERENCE" "$RUNS/reference-initial.json"
  bank=(--set "run.skill_bank=\"$(cd "$RUNS" && pwd)/reference-initial.json\"")
fi

# 1 + 2: the method and its ablations, each trained then evaluated on the test split.
# Run names follow Table 2's rows (w/o controller = random skills, w/o designer = the static
# initial skills); the baseline that applies every initial skill to every span is
# `static-skills` below.
for variant in full no-controller no-designer refine-only; do
  case "$variant" in
    full) cfg=configs/locomo.toml ;;
    no-controller) cfg=configs/ablations/random-skills.toml ;;
    no-designer) cfg=configs/ablations/no-designer.toml ;;
    refine-only) cfg=configs/ablations/refine-only.toml ;;
  esac
  step "train $variant ($cfg)"
  if [ -f "$RUNS/$variant/checkpoints/latest" ]; then
    "$BIN" train --resume --run-name "$variant" --runs-dir "$RUNS" --no-progress
  else
    "$BIN" train --config "$cfg" --run-name "$variant" --runs-dir "$RUNS" --no-progress ${sets[@]+"${sets[@]}"} \
      ${bank[@]+"${bank[@]}"}
  fi
  step "eval $variant"
  "$BIN" eval --checkpoint "$RUNS/$variant" --split "$SPLIT" --method "$variant" \
    --out "$RUNS/eval/$variant" ${sets[@]+"${sets[@]}"}
done

# 3: the baselines, the reading methods (Chain-of-Notes, ReadAgent) and MemoryBank, same
# spans, answerer and scorer, no checkpoint.
for method in no-memory raw-rag chain-of-notes read-agent memorybank static-skills; do
  step "baseline $method"
  "$BIN" eval --method "$method" --config configs/locomo.toml --split "$SPLIT" \
    --out "$RUNS/eval/baseline-$method" ${sets[@]+"${sets[@]}"} ${bank[@]+"${bank[@]}"}
done

# 3b: external memory systems through the adapter protocol (docs/adapter-protocol.md): same
# spans, answerer, scorer and judge. Each runs when its venv exists (scripts/baselines/setup.sh
# NAME) and, for A-MEM and MemoryOS, its checkout (AMEM_DIR, MEMORYOS_DIR: the pinned commits
# in docs/adapter-protocol.md), and is skipped with a message otherwise; a failed one is
# reported and left out of the report. memoryos-answers is the row where MemoryOS answers
# itself (its LoCoMo evaluation's answer prompt; marked in the report).
CACHE="${MEMSKILL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memskill}"
for name in ${MEMSKILL_ADAPTERS-mem0 langmem amem memoryos memoryos-answers}; do
  venv="$name" script="${name}_adapter.py" method="$name" dir_var="" extra=""
  case "$name" in
    amem) method=a-mem dir_var=AMEM_DIR ;;
    memoryos) dir_var=MEMORYOS_DIR ;;
    memoryos-answers) venv=memoryos script=memoryos_adapter.py dir_var=MEMORYOS_DIR extra=" --answer" ;;
  esac
  py="$CACHE/$venv-venv/bin/python"
  if [ ! -x "$py" ]; then
    step "adapter $name skipped: no $CACHE/$venv-venv (scripts/baselines/setup.sh $venv)"
    continue
  fi
  if [ -n "$dir_var" ] && [ ! -d "${!dir_var:-}" ]; then
    step "adapter $name skipped: $dir_var is not set to a checkout (docs/adapter-protocol.md)"
    continue
  fi
  step "adapter $name"
  "$BIN" eval --adapter "$py scripts/baselines/$script$extra" --method "$method" \
    --config configs/locomo.toml --split "$SPLIT" --out "$RUNS/eval/adapter-$method" \
    ${sets[@]+"${sets[@]}"} || step "adapter $name failed (above); its row is left out"
done

# 3b: the reference's released controller (MEMSKILL_REFERENCE_CHECKPOINT, a torch.save file
# of the reference trainer): imported as a run folder once, then evaluated like every row.
if [ -n "${MEMSKILL_REFERENCE_CHECKPOINT:-}" ]; then
  ref_run="$RUNS/reference-released"
  if [ ! -d "$ref_run" ]; then
    step "import-reference $MEMSKILL_REFERENCE_CHECKPOINT"
    "$BIN" import-reference "$MEMSKILL_REFERENCE_CHECKPOINT" --out "$ref_run" \
      --config "${MEMSKILL_REFERENCE_CONFIG:-configs/locomo.toml}" ${sets[@]+"${sets[@]}"}
  fi
  step "eval reference-released"
  "$BIN" eval --checkpoint "$ref_run" --split "$SPLIT" --method reference-released \
    --out "$RUNS/eval/reference-released" ${sets[@]+"${sets[@]}"}
fi

# 4: cross-model transfer (Table 2's other executor column): the same checkpoint, another model.
if [ -n "${MEMSKILL_OTHER_MODEL:-}" ]; then
  other=(${sets[@]+"${sets[@]}"})
  if [ -n "${MEMSKILL_OTHER_SETS:-}" ]; then
    while IFS= read -r line; do
      [ -n "$line" ] && other+=(--set "$line")
    done <<< "$MEMSKILL_OTHER_SETS"
  else
    other+=(--set "executor.model=\"${MEMSKILL_OTHER_MODEL}\"")
    if [ -n "${MEMSKILL_OTHER_URLS:-}" ]; then
      other+=(--set "executor.base_urls=${MEMSKILL_OTHER_URLS}")
    fi
  fi
  tag=$(printf '%s' "$MEMSKILL_OTHER_MODEL" | tr -c 'A-Za-z0-9._-' '-')
  step "transfer: full with executor $MEMSKILL_OTHER_MODEL"
  "$BIN" eval --checkpoint "$RUNS/full" --split "$SPLIT" --method "full-on-$tag" \
    --out "$RUNS/eval/full-on-$tag" ${other[@]+"${other[@]}"}
fi

# 5: Figure 3, the context-length sweep.
sweep=()
if [ -n "${MEMSKILL_SWEEP:-}" ]; then
  while IFS= read -r line; do
    [ -n "$line" ] && sweep+=(--sweep "$line")
  done <<< "$MEMSKILL_SWEEP"
  sweep_data=()
else
  DATA="${MEMSKILL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memskill}/data"
  files=()
  for n in 50 100 200; do
    [ -f "$DATA/hotpotqa/eval_$n.json" ] && files+=("hotpotqa/eval_$n.json")
  done
  if [ ${#files[@]} -gt 0 ]; then
    sweep=(--sweep "data.path=$(IFS=,; echo "${files[*]}")" --sweep "eval.top_k=3,5,7")
  fi
  sweep_data=(--dataset hotpotqa)
fi
if [ ${#sweep[@]} -gt 0 ]; then
  step "sweep ${sweep[*]}"
  sweep_split="$SPLIT"
  [ ${#sweep_data[@]} -gt 0 ] && sweep_split=all
  "$BIN" eval --checkpoint "$RUNS/full" ${sweep_data[@]+"${sweep_data[@]}"} --split "$sweep_split" --method full \
    --out "$RUNS/eval/sweep" ${sweep[@]+"${sweep[@]}"} ${sets[@]+"${sets[@]}"}
else
  step "sweep skipped: no HotpotQA eval_{50,100,200}.json in the cache (scripts/fetch-data.sh)"
fi

# 6: one report over everything.
step "report"
"$BIN" report "$RUNS/full" "$RUNS/no-controller" "$RUNS/no-designer" "$RUNS/refine-only" \
  "$RUNS/eval" --out "$RUNS/report"
echo "report: $RUNS/report/report.md and report.html" >&2
