#!/usr/bin/env bash
# Fetch the benchmark data memskill trains and evaluates on into the cache (never the repo):
#   $CACHE/data/longmemeval/longmemeval_s_cleaned.json <- HF dataset xiaowu0162/longmemeval-cleaned
#                                                     (what the reference reads; README)
#   $CACHE/data/longmemeval/longmemeval_s_splits.json  (copied with --from; MemSkill's split)
#   $CACHE/data/hotpotqa/eval_{50,100,200}.json     <- HF dataset BytedTsinghua-SIA/hotpotqa
#                                                     (HotpotQA-Modified: what the reference evaluates)
#   $CACHE/data/hotpotqa/hotpot_dev_distractor_v1.json <- official HotpotQA site (CMU; our option)
#   $CACHE/data/hotpotqa/hotpotqa.jsonl             <- LongBench (HF THUDM/LongBench data.zip; our option)
#   $CACHE/data/locomo/locomo10.json               <- --from DIR, else snap-research/locomo on GitHub
#   $CACHE/data/alfworld/*.tar.gz                  <- only with --from DIR
# where CACHE=${MEMSKILL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memskill}.
#
# Usage: scripts/fetch-data.sh [--from DIR] [longmemeval] [hotpotqa] [locomo] [alfworld]
#   (default: everything; locomo/alfworld need --from DIR, e.g. --from ../shared/data, a folder
#    laid out as DIR/locomo/locomo10.json, DIR/alfworld/*.tar.gz, DIR/longmemeval/*.json).
# Idempotent: files already present (non-empty) are kept.
#
# NOT TESTED BY CI: the downloads need internet access beyond package registries, which the
# build machines do not have. The --from copy path is the one exercised locally. Licenses: see
# each dataset's page (LoCoMo CC BY-NC 4.0, LongMemEval MIT, HotpotQA CC BY-SA 4.0, LongBench MIT).
set -euo pipefail

CACHE="${MEMSKILL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memskill}"
DATA="$CACHE/data"
FROM=""
want=()
while [ $# -gt 0 ]; do
  case "$1" in
    --from) FROM="${2:?--from needs a directory}"; shift 2 ;;
    --from=*) FROM="${1#--from=}"; shift ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    longmemeval|hotpotqa|locomo|alfworld) want+=("$1"); shift ;;
    *) echo "error: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[ ${#want[@]} -eq 0 ] && want=(longmemeval hotpotqa locomo alfworld)
if [ -n "$FROM" ] && [ ! -d "$FROM" ]; then
  echo "error: --from $FROM: not a directory" >&2; exit 1
fi

have() { [ -s "$1" ]; }

# download URL DEST: curl -fL into DEST.part, then rename; returns non-zero on failure.
download() {
  local url="$1" dest="$2"
  mkdir -p "$(dirname "$dest")"
  echo "fetching $url" >&2
  if curl -fL --retry 3 --connect-timeout 20 -o "$dest.part" "$url"; then
    mv "$dest.part" "$dest"
  else
    rm -f "$dest.part"
    echo "warning: could not download $url" >&2
    return 1
  fi
}

# copy_from REL DEST: copy $FROM/REL to DEST when --from is given and the file exists.
copy_from() {
  local rel="$1" dest="$2"
  [ -n "$FROM" ] && [ -f "$FROM/$rel" ] || return 1
  mkdir -p "$(dirname "$dest")"
  cp "$FROM/$rel" "$dest.part" && mv "$dest.part" "$dest"
  echo "copied $FROM/$rel -> $dest" >&2
}

fail=0
for w in "${want[@]}"; do
  case "$w" in
    longmemeval)
      d="$DATA/longmemeval"
      copy_from longmemeval/longmemeval_s_splits.json "$d/longmemeval_s_splits.json" || true
      f="$d/longmemeval_s_cleaned.json"
      if have "$f"; then echo "ok: $f (already present)" >&2
      elif copy_from longmemeval/longmemeval_s_cleaned.json "$f"; then :
      else
        download https://huggingface.co/datasets/xiaowu0162/longmemeval-cleaned/resolve/main/longmemeval_s_cleaned.json "$f" \
          || { echo "error: LongMemEval (cleaned) not fetched" >&2; fail=1; }
      fi
      have "$d/longmemeval_s_splits.json" \
        || echo "note: no longmemeval_s_splits.json (MemSkill's split); pass --from DIR holding longmemeval/longmemeval_s_splits.json" >&2
      ;;
    hotpotqa)
      d="$DATA/hotpotqa"
      for n in 50 100 200; do
        f="$d/eval_$n.json"
        if have "$f"; then echo "ok: $f (already present)" >&2
        elif copy_from "hotpotqa/eval_$n.json" "$f"; then :
        else
          download "https://huggingface.co/datasets/BytedTsinghua-SIA/hotpotqa/resolve/main/eval_$n.json" "$f" \
            || { echo "error: HotpotQA-Modified eval_$n.json not fetched" >&2; fail=1; }
        fi
      done
      f="$d/hotpot_dev_distractor_v1.json"
      if have "$f"; then echo "ok: $f (already present)" >&2
      elif copy_from hotpotqa/hotpot_dev_distractor_v1.json "$f"; then :
      else
        download http://curtis.ml.cmu.edu/datasets/hotpot/hotpot_dev_distractor_v1.json "$f" \
          || { echo "error: HotpotQA dev distractor not fetched" >&2; fail=1; }
      fi
      f="$d/hotpotqa.jsonl"
      if have "$f"; then echo "ok: $f (already present)" >&2
      elif copy_from hotpotqa/hotpotqa.jsonl "$f"; then :
      else
        tmp="$(mktemp -d)"
        if download https://huggingface.co/datasets/THUDM/LongBench/resolve/main/data.zip "$tmp/data.zip"; then
          if command -v unzip >/dev/null; then
            unzip -p "$tmp/data.zip" data/hotpotqa.jsonl > "$f.part" && mv "$f.part" "$f"
          else
            python3 -c 'import sys,zipfile; sys.stdout.buffer.write(zipfile.ZipFile(sys.argv[1]).read("data/hotpotqa.jsonl"))' \
              "$tmp/data.zip" > "$f.part" && mv "$f.part" "$f"
          fi
        else
          echo "error: LongBench hotpotqa.jsonl not fetched" >&2; fail=1
        fi
        rm -rf "$tmp"
      fi
      ;;
    locomo)
      f="$DATA/locomo/locomo10.json"
      if have "$f"; then echo "ok: $f (already present)" >&2
      elif ! copy_from locomo/locomo10.json "$f"; then
        download "https://raw.githubusercontent.com/snap-research/locomo/main/data/locomo10.json" "$f" \
          || { echo "error: locomo: pass --from DIR holding locomo/locomo10.json" >&2; fail=1; }
      fi
      ;;
    alfworld)
      if [ -n "$FROM" ] && ls "$FROM"/alfworld/*.tar.gz >/dev/null 2>&1; then
        mkdir -p "$DATA/alfworld"
        for t in "$FROM"/alfworld/*.tar.gz; do
          dest="$DATA/alfworld/$(basename "$t")"
          if have "$dest"; then echo "ok: $dest (already present)" >&2; else copy_from "alfworld/$(basename "$t")" "$dest"; fi
        done
      else
        echo "skip: alfworld needs --from DIR with alfworld/*.tar.gz" >&2
      fi
      ;;
  esac
done
echo "$DATA"
exit "$fail"
