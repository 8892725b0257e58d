//! `alfworld_chunks`: ALFWorld trajectory texts and their packing into memory-building chunks
//! (whole trajectories, `=== TRAJECTORY ===` separators, cl100k token budget), byte for byte
//! against the reference's `_build_trajectory_text` + `chunk_trajectories_by_tokens` (fixture
//! from `scripts/fidelity/gen_alfworld_chunks.py`). Ours: `memskill_alfworld::format_trajectory`
//! and `memskill_datasets::pack_whole`, as `trainer::alfworld::trajectory_sample` uses them
//! with the reference setting `eval_chunk_overlap = 0`.

use super::segment_full_session::{compare_chunks, expected_chunks};
use super::Outcome;
use anyhow::Context;
use memskill_alfworld::{format_trajectory, StepRecord};
use serde_json::Value;

/// One generated game: the first observation, the steps, and whether it ended in success
/// (last step done with reward 1, as the environment reports a win).
fn game(v: &Value, i: usize) -> anyhow::Result<String> {
    let steps = v
        .as_array()
        .with_context(|| format!("input.games[{i}]: expected an array of steps"))?;
    let text = |s: &Value, k: &str| s.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let intro = steps
        .first()
        .map(|s| text(s, "observation"))
        .unwrap_or_default();
    let records: Vec<StepRecord> = steps
        .iter()
        .skip(1)
        .map(|s| StepRecord {
            action: text(s, "action"),
            obs: text(s, "observation"),
        })
        .collect();
    let won = steps.len() > 1
        && steps.last().is_some_and(|s| {
            s.get("done").and_then(Value::as_bool) == Some(true)
                && s.get("reward").and_then(Value::as_f64) == Some(1.0)
        });
    Ok(format_trajectory(&intro, &records, won))
}

pub fn check(input: &Value, expected: &Value, _tol: f64) -> anyhow::Result<Outcome> {
    let games = input
        .get("games")
        .and_then(Value::as_array)
        .context("input.games: expected an array")?;
    let chunk = input
        .get("chunk_tokens")
        .and_then(Value::as_u64)
        .context("input.chunk_tokens: expected a non-negative integer")? as usize;
    let texts: Vec<String> = games
        .iter()
        .enumerate()
        .map(|(i, g)| game(g, i))
        .collect::<anyhow::Result<_>>()?;
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let ours: Vec<String> =
        memskill_datasets::pack_whole(&refs, chunk, memskill_datasets::TRAJECTORY_SEPARATOR)
            .into_iter()
            .map(|p| p.text)
            .collect();
    Ok(compare_chunks(&ours, &expected_chunks(expected)?))
}
