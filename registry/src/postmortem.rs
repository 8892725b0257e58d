//! The post-use reflection answered by the designer model (`memskill registry postmortem ID
//! --designer`): the invocation's context as the registry holds it (the skill's text at that
//! version, why it was active, its outcome and measurements, feedback, the episode it was
//! part of), the six questions of [`crate::ops::POSTMORTEM_QUESTIONS`] in our own prompt
//! (`registry/prompts/registry.postmortem.*.j2`), and a strict reading of the reply: a JSON
//! object with the six answers, `action` starting with keep / patch / merge / split /
//! deprecate. A reply that is not that is an error naming what is missing, and nothing is
//! written; a good one is recorded by [`crate::ops::postmortem`] like a person's answers.

use anyhow::{bail, Context, Result};
use memskill_core::{jsonfix::json_candidates, ChatRequest, Llm, PromptSet};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::db::Db;
use crate::ops::{POSTMORTEM_ACTIONS, POSTMORTEM_QUESTIONS};

/// The prompt templates (name, minijinja source).
pub const PROMPT_TEMPLATES: &[(&str, &str)] = &[
    (
        "registry.postmortem.system.j2",
        include_str!("../prompts/registry.postmortem.system.j2"),
    ),
    (
        "registry.postmortem.user.j2",
        include_str!("../prompts/registry.postmortem.user.j2"),
    ),
];

/// Characters of the episode's messages shown (its start).
pub const MAX_TRAJECTORY_CHARS: usize = 4000;

/// What the prompt shows of one invocation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PostmortemContext {
    pub invocation: String,
    pub skill: String,
    pub version: String,
    pub description: String,
    pub instructions: String,
    pub reason: String,
    pub outcome: String,
    pub metrics: String,
    pub feedback: String,
    pub task_summary: String,
    pub task_outcome: String,
    pub trajectory: String,
    pub questions: Vec<(&'static str, &'static str)>,
}

fn clip(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{} [...]", &s[..i]),
        None => s.to_string(),
    }
}

/// The invocation's context from the registry (an unknown id is an error naming it).
pub fn context(db: &mut Db, invocation: &str) -> Result<PostmortemContext> {
    let inv = db
        .query(
            "SELECT * FROM skill_invocation WHERE invocation_id = ?",
            &[invocation.into()],
        )?
        .into_iter()
        .next()
        .with_context(|| format!("registry {}: no invocation {invocation:?}", db.location))?;
    let (skill, version) = (inv.text("skill_id"), inv.text("skill_version"));
    let text = db.query(
        "SELECT description, instructions FROM skill_version WHERE skill_id = ? AND version = ?
         ORDER BY created_at DESC, content_hash",
        &[(&skill).into(), (&version).into()],
    )?;
    let traj = db.query(
        "SELECT task_summary, outcome_status, messages FROM trajectory WHERE trace_id = ?",
        &[inv.text("trace_id").into()],
    )?;
    let t = traj.first();
    let feedback = match inv.get("user_feedback") {
        Value::Null => String::new(),
        v => v.to_string(),
    };
    Ok(PostmortemContext {
        invocation: invocation.to_string(),
        description: text
            .first()
            .map(|r| r.text("description"))
            .unwrap_or_default(),
        instructions: text
            .first()
            .map(|r| r.text("instructions"))
            .unwrap_or_default(),
        skill,
        version,
        reason: inv.text("activation_reason"),
        outcome: inv.text("outcome_status"),
        metrics: inv.get("metrics").to_string(),
        feedback,
        task_summary: t.map(|r| r.text("task_summary")).unwrap_or_default(),
        task_outcome: t.map(|r| r.text("outcome_status")).unwrap_or_default(),
        trajectory: t
            .map(|r| clip(&r.get("messages").to_string(), MAX_TRAJECTORY_CHARS))
            .unwrap_or_default(),
        questions: POSTMORTEM_QUESTIONS.to_vec(),
    })
}

/// The six answers of a reply: the first JSON object in it that holds them; every answer a
/// non-empty text, `action` starting with one of [`POSTMORTEM_ACTIONS`]; other keys are
/// dropped. `Err` says what is wrong, with the start of the reply.
pub fn parse_reply(reply: &str) -> Result<Value> {
    let shown = clip(reply.trim(), 300);
    let objects: Vec<Map<String, Value>> = json_candidates(reply)
        .into_iter()
        .filter_map(|v| v.as_object().cloned())
        .collect();
    let Some(obj) = objects
        .iter()
        .find(|o| POSTMORTEM_QUESTIONS.iter().any(|(k, _)| o.contains_key(*k)))
    else {
        bail!(
            "the designer's post-mortem reply holds no JSON object with the six answers: {shown:?}"
        );
    };
    let mut out = Map::new();
    for (k, q) in POSTMORTEM_QUESTIONS {
        match obj.get(k) {
            Some(Value::String(s)) if !s.trim().is_empty() => {
                out.insert(k.to_string(), Value::String(s.trim().to_string()));
            }
            Some(Value::Bool(b)) => {
                out.insert(
                    k.to_string(),
                    Value::String(if *b { "yes" } else { "no" }.into()),
                );
            }
            _ => bail!(
                "the designer's post-mortem reply lacks a text answer to {k:?} ({q}): {shown:?}"
            ),
        }
    }
    let action = out["action"].as_str().unwrap_or("").to_lowercase();
    if !POSTMORTEM_ACTIONS.iter().any(|a| action.starts_with(a)) {
        bail!(
            "the designer's post-mortem action must start with {}, not {action:?}",
            POSTMORTEM_ACTIONS.join(", ")
        );
    }
    Ok(Value::Object(out))
}

/// Ask `llm` the six questions about `ctx` (temperature 0) and read its answers.
pub fn ask(llm: &dyn Llm, prompts: &PromptSet, ctx: &PostmortemContext) -> Result<Value> {
    let messages = prompts
        .render_chat("registry.postmortem", ctx)
        .context("rendering the post-mortem prompt")?;
    let req = ChatRequest::new(messages)
        .with_temperature(0.0)
        .with_max_tokens(1024);
    let resp = llm
        .chat(&req)
        .map_err(|e| anyhow::anyhow!("the designer model ({}) failed: {e}", llm.id()))?;
    parse_reply(&resp.text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full(action: &str) -> String {
        format!(
            r#"Here you go: {{"should_trigger": "yes", "helped": "partly", "unclear_step": "which date to keep",
              "new_pitfall": "relative dates", "script_candidate": "none", "action": "{action}", "extra": 1}}"#
        )
    }

    #[test]
    fn a_reply_with_the_six_answers_is_read_and_extras_dropped() {
        let v = parse_reply(&full("patch: say which date wins")).unwrap();
        let o = v.as_object().unwrap();
        assert_eq!(o.len(), 6);
        assert_eq!(o["action"], "patch: say which date wins");
        let fenced = format!(
            "```json\n{}\n```",
            full("keep").trim_start_matches("Here you go: ")
        );
        assert!(parse_reply(&fenced).is_ok());
    }

    #[test]
    fn garbage_replies_are_named_errors() {
        let e = parse_reply("I think the skill was fine.")
            .unwrap_err()
            .to_string();
        assert!(e.contains("no JSON object"), "{e}");
        let e = parse_reply(r#"{"should_trigger": "yes"}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("\"helped\""), "{e}");
        let e = parse_reply(&full("rewrite everything"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("must start with keep"), "{e}");
        let e = parse_reply(&full("")).unwrap_err().to_string();
        assert!(e.contains("\"action\""), "{e}");
    }

    #[test]
    fn the_prompt_asks_the_six_questions_with_the_context() {
        let p = PromptSet::with_defaults(PROMPT_TEMPLATES).unwrap();
        let ctx = PostmortemContext {
            invocation: "run:inv:1".into(),
            skill: "insert".into(),
            version: "1.1.0".into(),
            description: "Store facts.".into(),
            instructions: "Write each fact.".into(),
            reason: "selected by the controller".into(),
            outcome: "answered".into(),
            metrics: "{\"tokens\":10}".into(),
            feedback: String::new(),
            task_summary: "update 1".into(),
            task_outcome: "scored".into(),
            trajectory: "[{\"span\":\"sp1\"}]".into(),
            questions: POSTMORTEM_QUESTIONS.to_vec(),
        };
        let m = p.render_chat("registry.postmortem", &ctx).unwrap();
        assert_eq!(m.len(), 2);
        let u = &m[1].content;
        for (k, q) in POSTMORTEM_QUESTIONS {
            assert!(u.contains(k) && u.contains(q), "{k}");
        }
        assert!(u.contains("Write each fact.") && u.contains("update 1 (outcome: scored)"));
        assert!(!u.contains("User feedback"));
    }
}
