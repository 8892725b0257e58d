//! Process-reward shaping and terminal-reward redistribution (issue 3, item 5; follows the
//! description of the reference ViktorAxelsen/MemSkill given in the issue).
//!
//! For an episode of `L` spans with task reward `R`:
//! * process reward of span i (when `enabled`): with `C` the action types of the chosen skills
//!   and `E` the executed action types (empty = noop), `J = |C ∩ E| / |C ∪ E|`;
//!   `J > 0` gives `quota * J / L` (so an exact match gives `quota / L`), multiplied by
//!   `noop_factor` when only noops were executed; `J = 0` (mismatch) gives `-quota / L`;
//!   a span where every executor call failed gets `-fail_penalty / L` instead.
//! * terminal redistribution: `terminal_share * R` goes to the last span, and
//!   `(1 - terminal_share) * R` is spread over all spans with weights `decay^(L-1-i)`
//!   normalised to sum to one.
//!
//! With `enabled = false` the last span gets `R` and all others 0.

use memskill_core::ActionKind;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// Reward shaping configuration (reference values by default).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ShapingConfig {
    /// Total process-reward budget per episode (0.10), divided by the number of spans.
    pub quota: f32,
    /// Multiplier of the process reward when only noops were executed (0.2).
    pub noop_factor: f32,
    /// Penalty budget when every executor call of a span failed (0.05), divided by L.
    pub fail_penalty: f32,
    /// Share of the task reward given to the last span (0.6).
    pub terminal_share: f32,
    /// Geometric weight of the spread share: span i gets weight `decay^(L-1-i)` (0.9).
    pub decay: f32,
    /// Master switch for process rewards and redistribution.
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

/// What happened on one span: the action types of the chosen skills, the action types the
/// executor actually performed, and whether every executor call failed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct SpanOutcome {
    pub chosen: Vec<ActionKind>,
    pub executed: Vec<ActionKind>,
    pub all_calls_failed: bool,
}

/// Jaccard similarity of the chosen and executed action-type sets (executed empty = {Noop}).
pub fn action_jaccard(chosen: &[ActionKind], executed: &[ActionKind]) -> f32 {
    let c: BTreeSet<&str> = chosen.iter().map(|a| a.as_str()).collect();
    let mut e: BTreeSet<&str> = executed.iter().map(|a| a.as_str()).collect();
    if e.is_empty() {
        e.insert(ActionKind::Noop.as_str());
    }
    let union = c.union(&e).count();
    if union == 0 {
        return 1.0;
    }
    c.intersection(&e).count() as f32 / union as f32
}

/// Process reward of one span in an episode of `len` spans.
pub fn process_reward(o: &SpanOutcome, len: usize, cfg: &ShapingConfig) -> f32 {
    let l = len.max(1) as f32;
    if o.all_calls_failed {
        return -cfg.fail_penalty / l;
    }
    let j = action_jaccard(&o.chosen, &o.executed);
    if j <= 0.0 {
        return -cfg.quota / l;
    }
    let noop_only = o.executed.iter().all(|a| *a == ActionKind::Noop);
    let r = cfg.quota * j / l;
    if noop_only {
        r * cfg.noop_factor
    } else {
        r
    }
}

/// Per-span rewards for an episode: process rewards plus the redistributed task reward.
pub fn shape_rewards(outcomes: &[SpanOutcome], task_reward: f32, cfg: &ShapingConfig) -> Vec<f32> {
    let n = outcomes.len();
    if n == 0 {
        return Vec::new();
    }
    let mut out = vec![0.0f32; n];
    if !cfg.enabled {
        out[n - 1] = task_reward;
        return out;
    }
    let weights: Vec<f32> = (0..n).map(|i| cfg.decay.powi((n - 1 - i) as i32)).collect();
    let wsum: f32 = weights.iter().sum();
    let spread = (1.0 - cfg.terminal_share) * task_reward;
    for i in 0..n {
        out[i] = process_reward(&outcomes[i], n, cfg);
        if wsum > 0.0 {
            out[i] += spread * weights[i] / wsum;
        }
    }
    out[n - 1] += cfg.terminal_share * task_reward;
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
        // exact match
        assert!(
            (process_reward(
                &o(&[Insert, Update], &[Update, Insert, Insert], false),
                l,
                &cfg
            ) - 0.025)
                .abs()
                < 1e-7
        );
        // partial: {Insert, Update} vs {Insert} -> J = 1/2
        assert!(
            (process_reward(&o(&[Insert, Update], &[Insert], false), l, &cfg) - 0.0125).abs()
                < 1e-7
        );
        // mismatch
        assert!((process_reward(&o(&[Delete], &[Insert], false), l, &cfg) + 0.025).abs() < 1e-7);
        // noop-only executed and chosen noop -> x0.2
        assert!((process_reward(&o(&[Noop], &[], false), l, &cfg) - 0.005).abs() < 1e-7);
        // chose insert but nothing executed: mismatch
        assert!((process_reward(&o(&[Insert], &[], false), l, &cfg) + 0.025).abs() < 1e-7);
        // all calls failed
        assert!((process_reward(&o(&[Insert], &[Insert], true), l, &cfg) + 0.0125).abs() < 1e-7);
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
