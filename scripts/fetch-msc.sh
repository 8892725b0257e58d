#!/usr/bin/env bash
# Fetch MSC-Self-Instruct (MemGPT's Deep Memory Retrieval task over Multi-Session Chat; 500
# records, Apache-2.0) into the cache, where `data.dataset = "msc"` looks for it:
#   $CACHE/data/msc/msc_self_instruct.jsonl <- HF dataset MemGPT/MSC-Self-Instruct (pinned revision)
# where CACHE=${MEMSKILL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memskill}.
#
# Usage: scripts/fetch-msc.sh [--from DIR]   (DIR laid out as DIR/msc/msc_self_instruct.jsonl)
# Idempotent: a file already present (non-empty) is kept.
#
# NOT TESTED BY CI: the download needs internet access beyond package registries. The sha256
# below is the one others report for this revision; it was not checked on the build machines,
# so a different sum is a warning, not an error.
set -euo pipefail

CACHE="${MEMSKILL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memskill}"
REV=5138f416f8fa76b75b2e080da87e8a8e346e1500
URL="https://huggingface.co/datasets/MemGPT/MSC-Self-Instruct/resolve/$REV/msc_self_instruct.jsonl"
SHA256=d3dbea36848b41dc46c0f1548d0ebf74eeaf6390d6f3fe9318e8480dc984495e
FROM=""
while [ $# -gt 0 ]; do
  case "$1" in
    --from) FROM="${2:?--from needs a directory}"; shift 2 ;;
    --from=*) FROM="${1#--from=}"; shift ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "error: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

dest="$CACHE/data/msc/msc_self_instruct.jsonl"
if [ -s "$dest" ]; then
  echo "ok: $dest (already present)" >&2
  exit 0
fi
mkdir -p "$(dirname "$dest")"
if [ -n "$FROM" ]; then
  [ -f "$FROM/msc/msc_self_instruct.jsonl" ] || { echo "error: $FROM/msc/msc_self_instruct.jsonl not found" >&2; exit 1; }
  cp "$FROM/msc/msc_self_instruct.jsonl" "$dest.part"
else
  echo "fetching $URL" >&2
  if ! curl -fL --retry 3 --connect-timeout 20 -o "$dest.part" "$URL"; then
    rm -f "$dest.part"
    echo "error: could not download $URL" >&2
    exit 1
  fi
fi
got=$(sha256sum "$dest.part" | cut -d' ' -f1)
if [ "$got" != "$SHA256" ]; then
  echo "warning: sha256 $got differs from the reported $SHA256 (revision $REV)" >&2
fi
mv "$dest.part" "$dest"
echo "ok: $dest" >&2
