//! Baselines in the evaluation harness (issue 15, item 2): the same samples, spans,
//! answerer, retrieval budget and scorer as `memskill eval`, so a difference in score is the
//! memory method alone. No checkpoint: the config names the dataset and the models.
//!
//! - `no-memory`: every question is answered with no memory at all;
//! - `raw-rag`: every span is stored verbatim as one memory (no executor), and each question
//!   retrieves the top `answer.retrieve` spans;
//! - `static-skills`: the initial skill bank with every skill applied to every span (no
//!   controller, no designer): the executor's memories with fixed skills;
//! - `chain-of-notes` and `read-agent`: the reading methods of [`crate::readers`];
//! - `memorybank`: MemoryBank's store, forgetting curve and retrieval ([`crate::memorybank`]).

use std::path::PathBuf;
use std::sync::Mutex;

use anyhow::{bail, Context, Result};
use memskill_controller::Controller;
use memskill_core::{MemoryBank, Provenance, Query, Sample, Skill, TextEncoder};

use crate::backends::embed;
use crate::config::{Config, SplitSpec};
use crate::episode::{answer_queries, build_memory, par_map, EpisodeCtx, QueryResult};
use crate::eval::{eval_ctx, load_eval_samples, scores, write_results, EvalResults};
use crate::runtime::{initial_bank, Runtime};

/// A memory method that needs no training.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Baseline {
    NoMemory,
    RawRag,
    StaticSkills,
    ChainOfNotes,
    ReadAgent,
    MemoryBank,
}

impl Baseline {
    pub const NAMES: [&'static str; 6] = [
        "no-memory",
        "raw-rag",
        "static-skills",
        "chain-of-notes",
        "read-agent",
        "memorybank",
    ];

    /// The baseline a `--method` name selects, if it is one.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "no-memory" => Some(Self::NoMemory),
            "raw-rag" => Some(Self::RawRag),
            "static-skills" => Some(Self::StaticSkills),
            "chain-of-notes" => Some(Self::ChainOfNotes),
            "read-agent" => Some(Self::ReadAgent),
            "memorybank" => Some(Self::MemoryBank),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::NoMemory => "no-memory",
            Self::RawRag => "raw-rag",
            Self::StaticSkills => "static-skills",
            Self::ChainOfNotes => "chain-of-notes",
            Self::ReadAgent => "read-agent",
            Self::MemoryBank => "memorybank",
        }
    }
}

/// What to evaluate.
#[derive(Debug, Clone, Default)]
pub struct BaselineOptions {
    pub split: Option<SplitSpec>,
    pub limit: Option<usize>,
    /// Output dir; None = `<runs_dir>/baselines/<method>/<dataset>-<split>`.
    pub out: Option<PathBuf>,
    pub runs_dir: PathBuf,
    pub no_judge: bool,
    /// Set (the CLI's signal handler) to stop before the next sample, span or question: the
    /// evaluation then fails with [`crate::stop::Interrupted`] and writes no results.
    pub stop: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

/// Evaluate `baseline` on the config's dataset. Returns the results and their directory.
pub fn evaluate_baseline(
    baseline: Baseline,
    cfg: &Config,
    opts: &BaselineOptions,
) -> Result<(EvalResults, PathBuf)> {
    let (cfg, skills) = baseline_config(baseline, cfg)?;
    let top_k = if baseline == Baseline::StaticSkills {
        skills.len()
    } else {
        0
    };
    let (results, out) = run_method(
        baseline.name(),
        &cfg,
        &skills,
        opts,
        top_k,
        &|ctx, rt, sample, want_judge| {
            let qs: Vec<&Query> = sample.queries.iter().collect();
            match baseline {
                Baseline::ChainOfNotes => {
                    let memory = raw_rag_memory(rt.encoder.as_ref(), sample)?;
                    let answers = crate::readers::chain_of_notes_answers(
                        ctx, sample, &memory, &qs, want_judge,
                    )?;
                    Ok((answers, 0, 0))
                }
                Baseline::ReadAgent => {
                    let pages = crate::readers::read_agent_pages(ctx, sample)?;
                    let answers =
                        crate::readers::read_agent_answers(ctx, sample, &pages, &qs, want_judge)?;
                    Ok((answers, pages.calls, pages.errors))
                }
                Baseline::MemoryBank => {
                    let store = crate::memorybank::build(ctx.executor, ctx.prompts, sample)?;
                    let forgetting = cfg.eval.memorybank_forgetting;
                    let answers = crate::memorybank::answers(
                        ctx, sample, &store, forgetting, &qs, want_judge,
                    )?;
                    Ok((answers, store.calls, store.errors))
                }
                _ => {
                    let (memory, calls, errors) =
                        baseline_memory(baseline, ctx, rt.encoder.as_ref(), sample)?;
                    Ok((
                        answer_queries(ctx, sample, &memory, &qs, want_judge)?,
                        calls,
                        errors,
                    ))
                }
            }
        },
    )?;
    write_results(&out, &results)?;
    Ok((results, out))
}

/// One sample's answered questions, with the memory-building calls (or requests) made and
/// how many of them failed.
pub type SampleAnswers = (Vec<QueryResult>, usize, usize);

/// How a checkpoint-free method treats one sample: builds its memory its own way, then
/// answers its questions through the episode context (memskill's answer prompt, answerer,
/// scorer and judge). Arguments: the context, the runtime, the sample, whether to judge.
pub type PerSample<'f> =
    dyn Fn(&EpisodeCtx<'_>, &Runtime, &Sample, bool) -> Result<SampleAnswers> + Sync + 'f;

/// The harness of every checkpoint-free method (the baselines here, external memory
/// systems in `adapter`): the config's samples, runtime, answerer and judge, `per_sample`
/// on each sample, the scores. Returns the results (not yet written) and their directory,
/// created: `opts.out`, else `<runs_dir>/baselines/<method>/<dataset>-<split>`.
pub fn run_method(
    method: &str,
    cfg: &Config,
    skills: &[Skill],
    opts: &BaselineOptions,
    top_k: usize,
    per_sample: &PerSample<'_>,
) -> Result<(EvalResults, PathBuf)> {
    let bench = cfg.data.dataset.descriptor();
    if bench.interactive {
        bail!(
            "--method {method}: the QA baselines do not apply to {}",
            bench.title
        );
    }
    let split = opts.split.unwrap_or(cfg.eval.split);
    let samples = load_eval_samples(cfg, split, opts.limit)?;
    let out = out_dir(method, cfg, opts, split);
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    let want_judge = !opts.no_judge && cfg.eval.judge;
    let rt = Runtime::build(cfg, &out, samples.clone(), want_judge)?;
    rt.probe_endpoints()?;
    let descs: Vec<&str> = skills.iter().map(|s| s.description.as_str()).collect();
    let embs = std::sync::Arc::new(embed(rt.encoder.as_ref(), &descs)?);
    let mut controller = Controller::new(rt.encoder.dim(), &cfg.policy, &cfg.ppo, cfg.run.seed)?;
    let lock = Mutex::new(&mut controller);
    let ctx = EpisodeCtx {
        stop: opts.stop.as_deref(),
        ..eval_ctx(cfg, &rt, &lock, skills, embs)
    };
    let answered = par_map(&samples, cfg.concurrency.episodes, |_, sample| {
        crate::stop::check(ctx.stop, || format!("sample {}", sample.id))?;
        per_sample(&ctx, &rt, sample, want_judge)
    });
    let (queries, memory_calls, memory_call_errors) = gather(answered)?;
    crate::stop::check(ctx.stop, || "writing the results".into())?;
    let (overall, by_category) = scores(&queries);
    let results = EvalResults {
        method: method.into(),
        checkpoint: String::new(),
        checkpoint_hash: String::new(),
        dataset: cfg.data.dataset.name(),
        split: split.to_string(),
        span_mode: cfg.eval.span_mode.to_string(),
        top_k,
        retrieve: cfg.answer.retrieve,
        executor: rt.executor_id.clone(),
        executor_backend: Some(cfg.executor.backend.name().to_string()),
        judge_model: crate::eval::judge_model(cfg, want_judge),
        judge_is_reference: crate::eval::judge_is_reference(cfg, want_judge),
        overall,
        by_category,
        memory_cache_hits: 0,
        memory_calls,
        memory_call_errors,
        memories_flagged: 0,
        memories_refused: 0,
        contract_refused: Default::default(),
        contract_withheld: ctx.withheld(),
        contract_expired: ctx.contract_reads().contract_expired,
        contract_sensitive_withheld: ctx.contract_reads().contract_sensitive_withheld,
        contract_stale_shown: ctx.contract_reads().contract_stale_shown,
        max_error_rate: cfg.eval.max_error_rate,
        prompts_overridden: rt.prompts.overridden().to_vec(),
        prompts_hash: rt.prompts.content_hash(),
        context_docs: crate::eval::context_docs(&samples),
        adapter: None,
        queries,
    };
    Ok((results, out))
}

/// The config the baseline runs with (no designer; for `static-skills` the random policy
/// with K = every selectable skill) and the initial bank's selectable skills.
pub fn baseline_config(baseline: Baseline, cfg: &Config) -> Result<(Config, Vec<Skill>)> {
    let mut cfg = cfg.clone();
    cfg.designer.enabled = false;
    let bank = initial_bank(&cfg)?;
    let skills: Vec<Skill> = bank.selectable().into_iter().cloned().collect();
    if baseline == Baseline::StaticSkills {
        // every skill, every span: the random policy with K = the bank draws all of them
        cfg.controller.policy = crate::config::ControllerPolicy::Random;
        cfg.eval.top_k = skills.len();
        cfg.controller.top_k = skills.len();
    }
    Ok((cfg, skills))
}

/// Every sample's answered questions in order, with the memory-building calls and their
/// failures summed; the first failed sample's error.
fn gather(per_sample: Vec<Result<SampleAnswers>>) -> Result<SampleAnswers> {
    let mut queries = Vec::new();
    let (mut memory_calls, mut memory_call_errors) = (0, 0);
    for r in per_sample {
        let (q, c, e) = r?;
        memory_calls += c;
        memory_call_errors += e;
        queries.extend(q);
    }
    Ok((queries, memory_calls, memory_call_errors))
}

/// Where the results go: `opts.out`, else `<runs_dir>/baselines/<method>/<dataset>-<split>`.
fn out_dir(method: &str, cfg: &Config, opts: &BaselineOptions, split: SplitSpec) -> PathBuf {
    opts.out.clone().unwrap_or_else(|| {
        opts.runs_dir
            .join("baselines")
            .join(method)
            .join(format!("{}-{split}", cfg.data.dataset.name()))
    })
}

/// The memory `baseline` answers one sample's questions from, with the memory-building
/// calls made and how many of them failed.
fn baseline_memory(
    baseline: Baseline,
    ctx: &EpisodeCtx<'_>,
    encoder: &dyn TextEncoder,
    sample: &Sample,
) -> Result<(MemoryBank, usize, usize)> {
    Ok(match baseline {
        Baseline::NoMemory => (MemoryBank::new(), 0, 0),
        Baseline::RawRag => (raw_rag_memory(encoder, sample)?, 0, 0),
        Baseline::StaticSkills => {
            let built = build_memory(ctx, sample, None)?;
            (built.memory, sample.spans.len(), built.call_errors)
        }
        // answered by their own readers (`evaluate_baseline`); their memory is the spans
        Baseline::ChainOfNotes | Baseline::ReadAgent | Baseline::MemoryBank => {
            (raw_rag_memory(encoder, sample)?, 0, 0)
        }
    })
}

/// `raw-rag`: every span of the sample stored verbatim as one memory.
fn raw_rag_memory(encoder: &dyn TextEncoder, sample: &Sample) -> Result<MemoryBank> {
    let texts: Vec<&str> = sample.spans.iter().map(|s| s.text.as_str()).collect();
    let embs = embed(encoder, &texts)?;
    let mut m = MemoryBank::new();
    for (span, e) in sample.spans.iter().zip(embs) {
        let prov = Provenance {
            span_id: span.id.clone(),
            skills: Vec::new(),
            step: 0,
            observed_at: span.date.clone(),
        };
        m.insert(span.text.clone(), e, prov)?;
    }
    Ok(m)
}
