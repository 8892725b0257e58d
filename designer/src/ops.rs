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

use memskill_core::diff::text_diff;
use memskill_core::{
    Bundle, ReleaseKind, ReleaseRecord, Skill, SkillBank, SkillStatus, UsageStats, Version,
};

use crate::config::DesignerConfig;
use crate::edit::Edit;
pub use crate::edit::{check_operation, freed_places, new_skills, SplitPart, MAX_SPLIT_PARTS};

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
        Edit::Merge { .. } => apply_merge(out, e, cases, stage),
        Edit::Split { name, parts } => apply_split(out, name, parts, cases, stage),
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
            apply_bundle(out, name, members, reason, stage);
            Vec::new()
        }
        _ => Vec::new(),
    }
}

/// The merged skill enters as a candidate whose provenance lists both parents; the parents
/// are deprecated with records that name it.
fn apply_merge(out: &mut SkillBank, e: &Edit, cases: &[String], stage: u32) -> Vec<String> {
    let Edit::Merge {
        parents,
        name,
        description,
        instructions,
        action,
    } = e
    else {
        return Vec::new();
    };
    let from: Vec<String> = parents.iter().map(|p| at(out, p)).collect();
    let mut prov: Vec<String> = from.iter().map(|p| format!("merged-from:{p}")).collect();
    prov.extend(cases.iter().cloned());
    let Some(s) = new_candidate(name, description, instructions, action, prov) else {
        return Vec::new();
    };
    let note = format!(
        "merged from `{}` by designer stage {stage}",
        from.join("` and `")
    );
    enter(out, s, ReleaseKind::Merged, note, cases, stage);
    for p in parents {
        let note = format!("merged into `{name}` by designer stage {stage}");
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

/// Each part enters as a candidate (provenance: the parent); the parent is deprecated with a
/// record that names the parts.
fn apply_split(
    out: &mut SkillBank,
    name: &str,
    parts: &[SplitPart],
    cases: &[String],
    stage: u32,
) -> Vec<String> {
    let from = at(out, name);
    for p in parts {
        let mut prov = vec![format!("split-from:{from}")];
        prov.extend(cases.iter().cloned());
        if let Some(s) = new_candidate(&p.name, &p.description, &p.instructions, &p.action, prov) {
            let note = format!("split from `{from}` by designer stage {stage}");
            enter(out, s, ReleaseKind::Split, note, cases, stage);
        }
    }
    let names: Vec<String> = parts.iter().map(|p| p.name.clone()).collect();
    let note = format!(
        "split into `{}` by designer stage {stage}",
        names.join("`, `")
    );
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

/// The bundle joins the bank's list; each member gets a `bundled` record.
fn apply_bundle(out: &mut SkillBank, name: &str, members: &[String], reason: &str, stage: u32) {
    let mut members = members.to_vec();
    members.sort();
    for m in &members {
        let v = out.get(m).map_or(Version::INITIAL, |s| s.version);
        let note = format!(
            "in bundle `{name}` ({}) by designer stage {stage}: {reason}",
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
        name: name.to_string(),
        members,
        stage,
        note: reason.to_string(),
    });
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
