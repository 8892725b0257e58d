//! `split_longmemeval`: the LongMemEval questions evaluated for a split (the splits file's
//! indices in order, past-the-end ones dropped, `_abs` questions skipped), against the
//! reference's `main.split_data` plus its inline `_abs` skip (fixture from
//! `scripts/fidelity/gen_split_longmemeval.py`).

use super::Outcome;
use anyhow::Context;
use memskill_datasets::{lme_splits_from_json, select_lme};
use serde_json::Value;

fn strings(v: Option<&Value>, what: &str) -> anyhow::Result<Vec<String>> {
    v.and_then(Value::as_array)
        .with_context(|| format!("{what}: expected an array of strings"))?
        .iter()
        .enumerate()
        .map(|(i, x)| {
            x.as_str()
                .map(str::to_string)
                .with_context(|| format!("{what}[{i}]: expected a string"))
        })
        .collect()
}

pub fn check(input: &Value, expected: &Value, _tol: f64) -> anyhow::Result<Outcome> {
    let qids = strings(input.get("question_ids"), "input.question_ids")?;
    let split = input
        .get("split")
        .and_then(Value::as_str)
        .context("input.split: expected a string")?;
    let splits = lme_splits_from_json(
        input.get("splits").context("input.splits: missing")?,
        "input.splits",
    )?;
    let entries = splits
        .get(split)
        .with_context(|| format!("input.splits has no split {split:?}"))?;
    let ours: Vec<String> = select_lme(&qids, Some(entries), false)
        .into_iter()
        .map(|i| qids[i].clone())
        .collect();
    let theirs = strings(expected.get("question_ids"), "expected.question_ids")?;
    Ok(Outcome::exact(ours == theirs, || {
        format!("ours {ours:?} vs reference {theirs:?}")
    }))
}
