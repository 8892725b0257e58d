//! The reference's two ways of holding a skill bank outside a checkpoint, read as memskill
//! banks (issue 41):
//!
//! 1. **Its `OperationBank.to_dict()` JSON** (`{"operations": {name: {"name", "description",
//!    "instruction_template", "update_type", ...}}, "skip_noop": ...}`), which
//!    `scripts/fidelity/reference-initial-bank.sh` writes from the user's checkout for its
//!    initial operations: each operation becomes a skill with the same description (what
//!    the controller embeds) and `instruction_template` as its instructions (the bank then
//!    orders its skills by name, as every memskill bank does).
//! 2. **The released skill folders**: one flat Markdown file per skill, as in MemSkill's
//!    `skills/conversational_skills/*.md` and `skills/embodied_task_skills/*.md`:
//!
//! ```text
//! # Title
//! ## Description      what the controller embeds (the reference's `description`)
//! ## Purpose          one line
//! ## When to Use      a list
//! ## How to Apply     a list (may be empty)
//! ## Constraints      a list
//! Action type: INSERT only.
//! ```
//!
//! A file becomes a skill as the reference holds it in memory (`Operation`): the name is the
//! file stem (lowercase, `_` and spaces as `-`, the mapping `import-reference` applies to
//! operation names), the description is the `## Description` text as written, and the
//! instructions are the card the reference's executor reads (`instruction_template`):
//! `Skill: <Title>`, then each other section in file order as `<Heading>: <line>` (one line)
//! or `<Heading>:` and its lines (a list or several lines), the heading in sentence case
//! ("When to Use" -> "When to use"), empty sections left out, then the `Action type:` line
//! and a final newline. For the released files that are the reference's initial operations
//! unchanged this gives its `prompts/operation_templates.py` strings byte for byte (checked
//! against the user's checkout by `designer/tests/reference_skills.rs`).
//!
//! Provenance is `imported:reference:<folder>/<file>` or `imported:reference:<file>:<op>`.
//! Both are foreign banks: the import scans every skill strictly.

use std::fs;
use std::path::Path;

use memskill_core::fsio;
use memskill_core::{ActionKind, Skill, SkillStatus, UsageStats, Version};
use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer};

use crate::error::DesignerError;

/// A reference operation (or file stem) as a memskill skill name: lowercase, `_` and spaces
/// as `-`, runs of `-` as one, no `-` at either end; `Err` when no valid name remains.
pub fn reference_skill_name(name: &str) -> Result<String, String> {
    let mut s = String::new();
    for c in name.trim().chars() {
        let c = match c {
            '_' | ' ' => '-',
            c => c.to_ascii_lowercase(),
        };
        if !(c == '-' && (s.is_empty() || s.ends_with('-'))) {
            s.push(c);
        }
    }
    let s = s.trim_end_matches('-').to_string();
    memskill_core::validate_skill_name(&s).map_err(|e| format!("{name:?}: {e}"))?;
    Ok(s)
}

/// The action of an `Action type: X only.` line.
fn action_of(line: &str) -> Option<ActionKind> {
    let rest = line.strip_prefix("Action type:")?.trim();
    let kind = rest.strip_suffix("only.")?.trim();
    kind.to_ascii_lowercase().parse().ok()
}

/// A heading in sentence case: "When to Use" -> "When to use".
fn sentence_case(h: &str) -> String {
    let mut cs = h.chars();
    match cs.next() {
        Some(first) => first
            .to_uppercase()
            .chain(cs.flat_map(char::to_lowercase))
            .collect(),
        None => String::new(),
    }
}

/// One section's body lines, blank lines at both ends dropped.
fn trimmed(lines: &[&str]) -> Vec<String> {
    let start = lines.iter().position(|l| !l.trim().is_empty());
    let end = lines.iter().rposition(|l| !l.trim().is_empty());
    match (start, end) {
        (Some(a), Some(b)) => lines[a..=b]
            .iter()
            .map(|l| l.trim_end().to_string())
            .collect(),
        _ => Vec::new(),
    }
}

/// Parse one released file into a skill (checked for shape and safety by the caller).
/// `source` is what provenance names (`<folder>/<file>`); errors name `path` and the line.
pub fn read_released_skill(text: &str, source: &str, path: &Path) -> Result<Skill, DesignerError> {
    let bad = |line: usize, msg: String| DesignerError::format(path, format!("line {line}: {msg}"));
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_default();
    let name = reference_skill_name(&stem)
        .map_err(|e| DesignerError::format(path, format!("no valid skill name: {e}")))?;
    let mut title: Option<String> = None;
    // (heading, line number, body lines)
    let mut sections: Vec<(String, usize, Vec<&str>)> = Vec::new();
    let mut action: Option<(ActionKind, String)> = None;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let line = raw.trim_end();
        if let Some((_, l)) = &action {
            if !line.trim().is_empty() {
                return Err(bad(n, format!("text after the action line {l:?}")));
            }
            continue;
        }
        if line.starts_with("Action type:") {
            let kind = action_of(line).ok_or_else(|| {
                bad(
                    n,
                    format!("{line:?}: expected `Action type: INSERT|UPDATE|DELETE|NOOP only.`"),
                )
            })?;
            action = Some((kind, line.to_string()));
        } else if let Some(h) = line.strip_prefix("## ") {
            if title.is_none() {
                return Err(bad(n, "a `## ` section before the `# Title` line".into()));
            }
            sections.push((h.trim().to_string(), n, Vec::new()));
        } else if let Some(t) = line.strip_prefix("# ") {
            if title.is_some() {
                return Err(bad(n, format!("a second title {line:?}")));
            }
            title = Some(t.trim().to_string());
        } else if let Some((_, _, body)) = sections.last_mut() {
            body.push(line);
        } else if !line.trim().is_empty() {
            return Err(bad(n, format!("{line:?} before the first `## ` section")));
        }
    }
    let title = title.ok_or_else(|| DesignerError::format(path, "no `# Title` line"))?;
    let (action, action_line) = action.ok_or_else(|| {
        DesignerError::format(
            path,
            "no `Action type: <INSERT|UPDATE|DELETE|NOOP> only.` line",
        )
    })?;
    let (description, card) =
        description_and_card(&title, &sections, &action_line).map_err(|(n, msg)| match n {
            Some(n) => bad(n, msg),
            None => DesignerError::format(path, msg),
        })?;
    Ok(Skill {
        name,
        description,
        instructions: card,
        action,
        version: Version::new(1, 0, 0),
        status: SkillStatus::Active,
        provenance: vec![format!("imported:reference:{source}")],
        usage: UsageStats::default(),
        risk: None,
    })
}

/// The description (the `## Description` text) and the card the reference holds in memory
/// (see the module docs); `Err((line, why))`.
fn description_and_card(
    title: &str,
    sections: &[(String, usize, Vec<&str>)],
    action_line: &str,
) -> Result<(String, String), (Option<usize>, String)> {
    let mut description = None;
    let mut card = format!("Skill: {title}\n");
    for (heading, n, body) in sections {
        let body = trimmed(body);
        if heading.eq_ignore_ascii_case("description") {
            if description.is_some() {
                return Err((Some(*n), "a second `## Description` section".into()));
            }
            description = Some(body.join("\n"));
            continue;
        }
        let label = sentence_case(heading);
        match body.as_slice() {
            [] => {}
            [one] if !one.starts_with("- ") => card.push_str(&format!("{label}: {one}\n")),
            lines => card.push_str(&format!("{label}:\n{}\n", lines.join("\n"))),
        }
    }
    card.push_str(action_line);
    card.push('\n');
    let description = description.filter(|d| !d.trim().is_empty()).ok_or((
        None,
        "no `## Description` section, or an empty one".to_string(),
    ))?;
    Ok((description, card))
}

/// One operation of the reference's `OperationBank.to_dict()`.
#[derive(Deserialize)]
struct RefOp {
    description: String,
    instruction_template: String,
    update_type: String,
}

/// `operations`, in the file's order (so an error names the first bad operation as the
/// reference lists them).
struct OrderedOps(Vec<(String, RefOp)>);

impl<'de> Deserialize<'de> for OrderedOps {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = OrderedOps;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a map of operation name to operation")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<OrderedOps, A::Error> {
                let mut ops = Vec::new();
                while let Some(entry) = m.next_entry::<String, RefOp>()? {
                    ops.push(entry);
                }
                Ok(OrderedOps(ops))
            }
        }
        d.deserialize_map(V)
    }
}

#[derive(Deserialize)]
struct RefBank {
    operations: OrderedOps,
}

/// Whether a JSON text is the reference's `OperationBank.to_dict()` rather than a memskill
/// bank (it has `operations`, and no `skills`).
pub fn is_operation_bank(text: &str) -> bool {
    #[derive(Deserialize)]
    struct Keys {
        operations: Option<serde::de::IgnoredAny>,
        skills: Option<serde::de::IgnoredAny>,
    }
    serde_json::from_str::<Keys>(text).is_ok_and(|k| k.operations.is_some() && k.skills.is_none())
}

/// The skills of the reference's `OperationBank.to_dict()` JSON, in its order (shape and
/// guard checks are the caller's). Errors name `path` and the operation.
pub fn read_operation_bank(text: &str, path: &Path) -> Result<Vec<Skill>, DesignerError> {
    let bank: RefBank = serde_json::from_str(text).map_err(|e| {
        DesignerError::format(path, format!("not the reference's OperationBank JSON: {e}"))
    })?;
    let file = path
        .file_name()
        .map(|f| f.to_string_lossy().to_string())
        .unwrap_or_default();
    let mut skills = Vec::with_capacity(bank.operations.0.len());
    for (key, op) in bank.operations.0 {
        let at = |msg: String| DesignerError::format(path, format!("operation {key:?}: {msg}"));
        let name = reference_skill_name(&key).map_err(&at)?;
        let action: ActionKind = op.update_type.parse().map_err(|_| {
            at(format!(
                "update_type {:?} is not insert/update/delete/noop",
                op.update_type
            ))
        })?;
        skills.push(Skill {
            name,
            description: op.description,
            instructions: op.instruction_template,
            action,
            version: Version::new(1, 0, 0),
            status: SkillStatus::Active,
            provenance: vec![format!("imported:reference:{file}:{key}")],
            usage: UsageStats::default(),
            risk: None,
        });
    }
    if skills.is_empty() {
        return Err(DesignerError::format(
            path,
            "the reference's OperationBank has no operations",
        ));
    }
    Ok(skills)
}

/// Whether `dir` is in the reference's released layout: no bank.json or skills.json, no
/// skill folder (`<name>/SKILL.md`), and at least one `*.md` file with an `Action type:` line.
pub fn is_reference_dir(dir: &Path) -> bool {
    let present = |p: &Path| fs::symlink_metadata(p).is_ok();
    if present(&dir.join("bank.json")) || present(&dir.join("skills.json")) {
        return false;
    }
    let Ok(entries) = fs::read_dir(dir) else {
        return false;
    };
    let mut found = false;
    for e in entries.flatten() {
        let p = e.path();
        if present(&p.join("SKILL.md")) {
            return false;
        }
        if !found && is_skill_file(&p) {
            found = fsio::read_user_text(&p, fsio::SMALL_FILE_LIMIT, "skill file")
                .is_ok_and(|t| t.lines().any(|l| l.starts_with("Action type:")));
        }
    }
    found
}

/// A `*.md` file of a released folder (not hidden, not a README, RELEASES, CHANGELOG or
/// LICENSE file, in any case).
pub fn is_skill_file(p: &Path) -> bool {
    let name = p
        .file_name()
        .map(|f| f.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    name.ends_with(".md")
        && !name.starts_with('.')
        && !["readme.md", "releases.md", "changelog.md", "license.md"].contains(&name.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    // Our own texts in the layout (never the reference's).
    const CARD: &str = "# Keep Travel Plans\n\n## Description\n\nSkill for keeping trip plans.\n\n## Purpose\n\nKeep the dates and places of a planned trip.\n\n## When to Use\n\n- A trip is planned.\n- A plan changes.\n\n## How to Apply\n\n\n## Constraints\n\n- One memory per trip.\n\nAction type: INSERT only.\n";

    fn read(text: &str, file: &str) -> Result<Skill, DesignerError> {
        read_released_skill(text, &format!("mine/{file}"), Path::new(file))
    }

    #[test]
    fn a_released_file_reads_as_the_reference_holds_it() {
        let s = read(CARD, "keep_travel_plans.md").unwrap();
        assert_eq!(s.name, "keep-travel-plans");
        assert_eq!(s.description, "Skill for keeping trip plans.");
        assert_eq!(
            s.instructions,
            "Skill: Keep Travel Plans\nPurpose: Keep the dates and places of a planned trip.\nWhen to use:\n- A trip is planned.\n- A plan changes.\nConstraints:\n- One memory per trip.\nAction type: INSERT only.\n"
        );
        assert_eq!(s.action, ActionKind::Insert);
        assert_eq!(
            s.provenance,
            ["imported:reference:mine/keep_travel_plans.md"]
        );
    }

    #[test]
    fn what_cannot_be_read_is_named_with_its_line() {
        let no_action = CARD.replace("Action type: INSERT only.\n", "");
        let e = read(&no_action, "a.md").unwrap_err().to_string();
        assert!(e.contains("a.md") && e.contains("Action type"), "{e}");
        let odd = CARD.replace("INSERT only", "[INSERT only | UPDATE only]");
        let e = read(&odd, "a.md").unwrap_err().to_string();
        assert!(e.contains("line 23"), "{e}");
        let after = format!("{CARD}more text\n");
        let e = read(&after, "a.md").unwrap_err().to_string();
        assert!(
            e.contains("line 24") && e.contains("after the action line"),
            "{e}"
        );
        let before = format!("stray\n{CARD}");
        let e = read(&before, "a.md").unwrap_err().to_string();
        assert!(e.contains("line 1"), "{e}");
        let no_desc = CARD.replace("## Description\n\nSkill for keeping trip plans.\n", "");
        let e = read(&no_desc, "a.md").unwrap_err().to_string();
        assert!(e.contains("Description"), "{e}");
        let e = read(CARD, "__.md").unwrap_err().to_string();
        assert!(e.contains("no valid skill name"), "{e}");
    }

    #[test]
    fn a_byte_order_mark_and_windows_line_ends_read_the_same() {
        let crlf = format!("\u{feff}{}", CARD.replace('\n', "\r\n"));
        let a = read(CARD, "keep_travel_plans.md").unwrap();
        let b = read(&crlf, "keep_travel_plans.md").unwrap();
        assert_eq!(
            (a.description, a.instructions),
            (b.description, b.instructions)
        );
        assert!(!is_skill_file(Path::new("x/ReadMe.md")) && is_skill_file(Path::new("x/a_b.md")));
    }

    #[test]
    fn names_map_as_import_reference_maps_them() {
        assert_eq!(
            reference_skill_name("capture_temporal_context").unwrap(),
            "capture-temporal-context"
        );
        assert_eq!(
            reference_skill_name(" Track  Object_Location ").unwrap(),
            "track-object-location"
        );
        assert!(reference_skill_name("___").is_err());
    }

    #[test]
    fn an_operation_bank_json_keeps_its_order_and_texts() {
        let json = r#"{"operations": {"zeta_op": {"name": "zeta_op", "description": "D1", "instruction_template": "Skill: Z\nAction type: UPDATE only.\n", "update_type": "update", "meta_info": {}}, "alpha": {"name": "alpha", "description": "D2", "instruction_template": "T2", "update_type": "noop"}}, "max_ops": 20, "skip_noop": false}"#;
        assert!(is_operation_bank(json));
        assert!(!is_operation_bank(r#"{"skills": [], "operations": {}}"#));
        let skills = read_operation_bank(json, Path::new("ops.json")).unwrap();
        let names: Vec<_> = skills.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["zeta-op", "alpha"]);
        assert_eq!(
            skills[0].instructions,
            "Skill: Z\nAction type: UPDATE only.\n"
        );
        assert_eq!(skills[0].action, ActionKind::Update);
        assert_eq!(skills[1].provenance, ["imported:reference:ops.json:alpha"]);
        let bad = json.replace("\"noop\"", "\"sometimes\"");
        let e = read_operation_bank(&bad, Path::new("ops.json"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("ops.json") && e.contains("\"alpha\"") && e.contains("sometimes"),
            "{e}"
        );
    }
}
