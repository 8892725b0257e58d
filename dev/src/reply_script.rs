//! A reply script for the scripted server (`memskill llm serve-scripted --replies FILE`):
//! ordered rules, each an optional needle and a reply. A prompt (its messages joined by
//! newlines) gets the reply of the first rule whose needle it contains; a rule without a
//! needle matches every prompt. `{n}` in a reply becomes the number of times that rule
//! answered before (0, 1, 2, ...), so two clients that ask in the same order get the same
//! replies, each one distinct. Every reply is sent after a fixed latency.
//!
//! It serves any client that speaks the OpenAI chat API, whatever its prompts look like, as
//! long as a needle tells its prompt kinds apart (the end-to-end benchmark against the
//! reference trainer: `scripts/bench/e2e-reference.sh`, rules in
//! `scripts/bench/e2e-replies.json`). A prompt no rule matches is an error the server
//! answers with HTTP 500 naming the script.
//!
//! File format (JSON): `{"rules": [{"contains": "MEMORY_INDEX", "reply": "..."}, {"reply": "..."}]}`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use memskill_core::{ChatRequest, ChatResponse, Llm, LlmError};
use serde::Deserialize;

/// One rule of a reply script.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReplyRule {
    /// Text the prompt must contain (absent = every prompt).
    #[serde(default)]
    pub contains: Option<String>,
    /// The reply; `{n}` is replaced by the rule's count of earlier replies.
    pub reply: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptFile {
    rules: Vec<ReplyRule>,
}

/// A parsed reply script with its per-rule counters and latency; an [`Llm`].
#[derive(Debug)]
pub struct ReplyScript {
    origin: String,
    rules: Vec<ReplyRule>,
    counts: Vec<AtomicU64>,
    latency: Duration,
}

/// The index of the first rule that matches `prompt`.
pub fn pick(rules: &[ReplyRule], prompt: &str) -> Option<usize> {
    rules
        .iter()
        .position(|r| r.contains.as_deref().is_none_or(|c| prompt.contains(c)))
}

/// A rule's reply for its `n`-th use (counted from 0).
pub fn render(reply: &str, n: u64) -> String {
    reply.replace("{n}", &n.to_string())
}

impl ReplyScript {
    /// Parse a script; `origin` (the file's path) names it in errors.
    pub fn parse(text: &str, origin: &str, latency: Duration) -> Result<Self> {
        let file: ScriptFile =
            serde_json::from_str(text).with_context(|| format!("reply script {origin}"))?;
        if file.rules.is_empty() {
            bail!("reply script {origin}: \"rules\" is empty");
        }
        if let Some(i) = file
            .rules
            .iter()
            .position(|r| r.contains.as_deref() == Some(""))
        {
            bail!("reply script {origin}: rules[{i}].contains is empty (leave it out to match every prompt)");
        }
        Ok(Self {
            origin: origin.to_string(),
            counts: file.rules.iter().map(|_| AtomicU64::new(0)).collect(),
            rules: file.rules,
            latency,
        })
    }

    /// Read and parse a script file.
    pub fn load(path: &std::path::Path, latency: Duration) -> Result<Self> {
        let text = memskill_core::fsio::read_user_text(path, 16 << 20, "--replies")?;
        Self::parse(&text, &path.display().to_string(), latency)
    }

    /// The reply to `prompt` (the matching rule's counter advances), or `None` when no rule
    /// matches.
    pub fn reply(&self, prompt: &str) -> Option<String> {
        let i = pick(&self.rules, prompt)?;
        let n = self.counts[i].fetch_add(1, Ordering::Relaxed);
        Some(render(&self.rules[i].reply, n))
    }
}

impl Llm for ReplyScript {
    fn id(&self) -> String {
        format!("reply-script:{}", self.origin)
    }
    fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, LlmError> {
        let start = Instant::now();
        let prompt = memskill_trainer::scripted_server::joined_prompt(req);
        let text = self.reply(&prompt).ok_or_else(|| {
            LlmError::Other(format!(
                "no rule of the reply script {} matches the prompt",
                self.origin
            ))
        })?;
        std::thread::sleep(self.latency);
        Ok(memskill_trainer::scripted_server::scripted_reply(
            &prompt, text, start,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use memskill_core::Message;

    const SCRIPT: &str = r#"{"rules": [
        {"contains": "MEMORY_INDEX", "reply": "ACTION: INSERT\nMEMORY_ITEM: note {n}"},
        {"contains": "judge", "reply": "CORRECT"},
        {"reply": "answer {n}"}
    ]}"#;

    fn script() -> ReplyScript {
        ReplyScript::parse(SCRIPT, "t.json", Duration::ZERO).unwrap()
    }

    #[test]
    fn first_matching_rule_answers_and_counts_its_own_uses() {
        let s = script();
        assert_eq!(
            s.reply("write MEMORY_INDEX").unwrap(),
            "ACTION: INSERT\nMEMORY_ITEM: note 0"
        );
        assert_eq!(s.reply("a question").unwrap(), "answer 0");
        assert_eq!(
            s.reply("MEMORY_INDEX and judge").unwrap(),
            "ACTION: INSERT\nMEMORY_ITEM: note 1",
            "the first match wins"
        );
        assert_eq!(s.reply("the judge").unwrap(), "CORRECT");
        assert_eq!(s.reply("another").unwrap(), "answer 1");
    }

    #[test]
    fn a_prompt_no_rule_matches_is_an_error_naming_the_script() {
        let s = ReplyScript::parse(
            r#"{"rules": [{"contains": "x", "reply": "y"}]}"#,
            "r.json",
            Duration::ZERO,
        )
        .unwrap();
        assert_eq!(s.reply("nothing"), None);
        let req = ChatRequest::new(vec![Message::user("nothing")]);
        let e = s.chat(&req).unwrap_err().to_string();
        assert!(e.contains("r.json"), "{e}");
        let ok = s.chat(&ChatRequest::new(vec![Message::user("x")])).unwrap();
        assert_eq!(ok.text, "y");
    }

    #[test]
    fn bad_scripts_are_refused_with_the_file_named() {
        for (text, needle) in [
            ("not json", "bad.json"),
            (r#"{"rules": []}"#, "empty"),
            (r#"{"rules": [{"reply": "a", "extra": 1}]}"#, "extra"),
            (r#"{"rules": [{"contains": "a"}]}"#, "reply"),
            (
                r#"{"rules": [{"contains": "", "reply": "a"}]}"#,
                "rules[0].contains",
            ),
        ] {
            let e = format!(
                "{:#}",
                ReplyScript::parse(text, "bad.json", Duration::ZERO).unwrap_err()
            );
            assert!(e.contains(needle) && e.contains("bad.json"), "{text}: {e}");
        }
    }

    #[test]
    fn the_latency_is_waited_before_the_reply() {
        let s = ReplyScript::parse(
            r#"{"rules": [{"reply": "r"}]}"#,
            "l.json",
            Duration::from_millis(30),
        )
        .unwrap();
        let r = s.chat(&ChatRequest::new(vec![Message::user("q")])).unwrap();
        assert!(r.latency_ms >= 30, "{}", r.latency_ms);
    }
}
