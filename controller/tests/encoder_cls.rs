//! `[CLS]` pooling and the DPR checkpoint layouts of `BertEncoder`, on tiny BERT folders
//! written here (config.json, a WordPiece tokenizer.json, model.safetensors): no assets.

use candle_core::{Device, Tensor};
use memskill_controller::{BertEncoder, BertPooling};
use memskill_core::TextEncoder;
use std::collections::HashMap;
use std::path::Path;
use tokenizers::models::wordpiece::WordPiece;
use tokenizers::normalizers::bert::BertNormalizer;
use tokenizers::pre_tokenizers::bert::BertPreTokenizer;
use tokenizers::processors::bert::BertProcessing;
use tokenizers::Tokenizer;

const WORDS: [&str; 16] = [
    "[PAD]", "[UNK]", "[CLS]", "[SEP]", "alice", "lives", "in", "rome", "bob", "drinks", "green",
    "tea", "where", "does", "live", "?",
];
const H: usize = 8;
const LAYERS: usize = 2;
const INTER: usize = 16;
const POSITIONS: usize = 32;

/// Deterministic small weights: layer-norm scales near 1, everything else in [-0.3, 0.3].
fn values(name: &str, n: usize) -> Vec<f32> {
    let seed = name
        .bytes()
        .fold(7u32, |h, b| h.wrapping_mul(31).wrapping_add(b as u32));
    (0..n)
        .map(|i| {
            let u = ((seed as f32) * 0.001 + i as f32 * 0.731).sin();
            if name.ends_with("LayerNorm.weight") {
                1.0 + 0.1 * u
            } else {
                0.3 * u
            }
        })
        .collect()
}

fn shapes() -> Vec<(String, Vec<usize>)> {
    let mut s = vec![
        (
            "embeddings.word_embeddings.weight".into(),
            vec![WORDS.len(), H],
        ),
        (
            "embeddings.position_embeddings.weight".into(),
            vec![POSITIONS, H],
        ),
        ("embeddings.token_type_embeddings.weight".into(), vec![2, H]),
        ("embeddings.LayerNorm.weight".into(), vec![H]),
        ("embeddings.LayerNorm.bias".into(), vec![H]),
    ];
    for l in 0..LAYERS {
        let p = format!("encoder.layer.{l}");
        for (n, out, inp) in [
            ("attention.self.query", H, H),
            ("attention.self.key", H, H),
            ("attention.self.value", H, H),
            ("attention.output.dense", H, H),
            ("intermediate.dense", INTER, H),
            ("output.dense", H, INTER),
        ] {
            s.push((format!("{p}.{n}.weight"), vec![out, inp]));
            s.push((format!("{p}.{n}.bias"), vec![out]));
        }
        for n in ["attention.output.LayerNorm", "output.LayerNorm"] {
            s.push((format!("{p}.{n}.weight"), vec![H]));
            s.push((format!("{p}.{n}.bias"), vec![H]));
        }
    }
    s
}

fn write_tokenizer(dir: &Path) {
    let vocab = dir.join("vocab.txt");
    std::fs::write(&vocab, WORDS.join("\n") + "\n").unwrap();
    let wp = WordPiece::from_file(&vocab.to_string_lossy())
        .unk_token("[UNK]".into())
        .build()
        .unwrap();
    let mut tok = Tokenizer::new(wp);
    tok.with_normalizer(Some(BertNormalizer::default()))
        .unwrap();
    tok.with_pre_tokenizer(Some(BertPreTokenizer));
    tok.with_post_processor(Some(BertProcessing::new(
        ("[SEP]".into(), 3),
        ("[CLS]".into(), 2),
    )));
    tok.save(dir.join("tokenizer.json"), false).unwrap();
}

/// A tiny BERT folder whose tensors sit under `prefix` (e.g. `ctx_encoder.bert_model.`);
/// `extra` is merged into config.json.
fn folder(dir: &Path, prefix: &str, extra: serde_json::Value) {
    std::fs::create_dir_all(dir).unwrap();
    let mut config = serde_json::json!({
        "vocab_size": WORDS.len(), "hidden_size": H, "num_hidden_layers": LAYERS,
        "num_attention_heads": 2, "intermediate_size": INTER, "hidden_act": "gelu",
        "max_position_embeddings": POSITIONS, "type_vocab_size": 2, "layer_norm_eps": 1e-12,
        "model_type": "bert"
    });
    for (k, v) in extra.as_object().unwrap() {
        config[k] = v.clone();
    }
    std::fs::write(dir.join("config.json"), config.to_string()).unwrap();
    write_tokenizer(dir);
    let tensors: HashMap<String, Tensor> = shapes()
        .into_iter()
        .map(|(name, dims)| {
            let v = values(&name, dims.iter().product());
            let t = Tensor::from_vec(v, dims.as_slice(), &Device::Cpu).unwrap();
            (format!("{prefix}{name}"), t)
        })
        .collect();
    candle_core::safetensors::save(&tensors, dir.join("model.safetensors")).unwrap();
}

fn norm(v: &[f32]) -> f32 {
    v.iter().map(|x| x * x).sum::<f32>().sqrt()
}

fn max_diff(a: &[f32], b: &[f32]) -> f32 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

const TEXTS: [&str; 3] = [
    "Alice lives in Rome",
    "Bob drinks green tea",
    "where does alice live?",
];

#[test]
fn dpr_checkpoint_prefixes_load_the_same_model() {
    let tmp = tempfile::tempdir().unwrap();
    let dpr = serde_json::json!({"model_type": "dpr", "projection_dim": 0});
    let layouts = [
        ("", serde_json::json!({})),
        ("bert.", serde_json::json!({})),
        ("ctx_encoder.bert_model.", dpr.clone()),
        ("question_encoder.bert_model.", dpr),
    ];
    let mut seen: Vec<Vec<Vec<f32>>> = Vec::new();
    for (i, (prefix, extra)) in layouts.into_iter().enumerate() {
        let d = tmp.path().join(format!("m{i}"));
        folder(&d, prefix, extra);
        let enc = BertEncoder::load(&d)
            .unwrap_or_else(|e| panic!("{prefix:?}: {e}"))
            .with_pooling(BertPooling::Cls);
        seen.push(enc.embed(&TEXTS).unwrap());
    }
    for (i, s) in seen.iter().enumerate().skip(1) {
        for (a, b) in s.iter().zip(&seen[0]) {
            assert_eq!(a, b, "layout {i} reads other weights than the root layout");
        }
    }
}

#[test]
fn cls_pooling_is_its_own_vector_and_batch_independent() {
    let tmp = tempfile::tempdir().unwrap();
    folder(tmp.path(), "", serde_json::json!({}));
    let mean = BertEncoder::load(tmp.path()).unwrap();
    let cls = BertEncoder::load(tmp.path())
        .unwrap()
        .with_pooling(BertPooling::Cls);
    let raw = BertEncoder::load(tmp.path())
        .unwrap()
        .with_pooling(BertPooling::Cls)
        .with_normalize(false);
    let (m, c, r) = (
        mean.embed(&TEXTS).unwrap(),
        cls.embed(&TEXTS).unwrap(),
        raw.embed(&TEXTS).unwrap(),
    );
    for i in 0..TEXTS.len() {
        assert!((norm(&c[i]) - 1.0).abs() < 1e-5);
        assert!(max_diff(&m[i], &c[i]) > 1e-3, "CLS equals the mean");
        assert!((norm(&r[i]) - 1.0).abs() > 1e-3, "left unnormalised");
        let scaled: Vec<f32> = r[i].iter().map(|x| x / norm(&r[i])).collect();
        assert!(max_diff(&scaled, &c[i]) < 1e-6);
        // each text's first row in the packed batch: alone gives the same vector
        let alone = raw.embed(&[TEXTS[i]]).unwrap();
        assert!(max_diff(&alone[0], &r[i]) < 1e-5);
    }
    // the cache key names every mode
    assert_ne!(mean.id(), cls.id());
    assert_ne!(cls.id(), raw.id());
    assert!(raw.id().contains("cls") && raw.id().contains("unnormalised"));
}

#[test]
fn a_dpr_projection_is_refused_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    folder(
        tmp.path(),
        "ctx_encoder.bert_model.",
        serde_json::json!({"model_type": "dpr", "projection_dim": 4}),
    );
    let e = BertEncoder::load(tmp.path()).err().expect("refused");
    assert!(e.to_string().contains("projection_dim 4"), "{e}");
}
