//! `new_skill_bias`: `delta_max` (reference `_compute_new_action_delta_max`, p_ref = 0.01), the
//! decay scale of the trainer's schedule, and the biased logits of `_apply_new_action_bias`.
//! Ours: [`NewSkillBias`] built from the configured `p_min` and `bias_steps` at update 0, asked
//! at update `step`.
//!
//! Input: `{"p_min", "bias_steps", "step", "logits", "new_mask"}`; expected: `{"delta_max",
//! "scale", "biased_logits"}`.

use super::{f64s, Outcome};
use anyhow::{Context, Result};
use memskill_controller::{BiasConfig, NewSkillBias};
use serde_json::Value;

pub fn check(input: &Value, expected: &Value, tol: f64) -> Result<Outcome> {
    let num = |k: &str| -> Result<f64> {
        input
            .get(k)
            .and_then(Value::as_f64)
            .with_context(|| format!("input.{k}: expected a number"))
    };
    let cfg = BiasConfig {
        p_min: num("p_min")? as f32,
        bias_steps: num("bias_steps")? as u64,
        ..BiasConfig::default()
    };
    let step = num("step")? as u64;
    let logits: Vec<f32> = f64s(
        input.get("logits").context("input.logits missing")?,
        "input.logits",
    )?
    .iter()
    .map(|&x| x as f32)
    .collect();
    let mask: Vec<bool> = input
        .get("new_mask")
        .and_then(Value::as_array)
        .context("input.new_mask: expected an array")?
        .iter()
        .enumerate()
        .map(|(i, m)| {
            m.as_bool()
                .with_context(|| format!("input.new_mask[{i}]: expected a bool"))
        })
        .collect::<Result<_>>()?;
    let b = NewSkillBias::new(mask, 0, &cfg);
    let bias = b.logit_bias(&logits, step);
    let ours: Vec<f64> = logits
        .iter()
        .zip(&bias)
        .map(|(l, x)| (*l + *x) as f64)
        .collect();
    let get = |k: &str| -> Result<f64> {
        expected
            .get(k)
            .and_then(Value::as_f64)
            .with_context(|| format!("expected.{k}: expected a number"))
    };
    let want = f64s(
        expected
            .get("biased_logits")
            .context("expected.biased_logits missing")?,
        "expected.biased_logits",
    )?;
    Ok(Outcome::numbers(
        &[cfg.delta_max() as f64, b.decay(step) as f64],
        &[get("delta_max")?, get("scale")?],
        tol,
    )
    .and(Outcome::numbers(&ours, &want, tol)))
}
