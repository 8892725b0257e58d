//! `segment_full_session`: span texts of whole sessions (and of turn pairs and single turns)
//! for generated LoCoMo conversations and LongMemEval questions, byte for byte against the
//! reference's `extract_chunks` (fixture from `scripts/fidelity/gen_segment_full_session.py`).

use super::Outcome;
use anyhow::{bail, Context};
use memskill_core::Sample;
use memskill_datasets::{segment, DatasetKind, LmeOptions, LoadOptions, LocomoOptions, SpanMode};
use serde_json::Value;

/// Loads one generated record of `dataset` as our loader does (nothing filtered out).
pub(crate) fn load_record(dataset: &str, record: &Value) -> anyhow::Result<Sample> {
    let doc = Value::Array(vec![record.clone()]);
    let file = "fixture record";
    let kind: DatasetKind = dataset.parse().context("input.dataset")?;
    let opts = LoadOptions {
        locomo: LocomoOptions {
            include_adversarial: true,
        },
        longmemeval: LmeOptions {
            include_abstention: true,
            only: None,
        },
        hotpotqa: Default::default(),
    };
    let mut v = memskill_datasets::from_json(kind, &doc, file, &opts)?;
    if v.len() != 1 {
        bail!("input.record: expected one sample, got {}", v.len());
    }
    Ok(v.remove(0))
}

/// The chunk texts of `expected.chunks`.
pub(crate) fn expected_chunks(expected: &Value) -> anyhow::Result<Vec<String>> {
    expected
        .get("chunks")
        .and_then(Value::as_array)
        .context("expected.chunks: expected an array of strings")?
        .iter()
        .enumerate()
        .map(|(i, c)| {
            c.as_str()
                .map(str::to_string)
                .with_context(|| format!("expected.chunks[{i}]: expected a string"))
        })
        .collect()
}

/// Compares chunk lists exactly; the detail shows the first difference.
pub(crate) fn compare_chunks(ours: &[String], theirs: &[String]) -> Outcome {
    Outcome::exact(ours == theirs, || {
        if ours.len() != theirs.len() {
            return format!(
                "{} chunks vs reference {}: ours {:?} / reference {:?}",
                ours.len(),
                theirs.len(),
                ours.iter().map(|c| short(c)).collect::<Vec<_>>(),
                theirs.iter().map(|c| short(c)).collect::<Vec<_>>()
            );
        }
        let i = ours
            .iter()
            .zip(theirs)
            .position(|(a, b)| a != b)
            .unwrap_or(0);
        format!("chunk {i}: ours {:?} vs reference {:?}", ours[i], theirs[i])
    })
}

fn short(s: &str) -> String {
    let t: String = s.chars().take(60).collect();
    if t.len() < s.len() {
        format!("{t}…")
    } else {
        t
    }
}

pub fn check(input: &Value, expected: &Value, _tol: f64) -> anyhow::Result<Outcome> {
    let dataset = input
        .get("dataset")
        .and_then(Value::as_str)
        .context("input.dataset: expected a string")?;
    let mode: SpanMode = input
        .get("mode")
        .and_then(Value::as_str)
        .context("input.mode: expected a string")?
        .parse()?;
    let record = input.get("record").context("input.record: missing")?;
    let mut sample = load_record(dataset, record)?;
    segment(&mut sample, &mode);
    let ours: Vec<String> = sample.spans.into_iter().map(|s| s.text).collect();
    Ok(compare_chunks(&ours, &expected_chunks(expected)?))
}
