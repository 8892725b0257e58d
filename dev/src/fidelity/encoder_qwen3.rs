//! `encoder_qwen3`: our Qwen3-Embedding path ([`memskill_controller::Qwen3Encoder`]: last-token
//! pooling, normalised) against the reference's (sentence-transformers, left padding,
//! last-token pooling, Normalize) on a tiny Qwen3 whose weights are an integer-hash formula
//! (the generator `scripts/fidelity/gen_encoder_qwen3.py` defines the same one), so no weight
//! file is needed. Each case holds the token ids the reference's tokenizer produced; with
//! `MEMSKILL_QWEN3_TOKENIZER` set to the tokenizer folder the generator used, our tokenisation
//! of the text is compared with them too.

use super::{f64s, Outcome};
use anyhow::{anyhow, Context};
use memskill_controller::{Qwen3Encoder, Qwen3Shape};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use super::{fnv1a64, splitmix64};

/// The generator's `formula_tensor`: u in [-1, 1) from 24 hash bits; 0.08 u, or 1 + 0.1 u for
/// norm weights (names ending in `norm.weight`, any case).
pub fn formula_tensor(name: &str, dims: &[usize]) -> Vec<f32> {
    let n: usize = dims.iter().product();
    let base = fnv1a64(name);
    let norm = name.to_ascii_lowercase().ends_with("norm.weight");
    (0..n as u64)
        .map(|i| {
            let bits = splitmix64(i.wrapping_add(base)) >> 40;
            let u = bits as f64 / (1u64 << 24) as f64 * 2.0 - 1.0;
            (if norm { 1.0 + 0.1 * u } else { 0.08 * u }) as f32
        })
        .collect()
}

type Built = Arc<Qwen3Encoder>;

fn encoder(shape: &Qwen3Shape, max_tokens: usize) -> anyhow::Result<Built> {
    static CACHE: OnceLock<Mutex<HashMap<String, Built>>> = OnceLock::new();
    let key = format!("{}:{max_tokens}", serde_json::to_string(shape)?);
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    let mut c = cache
        .lock()
        .map_err(|_| anyhow!("encoder cache poisoned"))?;
    if let Some(e) = c.get(&key) {
        return Ok(e.clone());
    }
    let mut enc = Qwen3Encoder::from_weight_fn(shape, formula_tensor, "qwen3:tiny-formula".into())?;
    if let Some(dir) = std::env::var_os("MEMSKILL_QWEN3_TOKENIZER") {
        enc = enc
            .with_tokenizer(std::path::Path::new(&dir), max_tokens)
            .with_context(|| "MEMSKILL_QWEN3_TOKENIZER".to_string())?;
    }
    let enc = Arc::new(enc);
    c.insert(key, enc.clone());
    Ok(enc)
}

pub fn check(input: &Value, expected: &Value, tol: f64) -> anyhow::Result<Outcome> {
    let shape: Qwen3Shape = serde_json::from_value(input["model"].clone())
        .context("input.model: expected the tiny model's shape")?;
    let max_tokens = input["max_tokens"]
        .as_u64()
        .context("input.max_tokens: expected an integer")? as usize;
    let ids: Vec<u32> = f64s(&input["ids"], "input.ids")?
        .into_iter()
        .map(|x| x as u32)
        .collect();
    let enc = encoder(&shape, max_tokens)?;
    let mut out = Outcome::exact(ids.len() <= max_tokens, || {
        format!("{} ids exceed max_tokens {max_tokens}", ids.len())
    });
    if std::env::var_os("MEMSKILL_QWEN3_TOKENIZER").is_some() {
        let text = input["text"]
            .as_str()
            .context("input.text: expected a string")?;
        let ours = enc.token_ids(&[text])?.remove(0);
        out = out.and(Outcome::exact(ours == ids, || {
            format!("token ids differ: ours {ours:?} vs reference {ids:?}")
        }));
    }
    let v = enc.embed_ids(&[ids])?.remove(0);
    let ours: Vec<f64> = v.iter().map(|&x| x as f64).collect();
    let theirs = f64s(&expected["embedding"], "expected.embedding")?;
    Ok(out.and(Outcome::numbers(&ours, &theirs, tol)))
}
