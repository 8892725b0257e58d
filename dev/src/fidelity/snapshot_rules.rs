//! Differential check: the snapshot and early-stopping rules (reference
//! `EvolutionSnapshotManager` driven as `src/trainer.py`'s outer loop does). Input: `patience`,
//! `max_evolves` and the stage rewards; expected per stage: `[became best, stages without
//! improvement, best reward, failed attempts kept, stop]`, up to the stage that stops.

use anyhow::Context;
use memskill_core::SkillBank;
use memskill_designer::{Evolution, EvolutionConfig, StageDecision};
use serde_json::{json, Value};

use super::Outcome;

/// Our per-stage record for a fixture input.
pub fn run(input: &Value) -> anyhow::Result<Vec<Value>> {
    let cfg = EvolutionConfig {
        patience: input["patience"].as_u64().context("input.patience")? as u32,
        max_evolves: input["max_evolves"].as_u64().context("input.max_evolves")? as u32,
        ..Default::default()
    };
    let rewards = super::f64s(&input["rewards"], "input.rewards")?;
    let bank = SkillBank::seed();
    let mut ev = Evolution::new(cfg);
    let mut out = Vec::new();
    for (i, r) in rewards.iter().enumerate() {
        let best = ev.on_stage_end(*r, &bank, b"", i as u32) == StageDecision::Improved;
        let stop = ev.should_stop();
        out.push(json!([
            best,
            ev.stages_without_improvement,
            ev.best.as_ref().map_or(f64::NAN, |b| b.reward),
            ev.failed_attempts.len(),
            stop
        ]));
        if stop {
            break;
        }
        ev.on_designed(Vec::new());
    }
    Ok(out)
}

pub fn check(input: &Value, expected: &Value, _tol: f64) -> anyhow::Result<Outcome> {
    let ours = run(input)?;
    let theirs = expected
        .as_array()
        .context("expected: an array of stages")?;
    Ok(Outcome::exact(ours == *theirs, || {
        format!("ours {ours:?}\nreference {theirs:?}")
    }))
}
