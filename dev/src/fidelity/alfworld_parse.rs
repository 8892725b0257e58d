//! `alfworld_parse`: the ALFWorld actor's reply-to-command matching and objective extraction,
//! against the reference's `_parse_action_response` and `_extract_objective` (fixture from
//! `scripts/fidelity/gen_alfworld_parse.py`). Ours: `match_reply_reference` (the default
//! `alfworld.reply_match = "reference"`) and `objective_of` ("" when there is none).

use super::Outcome;
use anyhow::{bail, Context};
use memskill_alfworld::{match_reply_reference, objective_of};
use serde_json::Value;

fn s<'a>(v: &'a Value, key: &str, what: &str) -> anyhow::Result<&'a str> {
    v.get(key)
        .and_then(Value::as_str)
        .with_context(|| format!("{what}.{key}: expected a string"))
}

pub fn check(input: &Value, expected: &Value, _tol: f64) -> anyhow::Result<Outcome> {
    let (ours, theirs) = match s(input, "kind", "input")? {
        "reply" => {
            let adm: Vec<String> = input
                .get("admissible")
                .and_then(Value::as_array)
                .context("input.admissible: expected an array")?
                .iter()
                .map(|c| c.as_str().unwrap_or_default().to_string())
                .collect();
            let (cmd, _) = match_reply_reference(s(input, "reply", "input")?, &adm);
            (cmd, s(expected, "command", "expected")?.to_string())
        }
        "objective" => (
            objective_of(s(input, "observation", "input")?).unwrap_or_default(),
            s(expected, "objective", "expected")?.to_string(),
        ),
        other => bail!("input.kind: unknown kind {other:?}"),
    };
    Ok(Outcome::exact(ours == theirs, || {
        format!("ours {ours:?} vs reference {theirs:?}")
    }))
}
