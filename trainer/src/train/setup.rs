//! Opening a run: a fresh start or a resume from `checkpoints/latest`.

use anyhow::{bail, Context, Result};
use memskill_controller::Controller;
use memskill_core::SkillBank;
use memskill_designer::{Evolution, HardCasePool};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::files::{filter_timings, history_row};
use super::lock::RunLock;
use super::progress::Progress;
use super::{RunFiles, TrainOptions, TrainOutcome, Trainer};
use crate::benchmark::Benchmark;
use crate::checkpoint::{pointer, Checkpoint, TrainState, FORMAT_VERSION};
use crate::config::Config;
use crate::episode::derive_seed;
use crate::fsutil::{truncate_to, write_atomic};
use crate::runtime::{initial_bank, Runtime};
use crate::tracking::Tracker;

/// Where a run starts from.
enum Start {
    Fresh(SkillBank),
    Resume(Box<Checkpoint>),
}

impl<'c> Trainer<'c> {
    /// Open the run `cfg.run.name` under `opts.runs_dir`: everything that can fail on the
    /// config or its inputs (the benchmark's data or environment, the initial bank, a
    /// resume's checkpoint) runs before the run directory is created, so a config error
    /// leaves nothing behind.
    pub fn open(cfg: &'c Config, opts: &TrainOptions) -> Result<Self> {
        let dir = opts.runs_dir.join(&cfg.run.name);
        let files = RunFiles {
            metrics: dir.join("metrics.jsonl"),
            timings: dir.join("timings.jsonl"),
            invocations: dir.join("invocations.jsonl"),
            config_toml: cfg.to_toml()?,
            dir,
        };
        let bench = crate::benchmark::open(cfg)?;
        // an existing run is locked before it is read: a second writer stops here
        let early_lock = if files.dir.is_dir() {
            Some(RunLock::acquire(&files.dir)?)
        } else {
            None
        };
        let start = start_of(cfg, opts, &files)?;
        // every template rendered once with sample data before the run directory exists
        crate::prompts::load(cfg.prompts.dir.as_deref())?;
        let created = early_lock.is_none();
        let (rt, lock) = create_run_dir(cfg, &files, bench.as_ref(), early_lock)?;
        write_atomic(&files.dir.join("config.toml"), files.config_toml.as_bytes())?;
        let mut controller = Controller::new(rt.encoder.dim(), &cfg.policy, &cfg.ppo, cfg.run.seed)
            .context("building the controller")?;
        let (state, bank, evolution, pool) = restore(start, cfg, &files, &mut controller)?;
        let total_updates = cfg.run.outer_epochs as u64 * cfg.run.inner_epochs as u64;
        let progress = Progress::new(opts.progress, total_updates, state.update_step);
        let log_lines = opts.log_lines || (progress.hidden && opts.progress);
        let out = TrainOutcome {
            run_dir: files.dir.clone(),
            update_step: state.update_step,
            updates_this_run: 0,
            finished: false,
            outer_rewards: Vec::new(),
            export_dir: None,
            last_checkpoint: None,
            interrupted: false,
        };
        // The bank's description embeddings land in the encoder's cache at set-up (each
        // rollout embeds them again, as cache hits), so the first rollout does not wait.
        let descs: Vec<&str> = bank
            .selectable()
            .into_iter()
            .map(|s| s.description.as_str())
            .collect();
        crate::backends::embed(rt.encoder.as_ref(), &descs)?;
        let tracker = Tracker::open(
            &cfg.tracking,
            opts.resume,
            &files.dir,
            &cfg.run.name,
            &format!("memskill-{}", cfg.data.dataset.name()),
            &files.config_toml,
        );
        Ok(Trainer {
            cfg,
            opts: opts.clone(),
            bench,
            rt,
            files,
            controller,
            bank,
            evolution,
            pool,
            state,
            progress,
            log_lines,
            tracker,
            out,
            lock: Some(lock),
            created,
            registry_written: Default::default(),
            registry_banks: Vec::new(),
        })
    }
}

/// Where the run starts: its latest checkpoint (`--resume`), or a fresh bank (refused when
/// the run already has checkpoints).
fn start_of(cfg: &Config, opts: &TrainOptions, files: &RunFiles) -> Result<Start> {
    if opts.resume {
        return Ok(Start::Resume(Box::new(load_resume(files)?)));
    }
    if pointer(&files.dir, "latest")?.is_some() {
        bail!(
            "run {} already has checkpoints: pass --resume or choose another --run-name",
            files.dir.display()
        );
    }
    let mut bank = initial_bank(cfg)?;
    if cfg.designer.cfg.governed() {
        // the governance design assesses every skill's risk from the start (seeds included)
        memskill_designer::risk::assess_bank(&mut bank);
    }
    Ok(Start::Fresh(bank))
}

/// The loop state, bank, evolution and hard-case pool to start from: a resume's checkpoint
/// (its controller restored, the run's logs cut back to it) or a fresh start (empty logs).
fn restore(
    start: Start,
    cfg: &Config,
    files: &RunFiles,
    controller: &mut Controller,
) -> Result<(TrainState, SkillBank, Evolution, HardCasePool)> {
    Ok(match start {
        Start::Resume(ck) => {
            controller
                .load_bytes(&ck.controller)
                .context("restoring the controller from the checkpoint")?;
            truncate_to(&files.metrics, ck.state.metrics_len)?;
            check_steps_increase(&files.metrics)?;
            truncate_to(&files.invocations, ck.state.invocations_len)?;
            filter_timings(&files.timings, ck.state.update_step)?;
            (ck.state, ck.bank, ck.evolution, ck.pool)
        }
        Start::Fresh(bank) => {
            for p in [&files.metrics, &files.timings, &files.invocations] {
                write_atomic(p, b"")?;
            }
            (
                fresh_state(cfg, &bank),
                bank,
                Evolution::new(cfg.evolution.clone()),
                HardCasePool::new(cfg.pool.clone()),
            )
        }
    })
}

/// The latest checkpoint of the run, refused when the config differs from the run's.
/// `--resume` refuses a metrics log whose update steps do not increase (two writers
/// interleaved their lines): resuming it would train on a history that never happened.
fn check_steps_increase(metrics: &std::path::Path) -> Result<()> {
    let text = std::fs::read_to_string(metrics)
        .with_context(|| format!("--resume: reading {}", metrics.display()))?;
    let mut last: Option<u64> = None;
    for (i, line) in text.lines().enumerate() {
        let v: serde_json::Value = serde_json::from_str(line).with_context(|| {
            format!("--resume: {} line {} is not JSON", metrics.display(), i + 1)
        })?;
        if v.get("type").and_then(|t| t.as_str()) != Some("update") {
            continue;
        }
        let step = v.get("step").and_then(|s| s.as_u64());
        match (last, step) {
            (_, None) => bail!("--resume: {} line {}: an update without a step", metrics.display(), i + 1),
            (Some(prev), Some(s)) if s <= prev => bail!(
                "--resume: {} line {}: update step {s} after step {prev}; the steps must increase (two processes wrote this run?): start a new run",
                metrics.display(),
                i + 1
            ),
            (_, s) => last = s,
        }
    }
    Ok(())
}

fn load_resume(files: &RunFiles) -> Result<Checkpoint> {
    let dir = pointer(&files.dir, "latest")?
        .with_context(|| format!("--resume: {} has no checkpoint yet", files.dir.display()))?;
    let ck =
        Checkpoint::load(&dir).with_context(|| format!("loading checkpoint {}", dir.display()))?;
    let origin = dir.join("config.toml").display().to_string();
    if !same_config(&ck.config_toml, &files.config_toml, &origin)? {
        bail!(
            "--resume: the config differs from the one the run was started with ({origin}); resume without --config/--set",
        );
    }
    Ok(ck)
}

/// Whether the config a checkpoint stored is `current` (the resolved config of this resume),
/// both read by this build: a run saved by an older memskill, whose config lacks keys added
/// since (each added with a default that keeps the old behaviour), resumes; a changed value
/// does not.
fn same_config(stored: &str, current: &str, origin: &str) -> Result<bool> {
    if stored == current {
        return Ok(true);
    }
    let stored = Config::from_toml_str(stored, &[], origin)
        .with_context(|| format!("--resume: reading the run's config {origin}"))?
        .to_toml()?;
    Ok(stored == current)
}

/// Create the run directory, then the backends (the response cache lives in it) and the
/// prompts: on failure a run directory this call created is removed again.
fn create_run_dir(
    cfg: &Config,
    files: &RunFiles,
    bench: &dyn Benchmark,
    lock: Option<RunLock>,
) -> Result<(Runtime, RunLock)> {
    let dir = &files.dir;
    let created = !dir.exists();
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    // a run another process created a moment ago is its: refused, and not removed
    let lock = match lock {
        Some(l) => l,
        None => RunLock::acquire(dir)?,
    };
    crate::checkpoint::clean_stale(dir)?;
    let setup = (|| -> Result<Runtime> {
        let rt = Runtime::build(cfg, dir, bench.oracle_samples(), false)?;
        rt.probe_endpoints()?;
        crate::prompts::record(dir, &rt.prompts, cfg.prompts.dir.as_deref())?;
        Ok(rt)
    })();
    if setup.is_err() && created {
        let _ = std::fs::remove_dir_all(dir);
    }
    Ok((setup?, lock))
}

/// The loop state of a fresh run: nothing done, the batch RNG seeded from the run seed.
fn fresh_state(cfg: &Config, bank: &SkillBank) -> TrainState {
    TrainState {
        format_version: FORMAT_VERSION,
        outer: 0,
        inner: 0,
        update_step: 0,
        stage: 0,
        rng: ChaCha8Rng::seed_from_u64(derive_seed(cfg.run.seed, &[1])),
        bias: None,
        stage_rewards: Vec::new(),
        metrics_len: 0,
        invocations_len: 0,
        best_reward: None,
        stopped_early: false,
        bank_history: vec![history_row(0, 0, None, "start", bank, String::new())],
        solved: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::check_steps_increase;
    use super::same_config;
    use crate::config::Config;

    /// A run saved before a key existed resumes; a changed value is refused.
    #[test]
    fn a_config_without_keys_added_since_is_the_same_config() {
        let sets = ["run.name=\"r\"".to_string(), "ppo.lr=0.003".into()];
        let current = Config::from_toml_str("", &sets, "t")
            .unwrap()
            .to_toml()
            .unwrap();
        // the same config as an older build wrote it: without the memory contract's table
        let start = current
            .find("[memory.contract]")
            .expect("the contract is saved");
        let end = current[start + 1..]
            .find("\n[")
            .map_or(current.len(), |i| start + 1 + i + 1);
        let older = format!("{}{}", &current[..start], &current[end..]);
        assert!(!older.contains("cross_project"), "{older}");
        assert!(same_config(&older, &current, "old").unwrap());
        let changed = current.replace("lr = 0.003", "lr = 0.004");
        assert_ne!(changed, current);
        assert!(!same_config(&changed, &current, "old").unwrap());
    }

    #[test]
    fn a_metrics_log_whose_steps_do_not_increase_is_refused_by_line() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("metrics.jsonl");
        let line = |t: &str, s: u64| format!("{{\"type\":\"{t}\",\"step\":{s}}}\n");
        std::fs::write(
            &p,
            [line("update", 1), line("eval", 1), line("update", 2)].concat(),
        )
        .unwrap();
        check_steps_increase(&p).unwrap();
        // what two writers 0.3 s apart left (issue 46): 1, 1, 2, 3, 2, ...
        std::fs::write(&p, [line("update", 1), line("update", 1)].concat()).unwrap();
        let e = format!("{:#}", check_steps_increase(&p).unwrap_err());
        assert!(e.contains("line 2: update step 1 after step 1"), "{e}");
        std::fs::write(&p, "{\"type\":\"update\"\n").unwrap();
        let e = format!("{:#}", check_steps_increase(&p).unwrap_err());
        assert!(e.contains("line 1 is not JSON"), "{e}");
    }
}
