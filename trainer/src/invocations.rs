//! The invocation log (`<run>/invocations.jsonl`): one record per skill use in a scored
//! training episode — the span, the skills the controller selected, the actions the
//! executor's reply carried, the memories and tokens it cost, and the later score of the
//! questions whose answers were given from memories that span wrote. `memskill skills usage
//! RUN` summarises it per skill.
//!
//! A span with K selected skills is K uses (one record per skill, sharing the span's
//! numbers), so a skill's totals count every span that used it.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result};
use memskill_core::Skill;
use serde::{Deserialize, Serialize};

use crate::episode::EpisodeResult;

/// One use of one skill on one span.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Invocation {
    /// The PPO update the episode belongs to (1-based, as in metrics.jsonl).
    pub step: u64,
    pub sample_id: String,
    pub span_id: String,
    pub skill: String,
    /// The skill's version when it was used (absent in logs from before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Every skill the controller selected for the span (this one included, unless a bundle
    /// brought it).
    pub selected: Vec<String>,
    /// The skills the pick's bundles added for the executor (`designer.operations =
    /// "governance"`); absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bundled: Vec<String>,
    /// Kinds of the actions the reply carried (insert, update, delete, noop).
    pub actions: Vec<String>,
    /// Executor tokens of the span's call.
    pub tokens: u64,
    /// Questions answered from memories this span wrote, and their mean score.
    pub questions: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
}

/// The records of one scored episode.
pub fn records(step: u64, ep: &EpisodeResult, skills: &[Skill]) -> Vec<Invocation> {
    let b = &ep.built;
    let mut out = Vec::new();
    for (j, chosen) in b.chosen.iter().enumerate() {
        let Some(span_id) = b.span_ids.get(j) else {
            continue;
        };
        let used: Vec<f64> = ep
            .queries
            .iter()
            .filter(|q| q.source_spans.contains(span_id))
            .filter_map(|q| q.score)
            .collect();
        let score = (!used.is_empty()).then(|| used.iter().sum::<f64>() / used.len() as f64);
        let mut used_skills: Vec<&Skill> = chosen.iter().filter_map(|&i| skills.get(i)).collect();
        let selected: Vec<String> = used_skills.iter().map(|s| s.name.clone()).collect();
        // what the pick's bundles added: read by the executor, so uses too
        let bundled: Vec<String> = b
            .span_log
            .get(j)
            .map(|l| {
                l.skills
                    .iter()
                    .filter(|n| !selected.contains(n))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        used_skills.extend(
            bundled
                .iter()
                .filter_map(|n| skills.iter().find(|s| &s.name == n)),
        );
        let actions: Vec<String> = b
            .outcomes
            .get(j)
            .map(|o| o.executed.iter().map(|a| a.to_string()).collect())
            .unwrap_or_default();
        for skill in &used_skills {
            out.push(Invocation {
                step,
                sample_id: b.sample_id.clone(),
                span_id: span_id.clone(),
                skill: skill.name.clone(),
                version: Some(skill.version.to_string()),
                selected: selected.clone(),
                bundled: bundled.clone(),
                actions: actions.clone(),
                tokens: b.span_tokens.get(j).copied().unwrap_or(0),
                questions: used.len(),
                score,
            });
        }
    }
    out
}

/// Per-skill totals of an invocation log.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct UsageSummary {
    pub uses: u64,
    /// Uses whose reply wrote something (an action other than NOOP).
    pub writes: u64,
    pub tokens: u64,
    /// Uses whose memories some question was answered from, and those questions' mean score.
    pub used_by_questions: u64,
    pub mean_score: Option<f64>,
    pub first_step: u64,
    pub last_step: u64,
}

/// Read `invocations.jsonl` of a run directory (a line that does not parse is an error
/// naming its number).
pub fn read(run: &Path) -> Result<Vec<Invocation>> {
    let p = run.join("invocations.jsonl");
    let text = std::fs::read_to_string(&p).with_context(|| {
        format!(
            "reading {} (runs before the invocation log have none)",
            p.display()
        )
    })?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l).with_context(|| format!("{} line {}", p.display(), i + 1))
        })
        .collect()
}

/// Totals per skill, by name.
pub fn summarise(log: &[Invocation]) -> BTreeMap<String, UsageSummary> {
    let mut m: BTreeMap<String, (UsageSummary, f64, u64)> = BTreeMap::new();
    for r in log {
        let (s, sum, n) = m.entry(r.skill.clone()).or_insert_with(|| {
            (
                UsageSummary {
                    first_step: r.step,
                    ..Default::default()
                },
                0.0,
                0,
            )
        });
        s.uses += 1;
        s.writes += u64::from(r.actions.iter().any(|a| a != "noop"));
        s.tokens += r.tokens;
        s.first_step = s.first_step.min(r.step);
        s.last_step = s.last_step.max(r.step);
        if let Some(x) = r.score {
            s.used_by_questions += 1;
            *sum += x;
            *n += 1;
        }
    }
    m.into_iter()
        .map(|(k, (mut s, sum, n))| {
            s.mean_score = (n > 0).then(|| sum / n as f64);
            (k, s)
        })
        .collect()
}

/// The `skills usage` table.
pub fn render(summary: &BTreeMap<String, UsageSummary>) -> String {
    let mut s = String::from("| skill | uses | writes | tokens | uses answered from | mean score of those answers | steps |\n|---|---|---|---|---|---|---|\n");
    for (k, u) in summary {
        s.push_str(&format!(
            "| {k} | {} | {} | {} | {} | {} | {}-{} |\n",
            u.uses,
            u.writes,
            u.tokens,
            u.used_by_questions,
            u.mean_score.map_or("-".into(), |x| format!("{x:.3}")),
            u.first_step,
            u.last_step
        ));
    }
    s
}
