//! Snapshots of the best stage, rollback, early stopping, the stage reward and the feedback
//! on earlier changes (after the reference's `EvolutionSnapshotManager` and the outer loop
//! of `src/trainer.py`).

use memskill_core::{ReleaseKind, ReleaseRecord, Skill, SkillBank, SkillStatus};
use serde::{Deserialize, Serialize};

use crate::pool::HardCase;
use crate::text::clip;

/// Sum with numpy's pairwise summation (`np.add.reduce` on a contiguous float64 array:
/// eight running partial sums for blocks up to 128 values, halves above), so a mean equals
/// the reference's `np.mean` bit for bit.
pub fn np_sum(a: &[f64]) -> f64 {
    let n = a.len();
    if n < 8 {
        let mut res = 0.0;
        for &x in a {
            res += x;
        }
        res
    } else if n <= 128 {
        let mut r = [0.0f64; 8];
        r.copy_from_slice(&a[..8]);
        let mut i = 8;
        while i < n - (n % 8) {
            for (rj, x) in r.iter_mut().zip(&a[i..i + 8]) {
                *rj += x;
            }
            i += 8;
        }
        let mut res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        while i < n {
            res += a[i];
            i += 1;
        }
        res
    } else {
        let mut n2 = n / 2;
        n2 -= n2 % 8;
        np_sum(&a[..n2]) + np_sum(&a[n2..])
    }
}

/// `np.mean`: [`np_sum`] divided by the length (NaN for an empty slice).
pub fn np_mean(a: &[f64]) -> f64 {
    np_sum(a) / a.len() as f64
}

/// The stage reward (reference `src/trainer.py`, `--stage-reward-fraction`): the mean of
/// the batch rewards from index `int(n * (1 - fraction))` on, i.e. the last `fraction` of
/// the stage rounded up; 0.0 when there are none.
pub fn stabilised_reward(batch_rewards: &[f64], fraction: f64) -> f64 {
    let n = batch_rewards.len();
    let start = ((n as f64) * (1.0 - fraction)) as usize;
    let tail = &batch_rewards[start.min(n)..];
    if tail.is_empty() {
        return 0.0;
    }
    np_mean(tail)
}

/// One skill change a designer stage made, for the next stages' prompts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChangeNote {
    /// `add` or `refine`.
    pub kind: String,
    pub skill: String,
    /// The skill's action (insert, update, ...).
    pub action: String,
    pub description: String,
    pub instructions: String,
    /// Before a refine (empty for an add).
    #[serde(default)]
    pub old_description: String,
    #[serde(default)]
    pub old_instructions: String,
}

/// A designer stage whose changes did not beat the best snapshot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FailedAttempt {
    /// The stage whose reward was measured with these changes.
    pub stage: u32,
    /// What was changed (empty: the designer changed nothing).
    pub changes: Vec<ChangeNote>,
    #[serde(with = "memskill_core::nan_json::float")]
    pub reward: f64,
    pub best_reward: f64,
}

/// What the last designer change did, shown to the next designer stage (the reference's
/// "evolution feedback").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Feedback {
    /// The stage's reward beat the best snapshot.
    pub improved: bool,
    /// The reward compared against: the best before this stage (0.0 and stage -1 when that
    /// was not positive).
    pub base_reward: f64,
    pub base_stage: i64,
    /// This stage.
    pub stage: u32,
    #[serde(with = "memskill_core::nan_json::float")]
    pub reward: f64,
    /// `reward - base_reward`.
    #[serde(with = "memskill_core::nan_json::float")]
    pub diff: f64,
    /// The best snapshot's reward after this stage.
    pub best_reward: f64,
    pub stages_without_improvement: u32,
    /// What the last designer stage changed (empty: nothing).
    pub changes: Vec<ChangeNote>,
    /// Earlier failed attempts since the best snapshot, the current one excluded (empty when improved).
    pub earlier_failed: Vec<FailedAttempt>,
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
/// at the end of the best stage, and the hard cases its designer stage analysed (reused
/// while later stages fail to beat it, as the reference does). `controller_state` is opaque
/// bytes (hex in JSON).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    pub stage: u32,
    pub reward: f64,
    pub bank: SkillBank,
    #[serde(with = "hex_bytes")]
    pub controller_state: Vec<u8>,
    #[serde(default)]
    pub cases: Vec<HardCase>,
}

/// What a stage that does not beat the best snapshot restores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum Rollback {
    /// The skill bank only; the controller keeps training (reference `src/trainer.py`).
    #[default]
    #[serde(rename = "bank")]
    Bank,
    /// The skill bank and the controller with its optimiser state (memskill's earlier rule).
    #[serde(rename = "bank+controller")]
    BankAndController,
}

/// What training leaves behind at its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum FinalState {
    /// The state after the last stage, as the reference's final checkpoint: a designer
    /// stage runs after the last outer epoch too, and an early stop keeps the current bank.
    #[default]
    Last,
    /// The best snapshot (bank; controller too with `rollback = "bank+controller"`); no
    /// designer stage after the last outer epoch.
    Best,
}

/// Snapshot and early-stopping settings (reference values by default).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct EvolutionConfig {
    /// Stop after this many stages in a row without improvement
    /// (`--designer-early-stop-patience`, default 5).
    pub patience: u32,
    /// Stop once this many designer stages have run (`--max-designer-evolves`, default 20).
    pub max_evolves: u32,
    /// Fraction of a stage's last batch rewards averaged into the stage reward
    /// (`--stage-reward-fraction 0.25`).
    pub stage_reward_fraction: f64,
    /// What training leaves behind (`last`: reference; `best`: the best snapshot).
    #[serde(rename = "final")]
    pub final_state: FinalState,
}

impl Default for EvolutionConfig {
    fn default() -> Self {
        Self {
            patience: 5,
            max_evolves: 20,
            stage_reward_fraction: 0.25,
            final_state: FinalState::Last,
        }
    }
}

/// What the trainer must do after a stage.
#[derive(Debug, Clone, PartialEq)]
pub enum StageDecision {
    /// The stage beat the best snapshot and is the new best. Its canaries were promoted in
    /// the snapshot: continue from [`Evolution::best_bank`].
    Improved,
    /// Not better: the best snapshot's bank and controller state, exactly (the trainer
    /// restores the bank, and the controller too with [`Rollback::BankAndController`]).
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
    /// Designer stages run so far (the reference's `total_evolves`; `max_evolves` counts these).
    #[serde(default)]
    pub evolves: u32,
    /// What the last designer stage changed, until the next stage end measures it.
    #[serde(default)]
    pub pending: Option<Vec<ChangeNote>>,
    /// Failed attempts since the best snapshot (cleared when a stage beats it).
    #[serde(default)]
    pub failed_attempts: Vec<FailedAttempt>,
    /// Feedback on the last measured change, for the next designer stage.
    #[serde(default)]
    pub feedback: Option<Feedback>,
    /// Skills added in stages that were rolled back (status archived), for the record.
    #[serde(default)]
    pub archived: Vec<Skill>,
    /// Release records of rolled-back changes (kind archived, with rewards before/after).
    #[serde(default)]
    pub archive_log: Vec<ReleaseRecord>,
}

/// A designer change not measured yet: an add or refine without a reward after it, that
/// the release gate did not hold back (`held`: the (skill, stage) of gate-failed records).
fn pending_record(r: &ReleaseRecord, held: &[(String, u32)]) -> bool {
    matches!(r.kind, ReleaseKind::Added | ReleaseKind::Refined)
        && r.reward_after.is_none()
        && !held.iter().any(|(s, st)| *s == r.skill && *st == r.stage)
}

/// The (skill, stage) of every change the release gate held back.
fn held_back(bank: &SkillBank) -> Vec<(String, u32)> {
    bank.releases
        .iter()
        .filter(|r| r.kind == ReleaseKind::GateFailed)
        .map(|r| (r.skill.clone(), r.stage))
        .collect()
}

/// `bank` as the new best snapshot holds it: pending records get their rewards (before:
/// `prev_reward` unless set, after: `stored`) and canaries are promoted to active, each
/// with a `promoted` record.
fn promoted_bank(bank: &SkillBank, prev_reward: Option<f64>, stored: f64, stage: u32) -> SkillBank {
    let mut b = bank.clone();
    let held = held_back(&b);
    for r in b.releases.iter_mut().filter(|r| pending_record(r, &held)) {
        r.reward_before = r.reward_before.or(prev_reward);
        r.reward_after = Some(stored);
    }
    let mut promoted = Vec::new();
    for s in b.skills_mut() {
        if s.status == SkillStatus::Canary {
            s.status = SkillStatus::Active;
            promoted.push((s.name.clone(), s.version));
        }
    }
    for (name, v) in promoted {
        let note = "stage beat the best snapshot".to_string();
        let mut r = ReleaseRecord::status_change(&name, ReleaseKind::Promoted, v, stage, note);
        r.reward_before = prev_reward;
        r.reward_after = Some(stored);
        b.releases.push(r);
    }
    b
}

/// What a rolled-back release record tried, for the failed approaches: an add with the
/// skill's description, a refine with the lines it added (clipped to 160 characters).
fn attempted_change(bank: &SkillBank, r: &ReleaseRecord) -> String {
    match r.kind {
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
    }
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

    /// Compare the stage's `reward` with the best snapshot (reference `add_snapshot`).
    ///
    /// Better (strictly), or the first stage: snapshot `bank` (canaries promoted to active,
    /// pending release records filled with reward before/after) and `controller_state`, and
    /// forget the failed attempts. Not better (or NaN): count a stage without improvement,
    /// record the last designer change as a failed attempt, archive skills the best bank
    /// lacks, and return the best snapshot's bank and controller bytes unchanged. Either way
    /// [`Evolution::feedback`] describes the measured change for the next designer stage.
    pub fn on_stage_end(
        &mut self,
        reward: f64,
        bank: &SkillBank,
        controller_state: &[u8],
        stage: u32,
    ) -> StageDecision {
        self.stages_seen += 1;
        let pending = self.pending.take();
        let prev = self.best.as_ref().map(|b| (b.reward, b.stage));
        let improved = match prev {
            None => true,
            Some((p, _)) => reward > p,
        };
        let decision = if improved {
            self.keep_as_best(reward, prev.map(|p| p.0), bank, controller_state, stage);
            StageDecision::Improved
        } else {
            self.roll_back(reward, bank, pending.as_ref(), stage)
        };
        self.feedback = self.measured_feedback(pending, improved, prev, reward, stage);
        decision
    }

    /// A stage that beat `prev_reward` (or the first): its bank, canaries promoted and
    /// pending records given their rewards, and `controller_state` become the best snapshot,
    /// and the failed attempts are forgotten.
    fn keep_as_best(
        &mut self,
        reward: f64,
        prev_reward: Option<f64>,
        bank: &SkillBank,
        controller_state: &[u8],
        stage: u32,
    ) {
        let stored = if reward.is_nan() { f64::MIN } else { reward };
        self.best = Some(Snapshot {
            stage,
            reward: stored,
            bank: promoted_bank(bank, prev_reward, stored, stage),
            controller_state: controller_state.to_vec(),
            cases: Vec::new(),
        });
        self.stages_without_improvement = 0;
        self.failed_attempts.clear();
        self.failed_approaches.clear();
    }

    /// A stage that did not beat the best snapshot: count it, record the `pending` change as
    /// a failed attempt (and each of its release records as a failed approach and an archived
    /// record), archive the skills the best bank lacks, and return the best snapshot.
    fn roll_back(
        &mut self,
        reward: f64,
        bank: &SkillBank,
        pending: Option<&Vec<ChangeNote>>,
        stage: u32,
    ) -> StageDecision {
        self.stages_without_improvement += 1;
        let best = self.best.as_ref().expect("prev is Some, so best is Some");
        if let Some(changes) = pending {
            self.failed_attempts.push(FailedAttempt {
                stage,
                changes: changes.clone(),
                reward,
                best_reward: best.reward,
            });
        }
        let held = held_back(bank);
        for r in bank.releases.iter().filter(|r| pending_record(r, &held)) {
            let what = attempted_change(bank, r);
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
        StageDecision::RolledBack {
            bank: best.bank.clone(),
            controller_state: best.controller_state.clone(),
        }
    }

    /// Feedback on the measured change `pending` (none before the second stage): the reward
    /// it is compared with (the previous best when it improved, else the best snapshot's),
    /// and the earlier failed attempts when it did not.
    fn measured_feedback(
        &self,
        pending: Option<Vec<ChangeNote>>,
        improved: bool,
        prev: Option<(f64, u32)>,
        reward: f64,
        stage: u32,
    ) -> Option<Feedback> {
        let best_reward = self.best.as_ref().map_or(reward, |b| b.reward);
        let changes = pending.filter(|_| self.stages_seen >= 2)?;
        let (base_reward, base_stage) = if improved {
            match prev {
                Some((p, s)) if p > 0.0 => (p, s as i64),
                _ => (0.0, -1),
            }
        } else {
            let b = self.best.as_ref().expect("not improved, so best is Some");
            (b.reward, b.stage as i64)
        };
        let n = self.failed_attempts.len();
        Some(Feedback {
            improved,
            base_reward,
            base_stage,
            stage,
            reward,
            diff: reward - base_reward,
            best_reward,
            stages_without_improvement: self.stages_without_improvement,
            changes,
            earlier_failed: if improved {
                Vec::new()
            } else {
                self.failed_attempts[..n.saturating_sub(1)].to_vec()
            },
        })
    }

    /// The hard cases the next designer stage analyses when the stage did not improve: the
    /// best snapshot's saved ones (`None`: select fresh ones from the pool).
    pub fn saved_cases(&self, improved: bool) -> Option<&[HardCase]> {
        match &self.best {
            Some(b) if !improved && !b.cases.is_empty() => Some(&b.cases),
            _ => None,
        }
    }

    /// Remember freshly selected cases with the stage's snapshot (only the best snapshot's
    /// are ever reused, and only a stage that just became the best can gain them).
    pub fn save_cases(&mut self, improved: bool, cases: &[HardCase]) {
        if improved {
            if let Some(b) = &mut self.best {
                b.cases = cases.to_vec();
            }
        }
    }

    /// A designer stage ran and changed `changes` (empty: nothing): counted against
    /// `max_evolves` and measured at the next stage end.
    pub fn on_designed(&mut self, changes: Vec<ChangeNote>) {
        self.pending = Some(changes);
        self.evolves += 1;
    }

    /// Stop after `max_evolves` designer stages or `patience` stages in a row without
    /// improvement (checked at a stage end, after [`Evolution::on_stage_end`], before the
    /// next designer stage: the reference's `should_stop_evolving`).
    pub fn should_stop(&self) -> bool {
        self.evolves >= self.cfg.max_evolves || self.stages_without_improvement >= self.cfg.patience
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stage_reward_is_the_last_fraction_rounded_up() {
        assert_eq!(stabilised_reward(&[], 0.25), 0.0);
        assert_eq!(stabilised_reward(&[0.3], 0.25), 0.3);
        assert_eq!(stabilised_reward(&[0.0, 0.0, 1.0], 0.25), 1.0);
        assert_eq!(
            stabilised_reward(&[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.5, 1.0], 0.25),
            0.75
        );
        // n = 5: int(5 * 0.75) = 3, so the last two count (floor(n / 4) would take one).
        assert_eq!(stabilised_reward(&[0.0, 0.0, 0.0, 0.5, 1.0], 0.25), 0.75);
        assert_eq!(stabilised_reward(&[0.2, 0.4], 1.0), np_mean(&[0.2, 0.4]));
    }

    #[test]
    fn np_sum_is_pairwise() {
        let a: Vec<f64> = (0..300)
            .map(|i| 0.1 * i as f64 + 1e-3 / (i + 1) as f64)
            .collect();
        // numpy: eight partial sums; differs from a running sum in the last bits.
        let mut r = [0.0f64; 8];
        r.copy_from_slice(&a[..8]);
        for i in (8..24).step_by(8) {
            for (rj, x) in r.iter_mut().zip(&a[i..i + 8]) {
                *rj += x;
            }
        }
        let expect = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7])) + a[24];
        assert_eq!(np_sum(&a[..25]), expect);
        assert_eq!(np_sum(&a[..3]), a[0] + a[1] + a[2]);
        assert!((np_sum(&a) - a.iter().sum::<f64>()).abs() < 1e-9);
    }

    #[test]
    fn patience_and_max_evolves_count_designer_stages() {
        let bank = SkillBank::seed();
        let mut ev = Evolution::new(EvolutionConfig {
            patience: 2,
            max_evolves: 4,
            ..Default::default()
        });
        assert_eq!(
            ev.on_stage_end(0.5, &bank, b"a", 0),
            StageDecision::Improved
        );
        assert!(!ev.should_stop());
        ev.on_designed(Vec::new());
        assert!(
            matches!(
                ev.on_stage_end(0.5, &bank, b"b", 1),
                StageDecision::RolledBack { .. }
            ),
            "equal is not better"
        );
        let fb = ev.feedback.clone().unwrap();
        assert!(!fb.improved && fb.base_reward == 0.5 && fb.stages_without_improvement == 1);
        ev.on_designed(Vec::new());
        assert!(matches!(
            ev.on_stage_end(f64::NAN, &bank, b"c", 2),
            StageDecision::RolledBack { .. }
        ));
        assert_eq!(ev.failed_attempts.len(), 2);
        assert_eq!(ev.feedback.as_ref().unwrap().earlier_failed.len(), 1);
        assert!(ev.should_stop(), "patience 2 reached");
        // max_evolves counts designer stages, not stage ends (the reference's total_evolves).
        let mut ev2 = Evolution::new(EvolutionConfig {
            patience: 10,
            max_evolves: 3,
            ..Default::default()
        });
        for (i, r) in [0.1, 0.2, 0.3].iter().enumerate() {
            assert_eq!(
                ev2.on_stage_end(*r, &bank, b"x", i as u32),
                StageDecision::Improved
            );
            assert!(
                !ev2.should_stop(),
                "stage {i}: {} evolves so far",
                ev2.evolves
            );
            ev2.on_designed(Vec::new());
        }
        assert!(ev2.failed_attempts.is_empty());
        ev2.on_stage_end(0.4, &bank, b"x", 3);
        assert!(ev2.should_stop(), "max_evolves reached");
        let fb = ev2.feedback.clone().unwrap();
        assert!(fb.improved && fb.base_reward == 0.3 && fb.base_stage == 2);
        let j = serde_json::to_string(&ev).unwrap();
        assert!(j.contains("\"controller_state\":\"61\""), "{j}");
        // The NaN stage reward survives a checkpoint (as null).
        let back: Evolution = serde_json::from_str(&j).unwrap();
        assert!(back.failed_attempts[1].reward.is_nan());
        assert_eq!(serde_json::to_string(&back).unwrap(), j);
    }

    #[test]
    fn saved_cases_are_reused_only_after_a_stage_that_did_not_improve() {
        let bank = SkillBank::seed();
        let mut ev = Evolution::new(EvolutionConfig::default());
        let improved = ev.on_stage_end(0.5, &bank, b"a", 0) == StageDecision::Improved;
        assert!(ev.saved_cases(improved).is_none());
        let cases = vec![crate::pool::case("q1", 0.0, 1)];
        ev.save_cases(improved, &cases);
        ev.on_designed(Vec::new());
        let improved = ev.on_stage_end(0.1, &bank, b"b", 1) == StageDecision::Improved;
        assert_eq!(ev.saved_cases(improved).unwrap(), &cases[..]);
        ev.save_cases(improved, &[]);
        assert_eq!(
            ev.best.as_ref().unwrap().cases,
            cases,
            "a worse stage saves nothing"
        );
    }
}
