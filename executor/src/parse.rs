//! Parsing executor responses into memory actions. Never fails: whatever cannot be
//! understood becomes a problem string, never a panic or an error.

use memskill_core::{ActionKind, MemoryAction};
use serde::Serialize;

/// Actions parsed from one executor response, plus everything that was dropped and why.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ParseOutcome {
    pub actions: Vec<MemoryAction>,
    pub problems: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Item,
    Index,
    Updated,
}

#[derive(Debug)]
struct Block {
    line: usize,
    kind: Option<ActionKind>,
    raw_kind: String,
    /// (field, value) in order of appearance; values may span several lines.
    fields: Vec<(Field, String)>,
}

/// Strip markdown decoration at the start of a line: bullets, numbering, emphasis, quotes.
fn strip_decoration(line: &str) -> &str {
    let mut s = line.trim();
    loop {
        let before = s.len();
        s = s
            .trim_start_matches(['*', '-', '#', '>', '`', '_', '•'])
            .trim_start();
        // "1." / "2)" numbering
        let digits = s.chars().take_while(|c| c.is_ascii_digit()).count();
        if digits > 0 {
            let rest = &s[digits..];
            if rest.starts_with('.') || rest.starts_with(')') {
                s = rest[1..].trim_start();
            }
        }
        if s.len() == before {
            return s;
        }
    }
}

/// Split `KEY: value` / `KEY = value` / `KEY - value` into (normalised key, value).
fn split_key(line: &str) -> Option<(String, String)> {
    let s = strip_decoration(line);
    let key_len = s
        .chars()
        .take_while(|c| c.is_ascii_alphabetic() || *c == '_' || *c == ' ')
        .count();
    if key_len == 0 {
        return None;
    }
    let key_raw = &s[..key_len]; // ASCII only, so byte == char count
    let rest = &s[key_len..];
    let rest_trim = rest.trim_start_matches(['*', '_', ' ']);
    let value = if let Some(v) = rest_trim
        .strip_prefix(':')
        .or_else(|| rest_trim.strip_prefix('='))
    {
        v
    } else if let Some(v) = rest_trim.strip_prefix('-') {
        v
    } else {
        // `ACTION INSERT` (no separator): the key itself carries the value
        let words: Vec<&str> = key_raw.split_whitespace().collect();
        if words.len() == 2 && words[0].eq_ignore_ascii_case("action") && rest_trim.is_empty() {
            return Some(("ACTION".into(), words[1].to_string()));
        }
        return None;
    };
    let key: String = key_raw
        .trim()
        .to_ascii_uppercase()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join("_");
    let value = value
        .trim()
        .trim_start_matches(['*', '_'])
        .trim_end_matches(['*', '`'])
        .trim();
    Some((key, value.to_string()))
}

fn field_of(key: &str) -> Option<Field> {
    match key {
        "MEMORY_ITEM" | "MEMORY" | "CONTENT" | "NEW_MEMORY" | "ITEM" | "MEMORY_CONTENT"
        | "TEXT" => Some(Field::Item),
        "MEMORY_INDEX" | "INDEX" | "MEMORY_ID" | "TARGET_INDEX" => Some(Field::Index),
        "UPDATED_MEMORY" | "UPDATED_CONTENT" | "UPDATED_ITEM" | "NEW_CONTENT" | "UPDATED_TEXT" => {
            Some(Field::Updated)
        }
        _ => None,
    }
}

fn kind_of(word: &str) -> Option<ActionKind> {
    let w: String = word
        .trim()
        .trim_matches(|c: char| !c.is_ascii_alphanumeric())
        .chars()
        .take_while(|c| c.is_ascii_alphabetic())
        .collect::<String>()
        .to_ascii_lowercase();
    match w.as_str() {
        "insert" | "add" | "create" => Some(ActionKind::Insert),
        "update" | "modify" | "edit" => Some(ActionKind::Update),
        "delete" | "remove" => Some(ActionKind::Delete),
        "noop" | "none" | "skip" | "nothing" => Some(ActionKind::Noop),
        "no" if word
            .to_ascii_lowercase()
            .replace(['_', '-', ' '], "")
            .starts_with("noop") =>
        {
            Some(ActionKind::Noop)
        }
        _ => None,
    }
}

/// All non-negative integers in `s`, in order (`None` entries for numbers too large for usize).
fn integers(s: &str) -> Vec<Option<usize>> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for c in s.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_digit() {
            cur.push(c);
        } else if !cur.is_empty() {
            out.push(cur.parse::<usize>().ok());
            cur.clear();
        }
    }
    out
}

fn clean_content(s: &str) -> String {
    let t = s.trim();
    let t = t
        .strip_prefix('"')
        .and_then(|x| x.strip_suffix('"'))
        .or_else(|| t.strip_prefix('\'').and_then(|x| x.strip_suffix('\'')))
        .unwrap_or(t);
    t.trim().to_string()
}

fn check_index(
    v: Option<usize>,
    n: usize,
    what: &str,
    line: usize,
    problems: &mut Vec<String>,
) -> Option<usize> {
    match v {
        Some(i) if i < n => Some(i),
        Some(i) => {
            problems.push(format!(
                "{what} at line {line}: MEMORY_INDEX {i} is out of range (0..{n})"
            ));
            None
        }
        None => {
            problems.push(format!("{what} at line {line}: MEMORY_INDEX is too large"));
            None
        }
    }
}

fn finish_block(b: Block, n: usize, out: &mut Vec<MemoryAction>, problems: &mut Vec<String>) {
    let Some(kind) = b.kind else {
        problems.push(format!("line {}: unknown action {:?}", b.line, b.raw_kind));
        return;
    };
    let items: Vec<String> = b
        .fields
        .iter()
        .filter(|(f, _)| *f == Field::Item)
        .map(|(_, v)| clean_content(v))
        .collect();
    let updated: Vec<String> = b
        .fields
        .iter()
        .filter(|(f, _)| *f == Field::Updated)
        .map(|(_, v)| clean_content(v))
        .collect();
    let index_vals: Vec<&String> = b
        .fields
        .iter()
        .filter(|(f, _)| *f == Field::Index)
        .map(|(_, v)| v)
        .collect();
    match kind {
        ActionKind::Noop => out.push(MemoryAction::Noop),
        ActionKind::Insert => {
            let mut any = false;
            for c in items.into_iter().chain(updated) {
                if c.is_empty() {
                    problems.push(format!("INSERT at line {}: empty MEMORY_ITEM", b.line));
                } else {
                    any = true;
                    out.push(MemoryAction::Insert { content: c });
                }
            }
            if !any
                && !problems
                    .iter()
                    .any(|p| p.starts_with(&format!("INSERT at line {}", b.line)))
            {
                problems.push(format!("INSERT at line {}: no MEMORY_ITEM", b.line));
            }
        }
        ActionKind::Delete => {
            let mut any = false;
            for v in index_vals {
                let ints = integers(v);
                if ints.is_empty() {
                    problems.push(format!(
                        "DELETE at line {}: MEMORY_INDEX {:?} is not a number",
                        b.line, v
                    ));
                }
                for i in ints {
                    any = true;
                    if let Some(i) = check_index(i, n, "DELETE", b.line, problems) {
                        out.push(MemoryAction::Delete { index: i });
                    }
                }
            }
            if !any
                && !problems
                    .iter()
                    .any(|p| p.starts_with(&format!("DELETE at line {}", b.line)))
            {
                problems.push(format!("DELETE at line {}: no MEMORY_INDEX", b.line));
            }
        }
        ActionKind::Update => {
            // UPDATE may also use MEMORY_ITEM for the new text
            let contents: Vec<String> = if updated.is_empty() { items } else { updated };
            if index_vals.is_empty() {
                problems.push(format!("UPDATE at line {}: no MEMORY_INDEX", b.line));
                return;
            }
            if contents.len() != index_vals.len() {
                problems.push(format!(
                    "UPDATE at line {}: {} MEMORY_INDEX vs {} UPDATED_MEMORY fields; pairing in order",
                    b.line,
                    index_vals.len(),
                    contents.len()
                ));
            }
            for (v, c) in index_vals.iter().zip(contents.iter()) {
                let Some(first) = integers(v).into_iter().next() else {
                    problems.push(format!(
                        "UPDATE at line {}: MEMORY_INDEX {:?} is not a number",
                        b.line, v
                    ));
                    continue;
                };
                let Some(i) = check_index(first, n, "UPDATE", b.line, problems) else {
                    continue;
                };
                if c.is_empty() {
                    problems.push(format!("UPDATE at line {}: empty UPDATED_MEMORY", b.line));
                    continue;
                }
                out.push(MemoryAction::Update {
                    index: i,
                    content: c.clone(),
                });
            }
        }
    }
}

/// Parse `ACTION:` blocks. Returns None when the text has no action header at all.
fn parse_blocks(
    text: &str,
    n: usize,
    out: &mut Vec<MemoryAction>,
    problems: &mut Vec<String>,
) -> bool {
    let mut cur: Option<Block> = None;
    let mut saw_header = false;
    let mut continuing = false;
    for (ln, line) in text.lines().enumerate() {
        let ln = ln + 1;
        if line.trim_start().starts_with("```") {
            continuing = false;
            continue;
        }
        match split_key(line) {
            Some((key, value)) if key == "ACTION" || key == "ACTION_TYPE" || key == "OPERATION" => {
                saw_header = true;
                if let Some(b) = cur.take() {
                    finish_block(b, n, out, problems);
                }
                cur = Some(Block {
                    line: ln,
                    kind: kind_of(&value),
                    raw_kind: value,
                    fields: Vec::new(),
                });
                continuing = false;
            }
            Some((key, value)) if field_of(&key).is_some() => {
                let f = field_of(&key).unwrap_or(Field::Item);
                match cur.as_mut() {
                    Some(b) => {
                        b.fields.push((f, value));
                        continuing = f != Field::Index;
                    }
                    None => {
                        problems.push(format!("line {ln}: {key} outside any ACTION block"));
                        continuing = false;
                    }
                }
            }
            _ => {
                let t = line.trim();
                if t.is_empty() {
                    continuing = false;
                } else if continuing {
                    if let Some((_, v)) = cur.as_mut().and_then(|b| b.fields.last_mut()) {
                        if !v.is_empty() {
                            v.push(' ');
                        }
                        v.push_str(t);
                    }
                }
            }
        }
    }
    if let Some(b) = cur.take() {
        finish_block(b, n, out, problems);
    }
    saw_header
}

fn json_candidate(text: &str) -> Option<serde_json::Value> {
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(text.trim()) {
        return Some(v);
    }
    // the outermost {...} or [...] span
    for (open, close) in [('{', '}'), ('[', ']')] {
        if let (Some(a), Some(b)) = (text.find(open), text.rfind(close)) {
            if a < b {
                if let Ok(v) = serde_json::from_str::<serde_json::Value>(&text[a..=b]) {
                    return Some(v);
                }
            }
        }
    }
    None
}

fn json_str(o: &serde_json::Map<String, serde_json::Value>, keys: &[&str]) -> Option<String> {
    keys.iter()
        .find_map(|k| {
            o.iter()
                .find(|(kk, _)| kk.eq_ignore_ascii_case(k))
                .map(|(_, v)| v)
        })
        .and_then(|v| match v {
            serde_json::Value::String(s) => Some(s.clone()),
            serde_json::Value::Number(n) => Some(n.to_string()),
            _ => None,
        })
}

fn parse_json(
    v: serde_json::Value,
    n: usize,
    out: &mut Vec<MemoryAction>,
    problems: &mut Vec<String>,
) {
    let list = match v {
        serde_json::Value::Array(a) => a,
        serde_json::Value::Object(mut o) => {
            let key = o
                .keys()
                .find(|k| k.eq_ignore_ascii_case("actions"))
                .cloned();
            match key.and_then(|k| o.remove(&k)) {
                Some(serde_json::Value::Array(a)) => a,
                Some(_) => {
                    problems.push("JSON: \"actions\" is not a list".into());
                    return;
                }
                None => vec![serde_json::Value::Object(o)],
            }
        }
        _ => {
            problems.push("JSON: expected an object or a list of actions".into());
            return;
        }
    };
    for (i, item) in list.into_iter().enumerate() {
        let serde_json::Value::Object(o) = item else {
            problems.push(format!("JSON action {i}: not an object"));
            continue;
        };
        let Some(kind_s) = json_str(&o, &["action", "type", "op", "operation"]) else {
            problems.push(format!("JSON action {i}: missing \"action\""));
            continue;
        };
        let Some(kind) = kind_of(&kind_s) else {
            problems.push(format!("JSON action {i}: unknown action {kind_s:?}"));
            continue;
        };
        let content = json_str(
            &o,
            &["content", "memory_item", "updated_memory", "memory", "text"],
        )
        .map(|c| clean_content(&c));
        let index = json_str(&o, &["index", "memory_index", "idx"])
            .map(|s| integers(&s).into_iter().next());
        let what = format!("JSON action {i}");
        match kind {
            ActionKind::Noop => out.push(MemoryAction::Noop),
            ActionKind::Insert => match content {
                Some(c) if !c.is_empty() => out.push(MemoryAction::Insert { content: c }),
                _ => problems.push(format!("{what}: INSERT without content")),
            },
            ActionKind::Delete => match index {
                Some(Some(v)) => {
                    if let Some(i) = check_index(v, n, &what, i, problems) {
                        out.push(MemoryAction::Delete { index: i });
                    }
                }
                _ => problems.push(format!("{what}: DELETE without a numeric index")),
            },
            ActionKind::Update => match (index, content) {
                (Some(Some(v)), Some(c)) if !c.is_empty() => {
                    if let Some(i) = check_index(v, n, &what, i, problems) {
                        out.push(MemoryAction::Update {
                            index: i,
                            content: c,
                        });
                    }
                }
                _ => problems.push(format!("{what}: UPDATE needs a numeric index and content")),
            },
        }
    }
}

/// Parse an executor response into memory actions.
///
/// Understands `ACTION: INSERT` / `MEMORY_ITEM:` / `MEMORY_INDEX:` / `UPDATED_MEMORY:` blocks
/// (any case, `:` `=` or `-` separators, markdown decoration, code fences, several items per
/// block) and falls back to JSON (`{"actions": [...]}`, a list, or one action object).
/// Indices must be `< n_retrieved`; duplicate DELETEs of an index collapse to one; actions
/// of kinds not in `allowed` are dropped. Everything dropped is reported in `problems`.
pub fn parse_actions(text: &str, n_retrieved: usize, allowed: &[ActionKind]) -> ParseOutcome {
    let mut actions = Vec::new();
    let mut problems = Vec::new();
    let saw_header = parse_blocks(text, n_retrieved, &mut actions, &mut problems);
    if !saw_header {
        problems.clear();
        match json_candidate(text) {
            Some(v) => parse_json(v, n_retrieved, &mut actions, &mut problems),
            None => {
                if !text.trim().is_empty() {
                    problems.push("no ACTION block or JSON actions found".into());
                }
            }
        }
    }
    let mut out: Vec<MemoryAction> = Vec::with_capacity(actions.len());
    let mut deleted: Vec<usize> = Vec::new();
    for a in actions {
        if !allowed.contains(&a.kind()) {
            problems.push(format!(
                "dropped {} action: no selected skill allows it",
                a.kind().as_str().to_uppercase()
            ));
            continue;
        }
        if let MemoryAction::Delete { index } = a {
            if deleted.contains(&index) {
                problems.push(format!("duplicate DELETE of index {index} ignored"));
                continue;
            }
            deleted.push(index);
        }
        out.push(a);
    }
    ParseOutcome {
        actions: out,
        problems,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [ActionKind; 4] = ActionKind::ALL;

    #[test]
    fn canonical_blocks() {
        let t = "ACTION: INSERT\nMEMORY_ITEM: Alice moved to Paris in May 2023.\n\nACTION: UPDATE\nMEMORY_INDEX: 1\nUPDATED_MEMORY: Bob likes green tea.\n\nACTION: DELETE\nMEMORY_INDEX: 0\n\nACTION: NOOP\n";
        let o = parse_actions(t, 2, &ALL);
        assert_eq!(
            o.actions,
            vec![
                MemoryAction::Insert {
                    content: "Alice moved to Paris in May 2023.".into()
                },
                MemoryAction::Update {
                    index: 1,
                    content: "Bob likes green tea.".into()
                },
                MemoryAction::Delete { index: 0 },
                MemoryAction::Noop,
            ]
        );
        assert!(o.problems.is_empty(), "{:?}", o.problems);
    }

    #[test]
    fn fences_case_and_separators() {
        let t = "```\naction = insert\nmemory_item = \"Likes jazz\"\n**Action** - Delete\n**Memory_Index**: [2]\n```";
        let o = parse_actions(t, 3, &ALL);
        assert_eq!(
            o.actions,
            vec![
                MemoryAction::Insert {
                    content: "Likes jazz".into()
                },
                MemoryAction::Delete { index: 2 }
            ]
        );
    }

    #[test]
    fn several_items_per_block_and_multiline() {
        let t = "ACTION: INSERT\nMEMORY_ITEM: first fact\ncontinues here\nMEMORY_ITEM: second fact\nACTION: DELETE\nMEMORY_INDEX: 0, 1";
        let o = parse_actions(t, 2, &ALL);
        assert_eq!(
            o.actions,
            vec![
                MemoryAction::Insert {
                    content: "first fact continues here".into()
                },
                MemoryAction::Insert {
                    content: "second fact".into()
                },
                MemoryAction::Delete { index: 0 },
                MemoryAction::Delete { index: 1 },
            ]
        );
    }

    #[test]
    fn out_of_range_duplicates_and_disallowed() {
        let t = "ACTION: DELETE\nMEMORY_INDEX: 5\nACTION: DELETE\nMEMORY_INDEX: 1\nACTION: DELETE\nMEMORY_INDEX: 1\nACTION: INSERT\nMEMORY_ITEM: x\nACTION: JUMP";
        let o = parse_actions(t, 2, &[ActionKind::Delete]);
        assert_eq!(o.actions, vec![MemoryAction::Delete { index: 1 }]);
        assert!(o.problems.iter().any(|p| p.contains("out of range")));
        assert!(o.problems.iter().any(|p| p.contains("duplicate DELETE")));
        assert!(o.problems.iter().any(|p| p.contains("dropped INSERT")));
        assert!(o.problems.iter().any(|p| p.contains("unknown action")));
    }

    #[test]
    fn json_fallback() {
        let t = "Here you go:\n```json\n{\"actions\": [{\"action\": \"insert\", \"content\": \"A\"}, {\"action\": \"UPDATE\", \"index\": \"0\", \"content\": \"B\"}, {\"action\": \"delete\", \"index\": 9}]}\n```";
        let o = parse_actions(t, 1, &ALL);
        assert_eq!(
            o.actions,
            vec![
                MemoryAction::Insert {
                    content: "A".into()
                },
                MemoryAction::Update {
                    index: 0,
                    content: "B".into()
                }
            ]
        );
        assert_eq!(o.problems.len(), 1);
        let o = parse_actions("[{\"type\": \"noop\"}]", 0, &ALL);
        assert_eq!(o.actions, vec![MemoryAction::Noop]);
    }

    #[test]
    fn garbage_is_a_problem_not_a_panic() {
        let o = parse_actions("I don't know what to do.", 3, &ALL);
        assert!(o.actions.is_empty());
        assert_eq!(o.problems.len(), 1);
        let o = parse_actions(
            "ACTION: UPDATE\nMEMORY_INDEX: 99999999999999999999999\nUPDATED_MEMORY: x",
            3,
            &ALL,
        );
        assert!(o.actions.is_empty() && !o.problems.is_empty());
    }
}
