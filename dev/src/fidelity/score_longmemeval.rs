//! `score_longmemeval`: (prediction, answer) -> the reference's LongMemEval F1
//! (`Evaluator.compute_f1` = `eval_utils.f1_score`, stemmed token F1). The LLM judge is not
//! part of this check.

use anyhow::Context;
use serde_json::Value;

use super::Outcome;

pub fn check(input: &Value, expected: &Value, tol: f64) -> anyhow::Result<Outcome> {
    let pred = input["prediction"]
        .as_str()
        .context("input.prediction: expected a string")?;
    let gold = input["answer"]
        .as_str()
        .context("input.answer: expected a string")?;
    let ours = memskill_executor::memskill_f1(pred, gold);
    let theirs = expected["f1"]
        .as_f64()
        .context("expected.f1: expected a number")?;
    Ok(Outcome::numbers(&[ours], &[theirs], tol))
}
