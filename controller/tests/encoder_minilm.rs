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

fn long_span(ending: &str) -> String {
    let turns = [
        "Caroline: I went to the support group yesterday and met a few new people there.",
        "Melanie: That sounds lovely! I have been painting landscapes of the lake near our house.",
        "Caroline: My kids asked about adoption agencies again, so we read a few brochures.",
        "Melanie: We camped in the mountains last weekend; the kids roasted marshmallows.",
    ];
    let mut s = String::new();
    for i in 0..90 {
        s.push_str(turns[i % turns.len()]);
        s.push('\n');
    }
    s.push_str(ending);
    s
}

#[test]
fn minilm_truncates_at_256_tokens_like_sentence_transformers() {
    let Some(enc) = encoder() else { return };
    assert_eq!(enc.max_tokens(), 256);
    let a = long_span("Caroline: By the way, I am moving to Sweden next spring.");
    let b = long_span("Melanie: Our dog Luna learned to open the fridge yesterday.");
    let n = enc.token_counts(&[a.as_str()]).unwrap()[0];
    assert_eq!(n, 256, "truncated to the model's maximum");
    let v = enc.embed(&[a.as_str(), b.as_str()]).unwrap();
    // The reference's behaviour: the end of a long span is invisible.
    assert_eq!(v[0], v[1]);
}

#[test]
fn minilm_window_mean_sees_the_end_of_a_long_span() {
    let Some(enc) = encoder() else { return };
    let enc = enc.with_long_text(memskill_controller::LongText::WindowMean);
    let a = long_span("Caroline: By the way, I am moving to Sweden next spring.");
    let b = long_span("Melanie: Our dog Luna learned to open the fridge yesterday.");
    let v = enc.embed(&[a.as_str(), b.as_str()]).unwrap();
    for x in &v {
        assert!(
            (cos(x, x) - 1.0).abs() < 1e-5,
            "windowed mean is normalised"
        );
    }
    let c = cos(&v[0], &v[1]);
    assert!(
        c < 0.99999,
        "a change at the end of a ~2k-token span must change the state: {c}"
    );
    assert!(c > 0.8, "the spans share everything else: {c}");
    assert!(enc.id().contains("window-mean"), "{}", enc.id());
}

#[test]
fn minilm_window_mean_equals_truncate_for_texts_that_fit() {
    let Some(enc) = encoder() else { return };
    let texts = ["", "ok", "A man is eating food.", "Über café — 東京 🎉"];
    let plain = enc.embed(&texts).unwrap();
    let enc = enc.with_long_text(memskill_controller::LongText::WindowMean);
    let win = enc.embed(&texts).unwrap();
    assert_eq!(plain, win);
}

#[test]
fn minilm_window_mean_is_the_token_weighted_mean_of_its_windows() {
    let Some(enc) = encoder() else { return };
    let enc = enc
        .with_max_tokens(16)
        .unwrap()
        .with_long_text(memskill_controller::LongText::WindowMean);
    // 20 single-token words: windows of 14 and 6 content tokens.
    let words: Vec<String> = (0..20).map(|i| ["cat", "dog"][i % 2].to_string()).collect();
    let text = words.join(" ");
    let first = words[..14].join(" ");
    let second = words[14..].join(" ");
    let v = enc.embed(&[text.as_str()]).unwrap();
    let w = enc.embed(&[first.as_str(), second.as_str()]).unwrap();
    let mut m: Vec<f32> = w[0]
        .iter()
        .zip(&w[1])
        .map(|(a, b)| (14.0 * a + 6.0 * b) / 20.0)
        .collect();
    let n = m.iter().map(|x| x * x).sum::<f32>().sqrt();
    m.iter_mut().for_each(|x| *x /= n);
    assert!(
        (cos(&v[0], &m) - 1.0).abs() < 1e-5,
        "cos {}",
        cos(&v[0], &m)
    );
}
