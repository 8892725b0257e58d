//! `shaping`: process rewards and terminal redistribution of one episode
//! (reference: BaseTrainer._build_process_reward_meta / _compute_process_reward_from_meta,
//! PPOBuffer.finish_episode with redistribute = True).
//!
//! Input: `{"config": {quota, noop_factor, fail_penalty, terminal_share, decay}, "task_reward",
//! "spans": [{"chosen": [kind], "results": [[kind, success]], "call_failed"}]}`; expected:
//! `{"process": [..], "rewards": [..]}`. A span's outcome is built as `trainer::episode` builds
//! it: `executed` = the kinds of the results that parsed successfully.

use super::{f64s, Outcome};
use anyhow::{bail, Context, Result};
use memskill_controller::{process_reward, shape_rewards, ShapingConfig, SpanOutcome};
use memskill_core::ActionKind;
use serde_json::Value;

pub(crate) fn kind(v: &Value, what: &str) -> Result<ActionKind> {
    let s = v
        .as_str()
        .with_context(|| format!("{what}: expected a string"))?;
    Ok(match s.to_ascii_lowercase().as_str() {
        "insert" => ActionKind::Insert,
        "update" => ActionKind::Update,
        "delete" => ActionKind::Delete,
        "noop" => ActionKind::Noop,
        other => bail!("{what}: unknown action kind {other:?}"),
    })
}

fn num(v: &Value, key: &str) -> Result<f32> {
    v.get(key)
        .and_then(Value::as_f64)
        .map(|x| x as f32)
        .with_context(|| format!("input.config.{key}: expected a number"))
}

pub fn check(input: &Value, expected: &Value, tol: f64) -> Result<Outcome> {
    let c = input.get("config").context("input.config missing")?;
    let cfg = ShapingConfig {
        quota: num(c, "quota")?,
        noop_factor: num(c, "noop_factor")?,
        fail_penalty: num(c, "fail_penalty")?,
        terminal_share: num(c, "terminal_share")?,
        decay: num(c, "decay")?,
        enabled: true,
    };
    let reward = input
        .get("task_reward")
        .and_then(Value::as_f64)
        .context("input.task_reward: expected a number")?;
    let spans = input
        .get("spans")
        .and_then(Value::as_array)
        .context("input.spans: expected an array")?;
    let mut outcomes = Vec::with_capacity(spans.len());
    for (i, s) in spans.iter().enumerate() {
        let chosen = s
            .get("chosen")
            .and_then(Value::as_array)
            .with_context(|| format!("input.spans[{i}].chosen: expected an array"))?
            .iter()
            .map(|k| kind(k, &format!("input.spans[{i}].chosen")))
            .collect::<Result<Vec<_>>>()?;
        let mut executed = Vec::new();
        for (j, r) in s
            .get("results")
            .and_then(Value::as_array)
            .with_context(|| format!("input.spans[{i}].results: expected an array"))?
            .iter()
            .enumerate()
        {
            let what = format!("input.spans[{i}].results[{j}]");
            let k = kind(r.get(0).with_context(|| what.clone())?, &what)?;
            let ok = r
                .get(1)
                .and_then(Value::as_bool)
                .with_context(|| format!("{what}[1]: expected a bool"))?;
            if ok {
                executed.push(k);
            }
        }
        outcomes.push(SpanOutcome {
            chosen,
            executed,
            all_calls_failed: s
                .get("call_failed")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        });
    }
    let n = outcomes.len();
    let process: Vec<f64> = outcomes
        .iter()
        .map(|o| process_reward(o, n, &cfg) as f64)
        .collect();
    let shaped: Vec<f64> = shape_rewards(&outcomes, reward as f32, &cfg)
        .iter()
        .map(|&x| x as f64)
        .collect();
    let want_p = f64s(
        expected
            .get("process")
            .context("expected.process missing")?,
        "expected.process",
    )?;
    let want_r = f64s(
        expected
            .get("rewards")
            .context("expected.rewards missing")?,
        "expected.rewards",
    )?;
    Ok(Outcome::numbers(&process, &want_p, tol).and(Outcome::numbers(&shaped, &want_r, tol)))
}
