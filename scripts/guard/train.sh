#!/usr/bin/env bash
# Retrain the guard's classifier from guard/data (the `train` and `calibration` sets of
# guard/data/sets.toml) and write guard/model/guard.model, deterministically. Run it after
# adding or moving a labelled set; the test `shipped_model_matches_its_data` fails until
# the model is retrained. Extra arguments go to `guard-model train` (e.g. --tau 0.7).
set -euo pipefail
cd "$(dirname "$0")/../.."
exec cargo run -q --release -p memskill-guard --bin guard-model -- train "$@"
