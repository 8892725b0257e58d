//! The range of every numeric config key (issue 46, case 2), checked at load before any
//! run folder exists: a NaN, a negative number or a typo of a few zeros is an error naming
//! the key and its range, never an abort, a silent no-op or a 512 GB allocation later.
//!
//! Each entry is `(key, min, max, what the bounds protect)`. Keys of the LLM sections
//! (`executor`, `answer.llm`, `reward.judge`, `designer.llm`) are written once as `llm.<key>`,
//! those of the two embeddings servers (`encoder.openai`, `memory.retriever_openai`) as
//! `embeddings.<key>`. A test walks every numeric key a config may hold and fails for one
//! without an entry, so a new key gets its range when it is added.

use anyhow::{bail, Result};

/// Allocation-sized counts: beyond these a typo asks for more memory than a machine has.
const ITEMS: f64 = 10_000_000.0;
const TOKENS: f64 = 10_000_000.0;
const DAY_SECS: f64 = 86_400.0;
const DAY_MS: f64 = 86_400_000.0;
/// Seeds: any value TOML can hold.
const SEED: f64 = i64::MAX as f64;

/// `(key, min, max, why)`; NaN and infinities are outside every range.
pub const LIMITS: &[(&str, f64, f64, &str)] = &[
    ("run.seed", 0.0, SEED, "a seed"),
    ("run.outer_epochs", 1.0, 1e6, "outer epochs"),
    ("run.inner_epochs", 1.0, 1e9, "PPO updates per outer epoch"),
    (
        "run.batch_size",
        1.0,
        1e6,
        "episodes per update, held in memory at once",
    ),
    ("run.keep_last", 0.0, 1e6, "checkpoints kept"),
    (
        "run.checkpoint_every",
        0.0,
        1e9,
        "inner epochs between checkpoints (0 counts as 1)",
    ),
    (
        "data.max_file_mb",
        1.0,
        1_048_576.0,
        "the largest dataset file read, in MB",
    ),
    ("data.max_queries", 0.0, 1e9, "0 = every query"),
    ("data.max_samples", 0.0, 1e9, "0 = every sample"),
    ("data.max_sessions", 0.0, 1e9, "0 = every session"),
    (
        "data.query_ratio",
        f64::MIN_POSITIVE,
        1.0,
        "a share of the queries",
    ),
    ("data.synthetic_samples", 1.0, 1e6, "generated samples"),
    (
        "data.synthetic_spans",
        1.0,
        1e4,
        "spans per generated sample",
    ),
    (
        "encoder.dim",
        1.0,
        65_536.0,
        "the hashing encoder's vector size",
    ),
    (
        "policy.hidden",
        1.0,
        16_384.0,
        "its hidden x hidden layer is 1 GiB of f32 at the limit",
    ),
    ("controller.top_k", 1.0, 1024.0, "skills chosen per span"),
    (
        "controller.retrieve",
        1.0,
        ITEMS,
        "memories retrieved per span",
    ),
    (
        "answer.retrieve",
        1.0,
        ITEMS,
        "memories retrieved per question",
    ),
    ("answer.max_tokens", 1.0, TOKENS, "the answer budget"),
    ("eval.top_k", 1.0, 1024.0, "skills chosen per span"),
    ("eval.retrieve", 1.0, ITEMS, "memories retrieved per span"),
    ("eval.judge_max_tokens", 1.0, TOKENS, "the judge's budget"),
    ("eval.max_error_rate", 0.0, 1.0, "a share of the calls"),
    ("concurrency.episodes", 1.0, 4096.0, "episodes in flight"),
    (
        "concurrency.queries",
        1.0,
        4096.0,
        "queries in flight per episode",
    ),
    ("ppo.lr", f64::MIN_POSITIVE, 10.0, "a learning rate"),
    ("ppo.gamma", 0.0, 1.0, "a discount"),
    ("ppo.gae_lambda", 0.0, 1.0, "a GAE lambda"),
    ("ppo.clip", f64::MIN_POSITIVE, 10.0, "the ratio clip"),
    ("ppo.value_coef", 0.0, 1e6, "a loss weight"),
    ("ppo.entropy_coef", 0.0, 1e6, "a loss weight"),
    (
        "ppo.max_grad_norm",
        -1e12,
        1e12,
        "a gradient norm (<= 0: no clipping)",
    ),
    (
        "ppo.target_kl",
        -1e12,
        1e12,
        "a KL bound (<= 0: no early stop)",
    ),
    ("ppo.ppo_epochs", 1.0, 1000.0, "passes over each batch"),
    ("ppo.minibatch_size", 1.0, 1e7, "decisions per minibatch"),
    (
        "bias.bias_steps",
        0.0,
        1e9,
        "updates the new-skill bias lasts",
    ),
    ("bias.p_min", 0.0, 1.0, "a probability"),
    ("bias.p_ref", f64::MIN_POSITIVE, 1.0, "a probability"),
    ("shaping.quota", 0.0, 1.0, "a share of the spans"),
    ("shaping.noop_factor", 0.0, 1.0, "a factor on the reward"),
    ("shaping.fail_penalty", 0.0, 1e3, "a penalty on the reward"),
    ("shaping.terminal_share", 0.0, 1.0, "a share of the reward"),
    ("shaping.decay", 0.0, 1.0, "a decay factor"),
    (
        "pool.threshold",
        0.0,
        1.0,
        "a score below which a query is hard",
    ),
    (
        "pool.window",
        0.0,
        1e9,
        "epochs a hard case is kept (0 = forever)",
    ),
    ("pool.max_size", 0.0, ITEMS, "hard cases kept (0 = no cap)"),
    ("select.clusters", 1.0, 10_000.0, "KMeans clusters"),
    ("select.per_cluster", 1.0, 10_000.0, "cases per cluster"),
    (
        "select.max_total",
        0.0,
        ITEMS,
        "cases selected (0 = clusters x per_cluster)",
    ),
    (
        "designer.freq",
        1.0,
        1e6,
        "outer epochs between designer stages",
    ),
    ("designer.attempts", 1.0, 100.0, "attempts per stage"),
    (
        "designer.max_changes",
        1.0,
        1000.0,
        "changes per designer answer",
    ),
    ("designer.reflection_cycles", 1.0, 100.0, "analysis rounds"),
    (
        "designer.max_bank_size",
        1.0,
        10_000.0,
        "skills the controller scores per span",
    ),
    ("designer.temperature", 0.0, 100.0, "a sampling temperature"),
    ("designer.max_tokens", 1.0, TOKENS, "the analysis budget"),
    (
        "designer.refinement_max_tokens",
        1.0,
        TOKENS,
        "the refinement budget",
    ),
    (
        "designer.max_retrieved_per_case",
        0.0,
        ITEMS,
        "memories per hard case (0 = all)",
    ),
    (
        "designer.max_memory_chars",
        0.0,
        1e9,
        "characters per memory (0 = whole)",
    ),
    (
        "designer.max_evidence_chars",
        0.0,
        1e9,
        "characters of evidence (0 = whole)",
    ),
    ("designer.score.outcome", 0.0, 1e6, "a score weight"),
    ("designer.score.process", 0.0, 1e6, "a score weight"),
    ("designer.score.precision", 0.0, 1e6, "a score weight"),
    ("designer.score.recall", 0.0, 1e6, "a score weight"),
    ("designer.score.false_positives", 0.0, 1e6, "a score weight"),
    ("designer.score.regressions", 0.0, 1e6, "a score weight"),
    ("designer.score.safety", 0.0, 1e6, "a score weight"),
    ("designer.score.reuse", 0.0, 1e6, "a score weight"),
    ("designer.score.feedback", 0.0, 1e6, "a score weight"),
    ("designer.score.maintainability", 0.0, 1e6, "a score weight"),
    ("designer.score.token_overhead", 0.0, 1e6, "a score weight"),
    (
        "designer.score.latency_overhead",
        0.0,
        1e6,
        "a score weight",
    ),
    ("designer.score.call_overhead", 0.0, 1e6, "a score weight"),
    (
        "designer.gate_rules.min_cases",
        0.0,
        ITEMS,
        "cases the gate replays",
    ),
    (
        "designer.gate_rules.solved_cases",
        0.0,
        ITEMS,
        "solved cases the gate replays",
    ),
    (
        "designer.gate_rules.min_outcome_delta",
        -1.0,
        1.0,
        "a score difference",
    ),
    ("designer.gate_rules.min_precision", 0.0, 1.0, "a precision"),
    ("designer.gate_rules.min_recall", 0.0, 1.0, "a recall"),
    ("designer.gate_rules.min_process", 0.0, 1.0, "a score"),
    ("designer.gate_rules.min_pass_rate", 0.0, 1.0, "a score"),
    (
        "designer.gate_rules.max_false_positive_rate",
        0.0,
        1.0,
        "a rate",
    ),
    (
        "designer.gate_rules.max_regressions",
        0.0,
        ITEMS,
        "regressed cases allowed",
    ),
    (
        "designer.gate_rules.max_safety_findings",
        0.0,
        ITEMS,
        "guard findings allowed",
    ),
    (
        "designer.gate_rules.max_token_overhead",
        0.0,
        1e6,
        "a relative overhead",
    ),
    (
        "designer.gate_rules.max_latency_overhead",
        0.0,
        1e6,
        "a relative overhead",
    ),
    (
        "designer.gate_rules.max_call_overhead",
        0.0,
        1e6,
        "a relative overhead",
    ),
    (
        "designer.gate_rules.latency_noise_ms",
        0.0,
        DAY_MS,
        "milliseconds",
    ),
    ("evolution.max_evolves", 0.0, 1e6, "designer stages"),
    ("evolution.patience", 0.0, 1e6, "stages without improvement"),
    (
        "evolution.stage_reward_fraction",
        f64::MIN_POSITIVE,
        1.0,
        "a share of the stage",
    ),
    ("alfworld.pair_a_min", 1.0, 1e6, "trajectories"),
    ("alfworld.pair_a_max", 1.0, 1e6, "trajectories"),
    ("alfworld.pair_b_size", 1.0, 1e6, "trajectories"),
    ("alfworld.same_type_prob", 0.0, 1.0, "a probability"),
    ("alfworld.workers", 1.0, 1024.0, "game processes"),
    ("alfworld.max_steps", 1.0, 1e6, "steps per game"),
    ("alfworld.timeout_secs", 1.0, DAY_SECS, "seconds"),
    ("alfworld.tips", 0.0, ITEMS, "memories shown as tips"),
    (
        "alfworld.eval_trajectories",
        0.0,
        ITEMS,
        "0 = every training trajectory",
    ),
    (
        "alfworld.actor_max_tokens",
        1.0,
        TOKENS,
        "the actor's budget",
    ),
    (
        "alfworld.actor_temperature",
        0.0,
        100.0,
        "a sampling temperature",
    ),
    (
        "alfworld.history_window",
        0.0,
        1e9,
        "steps of history shown",
    ),
    (
        "alfworld.train_chunk_tokens",
        1.0,
        TOKENS,
        "tokens per chunk",
    ),
    (
        "alfworld.eval_chunk_tokens",
        1.0,
        TOKENS,
        "tokens per chunk",
    ),
    (
        "alfworld.eval_chunk_overlap",
        0.0,
        TOKENS,
        "tokens of overlap",
    ),
    ("preflight.context_tokens", 0.0, TOKENS, "0 = unknown"),
    (
        "preflight.timeout_secs",
        1.0,
        600.0,
        "seconds per probe request",
    ),
    (
        "preflight.probe_tokens",
        1.0,
        4096.0,
        "reply tokens per probe request",
    ),
    ("llm.temperature", 0.0, 100.0, "a sampling temperature"),
    ("llm.max_tokens", 1.0, TOKENS, "the reply budget"),
    (
        "llm.max_context",
        1.0,
        TOKENS,
        "the context window in tokens",
    ),
    ("llm.seed", 0.0, SEED, "a seed"),
    ("llm.max_concurrency", 1.0, 65_536.0, "requests in flight"),
    ("llm.max_retries", 0.0, 100.0, "retries per call"),
    ("llm.backoff_base_ms", 0.0, DAY_MS, "milliseconds"),
    ("llm.cooldown_ms", 0.0, DAY_MS, "milliseconds"),
    ("llm.timeout_secs", 1.0, DAY_SECS, "seconds per request"),
    ("llm.probe_timeout_secs", 0.0, 600.0, "seconds"),
    ("llm.max_retry_after_secs", 0.0, DAY_SECS, "seconds"),
    ("llm.unhealthy_after", 1.0, 1e6, "failures in a row"),
    (
        "llm.max_reply_bytes",
        1024.0,
        17_179_869_184.0,
        "bytes of one reply (16 GiB at most)",
    ),
    ("llm.scripted_capacity", 0.0, 1e6, "0 = no limit"),
    ("llm.scripted_latency_ms", 0.0, 3_600_000.0, "milliseconds"),
    (
        "embeddings.max_concurrency",
        1.0,
        65_536.0,
        "requests in flight",
    ),
    (
        "embeddings.texts_per_request",
        1.0,
        100_000.0,
        "texts per request",
    ),
    ("embeddings.max_retries", 0.0, 100.0, "retries per call"),
    ("embeddings.backoff_base_ms", 0.0, DAY_MS, "milliseconds"),
    ("embeddings.cooldown_ms", 0.0, DAY_MS, "milliseconds"),
    (
        "embeddings.timeout_secs",
        1.0,
        DAY_SECS,
        "seconds per request",
    ),
    ("embeddings.probe_timeout_secs", 0.0, 600.0, "seconds"),
    ("embeddings.max_retry_after_secs", 0.0, DAY_SECS, "seconds"),
    ("embeddings.unhealthy_after", 1.0, 1e6, "failures in a row"),
    (
        "embeddings.max_reply_bytes",
        1024.0,
        17_179_869_184.0,
        "bytes of one reply (16 GiB at most)",
    ),
];

use super::LLM_SECTIONS;
const EMBEDDING_SECTIONS: [&str; 2] = ["encoder.openai", "memory.retriever_openai"];

/// The table entry of a dotted key (an LLM or embeddings section's key by its generic name).
pub fn limit_of(key: &str) -> Option<&'static (&'static str, f64, f64, &'static str)> {
    let generic = |sections: &[&str], tag: &str| {
        sections.iter().find_map(|s| {
            key.strip_prefix(s)
                .and_then(|r| r.strip_prefix('.'))
                .filter(|r| !r.contains('.'))
                .map(|r| format!("{tag}.{r}"))
        })
    };
    let name = generic(&LLM_SECTIONS, "llm")
        .or_else(|| generic(&EMBEDDING_SECTIONS, "embeddings"))
        .unwrap_or_else(|| key.to_string());
    LIMITS.iter().find(|l| l.0 == name)
}

/// Every leaf of `t` (not a table) with its dotted key, in order.
pub fn leaves<'a>(t: &'a toml::Table, prefix: &str, out: &mut Vec<(String, &'a toml::Value)>) {
    for (k, v) in t {
        let key = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        match v {
            toml::Value::Table(t) => leaves(t, &key, out),
            other => out.push((key, other)),
        }
    }
}

/// Every numeric leaf of `t` (dotted keys, values as f64).
pub fn numeric_leaves(t: &toml::Table) -> Vec<(String, f64)> {
    let mut all = Vec::new();
    leaves(t, "", &mut all);
    all.into_iter()
        .filter_map(|(k, v)| match v {
            toml::Value::Integer(i) => Some((k, *i as f64)),
            toml::Value::Float(f) => Some((k, *f)),
            _ => None,
        })
        .collect()
}

/// Checks every numeric key of a config table (the resolved config, or the keys as a user
/// wrote them) against [`LIMITS`].
pub fn check(resolved: &toml::Table) -> Result<()> {
    for (key, v) in numeric_leaves(resolved) {
        let Some(&(_, min, max, why)) = limit_of(&key) else {
            continue; // a key without an entry fails `every_numeric_key_has_a_range`
        };
        if !(v >= min && v <= max) {
            let range = if min == f64::MIN_POSITIVE {
                format!("(0, {max}]")
            } else {
                format!("[{min}, {max}]")
            };
            bail!("{key} must be in {range} ({why}), got {v}");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{known_keys, Config};

    /// Every numeric key a config may hold, with the TOML type of its value: the resolved
    /// default's keys, every backend's keys in each LLM section, `answer.max_tokens`.
    fn numeric_keys() -> Vec<(String, bool)> {
        let cfg = Config::from_toml_str(
            "[answer]\nmax_tokens = 32\n[answer.llm]\n[reward.judge]\n[designer.llm]\n",
            &[],
            "t",
        )
        .unwrap();
        let mut known = known_keys(&cfg).unwrap();
        known.remove("tracking");
        let mut all = Vec::new();
        leaves(&known, "", &mut all);
        all.into_iter()
            .filter(|(_, v)| v.is_integer() || v.is_float())
            .map(|(k, v)| (k, v.is_integer()))
            .collect()
    }

    #[test]
    fn every_numeric_key_has_a_range_and_every_range_a_key() {
        let keys = numeric_keys();
        assert!(keys.len() > 150, "{}", keys.len());
        let missing: Vec<_> = keys.iter().filter(|k| limit_of(&k.0).is_none()).collect();
        assert!(
            missing.is_empty(),
            "numeric keys without a range in LIMITS: {missing:?}"
        );
        for l in LIMITS {
            assert!(l.1 <= l.2, "{}: min above max", l.0);
            assert!(
                keys.iter()
                    .any(|k| limit_of(&k.0).is_some_and(|m| m.0 == l.0)),
                "LIMITS entry {} matches no config key",
                l.0
            );
        }
    }

    /// Issue 46, case 2: every numeric key with NaN, infinity, a negative number, zero and
    /// huge values: a value inside the key's range loads, any other is an error naming the
    /// key (before anything is made: the check runs at load).
    #[test]
    fn every_numeric_key_refuses_values_outside_its_range() {
        let mut wrong = Vec::new();
        for (key, int) in numeric_keys() {
            let values: &[(&str, f64)] = if int {
                &[
                    ("nan", f64::NAN),
                    ("-1", -1.0),
                    ("0", 0.0),
                    ("1000000000000000", 1e15),
                    ("9223372036854775807", i64::MAX as f64),
                ]
            } else {
                &[
                    ("nan", f64::NAN),
                    ("inf", f64::INFINITY),
                    ("-1.0", -1.0),
                    ("0.0", 0.0),
                    ("1e300", 1e300),
                ]
            };
            let &(_, min, max, _) = limit_of(&key).unwrap();
            for &(text, v) in values {
                let sets = ["answer.max_tokens=32".to_string(), format!("{key}={text}")];
                let got = Config::from_toml_str("", &sets, "t");
                let inside = v >= min && v <= max;
                match (&got, inside) {
                    (Ok(_), true) => {}
                    (Err(e), false) if format!("{e:#}").contains(&key) => {}
                    _ => wrong.push(format!(
                        "{key}={text}: {}",
                        match got {
                            Ok(_) => "accepted".to_string(),
                            Err(e) => format!("{e:#}"),
                        }
                    )),
                }
            }
        }
        assert!(
            wrong.is_empty(),
            "{} cases:\n{}",
            wrong.len(),
            wrong.join("\n")
        );
    }
}
