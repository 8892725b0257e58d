//! Runs write into the governance registry (`memskill-registry`) when one is configured
//! (`[registry] url`, else the `MEMSKILL_REGISTRY` variable): training at every checkpoint
//! and at the end (the bank with its releases and eval runs, the invocation log as
//! invocations and one trajectory per scored episode), evaluation after `results.json`
//! (one trajectory per sample), `skills eval` (its eval runs) and imports (the bank).
//!
//! The run's files stay the record: the registry indexes them. Its writes are idempotent, so
//! a failed write (a registry server down) warns and the run goes on; the next checkpoint, or
//! `memskill registry ingest RUN` later, writes what is missing.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result};
use memskill_core::{sha256_hex, SkillBank};
use memskill_designer::ScoreWeights;
use memskill_registry::ingest::{
    self, Batch, Counts, InvocationRecord, MemoryRecord, SourceRun, TrajectoryRecord,
};
use memskill_registry::Location;
use serde_json::{json, Value};

use crate::episode::QueryResult;
use crate::invocations::Invocation;

/// A run directory's registry id: its folder name and a short hash of its absolute path
/// (two machines' `runs/a` are two runs; the same folder written twice is one).
pub fn run_id(dir: &Path) -> String {
    let abs = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let name = abs
        .file_name()
        .map_or("run".into(), |n| n.to_string_lossy().to_string());
    format!(
        "{name}-{}",
        &sha256_hex(abs.to_string_lossy().as_bytes())[..8]
    )
}

/// What a run writes.
pub struct RunRecords<'a> {
    pub dir: &'a Path,
    /// `train`, `eval`, `skills-eval`, `import`.
    pub kind: &'a str,
    /// The benchmark (`None` where the folder does not say, e.g. `registry ingest` of a
    /// `skills eval` folder).
    pub dataset: Option<&'a str>,
    pub bank: Option<&'a SkillBank>,
    pub weights: &'a ScoreWeights,
    pub invocations: &'a [Invocation],
    /// The line of the log (0-based) `invocations` starts at: a trainer sends only the lines
    /// written since its last write (the ids are line numbers).
    pub first_line: usize,
    pub eval: Option<EvalView<'a>>,
    /// Memory banks, each a sample's (a bank file, an evaluated sample, a training episode).
    pub memories: &'a [SampleBank<'a>],
}

/// One memory bank the registry's `memory` table takes, row by row.
#[derive(Debug, Clone, Copy)]
pub struct SampleBank<'a> {
    pub sample: &'a str,
    /// The trajectory it belongs to (its trace id: the rows' ids are `<trace>:mem:<id>`, one
    /// set per trajectory); None for a bank file (`<run>:<sample>:<id>`).
    pub trace: Option<&'a str>,
    pub bank: &'a memskill_core::MemoryBank,
}

/// What the registry takes of an evaluation's results (`results.json`).
#[derive(Debug, Clone, Copy)]
pub struct EvalView<'a> {
    /// The evaluated checkpoint's hash (another checkpoint evaluated into the same folder
    /// gives other trajectories).
    pub checkpoint: &'a str,
    pub method: &'a str,
    pub dataset: &'a str,
    pub split: &'a str,
    pub queries: &'a [QueryResult],
}

impl<'a> RunRecords<'a> {
    /// A write of `kind` from `dir` with nothing in it yet (set the fields it brings).
    pub fn new(dir: &'a Path, kind: &'a str, weights: &'a ScoreWeights) -> Self {
        RunRecords {
            dir,
            kind,
            dataset: None,
            bank: None,
            weights,
            invocations: &[],
            first_line: 0,
            eval: None,
            memories: &[],
        }
    }
}

/// Write a run's records (one transaction); returns the rows that were new.
pub fn write(loc: &Location, r: &RunRecords<'_>) -> Result<Counts> {
    let run = SourceRun {
        id: run_id(r.dir),
        kind: r.kind.to_string(),
        path: std::fs::canonicalize(r.dir)
            .unwrap_or_else(|_| r.dir.to_path_buf())
            .display()
            .to_string(),
        dataset: r.dataset.map(str::to_string),
    };
    let mut trajectories = training_trajectories(&run.id, r.dataset.unwrap_or("-"), r.invocations);
    if let Some(e) = &r.eval {
        trajectories.extend(eval_trajectories(&run.id, e));
    }
    let batch = Batch {
        invocations: invocation_records(&run.id, r.invocations, r.first_line),
        trajectories,
        memories: r
            .memories
            .iter()
            .flat_map(|b| memory_records(&run.id, b))
            .collect(),
        owns_history: matches!(r.kind, "train" | "import"),
        skill_md: r.bank.map(skill_md).unwrap_or_default(),
        eval_summaries: r
            .bank
            .map(|b| score_summaries(b, r.weights))
            .unwrap_or_default(),
        bank: r.bank,
        run,
    };
    let mut db = memskill_registry::open_for_write(loc)?;
    ingest::write(&mut db, &batch, &memskill_registry::clock::now())
}

/// [`write`], with a failure turned into a warning that says how to write the records later.
pub fn write_or_warn(loc: &Location, r: &RunRecords<'_>) -> bool {
    let res = write(loc, r);
    if let Err(e) = &res {
        eprintln!(
            "warning: could not write to the registry {}: {e:#}\n  the run's files are complete; write them later with `memskill registry ingest {} --registry {}`",
            loc.display(),
            r.dir.display(),
            loc.display()
        );
    }
    res.is_ok()
}

fn skill_md(bank: &SkillBank) -> BTreeMap<String, String> {
    bank.skills()
        .iter()
        .map(|s| {
            (
                s.name.clone(),
                memskill_designer::export::render_skill_md(s),
            )
        })
        .collect()
}

/// For each skill's current version: its skill score and terms, under the id of the eval
/// run they come from.
fn score_summaries(bank: &SkillBank, w: &ScoreWeights) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    for s in bank.skills() {
        let Some(terms) = memskill_designer::gate::score_terms(bank, &s.name, w) else {
            continue;
        };
        let Some(run) = bank
            .eval_runs
            .iter()
            .rev()
            .find(|r| r.skill == s.name && r.version == s.version)
        else {
            continue;
        };
        let total: f64 = terms.iter().map(|t| t.contribution).sum();
        let terms: Vec<Value> = terms
            .iter()
            .map(|t| json!({"term": t.name, "value": t.value, "weight": t.weight, "contribution": t.contribution}))
            .collect();
        out.insert(run.id.clone(), json!({"score": total, "terms": terms}));
    }
    out
}

/// The trajectory of a training episode (update `step`, 1-based, and its sample).
pub fn trace_id(run: &str, step: u64, sample: &str) -> String {
    format!("{run}:train:{step}:{sample}")
}

/// The trajectory of an evaluated sample.
pub fn eval_trace_id(run: &str, e: &EvalView<'_>, sample: &str) -> String {
    format!(
        "{run}:eval:{}:{}:{sample}",
        e.split,
        e.checkpoint.get(..12).unwrap_or(e.checkpoint)
    )
}

/// One invocation per line of the log (ids are the line numbers: the log is append-only,
/// and a resumed run rewrites the same lines).
fn invocation_records(run: &str, log: &[Invocation], first: usize) -> Vec<InvocationRecord> {
    log.iter()
        .enumerate()
        .map(|(i, x)| InvocationRecord {
            id: format!("{run}:inv:{}", first + i + 1),
            skill: x.skill.clone(),
            skill_version: x.version.clone(),
            trace_id: trace_id(run, x.step, &x.sample_id),
            reason: if x.selected.contains(&x.skill) {
                format!(
                    "selected by the controller with [{}]",
                    x.selected.join(", ")
                )
            } else {
                format!(
                    "brought by a bundle with the controller's pick [{}]",
                    x.selected.join(", ")
                )
            },
            activation_score: None,
            outcome_status: if x.score.is_some() {
                "answered"
            } else {
                "unused"
            }
            .into(),
            metrics: json!({
                "step": x.step,
                "span": x.span_id,
                "actions": x.actions,
                "tokens": x.tokens,
                "questions": x.questions,
                "score": x.score,
            }),
        })
        .collect()
}

/// One trajectory per (update, sample) of the invocation log: its spans, the skills and
/// actions of each, tokens and the mean score of the questions its memories answered.
fn training_trajectories(run: &str, dataset: &str, log: &[Invocation]) -> Vec<TrajectoryRecord> {
    let mut by: BTreeMap<(u64, &str), Vec<&Invocation>> = BTreeMap::new();
    for x in log {
        by.entry((x.step, &x.sample_id)).or_default().push(x);
    }
    by.into_iter()
        .map(|((step, sample), xs)| {
            let mut spans: Vec<Value> = Vec::new();
            let (mut tokens, mut scores) = (0u64, Vec::new());
            let mut last_span = None;
            for x in xs {
                if last_span == Some(&x.span_id) {
                    continue;
                }
                last_span = Some(&x.span_id);
                tokens += x.tokens;
                scores.extend(x.score);
                spans.push(json!({"span": x.span_id, "skills": x.selected, "actions": x.actions}));
            }
            let mean =
                (!scores.is_empty()).then(|| scores.iter().sum::<f64>() / scores.len() as f64);
            TrajectoryRecord {
                trace_id: trace_id(run, step, sample),
                task_type: format!("train:{dataset}"),
                task_summary: format!("sample {sample}, update {step}"),
                tool_calls: json!(spans
                    .iter()
                    .map(|s| s["actions"].clone())
                    .collect::<Vec<_>>()),
                messages: Value::Array(spans),
                errors: json!([]),
                outcome_status: if mean.is_some() { "scored" } else { "unscored" }.into(),
                metrics: json!({"step": step, "tokens": tokens, "mean_span_score": mean}),
            }
        })
        .collect()
}

/// One trajectory per evaluated sample: its questions, predictions and scores.
fn eval_trajectories(run: &str, e: &EvalView<'_>) -> Vec<TrajectoryRecord> {
    let mut by: BTreeMap<&str, Vec<&QueryResult>> = BTreeMap::new();
    for q in e.queries {
        by.entry(&q.sample_id).or_default().push(q);
    }
    by.into_iter()
        .map(|(sample, qs)| {
            let scores: Vec<f64> = qs.iter().filter_map(|q| q.score).collect();
            let errors: Vec<Value> = qs
                .iter()
                .filter_map(|q| q.error.as_ref().map(|x| json!({"query": q.query_id, "error": x})))
                .collect();
            let mean = (!scores.is_empty()).then(|| scores.iter().sum::<f64>() / scores.len() as f64);
            TrajectoryRecord {
                trace_id: eval_trace_id(run, e, sample),
                task_type: format!("eval:{}", e.dataset),
                task_summary: format!("sample {sample}, {} questions ({} split)", qs.len(), e.split),
                messages: json!(qs
                    .iter()
                    .map(|q| json!({"query": q.query_id, "question": q.question, "prediction": q.prediction, "score": q.score}))
                    .collect::<Vec<_>>()),
                tool_calls: json!([]),
                outcome_status: if errors.is_empty() { "answered" } else { "errors" }.into(),
                errors: Value::Array(errors),
                metrics: json!({"questions": qs.len(), "mean_score": mean, "method": e.method}),
            }
        })
        .collect()
}

/// The log's whole lines from byte `from` (where an earlier read ended) up to byte `to` (what
/// a checkpoint covers; None: the end), and the byte they end at (where the next read starts).
/// No log yet: none.
pub fn read_invocations_from(
    dir: &Path,
    from: u64,
    to: Option<u64>,
) -> Result<(Vec<Invocation>, u64)> {
    let p = dir.join("invocations.jsonl");
    if !p.exists() {
        return Ok((Vec::new(), 0));
    }
    let bytes = std::fs::read(&p).with_context(|| format!("reading {}", p.display()))?;
    let limit = to.map_or(bytes.len(), |t| {
        usize::try_from(t).unwrap_or(usize::MAX).min(bytes.len())
    });
    let start = usize::try_from(from).unwrap_or(usize::MAX).min(limit);
    // only whole lines: a line being written now is read next time
    let end = bytes[start..limit]
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(start, |i| start + i + 1);
    let text = std::str::from_utf8(&bytes[start..end])
        .with_context(|| format!("{}: not UTF-8", p.display()))?;
    let log = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            serde_json::from_str(l)
                .with_context(|| format!("{}: a line does not parse", p.display()))
        })
        .collect::<Result<Vec<Invocation>>>()?;
    Ok((log, end as u64))
}

/// One record per memory of a sample's bank, forgotten and deleted ones included.
fn memory_records(run: &str, b: &SampleBank<'_>) -> Vec<MemoryRecord> {
    let (sample, bank) = (b.sample, b.bank);
    bank.all()
        .iter()
        .map(|m| {
            let forgotten = bank.forgotten.iter().any(|f| f.memory_id == m.id);
            let status = match (&m.deleted, &m.flag) {
                _ if forgotten => "forgotten",
                (Some(_), _) => "deleted",
                (None, Some(_)) => "flagged",
                (None, None) => "live",
            };
            MemoryRecord {
                id: match b.trace {
                    Some(t) => format!("{t}:mem:{}", m.id),
                    None => format!("{run}:{sample}:{}", m.id),
                },
                source_trace_ids: json!(b.trace.into_iter().collect::<Vec<_>>()),
                use_count: m.use_count,
                last_used_at: m.last_used_at.clone(),
                sample_id: sample.to_string(),
                scope_user: m.scope.user.clone(),
                scope_org: m.scope.org.clone(),
                scope_project: m.scope.project.clone(),
                kind: m.kind.map_or("untyped", |k| k.as_str()).to_string(),
                content: m.content.clone(),
                source_event_ids: json!(m.source_spans),
                confidence: m.confidence.map(f64::from),
                sensitivity: m.sensitivity.as_str().to_string(),
                valid_from: m.valid_from.clone(),
                valid_to: m.valid_to.clone(),
                supersedes: json!(m.history.iter().map(|r| &r.content).collect::<Vec<_>>()),
                status: status.to_string(),
                embedding: m.embedding.iter().flat_map(|x| x.to_le_bytes()).collect(),
            }
        })
        .collect()
}
