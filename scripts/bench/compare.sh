#!/usr/bin/env bash
# Ours vs the baselines (PyTorch twin, sentence-transformers, llama.cpp), interleaved round by
# round: `memskill bench all` in the given build profile. Makes the baseline venv first.
# Usage: scripts/bench/compare.sh [release|dev] [memskill bench options...]
#   e.g. scripts/bench/compare.sh release --rounds 7
# Refuses to measure when the 1-minute load is above 0.5 per core (see `memskill bench --help`).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
profile="${1:-release}"
[ $# -gt 0 ] && shift
py="$("$root/scripts/bench/setup.sh" | tail -n 1)"
cd "$root"
if [ "$profile" = "release" ]; then
  cargo build --quiet --release --bin memskill
  bin=target/release/memskill
else
  cargo build --quiet --bin memskill   # the build scripts/quickstart.sh uses
  bin=target/debug/memskill
fi
"$bin" bench all --python "$py" --json "bench-results-$profile.jsonl" "$@"
