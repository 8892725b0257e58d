//! One designer stage: LLM rounds -> edits -> validation -> new bank version.

pub use memskill_core::diff::{line_diff, text_diff};
use std::collections::HashSet;

use memskill_core::{
    ActionKind, ChatRequest, Llm, Message, PromptSet, ReleaseKind, ReleaseRecord, Skill, SkillBank,
    SkillStatus, UsageStats, Version,
};
use serde::{Deserialize, Serialize};

use crate::config::{DesignerConfig, DesignerMode};
use crate::edit::{plan_evictions, validate_edits, Edit};
use crate::error::DesignerError;
use crate::evolution::{ChangeNote, Feedback};
use crate::json::parse_changes_with;
use crate::pool::HardCase;
use crate::prompts::{case_views, render_round, skill_views, DesignerContext, PromptLimits};

/// What one stage produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageOutcome {
    /// The new bank (statuses, versions and release records updated): the input plus the
    /// draft records (`drafted`, then `validated` or `rejected`) of every proposal that names
    /// a skill, and the accepted changes.
    pub bank: SkillBank,
    /// Edits of the attempt that was applied (the last attempt when none got anything accepted).
    pub accepted: Vec<Edit>,
    pub rejected: Vec<(Edit, String)>,
    /// Names of skills added or refined in this stage.
    pub changed: Vec<String>,
    /// The applied changes, for the feedback shown to later stages.
    #[serde(default)]
    pub notes: Vec<ChangeNote>,
    /// Attempts run (1..=`attempts`).
    #[serde(default)]
    pub attempts: usize,
    /// (prompt, answer) of every LLM round of every attempt, in order (the prompt is the last
    /// message), with secret values redacted (as are the texts of `rejected`).
    pub transcript: Vec<(String, String)>,
    /// Safety-judge calls made (`designer.safety_judge`), over all attempts.
    #[serde(default)]
    pub judge_calls: usize,
    /// Proposals the safety judge rejected, over all attempts.
    #[serde(default)]
    pub judge_rejections: usize,
}

fn ask(
    llm: &dyn Llm,
    round: &str,
    messages: Vec<Message>,
    cfg: &DesignerConfig,
    max_tokens: u32,
    schema: Option<memskill_core::ResponseSchema>,
    transcript: &mut Vec<(String, String)>,
) -> Result<String, DesignerError> {
    let prompt = messages
        .last()
        .map(|m| m.content.clone())
        .unwrap_or_default();
    let req = ChatRequest::new(messages)
        .with_temperature(cfg.temperature)
        .with_max_tokens(max_tokens)
        .with_response_schema(schema);
    let resp = llm.chat(&req).map_err(|source| DesignerError::Llm {
        round: round.to_string(),
        source,
    })?;
    transcript.push((prompt, resp.text.clone()));
    Ok(resp.text)
}

/// Run one designer stage on the selected hard cases.
///
/// An attempt is: the analysis round, `reflection_cycles - 1` reflection rounds (each sees
/// the previous answer, the skills, the cases and `feedback`), and the refinement round
/// (the last analysis, the skills in full and `feedback`) whose JSON changes are validated.
/// While an attempt gets no change accepted, the whole attempt is run again, up to
/// `cfg.attempts` in all (as the reference). LLM and template errors are returned; an
/// answer without readable JSON is not an error: that attempt accepts nothing and reports
/// one `Malformed` rejection.
pub fn run_stage(
    llm: &dyn Llm,
    prompts: &PromptSet,
    bank: &SkillBank,
    cases: &[HardCase],
    feedback: Option<&Feedback>,
    stage: u32,
    cfg: &DesignerConfig,
) -> Result<StageOutcome, DesignerError> {
    let mut ctx = designer_context(bank, cases, feedback, cfg);
    let ids = distinct_case_ids(cases);
    let mut transcript = Vec::new();
    let mut drafts: Vec<ReleaseRecord> = Vec::new();
    let mut judged = JudgeTally::default();
    let attempts = cfg.attempts.max(1);
    let mut attempt = 0;
    loop {
        attempt += 1;
        let numbered = (attempts > 1).then_some(attempt);
        let answer = ask_rounds(llm, prompts, bank, &mut ctx, cfg, numbered, &mut transcript)?;
        let Review {
            edits,
            accepted,
            rejected,
        } = review_answer(llm, prompts, bank, cases, &answer, cfg, &mut judged)?;
        drafts.extend(draft_records(
            bank,
            &edits,
            &accepted,
            &rejected,
            stage,
            numbered,
            cfg.safety_judge,
        ));
        if accepted.is_empty() && attempt < attempts {
            continue;
        }
        // What is recorded (designer/stage-N.json, metrics.jsonl) carries no secret values: a
        // value found anywhere in the rounds or the rejected edits is redacted everywhere.
        let known = memskill_guard::secret_values(
            transcript
                .iter()
                .flat_map(|(p, a)| [p.as_str(), a.as_str()])
                .chain(rejected.iter().flat_map(|(e, _)| e.texts())),
        );
        let redact = |t: &str| memskill_guard::redact_with(t, &known);
        let mut drafted = bank.clone();
        drafted.releases.extend(drafts.into_iter().map(|mut r| {
            r.note = redact(&r.note);
            r
        }));
        let (mut new_bank, changed) =
            apply_edits(&drafted, &accepted, &ids, stage, cfg.max_bank_size);
        if cfg.governed() {
            crate::risk::assess_bank(&mut new_bank);
        }
        let notes = change_notes(bank, &new_bank, &changed);
        let rejected = rejected
            .into_iter()
            .map(|(e, r)| (e.redacted(&known), redact(&r)))
            .collect();
        return Ok(StageOutcome {
            bank: new_bank,
            accepted,
            rejected,
            changed,
            notes,
            attempts: attempt,
            transcript: transcript
                .into_iter()
                .map(|(p, a)| (redact(&p), redact(&a)))
                .collect(),
            judge_calls: judged.calls,
            judge_rejections: judged.rejections,
        });
    }
}

/// The template context of a stage's first round: the selectable skills, the hard cases
/// (clipped to the configured limits) and the feedback.
fn designer_context<'a>(
    bank: &SkillBank,
    cases: &[HardCase],
    feedback: Option<&'a Feedback>,
    cfg: &DesignerConfig,
) -> DesignerContext<'a> {
    let lim = PromptLimits {
        max_retrieved: cfg.max_retrieved_per_case,
        max_memory_chars: cfg.max_memory_chars,
        max_evidence_chars: cfg.max_evidence_chars,
    };
    DesignerContext {
        skills: skill_views(bank, &cfg.score),
        cases: case_views(cases, lim),
        feedback,
        max_changes: cfg.max_changes,
        new_skill_hint: cfg.new_skill_hint,
        refine_only: cfg.mode == DesignerMode::RefineOnly,
        bank_operations: cfg.operations == crate::config::Operations::Governance,
        interactive: cfg.interactive,
        round: 1,
        rounds: cfg.reflection_cycles.max(1),
        analysis: String::new(),
    }
}

/// The hard cases' ids, each once, in first-seen order (the provenance of added skills).
fn distinct_case_ids(cases: &[HardCase]) -> Vec<String> {
    let mut ids: Vec<String> = Vec::new();
    for c in cases {
        let id = c.id();
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    ids
}

/// One attempt's LLM rounds: analysis, the reflections (each sees the previous answer) and
/// the refinement; returns the refinement answer. Round names carry `attempt` when set.
fn ask_rounds(
    llm: &dyn Llm,
    prompts: &PromptSet,
    bank: &SkillBank,
    ctx: &mut DesignerContext,
    cfg: &DesignerConfig,
    attempt: Option<usize>,
    transcript: &mut Vec<(String, String)>,
) -> Result<String, DesignerError> {
    let tag = |r: &str| match attempt {
        Some(a) => format!("{r}, attempt {a}"),
        None => r.to_string(),
    };
    ctx.round = 1;
    ctx.analysis = String::new();
    let mut analysis = ask(
        llm,
        &tag("analysis"),
        render_round(prompts, "analysis", ctx)?,
        cfg,
        cfg.max_tokens,
        None,
        transcript,
    )?;
    for r in 2..=ctx.rounds {
        ctx.round = r;
        ctx.analysis = analysis;
        analysis = ask(
            llm,
            &tag(&format!("reflection {}", r - 1)),
            render_round(prompts, "reflection", ctx)?,
            cfg,
            cfg.max_tokens,
            None,
            transcript,
        )?;
    }
    ctx.analysis = analysis;
    ask(
        llm,
        &tag("refinement"),
        render_round(prompts, "refinement", ctx)?,
        cfg,
        cfg.refinement_max_tokens,
        cfg.structured
            .then(|| crate::json::refinement_schema(bank, cfg)),
        transcript,
    )
}

/// One attempt's proposals: every edit of the answer, those accepted, and those rejected
/// with the reason.
struct Review {
    edits: Vec<Edit>,
    accepted: Vec<Edit>,
    rejected: Vec<(Edit, String)>,
}

/// Reviews a refinement answer: an answer without readable JSON is one `Malformed` edit;
/// the edits are validated, checked for leaked answers and, when on, judged.
fn review_answer(
    llm: &dyn Llm,
    prompts: &PromptSet,
    bank: &SkillBank,
    cases: &[HardCase],
    answer: &str,
    cfg: &DesignerConfig,
    judged: &mut JudgeTally,
) -> Result<Review, DesignerError> {
    let edits = match parse_changes_with(answer, cfg.operations) {
        Ok(e) => e,
        Err(problem) => vec![Edit::Malformed {
            raw: crate::text::clip(answer, 500),
            problem,
        }],
    };
    let (accepted, mut rejected) = validate_edits(bank, &edits, cfg);
    // a proposal that carries a shown hard case's gold answer learned the answer, not
    // a procedure
    let (mut accepted, leaked) = crate::edit::reject_leaked_answers(accepted, cases);
    rejected.extend(leaked);
    if cfg.safety_judge {
        accepted = judge_accepted(llm, prompts, bank, accepted, &mut rejected, cfg, judged)?;
    }
    Ok(Review {
        edits,
        accepted,
        rejected,
    })
}

/// Safety-judge calls and rejections over a stage's attempts.
#[derive(Default)]
struct JudgeTally {
    calls: usize,
    rejections: usize,
}

/// The accepted edits the safety judge lets through; the others move to `rejected` with
/// the judge's reason. An edit without judge context is kept unjudged.
fn judge_accepted(
    llm: &dyn Llm,
    prompts: &PromptSet,
    bank: &SkillBank,
    accepted: Vec<Edit>,
    rejected: &mut Vec<(Edit, String)>,
    cfg: &DesignerConfig,
    tally: &mut JudgeTally,
) -> Result<Vec<Edit>, DesignerError> {
    let mut kept = Vec::with_capacity(accepted.len());
    for e in accepted {
        let Some(jc) = crate::edit::judge_prompt_context(bank, &e) else {
            kept.push(e);
            continue;
        };
        tally.calls += 1;
        match crate::judge::judge_skill(llm, prompts, &jc, cfg.temperature)? {
            None => kept.push(e),
            Some(reason) => {
                tally.rejections += 1;
                rejected.push((e, reason));
            }
        }
    }
    Ok(kept)
}

/// The release records of one attempt's proposals, in the order proposed: every edit that
/// names a skill is a draft (`drafted`); one that passed validation and the safety scan
/// (and the answer-leak check and, when on, the safety judge) is then `validated` and
/// enters the bank as a candidate (the `added` / `refined` record that follows); one that
/// did not stays a draft: `rejected`, with the reason. A draft's text is in the stage's
/// designer record, not here.
fn draft_records(
    bank: &SkillBank,
    edits: &[Edit],
    accepted: &[Edit],
    rejected: &[(Edit, String)],
    stage: u32,
    attempt: Option<usize>,
    judged: bool,
) -> Vec<ReleaseRecord> {
    let of = attempt.map_or(String::new(), |a| format!(", attempt {a}"));
    let mut out = Vec::new();
    let mut seen_rejected = vec![false; rejected.len()];
    for e in edits {
        let Some(name) = e.target() else { continue };
        let (from, to) = match (e, bank.get(name)) {
            (Edit::RefineExisting { .. }, Some(s)) => (Some(s.version), s.version.bump_patch()),
            (Edit::Split { .. } | Edit::Deprecate { .. } | Edit::Archive { .. }, Some(s)) => {
                (Some(s.version), s.version)
            }
            _ => (None, Version::INITIAL),
        };
        let record = |kind: ReleaseKind, note: String| ReleaseRecord {
            from_version: from,
            ..ReleaseRecord::status_change(name, kind, to, stage, note)
        };
        out.push(record(
            ReleaseKind::Drafted,
            format!("proposed by designer stage {stage}{of}: {}", e.summary()),
        ));
        if accepted.contains(e) {
            let judge = if judged { "passed" } else { "off" };
            out.push(record(
                ReleaseKind::Validated,
                format!(
                    "draft -> candidate: validation passed (name, action, text limits, bank check); safety scan: no finding; answer-leak check: passed; safety judge: {judge}"
                ),
            ));
        } else if let Some(i) =
            (0..rejected.len()).find(|&i| !seen_rejected[i] && rejected[i].0 == *e)
        {
            seen_rejected[i] = true;
            out.push(record(
                ReleaseKind::Rejected,
                format!("stays a draft: {}", rejected[i].1),
            ));
        }
    }
    out
}

/// What changed from `old` to `new` for the skills named in `changed`.
pub fn change_notes(old: &SkillBank, new: &SkillBank, changed: &[String]) -> Vec<ChangeNote> {
    changed
        .iter()
        .filter_map(|name| {
            let s = new.get(name)?;
            let before = old.get(name);
            Some(ChangeNote {
                kind: if before.is_some() { "refine" } else { "add" }.into(),
                skill: name.clone(),
                action: s.action.to_string(),
                description: s.description.clone(),
                instructions: s.instructions.clone(),
                old_description: before.map(|b| b.description.clone()).unwrap_or_default(),
                old_instructions: before.map(|b| b.instructions.clone()).unwrap_or_default(),
            })
        })
        .collect()
}

/// Apply validated edits: adds become 0.1.0 candidates with provenance `case_ids`, refines
/// bump the patch version and make the skill a candidate again, evictions deprecate
/// (candidates become canaries through [`crate::gate`]); every change appends a release record
/// (with a line diff of description and instructions). Bumps `bank_version` once when
/// anything changed. Edits that no longer fit the bank are skipped (validate first), each
/// with a `rejected` release record saying why.
pub fn apply_edits(
    bank: &SkillBank,
    accepted: &[Edit],
    case_ids: &[String],
    stage: u32,
    max_bank_size: usize,
) -> (SkillBank, Vec<String>) {
    let mut out = bank.clone();
    let mut changed = Vec::new();
    let evict = plan_evictions(bank, accepted, max_bank_size);
    let mut operated = false;
    for e in accepted {
        let applied = match e {
            Edit::AddNew { .. } => add_skill(&mut out, e, case_ids, stage),
            Edit::RefineExisting { .. } => refine_skill(&mut out, e, case_ids, stage),
            Edit::NoChange | Edit::Malformed { .. } => None,
            _ => {
                let before = out.releases.len();
                changed.extend(crate::ops::apply_operation(&mut out, e, case_ids, stage));
                operated |= out.releases.len() > before;
                None
            }
        };
        changed.extend(applied);
    }
    deprecate_evicted(&mut out, &evict, &changed, stage, max_bank_size);
    if !changed.is_empty() || !evict.is_empty() || operated {
        out.bank_version += 1;
    }
    (out, changed)
}

/// Applies an `AddNew` edit: the skill enters `out` as a 0.1.0 candidate with provenance
/// `case_ids` and an `added` record. Returns its name, or `None` when it was not applied.
fn add_skill(out: &mut SkillBank, edit: &Edit, case_ids: &[String], stage: u32) -> Option<String> {
    let Edit::AddNew {
        name,
        description,
        instructions,
        action,
    } = edit
    else {
        return None;
    };
    let Ok(action) = action.parse::<ActionKind>() else {
        not_applied(out, name, stage, "its action is not one of the four");
        return None;
    };
    let skill = Skill {
        name: name.clone(),
        description: description.clone(),
        instructions: instructions.clone(),
        action,
        version: Version::INITIAL,
        status: SkillStatus::Candidate,
        provenance: case_ids.to_vec(),
        usage: UsageStats::default(),
        risk: None,
    };
    if out.insert(skill).is_err() {
        not_applied(
            out,
            name,
            stage,
            "a skill of that name is already in the bank",
        );
        return None;
    }
    out.releases.push(ReleaseRecord {
        skill: name.clone(),
        kind: ReleaseKind::Added,
        from_version: None,
        to_version: Version::INITIAL,
        diff: text_diff("", "", description, instructions),
        hard_cases: case_ids.to_vec(),
        reward_before: None,
        reward_after: None,
        stage,
        note: format!("added by designer stage {stage}"),
        approved_by: None,
    });
    Some(name.clone())
}

/// Applies a `RefineExisting` edit: the skill's texts change, its patch version is bumped,
/// it is a candidate again and gets a `refined` record. Returns its name, or `None` when it
/// was not applied.
fn refine_skill(
    out: &mut SkillBank,
    edit: &Edit,
    case_ids: &[String],
    stage: u32,
) -> Option<String> {
    let Edit::RefineExisting {
        name,
        description,
        instructions,
        ..
    } = edit
    else {
        return None;
    };
    let Some(s) = out.get_mut(name) else {
        not_applied(out, name, stage, "no skill of that name is in the bank");
        return None;
    };
    let (old_d, old_i) = (s.description.clone(), s.instructions.clone());
    if let Some(d) = description {
        s.description = d.clone();
    }
    if let Some(i) = instructions {
        s.instructions = i.clone();
    }
    let from = s.version;
    s.version = from.bump_patch();
    // the new version is on trial: the gate (or, with it off, the stage) decides
    s.status = SkillStatus::Candidate;
    let diff = text_diff(&old_d, &old_i, &s.description, &s.instructions);
    let rec = ReleaseRecord {
        skill: name.clone(),
        kind: ReleaseKind::Refined,
        from_version: Some(from),
        to_version: s.version,
        diff,
        hard_cases: case_ids.to_vec(),
        reward_before: None,
        reward_after: None,
        stage,
        note: format!("refined by designer stage {stage}"),
        approved_by: None,
    };
    out.releases.push(rec);
    Some(name.clone())
}

/// Deprecates the planned evictions that were not changed in this stage, each with a
/// `deprecated` record.
fn deprecate_evicted(
    out: &mut SkillBank,
    evict: &[String],
    changed: &[String],
    stage: u32,
    max_bank_size: usize,
) {
    let changed_set: HashSet<&String> = changed.iter().collect();
    for name in evict {
        if changed_set.contains(name) {
            continue;
        }
        if let Some(s) = out.get_mut(name) {
            s.status = SkillStatus::Deprecated;
            let note = format!("evicted to keep at most {max_bank_size} selectable skills");
            let r =
                ReleaseRecord::status_change(name, ReleaseKind::Deprecated, s.version, stage, note);
            out.releases.push(r);
        }
    }
}

/// The record of a validated edit that [`apply_edits`] skipped (it no longer fits the bank,
/// e.g. a second add of one name in the same stage): its `validated` record is followed by
/// this `rejected` one, so the release history never shows a validated edit that vanished.
fn not_applied(bank: &mut SkillBank, name: &str, stage: u32, why: &str) {
    let version = bank.get(name).map_or(Version::INITIAL, |s| s.version);
    let note = format!("validated but not applied: {why}");
    let r = ReleaseRecord::status_change(name, ReleaseKind::Rejected, version, stage, note);
    bank.releases.push(r);
}
