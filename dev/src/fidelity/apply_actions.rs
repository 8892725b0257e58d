//! `apply_actions`: a memory bank, the retrieved positions and parsed results -> the bank's
//! contents in order after application, as the reference's `Executor.apply_to_memory_bank`
//! leaves them. Ours runs with the reproduction default (`executor.dedupe_actions = false`).

use anyhow::{bail, Context};
use memskill_core::{EncoderError, MemoryAction, MemoryBank, MemoryId, Provenance, TextEncoder};
use serde_json::Value;

use super::Outcome;

/// Application does not depend on embeddings: one constant vector per text.
struct ConstEncoder;

impl TextEncoder for ConstEncoder {
    fn id(&self) -> String {
        "const".into()
    }
    fn dim(&self) -> usize {
        4
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EncoderError> {
        Ok(texts.iter().map(|_| vec![1.0; 4]).collect())
    }
}

fn strings(v: &Value, what: &str) -> anyhow::Result<Vec<String>> {
    v.as_array()
        .with_context(|| format!("{what}: expected an array of strings"))?
        .iter()
        .enumerate()
        .map(|(i, x)| {
            x.as_str()
                .map(String::from)
                .with_context(|| format!("{what}[{i}]: expected a string"))
        })
        .collect()
}

pub fn check(input: &Value, expected: &Value, _tol: f64) -> anyhow::Result<Outcome> {
    let texts = strings(&input["bank"], "input.bank")?;
    let retrieved: Vec<MemoryId> = input["retrieved"]
        .as_array()
        .context("input.retrieved: expected an array")?
        .iter()
        .enumerate()
        .map(|(i, x)| {
            x.as_u64()
                .map(|v| v as MemoryId)
                .with_context(|| format!("input.retrieved[{i}]: expected a position"))
        })
        .collect::<anyhow::Result<_>>()?;
    let mut actions = Vec::new();
    for (i, r) in input["results"]
        .as_array()
        .context("input.results: expected an array")?
        .iter()
        .enumerate()
    {
        let what = format!("input.results[{i}]");
        let kind = r[0]
            .as_str()
            .with_context(|| format!("{what}[0]: expected a kind"))?;
        if !r[1]
            .as_bool()
            .with_context(|| format!("{what}[1]: expected a bool"))?
        {
            continue; // failed results are not applied
        }
        let index = r[2]
            .as_i64()
            .with_context(|| format!("{what}[2]: expected an index"))?;
        let content = r[3].as_str().unwrap_or("").to_string();
        actions.push(match kind {
            "INSERT" => MemoryAction::Insert { content },
            "UPDATE" => MemoryAction::Update {
                index: index as usize,
                content,
            },
            "DELETE" => MemoryAction::Delete {
                index: index as usize,
            },
            "NOOP" => MemoryAction::Noop,
            other => bail!("{what}[0]: unknown kind {other:?}"),
        });
    }
    let prov = Provenance {
        span_id: "s".into(),
        skills: vec!["skill".into()],
        step: 0,
        observed_at: None,
    };
    let mut bank = MemoryBank::new();
    for t in &texts {
        bank.insert(t.clone(), vec![1.0; 4], prov.clone())?;
    }
    memskill_executor::apply_actions(
        &mut bank,
        &actions,
        &retrieved,
        &ConstEncoder,
        &prov,
        &memskill_executor::ApplyOptions::default(),
    )?;
    let ours: Vec<String> = bank.live().map(|m| m.content.clone()).collect();
    let theirs = strings(expected, "expected")?;
    Ok(Outcome::exact(ours == theirs, || {
        format!("ours {ours:?} vs reference {theirs:?}")
    }))
}
