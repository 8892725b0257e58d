"""Summarise the rounds of scripts/bench/e2e-reference.sh: seconds per update of the reference
trainer and of memskill (min / median / max over every update of every round), the ratio
(per round, ours' median over the reference's), memskill's critical-path fraction and where
each side's time goes. Standard library only.

Usage: python3 e2e_summary.py WORK_DIR ROUNDS LATENCY_MS SESSIONS QUESTIONS QUERY_CONC LOAD_START LOAD_END
"""
import json
import math
import os
import statistics
import sys

GOAL = 0.5  # memskill's seconds per update at most half the reference's


def read_lines(path):
    if not os.path.isfile(path):
        sys.exit(f"e2e summary: missing {path}")
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def ours_round(work, r):
    run = os.path.join(work, "runs", f"ours-{r}")
    rows = [t for t in read_lines(os.path.join(run, "timings.jsonl")) if "total_s" in t]
    calls = [m.get("llm_calls", 0) for m in read_lines(os.path.join(run, "metrics.jsonl"))
             if m.get("type") == "update"]
    for t, c in zip(rows, calls):
        t["other_s"] = t["total_s"] - t["rollout_s"] - t["update_s"]
        t["llm_calls"] = c
    return rows


def spread(xs):
    return min(xs), statistics.median(xs), max(xs)


def fmt3(xs):
    lo, med, hi = spread(xs)
    return f"{lo:.3f} / {med:.3f} / {hi:.3f}"


def breakdown(rows, ideal, extra):
    med = lambda k: statistics.median(r[k] for r in rows)
    parts = [
        f"rollout {med('rollout_s'):.3f} s (of which the critical path's LLM wait {ideal:.3f} s, "
        f"the rest {med('rollout_s') - ideal:.3f} s)",
        f"PPO update {med('update_s'):.3f} s",
        f"other (metrics, logging, checkpoint) {med('other_s'):.3f} s",
        f"LLM calls {med('llm_calls'):.0f}",
    ]
    for key, label in extra:
        parts.append(f"{label} {med(key):.3f} s")
    return "; ".join(parts)


def main(argv):
    if len(argv) != 9:
        sys.exit(__doc__.strip().splitlines()[-1])
    work, rounds = argv[1], int(argv[2])
    latency, sessions, questions, qconc = (float(argv[3]) / 1000.0, int(argv[4]), int(argv[5]),
                                           int(argv[6]))
    load0, load1 = float(argv[7]), float(argv[8])
    ref = [read_lines(os.path.join(work, f"ref-{r}.jsonl")) for r in range(1, rounds + 1)]
    ours = [ours_round(work, r) for r in range(1, rounds + 1)]
    ideal = (sessions + math.ceil(questions / qconc)) * latency
    ref_all = [x["total_s"] for rows in ref for x in rows]
    ours_all = [x["total_s"] for rows in ours for x in rows]
    ratios = [statistics.median(x["total_s"] for x in o) / statistics.median(x["total_s"] for x in f)
              for o, f in zip(ours, ref)]
    quiet = max(load0, load1) <= 1.0
    med_ours, med_ref = statistics.median(ours_all), statistics.median(ref_all)
    print(f"1-min load: {load0:.2f} at start, {load1:.2f} at end"
          + ("" if quiet else "  ** NOT QUIET (> 1.0): the ratio below is not a valid measurement **"))
    print(f"critical path per update: ({sessions} spans + {math.ceil(questions / qconc)} answer round) "
          f"x {latency * 1000:.0f} ms = {ideal:.3f} s")
    print()
    print("| side | seconds per update min / median / max | updates | critical-path fraction |")
    print("|---|---|---|---|")
    print(f"| reference (Python) | {fmt3(ref_all)} | {len(ref_all)} | {ideal / med_ref:.2f} |")
    print(f"| memskill | {fmt3(ours_all)} | {len(ours_all)} | {ideal / med_ours:.2f} |")
    lo, med, hi = spread(ratios)
    tag = "" if quiet else " (NOT QUIET)"
    print(f"\nratio memskill / reference, per round: median {med:.2f}x [{lo:.2f}, {hi:.2f}]{tag}; "
          f"goal (median) <= {GOAL}x: {'met' if med <= GOAL else 'not met'}")
    print("\nwhere the time goes (medians per update):")
    print("- reference: " + breakdown([x for rows in ref for x in rows], ideal, [
        ("llm_inflight_s", "time with an LLM call in flight"),
        ("encode_busy_s", "time with an encoder call running")]))
    print("- memskill:  " + breakdown([x for rows in ours for x in rows], ideal, []))
    calls = {statistics.median(x["llm_calls"] for x in rows) for rows in ref + ours}
    if len(calls) != 1:
        print(f"\nWARNING: the sides made different numbers of LLM calls per update: {sorted(calls)}")


if __name__ == "__main__":
    main(sys.argv)
