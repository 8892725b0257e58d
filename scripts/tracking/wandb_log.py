"""Log a memskill run to Weights & Biases from its own files: every numeric field of each
metrics.jsonl line (train/<field> at the update step, stage/<field> at the step a designer
stage ended; nested fields joined by '/', as the TensorBoard tags), the resolved config as the
W&B config, skills.md as a file of the run. Works with every wandb version (wandb >= 0.30 no
longer has `wandb sync --sync-tensorboard`), online or with WANDB_MODE=offline.

Usage: python scripts/tracking/wandb_log.py RUN_DIR [--project memskill] [--name NAME]
"""
import argparse
import json
import math
import os
import sys
import tomllib


def flatten(prefix, value, out):
    if isinstance(value, bool):
        out[prefix] = int(value)
    elif isinstance(value, (int, float)):
        if math.isfinite(value):
            out[prefix] = value
    elif isinstance(value, dict):
        for k, v in value.items():
            flatten(f"{prefix}/{k}", v, out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("run_dir")
    ap.add_argument("--project", default="memskill")
    ap.add_argument("--name")
    a = ap.parse_args()
    import wandb

    metrics = os.path.join(a.run_dir, "metrics.jsonl")
    try:
        with open(os.path.join(a.run_dir, "config.toml"), "rb") as f:
            config = tomllib.load(f)
    except OSError as e:
        sys.exit(f"error: {a.run_dir} has no readable config.toml: {e}")
    run = wandb.init(project=a.project, name=a.name or os.path.basename(os.path.abspath(a.run_dir)),
                     config=config, dir=a.run_dir)
    run.define_metric("stage/*", step_metric="stage/step")
    logged = 0
    with open(metrics) as f:
        for n, line in enumerate(f, 1):
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                sys.exit(f"error: {metrics} line {n}: {e}")
            group = "train" if obj.get("type") == "update" else "stage"
            out = {}
            for k, v in obj.items():
                if k not in ("type", "step"):
                    flatten(f"{group}/{k}", v, out)
            if group == "train":
                run.log(out, step=obj["step"])
            else:
                out["stage/step"] = obj["step"]
                run.log(out)
            logged += 1
    skills = os.path.join(a.run_dir, "skills.md")
    if os.path.exists(skills):
        run.save(skills, base_path=a.run_dir, policy="now")
    print(f"logged {logged} metrics lines of {a.run_dir} to W&B run {run.id} ({os.environ.get('WANDB_MODE', 'online')})")
    run.finish()


if __name__ == "__main__":
    main()
