//! MiniLM must-shows; skipped when the assets are not in the cache.

use memskill_controller::{default_minilm_dir, BertEncoder};
use memskill_core::TextEncoder;

fn encoder() -> Option<BertEncoder> {
    let dir = default_minilm_dir();
    if !dir.join("model.safetensors").is_file() {
        eprintln!(
            "skipped: {} missing; run scripts/fetch-assets.sh",
            dir.display()
        );
        return None;
    }
    Some(BertEncoder::load(&dir).expect("load MiniLM"))
}

fn cos(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[test]
fn minilm_known_cosine_and_unrelated_pair() {
    let Some(enc) = encoder() else { return };
    assert_eq!(enc.dim(), 384);
    let v = enc
        .embed(&[
            "A man is eating food.",
            "A man is eating a piece of bread.",
            "The quarterly tax filing deadline moved to April.",
        ])
        .unwrap();
    for x in &v {
        assert!((cos(x, x) - 1.0).abs() < 1e-5);
    }
    let c = cos(&v[0], &v[1]);
    eprintln!(
        "cosine(food, bread) = {c:.4}; cosine(food, tax) = {:.4}",
        cos(&v[0], &v[2])
    );
    assert!((c - 0.7553).abs() < 0.001, "cosine {c}");
    assert!(
        cos(&v[0], &v[2]) < 0.1,
        "unrelated pair {}",
        cos(&v[0], &v[2])
    );
}

#[test]
fn minilm_batching_has_no_padding_artefacts() {
    let Some(enc) = encoder() else { return };
    let short = "Caroline went to the LGBTQ support group yesterday.";
    let long = "Melanie said she has been painting a lot lately, mostly landscapes of the lake near her house, and that her kids love to join her on weekends when the weather is good.";
    let alone = enc.embed(&[short]).unwrap();
    let batched = enc.embed(&[long, short, "ok", long]).unwrap();
    assert!((cos(&alone[0], &batched[1]) - 1.0).abs() < 1e-4);
    assert!((cos(&batched[0], &batched[3]) - 1.0).abs() < 1e-5);
    let long_alone = enc.embed(&[long]).unwrap();
    assert!((cos(&long_alone[0], &batched[0]) - 1.0).abs() < 1e-4);
}
