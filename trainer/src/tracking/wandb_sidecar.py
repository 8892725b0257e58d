"""The W&B sidecar of a memskill run (`[tracking] wandb = true`; trainer/src/tracking/wandb.rs
starts it and embeds this file). It reads JSON lines on stdin and logs them into one W&B run
with the `wandb` package:

  {"kind": "init", "id", "project", "entity", "name", "dir", "state", "config"}   first line
  {"kind": "scalars", "group", "step", "values": {tag: number}}
  {"kind": "text", "group", "step", "tag", "text"}
  {"kind": "files", "base", "paths": [file or folder, ...]}
  {"kind": "end", "status": "FINISHED" | "KILLED" | "FAILED"}

Each group (train, stage, bank, eval/<label>) is plotted against its own step metric
(`<group>/step`, the update step), so a resumed run, a stage and a later evaluation all land
at the update step they belong to. `state` (the run's wandb.json) records per group the
highest step logged; a resumed run's lines at or below it are skipped, as the TensorBoard
sink skips the steps its files hold. End of input without an "end" line (memskill died)
finishes the run with exit code 1. SIGINT and SIGTERM are ignored: memskill ends the
sidecar by closing its input.
"""
import json
import math
import os
import signal
import sys

# `python -c` puts the working directory first on the path: a wandb.py there must not
# shadow the package
if sys.path and sys.path[0] in ("", os.getcwd()):
    sys.path.pop(0)


def write_state(path, state):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(state, f, sort_keys=True)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def main():
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    first = sys.stdin.readline()
    if not first:
        return 0
    init = json.loads(first)
    import wandb

    state_path = init["state"]
    try:
        with open(state_path) as f:
            state = json.load(f)
    except (OSError, ValueError):
        state = {}
    state["id"] = init["id"]
    done = state.setdefault("done", {})
    run = wandb.init(
        id=init["id"],
        resume="allow",
        project=init["project"],
        entity=init.get("entity"),
        name=init["name"],
        dir=init["dir"],
        config=init.get("config") or {},
        allow_val_change=True,
    )
    defined = set()

    def define(group):
        if group not in defined:
            run.define_metric(f"{group}/step")
            run.define_metric(f"{group}/*", step_metric=f"{group}/step")
            defined.add(group)

    def fresh(group, step):
        return step > done.get(group, -1)

    def logged(group, step):
        done[group] = step
        write_state(state_path, state)

    status = None
    for line in sys.stdin:
        msg = json.loads(line)
        kind = msg["kind"]
        if kind == "scalars":
            group, step = msg["group"], msg["step"]
            if fresh(group, step):
                define(group)
                data = {k: v for k, v in msg["values"].items() if math.isfinite(v)}
                data[f"{group}/step"] = step
                run.log(data)
                logged(group, step)
        elif kind == "text":
            group, step = msg["group"], msg["step"]
            if fresh(group, step):
                define(group)
                html = "<pre>" + (msg["text"].replace("&", "&amp;").replace("<", "&lt;")
                                  .replace(">", "&gt;")) + "</pre>"
                run.log({msg["tag"]: wandb.Html(html), f"{group}/step": step})
                logged(group, step)
        elif kind == "files":
            base = msg["base"]
            for p in msg["paths"]:
                files = [p] if os.path.isfile(p) else [
                    os.path.join(d, f) for d, _, fs in os.walk(p) for f in sorted(fs)]
                for f in files:
                    run.save(f, base_path=base, policy="now")
        elif kind == "end":
            status = msg["status"]
            break
    if status == "KILLED":
        # stopped by a signal, to be resumed (--resume): marked preempting and ended with a
        # non-zero code (memskill's own 75), W&B shows the run as preempted
        run.mark_preempting()
        run.finish(exit_code=75)
    else:
        run.finish(exit_code=0 if status == "FINISHED" else 1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
