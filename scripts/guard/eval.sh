#!/usr/bin/env bash
# Leave one author out: for each labelled set of guard/data/sets.toml (not the engineers'
# own), train the classifier on the others and measure the guard on it. Prints per-set
# lines on stderr, then pooled and per-category figures for a grid of thresholds (the
# threshold of the shipped model is chosen here; docs/safety.md). About 30 s per set on
# two cores. `--sets a,b` limits the folds; `--json FILE` writes every scored text.
set -euo pipefail
cd "$(dirname "$0")/../.."
exec cargo run -q --release -p memskill-guard --bin guard-model -- eval "$@"
