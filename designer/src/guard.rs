//! How banks meet the guard: strict for what comes from outside (imports, designer edits,
//! `--rescan`), trusting its own records for what this project wrote (checkpoints, banks a
//! run saved), and a recorded way past a false rejection (an approval with a name).
//!
//! A bank keeps one [`GuardRecord`] per skill: the hash of its text and the guard version
//! that accepted it, or the approval a person gave for one rule. Loading a bank whose record
//! matches a skill's text trusts it; if today's guard disagrees the loader prints a warning
//! naming the skill and the new finding, and only `--rescan` makes that an error. A
//! checkpoint written before records existed (checkpoint format 1, its files verified by the
//! manifest's checksums) is read as accepted by the guard of its day ([`LEGACY_GUARD`]),
//! with the same warning, and its next save keeps that record ([`adopt_legacy`]). A bank
//! file with no record for a skill is scanned strictly.

use std::sync::atomic::{AtomicBool, Ordering};

use memskill_core::{GuardApproval, GuardRecord, Skill, SkillBank};
use memskill_guard::{text_hash, Finding, Guard, GUARD_VERSION};

/// The version a record names for a skill of a bank written before guard records existed.
pub const LEGACY_GUARD: &str = "before-records";

/// How a loaded bank is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GuardMode {
    /// Every skill scanned; a finding fails unless a matching approval covers its rule.
    Strict,
    /// A skill whose record matches its text is trusted (a disagreeing guard warns).
    Trusted,
}

static RESCAN: AtomicBool = AtomicBool::new(false);

/// Make every later load of a bank this project wrote strict (the CLI's `--rescan`).
pub fn set_rescan(on: bool) {
    RESCAN.store(on, Ordering::Relaxed);
}

/// The mode loads of checkpoints and saved banks use: [`GuardMode::Trusted`] unless
/// [`set_rescan`] was called.
pub fn load_mode() -> GuardMode {
    if RESCAN.load(Ordering::Relaxed) {
        GuardMode::Strict
    } else {
        GuardMode::Trusted
    }
}

/// The first skill of a bank that fails the checks, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct SkillRejected {
    pub skill: String,
    pub reason: String,
}

impl std::fmt::Display for SkillRejected {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "skill `{}`: {}", self.skill, self.reason)
    }
}

impl From<SkillRejected> for String {
    fn from(e: SkillRejected) -> String {
        e.to_string()
    }
}

/// A skill today's guard would reject that the bank's records let through.
#[derive(Debug, Clone, PartialEq)]
pub struct GuardWarning {
    pub skill: String,
    /// The version that accepted it ([`LEGACY_GUARD`] for a bank without records).
    pub accepted_by: String,
    pub finding: Finding,
}

impl std::fmt::Display for GuardWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "skill `{}` was accepted by guard {} but today's guard ({}) finds {}; it is loaded as recorded (use --rescan to refuse it, or `memskill skills approve BANK --skill {} --rule {} --reason ...` to record a review)",
            self.skill,
            self.accepted_by,
            *GUARD_VERSION,
            self.finding,
            self.skill,
            self.finding.rule.id()
        )
    }
}

fn hash_of(s: &Skill) -> String {
    text_hash(&s.name, &s.description, &s.instructions)
}

/// The record of `bank` for this skill's current text, if any.
pub fn record_for<'a>(bank: &'a SkillBank, s: &Skill) -> Option<&'a GuardRecord> {
    let h = hash_of(s);
    bank.guard
        .iter()
        .rev()
        .find(|r| r.skill == s.name && r.hash == h)
}

/// The guard's finding on one skill, unless an approval of `bank` covers its rule.
pub fn finding_for(bank: &SkillBank, s: &Skill) -> Option<Finding> {
    let f = Guard::shipped().scan_skill(&s.name, &s.description, &s.instructions)?;
    let approved = record_for(bank, s)
        .and_then(|r| r.approval.as_ref())
        .is_some_and(|a| a.rule == f.rule.id());
    (!approved).then_some(f)
}

/// Check a bank as `mode` says; `legacy`: the bank was written by a memskill before guard
/// records existed and verified since (a format-1 checkpoint), so a skill without a record
/// was accepted by the guard of its day. `Ok` holds the warnings of a trusted load; `Err`
/// names the first skill that fails and why.
pub fn check_bank_with(
    bank: &SkillBank,
    mode: GuardMode,
    legacy: bool,
) -> Result<Vec<GuardWarning>, SkillRejected> {
    let mut warnings = Vec::new();
    for s in bank.skills() {
        let rejected = |reason: String| SkillRejected {
            skill: s.name.clone(),
            reason,
        };
        crate::edit::check_skill_shape(&s.name, &s.description, &s.instructions)
            .map_err(rejected)?;
        let Some(f) = finding_for(bank, s) else {
            continue;
        };
        let accepted_by = match (mode, record_for(bank, s)) {
            (GuardMode::Trusted, Some(r)) => r.guard.clone(),
            (GuardMode::Trusted, None) if legacy => LEGACY_GUARD.to_string(),
            _ => return Err(rejected(format!("safety: {f}"))),
        };
        warnings.push(GuardWarning {
            skill: s.name.clone(),
            accepted_by,
            finding: f,
        });
    }
    Ok(warnings)
}

/// Scan every skill of a bank (any status) with the checks of imports and designer edits,
/// strictly (approvals recorded in the bank still count). `Err` names the first skill that
/// fails and why.
pub fn check_bank(bank: &SkillBank) -> Result<(), String> {
    check_bank_with(bank, GuardMode::Strict, false)
        .map(|_| ())
        .map_err(String::from)
}

/// Record, for every skill without a record for its current text that today's guard
/// accepts, that it did: called where a bank is written (checkpoints, exports), so that a
/// later guard cannot lock it out. A skill today's guard rejects gets no record.
pub fn stamp_guard(bank: &mut SkillBank) {
    let mut new = Vec::new();
    for s in bank.skills() {
        if record_for(bank, s).is_some() || finding_for(bank, s).is_some() {
            continue;
        }
        new.push(GuardRecord {
            skill: s.name.clone(),
            hash: hash_of(s),
            guard: GUARD_VERSION.clone(),
            approval: None,
        });
    }
    bank.guard.extend(new);
}

/// Record the skills a legacy load let through ([`LEGACY_GUARD`] warnings) as accepted by
/// the guard of their day, so the bank's next save keeps trusting them.
pub fn adopt_legacy(bank: &mut SkillBank, warnings: &[GuardWarning]) {
    for w in warnings.iter().filter(|w| w.accepted_by == LEGACY_GUARD) {
        if let Some(s) = bank.get(&w.skill) {
            let rec = GuardRecord {
                skill: s.name.clone(),
                hash: hash_of(s),
                guard: LEGACY_GUARD.into(),
                approval: None,
            };
            bank.guard.push(rec);
        }
    }
}

/// Accept `rule`'s finding on skill `name` as it reads now, by `approved_by` for `reason`:
/// a guard record with the approval and a release record (`approved`) that names the person.
pub fn approve(
    bank: &mut SkillBank,
    name: &str,
    rule: &str,
    reason: &str,
    approved_by: &str,
) -> Result<(), String> {
    let s = bank
        .get(name)
        .ok_or_else(|| format!("no skill `{name}` in the bank"))?
        .clone();
    if memskill_guard::RuleId::parse(rule).is_none() {
        return Err(format!(
            "unknown rule `{rule}` (see `memskill skills scan --json` for rule ids)"
        ));
    }
    if reason.trim().is_empty() || approved_by.trim().is_empty() {
        return Err("an approval needs a reason and a name (--reason, --by)".into());
    }
    let found = Guard::shipped().scan_skill(&s.name, &s.description, &s.instructions);
    match &found {
        Some(f) if f.rule.id() == rule => {}
        Some(f) => {
            return Err(format!(
                "the guard's finding on `{name}` is rule `{}`, not `{rule}`: {f}",
                f.rule.id()
            ))
        }
        None => {
            return Err(format!(
                "the guard accepts `{name}` as it is; nothing to approve"
            ))
        }
    }
    bank.guard.push(GuardRecord {
        skill: s.name.clone(),
        hash: hash_of(&s),
        guard: GUARD_VERSION.clone(),
        approval: Some(GuardApproval {
            rule: rule.into(),
            reason: reason.into(),
            approved_by: approved_by.into(),
        }),
    });
    bank.releases.push(memskill_core::ReleaseRecord {
        skill: s.name.clone(),
        kind: memskill_core::ReleaseKind::Approved,
        from_version: Some(s.version),
        to_version: s.version,
        diff: String::new(),
        hard_cases: Vec::new(),
        reward_before: None,
        reward_after: None,
        stage: 0,
        note: format!("guard finding accepted on review: rule {rule}: {reason}"),
        approved_by: Some(approved_by.into()),
    });
    Ok(())
}
