//! The one reader of user-named files and the one writer of user-visible files.
//!
//! This is the only module of core that touches the file system. It lives here, below every
//! crate, so that the designer's skill import/export and the trainer's configs, templates,
//! results and checkpoints read and write files the same guarded way:
//!
//! - [`read_user_file`]: only a regular file (a FIFO would block forever, `/dev/zero` never
//!   ends), at most a given number of bytes (checked before and while reading).
//! - [`write_user_file`]: atomic (temp file, fsync, rename), never through a symbolic link,
//!   never over an existing file unless forced, never onto one of the command's inputs (not
//!   even when forced), and the temporary file is removed on every error (a full disk leaves
//!   nothing behind).
//! - [`write_folder_atomic`]: a whole folder (an exported skill bank) written next to its
//!   place, a `manifest.sha256` of every file last, then swapped in with one atomic rename;
//!   [`check_folder_manifest`] is the reader's half.

use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

/// The default size limit of small user files: skill banks, SKILL.md files, templates, configs.
pub const SMALL_FILE_LIMIT: u64 = 64 << 20;

/// A refused or failed read or write, naming the file and, where given, what it is.
#[derive(Debug, thiserror::Error)]
pub enum FsError {
    #[error("{what} {path}: {reason}")]
    Refused {
        what: String,
        path: PathBuf,
        reason: String,
    },
    #[error("{what} {path}: {source}")]
    Io {
        what: String,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

fn refused(what: &str, path: &Path, reason: impl Into<String>) -> FsError {
    FsError::Refused {
        what: what.to_string(),
        path: path.to_path_buf(),
        reason: reason.into(),
    }
}

fn io_err(what: &str, path: &Path, source: io::Error) -> FsError {
    if source.kind() == io::ErrorKind::NotFound {
        // one clean line (the io error's own text would repeat in the error chain)
        return refused(what, path, "does not exist");
    }
    FsError::Io {
        what: what.to_string(),
        path: path.to_path_buf(),
        source,
    }
}

/// Check that `path` (links followed) is a regular file of at most `max_bytes`.
/// `what` names the input in the message (`run.skill_bank`, `prompts.dir template`, ...).
pub fn check_regular(path: &Path, max_bytes: u64, what: &str) -> Result<u64, FsError> {
    let m = fs::metadata(path).map_err(|e| io_err(what, path, e))?;
    if !m.is_file() {
        let kind = kind_of(&m.file_type());
        return Err(refused(
            what,
            path,
            format!("is {kind}, not a regular file; refusing to read it"),
        ));
    }
    if m.len() > max_bytes {
        return Err(refused(
            what,
            path,
            format!("{} bytes is above the limit of {max_bytes} bytes", m.len()),
        ));
    }
    Ok(m.len())
}

fn kind_of(t: &fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if t.is_dir() {
        "a directory"
    } else if t.is_symlink() {
        "a symbolic link"
    } else {
        "not a regular file"
    }
}

/// Read a user-named file: a regular file of at most `max_bytes` (a file that grows past the
/// limit while it is read is refused too).
pub fn read_user_file(path: &Path, max_bytes: u64, what: &str) -> Result<Vec<u8>, FsError> {
    check_regular(path, max_bytes, what)?;
    let f = File::open(path).map_err(|e| io_err(what, path, e))?;
    let mut buf = Vec::new();
    f.take(max_bytes.saturating_add(1))
        .read_to_end(&mut buf)
        .map_err(|e| io_err(what, path, e))?;
    if buf.len() as u64 > max_bytes {
        return Err(refused(
            what,
            path,
            format!("grew above the limit of {max_bytes} bytes while being read"),
        ));
    }
    Ok(buf)
}

/// [`read_user_file`] as UTF-8 text.
pub fn read_user_text(path: &Path, max_bytes: u64, what: &str) -> Result<String, FsError> {
    let b = read_user_file(path, max_bytes, what)?;
    String::from_utf8(b).map_err(|e| refused(what, path, format!("not UTF-8 text: {e}")))
}

/// How [`write_user_file`] may treat an existing file.
#[derive(Debug, Clone, Default)]
pub struct WriteGuard {
    /// Replace an existing regular file (the `--force` of a command).
    pub force: bool,
    /// The command's inputs (files or folders): never written onto or into, even when forced.
    pub inputs: Vec<PathBuf>,
    /// The option that named the output, for the messages (`--out`).
    pub flag: String,
}

impl WriteGuard {
    pub fn new(flag: &str, force: bool) -> Self {
        WriteGuard {
            force,
            inputs: Vec::new(),
            flag: flag.to_string(),
        }
    }

    pub fn input(mut self, p: impl Into<PathBuf>) -> Self {
        self.inputs.push(p.into());
        self
    }

    /// Whether `path` may be written: not a link, not an input, not existing unless forced.
    pub fn check(&self, path: &Path) -> Result<(), FsError> {
        let what = &self.flag;
        if let Ok(m) = fs::symlink_metadata(path) {
            if m.file_type().is_symlink() {
                return Err(refused(
                    what,
                    path,
                    "is a symbolic link; refusing to write through it (remove the link or choose another path)",
                ));
            }
            if !m.is_file() {
                let kind = kind_of(&m.file_type());
                return Err(refused(
                    what,
                    path,
                    format!("is {kind}; refusing to replace it"),
                ));
            }
        }
        for input in &self.inputs {
            if is_within(path, input) {
                return Err(refused(
                    what,
                    path,
                    format!(
                        "is (inside) the input {}; refusing to overwrite an input, even with --force",
                        input.display()
                    ),
                ));
            }
        }
        if !self.force && fs::symlink_metadata(path).is_ok() {
            return Err(refused(
                what,
                path,
                "already exists (use --force to overwrite)",
            ));
        }
        Ok(())
    }
}

/// Whether `path` is `input` or lies inside it (canonical paths of the existing parts, so
/// `./a`, `a`, links to it and hard links all count).
pub fn is_within(path: &Path, input: &Path) -> bool {
    let Ok(input_c) = fs::canonicalize(input) else {
        return false;
    };
    if let (Ok(a), Ok(b)) = (fs::metadata(path), fs::metadata(&input_c)) {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            if a.is_file() && a.dev() == b.dev() && a.ino() == b.ino() {
                return true;
            }
        }
        let _ = (a, b);
    }
    canonical_target(path).is_some_and(|p| p.starts_with(&input_c))
}

/// The canonical form of a path that may not exist yet: its deepest existing ancestor
/// canonicalised, with the rest appended.
fn canonical_target(path: &Path) -> Option<PathBuf> {
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().ok()?.join(path)
    };
    let mut rest = Vec::new();
    let mut cur = abs.as_path();
    loop {
        if let Ok(c) = fs::canonicalize(cur) {
            let mut out = c;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return Some(out);
        }
        rest.push(cur.file_name()?.to_os_string());
        cur = cur.parent()?;
    }
}

/// Write a user-visible file through `guard`, atomically.
pub fn write_user_file(path: &Path, bytes: &[u8], guard: &WriteGuard) -> Result<(), FsError> {
    guard.check(path)?;
    write_atomic(path, bytes)
}

/// Write `bytes` to `path` atomically: temp file in the same folder, write, fsync, rename,
/// fsync the folder. The temp file is removed on every error. The rename replaces a symbolic
/// link at `path` itself, never the file it points to.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), FsError> {
    write_atomic_with(path, bytes, |f, b| f.write_all(b))
}

/// [`write_atomic`] with the write step given (tests inject a full disk through it).
pub fn write_atomic_with(
    path: &Path,
    bytes: &[u8],
    write: impl FnOnce(&mut File, &[u8]) -> io::Result<()>,
) -> Result<(), FsError> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    fs::create_dir_all(dir).map_err(|e| io_err("creating", dir, e))?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let res = (|| {
        let mut f = File::create(&tmp)?;
        write(&mut f, bytes)?;
        f.sync_all()?;
        drop(f);
        fs::rename(&tmp, path)
    })();
    if let Err(e) = res {
        let _ = fs::remove_file(&tmp);
        return Err(io_err("writing", path, e));
    }
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| io_err("fsync of directory", dir, e))
}

/// The manifest [`write_folder_atomic`] writes last: `sha256sum` format (`<hex>  <path>`),
/// so `sha256sum -c manifest.sha256` checks a folder by hand too.
pub const FOLDER_MANIFEST: &str = "manifest.sha256";

/// Whether `pid` names a live process on this host (signal 0; EPERM: alive under another
/// user).
pub fn pid_alive(pid: i32) -> bool {
    pid > 0
        && (unsafe { libc::kill(pid, 0) } == 0
            || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM))
}

/// Swaps `a` and `b` atomically (`renameat2(RENAME_EXCHANGE)`); false where the file
/// system cannot (then the caller renames twice).
fn exchange(a: &Path, b: &Path) -> io::Result<bool> {
    use std::os::unix::ffi::OsStrExt;
    let c = |p: &Path| {
        std::ffi::CString::new(p.as_os_str().as_bytes())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL in the path"))
    };
    let (ca, cb) = (c(a)?, c(b)?);
    let r = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            ca.as_ptr(),
            libc::AT_FDCWD,
            cb.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    if r == 0 {
        return Ok(true);
    }
    let e = io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::EINVAL) | Some(libc::ENOSYS) | Some(libc::EOPNOTSUPP) => Ok(false),
        _ => Err(e),
    }
}

/// Writes the folder `dir` as exactly `files` (paths relative to it) plus
/// [`FOLDER_MANIFEST`], so that a crash at any moment leaves the old folder or the new one,
/// never a mix: the files go into a sibling `.<name>.export-<pid>` (each fsynced), the
/// manifest last, then one atomic exchange puts it in place and the old folder is removed.
/// Temp folders a dead process left next to `dir` are removed first. `dir` must not be a
/// symbolic link (the caller refuses one, naming its option).
pub fn write_folder_atomic(dir: &Path, files: &[(PathBuf, Vec<u8>)]) -> Result<(), FsError> {
    let parent = dir
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = dir
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| refused("folder", dir, "has no name"))?;
    fs::create_dir_all(parent).map_err(|e| io_err("creating", parent, e))?;
    remove_dead_temps(parent, name)?;
    let tmp = parent.join(format!(".{name}.export-{}", std::process::id()));
    if tmp.exists() {
        fs::remove_dir_all(&tmp).map_err(|e| io_err("removing", &tmp, e))?;
    }
    let res = (|| -> Result<(), FsError> {
        fs::create_dir(&tmp).map_err(|e| io_err("creating", &tmp, e))?;
        let mut manifest: Vec<(String, String)> = Vec::new();
        for (rel, bytes) in files {
            let path = tmp.join(rel);
            let d = path.parent().unwrap_or(&tmp);
            fs::create_dir_all(d).map_err(|e| io_err("creating", d, e))?;
            write_synced(&path, bytes)?;
            manifest.push((rel.to_string_lossy().into_owned(), crate::sha256_hex(bytes)));
        }
        manifest.sort();
        let text: String = manifest
            .iter()
            .map(|(p, h)| format!("{h}  {p}\n"))
            .collect();
        write_synced(&tmp.join(FOLDER_MANIFEST), text.as_bytes())?;
        sync_dirs(&tmp)
    })();
    if let Err(e) = res {
        let _ = fs::remove_dir_all(&tmp);
        return Err(e);
    }
    swap_in(&tmp, dir, parent, name)
}

/// `tmp` put in the place of `dir` (exchanged, or renamed twice where the file system cannot
/// exchange), the old folder removed, the parent fsynced.
fn swap_in(tmp: &Path, dir: &Path, parent: &Path, name: &str) -> Result<(), FsError> {
    let exists = fs::symlink_metadata(dir).is_ok();
    let swapped = if exists {
        match exchange(tmp, dir) {
            Ok(true) => true,
            Ok(false) => {
                let old = parent.join(format!(".{name}.replaced-{}", std::process::id()));
                fs::rename(dir, &old).map_err(|e| io_err("moving aside", dir, e))?;
                fs::rename(tmp, dir).map_err(|e| io_err("moving into place", dir, e))?;
                fs::remove_dir_all(&old).map_err(|e| io_err("removing", &old, e))?;
                false
            }
            Err(e) => {
                let _ = fs::remove_dir_all(tmp);
                return Err(io_err("replacing", dir, e));
            }
        }
    } else {
        fs::rename(tmp, dir).map_err(|e| io_err("moving into place", dir, e))?;
        false
    };
    if swapped {
        // `tmp` now holds the old folder
        fs::remove_dir_all(tmp).map_err(|e| io_err("removing the old folder", tmp, e))?;
    }
    File::open(parent)
        .and_then(|d| d.sync_all())
        .map_err(|e| io_err("fsync of directory", parent, e))
}

fn write_synced(path: &Path, bytes: &[u8]) -> Result<(), FsError> {
    (|| {
        let mut f = File::create(path)?;
        f.write_all(bytes)?;
        f.sync_all()
    })()
    .map_err(|e| io_err("writing", path, e))
}

/// fsync of `dir` and every folder below it.
fn sync_dirs(dir: &Path) -> Result<(), FsError> {
    for e in fs::read_dir(dir).map_err(|e| io_err("reading", dir, e))? {
        let e = e.map_err(|e| io_err("reading", dir, e))?;
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            sync_dirs(&e.path())?;
        }
    }
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| io_err("fsync of directory", dir, e))
}

/// Removes `.<name>.export-<pid>` and `.<name>.replaced-<pid>` folders next to `dir` whose
/// process is gone (a crash in the middle of [`write_folder_atomic`]).
fn remove_dead_temps(parent: &Path, name: &str) -> Result<(), FsError> {
    let Ok(entries) = fs::read_dir(parent) else {
        return Ok(());
    };
    for e in entries.flatten() {
        let f = e.file_name().to_string_lossy().into_owned();
        let pid = [".export-", ".replaced-"].iter().find_map(|tag| {
            f.strip_prefix(&format!(".{name}{tag}"))
                .and_then(|p| p.parse::<i32>().ok())
        });
        let real_dir = e.file_type().is_ok_and(|t| t.is_dir());
        let stale = pid.is_some_and(|p| p as u32 == std::process::id() || !pid_alive(p));
        if real_dir && stale {
            let p = e.path();
            fs::remove_dir_all(&p)
                .map_err(|err| io_err("removing the stale temp folder", &p, err))?;
        }
    }
    Ok(())
}

/// The regular files below `dir`, hidden ones and the manifest aside (what a manifest lists).
fn folder_files(dir: &Path) -> Result<Vec<PathBuf>, FsError> {
    let mpath = dir.join(FOLDER_MANIFEST);
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d)
            .map_err(|e| io_err("reading", &d, e))?
            .flatten()
        {
            let p = e.path();
            if e.file_name().to_string_lossy().starts_with('.') || p == mpath {
                continue;
            }
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(p),
                Ok(t) if t.is_file() => out.push(p),
                _ => {}
            }
        }
    }
    Ok(out)
}

/// Rewrites `dir`'s [`FOLDER_MANIFEST`] (atomically) for its regular files as they are now
/// (hidden ones aside): `skills approve` on an export vouches for its current content.
pub fn rewrite_folder_manifest(dir: &Path) -> Result<(), FsError> {
    let mut lines = Vec::new();
    for p in folder_files(dir)? {
        let bytes = read_user_file(&p, SMALL_FILE_LIMIT, "exported file")?;
        let rel = p
            .strip_prefix(dir)
            .unwrap_or(&p)
            .to_string_lossy()
            .into_owned();
        lines.push((rel, crate::sha256_hex(&bytes)));
    }
    lines.sort();
    let text: String = lines.iter().map(|(p, h)| format!("{h}  {p}\n")).collect();
    write_atomic(&dir.join(FOLDER_MANIFEST), text.as_bytes())
}

/// Checks the folder `dir` against its [`FOLDER_MANIFEST`]: every file it lists is there
/// with its hash, and every regular file of the folder (hidden ones aside) is listed. Returns
/// false when there is no manifest (a folder written by hand or by an older memskill); the
/// first difference is an error naming the file.
pub fn check_folder_manifest(dir: &Path) -> Result<bool, FsError> {
    match folder_manifest_differences(dir)? {
        None => Ok(false),
        Some(d) => match d.into_iter().next() {
            None => Ok(true),
            Some((p, why)) => Err(refused(
                "file",
                &p,
                format!("{why} {FOLDER_MANIFEST} (a mix of two exports, or a hand edit)"),
            )),
        },
    }
}

/// The files of `dir` that differ from its [`FOLDER_MANIFEST`] (with how: `does not match
/// its hash in`, `is missing or unreadable, but listed in`, `is not listed in`); None when
/// the folder has no manifest. A malformed manifest is an error.
pub fn folder_manifest_differences(
    dir: &Path,
) -> Result<Option<Vec<(PathBuf, &'static str)>>, FsError> {
    let mpath = dir.join(FOLDER_MANIFEST);
    if fs::symlink_metadata(&mpath).is_err() {
        return Ok(None);
    }
    let text = read_user_text(&mpath, SMALL_FILE_LIMIT, "manifest")?;
    let mut diffs = Vec::new();
    let mut listed = std::collections::BTreeSet::new();
    for (i, line) in text.lines().enumerate() {
        let Some((hash, rel)) = line.split_once("  ") else {
            return Err(refused(
                "manifest",
                &mpath,
                format!("line {} is not `<sha256>  <path>`", i + 1),
            ));
        };
        if rel
            .split('/')
            .any(|c| c.is_empty() || c == "." || c == "..")
        {
            return Err(refused(
                "manifest",
                &mpath,
                format!("line {}: path {rel:?} leaves the folder", i + 1),
            ));
        }
        let path = dir.join(rel);
        match read_user_file(&path, SMALL_FILE_LIMIT, "exported file") {
            Err(_) => diffs.push((path.clone(), "is missing or unreadable, but listed in")),
            Ok(b) if crate::sha256_hex(&b) != hash => {
                diffs.push((path.clone(), "does not match its hash in"))
            }
            Ok(_) => {}
        }
        listed.insert(path);
    }
    for p in folder_files(dir)? {
        if !listed.contains(&p) {
            diffs.push((p, "is not listed in"));
        }
    }
    Ok(Some(diffs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_refuse_fifos_devices_and_big_files() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a.json");
        fs::write(&p, b"0123456789").unwrap();
        assert_eq!(read_user_file(&p, 10, "bank").unwrap(), b"0123456789");
        let e = read_user_file(&p, 9, "bank").unwrap_err().to_string();
        assert!(e.contains("bank") && e.contains("above the limit"), "{e}");
        let e = read_user_file(Path::new("/dev/zero"), u64::MAX, "run.skill_bank")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("a device") && e.contains("run.skill_bank"),
            "{e}"
        );
        let fifo = d.path().join("fifo");
        let ok = std::process::Command::new("mkfifo").arg(&fifo).status();
        if ok.is_ok_and(|s| s.success()) {
            let e = read_user_file(&fifo, 100, "template")
                .unwrap_err()
                .to_string();
            assert!(e.contains("a FIFO"), "{e}");
        }
    }

    #[test]
    fn a_folder_is_replaced_whole_with_a_manifest_that_catches_a_mix() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("exp");
        let files = |tag: &str| {
            vec![
                (PathBuf::from("a/SKILL.md"), format!("a {tag}").into_bytes()),
                (PathBuf::from("b/SKILL.md"), format!("b {tag}").into_bytes()),
                (
                    PathBuf::from("bank.json"),
                    format!("{{\"{tag}\": 1}}").into_bytes(),
                ),
            ]
        };
        write_folder_atomic(&out, &files("one")).unwrap();
        assert!(check_folder_manifest(&out).unwrap());
        // a dead process's temp folder next to it is removed by the next write
        let dead = d.path().join(".exp.export-999999999");
        fs::create_dir(&dead).unwrap();
        write_folder_atomic(&out, &files("two")).unwrap();
        assert!(!dead.exists());
        assert_eq!(fs::read(out.join("a/SKILL.md")).unwrap(), b"a two");
        let mut names: Vec<_> = fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names, vec!["exp"]);
        // a file of another export (what a kill in the middle of an old-style export left)
        fs::write(out.join("a/SKILL.md"), b"a one").unwrap();
        let e = check_folder_manifest(&out).unwrap_err().to_string();
        assert!(
            e.contains("a/SKILL.md") && e.contains("does not match its hash"),
            "{e}"
        );
        fs::write(out.join("a/SKILL.md"), b"a two").unwrap();
        fs::create_dir(out.join("c")).unwrap();
        fs::write(out.join("c/SKILL.md"), b"c").unwrap();
        let e = check_folder_manifest(&out).unwrap_err().to_string();
        assert!(
            e.contains("c/SKILL.md") && e.contains("is not listed"),
            "{e}"
        );
        fs::remove_dir_all(out.join("c")).unwrap();
        fs::remove_file(out.join("bank.json")).unwrap();
        let e = check_folder_manifest(&out).unwrap_err().to_string();
        assert!(e.contains("bank.json") && e.contains("missing"), "{e}");
        fs::remove_file(out.join(FOLDER_MANIFEST)).unwrap();
        assert!(!check_folder_manifest(&out).unwrap());
    }

    #[test]
    fn a_full_disk_leaves_no_temp_file_and_the_old_content() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("bank.json");
        fs::write(&p, b"old").unwrap();
        let e = write_atomic_with(&p, b"new", |f, b| {
            f.write_all(&b[..1])?;
            Err(io::Error::from_raw_os_error(28)) // ENOSPC
        })
        .unwrap_err()
        .to_string();
        assert!(e.contains("bank.json"), "{e}");
        assert_eq!(fs::read(&p).unwrap(), b"old");
        let names: Vec<_> = fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }

    #[cfg(unix)]
    #[test]
    fn writes_refuse_links_existing_files_and_inputs() {
        let d = tempfile::tempdir().unwrap();
        let target = d.path().join("target.txt");
        fs::write(&target, b"keep").unwrap();
        let link = d.path().join("link.txt");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let forced = WriteGuard::new("--out", true);
        let e = write_user_file(&link, b"x", &forced)
            .unwrap_err()
            .to_string();
        assert!(e.contains("symbolic link"), "{e}");
        assert_eq!(fs::read(&target).unwrap(), b"keep");
        let e = write_user_file(&target, b"x", &WriteGuard::new("--out", false))
            .unwrap_err()
            .to_string();
        assert!(e.contains("--force"), "{e}");
        write_user_file(&target, b"new", &forced).unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"new");
        // the input folder itself, and a path inside it reached through `..`, even forced
        let input = d.path().join("in");
        fs::create_dir_all(input.join("s")).unwrap();
        fs::write(input.join("s/SKILL.md"), b"md").unwrap();
        let g = WriteGuard::new("--out", true).input(&input);
        let sneaky = d.path().join("in/s/../s/SKILL.md");
        let e = write_user_file(&sneaky, b"{}", &g).unwrap_err().to_string();
        assert!(e.contains("input"), "{e}");
        assert!(write_user_file(&input.join("new/bank.json"), b"{}", &g).is_err());
        assert_eq!(fs::read(input.join("s/SKILL.md")).unwrap(), b"md");
        write_user_file(&d.path().join("out.json"), b"{}", &g).unwrap();
    }
}
