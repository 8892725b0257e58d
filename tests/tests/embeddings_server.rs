//! `memskill embed --json` through a real embeddings server (infinity-emb from PyPI, started
//! on 127.0.0.1 by `scripts/servers/embeddings-check.sh`), by Hub name and locally: a cosine
//! of at least 0.99999 on 200 LoCoMo texts. Slow (the server loads torch): runs with
//! `MEMSKILL_SERVER_TESTS=1` and the venv of `scripts/servers/infinity-setup.sh`; the test
//! never installs anything (the script skips when the venv is missing).

use std::process::Command;

use memskill_e2e::{memskill_bin, repo_root};

#[test]
fn embeddings_local_server_and_hub_name_agree() {
    if std::env::var("MEMSKILL_SERVER_TESTS").is_err() {
        eprintln!("skipped: set MEMSKILL_SERVER_TESTS=1 (starts infinity-emb; slow)");
        return;
    }
    let root = repo_root();
    let out = Command::new("bash")
        .arg(root.join("scripts/servers/embeddings-check.sh"))
        .arg("--no-install")
        .env("MEMSKILL_BIN", memskill_bin())
        .current_dir(&root)
        .output()
        .expect("running embeddings-check.sh");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    if stdout.starts_with("skipped:") {
        eprintln!("{stdout}");
        return;
    }
    for way in ["server", "hub"] {
        let line = stdout
            .lines()
            .find(|l| l.starts_with(&format!("min cosine local vs {way}:")))
            .unwrap_or_else(|| panic!("no {way} line in {stdout}"));
        let v: f64 = line.split_whitespace().nth(5).unwrap().parse().unwrap();
        assert!(v >= 0.99999, "{line}");
    }
}
