//! Crash-safe file writing: temp file in the same directory, write, fsync, rename,
//! fsync the directory.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};
use memskill_core::fsio::{self, WriteGuard};
use sha2::{Digest, Sha256};

/// fsync a directory so a rename inside it is durable.
pub fn fsync_dir(dir: &Path) -> Result<()> {
    let d = File::open(dir).with_context(|| format!("opening directory {}", dir.display()))?;
    d.sync_all()
        .with_context(|| format!("fsync of directory {}", dir.display()))
}

/// Write `bytes` to `path` atomically: a reader sees either the old or the new content, and
/// a failed write (a full disk) leaves the old content and no temporary file
/// ([`memskill_core::fsio::write_atomic`], the one write path).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    Ok(fsio::write_atomic(path, bytes)?)
}

/// Write a user-visible output file named on the command line: never through a link, over
/// an existing file only when `guard.force`, never onto an input (see [`fsio::WriteGuard`]).
pub fn write_output(path: &Path, bytes: &[u8], guard: &WriteGuard) -> Result<()> {
    Ok(fsio::write_user_file(path, bytes, guard)?)
}

/// Read a user-named file through the one bounded reader ([`fsio::read_user_text`]): a
/// regular file of at most `max_bytes`; `what` names it in the message.
pub fn read_input_text(path: &Path, max_bytes: u64, what: &str) -> Result<String> {
    Ok(fsio::read_user_text(path, max_bytes, what)?)
}

/// Write a file (not atomically) and fsync it; for files inside a directory that is
/// itself renamed into place afterwards.
pub fn write_synced(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut f = File::create(path).with_context(|| format!("creating {}", path.display()))?;
    f.write_all(bytes)
        .with_context(|| format!("writing {}", path.display()))?;
    f.sync_all()
        .with_context(|| format!("fsync of {}", path.display()))
}

/// Append one line and flush it to disk.
pub fn append_line(path: &Path, line: &str) -> Result<()> {
    let mut f = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("opening {}", path.display()))?;
    f.write_all(line.as_bytes())
        .with_context(|| format!("appending to {}", path.display()))?;
    f.write_all(b"\n")
        .with_context(|| format!("appending to {}", path.display()))?;
    f.sync_data()
        .with_context(|| format!("fsync of {}", path.display()))
}

/// Current length of a file (0 when absent).
pub fn file_len(path: &Path) -> u64 {
    fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

/// Truncate `path` to `len` bytes (creating it empty when absent).
pub fn truncate_to(path: &Path, len: u64) -> Result<()> {
    let f = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .with_context(|| format!("opening {}", path.display()))?;
    let cur = f.metadata().map(|m| m.len()).unwrap_or(0);
    if cur < len {
        anyhow::bail!(
            "{} is shorter ({cur} bytes) than the checkpoint recorded ({len} bytes): it was truncated or replaced",
            path.display()
        );
    }
    f.set_len(len)
        .with_context(|| format!("truncating {}", path.display()))?;
    f.sync_all()
        .with_context(|| format!("fsync of {}", path.display()))
}

/// Refuse to write `output` when it is `input` or lies inside it (compared by canonical
/// path and inode, so `./a.jsonl`, `a.jsonl`, a symlink and a hard link to it all count).
/// `flag` names the option.
pub fn refuse_overwrite_input(input: &Path, output: &Path, flag: &str) -> Result<()> {
    let guard = WriteGuard {
        force: true,
        inputs: vec![input.to_path_buf()],
        flag: flag.to_string(),
    };
    Ok(guard.check(output)?)
}

/// Refuse to replace an existing `path` unless `force` is set, and a symbolic link always.
/// `flag` names the option.
pub fn refuse_existing(path: &Path, force: bool, flag: &str) -> Result<()> {
    Ok(WriteGuard::new(flag, force).check(path)?)
}

/// Check that `path` is a regular file of at most `max_bytes` before reading it: a FIFO,
/// a device (`/dev/zero`) or a socket would block or never end. `what` names the input.
pub fn check_input_file(path: &Path, max_bytes: u64, what: &str) -> Result<()> {
    fsio::check_regular(path, max_bytes, what)?;
    Ok(())
}

/// Remove our temporary files (`.<name>.tmp-<pid>` from [`write_atomic`], `.tmp-step-<n>`
/// checkpoint folders) left in `dir` by a killed process. Temp files of a process that is
/// still alive (checked through `/proc/<pid>` where it exists) are kept, as are
/// this process's own. Returns the removed paths.
pub fn clean_stale_temps(dir: &Path) -> Result<Vec<std::path::PathBuf>> {
    let mut removed = Vec::new();
    let Ok(entries) = fs::read_dir(dir) else {
        return Ok(removed);
    };
    let me = std::process::id();
    let proc_fs = Path::new("/proc/self").exists();
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let p = e.path();
        let stale = if let Some(i) = name.rfind(".tmp-") {
            let pid = &name[i + 5..];
            name.starts_with('.')
                && i > 0
                && !pid.is_empty()
                && pid.bytes().all(|b| b.is_ascii_digit())
                && pid.parse::<u32>().is_ok_and(|pid| {
                    pid != me && !(proc_fs && Path::new(&format!("/proc/{pid}")).exists())
                })
        } else {
            false
        };
        // `.tmp-step-<n>`: a checkpoint folder assembled by a killed save.
        let stale_ck = name
            .strip_prefix(".tmp-step-")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        if stale && e.file_type().is_ok_and(|t| t.is_file()) {
            fs::remove_file(&p).with_context(|| format!("removing stale {}", p.display()))?;
            removed.push(p);
        } else if (stale_ck || stale) && e.file_type().is_ok_and(|t| t.is_dir()) {
            // `.tmp-step-<n>`, or a `.skills.tmp-<pid>` export of a killed process
            fs::remove_dir_all(&p).with_context(|| format!("removing stale {}", p.display()))?;
            removed.push(p);
        }
    }
    Ok(removed)
}

/// sha256 of bytes as lowercase hex.
pub fn sha256_bytes(b: &[u8]) -> String {
    hex::encode(Sha256::digest(b))
}

/// sha256 of a file's content.
pub fn sha256_file(path: &Path) -> Result<String> {
    let b = fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    Ok(sha256_bytes(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_and_leaves_no_temp() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a.txt");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"two");
        let names: Vec<_> = fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }

    #[test]
    fn stale_temps_are_removed_live_and_foreign_files_kept() {
        let d = tempfile::tempdir().unwrap();
        let dead = d.path().join(".latest.tmp-4000000000");
        fs::write(&dead, b"step-1").unwrap();
        let mine = d.path().join(format!(".latest.tmp-{}", std::process::id()));
        fs::write(&mine, b"x").unwrap();
        fs::create_dir(d.path().join(".tmp-step-3")).unwrap();
        fs::write(d.path().join(".tmp-step-3").join("state.json"), b"{}").unwrap();
        for keep in ["latest", "notes.tmp-12", ".tmp-x", ".a.tmp-"] {
            fs::write(d.path().join(keep), b"k").unwrap();
        }
        let removed = clean_stale_temps(d.path()).unwrap();
        assert_eq!(removed.len(), 2, "{removed:?}");
        assert!(!dead.exists() && !d.path().join(".tmp-step-3").exists());
        assert!(mine.exists());
        for keep in ["latest", "notes.tmp-12", ".tmp-x", ".a.tmp-"] {
            assert!(d.path().join(keep).exists(), "{keep}");
        }
    }

    #[test]
    fn input_checks_refuse_fifos_devices_big_files_and_self_overwrite() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a.json");
        fs::write(&p, b"0123456789").unwrap();
        check_input_file(&p, 10, "data.path").unwrap();
        let e = check_input_file(&p, 9, "data.path")
            .unwrap_err()
            .to_string();
        assert!(e.contains("above the limit"), "{e}");
        let e = check_input_file(Path::new("/dev/zero"), u64::MAX, "x")
            .unwrap_err()
            .to_string();
        assert!(e.contains("a device"), "{e}");
        let same = d.path().join(".").join("a.json");
        let e = refuse_overwrite_input(&p, &same, "--per-line")
            .unwrap_err()
            .to_string();
        assert!(e.contains("--per-line") && e.contains("input"), "{e}");
        refuse_overwrite_input(&p, &d.path().join("new.jsonl"), "--per-line").unwrap();
        let hard = d.path().join("hard.json");
        fs::hard_link(&p, &hard).unwrap();
        assert!(refuse_overwrite_input(&p, &hard, "--per-line").is_err());
        assert!(refuse_existing(&p, false, "--out").is_err());
        refuse_existing(&p, true, "--out").unwrap();
    }

    #[test]
    fn truncate_refuses_to_grow() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("m.jsonl");
        append_line(&p, "a").unwrap();
        append_line(&p, "b").unwrap();
        truncate_to(&p, 2).unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "a\n");
        assert!(truncate_to(&p, 10).is_err());
    }
}
