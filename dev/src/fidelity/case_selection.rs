//! Differential check: choosing the designer's hard cases given the cluster labels (reference
//! `Designer.prepare_analysis_cases` with its KMeans replaced by recorded labels). Input:
//! `clusters`, `per_cluster`, `cases` as `[query id, question, score, fail count]` and `labels`
//! (one per unique question, or null when there were too few cases to cluster); expected: the
//! selected query ids in order.

use anyhow::Context;
use memskill_designer::{dedupe, select_with_labels, HardCase, SelectConfig};
use serde_json::Value;

use super::Outcome;

/// Our selection for a fixture input (query ids in order).
pub fn run(input: &Value) -> anyhow::Result<Vec<String>> {
    let cfg = SelectConfig {
        clusters: input["clusters"].as_u64().context("input.clusters")? as usize,
        per_cluster: input["per_cluster"].as_u64().context("input.per_cluster")? as usize,
        max_total: 0,
    };
    let mut cases = Vec::new();
    for (i, c) in input["cases"]
        .as_array()
        .context("input.cases: expected an array")?
        .iter()
        .enumerate()
    {
        let a = c
            .as_array()
            .filter(|a| a.len() == 4)
            .with_context(|| format!("input.cases[{i}]: [id, question, score, fail count]"))?;
        cases.push(HardCase {
            query_id: a[0].as_str().context("id")?.to_string(),
            question: a[1].as_str().context("question")?.to_string(),
            gold: String::new(),
            category: String::new(),
            prediction: String::new(),
            score: a[2].as_f64().context("score")?,
            retrieved: Vec::new(),
            sample_id: String::new(),
            step: 0,
            fail_count: a[3].as_u64().context("fail count")? as u32,
            evidence: String::new(),
        });
    }
    let uniq = dedupe(&cases);
    let labels: Option<Vec<usize>> = match &input["labels"] {
        Value::Null => None,
        v => Some(
            super::f64s(v, "input.labels")?
                .into_iter()
                .map(|x| x as usize)
                .collect(),
        ),
    };
    if let Some(l) = &labels {
        anyhow::ensure!(
            l.len() == uniq.len(),
            "input.labels: {} labels for {} unique questions (dedupe differs)",
            l.len(),
            uniq.len()
        );
    }
    anyhow::ensure!(
        labels.is_some() == (uniq.len() > cfg.clusters),
        "clustering decision differs: {} unique cases, {} clusters, labels {}",
        uniq.len(),
        cfg.clusters,
        if labels.is_some() { "given" } else { "absent" }
    );
    Ok(select_with_labels(&cases, &uniq, labels.as_deref(), &cfg)
        .into_iter()
        .map(|i| cases[i].query_id.clone())
        .collect())
}

pub fn check(input: &Value, expected: &Value, _tol: f64) -> anyhow::Result<Outcome> {
    let ours = run(input)?;
    let theirs: Vec<String> = expected
        .as_array()
        .context("expected: an array of query ids")?
        .iter()
        .map(|v| v.as_str().unwrap_or_default().to_string())
        .collect();
    Ok(Outcome::exact(ours == theirs, || {
        format!("ours {ours:?}\nreference {theirs:?}")
    }))
}
