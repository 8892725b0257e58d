//! The local SmolLM2 GGUF backend (skipped when the asset is absent).

use memskill_core::{ChatRequest, Llm, Message};
use memskill_local::{default_smollm2_path, LocalConfig, LocalGguf};

fn model() -> Option<LocalGguf> {
    let p = default_smollm2_path();
    if !p.exists() {
        eprintln!(
            "skipped: {} missing; run scripts/fetch-assets.sh",
            p.display()
        );
        return None;
    }
    Some(
        LocalGguf::load(&LocalConfig {
            model_path: p,
            ..LocalConfig::default()
        })
        .expect("loads"),
    )
}

#[test]
fn smollm2_answers_and_tokenizer_round_trips() {
    let Some(m) = model() else { return };
    let tok = m.tokenizer();
    for text in [
        "Alice moved to Paris in May. Where does Alice live?",
        "  naïve café – 123,456 ✓\n\ttabs",
        "<|im_start|>user\nhi<|im_end|>\n",
    ] {
        let enc = tok.encode(text, false).unwrap();
        assert!(!enc.get_ids().is_empty());
        assert_eq!(tok.decode(enc.get_ids(), false).unwrap(), text);
    }
    // ChatML markers are single special tokens
    let im = tok.encode("<|im_start|>", false).unwrap();
    assert_eq!(im.get_ids().len(), 1);

    let req = ChatRequest::new(vec![Message::user(
        "Alice moved to Paris in May. Where does Alice live?",
    )])
    .with_max_tokens(16);
    eprintln!("{}", m.load_info());
    // Decode steps run the file's own Q4_1 blocks: nothing is requantized.
    assert!(m.load_info().contains("as stored"), "{}", m.load_info());
    let r = m.chat(&req).unwrap();
    eprintln!("answer: {:?}, timing {:?}", r.text, m.last_timing());
    assert!(r.text.contains("Paris"), "{:?}", r.text);
    assert!(r.usage.completion_tokens > 0 && r.usage.completion_tokens <= 16);
    // stop strings cut the text; greedy decoding is deterministic, so it is a prefix of the first answer
    let mut stop = req.clone();
    stop.stop = vec!["Paris".into()];
    let cut = m.chat(&stop).unwrap();
    assert!(!cut.truncated, "a stop string is a complete reply");
    let cut = cut.text;
    assert!(
        !cut.contains("Paris") && r.text.starts_with(&cut),
        "{cut:?} vs {:?}",
        r.text
    );
    assert_eq!(m.stats().calls, 2);
    // a reply that reaches max_tokens says so
    assert_eq!(r.truncated, r.usage.completion_tokens == 16, "{r:?}");
    let long = m
        .chat(
            &ChatRequest::new(vec![Message::user(
                "Count from 1 to 50, one number per line.",
            )])
            .with_max_tokens(3),
        )
        .unwrap();
    assert!(
        long.truncated && long.usage.completion_tokens == 3,
        "{long:?}"
    );
}

mod requantize {
    use candle_core::quantized::{gguf_file, GgmlDType, QTensor};
    use candle_core::{Device, Tensor};
    use memskill_local::gguf::{prepare_weights, requantized_path, WeightsSource};
    use std::path::Path;

    fn write_q4_1_gguf(path: &Path, scale: f32) -> Tensor {
        let dev = Device::Cpu;
        let vals: Vec<f32> = (0..4 * 64)
            .map(|i| ((i * 37 % 101) as f32 / 50.0 - 1.0) * scale)
            .collect();
        let w = Tensor::from_vec(vals, (4, 64), &dev).unwrap();
        let q = QTensor::quantize(&w, GgmlDType::Q4_1).unwrap();
        let norm = QTensor::quantize(
            &Tensor::ones(64, candle_core::DType::F32, &dev).unwrap(),
            GgmlDType::F32,
        )
        .unwrap();
        let name = gguf_file::Value::String("tiny".into());
        let mut f = std::fs::File::create(path).unwrap();
        gguf_file::write(
            &mut f,
            &[("general.name", &name)],
            &[("blk.0.w.weight", &q), ("blk.0.norm.weight", &norm)],
        )
        .unwrap();
        q.dequantize(&dev).unwrap()
    }

    fn dtypes(p: &memskill_local::gguf::PreparedWeights) -> (GgmlDType, GgmlDType) {
        let ti = &p.content.tensor_infos;
        (
            ti["blk.0.w.weight"].ggml_dtype,
            ti["blk.0.norm.weight"].ggml_dtype,
        )
    }

    #[test]
    fn q4_1_is_requantized_cached_and_invalidated() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("tiny.Q4_1.gguf");
        let expect = write_q4_1_gguf(&src, 1.0);

        let off = prepare_weights(&src, Some("off"), &|_| false).unwrap();
        assert_eq!(off.source, WeightsSource::Original);
        assert_eq!(dtypes(&off), (GgmlDType::Q4_1, GgmlDType::F32));
        // `auto` keeps a file whose decode steps run its own dtypes; `q8_0` still converts.
        let native = prepare_weights(&src, None, &|_| true).unwrap();
        assert_eq!(native.source, WeightsSource::Original);
        assert_eq!(dtypes(&native), (GgmlDType::Q4_1, GgmlDType::F32));

        let mut p = prepare_weights(&src, Some("q8_0"), &|_| false).unwrap();
        let cache = requantized_path(&src, GgmlDType::Q8_0);
        assert_eq!(
            p.source,
            WeightsSource::Cache {
                path: cache.clone(),
                reused: false
            }
        );
        assert_eq!(p.converted, 1);
        assert_eq!(dtypes(&p), (GgmlDType::Q8_0, GgmlDType::F32));
        assert_eq!(
            p.content.metadata["general.name"].to_string().unwrap(),
            "tiny"
        );
        let got = p
            .content
            .tensor(&mut p.reader, "blk.0.w.weight", &Device::Cpu)
            .unwrap()
            .dequantize(&Device::Cpu)
            .unwrap();
        let err = (got - &expect).unwrap().abs().unwrap().max_all().unwrap();
        let err = err.to_scalar::<f32>().unwrap();
        // Q8_0 step is max|x|/127 per block (|x| <= 1 here): well under 1e-2.
        assert!(err < 1e-2, "max abs error {err}");
        assert!(cache.exists());
        // no temporary files left behind
        let n = std::fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(n, 2);

        let again = prepare_weights(&src, Some("q8_0"), &|_| false).unwrap();
        assert_eq!(
            again.source,
            WeightsSource::Cache {
                path: cache.clone(),
                reused: true
            }
        );
        assert_eq!(again.converted, 0);

        // a changed source (size/mtime) invalidates the cache
        std::thread::sleep(std::time::Duration::from_millis(20));
        write_q4_1_gguf(&src, 0.5);
        let f = std::fs::File::options().append(true).open(&src).unwrap();
        f.set_len(f.metadata().unwrap().len() + 32).unwrap();
        let fresh = prepare_weights(&src, Some("q8_0"), &|_| false).unwrap();
        assert_eq!(
            fresh.source,
            WeightsSource::Cache {
                path: cache,
                reused: false
            }
        );
    }

    #[test]
    fn unwritable_cache_falls_back_to_memory() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("tiny.Q4_1.gguf");
        write_q4_1_gguf(&src, 1.0);
        // a directory where the cache file should go: cannot be read as GGUF nor replaced
        std::fs::create_dir(requantized_path(&src, GgmlDType::Q8_0)).unwrap();
        let p = prepare_weights(&src, Some("q8_0"), &|_| false).unwrap();
        assert!(
            matches!(p.source, WeightsSource::Memory { .. }),
            "{:?}",
            p.source
        );
        assert_eq!(dtypes(&p), (GgmlDType::Q8_0, GgmlDType::F32));
        assert!(prepare_weights(&src, Some("q3"), &|_| false).is_err());
    }
}

#[test]
fn smollm2_refuses_or_cuts_an_overlong_prompt_never_the_instructions() {
    let p = default_smollm2_path();
    if !p.exists() {
        eprintln!("skipped: {} missing", p.display());
        return;
    }
    let long: String = (0..300)
        .map(|i| format!("Ann said thing number {i}.\n"))
        .collect();
    let prompt = format!("Answer in one word.\n\nText:\n{long}\n\nQuestion: who spoke?");
    let req = ChatRequest::new(vec![Message::user(prompt)]).with_max_tokens(4);
    let load = |overflow: &str| {
        LocalGguf::load(&LocalConfig {
            model_path: p.clone(),
            max_context: 512,
            overflow: overflow.parse().unwrap(),
            ..LocalConfig::default()
        })
        .expect("loads")
    };
    let m = load("refuse");
    let e = m.chat(&req).unwrap_err().to_string();
    assert!(e.contains("tokens") && e.contains("cut-middle"), "{e}");
    let m = load("cut-middle");
    let r = m.chat(&req).unwrap();
    assert_eq!(m.truncated(), 1);
    assert!(
        r.usage.prompt_tokens as usize <= 512 - 4,
        "{}",
        r.usage.prompt_tokens
    );
}

/// Our llama forward (`memskill_local::llama`) against candle's `quantized_llama` on the same
/// SmolLM2 weights: with the quantized kernels everywhere the logits agree to float noise
/// (prompt and decode steps); with dense prompt weights they agree to the activation
/// quantization candle applies; a reused prompt prefix gives the fresh prompt's logits.
#[test]
fn fast_llama_agrees_with_candle_quantized_llama() {
    use candle_core::{Device, Tensor};
    use candle_transformers::models::quantized_llama::ModelWeights;
    use memskill_local::gguf::prepare_weights;
    use memskill_local::llama::{DensePrefill, FastLlama};
    let p = default_smollm2_path();
    if !p.exists() {
        eprintln!("skipped: {} missing", p.display());
        return;
    }
    let dev = Device::Cpu;
    let rel = |a: &Tensor, b: &Tensor| -> f32 {
        let d = (a - b).unwrap().abs().unwrap().max_all().unwrap();
        let m = b.abs().unwrap().max_all().unwrap();
        d.to_scalar::<f32>().unwrap() / m.to_scalar::<f32>().unwrap()
    };
    let load = |dense| {
        let mut w = prepare_weights(&p, Some("q8_0"), &|_| false).unwrap();
        FastLlama::from_gguf(&w.content, &mut w.reader, &dev, 256, dense).unwrap()
    };
    let mut w = prepare_weights(&p, Some("q8_0"), &|_| false).unwrap();
    let mut reference = ModelWeights::from_gguf(w.content, &mut w.reader, &dev).unwrap();
    let ids: Vec<u32> = (0..40u32).map(|i| 100 + i * 97 % 4000).collect();
    let input = Tensor::new(ids.as_slice(), &dev)
        .unwrap()
        .unsqueeze(0)
        .unwrap();
    let want = reference.forward(&input, 0).unwrap().squeeze(0).unwrap();
    let step = Tensor::new(&[500u32], &dev).unwrap().unsqueeze(0).unwrap();
    let want_step = reference
        .forward(&step, ids.len())
        .unwrap()
        .squeeze(0)
        .unwrap();

    let mut quant = load(DensePrefill::Off);
    let (got, reused) = quant.prefill(&ids).unwrap();
    assert_eq!(reused, 0);
    assert!(rel(&got, &want) < 1e-4, "prefill {}", rel(&got, &want));
    let got_step = quant.step(500).unwrap();
    assert!(
        rel(&got_step, &want_step) < 1e-4,
        "step {}",
        rel(&got_step, &want_step)
    );

    let mut dense = load(DensePrefill::On);
    assert!(dense.dense);
    let (got, _) = dense.prefill(&ids).unwrap();
    assert!(
        rel(&got, &want) < 5e-2,
        "dense prefill {}",
        rel(&got, &want)
    );
    // A small model's decode steps run on plain buffers (stacked Q8_0 rows, our product):
    // the same step as the reference within the dense prefill's tolerance (its K/V come
    // from unquantized activations). A wrong rope, head grouping or cache offset is off by
    // far more.
    assert!(format!("{dense:?}").contains("plain_steps: true"));
    let got_step = dense.step(500).unwrap();
    assert!(
        rel(&got_step, &want_step) < 5e-2,
        "plain step {}",
        rel(&got_step, &want_step)
    );
    dense.clear();

    // Prefix reuse: the shared 30 tokens are not recomputed, the logits are the fresh ones.
    let mut other = ids[..30].to_vec();
    other.extend([7u32, 8, 9, 10, 11, 12, 13, 14, 15, 16]);
    let (fresh, _) = dense.prefill(&other).unwrap();
    dense.reuse_prefix = true;
    dense.prefill(&ids).unwrap();
    let (again, reused) = dense.prefill(&other).unwrap();
    assert_eq!(reused, 30);
    assert!(rel(&again, &fresh) < 1e-4, "reuse {}", rel(&again, &fresh));
}

/// Decode steps on the file's own Q4_1 blocks (`memskill_local::qdot`, no requantized copy) against
/// candle's `quantized_llama` on the same file, whose Q4_1 x Q8_1 products are the same
/// arithmetic: agree within the dense prefill's tolerance (its K/V come from unquantized
/// activations), several steps in a row; a wrong nibble order, offset term or row split is
/// off by far more.
#[test]
fn native_q4_1_steps_agree_with_candle_quantized_llama() {
    use candle_core::{Device, Tensor};
    use candle_transformers::models::quantized_llama::ModelWeights;
    use memskill_local::gguf::prepare_weights;
    use memskill_local::llama::{steps_natively, DensePrefill, FastLlama};
    let p = default_smollm2_path();
    if !p.exists() {
        eprintln!("skipped: {} missing", p.display());
        return;
    }
    let dev = Device::Cpu;
    let mut w = prepare_weights(&p, None, &|ct| steps_natively(ct, DensePrefill::Auto)).unwrap();
    assert_eq!(w.target, None, "{}", w.describe());
    let mut ours =
        FastLlama::from_gguf(&w.content, &mut w.reader, &dev, 64, DensePrefill::On).unwrap();
    assert!(format!("{ours:?}").contains("plain_steps: true"));
    let mut w = prepare_weights(&p, Some("off"), &|_| false).unwrap();
    let mut reference = ModelWeights::from_gguf(w.content, &mut w.reader, &dev).unwrap();
    let ids: Vec<u32> = (0..12u32).map(|i| 100 + i * 389 % 4000).collect();
    let input = Tensor::new(ids.as_slice(), &dev)
        .unwrap()
        .unsqueeze(0)
        .unwrap();
    reference.forward(&input, 0).unwrap();
    ours.prefill(&ids).unwrap();
    for (i, next) in [500u32, 42, 7000].into_iter().enumerate() {
        let step = Tensor::new(&[next], &dev).unwrap().unsqueeze(0).unwrap();
        let want = reference
            .forward(&step, ids.len() + i)
            .unwrap()
            .squeeze(0)
            .unwrap();
        let got = ours.step(next).unwrap();
        let d = (&got - &want).unwrap().abs().unwrap().max_all().unwrap();
        let m = want.abs().unwrap().max_all().unwrap();
        let rel = d.to_scalar::<f32>().unwrap() / m.to_scalar::<f32>().unwrap();
        assert!(rel < 5e-2, "step {i}: {rel}");
        let top = |t: &Tensor| t.argmax(0).unwrap().to_scalar::<u32>().unwrap();
        eprintln!(
            "step {i}: rel {rel:.2e}, argmax {} vs {}",
            top(&got),
            top(&want)
        );
    }
}
