//! Snapshots of the best stage, rollback, early stopping and the failed-approaches list.

use memskill_core::{ReleaseKind, ReleaseRecord, Skill, SkillBank, SkillStatus};
use serde::{Deserialize, Serialize};

use crate::edit::clip;

/// Most entries kept in the "failed approaches, do not repeat" list (oldest dropped first).
pub const MAX_FAILED_APPROACHES: usize = 20;

/// Mean of the last 25% of a stage's batch rewards (`floor(n / 4)`, at least one batch).
/// NaN for an empty slice (never counts as an improvement).
pub fn stabilised_reward(batch_rewards: &[f64]) -> f64 {
    let n = batch_rewards.len();
    if n == 0 {
        return f64::NAN;
    }
    let k = (n / 4).max(1);
    batch_rewards[n - k..].iter().sum::<f64>() / k as f64
}

mod hex_bytes {
    use serde::{Deserialize, Deserializer, Serializer};
    pub fn serialize<S: Serializer>(b: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&hex::encode(b))
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let s = String::deserialize(d)?;
        hex::decode(s).map_err(serde::de::Error::custom)
    }
}

/// The state worth returning to: the bank and the controller (weights, optimiser, counters)
/// at the end of the best stage. `controller_state` is opaque bytes (hex in JSON).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    pub stage: u32,
    pub reward: f64,
    pub bank: SkillBank,
    #[serde(with = "hex_bytes")]
    pub controller_state: Vec<u8>,
}

/// Early-stopping settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct EvolutionConfig {
    /// Stop after this many stages in a row without improvement.
    pub patience: u32,
    /// Stop after this many stages in total.
    pub max_evolves: u32,
}

impl Default for EvolutionConfig {
    fn default() -> Self {
        Self {
            patience: 5,
            max_evolves: 20,
        }
    }
}

/// What the trainer must do after a stage.
#[derive(Debug, Clone, PartialEq)]
pub enum StageDecision {
    /// The stage beat the best snapshot and is the new best. Its candidates were promoted in
    /// the snapshot: continue from [`Evolution::best_bank`].
    Improved,
    /// Not better: continue from these (the best snapshot's bank and controller state, exactly).
    RolledBack {
        bank: SkillBank,
        controller_state: Vec<u8>,
    },
}

/// Evolution bookkeeping across designer stages (checkpointed with serde).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Evolution {
    pub best: Option<Snapshot>,
    pub stages_without_improvement: u32,
    pub failed_approaches: Vec<String>,
    pub cfg: EvolutionConfig,
    /// Stages evaluated so far.
    #[serde(default)]
    pub stages_seen: u32,
    /// Skills added in stages that were rolled back (status archived), for the record.
    #[serde(default)]
    pub archived: Vec<Skill>,
    /// Release records of rolled-back changes (kind archived, with rewards before/after).
    #[serde(default)]
    pub archive_log: Vec<ReleaseRecord>,
}

fn pending(r: &ReleaseRecord) -> bool {
    matches!(r.kind, ReleaseKind::Added | ReleaseKind::Refined) && r.reward_after.is_none()
}

impl Evolution {
    pub fn new(cfg: EvolutionConfig) -> Self {
        Self {
            cfg,
            ..Default::default()
        }
    }

    /// The best snapshot's bank, if any.
    pub fn best_bank(&self) -> Option<&SkillBank> {
        self.best.as_ref().map(|s| &s.bank)
    }

    /// Compare the stage's stabilised `reward` with the best snapshot.
    ///
    /// Better (or first stage): snapshot `bank` (candidates promoted to active, pending release
    /// records filled with reward before/after) and `controller_state`. Not better (or a
    /// non-finite reward): count a stage without improvement, add the stage's changes (release
    /// records without `reward_after`) to the failed approaches, archive skills the best bank
    /// lacks, and return the best snapshot's bank and controller bytes unchanged.
    pub fn on_stage_end(
        &mut self,
        reward: f64,
        bank: &SkillBank,
        controller_state: &[u8],
        stage: u32,
    ) -> StageDecision {
        self.stages_seen += 1;
        let prev = self.best.as_ref().map(|b| b.reward);
        let improved = match prev {
            None => true,
            Some(p) => reward.is_finite() && reward > p,
        };
        if improved {
            let stored = if reward.is_finite() { reward } else { f64::MIN };
            let mut b = bank.clone();
            for r in b.releases.iter_mut().filter(|r| pending(r)) {
                r.reward_before = r.reward_before.or(prev);
                r.reward_after = Some(stored);
            }
            let mut promoted = Vec::new();
            for s in b.skills_mut() {
                if s.status == SkillStatus::Candidate {
                    s.status = SkillStatus::Active;
                    promoted.push((s.name.clone(), s.version));
                }
            }
            for (name, v) in promoted {
                b.releases.push(ReleaseRecord {
                    skill: name,
                    kind: ReleaseKind::Promoted,
                    from_version: Some(v),
                    to_version: v,
                    diff: String::new(),
                    hard_cases: Vec::new(),
                    reward_before: prev,
                    reward_after: Some(stored),
                    stage,
                    note: "stage beat the best snapshot".into(),
                });
            }
            self.best = Some(Snapshot {
                stage,
                reward: stored,
                bank: b,
                controller_state: controller_state.to_vec(),
            });
            self.stages_without_improvement = 0;
            return StageDecision::Improved;
        }
        self.stages_without_improvement += 1;
        let best = self.best.as_ref().expect("prev is Some, so best is Some");
        for r in bank.releases.iter().filter(|r| pending(r)) {
            let what = match r.kind {
                ReleaseKind::Added => {
                    let d = bank
                        .get(&r.skill)
                        .map(|s| clip(&s.description, 160))
                        .unwrap_or_default();
                    format!("add `{}`: {d}", r.skill)
                }
                _ => {
                    let added: Vec<&str> = r
                        .diff
                        .lines()
                        .filter_map(|l| l.strip_prefix("+ "))
                        .filter(|l| !l.trim().is_empty())
                        .collect();
                    format!("refine `{}`: {}", r.skill, clip(&added.join(" "), 160))
                }
            };
            self.failed_approaches.push(format!(
                "stage {}: {what} (reward {reward:.4} did not beat {:.4})",
                r.stage, best.reward
            ));
            let mut rec = r.clone();
            rec.kind = ReleaseKind::Archived;
            rec.reward_before = Some(best.reward);
            rec.reward_after = reward.is_finite().then_some(reward);
            rec.note = format!("rolled back to the stage {} snapshot", best.stage);
            self.archive_log.push(rec);
        }
        for s in bank.skills() {
            if !best.bank.contains(&s.name)
                && !self
                    .archived
                    .iter()
                    .any(|a| a.name == s.name && a.version == s.version)
            {
                let mut a = s.clone();
                a.status = SkillStatus::Archived;
                self.archived.push(a);
            }
        }
        if self.failed_approaches.len() > MAX_FAILED_APPROACHES {
            let excess = self.failed_approaches.len() - MAX_FAILED_APPROACHES;
            self.failed_approaches.drain(..excess);
        }
        StageDecision::RolledBack {
            bank: best.bank.clone(),
            controller_state: best.controller_state.clone(),
        }
    }

    /// Stop after `patience` stages without improvement or `max_evolves` stages.
    pub fn should_stop(&self) -> bool {
        self.stages_without_improvement >= self.cfg.patience
            || self.stages_seen >= self.cfg.max_evolves
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stabilised_reward_last_quarter() {
        assert!(stabilised_reward(&[]).is_nan());
        assert_eq!(stabilised_reward(&[0.3]), 0.3);
        assert_eq!(stabilised_reward(&[0.0, 0.0, 1.0]), 1.0);
        assert_eq!(
            stabilised_reward(&[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.5, 1.0]),
            0.75
        );
    }

    #[test]
    fn patience_and_max_evolves() {
        let bank = SkillBank::seed();
        let mut ev = Evolution::new(EvolutionConfig {
            patience: 2,
            max_evolves: 4,
        });
        assert_eq!(
            ev.on_stage_end(0.5, &bank, b"a", 0),
            StageDecision::Improved
        );
        assert!(!ev.should_stop());
        assert!(matches!(
            ev.on_stage_end(0.4, &bank, b"b", 1),
            StageDecision::RolledBack { .. }
        ));
        assert!(matches!(
            ev.on_stage_end(f64::NAN, &bank, b"c", 2),
            StageDecision::RolledBack { .. }
        ));
        assert!(ev.should_stop(), "patience 2 reached");
        let mut ev2 = Evolution::new(EvolutionConfig {
            patience: 10,
            max_evolves: 3,
        });
        for (i, r) in [0.1, 0.2, 0.3].iter().enumerate() {
            assert_eq!(
                ev2.on_stage_end(*r, &bank, b"x", i as u32),
                StageDecision::Improved
            );
        }
        assert!(ev2.should_stop(), "max_evolves reached");
        let j = serde_json::to_string(&ev).unwrap();
        assert!(j.contains("\"controller_state\":\"61\""), "{j}");
        assert_eq!(serde_json::from_str::<Evolution>(&j).unwrap(), ev);
    }
}
