//! The training loop: outer x inner epochs, one PPO update per batch, a designer stage
//! every `designer.freq` outer epochs, checkpoints, metrics and progress.
//!
//! [`Trainer`] owns the run's state; its steps are the methods a reader of the paper looks
//! for: [`Trainer::rollout`], [`Trainer::ppo_update`], [`Trainer::designer_stage`],
//! [`Trainer::end_outer_epoch`], [`Trainer::checkpoint`]. It knows no benchmark by name:
//! episodes come from a [`Benchmark`](crate::benchmark::Benchmark).

mod files;
pub mod lock;
mod progress;
mod rollout;
mod setup;
mod stage;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use anyhow::Result;
use memskill_controller::Controller;
use memskill_core::SkillBank;
use memskill_designer::{stabilised_reward, Evolution, HardCasePool};
use serde_json::json;

pub use self::files::{bank_changes, render_skills_md};
pub use crate::benchmark::qa::draw_batch;
use crate::benchmark::Benchmark;
use crate::checkpoint::TrainState;
use crate::config::Config;
use crate::fsutil::append_line;
use crate::metrics::MetricsLine;
use crate::runtime::Runtime;
use crate::tracking::Tracker;
use progress::Progress;

/// Options of one `train` invocation that are not part of the run's config.
#[derive(Debug, Clone)]
pub struct TrainOptions {
    /// Parent of run directories (`runs`).
    pub runs_dir: PathBuf,
    /// Continue from `checkpoints/latest`.
    pub resume: bool,
    /// Stop (at a checkpoint) once this many updates ran in this invocation.
    pub max_updates: Option<u64>,
    /// Show progress bars (they are hidden anyway when stderr is not a terminal).
    pub progress: bool,
    /// Print one line per update to stderr (when progress bars are hidden).
    pub log_lines: bool,
    /// Set (by another thread: a Ctrl-C handler) to stop at the next safe point: after the
    /// current update, with a checkpoint written, as `max_updates` stops.
    pub stop: Option<Arc<AtomicBool>>,
}

impl Default for TrainOptions {
    fn default() -> Self {
        Self {
            runs_dir: PathBuf::from("runs"),
            resume: false,
            max_updates: None,
            progress: true,
            log_lines: false,
            stop: None,
        }
    }
}

/// What a `train` invocation did (serialised as `memskill.train`'s dict in Python).
#[derive(Debug, Clone, serde::Serialize)]
pub struct TrainOutcome {
    pub run_dir: PathBuf,
    /// Total PPO updates of the run so far.
    pub update_step: u64,
    pub updates_this_run: u64,
    /// All epochs done (or stopped early by the evolution).
    pub finished: bool,
    /// Mean batch reward per outer epoch run in this invocation.
    pub outer_rewards: Vec<f64>,
    /// Where the final bank was exported (finished runs).
    pub export_dir: Option<PathBuf>,
    pub last_checkpoint: Option<PathBuf>,
    /// Stopped by [`TrainOptions::stop`] (resume with `resume`).
    pub interrupted: bool,
}

/// Train (or resume) a run. `cfg` is the resolved config; on resume it must be the run's.
///
/// A run this call created that fails before its first checkpoint is removed again (it
/// could not be resumed, and a folder of partial logs would only be mistaken for a run);
/// the removal happens while the run lock is still held.
pub fn train(cfg: &Config, opts: &TrainOptions) -> Result<TrainOutcome> {
    let mut t = Trainer::open(cfg, opts)?;
    let (created, dir) = (t.created, t.files.dir.clone());
    let lock = t.lock.take();
    let res = t.run();
    let res = match res {
        Err(e) if created && !dir.join("checkpoints").join("latest").exists() => {
            match std::fs::remove_dir_all(&dir) {
                Ok(()) => Err(e.context(format!(
                    "the run failed before its first checkpoint; its folder {} was removed",
                    dir.display()
                ))),
                Err(_) => Err(e),
            }
        }
        other => other,
    };
    drop(lock);
    res
}

/// The files of a run directory the loop writes.
struct RunFiles {
    dir: PathBuf,
    metrics: PathBuf,
    timings: PathBuf,
    /// One line per skill use (`crate::invocations`).
    invocations: PathBuf,
    /// The resolved config, as `config.toml` and every checkpoint hold it.
    config_toml: String,
}

/// A training run in progress: the controller, the skill bank and its evolution, the
/// hard-case pool, the loop counters and RNG ([`TrainState`]), the backends and the run
/// directory.
pub struct Trainer<'c> {
    cfg: &'c Config,
    opts: TrainOptions,
    bench: Box<dyn Benchmark>,
    rt: Runtime,
    files: RunFiles,
    controller: Controller,
    bank: SkillBank,
    evolution: Evolution,
    pool: HardCasePool,
    state: TrainState,
    progress: Progress,
    /// One stderr line per update (`--no-progress`, or no terminal).
    log_lines: bool,
    /// TensorBoard / MLflow (`[tracking]`).
    tracker: Tracker,
    out: TrainOutcome,
    /// Held for the trainer's life (or by [`train`] around it): one writer per run.
    lock: Option<lock::RunLock>,
    /// This call made the run folder (a fresh run whose folder did not exist).
    created: bool,
    /// Lines and bytes of `invocations.jsonl` the registry has (`[registry]`; from 0 in each
    /// process: a resumed run sends its log once more, which the registry skips).
    registry_written: std::cell::Cell<(usize, u64)>,
    /// With a registry configured: the memory banks of the last scored update's episodes
    /// (update, sample, bank with its uses), which the next checkpoint writes into the
    /// registry's `memory` table. Only the last update's: earlier ones are dropped as the run
    /// goes (a run's banks together would not fit in memory).
    registry_banks: Vec<(u64, String, memskill_core::MemoryBank)>,
}

impl Trainer<'_> {
    /// Run the remaining epochs (or until `max_updates`), then export the final bank.
    pub fn run(mut self) -> Result<TrainOutcome> {
        while self.state.outer < self.cfg.run.outer_epochs && !self.state.stopped_early {
            let mut outer_rewards = Vec::new();
            while self.state.inner < self.cfg.run.inner_epochs {
                let (reward, stop) = self.inner_epoch()?;
                outer_rewards.push(reward);
                if stop {
                    self.tracker.end("FINISHED");
                    return Ok(self.out);
                }
                if self.stop_requested() && self.state.inner < self.cfg.run.inner_epochs {
                    return self.stop_now();
                }
            }
            if !outer_rewards.is_empty() {
                let mean = outer_rewards.iter().sum::<f64>() / outer_rewards.len() as f64;
                self.out.outer_rewards.push(mean);
            }
            if self.end_outer_epoch()? {
                break;
            }
            if self.budget_spent() {
                self.tracker.end("FINISHED");
                return Ok(self.out);
            }
            if self.stop_requested() {
                // end_outer_epoch wrote this epoch's checkpoint
                self.out.interrupted = true;
                self.tracker.end("KILLED");
                return Ok(self.out);
            }
        }
        self.finish()
    }

    /// Whether [`TrainOptions::stop`] is set.
    fn stop_requested(&self) -> bool {
        self.opts
            .stop
            .as_ref()
            .is_some_and(|s| s.load(Ordering::SeqCst))
    }

    /// Stops within an outer epoch: checkpoints the update just made (unless that update
    /// already wrote one) so that `resume` continues from it.
    fn stop_now(mut self) -> Result<TrainOutcome> {
        let every = self.cfg.run.checkpoint_every.max(1);
        if !self.state.inner.is_multiple_of(every) {
            self.out.last_checkpoint = Some(self.checkpoint(false)?);
        }
        self.out.interrupted = true;
        self.tracker.end("KILLED");
        Ok(self.out)
    }

    /// One inner epoch: a rollout, a PPO update, its metrics line, and a checkpoint when
    /// due. Returns the batch reward and whether `max_updates` stops the run here.
    fn inner_epoch(&mut self) -> Result<(f64, bool)> {
        let t0 = Instant::now();
        let rollout = self.rollout()?;
        let batch = self.score_batch(rollout)?;
        let (stats, update_s) = self.ppo_update(&batch.ppo_batch)?;
        let line = self.update_metrics(&batch, &stats);
        let mline = MetricsLine::Update(line.clone());
        append_line(&self.files.metrics, &mline.to_line()?)?;
        self.tracker.log(&mline);
        self.out.updates_this_run += 1;
        self.out.update_step = self.state.update_step;
        self.report_update(&line);
        let mut ck_s = 0.0;
        let every = self.cfg.run.checkpoint_every.max(1);
        if self.state.inner < self.cfg.run.inner_epochs && self.state.inner.is_multiple_of(every) {
            let tc = Instant::now();
            self.out.last_checkpoint = Some(self.checkpoint(false)?);
            ck_s = tc.elapsed().as_secs_f64();
        }
        let timing = json!({"step": self.state.update_step, "rollout_s": batch.rollout_s, "update_s": update_s,
            "checkpoint_s": ck_s, "total_s": t0.elapsed().as_secs_f64()});
        append_line(&self.files.timings, &timing.to_string())?;
        Ok((line.reward, ck_s > 0.0 && self.budget_spent()))
    }

    /// Whether this invocation ran its `max_updates`.
    fn budget_spent(&self) -> bool {
        self.opts
            .max_updates
            .is_some_and(|m| self.out.updates_this_run >= m)
    }

    /// The end of an outer epoch: the stage reward, snapshot / rollback and a designer stage
    /// when due, the final bank after the last epoch, `skills.md` and a checkpoint. Returns
    /// whether training is finished.
    pub fn end_outer_epoch(&mut self) -> Result<bool> {
        let cfg = self.cfg;
        let t_stage = Instant::now();
        let reward = stabilised_reward(
            &self.state.stage_rewards,
            cfg.evolution.stage_reward_fraction,
        );
        let is_best = reward.is_finite() && self.state.best_reward.is_none_or(|b| reward > b);
        if is_best {
            self.state.best_reward = Some(reward);
        }
        let last_outer = self.state.outer + 1 == cfg.run.outer_epochs;
        let stage_due =
            cfg.designer.enabled && (self.state.outer + 1).is_multiple_of(cfg.designer.freq);
        if stage_due {
            self.designer_stage(reward, last_outer)?;
            let md = render_skills_md(&self.state.bank_history, &self.bank);
            self.tracker.log_bank(self.state.update_step, &md);
        }
        // The reference averages the batch rewards since the last designer stage.
        if stage_due || !cfg.designer.enabled {
            self.state.stage_rewards.clear();
        }
        self.state.outer += 1;
        self.state.inner = 0;
        let finished = self.state.outer >= cfg.run.outer_epochs || self.state.stopped_early;
        if finished {
            self.settle_final_state()?;
        }
        self.write_skills_md()?;
        let tc = Instant::now();
        self.out.last_checkpoint = Some(self.checkpoint(is_best || finished)?);
        let timing = json!({"step": self.state.update_step, "stage": self.state.stage, "stage_s": tc.duration_since(t_stage).as_secs_f64(),
            "checkpoint_s": tc.elapsed().as_secs_f64()});
        append_line(&self.files.timings, &timing.to_string())?;
        Ok(finished)
    }
}
