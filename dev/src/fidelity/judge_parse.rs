//! `judge_parse`: the score read from an LLM-judge reply, against the reference's
//! `parse_judge_response` (`null` = the reference could not read it and scored 0; we count an
//! error instead).

use super::Outcome;
use anyhow::Context;
use serde_json::Value;

pub fn check(input: &Value, expected: &Value, tol: f64) -> anyhow::Result<Outcome> {
    let reply = input["reply"].as_str().context("input.reply")?;
    let ours = memskill_executor::parse_judge(reply);
    let theirs = expected["score"].as_f64();
    if !expected["score"].is_null() && theirs.is_none() {
        anyhow::bail!("expected.score is neither a number nor null");
    }
    Ok(match (ours, theirs) {
        (Some(a), Some(b)) => Outcome::numbers(&[a], &[b], tol),
        (None, None) => Outcome::exact(true, String::new),
        _ => Outcome::exact(false, || {
            format!("{reply:?}: ours {ours:?} vs reference {theirs:?}")
        }),
    })
}
