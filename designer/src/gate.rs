//! The release gate between candidate and canary, and the skill score.
//!
//! A designer change enters the bank as a **candidate**. With `designer.gate = "off"` (the
//! reference has no gate; reproduction configs keep it off) every candidate becomes a
//! **canary** at once, which selects and trains exactly as the reference's new skills do.
//! With `designer.gate = "offline"` the trainer replays the change's hard cases plus a fixed
//! set of previously solved cases in three modes (without the skill, its old version, the
//! candidate; same spans and seeds) into an [`EvalRun`]; [`release_verdict`] decides from
//! it, and [`settle`] applies the outcome: a pass makes the candidate a canary, a failure
//! leaves an added skill a (non-selectable) candidate and keeps a refined skill at its old
//! version, with the failing record. Canary -> active happens when its stage beats the best
//! snapshot ([`crate::Evolution::on_stage_end`]).
//!
//! Besides the outcome ([`verdict`]): regressions, token / latency / LLM-call overhead over
//! the reference mode, the process of the skill's selections, its activation against
//! expected triggers (precision, recall, false positives; only where the cases have them,
//! and at the release gate for a refine only: [`activation_not_gated`]) and safety
//! findings. [`score_terms`] names the skill score's terms, weighted by [`ScoreWeights`]
//! (the one place the default weights live).
//!
//! Everything here is pure: the replay itself (executor, answerer) lives in the trainer.

use memskill_core::{CompareMode, EvalRun, ReleaseKind, ReleaseRecord, SkillBank, SkillStatus};
use serde::{Deserialize, Serialize};

/// `designer.gate`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GateMode {
    /// Candidates become canaries at once (the reference's behaviour).
    #[default]
    Off,
    /// Replay the cases in three modes and let only changes that pass the thresholds in.
    Offline,
}

/// Thresholds of the offline gate (`[designer.gate_rules]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct GateRules {
    /// Candidate score minus the better of the other modes must reach this.
    pub min_outcome_delta: f64,
    /// Fewer replayed cases than this fails the gate (too little evidence).
    pub min_cases: usize,
    /// Replayed cases solved without the change that the candidate loses ("noise").
    pub max_regressions: usize,
    /// Candidate tokens may exceed the reference mode's by at most this fraction.
    pub max_token_overhead: f64,
    /// Safety findings allowed (skill text and the memories it wrote).
    pub max_safety_findings: u64,
    /// Previously solved cases kept for the regression check.
    pub solved_cases: usize,
    /// Activation against expected triggers (where the cases have them: the synthetic
    /// tasks, `skills eval --cases`): correct triggers / triggers at least this...
    pub min_precision: f64,
    /// ... correct triggers / expected triggers at least this ...
    pub min_recall: f64,
    /// ... and triggers on negative cases (another skill or none expected) / those cases at
    /// most this; more is a regression.
    pub max_false_positive_rate: f64,
    /// Candidate executor wall time may exceed the reference mode's by at most this fraction
    /// ...
    pub max_latency_overhead: f64,
    /// ... unless the difference is below this many milliseconds (measurement noise: the
    /// scripted executors answer in microseconds).
    pub latency_noise_ms: f64,
    /// Candidate LLM calls (executor, answerer, judge) may exceed the reference mode's by at
    /// most this fraction. A skill adds no call of its own here (one executor call per span,
    /// one answer call per question), so extra calls are retries or failures it provoked.
    pub max_call_overhead: f64,
    /// Of the candidate's selections, at least this share must have performed the skill's
    /// action kind, reached the memory bank, and been neither flagged nor refused (process).
    pub min_process: f64,
    /// The candidate's mean case score (its pass rate on the replayed cases) must reach this
    /// (0: not checked; the governance preset asks 0.80).
    pub min_pass_rate: f64,
}

/// `designer.gate_preset`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GatePreset {
    #[default]
    Memskill,
    Governance,
}

/// The governance design's promotion gate, as `gate_rules` keys and TOML values (the rest
/// stay memskill's).
pub const GOVERNANCE_GATE: &[(&str, &str)] = &[
    ("min_cases", "5"),
    ("min_pass_rate", "0.80"),
    ("min_outcome_delta", "0.15"),
    ("min_precision", "0.85"),
    ("min_recall", "0.70"),
    ("max_false_positive_rate", "0.10"),
    ("max_safety_findings", "0"),
    ("max_regressions", "0"),
];

/// The governance design's skill-score weights (`designer.score = "governance"`): outcome
/// 0.30, activation 0.20 (precision and recall 0.10 each), process 0.15, user feedback 0.10,
/// reuse 0.10, maintainability 0.05, cost -0.05 (token overhead), safety -0.05; the terms the
/// design does not weigh are 0. TOML values, as a `[designer.score]` table holds them.
pub const GOVERNANCE_SCORE: &[(&str, &str)] = &[
    ("outcome", "0.30"),
    ("precision", "0.10"),
    ("recall", "0.10"),
    ("false_positives", "0.0"),
    ("process", "0.15"),
    ("regressions", "0.0"),
    ("token_overhead", "0.05"),
    ("latency_overhead", "0.0"),
    ("call_overhead", "0.0"),
    ("safety", "0.05"),
    ("reuse", "0.10"),
    ("feedback", "0.10"),
    ("maintainability", "0.05"),
];

impl Default for GateRules {
    fn default() -> Self {
        Self {
            min_outcome_delta: 0.05,
            min_cases: 5,
            max_regressions: 0,
            max_token_overhead: 0.35,
            max_safety_findings: 0,
            solved_cases: 20,
            min_precision: 0.85,
            min_recall: 0.70,
            max_false_positive_rate: 0.10,
            max_latency_overhead: 0.50,
            latency_noise_ms: 250.0,
            max_call_overhead: 0.10,
            min_process: 0.80,
            min_pass_rate: 0.0,
        }
    }
}

/// Weights of the skill score's terms ([`score_terms`], `[designer.score]`). The terms are
/// the governance document's; the default weights are memskill's (the document's own
/// weights are not in this repository). Positive terms reward the skill, the others cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ScoreWeights {
    /// + outcome delta (candidate minus the better other mode).
    pub outcome: f64,
    /// + activation precision and + recall (against expected triggers, where known).
    pub precision: f64,
    pub recall: f64,
    /// - false-positive rate on negative cases.
    pub false_positives: f64,
    /// + process share.
    pub process: f64,
    /// - regressions, as a share of the replayed cases.
    pub regressions: f64,
    /// - token, latency and LLM-call overhead (each counted from 0 up).
    pub token_overhead: f64,
    pub latency_overhead: f64,
    pub call_overhead: f64,
    /// - safety findings (count).
    pub safety: f64,
    /// + reuse: uses in training / 100, capped at 1 (memskill's own term, issue 16).
    pub reuse: f64,
    /// Plus user feedback and plus maintainability: the governance design's two terms that a
    /// bank holds no evidence for (feedback lives in the registry; maintainability is not
    /// measured), shown as not measured and contributing 0, whatever their weight.
    pub feedback: f64,
    pub maintainability: f64,
}

impl Default for ScoreWeights {
    fn default() -> Self {
        Self {
            outcome: 1.0,
            precision: 0.25,
            recall: 0.25,
            false_positives: 0.5,
            process: 0.25,
            regressions: 1.0,
            token_overhead: 0.5,
            latency_overhead: 0.25,
            call_overhead: 0.25,
            safety: 1.0,
            reuse: 0.25,
            feedback: 0.0,
            maintainability: 0.0,
        }
    }
}

/// One named term of a skill score: its value (`None`: no evidence, counts 0), weight and
/// signed contribution.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScoreTerm {
    pub name: &'static str,
    pub value: Option<f64>,
    pub weight: f64,
    pub contribution: f64,
}

/// The evidence's note on a new skill's activation at the release gate.
pub const NEW_SKILL_ACTIVATION_NOTE: &str =
    "activation not gated: new skill, selected by the canary bias, not by a trained policy";

/// The release gate's one rule on activation evidence: why `run`'s precision, recall and
/// false positives do not gate (`None`: they gate). The gate selects the skill under test as
/// a canary would be selected (with the new-skill bias). A refine (`old_version` set: the
/// controller has trained with that skill name) is picked by the trained policy, so its
/// activation is judged; an added skill is picked only through the bias (the controller has
/// not learned it yet), so its activation says nothing about the skill: measured and
/// recorded, not gated.
pub fn activation_not_gated(run: &EvalRun) -> Option<&'static str> {
    (run.activation.is_some() && run.old_version.is_none()).then_some(NEW_SKILL_ACTIVATION_NOTE)
}

/// The release gate's verdict on `run` ([`verdict`] under [`activation_not_gated`]): sets
/// `passed` and `reasons`, and notes why the activation was not gated where it was not.
pub fn release_verdict(run: &mut EvalRun, rules: &GateRules) {
    let exempt = activation_not_gated(run);
    if let Some(n) = exempt {
        if !run.notes.iter().any(|x| x == n) {
            run.notes.push(n.to_string());
        }
    }
    (run.passed, run.reasons) = judge(run, rules, exempt.is_none());
}

/// Whether a run passes every rule, activation included (`skills eval`, whose selection is a
/// trained policy's or every skill on every span), and the reasons when it does not. The
/// release gate uses [`release_verdict`].
pub fn verdict(run: &EvalRun, rules: &GateRules) -> (bool, Vec<String>) {
    judge(run, rules, true)
}

/// [`verdict`], with the activation rules applied only if `activation`.
fn judge(run: &EvalRun, rules: &GateRules, activation: bool) -> (bool, Vec<String>) {
    let mut reasons = Vec::new();
    if run.cases.len() < rules.min_cases {
        reasons.push(format!(
            "{} cases replayed, the gate needs at least {}",
            run.cases.len(),
            rules.min_cases
        ));
    }
    if run.outcome_delta.is_nan() || run.outcome_delta < rules.min_outcome_delta {
        reasons.push(format!(
            "outcome delta {:.3} below {:.3}",
            run.outcome_delta, rules.min_outcome_delta
        ));
    }
    if run.regressions > rules.max_regressions {
        reasons.push(format!(
            "{} previously solved case(s) fail with it (at most {} allowed)",
            run.regressions, rules.max_regressions
        ));
    }
    if run.token_overhead > rules.max_token_overhead {
        reasons.push(format!(
            "token overhead {:.0}% above {:.0}%",
            100.0 * run.token_overhead,
            100.0 * rules.max_token_overhead
        ));
    }
    if run.safety_findings > rules.max_safety_findings {
        reasons.push(format!("{} safety finding(s)", run.safety_findings));
    }
    if activation {
        reasons.extend(activation_reasons(run, rules));
    }
    reasons.extend(cost_reasons(run, rules));
    if rules.min_pass_rate > 0.0 {
        let rate = run
            .mode(CompareMode::Candidate)
            .map_or(f64::NAN, |m| m.score);
        if rate.is_nan() || rate < rules.min_pass_rate {
            reasons.push(format!(
                "pass rate {rate:.2} below {:.2} (the candidate's mean case score)",
                rules.min_pass_rate
            ));
        }
    }
    if let Some(m) = run.mode(CompareMode::Candidate) {
        if let Some(p) = m.process().filter(|p| *p < rules.min_process) {
            reasons.push(format!(
                "process {p:.2} below {:.2}: {} of {} selections performed the skill's action, reached the memory bank and were not flagged",
                rules.min_process, m.process_ok, m.selections
            ));
        }
    }
    (reasons.is_empty(), reasons)
}

/// Precision, recall and false positives against expected triggers (none: not judged).
fn activation_reasons(run: &EvalRun, rules: &GateRules) -> Vec<String> {
    let mut reasons = Vec::new();
    let Some(a) = &run.activation else {
        return reasons;
    };
    if let Some(p) = a.precision.filter(|p| p.value < rules.min_precision) {
        reasons.push(format!(
            "activation precision {:.2} below {:.2} ({} of {} triggers expected)",
            p.value, rules.min_precision, p.k, p.n
        ));
    }
    if let Some(r) = a.recall.filter(|r| r.value < rules.min_recall) {
        reasons.push(format!(
            "activation recall {:.2} below {:.2} ({} of {} expected triggers)",
            r.value, rules.min_recall, r.k, r.n
        ));
    }
    if let Some(f) = a
        .false_positive_rate
        .filter(|f| f.value > rules.max_false_positive_rate)
    {
        reasons.push(format!(
            "regression: triggers on {} of {} negative cases (false-positive rate {:.2} above {:.2})",
            f.k, f.n, f.value, rules.max_false_positive_rate
        ));
    }
    reasons
}

/// Latency (beyond the noise floor) and LLM-call overhead.
fn cost_reasons(run: &EvalRun, rules: &GateRules) -> Vec<String> {
    let mut reasons = Vec::new();
    let (Some(c), Some(r)) = (run.mode(CompareMode::Candidate), reference_mode(run)) else {
        return reasons;
    };
    // not measured (a mode without an uncached executor call): neither passes nor fails
    if let Some(l) = run
        .latency_overhead
        .filter(|l| *l > rules.max_latency_overhead)
    {
        reasons.push(format!(
            "latency overhead {:.0}% above {:.0}% (executor {:.0} ms -> {:.0} ms per uncached call)",
            100.0 * l,
            100.0 * rules.max_latency_overhead,
            mean_executor_ms(r).unwrap_or(0.0),
            mean_executor_ms(c).unwrap_or(0.0)
        ));
    }
    if run.call_overhead > rules.max_call_overhead {
        reasons.push(format!(
            "LLM-call overhead {:.0}% above {:.0}% ({} -> {} calls)",
            100.0 * run.call_overhead,
            100.0 * rules.max_call_overhead,
            r.calls,
            c.calls
        ));
    }
    reasons
}

/// The mode a candidate is compared against for cost: its old version, else without it.
fn reference_mode(run: &EvalRun) -> Option<&memskill_core::EvalMode> {
    run.mode(CompareMode::Old)
        .or_else(|| run.mode(CompareMode::Without))
}

/// The mean wall time of a mode's uncached executor calls (`None` without one: every reply
/// came from the LLM cache, or there was no call).
fn mean_executor_ms(m: &memskill_core::EvalMode) -> Option<f64> {
    (m.executor_calls > 0).then(|| m.executor_ms / m.executor_calls as f64)
}

/// What a run's notes say when its latency could not be measured (followed by the counts).
pub const LATENCY_NOT_MEASURED: &str = "latency not measured";

/// The candidate's latency overhead over the reference mode `r`: the mean wall time of its
/// uncached executor calls over the reference's, minus 1. A reply the LLM cache answered
/// takes no model time, so cached calls are left out of both means; a mode with no uncached
/// call has no mean, and the overhead is not measured (`Err`: the note saying why). The
/// overhead is 0 when the candidate's uncached calls, at the reference's mean, would have
/// taken less than `noise_ms` less or more (with no cache hit: the difference of the two
/// modes' total wall times).
fn latency_overhead(
    c: &memskill_core::EvalMode,
    r: &memskill_core::EvalMode,
    noise_ms: f64,
) -> Result<f64, String> {
    let (Some(mc), Some(mr)) = (mean_executor_ms(c), mean_executor_ms(r)) else {
        let empty: Vec<String> = [c, r]
            .iter()
            .filter(|m| m.executor_calls == 0)
            .map(|m| {
                format!(
                    "{} ({} answered from the LLM cache)",
                    m.mode, m.cached_calls
                )
            })
            .collect();
        return Err(format!(
            "{LATENCY_NOT_MEASURED}: no uncached executor call in mode {}",
            empty.join(" and ")
        ));
    };
    // wall time is measured: a difference below the noise floor is no overhead (and keeps
    // the evidence of scripted runs, which answer in microseconds, reproducible)
    Ok(if ((mc - mr) * c.executor_calls as f64).abs() < noise_ms {
        0.0
    } else {
        overhead(mc, mr)
    })
}

/// `a / b - 1`, 0 when `b` is 0 (nothing to compare with).
fn overhead(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        a / b - 1.0
    } else {
        0.0
    }
}

/// Summary numbers of a run from its modes: the outcome delta (candidate minus the better
/// of the others), regressions (replayed cases — the stage's hard cases and the fixed solved
/// set — solved in the reference mode, the old version else without, and failed by the
/// candidate; `solved` = score >= `solved_at`; a case unscorable in either mode does not
/// count), the token, latency (per uncached executor call, see [`latency_overhead`]: not
/// measured, with a note, when a mode has no uncached call) and call overheads over the
/// reference mode, and the candidate's safety findings
/// beyond the reference mode's. Written into `run` (its `safety_findings` already holds the
/// skill-text scan).
pub fn summarise(run: &mut EvalRun, solved_at: f64, latency_noise_ms: f64) {
    let Some(cand) = run.mode(CompareMode::Candidate).cloned() else {
        run.outcome_delta = f64::NAN;
        return;
    };
    let others = run
        .modes
        .iter()
        .filter(|m| m.mode != CompareMode::Candidate)
        .map(|m| m.score)
        .fold(f64::NEG_INFINITY, f64::max);
    run.outcome_delta = if others.is_finite() {
        cand.score - others
    } else {
        f64::NAN
    };
    let reference = reference_mode(run).cloned();
    if let Some(r) = reference {
        run.regressions = r
            .case_scores
            .iter()
            .zip(&cand.case_scores)
            // a case unscorable in either mode (a failed call) is no evidence either way
            .filter(|(b, a)| a.is_finite() && **b >= solved_at && **a < solved_at)
            .count();
        run.token_overhead = overhead(cand.tokens as f64, r.tokens as f64);
        run.notes.retain(|n| !n.starts_with(LATENCY_NOT_MEASURED));
        run.latency_overhead = match latency_overhead(&cand, &r, latency_noise_ms) {
            Ok(l) => Some(l),
            Err(note) => {
                run.notes.push(note);
                None
            }
        };
        run.call_overhead = overhead(cand.calls as f64, r.calls as f64);
    }
    // memories the filter flags in the candidate mode beyond those of the reference mode
    // (the spans themselves may trip the scan whatever the skills)
    let base = reference_findings(run);
    run.safety_findings += cand.safety_findings.saturating_sub(base);
}

/// The record of a gate that could not replay `skill` (the reason says why): it fails.
pub fn failed_run(bank: &SkillBank, skill: &str, stage: u32, reason: String) -> EvalRun {
    let s = bank.get(skill);
    EvalRun {
        id: format!(
            "stage-{stage}:{skill}@{}",
            s.map_or(memskill_core::Version::INITIAL, |s| s.version)
        ),
        skill: skill.to_string(),
        version: s.map_or(memskill_core::Version::INITIAL, |s| s.version),
        stage,
        outcome_delta: f64::NAN,
        passed: false,
        reasons: vec![format!("the replay failed: {reason}")],
        description: s.map(|s| s.description.clone()).unwrap_or_default(),
        instructions: s.map(|s| s.instructions.clone()).unwrap_or_default(),
        ..Default::default()
    }
}

/// Flagged or refused memories of the mode the candidate is compared against.
fn reference_findings(run: &EvalRun) -> u64 {
    reference_mode(run).map_or(0, |m| m.safety_findings)
}

fn record(
    skill: &str,
    kind: ReleaseKind,
    bank: &SkillBank,
    stage: u32,
    note: String,
) -> ReleaseRecord {
    let v = bank
        .get(skill)
        .map_or(memskill_core::Version::INITIAL, |s| s.version);
    ReleaseRecord::status_change(skill, kind, v, stage, note)
}

/// A `held` record for high-risk candidate `name`. A refine of a skill that was selectable
/// in `before` (a seed primitive, say) does not take it away while it waits: the selectable
/// version is put back, and the held text stays in the stage's `refined` record and gate run.
fn hold(bank: &mut SkillBank, before: &SkillBank, name: &str, stage: u32, note: String) {
    let mut r = record(name, ReleaseKind::Held, bank, stage, note);
    let live =
        |s: &memskill_core::Skill| matches!(s.status, SkillStatus::Active | SkillStatus::Canary);
    if let (Some(old), Some(s)) = (before.get(name).filter(|o| live(o)), bank.get_mut(name)) {
        r.note.push_str(&format!(
            "; version {} stays selectable meanwhile",
            old.version
        ));
        *s = old.clone();
    }
    bank.releases.push(r);
}

/// Whether a skill is assessed high-risk (only under the governance design: elsewhere no
/// skill has a risk level).
fn high_risk(bank: &SkillBank, name: &str) -> bool {
    bank.get(name)
        .is_some_and(|s| s.risk == Some(memskill_core::RiskLevel::High))
}

/// How a person lets a held high-risk skill in.
pub const HIGH_RISK_REVIEW: &str = "a person promotes it after review: `memskill registry promote SKILL --approved-by NAME --reason TEXT --bank BANK` (needs a sandbox run of at least 15 cases and records the rollback plan)";

/// The high-risk gate's case count on a gate run: a high-risk skill's replay needs at least
/// [`memskill_core::governance::HIGH_RISK_MIN_CASES`] cases (the design: 15, not 5).
pub fn high_risk_verdict(run: &mut EvalRun, risk: Option<memskill_core::RiskLevel>) {
    let min = memskill_core::governance::HIGH_RISK_MIN_CASES;
    if risk == Some(memskill_core::RiskLevel::High) && run.cases.len() < min {
        run.passed = false;
        run.reasons.push(format!(
            "high-risk skill: {} cases, below the high-risk gate's {min}",
            run.cases.len()
        ));
    }
}

/// The gate is off: every candidate named in `changed` becomes a canary, except a
/// high-risk one (governance design), which stays a candidate with a `held` record: it
/// has no sandbox run and waits for a person.
pub fn admit_all(bank: &mut SkillBank, before: &SkillBank, changed: &[String], stage: u32) {
    for name in changed {
        if high_risk(bank, name)
            && bank
                .get(name)
                .is_some_and(|s| s.status == SkillStatus::Candidate)
        {
            let note =
                format!("high-risk skill, designer.gate = off: no sandbox run; {HIGH_RISK_REVIEW}");
            hold(bank, before, name, stage, note);
            continue;
        }
        let Some(s) = bank.get_mut(name) else {
            continue;
        };
        if s.status != SkillStatus::Candidate {
            continue;
        }
        s.status = SkillStatus::Canary;
        let r = record(
            name,
            ReleaseKind::Canaried,
            bank,
            stage,
            "designer.gate = off".into(),
        );
        bank.releases.push(r);
    }
}

/// Apply a gate run for `run.skill` to `bank` (the designer's proposed bank): passed ->
/// canary; failed -> an added skill stays candidate, a refined one goes back to its version
/// in `before` (the candidate text stays in the run). The run is stored in the bank.
pub fn settle(bank: &mut SkillBank, before: &SkillBank, run: EvalRun) {
    let name = run.skill.clone();
    let stage = run.stage;
    if run.passed && high_risk(bank, &name) {
        // eval_gate alone never lets a high-risk skill in: it stays a candidate
        let note = format!(
            "passed the offline gate ({}) on {} cases, high-risk: held; {HIGH_RISK_REVIEW}",
            run.id,
            run.cases.len()
        );
        hold(bank, before, &name, stage, note);
    } else if run.passed {
        if let Some(s) = bank.get_mut(&name) {
            s.status = SkillStatus::Canary;
        }
        let note = format!(
            "passed the offline gate ({}): outcome delta {:+.3} on {} cases, {} regressions, token overhead {:+.0}%",
            run.id,
            run.outcome_delta,
            run.cases.len(),
            run.regressions,
            100.0 * run.token_overhead
        );
        let r = record(&name, ReleaseKind::Canaried, bank, stage, note);
        bank.releases.push(r);
    } else {
        let note = format!(
            "failed the offline gate ({}): {}",
            run.id,
            run.reasons.join("; ")
        );
        let mut r = record(&name, ReleaseKind::GateFailed, bank, stage, note);
        if let (Some(old), Some(s)) = (before.get(&name), bank.get_mut(&name)) {
            // a refine: keep the old version selectable, as it was
            r.from_version = Some(s.version);
            r.to_version = old.version;
            *s = old.clone();
        }
        bank.releases.push(r);
    }
    bank.eval_runs.push(run);
}

/// A skill's score terms from the eval run of its current version and its use in training
/// (see [`ScoreWeights`] for the terms). `None` when the skill has no eval run for its
/// current version (the gate was off, or a held-back refine).
pub fn score_terms(bank: &SkillBank, skill: &str, w: &ScoreWeights) -> Option<Vec<ScoreTerm>> {
    let s = bank.get(skill)?;
    // the evidence for this version (not a later candidate the gate held back)
    let run = bank
        .eval_runs
        .iter()
        .rev()
        .find(|r| r.skill == skill && r.version == s.version)?;
    let cand = run.mode(CompareMode::Candidate);
    let act = run.activation.as_ref();
    let rate = |f: fn(&memskill_core::ActivationStats) -> Option<memskill_core::Rate>| {
        act.and_then(f).map(|r| r.value)
    };
    let regressions =
        (!run.cases.is_empty()).then(|| run.regressions as f64 / run.cases.len() as f64);
    let terms: [(&'static str, Option<f64>, f64); 13] = [
        (
            "outcome delta",
            run.outcome_delta.is_finite().then_some(run.outcome_delta),
            w.outcome,
        ),
        ("activation precision", rate(|a| a.precision), w.precision),
        ("activation recall", rate(|a| a.recall), w.recall),
        (
            "false-positive rate",
            rate(|a| a.false_positive_rate),
            -w.false_positives,
        ),
        ("process", cand.and_then(|m| m.process()), w.process),
        ("regressions", regressions, -w.regressions),
        (
            "token overhead",
            Some(run.token_overhead.max(0.0)),
            -w.token_overhead,
        ),
        (
            "latency overhead",
            run.latency_overhead.map(|l| l.max(0.0)),
            -w.latency_overhead,
        ),
        (
            "call overhead",
            Some(run.call_overhead.max(0.0)),
            -w.call_overhead,
        ),
        (
            "safety findings",
            Some(run.safety_findings as f64),
            -w.safety,
        ),
        (
            "reuse",
            Some((s.usage.count as f64 / 100.0).min(1.0)),
            w.reuse,
        ),
        ("user feedback", None, w.feedback),
        ("maintainability", None, w.maintainability),
    ];
    Some(
        terms
            .into_iter()
            .map(|(name, value, weight)| ScoreTerm {
                name,
                value,
                weight,
                // (+ 0.0: a zero cost is 0, not -0)
                contribution: value.map_or(0.0, |v| weight * v + 0.0),
            })
            .collect(),
    )
}

/// A skill's score: the sum of its [`score_terms`]' contributions.
pub fn skill_score(bank: &SkillBank, skill: &str, w: &ScoreWeights) -> Option<f64> {
    score_terms(bank, skill, w).map(|t| t.iter().map(|t| t.contribution).sum())
}

/// A latency overhead as a signed percentage, "not measured" when it was not.
pub fn latency_pct(l: Option<f64>) -> String {
    l.map_or("not measured".to_string(), |l| {
        format!("{:+.0}%", 100.0 * l)
    })
}

/// A markdown table of eval runs (skills.md, RELEASES.md, `skills show`): the three modes'
/// scores, the delta, regressions, token / latency / call overhead, activation (share of
/// spans; precision, recall and false-positive rate against expected triggers, with 95%
/// Wilson intervals, where the cases had them), process, safety findings and the verdict.
pub fn eval_runs_md(runs: &[EvalRun]) -> String {
    let mut s = String::from(
        "| run | skill | cases | without | old | candidate | delta | regressions | tokens | latency | calls | activation | precision | recall | false positives | process | safety | verdict |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    let score = |r: &EvalRun, m: CompareMode| {
        r.mode(m)
            .filter(|m| m.score.is_finite())
            .map_or("-".to_string(), |m| format!("{:.3}", m.score))
    };
    let rate = |r: Option<memskill_core::Rate>| r.map_or("-".to_string(), |r| r.to_string());
    for r in runs {
        let mut verdict = if r.passed {
            "pass".to_string()
        } else {
            format!("fail: {}", r.reasons.join("; "))
        };
        for n in &r.notes {
            verdict.push_str(&format!(" (note: {n})"));
        }
        let a = r.activation.as_ref();
        let cand = r.mode(CompareMode::Candidate);
        s.push_str(&format!(
            "| {} | {}@{} | {} | {} | {} | {} | {:+.3} | {} | {:+.0}% | {} | {:+.0}% | {:.2} | {} | {} | {} | {} | {} | {} |\n",
            r.id,
            r.skill,
            r.version,
            r.cases.len(),
            score(r, CompareMode::Without),
            score(r, CompareMode::Old),
            score(r, CompareMode::Candidate),
            r.outcome_delta,
            r.regressions,
            100.0 * r.token_overhead,
            latency_pct(r.latency_overhead),
            100.0 * r.call_overhead,
            cand.map_or(0.0, |m| m.activation),
            rate(a.and_then(|a| a.precision)),
            rate(a.and_then(|a| a.recall)),
            rate(a.and_then(|a| a.false_positive_rate)),
            cand.and_then(|m| m.process()).map_or("-".to_string(), |p| format!(
                "{p:.2} ({}/{})",
                cand.map_or(0, |m| m.process_ok),
                cand.map_or(0, |m| m.selections)
            )),
            r.safety_findings,
            verdict.replace('|', "\\|")
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use memskill_core::{EvalMode, Version};

    fn mode(name: CompareMode, scores: &[f64], tokens: u64) -> EvalMode {
        EvalMode {
            mode: name,
            score: scores.iter().sum::<f64>() / scores.len() as f64,
            case_scores: scores.to_vec(),
            tokens,
            calls: 1,
            executor_calls: 1,
            activation: 0.5,
            safety_findings: 0,
            ..Default::default()
        }
    }

    fn run(modes: Vec<EvalMode>) -> EvalRun {
        let n = modes[0].case_scores.len();
        let mut r = EvalRun {
            id: "stage-1:x@0.1.0".into(),
            skill: "x".into(),
            stage: 1,
            cases: (0..n).map(|i| format!("s/q{i}")).collect(),
            solved_before: vec![false; n],
            modes,
            ..Default::default()
        };
        summarise(&mut r, 0.5, GateRules::default().latency_noise_ms);
        r
    }

    #[test]
    fn a_helpful_skill_passes_and_a_harmful_one_fails_with_its_reasons() {
        let rules = GateRules::default();
        let good = run(vec![
            mode(CompareMode::Without, &[0.0, 0.0, 1.0, 1.0, 0.0, 0.0], 100),
            mode(CompareMode::Candidate, &[1.0, 1.0, 1.0, 1.0, 0.0, 1.0], 120),
        ]);
        assert!((good.outcome_delta - 0.5).abs() < 1e-12);
        assert_eq!(good.regressions, 0);
        assert!((good.token_overhead - 0.2).abs() < 1e-12);
        assert_eq!(verdict(&good, &rules), (true, vec![]));

        let bad = run(vec![
            mode(CompareMode::Without, &[0.0, 0.0, 1.0, 1.0, 0.0, 0.0], 100),
            mode(CompareMode::Candidate, &[0.0, 0.0, 0.0, 1.0, 0.0, 0.0], 200),
        ]);
        let (ok, reasons) = verdict(&bad, &rules);
        assert!(!ok);
        assert_eq!(bad.regressions, 1);
        assert_eq!(reasons.len(), 3, "{reasons:?}");
        assert!(reasons[0].starts_with("outcome delta -0.167"));
        assert!(reasons[1].starts_with("1 previously solved"));
        assert!(reasons[2].starts_with("token overhead 100%"));

        // the better of `without` and `old` is the bar
        let refine = run(vec![
            mode(CompareMode::Without, &[0.0; 5], 100),
            mode(CompareMode::Old, &[1.0, 1.0, 1.0, 0.0, 0.0], 100),
            mode(CompareMode::Candidate, &[1.0, 1.0, 1.0, 0.0, 0.0], 100),
        ]);
        assert_eq!(refine.outcome_delta, 0.0);
        assert!(!verdict(&refine, &rules).0);
        // too few cases
        let few = run(vec![
            mode(CompareMode::Without, &[0.0], 1),
            mode(CompareMode::Candidate, &[1.0], 1),
        ]);
        assert!(verdict(&few, &rules).1[0].contains("at least 5"));
    }

    /// The governance preset's pass rate: the candidate's mean case score must reach it.
    #[test]
    fn the_pass_rate_rule_holds_a_candidate_that_helps_but_passes_too_few_cases() {
        let some_help = run(vec![
            mode(CompareMode::Without, &[0.0, 0.0, 0.0, 0.0, 0.0, 1.0], 100),
            mode(CompareMode::Candidate, &[1.0, 1.0, 0.0, 0.0, 0.0, 1.0], 100),
        ]);
        let mut rules = GateRules::default();
        assert!(verdict(&some_help, &rules).0);
        rules.min_pass_rate = 0.80;
        let (ok, reasons) = verdict(&some_help, &rules);
        assert!(!ok);
        assert_eq!(
            reasons,
            ["pass rate 0.50 below 0.80 (the candidate's mean case score)"]
        );
    }

    #[test]
    fn settle_moves_statuses_and_keeps_the_evidence() {
        use memskill_core::{ActionKind, Skill};
        let before = SkillBank::seed();
        let mut proposed = before.clone();
        let mut add = Skill::active("keep-dates", ActionKind::Insert, "d", "i", "t");
        add.status = SkillStatus::Candidate;
        proposed.insert(add).unwrap();
        let old_insert = before.get("insert").unwrap().clone();
        let ins = proposed.get_mut("insert").unwrap();
        ins.instructions = "changed".into();
        ins.version = ins.version.bump_patch();
        ins.status = SkillStatus::Candidate;

        let mut pass = run(vec![
            mode(CompareMode::Without, &[0.0; 5], 1),
            mode(CompareMode::Candidate, &[1.0; 5], 1),
        ]);
        pass.skill = "keep-dates".into();
        pass.version = Version::new(1, 0, 0);
        pass.passed = true;
        let mut fail = pass.clone();
        fail.skill = "insert".into();
        fail.version = Version::new(1, 0, 1);
        fail.passed = false;
        fail.reasons = vec!["outcome delta".into()];
        settle(&mut proposed, &before, pass);
        settle(&mut proposed, &before, fail);
        assert_eq!(
            proposed.get("keep-dates").unwrap().status,
            SkillStatus::Canary
        );
        assert_eq!(proposed.get("insert").unwrap(), &old_insert);
        assert_eq!(proposed.eval_runs.len(), 2);
        let kinds: Vec<ReleaseKind> = proposed
            .releases
            .iter()
            .rev()
            .take(2)
            .map(|r| r.kind)
            .collect();
        assert_eq!(kinds, vec![ReleaseKind::GateFailed, ReleaseKind::Canaried]);
        assert!(skill_score(&proposed, "keep-dates", &ScoreWeights::default()).unwrap() > 0.9);
        assert_eq!(
            skill_score(&proposed, "noop", &ScoreWeights::default()),
            None
        );
        // the held-back refine's evidence is not the live (old) version's score
        assert_eq!(
            skill_score(&proposed, "insert", &ScoreWeights::default()),
            None
        );

        let mut off = before.clone();
        let mut add = Skill::active("keep-names", ActionKind::Insert, "d", "i", "t");
        add.status = SkillStatus::Candidate;
        off.insert(add).unwrap();
        let before_off = off.clone();
        admit_all(&mut off, &before_off, &["keep-names".into()], 2);
        assert_eq!(off.get("keep-names").unwrap().status, SkillStatus::Canary);
        assert_eq!(off.releases.last().unwrap().kind, ReleaseKind::Canaried);

        // a seed primitive refined into high-risk text is held, and its live version stays
        // selectable meanwhile (with the gate off and on)
        let live = SkillBank::seed();
        let old_version = live.get("insert").unwrap().version;
        let refined = |b: &SkillBank| {
            let mut b = b.clone();
            let s = b.get_mut("insert").unwrap();
            s.instructions = "Save each fact to a file on disk.".into();
            s.version = s.version.bump_patch();
            s.status = SkillStatus::Candidate;
            s.risk = Some(memskill_core::RiskLevel::High);
            b
        };
        let mut held = refined(&live);
        admit_all(&mut held, &live, &["insert".into()], 3);
        let mut gated = refined(&live);
        let mut run = failed_run(&gated, "insert", 3, String::new());
        run.passed = true;
        settle(&mut gated, &live, run);
        for b in [&held, &gated] {
            let s = b.get("insert").unwrap();
            assert_eq!((s.status, s.version), (SkillStatus::Active, old_version));
            assert!(b.selectable().iter().any(|s| s.name == "insert"));
            let r = b
                .releases
                .iter()
                .rfind(|r| r.kind == ReleaseKind::Held)
                .unwrap();
            assert!(r.note.contains("stays selectable"), "{}", r.note);
        }
    }

    /// Item 1 of the leftovers: replies the LLM cache answered take no model time, so the
    /// latency compares the means of the uncached calls, and a mode without one leaves the
    /// latency not measured (a note, no verdict, no score term) rather than made up.
    #[test]
    fn latency_compares_uncached_calls_only_and_is_not_measured_without_them() {
        let rules = GateRules::default();
        // (mode, executor ms, uncached calls, cached calls)
        let modes = |w: (f64, u64, u64), c: (f64, u64, u64)| {
            let mut m = vec![
                mode(CompareMode::Without, &[0.0; 6], 100),
                mode(CompareMode::Candidate, &[1.0; 6], 100),
            ];
            for (m, (ms, calls, cached)) in m.iter_mut().zip([w, c]) {
                (m.executor_ms, m.executor_calls, m.cached_calls) = (ms, calls, cached);
            }
            m
        };
        // half the candidate's calls hit the cache: per uncached call it is as fast as the
        // reference (the totals, 500 ms against 1000 ms, would say -50%)
        let r = run(modes((1000.0, 10, 0), (500.0, 5, 5)));
        assert_eq!(r.latency_overhead, Some(0.0));
        // the reference's calls hit the cache: the candidate is 30% slower per call (the
        // totals, 1300 ms against 400 ms, would say +225% and fail it)
        let r = run(modes((400.0, 4, 6), (1300.0, 10, 0)));
        assert!((r.latency_overhead.unwrap() - 0.3).abs() < 1e-12, "{r:?}");
        assert_eq!(verdict(&r, &rules), (true, vec![]));
        // ... and 60% slower per call fails, with the means in the reason
        let r = run(modes((400.0, 4, 6), (1600.0, 10, 0)));
        let (pass, reasons) = verdict(&r, &rules);
        assert!(!pass);
        assert_eq!(
            reasons,
            ["latency overhead 60% above 50% (executor 100 ms -> 160 ms per uncached call)"]
        );
        // every candidate call answered from the cache: not measured, and said so
        let mut r = run(modes((1000.0, 10, 0), (0.0, 0, 10)));
        assert_eq!(r.latency_overhead, None);
        assert_eq!(
            r.notes,
            ["latency not measured: no uncached executor call in mode candidate (10 answered from the LLM cache)"]
        );
        assert_eq!(verdict(&r, &rules), (true, vec![]));
        // summarised again, the note is not repeated
        summarise(&mut r, 0.5, rules.latency_noise_ms);
        assert_eq!(r.notes.len(), 1);
        assert!(eval_runs_md(std::slice::from_ref(&r)).contains("| not measured |"));
        let r = run(modes((0.0, 0, 10), (0.0, 0, 10)));
        assert_eq!(
            r.notes,
            ["latency not measured: no uncached executor call in mode candidate (10 answered from the LLM cache) and without (10 answered from the LLM cache)"]
        );
        let mut bank = SkillBank::empty();
        let mut x =
            memskill_core::Skill::active("x", memskill_core::ActionKind::Insert, "d", "i", "t");
        x.version = r.version;
        bank.insert(x).unwrap();
        bank.eval_runs.push(r);
        let terms = score_terms(&bank, "x", &ScoreWeights::default()).unwrap();
        let l = terms.iter().find(|t| t.name == "latency overhead").unwrap();
        assert_eq!((l.value, l.contribution), (None, 0.0));
    }

    #[test]
    fn latency_calls_process_and_activation_each_fail_the_gate_on_their_own() {
        use memskill_core::{activation_stats, ActivationStats};
        let rules = GateRules::default();
        let base = || {
            let mut w = mode(CompareMode::Without, &[0.0; 6], 100);
            w.executor_ms = 1000.0;
            w.executor_calls = 10;
            w.calls = 10;
            let mut c = mode(CompareMode::Candidate, &[1.0; 6], 100);
            c.executor_ms = 1300.0;
            c.executor_calls = 10;
            c.calls = 10;
            c.selections = 10;
            c.process_ok = 9;
            vec![w, c]
        };
        let ok = run(base());
        assert!((ok.latency_overhead.unwrap() - 0.3).abs() < 1e-12);
        assert_eq!(verdict(&ok, &rules), (true, vec![]));

        // latency: 1000 -> 1600 ms is +60%
        let mut m = base();
        m[1].executor_ms = 1600.0;
        let slow = run(m);
        let (pass, reasons) = verdict(&slow, &rules);
        assert!(!pass);
        assert_eq!(reasons.len(), 1, "{reasons:?}");
        assert!(
            reasons[0].starts_with("latency overhead 60% above 50%"),
            "{reasons:?}"
        );
        // ... but a difference below the noise floor is not judged
        let mut m = base();
        m[0].executor_ms = 10.0;
        m[1].executor_ms = 40.0;
        assert!(verdict(&run(m), &rules).0);

        // calls
        let mut m = base();
        m[1].calls = 12;
        let (_, reasons) = verdict(&run(m), &rules);
        assert_eq!(reasons.len(), 1, "{reasons:?}");
        assert!(
            reasons[0].starts_with("LLM-call overhead 20% above 10%"),
            "{reasons:?}"
        );

        // process
        let mut m = base();
        m[1].process_ok = 2;
        let (_, reasons) = verdict(&run(m), &rules);
        assert_eq!(reasons.len(), 1, "{reasons:?}");
        assert!(
            reasons[0].starts_with("process 0.20 below 0.80"),
            "{reasons:?}"
        );

        // activation: a skill firing on every span fails precision and false positives; a
        // targeted one passes
        let picked_x = ["x".to_string()];
        let picked_y = ["y".to_string()];
        let mut cases: Vec<(Option<&str>, &[String])> = Vec::new();
        for i in 0..20 {
            let want = if i % 2 == 0 { Some("x") } else { None };
            cases.push((want, &picked_x));
        }
        let mut everywhere = run(base());
        everywhere.activation = Some(activation_stats("x", &cases));
        let (_, reasons) = verdict(&everywhere, &rules);
        assert_eq!(reasons.len(), 2, "{reasons:?}");
        assert!(reasons[0].starts_with("activation precision 0.50 below 0.85"));
        assert!(reasons[1].starts_with("regression: triggers on 10 of 10 negative cases"));
        let targeted_cases: Vec<(Option<&str>, &[String])> = (0..20)
            .map(|i| {
                if i % 2 == 0 {
                    (Some("x"), &picked_x[..])
                } else {
                    (None, &picked_y[..])
                }
            })
            .collect();
        let mut targeted = run(base());
        targeted.activation = Some(activation_stats("x", &targeted_cases));
        assert_eq!(verdict(&targeted, &rules), (true, vec![]));
        // a skill that never fires where expected fails recall
        let mut silent = run(base());
        silent.activation = Some(ActivationStats {
            cases: 10,
            precision: None,
            recall: memskill_core::Rate::wilson(0, 5),
            false_positive_rate: memskill_core::Rate::wilson(0, 5),
        });
        let (_, reasons) = verdict(&silent, &rules);
        assert!(
            reasons[0].starts_with("activation recall 0.00 below 0.70"),
            "{reasons:?}"
        );

        // the evidence table shows every column
        let md = eval_runs_md(&[slow, targeted]);
        assert!(md.contains("| +60% |"), "{md}");
        assert!(md.contains("1.00 [0.72, 1.00] (10/10)"), "{md}");
        assert!(md.contains("0.90 (9/10)"), "{md}");
    }

    #[test]
    fn the_score_names_every_term_and_each_weight_moves_it() {
        use memskill_core::{ActionKind, Skill};
        let mut bank = SkillBank::seed();
        let mut add = Skill::active("keep-dates", ActionKind::Insert, "d", "i", "t");
        add.version = Version::INITIAL;
        bank.insert(add).unwrap();
        let mut w = mode(CompareMode::Without, &[0.0; 5], 100);
        w.executor_ms = 1000.0;
        let mut c = mode(CompareMode::Candidate, &[1.0; 5], 150);
        c.executor_ms = 3000.0;
        c.selections = 4;
        c.process_ok = 3;
        let mut r = run(vec![w, c]);
        r.skill = "keep-dates".into();
        bank.eval_runs.push(r);
        let d = ScoreWeights::default();
        let terms = score_terms(&bank, "keep-dates", &d).unwrap();
        let names: Vec<&str> = terms.iter().map(|t| t.name).collect();
        assert_eq!(
            names,
            [
                "outcome delta",
                "activation precision",
                "activation recall",
                "false-positive rate",
                "process",
                "regressions",
                "token overhead",
                "latency overhead",
                "call overhead",
                "safety findings",
                "reuse",
                "user feedback",
                "maintainability"
            ]
        );
        // the governance terms without evidence count 0 whatever their weight
        let gov = ScoreWeights {
            feedback: 0.1,
            maintainability: 0.05,
            ..d.clone()
        };
        assert_eq!(
            skill_score(&bank, "keep-dates", &gov),
            skill_score(&bank, "keep-dates", &d)
        );
        // 1.0 outcome + 0.25 * 0.75 process - 0.5 * 0.5 tokens - 0.25 * 2.0 latency
        let total = skill_score(&bank, "keep-dates", &d).unwrap();
        assert!(
            (total - (1.0 + 0.1875 - 0.25 - 0.5)).abs() < 1e-12,
            "{total}"
        );
        let heavier = ScoreWeights {
            latency_overhead: 1.0,
            ..d.clone()
        };
        let t2 = skill_score(&bank, "keep-dates", &heavier).unwrap();
        assert!((total - t2 - 1.5).abs() < 1e-12, "{t2}");
        // undefined terms (no expected triggers) count 0 and say so
        assert_eq!(terms[1].value, None);
        assert_eq!(terms[1].contribution, 0.0);
    }

    #[test]
    fn a_new_skills_activation_is_recorded_but_not_gated_and_a_refines_is() {
        use memskill_core::{ActivationStats, Rate};
        let rules = GateRules::default();
        // selected on a fifth of its expected spans (the canary bias), never elsewhere
        let low_recall = ActivationStats {
            cases: 20,
            precision: Rate::wilson(2, 2),
            recall: Rate::wilson(2, 10),
            false_positive_rate: Rate::wilson(0, 10),
        };
        // added: no old version
        let mut added = run(vec![
            mode(CompareMode::Without, &[0.0; 6], 100),
            mode(CompareMode::Candidate, &[1.0; 6], 100),
        ]);
        added.activation = Some(low_recall.clone());
        assert_eq!(
            activation_not_gated(&added),
            Some(NEW_SKILL_ACTIVATION_NOTE)
        );
        release_verdict(&mut added, &rules);
        assert!(added.passed, "{:?}", added.reasons);
        assert_eq!(added.notes, [NEW_SKILL_ACTIVATION_NOTE]);
        // recorded as measured
        assert_eq!(added.activation, Some(low_recall.clone()));
        // (the plain verdict, `skills eval`'s, judges it)
        assert!(verdict(&added, &rules).1[0].starts_with("activation recall 0.20 below 0.70"));
        let md = eval_runs_md(std::slice::from_ref(&added));
        assert!(
            md.contains(&format!("| pass (note: {NEW_SKILL_ACTIVATION_NOTE}) |")),
            "{md}"
        );
        assert!(md.contains("| 0.20 [0.06, 0.51] (2/10) |"), "{md}");
        // a second verdict does not repeat the note
        release_verdict(&mut added, &rules);
        assert_eq!(added.notes.len(), 1);

        // refine: the old version exists, the controller has trained with the name
        let mut refine = run(vec![
            mode(CompareMode::Without, &[0.0; 6], 100),
            mode(CompareMode::Old, &[0.0; 6], 100),
            mode(CompareMode::Candidate, &[1.0; 6], 100),
        ]);
        refine.old_version = Some(Version::INITIAL);
        refine.activation = Some(low_recall);
        assert_eq!(activation_not_gated(&refine), None);
        release_verdict(&mut refine, &rules);
        assert!(!refine.passed);
        assert_eq!(refine.reasons.len(), 1, "{:?}", refine.reasons);
        assert!(refine.reasons[0].starts_with("activation recall 0.20 below 0.70"));
        assert!(refine.notes.is_empty());

        // a new skill without expected triggers keeps only the trainer's note on that
        let mut none = run(vec![
            mode(CompareMode::Without, &[0.0; 6], 100),
            mode(CompareMode::Candidate, &[1.0; 6], 100),
        ]);
        assert_eq!(activation_not_gated(&none), None);
        release_verdict(&mut none, &rules);
        assert!(none.passed && none.notes.is_empty());
    }

    #[test]
    fn a_run_without_expected_triggers_says_so_and_is_not_failed_for_it() {
        let mut r = run(vec![
            mode(CompareMode::Without, &[0.0; 5], 100),
            mode(CompareMode::Candidate, &[1.0; 5], 100),
        ]);
        r.notes = vec!["no cases with expected triggers (locomo): not gated".into()];
        let (pass, reasons) = verdict(&r, &GateRules::default());
        assert!(pass, "{reasons:?}");
        r.passed = pass;
        let md = eval_runs_md(&[r]);
        assert!(
            md.contains("| pass (note: no cases with expected triggers (locomo): not gated) |"),
            "{md}"
        );
        assert!(md.contains("| - | - | - |"), "no activation numbers: {md}");
    }
}
