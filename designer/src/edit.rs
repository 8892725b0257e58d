//! Designer edits and their validation (pure: same input, same verdicts).

use std::collections::HashSet;

use memskill_core::{validate_skill_name, ActionKind, SkillBank, SkillStatus};
use regex::Regex;
use serde::{Deserialize, Serialize};
use std::sync::LazyLock;

use crate::config::DesignerConfig;
use crate::judge::JudgeContext;
use crate::text::clip;

/// Longest allowed skill description (Agent Skills limit).
pub const MAX_DESCRIPTION_CHARS: usize = 1024;
/// Longest allowed skill instructions.
pub const MAX_INSTRUCTIONS_CHARS: usize = 8000;

/// One change proposed by the designer LLM.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Edit {
    /// A new skill. `action` is kept as text so that invalid actions can be rejected with a reason.
    AddNew {
        name: String,
        description: String,
        instructions: String,
        action: String,
    },
    /// New description and/or instructions for an existing skill. `action` and `new_name`
    /// are only carried so that attempts to change them can be rejected.
    RefineExisting {
        name: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        instructions: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        action: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        new_name: Option<String>,
    },
    /// Two skills become one new skill (`designer.operations = "governance"`): the new skill
    /// is validated and gated like an add; its parents are deprecated, not deleted.
    Merge {
        parents: Vec<String>,
        name: String,
        description: String,
        instructions: String,
        action: String,
    },
    /// One skill becomes two or more new skills, each validated (and gated) like an add; the
    /// parent is deprecated once every part is live (all or nothing).
    Split { name: String, parts: Vec<SplitPart> },
    /// A skill is kept with its history but no longer selected.
    Deprecate {
        name: String,
        #[serde(default)]
        reason: String,
    },
    /// A skill is never selectable again; its history stays.
    Archive {
        name: String,
        #[serde(default)]
        reason: String,
    },
    /// A named group of skills selected together ([`memskill_core::Bundle`]).
    Bundle {
        name: String,
        members: Vec<String>,
        #[serde(default)]
        reason: String,
    },
    /// Explicitly nothing to change (dropped by validation, neither accepted nor rejected).
    NoChange,
    /// A change entry that could not be read (always rejected with `problem`).
    Malformed { raw: String, problem: String },
}

impl Edit {
    /// The skill the edit targets, if any (a merge: the new skill; a split, deprecation or
    /// archive: the skill it ends; a bundle names no skill of its own).
    pub fn target(&self) -> Option<&str> {
        match self {
            Edit::AddNew { name, .. }
            | Edit::RefineExisting { name, .. }
            | Edit::Merge { name, .. }
            | Edit::Split { name, .. }
            | Edit::Deprecate { name, .. }
            | Edit::Archive { name, .. } => Some(name),
            _ => None,
        }
    }

    /// Every skill (or bundle) name the edit touches, each once: one edit per name in a
    /// stage.
    pub fn touched(&self) -> Vec<&str> {
        let mut v = self.names_touched();
        let mut seen = HashSet::new();
        v.retain(|n| seen.insert(*n));
        v
    }

    fn names_touched(&self) -> Vec<&str> {
        match self {
            Edit::Merge { parents, name, .. } => {
                let mut v: Vec<&str> = parents.iter().map(String::as_str).collect();
                v.push(name);
                v
            }
            Edit::Split { name, parts } => std::iter::once(name.as_str())
                .chain(parts.iter().map(|p| p.name.as_str()))
                .collect(),
            Edit::Bundle { name, .. } => vec![name],
            e => e.target().into_iter().collect(),
        }
    }

    /// Whether the edit is one of the governance bank operations.
    pub fn is_bank_operation(&self) -> bool {
        matches!(
            self,
            Edit::Merge { .. }
                | Edit::Split { .. }
                | Edit::Deprecate { .. }
                | Edit::Archive { .. }
                | Edit::Bundle { .. }
        )
    }
    /// The edit with secret values in its texts redacted (for records of rejected edits);
    /// `known` values (see [`memskill_guard::secret_values`]) are redacted wherever they occur.
    pub fn redacted(self, known: &[(&'static str, String)]) -> Edit {
        let r = |t: &str| memskill_guard::redact_with(t, known);
        let o = |t: Option<String>| t.map(|t| r(&t));
        match self {
            Edit::AddNew {
                name,
                description,
                instructions,
                action,
            } => Edit::AddNew {
                name,
                description: r(&description),
                instructions: r(&instructions),
                action,
            },
            Edit::RefineExisting {
                name,
                description,
                instructions,
                action,
                new_name,
            } => Edit::RefineExisting {
                name,
                description: o(description),
                instructions: o(instructions),
                action,
                new_name,
            },
            Edit::Merge {
                parents,
                name,
                description,
                instructions,
                action,
            } => Edit::Merge {
                parents,
                name,
                description: r(&description),
                instructions: r(&instructions),
                action,
            },
            Edit::Split { name, parts } => Edit::Split {
                name,
                parts: parts
                    .into_iter()
                    .map(|p| SplitPart {
                        description: r(&p.description),
                        instructions: r(&p.instructions),
                        ..p
                    })
                    .collect(),
            },
            Edit::Deprecate { name, reason } => Edit::Deprecate {
                name,
                reason: r(&reason),
            },
            Edit::Archive { name, reason } => Edit::Archive {
                name,
                reason: r(&reason),
            },
            Edit::Bundle {
                name,
                members,
                reason,
            } => Edit::Bundle {
                name,
                members,
                reason: r(&reason),
            },
            Edit::NoChange => Edit::NoChange,
            Edit::Malformed { raw, problem } => Edit::Malformed {
                raw: r(&raw),
                problem,
            },
        }
    }

    /// Every text the edit carries.
    pub fn texts(&self) -> Vec<&str> {
        match self {
            Edit::AddNew {
                description,
                instructions,
                ..
            } => vec![description, instructions],
            Edit::RefineExisting {
                description,
                instructions,
                ..
            } => description
                .iter()
                .chain(instructions)
                .map(String::as_str)
                .collect(),
            Edit::Merge {
                description,
                instructions,
                ..
            } => vec![description, instructions],
            Edit::Split { parts, .. } => parts
                .iter()
                .flat_map(|p| [p.description.as_str(), p.instructions.as_str()])
                .collect(),
            Edit::Deprecate { reason, .. }
            | Edit::Archive { reason, .. }
            | Edit::Bundle { reason, .. } => vec![reason],
            Edit::NoChange => Vec::new(),
            Edit::Malformed { raw, .. } => vec![raw],
        }
    }

    /// Short human-readable summary (used in the failed-approaches list and logs).
    pub fn summary(&self) -> String {
        match self {
            Edit::AddNew {
                name,
                description,
                action,
                ..
            } => {
                format!("add `{name}` ({action}): {}", clip(description, 160))
            }
            Edit::RefineExisting {
                name,
                description,
                instructions,
                ..
            } => {
                let what = description
                    .as_deref()
                    .or(instructions.as_deref())
                    .unwrap_or("");
                format!("refine `{name}`: {}", clip(what, 160))
            }
            Edit::Merge {
                parents,
                name,
                description,
                ..
            } => format!(
                "merge `{}` into `{name}`: {}",
                parents.join("` + `"),
                clip(description, 160)
            ),
            Edit::Split { name, parts } => {
                let names: Vec<&str> = parts.iter().map(|p| p.name.as_str()).collect();
                format!("split `{name}` into `{}`", names.join("`, `"))
            }
            Edit::Deprecate { name, reason } => {
                format!("deprecate `{name}`: {}", clip(reason, 160))
            }
            Edit::Archive { name, reason } => format!("archive `{name}`: {}", clip(reason, 160)),
            Edit::Bundle { name, members, .. } => {
                format!("bundle `{name}`: `{}`", members.join("`, `"))
            }
            Edit::NoChange => "no change".into(),
            Edit::Malformed { problem, .. } => format!("malformed change: {problem}"),
        }
    }
}

static PLACEHOLDERS: LazyLock<Vec<(Regex, &'static str)>> = LazyLock::new(|| {
    let r = |s: &str| Regex::new(s).expect("placeholder regexes are valid");
    vec![
        (r(r"\{\{[^{}]*\}\}"), "`{{...}}` template placeholder"),
        (
            r(r"\{\s*[A-Za-z_][A-Za-z0-9_ .\-]*\s*\}"),
            "`{...}` template placeholder",
        ),
        (r(r"<[A-Za-z][A-Za-z0-9 _\-]*>"), "`<...>` placeholder"),
        (r(r"\bTODO\b|\bTBD\b|\bFIXME\b|\bXXX\b"), "TODO/TBD marker"),
        (
            r(
                r"(?i)\[\s*(?:placeholder|insert[^\]]*|fill[^\]]*|your [^\]]*|describe[^\]]*|add [^\]]*|tbd|todo|name|description|instructions)\s*\]",
            ),
            "`[PLACEHOLDER]` marker",
        ),
        (r(r"(?i)lorem ipsum"), "lorem ipsum filler"),
    ]
});

/// Why `text` looks like an unfilled template, if it does.
pub fn placeholder_problem(text: &str) -> Option<String> {
    let t = text.trim();
    if !t.is_empty()
        && t.chars()
            .all(|c| matches!(c, '.' | '\u{2026}' | ' ' | '-' | '_' | '*'))
    {
        return Some("text is only an ellipsis / filler".into());
    }
    PLACEHOLDERS.iter().find_map(|(re, what)| {
        re.find(t)
            .map(|m| format!("contains a {what} ({:?})", m.as_str()))
    })
}

fn check_field(field: &str, text: &str, max: usize) -> Result<(), String> {
    if text.trim().is_empty() {
        return Err(format!("{field} is empty"));
    }
    let n = text.chars().count();
    if n > max {
        return Err(format!("{field} has {n} characters (max {max})"));
    }
    if let Some(p) = placeholder_problem(text) {
        return Err(format!("{field} {p}"));
    }
    Ok(())
}

/// The checks of a skill text's shape: valid name, non-empty bounded description and
/// instructions, no template placeholders.
pub fn check_skill_shape(name: &str, description: &str, instructions: &str) -> Result<(), String> {
    validate_skill_name(name).map_err(|e| e.to_string())?;
    check_field("description", description, MAX_DESCRIPTION_CHARS)?;
    check_field("instructions", instructions, MAX_INSTRUCTIONS_CHARS)
}

/// The checks every new skill text must pass, in designer edits, imports and `validate`:
/// [`check_skill_shape`], then the guard ([`memskill_guard::scan_skill`]). `Err` names the
/// rule broken (`safety: <category> (rule <id>, <stage> stage): <evidence>`).
pub fn check_skill_text(name: &str, description: &str, instructions: &str) -> Result<(), String> {
    check_skill_shape(name, description, instructions)?;
    match memskill_guard::scan_skill(name, description, instructions) {
        Some(f) => Err(format!("safety: {f}")),
        None => Ok(()),
    }
}

/// Split `accepted` into the edits that carry no gold answer of `cases` and those that do
/// (rejected under the `answer-leakage` rule, naming the case; see
/// [`memskill_guard::leaked_answer`]).
pub fn reject_leaked_answers(
    accepted: Vec<Edit>,
    cases: &[crate::pool::HardCase],
) -> (Vec<Edit>, Vec<(Edit, String)>) {
    let golds: Vec<&str> = cases.iter().map(|c| c.gold.as_str()).collect();
    let mut kept = Vec::with_capacity(accepted.len());
    let mut leaked = Vec::new();
    for e in accepted {
        let hit = e
            .texts()
            .into_iter()
            .find_map(|t| memskill_guard::leaked_answer(t, &golds));
        match hit {
            None => kept.push(e),
            Some(gold) => {
                let case = cases
                    .iter()
                    .find(|c| c.gold == gold)
                    .map(|c| c.id())
                    .unwrap_or_default();
                leaked.push((
                    e,
                    format!(
                        "safety: answer-leakage (carries the gold answer {gold:?} of hard case {case}): a skill must hold a procedure, not an answer it was shown"
                    ),
                ));
            }
        }
    }
    (kept, leaked)
}

/// The skill as it would read after `edit`, as the safety judge is shown it (None for edits
/// that change no skill).
pub fn judge_prompt_context(bank: &SkillBank, edit: &Edit) -> Option<JudgeContext> {
    match edit {
        // a merged skill is judged as the new skill it is
        Edit::AddNew {
            name,
            description,
            instructions,
            action,
        }
        | Edit::Merge {
            name,
            description,
            instructions,
            action,
            ..
        } => Some(JudgeContext {
            kind: "add_new".into(),
            name: name.clone(),
            action: action.clone(),
            description: description.clone(),
            instructions: instructions.clone(),
        }),
        Edit::RefineExisting {
            name,
            description,
            instructions,
            ..
        } => {
            let old = bank.get(name)?;
            Some(JudgeContext {
                kind: "refine_existing".into(),
                name: name.clone(),
                action: old.action.to_string(),
                description: description
                    .clone()
                    .unwrap_or_else(|| old.description.clone()),
                instructions: instructions
                    .clone()
                    .unwrap_or_else(|| old.instructions.clone()),
            })
        }
        // a split's parts are each scanned by the guard; the judge sees one skill at a time
        // and is not asked about them (docs/governance.md)
        _ => None,
    }
}

/// Seed skills (provenance contains "seed") are never evicted.
pub fn is_seed(s: &memskill_core::Skill) -> bool {
    s.provenance.iter().any(|p| p == "seed")
}

fn check_add(
    bank: &SkillBank,
    name: &str,
    desc: &str,
    instr: &str,
    action: &str,
) -> Result<(), String> {
    validate_skill_name(name).map_err(|e| e.to_string())?;
    if let Some(s) = bank.get(name) {
        return Err(format!(
            "add_new would overwrite existing skill `{name}` (status {})",
            s.status
        ));
    }
    match action.parse::<ActionKind>() {
        Ok(ActionKind::Insert | ActionKind::Update) => {}
        _ => {
            return Err(format!(
                "add_new action must be insert or update, got {action:?}"
            ))
        }
    }
    check_skill_text(name, desc, instr)
}

fn check_refine(
    bank: &SkillBank,
    name: &str,
    description: Option<&str>,
    instructions: Option<&str>,
    action: Option<&str>,
    new_name: Option<&str>,
) -> Result<(), String> {
    let Some(skill) = bank.get(name) else {
        return Err(format!("refine_existing targets unknown skill `{name}`"));
    };
    if skill.action == ActionKind::Noop || name == "noop" {
        return Err("the noop skill is never refined".into());
    }
    if let Some(n) = new_name {
        if n.trim() != name {
            return Err(format!(
                "renames are not allowed (`{name}` -> `{}`)",
                n.trim()
            ));
        }
    }
    if let Some(a) = action {
        match a.parse::<ActionKind>() {
            Ok(k) if k == skill.action => {}
            _ => {
                return Err(format!(
                    "a refine may not change the action of `{name}` ({} -> {a:?})",
                    skill.action
                ))
            }
        }
    }
    if !skill.status.is_selectable() {
        return Err(format!(
            "skill `{name}` is {}; only canary or active skills can be refined",
            skill.status
        ));
    }
    if description.is_none() && instructions.is_none() {
        return Err(format!(
            "refine of `{name}` carries neither description nor instructions"
        ));
    }
    let d = description.unwrap_or(&skill.description);
    let i = instructions.unwrap_or(&skill.instructions);
    if d == skill.description && i == skill.instructions {
        return Err(format!("refine of `{name}` changes nothing"));
    }
    check_skill_text(name, d, i)
}

/// Validate designer edits against the bank. Returns (accepted, rejected with reason).
///
/// Rules, in order: `no_change` entries are dropped; malformed entries are rejected; only
/// the first `cfg.max_changes` add/refine entries are considered, later ones are rejected
/// (the reference truncates the list of changes before applying it); at most one edit per
/// skill (later ones rejected); adds
/// need a valid new name, action insert|update and clean text; refines may change only
/// description/instructions of a candidate/active non-noop skill; every text passes the
/// placeholder check and the safety scan. Finally adds that would overflow
/// `cfg.max_bank_size` selectable skills are rejected when no evictable (non-seed,
/// not refined in this stage) skill remains.
pub fn validate_edits(
    bank: &SkillBank,
    edits: &[Edit],
    cfg: &DesignerConfig,
) -> (Vec<Edit>, Vec<(Edit, String)>) {
    let mut accepted: Vec<Edit> = Vec::new();
    let mut rejected: Vec<(Edit, String)> = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    let mut proposed = 0usize;
    for e in edits {
        let counted =
            matches!(e, Edit::AddNew { .. } | Edit::RefineExisting { .. }) || e.is_bank_operation();
        let beyond = counted && {
            proposed += 1;
            proposed > cfg.max_changes
        };
        let mut dup = String::new();
        let verdict = match e {
            Edit::NoChange => continue,
            Edit::Malformed { problem, .. } => Err(format!("malformed change: {problem}")),
            _ if beyond => Err(format!(
                "beyond the first max_changes ({}) changes of the answer",
                cfg.max_changes
            )),
            _ if e.is_bank_operation() && cfg.operations == crate::config::Operations::Paper => {
                Err(
                    "designer.operations = \"paper\": only add_new and refine_existing are offered"
                        .to_string(),
                )
            }
            _ if e.touched().into_iter().any(|n| {
                dup = n.to_string();
                !seen.insert(n.to_string())
            }) =>
            {
                Err(format!("more than one edit for skill `{dup}` in one stage"))
            }
            Edit::Merge { .. } | Edit::Split { .. }
                if cfg.mode == crate::config::DesignerMode::RefineOnly =>
            {
                Err("designer.mode = \"refine-only\": a merge or split adds skills".to_string())
            }
            Edit::AddNew { .. } if cfg.mode == crate::config::DesignerMode::RefineOnly => {
                Err("designer.mode = \"refine-only\": no new skill may be added".to_string())
            }
            Edit::AddNew {
                name,
                description,
                instructions,
                action,
            } => check_add(bank, name, description, instructions, action),
            Edit::RefineExisting {
                name,
                description,
                instructions,
                action,
                new_name,
            } => check_refine(
                bank,
                name,
                description.as_deref(),
                instructions.as_deref(),
                action.as_deref(),
                new_name.as_deref(),
            ),
            _ => check_operation(bank, e, cfg),
        };
        match verdict {
            Ok(()) => accepted.push(e.clone()),
            Err(r) => rejected.push((e.clone(), r)),
        }
    }
    let keep = reject_over_capacity(bank, accepted, &mut rejected, cfg);
    (keep, rejected)
}

/// The accepted edits the bank has room for: adds beyond the free places plus what eviction
/// can make room for are moved to `rejected`.
fn reject_over_capacity(
    bank: &SkillBank,
    accepted: Vec<Edit>,
    rejected: &mut Vec<(Edit, String)>,
    cfg: &DesignerConfig,
) -> Vec<Edit> {
    let refined = protected(&accepted);
    let evictable = eviction_order(bank, &refined).len();
    let freed = freed_places(bank, &accepted);
    let free = cfg.max_bank_size.saturating_sub(bank.selectable().len()) + evictable + freed;
    let mut adds = 0usize;
    let mut keep = Vec::with_capacity(accepted.len());
    for e in accepted {
        let n = new_skills(&e);
        if n > 0 {
            adds += n;
            if adds > free {
                rejected.push((
                    e,
                    format!(
                        "bank is full (max_bank_size {}) and no non-seed skill can be evicted",
                        cfg.max_bank_size
                    ),
                ));
                continue;
            }
        }
        keep.push(e);
    }
    keep
}

/// Selectable non-seed skills not in `protected`, least useful first: lowest mean usage
/// reward, then fewest uses, then name.
pub fn eviction_order<'a>(bank: &'a SkillBank, protected: &HashSet<&str>) -> Vec<&'a str> {
    let mut c: Vec<&memskill_core::Skill> = bank
        .selectable()
        .into_iter()
        .filter(|s| !is_seed(s) && !protected.contains(s.name.as_str()))
        .collect();
    c.sort_by(|a, b| {
        a.usage
            .mean_reward
            .total_cmp(&b.usage.mean_reward)
            .then(a.usage.count.cmp(&b.usage.count))
            .then(a.name.cmp(&b.name))
    });
    c.into_iter().map(|s| s.name.as_str()).collect()
}

/// The skills an eviction must leave alone: those refined in this stage and every skill a
/// bank operation touches.
fn protected(accepted: &[Edit]) -> HashSet<&str> {
    accepted
        .iter()
        .filter(|e| matches!(e, Edit::RefineExisting { .. }) || e.is_bank_operation())
        .flat_map(|e| e.touched())
        .collect()
}

/// Names to deprecate after applying `accepted` so that at most `max_bank_size` skills stay selectable.
pub fn plan_evictions(bank: &SkillBank, accepted: &[Edit], max_bank_size: usize) -> Vec<String> {
    let adds: usize = accepted.iter().map(new_skills).sum();
    let refined = protected(accepted);
    let need = (bank.selectable().len() + adds)
        .saturating_sub(freed_places(bank, accepted))
        .saturating_sub(max_bank_size);
    eviction_order(bank, &refined)
        .into_iter()
        .take(need)
        .map(String::from)
        .collect()
}

// The governance bank operations' validation (their application is `crate::ops`).

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

#[cfg(test)]
mod leakage_tests {
    use super::*;

    #[test]
    fn an_edit_carrying_a_shown_gold_answer_is_rejected() {
        let case = |gold: &str| crate::pool::HardCase {
            query_id: "q7".into(),
            sample_id: "conv-3".into(),
            gold: gold.into(),
            ..Default::default()
        };
        let add = |instr: &str| Edit::AddNew {
            name: "origin-notes".into(),
            description: "Notes where speakers come from.".into(),
            instructions: instr.into(),
            action: "insert".into(),
        };
        let (kept, leaked) = reject_leaked_answers(
            vec![
                add("Record the country a speaker moved from, with the year."),
                add("Record that the speaker moved from Sweden."),
            ],
            &[case("Sweden"), case("yes")],
        );
        assert_eq!(kept.len(), 1);
        assert_eq!(leaked.len(), 1);
        assert!(leaked[0].1.contains("answer-leakage") && leaked[0].1.contains("conv-3/q7"));
    }
}
