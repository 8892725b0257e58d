//! New-skill exploration bias (issue 3, item 4).
//!
//! After the designer adds or changes skills, the policy has not yet learned to pick them. If
//! the total (unbiased) probability `p_new` of the new skills in a state is below `p_min`, the
//! logits of the new skills get `delta = clamp(ln(p_min / p_new), 0, delta_max)`, scaled by a
//! linear decay from 1 to 0 over `bias_steps` PPO updates after the bank change. The bias used at
//! rollout is stored in `Transition::bias` and added again at PPO re-evaluation, so the ratio
//! is computed under the same distribution; `Greedy` selection never applies it.
//!
//! Deviation from the reference (ViktorAxelsen/MemSkill), as the issue asks: the reference
//! derives `delta_max` once from the default `p_min`; here [`BiasConfig::delta_max`] derives it
//! from the configured `p_min` (`ln(p_min / p_floor)`).

use serde::{Deserialize, Serialize};

/// Configuration of the new-skill exploration bias.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct BiasConfig {
    /// Target minimum total probability of the new skills (0.30).
    pub p_min: f32,
    /// Number of PPO updates over which the bias decays linearly to zero (50).
    pub bias_steps: u64,
    /// Master switch.
    pub enabled: bool,
    /// Smallest `p_new` the bias fully compensates: `delta_max = ln(p_min / p_floor)` (0.01).
    pub p_floor: f32,
}

impl Default for BiasConfig {
    fn default() -> Self {
        Self {
            p_min: 0.30,
            bias_steps: 50,
            enabled: true,
            p_floor: 0.01,
        }
    }
}

impl BiasConfig {
    /// `delta_max = max(ln(p_min / p_floor), 0)`, from the configured `p_min`.
    pub fn delta_max(&self) -> f32 {
        if self.p_min <= 0.0 || self.p_floor <= 0.0 {
            return 0.0;
        }
        (self.p_min / self.p_floor).ln().max(0.0)
    }
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
        }
    }

    /// Linear decay factor in [0, 1] at controller update `update`.
    pub fn decay(&self, update: u64) -> f32 {
        if self.bias_steps == 0 {
            return 0.0;
        }
        let elapsed = update.saturating_sub(self.start_update) as f32;
        (1.0 - elapsed / self.bias_steps as f32).clamp(0.0, 1.0)
    }

    /// The additive logit bias per skill for a state whose unbiased softmax is `probs`.
    /// All zeros when disabled, decayed, when no skill is new, when the mask length does not
    /// match, or when the new skills already hold at least `p_min`.
    pub fn logit_bias(&self, probs: &[f32], update: u64) -> Vec<f32> {
        let mut out = vec![0.0f32; probs.len()];
        if !self.enabled || self.new_mask.len() != probs.len() {
            return out;
        }
        let decay = self.decay(update);
        if decay <= 0.0 {
            return out;
        }
        let p_new: f32 = probs
            .iter()
            .zip(&self.new_mask)
            .filter(|(_, &m)| m)
            .map(|(p, _)| *p)
            .sum();
        if !self.new_mask.iter().any(|&m| m) || p_new >= self.p_min {
            return out;
        }
        let delta = new_skill_delta(p_new, self.p_min, self.delta_max) * decay;
        for (o, &m) in out.iter_mut().zip(&self.new_mask) {
            if m {
                *o = delta;
            }
        }
        out
    }
}

/// `clamp(ln(p_min / p_new), 0, delta_max)`; `p_new` is floored at 1e-12.
pub fn new_skill_delta(p_new: f32, p_min: f32, delta_max: f32) -> f32 {
    if p_min <= 0.0 {
        return 0.0;
    }
    (p_min / p_new.max(1e-12))
        .ln()
        .clamp(0.0, delta_max.max(0.0))
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
        assert!((new_skill_delta(0.1, 0.3, 10.0) - 3f32.ln()).abs() < 1e-6);
        assert_eq!(new_skill_delta(0.5, 0.3, 10.0), 0.0);
        assert_eq!(new_skill_delta(1e-9, 0.3, 2.0), 2.0);
    }

    #[test]
    fn delta_max_follows_configured_p_min() {
        let a = BiasConfig::default();
        let b = BiasConfig {
            p_min: 0.6,
            ..BiasConfig::default()
        };
        assert!((a.delta_max() - 30f32.ln()).abs() < 1e-5);
        assert!((b.delta_max() - 60f32.ln()).abs() < 1e-5);
        assert!(b.delta_max() > a.delta_max());
    }

    #[test]
    fn bias_lifts_new_skills_to_p_min_and_decays_linearly() {
        let cfg = BiasConfig::default();
        let logits = [2.0f32, 1.5, 1.0, -1.0, -1.5];
        let probs = softmax(&logits);
        let mask = vec![false, false, false, true, true];
        let b = NewSkillBias::new(mask.clone(), 10, &cfg);
        let bias = b.logit_bias(&probs, 10);
        assert_eq!(bias[0], 0.0);
        assert!(bias[3] > 0.0 && bias[3] == bias[4]);
        // With the unclamped delta e^d = p_min / p_new, the biased new-skill mass is
        // p_new e^d / (1 - p_new + p_new e^d) = p_min / (1 - p_new + p_min).
        let p_new = probs[3] + probs[4];
        assert!((bias[3] - (cfg.p_min / p_new).ln()).abs() < 1e-5);
        let biased: Vec<f32> = logits.iter().zip(&bias).map(|(l, b)| l + b).collect();
        let p = softmax(&biased);
        let want = cfg.p_min / (1.0 - p_new + cfg.p_min);
        assert!(
            (p[3] + p[4] - want).abs() < 1e-5,
            "p_new after bias {} vs {want}",
            p[3] + p[4]
        );
        assert!(p[3] + p[4] > 2.0 * p_new);
        // Half-way through the decay, half the delta; after bias_steps, none.
        let half = b.logit_bias(&probs, 10 + cfg.bias_steps / 2);
        assert!((half[3] - bias[3] * 0.5).abs() < 1e-5);
        assert!(b
            .logit_bias(&probs, 10 + cfg.bias_steps)
            .iter()
            .all(|&x| x == 0.0));
        // Disabled or already likely enough: no bias.
        let off = NewSkillBias::new(
            mask.clone(),
            10,
            &BiasConfig {
                enabled: false,
                ..cfg.clone()
            },
        );
        assert!(off.logit_bias(&probs, 10).iter().all(|&x| x == 0.0));
        let likely = NewSkillBias::new(vec![true, false, false, false, false], 10, &cfg);
        assert!(likely.logit_bias(&probs, 10).iter().all(|&x| x == 0.0));
        // Mismatched mask length: no bias rather than a panic.
        assert!(b.logit_bias(&probs[..3], 10).iter().all(|&x| x == 0.0));
    }
}
