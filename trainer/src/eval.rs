//! Evaluation of a checkpoint: deterministic top-K memory construction (cached), answering,
//! F1 and optional LLM-judge scoring, `results.json` and a Table-1 style `results.md`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::{bail, Context, Result};
use memskill_controller::Controller;
use memskill_core::{MemoryBank, MemoryId, Query, Sample, Skill};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::backends::embed;
use crate::checkpoint::{resolve, Checkpoint};
use crate::config::{Config, Dataset, RawConfig, SplitSpec};
use crate::episode::{answer_queries, build_memory, par_map, BuiltMemory, EpisodeCtx, QueryResult};
use crate::fsutil::write_atomic;
use crate::runtime::{membank_path, Runtime};

/// What to evaluate.
#[derive(Debug, Clone, Default)]
pub struct EvalOptions {
    /// A checkpoint dir, a run dir (its best, else latest checkpoint) or a checkpoints dir.
    pub checkpoint: PathBuf,
    /// Dataset; None = the training dataset.
    pub dataset: Option<Dataset>,
    /// Split; None = `eval.split`.
    pub split: Option<SplitSpec>,
    /// Answer at most this many queries (in order).
    pub limit: Option<usize>,
    /// `--set` overrides on top of the checkpoint's config.
    pub sets: Vec<String>,
    /// Output dir; None = `<run>/eval/<dataset>-<split>`.
    pub out: Option<PathBuf>,
    /// Method name in the tables; None = the run name.
    pub method: Option<String>,
    /// Do not score with the LLM judge (the reference always reports F1 and the judge
    /// score; `eval.judge = false` does the same from the config).
    pub no_judge: bool,
    /// Set (the CLI's signal handler, Ctrl-C in Python) to stop before the next sample, span
    /// or question: the evaluation then fails with [`crate::stop::Interrupted`] and writes
    /// no results.
    pub stop: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

/// Mean scores of a group of queries.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Score {
    pub count: usize,
    /// Mean F1 over answered queries.
    pub f1: Option<f64>,
    /// Mean judge score over judged queries.
    pub judge: Option<f64>,
    /// Queries whose answer call failed (excluded from the means, never scored 0).
    pub errors: usize,
    /// Answered queries whose judge call failed or whose verdict could not be read
    /// (excluded from the judge mean, never scored 0).
    #[serde(default)]
    pub judge_errors: usize,
}

/// `results.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EvalResults {
    pub method: String,
    pub checkpoint: String,
    pub checkpoint_hash: String,
    pub dataset: String,
    pub split: String,
    pub span_mode: String,
    pub top_k: usize,
    pub retrieve: usize,
    pub executor: String,
    /// The executor's `backend` (`openai`, `local`, `scripted-synthetic`; absent in older
    /// results, where an `executor` of `scripted-synthetic` says the same).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub executor_backend: Option<String>,
    /// The model that gave the L-J scores (None: no judge ran; absent in older results).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge_model: Option<String>,
    /// Whether that is the reference's judge model (`config::REFERENCE_JUDGE_MODEL`).
    #[serde(default)]
    pub judge_is_reference: bool,
    pub overall: Score,
    pub by_category: BTreeMap<String, Score>,
    pub memory_cache_hits: usize,
    /// Executor calls made to build the memory banks that were not cached, and how many of
    /// them failed (LLM errors: those spans wrote nothing).
    #[serde(default)]
    pub memory_calls: usize,
    #[serde(default)]
    pub memory_call_errors: usize,
    /// Memories the filter flagged (kept, not shown unless `memory.show_flagged`) in the
    /// banks evaluated, and memory writes it refused while building them.
    #[serde(default)]
    pub memories_flagged: usize,
    #[serde(default)]
    pub memories_refused: usize,
    /// Memory writes the memory contract refused while building the banks, by type
    /// (`memory.contract`; absent when none was), and memories it withheld from the answerer
    /// because they belong to another project (once per memory per view built for answering:
    /// per sample, and per dated question with `answer.as_of_question_date`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub contract_refused: BTreeMap<String, usize>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub contract_withheld: usize,
    /// What the contract's read rules did to the answerer's retrieval, counted per question
    /// (`crate::contract_read`; each absent when 0): memories past their TTL and
    /// high-sensitivity memories the question did not ask for, left out; stale memories given
    /// with the contract's marker.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub contract_expired: usize,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub contract_sensitive_withheld: usize,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub contract_stale_shown: usize,
    /// `eval.max_error_rate` of this evaluation.
    #[serde(default)]
    pub max_error_rate: f64,
    /// Templates replaced by `prompts.dir` (empty = the built-in prompts).
    #[serde(default)]
    pub prompts_overridden: Vec<String>,
    /// Content hash of every prompt template used.
    #[serde(default)]
    pub prompts_hash: String,
    /// HotpotQA: documents concatenated per sample (the context length of the paper's
    /// Figure 3: 50, 100 or 200 in eval_50/100/200.json), the mean over samples.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_docs: Option<usize>,
    /// `memskill eval --adapter`: the external memory system and how its requests went.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adapter: Option<AdapterRecord>,
    pub queries: Vec<QueryResult>,
}

/// The external memory system of an adapter evaluation (docs/adapter-protocol.md) and how
/// its requests went. Its failed `reset` / `add` / `build` requests are also counted in
/// `memory_call_errors` (of `memory_calls`), its failed `retrieve`s as question errors.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AdapterRecord {
    /// The `--adapter` command line as given.
    pub command: String,
    /// Requests sent (every kind) and how many failed (refused, timed out, malformed, exited).
    pub requests: usize,
    pub errors: usize,
    /// Of those failures, the requests the adapter answered with an error (`ok: false`: its
    /// library failed, e.g. on a reply it could not use); the rest are protocol failures
    /// (a timeout, a malformed reply, an exit). Absent in older results.
    #[serde(default)]
    pub refused: usize,
    /// Questions the system answered itself (`answered_by: adapter` on the query).
    pub answered_by_adapter: usize,
    /// The first failure, with the adapter's stderr tail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_error: Option<String>,
}

/// The context length of a benchmark whose descriptor records it (HotpotQA): the mean
/// number of `Passage N:` documents (or sessions, when documents were split into sessions)
/// per sample; None for other datasets.
pub fn context_docs(samples: &[Sample]) -> Option<usize> {
    let records = |s: &Sample| crate::registry::find(&s.dataset).is_some_and(|d| d.context_docs);
    if samples.is_empty() || !samples.iter().all(records) {
        return None;
    }
    let per: Vec<usize> = samples
        .iter()
        .map(|s| {
            if s.sessions.len() > 1 {
                return s.sessions.len();
            }
            s.sessions
                .iter()
                .flat_map(|x| &x.turns)
                .map(|t| memskill_datasets::split_passages(&t.text).len())
                .sum()
        })
        .collect();
    Some((per.iter().sum::<usize>() as f64 / per.len() as f64).round() as usize)
}

/// A checkpoint's controller and selectable skills (with their description embeddings),
/// ready for deterministic memory construction.
pub struct EvalPolicy {
    pub controller: Controller,
    pub skills: Vec<Skill>,
    /// The checkpoint bank's bundles (empty on the paper's path).
    pub bundles: Vec<memskill_core::Bundle>,
    pub skill_embs: Arc<Vec<Vec<f32>>>,
}

impl EvalPolicy {
    pub fn load(cfg: &Config, rt: &Runtime, ck: &Checkpoint) -> Result<Self> {
        let mut controller =
            Controller::new(rt.encoder.dim(), &cfg.policy, &cfg.ppo, cfg.run.seed)?;
        controller
            .load_bytes(&ck.controller)
            .context("loading the checkpoint's controller")?;
        let skills: Vec<Skill> = ck.bank.selectable().into_iter().cloned().collect();
        if skills.is_empty() {
            bail!("the checkpoint's skill bank has no selectable skill");
        }
        let descs: Vec<&str> = skills.iter().map(|s| s.description.as_str()).collect();
        let skill_embs = Arc::new(embed(rt.encoder.as_ref(), &descs)?);
        Ok(Self {
            controller,
            skills,
            bundles: ck.bank.bundles.clone(),
            skill_embs,
        })
    }
}

/// The episode context of an evaluation: deterministic top-`eval.top_k`, no new-skill bias;
/// as in the reference, memories are built with the span-side R of training
/// (`controller.retrieve`, its `--mem-top-k`) and questions are answered from the top
/// `eval.retrieve` memories (its `--mem-top-k-eval`).
pub fn eval_ctx<'a>(
    cfg: &'a Config,
    rt: &'a Runtime,
    controller: &'a Mutex<&'a mut Controller>,
    skills: &'a [Skill],
    skill_embs: Arc<Vec<Vec<f32>>>,
) -> EpisodeCtx<'a> {
    EpisodeCtx {
        reward_is_judge: false,
        top_k: cfg.eval.top_k,
        retrieve: cfg.controller.retrieve,
        answer_retrieve: cfg.eval.retrieve,
        query_ratio: 1.0,
        ..EpisodeCtx::new(cfg, rt, controller, skills, skill_embs)
    }
}

/// What evaluating one sample gives: its answered queries, whether its bank was cached, the
/// executor calls and failed calls that built it, the memories flagged / writes refused, and
/// (with a registry configured) its bank with the uses the answers made of it.
type SampleOutcome = (
    Vec<QueryResult>,
    bool,
    usize,
    usize,
    (usize, usize, BTreeMap<String, usize>),
    // the sample's bank and its id, kept for the registry's memory table
    Option<(String, MemoryBank)>,
);

/// A memory bank read from its cache file, or built and then cached.
pub struct CachedMemory {
    pub memory: MemoryBank,
    pub hit: bool,
    /// Executor calls that failed while building (such a bank is used but not cached).
    pub call_errors: usize,
    /// Memory writes the filter refused while building (0 for a cached bank).
    pub refused: usize,
    /// Memory writes the memory contract refused while building, by type (none for a cached
    /// bank).
    pub contract_refused: BTreeMap<String, usize>,
}

impl CachedMemory {
    /// What the filter and the contract did while building: flagged memories, refused
    /// writes, contract refusals by type.
    fn filtered(&self) -> (usize, usize, BTreeMap<String, usize>) {
        (
            self.memory.flagged_count(),
            self.refused,
            self.contract_refused.clone(),
        )
    }
}

/// The bank cached at `path`, else `build()` (written to `path` when every executor call
/// succeeded; otherwise a warning naming `what`). The secret values of flagged memories
/// are redacted before the bank is used or cached.
pub fn cached_memory(
    path: &Path,
    what: &str,
    build: impl FnOnce() -> Result<BuiltMemory>,
) -> Result<CachedMemory> {
    if let Some(memory) = std::fs::read(path)
        .ok()
        .and_then(|b| serde_json::from_slice::<MemoryBank>(&b).ok())
    {
        return Ok(CachedMemory {
            memory,
            hit: true,
            call_errors: 0,
            refused: 0,
            contract_refused: BTreeMap::new(),
        });
    }
    let mut built = build()?;
    built.memory.redact_flagged(memskill_guard::redact_secrets);
    if built.call_errors == 0 {
        write_atomic(path, &serde_json::to_vec(&built.memory)?)?;
    } else {
        eprintln!(
            "warning: {what}: {} executor calls failed; memory not cached: {}",
            built.call_errors,
            built.errors.join(" | ")
        );
    }
    Ok(CachedMemory {
        memory: built.memory,
        hit: false,
        call_errors: built.call_errors,
        refused: built.refused,
        contract_refused: built.contract_refused,
    })
}

impl EvalResults {
    /// What the registry takes of these results (`crate::skill_registry`).
    pub fn registry_view(&self) -> crate::skill_registry::EvalView<'_> {
        crate::skill_registry::EvalView {
            checkpoint: &self.checkpoint_hash,
            method: &self.method,
            dataset: &self.dataset,
            split: &self.split,
            queries: &self.queries,
        }
    }

    /// What the memory contract refused and withheld, in one line (`None` when nothing).
    pub fn contract_line(&self) -> Option<String> {
        let reads =
            self.contract_expired + self.contract_sensitive_withheld + self.contract_stale_shown;
        if self.contract_refused.is_empty() && self.contract_withheld == 0 && reads == 0 {
            return None;
        }
        let by: Vec<String> = self
            .contract_refused
            .iter()
            .map(|(t, n)| format!("{t} {n}"))
            .collect();
        let mut line = format!(
            "memory contract: {} writes refused ({}), {} memories of other projects withheld from the answerer",
            self.contract_refused.values().sum::<usize>(),
            if by.is_empty() { "none".to_string() } else { by.join(", ") },
            self.contract_withheld
        );
        if reads > 0 {
            line.push_str(&format!(
                "; per question: {} expired and {} high-sensitivity memories left out, {} stale ones shown with a warning",
                self.contract_expired, self.contract_sensitive_withheld, self.contract_stale_shown
            ));
        }
        Some(line)
    }

    /// The error counts in one line: failed answer calls, unreadable or failed judge verdicts,
    /// failed executor calls while building memory.
    pub fn error_line(&self) -> String {
        let o = &self.overall;
        let (answers, builder) = if self.adapter.is_some() {
            (
                "questions (adapter retrieve or answer call)",
                "adapter requests",
            )
        } else {
            ("answer calls", "executor calls")
        };
        let mut line = format!(
            "errors: {} of {} {answers}, {} judge verdicts, {} of {} {builder} (memory building)",
            o.errors, o.count, o.judge_errors, self.memory_call_errors, self.memory_calls
        );
        if let Some(a) = &self.adapter {
            if a.errors > 0 {
                line.push_str(&format!(
                    "\nadapter: {} of {} requests failed ({} refused by its library, {} protocol failures)",
                    a.errors,
                    a.requests,
                    a.refused,
                    a.errors - a.refused
                ));
            }
            if let Some(first) = &a.first_error {
                line.push_str(&format!("\nfirst adapter error: {first}"));
            }
        }
        if let Some(first) = self.first_judge_error() {
            let judge = self.judge_model.as_deref().unwrap_or("the judge");
            line.push_str(&format!(
                "\njudge ({judge}) failed on {} of {} answered questions; first error: {first}",
                o.judge_errors,
                o.count - o.errors
            ));
        }
        line
    }

    /// The first failed or unreadable judge verdict's error (a question whose answer call
    /// succeeded).
    pub fn first_judge_error(&self) -> Option<&str> {
        self.queries
            .iter()
            .filter(|q| q.error.is_none())
            .find_map(|q| q.judge_error.as_deref())
    }

    /// An error when the failed share of answer calls or of memory-building executor calls
    /// exceeds `max_rate` (`eval.max_error_rate`): such an evaluation measured too little to be
    /// reported as a result. Nothing evaluated at all is an error too.
    pub fn check_error_rate(&self) -> Result<()> {
        let max_rate = self.max_error_rate;
        let o = &self.overall;
        if o.count == 0 {
            anyhow::bail!("no question was evaluated");
        }
        let rate = |e: usize, n: usize| if n == 0 { 0.0 } else { e as f64 / n as f64 };
        let (qa, mem, judge) = (
            rate(o.errors, o.count),
            rate(self.memory_call_errors, self.memory_calls),
            rate(o.judge_errors, o.count - o.errors),
        );
        if qa > max_rate || mem > max_rate || judge > max_rate {
            anyhow::bail!(
                "too many failed LLM calls for a result ({}; eval.max_error_rate = {max_rate}): the scores above exclude them and do not measure the method",
                self.error_line()
            );
        }
        Ok(())
    }
}

/// The model that judges an evaluation (`results.json`'s `judge_model`); None without a judge.
pub fn judge_model(cfg: &Config, want_judge: bool) -> Option<String> {
    want_judge.then(|| cfg.judge_llm().model_name())
}

/// Whether an evaluation's judge is the reference's judge model.
pub fn judge_is_reference(cfg: &Config, want_judge: bool) -> bool {
    judge_model(cfg, want_judge).as_deref() == Some(crate::config::REFERENCE_JUDGE_MODEL)
}

/// Aggregate query results.
pub fn score(results: &[&QueryResult]) -> Score {
    let f1s: Vec<f64> = results
        .iter()
        .filter(|r| r.error.is_none())
        .filter_map(|r| r.f1)
        .collect();
    let js: Vec<f64> = results.iter().filter_map(|r| r.judge).collect();
    let mean = |v: &[f64]| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
    Score {
        count: results.len(),
        f1: mean(&f1s),
        judge: mean(&js),
        errors: results.iter().filter(|r| r.error.is_some()).count(),
        judge_errors: results
            .iter()
            .filter(|r| r.error.is_none() && r.judge_error.is_some())
            .count(),
    }
}

/// A category id with its name when the benchmark's descriptor has one (`1 (multi-hop)`).
pub fn category_name(dataset: &str, c: &str) -> String {
    let named =
        crate::registry::find(dataset).and_then(|d| d.categories.iter().find(|(id, _)| *id == c));
    if let Some((_, n)) = named {
        return format!("{c} ({n})");
    }
    if c.is_empty() {
        "(none)".into()
    } else {
        c.into()
    }
}

fn pct(x: Option<f64>) -> String {
    x.map(|v| format!("{:.2}", v * 100.0))
        .unwrap_or_else(|| "-".into())
}

/// `results.md`: Table-1 style row (method, F1, L-J) and the per-category table.
pub fn render_results_md(r: &EvalResults) -> String {
    let mut s = format!(
        "# {} on {} ({})\n\nspans {}, K = {}, R = {}, executor {}, judge {}, checkpoint {}\n\n| Method | F1 | L-J | n | errors |\n|---|---|---|---|---|\n| {} | {} | {} | {} | {} |\n\n",
        r.method, r.dataset, r.split, r.span_mode, r.top_k, r.retrieve, r.executor,
        r.judge_model.as_deref().unwrap_or("none"), r.checkpoint,
        r.method, pct(r.overall.f1), pct(r.overall.judge), r.overall.count, errors_cell(&r.overall)
    );
    s.push_str("| Category | n | F1 | L-J | errors |\n|---|---|---|---|---|\n");
    for (c, sc) in &r.by_category {
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} |\n",
            category_name(&r.dataset, c),
            sc.count,
            pct(sc.f1),
            pct(sc.judge),
            errors_cell(sc)
        ));
    }
    s.push_str(&format!(
        "| **overall** | {} | {} | {} | {} |\n",
        r.overall.count,
        pct(r.overall.f1),
        pct(r.overall.judge),
        errors_cell(&r.overall)
    ));
    s
}

/// The errors cell: failed answer calls, and failed judge verdicts beside them when any
/// (`2 (+3 judge)`): a broken judge is never read as "no judge".
fn errors_cell(s: &Score) -> String {
    if s.judge_errors == 0 {
        s.errors.to_string()
    } else {
        format!("{} (+{} judge)", s.errors, s.judge_errors)
    }
}

/// Points a checkpoint's config at another dataset (`memskill eval --dataset`, the paper's
/// transfer runs): its default data file, its reference evaluation K, its own answer budget
/// (`answer.max_tokens` absent) and split file, unless `--set` gives them. Works on the raw
/// layers, before the one [`RawConfig::resolve`]. The config's own dataset is no move: it
/// keeps its file, K, budget and split file.
pub fn transfer_to(raw: &mut RawConfig, dataset: Dataset) -> Result<()> {
    if raw.dataset()? == dataset {
        return Ok(());
    }
    raw.put("data.dataset", toml::Value::String(dataset.name()))?;
    if !raw.is_set("data.path") {
        let path = dataset
            .descriptor()
            .default_path
            .with_context(|| format!("--dataset {dataset}: pass --set data.path=FILE"))?;
        raw.put("data.path", toml::Value::String(path.to_string()))?;
    }
    if !raw.is_set("eval.top_k") {
        // the reference's evaluation K (`eval_locomo.sh` 7, `eval_longmemeval.sh` 5, `eval_hp.sh` 7)
        if let Some(k) = dataset.descriptor().eval_top_k {
            raw.put("eval.top_k", toml::Value::Integer(k as i64))?;
        }
    }
    if !raw.is_set("answer.max_tokens") {
        raw.remove("answer.max_tokens");
    }
    if !raw.is_set("data.splits_path") {
        raw.remove("data.splits_path");
    }
    Ok(())
}

/// Evaluate a checkpoint. Returns the results and the directory they were written to.
pub fn evaluate(opts: &EvalOptions) -> Result<(EvalResults, PathBuf)> {
    let ck_dir = resolve(&opts.checkpoint)?;
    let ck = Checkpoint::load(&ck_dir)
        .with_context(|| format!("loading checkpoint {}", ck_dir.display()))?;
    let ck_hash = ck.hash()?;
    let cfg = eval_config(&ck, &ck_dir, &opts.sets, opts.dataset)?;
    let split = opts.split.unwrap_or(cfg.eval.split);
    let samples = load_eval_samples(&cfg, split, opts.limit)?;
    let run_dir = run_dir_of(&ck_dir);
    let want_judge = !opts.no_judge && cfg.eval.judge;
    let mut eval_cfg = cfg.clone();
    eval_cfg.designer.enabled = false;
    let rt = Runtime::build(&eval_cfg, &run_dir, samples.clone(), want_judge)?;
    rt.probe_endpoints()?;
    let mut policy = EvalPolicy::load(&cfg, &rt, &ck)
        .with_context(|| format!("checkpoint {}", ck_dir.display()))?;
    let lock = Mutex::new(&mut policy.controller);
    let mut ctx = eval_ctx(&cfg, &rt, &lock, &policy.skills, policy.skill_embs.clone());
    ctx.bundles = &policy.bundles;
    ctx.stop = opts.stop.as_deref();
    let bank_hash = ck.bank.content_hash();
    let keep_banks = cfg.registry.location().is_some(); // for the registry's memory table
    let per_sample = par_map(
        &samples,
        cfg.concurrency.episodes,
        |_, sample| -> Result<SampleOutcome> {
            crate::stop::check(opts.stop.as_deref(), || format!("sample {}", sample.id))?;
            let path = membank_path(&cfg, &rt, &ck_hash, &bank_hash, sample, membank_extra(&cfg))?;
            let cached = cached_memory(&path, &sample.id, || build_memory(&ctx, sample, None))?;
            let calls = if cached.hit { 0 } else { sample.spans.len() };
            let filtered = cached.filtered();
            let (memory, hit, errs) = (cached.memory, cached.hit, cached.call_errors);
            let qs: Vec<&Query> = sample.queries.iter().collect();
            let answered = answer_queries(&ctx, sample, &memory, &qs, want_judge)?;
            let kept = keep_banks.then(|| (sample.id.clone(), used_bank(memory, &answered)));
            Ok((answered, hit, calls, errs, filtered, kept))
        },
    );
    let g = Gathered::of(per_sample)?;
    crate::stop::check(opts.stop.as_deref(), || "writing the results".into())?;
    let (overall, by_category) = scores(&g.queries);
    let results = EvalResults {
        method: opts.method.clone().unwrap_or_else(|| cfg.run.name.clone()),
        checkpoint: ck_dir.display().to_string(),
        checkpoint_hash: ck_hash.clone(),
        dataset: cfg.data.dataset.name(),
        split: split.to_string(),
        span_mode: cfg.eval.span_mode.to_string(),
        top_k: cfg.eval.top_k,
        retrieve: cfg.eval.retrieve,
        executor: rt.executor_id.clone(),
        executor_backend: Some(cfg.executor.backend.name().to_string()),
        judge_model: judge_model(&cfg, want_judge),
        judge_is_reference: judge_is_reference(&cfg, want_judge),
        overall,
        by_category,
        memory_cache_hits: g.hits,
        memory_calls: g.memory_calls,
        memory_call_errors: g.memory_call_errors,
        memories_flagged: g.memories_flagged,
        memories_refused: g.memories_refused,
        contract_refused: g.contract_refused,
        contract_withheld: ctx.withheld(),
        contract_expired: ctx.contract_reads().contract_expired,
        contract_sensitive_withheld: ctx.contract_reads().contract_sensitive_withheld,
        contract_stale_shown: ctx.contract_reads().contract_stale_shown,
        max_error_rate: cfg.eval.max_error_rate,
        prompts_overridden: rt.prompts.overridden().to_vec(),
        prompts_hash: rt.prompts.content_hash(),
        context_docs: context_docs(&samples),
        adapter: None,
        queries: g.queries,
    };
    let out = eval_out(opts, &cfg, &run_dir, split);
    publish(&cfg, &run_dir, &ck, &out, &results, &g.banks)?;
    Ok((results, out))
}

/// Where an evaluation writes: `--out`, else `<run>/eval/<dataset>-<split>`.
fn eval_out(opts: &EvalOptions, cfg: &Config, run_dir: &Path, split: SplitSpec) -> PathBuf {
    let name = format!("{}-{split}", cfg.data.dataset);
    opts.out
        .clone()
        .unwrap_or_else(|| run_dir.join("eval").join(name))
}

/// `memory` with a use counted for every memory each answer was given (now).
fn used_bank(mut memory: MemoryBank, answered: &[QueryResult]) -> MemoryBank {
    let ids: Vec<MemoryId> = answered
        .iter()
        .flat_map(|r| r.memory_ids.iter().copied())
        .collect();
    memory.note_use(&ids, &memskill_registry::clock::now());
    memory
}

/// Write a checkpoint's results into `out`; results that pass the error-rate check also go
/// to the run's tracking sinks and the registry.
fn publish(
    cfg: &Config,
    run_dir: &Path,
    ck: &Checkpoint,
    out: &Path,
    results: &EvalResults,
    banks: &[(String, MemoryBank)],
) -> Result<()> {
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    write_results(out, results)?;
    if results.check_error_rate().is_ok() {
        track_eval(cfg, run_dir, ck, results);
        register_eval(cfg, out, results, banks);
    }
    Ok(())
}

/// With a registry configured: one trajectory per evaluated sample and the memories of its
/// bank, each row keyed by the trajectory and the memory id (see `crate::skill_registry`; a
/// failed write only warns).
fn register_eval(cfg: &Config, out: &Path, results: &EvalResults, banks: &[(String, MemoryBank)]) {
    let Some(loc) = cfg.registry.location() else {
        return;
    };
    let view = results.registry_view();
    let run = crate::skill_registry::run_id(out);
    let traces: Vec<String> = banks
        .iter()
        .map(|(s, _)| crate::skill_registry::eval_trace_id(&run, &view, s))
        .collect();
    let memories: Vec<crate::skill_registry::SampleBank<'_>> = banks
        .iter()
        .zip(&traces)
        .map(|((sample, bank), t)| crate::skill_registry::SampleBank {
            sample,
            trace: Some(t),
            bank,
        })
        .collect();
    crate::skill_registry::write_or_warn(
        &loc,
        &crate::skill_registry::RunRecords {
            dataset: Some(&results.dataset),
            eval: Some(view),
            memories: &memories,
            ..crate::skill_registry::RunRecords::new(out, "eval", &cfg.designer.cfg.score)
        },
    );
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// The run directory of a checkpoint directory (`<run>/checkpoints/<step>`; `.` when it has
/// no grandparent).
fn run_dir_of(ck_dir: &Path) -> PathBuf {
    ck_dir
        .parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// What the evaluation adds to a memory bank's cache key: the span mode, and the controller
/// policy when it is not the learned one.
fn membank_extra(cfg: &Config) -> serde_json::Value {
    let mut extra = json!({"span_mode": cfg.eval.span_mode.to_string()});
    if cfg.controller.policy != crate::config::ControllerPolicy::Learned {
        extra["policy"] = json!(cfg.controller.policy);
    }
    extra
}

/// An evaluation's F1, L-J, questions and errors to the run's tracking sinks (`[tracking]`
/// of the checkpoint's config), at the checkpoint's update step, under
/// `eval/<dataset>-<split>`. A tracking failure warns and never fails the evaluation.
fn track_eval(cfg: &Config, run_dir: &Path, ck: &Checkpoint, r: &EvalResults) {
    if cfg.tracking.is_off() {
        return;
    }
    let mut t = crate::tracking::Tracker::open(
        &cfg.tracking,
        true,
        run_dir,
        &cfg.run.name,
        &format!("memskill-{}", cfg.data.dataset.name()),
        &ck.config_toml,
    );
    let o = &r.overall;
    let mut values = vec![
        ("questions".to_string(), o.count as f64),
        ("errors".to_string(), o.errors as f64),
    ];
    if let Some(f1) = o.f1 {
        values.push(("f1".into(), f1));
    }
    if let Some(j) = o.judge {
        values.push(("lj".into(), j));
    }
    t.log_eval(
        &format!("{}-{}", r.dataset, r.split),
        ck.state.update_step,
        &values,
    );
    // the MLflow run was reopened (RUNNING) to log into: mark it finished again
    t.finish(&[]);
}

/// The checkpoint's config with `sets` applied, moved to `dataset` (see [`transfer_to`])
/// when that is another dataset, resolved once.
pub fn eval_config(
    ck: &Checkpoint,
    ck_dir: &Path,
    sets: &[String],
    dataset: Option<Dataset>,
) -> Result<Config> {
    let mut raw = RawConfig::from_text(
        &ck.config_toml,
        &ck_dir.join("config.toml").display().to_string(),
    )?
    .with_sets(sets)?;
    if let Some(d) = dataset {
        transfer_to(&mut raw, d)?;
    }
    raw.resolve()
}

/// Every sample's [`SampleOutcome`] summed over the evaluation.
struct Gathered {
    queries: Vec<QueryResult>,
    hits: usize,
    memory_calls: usize,
    memory_call_errors: usize,
    memories_flagged: usize,
    memories_refused: usize,
    contract_refused: BTreeMap<String, usize>,
    /// (sample, bank) of every sample whose bank was kept (with a registry configured).
    banks: Vec<(String, MemoryBank)>,
}

impl Gathered {
    /// The answered queries in sample order and the summed counts; the first failed
    /// sample's error.
    fn of(per_sample: Vec<Result<SampleOutcome>>) -> Result<Gathered> {
        let mut g = Gathered {
            queries: Vec::new(),
            hits: 0,
            memory_calls: 0,
            memory_call_errors: 0,
            memories_flagged: 0,
            memories_refused: 0,
            contract_refused: BTreeMap::new(),
            banks: Vec::new(),
        };
        for r in per_sample {
            let (q, hit, calls, errs, (flagged, refused, contract), bank) = r?;
            if let Some(kept) = bank {
                g.banks.push(kept);
            }
            g.memories_flagged += flagged;
            g.memories_refused += refused;
            for (k, n) in contract {
                *g.contract_refused.entry(k).or_default() += n;
            }
            g.hits += hit as usize;
            g.memory_calls += calls;
            g.memory_call_errors += errs;
            g.queries.extend(q);
        }
        Ok(g)
    }
}

/// The samples of `split` for an evaluation, cut to the first `limit` queries (in order).
pub fn load_eval_samples(
    cfg: &Config,
    split: SplitSpec,
    limit: Option<usize>,
) -> Result<Vec<Sample>> {
    let mut samples =
        crate::data::load_samples(&cfg.data, split, &cfg.eval.span_mode, cfg.run.seed)?;
    if let Some(limit) = limit {
        let mut left = limit;
        for s in &mut samples {
            let n = s.queries.len().min(left);
            s.queries.truncate(n);
            left -= n;
        }
        samples.retain(|s| !s.queries.is_empty());
    }
    Ok(samples)
}

/// The overall score and the score of each category.
pub fn scores(queries: &[QueryResult]) -> (Score, BTreeMap<String, Score>) {
    let all: Vec<&QueryResult> = queries.iter().collect();
    let mut by_cat: BTreeMap<String, Vec<&QueryResult>> = BTreeMap::new();
    for q in queries {
        by_cat.entry(q.category.clone()).or_default().push(q);
    }
    let by_category = by_cat.iter().map(|(c, v)| (c.clone(), score(v))).collect();
    (score(&all), by_category)
}

/// The marker a failed evaluation leaves in its folder (see [`write_results`]).
pub const FAILED_MARKER: &str = "failed.json";

/// `results.json` and `results.md` into `out`, atomically, and no [`FAILED_MARKER`]. A failed
/// evaluation (too many failed calls, see [`EvalResults::check_error_rate`]) writes no scores:
/// only `failed.json` (what failed and why), which `compare` and `report` show as a failed
/// evaluation, also over the `results.json` an earlier evaluation left in the same folder.
pub fn write_results(out: &Path, results: &EvalResults) -> Result<()> {
    let marker = out.join(FAILED_MARKER);
    if let Err(e) = results.check_error_rate() {
        let failed = serde_json::json!({
            "failed": true,
            "error": format!("{e:#}"),
            "method": results.method,
            "dataset": results.dataset,
            "split": results.split,
            "questions": results.overall.count,
            "answer_errors": results.overall.errors,
            "judge_errors": results.overall.judge_errors,
            "memory_calls": results.memory_calls,
            "memory_call_errors": results.memory_call_errors,
        });
        return write_atomic(&marker, serde_json::to_string_pretty(&failed)?.as_bytes());
    }
    write_atomic(
        &out.join("results.json"),
        serde_json::to_string_pretty(results)?.as_bytes(),
    )?;
    write_atomic(
        &out.join("results.md"),
        render_results_md(results).as_bytes(),
    )?;
    match std::fs::remove_file(&marker) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(e).with_context(|| format!("removing {}", marker.display()))
        }
        _ => Ok(()),
    }
}

/// The failure an evaluation folder's [`FAILED_MARKER`] records, if it has one: one line
/// naming the folder and the error.
pub fn failed_eval(dir: &Path) -> Option<String> {
    let p = dir.join(FAILED_MARKER);
    std::fs::symlink_metadata(&p).ok()?;
    let error = memskill_core::fsio::read_user_text(&p, 1 << 20, "failed-evaluation marker")
        .map_err(|e| e.to_string())
        .and_then(|text| {
            let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
            v.get("error")
                .and_then(|e| e.as_str())
                .map(str::to_string)
                .ok_or_else(|| "no `error` field".to_string())
        })
        .unwrap_or_else(|e| format!("{} could not be read ({e})", p.display()));
    Some(format!(
        "{}: the last evaluation failed: {error}",
        dir.display()
    ))
}

/// One row per (run, evaluation) found under `<run>/eval/*/results.json`: a table of the
/// question-answering evaluations, then one of the ALFWorld evaluations.
/// Also the evaluations that failed (their folder holds a [`FAILED_MARKER`]): listed after the
/// tables and counted in the second value, so that `compare` exits non-zero.
pub fn compare_table(runs: &[PathBuf]) -> Result<(String, usize)> {
    let mut rows = CompareRows::default();
    for run in runs {
        if !rows.add_run(run)? {
            bail!(
                "{}: no eval/*/results.json (run `memskill eval` first)",
                run.display()
            );
        }
    }
    let failed = rows.failed.len();
    Ok((rows.render(), failed))
}

/// The rows of [`compare_table`]: question answering and ALFWorld.
#[derive(Default)]
struct CompareRows {
    qa: Vec<String>,
    alfworld: Vec<String>,
    /// Evaluations whose folder holds a [`FAILED_MARKER`]: listed after the tables.
    failed: Vec<String>,
}

impl CompareRows {
    /// Add a row per evaluation of `run` (in directory order); false when it has none.
    fn add_run(&mut self, run: &Path) -> Result<bool> {
        let mut found = false;
        let Ok(rd) = std::fs::read_dir(run.join("eval")) else {
            return Ok(false);
        };
        let mut dirs: Vec<PathBuf> = rd.filter_map(|e| e.ok()).map(|e| e.path()).collect();
        dirs.sort();
        for d in dirs {
            if let Some(why) = failed_eval(&d) {
                self.failed.push(why);
                found = true;
                continue;
            }
            let p = d.join("results.json");
            let Ok(text) = std::fs::read_to_string(&p) else {
                continue;
            };
            let v: serde_json::Value =
                serde_json::from_str(&text).with_context(|| format!("parsing {}", p.display()))?;
            if v.get("rows").is_some() && v.get("actor").is_some() {
                // An ALFWorld evaluation: success rate and steps per split.
                let r: memskill_alfworld::EvalReport = serde_json::from_value(v)
                    .with_context(|| format!("parsing {}", p.display()))?;
                for g in r.rows.iter().filter(|g| g.task_type.is_none()) {
                    self.alfworld.push(format!(
                        "| {} | {} | alfworld-{} | {} | {:.1} | {:.1} | {} |",
                        run.display(),
                        r.actor,
                        g.split,
                        g.agg.games,
                        100.0 * g.agg.success_rate,
                        g.agg.mean_steps,
                        g.agg.env_errors
                    ));
                }
                found = true;
                continue;
            }
            let r: EvalResults =
                serde_json::from_value(v).with_context(|| format!("parsing {}", p.display()))?;
            self.qa.push(format!(
                "| {} | {} | {}-{} | {} | {} | {} | {} |",
                run.display(),
                r.method,
                r.dataset,
                r.split,
                r.overall.count,
                pct(r.overall.f1),
                pct(r.overall.judge),
                r.overall.errors
            ));
            found = true;
        }
        Ok(found)
    }

    /// The two tables in Markdown (each only when it has rows).
    fn render(self) -> String {
        let mut s = String::new();
        if !self.qa.is_empty() {
            s.push_str(
                "| Run | Method | Eval | n | F1 | L-J | errors |\n|---|---|---|---|---|---|---|\n",
            );
            for r in self.qa {
                s.push_str(&r);
                s.push('\n');
            }
        }
        if !self.alfworld.is_empty() {
            if !s.is_empty() {
                s.push('\n');
            }
            s.push_str(
                "| Run | Actor | Eval | games | SR (%) | #Steps | env errors |\n|---|---|---|---|---|---|---|\n",
            );
            for r in self.alfworld {
                s.push_str(&r);
                s.push('\n');
            }
        }
        if !self.failed.is_empty() {
            if !s.is_empty() {
                s.push('\n');
            }
            s.push_str("Failed evaluations (no result):\n");
            for f in self.failed {
                s.push_str(&format!("- FAILED {f}\n"));
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 27: the evaluation memory cache stored a flagged secret verbatim.
    #[test]
    fn the_memory_cache_never_holds_a_flagged_secret() {
        let mut memory = MemoryBank::new();
        let prov = memskill_core::Provenance {
            span_id: "s:0".into(),
            skills: vec![],
            step: 0,
            observed_at: None,
        };
        let id = memory
            .insert("Bob's password is hunter2.".into(), vec![1.0], prov)
            .unwrap();
        memory
            .set_flag(id, Some("secret: password".into()))
            .unwrap();
        let built = BuiltMemory {
            memory,
            transitions: vec![],
            outcomes: vec![],
            chosen: vec![],
            call_errors: 0,
            parse_problems: 0,
            errors: vec![],
            flagged: 1,
            refused: 0,
            contract_refused: Default::default(),
            span_tokens: vec![],
            sample_id: "s".into(),
            span_ids: vec![],
            span_log: vec![],
        };
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("membank.json");
        let got = cached_memory(&path, "s", || Ok(built)).unwrap();
        assert!(!got.memory.get(id).unwrap().content.contains("hunter2"));
        let cached = std::fs::read_to_string(&path).unwrap();
        assert!(
            !cached.contains("hunter2") && cached.contains("[REDACTED:"),
            "{cached}"
        );
    }

    #[test]
    fn transfer_evaluation_takes_the_target_datasets_reference_settings() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs");
        let raw = |sets: &[String]| {
            RawConfig::from_file(&dir.join("locomo.toml"))
                .unwrap()
                .with_sets(sets)
                .unwrap()
        };
        let locomo = raw(&[]).resolve().unwrap();
        assert_eq!((locomo.eval.top_k, locomo.answer.max_tokens), (7, Some(32)));
        let ds = |n: &str| n.parse::<Dataset>().unwrap();
        let moved = |d: &str, sets: &[String]| {
            let mut r = raw(sets);
            transfer_to(&mut r, ds(d)).unwrap();
            r.resolve().unwrap()
        };
        // the config's own dataset is no move: its file and K stay (`skills eval --dataset`
        // moved it anyway and put the default file in)
        let mut own = RawConfig::from_text(
            "[data]\ndataset = \"locomo\"\npath = \"mine.json\"\n[eval]\ntop_k = 3\n",
            "own.toml",
        )
        .unwrap();
        transfer_to(&mut own, ds("locomo")).unwrap();
        let own = own.resolve().unwrap();
        assert_eq!((own.data.path.as_str(), own.eval.top_k), ("mine.json", 3));
        let c = moved("longmemeval", &[]);
        assert_eq!(c.data.dataset, ds("longmemeval"));
        assert_eq!(c.eval.top_k, 5, "eval_longmemeval.sh --action-top-k 5");
        assert_eq!(c.answer_max_tokens(ds("longmemeval")), 512);
        assert_eq!(c.data.path, "longmemeval/longmemeval_s_cleaned.json");
        let c = moved("hotpotqa", &[]);
        assert_eq!(
            (c.eval.top_k, c.answer_max_tokens(ds("hotpotqa"))),
            (7, 512)
        );
        // what --set gives is kept
        let sets = vec![
            "eval.top_k=3".to_string(),
            "data.path=\"x.json\"".to_string(),
            "answer.max_tokens=64".to_string(),
        ];
        let c = moved("longmemeval", &sets);
        assert_eq!(
            (c.eval.top_k, c.data.path.as_str(), c.answer.max_tokens),
            (3, "x.json", Some(64))
        );
    }

    #[test]
    fn context_docs_counts_hotpotqa_documents() {
        let fx = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../datasets/tests/fixtures/hotpotqa_longbench_small.jsonl");
        let all = memskill_datasets::load_hotpotqa(&fx).unwrap();
        // "Passage 1..3" in one context string: 3 documents
        assert_eq!(context_docs(&all[..1]), Some(3));
        // other datasets: none
        let syn = crate::synthetic::dataset(1, 2, 0);
        assert_eq!(context_docs(&syn), None);
        assert_eq!(context_docs(&[]), None);
    }

    fn q(f1: Option<f64>, judge: Option<f64>, error: bool, judge_error: bool) -> QueryResult {
        QueryResult {
            sample_id: "s".into(),
            query_id: "q".into(),
            question: String::new(),
            gold: String::new(),
            category: "1".into(),
            prediction: String::new(),
            f1,
            judge,
            score: f1,
            retrieved: vec![],
            error: error.then(|| "answer call failed".to_string()),
            judge_error: judge_error.then(|| "verdict unreadable".to_string()),
            evidence: String::new(),
            answered_by: None,
            source_spans: Vec::new(),
            memory_ids: Vec::new(),
        }
    }

    #[test]
    fn an_unreadable_verdict_is_a_judge_error_not_a_zero_and_keeps_the_f1() {
        let rs = [
            q(Some(1.0), Some(1.0), false, false),
            q(Some(0.5), None, false, true),
            q(None, None, true, false),
        ];
        let refs: Vec<&QueryResult> = rs.iter().collect();
        let s = score(&refs);
        assert_eq!(s.count, 3);
        assert_eq!(s.f1, Some(0.75));
        assert_eq!(s.judge, Some(1.0));
        assert_eq!((s.errors, s.judge_errors), (1, 1));
    }
}
