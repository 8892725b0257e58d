//! `ppo_update`: one reference `BaseTrainer.update_controller` call from identical weights and
//! batch. Ours: a [`Controller`] with the case's hyper-parameters (reproduction defaults
//! otherwise: clamped Plackett-Luce, bias recomputed from the current logits), the reference's
//! initial `state_dict` loaded, one [`Controller::update`]; compared: the updated weights, the
//! updated policy on every row of the batch (unbiased skill probabilities and the value), the
//! averaged loss statistics, the number of minibatch steps and the mean pre-clip gradient norm.
//!
//! Weights whose gradient stayed below 1e-6 during the reference's update (`noise_weights`:
//! mathematically zero gradients, e.g. the actor's output bias, to which the softmax is
//! invariant) are not compared one by one: Adam divides their float-noise gradient by its own
//! size and moves them by up to `lr` in an arbitrary direction, in the reference as in any other
//! implementation. What they can change is checked through the updated policy.
//!
//! Input: `{"emb_dim", "hidden", "hyper": {lr, gamma, gae_lambda, clip, value_coef,
//! entropy_coef, max_grad_norm, ppo_epochs, target_kl}, "bias": null | {p_min, scale},
//! "shapes": {name: shape}, "weights": {name: [..]}, "episodes": [[{state, ops, new_mask,
//! actions, old_log_prob, old_value, reward}]]}`; expected: `{"weights": {name: [..]},
//! "stats": {..}, "grad_norms": [..]}`.

use super::{f64s, Outcome};
use anyhow::{Context, Result};
use memskill_controller::{
    BiasConfig, BiasSpec, Controller, NamedTensor, PolicyConfig, PpoConfig, PpoStats, SelectMode,
    Transition,
};
use serde_json::Value;
use std::collections::BTreeSet;
use std::sync::Arc;

fn num(v: &Value, k: &str, what: &str) -> Result<f64> {
    v.get(k)
        .and_then(Value::as_f64)
        .with_context(|| format!("{what}.{k}: expected a number"))
}

fn f32s(v: &Value, what: &str) -> Result<Vec<f32>> {
    Ok(f64s(v, what)?.iter().map(|&x| x as f32).collect())
}

fn weights(v: &Value, shapes: &Value, what: &str) -> Result<Vec<NamedTensor>> {
    let obj = v
        .as_object()
        .with_context(|| format!("{what}: expected an object"))?;
    obj.iter()
        .map(|(name, data)| {
            let shape: Vec<usize> = f64s(
                shapes
                    .get(name)
                    .with_context(|| format!("input.shapes.{name} missing"))?,
                &format!("input.shapes.{name}"),
            )?
            .iter()
            .map(|&x| x as usize)
            .collect();
            Ok((name.clone(), shape, f32s(data, &format!("{what}.{name}"))?))
        })
        .collect()
}

pub fn check(input: &Value, expected: &Value, tol: f64) -> Result<Outcome> {
    let mut c = reference_controller(input)?;
    let episodes = episodes(input)?;
    let stats = c.update(&episodes)?;
    let (weights_out, noise) = compare_weights(&c, expected, tol)?;
    // The zero-gradient weights left out of the weight comparison move by up to `lr` per Adam
    // step in either implementation (torch may cancel their gradient to exactly 0.0 where ours
    // keeps float noise); through the rows where their unit is not shift-invariant they move
    // the policy by at most that much. The updated policy is compared within that bound (the
    // weights with a real gradient stay at the fixture's tolerance).
    let pol_tol = if noise.is_empty() {
        tol
    } else {
        tol.max(hyper(input, "lr")? * stats.minibatches as f64)
    };
    let pol_out = compare_policy(&mut c, &episodes, expected, pol_tol)?;
    let (stats_out, norm_out) = compare_stats(&stats, expected, tol)?;
    Ok(stats_out.and(norm_out).and(pol_out).and(weights_out))
}

/// One of the case's hyper-parameters (`input.hyper.<k>`).
fn hyper(input: &Value, k: &str) -> Result<f64> {
    num(
        input.get("hyper").context("input.hyper missing")?,
        k,
        "input.hyper",
    )
}

/// A controller with the case's hyper-parameters and the reference's initial weights.
fn reference_controller(input: &Value) -> Result<Controller> {
    let h = |k: &str| hyper(input, k);
    let ppo = PpoConfig {
        lr: h("lr")? as f32,
        gamma: h("gamma")? as f32,
        gae_lambda: h("gae_lambda")? as f32,
        clip: h("clip")? as f32,
        value_coef: h("value_coef")? as f32,
        entropy_coef: h("entropy_coef")? as f32,
        max_grad_norm: h("max_grad_norm")? as f32,
        ppo_epochs: h("ppo_epochs")? as usize,
        target_kl: h("target_kl")? as f32,
        minibatch_size: 0,
        ..PpoConfig::default()
    };
    let d = num(input, "emb_dim", "input")? as usize;
    let policy = PolicyConfig {
        hidden: num(input, "hidden", "input")? as usize,
        device: memskill_controller::PolicyDevice::Cpu,
        ..PolicyConfig::default()
    };
    let mut c = Controller::new(d, &policy, &ppo, 0)?;
    let shapes = input.get("shapes").context("input.shapes missing")?;
    let init = weights(
        input.get("weights").context("input.weights missing")?,
        shapes,
        "input.weights",
    )?;
    c.load_reference_state_dict(&init)?;
    Ok(c)
}

/// The batch: `input.episodes`, one list of transitions per episode.
fn episodes(input: &Value) -> Result<Vec<Vec<Transition>>> {
    let bias = input.get("bias").filter(|b| !b.is_null());
    input
        .get("episodes")
        .and_then(Value::as_array)
        .context("input.episodes: expected an array")?
        .iter()
        .enumerate()
        .map(|(e, ep)| {
            ep.as_array()
                .with_context(|| format!("input.episodes[{e}]: expected an array"))?
                .iter()
                .enumerate()
                .map(|(t, tr)| transition(tr, &format!("input.episodes[{e}][{t}]"), bias))
                .collect()
        })
        .collect()
}

/// One transition of the batch (`at` names it in errors); `bias` is the case's
/// new-skill bias, applied to the rows that offer a new skill.
fn transition(tr: &Value, at: &str, bias: Option<&Value>) -> Result<Transition> {
    let at = |k: &str| format!("{at}.{k}");
    let get = |k: &str| tr.get(k).with_context(|| format!("{} missing", at(k)));
    let ops: Vec<Vec<f32>> = get("ops")?
        .as_array()
        .with_context(|| at("ops"))?
        .iter()
        .enumerate()
        .map(|(i, o)| f32s(o, &at(&format!("ops[{i}]"))))
        .collect::<Result<_>>()?;
    let mask: Vec<bool> = get("new_mask")?
        .as_array()
        .with_context(|| at("new_mask"))?
        .iter()
        .map(|m| m.as_bool().unwrap_or(false))
        .collect();
    let bias_spec = match bias {
        Some(b) if mask.iter().any(|&m| m) => {
            let p_min = num(b, "p_min", "input.bias")? as f32;
            Some(BiasSpec {
                new_mask: mask.clone(),
                p_min,
                delta_max: BiasConfig {
                    p_min,
                    ..BiasConfig::default()
                }
                .delta_max(),
                scale: num(b, "scale", "input.bias")? as f32,
            })
        }
        _ => None,
    };
    Ok(Transition {
        state: f32s(get("state")?, &at("state"))?,
        skill_embs: Arc::new(ops),
        bias: Vec::new(),
        bias_spec,
        actions: f64s(get("actions")?, &at("actions"))?
            .iter()
            .map(|&a| a as usize)
            .collect(),
        old_log_prob: num(tr, "old_log_prob", &at(""))? as f32,
        old_value: num(tr, "old_value", &at(""))? as f32,
        reward: num(tr, "reward", &at(""))? as f32,
    })
}

/// The updated weights against the reference's, leaving out the zero-gradient ones
/// (`expected.noise_weights`, indices into the flattened weights), which are returned.
fn compare_weights(
    c: &Controller,
    expected: &Value,
    tol: f64,
) -> Result<(Outcome, BTreeSet<usize>)> {
    let want_w = expected
        .get("weights")
        .context("expected.weights missing")?;
    let noise: BTreeSet<usize> = f64s(
        expected
            .get("noise_weights")
            .context("expected.noise_weights missing")?,
        "expected.noise_weights",
    )?
    .iter()
    .map(|&x| x as usize)
    .collect();
    let mut mine = Vec::new();
    let mut theirs = Vec::new();
    for (name, _, data) in &c.reference_state_dict() {
        let w = f64s(
            want_w
                .get(name)
                .with_context(|| format!("expected.weights.{name} missing"))?,
            &format!("expected.weights.{name}"),
        )?;
        mine.extend(data.iter().map(|&x| x as f64));
        theirs.extend(w);
    }
    let (mine, theirs): (Vec<f64>, Vec<f64>) = mine
        .iter()
        .zip(&theirs)
        .enumerate()
        .filter(|(i, _)| !noise.contains(i))
        .map(|(_, (a, b))| (*a, *b))
        .unzip();
    Ok((Outcome::numbers(&mine, &theirs, tol), noise))
}

/// The updated policy on every row of the batch (unbiased skill probabilities, then the
/// value) against the reference's `expected.probs` / `expected.values`.
fn compare_policy(
    c: &mut Controller,
    episodes: &[Vec<Transition>],
    expected: &Value,
    tol: f64,
) -> Result<Outcome> {
    let mut our_pol = Vec::new();
    for tr in episodes.iter().flatten() {
        let sel = c.select(&tr.state, &tr.skill_embs, 1, None, SelectMode::Greedy)?;
        our_pol.extend(sel.probs.iter().map(|&p| p as f64));
        our_pol.push(sel.value as f64);
    }
    let mut their_pol = Vec::new();
    let probs = expected
        .get("probs")
        .and_then(Value::as_array)
        .context("expected.probs: expected an array")?;
    let values = f64s(
        expected.get("values").context("expected.values missing")?,
        "expected.values",
    )?;
    for (i, p) in probs.iter().enumerate() {
        their_pol.extend(f64s(p, &format!("expected.probs[{i}]"))?);
        their_pol.push(values.get(i).copied().unwrap_or(f64::NAN));
    }
    let pol_out = Outcome::numbers(&our_pol, &their_pol, tol);
    Ok(Outcome {
        detail: pol_out
            .detail
            .map(|d| format!("updated policy (probabilities, value per row) {d}")),
        ..pol_out
    })
}

/// The averaged loss statistics and minibatch count against `expected.stats`, and the mean
/// pre-clip gradient norm against the mean of `expected.grad_norms`: `(stats, grad norm)`.
fn compare_stats(stats: &PpoStats, expected: &Value, tol: f64) -> Result<(Outcome, Outcome)> {
    let st = expected.get("stats").context("expected.stats missing")?;
    // A null statistic is NaN on the reference's side (topk_bin_entropy in float32 when the
    // chosen skills hold all the mass); ours is finite there and is not compared.
    let s = |k: &str| -> Result<f64> {
        match st.get(k) {
            Some(Value::Null) => Ok(f64::NAN),
            _ => num(st, k, "expected.stats"),
        }
    };
    let norms = f64s(
        expected
            .get("grad_norms")
            .context("expected.grad_norms missing")?,
        "expected.grad_norms",
    )?;
    let mean_norm = norms.iter().sum::<f64>() / norms.len().max(1) as f64;
    let ours_stats = [
        stats.policy_loss as f64,
        stats.value_loss as f64,
        stats.entropy as f64,
        stats.approx_kl as f64,
        stats.clip_frac as f64,
        stats.topk_entropy as f64,
        stats.topk_mass as f64,
        stats.topk_bin_entropy as f64,
        stats.minibatches as f64,
    ];
    let their_stats = [
        s("policy_loss")?,
        s("value_loss")?,
        s("entropy")?,
        s("approx_kl")?,
        s("clip_frac")?,
        s("topk_entropy")?,
        s("topk_mass")?,
        s("topk_bin_entropy")?,
        s("n_updates")?,
    ];
    // Gradient norms are compared relative to their size (they range over orders of magnitude).
    let rel = (stats.grad_norm as f64 - mean_norm).abs() / mean_norm.max(1.0);
    let norm_out = Outcome {
        agree: rel <= tol,
        max_abs_diff: rel,
        detail: (rel > tol).then(|| {
            format!(
                "grad norm ours {} vs reference {mean_norm}",
                stats.grad_norm
            )
        }),
    };
    let (ours_stats, their_stats): (Vec<f64>, Vec<f64>) = ours_stats
        .iter()
        .zip(&their_stats)
        .filter(|(_, t)| !t.is_nan())
        .map(|(a, b)| (*a, *b))
        .unzip();
    let stats_out = Outcome::numbers(&ours_stats, &their_stats, tol);
    let stats_out = Outcome {
        detail: stats_out.detail.map(|d| format!("stats {d} (policy_loss, value_loss, entropy, approx_kl, clip_frac, topk_entropy, topk_mass, topk_bin_entropy, minibatches)")),
        ..stats_out
    };
    Ok((stats_out, norm_out))
}
