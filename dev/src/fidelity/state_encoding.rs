//! `state_encoding`: the controller's state for a span given embeddings — retrieval of the
//! span's top-k memories by state-encoder cosine, then `[span ; mean(retrieved)]` — against the
//! reference's `MemoryBank.retrieve(use_state_encoder=True)` + `StateEncoder.encode` (fusion
//! "mean"). Ours is [`memskill_trainer::retrieval::span_state`], the function the episode uses.

use super::{f64s, Outcome};
use anyhow::Context;
use memskill_core::{MemoryBank, Provenance};
use serde_json::Value;

fn f32s(v: &Value, what: &str) -> anyhow::Result<Vec<f32>> {
    Ok(f64s(v, what)?.into_iter().map(|x| x as f32).collect())
}

pub fn check(input: &Value, expected: &Value, tol: f64) -> anyhow::Result<Outcome> {
    let span = f32s(&input["span"], "input.span")?;
    let k = input["top_k"]
        .as_u64()
        .context("input.top_k: expected an integer")? as usize;
    let mems = input["memories"]
        .as_array()
        .context("input.memories: expected an array")?;
    let mut bank = MemoryBank::new();
    for (i, m) in mems.iter().enumerate() {
        let e = f32s(m, &format!("input.memories[{i}]"))?;
        let prov = Provenance {
            span_id: "s".into(),
            skills: vec![],
            step: 0,
            observed_at: None,
        };
        bank.insert(format!("memory {i}"), e, prov)
            .with_context(|| format!("input.memories[{i}]"))?;
    }
    let (retrieved, state) = memskill_trainer::retrieval::span_state(&bank, &span, k);
    let ours_idx: Vec<f64> = retrieved.iter().map(|m| m.id as f64).collect();
    let ref_idx = f64s(&expected["retrieved"], "expected.retrieved")?;
    let ours_state: Vec<f64> = state.iter().map(|&x| x as f64).collect();
    let ref_state = f64s(&expected["state"], "expected.state")?;
    Ok(Outcome::exact(ours_idx == ref_idx, || {
        format!("retrieved {ours_idx:?} vs reference {ref_idx:?}")
    })
    .and(Outcome::numbers(&ours_state, &ref_state, tol)))
}
