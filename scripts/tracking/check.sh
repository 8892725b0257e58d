#!/usr/bin/env bash
# Experiment tracking against the real tools, all on 127.0.0.1 and offline:
#  1. starts an MLflow tracking server (PyPI mlflow; sqlite store, proxied artifacts),
#  2. trains the synthetic task with tracking.tensorboard and tracking.mlflow on, stopped
#     after 7 updates and resumed to the end (designer stages on),
#  3. reads the event files back with TensorBoard's EventAccumulator (scalar tags and point
#     counts; no step twice) and the MLflow run back through its REST API (metric history,
#     params, artifacts),
#  4. reads back the W&B run the training logged live (tracking.wandb with WANDB_MODE=offline,
#     scripts/tracking/wandb_offline.py) and compares its tags and steps with TensorBoard's,
#  5. logs the run into an offline W&B run after the fact (scripts/tracking/wandb_log.py;
#     wandb >= 0.30 has no `wandb sync --sync-tensorboard` any more).
# Exit status non-zero on any failed check. The counts it read back are printed at the end as
# the paragraph docs/tracking.md shows; --write-doc puts them there (between its
# `tracking-counts` markers), so the page's numbers are generated, never typed.
# Usage: scripts/tracking/check.sh [--write-doc] [memskill-binary]
set -euo pipefail
cd "$(dirname "$0")/../.."
PYBIN=$(scripts/tracking/setup.sh | tail -1)
VENV=$(dirname "$(dirname "$PYBIN")")
WRITE_DOC=0
if [ "${1:-}" = "--write-doc" ]; then WRITE_DOC=1; shift; fi
BIN="${1:-}"
if [ -z "$BIN" ]; then
  cargo build --quiet --bin memskill
  BIN=target/debug/memskill
fi
tmp=$(mktemp -d)
server_pid=
cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
port=$("$PYBIN" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
URI="http://127.0.0.1:$port"
"$VENV/bin/mlflow" server --host 127.0.0.1 --port "$port" \
  --backend-store-uri "sqlite:///$tmp/mlflow.db" --artifacts-destination "$tmp/artifacts" \
  >"$tmp/mlflow.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 120); do
  curl -sf "$URI/health" >/dev/null 2>&1 && break
  kill -0 "$server_pid" 2>/dev/null || { echo "mlflow server died:"; tail -20 "$tmp/mlflow.log"; exit 1; }
  sleep 0.5
done
curl -sf "$URI/health" >/dev/null || { echo "mlflow server did not come up at $URI"; exit 1; }
echo "== mlflow server at $URI"

runs="$tmp/runs"
# W&B live, offline: the sidecar writes <run>/wandb/offline-run-*/ (read back below)
export WANDB_MODE=offline WANDB_SILENT=true MEMSKILL_WANDB_PYTHON="$PYBIN"
"$BIN" train --config configs/synthetic.toml --run-name trk --runs-dir "$runs" --no-progress \
  --set designer.enabled=true --set tracking.tensorboard=true --set "tracking.mlflow=\"$URI\"" \
  --set tracking.wandb=true --max-updates 7
# a run stopped by --max-updates ends its MLflow run FINISHED, not left RUNNING
"$PYBIN" - "$URI" <<'PY'
import json, sys, urllib.request
uri = sys.argv[1]
with urllib.request.urlopen(uri + "/api/2.0/mlflow/experiments/get-by-name?experiment_name=memskill-synthetic") as r:
    exp = json.load(r)["experiment"]
req = urllib.request.Request(uri + "/api/2.0/mlflow/runs/search", data=json.dumps({"experiment_ids": [exp["experiment_id"]]}).encode(), headers={"Content-Type": "application/json"})
with urllib.request.urlopen(req) as r:
    status = [x["info"]["status"] for x in json.load(r)["runs"]]
print("after --max-updates 7: MLflow run", status)
assert status == ["FINISHED"], status
PY
"$BIN" train --resume --run-name trk --runs-dir "$runs" --no-progress
# an evaluation of the run, twice: its scores land once, at the checkpoint's step
"$BIN" eval --checkpoint "$runs/trk/checkpoints/step-20" >/dev/null
"$BIN" eval --checkpoint "$runs/trk/checkpoints/step-20" --out "$tmp/eval-again" >/dev/null

echo "== TensorBoard's EventAccumulator on $runs/trk/tb"
"$PYBIN" - "$runs/trk/tb" "$tmp/counts.json" "$tmp/tb-steps.json" <<'PY'
import sys, collections, json
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
acc = EventAccumulator(sys.argv[1], size_guidance={"scalars": 0, "tensors": 0})
acc.Reload()
tags = acc.Tags()
scalars = sorted(tags["scalars"])
print(f"{len(scalars)} scalar tags; points per tag:")
bad = []
for t in scalars:
    steps = [e.step for e in acc.Scalars(t)]
    if len(steps) != len(set(steps)):
        bad.append(t)
    if t in ("train/reward", "train/policy_loss", "train/entropy", "train/approx_kl",
             "train/clip_frac", "train/bank_size", "train/llm_calls", "stage/reward"):
        print(f"  {t}: {len(steps)} points, steps {steps[0]}..{steps[-1]}")
print("tensor tags (text, hparams):", sorted(tags["tensors"]))
n = len(acc.Scalars("train/reward"))
assert n == 20, f"expected 20 updates, got {n}"
assert len(acc.Scalars("stage/reward")) == 2
assert not bad, f"steps written twice: {bad}"
assert "bank/skills" in tags["tensors"], tags["tensors"]
ev = [t for t in scalars if t.startswith("eval/")]
print("evaluation tags:", ev, "steps", [[e.step for e in acc.Scalars(t)] for t in ev][:1])
assert [e.step for e in acc.Scalars("eval/synthetic-test/f1")] == [20]
text = acc.Tensors("bank/skills")[-1].tensor_proto.string_val[0].decode()
print("last bank/skills text, first line:", text.splitlines()[0] if text else "(empty)")
from tensorboard.plugins.hparams import plugin_data_pb2
md = acc.SummaryMetadata("_hparams_/session_start_info")
hp = plugin_data_pb2.HParamsPluginData.FromString(md.plugin_data.content)
print(f"hparams: {len(hp.session_start_info.hparams)} values, e.g. ppo.lr =",
      hp.session_start_info.hparams["ppo.lr"].number_value)
train = [t for t in scalars if t.startswith("train/")]
steps = {t: [e.step for e in acc.Scalars(t)] for t in scalars}
steps["bank/skills"] = [e.step for e in acc.Tensors("bank/skills")]
json.dump(steps, open(sys.argv[3], "w"))
json.dump({"scalar_tags": len(scalars), "train_tags": len(train),
           "train_points": sorted({len(acc.Scalars(t)) for t in ("train/reward", "train/policy_loss")}),
           "stage_points": len(acc.Scalars("stage/reward")),
           "hparams": len(hp.session_start_info.hparams)}, open(sys.argv[2], "w"))
print("tensorboard: OK")
PY

echo "== MLflow REST API at $URI"
"$PYBIN" - "$URI" "$tmp/counts.json" <<'PY'
import sys, json, urllib.request
uri = sys.argv[1]
def get(path):
    with urllib.request.urlopen(uri + path) as r:
        return json.load(r)
def post(path, body):
    req = urllib.request.Request(uri + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req) as r:
        return json.load(r)
exp = get("/api/2.0/mlflow/experiments/get-by-name?experiment_name=memskill-synthetic")["experiment"]
runs = post("/api/2.0/mlflow/runs/search", {"experiment_ids": [exp["experiment_id"]]})["runs"]
assert len(runs) == 1, f"one MLflow run expected (the resume reuses it), got {len(runs)}"
run = runs[0]
info, data = run["info"], run["data"]
print("run", info["run_name"], info["status"], f"{len(data.get('params', []))} params, {len(data.get('metrics', []))} metric keys")
h = get(f"/api/2.0/mlflow/metrics/get-history?run_id={info['run_id']}&metric_key=train/reward")["metrics"]
steps = [m["step"] for m in h]
print(f"train/reward history: {len(steps)} points, steps {min(steps)}..{max(steps)}, values {[round(m['value'], 3) for m in h][:5]}...")
assert sorted(steps) == list(range(1, 21)), steps
assert info["status"] == "FINISHED", info["status"]
ev = get(f"/api/2.0/mlflow/metrics/get-history?run_id={info['run_id']}&metric_key=eval/synthetic-test/f1")["metrics"]
print("eval/synthetic-test/f1 history:", [(m["step"], round(m["value"], 3)) for m in ev])
assert [m["step"] for m in ev] == [20], ev
arts = get(f"/api/2.0/mlflow/artifacts/list?run_id={info['run_id']}").get("files", [])
print("artifacts:", sorted(a["path"] for a in arts))
assert {"skills", "skills.md"} <= {a["path"] for a in arts}
counts = json.load(open(sys.argv[2]))
counts.update({"mlflow_status": info["status"], "mlflow_params": len(data.get("params", [])),
               "mlflow_reward_points": len(steps)})
json.dump(counts, open(sys.argv[2], "w"))
print("mlflow: OK")
PY

echo "== W&B, logged live (offline mode): scripts/tracking/wandb_offline.py"
"$PYBIN" scripts/tracking/wandb_offline.py "$runs/trk" >"$tmp/wandb.json"
"$PYBIN" - "$tmp/wandb.json" "$tmp/tb-steps.json" "$tmp/counts.json" "$runs/trk/wandb.json" <<'PY'
import json, sys
wb, tb = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
state = json.load(open(sys.argv[4]))
ids = {r["id"] for r in wb["runs"]}
print(f"{len(wb['runs'])} offline runs (one per invocation), ids {sorted(ids)}, exit codes",
      [r["exit_code"] for r in wb["runs"]])
assert ids == {state["id"]}, (ids, state)
got = dict(wb["scalars"], **wb["media"])
missing, extra = sorted(set(tb) - set(got)), sorted(set(got) - set(tb))
assert not missing and not extra, f"W&B lacks {missing}, has more: {extra}"
differ = [t for t in tb if sorted(got[t]) != sorted(tb[t]) or len(set(got[t])) != len(got[t])]
assert not differ, f"steps differ from TensorBoard's: {differ[:5]}"
points = sum(len(v) for v in got.values())
print(f"W&B holds TensorBoard's {len(tb)} tags (scalars and bank/skills), {points} points, same steps, none twice")
counts = json.load(open(sys.argv[3]))
counts.update({"wandb_tags": len(tb), "wandb_points": points, "wandb_runs": len(wb["runs"])})
json.dump(counts, open(sys.argv[3], "w"))
print("wandb live: OK")
PY

echo "== W&B after the fact, offline: scripts/tracking/wandb_log.py"
"$PYBIN" scripts/tracking/wandb_log.py "$runs/trk"
ls -d "$runs/trk/wandb/offline-run-"* >/dev/null || { echo "no offline W&B run written"; exit 1; }
echo "== all tracking checks passed"
"$PYBIN" - "$tmp/counts.json" "$WRITE_DOC" docs/tracking.md "$("$VENV/bin/python" -c 'import tensorboard, mlflow, wandb; print(f"TensorBoard {tensorboard.__version__}, MLflow {mlflow.__version__}, wandb {wandb.__version__}")')" <<'PY'
import json, os, sys
c = json.load(open(sys.argv[1]))
pts = "/".join(str(p) for p in c["train_points"])
text = (f"On the synthetic task, stopped after 7 updates and resumed to 20 (as read back by "
        f"scripts/tracking/check.sh with {sys.argv[4]}): {c['scalar_tags']} scalar tags "
        f"({c['train_tags']} of them `train/*`, {pts} points each, steps 1..20, none twice), "
        f"{c['stage_points']} points for `stage/*`, the bank text and {c['hparams']} hparams; "
        f"MLflow holds one {c['mlflow_status']} run with {c['mlflow_params']} params, "
        f"{c['mlflow_reward_points']} `train/reward` points and the `skills/` + `skills.md` artifacts; "
        f"the W&B run logged live (offline mode, {c['wandb_runs']} offline folders of one run id) "
        f"holds the same {c['wandb_tags']} tags at the same steps, {c['wandb_points']} points.")
print(text)
if sys.argv[2] == "1":
    doc = sys.argv[3]
    s = open(doc).read()
    a, b = "<!-- tracking-counts: begin (scripts/tracking/check.sh --write-doc) -->", "<!-- tracking-counts: end -->"
    i, j = s.index(a) + len(a), s.index(b)
    tmp = doc + ".tmp"
    open(tmp, "w").write(s[:i] + "\n" + text + "\n" + s[j:])
    os.replace(tmp, doc)
    print("written into", doc)
PY
