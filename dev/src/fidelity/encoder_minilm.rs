//! `encoder_minilm`: our [`memskill_controller::BertEncoder`] on all-MiniLM-L6-v2 (reproduction
//! mode: long texts truncated at 256 tokens) against the reference's sentence-transformers call.
//! Each case holds a fingerprint of the reference's embedding (first 16 values, norm, 8 random
//! ±1/√d projections, as `scripts/fidelity/_encoder_common.py` `summary` computes it). Needs the
//! MiniLM asset (`scripts/fetch-assets.sh minilm`); without it the component is skipped.

use super::{f64s, Outcome};
use anyhow::anyhow;
use memskill_controller::{default_minilm_dir, BertEncoder};
use memskill_core::TextEncoder;
use std::sync::OnceLock;

use super::{fnv1a64, splitmix64};

/// The generator's `summary`: (head, norm, projections) of an embedding.
pub fn summary(v: &[f32], n_head: usize, n_proj: usize) -> (Vec<f64>, f64, Vec<f64>) {
    let d = v.len();
    let v: Vec<f64> = v.iter().map(|&x| x as f64).collect();
    let head = v.iter().take(n_head).copied().collect();
    let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
    let proj = (0..n_proj)
        .map(|j| {
            let base = fnv1a64(&format!("proj{j}"));
            let s: f64 = v
                .iter()
                .enumerate()
                .map(|(i, x)| {
                    let neg = splitmix64((i as u64).wrapping_add(base)) >> 63 == 1;
                    if neg {
                        -x
                    } else {
                        *x
                    }
                })
                .sum();
            s / (d as f64).sqrt()
        })
        .collect();
    (head, norm, proj)
}

fn encoder() -> Result<&'static BertEncoder, String> {
    static ENC: OnceLock<Result<BertEncoder, String>> = OnceLock::new();
    ENC.get_or_init(|| {
        let dir = default_minilm_dir();
        if !dir.join("model.safetensors").is_file() {
            return Err(format!(
                "{} missing (scripts/fetch-assets.sh minilm)",
                dir.display()
            ));
        }
        BertEncoder::load(&dir).map_err(|e| e.to_string())
    })
    .as_ref()
    .map_err(|e| e.clone())
}

/// Why this component cannot be checked here (the MiniLM asset is missing), if so.
pub fn unavailable() -> Option<String> {
    encoder().err()
}

pub fn check(
    input: &serde_json::Value,
    expected: &serde_json::Value,
    tol: f64,
) -> anyhow::Result<Outcome> {
    let text = input["text"]
        .as_str()
        .ok_or_else(|| anyhow!("input.text: expected a string"))?;
    let enc = encoder().map_err(|e| anyhow!("encoder_minilm: {e}"))?;
    let v = enc.embed(&[text])?.remove(0);
    let head_ref = f64s(&expected["head"], "expected.head")?;
    let proj_ref = f64s(&expected["proj"], "expected.proj")?;
    let norm_ref = expected["norm"]
        .as_f64()
        .ok_or_else(|| anyhow!("expected.norm: expected a number"))?;
    let (head, norm, proj) = summary(&v, head_ref.len(), proj_ref.len());
    Ok(Outcome::numbers(&head, &head_ref, tol)
        .and(Outcome::numbers(&[norm], &[norm_ref], tol))
        .and(Outcome::numbers(&proj, &proj_ref, tol)))
}
