//! Qwen3Encoder::load on a tiny Qwen3-Embedding-style folder written here (config.json,
//! model.safetensors with Hugging Face `Qwen3Model` tensor names, a word-level tokenizer.json
//! that appends an end-of-text token, sentence-transformers modules.json and
//! sentence_bert_config.json): the loaded encoder equals the same weights built in memory, the
//! folder's max_seq_length truncates, and Normalize is applied only when modules.json has it.
//! Also: our forward (`qwen3_fast`) against candle-transformers' `qwen3::Model` on random
//! weights of several small shapes, and a transformers 5 `config.json` with bf16 weights.

use candle_core::{Device, Tensor};
use memskill_controller::{Qwen3Encoder, Qwen3Shape};
use memskill_core::TextEncoder;
use std::collections::HashMap;
use std::path::Path;

fn shape() -> Qwen3Shape {
    Qwen3Shape {
        vocab_size: 12,
        hidden_size: 16,
        intermediate_size: 32,
        num_hidden_layers: 2,
        num_attention_heads: 2,
        num_key_value_heads: 1,
        head_dim: 8,
        max_position_embeddings: 64,
        rope_theta: 10000.0,
        rms_norm_eps: 1e-6,
    }
}

fn weight(name: &str, dims: &[usize]) -> Vec<f32> {
    let n: usize = dims.iter().product();
    let mut h: u64 = name.bytes().fold(1469598103934665603, |h, b| {
        (h ^ b as u64).wrapping_mul(1099511628211)
    });
    (0..n)
        .map(|_| {
            h = h
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let u = (h >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0;
            if name.ends_with("norm.weight") {
                1.0 + 0.1 * u
            } else {
                0.1 * u
            }
        })
        .collect()
}

const WORDS: [&str; 10] = [
    "the", "cat", "sat", "on", "mat", "dog", "ran", "home", "red", "blue",
];

fn write_folder(dir: &Path, max_seq: usize, normalize: bool) {
    std::fs::create_dir_all(dir).unwrap();
    let s = shape();
    let config = serde_json::json!({
        "vocab_size": s.vocab_size, "hidden_size": s.hidden_size,
        "intermediate_size": s.intermediate_size, "num_hidden_layers": s.num_hidden_layers,
        "num_attention_heads": s.num_attention_heads, "num_key_value_heads": s.num_key_value_heads,
        "head_dim": s.head_dim, "attention_bias": false,
        "max_position_embeddings": s.max_position_embeddings, "max_window_layers": 2,
        "tie_word_embeddings": true, "rope_theta": s.rope_theta, "rms_norm_eps": s.rms_norm_eps,
        "use_sliding_window": false, "sliding_window": null, "hidden_act": "silu"
    });
    std::fs::write(dir.join("config.json"), config.to_string()).unwrap();
    let mut tensors = HashMap::new();
    for (name, dims) in s.tensors() {
        let t = Tensor::from_vec(weight(&name, &dims), dims.as_slice(), &Device::Cpu).unwrap();
        tensors.insert(name, t);
    }
    candle_core::safetensors::save(&tensors, dir.join("model.safetensors")).unwrap();
    let mut vocab = serde_json::Map::new();
    vocab.insert("<unk>".into(), 0.into());
    for (i, w) in WORDS.iter().enumerate() {
        vocab.insert((*w).into(), (i + 1).into());
    }
    vocab.insert("<eot>".into(), 11.into());
    let tok = serde_json::json!({
        "version": "1.0", "truncation": null, "padding": null,
        "added_tokens": [{"id": 11, "content": "<eot>", "single_word": false, "lstrip": false,
                          "rstrip": false, "normalized": false, "special": true}],
        "normalizer": null, "pre_tokenizer": {"type": "Whitespace"},
        "post_processor": {"type": "TemplateProcessing",
            "single": [{"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "<eot>", "type_id": 0}}],
            "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 0}},
                     {"SpecialToken": {"id": "<eot>", "type_id": 0}}],
            "special_tokens": {"<eot>": {"id": "<eot>", "ids": [11], "tokens": ["<eot>"]}}},
        "decoder": null,
        "model": {"type": "WordLevel", "vocab": vocab, "unk_token": "<unk>"}
    });
    std::fs::write(dir.join("tokenizer.json"), tok.to_string()).unwrap();
    let mut modules = vec![
        serde_json::json!({"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"}),
        serde_json::json!({"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}),
    ];
    if normalize {
        modules.push(serde_json::json!({"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}));
    }
    std::fs::write(
        dir.join("modules.json"),
        serde_json::Value::from(modules).to_string(),
    )
    .unwrap();
    std::fs::write(
        dir.join("sentence_bert_config.json"),
        format!(r#"{{"max_seq_length": {max_seq}, "do_lower_case": false}}"#),
    )
    .unwrap();
}

fn cos(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[test]
fn qwen3_folder_loads_like_the_in_memory_model_and_honours_its_config() {
    let root = std::env::temp_dir().join(format!("memskill-qwen3-folder-{}", std::process::id()));
    let dir = root.join("tiny-qwen3-embedding");
    write_folder(&dir, 6, true);
    let enc = Qwen3Encoder::load(&dir).unwrap();
    assert_eq!(
        enc.max_tokens(),
        6,
        "sentence_bert_config.json max_seq_length"
    );
    assert_eq!(enc.dim(), 16);
    let texts = [
        "the cat sat",
        "dog ran home",
        "the cat sat on the red mat today",
    ];
    let ids = enc.token_ids(&texts).unwrap();
    assert_eq!(
        ids[0],
        vec![1, 2, 3, 11],
        "words then the appended end-of-text token"
    );
    assert_eq!(
        ids[2].len(),
        6,
        "truncated at max_seq_length, special token kept"
    );
    assert_eq!(*ids[2].last().unwrap(), 11);
    let loaded = enc.embed(&texts).unwrap();
    let memory = Qwen3Encoder::from_weight_fn(&shape(), weight, "mem".into()).unwrap();
    let built = memory.embed_ids(&ids).unwrap();
    for (a, b) in loaded.iter().zip(&built) {
        assert!((cos(a, a) - 1.0).abs() < 1e-5, "normalised");
        let d = a
            .iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0f32, f32::max);
        assert!(d < 1e-6, "folder vs in-memory weights differ by {d}");
    }
    // Truncation: everything past max_seq_length is invisible, as in sentence-transformers.
    let t = enc
        .embed(&[
            "the cat sat on the red",
            "the cat sat on the red mat blue dog",
        ])
        .unwrap();
    assert_eq!(t[0], t[1]);

    // Without a Normalize module the pooled vector is returned as is.
    write_folder(&dir, 6, false);
    let raw = Qwen3Encoder::load(&dir).unwrap().embed(&texts).unwrap();
    let n = cos(&raw[0], &raw[0]).sqrt();
    assert!((n - 1.0).abs() > 1e-3, "not normalised: norm {n}");
    let scaled: Vec<f32> = raw[0].iter().map(|x| x / n).collect();
    assert!((cos(&scaled, &loaded[0]) - 1.0).abs() < 1e-5);
    std::fs::remove_dir_all(&root).unwrap();
}

/// candle-transformers' Qwen3 on the same weights, one text at a time: last token's final
/// hidden state, L2-normalised.
fn candle_reference(
    s: &Qwen3Shape,
    w: &dyn Fn(&str, &[usize]) -> Vec<f32>,
    ids: &[Vec<u32>],
) -> Vec<Vec<f32>> {
    use candle_transformers::models::qwen3;
    let cfg = qwen3::Config {
        vocab_size: s.vocab_size,
        hidden_size: s.hidden_size,
        intermediate_size: s.intermediate_size,
        num_hidden_layers: s.num_hidden_layers,
        num_attention_heads: s.num_attention_heads,
        head_dim: s.head_dim,
        attention_bias: false,
        num_key_value_heads: s.num_key_value_heads,
        max_position_embeddings: s.max_position_embeddings,
        sliding_window: None,
        max_window_layers: s.num_hidden_layers,
        tie_word_embeddings: true,
        rope_theta: s.rope_theta,
        rms_norm_eps: s.rms_norm_eps,
        use_sliding_window: false,
        hidden_act: candle_nn::Activation::Silu,
    };
    let mut tensors = HashMap::new();
    for (name, dims) in s.tensors() {
        let t = Tensor::from_vec(w(&name, &dims), dims.as_slice(), &Device::Cpu).unwrap();
        tensors.insert(format!("model.{name}"), t);
    }
    let vb = candle_nn::VarBuilder::from_tensors(tensors, candle_core::DType::F32, &Device::Cpu);
    let model = qwen3::Model::new(&cfg, vb).unwrap();
    ids.iter()
        .map(|t| {
            let input = Tensor::from_vec(t.clone(), (1, t.len()), &Device::Cpu).unwrap();
            let h = model.clone().forward(&input, 0).unwrap();
            let mut v = h
                .get(0)
                .unwrap()
                .get(t.len() - 1)
                .unwrap()
                .to_vec1::<f32>()
                .unwrap();
            let n = cos(&v, &v).sqrt();
            v.iter_mut().for_each(|x| *x /= n);
            v
        })
        .collect()
}

fn random_weight(seed: u64) -> impl Fn(&str, &[usize]) -> Vec<f32> {
    move |name: &str, dims: &[usize]| {
        let mut v = weight(&format!("{seed}:{name}"), dims);
        if name.ends_with("norm.weight") {
            // norms around 1 (weight() gives 1 + 0.1 u); projections 0.1 u scaled up a little
            // so that attention is far from uniform.
            return v;
        }
        v.iter_mut().for_each(|x| *x *= 2.0);
        v
    }
}

#[test]
fn fast_forward_equals_candle_qwen3_on_random_weights() {
    let shapes = [
        shape(),
        Qwen3Shape {
            vocab_size: 50,
            hidden_size: 64,
            intermediate_size: 96,
            num_hidden_layers: 3,
            num_attention_heads: 4,
            num_key_value_heads: 2,
            head_dim: 16,
            max_position_embeddings: 512,
            rope_theta: 1_000_000.0,
            rms_norm_eps: 1e-6,
        },
        // Multi-head (as many key/value heads as query heads), head_dim not hidden / heads.
        Qwen3Shape {
            num_attention_heads: 4,
            num_key_value_heads: 4,
            head_dim: 24,
            ..shape()
        },
    ];
    for (k, s) in shapes.iter().enumerate() {
        let w = random_weight(k as u64);
        // Lengths around the 128-row attention block, and a single token.
        let lens = [1usize, 5, 60, 127, 128, 129, 300];
        let ids: Vec<Vec<u32>> = lens
            .iter()
            .filter(|&&l| l <= s.max_position_embeddings)
            .enumerate()
            .map(|(j, &l)| {
                (0..l)
                    .map(|i| ((i * 7 + j * 3) % s.vocab_size) as u32)
                    .collect()
            })
            .collect();
        let want = candle_reference(s, &w, &ids);
        for batch in [1, 3, 16] {
            let mut enc = Qwen3Encoder::from_weight_fn(s, &w, "t".into()).unwrap();
            enc.batch_size = batch;
            let got = enc.embed_ids(&ids).unwrap();
            for (j, (a, b)) in got.iter().zip(&want).enumerate() {
                let d = a
                    .iter()
                    .zip(b)
                    .map(|(x, y)| (x - y).abs())
                    .fold(0.0f32, f32::max);
                let c = cos(a, b);
                assert!(
                    c >= 0.99999 && d < 1e-4,
                    "shape {k}, batch {batch}, text {j} ({} tokens): cosine {c}, max diff {d}",
                    ids[j].len()
                );
            }
        }
    }
    // Empty inputs give zero vectors; ids outside the vocabulary are an error.
    let enc = Qwen3Encoder::from_weight_fn(&shape(), weight, "t".into()).unwrap();
    let v = enc.embed_ids(&[vec![], vec![1, 2]]).unwrap();
    assert!(v[0].iter().all(|&x| x == 0.0));
    let e = enc.embed_ids(&[vec![1, 99]]).unwrap_err().0;
    assert!(e.contains("token id 99"), "{e}");
}

#[test]
fn transformers_5_config_and_bf16_weights_load() {
    let root = std::env::temp_dir().join(format!("memskill-qwen3-v5-{}", std::process::id()));
    let dir = root.join("tiny-qwen3-embedding");
    write_folder(&dir, 64, true);
    let f32_vecs = Qwen3Encoder::load(&dir)
        .unwrap()
        .embed(&["the cat sat on the mat"])
        .unwrap();
    // What transformers 5 writes: rope_parameters and layer_types, and bf16 weights with the
    // `model.` prefix (as a Qwen3ForCausalLM-style checkpoint names them).
    let path = dir.join("config.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let theta = v.as_object_mut().unwrap().remove("rope_theta").unwrap();
    v["rope_parameters"] = serde_json::json!({"rope_theta": theta, "rope_type": "default"});
    v["layer_types"] = serde_json::json!(["full_attention", "full_attention"]);
    std::fs::write(&path, v.to_string()).unwrap();
    let mut tensors = HashMap::new();
    for (name, dims) in shape().tensors() {
        let t = Tensor::from_vec(weight(&name, &dims), dims.as_slice(), &Device::Cpu).unwrap();
        tensors.insert(
            format!("model.{name}"),
            t.to_dtype(candle_core::DType::BF16).unwrap(),
        );
    }
    candle_core::safetensors::save(&tensors, dir.join("model.safetensors")).unwrap();
    let v5 = Qwen3Encoder::load(&dir)
        .unwrap()
        .embed(&["the cat sat on the mat"])
        .unwrap();
    let c = cos(&f32_vecs[0], &v5[0]);
    assert!(c > 0.999 && c < 1.0 + 1e-5, "bf16 weights: cosine {c}");
    // A sliding-window layer is refused, naming the file and the field.
    v["layer_types"][1] = "sliding_attention".into();
    std::fs::write(&path, v.to_string()).unwrap();
    let e = Qwen3Encoder::load(&dir).err().unwrap().0;
    assert!(
        e.contains("config.json") && e.contains("layer_types[1]"),
        "{e}"
    );
    std::fs::remove_dir_all(&root).unwrap();
}
