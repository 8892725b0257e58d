//! `score_hotpotqa`: (prediction, valid answers) -> the reference's HotpotQA F1
//! (`HotpotQAEvaluator.compute_f1`: best `eval_utils.f1_score` over the non-empty answers),
//! ours under the reproduction default `eval.hotpotqa_f1 = "memskill"`.

use anyhow::Context;
use serde_json::Value;

use super::Outcome;

pub fn check(input: &Value, expected: &Value, tol: f64) -> anyhow::Result<Outcome> {
    let pred = input["prediction"]
        .as_str()
        .context("input.prediction: expected a string")?;
    let answers: Vec<String> = input["answers"]
        .as_array()
        .context("input.answers: expected an array")?
        .iter()
        .enumerate()
        .map(|(i, a)| {
            a.as_str()
                .map(String::from)
                .with_context(|| format!("input.answers[{i}]: expected a string"))
        })
        .collect::<anyhow::Result<_>>()?;
    let ours =
        memskill_executor::hotpot_f1_with(memskill_executor::HotpotF1::default(), pred, &answers);
    let theirs = expected["f1"]
        .as_f64()
        .context("expected.f1: expected a number")?;
    Ok(Outcome::numbers(&[ours], &[theirs], tol))
}
