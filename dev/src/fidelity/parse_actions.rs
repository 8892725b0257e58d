//! `parse_actions`: an executor reply -> the parsed results, each
//! `[action_type, success, memory_index, memory_content]` as the reference's
//! `Executor._parse_response` returns them (failed results included).

use anyhow::Context;
use serde_json::{json, Value};

use super::Outcome;

pub fn check(input: &Value, expected: &Value, _tol: f64) -> anyhow::Result<Outcome> {
    let text = input["text"]
        .as_str()
        .context("input.text: expected a string")?;
    let n = input["n_retrieved"]
        .as_u64()
        .context("input.n_retrieved: expected a non-negative integer")? as usize;
    let ours: Vec<Value> = memskill_executor::parse_response(text, n)
        .iter()
        .map(|r| {
            let j = r.to_json();
            json!([j["action"], j["success"], j["index"], j["content"]])
        })
        .collect();
    let ours = Value::Array(ours);
    Ok(Outcome::exact(&ours == expected, || {
        format!("reply {text:?} (n={n}): ours {ours} vs reference {expected}")
    }))
}
