//! One batch: the rollout (episodes run concurrently), its scoring (rewards, shaping,
//! usage, hard cases) and the PPO update.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use memskill_controller::{shape_rewards, NewSkillBias, PpoStats, Transition};
use memskill_core::Skill;
use memskill_designer::HardCase;

use super::Trainer;
use crate::backends::embed;
use crate::config::ControllerPolicy;
use crate::episode::{derive_seed, par_map, EpisodeCtx, EpisodeResult, QueryResult};
use crate::fsutil::append_line;
use crate::metrics::RoleTotals;
use crate::metrics::UpdateMetrics;
use memskill_executor::RetryCounts;

/// The episodes of one batch and what they were run with.
pub struct Rollout {
    pub episodes: Vec<EpisodeResult>,
    /// The selectable skills, in the controller's order.
    pub skills: Vec<Skill>,
    /// LLM counters and HTTP retries before the rollout.
    pub llm_before: RoleTotals,
    pub retries_before: RetryCounts,
    pub rollout_s: f64,
    /// What the memory contract's read rules did to the batch's answers.
    pub contract_reads: crate::contract_read::ContractReads,
}

/// A scored batch: the PPO batch and the statistics of its metrics line.
#[derive(Default)]
pub struct ScoredBatch {
    pub ppo_batch: Vec<Vec<Transition>>,
    pub rewards: Vec<f64>,
    pub shaped_sums: Vec<f64>,
    pub usage: BTreeMap<String, u64>,
    pub episodes: usize,
    pub dropped: usize,
    /// Dropped because an executor call failed (the memory is incomplete).
    pub dropped_incomplete: usize,
    pub span_errors: usize,
    pub query_errors: usize,
    /// Judge calls that failed or gave an unreadable verdict.
    pub judge_errors: usize,
    pub parse_problems: usize,
    pub answered: usize,
    pub live_mem: usize,
    pub memories_flagged: usize,
    pub memories_refused: usize,
    pub actor: Option<memskill_alfworld::ActorStats>,
    pub skills: usize,
    pub llm_before: RoleTotals,
    pub retries_before: RetryCounts,
    pub rollout_s: f64,
    pub contract_reads: crate::contract_read::ContractReads,
}

impl Trainer<'_> {
    /// Draw a batch from the benchmark and run its episodes (at most `concurrency.episodes`
    /// at a time), each with its own RNG.
    pub fn rollout(&mut self) -> Result<Rollout> {
        let t_roll = Instant::now();
        let llm_before = self.rt.counters.totals();
        let retries_before = self.rt.retries();
        let batch =
            self.bench
                .draw_batch(&self.rt, &mut self.state.rng, self.cfg.run.batch_size)?;
        let skills: Vec<Skill> = self.bank.selectable().into_iter().cloned().collect();
        if skills.is_empty() {
            bail!("the skill bank has no selectable skill");
        }
        let descs: Vec<&str> = skills.iter().map(|s| s.description.as_str()).collect();
        let skill_embs = Arc::new(embed(self.rt.encoder.as_ref(), &descs)?);
        let bias: Option<NewSkillBias> = self
            .state
            .bias
            .clone()
            .filter(|b| b.new_mask.len() == skills.len());
        let (cfg, rt, progress) = (self.cfg, &self.rt, &self.progress);
        let step = self.state.update_step;
        let bundles = &self.bank.bundles;
        let lock = Mutex::new(&mut self.controller);
        let ctx = EpisodeCtx {
            bias: bias.as_ref(),
            bundles,
            step,
            domain: self.bench.memory_domain(),
            ..EpisodeCtx::new(cfg, rt, &lock, &skills, skill_embs)
        };
        progress.episodes.set_length(batch.len() as u64);
        progress.episodes.set_position(0);
        let done = AtomicBool::new(false);
        let indices: Vec<usize> = (0..batch.len()).collect();
        let results = std::thread::scope(|s| {
            if !progress.hidden {
                s.spawn(|| {
                    while !done.load(Ordering::Relaxed) {
                        let n = rt.counters.in_flight();
                        progress
                            .episodes
                            .set_message(format!("LLM calls in flight: {n}"));
                        std::thread::sleep(Duration::from_millis(200));
                    }
                });
            }
            let r = par_map(&indices, cfg.concurrency.episodes, |e, _| {
                let seed = derive_seed(cfg.run.seed, &[2, step, e as u64]);
                let r = batch.run(&ctx, e, seed);
                progress.episodes.inc(1);
                r
            });
            done.store(true, Ordering::Relaxed);
            r
        });
        let episodes = results.into_iter().collect::<Result<Vec<_>>>()?;
        let contract_reads = ctx.contract_reads();
        drop(ctx);
        Ok(Rollout {
            episodes,
            skills,
            llm_before,
            retries_before,
            rollout_s: t_roll.elapsed().as_secs_f64(),
            contract_reads,
        })
    }

    /// Rewards, shaping, skill usage and hard cases of a rollout. An episode with a failed
    /// executor call (its memory is incomplete) or without a single scored question measured
    /// the outage, not the policy: it is counted and left out of the PPO batch, the pool and
    /// the usage statistics, never scored (a batch left empty is an error).
    pub fn score_batch(&mut self, rollout: Rollout) -> Result<ScoredBatch> {
        let step = self.state.update_step;
        let Rollout {
            mut episodes,
            skills,
            llm_before,
            retries_before,
            rollout_s,
            contract_reads,
        } = rollout;
        let mut b = ScoredBatch {
            episodes: episodes.len(),
            skills: skills.len(),
            llm_before,
            retries_before,
            rollout_s,
            contract_reads,
            ..Default::default()
        };
        let mut first_errors: Vec<String> = Vec::new();
        let mut log = String::new();
        for ep in &mut episodes {
            count_errors(ep, &mut b, &mut first_errors);
            if ep.built.incomplete() {
                b.dropped_incomplete += 1;
                b.dropped += 1;
                continue;
            }
            let Some(reward) = ep.reward else {
                b.dropped += 1;
                continue;
            };
            for r in crate::invocations::records(step + 1, ep, &skills) {
                log.push_str(&serde_json::to_string(&r)?);
                log.push('\n');
            }
            self.learn_from(ep, reward, &skills, &mut b);
            b.answered += ep.queries.len();
            for q in &ep.queries {
                self.record_hard_case(q, step);
            }
        }
        self.pool.prune(step);
        if !log.is_empty() {
            append_line(&self.files.invocations, log.trim_end_matches('\n'))?;
        }
        let first_errors = first_errors.join(" | ");
        if b.ppo_batch.is_empty() {
            bail!(
                "update {}: all {} episodes of the batch failed (LLM errors: {} executor, {} answer, {} judge); first errors: {}",
                step + 1,
                b.episodes,
                b.span_errors,
                b.query_errors,
                b.judge_errors,
                first_errors
            );
        }
        if b.dropped > 0 {
            eprintln!(
                "warning: update {}: {} of {} episodes dropped from the PPO batch (LLM errors): {first_errors}",
                step + 1,
                b.dropped,
                b.episodes,
            );
        }
        Ok(b)
    }
}

/// An episode's errors, parse problems and memory-filter counts join the batch's; its first
/// error texts are kept for the warning.
fn count_errors(ep: &EpisodeResult, b: &mut ScoredBatch, first_errors: &mut Vec<String>) {
    b.memories_flagged += ep.built.flagged;
    b.memories_refused += ep.built.refused;
    if let Some(a) = &ep.actor {
        b.actor.get_or_insert_with(Default::default).merge(a);
    }
    b.span_errors += ep.built.call_errors;
    b.parse_problems += ep.built.parse_problems;
    first_errors.extend(ep.built.errors.iter().take(2).cloned());
    for e in ep.queries.iter().filter_map(|q| q.error.as_ref()) {
        b.query_errors += 1;
        if first_errors.len() < 4 {
            first_errors.push(format!("answer: {e}"));
        }
    }
    for e in ep.queries.iter().filter_map(|q| q.judge_error.as_ref()) {
        b.judge_errors += 1;
        if first_errors.len() < 4 {
            first_errors.push(format!("judge: {e}"));
        }
    }
}

impl Trainer<'_> {
    /// A scored episode's transitions (with shaped rewards) join the PPO batch; its skills'
    /// usage is counted and credited with its reward.
    fn learn_from(
        &mut self,
        ep: &mut EpisodeResult,
        reward: f64,
        skills: &[Skill],
        b: &mut ScoredBatch,
    ) {
        b.live_mem += ep.built.memory.live_count();
        b.rewards.push(reward);
        let shaped = shape_rewards(&ep.built.outcomes, reward as f32, &self.cfg.shaping);
        b.shaped_sums
            .push(shaped.iter().map(|&x| x as f64).sum::<f64>());
        let mut trs = std::mem::take(&mut ep.built.transitions);
        for (t, r) in trs.iter_mut().zip(&shaped) {
            t.reward = *r;
        }
        b.ppo_batch.push(trs);
        self.keep_bank(self.state.update_step + 1, ep);
        for &i in ep.built.chosen.iter().flatten() {
            if let Some(sk) = skills.get(i) {
                *b.usage.entry(sk.name.clone()).or_default() += 1;
                if let Some(s) = self.bank.get_mut(&sk.name) {
                    s.usage.record(reward);
                }
            }
        }
    }

    /// With a registry configured: the episode's memory bank, with a use counted for every
    /// memory an answer was given, kept for the registry (see `registry_banks`; the banks of
    /// an earlier update are dropped).
    fn keep_bank(&mut self, step: u64, ep: &mut EpisodeResult) {
        if self.cfg.registry.location().is_none() {
            return;
        }
        self.registry_banks.retain(|(s, ..)| *s == step);
        let mut bank = std::mem::take(&mut ep.built.memory);
        let ids: Vec<memskill_core::MemoryId> = ep
            .queries
            .iter()
            .flat_map(|q| q.memory_ids.iter().copied())
            .collect();
        bank.note_use(&ids, &memskill_registry::clock::now());
        self.registry_banks
            .push((step, ep.built.sample_id.clone(), bank));
    }

    /// A scored question joins the hard-case pool (which keeps the failures); with the
    /// offline gate, the first solved ones become its fixed regression set.
    fn record_hard_case(&mut self, q: &QueryResult, step: u64) {
        let Some(score) = q.score else {
            return;
        };
        let d = &self.cfg.designer.cfg;
        if d.gate == memskill_designer::GateMode::Offline
            && score >= self.pool.cfg.threshold
            && self.state.solved.len() < d.gate_rules.solved_cases
        {
            let key = (q.sample_id.clone(), q.query_id.clone());
            if !self.state.solved.contains(&key) {
                self.state.solved.push(key);
            }
        }
        self.pool.record(HardCase {
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

    /// One PPO update of the controller on `batch`; the batch reward joins the stage's and
    /// the loop counters advance. Returns the statistics and the seconds it took.
    pub fn ppo_update(&mut self, batch: &[Vec<Transition>]) -> Result<(PpoStats, f64)> {
        let t = Instant::now();
        // `controller.policy = "random"` (the w/o-controller ablation): nothing to learn.
        let stats = if self.cfg.controller.policy == ControllerPolicy::Random {
            Default::default()
        } else {
            self.controller
                .update(batch)
                .with_context(|| format!("PPO update {}", self.state.update_step + 1))?
        };
        Ok((stats, t.elapsed().as_secs_f64()))
    }

    /// The metrics line of the update just made (after `ppo_update`).
    pub(super) fn update_metrics(&mut self, b: &ScoredBatch, stats: &PpoStats) -> UpdateMetrics {
        let batch_reward = b.rewards.iter().sum::<f64>() / b.rewards.len() as f64;
        self.state.stage_rewards.push(batch_reward);
        self.state.update_step += 1;
        self.state.inner += 1;
        let llm = self.rt.counters.totals().minus(&b.llm_before);
        UpdateMetrics {
            step: self.state.update_step,
            outer: self.state.outer,
            inner: self.state.inner - 1,
            episodes: b.episodes,
            dropped: b.dropped,
            reward: batch_reward,
            reward_min: b.rewards.iter().cloned().fold(f64::INFINITY, f64::min),
            reward_max: b.rewards.iter().cloned().fold(f64::NEG_INFINITY, f64::max),
            shaped_reward: b.shaped_sums.iter().sum::<f64>() / b.shaped_sums.len() as f64,
            policy_loss: stats.policy_loss,
            value_loss: stats.value_loss,
            entropy: stats.entropy,
            approx_kl: stats.approx_kl,
            clip_frac: stats.clip_frac,
            ppo_epochs: stats.epochs_run,
            early_stopped: stats.early_stopped,
            skill_usage: b.usage.clone(),
            bank_size: b.skills,
            bank_version: self.bank.bank_version,
            memory_items: b.live_mem as f64 / b.rewards.len() as f64,
            queries: b.answered,
            span_errors: b.span_errors,
            query_errors: b.query_errors,
            parse_problems: b.parse_problems,
            memories_flagged: b.memories_flagged,
            memories_refused: b.memories_refused,
            hard_cases: self.pool.len(),
            llm_calls: llm.executor.calls + llm.answer.calls + llm.judge.calls,
            llm_errors: llm.errors(),
            llm,
            // Written only when something happened, so fault-free runs keep their bytes.
            dropped_incomplete: (b.dropped_incomplete > 0).then_some(b.dropped_incomplete),
            retries: Some(self.rt.retries().minus(&b.retries_before)).filter(|r| !r.is_empty()),
            structured_dialects: self.rt.structured_dialects(),
            // ALFWorld: how actor replies matched admissible commands (fallback = first admissible).
            actor: b.actor,
            memory_contract: Some(b.contract_reads).filter(|c| !c.is_empty()),
        }
    }
}
