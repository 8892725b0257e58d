//! The lines of `metrics.jsonl`: one [`UpdateMetrics`] per PPO update and one
//! [`StageMetrics`] per designer stage, written as JSON objects with sorted keys (the bytes of
//! equal runs are equal) and read back by the plots and the progress log.

use std::collections::BTreeMap;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use memskill_executor::{RetryCounts, StructuredDialect};

use crate::backends::LlmTotals;

/// Snapshot of all roles.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoleTotals {
    pub executor: LlmTotals,
    pub answer: LlmTotals,
    pub judge: LlmTotals,
    pub designer: LlmTotals,
}

impl RoleTotals {
    pub fn minus(&self, o: &RoleTotals) -> RoleTotals {
        RoleTotals {
            executor: self.executor.minus(&o.executor),
            answer: self.answer.minus(&o.answer),
            judge: self.judge.minus(&o.judge),
            designer: self.designer.minus(&o.designer),
        }
    }
    pub fn errors(&self) -> u64 {
        self.executor.errors + self.answer.errors + self.judge.errors + self.designer.errors
    }
}

/// One PPO update (`"type": "update"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UpdateMetrics {
    /// Updates of the run so far, this one included.
    pub step: u64,
    pub outer: u32,
    pub inner: u32,
    pub episodes: usize,
    /// Episodes left out of the PPO batch (every executor call failed, or no score).
    pub dropped: usize,
    /// Mean episode reward of the batch, and its range.
    #[serde(deserialize_with = "memskill_core::nan_json::float::deserialize")]
    pub reward: f64,
    #[serde(deserialize_with = "memskill_core::nan_json::float::deserialize")]
    pub reward_min: f64,
    #[serde(deserialize_with = "memskill_core::nan_json::float::deserialize")]
    pub reward_max: f64,
    /// Mean over episodes of the summed shaped per-span rewards.
    #[serde(deserialize_with = "memskill_core::nan_json::float::deserialize")]
    pub shaped_reward: f64,
    #[serde(deserialize_with = "memskill_core::nan_json::float32::deserialize")]
    pub policy_loss: f32,
    #[serde(deserialize_with = "memskill_core::nan_json::float32::deserialize")]
    pub value_loss: f32,
    #[serde(deserialize_with = "memskill_core::nan_json::float32::deserialize")]
    pub entropy: f32,
    #[serde(deserialize_with = "memskill_core::nan_json::float32::deserialize")]
    pub approx_kl: f32,
    #[serde(deserialize_with = "memskill_core::nan_json::float32::deserialize")]
    pub clip_frac: f32,
    pub ppo_epochs: usize,
    pub early_stopped: bool,
    /// Times each skill was chosen in the batch.
    pub skill_usage: BTreeMap<String, u64>,
    /// Selectable skills and the bank's version.
    pub bank_size: usize,
    pub bank_version: u32,
    /// Mean live memories per scored episode.
    #[serde(deserialize_with = "memskill_core::nan_json::float::deserialize")]
    pub memory_items: f64,
    pub queries: usize,
    pub span_errors: usize,
    pub query_errors: usize,
    pub parse_problems: usize,
    /// Memory writes the filter flagged (`memory.filter = "flag"`) or refused (`"refuse"`).
    #[serde(default)]
    pub memories_flagged: usize,
    #[serde(default)]
    pub memories_refused: usize,
    pub hard_cases: usize,
    /// Executor + answer + judge calls of the update, and the failed ones of every role.
    pub llm_calls: u64,
    pub llm_errors: u64,
    pub llm: RoleTotals,
    /// Episodes left out because an executor call failed (only when there were some).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dropped_incomplete: Option<usize>,
    /// Retried HTTP attempts by cause (only when there were some).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retries: Option<RetryCounts>,
    /// The structured-output dialect each endpoint took (only once one did).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_dialects: Option<Dialects>,
    /// Interactive benchmarks: how actor replies matched admissible commands.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actor: Option<memskill_alfworld::ActorStats>,
    /// What the memory contract's read rules did to the update's answers, per question (only
    /// when they did something: `[memory.contract]` TTL, sensitivity, staleness).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_contract: Option<crate::contract_read::ContractReads>,
}

/// One designer stage (`"type": "stage"`): the snapshot decision and what the designer did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageMetrics {
    pub stage: u32,
    pub step: u64,
    #[serde(deserialize_with = "memskill_core::nan_json::float::deserialize")]
    pub reward: f64,
    /// "improved" | "not-improved" | "rolled-back".
    pub decision: String,
    /// "designed" | "skipped" | "stopped-early" | "no-hard-cases" | "error".
    pub designer: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hard_cases_reused: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hard_cases_selected: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempts: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accepted: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rejected: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changed: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub designer_error: Option<String>,
    /// The LLM safety judge's calls and rejections (`designer.safety_judge`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub safety_judge: Option<SafetyJudgeCounts>,
    /// Retried HTTP attempts by cause (only when there were some).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retries: Option<RetryCounts>,
    /// The structured-output dialect each endpoint took (only once one did).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_dialects: Option<Dialects>,
    /// The offline gate's verdict per changed skill (`designer.gate = "offline"`):
    /// `name@version: canary` or `name@version: held (reasons)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<Vec<String>>,
    pub bank_version: u32,
    pub bank_size: usize,
    pub llm: RoleTotals,
}

/// What the LLM safety judge did in a designer stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SafetyJudgeCounts {
    pub calls: usize,
    pub rejected: usize,
}

/// Chat-completions URL -> the structured-output dialect that endpoint took.
pub type Dialects = BTreeMap<String, StructuredDialect>;

/// A line of `metrics.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum MetricsLine {
    Update(UpdateMetrics),
    Stage(StageMetrics),
}

impl crate::tracking::Tracked for MetricsLine {
    fn group_and_step(&self) -> (&'static str, u64) {
        match self {
            MetricsLine::Update(u) => ("train", u.step),
            MetricsLine::Stage(s) => ("stage", s.step),
        }
    }
}

impl MetricsLine {
    /// The line as written: a JSON object with sorted keys (through `serde_json::Value`,
    /// whose maps are ordered), non-finite floats as `null`.
    pub fn to_line(&self) -> Result<String> {
        Ok(serde_json::to_value(self)?.to_string())
    }

    /// Parse a line of `metrics.jsonl`.
    pub fn parse(line: &str) -> Result<Self> {
        Ok(serde_json::from_str(line)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_round_trip_with_sorted_keys_and_nan_as_null() {
        let m = MetricsLine::Update(UpdateMetrics {
            step: 1,
            outer: 0,
            inner: 0,
            episodes: 2,
            dropped: 0,
            reward: 0.5,
            reward_min: 0.25,
            reward_max: 0.75,
            shaped_reward: 0.5,
            policy_loss: f32::NAN,
            value_loss: 0.1,
            entropy: 1.0,
            approx_kl: 0.0,
            clip_frac: 0.0,
            ppo_epochs: 4,
            early_stopped: false,
            skill_usage: BTreeMap::from([("insert".to_string(), 3)]),
            bank_size: 4,
            bank_version: 1,
            memory_items: 2.0,
            queries: 3,
            span_errors: 0,
            query_errors: 0,
            parse_problems: 0,
            memories_flagged: 0,
            memories_refused: 0,
            hard_cases: 1,
            llm_calls: 5,
            llm_errors: 0,
            llm: RoleTotals::default(),
            dropped_incomplete: None,
            retries: None,
            structured_dialects: None,
            actor: None,
            memory_contract: None,
        });
        let line = m.to_line().unwrap();
        assert!(
            line.starts_with("{\"approx_kl\":0.0,\"bank_size\":4,"),
            "{line}"
        );
        assert!(line.contains("\"policy_loss\":null") && line.contains("\"type\":\"update\""));
        let MetricsLine::Update(back) = MetricsLine::parse(&line).unwrap() else {
            panic!("not an update line")
        };
        assert!(back.policy_loss.is_nan());
        assert_eq!((back.step, back.value_loss), (1, 0.1));
    }
}
