//! New-skill exploration bias (issue 3, item 4; issue 11, fix 2).
//!
//! After the designer adds or changes skills, the policy has not yet learned to pick them. For a
//! state whose softmax gives the new skills a total probability `p_new < p_min`, every new
//! skill's logit gets the same additive
//! `delta = scale * clamp(ln(p_min / (p_new + 1e-8)), 0, delta_max)`, where `scale` decays
//! linearly from 1 to 0 over `bias_steps` PPO updates after the bank change
//! (`scale = max(0, 1 - updates_since_change / bias_steps)`). This is the reference's
//! `PPOController._apply_new_action_bias` with its trainer's schedule (MemSkill cda41f3,
//! src/controller.py and src/trainer.py), numbers included.
//!
//! `delta_max` is the log-odds ratio of `p_min` against `p_ref = 0.01`,
//! `ln(p_min (1 - p_ref) / (p_ref (1 - p_min)))` with both probabilities clamped to
//! `[1e-8, 1 - 1e-8]` (the reference's `_compute_new_action_delta_max`). Deviation kept on
//! purpose: the reference computes it once from the *default* `p_min` (0.30) even when
//! `--new-action-p-min` changes; [`BiasConfig::delta_max`] uses the configured `p_min`. With the
//! reference's own `p_min` (0.30) both give the same `delta_max` (ln(0.297 / 0.007)).
//!
//! Re-evaluation at the PPO update ([`BiasReeval`]): the reference recomputes the bias inside
//! every PPO minibatch from the *current* logits (no gradient through it), with the scale of the
//! rollout; that is the default ([`BiasReeval::Current`]) and the transition carries what is
//! needed ([`BiasSpec`]). [`BiasReeval::Rollout`] (opt-in deviation) re-applies the exact bias
//! vector used at rollout, so every ratio is computed under the rollout's distribution; it gives
//! the same numbers for the first minibatch of an update and differs after the first optimiser
//! step. `Greedy` selection never applies the bias (the reference's evaluation passes no mask).

use serde::{Deserialize, Serialize};

/// The reference's `p_ref` of `delta_max` (src/config.py `_NEW_ACTION_P_REF`).
pub const DEFAULT_P_REF: f32 = 0.01;

/// The epsilon added to `p_new` in `ln(p_min / (p_new + eps))` (reference: 1e-8).
pub const P_NEW_EPS: f64 = 1e-8;

/// How the PPO update re-evaluates the bias of a transition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum BiasReeval {
    /// Recompute from the current logits in every minibatch (the reference).
    #[default]
    Current,
    /// Re-apply the bias vector used at rollout (deviation, opt-in).
    Rollout,
}

/// Configuration of the new-skill exploration bias.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct BiasConfig {
    /// Target minimum total probability of the new skills (reference `--new-action-p-min`, 0.30).
    pub p_min: f32,
    /// Number of PPO updates over which the bias decays linearly to zero (reference
    /// `--new-action-bias-steps`, default 50; the reference scripts use 25).
    pub bias_steps: u64,
    /// Master switch.
    pub enabled: bool,
    /// Reference probability of `delta_max` (the log-odds ratio of `p_min` against it; 0.01).
    pub p_ref: f32,
    /// How the PPO update re-evaluates the bias (reference: `current`).
    pub reeval: BiasReeval,
}

impl Default for BiasConfig {
    fn default() -> Self {
        Self {
            p_min: 0.30,
            bias_steps: 50,
            enabled: true,
            p_ref: DEFAULT_P_REF,
            reeval: BiasReeval::Current,
        }
    }
}

impl BiasConfig {
    /// `delta_max` from the configured `p_min` (see the module docs).
    pub fn delta_max(&self) -> f32 {
        delta_max(self.p_min as f64, self.p_ref as f64) as f32
    }

    /// Rejects values the bias cannot use, naming the key.
    pub fn validate(&self) -> Result<(), crate::ControllerError> {
        let bad = |field: &str, msg: &str| {
            Err(crate::ControllerError::Config {
                field: format!("bias.{field}"),
                msg: msg.into(),
            })
        };
        if !(self.p_min.is_finite() && (0.0..1.0).contains(&self.p_min)) {
            return bad("p_min", "must be in [0, 1)");
        }
        if !(self.p_ref.is_finite() && self.p_ref > 0.0 && self.p_ref < 1.0) {
            return bad("p_ref", "must be in (0, 1)");
        }
        Ok(())
    }
}

/// The reference's `_compute_new_action_delta_max`: the log-odds ratio
/// `ln(p_min (1 - p_ref) / (p_ref (1 - p_min)))`, both clamped to `[1e-8, 1 - 1e-8]`.
pub fn delta_max(p_min: f64, p_ref: f64) -> f64 {
    let eps = 1e-8;
    let p = p_min.clamp(eps, 1.0 - eps);
    let r = p_ref.clamp(eps, 1.0 - eps);
    ((p * (1.0 - r)) / (r * (1.0 - p))).ln()
}

/// The bias parameters of one decision: which skills are new, the target, the cap and the
/// decay scale in force at rollout. [`BiasSpec::logit_bias`] turns logits into the bias.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BiasSpec {
    pub new_mask: Vec<bool>,
    pub p_min: f32,
    pub delta_max: f32,
    pub scale: f32,
}

impl BiasSpec {
    /// The additive bias for (unbiased) `logits`: `scale * clamp(ln(p_min / (p_new + 1e-8)), 0,
    /// delta_max)` on the new skills when `p_new < p_min`, zeros otherwise (also when `p_min`,
    /// `delta_max` or `scale` is not positive, no skill is new, or the mask length differs).
    pub fn logit_bias(&self, logits: &[f32]) -> Vec<f32> {
        let mut out = vec![0.0f32; logits.len()];
        if self.p_min <= 0.0 || self.delta_max <= 0.0 || self.scale <= 0.0 {
            return out;
        }
        if self.new_mask.len() != logits.len() || !self.new_mask.iter().any(|&m| m) {
            return out;
        }
        let l64: Vec<f64> = logits.iter().map(|&x| x as f64).collect();
        let lp = crate::plackett_luce::log_softmax_f64(&l64);
        let p_new: f64 = lp
            .iter()
            .zip(&self.new_mask)
            .filter(|(_, &m)| m)
            .map(|(l, _)| l.exp())
            .sum();
        let d = new_skill_delta(
            p_new,
            self.p_min as f64,
            self.delta_max as f64,
            self.scale as f64,
        ) as f32;
        if d != 0.0 {
            for (o, &m) in out.iter_mut().zip(&self.new_mask) {
                if m {
                    *o = d;
                }
            }
        }
        out
    }
}

/// `scale * clamp(ln(p_min / (p_new + 1e-8)), 0, delta_max)` when `p_new < p_min`, else 0.
pub fn new_skill_delta(p_new: f64, p_min: f64, delta_max: f64, scale: f64) -> f64 {
    if p_min <= 0.0 || delta_max <= 0.0 || scale <= 0.0 || p_new >= p_min || p_new.is_nan() {
        return 0.0;
    }
    (p_min / (p_new + P_NEW_EPS)).ln().clamp(0.0, delta_max) * scale
}

/// The exploration bias in force for one bank version: which skills are new, and since when.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewSkillBias {
    /// `new_mask[i]` is true when skill `i` (same order as the skill embeddings) is new or changed.
    pub new_mask: Vec<bool>,
    /// Controller update count (`Controller::updates()`) when the bank changed.
    pub start_update: u64,
    /// Configured `p_min`.
    pub p_min: f32,
    /// Decay length in updates.
    pub bias_steps: u64,
    /// Upper bound of delta, derived from the configured `p_min`.
    pub delta_max: f32,
    /// False disables the bias entirely.
    pub enabled: bool,
    /// How the PPO update re-evaluates it.
    #[serde(default)]
    pub reeval: BiasReeval,
}

impl NewSkillBias {
    /// A bias for the skills flagged in `new_mask`, starting at update `start_update`.
    pub fn new(new_mask: Vec<bool>, start_update: u64, cfg: &BiasConfig) -> Self {
        Self {
            new_mask,
            start_update,
            p_min: cfg.p_min,
            bias_steps: cfg.bias_steps,
            delta_max: cfg.delta_max(),
            enabled: cfg.enabled,
            reeval: cfg.reeval,
        }
    }

    /// Linear decay factor in [0, 1] at controller update `update`: the reference's
    /// `max(0, 1 - step / bias_steps)` with `step` the updates since the bank change
    /// (0 when `bias_steps` is 0).
    pub fn decay(&self, update: u64) -> f32 {
        if self.bias_steps == 0 {
            return 0.0;
        }
        let elapsed = update.saturating_sub(self.start_update) as f64;
        (1.0 - elapsed / self.bias_steps as f64).max(0.0) as f32
    }

    /// The bias parameters in force at controller update `update`, or None when the bias is off
    /// (disabled, fully decayed, no new skill, or a mask for `n` skills does not fit).
    pub fn spec(&self, n: usize, update: u64) -> Option<BiasSpec> {
        let scale = self.decay(update);
        if !self.enabled
            || scale <= 0.0
            || self.new_mask.len() != n
            || !self.new_mask.iter().any(|&m| m)
        {
            return None;
        }
        Some(BiasSpec {
            new_mask: self.new_mask.clone(),
            p_min: self.p_min,
            delta_max: self.delta_max,
            scale,
        })
    }

    /// The additive logit bias per skill for a state with unbiased `logits` at update `update`
    /// (zeros when [`spec`](Self::spec) is None).
    pub fn logit_bias(&self, logits: &[f32], update: u64) -> Vec<f32> {
        match self.spec(logits.len(), update) {
            Some(s) => s.logit_bias(logits),
            None => vec![0.0; logits.len()],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn softmax(l: &[f32]) -> Vec<f32> {
        let m = l.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
        let e: Vec<f32> = l.iter().map(|x| (x - m).exp()).collect();
        let s: f32 = e.iter().sum();
        e.iter().map(|x| x / s).collect()
    }

    #[test]
    fn delta_formula_and_clamp() {
        let d = new_skill_delta(0.1, 0.3, 10.0, 1.0);
        assert!((d - (0.3f64 / (0.1 + 1e-8)).ln()).abs() < 1e-12);
        assert_eq!(new_skill_delta(0.5, 0.3, 10.0, 1.0), 0.0);
        assert_eq!(new_skill_delta(1e-9, 0.3, 2.0, 1.0), 2.0);
        assert_eq!(new_skill_delta(1e-9, 0.3, 2.0, 0.5), 1.0);
        assert_eq!(new_skill_delta(0.1, 0.3, 2.0, 0.0), 0.0);
        assert_eq!(new_skill_delta(0.1, 0.3, 0.0, 1.0), 0.0);
    }

    /// Issue 11, fix 2: delta_max is the log-odds ratio against p_ref = 0.01 (the old code
    /// used ln(p_min / 0.01) = ln 30 = 3.401 for p_min = 0.3; the reference gives 3.748).
    #[test]
    fn delta_max_is_the_log_odds_ratio_of_the_configured_p_min() {
        let a = BiasConfig::default();
        let want = (0.3f64 * 0.99 / (0.01 * 0.7)).ln();
        assert!(
            (a.delta_max() as f64 - want).abs() < 1e-6,
            "{}",
            a.delta_max()
        );
        assert!((a.delta_max() - 30f32.ln()).abs() > 0.3);
        let b = BiasConfig {
            p_min: 0.6,
            ..BiasConfig::default()
        };
        let want_b = (0.6f64 * 0.99 / (0.01 * 0.4)).ln();
        assert!((b.delta_max() as f64 - want_b).abs() < 1e-5);
        // The eps clamping keeps the extremes finite.
        assert!(delta_max(0.0, 0.01).is_finite() && delta_max(0.0, 0.01) < 0.0);
        assert!(delta_max(1.0, 0.01).is_finite());
        assert!(BiasConfig {
            p_min: 1.5,
            ..BiasConfig::default()
        }
        .validate()
        .unwrap_err()
        .to_string()
        .contains("bias.p_min"));
    }

    #[test]
    fn bias_lifts_new_skills_and_decays_linearly() {
        let cfg = BiasConfig::default();
        let logits = [2.0f32, 1.5, 1.0, -1.0, -1.5];
        let probs = softmax(&logits);
        let mask = vec![false, false, false, true, true];
        let b = NewSkillBias::new(mask.clone(), 10, &cfg);
        let bias = b.logit_bias(&logits, 10);
        assert_eq!(bias[0], 0.0);
        assert!(bias[3] > 0.0 && bias[3] == bias[4]);
        let p_new = (probs[3] + probs[4]) as f64;
        assert!((bias[3] as f64 - (0.3 / (p_new + 1e-8)).ln()).abs() < 1e-5);
        // With the unclamped delta e^d = p_min / p_new, the biased new-skill mass is
        // p_min / (1 - p_new + p_min).
        let biased: Vec<f32> = logits.iter().zip(&bias).map(|(l, b)| l + b).collect();
        let p = softmax(&biased);
        let want = cfg.p_min / (1.0 - p_new as f32 + cfg.p_min);
        assert!((p[3] + p[4] - want).abs() < 1e-5);
        // Half-way through the decay, half the delta; after bias_steps, none.
        let half = b.logit_bias(&logits, 10 + cfg.bias_steps / 2);
        assert!((half[3] - bias[3] * 0.5).abs() < 1e-5);
        assert!(b.spec(5, 10 + cfg.bias_steps).is_none());
        // The reference's schedule for --new-action-bias-steps 25: 1, 0.96, ..., 0.04, then off.
        let b25 = NewSkillBias::new(
            mask.clone(),
            0,
            &BiasConfig {
                bias_steps: 25,
                ..cfg.clone()
            },
        );
        for s in 0..25u64 {
            assert!((b25.decay(s) as f64 - (1.0 - s as f64 / 25.0)).abs() < 1e-7);
        }
        assert_eq!(b25.decay(25), 0.0);
        // Disabled, already likely enough, or a mask that does not fit: no bias.
        let off = NewSkillBias::new(
            mask.clone(),
            10,
            &BiasConfig {
                enabled: false,
                ..cfg.clone()
            },
        );
        assert!(off.logit_bias(&logits, 10).iter().all(|&x| x == 0.0));
        let likely = NewSkillBias::new(vec![true, false, false, false, false], 10, &cfg);
        assert!(likely.logit_bias(&logits, 10).iter().all(|&x| x == 0.0));
        assert!(b.logit_bias(&logits[..3], 10).iter().all(|&x| x == 0.0));
    }
}
