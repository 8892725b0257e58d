//! For tests (this crate's and the end-to-end ones): a PostgreSQL server of one test's own,
//! started by `scripts/registry/postgres.sh` (Debian's postgresql) on a free loopback port and
//! stopped when dropped. Each test gets an empty database of its own: the tests count rows.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A running test server (stopped on drop).
pub struct TempPostgres {
    dir: tempfile::TempDir,
    pub url: String,
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/registry/postgres.sh")
}

impl TempPostgres {
    /// Start one; `None` (after printing `skipped: ...` with the reason) where no server can
    /// be started here.
    pub fn start() -> Option<TempPostgres> {
        let skip = |why: String| {
            println!("skipped: no PostgreSQL server could be started: {why}");
            None
        };
        let dir = match tempfile::tempdir() {
            Ok(d) => d,
            Err(e) => return skip(e.to_string()),
        };
        let port = match std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()) {
            Ok(a) => a.port(),
            Err(e) => return skip(e.to_string()),
        };
        let out = match Command::new(script())
            .arg("start")
            .arg(dir.path().join("pg"))
            .arg(port.to_string())
            .output()
        {
            Ok(o) => o,
            Err(e) => return skip(format!("{}: {e}", script().display())),
        };
        if !out.status.success() {
            return skip(format!(
                "{} ({})",
                String::from_utf8_lossy(&out.stderr).trim(),
                out.status
            ));
        }
        let url = String::from_utf8_lossy(&out.stdout)
            .lines()
            .last()
            .unwrap_or("")
            .trim()
            .to_string();
        Some(TempPostgres { dir, url })
    }
}

impl Drop for TempPostgres {
    fn drop(&mut self) {
        let _ = Command::new(script())
            .arg("stop")
            .arg(self.dir.path().join("pg"))
            .status();
    }
}
