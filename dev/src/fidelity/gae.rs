//! `gae`: GAE returns and advantages of a batch of terminal episodes
//! (PPOBuffer.compute_returns_and_advantages) and the batch-normalised advantages
//! (BaseTrainer.update_controller).
//!
//! Input: `{"gamma", "lambda", "episodes": [{"rewards": [..], "values": [..]}]}`; expected:
//! `{"returns", "advantages", "normalized"}` over the concatenated episodes (float32).

use super::{f64s, Outcome};
use anyhow::{Context, Result};
use memskill_controller::{gae, normalize};
use serde_json::Value;

pub fn check(input: &Value, expected: &Value, tol: f64) -> Result<Outcome> {
    let g = input
        .get("gamma")
        .and_then(Value::as_f64)
        .context("input.gamma: expected a number")? as f32;
    let l = input
        .get("lambda")
        .and_then(Value::as_f64)
        .context("input.lambda: expected a number")? as f32;
    let (mut rets, mut advs) = (Vec::new(), Vec::new());
    for (i, ep) in input
        .get("episodes")
        .and_then(Value::as_array)
        .context("input.episodes: expected an array")?
        .iter()
        .enumerate()
    {
        let r: Vec<f32> = f64s(
            ep.get("rewards").context("rewards missing")?,
            &format!("input.episodes[{i}].rewards"),
        )?
        .iter()
        .map(|&x| x as f32)
        .collect();
        let v: Vec<f32> = f64s(
            ep.get("values").context("values missing")?,
            &format!("input.episodes[{i}].values"),
        )?
        .iter()
        .map(|&x| x as f32)
        .collect();
        let (a, ret) = gae(&r, &v, g, l);
        advs.extend(a);
        rets.extend(ret);
    }
    let raw: Vec<f64> = advs.iter().map(|&x| x as f64).collect();
    normalize(&mut advs);
    let norm: Vec<f64> = advs.iter().map(|&x| x as f64).collect();
    let rets: Vec<f64> = rets.iter().map(|&x| x as f64).collect();
    let want = |k: &str| -> Result<Vec<f64>> {
        f64s(
            expected
                .get(k)
                .with_context(|| format!("expected.{k} missing"))?,
            &format!("expected.{k}"),
        )
    };
    Ok(Outcome::numbers(&rets, &want("returns")?, tol)
        .and(Outcome::numbers(&raw, &want("advantages")?, tol))
        .and(Outcome::numbers(&norm, &want("normalized")?, tol)))
}
