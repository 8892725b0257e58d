//! `score_locomo`: batches of (prediction, answer, category) -> per-item F1, per-category
//! means and the overall mean, as the reference's LoCoMo evaluation computes them
//! (`LoCoMoEvaluator.get_ground_truth` + `compute_f1`, main.py's averages).

use std::collections::BTreeMap;

use anyhow::Context;
use serde_json::Value;

use super::{f64s, Outcome};

/// Python `str()` of a JSON answer (a string or an integer).
fn answer_text(v: &Value, what: &str) -> anyhow::Result<String> {
    match v {
        Value::String(s) => Ok(s.clone()),
        Value::Number(n) if n.is_i64() || n.is_u64() => Ok(n.to_string()),
        _ => anyhow::bail!("{what}: expected a string or an integer"),
    }
}

pub fn check(input: &Value, expected: &Value, tol: f64) -> anyhow::Result<Outcome> {
    let items = input["items"]
        .as_array()
        .context("input.items: expected an array")?;
    let mut f1s = Vec::with_capacity(items.len());
    let mut by_cat: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for (i, it) in items.iter().enumerate() {
        let pred = it["prediction"]
            .as_str()
            .with_context(|| format!("input.items[{i}].prediction: expected a string"))?;
        let ans = answer_text(&it["answer"], &format!("input.items[{i}].answer"))?;
        let cat = it["category"]
            .as_u64()
            .with_context(|| format!("input.items[{i}].category: expected an integer"))?;
        let f1 = memskill_executor::locomo_f1(pred, &ans, cat as u8);
        f1s.push(f1);
        by_cat.entry(cat.to_string()).or_default().push(f1);
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let mut ours = f1s.clone();
    let mut theirs = f64s(&expected["f1"], "expected.f1")?;
    let exp_cat = expected["by_category"]
        .as_object()
        .context("expected.by_category: expected an object")?;
    let exp_keys: Vec<&String> = exp_cat.keys().collect();
    let our_keys: Vec<&String> = by_cat.keys().collect();
    if exp_keys != our_keys {
        return Ok(Outcome::exact(false, || {
            format!("categories {our_keys:?} vs reference {exp_keys:?}")
        }));
    }
    for (k, v) in &by_cat {
        ours.push(mean(v));
        theirs.push(
            exp_cat[k]
                .as_f64()
                .with_context(|| format!("expected.by_category.{k}: expected a number"))?,
        );
    }
    ours.push(mean(&f1s));
    theirs.push(
        expected["overall"]
            .as_f64()
            .context("expected.overall: expected a number")?,
    );
    Ok(Outcome::numbers(&ours, &theirs, tol))
}
