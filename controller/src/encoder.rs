//! Text encoders implementing [`memskill_core::TextEncoder`].
//!
//! * [`BertEncoder`]: sentence-transformers all-MiniLM-L6-v2 (or any BERT directory with
//!   `config.json`, `tokenizer.json`, `model.safetensors`, e.g. facebook/contriever) on candle
//!   (our arrangement of the BERT forward, `bert_fast`: texts packed without padding,
//!   independent batches in parallel), mean pooling over the tokens, L2-normalised. Texts are
//!   tokenised once, sorted by length and run in batches, then returned in input order. Texts
//!   longer than the model's maximum length are truncated (what sentence-transformers does,
//!   [`LongText::Truncate`]) or, opt-in, embedded as the token-weighted mean of consecutive
//!   windows ([`LongText::WindowMean`]).
//! * [`Qwen3Encoder`]: Qwen3-Embedding (last-token pooling, L2-normalised), the paper's state
//!   encoder, for users who have those weights.
//! * [`CachedEncoder`]: memoises any encoder by sha256 of the text; embeds only the misses.
//! * [`HashingEncoder`]: a deterministic feature-hashed bag of words, for tests and offline demos
//!   (not a semantic encoder).

use candle_core::{DType, Device as CDevice, Tensor as CTensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert;
use memskill_core::{sha256_hex, EncoderError, TextEncoder};
pub use memskill_local::bert_fast::Pooling as BertPooling;
pub use memskill_local::qwen3_shape::Qwen3Shape;
use rayon::prelude::*;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokenizers::{Tokenizer, TruncationParams};

/// `<cache root>/assets` (`memskill_core::asset_root`).
pub fn default_assets_dir() -> PathBuf {
    memskill_core::asset_root()
}

/// Where `scripts/fetch-assets.sh` puts all-MiniLM-L6-v2.
pub fn default_minilm_dir() -> PathBuf {
    default_assets_dir().join("all-MiniLM-L6-v2")
}

/// `concat(span_emb, mean(retrieved))`, zeros for the second half when nothing was retrieved.
/// Retrieved vectors of the wrong length are ignored. Length `2 * span_emb.len()`.
pub fn build_state(span_emb: &[f32], retrieved: &[&[f32]]) -> Vec<f32> {
    let d = span_emb.len();
    let mut out = Vec::with_capacity(2 * d);
    out.extend_from_slice(span_emb);
    let mut mean = vec![0.0f32; d];
    let ok: Vec<&&[f32]> = retrieved.iter().filter(|r| r.len() == d).collect();
    for r in &ok {
        for (m, x) in mean.iter_mut().zip(r.iter()) {
            *m += *x;
        }
    }
    if !ok.is_empty() {
        let n = ok.len() as f32;
        mean.iter_mut().for_each(|m| *m /= n);
    }
    out.extend(mean);
    out
}

fn l2_normalize(v: &mut [f32]) {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if n > 0.0 && n.is_finite() {
        v.iter_mut().for_each(|x| *x /= n);
    }
}

/// Reads `dir/config.json`: its path and text.
fn read_config(dir: &Path) -> Result<(PathBuf, String), EncoderError> {
    let path = need(dir, "config.json")?;
    let text = std::fs::read_to_string(&path)
        .map_err(|e| EncoderError(format!("{}: {e}", path.display())))?;
    Ok((path, text))
}

/// A BERT `config.json` (`what` names it in errors) as transformers 4 or 5 writes it: fields
/// the forward does not use (dropout, initialiser range, padding id) may be absent, and
/// position embeddings must be absolute (the only kind the forward computes).
fn bert_config(text: &str, what: &str) -> Result<bert::Config, EncoderError> {
    let mut v: serde_json::Value =
        serde_json::from_str(text).map_err(|e| EncoderError(format!("{what}: {e}")))?;
    if let Some(o) = v.as_object_mut() {
        for (key, unused) in [
            ("hidden_dropout_prob", 0.1.into()),
            ("initializer_range", 0.02.into()),
            ("pad_token_id", 0.into()),
        ] {
            if o.get(key).is_none_or(|x| x.is_null()) {
                o.insert(key.into(), unused);
            }
        }
        // DPR's encoders project [CLS] through `encode_proj` when `projection_dim` > 0 (the
        // facebook/dpr-* checkpoints have 0: no projection); such a projection is not computed.
        if let Some(p) = o
            .get("projection_dim")
            .and_then(|p| p.as_u64())
            .filter(|&p| p > 0)
        {
            return Err(EncoderError(format!(
                "{what}: projection_dim {p} (a projection after [CLS]) is not supported (only 0)"
            )));
        }
        if let Some(p) = o.get("position_embedding_type").filter(|p| !p.is_null()) {
            if p.as_str() != Some("absolute") {
                return Err(EncoderError(format!(
                    "{what}: position_embedding_type {p} is not supported (only \"absolute\")"
                )));
            }
        }
    }
    serde_json::from_value(v).map_err(|e| EncoderError(format!("{what}: {e}")))
}

fn need(dir: &Path, name: &str) -> Result<PathBuf, EncoderError> {
    let p = dir.join(name);
    if p.is_file() {
        Ok(p)
    } else {
        Err(EncoderError(format!(
            "{} not found (scripts/fetch-assets.sh fetches MiniLM and SmolLM2, and for Qwen3-Embedding, contriever, dpr and dragon says how to get them)",
            p.display()
        )))
    }
}

fn load_tokenizer(dir: &Path, max_tokens: usize) -> Result<Tokenizer, EncoderError> {
    let path = need(dir, "tokenizer.json")?;
    let mut tok = Tokenizer::from_file(&path)
        .map_err(|e| EncoderError(format!("{}: {e}", path.display())))?;
    tok.with_padding(None);
    set_truncation(&mut tok, Some(max_tokens), &path.display().to_string())?;
    Ok(tok)
}

fn set_truncation(
    tok: &mut Tokenizer,
    max_tokens: Option<usize>,
    what: &str,
) -> Result<(), EncoderError> {
    tok.with_truncation(max_tokens.map(|m| TruncationParams {
        max_length: m,
        ..Default::default()
    }))
    .map_err(|e| EncoderError(format!("{what}: truncation: {e}")))?;
    Ok(())
}

/// The maximum number of tokens (special tokens included) a model directory embeds, the way
/// sentence-transformers / transformers decide it: `sentence_bert_config.json`'s
/// `max_seq_length` when present, else `tokenizer_config.json`'s `model_max_length` when it is
/// a real limit, else `config.json`'s `max_position_embeddings`; never more than
/// `max_position_embeddings`, never more than `fallback` when nothing is known.
pub fn model_max_tokens(dir: &Path, fallback: usize) -> Result<usize, EncoderError> {
    let read = |name: &str| -> Result<Option<serde_json::Value>, EncoderError> {
        let p = dir.join(name);
        if !p.is_file() {
            return Ok(None);
        }
        let text = std::fs::read_to_string(&p)
            .map_err(|e| EncoderError(format!("{}: {e}", p.display())))?;
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| EncoderError(format!("{}: {e}", p.display())))
    };
    let field = |v: &Option<serde_json::Value>, key: &str| {
        v.as_ref()
            .and_then(|v| v.get(key))
            .and_then(|x| x.as_u64())
            .map(|x| x as usize)
    };
    let positions = field(&read("config.json")?, "max_position_embeddings");
    let st = field(&read("sentence_bert_config.json")?, "max_seq_length");
    // transformers' "no limit" sentinel is 1e30; anything above a million is not a real limit.
    let tok = field(&read("tokenizer_config.json")?, "model_max_length").filter(|&m| m <= 1 << 20);
    let chosen = st.or(tok).or(positions).unwrap_or(fallback);
    Ok(match positions {
        Some(p) => chosen.min(p),
        None => chosen,
    }
    .max(2))
}

/// Whether a sentence-transformers folder ends in a `Normalize` module: true when its
/// `modules.json` lists one, false when `modules.json` exists without one, true when there is no
/// `modules.json` (plain checkpoint: we normalise, as the Qwen3-Embedding model card does).
pub fn declares_normalize(dir: &Path) -> Result<bool, EncoderError> {
    let p = dir.join("modules.json");
    if !p.is_file() {
        return Ok(true);
    }
    let text =
        std::fs::read_to_string(&p).map_err(|e| EncoderError(format!("{}: {e}", p.display())))?;
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| EncoderError(format!("{}: {e}", p.display())))?;
    let modules = v
        .as_array()
        .ok_or_else(|| EncoderError(format!("{}: expected a list of modules", p.display())))?;
    Ok(modules.iter().any(|m| {
        m.get("type")
            .and_then(|t| t.as_str())
            .is_some_and(|t| t.ends_with("Normalize"))
    }))
}

/// How an encoder treats a text longer than its maximum number of tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LongText {
    /// Keep the first `max_tokens` tokens (special tokens included), as sentence-transformers
    /// does: the reference's behaviour, and the default.
    #[default]
    Truncate,
    /// Split the text's tokens into consecutive windows of `max_tokens` (special tokens
    /// included), embed each window, and return the token-weighted mean of the (normalised)
    /// window embeddings, L2-normalised; so the end of a long span counts as much as its start.
    /// Texts that fit are embedded exactly as with `Truncate`. A deviation (opt-in).
    WindowMean,
}

impl LongText {
    /// `"truncate"` | `"window-mean"`.
    pub fn parse(s: &str) -> Result<Self, EncoderError> {
        match s {
            "truncate" => Ok(LongText::Truncate),
            "window-mean" => Ok(LongText::WindowMean),
            other => Err(EncoderError(format!(
                "long-text mode {other:?} is not truncate | window-mean"
            ))),
        }
    }
    pub fn as_str(&self) -> &'static str {
        match self {
            LongText::Truncate => "truncate",
            LongText::WindowMean => "window-mean",
        }
    }
}

/// Cuts `content` (a text's token ids without special tokens) into consecutive windows of at
/// most `max_tokens - prefix.len() - suffix.len()` ids and wraps each in `prefix` / `suffix`.
/// An empty `content` gives one window (`prefix + suffix`).
pub fn token_windows(
    content: &[u32],
    prefix: &[u32],
    suffix: &[u32],
    max_tokens: usize,
) -> Vec<Vec<u32>> {
    let room = max_tokens
        .saturating_sub(prefix.len() + suffix.len())
        .max(1);
    let wrap = |c: &[u32]| {
        let mut w = Vec::with_capacity(prefix.len() + c.len() + suffix.len());
        w.extend_from_slice(prefix);
        w.extend_from_slice(c);
        w.extend_from_slice(suffix);
        w
    };
    if content.is_empty() {
        return vec![wrap(&[])];
    }
    content.chunks(room).map(wrap).collect()
}

/// `normalize(sum_i w_i v_i / sum_i w_i)`; a single vector is returned unchanged (so a text
/// that fits in one window gets exactly its one-window embedding).
pub fn weighted_mean_normalized(parts: &[(Vec<f32>, f32)]) -> Vec<f32> {
    match parts {
        [] => Vec::new(),
        [(v, _)] => v.clone(),
        _ => {
            let d = parts[0].0.len();
            let total: f32 = parts.iter().map(|(_, w)| *w).sum();
            let mut out = vec![0.0f32; d];
            for (v, w) in parts {
                let w = if total > 0.0 {
                    *w / total
                } else {
                    1.0 / parts.len() as f32
                };
                for (o, x) in out.iter_mut().zip(v) {
                    *o += w * *x;
                }
            }
            l2_normalize(&mut out);
            out
        }
    }
}

/// The special tokens a tokenizer puts before and after a single text: (prefix, suffix).
fn special_affixes(tok: &Tokenizer, what: &str) -> Result<(Vec<u32>, Vec<u32>), EncoderError> {
    let probe = "memskill";
    let err = |e| EncoderError(format!("{what}: tokenizer: {e}"));
    let with = tok.encode(probe, true).map_err(err)?.get_ids().to_vec();
    let without = tok.encode(probe, false).map_err(err)?.get_ids().to_vec();
    let at = (0..=with.len().saturating_sub(without.len()))
        .find(|&i| with[i..].starts_with(&without))
        .ok_or_else(|| {
            EncoderError(format!(
                "{what}: cannot locate the text between the tokenizer's special tokens"
            ))
        })?;
    Ok((with[..at].to_vec(), with[at + without.len()..].to_vec()))
}

fn tokenize(tok: &Tokenizer, texts: &[&str], what: &str) -> Result<Vec<Vec<u32>>, EncoderError> {
    let enc = tok
        .encode_batch(texts.to_vec(), true)
        .map_err(|e| EncoderError(format!("{what}: tokenizer: {e}")))?;
    Ok(enc.into_iter().map(|e| e.get_ids().to_vec()).collect())
}

/// Indices of `lens` sorted by length (stable), chunked into batches of at most `batch`.
pub fn length_sorted_batches(lens: &[usize], batch: usize) -> Vec<Vec<usize>> {
    let mut idx: Vec<usize> = (0..lens.len()).collect();
    idx.sort_by_key(|&i| lens[i]);
    idx.chunks(batch.max(1)).map(|c| c.to_vec()).collect()
}

fn safetensors_files(dir: &Path) -> Result<Vec<PathBuf>, EncoderError> {
    let single = dir.join("model.safetensors");
    if single.is_file() {
        return Ok(vec![single]);
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| EncoderError(format!("{}: {e}", dir.display())))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "safetensors"))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(EncoderError(format!(
            "{}: no *.safetensors weights (run scripts/fetch-assets.sh)",
            dir.display()
        )));
    }
    Ok(files)
}

/// The size of a model folder's safetensors weights once converted to f32 (what the encoders
/// hold in memory), in bytes.
pub fn safetensors_f32_bytes(dir: &Path) -> Result<u64, EncoderError> {
    Ok(memskill_local::st_read::SafeTensors::open(&safetensors_files(dir)?)?.f32_bytes())
}

/// all-MiniLM-L6-v2 / BERT sentence encoder (mean pooling, L2-normalised). Also loads
/// facebook/contriever (the reference's memory retriever: BERT, mean pooling, normalised) and,
/// with [`BertPooling::Cls`], the DPR encoders (`[CLS]`, normalised) and DRAGON+ (`[CLS]`, not
/// normalised: [`with_normalize`](Self::with_normalize)).
pub struct BertEncoder {
    model: memskill_local::bert_fast::FastBert,
    tokenizer: Tokenizer,
    /// The same tokenizer without truncation (window-mean mode).
    full_tokenizer: Tokenizer,
    /// Special tokens around a single text (e.g. `[CLS]` / `[SEP]`).
    affixes: (Vec<u32>, Vec<u32>),
    dim: usize,
    id: String,
    max_tokens: usize,
    long_text: LongText,
    pooling: BertPooling,
    /// L2-normalise each pooled vector (true unless [`with_normalize`](Self::with_normalize)).
    normalize: bool,
    /// Texts per forward pass (32).
    pub batch_size: usize,
}

impl BertEncoder {
    /// all-MiniLM-L6-v2's maximum tokens per text (sentence-transformers' `max_seq_length`).
    pub const MAX_TOKENS: usize = 256;

    /// Loads `config.json`, `tokenizer.json` and `model.safetensors` from `dir` (CPU). The
    /// maximum length is the directory's own ([`model_max_tokens`]: 256 for MiniLM, 512 for
    /// contriever); long texts are truncated ([`LongText::Truncate`]).
    pub fn load(dir: &Path) -> Result<Self, EncoderError> {
        let (cfg_path, cfg_text) = read_config(dir)?;
        let config = bert_config(&cfg_text, &cfg_path.display().to_string())?;
        let dim = config.hidden_size;
        let max_tokens = model_max_tokens(dir, 512)?;
        let weights = need(dir, "model.safetensors")?;
        let device = CDevice::Cpu;
        // SAFETY: the file is memory-mapped read-only; it must not be modified while loaded.
        let vb = unsafe { VarBuilder::from_mmaped_safetensors(&[&weights], DType::F32, &device) }
            .map_err(|e| EncoderError(format!("{}: {e}", weights.display())))?;
        let model = memskill_local::bert_fast::FastBert::load(vb, &config)
            .map_err(|e| EncoderError(format!("{}: {e}", weights.display())))?;
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_else(|| "bert".into());
        Self::assemble(model, dir, dim, max_tokens, format!("bert:{name}"))
    }

    /// Builds a BERT encoder from `config.json` text whose tensors come from
    /// `weight(name, shape)` (HF `BertModel` names, e.g. `embeddings.word_embeddings.weight`),
    /// with `tokenizer_dir/tokenizer.json` truncating at `max_tokens`. For differential checks
    /// with formula-defined tiny models.
    pub fn from_weight_fn(
        config_json: &str,
        weight: impl Fn(&str, &[usize]) -> Vec<f32>,
        tokenizer_dir: &Path,
        max_tokens: usize,
        id: String,
    ) -> Result<Self, EncoderError> {
        let config = bert_config(config_json, &format!("{id}: config"))?;
        let (h, i) = (config.hidden_size, config.intermediate_size);
        let mut shapes: Vec<(String, Vec<usize>)> = vec![
            (
                "embeddings.word_embeddings.weight".into(),
                vec![config.vocab_size, h],
            ),
            (
                "embeddings.position_embeddings.weight".into(),
                vec![config.max_position_embeddings, h],
            ),
            (
                "embeddings.token_type_embeddings.weight".into(),
                vec![config.type_vocab_size, h],
            ),
            ("embeddings.LayerNorm.weight".into(), vec![h]),
            ("embeddings.LayerNorm.bias".into(), vec![h]),
        ];
        for l in 0..config.num_hidden_layers {
            let p = format!("encoder.layer.{l}");
            for (n, out, inp) in [
                ("attention.self.query", h, h),
                ("attention.self.key", h, h),
                ("attention.self.value", h, h),
                ("attention.output.dense", h, h),
                ("intermediate.dense", i, h),
                ("output.dense", h, i),
            ] {
                shapes.push((format!("{p}.{n}.weight"), vec![out, inp]));
                shapes.push((format!("{p}.{n}.bias"), vec![out]));
            }
            for n in ["attention.output.LayerNorm", "output.LayerNorm"] {
                shapes.push((format!("{p}.{n}.weight"), vec![h]));
                shapes.push((format!("{p}.{n}.bias"), vec![h]));
            }
        }
        let dev = CDevice::Cpu;
        let mut tensors = HashMap::new();
        for (name, dims) in shapes {
            let t = CTensor::from_vec(weight(&name, &dims), dims.as_slice(), &dev)
                .map_err(|e| EncoderError(format!("{id}: tensor {name}: {e}")))?;
            tensors.insert(name, t);
        }
        let vb = VarBuilder::from_tensors(tensors, DType::F32, &dev);
        let model = memskill_local::bert_fast::FastBert::load(vb, &config)
            .map_err(|e| EncoderError(format!("{id}: {e}")))?;
        Self::assemble(model, tokenizer_dir, h, max_tokens, id)
    }

    fn assemble(
        model: memskill_local::bert_fast::FastBert,
        tokenizer_dir: &Path,
        dim: usize,
        max_tokens: usize,
        id: String,
    ) -> Result<Self, EncoderError> {
        let what = tokenizer_dir.display().to_string();
        let tokenizer = load_tokenizer(tokenizer_dir, max_tokens)?;
        let mut full_tokenizer = tokenizer.clone();
        set_truncation(&mut full_tokenizer, None, &what)?;
        let affixes = special_affixes(&tokenizer, &what)?;
        Ok(Self {
            model,
            tokenizer,
            full_tokenizer,
            affixes,
            dim,
            id,
            max_tokens,
            long_text: LongText::Truncate,
            pooling: BertPooling::Mean,
            normalize: true,
            batch_size: 32,
        })
    }

    /// Sets how the last hidden states become one vector (mean by default). The encoder's id
    /// names a non-default choice, so embedding caches keyed by the id never mix them.
    pub fn with_pooling(mut self, pooling: BertPooling) -> Self {
        self.pooling = pooling;
        self
    }

    /// Whether each pooled vector is L2-normalised (true by default; DRAGON+'s vectors are
    /// used as the model gives them). Named in the id when off. Window-mean embeddings of long
    /// texts are always normalised.
    pub fn with_normalize(mut self, normalize: bool) -> Self {
        self.normalize = normalize;
        self
    }

    /// Token ids of `texts` as embedded (special tokens included, truncated).
    pub fn token_ids(&self, texts: &[&str]) -> Result<Vec<Vec<u32>>, EncoderError> {
        tokenize(&self.tokenizer, texts, &self.id)
    }

    /// Sets how texts longer than [`max_tokens`](Self::max_tokens) are embedded. The encoder's
    /// id names a non-default mode, so embedding caches keyed by the id never mix modes.
    pub fn with_long_text(mut self, mode: LongText) -> Self {
        self.long_text = mode;
        self
    }

    /// Overrides the maximum tokens per text (window), e.g. 128 to test windowing.
    pub fn with_max_tokens(mut self, max_tokens: usize) -> Result<Self, EncoderError> {
        let max_tokens = max_tokens.max(self.affixes.0.len() + self.affixes.1.len() + 1);
        set_truncation(&mut self.tokenizer, Some(max_tokens), &self.id)?;
        self.max_tokens = max_tokens;
        Ok(self)
    }

    /// Maximum tokens per text (per window in window-mean mode), special tokens included.
    pub fn max_tokens(&self) -> usize {
        self.max_tokens
    }

    /// The long-text mode.
    pub fn long_text(&self) -> LongText {
        self.long_text
    }

    /// Token counts (with special tokens, after truncation) of `texts`.
    pub fn token_counts(&self, texts: &[&str]) -> Result<Vec<usize>, EncoderError> {
        Ok(tokenize(&self.tokenizer, texts, &self.id)?
            .iter()
            .map(|t| t.len())
            .collect())
    }

    /// Pooled (and unless told otherwise L2-normalised) embeddings of the token sequences
    /// `ids` (one forward, packed without padding); `par`: spread it over the rayon pool.
    fn embed_batch(&self, ids: &[&Vec<u32>], par: bool) -> Result<Vec<Vec<f32>>, EncoderError> {
        let seqs: Vec<&[u32]> = ids.iter().map(|t| t.as_slice()).collect();
        let mut pooled = self
            .model
            .pooled(&seqs, self.pooling, par)
            .map_err(|e| EncoderError(format!("{}: forward: {e}", self.id)))?;
        if !self.normalize {
            return Ok(pooled);
        }
        for v in &mut pooled {
            // sentence-transformers' Normalize: x / max(|x|, 1e-12).
            let n = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
            v.iter_mut().for_each(|x| *x /= n);
        }
        Ok(pooled)
    }

    /// The token sequences to embed for `texts` (one per text, or one per window) with their
    /// owner text and weight (tokens of text in the window).
    fn units(&self, texts: &[&str]) -> Result<Vec<(usize, Vec<u32>, f32)>, EncoderError> {
        let truncated = tokenize(&self.tokenizer, texts, &self.id)?;
        if self.long_text == LongText::Truncate {
            return Ok(truncated
                .into_iter()
                .enumerate()
                .map(|(i, ids)| (i, ids, 1.0))
                .collect());
        }
        let full = tokenize(&self.full_tokenizer, texts, &self.id)?;
        let (prefix, suffix) = (&self.affixes.0, &self.affixes.1);
        let mut units = Vec::with_capacity(texts.len());
        for (i, (t, f)) in truncated.into_iter().zip(full).enumerate() {
            if f.len() <= self.max_tokens
                || !f.starts_with(prefix)
                || !f.ends_with(suffix)
                || f.len() < prefix.len() + suffix.len()
            {
                units.push((i, t, 1.0));
                continue;
            }
            let content = &f[prefix.len()..f.len() - suffix.len()];
            for w in token_windows(content, prefix, suffix, self.max_tokens) {
                let weight = (w.len() - prefix.len() - suffix.len()) as f32;
                units.push((i, w, weight));
            }
        }
        Ok(units)
    }
}

impl TextEncoder for BertEncoder {
    fn id(&self) -> String {
        let mut id = self.id.clone();
        if self.pooling == BertPooling::Cls {
            id.push_str("+cls");
        }
        if !self.normalize {
            id.push_str("+unnormalised");
        }
        if self.long_text == LongText::WindowMean {
            id.push_str(&format!("+window-mean:{}", self.max_tokens));
        }
        id
    }
    fn dim(&self) -> usize {
        self.dim
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EncoderError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let units = self.units(texts)?;
        let lens: Vec<usize> = units.iter().map(|u| u.1.len()).collect();
        let mut vecs: Vec<Vec<f32>> = vec![Vec::new(); units.len()];
        // Batches are independent. With at least as many batches as threads, each batch runs
        // on one thread and the batches run side by side; with fewer (one text, a few), each
        // batch spreads its own work over the pool instead.
        let batches = length_sorted_batches(&lens, self.batch_size);
        let side_by_side = batches.len() >= rayon::current_num_threads();
        let run = |batch: &Vec<usize>| {
            let refs: Vec<&Vec<u32>> = batch.iter().map(|&i| &units[i].1).collect();
            self.embed_batch(&refs, !side_by_side)
        };
        let done: Vec<Result<Vec<Vec<f32>>, EncoderError>> = if side_by_side {
            batches.par_iter().map(run).collect()
        } else {
            batches.iter().map(run).collect()
        };
        for (batch, res) in batches.iter().zip(done) {
            for (i, v) in batch.iter().zip(res?) {
                vecs[*i] = v;
            }
        }
        let mut parts: Vec<Vec<(Vec<f32>, f32)>> = vec![Vec::new(); texts.len()];
        for ((owner, _, w), v) in units.into_iter().zip(vecs) {
            parts[owner].push((v, w));
        }
        Ok(parts.iter().map(|p| weighted_mean_normalized(p)).collect())
    }
}

/// Qwen3-Embedding encoder: last-token pooling over the final hidden state, L2-normalised (when
/// the folder's `modules.json` ends in `Normalize`, as Qwen3-Embedding's does), no
/// instruction prompt: what the reference's sentence-transformers call computes for its state
/// and skill texts (`SentenceTransformer(..., tokenizer_kwargs={"padding_side": "left"})`,
/// `encode(texts)`). Texts are packed without padding here (`qwen3_fast`); attention is
/// causal, so the last real token never sees padding and the result equals left padding. The
/// maximum length is the model directory's own (`sentence_bert_config.json`'s
/// `max_seq_length`, else the model's positions), so a full-session span is embedded whole, as
/// in the reference.
pub struct Qwen3Encoder {
    model: memskill_local::qwen3_fast::FastQwen3,
    tokenizer: Option<Tokenizer>,
    dim: usize,
    id: String,
    max_tokens: usize,
    /// L2-normalise the pooled vector (sentence-transformers' `Normalize` module).
    normalize: bool,
    /// Texts per forward pass (16).
    pub batch_size: usize,
}

impl Qwen3Encoder {
    /// Maximum tokens per text when the directory says nothing (Qwen3-Embedding's context).
    pub const MAX_TOKENS: usize = 32768;

    /// Loads a Qwen3-Embedding directory (`config.json` as transformers 4 or 5 writes it,
    /// `tokenizer.json`, `*.safetensors` in f32, bf16 or f16; tensor names with or without
    /// the `model.` prefix). The weights are read once, converted to f32 as they are read.
    pub fn load(dir: &Path) -> Result<Self, EncoderError> {
        let (cfg, text) = read_config(dir)?;
        let shape = Qwen3Shape::from_config_json(&text, &cfg.display().to_string())?;
        let max_tokens = model_max_tokens(dir, Self::MAX_TOKENS)?;
        let tokenizer = load_tokenizer(dir, max_tokens)?;
        let st = memskill_local::st_read::SafeTensors::open(&safetensors_files(dir)?)?;
        let prefix = if st.contains("model.embed_tokens.weight") {
            "model."
        } else {
            ""
        };
        let model = memskill_local::qwen3_fast::FastQwen3::load(&shape, &mut |name, dims, dst| {
            st.read_into(&format!("{prefix}{name}"), dims, dst)
        })?;
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_else(|| "qwen3".into());
        Ok(Self {
            model,
            tokenizer: Some(tokenizer),
            dim: shape.hidden_size,
            id: format!("qwen3:{name}"),
            max_tokens,
            normalize: declares_normalize(dir)?,
            batch_size: 16,
        })
    }

    /// Maximum tokens per text (special tokens included); longer texts are truncated.
    pub fn max_tokens(&self) -> usize {
        self.max_tokens
    }

    /// Builds a Qwen3 encoder of the given shape whose tensors come from `weight(name, shape)`
    /// (row-major values; names as in a Qwen3-Embedding checkpoint without the `model.`
    /// prefix), normalising, without a tokenizer (only [`embed_ids`](Self::embed_ids) works
    /// until [`with_tokenizer`](Self::with_tokenizer)). For tests and differential checks with
    /// formula-defined tiny models.
    pub fn from_weight_fn(
        shape: &Qwen3Shape,
        weight: impl Fn(&str, &[usize]) -> Vec<f32>,
        id: String,
    ) -> Result<Self, EncoderError> {
        let model = memskill_local::qwen3_fast::FastQwen3::load(shape, &mut |name, dims, dst| {
            let v = weight(name, dims);
            if v.len() != dims.iter().product::<usize>() {
                return Err(EncoderError(format!(
                    "{id}: tensor {name}: {} values for shape {dims:?}",
                    v.len()
                )));
            }
            dst.extend_from_slice(&v);
            Ok(())
        })?;
        Ok(Self {
            model,
            tokenizer: None,
            dim: shape.hidden_size,
            id,
            max_tokens: shape.max_position_embeddings,
            normalize: true,
            batch_size: 16,
        })
    }

    /// Uses `dir/tokenizer.json`, truncating texts at `max_tokens` (special tokens included).
    pub fn with_tokenizer(mut self, dir: &Path, max_tokens: usize) -> Result<Self, EncoderError> {
        self.tokenizer = Some(load_tokenizer(dir, max_tokens)?);
        self.max_tokens = max_tokens;
        Ok(self)
    }

    /// Token ids of `texts` (special tokens included, truncated at the maximum length).
    pub fn token_ids(&self, texts: &[&str]) -> Result<Vec<Vec<u32>>, EncoderError> {
        let tok = self
            .tokenizer
            .as_ref()
            .ok_or_else(|| EncoderError(format!("{}: no tokenizer loaded", self.id)))?;
        tokenize(tok, texts, &self.id)
    }

    /// Embeds pre-tokenised inputs (one id list per text; empty lists give zero vectors), in
    /// length-sorted batches of [`batch_size`](Self::batch_size) packed without padding. With
    /// at least as many batches as threads, each batch runs on one thread and the batches run
    /// side by side; with fewer, each batch spreads its own work over the pool.
    pub fn embed_ids(&self, ids: &[Vec<u32>]) -> Result<Vec<Vec<f32>>, EncoderError> {
        let real: Vec<usize> = (0..ids.len()).filter(|&i| !ids[i].is_empty()).collect();
        let lens: Vec<usize> = real.iter().map(|&i| ids[i].len()).collect();
        let batches = length_sorted_batches(&lens, self.batch_size);
        let side_by_side = batches.len() >= rayon::current_num_threads();
        let run = |batch: &Vec<usize>| {
            let seqs: Vec<&[u32]> = batch.iter().map(|&b| ids[real[b]].as_slice()).collect();
            self.model
                .last_token(&seqs, !side_by_side)
                .map_err(|e| EncoderError(format!("{}: forward: {}", self.id, e.0)))
        };
        let done: Vec<Result<Vec<Vec<f32>>, EncoderError>> = if side_by_side {
            batches.par_iter().map(run).collect()
        } else {
            batches.iter().map(run).collect()
        };
        let mut out = vec![vec![0.0f32; self.dim]; ids.len()];
        for (batch, res) in batches.iter().zip(done) {
            for (&b, mut v) in batch.iter().zip(res?) {
                if self.normalize {
                    l2_normalize(&mut v);
                }
                out[real[b]] = v;
            }
        }
        Ok(out)
    }
}

impl TextEncoder for Qwen3Encoder {
    fn id(&self) -> String {
        self.id.clone()
    }
    fn dim(&self) -> usize {
        self.dim
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EncoderError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let tok = self
            .tokenizer
            .as_ref()
            .ok_or_else(|| EncoderError(format!("{}: no tokenizer loaded", self.id)))?;
        let ids = tokenize(tok, texts, &self.id)?;
        self.embed_ids(&ids)
    }
}

/// Memoising wrapper: embeddings keyed by sha256 of the text; a call embeds only its misses, in
/// one batch (duplicates within the call are embedded once).
pub struct CachedEncoder {
    inner: Arc<dyn TextEncoder>,
    cache: Mutex<HashMap<String, Vec<f32>>>,
    hits: AtomicU64,
    misses: AtomicU64,
}

impl CachedEncoder {
    pub fn new(inner: Arc<dyn TextEncoder>) -> Self {
        Self {
            inner,
            cache: Mutex::new(HashMap::new()),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        }
    }
    /// Texts served from the cache so far.
    pub fn hits(&self) -> u64 {
        self.hits.load(Ordering::Relaxed)
    }
    /// Texts that had to be embedded so far.
    pub fn misses(&self) -> u64 {
        self.misses.load(Ordering::Relaxed)
    }
    /// Number of cached embeddings.
    pub fn len(&self) -> usize {
        self.cache.lock().map(|c| c.len()).unwrap_or(0)
    }
    /// True when nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl TextEncoder for CachedEncoder {
    fn id(&self) -> String {
        self.inner.id()
    }
    fn dim(&self) -> usize {
        self.inner.dim()
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EncoderError> {
        let keys: Vec<String> = texts.iter().map(sha256_hex).collect();
        let mut miss_keys: Vec<&String> = Vec::new();
        let mut miss_texts: Vec<&str> = Vec::new();
        {
            let cache = self
                .cache
                .lock()
                .map_err(|_| EncoderError("embedding cache lock poisoned".into()))?;
            for (k, t) in keys.iter().zip(texts) {
                if cache.contains_key(k) || miss_keys.contains(&k) {
                    self.hits.fetch_add(1, Ordering::Relaxed);
                } else {
                    miss_keys.push(k);
                    miss_texts.push(t);
                    self.misses.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        let fresh = if miss_texts.is_empty() {
            Vec::new()
        } else {
            self.inner.embed(&miss_texts)?
        };
        if fresh.len() != miss_texts.len() {
            return Err(EncoderError(format!(
                "{}: returned {} vectors for {} texts",
                self.inner.id(),
                fresh.len(),
                miss_texts.len()
            )));
        }
        let mut cache = self
            .cache
            .lock()
            .map_err(|_| EncoderError("embedding cache lock poisoned".into()))?;
        for (k, v) in miss_keys.into_iter().zip(fresh) {
            cache.insert(k.clone(), v);
        }
        keys.iter()
            .map(|k| {
                cache
                    .get(k)
                    .cloned()
                    .ok_or_else(|| EncoderError("embedding cache entry missing".into()))
            })
            .collect()
    }
}

/// Deterministic feature-hashed bag of lower-cased alphanumeric words (FNV-1a, signed buckets),
/// L2-normalised; texts without words map to the zero vector. For tests and offline demos only.
#[derive(Debug, Clone)]
pub struct HashingEncoder {
    dim: usize,
}

impl HashingEncoder {
    pub fn new(dim: usize) -> Self {
        Self { dim: dim.max(1) }
    }
}

fn fnv1a(s: &str) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in s.as_bytes() {
        h ^= *b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

impl TextEncoder for HashingEncoder {
    fn id(&self) -> String {
        format!("hashing:{}", self.dim)
    }
    fn dim(&self) -> usize {
        self.dim
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EncoderError> {
        Ok(texts
            .iter()
            .map(|t| {
                let mut v = vec![0.0f32; self.dim];
                for w in t
                    .split(|c: char| !c.is_alphanumeric())
                    .filter(|w| !w.is_empty())
                {
                    let h = fnv1a(&w.to_lowercase());
                    let sign = if h >> 63 == 1 { -1.0 } else { 1.0 };
                    v[(h % self.dim as u64) as usize] += sign;
                }
                l2_normalize(&mut v);
                v
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cos(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn build_state_concat_and_mean() {
        let s = build_state(&[1.0, 2.0], &[&[1.0, 0.0], &[3.0, 2.0]]);
        assert_eq!(s, vec![1.0, 2.0, 2.0, 1.0]);
        assert_eq!(build_state(&[1.0, 2.0], &[]), vec![1.0, 2.0, 0.0, 0.0]);
    }

    #[test]
    fn bert_configs_of_transformers_4_and_5_read_alike() {
        let v4 = serde_json::json!({
            "architectures": ["BertModel"], "attention_probs_dropout_prob": 0.1,
            "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "hidden_size": 384,
            "initializer_range": 0.02, "intermediate_size": 1536, "layer_norm_eps": 1e-12,
            "max_position_embeddings": 512, "model_type": "bert", "num_attention_heads": 12,
            "num_hidden_layers": 6, "pad_token_id": 0, "position_embedding_type": "absolute",
            "transformers_version": "4.8.2", "type_vocab_size": 2, "use_cache": true,
            "vocab_size": 30522
        });
        // transformers 5 drops position_embedding_type / use_cache and writes `dtype`.
        let mut v5 = v4.clone();
        let o = v5.as_object_mut().unwrap();
        for k in [
            "position_embedding_type",
            "use_cache",
            "pad_token_id",
            "hidden_dropout_prob",
        ] {
            o.remove(k);
        }
        o.insert("dtype".into(), "float32".into());
        o.insert("transformers_version".into(), "5.0.0".into());
        let a = bert_config(&v4.to_string(), "a").unwrap();
        let b = bert_config(&v5.to_string(), "b").unwrap();
        assert_eq!(
            (a.hidden_size, a.num_hidden_layers, a.layer_norm_eps),
            (b.hidden_size, b.num_hidden_layers, b.layer_norm_eps)
        );
        let mut rel = v4.clone();
        rel["position_embedding_type"] = "relative_key".into();
        let e = bert_config(&rel.to_string(), "c/config.json")
            .unwrap_err()
            .0;
        assert!(
            e.contains("c/config.json") && e.contains("relative_key"),
            "{e}"
        );
        let mut bad = v4;
        bad.as_object_mut().unwrap().remove("hidden_size");
        let e = bert_config(&bad.to_string(), "d").unwrap_err().0;
        assert!(e.contains("hidden_size"), "{e}");
    }

    #[test]
    fn hashing_encoder_is_normalised_and_deterministic() {
        let e = HashingEncoder::new(64);
        let v = e
            .embed(&["The cat sat", "the CAT sat", "quantum finance", ""])
            .unwrap();
        assert!((cos(&v[0], &v[0]) - 1.0).abs() < 1e-5);
        assert!((cos(&v[0], &v[1]) - 1.0).abs() < 1e-5);
        assert!(cos(&v[0], &v[2]).abs() < 0.9);
        assert!(v[3].iter().all(|&x| x == 0.0));
        assert_eq!(e.embed(&["The cat sat"]).unwrap()[0], v[0]);
    }

    #[test]
    fn cached_encoder_embeds_only_misses() {
        struct Counting(HashingEncoder, AtomicU64);
        impl TextEncoder for Counting {
            fn id(&self) -> String {
                "counting".into()
            }
            fn dim(&self) -> usize {
                self.0.dim()
            }
            fn embed(&self, t: &[&str]) -> Result<Vec<Vec<f32>>, EncoderError> {
                self.1.fetch_add(t.len() as u64, Ordering::Relaxed);
                self.0.embed(t)
            }
        }
        let inner = Arc::new(Counting(HashingEncoder::new(16), AtomicU64::new(0)));
        let c = CachedEncoder::new(inner.clone());
        let a = c.embed(&["x y", "z", "x y"]).unwrap();
        assert_eq!(inner.1.load(Ordering::Relaxed), 2);
        assert_eq!((c.hits(), c.misses()), (1, 2));
        let b = c.embed(&["z", "w"]).unwrap();
        assert_eq!(inner.1.load(Ordering::Relaxed), 3);
        assert_eq!(a[1], b[0]);
        assert_eq!(a[0], a[2]);
        assert_eq!(c.len(), 3);
    }

    #[test]
    fn token_windows_cover_the_text_in_order() {
        let content: Vec<u32> = (10..17).collect();
        let w = token_windows(&content, &[1], &[2], 5);
        assert_eq!(
            w,
            vec![
                vec![1, 10, 11, 12, 2],
                vec![1, 13, 14, 15, 2],
                vec![1, 16, 2]
            ]
        );
        assert_eq!(token_windows(&[], &[1], &[2], 5), vec![vec![1, 2]]);
        // Every content token lands in exactly one window, in order.
        let flat: Vec<u32> = w.iter().flat_map(|x| x[1..x.len() - 1].to_vec()).collect();
        assert_eq!(flat, content);
    }

    #[test]
    fn weighted_mean_is_normalised_and_single_part_is_unchanged() {
        let one = vec![(vec![0.6f32, 0.8], 3.0)];
        assert_eq!(weighted_mean_normalized(&one), vec![0.6, 0.8]);
        let m = weighted_mean_normalized(&[(vec![1.0, 0.0], 3.0), (vec![0.0, 1.0], 1.0)]);
        assert!((cos(&m, &m) - 1.0).abs() < 1e-6, "normalised: {m:?}");
        assert!((m[0] / m[1] - 3.0).abs() < 1e-5, "token-weighted: {m:?}");
        assert!(weighted_mean_normalized(&[]).is_empty());
    }

    #[test]
    fn long_text_modes_parse_and_reject_unknown() {
        assert_eq!(LongText::parse("truncate").unwrap(), LongText::Truncate);
        assert_eq!(
            LongText::parse("window-mean").unwrap(),
            LongText::WindowMean
        );
        assert_eq!(LongText::default(), LongText::Truncate);
        let e = LongText::parse("mean").unwrap_err();
        assert!(e.0.contains("truncate | window-mean"), "{}", e.0);
    }

    #[test]
    fn model_max_tokens_follows_sentence_transformers_then_positions() {
        let dir = std::env::temp_dir().join(format!("memskill-maxtok-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("config.json"),
            r#"{"max_position_embeddings": 512}"#,
        )
        .unwrap();
        assert_eq!(model_max_tokens(&dir, 77).unwrap(), 512);
        std::fs::write(
            dir.join("tokenizer_config.json"),
            r#"{"model_max_length": 1000000000000000019884624838656}"#,
        )
        .unwrap();
        assert_eq!(model_max_tokens(&dir, 77).unwrap(), 512, "sentinel ignored");
        std::fs::write(
            dir.join("sentence_bert_config.json"),
            r#"{"max_seq_length": 256}"#,
        )
        .unwrap();
        assert_eq!(model_max_tokens(&dir, 77).unwrap(), 256);
        std::fs::write(dir.join("sentence_bert_config.json"), "{not json").unwrap();
        let e = model_max_tokens(&dir, 77).unwrap_err();
        assert!(e.0.contains("sentence_bert_config.json"), "{}", e.0);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn normalize_module_is_read_from_modules_json() {
        let dir = std::env::temp_dir().join(format!("memskill-modules-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert!(
            declares_normalize(&dir).unwrap(),
            "no modules.json: normalise"
        );
        let with = r#"[{"type": "sentence_transformers.models.Transformer"},
                       {"type": "sentence_transformers.models.Pooling"},
                       {"type": "sentence_transformers.models.Normalize"}]"#;
        std::fs::write(dir.join("modules.json"), with).unwrap();
        assert!(declares_normalize(&dir).unwrap());
        let without = r#"[{"type": "sentence_transformers.models.Transformer"},
                          {"type": "sentence_transformers.models.Pooling"}]"#;
        std::fs::write(dir.join("modules.json"), without).unwrap();
        assert!(!declares_normalize(&dir).unwrap());
        std::fs::write(dir.join("modules.json"), "{}").unwrap();
        let e = declares_normalize(&dir).unwrap_err();
        assert!(e.0.contains("modules.json"), "{}", e.0);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn length_sorted_batches_cover_all_in_length_order() {
        let b = length_sorted_batches(&[5, 1, 3, 9, 2], 2);
        assert_eq!(b, vec![vec![1, 4], vec![2, 0], vec![3]]);
    }

    #[test]
    fn qwen3_last_token_pooling_shapes() {
        let shape = Qwen3Shape {
            vocab_size: 50,
            hidden_size: 16,
            intermediate_size: 32,
            num_hidden_layers: 2,
            num_attention_heads: 2,
            num_key_value_heads: 1,
            head_dim: 8,
            max_position_embeddings: 64,
            rope_theta: 10000.0,
            rms_norm_eps: 1e-6,
        };
        let w = |name: &str, dims: &[usize]| -> Vec<f32> {
            let n: usize = dims.iter().product();
            let salt = name.len() as f32;
            (0..n)
                .map(|i| ((i as f32 * 0.37 + salt).sin()) * 0.2)
                .collect()
        };
        let enc = Qwen3Encoder::from_weight_fn(&shape, w, "qwen3:test".into()).unwrap();
        let ids = vec![
            vec![1u32, 2, 3, 4, 5],
            vec![1, 2, 3],
            vec![],
            vec![1, 2, 3, 9],
        ];
        let out = enc.embed_ids(&ids).unwrap();
        assert_eq!(out.len(), 4);
        assert!(out.iter().all(|v| v.len() == 16));
        for i in [0, 1, 3] {
            assert!((cos(&out[i], &out[i]) - 1.0).abs() < 1e-4);
        }
        assert!(out[2].iter().all(|&x| x == 0.0));
        // Padding does not leak: [1,2,3] alone equals [1,2,3] batched with longer texts.
        let alone = enc.embed_ids(&[vec![1, 2, 3]]).unwrap();
        assert!((cos(&alone[0], &out[1]) - 1.0).abs() < 1e-4);
        // The last token matters: [1,2,3] differs from [1,2,3,9].
        assert!(cos(&out[1], &out[3]) < 0.9999);
        assert!(
            enc.embed(&["hi"]).is_err(),
            "no tokenizer -> error, not panic"
        );
    }
}
