//! `segment_fixed_length`: the reference's fixed-length chunking (tiktoken cl100k_base windows,
//! `--chunk-size` / `--chunk-overlap`) of generated texts, HotpotQA long-context records
//! (windows over the whole context) and LoCoMo / LongMemEval records (windows per session with
//! the date header), byte for byte (fixture from `scripts/fidelity/gen_segment_fixed_length.py`).

use super::segment_full_session::{compare_chunks, expected_chunks, load_record};
use super::Outcome;
use anyhow::Context;
use memskill_datasets::{fixed_windows, segment, SpanMode};
use serde_json::Value;

fn usize_field(input: &Value, key: &str) -> anyhow::Result<usize> {
    input
        .get(key)
        .and_then(Value::as_u64)
        .map(|n| n as usize)
        .with_context(|| format!("input.{key}: expected a non-negative integer"))
}

pub fn check(input: &Value, expected: &Value, _tol: f64) -> anyhow::Result<Outcome> {
    let kind = input
        .get("kind")
        .and_then(Value::as_str)
        .context("input.kind: expected a string")?;
    let tokens = usize_field(input, "tokens")?;
    let overlap = usize_field(input, "overlap")?;
    let ours: Vec<String> = if kind == "text" {
        let text = input
            .get("text")
            .and_then(Value::as_str)
            .context("input.text: expected a string")?;
        fixed_windows(text, tokens, overlap)
            .into_iter()
            .map(|w| w.text)
            .collect()
    } else {
        let record = input.get("record").context("input.record: missing")?;
        let mut sample = load_record(kind, record)?;
        segment(&mut sample, &SpanMode::FixedTokens { tokens, overlap });
        sample.spans.into_iter().map(|s| s.text).collect()
    };
    Ok(compare_chunks(&ours, &expected_chunks(expected)?))
}
