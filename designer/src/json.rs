//! Reading the designer's JSON answer: tolerant of code fences, prose around the JSON,
//! a bare list of changes, and loose type spellings.

use serde_json::Value;

use crate::edit::Edit;

/// Candidate JSON values in `text`: fenced blocks first, then the whole text, then every
/// `{` / `[` position parsed as one value with whatever follows ignored.
fn json_values(text: &str) -> Vec<Value> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("```") {
        let after = &rest[start + 3..];
        let body_start = after.find('\n').map_or(0, |i| i + 1);
        let Some(end) = after[body_start..].find("```") else {
            break;
        };
        let body = &after[body_start..body_start + end];
        if let Ok(v) = serde_json::from_str::<Value>(body.trim()) {
            out.push(v);
        }
        rest = &after[body_start + end + 3..];
    }
    if let Ok(v) = serde_json::from_str::<Value>(text.trim()) {
        out.push(v);
    }
    for (i, c) in text.char_indices() {
        if c == '{' || c == '[' {
            let mut it = serde_json::Deserializer::from_str(&text[i..]).into_iter::<Value>();
            if let Some(Ok(v)) = it.next() {
                out.push(v);
            }
        }
    }
    out
}

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

/// Turn one change object into an [`Edit`] (never fails: unreadable entries become `Malformed`).
pub fn edit_from_value(v: &Value) -> Edit {
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
    for v in json_values(text) {
        if let Some(a) = changes_array(&v) {
            return Ok(a.iter().map(edit_from_value).collect());
        }
        if v.as_object().is_some_and(|o| o.contains_key("type")) {
            return Ok(vec![edit_from_value(&v)]);
        }
    }
    Err("no JSON object with a \"changes\" list (or a bare list of changes) found in the designer answer".into())
}

#[cfg(test)]
mod tests {
    use super::*;

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
