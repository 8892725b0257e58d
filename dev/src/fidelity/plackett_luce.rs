//! `plackett_luce`: ordered top-K log-probability (reference `_compute_topk_log_prob`, in
//! float64), single-step entropy (`Categorical(logits).entropy()`) and the top-K diagnostics
//! (`_compute_topk_stats`). Ours: the reproduction default `ppo.plackett_luce = "clamped"`.
//!
//! Input: `{"logits": [..], "actions": [..]}`; expected: `{"log_prob", "entropy",
//! "topk_entropy", "topk_mass", "topk_bin_entropy"}`.

use super::{f64s, Outcome};
use anyhow::{bail, Context, Result};
use memskill_controller::{entropy_f64, pl_log_prob_form_f64, topk_stats_f64, PlForm};
use serde_json::Value;

/// The case's logits and actions (validated).
pub(crate) fn case(input: &Value) -> Result<(Vec<f64>, Vec<usize>)> {
    let logits = f64s(
        input.get("logits").context("input.logits missing")?,
        "input.logits",
    )?;
    let actions: Vec<usize> = f64s(
        input.get("actions").context("input.actions missing")?,
        "input.actions",
    )?
    .iter()
    .map(|&a| a as usize)
    .collect();
    for (j, &a) in actions.iter().enumerate() {
        if a >= logits.len() || actions[..j].contains(&a) {
            bail!("input.actions[{j}]: {a} out of range or repeated");
        }
    }
    Ok((logits, actions))
}

/// Our log-probability under `form` for one case.
#[cfg(test)]
pub(crate) fn log_prob(input: &Value, form: PlForm) -> Result<f64> {
    let (l, a) = case(input)?;
    Ok(pl_log_prob_form_f64(form, &l, &a))
}

pub fn check(input: &Value, expected: &Value, tol: f64) -> Result<Outcome> {
    let (logits, actions) = case(input)?;
    let lp = pl_log_prob_form_f64(PlForm::Clamped, &logits, &actions);
    let ent = entropy_f64(&logits);
    let (te, tm, tb) = topk_stats_f64(&logits, &actions);
    let get = |k: &str| -> Result<f64> {
        expected
            .get(k)
            .and_then(Value::as_f64)
            .with_context(|| format!("expected.{k}: expected a number"))
    };
    let theirs = [
        get("log_prob")?,
        get("entropy")?,
        get("topk_entropy")?,
        get("topk_mass")?,
        get("topk_bin_entropy")?,
    ];
    Ok(Outcome::numbers(&[lp, ent, te, tm, tb], &theirs, tol))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// How often the opt-in exact form (log-sum-exp, no clamp) differs from the reference on
    /// the committed fixture: only where a 1e-8 clamp binds (near-degenerate logits).
    #[test]
    fn exact_form_differs_only_where_a_clamp_binds() {
        let p = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../trainer/tests/fixtures/fidelity/plackett_luce.json");
        let Ok(text) = std::fs::read_to_string(&p) else {
            return;
        };
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let (mut differ, mut binds, mut total) = (0, 0, 0);
        for c in v["cases"].as_array().unwrap() {
            total += 1;
            let (l, a) = super::case(&c["input"]).unwrap();
            let lp = memskill_controller::log_softmax_f64(&l);
            let mut rem = 1.0f64;
            let mut bind = false;
            for &x in &a {
                let p = lp[x].exp();
                bind |= p < 1e-8 || rem < 1e-8;
                rem -= p;
            }
            let exact = super::log_prob(&c["input"], memskill_controller::PlForm::Exact).unwrap();
            let want = c["expected"]["log_prob"].as_f64().unwrap();
            let d = (exact - want).abs() > 1e-6;
            differ += d as usize;
            binds += bind as usize;
            assert!(!d || bind, "exact differs without a binding clamp: {c}");
        }
        eprintln!("plackett_luce: exact form differs from the reference on {differ} of {total} cases; a clamp binds on {binds}");
    }
}
