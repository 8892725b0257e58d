//! PPO pieces: configuration, transitions, GAE, advantage normalisation, statistics.
//! The update loop itself lives in [`crate::controller::Controller::update`].
//!
//! Follows the reference (MemSkill cda41f3: src/controller.py `PPOBuffer`,
//! `PPOController.compute_ppo_loss`; src/trainer.py `update_controller`):
//! loss = `-mean(min(r A, clip(r, 1 ± clip) A)) + value_coef * 0.5 * mean((V - R)^2) -
//! entropy_coef * mean(H)`; GAE per episode with `V_T = 0`; advantages normalised once over
//! the whole batch (population std + 1e-8, skipped for a single transition); `ppo_epochs` epochs
//! of shuffled minibatches (`minibatch_size = 0`: the whole batch); global gradient-norm clip;
//! Adam; an epoch whose mean `approx_kl = mean(old_log_prob - new_log_prob)` exceeds `target_kl`
//! (when > 0) ends the update.

use crate::bias::BiasSpec;
use crate::plackett_luce::PlForm;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// PPO hyper-parameters (reference values by default).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PpoConfig {
    pub lr: f32,
    pub gamma: f32,
    pub gae_lambda: f32,
    /// Clip range of the probability ratio.
    pub clip: f32,
    /// Weight of the value loss; the value loss itself is `0.5 * MSE` (as the reference), so the
    /// loss term is `value_coef * 0.5 * MSE` (0.5).
    pub value_coef: f32,
    /// Weight of the entropy bonus.
    pub entropy_coef: f32,
    /// Global L2 norm bound of the gradient over all parameters.
    pub max_grad_norm: f32,
    /// Minibatch size (32); 0 = the whole batch (as the reference).
    pub minibatch_size: usize,
    /// PPO epochs per update (reference default 4; its scripts use `--ppo-epochs 2`).
    pub ppo_epochs: usize,
    /// Stop the epochs early when an epoch's mean approximate KL exceeds this (0 = never).
    pub target_kl: f32,
    pub normalize_advantages: bool,
    /// Plackett-Luce evaluation (reference: `clamped`; `exact` is an opt-in deviation).
    pub plackett_luce: PlForm,
}

impl Default for PpoConfig {
    fn default() -> Self {
        Self {
            lr: 1e-4,
            gamma: 0.99,
            gae_lambda: 0.95,
            clip: 0.2,
            value_coef: 0.5,
            entropy_coef: 0.01,
            max_grad_norm: 0.5,
            minibatch_size: 32,
            ppo_epochs: 4,
            target_kl: 0.02,
            normalize_advantages: true,
            plackett_luce: PlForm::Clamped,
        }
    }
}

impl PpoConfig {
    /// Rejects values PPO cannot use, naming the key.
    pub fn validate(&self) -> Result<(), crate::ControllerError> {
        let bad = |field: &str, msg: &str| {
            Err(crate::ControllerError::Config {
                field: format!("ppo.{field}"),
                msg: msg.into(),
            })
        };
        if !(self.lr > 0.0 && self.lr.is_finite()) {
            return bad("lr", "must be a positive number");
        }
        if !(0.0..=1.0).contains(&self.gamma) {
            return bad("gamma", "must be in [0, 1]");
        }
        if !(0.0..=1.0).contains(&self.gae_lambda) {
            return bad("gae_lambda", "must be in [0, 1]");
        }
        if !(self.clip > 0.0 && self.clip.is_finite()) {
            return bad("clip", "must be > 0");
        }
        for (f, v) in [
            ("value_coef", self.value_coef),
            ("entropy_coef", self.entropy_coef),
            ("max_grad_norm", self.max_grad_norm),
            ("target_kl", self.target_kl),
        ] {
            if v.is_nan() {
                return bad(f, "must be a number");
            }
        }
        Ok(())
    }
}

/// One span decision recorded at rollout time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Transition {
    /// `build_state(span, retrieved)`, length `2 * emb_dim`.
    pub state: Vec<f32>,
    /// Embeddings of the skills that were selectable (shared within an episode).
    #[serde(with = "arc_embs")]
    pub skill_embs: Arc<Vec<Vec<f32>>>,
    /// Logit bias used at rollout (`Selection::bias`); re-applied at re-evaluation when
    /// `bias_spec` is None (`bias.reeval = "rollout"`); empty = none.
    pub bias: Vec<f32>,
    /// The new-skill bias parameters of the rollout, when the bias is recomputed from the
    /// current logits at re-evaluation (`bias.reeval = "current"`, the reference).
    #[serde(default)]
    pub bias_spec: Option<BiasSpec>,
    /// Ordered chosen skill indices.
    pub actions: Vec<usize>,
    pub old_log_prob: f32,
    pub old_value: f32,
    pub reward: f32,
}

mod arc_embs {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use std::sync::Arc;

    pub fn serialize<S: Serializer>(v: &Arc<Vec<Vec<f32>>>, s: S) -> Result<S::Ok, S::Error> {
        v.as_ref().serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Arc<Vec<Vec<f32>>>, D::Error> {
        Ok(Arc::new(Vec::<Vec<f32>>::deserialize(d)?))
    }
}

/// Statistics of one PPO update (means over the minibatches that ran).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct PpoStats {
    pub policy_loss: f32,
    pub value_loss: f32,
    pub entropy: f32,
    pub approx_kl: f32,
    pub clip_frac: f32,
    pub epochs_run: usize,
    pub minibatches: usize,
    pub early_stopped: bool,
    /// Global gradient L2 norm before clipping (mean over minibatches).
    #[serde(default)]
    pub grad_norm: f32,
    /// The reference's top-K diagnostics (means): entropy of the renormalised chosen
    /// probabilities, their total mass, and the binary entropy of that mass.
    #[serde(default)]
    pub topk_entropy: f32,
    #[serde(default)]
    pub topk_mass: f32,
    #[serde(default)]
    pub topk_bin_entropy: f32,
}

/// Generalised advantage estimation for one terminal episode:
/// `delta_t = r_t + gamma * V_{t+1} - V_t` (with `V_T = 0`),
/// `A_t = delta_t + gamma * lambda * A_{t+1}`, returns `A_t + V_t`.
/// `values` shorter than `rewards` is treated as zero-padded. Accumulates in `f64` and stores
/// `f32`, as the reference (`compute_returns_and_advantages`: float64 recursion, float32
/// advantages).
pub fn gae(rewards: &[f32], values: &[f32], gamma: f32, lambda: f32) -> (Vec<f32>, Vec<f32>) {
    let r: Vec<f64> = rewards.iter().map(|&x| x as f64).collect();
    let v: Vec<f64> = values.iter().map(|&x| x as f64).collect();
    let (a, ret) = gae_f64(&r, &v, gamma as f64, lambda as f64);
    (
        a.iter().map(|&x| x as f32).collect(),
        ret.iter().map(|&x| x as f32).collect(),
    )
}

/// [`gae`] in `f64`; the advantages are rounded to `f32` as the reference stores them, and the
/// returns are `f32(A_t) + V_t`.
pub fn gae_f64(rewards: &[f64], values: &[f64], gamma: f64, lambda: f64) -> (Vec<f64>, Vec<f64>) {
    let n = rewards.len();
    let v = |i: usize| values.get(i).copied().unwrap_or(0.0);
    let mut adv = vec![0.0f64; n];
    let mut next_adv = 0.0f64;
    for t in (0..n).rev() {
        let next_v = if t + 1 < n { v(t + 1) } else { 0.0 };
        let delta = rewards[t] + gamma * next_v - v(t);
        next_adv = delta + gamma * lambda * next_adv;
        adv[t] = next_adv as f32 as f64;
    }
    let returns = (0..n).map(|t| adv[t] + v(t)).collect();
    (adv, returns)
}

/// Normalises to zero mean and unit (population) standard deviation, `(x - mean) / (std +
/// 1e-8)`; fewer than two values are left unchanged (as the reference).
pub fn normalize(xs: &mut [f32]) {
    let n = xs.len();
    if n < 2 {
        return;
    }
    let mean = xs.iter().map(|&x| x as f64).sum::<f64>() / n as f64;
    let var = xs.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / n as f64;
    let std = var.sqrt();
    for x in xs.iter_mut() {
        *x = ((*x as f64 - mean) / (std + 1e-8)) as f32;
    }
}

/// Clipped PPO surrogate for one sample (the value the loss averages, before negation):
/// `min(ratio * A, clamp(ratio, 1-clip, 1+clip) * A)`.
pub fn clipped_surrogate(ratio: f32, adv: f32, clip: f32) -> f32 {
    (ratio * adv).min(ratio.clamp(1.0 - clip, 1.0 + clip) * adv)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gae_matches_hand_computation() {
        let r = [1.0f32, 0.0, 2.0];
        let v = [0.5f32, 0.4, 0.3];
        let (g, l) = (0.9f32, 0.8f32);
        let d2 = 2.0 - 0.3;
        let d1 = 0.0 + g * 0.3 - 0.4;
        let d0 = 1.0 + g * 0.4 - 0.5;
        let a2 = d2;
        let a1 = d1 + g * l * a2;
        let a0 = d0 + g * l * a1;
        let (adv, ret) = gae(&r, &v, g, l);
        for (got, want) in adv.iter().zip([a0, a1, a2]) {
            assert!((got - want).abs() < 1e-6);
        }
        for i in 0..3 {
            assert!((ret[i] - (adv[i] + v[i])).abs() < 1e-6);
        }
    }

    #[test]
    fn gae_lambda_one_gives_discounted_returns() {
        let r = [1.0f32, 1.0, 1.0];
        let v = [0.3f32, -0.2, 0.7];
        let (_, ret) = gae(&r, &v, 0.5, 1.0);
        let want = [1.0 + 0.5 + 0.25, 1.0 + 0.5, 1.0];
        for i in 0..3 {
            assert!((ret[i] - want[i]).abs() < 1e-6, "{} vs {}", ret[i], want[i]);
        }
    }

    #[test]
    fn normalize_zero_mean_unit_std() {
        let mut x = vec![1.0f32, 2.0, 3.0, 10.0];
        normalize(&mut x);
        let m: f32 = x.iter().sum::<f32>() / 4.0;
        let s: f32 = (x.iter().map(|v| (v - m).powi(2)).sum::<f32>() / 4.0).sqrt();
        assert!(m.abs() < 1e-6 && (s - 1.0).abs() < 1e-4);
        // A single advantage is left as it is (the reference normalises only when n > 1; the
        // old code centred it to 0, which erased the only learning signal of the batch).
        let mut one = vec![5.0f32];
        normalize(&mut one);
        assert_eq!(one, vec![5.0]);
    }

    #[test]
    fn clipped_surrogate_cases() {
        assert_eq!(clipped_surrogate(1.5, 1.0, 0.2), 1.2);
        assert_eq!(clipped_surrogate(0.5, 1.0, 0.2), 0.5);
        assert_eq!(clipped_surrogate(0.5, -1.0, 0.2), -0.8);
        assert_eq!(clipped_surrogate(1.5, -1.0, 0.2), -1.5);
        assert_eq!(clipped_surrogate(1.1, 2.0, 0.2), 2.2);
    }
}
