//! The governance design's high-risk gate, as a pure check: what a person's promotion of a
//! high-risk skill needs (at least [`HIGH_RISK_MIN_CASES`] replayed cases, a person's name,
//! a sandbox run and a rollback plan). The registry (`registry promote`) and the bank
//! decisions call it; the evidence is read by them.

use crate::skill::{RiskLevel, SkillBank, Version};

/// Replayed cases a high-risk skill's sandbox run needs (the design: 15, against 5).
pub const HIGH_RISK_MIN_CASES: usize = 15;

/// Approvers that are not a person: a run's own decisions and the seed bank.
pub const MACHINE_APPROVERS: &[&str] = &["eval_gate", "seed", "designer"];

/// Whether `who` is no person: empty, one of [`MACHINE_APPROVERS`] in any case and with `-`
/// for `_` (`EVAL-GATE`), or a model (`designer:<model>`, the name post-mortems record).
pub fn is_machine(who: &str) -> bool {
    let w = who.trim().to_lowercase().replace('-', "_");
    w.is_empty() || MACHINE_APPROVERS.contains(&w.as_str()) || w.starts_with("designer:")
}

/// What a promotion of one skill version can show.
#[derive(Debug, Clone, PartialEq)]
pub struct PromotionEvidence<'a> {
    pub risk: Option<RiskLevel>,
    pub approved_by: &'a str,
    /// The sandbox run: the id and case count of the version's eval run (the offline gate's
    /// or `skills eval`'s replay) with the most cases; `None`: none recorded.
    pub sandbox: Option<(String, usize)>,
    /// The version a rollback restores (the one before this), `None` for a new skill: then
    /// the rollback is archiving it.
    pub previous: Option<Version>,
}

/// The high-risk gate on a promotion. A skill that is not high-risk passes with no note. A
/// high-risk one needs a person as approver (not `eval_gate`), a sandbox run with at least
/// [`HIGH_RISK_MIN_CASES`] cases, and gets its rollback plan; `Ok` is the note to record
/// (sandbox run and rollback plan), `Err` every missing piece.
pub fn high_risk_promotion(e: &PromotionEvidence<'_>) -> Result<Option<String>, Vec<String>> {
    if e.risk != Some(RiskLevel::High) {
        return Ok(None);
    }
    let mut missing = Vec::new();
    let who = e.approved_by.trim();
    if is_machine(who) {
        missing.push(format!(
            "a high-risk skill needs a person's approval (--approved-by NAME), not {who:?}"
        ));
    }
    match &e.sandbox {
        None => missing.push(
            "no sandbox run: replay the skill's cases first (designer.gate = \"offline\" or `memskill skills eval`)"
                .to_string(),
        ),
        Some((id, n)) if *n < HIGH_RISK_MIN_CASES => missing.push(format!(
            "the sandbox run {id} replayed {n} cases; a high-risk skill needs at least {HIGH_RISK_MIN_CASES}"
        )),
        Some(_) => {}
    }
    if !missing.is_empty() {
        return Err(missing);
    }
    let (id, n) = e.sandbox.as_ref().expect("checked above");
    let rollback = match e.previous {
        Some(v) => format!("restore {v} (`registry rollback --to {v}`)"),
        None => "archive it (a new skill has no earlier version)".to_string(),
    };
    Ok(Some(format!(
        "high-risk gate: approved by {who}; sandbox run {id} ({n} cases, executor without tools: its actions reach only a throw-away memory bank); rollback plan: {rollback}"
    )))
}

/// The evidence a bank holds for `skill`'s current version (its risk, the eval run with
/// the most cases, the version before it), with `approved_by` as given.
pub fn bank_evidence<'a>(
    bank: &SkillBank,
    skill: &str,
    approved_by: &'a str,
) -> Option<PromotionEvidence<'a>> {
    let s = bank.get(skill)?;
    let sandbox = bank
        .eval_runs
        .iter()
        .filter(|r| r.skill == skill && r.version == s.version)
        .max_by_key(|r| r.cases.len())
        .map(|r| (r.id.clone(), r.cases.len()));
    let previous = bank
        .releases
        .iter()
        .rev()
        .find(|r| {
            r.skill == skill && r.to_version == s.version && r.from_version != Some(s.version)
        })
        .and_then(|r| r.from_version);
    Some(PromotionEvidence {
        risk: s.risk,
        approved_by,
        sandbox,
        previous,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(risk: Option<RiskLevel>, by: &str, cases: Option<usize>) -> PromotionEvidence<'_> {
        PromotionEvidence {
            risk,
            approved_by: by,
            sandbox: cases.map(|n| ("stage-1:x@0.1.0".to_string(), n)),
            previous: None,
        }
    }

    #[test]
    fn low_and_unassessed_skills_pass_without_a_note() {
        assert_eq!(high_risk_promotion(&ev(None, "eval_gate", None)), Ok(None));
        assert_eq!(
            high_risk_promotion(&ev(Some(RiskLevel::Low), "", None)),
            Ok(None)
        );
    }

    #[test]
    fn a_high_risk_skill_needs_a_person_a_sandbox_run_and_fifteen_cases() {
        let h = Some(RiskLevel::High);
        let e = high_risk_promotion(&ev(h, "eval_gate", None)).unwrap_err();
        assert_eq!(e.len(), 2, "{e:?}");
        assert!(e[0].contains("person") && e[1].contains("no sandbox run"));
        let e = high_risk_promotion(&ev(h, "ada", Some(14))).unwrap_err();
        assert!(e.len() == 1 && e[0].contains("14 cases"), "{e:?}");
        let note = high_risk_promotion(&ev(h, "ada", Some(15)))
            .unwrap()
            .unwrap();
        assert!(
            note.contains("approved by ada") && note.contains("archive it"),
            "{note}"
        );
        let mut x = ev(h, "ada", Some(20));
        x.previous = Some(Version::new(1, 0, 2));
        let note = high_risk_promotion(&x).unwrap().unwrap();
        assert!(note.contains("rollback --to 1.0.2"), "{note}");
    }
}
