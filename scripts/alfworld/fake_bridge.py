#!/usr/bin/env python3
"""TEST DOUBLE of scripts/alfworld/bridge.py: speaks the same JSON-lines protocol without
TextWorld. A game file is any JSON with a "walkthrough" list; the fake game is won by sending
the walkthrough commands in order. Optional "fake" object in the game file injects failures:
  {"fake": {"crash_at_step": K}}  -> the process exits during step K (1-based)
  {"fake": {"hang_at_step": K}}   -> the process stops answering at step K
  {"fake": {"reset_error": "msg"}} -> reset answers {"ok": false}
Used only by the Rust pool tests; never for results."""
import json
import sys
import time

state = {"plan": [], "pos": 0, "steps": 0, "fake": {}, "done": False}


def admissible():
    plan, pos = state["plan"], state["pos"]
    cmds = {"look", "inventory"}
    if pos < len(plan):
        cmds.add(plan[pos])
        cmds.add("examine " + plan[pos].split(" ")[-1])
    return sorted(cmds)


def reply(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main():
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            req = json.loads(line)
            cmd = req.get("cmd")
            if cmd == "ping":
                reply({"ok": True, "engine": "fake"})
            elif cmd == "close":
                reply({"ok": True})
                return
            elif cmd == "reset":
                with open(req["game"]) as f:
                    game = json.load(f)
                state.update(plan=list(game["walkthrough"]), pos=0, steps=0,
                             fake=game.get("fake", {}), done=False)
                if "reset_error" in state["fake"]:
                    reply({"ok": False, "error": state["fake"]["reset_error"]})
                    continue
                goal = "fake task: " + ", then ".join(state["plan"][-1:])
                obs = "-= Welcome to the FAKE bridge =-\n\nYou are in a fake room.\n\nYour task is to: " + goal
                reply({"ok": True, "obs": obs, "objective": goal, "admissible": admissible(),
                       "inventory": "You are not carrying anything."})
            elif cmd == "step":
                state["steps"] += 1
                k = state["steps"]
                if state["fake"].get("crash_at_step") == k:
                    sys.exit(3)
                if state["fake"].get("hang_at_step") == k:
                    time.sleep(3600)
                action = req["action"]
                plan, pos = state["plan"], state["pos"]
                if pos < len(plan) and action == plan[pos]:
                    state["pos"] += 1
                    obs = "You did: " + action
                else:
                    obs = "Nothing happens."
                won = state["pos"] == len(plan)
                state["done"] = won
                reply({"ok": True, "obs": obs, "reward": 1.0 if won else 0.0, "done": won,
                       "won": won, "admissible": admissible(),
                       "inventory": "You are carrying: " + action if pos < len(plan) and action == plan[pos] else "You are not carrying anything."})
            else:
                reply({"ok": False, "error": "unknown cmd %r" % cmd})
        except SystemExit:
            raise
        except Exception as e:  # noqa: BLE001 - report every failure on the protocol
            reply({"ok": False, "error": "%s: %s" % (type(e).__name__, e)})


if __name__ == "__main__":
    main()
