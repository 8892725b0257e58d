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
//!
//! With typed or scoped memories on ([`MetaFields`], `executor.typed_memories` /
//! `scoped_memories`) an INSERT or UPDATE may also carry a `"type"` (one of the seven memory
//! types), a `"confidence"` (a number in [0, 1]) and a `"scope"` (the block format's SCOPE
//! value: `user:ID`, ... or `none`), each optional; off, the schema and the reader are
//! exactly those without them.

use memskill_core::{ActionKind, MemoryType, ResponseSchema};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::parse::ParsedAction;
use crate::typed::MetaFields;

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

/// The optional `type`, `confidence` and `scope` properties of a memory text (those of
/// `fields`).
fn meta_properties(fields: MetaFields, max_chars: usize) -> Vec<(&'static str, Value)> {
    let mut props = Vec::new();
    if fields.typed {
        let types: Vec<&str> = MemoryType::ALL.iter().map(|t| t.as_str()).collect();
        props.push(("type", json!({ "enum": types })));
        props.push((
            "confidence",
            json!({"type": "number", "minimum": 0, "maximum": 1}),
        ));
    }
    if fields.scoped {
        props.push((
            "scope",
            json!({"type": "string", "minLength": 1, "maxLength": max_chars}),
        ));
    }
    props
}

fn action_variant(
    kind: ActionKind,
    n_retrieved: usize,
    max_chars: usize,
    fields: MetaFields,
) -> Option<Value> {
    let index = || json!({"type": "integer", "minimum": 0, "maximum": n_retrieved - 1});
    let text = || json!({"type": "string", "minLength": 1, "maxLength": max_chars});
    let meta = || meta_properties(fields, max_chars);
    let (props, required): (Vec<(&str, Value)>, Vec<&str>) = match kind {
        ActionKind::Insert => (
            [
                ("action", json!({"const": "INSERT"})),
                ("memory_item", text()),
            ]
            .into_iter()
            .chain(meta())
            .collect(),
            vec!["action", "memory_item"],
        ),
        ActionKind::Update if n_retrieved > 0 => (
            [
                ("action", json!({"const": "UPDATE"})),
                ("memory_index", index()),
                ("updated_memory", text()),
            ]
            .into_iter()
            .chain(meta())
            .collect(),
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
    executor_schema_with(allowed, n_retrieved, max_tokens, MetaFields::default())
}

/// [`executor_schema`], where an INSERT or UPDATE may also state its memory's type and
/// confidence (`fields.typed`) and scope (`fields.scoped`), each optional.
pub fn executor_schema_with(
    allowed: &[ActionKind],
    n_retrieved: usize,
    max_tokens: u32,
    fields: MetaFields,
) -> ResponseSchema {
    let max_chars = max_text_chars(max_tokens);
    let variants: Vec<Value> = schema_action_kinds(allowed, n_retrieved)
        .into_iter()
        .filter_map(|k| action_variant(k, n_retrieved, max_chars, fields))
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
    Insert {
        memory_item: String,
        #[serde(rename = "type")]
        kind: Option<String>,
        confidence: Option<f64>,
        scope: Option<String>,
    },
    #[serde(rename = "UPDATE")]
    Update {
        memory_index: u64,
        updated_memory: String,
        #[serde(rename = "type")]
        kind: Option<String>,
        confidence: Option<f64>,
        scope: Option<String>,
    },
    #[serde(rename = "DELETE")]
    Delete { memory_index: u64 },
    #[serde(rename = "NOOP")]
    Noop {},
}

/// A memory text's stated type, confidence and scope as they come in a structured reply.
struct StatedMeta {
    kind: Option<String>,
    confidence: Option<f64>,
    scope: Option<String>,
}

impl StatedMeta {
    /// Whether it states only fields of `fields` (a field the schema did not offer makes the
    /// reply not the schema's shape, as any unknown key does).
    fn fits(&self, fields: MetaFields) -> bool {
        (fields.typed || (self.kind.is_none() && self.confidence.is_none()))
            && (fields.scoped || self.scope.is_none())
    }

    /// `text` followed by the block format's `MEMORY_TYPE:` / `CONFIDENCE:` / `SCOPE:` lines
    /// for what is stated: the parse result the block reader gives for the same memory, so
    /// that [`crate::typed::split_meta_with`] reads both formats alike after the parse.
    fn with_lines(&self, text: &str) -> String {
        let one_line = |v: &str| v.split_whitespace().collect::<Vec<_>>().join(" ");
        let mut out = text.to_string();
        if let Some(k) = &self.kind {
            out.push_str(&format!("\nMEMORY_TYPE: {}", one_line(k)));
        }
        if let Some(c) = self.confidence {
            out.push_str(&format!("\nCONFIDENCE: {c}"));
        }
        if let Some(s) = &self.scope {
            out.push_str(&format!("\nSCOPE: {}", one_line(s)));
        }
        out
    }
}

/// Read a reply that follows [`executor_schema`] (strict JSON, surrounding whitespace
/// allowed) into parse results, one per action: an index not below `n_retrieved` or an empty
/// text is a failed result, as in [`crate::parse_response`]. `None` when the reply is not
/// such a JSON document (the caller then reads it as free text).
pub fn parse_structured(text: &str, n_retrieved: usize) -> Option<Vec<ParsedAction>> {
    parse_structured_with(text, n_retrieved, MetaFields::default())
}

/// [`parse_structured`] for a reply that follows [`executor_schema_with`]`(.., fields)`: a
/// memory text's stated `type` and `confidence` (`fields.typed`) and `scope`
/// (`fields.scoped`) become the `MEMORY_TYPE:` / `CONFIDENCE:` / `SCOPE:` lines after its
/// text, as the block format writes them, which the caller takes out of the text
/// ([`crate::typed::split_meta_with`]; a value that does not read is a problem there). A
/// field outside `fields` makes the reply not the schema's shape (`None`).
pub fn parse_structured_with(
    text: &str,
    n_retrieved: usize,
    fields: MetaFields,
) -> Option<Vec<ParsedAction>> {
    let reply: Reply = serde_json::from_str(text.trim()).ok()?;
    let index = |i: u64| (i < n_retrieved as u64).then_some(i as usize);
    // the stated type, confidence and scope, or `None`: a field the schema did not offer
    let stated = |kind, confidence, scope| {
        let meta = StatedMeta {
            kind,
            confidence,
            scope,
        };
        meta.fits(fields).then_some(meta)
    };
    let mut out = Vec::new();
    for item in reply.actions {
        out.push(match item {
            Item::Insert {
                memory_item,
                kind,
                confidence,
                scope,
            } => {
                let meta = stated(kind, confidence, scope)?;
                let c = memory_item.trim();
                if c.is_empty() {
                    ParsedAction::failed("INSERT with an empty memory_item")
                } else {
                    ParsedAction::ok(ActionKind::Insert, None, meta.with_lines(c))
                }
            }
            Item::Update {
                memory_index,
                updated_memory,
                kind,
                confidence,
                scope,
            } => {
                let meta = stated(kind, confidence, scope)?;
                let c = updated_memory.trim();
                match index(memory_index) {
                    None => ParsedAction::failed(format!(
                        "memory_index {memory_index} out of range [0, {n_retrieved})"
                    )),
                    Some(_) if c.is_empty() => {
                        ParsedAction::failed("UPDATE with an empty updated_memory")
                    }
                    Some(i) => ParsedAction::ok(ActionKind::Update, Some(i), meta.with_lines(c)),
                }
            }
            Item::Delete { memory_index } => match index(memory_index) {
                None => ParsedAction::failed(format!(
                    "memory_index {memory_index} out of range [0, {n_retrieved})"
                )),
                Some(i) => ParsedAction::ok(ActionKind::Delete, Some(i), String::new()),
            },
            Item::Noop {} => ParsedAction::ok(ActionKind::Noop, None, String::new()),
        });
    }
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
    parse_reply_with(text, n_retrieved, structured, MetaFields::default())
}

/// [`parse_reply`] for a request whose schema offers the fields of `fields`
/// ([`executor_schema_with`], read by [`parse_structured_with`]).
pub fn parse_reply_with(
    text: &str,
    n_retrieved: usize,
    structured: Structured,
    fields: MetaFields,
) -> Vec<ParsedAction> {
    if structured.is_on() {
        if let Some(r) = parse_structured_with(text, n_retrieved, fields) {
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

    /// The executor schemas of a few requests (every kind with and without retrieved
    /// memories, INSERT only), one per line: the golden file was written before typed and
    /// scoped fields could enter the schema, so that with them off it stays the same.
    fn default_schemas(fields: MetaFields) -> String {
        use ActionKind::*;
        [
            executor_schema_with(&[Insert, Update, Delete, Noop], 2, 128, fields),
            executor_schema_with(&[Insert, Update, Delete], 0, 64, fields),
            executor_schema_with(&[Insert], 1, 256, fields),
        ]
        .iter()
        .map(|s| format!("{} {}\n", s.name, s.schema))
        .collect()
    }

    /// `name schema` lines read back (the schema as a value: a build with serde_json's
    /// `preserve_order`, the `llguidance` feature's, writes the same keys in another order).
    fn schema_lines(text: &str) -> Vec<(String, Value)> {
        text.lines()
            .map(|l| {
                let (name, json) = l.split_once(' ').expect("name and schema");
                (
                    name.to_string(),
                    serde_json::from_str(json).expect("a schema"),
                )
            })
            .collect()
    }

    #[test]
    fn executor_schema_with_the_options_off_is_the_golden_file() {
        let got = default_schemas(MetaFields::default());
        let want = include_str!("../tests/fixtures/executor_schema_off.txt");
        assert_eq!(
            default_schemas(MetaFields::default()),
            [
                executor_schema(
                    &[
                        ActionKind::Insert,
                        ActionKind::Update,
                        ActionKind::Delete,
                        ActionKind::Noop
                    ],
                    2,
                    128
                ),
                executor_schema(
                    &[ActionKind::Insert, ActionKind::Update, ActionKind::Delete],
                    0,
                    64
                ),
                executor_schema(&[ActionKind::Insert], 1, 256),
            ]
            .iter()
            .map(|s| format!("{} {}\n", s.name, s.schema))
            .collect::<String>()
        );
        if schema_lines(&got) != schema_lines(want) {
            let p = std::env::temp_dir().join("executor_schema_off.actual.txt");
            std::fs::write(&p, &got).unwrap();
            panic!(
                "the executor schema with the options off changed; written to {}",
                p.display()
            );
        }
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

    /// Item 2 of the leftovers: with typed and scoped memories on, the JSON form carries the
    /// type, confidence and scope the block format's lines carry, and reads to the same
    /// texts, types, confidences and scopes; off, a reply with those fields is not the
    /// schema's shape (read as free text, as before).
    #[test]
    fn typed_and_scoped_json_reads_like_the_same_blocks() {
        use crate::typed::{split_meta_with, MemoryMeta};
        let both = MetaFields {
            typed: true,
            scoped: true,
        };
        let blocks = "ACTION: INSERT\nMEMORY_ITEM: Alice moved to Tokyo in July 2023.\n\
                      MEMORY_TYPE: episodic\nCONFIDENCE: 0.9\nSCOPE: user:Alice\n\n\
                      ACTION: UPDATE\nMEMORY_INDEX: 1\nUPDATED_MEMORY: Bob likes green tea.\n\
                      MEMORY_TYPE: preference\nCONFIDENCE: 0.6\nSCOPE: user:Bob, org:acme\n\n\
                      ACTION: INSERT\nMEMORY_ITEM: The office opens at 9.\nMEMORY_TYPE: semantic\n\n\
                      ACTION: INSERT\nMEMORY_ITEM: Shared plan.\nSCOPE: none\n\n\
                      ACTION: DELETE\nMEMORY_INDEX: 0\n\nACTION: NOOP";
        let json = r#"{"actions": [
            {"action": "INSERT", "memory_item": "Alice moved to Tokyo in July 2023.", "type": "episodic", "confidence": 0.9, "scope": "user:Alice"},
            {"action": "UPDATE", "memory_index": 1, "updated_memory": "Bob likes green tea.", "type": "preference", "confidence": 0.6, "scope": "user:Bob, org:acme"},
            {"action": "INSERT", "memory_item": "The office opens at 9.", "type": "semantic"},
            {"action": "INSERT", "memory_item": "Shared plan.", "scope": "none"},
            {"action": "DELETE", "memory_index": 0},
            {"action": "NOOP"}]}"#;
        // (kind, index, text, meta, problems) after the parse and the meta split
        let read = |r: Vec<ParsedAction>| -> Vec<_> {
            r.into_iter()
                .map(|p| {
                    assert!(p.success, "{p:?}");
                    let (text, meta, problems) = split_meta_with(&p.content, both);
                    (p.kind, p.index, text, meta, problems)
                })
                .collect()
        };
        let from_blocks = read(parse_reply_with(blocks, 2, Structured::Off, both));
        let from_json = read(parse_reply_with(json, 2, Structured::JsonSchema, both));
        assert_eq!(from_json, from_blocks);
        assert_eq!(
            from_json[1],
            (
                ActionKind::Update,
                Some(1),
                "Bob likes green tea.".to_string(),
                MemoryMeta {
                    kind: Some(memskill_core::MemoryType::Preference),
                    confidence: Some(0.6),
                    scope: Some("user:Bob, org:acme".parse().unwrap()),
                },
                vec![],
            )
        );
        assert_eq!(from_json[3].3.scope, Some(memskill_core::Scope::default()));
        assert_eq!(from_json[2].3.scope, None);
        // a value that does not read is a problem, as in the block format
        let odd = r#"{"actions": [{"action": "INSERT", "memory_item": "x", "confidence": 1.5, "scope": "team:red"}]}"#;
        assert_eq!(
            read(parse_structured_with(odd, 0, both).unwrap())[0]
                .4
                .len(),
            2
        );
        // only the fields asked for: typed alone takes no scope, and off takes none
        let typed = MetaFields {
            typed: true,
            scoped: false,
        };
        assert!(parse_structured_with(json, 2, typed).is_none());
        assert!(parse_structured(json, 2).is_none());
        assert_eq!(
            parse_reply(json, 2, Structured::JsonSchema),
            crate::parse_response(json, 2)
        );
        let plain = r#"{"actions": [{"action": "INSERT", "memory_item": "x"}]}"#;
        assert_eq!(
            parse_structured_with(plain, 0, both),
            parse_structured(plain, 0)
        );
    }

    #[test]
    fn typed_and_scoped_schema_offers_the_optional_fields_only_when_on() {
        use ActionKind::*;
        let variants = |fields| {
            executor_schema_with(&[Insert, Update, Delete], 2, 128, fields).schema["properties"]
                ["actions"]["items"]["anyOf"]
                .as_array()
                .unwrap()
                .clone()
        };
        let keys = |v: &Value| -> Vec<String> {
            v["properties"]
                .as_object()
                .unwrap()
                .keys()
                .cloned()
                .collect()
        };
        let both = variants(MetaFields {
            typed: true,
            scoped: true,
        });
        let (ins, upd, del, noop) = (&both[0], &both[1], &both[2], &both[3]);
        for v in [ins, upd] {
            for k in ["type", "confidence", "scope"] {
                assert!(keys(v).contains(&k.to_string()), "{v}");
                // optional: a memory without them is still the schema's shape
                assert!(
                    !v["required"].as_array().unwrap().contains(&json!(k)),
                    "{v}"
                );
            }
            assert_eq!(
                v["properties"]["type"]["enum"],
                json!([
                    "episodic",
                    "semantic",
                    "preference",
                    "procedural",
                    "reflective",
                    "graph",
                    "environment"
                ])
            );
            assert_eq!(v["properties"]["confidence"]["maximum"], 1);
        }
        for v in [del, noop] {
            assert!(!keys(v).contains(&"type".to_string()), "{v}");
        }
        let scoped = variants(MetaFields {
            typed: false,
            scoped: true,
        });
        assert!(keys(&scoped[0]).contains(&"scope".to_string()));
        assert!(!keys(&scoped[0]).contains(&"type".to_string()));
        // off: the schema without them (and the golden file's)
        let off = variants(MetaFields::default());
        assert_eq!(keys(&off[0]), ["action", "memory_item"]);
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
