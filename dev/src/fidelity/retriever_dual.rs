//! `retriever_dpr` / `retriever_dragon`: question-side memory retrieval with `memory.retriever =
//! "dpr" | "dragon"` (a context encoder embeds the memories, a query encoder the question; BERT
//! `[CLS]`, DPR's vectors normalised, DRAGON+'s not; then
//! [`memskill_trainer::retrieval::question_hits`], cosine) against the reference's `--retriever
//! dpr | dragon` (rag_utils.get_embeddings in 'context' / 'query' mode + MemoryBank.retrieve
//! with use_state_encoder=False).
//!
//! A case's `input.model` is either a tiny formula-weight pair (the committed fixtures: BERT
//! sizes, `max_tokens`, and the tensor-name prefixes `context_prefix` / `query_prefix` that
//! make the two encoders' formula weights differ; the bert-base-uncased tokenizer of the
//! MiniLM asset folder; skipped when that folder is missing) or `{"dirs": [context, query]}`:
//! two model folders on this machine (scripts/fidelity/retriever_random.py writes full-size
//! random-weight ones), loaded the way a run loads them (`memory.retriever_path` /
//! `memory.retriever_query_path` through `backends::retriever_dirs` and
//! `backends::load_bert_retriever`).

use super::{f64s, Outcome};
use anyhow::{anyhow, Context};
use memskill_controller::{default_minilm_dir, BertEncoder};
use memskill_core::TextEncoder;
use memskill_trainer::backends::Retriever;
use memskill_trainer::config::{MemoryConfig, RetrieverKind};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// Why this component cannot be checked here (no BERT tokenizer), if so.
pub fn unavailable() -> Option<String> {
    super::retriever_contriever::unavailable()
}

/// The context and query encoders of a case's model.
type Pair = (Arc<BertEncoder>, Arc<BertEncoder>);

fn encoders(kind: RetrieverKind, model: &Value) -> anyhow::Result<Pair> {
    static CACHE: OnceLock<Mutex<HashMap<String, Pair>>> = OnceLock::new();
    let key = format!("{}:{model}", kind.name());
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    let mut c = cache
        .lock()
        .map_err(|_| anyhow!("retriever cache poisoned"))?;
    if let Some(p) = c.get(&key) {
        return Ok(p.clone());
    }
    let pair = match model.get("dirs") {
        Some(dirs) => from_dirs(kind, dirs)?,
        None => from_formula(kind, model)?,
    };
    c.insert(key, pair.clone());
    Ok(pair)
}

/// Two model folders, resolved and loaded as a run with `memory.retriever = kind` does.
fn from_dirs(kind: RetrieverKind, dirs: &Value) -> anyhow::Result<Pair> {
    let d: Vec<&str> = dirs
        .as_array()
        .filter(|a| a.len() == 2)
        .and_then(|a| a.iter().map(|v| v.as_str()).collect())
        .context("input.model.dirs: expected [context folder, query folder]")?;
    let cfg = MemoryConfig {
        retriever: kind,
        retriever_path: Some(d[0].into()),
        retriever_query_path: Some(d[1].into()),
        ..Default::default()
    };
    let mut loaded = Vec::new();
    for (key, dir) in memskill_trainer::backends::retriever_dirs(&cfg) {
        let enc = memskill_trainer::backends::load_bert_retriever(kind, key, &dir?)?;
        loaded.push(Arc::new(enc));
    }
    let query = loaded.pop().context("a query encoder")?;
    let context = loaded.pop().context("a context encoder")?;
    Ok((context, query))
}

/// The tiny formula-weight pair of the committed fixtures.
fn from_formula(kind: RetrieverKind, model: &Value) -> anyhow::Result<Pair> {
    let m = model
        .as_object()
        .context("input.model: expected an object")?;
    let text = |k: &str| {
        m.get(k)
            .and_then(|v| v.as_str())
            .with_context(|| format!("input.model.{k}: expected a string"))
    };
    let max_tokens = m
        .get("max_tokens")
        .and_then(|v| v.as_u64())
        .context("input.model.max_tokens: expected an integer")? as usize;
    let mut config = json!({
        "hidden_act": "gelu", "position_embedding_type": "absolute", "model_type": "bert"
    });
    for k in [
        "vocab_size",
        "hidden_size",
        "num_hidden_layers",
        "num_attention_heads",
        "intermediate_size",
        "max_position_embeddings",
        "type_vocab_size",
        "layer_norm_eps",
    ] {
        config[k] = m
            .get(k)
            .cloned()
            .with_context(|| format!("input.model.{k}: missing"))?;
    }
    let (pooling, normalize) = kind.bert_output();
    let side = |prefix: &str, what: &str| -> anyhow::Result<Arc<BertEncoder>> {
        let enc = BertEncoder::from_weight_fn(
            &config.to_string(),
            |name, dims| super::encoder_qwen3::formula_tensor(&format!("{prefix}{name}"), dims),
            &default_minilm_dir(),
            max_tokens,
            format!("{}-{what}:tiny-formula", kind.name()),
        )?;
        Ok(Arc::new(
            enc.with_pooling(pooling).with_normalize(normalize),
        ))
    };
    Ok((
        side(text("context_prefix")?, "context")?,
        side(text("query_prefix")?, "query")?,
    ))
}

pub fn check_dpr(input: &Value, expected: &Value, tol: f64) -> anyhow::Result<Outcome> {
    check(RetrieverKind::Dpr, input, expected, tol)
}

pub fn check_dragon(input: &Value, expected: &Value, tol: f64) -> anyhow::Result<Outcome> {
    check(RetrieverKind::Dragon, input, expected, tol)
}

fn as_f64(v: &[f32]) -> Vec<f64> {
    v.iter().map(|&x| x as f64).collect()
}

fn check(
    kind: RetrieverKind,
    input: &Value,
    expected: &Value,
    tol: f64,
) -> anyhow::Result<Outcome> {
    let (context, query) = encoders(kind, &input["model"])?;
    let retr = Retriever::two(context.clone(), query.clone());
    let (mut out, mems) =
        super::retriever_contriever::retrieval_case(input, expected, tol, &retr, &query)?;
    if let (Some(first), Some(e)) = (mems.first(), expected.get("first_memory_embedding")) {
        let ours = as_f64(&context.embed(&[first.as_str()])?[0]);
        let theirs = f64s(e, "expected.first_memory_embedding")?;
        out = out.and(Outcome::numbers(&ours, &theirs, tol));
    }
    Ok(out)
}
