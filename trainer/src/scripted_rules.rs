//! The scripted server's replies to what memory libraries ask (Mem0, LangMem and the like,
//! run behind `memskill eval --adapter` in tests): pure functions of the request body.
//!
//! - A request with `tools` gets tool calls: one per line of the source text (below), to the
//!   tool `tool_choice` names, else to the tool with the fewest required parameters that are
//!   all strings (LangMem's `Memory` rather than trustcall's `PatchDoc`); each string
//!   parameter gets the line, each list of strings `[line]`.
//! - A request for a JSON object without a schema (`response_format: {"type":
//!   "json_object"}`) gets `{"facts": [lines], "memory": [{"id", "text", "event": "ADD"}]}`:
//!   what Mem0's extraction (v2: `memory`; v1: `facts`, then `memory` events) reads.
//! - A plain request (no tools, no `response_format`) asking for a `JSON array` whose
//!   dialogue follows a `Conversation content:` line (MemoryOS's topic summaries) gets
//!   `[{"theme", "keywords", "content"}]`: one topic, the dialogue's lines as its content, its
//!   first three distinct words of four letters or more as keywords.
//! - `/embeddings` gets the hashing encoder's vectors (deterministic, `dimensions` or 64).
//!
//! The source text is the last user message: its conversation section when it has one (Mem0:
//! from a `## New Messages` heading to the next `## ` heading; LangMem: between a
//! `<session...>` or `<conversation>` line and the closing `</...>` line), else all of it;
//! its non-empty lines that are not headings, at most 12 of at most 300 characters.

use serde_json::{json, Value};

/// At most this many lines (memories, facts, tool calls) per reply.
const MAX_LINES: usize = 12;
const MAX_LINE_CHARS: usize = 300;

/// What the rules reply instead of the wrapped model.
#[derive(Debug, Clone, PartialEq)]
pub enum RuleReply {
    /// Plain content.
    Text(String),
    /// `message.tool_calls` (OpenAI format), no content.
    ToolCalls(Vec<Value>),
}

/// The rule reply to a chat request body, if a rule applies.
pub fn rule_reply(body: &Value) -> Option<RuleReply> {
    let tools = body["tools"].as_array().filter(|t| !t.is_empty());
    if let Some(tools) = tools {
        let tool = pick_tool(tools, &body["tool_choice"])?;
        let name = tool["function"]["name"].as_str()?.to_string();
        let params = &tool["function"]["parameters"];
        let calls = source_lines(body)
            .iter()
            .enumerate()
            .map(|(i, line)| {
                json!({"id": format!("call_{i}"), "type": "function",
                       "function": {"name": name, "arguments": arguments(params, line).to_string()}})
            })
            .collect();
        return Some(RuleReply::ToolCalls(calls));
    }
    let rf = &body["response_format"];
    if rf.is_null() {
        if let Some(topics) = topic_summaries(body) {
            return Some(RuleReply::Text(topics));
        }
    }
    if rf["type"] == "json_object" && rf["schema"].is_null() {
        let lines = source_lines(body);
        let memory: Vec<Value> = lines
            .iter()
            .enumerate()
            .map(|(i, l)| json!({"id": i.to_string(), "text": l, "event": "ADD"}))
            .collect();
        return Some(RuleReply::Text(
            json!({"facts": lines, "memory": memory}).to_string(),
        ));
    }
    None
}

/// The tool `tool_choice` names, else the one with the fewest required parameters that are
/// all strings.
fn pick_tool<'a>(tools: &'a [Value], choice: &Value) -> Option<&'a Value> {
    let named = choice["function"]["name"].as_str().or_else(|| {
        choice
            .as_str()
            .filter(|c| !matches!(*c, "auto" | "any" | "required" | "none"))
    });
    if let Some(n) = named {
        return tools.iter().find(|t| t["function"]["name"] == n);
    }
    let required = |t: &Value| -> Option<usize> {
        let p = &t["function"]["parameters"];
        let req = p["required"].as_array().cloned().unwrap_or_default();
        let all_strings = req.iter().all(|r| {
            r.as_str()
                .is_some_and(|k| p["properties"][k]["type"] == "string")
        });
        all_strings.then_some(req.len())
    };
    tools
        .iter()
        .filter_map(|t| required(t).map(|n| (n, t)))
        .min_by_key(|(n, _)| *n)
        .map(|(_, t)| t)
}

/// Arguments for a tool with `params` carrying `line`.
fn arguments(params: &Value, line: &str) -> Value {
    let mut args = serde_json::Map::new();
    if let Some(props) = params["properties"].as_object() {
        for (k, p) in props {
            match p["type"].as_str() {
                Some("string") => {
                    args.insert(k.clone(), json!(line));
                }
                Some("array") if p["items"]["type"] == "string" => {
                    args.insert(k.clone(), json!([line]));
                }
                _ => {}
            }
        }
    }
    Value::Object(args)
}

/// MemoryOS's topic-summary request (see the module docs) answered with one topic.
fn topic_summaries(body: &Value) -> Option<String> {
    let text = last_user_text(body);
    if !text.contains("JSON array") {
        return None;
    }
    let mut lines = text.lines().map(str::trim);
    lines.find(|l| l.ends_with("Conversation content:"))?;
    let said: Vec<String> = lines
        .filter(|l| !l.is_empty())
        .take(MAX_LINES)
        .map(|l| l.chars().take(MAX_LINE_CHARS).collect())
        .collect();
    if said.is_empty() {
        return None;
    }
    let content = said.join(" ");
    let mut keywords: Vec<String> = Vec::new();
    for w in content.split(|c: char| !c.is_alphabetic()) {
        let w = w.to_lowercase();
        if w.chars().count() >= 4 && !keywords.contains(&w) && keywords.len() < 3 {
            keywords.push(w);
        }
    }
    Some(json!([{"theme": "conversation", "keywords": keywords, "content": content}]).to_string())
}

/// The text of the last user message.
fn last_user_text(body: &Value) -> String {
    body["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
        .map(message_text)
        .unwrap_or_default()
}

/// The lines of the last user message the rules work from (see the module docs).
pub fn source_lines(body: &Value) -> Vec<String> {
    let text = last_user_text(body);
    let all: Vec<&str> = text.lines().map(str::trim).collect();
    // (where the section starts, the prefix of the line that ends it)
    let section = all.iter().enumerate().find_map(|(i, l)| {
        if l.starts_with("## New Messages") {
            Some((i + 1, "## "))
        } else if l.starts_with("<session") || l.starts_with("<conversation") {
            Some((i + 1, "</"))
        } else {
            None
        }
    });
    let (start, end) = section.unwrap_or((0, ""));
    all[start..]
        .iter()
        .take_while(|l| end.is_empty() || !l.starts_with(end))
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .take(MAX_LINES)
        .map(|l| l.chars().take(MAX_LINE_CHARS).collect())
        .collect()
}

/// A message's text: a string, or the text parts of a list.
fn message_text(m: &Value) -> String {
    match &m["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The `/embeddings` reply: the hashing encoder's vector of every input.
pub fn embeddings_reply(body: &Value) -> Result<Value, String> {
    use memskill_core::TextEncoder;
    let inputs: Vec<String> = match &body["input"] {
        Value::String(s) => vec![s.clone()],
        Value::Array(a) => a
            .iter()
            .map(|x| x.as_str().map(str::to_string))
            .collect::<Option<_>>()
            .ok_or("input: a list of strings is expected")?,
        _ => return Err("input is missing (a string or a list of strings)".into()),
    };
    let dim = body["dimensions"].as_u64().unwrap_or(64).clamp(1, 4096) as usize;
    let enc = memskill_controller::HashingEncoder::new(dim);
    let refs: Vec<&str> = inputs.iter().map(String::as_str).collect();
    let vecs = enc.embed(&refs).map_err(|e| e.to_string())?;
    let data: Vec<Value> = vecs
        .into_iter()
        .enumerate()
        .map(|(i, v)| json!({"object": "embedding", "index": i, "embedding": v}))
        .collect();
    Ok(
        json!({"object": "list", "data": data, "model": body["model"],
              "usage": {"prompt_tokens": 1, "total_tokens": 1}}),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(text: &str) -> Value {
        json!([{"role": "system", "content": "sys"}, {"role": "user", "content": text}])
    }

    #[test]
    fn json_object_requests_get_facts_and_add_events_from_the_new_messages() {
        let text = "## Summary\nold\n## New Messages\nuser: Ann: I moved to Oslo.\n\nuser: Bob: Nice!\n## Observation Date\n2023";
        let body = json!({"messages": user(text), "response_format": {"type": "json_object"}});
        let Some(RuleReply::Text(t)) = rule_reply(&body) else {
            panic!("a JSON reply")
        };
        let v: Value = serde_json::from_str(&t).unwrap();
        assert_eq!(
            v["facts"],
            json!(["user: Ann: I moved to Oslo.", "user: Bob: Nice!"])
        );
        assert_eq!(v["memory"][1]["event"], "ADD");
        assert_eq!(v["memory"][1]["text"], "user: Bob: Nice!");
        // a schema'd json_object request is the executor's, not a rule's
        let schema = json!({"messages": user("x"), "response_format": {"type": "json_object", "schema": {}}});
        assert_eq!(rule_reply(&schema), None);
        assert_eq!(rule_reply(&json!({"messages": user("x")})), None);
    }

    #[test]
    fn a_tagged_session_is_the_source_text() {
        let text = "Instructions\n1. **Extract**\n\n<session_ab12>\nuser: Ann: hi\nuser: Bob: yo\n</session_ab12>\nmore";
        assert_eq!(
            source_lines(&json!({"messages": user(text)})),
            vec!["user: Ann: hi", "user: Bob: yo"]
        );
        assert_eq!(
            source_lines(&json!({"messages": user("a\n# h\nb")})),
            vec!["a", "b"]
        );
    }

    #[test]
    fn tool_requests_call_the_simplest_tool_once_per_line() {
        let tools = json!([
            {"type": "function", "function": {"name": "PatchDoc", "parameters": {
                "properties": {"json_doc_id": {"type": "string"}, "patches": {"type": "array", "items": {"type": "object"}}},
                "required": ["json_doc_id", "patches"]}}},
            {"type": "function", "function": {"name": "Memory", "parameters": {
                "properties": {"content": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}}},
                "required": ["content"]}}}
        ]);
        let body =
            json!({"messages": user("a fact\nanother"), "tools": tools, "tool_choice": "required"});
        let Some(RuleReply::ToolCalls(calls)) = rule_reply(&body) else {
            panic!("tool calls")
        };
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0]["function"]["name"], "Memory");
        let args: Value =
            serde_json::from_str(calls[1]["function"]["arguments"].as_str().unwrap()).unwrap();
        assert_eq!(args, json!({"content": "another", "tags": ["another"]}));
        // a named tool_choice wins
        let named = json!({"messages": user("x"), "tools": tools,
                           "tool_choice": {"type": "function", "function": {"name": "PatchDoc"}}});
        let Some(RuleReply::ToolCalls(c)) = rule_reply(&named) else {
            panic!()
        };
        assert_eq!(c[0]["function"]["name"], "PatchDoc");
    }

    #[test]
    fn a_topic_summary_request_gets_one_topic_of_its_dialogue() {
        let text = "Please analyze ... formatted as a JSON array, with an example format as follows:\n[\n  {\"theme\": \"Trip\"}\n]\n\\Conversation content:\nUser: Ann said, \"I moved to Oslo.\"\n\nUser: Ann said, \"Snow!\"\n";
        let Some(RuleReply::Text(t)) = rule_reply(&json!({"messages": user(text)})) else {
            panic!("a JSON array")
        };
        let v: Value = serde_json::from_str(&t).unwrap();
        assert_eq!(
            v,
            json!([{"theme": "conversation", "keywords": ["user", "said", "moved"],
                    "content": "User: Ann said, \"I moved to Oslo.\" User: Ann said, \"Snow!\""}])
        );
        // without the dialogue heading, or with a response_format, no rule
        let plain = json!({"messages": user("Give a JSON array of x")});
        assert_eq!(rule_reply(&plain), None);
        let formatted = json!({"messages": user(text), "response_format": {"type": "json_object"}});
        assert!(matches!(rule_reply(&formatted), Some(RuleReply::Text(t)) if t.starts_with('{')));
    }

    #[test]
    fn embeddings_are_deterministic_and_sized() {
        let r = embeddings_reply(&json!({"input": ["a b", "c"], "dimensions": 8})).unwrap();
        assert_eq!(r["data"].as_array().unwrap().len(), 2);
        assert_eq!(r["data"][0]["embedding"].as_array().unwrap().len(), 8);
        let again = embeddings_reply(&json!({"input": "a b", "dimensions": 8})).unwrap();
        assert_eq!(again["data"][0]["embedding"], r["data"][0]["embedding"]);
        assert!(embeddings_reply(&json!({"input": [1]})).is_err());
        assert!(embeddings_reply(&json!({})).is_err());
    }
}
