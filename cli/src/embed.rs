//! `memskill embed [--model DIR|OWNER/NAME] [--base-url URL] [--json] [--input FILE] TEXT...`:
//! embeds texts with a local model folder, a model of the Hugging Face cache or an
//! embeddings server, and prints each vector's dimension and norm and the pairwise cosine
//! matrix, or with `--json` the vectors themselves.

use anyhow::{bail, Context};
use memskill_controller::{default_minilm_dir, BertEncoder, Qwen3Encoder};
use memskill_core::TextEncoder;
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(clap::Args)]
pub struct EmbedArgs {
    /// Model directory (config.json, tokenizer.json, model.safetensors) or Hub name
    /// (`owner/name`, looked up in the Hugging Face cache). With `--base-url`: the served
    /// model's name. Default: the MiniLM asset cache (`memskill assets fetch minilm`).
    #[arg(long)]
    model: Option<String>,
    /// Embed through an OpenAI-compatible embeddings server (`<URL>/embeddings`, e.g.
    /// `http://127.0.0.1:7997/v1`) instead of a local model.
    #[arg(long, value_name = "URL")]
    base_url: Option<String>,
    /// Texts per request to the server.
    #[arg(long, default_value_t = 32)]
    texts_per_request: usize,
    /// With `--base-url`: seconds one request may take before it counts as failed.
    #[arg(long, value_name = "SECS", default_value_t = 60)]
    timeout: u64,
    /// With `--base-url`: retries of a failed request (so a hung server costs at most
    /// `timeout x (1 + max_retries)` seconds).
    #[arg(long, value_name = "N", default_value_t = 2)]
    max_retries: u32,
    /// Print one JSON array of floats per line, in input order, and nothing else.
    #[arg(long)]
    json: bool,
    /// Read the texts from this file, one per line (after the texts given as arguments).
    #[arg(long, value_name = "FILE")]
    input: Option<PathBuf>,
    /// Texts to embed.
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

/// The encoder of the arguments and where it comes from.
fn open_encoder(a: &EmbedArgs) -> anyhow::Result<(Arc<dyn TextEncoder>, String)> {
    if let Some(url) = &a.base_url {
        let Some(model) = a.model.clone() else {
            bail!("--base-url needs --model, the served model's name");
        };
        let mut e = memskill_trainer::config::EmbeddingServer::default();
        e.http.base_urls = vec![url.clone()];
        e.http.model = model;
        e.texts_per_request = a.texts_per_request;
        if a.timeout == 0 || a.timeout > 86_400 {
            bail!("--timeout must be 1 to 86400 seconds, got {}", a.timeout);
        }
        if a.max_retries > 100 {
            bail!("--max-retries must be at most 100, got {}", a.max_retries);
        }
        e.http.timeout_secs = a.timeout;
        e.http.max_retries = a.max_retries;
        e.http.probe_timeout_secs = e.http.probe_timeout_secs.min(a.timeout);
        let enc = memskill_trainer::backends::embedding_server(&e, "--base-url", &mut Vec::new())?;
        return Ok((enc, url.clone()));
    }
    let spec = a
        .model
        .as_deref()
        .map(PathBuf::from)
        .unwrap_or_else(default_minilm_dir);
    let dir = memskill_trainer::hub::resolve_model(
        &spec,
        memskill_trainer::hub::ModelFile::Folder,
        "--model",
    )?;
    Ok((load_encoder(&dir)?.into(), dir.display().to_string()))
}

/// The texts of the arguments, then the lines of `--input`.
fn read_texts(a: &EmbedArgs) -> anyhow::Result<Vec<String>> {
    let mut texts = a.texts.clone();
    if let Some(p) = &a.input {
        let body = memskill_trainer::fsutil::read_input_text(
            p,
            memskill_core::fsio::SMALL_FILE_LIMIT,
            "--input",
        )?;
        texts.extend(body.lines().map(str::to_string));
    }
    if texts.is_empty() {
        bail!("no texts to embed: give them as arguments or with --input FILE");
    }
    Ok(texts)
}

pub fn run(a: EmbedArgs) -> anyhow::Result<()> {
    let owned = read_texts(&a)?;
    let (enc, source) = open_encoder(&a)?;
    let texts: Vec<&str> = owned.iter().map(|s| s.as_str()).collect();
    let t0 = std::time::Instant::now();
    let vecs = memskill_trainer::backends::embed(enc.as_ref(), &texts)?;
    let ms = t0.elapsed().as_secs_f64() * 1e3;
    if a.json {
        let mut out = String::new();
        for v in &vecs {
            out.push_str(&serde_json::to_string(v)?);
            out.push('\n');
        }
        print!("{out}");
        return Ok(());
    }
    println!("encoder: {} (dim {}) from {source}", enc.id(), enc.dim());
    print_table(&texts, &vecs);
    println!("({} texts in {ms:.1} ms)", texts.len());
    Ok(())
}

/// Each vector's dimension and norm, then the pairwise cosine matrix.
fn print_table(texts: &[&str], vecs: &[Vec<f32>]) {
    for (i, (t, v)) in texts.iter().zip(vecs).enumerate() {
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
        for b in vecs {
            let c: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
            print!("{c:>8.4}");
        }
        println!();
    }
}
