#!/usr/bin/env bash
# Unpack the ALFWorld game files (json_2.1.1-{train,valid}.tar.gz) into the memskill cache:
#   ${MEMSKILL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memskill}/alfworld/json_2.1.1/<split>/<task>/<trial>/game.tw-pddl
# Usage: scripts/alfworld/unpack.sh [DIR_WITH_TARBALLS]   (default: ../shared/data/alfworld of the checkout)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
src="${1:-$here/../../../shared/data/alfworld}"
CACHE="${MEMSKILL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memskill}"
dest="$CACHE/alfworld"
mkdir -p "$dest"
found=0
for t in "$src"/json_2.1.1-*.tar.gz; do
  [ -f "$t" ] || continue
  found=1
  marker="$dest/.unpacked-$(basename "$t")"
  if [ -f "$marker" ]; then
    echo "already unpacked: $(basename "$t")"
    continue
  fi
  echo "unpacking $t -> $dest"
  tar xzf "$t" -C "$dest"
  echo ok > "$marker"
done
if [ "$found" = 0 ]; then
  echo "no json_2.1.1-*.tar.gz in $src (use scripts/alfworld/download.sh)" >&2
  exit 1
fi
for s in train valid_seen valid_unseen valid_train; do
  if [ -d "$dest/json_2.1.1/$s" ]; then
    echo "$s: $(find "$dest/json_2.1.1/$s" -name game.tw-pddl | wc -l) games"
  fi
done
