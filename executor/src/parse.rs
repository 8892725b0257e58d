//! Parsing executor responses into memory actions, the way the reference executor reads them
//! (MemSkill `Executor._parse_response` and helpers), so that the same reply yields the same
//! actions. Never fails: whatever cannot be understood becomes a failed result with a note.
//!
//! How a reply is read:
//! 1. Normalise: CRLF -> LF, strip; a reply that starts with a code fence is cut to the fenced
//!    part (a first line `json` / `text` dropped).
//! 2. Split into blocks at every `ACTION <sep> KIND` header (KIND one of INSERT / UPDATE /
//!    DELETE / NOOP, any case, `<sep>` an optional `:`, `=` or `-`, `ACTION` not preceded by a
//!    word character). Without any header, a line consisting only of a kind (optionally
//!    bulleted with `-` / `*`, optionally followed by a separator) starts a block. Without
//!    either, the reply is read as JSON (see [`memskill_core::jsonfix`]).
//! 3. In a block, INSERT texts are every `MEMORY_ITEM` / `NEW_MEMORY` / `CONTENT` / `MEMORY`
//!    field, each running (across lines) up to the next `MEMORY_ITEM` / `UPDATED_MEMORY` /
//!    `MEMORY_INDEX` / `REASONING` / `ACTION` keyword or the block's end; when there is none,
//!    every non-keyword line of the block is an item. UPDATE pairs the n-th `MEMORY_INDEX <sep>
//!    digits` with the n-th `UPDATED_MEMORY` text; DELETE takes every `MEMORY_INDEX <sep>
//!    digits`. An index not below the number of retrieved memories is a failed result; a
//!    `-` right after `MEMORY_INDEX` is a separator, so `MEMORY_INDEX -1` names index 1 while
//!    `MEMORY_INDEX: -1` names none.
//!
//! [`parse_response`] returns every result, failed ones included, as the reference does;
//! [`parse_actions`] turns them into [`MemoryAction`]s and problem strings.

use std::sync::OnceLock;

use fancy_regex::{Regex, RegexBuilder};
use memskill_core::{ActionKind, MemoryAction};
use serde::Serialize;
use serde_json::Value;

use memskill_core::jsonfix::{
    decimal_digit_value, lenient_json, py_int, py_splitlines, py_str, py_strip,
};

/// One parsed result: an action that parsed (`success`) or a failed parse (`kind` NOOP,
/// `success` false, `note` saying why). `index` is set for UPDATE / DELETE.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedAction {
    pub kind: ActionKind,
    pub success: bool,
    pub index: Option<usize>,
    pub content: String,
    pub note: String,
}

impl ParsedAction {
    pub(crate) fn ok(kind: ActionKind, index: Option<usize>, content: String) -> Self {
        ParsedAction {
            kind,
            success: true,
            index,
            content,
            note: String::new(),
        }
    }

    pub(crate) fn failed(note: impl Into<String>) -> Self {
        ParsedAction {
            kind: ActionKind::Noop,
            success: false,
            index: None,
            content: String::new(),
            note: note.into(),
        }
    }

    /// The memory action of a successful result.
    pub fn action(&self) -> Option<MemoryAction> {
        if !self.success {
            return None;
        }
        Some(match self.kind {
            ActionKind::Insert => MemoryAction::Insert {
                content: self.content.clone(),
            },
            ActionKind::Update => MemoryAction::Update {
                index: self.index?,
                content: self.content.clone(),
            },
            ActionKind::Delete => MemoryAction::Delete { index: self.index? },
            ActionKind::Noop => MemoryAction::Noop,
        })
    }

    /// `{"action": "INSERT", "success": true, "index": -1, "content": "..."}` (index -1 when
    /// unset), the shape the reference's results are compared in.
    pub fn to_json(&self) -> Value {
        serde_json::json!({
            "action": self.kind.as_str().to_uppercase(),
            "success": self.success,
            "index": self.index.map(|i| i as i64).unwrap_or(-1),
            "content": self.content,
        })
    }
}

/// Actions parsed from one executor response, plus everything that was dropped and why.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ParseOutcome {
    pub actions: Vec<MemoryAction>,
    pub problems: Vec<String>,
}

/// Python's `\s` (str patterns) as a class: Unicode White_Space plus U+001C..U+001F.
const SP: &str = r"[\s\x1c-\x1f]";
/// Python's `\w` (str patterns): letters, numbers, underscore.
const WORD: &str = r"[_\p{L}\p{N}]";
const KINDS: &str = "INSERT|UPDATE|DELETE|NOOP";

struct Patterns {
    /// ACTION header that splits a reply into blocks (not preceded by a word character).
    header_split: Regex,
    /// ACTION header searched inside a block (anywhere).
    header_in_block: Regex,
    /// A line holding only an action kind.
    line_kind: Regex,
    insert_item: Regex,
    updated_item: Regex,
    index: Regex,
    fallback_skip: Regex,
    fallback_label: Regex,
    bullet: Regex,
    numbering: Regex,
}

fn build(p: &str) -> Regex {
    RegexBuilder::new(p)
        .backtrack_limit(50_000_000)
        .build()
        .unwrap_or_else(|e| panic!("static pattern {p:?}: {e}"))
}

fn patterns() -> &'static Patterns {
    static P: OnceLock<Patterns> = OnceLock::new();
    P.get_or_init(|| {
        let sep = "[:=-]?";
        // a field value runs lazily up to the next field keyword (after optional blanks,
        // commas, semicolons) or the end of the block
        let stop = format!(
            r"(?=(?:{SP}|[,;])*(?:REASONING|MEMORY[_ ]ITEM|UPDATED[_ ]MEMORY|MEMORY[_ ]INDEX|ACTION|\z))"
        );
        Patterns {
            header_split: build(&format!(
                r"(?i)(?<!{WORD})ACTION{SP}*{sep}{SP}*({KINDS})(?!{WORD})"
            )),
            header_in_block: build(&format!(r"(?i)ACTION{SP}*{sep}{SP}*({KINDS})(?!{WORD})")),
            line_kind: build(&format!(
                r"(?im)^(?:[-*]{SP}*)?({KINDS}){SP}*{sep}{SP}*$"
            )),
            insert_item: build(&format!(
                r"(?is)(?:MEMORY[_ ]ITEM|NEW[_ ]MEMORY|CONTENT|MEMORY){SP}*{sep}{SP}*(.+?){stop}"
            )),
            updated_item: build(&format!(r"(?is)UPDATED[_ ]MEMORY{SP}*{sep}{SP}*(.+?){stop}")),
            index: build(&format!(r"(?i)MEMORY[_ ]INDEX{SP}*{sep}{SP}*(\d+)")),
            fallback_skip: build(&format!(
                r"(?i)^(?:ACTION|MEMORY[_ ]ITEM|UPDATED[_ ]MEMORY|MEMORY[_ ]INDEX|REASONING)(?!{WORD})"
            )),
            fallback_label: build(&format!(r"(?i)^{WORD}+{SP}+block{SP}*:?{SP}*\z")),
            bullet: build(&format!(r"^[-*•]{SP}*")),
            numbering: build(&format!(r"^\d+\.{SP}*")),
        }
    })
}

/// First capture group of every match (a pattern error ends the scan).
fn all_group1<'t>(re: &Regex, text: &'t str) -> Vec<&'t str> {
    re.captures_iter(text)
        .map_while(Result::ok)
        .filter_map(|c| c.get(1).map(|m| m.as_str()))
        .collect()
}

fn first_group1<'t>(re: &Regex, text: &'t str) -> Option<&'t str> {
    re.captures(text)
        .ok()
        .flatten()
        .and_then(|c| c.get(1).map(|m| m.as_str()))
}

fn starts(re: &Regex, text: &str) -> Vec<usize> {
    re.find_iter(text)
        .map_while(Result::ok)
        .map(|m| m.start())
        .collect()
}

/// CRLF -> LF, strip, and cut a reply that starts with a code fence to its fenced part.
fn normalize(text: &str) -> String {
    let t = text.replace("\r\n", "\n");
    let mut t: &str = py_strip(&t);
    if t.starts_with("```") {
        let parts: Vec<&str> = t.split("```").collect();
        if parts.len() >= 3 {
            t = parts[1];
            if let Some((first, rest)) = t.split_once('\n') {
                let tag = py_strip(first).to_lowercase();
                if tag == "json" || tag == "text" {
                    t = rest;
                }
            }
        }
    }
    py_strip(t).to_string()
}

/// A run of (any-script) decimal digits as a number, saturating.
fn digits_value(s: &str) -> u128 {
    s.chars().fold(0u128, |v, c| {
        v.saturating_mul(10)
            .saturating_add(decimal_digit_value(c).unwrap_or(0) as u128)
    })
}

fn kind_of(word: &str) -> Option<ActionKind> {
    match word.to_ascii_uppercase().as_str() {
        "INSERT" => Some(ActionKind::Insert),
        "UPDATE" => Some(ActionKind::Update),
        "DELETE" => Some(ActionKind::Delete),
        "NOOP" => Some(ActionKind::Noop),
        _ => None,
    }
}

fn insert_fallback_lines(block: &str, p: &Patterns) -> Vec<String> {
    let mut out = Vec::new();
    for line in py_splitlines(block) {
        let s = py_strip(line);
        if s.is_empty()
            || p.fallback_skip.is_match(s).unwrap_or(false)
            || p.fallback_label.is_match(s).unwrap_or(false)
        {
            continue;
        }
        let s = p.bullet.replace(s, "");
        let s = p.numbering.replace(&s, "").into_owned();
        if !s.is_empty() {
            out.push(s);
        }
    }
    out
}

fn index_results(
    kind: ActionKind,
    indices: &[&str],
    contents: Option<&[String]>,
    n: usize,
) -> Vec<ParsedAction> {
    let pairs = contents.map_or(indices.len(), |c| c.len().min(indices.len()));
    (0..pairs)
        .map(|i| {
            let v = digits_value(indices[i]);
            if v >= n as u128 {
                ParsedAction::failed(format!("MEMORY_INDEX {} out of range [0, {n})", indices[i]))
            } else {
                let content = contents.map(|c| c[i].clone()).unwrap_or_default();
                ParsedAction::ok(kind, Some(v as usize), content)
            }
        })
        .collect()
}

fn parse_block(block: &str, n: usize) -> Vec<ParsedAction> {
    let p = patterns();
    let kind = first_group1(&p.header_in_block, block)
        .or_else(|| first_group1(&p.line_kind, block))
        .and_then(kind_of);
    let Some(kind) = kind else {
        return vec![ParsedAction::failed("no ACTION in block")];
    };
    let fields = |re: &Regex| -> Vec<String> {
        all_group1(re, block)
            .into_iter()
            .map(py_strip)
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect()
    };
    match kind {
        ActionKind::Noop => vec![ParsedAction::ok(ActionKind::Noop, None, String::new())],
        ActionKind::Insert => {
            let mut items = fields(&p.insert_item);
            if items.is_empty() {
                items = insert_fallback_lines(block, p);
            }
            if items.is_empty() {
                return vec![ParsedAction::failed("INSERT without MEMORY_ITEM")];
            }
            items
                .into_iter()
                .map(|c| ParsedAction::ok(ActionKind::Insert, None, c))
                .collect()
        }
        ActionKind::Update => {
            let indices = all_group1(&p.index, block);
            let updated = fields(&p.updated_item);
            if indices.is_empty() || updated.is_empty() {
                return vec![ParsedAction::failed(
                    "UPDATE without MEMORY_INDEX or UPDATED_MEMORY",
                )];
            }
            index_results(ActionKind::Update, &indices, Some(&updated), n)
        }
        ActionKind::Delete => {
            let indices = all_group1(&p.index, block);
            if indices.is_empty() {
                return vec![ParsedAction::failed("DELETE without MEMORY_INDEX")];
            }
            index_results(ActionKind::Delete, &indices, None, n)
        }
    }
}

/// `item.get(a, item.get(b, default))` of a Python dict.
fn get2<'v>(o: &'v serde_json::Map<String, Value>, a: &str, b: &str) -> Option<&'v Value> {
    o.get(a).or_else(|| o.get(b))
}

fn parse_json(text: &str, n: usize) -> Vec<ParsedAction> {
    let (Some(start), Some(end)) = (text.find('{'), text.rfind('}')) else {
        return Vec::new();
    };
    let slice = if end >= start { &text[start..=end] } else { "" };
    let Some(data) = lenient_json(slice) else {
        return Vec::new();
    };
    let items: Vec<Value> = match data {
        Value::Object(mut o) => match o.remove("actions") {
            Some(Value::Array(a)) => a,
            Some(other) => {
                o.insert("actions".into(), other);
                vec![Value::Object(o)]
            }
            None => vec![Value::Object(o)],
        },
        Value::Array(a) => a,
        _ => return Vec::new(),
    };
    let text_of = |o: &serde_json::Map<String, Value>, a: &str, b: &str| -> String {
        get2(o, a, b)
            .map(|v| py_strip(&py_str(v)).to_string())
            .unwrap_or_default()
    };
    let index_of = |o: &serde_json::Map<String, Value>| -> Option<usize> {
        let v = get2(o, "memory_index", "MEMORY_INDEX")?;
        if v.is_null() {
            return None;
        }
        let i = py_int(v)?;
        (0..n as i128).contains(&i).then_some(i as usize)
    };
    let mut out = Vec::new();
    for item in items {
        let Value::Object(o) = item else { continue };
        let action = get2(&o, "action", "ACTION")
            .map(|v| py_strip(&py_str(v)).to_uppercase())
            .unwrap_or_default();
        match action.as_str() {
            "INSERT" => {
                let c = text_of(&o, "memory_item", "MEMORY_ITEM");
                if !c.is_empty() {
                    out.push(ParsedAction::ok(ActionKind::Insert, None, c));
                }
            }
            "UPDATE" => {
                let c = text_of(&o, "updated_memory", "UPDATED_MEMORY");
                if c.is_empty() {
                    continue;
                }
                if let Some(i) = index_of(&o) {
                    out.push(ParsedAction::ok(ActionKind::Update, Some(i), c));
                }
            }
            "DELETE" => {
                if let Some(i) = index_of(&o) {
                    out.push(ParsedAction::ok(ActionKind::Delete, Some(i), String::new()));
                }
            }
            "NOOP" => out.push(ParsedAction::ok(ActionKind::Noop, None, String::new())),
            _ => {}
        }
    }
    out
}

/// Every result the reference executor's parser produces for `text`, in order, failed ones
/// included (see the module docs). `n_retrieved` bounds the memory indices.
pub fn parse_response(text: &str, n_retrieved: usize) -> Vec<ParsedAction> {
    let p = patterns();
    let text = normalize(text);
    let mut heads = starts(&p.header_split, &text);
    if heads.is_empty() {
        heads = starts(&p.line_kind, &text);
    }
    if heads.is_empty() {
        let json = parse_json(&text, n_retrieved);
        if json.is_empty() {
            return vec![ParsedAction::failed(
                "no ACTION block or JSON actions found",
            )];
        }
        return json;
    }
    let mut out = Vec::new();
    for (i, &s) in heads.iter().enumerate() {
        let e = heads.get(i + 1).copied().unwrap_or(text.len());
        out.extend(parse_block(py_strip(&text[s..e]), n_retrieved));
    }
    out
}

/// Parse an executor response into memory actions: the successful results of
/// [`parse_response`], in order; failed results become `problems`. With `allowed`, actions of
/// other kinds are dropped too (reported in `problems`): the `executor.enforce_skill_actions`
/// option. Without it (the reference's behaviour), every parsed action is kept.
pub fn parse_actions(
    text: &str,
    n_retrieved: usize,
    allowed: Option<&[ActionKind]>,
) -> ParseOutcome {
    parse_actions_from(&parse_response(text, n_retrieved), allowed)
}

/// [`parse_actions`] over results already parsed.
pub fn parse_actions_from(
    results: &[ParsedAction],
    allowed: Option<&[ActionKind]>,
) -> ParseOutcome {
    let mut out = ParseOutcome::default();
    for r in results {
        let Some(a) = r.action() else {
            out.problems.push(r.note.clone());
            continue;
        };
        if let Some(allowed) = allowed {
            if !allowed.contains(&a.kind()) {
                out.problems.push(format!(
                    "dropped {} action: no selected skill allows it",
                    a.kind().as_str().to_uppercase()
                ));
                continue;
            }
        }
        out.actions.push(a);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    type Tuple = (&'static str, bool, i64, String);

    fn tuples(text: &str, n: usize) -> Vec<Tuple> {
        parse_response(text, n)
            .into_iter()
            .map(|r| {
                let k = match r.kind {
                    ActionKind::Insert => "INSERT",
                    ActionKind::Update => "UPDATE",
                    ActionKind::Delete => "DELETE",
                    ActionKind::Noop => "NOOP",
                };
                (
                    k,
                    r.success,
                    r.index.map(|i| i as i64).unwrap_or(-1),
                    r.content,
                )
            })
            .collect()
    }

    fn t(k: &'static str, ok: bool, i: i64, c: &str) -> Tuple {
        (k, ok, i, c.to_string())
    }

    /// Replies and the reference executor's results for them (MemSkill cda41f3,
    /// `Executor._parse_response`), with 3 retrieved memories.
    #[test]
    fn reference_results_table() {
        let fail = t("NOOP", false, -1, "");
        let cases: Vec<(&str, Vec<Tuple>)> = vec![
            (
                "ACTION: INSERT\nMEMORY_ITEM: Alice moved to Paris in May 2023.\n\nACTION: UPDATE\nMEMORY_INDEX: 1\nUPDATED_MEMORY: Bob likes green tea.\n\nACTION: DELETE\nMEMORY_INDEX: 0\n\nACTION: NOOP",
                vec![
                    t("INSERT", true, -1, "Alice moved to Paris in May 2023."),
                    t("UPDATE", true, 1, "Bob likes green tea."),
                    t("DELETE", true, 0, ""),
                    t("NOOP", true, -1, ""),
                ],
            ),
            // a negative index after ':' names no memory
            ("ACTION: DELETE\nMEMORY_INDEX: -1", vec![fail.clone()]),
            // ... but '-' right after the keyword is a separator
            ("ACTION: DELETE\nMEMORY_INDEX -1", vec![t("DELETE", true, 1, "")]),
            // only the number after the keyword counts
            (
                "ACTION: DELETE\nMEMORY_INDEX: 2 (duplicate of 1)",
                vec![t("DELETE", true, 2, "")],
            ),
            // a REASONING line ends the memory text
            (
                "ACTION: INSERT\nMEMORY_ITEM: Alice likes tea.\nREASONING: stated in turn 3",
                vec![t("INSERT", true, -1, "Alice likes tea.")],
            ),
            (
                "ACTION: UPDATE\nMEMORY_INDEX: 0\nUPDATED_MEMORY: Bob is 31.\nREASONING: birthday",
                vec![t("UPDATE", true, 0, "Bob is 31.")],
            ),
            // a bare kind line starts a block
            (
                "INSERT\nMEMORY_ITEM: Carol adopted a cat.",
                vec![t("INSERT", true, -1, "Carol adopted a cat.")],
            ),
            // one-line form
            (
                "ACTION: INSERT, MEMORY_ITEM: Dave plays chess.",
                vec![t("INSERT", true, -1, "Dave plays chess.")],
            ),
            // JSON that needs repair (trailing comma)
            (
                "{\"actions\": [{\"action\": \"INSERT\", \"memory_item\": \"Eve runs.\"},]}",
                vec![t("INSERT", true, -1, "Eve runs.")],
            ),
            // out of range
            ("ACTION: DELETE\nMEMORY_INDEX: 3", vec![fail.clone()]),
            // fences
            (
                "```text\naction = insert\nmemory_item = Likes jazz\n```",
                vec![t("INSERT", true, -1, "Likes jazz")],
            ),
            // garbage
            ("I don't know what to do.", vec![fail.clone()]),
            // JSON keys other than the reference's are not read
            (
                "{\"action\": \"insert\", \"content\": \"A\"}",
                vec![fail.clone()],
            ),
        ];
        for (text, want) in cases {
            assert_eq!(tuples(text, 3), want, "reply {text:?}");
        }
    }

    #[test]
    fn several_items_multiline_and_index_lists() {
        let r = tuples(
            "ACTION: INSERT\nMEMORY_ITEM: first fact\ncontinues here\nMEMORY_ITEM: second fact\nACTION: DELETE\nMEMORY_INDEX: 0\nMEMORY_INDEX: 1",
            2,
        );
        assert_eq!(
            r,
            vec![
                t("INSERT", true, -1, "first fact\ncontinues here"),
                t("INSERT", true, -1, "second fact"),
                t("DELETE", true, 0, ""),
                t("DELETE", true, 1, ""),
            ]
        );
    }

    #[test]
    fn every_action_is_kept_unless_enforced() {
        let text = "ACTION: DELETE\nMEMORY_INDEX: 1\nACTION: DELETE\nMEMORY_INDEX: 1\nACTION: INSERT\nMEMORY_ITEM: x";
        let o = parse_actions(text, 2, None);
        assert_eq!(
            o.actions,
            vec![
                MemoryAction::Delete { index: 1 },
                MemoryAction::Delete { index: 1 },
                MemoryAction::Insert {
                    content: "x".into()
                }
            ]
        );
        let o = parse_actions(text, 2, Some(&[ActionKind::Delete]));
        assert_eq!(o.actions.len(), 2);
        assert!(o.problems.iter().any(|p| p.contains("dropped INSERT")));
    }

    #[test]
    fn garbage_is_a_problem_not_a_panic() {
        let o = parse_actions("I don't know what to do.", 3, None);
        assert!(o.actions.is_empty());
        assert_eq!(o.problems.len(), 1);
        let o = parse_actions(
            "ACTION: UPDATE\nMEMORY_INDEX: 99999999999999999999999999999999999999999999\nUPDATED_MEMORY: x",
            3,
            None,
        );
        assert!(o.actions.is_empty() && !o.problems.is_empty());
        let big = "ACTION: INSERT\nMEMORY_ITEM: ".to_string() + &"word, ".repeat(20_000);
        assert_eq!(parse_actions(&big, 3, None).actions.len(), 1);
    }
}
