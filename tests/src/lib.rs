//! memskill-e2e: the end-to-end tests that cross crates (`tests/*.rs`: the closed loop and
//! resume exactness, the ALFWorld loop, outages and I/O hardening, the `memskill` CLI), and
//! the helpers they share.
//!
//! The CLI tests run the `memskill` binary that `cargo test --workspace` builds for
//! memskill-trainer's own integration tests (`target/<profile>/memskill`); run them through
//! `cargo test --workspace` (or `scripts/test.sh`) so that binary is current.

use std::path::{Path, PathBuf};

/// The `memskill` binary next to the running test executable (`target/<profile>/deps/..`).
pub fn memskill_bin() -> PathBuf {
    let exe = std::env::current_exe().expect("the test executable's path");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("the test executable lives in target/<profile>/deps");
    let bin = profile_dir.join(format!("memskill{}", std::env::consts::EXE_SUFFIX));
    assert!(
        bin.is_file(),
        "{} not found: run the end-to-end tests with `cargo test --workspace`, which builds it",
        bin.display()
    );
    bin
}

/// The repository root (the workspace folder).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ sits in the repository root")
        .to_path_buf()
}
