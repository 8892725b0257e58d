//! `retriever_contriever`: question-side memory retrieval with `memory.retriever =
//! "contriever"` ([`memskill_controller::BertEncoder`] mean pooling, normalised, 512 tokens, then
//! [`memskill_trainer::retrieval::question_hits`]) against the reference's `--retriever contriever`
//! (rag_utils.get_embeddings in 'context' / 'query' mode + MemoryBank.retrieve with
//! use_state_encoder=False). facebook/contriever's weights are not reachable, so both sides run
//! a tiny BERT whose weights are the integer-hash formula of
//! [`super::encoder_qwen3::formula_tensor`], with the bert-base-uncased WordPiece tokenizer of
//! the MiniLM asset folder (skipped when that folder is missing).

use super::{f64s, Outcome};
use anyhow::{anyhow, Context};
use memskill_controller::{default_minilm_dir, BertEncoder};
use memskill_core::{MemoryBank, Provenance, TextEncoder};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// Why this component cannot be checked here (no BERT tokenizer), if so.
pub fn unavailable() -> Option<String> {
    let dir = default_minilm_dir();
    (!dir.join("tokenizer.json").is_file()).then(|| {
        format!(
            "{} missing (the bert-base-uncased tokenizer; scripts/fetch-assets.sh minilm)",
            dir.join("tokenizer.json").display()
        )
    })
}

fn retriever(model: &Value) -> anyhow::Result<Arc<BertEncoder>> {
    static CACHE: OnceLock<Mutex<HashMap<String, Arc<BertEncoder>>>> = OnceLock::new();
    let key = model.to_string();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    let mut c = cache
        .lock()
        .map_err(|_| anyhow!("retriever cache poisoned"))?;
    if let Some(e) = c.get(&key) {
        return Ok(e.clone());
    }
    let mut config = json!({
        "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "initializer_range": 0.02,
        "pad_token_id": 0, "position_embedding_type": "absolute", "model_type": "bert",
        "classifier_dropout": null
    });
    let m = model
        .as_object()
        .context("input.model: expected an object")?;
    for (k, v) in m {
        config[k] = v.clone();
    }
    let max_tokens =
        m.get("max_position_embeddings")
            .and_then(|v| v.as_u64())
            .context("input.model.max_position_embeddings: expected an integer")? as usize;
    let enc = BertEncoder::from_weight_fn(
        &config.to_string(),
        super::encoder_qwen3::formula_tensor,
        &default_minilm_dir(),
        max_tokens,
        "contriever:tiny-formula".into(),
    )?;
    let enc = Arc::new(enc);
    c.insert(key, enc.clone());
    Ok(enc)
}

pub fn check(input: &Value, expected: &Value, tol: f64) -> anyhow::Result<Outcome> {
    let enc = retriever(&input["model"])?;
    let retr = memskill_trainer::backends::Retriever::one(enc.clone());
    Ok(retrieval_case(input, expected, tol, &retr, &enc)?.0)
}

/// One retrieval case against the reference: the case's memories go into a bank (its state
/// side a hashing encoder, which plays no part in question retrieval), `retr` retrieves the
/// top `top_k` for the question, and the retrieved ids, the question's token count and its
/// vector (by `query`, the question side) are compared with `expected`. Also returns the
/// memories, for checks of the context side.
pub(super) fn retrieval_case(
    input: &Value,
    expected: &Value,
    tol: f64,
    retr: &memskill_trainer::backends::Retriever,
    query: &BertEncoder,
) -> anyhow::Result<(Outcome, Vec<String>)> {
    let question = input["question"]
        .as_str()
        .context("input.question: expected a string")?;
    let k = input["top_k"]
        .as_u64()
        .context("input.top_k: expected an integer")? as usize;
    let mems = input["memories"]
        .as_array()
        .context("input.memories: expected an array")?;
    let state = memskill_controller::HashingEncoder::new(8);
    let mut bank = MemoryBank::new();
    let mut texts = Vec::new();
    for (i, m) in mems.iter().enumerate() {
        let text = m
            .as_str()
            .with_context(|| format!("input.memories[{i}]: expected a string"))?;
        let prov = Provenance {
            span_id: "s".into(),
            skills: vec![],
            step: 0,
            observed_at: None,
        };
        bank.insert(text.to_string(), state.embed(&[text])?.remove(0), prov)
            .with_context(|| format!("input.memories[{i}]"))?;
        texts.push(text.to_string());
    }
    let hits =
        memskill_trainer::retrieval::question_hits(&bank, &state, Some(retr), &[question], k)?;
    let ours_idx: Vec<f64> = hits[0].iter().map(|(id, _)| *id as f64).collect();
    let ref_idx = f64s(&expected["retrieved"], "expected.retrieved")?;
    let n_tokens = query.token_ids(&[question])?[0].len() as f64;
    let ref_tokens = expected["question_tokens"]
        .as_f64()
        .context("expected.question_tokens: expected a number")?;
    let q: Vec<f64> = query.embed(&[question])?[0]
        .iter()
        .map(|&x| x as f64)
        .collect();
    let ref_q = f64s(
        &expected["question_embedding"],
        "expected.question_embedding",
    )?;
    let out = Outcome::exact(ours_idx == ref_idx, || {
        format!("retrieved {ours_idx:?} vs reference {ref_idx:?}")
    })
    .and(Outcome::exact(n_tokens == ref_tokens, || {
        format!("question tokens {n_tokens} vs reference {ref_tokens}")
    }))
    .and(Outcome::numbers(&q, &ref_q, tol));
    Ok((out, texts))
}
