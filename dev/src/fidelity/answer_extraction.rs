//! `answer_extraction`: the prediction kept from an answer reply (what the judge sees) and the
//! text F1 is computed on, against the reference (`response.strip()`; HotpotQA
//! `_extract_answer`, applied again in its `compute_f1`).

use super::Outcome;
use anyhow::Context;
use serde_json::Value;

pub fn check(input: &Value, expected: &Value, _tol: f64) -> anyhow::Result<Outcome> {
    let name = input["style"].as_str().context("input.style")?;
    let style = memskill_trainer::registry::find(name)
        .with_context(|| format!("input.style: unknown benchmark {name:?}"))?
        .answer;
    let reply = input["reply"].as_str().context("input.reply")?;
    let pred = memskill_executor::extract_answer(style, reply);
    let f1 = memskill_executor::f1_text(style, &pred);
    let want_pred = expected["prediction"]
        .as_str()
        .context("expected.prediction")?;
    let want_f1 = expected["f1_text"].as_str().context("expected.f1_text")?;
    Ok(Outcome::exact(pred == want_pred && f1 == want_f1, || {
        format!(
            "{style:?} {reply:?}: ours ({pred:?}, {f1:?}) vs reference ({want_pred:?}, {want_f1:?})"
        )
    }))
}
