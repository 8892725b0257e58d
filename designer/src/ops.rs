//! The governance design's bank operations as designer edits (`designer.operations =
//! "governance"`): MERGE, SPLIT, DEPRECATE, ARCHIVE and BUNDLE. Pure: validation against a
//! bank, their application (new skills enter as candidates, like an add, and go through the
//! same gate), and the all-or-nothing settlement after the gate (a merge's parents and a
//! split's parent are deprecated only while what replaces them is live).
//!
//! - A merge of two skills `a` + `b` into a new `c`: `c` is checked like an add (name, action,
//!   text, guard), its provenance lists both parents (`merged-from:a@v`, `merged-from:b@v`)
//!   and the hard cases; `a` and `b` are deprecated (kept, not selectable) with records that
//!   name `c`. The parents must share one action (a skill allows one), and `c` keeps it.
//! - A split of `a` into two or more new parts: each part is checked (and later gated) like
//!   an add; one failing part rejects the whole split; `a` is deprecated with a record that
//!   names the parts.
//! - Deprecate: a canary or active skill is kept with its history but no longer selected.
//!   Archive: any skill not archived yet is never selectable again; its history stays.
//! - Bundle: a named group of two or more selectable skills; when the controller selects one
//!   member, the executor also reads the others ([`memskill_core::with_bundled`]).
//!
//! Seed skills (the paper's four primitives) are never merged, split, deprecated or archived
//! by the designer, as they are never evicted.

use std::collections::HashSet;

use memskill_core::{
    validate_skill_name, ActionKind, Bundle, ReleaseKind, ReleaseRecord, Skill, SkillBank,
    SkillStatus, UsageStats, Version,
};
use serde::{Deserialize, Serialize};

use crate::config::DesignerConfig;
use crate::edit::{check_skill_text, is_seed, Edit};
use crate::stage::text_diff;

/// One part of a split: a new skill.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SplitPart {
    pub name: String,
    pub description: String,
    pub instructions: String,
    pub action: String,
}

/// The most parts a split may have.
pub const MAX_SPLIT_PARTS: usize = 4;

/// Skills a bank operation may end (merge, split, deprecate): canary or active, not a seed
/// skill, not the noop skill.
fn check_endable(bank: &SkillBank, name: &str, op: &str) -> Result<(), String> {
    let Some(s) = bank.get(name) else {
        return Err(format!("{op} names unknown skill `{name}`"));
    };
    if is_seed(s) {
        return Err(format!(
            "{op} of `{name}`: seed skills are never ended by the designer"
        ));
    }
    if !s.status.is_selectable() {
        return Err(format!(
            "{op} of `{name}`: it is {}; only canary or active skills can be",
            s.status
        ));
    }
    Ok(())
}

fn check_new(
    bank: &SkillBank,
    name: &str,
    d: &str,
    i: &str,
    action: &str,
    op: &str,
) -> Result<ActionKind, String> {
    validate_skill_name(name).map_err(|e| format!("{op}: {e}"))?;
    if bank.contains(name) || bank.bundles.iter().any(|b| b.name == name) {
        return Err(format!("{op} would overwrite existing `{name}`"));
    }
    let a = match action.parse::<ActionKind>() {
        Ok(a @ (ActionKind::Insert | ActionKind::Update)) => a,
        _ => {
            return Err(format!(
                "{op}: `{name}`'s action must be insert or update, got {action:?}"
            ))
        }
    };
    check_skill_text(name, d, i).map_err(|e| format!("{op}: `{name}`: {e}"))?;
    Ok(a)
}

fn check_merge(bank: &SkillBank, e: &Edit) -> Result<(), String> {
    let Edit::Merge {
        parents,
        name,
        description,
        instructions,
        action,
    } = e
    else {
        return Err("not a merge".into());
    };
    if parents.len() != 2 || parents[0] == parents[1] {
        return Err(format!(
            "merge needs two distinct parent skills, got {parents:?}"
        ));
    }
    for p in parents {
        check_endable(bank, p, "merge")?;
    }
    let a = check_new(bank, name, description, instructions, action, "merge")?;
    for p in parents {
        let pa = bank.get(p).map(|s| s.action).unwrap_or(a);
        if pa != a {
            return Err(format!(
                "merge: parent `{p}` allows {pa}, the merged skill {a}: parents must share the action it keeps"
            ));
        }
    }
    Ok(())
}

fn check_split(bank: &SkillBank, name: &str, parts: &[SplitPart]) -> Result<(), String> {
    check_endable(bank, name, "split")?;
    if parts.len() < 2 || parts.len() > MAX_SPLIT_PARTS {
        return Err(format!(
            "split of `{name}` needs 2 to {MAX_SPLIT_PARTS} parts, got {}",
            parts.len()
        ));
    }
    let mut seen = HashSet::new();
    for p in parts {
        if !seen.insert(p.name.as_str()) {
            return Err(format!("split of `{name}` names part `{}` twice", p.name));
        }
        // all or nothing: one bad part rejects the split, naming it
        check_new(
            bank,
            &p.name,
            &p.description,
            &p.instructions,
            &p.action,
            &format!("split of `{name}`"),
        )?;
    }
    Ok(())
}

fn check_bundle(bank: &SkillBank, name: &str, members: &[String]) -> Result<(), String> {
    validate_skill_name(name).map_err(|e| format!("bundle: {e}"))?;
    if bank.contains(name) || bank.bundles.iter().any(|b| b.name == name) {
        return Err(format!(
            "bundle `{name}` would reuse the name of a skill or bundle"
        ));
    }
    let distinct: HashSet<&String> = members.iter().collect();
    if distinct.len() < 2 || distinct.len() != members.len() {
        return Err(format!(
            "bundle `{name}` needs two or more distinct member skills, got {members:?}"
        ));
    }
    for m in members {
        match bank.get(m) {
            None => return Err(format!("bundle `{name}` names unknown skill `{m}`")),
            Some(s) if !s.status.is_selectable() => {
                return Err(format!(
                "bundle `{name}`: member `{m}` is {}; only canary or active skills can be bundled",
                s.status
            ))
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// Validate one bank operation against `bank` (the caller has checked the switch, the
/// change limit and one edit per name).
pub fn check_operation(bank: &SkillBank, e: &Edit, _cfg: &DesignerConfig) -> Result<(), String> {
    match e {
        Edit::Merge { .. } => check_merge(bank, e),
        Edit::Split { name, parts } => check_split(bank, name, parts),
        Edit::Deprecate { name, .. } => check_endable(bank, name, "deprecate"),
        Edit::Archive { name, .. } => match bank.get(name) {
            None => Err(format!("archive names unknown skill `{name}`")),
            Some(s) if is_seed(s) => Err(format!(
                "archive of `{name}`: seed skills are never ended by the designer"
            )),
            Some(s) if s.status == SkillStatus::Archived => {
                Err(format!("`{name}` is archived already"))
            }
            Some(_) => Ok(()),
        },
        Edit::Bundle { name, members, .. } => check_bundle(bank, name, members),
        _ => Err(format!("not a bank operation: {}", e.summary())),
    }
}

/// New skills an edit brings (an add or a merge: 1; a split: its parts).
pub fn new_skills(e: &Edit) -> usize {
    match e {
        Edit::AddNew { .. } | Edit::Merge { .. } => 1,
        Edit::Split { parts, .. } => parts.len(),
        _ => 0,
    }
}

/// Selectable places the accepted bank operations free (a merge's two parents, a split's
/// parent, a deprecated or archived selectable skill).
pub fn freed_places(bank: &SkillBank, accepted: &[Edit]) -> usize {
    let sel = |n: &str| bank.get(n).is_some_and(|s| s.status.is_selectable());
    accepted
        .iter()
        .map(|e| match e {
            Edit::Merge { parents, .. } => parents.iter().filter(|p| sel(p)).count(),
            Edit::Split { name, .. }
            | Edit::Deprecate { name, .. }
            | Edit::Archive { name, .. } => usize::from(sel(name)),
            _ => 0,
        })
        .sum()
}

fn new_candidate(
    name: &str,
    description: &str,
    instructions: &str,
    action: &str,
    provenance: Vec<String>,
) -> Option<Skill> {
    Some(Skill {
        name: name.to_string(),
        description: description.to_string(),
        instructions: instructions.to_string(),
        action: action.parse().ok()?,
        version: Version::INITIAL,
        status: SkillStatus::Candidate,
        provenance,
        usage: UsageStats::default(),
        risk: None,
    })
}

/// Enter a new skill with its creation record (`kind`: merged or split).
fn enter(
    out: &mut SkillBank,
    s: Skill,
    kind: ReleaseKind,
    note: String,
    cases: &[String],
    stage: u32,
) {
    let rec = ReleaseRecord {
        skill: s.name.clone(),
        kind,
        from_version: None,
        to_version: s.version,
        diff: text_diff("", "", &s.description, &s.instructions),
        hard_cases: cases.to_vec(),
        reward_before: None,
        reward_after: None,
        stage,
        note,
        approved_by: None,
    };
    if out.insert(s).is_ok() {
        out.releases.push(rec);
    }
}

/// Set a skill's status with a status-change record.
fn end(
    out: &mut SkillBank,
    name: &str,
    status: SkillStatus,
    kind: ReleaseKind,
    note: String,
    stage: u32,
) {
    if let Some(s) = out.get_mut(name) {
        s.status = status;
        let v = s.version;
        out.releases
            .push(ReleaseRecord::status_change(name, kind, v, stage, note));
    }
}

fn at(bank: &SkillBank, name: &str) -> String {
    bank.get(name)
        .map_or(name.to_string(), |s| format!("{name}@{}", s.version))
}

/// Apply one validated bank operation to `out`; returns the new candidates it made (they go
/// through the gate like adds). An operation that no longer fits the bank changes nothing.
pub fn apply_operation(out: &mut SkillBank, e: &Edit, cases: &[String], stage: u32) -> Vec<String> {
    if check_operation(out, e, &DesignerConfig::default()).is_err() {
        return Vec::new();
    }
    let by = format!("designer stage {stage}");
    match e {
        Edit::Merge {
            parents,
            name,
            description,
            instructions,
            action,
        } => {
            let from: Vec<String> = parents.iter().map(|p| at(out, p)).collect();
            let mut prov: Vec<String> = from.iter().map(|p| format!("merged-from:{p}")).collect();
            prov.extend(cases.iter().cloned());
            let Some(s) = new_candidate(name, description, instructions, action, prov) else {
                return Vec::new();
            };
            let note = format!("merged from `{}` by {by}", from.join("` and `"));
            enter(out, s, ReleaseKind::Merged, note, cases, stage);
            for p in parents {
                let note = format!("merged into `{name}` by {by}");
                end(
                    out,
                    p,
                    SkillStatus::Deprecated,
                    ReleaseKind::Deprecated,
                    note,
                    stage,
                );
            }
            vec![name.clone()]
        }
        Edit::Split { name, parts } => {
            let from = at(out, name);
            for p in parts {
                let mut prov = vec![format!("split-from:{from}")];
                prov.extend(cases.iter().cloned());
                if let Some(s) =
                    new_candidate(&p.name, &p.description, &p.instructions, &p.action, prov)
                {
                    let note = format!("split from `{from}` by {by}");
                    enter(out, s, ReleaseKind::Split, note, cases, stage);
                }
            }
            let names: Vec<String> = parts.iter().map(|p| p.name.clone()).collect();
            let note = format!("split into `{}` by {by}", names.join("`, `"));
            end(
                out,
                name,
                SkillStatus::Deprecated,
                ReleaseKind::Deprecated,
                note,
                stage,
            );
            names
        }
        Edit::Deprecate { name, reason } => {
            let note = format!("deprecated by {by}: {reason}");
            end(
                out,
                name,
                SkillStatus::Deprecated,
                ReleaseKind::Deprecated,
                note,
                stage,
            );
            Vec::new()
        }
        Edit::Archive { name, reason } => {
            let note = format!("archived by {by}: {reason}");
            end(
                out,
                name,
                SkillStatus::Archived,
                ReleaseKind::Archived,
                note,
                stage,
            );
            Vec::new()
        }
        Edit::Bundle {
            name,
            members,
            reason,
        } => {
            let mut members = members.clone();
            members.sort();
            for m in &members {
                let v = out.get(m).map_or(Version::INITIAL, |s| s.version);
                let note = format!(
                    "in bundle `{name}` ({}) by {by}: {reason}",
                    members.join(", ")
                );
                out.releases.push(ReleaseRecord::status_change(
                    m,
                    ReleaseKind::Bundled,
                    v,
                    stage,
                    note,
                ));
            }
            out.bundles.push(Bundle {
                name: name.clone(),
                members,
                stage,
                note: reason.clone(),
            });
            Vec::new()
        }
        _ => Vec::new(),
    }
}

/// After the gate: a merge or a split goes live whole or not at all. When a merge's product
/// or any part of a split is not a canary (the gate held it, or it is high-risk and waits
/// for a person), the parts that did pass go back to candidate (a `gate-failed` record
/// saying why) and the ended parents get their status in `before` back (a `restored`
/// record). Returns the names whose status this changed.
pub fn settle_operations(
    bank: &mut SkillBank,
    before: &SkillBank,
    accepted: &[Edit],
    stage: u32,
) -> Vec<String> {
    let mut touched = Vec::new();
    for e in accepted {
        let (products, parents): (Vec<&str>, Vec<&str>) = match e {
            Edit::Merge { parents, name, .. } => (
                vec![name.as_str()],
                parents.iter().map(String::as_str).collect(),
            ),
            Edit::Split { name, parts } => (
                parts.iter().map(|p| p.name.as_str()).collect(),
                vec![name.as_str()],
            ),
            _ => continue,
        };
        let live =
            |b: &SkillBank, n: &str| b.get(n).is_some_and(|s| s.status == SkillStatus::Canary);
        // not applied (a product missing) or all live: nothing to undo
        if products.iter().any(|p| !bank.contains(p)) || products.iter().all(|p| live(bank, p)) {
            continue;
        }
        let held: Vec<&str> = products
            .iter()
            .copied()
            .filter(|p| !live(bank, p))
            .collect();
        let why = format!(
            "`{}` not live after the gate: {} goes live whole or not at all",
            held.join("`, `"),
            e.summary()
        );
        let passed: Vec<&str> = products.iter().copied().filter(|p| live(bank, p)).collect();
        for p in passed {
            let note = format!("held: {why}");
            end(
                bank,
                p,
                SkillStatus::Candidate,
                ReleaseKind::GateFailed,
                note,
                stage,
            );
            touched.push(p.to_string());
        }
        for p in parents {
            if let Some(old) = before.get(p) {
                let note = format!("back to {}: {why}", old.status);
                end(bank, p, old.status, ReleaseKind::Restored, note, stage);
                touched.push(p.to_string());
            }
        }
    }
    touched
}
