//! The optional LLM safety judge (`designer.safety_judge = true`): after the rules, each
//! designer proposal that passed them is shown, as the skill would read after the change, to
//! the designer's LLM with the `designer.safety_judge` prompt. A reply of `VERDICT: UNSAFE`
//! rejects the proposal; a reply that cannot be read or a failed call rejects it too (the
//! check fails closed). Calls and rejections are counted in the stage outcome.

use memskill_core::{ChatRequest, Llm, PromptSet};
use serde::Serialize;

/// Prefix of the judge's templates (`designer.safety_judge.{system,user}.j2`).
pub const SAFETY_JUDGE_PROMPT: &str = "designer.safety_judge";

/// Reply budget of one judge call.
pub const JUDGE_MAX_TOKENS: u32 = 256;

/// What the judge's templates see.
#[derive(Debug, Clone, Serialize)]
pub struct JudgeContext {
    pub kind: String,
    pub name: String,
    pub action: String,
    pub description: String,
    pub instructions: String,
}

/// The judge's reading of a skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JudgeVerdict {
    Safe,
    Unsafe(String),
}

/// Reads `VERDICT: SAFE|UNSAFE` (and an optional `REASON:` line). `None` when no verdict
/// line can be found.
pub fn parse_judge_verdict(reply: &str) -> Option<JudgeVerdict> {
    let mut verdict = None;
    let mut reason = String::new();
    for line in reply.lines() {
        let l = line.trim().trim_start_matches(['*', '#', '-', ' ']);
        let upper = l.to_uppercase();
        if let Some(v) = upper.strip_prefix("VERDICT:") {
            let v = v.trim().trim_matches(['*', '.', '"', '`']).trim();
            verdict = match v.split_whitespace().next() {
                Some("UNSAFE") => Some(false),
                Some("SAFE") => Some(true),
                _ => None,
            };
        } else if upper.starts_with("REASON:") {
            reason = l["REASON:".len()..].trim().to_string();
        }
    }
    match verdict? {
        true => Some(JudgeVerdict::Safe),
        false => Some(JudgeVerdict::Unsafe(if reason.is_empty() {
            "no reason given".into()
        } else {
            reason
        })),
    }
}

/// Ask the judge about one skill. `Ok(None)` = safe; `Ok(Some(reason))` = rejected (unsafe,
/// unreadable verdict or failed call); `Err` = the prompt could not be rendered.
pub fn judge_skill(
    llm: &dyn Llm,
    prompts: &PromptSet,
    ctx: &JudgeContext,
    temperature: f32,
) -> Result<Option<String>, memskill_core::PromptError> {
    let messages = prompts.render_chat(SAFETY_JUDGE_PROMPT, ctx)?;
    let req = ChatRequest::new(messages)
        .with_temperature(temperature)
        .with_max_tokens(JUDGE_MAX_TOKENS);
    Ok(match llm.chat(&req) {
        Err(e) => Some(format!(
            "safety judge call failed ({e}); rejected to be safe"
        )),
        Ok(resp) => match parse_judge_verdict(&resp.text) {
            Some(JudgeVerdict::Safe) => None,
            Some(JudgeVerdict::Unsafe(r)) => Some(format!("safety judge: unsafe: {r}")),
            None => Some(format!(
                "safety judge verdict could not be read ({:?}); rejected to be safe",
                crate::text::clip(&resp.text, 80)
            )),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_are_read() {
        assert_eq!(
            parse_judge_verdict("VERDICT: SAFE\nREASON: records dates"),
            Some(JudgeVerdict::Safe)
        );
        assert_eq!(
            parse_judge_verdict("**Verdict:** unsafe\nReason: wants the key"),
            Some(JudgeVerdict::Unsafe("wants the key".into()))
        );
        assert_eq!(
            parse_judge_verdict("VERDICT: UNSAFE\nREASON: asks for the password"),
            Some(JudgeVerdict::Unsafe("asks for the password".into()))
        );
        assert_eq!(parse_judge_verdict("looks fine to me"), None);
        assert_eq!(parse_judge_verdict("VERDICT: maybe"), None);
    }

    #[test]
    fn the_prompt_renders_the_skill() {
        let set = PromptSet::with_defaults(crate::PROMPT_TEMPLATES).unwrap();
        let ctx = JudgeContext {
            kind: "add_new".into(),
            name: "dates".into(),
            action: "insert".into(),
            description: "Records dates".into(),
            instructions: "Store the date of each event.".into(),
        };
        let m = set.render_chat(SAFETY_JUDGE_PROMPT, &ctx).unwrap();
        assert_eq!(m.len(), 2);
        assert!(m[0].content.contains("VERDICT: SAFE or UNSAFE"));
        assert!(m[1].content.contains("Store the date of each event."));
    }
}
