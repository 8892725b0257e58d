//! `memskill embed [--model DIR] TEXT...`: embeds texts and prints each vector's dimension and
//! norm and the pairwise cosine matrix.

use anyhow::Context;
use memskill_controller::{default_minilm_dir, BertEncoder, Qwen3Encoder};
use memskill_core::TextEncoder;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct EmbedArgs {
    /// Model directory (config.json, tokenizer.json, model.safetensors). Default: the MiniLM
    /// asset cache (`memskill assets fetch minilm`).
    #[arg(long)]
    model: Option<PathBuf>,
    /// Texts to embed.
    #[arg(required = true)]
    texts: Vec<String>,
}

/// Loads a BERT (MiniLM) or Qwen3-Embedding encoder depending on `config.json`'s `model_type`.
fn load_encoder(dir: &Path) -> anyhow::Result<Box<dyn TextEncoder>> {
    let cfg = dir.join("config.json");
    if !cfg.is_file() || !dir.join("tokenizer.json").is_file() {
        anyhow::bail!(
            "encoder assets not found in {} (need config.json, tokenizer.json, model.safetensors): run scripts/fetch-assets.sh or `memskill assets fetch minilm`",
            dir.display()
        );
    }
    let text =
        std::fs::read_to_string(&cfg).with_context(|| format!("reading {}", cfg.display()))?;
    let v: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("parsing {}", cfg.display()))?;
    let model_type = v
        .get("model_type")
        .and_then(|m| m.as_str())
        .unwrap_or("bert");
    if model_type.starts_with("qwen3") {
        Ok(Box::new(
            Qwen3Encoder::load(dir).with_context(|| format!("loading {}", dir.display()))?,
        ))
    } else {
        Ok(Box::new(
            BertEncoder::load(dir).with_context(|| format!("loading {}", dir.display()))?,
        ))
    }
}

pub fn run(a: EmbedArgs) -> anyhow::Result<()> {
    let dir = a.model.clone().unwrap_or_else(default_minilm_dir);
    let enc = load_encoder(&dir)?;
    let texts: Vec<&str> = a.texts.iter().map(|s| s.as_str()).collect();
    let t0 = std::time::Instant::now();
    let vecs = enc.embed(&texts).context("embedding texts")?;
    let ms = t0.elapsed().as_secs_f64() * 1e3;
    println!(
        "encoder: {} (dim {}) from {}",
        enc.id(),
        enc.dim(),
        dir.display()
    );
    for (i, (t, v)) in texts.iter().zip(&vecs).enumerate() {
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        println!("[{i}] dim={} norm={norm:.4}  {t:?}", v.len());
    }
    println!("cosine:");
    print!("{:>6}", "");
    for j in 0..vecs.len() {
        print!("{:>8}", format!("[{j}]"));
    }
    println!();
    for (i, a) in vecs.iter().enumerate() {
        print!("{:>6}", format!("[{i}]"));
        for b in &vecs {
            let c: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
            print!("{c:>8.4}");
        }
        println!();
    }
    println!("({} texts in {ms:.1} ms)", texts.len());
    Ok(())
}
