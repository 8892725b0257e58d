//! The W&B sink: a sidecar Python process (`wandb_sidecar.py`, embedded, run with `python -c`)
//! that logs what it reads on its stdin, JSON lines, into one W&B run with the `wandb`
//! package. Training never waits for it: lines go through a bounded queue to a writer thread
//! that owns the sidecar's stdin, and a line that finds the queue full (the sidecar is slow)
//! or the sidecar gone (it died) is dropped and counted by the tracker.
//!
//! The W&B run id is made from the run folder's path and the time the run started, and kept
//! in `<run>/wandb.json` with, per tag group, the highest step the sidecar logged; `--resume`
//! reads it back and continues the same W&B run (`wandb.init(id=..., resume="allow")`)
//! without logging a step twice. The sidecar's output goes to `<run>/wandb/sidecar.log` and
//! W&B's own files to `<run>/wandb/` (offline runs, with `WANDB_MODE=offline`, too).
//!
//! The Python: `tracking.wandb_python`, else `$MEMSKILL_WANDB_PYTHON`, else the tracking venv
//! of `scripts/tracking/setup.sh` (`<cache>/tracking-venv/bin/python`) when it exists, else
//! `python3`.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use serde_json::{json, Value};

use super::tfevents::HValue;
use super::TrackingConfig;
use crate::fsutil::write_atomic;

/// The sidecar's source.
const SIDECAR: &str = include_str!("wandb_sidecar.py");
/// Lines queued for the sidecar before new ones are dropped (one line per update, stage or
/// evaluation: a sidecar this far behind is stuck).
const QUEUE_LINES: usize = 1024;
/// How long the end of a run waits for the sidecar to finish its W&B run.
const FINISH_WAIT: Duration = Duration::from_secs(60);

/// The running sidecar.
pub struct WandbSink {
    /// None once the run was ended.
    tx: Option<SyncSender<String>>,
    writer: Option<JoinHandle<()>>,
    child: Child,
    log: PathBuf,
    python: PathBuf,
    /// How long [`WandbSink::end`] waits ([`FINISH_WAIT`]).
    finish_wait: Duration,
}

/// The Python that runs the sidecar (see the module documentation).
pub fn python(cfg: &TrackingConfig) -> PathBuf {
    if let Some(p) = &cfg.wandb_python {
        return p.clone();
    }
    if let Some(p) = std::env::var_os("MEMSKILL_WANDB_PYTHON").filter(|v| !v.is_empty()) {
        return PathBuf::from(p);
    }
    let venv = memskill_core::cache_root()
        .join("tracking-venv")
        .join("bin")
        .join("python");
    if venv.is_file() {
        return venv;
    }
    PathBuf::from("python3")
}

/// The W&B run id of the run in `run_dir`: the one `<run>/wandb.json` keeps, else a new
/// one (16 hex digits of a hash of the folder's path, `run_name` and the time) written
/// there.
pub fn run_id(run_dir: &Path, run_name: &str) -> Result<String> {
    use sha2::{Digest, Sha256};
    let state = run_dir.join("wandb.json");
    if let Some(id) = std::fs::read(&state)
        .ok()
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        .and_then(|v| v["id"].as_str().map(str::to_string))
        .filter(|id| valid_id(id))
    {
        return Ok(id);
    }
    let path = std::fs::canonicalize(run_dir).unwrap_or_else(|_| run_dir.to_path_buf());
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    let digest = Sha256::digest(format!(
        "{}\n{run_name}\n{now}\n{}",
        path.display(),
        std::process::id()
    ));
    let id: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    let body = serde_json::to_vec(&json!({"id": id, "done": {}}))?;
    write_atomic(&state, &body)?;
    Ok(id)
}

/// A W&B run id we wrote (W&B refuses some characters; ours are hex digits).
fn valid_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 64 && id.chars().all(|c| c.is_ascii_alphanumeric())
}

/// The last `n` lines of the sidecar's log (for a warning).
fn log_tail(log: &Path, n: usize) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join(" | ")
}

/// Writes the queued lines into the sidecar's stdin until the queue closes or a write
/// fails (the sidecar exited); the stdin is closed when it returns.
fn write_lines(rx: Receiver<String>, mut stdin: ChildStdin) {
    for line in rx {
        if stdin
            .write_all(line.as_bytes())
            .and_then(|()| stdin.write_all(b"\n"))
            .and_then(|()| stdin.flush())
            .is_err()
        {
            return;
        }
    }
}

/// The resolved config's parameters as the W&B run's config.
fn wandb_config(params: &BTreeMap<String, HValue>) -> serde_json::Map<String, Value> {
    params
        .iter()
        .map(|(k, v)| {
            let v = match v {
                // integers as integers (TOML's, read as f64): `batch_size = 8`, not 8.0
                HValue::Number(x) if x.fract() == 0.0 && x.abs() < 9.0e15 => json!(*x as i64),
                HValue::Number(x) => json!(x),
                HValue::Bool(b) => json!(b),
                HValue::Text(s) => json!(s),
            };
            (k.clone(), v)
        })
        .collect()
}

impl WandbSink {
    /// Start the sidecar for the run in `run_dir` (named `run_name`) in `project`, with the
    /// resolved config's `params` as the W&B config.
    pub fn open(
        cfg: &TrackingConfig,
        project: &str,
        run_dir: &Path,
        run_name: &str,
        params: &BTreeMap<String, HValue>,
    ) -> Result<Self> {
        let id = run_id(run_dir, run_name)?;
        let dir = run_dir.join("wandb");
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let log = dir.join("sidecar.log");
        let out = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
            .with_context(|| format!("opening {}", log.display()))?;
        let err = out
            .try_clone()
            .with_context(|| format!("opening {}", log.display()))?;
        let python = python(cfg);
        let mut child = {
            use std::os::unix::process::CommandExt;
            Command::new(&python)
                .arg("-u")
                .arg("-c")
                .arg(SIDECAR)
                .stdin(Stdio::piped())
                .stdout(out)
                .stderr(err)
                // its own process group: a Ctrl-C at the terminal reaches memskill, which
                // then ends the W&B run in order
                .process_group(0)
                .spawn()
                .with_context(|| {
                    format!(
                        "starting the W&B sidecar with {} (tracking.wandb_python or \
                         MEMSKILL_WANDB_PYTHON name a python with wandb; \
                         scripts/tracking/setup.sh makes one)",
                        python.display()
                    )
                })?
        };
        let stdin = child.stdin.take().context("the sidecar's stdin")?;
        let (tx, rx) = sync_channel::<String>(QUEUE_LINES);
        let writer = std::thread::Builder::new()
            .name("wandb-sidecar".into())
            .spawn(move || write_lines(rx, stdin))
            .context("starting the W&B writer thread")?;
        let config = wandb_config(params);
        let mut sink = Self {
            tx: Some(tx),
            writer: Some(writer),
            child,
            log,
            python,
            finish_wait: FINISH_WAIT,
        };
        sink.send(&json!({
            "kind": "init",
            "id": id,
            "project": project,
            "entity": cfg.wandb_entity,
            "name": run_name,
            "dir": run_dir,
            "state": run_dir.join("wandb.json"),
            "config": config,
        }))?;
        Ok(sink)
    }

    /// Queue one line for the sidecar; an error when it was dropped (queue full, sidecar
    /// gone, run ended).
    fn send(&mut self, msg: &Value) -> Result<()> {
        let tx = self
            .tx
            .as_ref()
            .ok_or_else(|| anyhow!("the W&B run was already ended"))?;
        match tx.try_send(msg.to_string()) {
            Ok(()) => Ok(()),
            Err(TrySendError::Full(_)) => bail!(
                "the W&B sidecar is {QUEUE_LINES} lines behind: a line was dropped (training \
                 does not wait for it)"
            ),
            Err(TrySendError::Disconnected(_)) => {
                let status = self
                    .child
                    .try_wait()
                    .ok()
                    .flatten()
                    .map_or_else(|| "its input closed".to_string(), |s| s.to_string());
                bail!(
                    "the W&B sidecar ({}) stopped ({status}); its log {}: {}",
                    self.python.display(),
                    self.log.display(),
                    log_tail(&self.log, 4)
                )
            }
        }
    }

    /// Log scalars of a tag group at `step`.
    pub fn log_scalars(&mut self, group: &str, step: u64, values: &[(String, f64)]) -> Result<()> {
        let values: serde_json::Map<String, Value> = values
            .iter()
            .filter(|(_, v)| v.is_finite())
            .map(|(k, v)| (k.clone(), json!(v)))
            .collect();
        self.send(&json!({"kind": "scalars", "group": group, "step": step, "values": values}))
    }

    /// Log a text (shown as preformatted HTML) as `tag` of `group` at `step`.
    pub fn log_text(&mut self, group: &str, step: u64, tag: &str, text: &str) -> Result<()> {
        self.send(&json!({"kind": "text", "group": group, "step": step, "tag": tag, "text": text}))
    }

    /// Save files or folders with the W&B run (paths relative to `base`).
    pub fn save(&mut self, base: &Path, paths: &[PathBuf]) -> Result<()> {
        self.send(&json!({"kind": "files", "base": base, "paths": paths}))
    }

    /// End the W&B run with `status` (FINISHED, KILLED: preempted, to be resumed; FAILED)
    /// and wait up to [`FINISH_WAIT`] for the sidecar to finish; past that it is killed.
    pub fn end(&mut self, status: &str) -> Result<()> {
        if self.tx.is_none() {
            return Ok(());
        }
        let sent = self.send(&json!({"kind": "end", "status": status}));
        // closing the queue closes the sidecar's stdin once the queued lines are written
        self.tx = None;
        let t0 = Instant::now();
        let exit = loop {
            match self.child.try_wait() {
                Ok(Some(s)) => break Some(s),
                Ok(None) if t0.elapsed() < self.finish_wait => {
                    std::thread::sleep(Duration::from_millis(50))
                }
                _ => break None,
            }
        };
        let res = match exit {
            Some(s) if s.success() => sent,
            Some(s) => Err(anyhow!(
                "the W&B sidecar exited with {s}; its log {}: {}",
                self.log.display(),
                log_tail(&self.log, 4)
            )),
            None => {
                self.kill();
                Err(anyhow!(
                    "the W&B sidecar did not finish within {} s and was stopped; W&B's files \
                     are in {} (`wandb sync` uploads them)",
                    self.finish_wait.as_secs(),
                    self.log.parent().unwrap_or(Path::new(".")).display()
                ))
            }
        };
        if let Some(w) = self.writer.take() {
            let _ = w.join();
        }
        res
    }

    /// Kill the sidecar's process group (W&B's own service runs in it too).
    fn kill(&mut self) {
        if let Ok(pid) = i32::try_from(self.child.id()) {
            // SAFETY: signalling the process group the sidecar leads.
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
            }
        }
        let _ = self.child.wait();
    }
}

impl Drop for WandbSink {
    /// A sink dropped without [`WandbSink::end`]: its input closes, and the sidecar finishes
    /// the W&B run as failed (it is not waited for).
    fn drop(&mut self) {
        self.tx = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_run_id_is_kept_in_the_run_folder() {
        let dir = tempfile::tempdir().unwrap();
        let a = run_id(dir.path(), "r").unwrap();
        assert_eq!(a.len(), 16);
        assert!(valid_id(&a));
        assert_eq!(run_id(dir.path(), "r").unwrap(), a, "read back");
        // a fresh run of the same name in the same place (its wandb.json removed) gets a
        // new id: the two are not mixed in one W&B run
        std::fs::remove_file(dir.path().join("wandb.json")).unwrap();
        assert_ne!(run_id(dir.path(), "r").unwrap(), a);
        // an id we did not write is replaced
        std::fs::write(dir.path().join("wandb.json"), r#"{"id": "a/b"}"#).unwrap();
        assert!(valid_id(&run_id(dir.path(), "r").unwrap()));
    }

    /// A "python" that is a shell script (`-u -c SOURCE` ignored).
    fn fake_python(dir: &Path, body: &str) -> TrackingConfig {
        use std::os::unix::fs::PermissionsExt;
        let p = dir.join("fake-python");
        std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        TrackingConfig {
            wandb: true,
            wandb_python: Some(p),
            ..Default::default()
        }
    }

    /// Logs lines until one is dropped; returns its error and how long that took.
    fn until_dropped(sink: &mut WandbSink) -> (String, Duration) {
        let t0 = Instant::now();
        for step in 0..100_000u64 {
            if let Err(e) = sink.log_scalars("train", step, &[("train/x".into(), 1.0)]) {
                return (format!("{e:#}"), t0.elapsed());
            }
        }
        panic!("no line was dropped");
    }

    /// A sidecar that never reads: the queue fills and lines are dropped at once (training
    /// never waits), and `end` stops it after its wait.
    #[test]
    fn a_stuck_sidecar_drops_lines_instead_of_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = fake_python(dir.path(), "exec sleep 60");
        let mut sink = WandbSink::open(&cfg, "p", dir.path(), "r", &BTreeMap::new()).unwrap();
        let (e, took) = until_dropped(&mut sink);
        assert!(e.contains("lines behind"), "{e}");
        assert!(took < Duration::from_secs(5), "{took:?}");
        sink.finish_wait = Duration::from_millis(300);
        let t0 = Instant::now();
        let e = sink.end("FINISHED").unwrap_err();
        assert!(format!("{e:#}").contains("did not finish"), "{e:#}");
        assert!(t0.elapsed() < Duration::from_secs(5));
        assert!(sink.end("FINISHED").is_ok(), "a second end is a no-op");
    }

    /// A sidecar that dies: lines are dropped with its exit status and log.
    #[test]
    fn a_dead_sidecar_is_reported_with_its_log() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = fake_python(dir.path(), "echo no module named wandb >&2; exit 3");
        let mut sink = WandbSink::open(&cfg, "p", dir.path(), "r", &BTreeMap::new()).unwrap();
        let t0 = Instant::now();
        while sink.child.try_wait().unwrap().is_none() {
            assert!(
                t0.elapsed() < Duration::from_secs(10),
                "the fake sidecar exits"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        let (e, _) = until_dropped(&mut sink);
        assert!(
            e.contains("stopped") && e.contains("no module named wandb"),
            "{e}"
        );
        let e = sink.end("FINISHED").unwrap_err();
        assert!(format!("{e:#}").contains("exit status: 3"), "{e:#}");
    }
}
