//! Structured outputs (`structured = "json_schema"`): JSON schemas for the executor's actions
//! and the judge's verdict, built by pure functions from what the request allows, and the
//! strict reader of a structured executor reply.
//!
//! A request carries its schema as [`ResponseSchema`]; an OpenAI-compatible backend sends it
//! as `response_format` (vLLM, SGLang, llama.cpp server and Ollama constrain decoding to it),
//! the local GGUF backend applies it as a token mask (llguidance, cargo feature
//! `llguidance`). Off (the default and the reproduction setting) leaves prompts, requests
//! and parsing as they were.
//!
//! The structured executor reply is the JSON form the reference's parser already reads as a
//! fallback:
//!
//! ```json
//! {"actions": [{"action": "INSERT", "memory_item": "..."},
//!              {"action": "UPDATE", "memory_index": 0, "updated_memory": "..."},
//!              {"action": "DELETE", "memory_index": 1},
//!              {"action": "NOOP"}]}
//! ```
//!
//! The schema admits only the action kinds the chosen skills allow (NOOP always: "nothing to
//! write" is never a parse problem), at least one action, and indices below the number of
//! retrieved memories (no UPDATE / DELETE when none was retrieved).

use memskill_core::{ActionKind, ResponseSchema};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::parse::ParsedAction;

/// `structured`: whether replies are constrained to a JSON schema.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Structured {
    /// Free text, parsed as the reference does (the default; reproduction configs).
    #[default]
    Off,
    /// The reply is constrained to a JSON schema (`response_format` / a token mask).
    JsonSchema,
}

impl Structured {
    pub fn is_on(self) -> bool {
        self == Structured::JsonSchema
    }
}

/// Name of the executor's schema in `response_format`.
pub const EXECUTOR_SCHEMA_NAME: &str = "memory_actions";
/// Name of the judge's schema in `response_format`.
pub const JUDGE_SCHEMA_NAME: &str = "judge_verdict";

/// The longest memory text a structured reply may hold for a reply budget of `max_tokens`:
/// about half the budget (2 characters per token; at least 16), so that one runaway text
/// cannot take the whole reply.
pub fn max_text_chars(max_tokens: u32) -> usize {
    (2 * max_tokens as usize).max(16)
}

fn action_variant(kind: ActionKind, n_retrieved: usize, max_chars: usize) -> Option<Value> {
    let index = || json!({"type": "integer", "minimum": 0, "maximum": n_retrieved - 1});
    let text = || json!({"type": "string", "minLength": 1, "maxLength": max_chars});
    let (props, required): (Vec<(&str, Value)>, Vec<&str>) = match kind {
        ActionKind::Insert => (
            vec![
                ("action", json!({"const": "INSERT"})),
                ("memory_item", text()),
            ],
            vec!["action", "memory_item"],
        ),
        ActionKind::Update if n_retrieved > 0 => (
            vec![
                ("action", json!({"const": "UPDATE"})),
                ("memory_index", index()),
                ("updated_memory", text()),
            ],
            vec!["action", "memory_index", "updated_memory"],
        ),
        ActionKind::Delete if n_retrieved > 0 => (
            vec![
                ("action", json!({"const": "DELETE"})),
                ("memory_index", index()),
            ],
            vec!["action", "memory_index"],
        ),
        ActionKind::Noop => (vec![("action", json!({"const": "NOOP"}))], vec!["action"]),
        // UPDATE / DELETE with no retrieved memory: nothing to name
        _ => return None,
    };
    let properties: serde_json::Map<String, Value> =
        props.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    Some(json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    }))
}

/// The action kinds a structured reply may hold: those `allowed` (the chosen skills'), in
/// INSERT, UPDATE, DELETE order, plus NOOP; UPDATE and DELETE only when a memory was
/// retrieved.
pub fn schema_action_kinds(allowed: &[ActionKind], n_retrieved: usize) -> Vec<ActionKind> {
    ActionKind::ALL
        .into_iter()
        .filter(|k| *k == ActionKind::Noop || allowed.contains(k))
        .filter(|k| !matches!(k, ActionKind::Update | ActionKind::Delete) || n_retrieved > 0)
        .collect()
}

/// The executor's reply schema for a span: `{"actions": [...]}` with at least one action of
/// the kinds [`schema_action_kinds`] gives, indices in `[0, n_retrieved)`, memory texts of at
/// most [`max_text_chars`]`(max_tokens)` characters.
pub fn executor_schema(
    allowed: &[ActionKind],
    n_retrieved: usize,
    max_tokens: u32,
) -> ResponseSchema {
    let max_chars = max_text_chars(max_tokens);
    let variants: Vec<Value> = schema_action_kinds(allowed, n_retrieved)
        .into_iter()
        .filter_map(|k| action_variant(k, n_retrieved, max_chars))
        .collect();
    let items = if variants.len() == 1 {
        variants.into_iter().next().unwrap_or(Value::Null)
    } else {
        json!({ "anyOf": variants })
    };
    ResponseSchema {
        name: EXECUTOR_SCHEMA_NAME.into(),
        schema: json!({
            "type": "object",
            "properties": {"actions": {"type": "array", "items": items, "minItems": 1}},
            "required": ["actions"],
            "additionalProperties": false,
        }),
    }
}

/// The general judge's verdict schema: `{"explanation": "...", "score": 0.0 | 0.5 | 1.0}`
/// (what [`crate::parse_judge`] reads).
pub fn judge_schema() -> ResponseSchema {
    ResponseSchema {
        name: JUDGE_SCHEMA_NAME.into(),
        schema: json!({
            "type": "object",
            "properties": {
                "explanation": {"type": "string"},
                "score": {"enum": [0.0, 0.5, 1.0]},
            },
            "required": ["explanation", "score"],
            "additionalProperties": false,
        }),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Reply {
    actions: Vec<Item>,
}

#[derive(Deserialize)]
#[serde(tag = "action", deny_unknown_fields)]
enum Item {
    #[serde(rename = "INSERT")]
    Insert { memory_item: String },
    #[serde(rename = "UPDATE")]
    Update {
        memory_index: u64,
        updated_memory: String,
    },
    #[serde(rename = "DELETE")]
    Delete { memory_index: u64 },
    #[serde(rename = "NOOP")]
    Noop {},
}

/// Read a reply that follows [`executor_schema`] (strict JSON, surrounding whitespace
/// allowed) into parse results, one per action: an index not below `n_retrieved` or an empty
/// text is a failed result, as in [`crate::parse_response`]. `None` when the reply is not
/// such a JSON document (the caller then reads it as free text).
pub fn parse_structured(text: &str, n_retrieved: usize) -> Option<Vec<ParsedAction>> {
    let reply: Reply = serde_json::from_str(text.trim()).ok()?;
    let index = |i: u64| (i < n_retrieved as u64).then_some(i as usize);
    let out = reply
        .actions
        .into_iter()
        .map(|item| match item {
            Item::Insert { memory_item } => {
                let c = memory_item.trim();
                if c.is_empty() {
                    ParsedAction::failed("INSERT with an empty memory_item")
                } else {
                    ParsedAction::ok(ActionKind::Insert, None, c.to_string())
                }
            }
            Item::Update {
                memory_index,
                updated_memory,
            } => {
                let c = updated_memory.trim();
                match index(memory_index) {
                    None => ParsedAction::failed(format!(
                        "memory_index {memory_index} out of range [0, {n_retrieved})"
                    )),
                    Some(_) if c.is_empty() => {
                        ParsedAction::failed("UPDATE with an empty updated_memory")
                    }
                    Some(i) => ParsedAction::ok(ActionKind::Update, Some(i), c.to_string()),
                }
            }
            Item::Delete { memory_index } => match index(memory_index) {
                None => ParsedAction::failed(format!(
                    "memory_index {memory_index} out of range [0, {n_retrieved})"
                )),
                Some(i) => ParsedAction::ok(ActionKind::Delete, Some(i), String::new()),
            },
            Item::Noop {} => ParsedAction::ok(ActionKind::Noop, None, String::new()),
        })
        .collect::<Vec<_>>();
    if out.is_empty() {
        return Some(vec![ParsedAction::failed("empty actions list")]);
    }
    Some(out)
}

/// The structured form (`{"actions": [...]}`) of the successful results among `results`:
/// what a model constrained by [`executor_schema`] writes for those actions.
pub fn actions_json(results: &[ParsedAction]) -> String {
    let items: Vec<Value> = results
        .iter()
        .filter(|r| r.success)
        .map(|r| match r.kind {
            ActionKind::Insert => json!({"action": "INSERT", "memory_item": r.content}),
            ActionKind::Update => json!({
                "action": "UPDATE",
                "memory_index": r.index.unwrap_or(0),
                "updated_memory": r.content,
            }),
            ActionKind::Delete => json!({"action": "DELETE", "memory_index": r.index.unwrap_or(0)}),
            ActionKind::Noop => json!({"action": "NOOP"}),
        })
        .collect();
    json!({ "actions": items }).to_string()
}

/// The results of an executor reply: with `structured` on, a reply that follows the schema
/// is read strictly ([`parse_structured`]) and anything else as free text
/// ([`crate::parse_response`], which also repairs broken JSON); off, free text only.
pub fn parse_reply(text: &str, n_retrieved: usize, structured: Structured) -> Vec<ParsedAction> {
    if structured.is_on() {
        if let Some(r) = parse_structured(text, n_retrieved) {
            return r;
        }
    }
    crate::parse_response(text, n_retrieved)
}

#[cfg(test)]
mod tests {
    use super::*;
    use memskill_core::MemoryAction;

    fn kinds_in(schema: &Value) -> Vec<String> {
        let items = &schema["properties"]["actions"]["items"];
        let variants: Vec<&Value> = match items.get("anyOf") {
            Some(Value::Array(a)) => a.iter().collect(),
            _ => vec![items],
        };
        variants
            .iter()
            .map(|v| {
                v["properties"]["action"]["const"]
                    .as_str()
                    .unwrap_or("")
                    .to_string()
            })
            .collect()
    }

    #[test]
    fn executor_schema_follows_allowed_kinds_and_index_bounds() {
        use ActionKind::*;
        let s = executor_schema(&[Insert, Delete], 3, 128);
        assert_eq!(s.name, "memory_actions");
        assert_eq!(kinds_in(&s.schema), ["INSERT", "DELETE", "NOOP"]);
        let del = &s.schema["properties"]["actions"]["items"]["anyOf"][1];
        assert_eq!(del["properties"]["memory_index"]["maximum"], 2);
        assert_eq!(del["properties"]["memory_index"]["minimum"], 0);
        assert_eq!(del["additionalProperties"], false);
        let ins = &s.schema["properties"]["actions"]["items"]["anyOf"][0];
        assert_eq!(ins["properties"]["memory_item"]["maxLength"], 256);
        assert_eq!(s.schema["properties"]["actions"]["minItems"], 1);
        // nothing retrieved: no index to name, so no UPDATE / DELETE
        let s = executor_schema(&[Update, Delete, Insert], 0, 128);
        assert_eq!(kinds_in(&s.schema), ["INSERT", "NOOP"]);
        // only NOOP left: a single schema, no anyOf
        let s = executor_schema(&[Update], 0, 128);
        assert_eq!(kinds_in(&s.schema), ["NOOP"]);
        assert!(s.schema["properties"]["actions"]["items"]
            .get("anyOf")
            .is_none());
        let s = executor_schema(&[Update, Update], 1, 128);
        assert_eq!(kinds_in(&s.schema), ["UPDATE", "NOOP"]);
    }

    #[test]
    fn structured_reply_maps_to_the_same_actions_as_blocks() {
        let json = r#"{"actions": [
            {"action": "INSERT", "memory_item": "Alice moved to Paris. ACTION: DELETE"},
            {"action": "UPDATE", "memory_index": 1, "updated_memory": "Bob likes green tea."},
            {"action": "DELETE", "memory_index": 0},
            {"action": "NOOP"}]}"#;
        let r = parse_reply(json, 3, Structured::JsonSchema);
        let actions: Vec<MemoryAction> = r.iter().filter_map(|p| p.action()).collect();
        assert_eq!(
            actions,
            vec![
                MemoryAction::Insert {
                    content: "Alice moved to Paris. ACTION: DELETE".into()
                },
                MemoryAction::Update {
                    index: 1,
                    content: "Bob likes green tea.".into()
                },
                MemoryAction::Delete { index: 0 },
                MemoryAction::Noop,
            ]
        );
        // off: the same text goes through the reference's reader, whose ACTION headers
        // inside the memory text split it differently
        let off = parse_reply(json, 3, Structured::Off);
        assert_ne!(off, r);
        assert_eq!(off, crate::parse_response(json, 3));
    }

    #[test]
    fn actions_json_round_trips_through_the_structured_reader() {
        let blocks = "ACTION: INSERT\nMEMORY_ITEM: Alice said \"hi\"\nsecond line\n\nACTION: UPDATE\nMEMORY_INDEX: 1\nUPDATED_MEMORY: Bob, 31\n\nACTION: DELETE\nMEMORY_INDEX: 0\n\nACTION: NOOP\n\nACTION: DELETE\nMEMORY_INDEX: 7";
        let parsed = crate::parse_response(blocks, 2);
        assert_eq!(parsed.len(), 5);
        let json = actions_json(&parsed);
        let back = parse_structured(&json, 2).expect("the schema's shape");
        let ok: Vec<ParsedAction> = parsed.into_iter().filter(|r| r.success).collect();
        assert_eq!(back, ok);
    }

    #[test]
    fn structured_reply_problems_are_failed_results() {
        let r = parse_structured(
            r#"{"actions": [{"action": "DELETE", "memory_index": 5}]}"#,
            2,
        )
        .expect("valid shape");
        assert!(!r[0].success && r[0].note.contains("out of range"));
        let r = parse_structured(r#"{"actions": []}"#, 2).expect("valid shape");
        assert!(!r[0].success);
        let r = parse_structured(
            r#"{"actions": [{"action": "INSERT", "memory_item": "  "}]}"#,
            2,
        )
        .expect("valid shape");
        assert!(!r[0].success);
        // not the schema's shape: read as free text
        assert!(parse_structured("ACTION: NOOP", 2).is_none());
        assert!(parse_structured(r#"{"actions": [{"action": "MOVE"}]}"#, 2).is_none());
        assert!(parse_structured(r#"{"actions": [{"action": "NOOP", "x": 1}]}"#, 2).is_none());
        let r = parse_reply("ACTION: NOOP", 2, Structured::JsonSchema);
        assert!(r[0].success && r[0].kind == ActionKind::Noop);
        let r = parse_reply(
            r#"{"actions": [{"action": "DELETE", "memory_index": -1}]}"#,
            2,
            Structured::JsonSchema,
        );
        assert!(r.iter().all(|p| !p.success));
    }

    #[test]
    fn judge_schema_scores_are_what_parse_judge_reads() {
        let s = judge_schema();
        for v in s.schema["properties"]["score"]["enum"]
            .as_array()
            .expect("enum")
        {
            let reply = json!({"explanation": "x", "score": v}).to_string();
            assert_eq!(crate::parse_judge(&reply), v.as_f64());
        }
    }

    #[test]
    fn structured_setting_reads_as_in_configs() {
        let s: Structured = serde_json::from_str("\"json_schema\"").expect("json_schema");
        assert!(s.is_on());
        let s: Structured = serde_json::from_str("\"off\"").expect("off");
        assert!(!s.is_on());
        assert!(serde_json::from_str::<Structured>("\"on\"").is_err());
    }
}
