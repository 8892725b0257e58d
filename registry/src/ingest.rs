//! Writing what a run produced into the registry: its skill bank (skills, every version's
//! text, release records, eval runs and their cases), its skill invocations and trajectories.
//!
//! Every record has an id derived from the run and the record itself, and is inserted with
//! `ON CONFLICT DO NOTHING`, so writing the same run again (each checkpoint, a resumed run,
//! `registry ingest` of an old run) adds only what is new. One [`write`] is one transaction
//! under the registry's write lock: two trainers writing at once queue, and a failed write
//! leaves nothing behind.
//!
//! A skill's row (its current version and status) follows the newest release record written
//! for it: a run changes the row only when it brings a new release for that skill, so a run
//! ingested again never undoes a later `registry deprecate`.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::Result;
use memskill_core::{sha256_hex, CompareMode, EvalRun, ReleaseKind, ReleaseRecord, SkillBank};
use serde::Serialize;
use serde_json::{json, Value};

use crate::db::{Db, Param};
use crate::migrate::lock_for_write;

/// The run directory a batch comes from.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceRun {
    /// Stable across rewrites of the same run (see `memskill_trainer`'s `registry_sync`).
    pub id: String,
    /// `train`, `eval`, `skills-eval`, `import`.
    pub kind: String,
    pub path: String,
    pub dataset: Option<String>,
}

/// One use of a skill (design table `skill_invocation`).
#[derive(Debug, Clone, PartialEq)]
pub struct InvocationRecord {
    pub id: String,
    pub skill: String,
    pub skill_version: Option<String>,
    pub trace_id: String,
    /// Why the skill was active (e.g. `selected by the controller with [a, b]`).
    pub reason: String,
    pub activation_score: Option<f64>,
    pub outcome_status: String,
    pub metrics: Value,
}

/// One episode (design table `trajectory`).
#[derive(Debug, Clone, PartialEq)]
pub struct TrajectoryRecord {
    pub trace_id: String,
    pub task_type: String,
    pub task_summary: String,
    pub messages: Value,
    pub tool_calls: Value,
    pub errors: Value,
    pub outcome_status: String,
    pub metrics: Value,
}

/// One memory of a sample's memory bank (design table `memory`).
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryRecord {
    /// `<source run>:<sample>:<memory id>`.
    pub id: String,
    pub sample_id: String,
    pub scope_user: Option<String>,
    pub scope_org: Option<String>,
    pub scope_project: Option<String>,
    /// One of the seven memory types, or `untyped`.
    pub kind: String,
    /// Empty for a forgotten memory.
    pub content: String,
    /// The spans that wrote it.
    pub source_event_ids: Value,
    pub confidence: Option<f64>,
    pub sensitivity: String,
    pub valid_from: Option<String>,
    pub valid_to: Option<String>,
    /// Earlier texts, oldest first (empty for a forgotten memory).
    pub supersedes: Value,
    /// `live`, `deleted`, `flagged` or `forgotten`.
    pub status: String,
    pub embedding: Vec<u8>,
    /// The trajectories the memory belongs to (an evaluated sample's or a training episode's
    /// trace id; empty for a bank file).
    pub source_trace_ids: Value,
    /// How many times the answerer was given it, and when last.
    pub use_count: u64,
    pub last_used_at: Option<String>,
}

/// What one write brings.
#[derive(Debug, Clone)]
pub struct Batch<'a> {
    pub run: SourceRun,
    pub bank: Option<&'a SkillBank>,
    /// Whether the bank's release records and eval runs are this run's own (a training run,
    /// an import) or came with a bank it only used (`skills eval` writes just its own eval
    /// runs, which the caller puts in the bank's `eval_runs`).
    pub owns_history: bool,
    /// Each bank skill's Agent Skills `SKILL.md` text, by name.
    pub skill_md: BTreeMap<String, String>,
    /// Extra summary per eval run id (e.g. the skill score and its terms).
    pub eval_summaries: BTreeMap<String, Value>,
    pub invocations: Vec<InvocationRecord>,
    pub trajectories: Vec<TrajectoryRecord>,
    pub memories: Vec<MemoryRecord>,
}

/// Rows a write inserted (records already present are not counted).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub skills: u64,
    pub skill_versions: u64,
    pub releases: u64,
    pub eval_runs: u64,
    pub eval_cases: u64,
    pub invocations: u64,
    pub trajectories: u64,
    pub memories: u64,
}

impl Counts {
    /// Add another write's counts.
    pub fn add(&mut self, o: &Counts) {
        self.skills += o.skills;
        self.skill_versions += o.skill_versions;
        self.releases += o.releases;
        self.eval_runs += o.eval_runs;
        self.eval_cases += o.eval_cases;
        self.invocations += o.invocations;
        self.trajectories += o.trajectories;
        self.memories += o.memories;
    }
    pub fn total(&self) -> u64 {
        self.skills
            + self.skill_versions
            + self.releases
            + self.eval_runs
            + self.eval_cases
            + self.invocations
            + self.trajectories
            + self.memories
    }
}

/// The design's `release_type` of one of memskill's release kinds (the kind itself is kept
/// in the `kind` column).
pub fn release_type(r: &ReleaseRecord) -> &'static str {
    match r.kind {
        ReleaseKind::Seeded | ReleaseKind::Added => "create",
        ReleaseKind::Refined => match r.from_version {
            Some(f) if f.major != r.to_version.major => "major_edit",
            _ => "patch",
        },
        ReleaseKind::Restored => "rollback",
        ReleaseKind::Deprecated => "deprecate",
        ReleaseKind::Archived => "archive",
        ReleaseKind::Promoted => "promote",
        ReleaseKind::Canaried | ReleaseKind::GateFailed => "gate",
        ReleaseKind::Drafted | ReleaseKind::Validated | ReleaseKind::Rejected => "proposal",
        ReleaseKind::Approved | ReleaseKind::Held => "review",
        ReleaseKind::Merged => "merge",
        ReleaseKind::Split => "split",
        ReleaseKind::Bundled => "bundle",
    }
}

/// Who decided a release the run recorded: the person where one approved it, `seed` for the
/// seed bank, else `eval_gate` (the designer's stage and its gate).
pub fn approver(r: &ReleaseRecord) -> String {
    match (&r.approved_by, r.kind) {
        (Some(p), _) => p.clone(),
        (None, ReleaseKind::Seeded) => "seed".into(),
        (None, _) => "eval_gate".into(),
    }
}

/// The design's mode names.
pub fn mode_name(m: CompareMode) -> &'static str {
    match m {
        CompareMode::Without => "without_skill",
        CompareMode::Old => "with_old_skill",
        CompareMode::Candidate => "with_candidate_skill",
    }
}

fn status_after(kind: ReleaseKind) -> Option<&'static str> {
    match kind {
        ReleaseKind::Drafted | ReleaseKind::Rejected => Some("draft"),
        ReleaseKind::Deprecated => Some("deprecated"),
        ReleaseKind::Archived => Some("archived"),
        _ => None,
    }
}

/// A release's id: the run, its position in the run's list, and what it is (skill, kind,
/// target version, designer stage). A stage fills in a record's rewards and note after it was
/// first written, so those are updated in place; a bank restored from a snapshot, whose later
/// stages put other records at the same positions, gives those new ids (their stage differs;
/// the earlier records stay: the run did record them).
fn release_id(run: &str, position: usize, r: &ReleaseRecord) -> String {
    let what = format!(
        "{run}\n{position}\n{}\n{:?}\n{}\n{}",
        r.skill, r.kind, r.to_version, r.stage
    );
    format!("rel-{}", &sha256_hex(what)[..24])
}

/// Write a batch in one transaction.
pub fn write(db: &mut Db, b: &Batch<'_>, now: &str) -> Result<Counts> {
    db.transaction(|db| {
        lock_for_write(db)?;
        let mut c = Counts::default();
        upsert_run(db, &b.run, now)?;
        let names = mentioned_skills(b);
        let mut created = BTreeSet::new();
        for name in &names {
            if ensure_skill(db, b, name, now)? > 0 {
                created.insert(name.clone());
            }
        }
        c.skills = created.len() as u64;
        if let Some(bank) = b.bank {
            c.skill_versions += write_versions(db, b, bank, now)?;
            let changed = if b.owns_history {
                write_releases(db, bank, &b.run.id, now, &mut c.releases)?
            } else {
                BTreeMap::new()
            };
            for (name, kinds) in &changed {
                // another run starting from the same seed does not re-create a skill the
                // registry already has
                let only_seeded = kinds.iter().all(|k| *k == ReleaseKind::Seeded);
                if created.contains(name) || !only_seeded {
                    refresh_skill(db, b, name, now)?;
                }
            }
            if b.owns_history {
                follow_restored_snapshot(db, b, bank, now)?;
            }
            for e in &bank.eval_runs {
                let (runs, cases) = write_eval_run(db, e, b, now)?;
                c.eval_runs += runs;
                c.eval_cases += cases;
            }
        }
        for t in &b.trajectories {
            c.trajectories += write_trajectory(db, &b.run.id, t, now)?;
        }
        for i in &b.invocations {
            c.invocations += write_invocation(db, &b.run.id, i, now)?;
        }
        let vectors = !b.memories.is_empty() && crate::migrate::has_vector_column(db)?;
        for m in &b.memories {
            c.memories += write_memory(db, &b.run.id, m, now)?;
            if vectors {
                write_vector(db, m)?;
            }
        }
        Ok(c)
    })
}

fn upsert_run(db: &mut Db, r: &SourceRun, now: &str) -> Result<()> {
    db.execute(
        "INSERT INTO source_run (source_run_id, kind, path, dataset, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (source_run_id) DO UPDATE SET path = excluded.path, updated_at = excluded.updated_at",
        &[
            (&r.id).into(),
            (&r.kind).into(),
            (&r.path).into(),
            r.dataset.clone().into(),
            now.into(),
            now.into(),
        ],
    )?;
    Ok(())
}

/// Every skill name the batch refers to.
fn mentioned_skills(b: &Batch<'_>) -> BTreeSet<String> {
    let mut s = BTreeSet::new();
    if let Some(bank) = b.bank {
        s.extend(bank.skills().iter().map(|k| k.name.clone()));
        s.extend(bank.releases.iter().map(|r| r.skill.clone()));
        s.extend(bank.eval_runs.iter().map(|e| e.skill.clone()));
    }
    s.extend(b.invocations.iter().map(|i| i.skill.clone()));
    s
}

/// The skill's row as the batch's bank describes it (or its last release, for a name the
/// bank does not hold).
fn skill_state(b: &Batch<'_>, name: &str) -> (String, String, String, String) {
    let bank = b.bank;
    if let Some(s) = bank.and_then(|k| k.get(name)) {
        let md = b.skill_md.get(name).cloned().unwrap_or_default();
        return (
            s.version.to_string(),
            s.status.to_string(),
            s.description.clone(),
            md,
        );
    }
    let last = bank.and_then(|k| k.releases.iter().rev().find(|r| r.skill == name));
    let status = last.and_then(|r| status_after(r.kind)).unwrap_or("draft");
    let version = last.map_or("1.0.0".to_string(), |r| r.to_version.to_string());
    (version, status.to_string(), String::new(), String::new())
}

fn scope_of(b: &Batch<'_>) -> Value {
    json!({"runs": [b.run.id], "datasets": b.run.dataset.iter().collect::<Vec<_>>()})
}

/// Insert the skill's row if the registry has none; add this run (and dataset) to its scope.
fn ensure_skill(db: &mut Db, b: &Batch<'_>, name: &str, now: &str) -> Result<u64> {
    let existing = db.query("SELECT scope FROM skill WHERE skill_id = ?", &[name.into()])?;
    if let Some(row) = existing.first() {
        let merged = merge_scope(row.get("scope"), &scope_of(b));
        if &merged != row.get("scope") {
            db.execute(
                "UPDATE skill SET scope = ? WHERE skill_id = ?",
                &[merged.into(), name.into()],
            )?;
        }
        return Ok(0);
    }
    let (version, status, description, md) = skill_state(b, name);
    let created_by = match b
        .bank
        .and_then(|k| k.releases.iter().find(|r| r.skill == name))
    {
        Some(r) if r.kind == ReleaseKind::Seeded => "seed",
        Some(_) => "designer",
        None => "import",
    };
    db.execute(
        "INSERT INTO skill (skill_id, name, version, status, scope, description, skill_md, risk_level,
           required_tools, required_env_vars, source_trace_ids, created_by, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (skill_id) DO NOTHING",
        &[
            name.into(),
            name.into(),
            version.into(),
            status.into(),
            scope_of(b).into(),
            description.into(),
            md.into(),
            risk_of(b, name).into(),
            json!([]).into(),
            json!([]).into(),
            provenance(b, name).into(),
            created_by.into(),
            now.into(),
            now.into(),
        ],
    )
}

/// The skill's risk level in the batch's bank (`low` / `high`, assessed under the governance
/// design), else `unassessed`.
fn risk_of(b: &Batch<'_>, name: &str) -> &'static str {
    b.bank
        .and_then(|k| k.get(name))
        .and_then(|s| s.risk)
        .map_or("unassessed", |r| r.as_str())
}

fn provenance(b: &Batch<'_>, name: &str) -> Value {
    let p = b
        .bank
        .and_then(|k| k.get(name))
        .map(|s| s.provenance.clone())
        .unwrap_or_default();
    json!(p)
}

/// Union of two `{"runs": [...], "datasets": [...]}` scopes, each list sorted.
fn merge_scope(a: &Value, b: &Value) -> Value {
    let mut out = serde_json::Map::new();
    for key in ["runs", "datasets"] {
        let mut set = BTreeSet::new();
        for v in [a, b] {
            if let Some(arr) = v.get(key).and_then(Value::as_array) {
                set.extend(arr.iter().filter_map(Value::as_str).map(str::to_string));
            }
        }
        out.insert(key.into(), json!(set));
    }
    Value::Object(out)
}

/// A designer stage that did not beat the best snapshot puts the snapshot's bank back without a
/// release of its own: a skill whose newest release that moved it (not a seed record or a
/// proposal) came from this run follows the bank, so the registry does not keep showing the
/// version the run threw away. (A skill a person or another run moved last is left as it is.)
fn follow_restored_snapshot(db: &mut Db, b: &Batch<'_>, bank: &SkillBank, now: &str) -> Result<()> {
    for s in bank.skills() {
        let row = db.query(
            "SELECT k.version, k.status, (SELECT r.source_run_id FROM skill_release r WHERE r.skill_id = k.skill_id
               AND r.kind NOT IN ('seeded', 'drafted', 'validated', 'rejected')
               ORDER BY r.seq DESC LIMIT 1) AS last_run FROM skill k WHERE k.skill_id = ?",
            &[(&s.name).into()],
        )?;
        let Some(row) = row.first() else { continue };
        let ours = row.text("last_run") == b.run.id;
        let differs =
            row.text("version") != s.version.to_string() || row.text("status") != s.status.as_str();
        if ours && differs {
            refresh_skill(db, b, &s.name, now)?;
        }
    }
    Ok(())
}

/// After new releases: the row takes the bank's version, status, description and SKILL.md.
fn refresh_skill(db: &mut Db, b: &Batch<'_>, name: &str, now: &str) -> Result<()> {
    let (version, status, description, md) = skill_state(b, name);
    db.execute(
        "UPDATE skill SET version = ?, status = ?, description = CASE WHEN ? = '' THEN description ELSE ? END,
           skill_md = CASE WHEN ? = '' THEN skill_md ELSE ? END,
           risk_level = CASE WHEN ? = 'unassessed' THEN risk_level ELSE ? END,
           source_trace_ids = ?, updated_at = ? WHERE skill_id = ?",
        &[
            version.into(),
            status.into(),
            (&description).into(),
            (&description).into(),
            (&md).into(),
            (&md).into(),
            risk_of(b, name).into(),
            risk_of(b, name).into(),
            provenance(b, name).into(),
            now.into(),
            name.into(),
        ],
    )?;
    Ok(())
}

fn write_versions(db: &mut Db, b: &Batch<'_>, bank: &SkillBank, now: &str) -> Result<u64> {
    let mut n = 0;
    for s in bank.skills() {
        n += db.execute(
            "INSERT INTO skill_version (skill_id, version, content_hash, action, description, instructions, skill_md,
               source_run_id, created_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (skill_id, version, content_hash) DO NOTHING",
            &[
                (&s.name).into(),
                s.version.to_string().into(),
                text_hash(&s.description, &s.instructions, s.action.as_str()).into(),
                s.action.as_str().into(),
                (&s.description).into(),
                (&s.instructions).into(),
                b.skill_md.get(&s.name).cloned().unwrap_or_default().into(),
                (&b.run.id).into(),
                now.into(),
            ],
        )?;
    }
    Ok(n)
}

/// The hash that tells two texts of one version apart (status and usage left out).
pub fn text_hash(description: &str, instructions: &str, action: &str) -> String {
    sha256_hex(json!([description, instructions, action]).to_string())[..16].to_string()
}

/// Insert the bank's new release records; returns the skills that got one, with the kinds.
fn write_releases(
    db: &mut Db,
    bank: &SkillBank,
    run: &str,
    now: &str,
    inserted: &mut u64,
) -> Result<BTreeMap<String, Vec<ReleaseKind>>> {
    let mut changed: BTreeMap<String, Vec<ReleaseKind>> = BTreeMap::new();
    for (i, r) in bank.releases.iter().enumerate() {
        if is_registry_decision(db, r)? {
            continue;
        }
        let id = release_id(run, i, r);
        let summary = json!({
            "stage": r.stage,
            "reward_before": r.reward_before,
            "reward_after": r.reward_after,
            "hard_cases": r.hard_cases,
        });
        let new = db.execute(
            "INSERT INTO skill_release (release_id, seq, skill_id, from_version, to_version, release_type, kind, diff,
               eval_summary, approved_by, note, source_run_id, created_at)
             VALUES (?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM skill_release), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
             ON CONFLICT (release_id) DO NOTHING",
            &[
                (&id).into(),
                (&r.skill).into(),
                r.from_version.map(|v| v.to_string()).into(),
                r.to_version.to_string().into(),
                release_type(r).into(),
                serde_json::to_value(r.kind)?.as_str().unwrap_or("").into(),
                (&r.diff).into(),
                summary.clone().into(),
                approver(r).into(),
                (&r.note).into(),
                run.into(),
                now.into(),
            ],
        )?;
        if new > 0 {
            *inserted += new;
            changed.entry(r.skill.clone()).or_default().push(r.kind);
        } else {
            // filled in after the record was first written (the stage's rewards, its note)
            db.execute(
                "UPDATE skill_release SET eval_summary = ?, note = ?, diff = ? WHERE release_id = ?",
                &[summary.into(), (&r.note).into(), (&r.diff).into(), id.into()],
            )?;
        }
    }
    Ok(changed)
}

/// Whether a bank's release is a decision taken through the registry and applied to the
/// bank (`registry deprecate --bank ...`): the registry has it already, as one release.
fn is_registry_decision(db: &mut Db, r: &ReleaseRecord) -> Result<bool> {
    let Some(by) = &r.approved_by else {
        return Ok(false);
    };
    let kind = serde_json::to_value(r.kind)?;
    Ok(!db
        .query(
            "SELECT release_id FROM skill_release WHERE skill_id = ? AND kind = ? AND to_version = ?
               AND approved_by = ? AND note = ? AND source_run_id IS NULL",
            &[
                (&r.skill).into(),
                kind.as_str().unwrap_or("").into(),
                r.to_version.to_string().into(),
                by.into(),
                (&r.note).into(),
            ],
        )?
        .is_empty())
}

/// The replayed cases of an eval run (one row per skill and case).
fn write_eval_cases(db: &mut Db, e: &EvalRun, now: &str) -> Result<u64> {
    let mut cases = 0;
    for (i, case) in e.cases.iter().enumerate() {
        let solved = e.solved_before.get(i).copied().unwrap_or(false);
        cases += db.execute(
            "INSERT INTO skill_eval_case (eval_id, skill_id, case_type, prompt, input_files, expected_output, assertions, created_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (eval_id) DO NOTHING",
            &[
                format!("{}:{case}", e.skill).into(),
                (&e.skill).into(),
                if solved { "regression" } else { "positive" }.into(),
                case.into(),
                json!([]).into(),
                Param::Null,
                json!({"metric": "the case's answer score", "solved_before": solved}).into(),
                now.into(),
            ],
        )?;
    }
    Ok(cases)
}

fn write_eval_run(db: &mut Db, e: &EvalRun, b: &Batch<'_>, now: &str) -> Result<(u64, u64)> {
    let mut runs = 0;
    let run = &b.run.id;
    let cases = write_eval_cases(db, e, now)?;
    let extra = b.eval_summaries.get(&e.id).cloned().unwrap_or(Value::Null);
    for m in &e.modes {
        let candidate = m.mode == CompareMode::Candidate;
        let summary = json!({
            "outcome_delta": finite(e.outcome_delta),
            "regressions": e.regressions,
            "token_overhead": finite(e.token_overhead),
            "latency_overhead": e.latency_overhead.and_then(finite),
            "call_overhead": finite(e.call_overhead),
            "activation": m.activation,
            "process": m.process(),
            "old_version": e.old_version.map(|v| v.to_string()),
            "stage": e.stage,
            "reasons": e.reasons,
            "notes": e.notes,
            "score": if candidate { extra.clone() } else { Value::Null },
        });
        let id = format!("{run}:{}:{}", e.id, mode_name(m.mode));
        // a `skills eval` run again into the same folder replaces its rows (counted once)
        let known = !db
            .query(
                "SELECT run_id FROM skill_eval_run WHERE run_id = ?",
                &[(&id).into()],
            )?
            .is_empty();
        let changed = db.execute(
            "INSERT INTO skill_eval_run (run_id, eval_group, skill_id, skill_version, eval_id, mode, trace_id, source_run_id,
               assertion_results, pass_rate, tokens, duration_ms, tool_call_count, safety_failures, regression_failures,
               passed, summary, created_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
             ON CONFLICT (run_id) DO UPDATE SET skill_version = excluded.skill_version,
               assertion_results = excluded.assertion_results, pass_rate = excluded.pass_rate,
               tokens = excluded.tokens, duration_ms = excluded.duration_ms,
               tool_call_count = excluded.tool_call_count, safety_failures = excluded.safety_failures,
               regression_failures = excluded.regression_failures, passed = excluded.passed,
               summary = excluded.summary",
            &[
                id.into(),
                (&e.id).into(),
                (&e.skill).into(),
                e.version.to_string().into(),
                Param::Null,
                mode_name(m.mode).into(),
                Param::Null,
                run.into(),
                json!({"cases": e.cases, "case_scores": m.case_scores.iter().map(|x| finite(*x)).collect::<Vec<_>>()}).into(),
                m.score.into(),
                m.tokens.into(),
                m.executor_ms.into(),
                m.calls.into(),
                m.safety_findings.into(),
                if candidate { e.regressions } else { 0 }.into(),
                (candidate && e.passed).into(),
                summary.into(),
                now.into(),
            ],
        )?;
        if !known {
            runs += changed;
        }
    }
    Ok((runs, cases))
}

fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

fn write_trajectory(db: &mut Db, run: &str, t: &TrajectoryRecord, now: &str) -> Result<u64> {
    db.execute(
        "INSERT INTO trajectory (trace_id, source_run_id, user_id, org_id, project_id, task_type, task_summary, messages,
           tool_calls, artifacts, errors, recoveries, outcome_status, user_feedback, metrics, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (trace_id) DO NOTHING",
        &[
            (&t.trace_id).into(),
            run.into(),
            Param::Null,
            Param::Null,
            Param::Null,
            (&t.task_type).into(),
            (&t.task_summary).into(),
            t.messages.clone().into(),
            t.tool_calls.clone().into(),
            json!([]).into(),
            t.errors.clone().into(),
            json!([]).into(),
            (&t.outcome_status).into(),
            Param::Null,
            t.metrics.clone().into(),
            now.into(),
        ],
    )
}

fn write_invocation(db: &mut Db, run: &str, i: &InvocationRecord, now: &str) -> Result<u64> {
    db.execute(
        "INSERT INTO skill_invocation (invocation_id, skill_id, skill_version, trace_id, source_run_id, activation_reason,
           activation_score, outcome_status, user_feedback, postmortem, metrics, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (invocation_id) DO NOTHING",
        &[
            (&i.id).into(),
            (&i.skill).into(),
            i.skill_version.clone().into(),
            (&i.trace_id).into(),
            run.into(),
            (&i.reason).into(),
            i.activation_score.into(),
            (&i.outcome_status).into(),
            Param::Null,
            Param::Null,
            i.metrics.clone().into(),
            now.into(),
        ],
    )
}

/// The memory's embedding into the pgvector column, as pgvector's text form (`[x,y,...]`);
/// NULL when it has none or it is not a whole number of finite f32s (pgvector refuses NaN).
fn write_vector(db: &mut Db, m: &MemoryRecord) -> Result<()> {
    let v = pgvector_text(&m.embedding);
    db.execute(
        "UPDATE memory SET embedding_vector = CAST(CAST(? AS TEXT) AS vector) WHERE memory_id = ?",
        &[v.map_or(Param::Null, Param::Text), (&m.id).into()],
    )?;
    Ok(())
}

/// Little-endian f32 bytes as pgvector's text form; `None` for nothing or a bad blob.
pub fn pgvector_text(bytes: &[u8]) -> Option<String> {
    if bytes.is_empty() || !bytes.len().is_multiple_of(4) {
        return None;
    }
    let xs: Vec<f32> = bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    if xs.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let parts: Vec<String> = xs.iter().map(|x| format!("{x:?}")).collect();
    Some(format!("[{}]", parts.join(",")))
}

/// A memory's row: inserted once (counted), then kept up to date with the bank (a memory
/// forgotten since loses its text here too; its uses are the bank's at this write).
fn write_memory(db: &mut Db, run: &str, m: &MemoryRecord, now: &str) -> Result<u64> {
    let known = !db
        .query(
            "SELECT memory_id FROM memory WHERE memory_id = ?",
            &[(&m.id).into()],
        )?
        .is_empty();
    db.execute(
        "INSERT INTO memory (memory_id, source_run_id, sample_id, scope_user_id, scope_org_id, scope_project_id, type,
           content, normalized, source_event_ids, source_trace_ids, entities, confidence, importance, sensitivity,
           valid_from, valid_to, supersedes, status, embedding, created_at, updated_at, last_used_at, use_count)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (memory_id) DO UPDATE SET scope_user_id = excluded.scope_user_id,
           scope_org_id = excluded.scope_org_id, scope_project_id = excluded.scope_project_id,
           type = excluded.type, content = excluded.content, source_event_ids = excluded.source_event_ids,
           entities = excluded.entities, confidence = excluded.confidence, sensitivity = excluded.sensitivity,
           valid_from = excluded.valid_from, valid_to = excluded.valid_to, supersedes = excluded.supersedes,
           status = excluded.status, embedding = excluded.embedding, updated_at = excluded.updated_at,
           source_trace_ids = excluded.source_trace_ids, last_used_at = excluded.last_used_at,
           use_count = excluded.use_count",
        &[
            (&m.id).into(),
            run.into(),
            (&m.sample_id).into(),
            m.scope_user.clone().into(),
            m.scope_org.clone().into(),
            m.scope_project.clone().into(),
            (&m.kind).into(),
            (&m.content).into(),
            Param::Null,
            m.source_event_ids.clone().into(),
            m.source_trace_ids.clone().into(),
            json!([]).into(),
            m.confidence.into(),
            Param::Null,
            (&m.sensitivity).into(),
            m.valid_from.clone().into(),
            m.valid_to.clone().into(),
            m.supersedes.clone().into(),
            (&m.status).into(),
            Param::Blob(m.embedding.clone()),
            now.into(),
            now.into(),
            m.last_used_at.clone().into(),
            m.use_count.into(),
        ],
    )?;
    Ok(u64::from(!known))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embeddings_become_pgvector_text_or_null() {
        let b = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        assert_eq!(
            pgvector_text(&b(&[1.0, -0.5, 0.0])).as_deref(),
            Some("[1.0,-0.5,0.0]")
        );
        assert_eq!(pgvector_text(&[]), None);
        assert_eq!(pgvector_text(&[0, 0, 128]), None, "not whole f32s");
        assert_eq!(
            pgvector_text(&b(&[1.0, f32::NAN])),
            None,
            "pgvector refuses NaN"
        );
    }
}
