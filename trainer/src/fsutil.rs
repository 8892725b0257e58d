//! Crash-safe file writing: temp file in the same directory, write, fsync, rename,
//! fsync the directory.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};
use sha2::{Digest, Sha256};

/// fsync a directory so a rename inside it is durable.
pub fn fsync_dir(dir: &Path) -> Result<()> {
    let d = File::open(dir).with_context(|| format!("opening directory {}", dir.display()))?;
    d.sync_all()
        .with_context(|| format!("fsync of directory {}", dir.display()))
}

/// Write `bytes` to `path` atomically: a reader sees either the old or the new content.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    {
        let mut f = File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
        f.write_all(bytes)
            .with_context(|| format!("writing {}", tmp.display()))?;
        f.sync_all()
            .with_context(|| format!("fsync of {}", tmp.display()))?;
    }
    fs::rename(&tmp, path)
        .with_context(|| format!("renaming {} to {}", tmp.display(), path.display()))?;
    fsync_dir(dir)
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
