#!/usr/bin/env python3
"""ALFWorld environment bridge for memskill: JSON lines on stdin/stdout.

Requests and replies (one JSON object per line):
  {"cmd":"ping"}                 -> {"ok":true,"engine":"textworld <version>"}
  {"cmd":"reset","game":PATH}    -> {"ok":true,"obs","objective","admissible":[...],"inventory"}
  {"cmd":"step","action":STR}    -> {"ok":true,"obs","reward","done","won","admissible":[...],"inventory"}
  {"cmd":"close"}                -> {"ok":true} and exit
Failures answer {"ok":false,"error":...} and the process keeps serving.

Games are ALFWorld `game.tw-pddl` files played with TextWorld's PDDL engine and ALFWorld's own
wrappers (AlfredDemangler, AlfredInfos), as alfworld.agents.environment.AlfredTWEnv does
(without domain randomisation). Setup: scripts/alfworld/setup.sh.
"""
import json
import os
import re
import sys

# Protocol lines go to the real stdout; anything libraries print goes to stderr.
PROTO = sys.stdout
sys.stdout = sys.stderr

import textworld  # noqa: E402
from alfworld.agents.environment.alfred_tw_env import AlfredDemangler, AlfredInfos  # noqa: E402

REQUEST_INFOS = textworld.EnvInfos(won=True, admissible_commands=True, inventory=True,
                                   extras=["gamefile"])
TASK_RE = re.compile(r"Your task is to:\s*(.*)", re.S)

env = None


def reply(obj):
    PROTO.write(json.dumps(obj) + "\n")
    PROTO.flush()


def objective_of(obs):
    m = TASK_RE.search(obs or "")
    return m.group(1).strip() if m else ""


def admissible_of(state):
    cmds = state.get("admissible_commands") or []
    return [c for c in cmds]


def inventory_of(state):
    inv = state.get("inventory") or ""
    if isinstance(inv, (list, tuple)):
        inv = inv[0] if inv else ""
    return "" if inv is None else str(inv)


def do_reset(path):
    global env
    if env is not None:
        try:
            env.close()
        except Exception:  # noqa: BLE001
            pass
        env = None
    if not os.path.isfile(path):
        raise FileNotFoundError("no game file at %s" % path)
    env = textworld.start(path, REQUEST_INFOS, wrappers=[AlfredDemangler(shuffle=False), AlfredInfos])
    state = env.reset()
    obs = state.feedback if hasattr(state, "feedback") else state["feedback"]
    return {"ok": True, "obs": obs, "objective": objective_of(obs), "admissible": admissible_of(state),
            "inventory": inventory_of(state)}


def do_step(action):
    if env is None:
        raise RuntimeError("step before reset")
    state, reward, done = env.step(action)
    obs = state.feedback if hasattr(state, "feedback") else state["feedback"]
    won = bool(state.get("won", False))
    return {
        "ok": True,
        "obs": obs,
        "reward": float(reward or 0.0),
        "done": bool(done),
        "won": won,
        "admissible": admissible_of(state),
        "inventory": inventory_of(state),
    }


def main():
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            req = json.loads(line)
            cmd = req.get("cmd")
            if cmd == "ping":
                reply({"ok": True, "engine": "textworld %s" % textworld.__version__})
            elif cmd == "reset":
                reply(do_reset(req["game"]))
            elif cmd == "step":
                reply(do_step(str(req["action"])))
            elif cmd == "close":
                reply({"ok": True})
                break
            else:
                reply({"ok": False, "error": "unknown cmd %r" % (cmd,)})
        except Exception as e:  # noqa: BLE001 - every failure is reported on the protocol
            reply({"ok": False, "error": "%s: %s" % (type(e).__name__, e)})
    if env is not None:
        try:
            env.close()
        except Exception:  # noqa: BLE001
            pass


if __name__ == "__main__":
    main()
