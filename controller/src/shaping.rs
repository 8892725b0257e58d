//! Process-reward shaping and terminal-reward redistribution, as the reference (MemSkill
//! cda41f3: src/trainer.py `_build_process_reward_meta` / `_compute_process_reward_from_meta`,
//! src/controller.py `PPOBuffer.finish_episode`).
//!
//! For an episode of `L` spans with task reward `R`:
//! * process reward of a span: `S` = the action types of the chosen skills, `A` = the types of
//!   the executor results that parsed successfully.
//!   - no successful result (the call failed, or the reply parsed to nothing usable):
//!     `-fail_penalty / L`;
//!   - `S = A`: `quota / L`, times `noop_factor` when `S = {noop}`;
//!   - `I = S ∩ A` not empty: `quota / L * |I| / |S ∪ A|`, times `noop_factor` when `I = {noop}`;
//!   - otherwise (mismatch): `-quota / L`.
//! * terminal redistribution (`L > 1`): `last = terminal_share * R` goes to the last span, and
//!   `R - last` is spread over all spans with weights `decay^(L-1-i)` normalised to sum to one;
//!   with `L = 1` (or `enabled = false`) the last span gets `R`.
//!
//! Computed in `f64` (as the reference's Python floats) and returned as `f32`.

use memskill_core::ActionKind;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// Reward shaping configuration (reference values by default).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ShapingConfig {
    /// Total process-reward budget per episode (reference `process_budget`, 0.10), divided by L.
    pub quota: f32,
    /// Multiplier of a NOOP-only match (reference `noop_match_scale`, 0.2).
    pub noop_factor: f32,
    /// Penalty budget of a span without a successful result (reference `failure_budget`,
    /// 0.05), divided by L.
    pub fail_penalty: f32,
    /// Share of the task reward given to the last span (reference `final_reward_last_ratio`,
    /// 0.6; clamped to [0, 1]).
    pub terminal_share: f32,
    /// Geometric weight of the spread share: span i gets weight `decay^(L-1-i)` (reference
    /// `reward_redistribution_decay`, 0.9).
    pub decay: f32,
    /// Process rewards and redistribution (reference `redistribute_reward = True`; false gives
    /// the whole task reward to the last span and no process reward).
    pub enabled: bool,
}

impl Default for ShapingConfig {
    fn default() -> Self {
        Self {
            quota: 0.10,
            noop_factor: 0.2,
            fail_penalty: 0.05,
            terminal_share: 0.6,
            decay: 0.9,
            enabled: true,
        }
    }
}

impl ShapingConfig {
    /// Rejects values shaping cannot use, naming the key.
    pub fn validate(&self) -> Result<(), crate::ControllerError> {
        for (field, v) in [
            ("quota", self.quota),
            ("noop_factor", self.noop_factor),
            ("fail_penalty", self.fail_penalty),
            ("terminal_share", self.terminal_share),
            ("decay", self.decay),
        ] {
            if !v.is_finite() {
                return Err(crate::ControllerError::Config {
                    field: format!("shaping.{field}"),
                    msg: "must be a finite number".into(),
                });
            }
        }
        Ok(())
    }
}

/// What happened on one span: the action types of the chosen skills, the action types of the
/// executor results that parsed successfully (one entry per result, NOOP included), and whether
/// the executor call itself failed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct SpanOutcome {
    pub chosen: Vec<ActionKind>,
    /// Kinds of the successfully parsed results; empty = no successful result.
    pub executed: Vec<ActionKind>,
    /// The executor call returned an error (no reply at all).
    pub all_calls_failed: bool,
}

fn kinds(xs: &[ActionKind]) -> BTreeSet<&'static str> {
    xs.iter().map(|a| a.as_str()).collect()
}

/// Process reward of one span in an episode of `len` spans (see the module docs).
pub fn process_reward(o: &SpanOutcome, len: usize, cfg: &ShapingConfig) -> f32 {
    process_reward_f64(o, len, cfg) as f32
}

fn process_reward_f64(o: &SpanOutcome, len: usize, cfg: &ShapingConfig) -> f64 {
    let l = len.max(1) as f64;
    let quota = cfg.quota as f64 / l;
    if o.all_calls_failed || o.executed.is_empty() {
        return -(cfg.fail_penalty as f64 / l);
    }
    let noop = ActionKind::Noop.as_str();
    let s = kinds(&o.chosen);
    let a = kinds(&o.executed);
    if s == a {
        return if s.len() == 1 && s.contains(noop) {
            cfg.noop_factor as f64 * quota
        } else {
            quota
        };
    }
    let inter: BTreeSet<&str> = s.intersection(&a).copied().collect();
    if !inter.is_empty() {
        let union = s.union(&a).count();
        let overlap = quota * (inter.len() as f64 / union as f64);
        return if inter.len() == 1 && inter.contains(noop) {
            cfg.noop_factor as f64 * overlap
        } else {
            overlap
        };
    }
    -quota
}

/// Per-span rewards for an episode: process rewards plus the redistributed task reward.
pub fn shape_rewards(outcomes: &[SpanOutcome], task_reward: f32, cfg: &ShapingConfig) -> Vec<f32> {
    let n = outcomes.len();
    if n == 0 {
        return Vec::new();
    }
    if !cfg.enabled {
        let mut out = vec![0.0f32; n];
        out[n - 1] = task_reward;
        return out;
    }
    let process: Vec<f64> = outcomes
        .iter()
        .map(|o| process_reward_f64(o, n, cfg))
        .collect();
    redistribute(
        &process,
        task_reward as f64,
        cfg.decay as f64,
        cfg.terminal_share as f64,
    )
    .into_iter()
    .map(|x| x as f32)
    .collect()
}

/// The reference's `PPOBuffer.finish_episode(final_reward, redistribute=True, decay, last_ratio)`
/// on step rewards `rewards` (one episode), in `f64`.
pub fn redistribute(rewards: &[f64], final_reward: f64, decay: f64, last_ratio: f64) -> Vec<f64> {
    let mut out = rewards.to_vec();
    let n = out.len();
    if n == 0 {
        return out;
    }
    if n > 1 {
        let last = final_reward * last_ratio.clamp(0.0, 1.0);
        let remaining = final_reward - last;
        if remaining != 0.0 {
            let w: Vec<f64> = (0..n).map(|i| decay.powi((n - 1 - i) as i32)).collect();
            let sum: f64 = w.iter().sum();
            for (o, wi) in out.iter_mut().zip(&w) {
                *o += remaining * (wi / sum);
            }
        }
        out[n - 1] += last;
    } else {
        out[n - 1] += final_reward;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use ActionKind::*;

    fn o(c: &[ActionKind], e: &[ActionKind], failed: bool) -> SpanOutcome {
        SpanOutcome {
            chosen: c.to_vec(),
            executed: e.to_vec(),
            all_calls_failed: failed,
        }
    }

    #[test]
    fn process_reward_cases() {
        let cfg = ShapingConfig::default();
        let l = 4;
        let pr = |c: &[ActionKind], e: &[ActionKind], f: bool| process_reward(&o(c, e, f), l, &cfg);
        // exact match (sets)
        assert!((pr(&[Insert, Update], &[Update, Insert, Insert], false) - 0.025).abs() < 1e-7);
        // partial: {Insert, Update} vs {Insert} -> 1/2
        assert!((pr(&[Insert, Update], &[Insert], false) - 0.0125).abs() < 1e-7);
        // mismatch
        assert!((pr(&[Delete], &[Insert], false) + 0.025).abs() < 1e-7);
        // NOOP chosen and executed -> x0.2
        assert!((pr(&[Noop], &[Noop], false) - 0.005).abs() < 1e-7);
        // all calls failed
        assert!((pr(&[Insert], &[Insert], true) + 0.0125).abs() < 1e-7);
    }

    /// Issue 11, fix 4: a reply that parses to nothing is a failure (-fail_penalty / L), not an
    /// executed NOOP (the old code scored it +quota * noop_factor / L for a chosen NOOP skill
    /// and -quota / L otherwise).
    #[test]
    fn nothing_parsed_is_a_failure_not_a_noop() {
        let cfg = ShapingConfig::default();
        for chosen in [&[Noop][..], &[Insert][..], &[Insert, Noop][..]] {
            let r = process_reward(&o(chosen, &[], false), 4, &cfg);
            assert!((r + 0.0125).abs() < 1e-7, "{chosen:?}: {r}");
        }
    }

    /// The NOOP factor applies when the *intersection* is {noop} (reference), not when only
    /// noops were executed.
    #[test]
    fn noop_factor_follows_the_intersection() {
        let cfg = ShapingConfig::default();
        // S = {noop}, A = {noop, insert}: I = {noop}, |U| = 2 -> 0.2 * 0.025 / 2
        let r = process_reward(&o(&[Noop], &[Noop, Insert], false), 4, &cfg);
        assert!((r - 0.0025).abs() < 1e-8, "{r}");
        // S = {noop, insert}, A = {noop}: I = {noop} -> 0.2 * 0.025 / 2
        let r = process_reward(&o(&[Noop, Insert], &[Noop], false), 4, &cfg);
        assert!((r - 0.0025).abs() < 1e-8, "{r}");
        // S = {insert, update}, A = {insert, noop}: I = {insert} -> 0.025 / 3, no factor
        let r = process_reward(&o(&[Insert, Update], &[Insert, Noop], false), 4, &cfg);
        assert!((r - 0.025 / 3.0).abs() < 1e-8, "{r}");
    }

    #[test]
    fn redistribution_sums_to_task_reward_plus_process() {
        let cfg = ShapingConfig::default();
        let outs = vec![o(&[Insert], &[Insert], false); 3];
        let r = shape_rewards(&outs, 1.0, &cfg);
        let process = 3.0 * 0.1 / 3.0;
        assert!((r.iter().sum::<f32>() - (1.0 + process)).abs() < 1e-6);
        // weights 0.81, 0.9, 1 over 2.71 of the 0.4 share; last span also gets 0.6.
        let w = [0.81f32, 0.9, 1.0];
        for i in 0..3 {
            let mut want = 0.1 / 3.0 + 0.4 * w[i] / 2.71;
            if i == 2 {
                want += 0.6;
            }
            assert!((r[i] - want).abs() < 1e-6, "span {i}: {} vs {want}", r[i]);
        }
        assert!(r[0] < r[1] && r[1] < r[2]);
    }

    #[test]
    fn disabled_and_empty() {
        let cfg = ShapingConfig {
            enabled: false,
            ..ShapingConfig::default()
        };
        let outs = vec![o(&[Insert], &[Delete], true); 3];
        assert_eq!(shape_rewards(&outs, 0.7, &cfg), vec![0.0, 0.0, 0.7]);
        assert!(shape_rewards(&[], 1.0, &ShapingConfig::default()).is_empty());
        let one = shape_rewards(
            &[o(&[Insert], &[Insert], false)],
            0.5,
            &ShapingConfig::default(),
        );
        assert!((one[0] - (0.1 + 0.5)).abs() < 1e-6);
    }
}
