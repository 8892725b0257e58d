//! Text encoders implementing [`memskill_core::TextEncoder`].
//!
//! * [`BertEncoder`]: sentence-transformers all-MiniLM-L6-v2 (or any BERT directory with
//!   `config.json`, `tokenizer.json`, `model.safetensors`) on candle, mean pooling over the
//!   attention mask, L2-normalised. Texts are tokenised once, sorted by length and run in
//!   batches padded only to the longest text of the batch, then returned in input order.
//! * [`Qwen3Encoder`]: Qwen3-Embedding (last-token pooling) for users who have those weights.
//! * [`CachedEncoder`]: memoises any encoder by sha256 of the text; embeds only the misses.
//! * [`HashingEncoder`]: a deterministic feature-hashed bag of words, for tests and offline demos
//!   (not a semantic encoder).

use candle_core::{DType, Device as CDevice, Tensor as CTensor};
use candle_nn::VarBuilder;
use candle_transformers::models::{bert, qwen3};
use memskill_core::{sha256_hex, EncoderError, TextEncoder};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokenizers::{Tokenizer, TruncationParams};

/// `${MEMSKILL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memskill}/assets`.
pub fn default_assets_dir() -> PathBuf {
    let cache = match std::env::var_os("MEMSKILL_CACHE") {
        Some(c) if !c.is_empty() => PathBuf::from(c),
        _ => {
            let base = match std::env::var_os("XDG_CACHE_HOME") {
                Some(x) if !x.is_empty() => PathBuf::from(x),
                _ => std::env::var_os("HOME")
                    .map(PathBuf::from)
                    .unwrap_or_else(|| PathBuf::from("."))
                    .join(".cache"),
            };
            base.join("memskill")
        }
    };
    cache.join("assets")
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

/// Reads and parses `dir/config.json`; returns the config, its path and its raw text.
fn read_config<T: serde::de::DeserializeOwned>(
    dir: &Path,
) -> Result<(T, PathBuf, String), EncoderError> {
    let path = need(dir, "config.json")?;
    let text = std::fs::read_to_string(&path)
        .map_err(|e| EncoderError(format!("{}: {e}", path.display())))?;
    let config = serde_json::from_str(&text)
        .map_err(|e| EncoderError(format!("{}: {e}", path.display())))?;
    Ok((config, path, text))
}

fn need(dir: &Path, name: &str) -> Result<PathBuf, EncoderError> {
    let p = dir.join(name);
    if p.is_file() {
        Ok(p)
    } else {
        Err(EncoderError(format!(
            "{} not found (run scripts/fetch-assets.sh or `memskill assets fetch`)",
            p.display()
        )))
    }
}

fn load_tokenizer(dir: &Path, max_tokens: usize) -> Result<Tokenizer, EncoderError> {
    let path = need(dir, "tokenizer.json")?;
    let mut tok = Tokenizer::from_file(&path)
        .map_err(|e| EncoderError(format!("{}: {e}", path.display())))?;
    tok.with_padding(None);
    tok.with_truncation(Some(TruncationParams {
        max_length: max_tokens,
        ..Default::default()
    }))
    .map_err(|e| EncoderError(format!("{}: truncation: {e}", path.display())))?;
    Ok(tok)
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

/// all-MiniLM-L6-v2 / BERT sentence encoder (mean pooling, L2-normalised).
pub struct BertEncoder {
    model: bert::BertModel,
    tokenizer: Tokenizer,
    dim: usize,
    id: String,
    device: CDevice,
    /// Texts per forward pass (32).
    pub batch_size: usize,
}

impl BertEncoder {
    /// Maximum tokens per text (sentence-transformers' `max_seq_length` for MiniLM).
    pub const MAX_TOKENS: usize = 256;

    /// Loads `config.json`, `tokenizer.json` and `model.safetensors` from `dir` (CPU).
    pub fn load(dir: &Path) -> Result<Self, EncoderError> {
        let (config, cfg_path, cfg_text): (bert::Config, _, _) = read_config(dir)?;
        let dim: usize = serde_json::from_str::<serde_json::Value>(&cfg_text)
            .ok()
            .and_then(|v| v.get("hidden_size").and_then(|h| h.as_u64()))
            .ok_or_else(|| {
                EncoderError(format!("{}: missing field hidden_size", cfg_path.display()))
            })? as usize;
        let tokenizer = load_tokenizer(dir, Self::MAX_TOKENS)?;
        let weights = need(dir, "model.safetensors")?;
        let device = CDevice::Cpu;
        // SAFETY: the file is memory-mapped read-only; it must not be modified while loaded.
        let vb = unsafe { VarBuilder::from_mmaped_safetensors(&[&weights], DType::F32, &device) }
            .map_err(|e| EncoderError(format!("{}: {e}", weights.display())))?;
        let model = bert::BertModel::load(vb, &config)
            .map_err(|e| EncoderError(format!("{}: {e}", weights.display())))?;
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_else(|| "bert".into());
        Ok(Self {
            model,
            tokenizer,
            dim,
            id: format!("bert:{name}"),
            device,
            batch_size: 32,
        })
    }

    /// Token counts (with special tokens, after truncation) of `texts`.
    pub fn token_counts(&self, texts: &[&str]) -> Result<Vec<usize>, EncoderError> {
        Ok(tokenize(&self.tokenizer, texts, &self.id)?
            .iter()
            .map(|t| t.len())
            .collect())
    }

    fn embed_batch(&self, ids: &[&Vec<u32>]) -> Result<Vec<Vec<f32>>, EncoderError> {
        let err = |e: candle_core::Error| EncoderError(format!("{}: forward: {e}", self.id));
        let b = ids.len();
        let l = ids.iter().map(|t| t.len()).max().unwrap_or(0).max(1);
        let mut flat = vec![0u32; b * l];
        let mut mask = vec![0u32; b * l];
        for (i, t) in ids.iter().enumerate() {
            flat[i * l..i * l + t.len()].copy_from_slice(t);
            mask[i * l..i * l + t.len()].iter_mut().for_each(|m| *m = 1);
        }
        let input = CTensor::from_vec(flat, (b, l), &self.device).map_err(err)?;
        let types = input.zeros_like().map_err(err)?;
        let mask_t = CTensor::from_vec(mask.clone(), (b, l), &self.device).map_err(err)?;
        let hidden = self
            .model
            .forward(&input, &types, Some(&mask_t))
            .map_err(err)?
            .to_vec3::<f32>()
            .map_err(err)?;
        let mut out = Vec::with_capacity(b);
        for (i, rows) in hidden.iter().enumerate() {
            let mut v = vec![0.0f32; self.dim];
            let mut count = 0.0f32;
            for (j, row) in rows.iter().enumerate() {
                if mask[i * l + j] == 1 {
                    count += 1.0;
                    for (a, x) in v.iter_mut().zip(row) {
                        *a += *x;
                    }
                }
            }
            if count > 0.0 {
                v.iter_mut().for_each(|a| *a /= count);
            }
            l2_normalize(&mut v);
            out.push(v);
        }
        Ok(out)
    }
}

impl TextEncoder for BertEncoder {
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
        let ids = tokenize(&self.tokenizer, texts, &self.id)?;
        let lens: Vec<usize> = ids.iter().map(|t| t.len()).collect();
        let mut out: Vec<Vec<f32>> = vec![Vec::new(); texts.len()];
        for batch in length_sorted_batches(&lens, self.batch_size) {
            let refs: Vec<&Vec<u32>> = batch.iter().map(|&i| &ids[i]).collect();
            for (i, v) in batch.iter().zip(self.embed_batch(&refs)?) {
                out[*i] = v;
            }
        }
        Ok(out)
    }
}

/// Qwen3-Embedding encoder: last-token pooling over the final hidden state, L2-normalised.
/// Texts are right-padded; attention is causal, so the last real token never sees padding.
pub struct Qwen3Encoder {
    model: qwen3::Model,
    tokenizer: Option<Tokenizer>,
    dim: usize,
    id: String,
    /// Texts per forward pass (16).
    pub batch_size: usize,
}

impl Qwen3Encoder {
    /// Maximum tokens per text.
    pub const MAX_TOKENS: usize = 512;

    /// Loads a Qwen3-Embedding directory (`config.json`, `tokenizer.json`, `*.safetensors`;
    /// tensor names with or without the `model.` prefix).
    pub fn load(dir: &Path) -> Result<Self, EncoderError> {
        let (config, _, _): (qwen3::Config, _, _) = read_config(dir)?;
        let tokenizer = load_tokenizer(dir, Self::MAX_TOKENS)?;
        let files = safetensors_files(dir)?;
        let device = CDevice::Cpu;
        // SAFETY: read-only memory map of the weight files.
        let vb = unsafe { VarBuilder::from_mmaped_safetensors(&files, DType::F32, &device) }
            .map_err(|e| EncoderError(format!("{}: {e}", dir.display())))?;
        let vb = if vb.contains_tensor("model.embed_tokens.weight") {
            vb
        } else {
            vb.rename_f(|name: &str| name.strip_prefix("model.").unwrap_or(name).to_string())
        };
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_else(|| "qwen3".into());
        let mut enc = Self::from_parts(&config, vb, None, format!("qwen3:{name}"))?;
        enc.tokenizer = Some(tokenizer);
        Ok(enc)
    }

    /// Builds the encoder from a config and a var builder (e.g. a `VarMap` in tests); without a
    /// tokenizer only [`embed_ids`](Self::embed_ids) works.
    pub fn from_parts(
        config: &qwen3::Config,
        vb: VarBuilder,
        tokenizer: Option<Tokenizer>,
        id: String,
    ) -> Result<Self, EncoderError> {
        let model =
            qwen3::Model::new(config, vb).map_err(|e| EncoderError(format!("{id}: {e}")))?;
        Ok(Self {
            model,
            tokenizer,
            dim: config.hidden_size,
            id,
            batch_size: 16,
        })
    }

    /// Embeds pre-tokenised inputs (one id list per text; empty lists give zero vectors).
    pub fn embed_ids(&self, ids: &[Vec<u32>]) -> Result<Vec<Vec<f32>>, EncoderError> {
        let err = |e: candle_core::Error| EncoderError(format!("{}: forward: {e}", self.id));
        let lens: Vec<usize> = ids.iter().map(|t| t.len()).collect();
        let mut out = vec![vec![0.0f32; self.dim]; ids.len()];
        for batch in length_sorted_batches(&lens, self.batch_size) {
            let real: Vec<usize> = batch.into_iter().filter(|&i| lens[i] > 0).collect();
            if real.is_empty() {
                continue;
            }
            let b = real.len();
            let l = real.iter().map(|&i| lens[i]).max().unwrap_or(1);
            let mut flat = vec![0u32; b * l];
            for (r, &i) in real.iter().enumerate() {
                flat[r * l..r * l + lens[i]].copy_from_slice(&ids[i]);
            }
            let input = CTensor::from_vec(flat, (b, l), &CDevice::Cpu).map_err(err)?;
            // A fresh clone per batch: the model keeps a KV cache, and clones share weights.
            let mut model = self.model.clone();
            let hidden = model.forward(&input, 0).map_err(err)?; // [b, l, h]
            for (r, &i) in real.iter().enumerate() {
                let mut v = hidden
                    .get(r)
                    .and_then(|t| t.get(lens[i] - 1))
                    .and_then(|t| t.to_dtype(DType::F32))
                    .and_then(|t| t.to_vec1::<f32>())
                    .map_err(err)?;
                l2_normalize(&mut v);
                out[i] = v;
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
    fn length_sorted_batches_cover_all_in_length_order() {
        let b = length_sorted_batches(&[5, 1, 3, 9, 2], 2);
        assert_eq!(b, vec![vec![1, 4], vec![2, 0], vec![3]]);
    }

    #[test]
    fn qwen3_last_token_pooling_shapes() {
        use candle_nn::VarMap;
        let cfg = qwen3::Config {
            vocab_size: 50,
            hidden_size: 16,
            intermediate_size: 32,
            num_hidden_layers: 2,
            num_attention_heads: 2,
            head_dim: 8,
            attention_bias: false,
            num_key_value_heads: 1,
            max_position_embeddings: 64,
            sliding_window: None,
            max_window_layers: 2,
            tie_word_embeddings: true,
            rope_theta: 10000.0,
            rms_norm_eps: 1e-6,
            use_sliding_window: false,
            hidden_act: candle_nn::Activation::Silu,
        };
        let vm = VarMap::new();
        let vb = VarBuilder::from_varmap(&vm, DType::F32, &CDevice::Cpu);
        let enc = Qwen3Encoder::from_parts(&cfg, vb, None, "qwen3:test".into()).unwrap();
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
