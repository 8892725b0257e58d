//! One writer per run (issue 46, case 5): `runs/<name>/run.lock`, an advisory lock
//! (`flock`) held for the trainer's life, naming its holder (PID, host, start time). A
//! second `memskill train` of the same run gets an error naming the holder at once,
//! before it touches a file of the run. The kernel drops the lock when its holder exits
//! (also by `kill -9`), so a lock file left behind is never stale: the next run takes it.
//! On a filesystem without `flock` (some network mounts) the PID the file names is asked
//! instead: alive on this host = in use.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

/// A held run lock; dropping it releases the lock (the file stays, naming the last holder).
#[derive(Debug)]
pub struct RunLock {
    _file: File,
    pub path: PathBuf,
}

fn host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "unknown-host".into())
}

/// `pid=<n> host=<h> started=<unix seconds>`.
fn holder_line() -> String {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    format!("pid={} host={} started={t}\n", std::process::id(), host())
}

fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(key)?.strip_prefix('='))
}

/// Whether the holder a lock file names is a live process on this host.
fn holder_alive(line: &str) -> bool {
    let pid = field(line, "pid").and_then(|p| p.parse::<i32>().ok());
    match pid {
        Some(pid) if field(line, "host") == Some(host().as_str()) => {
            memskill_core::fsio::pid_alive(pid)
        }
        _ => false,
    }
}

impl RunLock {
    /// Takes the lock of the run folder `dir` (which must exist), or fails naming its holder.
    pub fn acquire(dir: &Path) -> Result<RunLock> {
        let path = dir.join("run.lock");
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(&path)
            .with_context(|| format!("opening the run lock {}", path.display()))?;
        if !file.metadata()?.is_file() {
            bail!("the run lock {} is not a regular file", path.display());
        }
        let mut prev = String::new();
        let _ = Read::by_ref(&mut file).take(4096).read_to_string(&mut prev);
        let in_use = |holder: &str| {
            anyhow::anyhow!(
                "run {} is in use by another memskill process ({}; lock file {}): wait for it to finish, or choose another --run-name",
                dir.display(),
                holder.trim(),
                path.display()
            )
        };
        match File::try_lock(&file) {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => return Err(in_use(&prev)),
            Err(TryLockError::Error(e)) if e.kind() == std::io::ErrorKind::Unsupported => {
                if holder_alive(&prev) {
                    return Err(in_use(&prev));
                }
            }
            Err(TryLockError::Error(e)) => {
                return Err(e).with_context(|| format!("locking {}", path.display()))
            }
        }
        file.set_len(0)?;
        file.rewind()?;
        file.write_all(holder_line().as_bytes())
            .with_context(|| format!("writing {}", path.display()))?;
        Ok(RunLock { _file: file, path })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_with_the_first_named_and_a_dropped_lock_is_free() {
        let d = tempfile::tempdir().unwrap();
        let a = RunLock::acquire(d.path()).unwrap();
        let e = format!("{:#}", RunLock::acquire(d.path()).unwrap_err());
        assert!(e.contains("is in use by another memskill process"), "{e}");
        assert!(e.contains(&format!("pid={}", std::process::id())), "{e}");
        drop(a);
        let b = RunLock::acquire(d.path()).unwrap();
        let text = std::fs::read_to_string(&b.path).unwrap();
        assert!(
            text.starts_with(&format!("pid={} host=", std::process::id())),
            "{text}"
        );
    }

    #[test]
    fn a_holder_is_alive_only_on_this_host_with_a_live_pid() {
        let me = format!("pid={} host={} started=0", std::process::id(), host());
        assert!(holder_alive(&me));
        assert!(!holder_alive(&format!(
            "pid={} host=elsewhere started=0",
            std::process::id()
        )));
        assert!(!holder_alive("pid=999999999 host=x"));
        assert!(!holder_alive("garbage"));
    }

    #[cfg(unix)]
    #[test]
    fn a_linked_lock_file_is_refused() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("elsewhere"), "keep").unwrap();
        std::os::unix::fs::symlink(d.path().join("elsewhere"), d.path().join("run.lock")).unwrap();
        let e = format!("{:#}", RunLock::acquire(d.path()).unwrap_err());
        assert!(e.contains("run.lock"), "{e}");
        assert_eq!(
            std::fs::read_to_string(d.path().join("elsewhere")).unwrap(),
            "keep"
        );
    }
}
