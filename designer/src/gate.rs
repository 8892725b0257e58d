//! The release gate between candidate and canary, and the skill score.
//!
//! A designer change enters the bank as a **candidate**. With `designer.gate = "off"` (the
//! reference has no gate; reproduction configs keep it off) every candidate becomes a
//! **canary** at once, which selects and trains exactly as the reference's new skills do.
//! With `designer.gate = "offline"` the trainer replays the change's hard cases plus a fixed
//! set of previously solved cases in three modes (without the skill, its old version, the
//! candidate; same spans and seeds) into an [`EvalRun`]; [`verdict`] decides from it, and
//! [`settle`] applies the outcome: a pass makes the candidate a canary, a failure leaves an
//! added skill a (non-selectable) candidate and keeps a refined skill at its old version,
//! with the failing record. Canary -> active happens when its stage beats the best
//! snapshot ([`crate::Evolution::on_stage_end`]).
//!
//! Everything here is pure: the replay itself (executor, answerer) lives in the trainer.

use memskill_core::{EvalRun, ReleaseKind, ReleaseRecord, SkillBank, SkillStatus};
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

/// Thresholds of the offline gate (`[designer.gate_rules]`) and the skill-score weights
/// (`[designer.score]`).
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
}

impl Default for GateRules {
    fn default() -> Self {
        Self {
            min_outcome_delta: 0.05,
            min_cases: 5,
            max_regressions: 0,
            max_token_overhead: 0.35,
            max_safety_findings: 0,
            solved_cases: 20,
        }
    }
}

/// Weights of the skill score ([`skill_score`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ScoreWeights {
    pub outcome: f64,
    pub activation: f64,
    pub reuse: f64,
    pub cost: f64,
    pub safety: f64,
}

impl Default for ScoreWeights {
    fn default() -> Self {
        Self {
            outcome: 1.0,
            activation: 0.25,
            reuse: 0.25,
            cost: 0.5,
            safety: 1.0,
        }
    }
}

/// Whether a run passes the gate, and the reasons when it does not.
pub fn verdict(run: &EvalRun, rules: &GateRules) -> (bool, Vec<String>) {
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
    (reasons.is_empty(), reasons)
}

/// Summary numbers of a run from its modes: the outcome delta (candidate minus the better
/// of the others), regressions (replayed cases — the stage's hard cases and the fixed solved
/// set — solved in the reference mode, the old version else without, and failed by the
/// candidate; `solved` = score >= `solved_at`; a case unscorable in either mode does not
/// count), the token overhead over the reference mode, and the candidate's safety findings
/// beyond the reference mode's. Written into `run` (its `safety_findings` already holds the
/// skill-text scan).
pub fn summarise(run: &mut EvalRun, solved_at: f64) {
    let Some(cand) = run.mode("candidate").cloned() else {
        run.outcome_delta = f64::NAN;
        return;
    };
    let others = run
        .modes
        .iter()
        .filter(|m| m.mode != "candidate")
        .map(|m| m.score)
        .fold(f64::NEG_INFINITY, f64::max);
    run.outcome_delta = if others.is_finite() {
        cand.score - others
    } else {
        f64::NAN
    };
    let reference = run.mode("old").or_else(|| run.mode("without")).cloned();
    if let Some(r) = reference {
        run.regressions = r
            .case_scores
            .iter()
            .zip(&cand.case_scores)
            // a case unscorable in either mode (a failed call) is no evidence either way
            .filter(|(b, a)| a.is_finite() && **b >= solved_at && **a < solved_at)
            .count();
        run.token_overhead = if r.tokens == 0 {
            0.0
        } else {
            cand.tokens as f64 / r.tokens as f64 - 1.0
        };
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
        old_version: None,
        stage,
        cases: Vec::new(),
        solved_before: Vec::new(),
        modes: Vec::new(),
        outcome_delta: f64::NAN,
        regressions: 0,
        token_overhead: 0.0,
        safety_findings: 0,
        passed: false,
        reasons: vec![format!("the replay failed: {reason}")],
        description: s.map(|s| s.description.clone()).unwrap_or_default(),
        instructions: s.map(|s| s.instructions.clone()).unwrap_or_default(),
    }
}

/// Flagged or refused memories of the mode the candidate is compared against.
fn reference_findings(run: &EvalRun) -> u64 {
    run.mode("old")
        .or_else(|| run.mode("without"))
        .map_or(0, |m| m.safety_findings)
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

/// The gate is off: every candidate named in `changed` becomes a canary.
pub fn admit_all(bank: &mut SkillBank, changed: &[String], stage: u32) {
    for name in changed {
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
    if run.passed {
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

/// A skill's score from its latest eval run and its use in training: outcome delta,
/// activation and reuse (uses, saturating at 100) reward it; token overhead and safety
/// findings cost it. `None` when the skill has no eval run (the gate was off).
pub fn skill_score(bank: &SkillBank, skill: &str, w: &ScoreWeights) -> Option<f64> {
    let version = bank.get(skill)?.version;
    // the evidence for this version (not a later candidate the gate held back)
    let run = bank
        .eval_runs
        .iter()
        .rev()
        .find(|r| r.skill == skill && r.version == version)?;
    let activation = run.mode("candidate").map_or(0.0, |m| m.activation);
    let uses = bank.get(skill).map_or(0, |s| s.usage.count);
    let reuse = (uses as f64 / 100.0).min(1.0);
    let delta = if run.outcome_delta.is_nan() {
        0.0
    } else {
        run.outcome_delta
    };
    Some(
        w.outcome * delta + w.activation * activation + w.reuse * reuse
            - w.cost * run.token_overhead.max(0.0)
            - w.safety * run.safety_findings as f64,
    )
}

/// A markdown table of eval runs (skills.md, `skills eval`): the three modes' scores, the
/// delta, regressions, token overhead, activation, safety findings and the verdict.
pub fn eval_runs_md(runs: &[EvalRun]) -> String {
    let mut s = String::from(
        "| run | skill | cases | without | old | candidate | delta | regressions | tokens | activation | safety | verdict |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    let score = |r: &EvalRun, m: &str| {
        r.mode(m)
            .filter(|m| m.score.is_finite())
            .map_or("-".to_string(), |m| format!("{:.3}", m.score))
    };
    for r in runs {
        let verdict = if r.passed {
            "pass".to_string()
        } else {
            format!("fail: {}", r.reasons.join("; "))
        };
        s.push_str(&format!(
            "| {} | {}@{} | {} | {} | {} | {} | {:+.3} | {} | {:+.0}% | {:.2} | {} | {} |\n",
            r.id,
            r.skill,
            r.version,
            r.cases.len(),
            score(r, "without"),
            score(r, "old"),
            score(r, "candidate"),
            r.outcome_delta,
            r.regressions,
            100.0 * r.token_overhead,
            r.mode("candidate").map_or(0.0, |m| m.activation),
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

    fn mode(name: &str, scores: &[f64], tokens: u64) -> EvalMode {
        EvalMode {
            mode: name.into(),
            score: scores.iter().sum::<f64>() / scores.len() as f64,
            case_scores: scores.to_vec(),
            tokens,
            calls: 1,
            activation: 0.5,
            safety_findings: 0,
        }
    }

    fn run(modes: Vec<EvalMode>) -> EvalRun {
        let n = modes[0].case_scores.len();
        let mut r = EvalRun {
            id: "stage-1:x@0.1.0".into(),
            skill: "x".into(),
            version: Version::INITIAL,
            old_version: None,
            stage: 1,
            cases: (0..n).map(|i| format!("s/q{i}")).collect(),
            solved_before: vec![false; n],
            modes,
            outcome_delta: 0.0,
            regressions: 0,
            token_overhead: 0.0,
            safety_findings: 0,
            passed: false,
            reasons: Vec::new(),
            description: String::new(),
            instructions: String::new(),
        };
        summarise(&mut r, 0.5);
        r
    }

    #[test]
    fn a_helpful_skill_passes_and_a_harmful_one_fails_with_its_reasons() {
        let rules = GateRules::default();
        let good = run(vec![
            mode("without", &[0.0, 0.0, 1.0, 1.0, 0.0, 0.0], 100),
            mode("candidate", &[1.0, 1.0, 1.0, 1.0, 0.0, 1.0], 120),
        ]);
        assert!((good.outcome_delta - 0.5).abs() < 1e-12);
        assert_eq!(good.regressions, 0);
        assert!((good.token_overhead - 0.2).abs() < 1e-12);
        assert_eq!(verdict(&good, &rules), (true, vec![]));

        let bad = run(vec![
            mode("without", &[0.0, 0.0, 1.0, 1.0, 0.0, 0.0], 100),
            mode("candidate", &[0.0, 0.0, 0.0, 1.0, 0.0, 0.0], 200),
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
            mode("without", &[0.0; 5], 100),
            mode("old", &[1.0, 1.0, 1.0, 0.0, 0.0], 100),
            mode("candidate", &[1.0, 1.0, 1.0, 0.0, 0.0], 100),
        ]);
        assert_eq!(refine.outcome_delta, 0.0);
        assert!(!verdict(&refine, &rules).0);
        // too few cases
        let few = run(vec![
            mode("without", &[0.0], 1),
            mode("candidate", &[1.0], 1),
        ]);
        assert!(verdict(&few, &rules).1[0].contains("at least 5"));
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
            mode("without", &[0.0; 5], 1),
            mode("candidate", &[1.0; 5], 1),
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
        admit_all(&mut off, &["keep-names".into()], 2);
        assert_eq!(off.get("keep-names").unwrap().status, SkillStatus::Canary);
        assert_eq!(off.releases.last().unwrap().kind, ReleaseKind::Canaried);
    }
}
