//! memskill-e2e: the end-to-end tests that cross crates (`tests/*.rs`: the closed loop and
//! resume exactness, the ALFWorld loop, outages and I/O hardening, the `memskill` CLI), and
//! the helpers they share.
//!
//! The CLI tests run the `memskill` binary that `cargo test --workspace` builds for
//! memskill-cli's own integration tests (`target/<profile>/memskill`); run them through
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

/// `--set` lines of a tiny offline synthetic run named `name` (hashing encoder, scripted
/// executor, no designer): two samples of two spans, one update.
pub fn tiny_synthetic_sets(name: &str) -> Vec<String> {
    [
        format!("run.name=\"{name}\""),
        "run.batch_size=2".into(),
        "run.outer_epochs=1".into(),
        "run.inner_epochs=1".into(),
        "data.dataset=\"synthetic\"".into(),
        "data.synthetic_samples=2".into(),
        "data.synthetic_spans=2".into(),
        "encoder.kind=\"hashing\"".into(),
        "encoder.dim=16".into(),
        "controller.top_k=1".into(),
        "controller.retrieve=3".into(),
        "answer.retrieve=3".into(),
        "policy.hidden=8".into(),
        "executor.backend=\"scripted-synthetic\"".into(),
        "designer.enabled=false".into(),
    ]
    .to_vec()
}

/// Run the `memskill` binary with `args` and collect its output.
pub fn memskill(args: &[&str]) -> std::process::Output {
    std::process::Command::new(memskill_bin())
        .args(args)
        .output()
        .expect("memskill runs")
}

/// `DIR/bank.json` (the seed bank) and its export `DIR/skills`, made with the binary.
pub fn seed_bank_and_export(dir: &std::path::Path) {
    let s = |p: &str| dir.join(p).to_string_lossy().to_string();
    let o = memskill(&["skills", "init", "--out", &s("bank.json")]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = memskill(&["skills", "export", &s("bank.json"), "--out", &s("skills")]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// A command's stderr as text.
pub fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

/// A `memskill llm serve-scripted` process (killed when dropped) and its `/v1` base URL.
pub struct ScriptedServer {
    child: std::process::Child,
    pub url: String,
}

impl Drop for ScriptedServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Start `memskill llm serve-scripted ARGS` on a free port (its `--port-file` in `dir`, named
/// `name`) and wait up to 30 s for it to listen.
pub fn serve_scripted(dir: &Path, name: &str, args: &[&std::ffi::OsStr]) -> ScriptedServer {
    let port = dir.join(format!("{name}.port"));
    let child = std::process::Command::new(memskill_bin())
        .args(["llm", "serve-scripted"])
        .args(args)
        .arg("--port-file")
        .arg(&port)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("memskill llm serve-scripted starts");
    // the guard first: a server that never listens is still killed
    let mut server = ScriptedServer {
        child,
        url: String::new(),
    };
    let t = std::time::Instant::now();
    while !port.exists() {
        assert!(
            t.elapsed() < std::time::Duration::from_secs(30),
            "the scripted server did not start"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let p = std::fs::read_to_string(&port).unwrap();
    server.url = format!("http://127.0.0.1:{}/v1", p.trim());
    server
}
