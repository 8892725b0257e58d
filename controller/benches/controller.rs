//! `cargo bench -p memskill-controller`: encoder throughput (MiniLM, 512 LoCoMo turns, batch 32
//! and batch 1) and the time of one PPO update (64 transitions, 4 epochs, 30 skills, K = 3).
//!
//! With `TORCH_BENCH_JSON=path` (written by `scripts/bench/encoder_ppo_torch.py`) it also
//! prints Rust/PyTorch ratios. `scripts/bench/compare.sh` runs both.

use memskill_controller::{
    default_minilm_dir, BertEncoder, Controller, PolicyConfig, PpoConfig, SelectMode, Transition,
};
use memskill_core::TextEncoder;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;
use std::time::Instant;

const N_TEXTS: usize = 512;

/// The first 512 turn texts of LoCoMo in file order (same rule as the Python script, read by
/// `memskill_datasets::locomo_turn_texts`), or deterministic synthetic sentences when the data
/// is absent.
fn texts() -> (Vec<String>, &'static str) {
    // LOCOMO_JSON, else the cache's copy (scripts/fetch-data.sh), else ../shared/data.
    let cached = memskill_controller::default_assets_dir()
        .parent()
        .map(|c| c.join("data/locomo/locomo10.json"));
    let shared = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/data/locomo/locomo10.json"
    );
    let path = std::env::var("LOCOMO_JSON").unwrap_or_else(|_| match cached {
        Some(c) if c.is_file() => c.display().to_string(),
        _ => shared.to_string(),
    });
    memskill_datasets::bench_turn_texts(Some(std::path::Path::new(&path)), N_TEXTS)
}

fn torch_numbers() -> Option<serde_json::Value> {
    let p = std::env::var("TORCH_BENCH_JSON").ok()?;
    let raw = std::fs::read_to_string(&p).ok()?;
    serde_json::from_str(&raw).ok()
}

fn main() {
    // `cargo bench` passes `--bench`; ignore arguments.
    let torch = torch_numbers();
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    println!("threads available: {threads}");
    let mut results = serde_json::Map::new();

    let dir = default_minilm_dir();
    match BertEncoder::load(&dir) {
        Err(e) => println!("encoder: skipped ({e})"),
        Ok(mut enc) => {
            let (texts, source) = texts();
            let refs: Vec<&str> = texts.iter().map(|s| s.as_str()).collect();
            let tokens: usize = enc.token_counts(&refs).unwrap().iter().sum();
            println!(
                "encoder: {} texts from {source}, {tokens} tokens",
                refs.len()
            );
            let _ = enc.embed(&refs[..32]).unwrap(); // warm-up
            for bs in [32usize, 1] {
                enc.batch_size = bs;
                let n = if bs == 1 { 128 } else { refs.len() };
                let sub = &refs[..n];
                let sub_tokens: usize = enc.token_counts(sub).unwrap().iter().sum();
                let t = Instant::now();
                let v = enc.embed(sub).unwrap();
                let s = t.elapsed().as_secs_f64();
                assert_eq!(v.len(), n);
                let tps = n as f64 / s;
                println!(
                    "encoder batch {bs:>2}: {n} texts in {s:.2}s = {tps:.1} texts/s, {:.0} tokens/s",
                    sub_tokens as f64 / s
                );
                results.insert(format!("encoder_b{bs}_texts_per_s"), tps.into());
                if let Some(py) = torch
                    .as_ref()
                    .and_then(|t| t.get(format!("encoder_b{bs}_texts_per_s")))
                    .and_then(|x| x.as_f64())
                {
                    println!(
                        "  pytorch: {py:.1} texts/s -> ratio rust/pytorch = {:.2}x",
                        tps / py
                    );
                }
            }
        }
    }

    // PPO update: 64 transitions (4 episodes x 16 spans), 30 skills, K = 3, 4 epochs, mb 32.
    let d = 384;
    let ppo = PpoConfig {
        ppo_epochs: 4,
        target_kl: f32::INFINITY,
        ..PpoConfig::default()
    };
    let mut c = Controller::new(d, &PolicyConfig::default(), &ppo, 0).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    let unit = |n: usize, rng: &mut ChaCha8Rng| -> Vec<f32> {
        let mut v: Vec<f32> = (0..n).map(|_| rng.random_range(-1.0f32..1.0)).collect();
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter_mut().for_each(|x| *x /= norm);
        v
    };
    let skills: Arc<Vec<Vec<f32>>> = Arc::new((0..30).map(|_| unit(d, &mut rng)).collect());
    let mut episodes = Vec::new();
    let t_sel = Instant::now();
    for _ in 0..4 {
        let mut ep = Vec::new();
        for _ in 0..16 {
            let mut state = unit(d, &mut rng);
            state.extend(unit(d, &mut rng));
            let s = c
                .select(&state, &skills, 3, None, SelectMode::Sample(&mut rng))
                .unwrap();
            let reward = rng.random_range(0.0f32..1.0);
            ep.push(Transition::from_selection(state, skills.clone(), s, reward));
        }
        episodes.push(ep);
    }
    let sel_ms = t_sel.elapsed().as_secs_f64() * 1e3 / 64.0;
    println!("select (30 skills, K=3): {sel_ms:.2} ms per call");
    let _ = c.update(&episodes).unwrap(); // warm-up
    let reps = 5;
    let t = Instant::now();
    let mut stats = None;
    for _ in 0..reps {
        stats = Some(c.update(&episodes).unwrap());
    }
    let ms = t.elapsed().as_secs_f64() * 1e3 / reps as f64;
    let st = stats.unwrap();
    println!(
        "ppo update (64 transitions, 30 skills, 4 epochs, {} minibatches): {ms:.1} ms",
        st.minibatches
    );
    results.insert("ppo_update_ms".into(), ms.into());
    results.insert("select_ms".into(), sel_ms.into());
    if let Some(py) = torch
        .as_ref()
        .and_then(|t| t.get("ppo_update_ms"))
        .and_then(|x| x.as_f64())
    {
        println!(
            "  pytorch: {py:.1} ms -> speed-up rust vs pytorch = {:.2}x",
            py / ms
        );
    }
    println!("json: {}", serde_json::Value::Object(results));
}
