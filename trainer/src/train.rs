//! The training loop: outer x inner epochs, one PPO update per batch, a designer stage
//! every `designer.freq` outer epochs, checkpoints, metrics and progress.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use memskill_controller::{shape_rewards, Controller, NewSkillBias, Transition};
use memskill_core::{Sample, Skill, SkillBank};
use memskill_designer::{
    stabilised_reward, DesignerError, Evolution, FinalState, HardCase, HardCasePool, Rollback,
    StageDecision,
};
use rand::seq::index::sample as sample_indices;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::json;

use crate::alfworld::{run_pair, AlfworldEnv, Pair, PairCtx};
use crate::backends::embed;
use crate::checkpoint::{pointer, BankHistoryRow, Checkpoint, TrainState, FORMAT_VERSION};
use crate::config::{Config, Dataset};
use crate::episode::{derive_seed, par_map, run_episode, EpisodeCtx, EpisodeResult};
use crate::fsutil::{append_line, file_len, truncate_to, write_atomic};
use crate::metrics::{MetricsLine, SafetyJudgeCounts, StageMetrics, UpdateMetrics};
use crate::runtime::{initial_bank, RoleTotals, Runtime};

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
}

impl Default for TrainOptions {
    fn default() -> Self {
        Self {
            runs_dir: PathBuf::from("runs"),
            resume: false,
            max_updates: None,
            progress: true,
            log_lines: false,
        }
    }
}

/// What a `train` invocation did.
#[derive(Debug, Clone)]
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
}

fn skill_row(s: &Skill) -> String {
    format!("{}@{} ({})", s.name, s.version, s.status)
}

fn history_row(
    stage: u32,
    step: u64,
    reward: Option<f64>,
    event: &str,
    bank: &SkillBank,
    note: String,
) -> BankHistoryRow {
    BankHistoryRow {
        stage,
        update_step: step,
        reward,
        event: event.into(),
        bank_version: bank.bank_version,
        skills: bank.skills().iter().map(skill_row).collect(),
        note,
    }
}

/// Render `skills.md`: the bank's evolution, then the current bank.
pub fn render_skills_md(rows: &[BankHistoryRow], bank: &SkillBank) -> String {
    let mut s = String::from("# Skill bank evolution\n\n| stage | update | event | reward | bank version | skills | note |\n|---|---|---|---|---|---|---|\n");
    for r in rows {
        let reward = r
            .reward
            .map(|x| format!("{x:.4}"))
            .unwrap_or_else(|| "-".into());
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} |\n",
            r.stage,
            r.update_step,
            r.event,
            reward,
            r.bank_version,
            r.skills.join("<br>"),
            r.note.replace('|', "\\|").replace('\n', " ")
        ));
    }
    s.push_str("\n# Current bank\n\n| skill | version | status | action | uses | mean reward | description |\n|---|---|---|---|---|---|---|\n");
    for k in bank.skills() {
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {:.4} | {} |\n",
            k.name,
            k.version,
            k.status,
            k.action,
            k.usage.count,
            k.usage.mean_reward,
            k.description.replace('|', "\\|").replace('\n', " ")
        ));
    }
    s
}

/// Draw the batch of sample indices for one inner epoch.
pub fn draw_batch(rng: &mut ChaCha8Rng, n: usize, batch: usize) -> Vec<usize> {
    if batch <= n {
        sample_indices(rng, n, batch).into_vec()
    } else {
        (0..batch).map(|_| rng.random_range(0..n)).collect()
    }
}

struct Progress {
    _multi: MultiProgress,
    total: ProgressBar,
    episodes: ProgressBar,
    hidden: bool,
}

impl Progress {
    fn new(enabled: bool, total: u64, done: u64) -> Self {
        let hidden = !enabled || !std::io::stderr().is_terminal();
        let target = if hidden {
            ProgressDrawTarget::hidden()
        } else {
            ProgressDrawTarget::stderr()
        };
        let multi = MultiProgress::with_draw_target(target);
        let style =
            ProgressStyle::with_template("{prefix:>8} [{bar:30}] {pos}/{len} ETA {eta} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> ");
        let total_bar = multi.add(
            ProgressBar::new(total)
                .with_style(style.clone())
                .with_prefix("updates"),
        );
        total_bar.set_position(done);
        let episodes = multi.add(
            ProgressBar::new(0)
                .with_style(style)
                .with_prefix("episodes"),
        );
        Self {
            _multi: multi,
            total: total_bar,
            episodes,
            hidden,
        }
    }
}

/// Train (or resume) a run. `cfg` is the resolved config; on resume it must be the run's.
pub fn train(cfg: &Config, opts: &TrainOptions) -> Result<TrainOutcome> {
    let run_dir = opts.runs_dir.join(&cfg.run.name);
    let metrics_path = run_dir.join("metrics.jsonl");
    let timings_path = run_dir.join("timings.jsonl");
    let config_toml = cfg.to_toml()?;

    // Everything that can fail on the config or its inputs (data, span modes, the initial
    // bank) runs before the run directory is created, so a config error leaves nothing behind.
    let is_alfworld = cfg.data.dataset == Dataset::Alfworld;
    let samples = if is_alfworld {
        // ALFWorld episodes are drawn as (batch A, batch B) pairs of games, not samples.
        Vec::new()
    } else {
        crate::data::load_samples(&cfg.data, &cfg.data.split, &cfg.spans.mode, cfg.run.seed)?
    };
    let alf = if is_alfworld {
        Some(AlfworldEnv::open(&cfg.alfworld).context("data.dataset = \"alfworld\"")?)
    } else {
        None
    };

    let resumed: Option<Checkpoint> = if opts.resume {
        let dir = pointer(&run_dir, "latest")?
            .with_context(|| format!("--resume: {} has no checkpoint yet", run_dir.display()))?;
        let ck = Checkpoint::load(&dir)
            .with_context(|| format!("loading checkpoint {}", dir.display()))?;
        if ck.config_toml != config_toml {
            bail!(
                "--resume: the config differs from the one the run was started with ({}); resume without --config/--set",
                dir.join("config.toml").display()
            );
        }
        Some(ck)
    } else {
        if pointer(&run_dir, "latest")?.is_some() {
            bail!(
                "run {} already has checkpoints: pass --resume or choose another --run-name",
                run_dir.display()
            );
        }
        None
    };
    let fresh_bank = match resumed {
        Some(_) => None,
        None => Some(initial_bank(cfg)?),
    };
    let created = !run_dir.exists();
    std::fs::create_dir_all(&run_dir).with_context(|| format!("creating {}", run_dir.display()))?;
    crate::checkpoint::clean_stale(&run_dir)?;
    // Backends (the response cache lives in the run directory) and prompts: on failure a
    // run directory this call created is removed again.
    let setup = (|| -> Result<Runtime> {
        let rt = Runtime::build(cfg, &run_dir, samples.clone(), false)?;
        rt.probe_endpoints()?;
        crate::prompts::record(&run_dir, &rt.prompts, cfg.prompts.dir.as_deref())?;
        Ok(rt)
    })();
    let rt = match setup {
        Ok(rt) => rt,
        Err(e) => {
            if created {
                let _ = std::fs::remove_dir_all(&run_dir);
            }
            return Err(e);
        }
    };
    write_atomic(&run_dir.join("config.toml"), config_toml.as_bytes())?;
    let dim = rt.encoder.dim();
    let mut controller = Controller::new(dim, &cfg.policy, &cfg.ppo, cfg.run.seed)
        .context("building the controller")?;

    let (mut state, mut bank, mut evolution, mut pool) = match resumed {
        Some(ck) => {
            controller
                .load_bytes(&ck.controller)
                .context("restoring the controller from the checkpoint")?;
            truncate_to(&metrics_path, ck.state.metrics_len)?;
            filter_timings(&timings_path, ck.state.update_step)?;
            (ck.state, ck.bank, ck.evolution, ck.pool)
        }
        None => {
            for p in [&metrics_path, &timings_path] {
                write_atomic(p, b"")?;
            }
            let bank = fresh_bank.context("a fresh run has no initial bank")?;
            let state = TrainState {
                format_version: FORMAT_VERSION,
                outer: 0,
                inner: 0,
                update_step: 0,
                stage: 0,
                rng: ChaCha8Rng::seed_from_u64(derive_seed(cfg.run.seed, &[1])),
                bias: None,
                stage_rewards: Vec::new(),
                metrics_len: 0,
                best_reward: None,
                stopped_early: false,
                bank_history: vec![history_row(0, 0, None, "start", &bank, String::new())],
            };
            (
                state,
                bank,
                Evolution::new(cfg.evolution.clone()),
                HardCasePool::new(cfg.pool.clone()),
            )
        }
    };

    let total_updates = cfg.run.outer_epochs as u64 * cfg.run.inner_epochs as u64;
    let progress = Progress::new(opts.progress, total_updates, state.update_step);
    let log_lines = opts.log_lines || (progress.hidden && opts.progress);
    let mut out = TrainOutcome {
        run_dir: run_dir.clone(),
        update_step: state.update_step,
        updates_this_run: 0,
        finished: false,
        outer_rewards: Vec::new(),
        export_dir: None,
        last_checkpoint: None,
    };

    let save = |state: &mut TrainState,
                controller: &Controller,
                bank: &SkillBank,
                evolution: &Evolution,
                pool: &HardCasePool,
                is_best: bool|
     -> Result<PathBuf> {
        state.metrics_len = file_len(&metrics_path);
        let ck = Checkpoint {
            state: state.clone(),
            controller: controller
                .save_bytes()
                .context("serialising the controller")?,
            bank: bank.clone(),
            evolution: evolution.clone(),
            pool: pool.clone(),
            config_toml: config_toml.clone(),
        };
        ck.save(&run_dir, cfg.run.keep_last, is_best)
    };

    while state.outer < cfg.run.outer_epochs && !state.stopped_early {
        let mut outer_batch_rewards = Vec::new();
        while state.inner < cfg.run.inner_epochs {
            let t0 = Instant::now();
            let (line, batch_reward, rollout_s, update_s) = inner_epoch(
                cfg,
                &rt,
                &samples,
                alf.as_ref(),
                &mut controller,
                &mut bank,
                &mut pool,
                &mut state,
                &progress,
            )?;
            append_line(&metrics_path, &MetricsLine::Update(line.clone()).to_line()?)?;
            outer_batch_rewards.push(batch_reward);
            out.updates_this_run += 1;
            out.update_step = state.update_step;
            progress.total.set_position(state.update_step);
            progress
                .total
                .set_message(format!("reward {batch_reward:.3}{}", excluded_note(&line)));
            if log_lines {
                eprintln!(
                    "update {}/{} (outer {} inner {}): reward {:.4}{}, bank {} skills, {} LLM calls, {} errors",
                    state.update_step,
                    total_updates,
                    state.outer + 1,
                    state.inner,
                    batch_reward,
                    excluded_note(&line),
                    bank.selectable().len(),
                    line.llm_calls,
                    line.llm_errors
                );
            }
            let mut ck_s = 0.0;
            if state.inner < cfg.run.inner_epochs
                && state.inner % cfg.run.checkpoint_every.max(1) == 0
            {
                let tc = Instant::now();
                out.last_checkpoint = Some(save(
                    &mut state,
                    &controller,
                    &bank,
                    &evolution,
                    &pool,
                    false,
                )?);
                ck_s = tc.elapsed().as_secs_f64();
            }
            let timing = json!({"step": state.update_step, "rollout_s": rollout_s, "update_s": update_s,
                "checkpoint_s": ck_s, "total_s": t0.elapsed().as_secs_f64()});
            append_line(&timings_path, &timing.to_string())?;
            if ck_s > 0.0 && opts.max_updates.is_some_and(|m| out.updates_this_run >= m) {
                return Ok(out);
            }
        }
        if !outer_batch_rewards.is_empty() {
            out.outer_rewards
                .push(outer_batch_rewards.iter().sum::<f64>() / outer_batch_rewards.len() as f64);
        }
        // End of the outer epoch: snapshot / rollback and a designer stage.
        let t_stage = Instant::now();
        let reward = stabilised_reward(&state.stage_rewards, cfg.evolution.stage_reward_fraction);
        let is_best = reward.is_finite() && state.best_reward.is_none_or(|b| reward > b);
        if is_best {
            state.best_reward = Some(reward);
        }
        let last_outer = state.outer + 1 == cfg.run.outer_epochs;
        let stage_due = cfg.designer.enabled && (state.outer + 1) % cfg.designer.freq == 0;
        if stage_due {
            designer_stage(
                cfg,
                &rt,
                &run_dir,
                &metrics_path,
                reward,
                last_outer,
                &mut controller,
                &mut bank,
                &mut evolution,
                &pool,
                &mut state,
            )?;
        }
        // The reference averages the batch rewards since the last designer stage.
        if stage_due || !cfg.designer.enabled {
            state.stage_rewards.clear();
        }
        state.outer += 1;
        state.inner = 0;
        let finished = state.outer >= cfg.run.outer_epochs || state.stopped_early;
        if finished {
            // `evolution.final = "best"`: the best snapshot is what training leaves behind;
            // "last" (the reference) keeps the current state.
            if cfg.evolution.final_state == FinalState::Best {
                if let Some(best) = &evolution.best {
                    bank = best.bank.clone();
                    if cfg.designer.cfg.rollback == Rollback::BankAndController {
                        controller
                            .load_bytes(&best.controller_state)
                            .context("restoring the best snapshot's controller")?;
                    }
                }
            }
            state.bank_history.push(history_row(
                state.stage,
                state.update_step,
                evolution
                    .best
                    .as_ref()
                    .map(|b| b.reward)
                    .or(state.best_reward),
                "final",
                &bank,
                String::new(),
            ));
        }
        crate::fsutil::write_atomic(
            &run_dir.join("skills.md"),
            render_skills_md(&state.bank_history, &bank).as_bytes(),
        )?;
        let tc = Instant::now();
        out.last_checkpoint = Some(save(
            &mut state,
            &controller,
            &bank,
            &evolution,
            &pool,
            is_best || finished,
        )?);
        let timing = json!({"step": state.update_step, "stage": state.stage, "stage_s": tc.duration_since(t_stage).as_secs_f64(),
            "checkpoint_s": tc.elapsed().as_secs_f64()});
        append_line(&timings_path, &timing.to_string())?;
        if finished {
            break;
        }
        if opts.max_updates.is_some_and(|m| out.updates_this_run >= m) {
            return Ok(out);
        }
    }
    progress.total.finish_and_clear();
    progress.episodes.finish_and_clear();
    out.finished = true;
    // Exported next to the old one and swapped in by renames, so a crash leaves a complete
    // export (the old or the new one), never none.
    let export = run_dir.join("skills");
    let fresh = run_dir.join(format!(".skills.tmp-{}", std::process::id()));
    let old = run_dir.join(format!(".skills-old.tmp-{}", std::process::id()));
    for p in [&fresh, &old] {
        if p.exists() {
            std::fs::remove_dir_all(p).with_context(|| format!("removing {}", p.display()))?;
        }
    }
    memskill_designer::export_bank(&bank, &fresh)
        .with_context(|| format!("exporting the final skill bank to {}", fresh.display()))?;
    if export.exists() {
        std::fs::rename(&export, &old)
            .with_context(|| format!("replacing {}", export.display()))?;
    }
    std::fs::rename(&fresh, &export)
        .with_context(|| format!("moving the export to {}", export.display()))?;
    if old.exists() {
        std::fs::remove_dir_all(&old).with_context(|| format!("removing {}", old.display()))?;
    }
    crate::fsutil::write_atomic(
        &run_dir.join("skills.md"),
        render_skills_md(&state.bank_history, &bank).as_bytes(),
    )?;
    out.export_dir = Some(export);
    Ok(out)
}

/// Whether a designer failure is an outage (or a broken template) rather than the model's
/// own (empty) answer.
fn is_outage(e: &DesignerError) -> bool {
    match e {
        DesignerError::Llm { source, .. } => {
            !matches!(source, memskill_core::LlmError::NoContent { .. })
        }
        DesignerError::Prompt(_) => true,
        _ => false,
    }
}

/// " (k of n episodes excluded: unscored)" when an update's mean left episodes out, so
/// the fraction is printed next to every mean; empty otherwise.
fn excluded_note(line: &UpdateMetrics) -> String {
    if line.dropped == 0 {
        return String::new();
    }
    format!(
        " ({} of {} episodes excluded: unscored)",
        line.dropped, line.episodes
    )
}

/// Drop timing lines of updates after `step` (they are redone after a resume).
fn filter_timings(path: &Path, step: u64) -> Result<()> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Ok(());
    };
    let kept: Vec<&str> = text
        .lines()
        .filter(|l| {
            serde_json::from_str::<serde_json::Value>(l)
                .ok()
                .and_then(|v| v["step"].as_u64())
                .is_some_and(|s| s <= step)
        })
        .collect();
    let mut body = kept.join("\n");
    if !body.is_empty() {
        body.push('\n');
    }
    write_atomic(path, body.as_bytes())
}

/// One episode of a batch: a sample (QA datasets) or an ALFWorld pair with batch A's
/// expert trajectories.
enum Work {
    Sample(usize),
    Pair(Box<Pair>, Vec<memskill_alfworld::Trajectory>),
}

/// Run one inner epoch (one batch, one PPO update). Returns the metrics line, the batch
/// reward and the rollout / update seconds.
#[allow(clippy::too_many_arguments)]
fn inner_epoch(
    cfg: &Config,
    rt: &Runtime,
    samples: &[Sample],
    alf: Option<&AlfworldEnv>,
    controller: &mut Controller,
    bank: &mut SkillBank,
    pool: &mut HardCasePool,
    state: &mut TrainState,
    progress: &Progress,
) -> Result<(UpdateMetrics, f64, f64, f64)> {
    let t_roll = Instant::now();
    let before = rt.counters.totals();
    let retries_before = rt.retries();
    let batch: Vec<Work> = match alf {
        None => draw_batch(&mut state.rng, samples.len(), cfg.run.batch_size)
            .into_iter()
            .map(Work::Sample)
            .collect(),
        Some(env) => {
            let pairs = (0..cfg.run.batch_size)
                .map(|_| env.sample_pair(&mut state.rng))
                .collect::<Result<Vec<_>>>()?;
            // Replay every missing walkthrough of the batch once, before the episodes run.
            let all_a: Vec<_> = pairs.iter().flat_map(|p| p.a.iter().cloned()).collect();
            env.trajectories(&all_a)?;
            pairs
                .into_iter()
                .map(|p| {
                    let t = env.trajectories(&p.a)?;
                    Ok(Work::Pair(Box::new(p), t))
                })
                .collect::<Result<Vec<_>>>()?
        }
    };
    let pair_ctx = alf.map(|env| PairCtx {
        env,
        actor: rt.answerer.clone(),
        encoder: rt.encoder.clone(),
        retriever: rt.retriever.clone(),
    });
    let skills: Vec<Skill> = bank.selectable().into_iter().cloned().collect();
    if skills.is_empty() {
        bail!("the skill bank has no selectable skill");
    }
    let descs: Vec<&str> = skills.iter().map(|s| s.description.as_str()).collect();
    let skill_embs = Arc::new(embed(rt.encoder.as_ref(), &descs)?);
    let bias: Option<NewSkillBias> = state
        .bias
        .clone()
        .filter(|b| b.new_mask.len() == skills.len());
    let step = state.update_step;
    let results: Vec<Result<EpisodeResult>> = {
        let lock = Mutex::new(&mut *controller);
        let ctx = EpisodeCtx {
            bias: bias.as_ref(),
            step,
            ..EpisodeCtx::new(cfg, rt, &lock, &skills, skill_embs.clone())
        };
        progress.episodes.set_length(batch.len() as u64);
        progress.episodes.set_position(0);
        let done = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|s| {
            if !progress.hidden {
                s.spawn(|| {
                    while !done.load(std::sync::atomic::Ordering::Relaxed) {
                        progress.episodes.set_message(format!(
                            "LLM calls in flight: {}",
                            rt.counters.in_flight()
                        ));
                        std::thread::sleep(Duration::from_millis(200));
                    }
                });
            }
            let r = par_map(&batch, cfg.concurrency.episodes, |e, work| {
                let seed = derive_seed(cfg.run.seed, &[2, step, e as u64]);
                let r = match (work, &pair_ctx) {
                    (Work::Sample(idx), _) => run_episode(&ctx, &samples[*idx], seed),
                    (Work::Pair(pair, trajs), Some(pc)) => {
                        run_pair(&ctx, pc, pair, trajs, &format!("pair-{step}-{e}"), seed)
                    }
                    (Work::Pair(..), None) => Err(anyhow::anyhow!("pair episode without ALFWorld")),
                };
                progress.episodes.inc(1);
                r
            });
            done.store(true, std::sync::atomic::Ordering::Relaxed);
            r
        })
    };
    let mut episodes = Vec::with_capacity(results.len());
    for r in results {
        episodes.push(r?);
    }
    let rollout_s = t_roll.elapsed().as_secs_f64();

    // Rewards, shaping, usage statistics, hard cases.
    let mut ppo_batch: Vec<Vec<Transition>> = Vec::new();
    let mut rewards = Vec::new();
    let mut shaped_sums = Vec::new();
    let mut usage: BTreeMap<String, u64> = BTreeMap::new();
    let (mut dropped, mut dropped_incomplete) = (0usize, 0usize);
    let mut first_errors: Vec<String> = Vec::new();
    let (mut span_errors, mut query_errors, mut parse_problems, mut answered, mut live_mem) =
        (0, 0, 0, 0, 0usize);
    let mut actor: Option<memskill_alfworld::ActorStats> = None;
    let (mut mem_flagged, mut mem_refused) = (0usize, 0usize);
    for ep in &mut episodes {
        mem_flagged += ep.built.flagged;
        mem_refused += ep.built.refused;
        if let Some(a) = &ep.actor {
            actor.get_or_insert_with(Default::default).merge(a);
        }
        span_errors += ep.built.call_errors;
        parse_problems += ep.built.parse_problems;
        first_errors.extend(ep.built.errors.iter().take(2).cloned());
        for q in &ep.queries {
            if let Some(e) = &q.error {
                query_errors += 1;
                if first_errors.len() < 4 {
                    first_errors.push(e.clone());
                }
            }
        }
        // An episode with a failed executor call (its memory is incomplete) or without a
        // single scored question measured the outage, not the policy: it is counted and left
        // out of the batch, the pool and the usage statistics, never scored.
        if ep.built.incomplete() {
            dropped_incomplete += 1;
            dropped += 1;
            continue;
        }
        let Some(reward) = ep.reward else {
            dropped += 1;
            continue;
        };
        live_mem += ep.built.memory.live_count();
        rewards.push(reward);
        let shaped = shape_rewards(&ep.built.outcomes, reward as f32, &cfg.shaping);
        shaped_sums.push(shaped.iter().map(|&x| x as f64).sum::<f64>());
        let mut trs = std::mem::take(&mut ep.built.transitions);
        for (t, r) in trs.iter_mut().zip(&shaped) {
            t.reward = *r;
        }
        ppo_batch.push(trs);
        for chosen in &ep.built.chosen {
            for &i in chosen {
                if let Some(sk) = skills.get(i) {
                    *usage.entry(sk.name.clone()).or_default() += 1;
                    if let Some(b) = bank.get_mut(&sk.name) {
                        b.usage.record(reward);
                    }
                }
            }
        }
        for q in &ep.queries {
            answered += 1;
            if let Some(score) = q.score {
                pool.record(HardCase {
                    query_id: q.query_id.clone(),
                    question: q.question.clone(),
                    gold: q.gold.clone(),
                    category: q.category.clone(),
                    prediction: q.prediction.clone(),
                    score,
                    retrieved: q.retrieved.clone(),
                    sample_id: q.sample_id.clone(),
                    step,
                    fail_count: 0,
                    evidence: q.evidence.clone(),
                });
            }
        }
    }
    pool.prune(step);
    if ppo_batch.is_empty() {
        bail!(
            "update {}: all {} episodes of the batch failed (LLM errors: {} executor, {} answer); first errors: {}",
            step + 1,
            episodes.len(),
            span_errors,
            query_errors,
            first_errors.join(" | ")
        );
    }
    if dropped > 0 {
        eprintln!(
            "warning: update {}: {dropped} of {} episodes dropped from the PPO batch (LLM errors): {}",
            step + 1,
            episodes.len(),
            first_errors.join(" | ")
        );
    }
    let t_upd = Instant::now();
    let stats = controller
        .update(&ppo_batch)
        .with_context(|| format!("PPO update {}", step + 1))?;
    let update_s = t_upd.elapsed().as_secs_f64();
    let batch_reward = rewards.iter().sum::<f64>() / rewards.len() as f64;
    state.stage_rewards.push(batch_reward);
    state.update_step += 1;
    state.inner += 1;
    let llm = rt.counters.totals().minus(&before);
    let line = UpdateMetrics {
        step: state.update_step,
        outer: state.outer,
        inner: state.inner - 1,
        episodes: episodes.len(),
        dropped,
        reward: batch_reward,
        reward_min: rewards.iter().cloned().fold(f64::INFINITY, f64::min),
        reward_max: rewards.iter().cloned().fold(f64::NEG_INFINITY, f64::max),
        shaped_reward: shaped_sums.iter().sum::<f64>() / shaped_sums.len() as f64,
        policy_loss: stats.policy_loss,
        value_loss: stats.value_loss,
        entropy: stats.entropy,
        approx_kl: stats.approx_kl,
        clip_frac: stats.clip_frac,
        ppo_epochs: stats.epochs_run,
        early_stopped: stats.early_stopped,
        skill_usage: usage,
        bank_size: skills.len(),
        bank_version: bank.bank_version,
        memory_items: live_mem as f64 / rewards.len() as f64,
        queries: answered,
        span_errors,
        query_errors,
        parse_problems,
        memories_flagged: mem_flagged,
        memories_refused: mem_refused,
        hard_cases: pool.len(),
        llm_calls: llm.executor.calls + llm.answer.calls + llm.judge.calls,
        llm_errors: llm.errors(),
        llm,
        // Written only when something happened, so fault-free runs keep their bytes.
        dropped_incomplete: (dropped_incomplete > 0).then_some(dropped_incomplete),
        retries: Some(rt.retries().minus(&retries_before)).filter(|r| !r.is_empty()),
        // ALFWorld: how actor replies matched admissible commands (fallback = first admissible).
        actor,
    };
    Ok((line, batch_reward, rollout_s, update_s))
}

/// What the trainer does with a stage decision.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct StagePlan {
    /// The bank to continue with (`None`: keep the current one).
    pub bank: Option<SkillBank>,
    /// Controller bytes to restore (`None`: keep training the current controller).
    pub controller: Option<Vec<u8>>,
    pub clear_bias: bool,
    pub name: &'static str,
}

/// The reference's rule: an improving stage continues from the (promoted) best bank; a stage
/// that did not improve restores the best bank, and the controller too only with
/// `designer.rollback = "bank+controller"`; with `keep_current` (an early stop that keeps the
/// last state) nothing is restored.
pub(crate) fn stage_plan(
    decision: &StageDecision,
    best_bank: Option<&SkillBank>,
    rollback: Rollback,
    keep_current: bool,
) -> StagePlan {
    match decision {
        StageDecision::Improved => StagePlan {
            bank: best_bank.cloned(),
            controller: None,
            clear_bias: false,
            name: "improved",
        },
        StageDecision::RolledBack { .. } if keep_current => StagePlan {
            bank: None,
            controller: None,
            clear_bias: false,
            name: "not-improved",
        },
        StageDecision::RolledBack {
            bank,
            controller_state,
        } => StagePlan {
            bank: Some(bank.clone()),
            controller: (rollback == Rollback::BankAndController).then(|| controller_state.clone()),
            clear_bias: true,
            name: "rolled-back",
        },
    }
}

/// Snapshot and rollback, then (unless the evolution says stop, or this is the last outer
/// epoch with `evolution.final = "best"`) select hard cases and run the designer, in the
/// reference's order: the stage reward is compared with the best snapshot; an early stop
/// ends training before any rollback; otherwise a stage that did not improve restores the
/// best bank (and controller with `designer.rollback = "bank+controller"`) and the designer
/// reuses the best snapshot's hard cases.
#[allow(clippy::too_many_arguments)]
fn designer_stage(
    cfg: &Config,
    rt: &Runtime,
    run_dir: &Path,
    metrics_path: &Path,
    reward: f64,
    last_outer: bool,
    controller: &mut Controller,
    bank: &mut SkillBank,
    evolution: &mut Evolution,
    pool: &HardCasePool,
    state: &mut TrainState,
) -> Result<()> {
    let before = rt.counters.totals();
    let retries_before = rt.retries();
    let ctrl_bytes = controller
        .save_bytes()
        .context("serialising the controller for the snapshot")?;
    let decision = evolution.on_stage_end(reward, bank, &ctrl_bytes, state.stage);
    let improved = decision == StageDecision::Improved;
    let stop = evolution.should_stop();
    let keep_current = stop && cfg.evolution.final_state == FinalState::Last;
    let plan = stage_plan(
        &decision,
        evolution.best_bank(),
        cfg.designer.cfg.rollback,
        keep_current,
    );
    if let Some(b) = plan.bank {
        *bank = b;
    }
    if let Some(bytes) = plan.controller {
        controller
            .load_bytes(&bytes)
            .context("restoring the snapshot's controller")?;
    }
    if plan.clear_bias {
        // The restored bank has no new skills to favour.
        state.bias = None;
    }
    let decision_name = plan.name;
    state.bank_history.push(history_row(
        state.stage,
        state.update_step,
        Some(reward),
        decision_name,
        bank,
        String::new(),
    ));
    let mut line = StageMetrics {
        stage: state.stage,
        step: state.update_step,
        reward,
        decision: decision_name.to_string(),
        designer: "skipped".into(),
        hard_cases_reused: None,
        hard_cases_selected: None,
        attempts: None,
        accepted: None,
        rejected: None,
        changed: None,
        designer_error: None,
        safety_judge: None,
        retries: None,
        bank_version: bank.bank_version,
        bank_size: 0,
        llm: RoleTotals::default(),
    };
    if stop {
        state.stopped_early = true;
        line.designer = "stopped-early".into();
    } else if !(last_outer && cfg.evolution.final_state == FinalState::Best) {
        let selected: Vec<HardCase> = match evolution.saved_cases(improved) {
            Some(saved) => {
                line.hard_cases_reused = Some(true);
                saved.to_vec()
            }
            None => {
                let cases = pool.cases();
                let questions: Vec<&str> = cases.iter().map(|c| c.question.as_str()).collect();
                let embs = embed(rt.encoder.as_ref(), &questions)?;
                let selected = memskill_designer::select_hard_cases(
                    cases,
                    &embs,
                    derive_seed(cfg.run.seed, &[3, state.stage as u64]),
                    &cfg.select,
                );
                evolution.save_cases(improved, &selected);
                selected
            }
        };
        line.hard_cases_selected = Some(selected.len());
        let llm = rt
            .designer
            .as_ref()
            .context("designer enabled without a designer backend")?;
        if selected.is_empty() {
            line.designer = "no-hard-cases".into();
            evolution.on_designed(Vec::new());
        } else {
            let dcfg = memskill_designer::DesignerConfig {
                interactive: cfg.data.dataset.is_interactive(),
                ..cfg.designer.cfg.clone()
            };
            match memskill_designer::run_stage(
                llm.as_ref(),
                &rt.prompts,
                bank,
                &selected,
                evolution.feedback.as_ref(),
                state.stage + 1,
                &dcfg,
            ) {
                Ok(o) => {
                    let dir = run_dir.join("designer");
                    std::fs::create_dir_all(&dir)
                        .with_context(|| format!("creating {}", dir.display()))?;
                    let t = json!({"stage": state.stage + 1, "attempts": o.attempts,
                        "accepted": o.accepted.iter().map(|e| e.summary()).collect::<Vec<_>>(),
                        "rejected": o.rejected.iter().map(|(e, r)| json!({"edit": e.summary(), "reason": r})).collect::<Vec<_>>(),
                        "safety_judge": {"calls": o.judge_calls, "rejected": o.judge_rejections},
                        "transcript": o.transcript});
                    write_atomic(
                        &dir.join(format!("stage-{}.json", state.stage + 1)),
                        serde_json::to_string_pretty(&t)?.as_bytes(),
                    )?;
                    line.designer = "designed".into();
                    line.attempts = Some(o.attempts);
                    line.accepted = Some(o.accepted.iter().map(|e| e.summary()).collect());
                    line.rejected = Some(
                        o.rejected
                            .iter()
                            .map(|(e, r)| format!("{}: {r}", e.summary()))
                            .collect(),
                    );
                    line.changed = Some(o.changed.clone());
                    if dcfg.safety_judge {
                        line.safety_judge = Some(SafetyJudgeCounts {
                            calls: o.judge_calls,
                            rejected: o.judge_rejections,
                        });
                    }
                    evolution.on_designed(o.notes.clone());
                    *bank = o.bank;
                    let sel = bank.selectable();
                    let mask: Vec<bool> = sel.iter().map(|s| o.changed.contains(&s.name)).collect();
                    if mask.iter().any(|&m| m) {
                        state.bias = Some(NewSkillBias::new(mask, controller.updates(), &cfg.bias));
                    }
                    let note = if o.changed.is_empty() {
                        "no change accepted".to_string()
                    } else {
                        format!("changed: {}", o.changed.join(", "))
                    };
                    state.bank_history.push(history_row(
                        state.stage + 1,
                        state.update_step,
                        None,
                        "designed",
                        bank,
                        note,
                    ));
                }
                // An outage (the server could not be reached or kept failing) or a broken
                // prompt template is not a designer outcome: the stage is not committed, the
                // checkpoint before it stays `latest`, and `--resume` redoes it. A reply
                // without content (the model spent its budget) is the model's answer, and is
                // recorded like an unusable reply.
                Err(e) if is_outage(&e) => {
                    return Err(anyhow::Error::new(e).context(format!(
                        "designer stage {} failed and was not committed; the latest checkpoint ({}) is from before it: `memskill train --resume` redoes it once the server answers",
                        state.stage + 1,
                        pointer(run_dir, "latest")
                            .ok()
                            .flatten()
                            .map_or("none yet".to_string(), |p| p.display().to_string())
                    )));
                }
                Err(e) => {
                    eprintln!("warning: designer stage {} failed: {e}", state.stage + 1);
                    evolution.on_designed(Vec::new());
                    line.designer = "error".into();
                    line.designer_error = Some(e.to_string());
                    state.bank_history.push(history_row(
                        state.stage + 1,
                        state.update_step,
                        None,
                        "designer-error",
                        bank,
                        e.to_string(),
                    ));
                }
            }
        }
    }
    line.bank_version = bank.bank_version;
    line.bank_size = bank.selectable().len();
    line.llm = rt.counters.totals().minus(&before);
    line.retries = Some(rt.retries().minus(&retries_before)).filter(|r| !r.is_empty());
    append_line(metrics_path, &MetricsLine::Stage(line).to_line()?)?;
    state.stage += 1;
    Ok(())
}

#[cfg(test)]
mod stage_plan_tests {
    use super::*;

    #[test]
    fn rollback_restores_the_bank_only_unless_asked() {
        let best = SkillBank::seed();
        let d = StageDecision::RolledBack {
            bank: best.clone(),
            controller_state: vec![1, 2, 3],
        };
        // Reference default: the bank is restored, the controller keeps training.
        let p = stage_plan(&d, Some(&best), Rollback::default(), false);
        assert_eq!(p.bank.as_ref(), Some(&best));
        assert_eq!(p.controller, None);
        assert_eq!(p.name, "rolled-back");
        assert!(p.clear_bias);
        let p = stage_plan(&d, Some(&best), Rollback::BankAndController, false);
        assert_eq!(p.controller, Some(vec![1, 2, 3]));
        // An early stop that keeps the last state restores nothing.
        let p = stage_plan(&d, Some(&best), Rollback::BankAndController, true);
        assert_eq!((p.bank, p.controller, p.name), (None, None, "not-improved"));
        let p = stage_plan(&StageDecision::Improved, Some(&best), Rollback::Bank, false);
        assert_eq!((p.bank, p.controller.is_none()), (Some(best), true));
    }
}
