//! `memskill bench encoder --model DIR`: any MiniLM / BERT or Qwen3-Embedding folder, ours
//! against sentence-transformers loading the same folder (in f32), interleaved, on whole
//! LoCoMo sessions (full-session spans, as the reference's state encoder sees them) at
//! batch 1 and batch 8, in tokens/s (our token count, which the baseline's must equal). Before
//! the rounds, both sides embed the sessions once and the lowest cosine between the two is
//! printed: the same function on the real-size model. Our peak RSS (this process's `VmHWM`)
//! is reported beside the size of the weights in f32.

use super::{Baseline, PerfOptions, Recorder, Series};
use anyhow::{bail, Context, Result};
use memskill_controller::{BertEncoder, Qwen3Encoder};
use memskill_core::TextEncoder;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The two encoder families a model folder can hold.
enum DirEncoder {
    Bert(Box<BertEncoder>),
    Qwen3(Box<Qwen3Encoder>),
}

impl DirEncoder {
    /// By `config.json`'s `model_type` (`qwen3*`, else BERT).
    fn load(dir: &Path) -> Result<Self> {
        let cfg = dir.join("config.json");
        let text =
            std::fs::read_to_string(&cfg).with_context(|| format!("reading {}", cfg.display()))?;
        let v: Value =
            serde_json::from_str(&text).with_context(|| format!("parsing {}", cfg.display()))?;
        let kind = v
            .get("model_type")
            .and_then(Value::as_str)
            .unwrap_or("bert");
        let what = || format!("loading {}", dir.display());
        Ok(if kind.starts_with("qwen3") {
            DirEncoder::Qwen3(Box::new(Qwen3Encoder::load(dir).with_context(what)?))
        } else {
            DirEncoder::Bert(Box::new(BertEncoder::load(dir).with_context(what)?))
        })
    }
    fn encoder(&mut self, batch: usize) -> &dyn TextEncoder {
        match self {
            DirEncoder::Bert(e) => {
                e.batch_size = batch;
                &**e as &dyn TextEncoder
            }
            DirEncoder::Qwen3(e) => {
                e.batch_size = batch;
                &**e as &dyn TextEncoder
            }
        }
    }
    fn tokens(&self, texts: &[&str]) -> Result<usize> {
        Ok(match self {
            DirEncoder::Bert(e) => e.token_counts(texts)?.iter().sum(),
            DirEncoder::Qwen3(e) => e.token_ids(texts)?.iter().map(Vec::len).sum(),
        })
    }
}

/// The first `n` LoCoMo sessions (file order) as full-session span texts.
fn session_texts(n: usize) -> Result<(Vec<String>, PathBuf)> {
    let path = std::env::var_os("LOCOMO_JSON")
        .map(PathBuf::from)
        .or_else(|| {
            memskill_controller::default_assets_dir()
                .parent()
                .map(|c| c.join("data/locomo/locomo10.json"))
        })
        .context("no cache directory")?;
    if !path.is_file() {
        bail!(
            "{} not found: the encoder bench embeds LoCoMo sessions (set LOCOMO_JSON to locomo10.json)",
            path.display()
        );
    }
    let mut out = Vec::new();
    let samples = memskill_datasets::load_locomo(&path, &Default::default())?;
    for mut s in samples {
        let style = memskill_datasets::SpanStyle::for_dataset(&s.dataset);
        memskill_datasets::segment_styled(&mut s, &memskill_datasets::SpanMode::FullSession, style);
        out.extend(s.spans.into_iter().map(|sp| sp.text));
        if out.len() >= n {
            out.truncate(n);
            return Ok((out, path));
        }
    }
    bail!("{}: fewer than {n} sessions", path.display())
}

/// This process's peak resident set (`VmHWM`), in bytes.
fn peak_rss() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

fn lowest_cosine(ours: &[Vec<f32>], theirs: &Value) -> Result<f64> {
    let theirs = theirs
        .as_array()
        .context("baseline vectors: expected a list")?;
    let mut worst = f64::INFINITY;
    for (a, b) in ours.iter().zip(theirs) {
        let b: Vec<f64> = b
            .as_array()
            .context("baseline vector: expected a list")?
            .iter()
            .map(|x| x.as_f64().unwrap_or(f64::NAN))
            .collect();
        let dot: f64 = a.iter().zip(&b).map(|(x, y)| *x as f64 * y).sum();
        let na = a.iter().map(|x| (*x as f64).powi(2)).sum::<f64>().sqrt();
        let nb = b.iter().map(|y| y * y).sum::<f64>().sqrt();
        worst = worst.min(dot / (na * nb));
    }
    Ok(worst)
}

pub(super) fn bench(
    dir: &Path,
    opts: &PerfOptions,
    mut base: Option<&mut Baseline>,
    rec: &mut Recorder,
) -> Result<Vec<Series>> {
    let (texts, source) = session_texts(opts.sessions.max(1))?;
    let mut enc = DirEncoder::load(dir)?;
    let weights = memskill_controller::safetensors_f32_bytes(dir)?;
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let tokens = enc.tokens(&refs)?;
    let id = enc.encoder(1).id();
    eprintln!(
        "encoder: {id}, {} sessions of {}, {tokens} tokens",
        refs.len(),
        source.display()
    );
    let ours = enc.encoder(8).embed(&refs)?; // warm-up
    let model = dir.display().to_string();
    if let Some(b) = base.as_deref_mut() {
        let v = b.call(&json!({"op": "encoder_dir", "model": model, "texts": refs,
                                "batch": 8, "vectors": true}))?;
        let cos = lowest_cosine(&ours, &v["vectors"])?;
        eprintln!(
            "baseline tokens {} (ours {tokens}); lowest cosine ours vs sentence-transformers: {cos:.7}",
            v["tokens"]
        );
        rec.line(json!({"event": "agreement", "lowest_cosine": cos,
                        "baseline_tokens": v["tokens"], "tokens": tokens}))?;
    }
    let mut out = vec![
        Series::new(
            "encoder",
            &format!("b1 ({} sessions)", refs.len()),
            "tok/s",
            true,
        ),
        Series::new(
            "encoder",
            &format!("b8 ({} sessions)", refs.len()),
            "tok/s",
            true,
        ),
    ];
    for round in 0..opts.rounds {
        for (s, bs) in out.iter_mut().zip([1usize, 8]) {
            let t = Instant::now();
            enc.encoder(bs).embed(&refs)?;
            let x = tokens as f64 / t.elapsed().as_secs_f64();
            s.ours.push(x);
            rec.measurement(s, "ours", round, x)?;
            if let Some(b) = base.as_deref_mut() {
                let req = json!({"op": "encoder_dir", "model": model, "texts": refs, "batch": bs});
                let secs = b.value(&req, "seconds")?;
                s.baseline.push(tokens as f64 / secs);
                rec.measurement(s, "baseline", round, tokens as f64 / secs)?;
            }
        }
        eprintln!("encoder round {} done", round + 1);
    }
    let mb = |b: u64| b as f64 / (1 << 20) as f64;
    let rss = peak_rss().unwrap_or(0);
    let mut mem = Series::new(
        "encoder",
        &format!("peak RSS ({:.0} MB f32 weights)", mb(weights)),
        "MB",
        false,
    );
    mem.ours.push(mb(rss));
    rec.line(
        json!({"event": "memory", "peak_rss_bytes": rss, "weights_f32_bytes": weights,
                    "ratio": rss as f64 / weights as f64}),
    )?;
    out.push(mem);
    Ok(out)
}
