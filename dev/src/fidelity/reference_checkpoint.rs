//! `reference_checkpoint`: a checkpoint saved the way the reference's trainer saves it (its own
//! `PPOController` and `OperationBank`, `torch.save`), imported as `memskill import-reference`
//! does ([`memskill_trainer::refimport`]: parse, map to a memskill checkpoint, controller bytes loaded back
//! into a fresh controller), then compared: the logits on 50 states (the reference's own
//! `get_action_logits`), the skill texts and kinds, which skills are new, the step counter and
//! the new-skill bias state.
//!
//! Input: `{"checkpoint_hex", "states"}`; expected: `{"emb_dim", "hidden", "total_steps",
//! "bias_active", "bias_step", "stage_rewards", "operations": [{"name", "description", "instructions",
//! "update_type", "new"}], "logits"}` (logits per state, in the operations' order).

use super::{f64s, Outcome};
use anyhow::{Context, Result};
use memskill_controller::Controller;
use memskill_core::SkillStatus;
use memskill_trainer::refimport::{skill_name, to_checkpoint, ReferenceCheckpoint};
use serde_json::Value;

fn as_u64(v: &Value, k: &str) -> Result<u64> {
    v.get(k)
        .and_then(Value::as_u64)
        .with_context(|| format!("expected.{k}: expected an integer"))
}

/// The skill texts, kinds and new flags against the reference's operations.
fn check_skills(ck: &memskill_trainer::checkpoint::Checkpoint, ops: &[Value]) -> Result<Outcome> {
    let mut out = Outcome::exact(ck.bank.skills().len() == ops.len(), || {
        format!(
            "{} skills, {} operations",
            ck.bank.skills().len(),
            ops.len()
        )
    });
    for op in ops {
        let s = |k: &str| op.get(k).and_then(Value::as_str).unwrap_or_default();
        let name = skill_name(s("name"))?;
        let Some(skill) = ck.bank.get(&name) else {
            return Ok(Outcome::exact(false, || format!("no skill {name}")));
        };
        let new = op.get("new").and_then(Value::as_bool).unwrap_or(false);
        let same = skill.description == s("description")
            && skill.instructions == s("instructions")
            && skill.action.as_str() == s("update_type")
            && (skill.status == SkillStatus::Canary) == new;
        out = out.and(Outcome::exact(same, || format!("skill {name} differs")));
    }
    Ok(out)
}

pub fn check(input: &Value, expected: &Value, tol: f64) -> Result<Outcome> {
    let hex_text = input
        .get("checkpoint_hex")
        .and_then(Value::as_str)
        .context("input.checkpoint_hex: expected a string")?;
    let bytes = hex::decode(hex_text).context("input.checkpoint_hex: not hex")?;
    let rc = ReferenceCheckpoint::parse(&bytes, "input.checkpoint_hex")?;
    let cfg = memskill_trainer::Config::default();
    let ck = to_checkpoint(&rc, &cfg, "fixture")?;
    let mut policy = cfg.policy.clone();
    policy.hidden = rc.hidden;
    let mut ctrl = Controller::new(rc.emb_dim, &policy, &cfg.ppo, 0)?;
    ctrl.load_bytes(&ck.controller)?;
    let total = as_u64(expected, "total_steps")?;
    let bias_step = as_u64(expected, "bias_step")?;
    let bias_active = expected.get("bias_active").and_then(Value::as_bool) == Some(true);
    let counters = (rc.emb_dim as u64, rc.hidden as u64, ctrl.updates());
    let want = (
        as_u64(expected, "emb_dim")?,
        as_u64(expected, "hidden")?,
        total,
    );
    let rewards = f64s(&expected["stage_rewards"], "expected.stage_rewards")?;
    let bias_start = ck.state.bias.as_ref().map(|b| b.start_update);
    let want_bias = bias_active.then(|| total - bias_step);
    let same = counters == want && bias_start == want_bias && ck.state.stage_rewards == rewards;
    let mut out = Outcome::exact(same, || {
        format!(
            "(emb_dim, hidden, updates) {counters:?} vs {want:?}; bias start {bias_start:?} vs {want_bias:?}; stage rewards {:?} vs {rewards:?}",
            ck.state.stage_rewards
        )
    });
    let ops = expected
        .get("operations")
        .and_then(Value::as_array)
        .context("expected.operations: expected an array")?;
    out = out.and(check_skills(&ck, ops)?);
    // the reference's own op embeddings, in its candidate order
    let mut embs = Vec::with_capacity(ops.len());
    for op in ops {
        let name = op.get("name").and_then(Value::as_str).unwrap_or_default();
        let e = rc
            .operations
            .iter()
            .find(|o| o.name == name)
            .and_then(|o| o.embedding.clone())
            .with_context(|| format!("operation {name}: no embedding in the checkpoint"))?;
        embs.push(e);
    }
    let states = input
        .get("states")
        .and_then(Value::as_array)
        .context("input.states: expected an array")?;
    let logits = expected
        .get("logits")
        .and_then(Value::as_array)
        .context("expected.logits: expected an array")?;
    for (i, (s, l)) in states.iter().zip(logits).enumerate() {
        let state: Vec<f32> = f64s(s, "input.states[]")?
            .iter()
            .map(|&x| x as f32)
            .collect();
        let ours: Vec<f64> = ctrl
            .logits(&state, &embs)?
            .iter()
            .map(|&x| x as f64)
            .collect();
        let theirs = f64s(l, "expected.logits[]")?;
        let o = Outcome::numbers(&ours, &theirs, tol);
        out = out.and(Outcome {
            detail: o.detail.map(|d| format!("state {i}: {d}")),
            ..o
        });
    }
    let n = Outcome::exact(states.len() == logits.len() && !states.is_empty(), || {
        format!("{} states, {} logit rows", states.len(), logits.len())
    });
    Ok(out.and(n))
}
