#!/usr/bin/env bash
# Download the ALFWorld TextWorld game files (game.tw-pddl for every json_2.1.1 trial) from the
# official ALFWorld release (the same file `alfworld-download` fetches) and unpack them into
#   ${MEMSKILL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memskill}/alfworld/json_2.1.1/
# NOTE: untested in memskill's sandbox (no network beyond package registries there); on such
# machines use scripts/alfworld/unpack.sh with the json_2.1.1-{train,valid}.tar.gz archives.
set -euo pipefail
URL="${ALFWORLD_TW_PDDL_URL:-https://github.com/alfworld/alfworld/releases/download/0.4.0/json_2.1.2_tw-pddl.zip}"
CACHE="${MEMSKILL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memskill}"
dest="$CACHE/alfworld"
mkdir -p "$dest"
zip="$dest/json_2.1.2_tw-pddl.zip"
if [ ! -f "$zip" ]; then
  echo "downloading $URL"
  curl -fL --retry 3 -o "$zip.part" "$URL"
  mv "$zip.part" "$zip"
fi
if command -v unzip >/dev/null 2>&1; then
  unzip -q -o "$zip" -d "$dest"
else
  python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$zip" "$dest"
fi
echo ok > "$dest/.unpacked-$(basename "$zip")"
for s in train valid_seen valid_unseen valid_train; do
  if [ -d "$dest/json_2.1.1/$s" ]; then
    echo "$s: $(find "$dest/json_2.1.1/$s" -name game.tw-pddl | wc -l) games"
  fi
done
