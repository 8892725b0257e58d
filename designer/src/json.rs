//! Reading the designer's JSON answer: tolerant of code fences, prose around the JSON,
//! a bare list of changes, and loose type spellings. The JSON is found by
//! [`memskill_core::jsonfix::json_candidates`] (standard JSON, no repairs).

use serde_json::Value;

use memskill_core::jsonfix::json_candidates;

use crate::edit::Edit;

fn changes_array(v: &Value) -> Option<&Vec<Value>> {
    match v {
        Value::Array(a) if !a.is_empty() && a.iter().all(Value::is_object) => Some(a),
        Value::Object(o) => o
            .get("changes")
            .or_else(|| o.get("edits"))
            .and_then(Value::as_array),
        _ => None,
    }
}

fn s(o: &serde_json::Map<String, Value>, keys: &[&str]) -> Option<String> {
    keys.iter().find_map(|k| o.get(*k)).and_then(|v| match v {
        Value::String(s) => Some(s.trim().to_string()),
        Value::Null => None,
        other => Some(other.to_string()),
    })
}

/// A list of skill names under one of `keys` (a JSON list of strings, or one comma-separated
/// string).
fn names(o: &serde_json::Map<String, Value>, keys: &[&str]) -> Option<Vec<String>> {
    let v = keys.iter().find_map(|k| o.get(*k))?;
    let list: Vec<String> = match v {
        Value::Array(a) => a
            .iter()
            .map(|x| x.as_str().map(|t| t.trim().to_string()))
            .collect::<Option<_>>()?,
        Value::String(t) => t.split(',').map(|x| x.trim().to_string()).collect(),
        _ => return None,
    };
    Some(list.into_iter().filter(|x| !x.is_empty()).collect())
}

fn split_part(v: &Value) -> Option<crate::edit::SplitPart> {
    let o = v.as_object()?;
    Some(crate::edit::SplitPart {
        name: s(o, &["name", "skill", "skill_name"])?,
        description: s(o, &["description"])?,
        instructions: s(o, &["instructions", "instruction", "content"])?,
        action: s(o, &["action", "operation"])?,
    })
}

/// The governance bank operations (`designer.operations = "governance"`); `None` for any
/// other type.
fn bank_operation(ty: &str, o: &serde_json::Map<String, Value>, raw: &str) -> Option<Edit> {
    let bad = |problem: &str| Edit::Malformed {
        raw: raw.to_string(),
        problem: problem.to_string(),
    };
    let name = s(o, &["name", "skill", "skill_name"]);
    let reason = s(o, &["reason", "why"]).unwrap_or_default();
    Some(match ty {
        "merge" | "merge_skills" => {
            let (Some(parents), Some(name), Some(description), Some(instructions), Some(action)) = (
                names(o, &["parents", "merge", "skills", "from"]),
                s(o, &["new_name", "name", "into"]),
                s(o, &["description"]),
                s(o, &["instructions", "instruction", "content"]),
                s(o, &["action", "operation"]),
            ) else {
                return Some(bad(
                    "merge needs parents, name, description, instructions and action",
                ));
            };
            Edit::Merge {
                parents,
                name,
                description,
                instructions,
                action,
            }
        }
        "split" | "split_skill" => {
            let parts = o.get("parts").and_then(Value::as_array);
            let (Some(name), Some(parts)) = (name, parts) else {
                return Some(bad("split needs the skill's name and a list of parts"));
            };
            let Some(parts) = parts.iter().map(split_part).collect::<Option<Vec<_>>>() else {
                return Some(bad(
                    "each part of a split needs name, description, instructions and action",
                ));
            };
            Edit::Split { name, parts }
        }
        "deprecate" | "deprecate_skill" | "archive" | "archive_skill" => {
            let Some(name) = name else {
                return Some(bad(&format!("{ty} has no skill name")));
            };
            if ty.starts_with("deprecate") {
                Edit::Deprecate { name, reason }
            } else {
                Edit::Archive { name, reason }
            }
        }
        "bundle" | "bundle_skills" => {
            let (Some(name), Some(members)) = (name, names(o, &["members", "skills"])) else {
                return Some(bad("bundle needs a name and its member skills"));
            };
            Edit::Bundle {
                name,
                members,
                reason,
            }
        }
        _ => return None,
    })
}

/// Turn one change object into an [`Edit`] (never fails: unreadable entries become `Malformed`).
pub fn edit_from_value(v: &Value) -> Edit {
    edit_from_value_with(v, crate::config::Operations::Paper)
}

/// [`edit_from_value`] with the bank operations read when `ops` is governance (in paper mode
/// their types are unknown, as in the reference).
pub fn edit_from_value_with(v: &Value, ops: crate::config::Operations) -> Edit {
    let raw = v.to_string();
    let Some(o) = v.as_object() else {
        return Edit::Malformed {
            raw,
            problem: "change is not a JSON object".into(),
        };
    };
    let ty = s(o, &["type", "change_type", "kind", "op"])
        .unwrap_or_default()
        .to_ascii_lowercase()
        .replace(['-', ' '], "_");
    if ops == crate::config::Operations::Governance {
        if let Some(e) = bank_operation(&ty, o, &raw) {
            return e;
        }
    }
    let name = s(o, &["name", "skill", "skill_name"]);
    match ty.as_str() {
        "no_change" | "none" | "nochange" | "noop" | "no_op" => Edit::NoChange,
        "add_new" | "add" | "new" | "add_skill" | "new_skill" | "create" => {
            let (Some(name), Some(description), Some(instructions)) = (
                name,
                s(o, &["description"]),
                s(o, &["instructions", "instruction", "content"]),
            ) else {
                return Edit::Malformed {
                    raw,
                    problem: "add_new needs name, description and instructions".into(),
                };
            };
            let Some(action) = s(o, &["action", "operation"]) else {
                return Edit::Malformed {
                    raw,
                    problem: format!("add_new `{name}` has no action (insert or update)"),
                };
            };
            Edit::AddNew {
                name,
                description,
                instructions,
                action,
            }
        }
        "refine_existing" | "refine" | "modify" | "edit" | "update_existing" | "refine_skill" => {
            let Some(name) = name else {
                return Edit::Malformed {
                    raw,
                    problem: "refine_existing has no skill name".into(),
                };
            };
            Edit::RefineExisting {
                name,
                description: s(o, &["description", "new_description"]),
                instructions: s(o, &["instructions", "new_instructions", "instruction"]),
                action: s(o, &["action", "operation"]),
                new_name: s(o, &["new_name", "rename", "rename_to"]),
            }
        }
        "" => Edit::Malformed {
            raw,
            problem: "change has no type".into(),
        },
        other => Edit::Malformed {
            raw,
            problem: format!("unknown change type {other:?}"),
        },
    }
}

/// Parse the refinement answer into edits. `Err` when no JSON list of changes is found.
pub fn parse_changes(text: &str) -> Result<Vec<Edit>, String> {
    parse_changes_with(text, crate::config::Operations::Paper)
}

/// [`parse_changes`] with the edit vocabulary of `designer.operations`.
pub fn parse_changes_with(text: &str, ops: crate::config::Operations) -> Result<Vec<Edit>, String> {
    for v in json_candidates(text) {
        if let Some(a) = changes_array(&v) {
            return Ok(a.iter().map(|e| edit_from_value_with(e, ops)).collect());
        }
        if v.as_object().is_some_and(|o| o.contains_key("type")) {
            return Ok(vec![edit_from_value_with(&v, ops)]);
        }
    }
    Err("no JSON object with a \"changes\" list (or a bare list of changes) found in the designer answer".into())
}

/// Name of the refinement answer's schema in `response_format`.
pub const REFINEMENT_SCHEMA_NAME: &str = "skill_changes";

/// The refinement answer's JSON schema for structured outputs: `{"summary": "...",
/// "changes": [...]}` with 1 to `max_changes` entries of the forms the refinement prompt
/// names: `add_new` (not in refine-only mode; a valid skill name, insert or update, a
/// description within [`crate::edit::MAX_DESCRIPTION_CHARS`]), `refine_existing` (the name
/// of a skill in `bank` other than the noop skill) and `no_change`. What the schema cannot say (seed skills left alone,
/// one entry per skill, the safety scan) is still checked by [`crate::validate_edits`].
pub fn refinement_schema(
    bank: &memskill_core::SkillBank,
    cfg: &crate::DesignerConfig,
) -> memskill_core::ResponseSchema {
    use serde_json::json;
    let text = |max: usize| json!({"type": "string", "minLength": 1, "maxLength": max});
    // the noop skill is never refined
    let names: Vec<&str> = bank
        .skills()
        .iter()
        .filter(|s| s.action != memskill_core::ActionKind::Noop)
        .map(|s| s.name.as_str())
        .collect();
    let mut forms = Vec::new();
    if cfg.mode != crate::DesignerMode::RefineOnly {
        forms.push(json!({
            "type": "object",
            "properties": {
                "type": {"const": "add_new"},
                "name": {"type": "string", "pattern": "^[a-z0-9]+(-[a-z0-9]+)*$", "maxLength": 64},
                "action": {"enum": ["insert", "update"]},
                "description": text(crate::edit::MAX_DESCRIPTION_CHARS - 1),
                "instructions": text(crate::edit::MAX_INSTRUCTIONS_CHARS),
                "reason": {"type": "string"},
            },
            "required": ["type", "name", "action", "description", "instructions", "reason"],
            "additionalProperties": false,
        }));
    }
    if !names.is_empty() {
        forms.push(json!({
            "type": "object",
            "properties": {
                "type": {"const": "refine_existing"},
                "name": {"enum": names},
                "description": text(crate::edit::MAX_DESCRIPTION_CHARS - 1),
                "instructions": text(crate::edit::MAX_INSTRUCTIONS_CHARS),
                "reason": {"type": "string"},
            },
            "required": ["type", "name", "reason"],
            "additionalProperties": false,
        }));
    }
    if cfg.operations == crate::config::Operations::Governance {
        forms.extend(bank_operation_forms(&names, cfg));
    }
    forms.push(json!({
        "type": "object",
        "properties": {"type": {"const": "no_change"}, "reason": {"type": "string"}},
        "required": ["type", "reason"],
        "additionalProperties": false,
    }));
    memskill_core::ResponseSchema {
        name: REFINEMENT_SCHEMA_NAME.into(),
        schema: json!({
            "type": "object",
            "properties": {
                "summary": {"type": "string"},
                "changes": {
                    "type": "array",
                    "items": {"anyOf": forms},
                    "minItems": 1,
                    "maxItems": cfg.max_changes.max(1),
                },
            },
            "required": ["summary", "changes"],
            "additionalProperties": false,
        }),
    }
}

/// The structured forms of the governance bank operations (the names are checked again by
/// validation: the schema says only what a reply must look like).
fn bank_operation_forms(names: &[&str], cfg: &crate::DesignerConfig) -> Vec<Value> {
    use serde_json::json;
    let new_name =
        json!({"type": "string", "pattern": "^[a-z0-9]+(-[a-z0-9]+)*$", "maxLength": 64});
    let text = |max: usize| json!({"type": "string", "minLength": 1, "maxLength": max});
    let skill = json!({"enum": names});
    let part = json!({
        "type": "object",
        "properties": {
            "name": new_name,
            "action": {"enum": ["insert", "update"]},
            "description": text(crate::edit::MAX_DESCRIPTION_CHARS - 1),
            "instructions": text(crate::edit::MAX_INSTRUCTIONS_CHARS),
        },
        "required": ["name", "action", "description", "instructions"],
        "additionalProperties": false,
    });
    let ending = |ty: &str| {
        json!({
            "type": "object",
            "properties": {"type": {"const": ty}, "name": skill, "reason": {"type": "string"}},
            "required": ["type", "name", "reason"],
            "additionalProperties": false,
        })
    };
    let mut forms = vec![ending("deprecate"), ending("archive")];
    forms.push(json!({
        "type": "object",
        "properties": {
            "type": {"const": "bundle"},
            "name": new_name,
            "members": {"type": "array", "items": skill, "minItems": 2},
            "reason": {"type": "string"},
        },
        "required": ["type", "name", "members", "reason"],
        "additionalProperties": false,
    }));
    if cfg.mode != crate::DesignerMode::RefineOnly {
        forms.push(json!({
            "type": "object",
            "properties": {
                "type": {"const": "merge"},
                "parents": {"type": "array", "items": skill, "minItems": 2, "maxItems": 2},
                "name": new_name,
                "action": {"enum": ["insert", "update"]},
                "description": text(crate::edit::MAX_DESCRIPTION_CHARS - 1),
                "instructions": text(crate::edit::MAX_INSTRUCTIONS_CHARS),
                "reason": {"type": "string"},
            },
            "required": ["type", "parents", "name", "action", "description", "instructions", "reason"],
            "additionalProperties": false,
        }));
        forms.push(json!({
            "type": "object",
            "properties": {
                "type": {"const": "split"},
                "name": skill,
                "parts": {"type": "array", "items": part, "minItems": 2,
                          "maxItems": crate::edit::MAX_SPLIT_PARTS},
                "reason": {"type": "string"},
            },
            "required": ["type", "name", "parts", "reason"],
            "additionalProperties": false,
        }));
    }
    forms
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_governance_schema_adds_the_bank_operations_and_paper_mode_does_not() {
        let bank = memskill_core::SkillBank::seed();
        let types = |cfg: &crate::DesignerConfig| -> Vec<String> {
            let s = refinement_schema(&bank, cfg).schema;
            s["properties"]["changes"]["items"]["anyOf"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| {
                    f["properties"]["type"]["const"]
                        .as_str()
                        .unwrap()
                        .to_string()
                })
                .collect()
        };
        let paper = types(&Default::default());
        assert_eq!(paper, ["add_new", "refine_existing", "no_change"]);
        let gov = crate::DesignerConfig {
            operations: crate::config::Operations::Governance,
            ..Default::default()
        };
        assert_eq!(
            types(&gov),
            [
                "add_new",
                "refine_existing",
                "deprecate",
                "archive",
                "bundle",
                "merge",
                "split",
                "no_change"
            ]
        );
    }

    #[test]
    fn refinement_schema_names_the_forms_the_bank_and_the_limits() {
        let bank = memskill_core::SkillBank::seed();
        let cfg = crate::DesignerConfig {
            max_changes: 2,
            ..Default::default()
        };
        let s = refinement_schema(&bank, &cfg);
        assert_eq!(s.name, "skill_changes");
        let changes = &s.schema["properties"]["changes"];
        assert_eq!(changes["maxItems"], 2);
        let forms = changes["items"]["anyOf"].as_array().unwrap();
        let kinds: Vec<&str> = forms
            .iter()
            .map(|f| f["properties"]["type"]["const"].as_str().unwrap())
            .collect();
        assert_eq!(kinds, ["add_new", "refine_existing", "no_change"]);
        let names = forms[1]["properties"]["name"]["enum"].as_array().unwrap();
        let refinable = bank
            .skills()
            .iter()
            .filter(|s| s.action != memskill_core::ActionKind::Noop);
        assert_eq!(names.len(), refinable.count());
        assert!(names.len() < bank.skills().len());
        // an answer in the schema's shape reads as the edits it names
        let answer = serde_json::json!({"summary": "s", "changes": [
            {"type": "refine_existing", "name": names[0], "instructions": "Better.", "reason": "r"},
            {"type": "no_change", "reason": "r"}]});
        let edits = parse_changes(&answer.to_string()).unwrap();
        assert!(
            matches!(&edits[0], Edit::RefineExisting { name, .. } if name == names[0].as_str().unwrap())
        );
        assert_eq!(edits[1], Edit::NoChange);
        // refine-only: no add_new form
        let ro = crate::DesignerConfig {
            mode: crate::DesignerMode::RefineOnly,
            ..cfg
        };
        let s = refinement_schema(&bank, &ro);
        let forms = s.schema["properties"]["changes"]["items"]["anyOf"]
            .as_array()
            .unwrap();
        assert_eq!(forms.len(), 2);
        assert_eq!(forms[0]["properties"]["type"]["const"], "refine_existing");
    }

    const BODY: &str = r#"{"changes": [
        {"type": "add_new", "name": "capture-dates", "description": "Store dates.", "instructions": "Write dates.", "action": "insert"},
        {"type": "refine_existing", "name": "insert", "instructions": "Better."},
        {"type": "no_change"}
    ]}"#;

    fn check(edits: &[Edit]) {
        assert_eq!(edits.len(), 3);
        assert!(
            matches!(&edits[0], Edit::AddNew { name, action, .. } if name == "capture-dates" && action == "insert")
        );
        assert!(
            matches!(&edits[1], Edit::RefineExisting { name, description: None, instructions: Some(i), .. } if name == "insert" && i == "Better.")
        );
        assert_eq!(edits[2], Edit::NoChange);
    }

    #[test]
    fn plain_fenced_prose_and_bare_list() {
        check(&parse_changes(BODY).unwrap());
        check(
            &parse_changes(&format!(
                "Here you go:\n```json\n{BODY}\n```\nHope this helps."
            ))
            .unwrap(),
        );
        check(
            &parse_changes(&format!(
                "Reasoning first {{not json}}. Final: {BODY} -- end of answer [1]"
            ))
            .unwrap(),
        );
        let list = BODY
            .trim()
            .trim_start_matches("{\"changes\": ")
            .trim_end_matches('}');
        check(&parse_changes(list).unwrap());
        check(&parse_changes(&format!("```\n{list}\n```")).unwrap());
    }

    #[test]
    fn malformed_entries_and_no_json() {
        let e = parse_changes(r#"{"changes": [{"type": "add_new", "name": "x"}, {"type": "explode"}, 3, {"name": "y"}]}"#).unwrap();
        assert_eq!(e.len(), 4);
        assert!(e.iter().all(|x| matches!(x, Edit::Malformed { .. })));
        assert!(parse_changes("I have no idea.").is_err());
        assert!(parse_changes("{\"analysis\": \"x\"}").is_err());
        let r = parse_changes(r#"{"changes":[{"type":"refine","name":"insert","description":"d","new_name":"ins","action":"delete"}]}"#).unwrap();
        assert!(
            matches!(&r[0], Edit::RefineExisting { new_name: Some(n), action: Some(a), .. } if n == "ins" && a == "delete")
        );
    }
}
