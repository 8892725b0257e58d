//! `memskill.train` and `memskill.evaluate`: the trainer library's runs, returning their
//! results as dicts. Training runs on its own thread with the GIL released; the calling
//! thread polls for Ctrl-C and, on one, asks the trainer to stop at its next safe point.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use memskill_trainer::config::Config;
use memskill_trainer::train::TrainOptions;
use pyo3::prelude::*;
use serde_json::json;

use crate::{err, to_py, MemskillError};

/// How often the waiting thread looks for a pending signal (Ctrl-C).
const SIGNAL_POLL: Duration = Duration::from_millis(100);

/// The run's config: `config` with `overrides` (`key=TOML value`), else on `resume` the
/// run's own `config.toml`; `run_dir`'s last component is the run name.
fn resolve_config(
    config: Option<&PathBuf>,
    overrides: &[String],
    run_dir: Option<&PathBuf>,
    resume: bool,
) -> anyhow::Result<(Config, PathBuf)> {
    use anyhow::Context;
    let mut sets = overrides.to_vec();
    let mut runs_dir = PathBuf::from("runs");
    if let Some(dir) = run_dir {
        let name = dir
            .file_name()
            .and_then(|n| n.to_str())
            .with_context(|| format!("run_dir {}: no run name in it", dir.display()))?;
        memskill_trainer::config::check_run_name(name).context("run_dir")?;
        sets.push(format!("run.name={}", json!(name)));
        if let Some(p) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
            runs_dir = p.to_path_buf();
        }
    }
    let cfg = match (config, run_dir) {
        (Some(p), _) => Config::load(p, &sets)?,
        (None, Some(dir)) if resume => Config::load(&dir.join("config.toml"), &sets)?,
        _ => anyhow::bail!("config is required (or resume=True with run_dir)"),
    };
    Ok((cfg, runs_dir))
}

/// Runs `work` on its own thread with the GIL released, polling for signals meanwhile. On
/// a pending signal (KeyboardInterrupt) it sets `stop` and waits for `work` to return;
/// returns `work`'s result and the signal's exception, if one came.
fn run_interruptible<T: Send + 'static>(
    py: Python<'_>,
    stop: Arc<AtomicBool>,
    work: impl FnOnce() -> anyhow::Result<T> + Send + 'static,
) -> PyResult<(T, Option<PyErr>)> {
    let (tx, rx) = mpsc::channel::<()>();
    let handle = std::thread::spawn(move || {
        let r = work();
        let _ = tx.send(());
        r
    });
    let mut interrupt: Option<PyErr> = None;
    let mut rx = rx;
    loop {
        // (the receiver moves in and out: a `&Receiver` cannot cross into the detached part)
        let (r, back) = py.detach(move || (rx.recv_timeout(SIGNAL_POLL), rx));
        rx = back;
        if !matches!(r, Err(mpsc::RecvTimeoutError::Timeout)) {
            break;
        }
        if interrupt.is_none() {
            if let Err(e) = py.check_signals() {
                stop.store(true, Ordering::SeqCst);
                eprintln!("interrupted: stopping at the next safe point");
                interrupt = Some(e);
            }
        }
    }
    let res = py
        .detach(|| handle.join())
        .map_err(|_| MemskillError::new_err("the worker thread panicked"))?;
    match (res, interrupt) {
        (Ok(v), i) => Ok((v, i)),
        // the work stopped because of the signal: the signal is the error
        (Err(_), Some(i)) => Err(i),
        (Err(e), None) => Err(err(e)),
    }
}

/// Trains (or resumes) a run; see `memskill.train`.
#[pyfunction]
#[pyo3(signature = (config=None, *, overrides=Vec::new(), run_dir=None, max_updates=None,
    resume=false, log=false))]
#[allow(clippy::too_many_arguments)]
pub fn train<'py>(
    py: Python<'py>,
    config: Option<PathBuf>,
    overrides: Vec<String>,
    run_dir: Option<PathBuf>,
    max_updates: Option<u64>,
    resume: bool,
    log: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let (cfg, runs_dir) =
        resolve_config(config.as_ref(), &overrides, run_dir.as_ref(), resume).map_err(err)?;
    let stop = Arc::new(AtomicBool::new(false));
    let opts = TrainOptions {
        runs_dir,
        resume,
        max_updates,
        progress: false,
        log_lines: log,
        stop: Some(stop.clone()),
    };
    let (out, interrupt) =
        run_interruptible(py, stop, move || memskill_trainer::train(&cfg, &opts))?;
    if let Some(e) = interrupt {
        let ck = out.last_checkpoint.as_deref().unwrap_or(&out.run_dir);
        eprintln!(
            "stopped at update {}: checkpoint {}; continue with resume=True, run_dir={:?}",
            out.update_step,
            ck.display(),
            out.run_dir
        );
        return Err(e);
    }
    to_py(py, &out)
}

/// Evaluates a checkpoint; see `memskill.evaluate`.
#[pyfunction]
#[pyo3(signature = (checkpoint, *, dataset=None, split=None, limit=None, overrides=Vec::new(),
    out=None, method=None, judge=true))]
#[allow(clippy::too_many_arguments)]
pub fn evaluate<'py>(
    py: Python<'py>,
    checkpoint: PathBuf,
    dataset: Option<String>,
    split: Option<String>,
    limit: Option<usize>,
    overrides: Vec<String>,
    out: Option<PathBuf>,
    method: Option<String>,
    judge: bool,
) -> PyResult<Bound<'py, PyAny>> {
    use memskill_trainer::eval::{evaluate, EvalOptions};
    let (dataset, split) = crate::slice(limit, dataset, split)?;
    let stop = Arc::new(AtomicBool::new(false));
    let opts = EvalOptions {
        checkpoint,
        dataset,
        split,
        limit,
        sets: overrides,
        out,
        method,
        no_judge: !judge,
        stop: Some(stop.clone()),
    };
    // On Ctrl-C the evaluation stops before its next sample and writes no results.
    let ((r, dir), _) = run_interruptible(py, stop, move || {
        let (r, dir) = evaluate(&opts)?;
        r.check_error_rate()?;
        anyhow::Ok((r, dir))
    })?;
    let d = to_py(py, &r)?;
    d.set_item("out_dir", to_py(py, &dir)?)?;
    Ok(d)
}
