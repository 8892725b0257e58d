//! Local GGUF chat models through candle (`quantized_llama`, `quantized_qwen2`) on CPU
//! (CUDA with the `cuda` feature). The tokenizer is rebuilt from the GGUF metadata
//! (`tokenizer.ggml.*`, GPT-2 byte-level BPE) unless a `tokenizer.json` is given; prompts use
//! the ChatML template of SmolLM2 / Qwen2.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

use candle_core::quantized::gguf_file;
use candle_core::{Device, Tensor};
use candle_transformers::generation::{LogitsProcessor, Sampling};
use candle_transformers::models::{quantized_llama, quantized_qwen2};
use memskill_core::{ChatRequest, ChatResponse, Llm, LlmError, Message, Role, Usage};
use serde::{Deserialize, Serialize};
use tokenizers::models::bpe::{Vocab, BPE};
use tokenizers::{AddedToken, Tokenizer};

use super::{LlmStats, LlmStatsSnapshot};

/// Configuration of [`LocalGguf`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LocalConfig {
    pub model_path: PathBuf,
    /// A `tokenizer.json`; when absent the tokenizer is built from the GGUF metadata.
    pub tokenizer_path: Option<PathBuf>,
    /// `llama` or `qwen2`; when absent, read from `general.architecture`.
    pub arch: Option<String>,
    /// Prompt + completion token budget; longer prompts are truncated from the left.
    pub max_context: usize,
    /// Sampling seed used when the request has none.
    pub seed: u64,
}

impl Default for LocalConfig {
    fn default() -> Self {
        Self {
            model_path: default_smollm2_path(),
            tokenizer_path: None,
            arch: None,
            max_context: 2048,
            seed: 42,
        }
    }
}

/// `${MEMSKILL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memskill}/assets/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf`.
pub fn default_smollm2_path() -> PathBuf {
    asset_root()
        .join("smollm2")
        .join("SmolLM2-135M-Instruct.Q4_1.gguf")
}

/// The asset cache directory (`.../memskill/assets`).
pub fn asset_root() -> PathBuf {
    if let Ok(c) = std::env::var("MEMSKILL_CACHE") {
        return PathBuf::from(c).join("assets");
    }
    let base = std::env::var("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            PathBuf::from(std::env::var("HOME").unwrap_or_else(|_| ".".into())).join(".cache")
        });
    base.join("memskill").join("assets")
}

enum Weights {
    Llama(quantized_llama::ModelWeights),
    Qwen2(quantized_qwen2::ModelWeights),
}

impl Weights {
    fn forward(&mut self, x: &Tensor, pos: usize) -> candle_core::Result<Tensor> {
        match self {
            Self::Llama(m) => m.forward(x, pos),
            Self::Qwen2(m) => m.forward(x, pos),
        }
    }
    fn clear(&mut self) {
        match self {
            Self::Llama(m) => m.clear_kv_cache(),
            Self::Qwen2(m) => m.clear_kv_cache(),
        }
    }
}

/// Timing of the last generation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct GenTiming {
    pub prompt_tokens: usize,
    pub completion_tokens: usize,
    pub prefill_secs: f64,
    pub decode_secs: f64,
}

impl GenTiming {
    pub fn prefill_tok_s(&self) -> f64 {
        if self.prefill_secs > 0.0 {
            self.prompt_tokens as f64 / self.prefill_secs
        } else {
            0.0
        }
    }
    /// Decode speed over the sampled tokens after the first (the first comes from prefill).
    pub fn decode_tok_s(&self) -> f64 {
        if self.decode_secs > 0.0 {
            self.completion_tokens.saturating_sub(1) as f64 / self.decode_secs
        } else {
            0.0
        }
    }
}

/// A local GGUF chat model. One generation at a time (the model sits behind a mutex).
pub struct LocalGguf {
    model: Mutex<Weights>,
    tokenizer: Tokenizer,
    device: Device,
    cfg: LocalConfig,
    arch: String,
    name: String,
    stop_ids: Vec<u32>,
    default_system: Option<String>,
    last: Mutex<GenTiming>,
    stats: LlmStats,
}

fn local_err(path: &Path, what: &str, e: impl std::fmt::Display) -> LlmError {
    LlmError::Local(format!("{}: {what}: {e}", path.display()))
}

/// Build a byte-level BPE tokenizer from GGUF metadata (`tokenizer.ggml.model` = "gpt2").
pub fn tokenizer_from_gguf(ct: &gguf_file::Content, path: &Path) -> Result<Tokenizer, LlmError> {
    let md = |k: &str| {
        ct.metadata
            .get(k)
            .ok_or_else(|| local_err(path, "metadata", format!("missing {k}")))
    };
    let model = md("tokenizer.ggml.model")?
        .to_string()
        .map_err(|e| local_err(path, "tokenizer.ggml.model", e))?;
    if model != "gpt2" {
        return Err(local_err(
            path,
            "tokenizer.ggml.model",
            format!("{model:?} is not supported (only gpt2 BPE); pass a tokenizer.json"),
        ));
    }
    let tokens = md("tokenizer.ggml.tokens")?
        .to_vec()
        .map_err(|e| local_err(path, "tokenizer.ggml.tokens", e))?;
    let tokens: Vec<String> = tokens
        .iter()
        .map(|v| v.to_string().cloned())
        .collect::<Result<_, _>>()
        .map_err(|e| local_err(path, "tokenizer.ggml.tokens", e))?;
    let merges = md("tokenizer.ggml.merges")?
        .to_vec()
        .map_err(|e| local_err(path, "tokenizer.ggml.merges", e))?;
    let mut merge_pairs = Vec::with_capacity(merges.len());
    for (i, m) in merges.iter().enumerate() {
        let s = m
            .to_string()
            .map_err(|e| local_err(path, "tokenizer.ggml.merges", e))?;
        let (a, b) = s.split_once(' ').ok_or_else(|| {
            local_err(
                path,
                "tokenizer.ggml.merges",
                format!("entry {i} {s:?} has no space"),
            )
        })?;
        merge_pairs.push((a.to_string(), b.to_string()));
    }
    let types: Vec<i64> = match ct
        .metadata
        .get("tokenizer.ggml.token_type")
        .and_then(|v| v.to_vec().ok())
    {
        Some(v) => v
            .iter()
            .map(|x| x.to_i32().map(i64::from).unwrap_or(1))
            .collect(),
        None => Vec::new(),
    };
    let vocab: Vocab = tokens
        .iter()
        .enumerate()
        .map(|(i, t)| (t.clone(), i as u32))
        .collect();
    let bpe = BPE::builder()
        .vocab_and_merges(vocab, merge_pairs)
        .build()
        .map_err(|e| local_err(path, "building BPE", e))?;
    let mut tok = Tokenizer::new(bpe);
    let bl = tokenizers::pre_tokenizers::byte_level::ByteLevel::new(false, true, true);
    tok.with_pre_tokenizer(Some(bl));
    tok.with_decoder(Some(tokenizers::decoders::byte_level::ByteLevel::default()));
    // Control / user-defined tokens (and ChatML markers) are matched whole, never split.
    let special: Vec<AddedToken> = tokens
        .iter()
        .enumerate()
        .filter(|(i, t)| {
            matches!(types.get(*i), Some(3) | Some(4)) || (t.starts_with("<|") && t.ends_with("|>"))
        })
        .map(|(_, t)| AddedToken::from(t.clone(), true))
        .collect();
    tok.add_special_tokens(special)
        .map_err(|e| local_err(path, "adding special tokens", e))?;
    Ok(tok)
}

/// Render messages with the ChatML template, ending with the assistant header.
pub fn chatml(messages: &[Message], default_system: Option<&str>) -> String {
    let mut s = String::new();
    if !messages.iter().any(|m| m.role == Role::System) {
        if let Some(sys) = default_system {
            s.push_str(&format!("<|im_start|>system\n{sys}<|im_end|>\n"));
        }
    }
    for m in messages {
        let role = match m.role {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
        };
        s.push_str(&format!("<|im_start|>{role}\n{}<|im_end|>\n", m.content));
    }
    s.push_str("<|im_start|>assistant\n");
    s
}

impl LocalGguf {
    /// Load the GGUF weights and tokenizer.
    pub fn load(cfg: &LocalConfig) -> Result<Self, LlmError> {
        let path = cfg.model_path.clone();
        let mut file =
            std::fs::File::open(&path).map_err(|e| local_err(&path, "cannot open model", e))?;
        let ct = gguf_file::Content::read(&mut file)
            .map_err(|e| local_err(&path, "reading GGUF header", e))?;
        let arch = match &cfg.arch {
            Some(a) => a.to_ascii_lowercase(),
            None => ct
                .metadata
                .get("general.architecture")
                .and_then(|v| v.to_string().ok().cloned())
                .unwrap_or_else(|| "llama".into()),
        };
        let name = ct
            .metadata
            .get("general.name")
            .and_then(|v| v.to_string().ok().cloned())
            .unwrap_or_else(|| {
                path.file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default()
            });
        let tokenizer = match &cfg.tokenizer_path {
            Some(t) => {
                Tokenizer::from_file(t).map_err(|e| local_err(t, "loading tokenizer.json", e))?
            }
            None => tokenizer_from_gguf(&ct, &path)?,
        };
        let mut stop_ids = Vec::new();
        if let Some(e) = ct
            .metadata
            .get("tokenizer.ggml.eos_token_id")
            .and_then(|v| v.to_u32().ok())
        {
            stop_ids.push(e);
        }
        for t in ["<|im_end|>", "<|endoftext|>", "<|eot_id|>"] {
            if let Some(id) = tokenizer.token_to_id(t) {
                if !stop_ids.contains(&id) {
                    stop_ids.push(id);
                }
            }
        }
        let device = device()?;
        let weights = match arch.as_str() {
            "llama" => Weights::Llama(
                quantized_llama::ModelWeights::from_gguf(ct, &mut file, &device)
                    .map_err(|e| local_err(&path, "loading llama weights", e))?,
            ),
            "qwen2" => Weights::Qwen2(
                quantized_qwen2::ModelWeights::from_gguf(ct, &mut file, &device)
                    .map_err(|e| local_err(&path, "loading qwen2 weights", e))?,
            ),
            other => {
                return Err(local_err(
                    &path,
                    "architecture",
                    format!("{other:?} is not supported (llama, qwen2)"),
                ))
            }
        };
        let default_system = if name.to_lowercase().contains("smollm") {
            Some("You are a helpful AI assistant named SmolLM, trained by Hugging Face".to_string())
        } else if arch == "qwen2" {
            Some("You are a helpful assistant.".to_string())
        } else {
            None
        };
        Ok(Self {
            model: Mutex::new(weights),
            tokenizer,
            device,
            cfg: cfg.clone(),
            arch,
            name,
            stop_ids,
            default_system,
            last: Mutex::new(GenTiming::default()),
            stats: LlmStats::default(),
        })
    }

    pub fn tokenizer(&self) -> &Tokenizer {
        &self.tokenizer
    }
    pub fn arch(&self) -> &str {
        &self.arch
    }
    pub fn stats(&self) -> LlmStatsSnapshot {
        self.stats.snapshot()
    }
    /// Prefill / decode timing of the most recent generation.
    pub fn last_timing(&self) -> GenTiming {
        self.last.lock().map(|g| *g).unwrap_or_default()
    }

    fn generate(&self, req: &ChatRequest) -> Result<(String, GenTiming), LlmError> {
        let prompt = chatml(&req.messages, self.default_system.as_deref());
        let enc = self
            .tokenizer
            .encode(prompt.as_str(), false)
            .map_err(|e| LlmError::Local(format!("tokenizing: {e}")))?;
        let mut ids: Vec<u32> = enc.get_ids().to_vec();
        let budget = self.cfg.max_context.min(quantized_llama::MAX_SEQ_LEN);
        let max_new = (req.max_tokens as usize)
            .max(1)
            .min(budget.saturating_sub(1).max(1));
        let keep = budget.saturating_sub(max_new).max(1);
        if ids.len() > keep {
            ids.drain(..ids.len() - keep);
        }
        let sampling = if req.temperature <= 0.0 {
            Sampling::ArgMax
        } else if req.top_p > 0.0 && req.top_p < 1.0 {
            Sampling::TopP {
                p: req.top_p as f64,
                temperature: req.temperature as f64,
            }
        } else {
            Sampling::All {
                temperature: req.temperature as f64,
            }
        };
        let mut lp = LogitsProcessor::from_sampling(req.seed.unwrap_or(self.cfg.seed), sampling);
        let mut model = self
            .model
            .lock()
            .map_err(|_| LlmError::Local("model mutex poisoned".into()))?;
        model.clear();
        let lerr = |e: candle_core::Error| LlmError::Local(e.to_string());
        let t0 = Instant::now();
        let input = Tensor::new(ids.as_slice(), &self.device)
            .and_then(|t| t.unsqueeze(0))
            .map_err(lerr)?;
        let logits = model
            .forward(&input, 0)
            .and_then(|l| l.squeeze(0))
            .map_err(lerr)?;
        let mut next = lp.sample(&logits).map_err(lerr)?;
        let prefill_secs = t0.elapsed().as_secs_f64();
        let t1 = Instant::now();
        let mut out: Vec<u32> = Vec::new();
        let mut text = String::new();
        let mut pos = ids.len();
        loop {
            if self.stop_ids.contains(&next) {
                break;
            }
            out.push(next);
            text = self
                .tokenizer
                .decode(&out, true)
                .map_err(|e| LlmError::Local(format!("decoding: {e}")))?;
            if let Some(cut) = req
                .stop
                .iter()
                .filter(|s| !s.is_empty())
                .filter_map(|s| text.find(s.as_str()))
                .min()
            {
                text.truncate(cut);
                break;
            }
            if out.len() >= max_new || pos + 1 >= quantized_llama::MAX_SEQ_LEN {
                break;
            }
            let input = Tensor::new(&[next], &self.device)
                .and_then(|t| t.unsqueeze(0))
                .map_err(lerr)?;
            let logits = model
                .forward(&input, pos)
                .and_then(|l| l.squeeze(0))
                .map_err(lerr)?;
            pos += 1;
            next = lp.sample(&logits).map_err(lerr)?;
        }
        let timing = GenTiming {
            prompt_tokens: ids.len(),
            completion_tokens: out.len(),
            prefill_secs,
            decode_secs: t1.elapsed().as_secs_f64(),
        };
        Ok((text.trim().to_string(), timing))
    }
}

fn device() -> Result<Device, LlmError> {
    #[cfg(feature = "cuda")]
    {
        if let Ok(d) = Device::new_cuda(0) {
            return Ok(d);
        }
    }
    Ok(Device::Cpu)
}

impl Llm for LocalGguf {
    fn id(&self) -> String {
        format!(
            "local:{}:{}",
            self.arch,
            self.name.to_lowercase().replace(' ', "-")
        )
    }

    fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, LlmError> {
        let t = Instant::now();
        let res = self.generate(req).map(|(text, timing)| {
            if let Ok(mut l) = self.last.lock() {
                *l = timing;
            }
            ChatResponse {
                text,
                usage: Usage {
                    prompt_tokens: timing.prompt_tokens as u64,
                    completion_tokens: timing.completion_tokens as u64,
                },
                latency_ms: t.elapsed().as_millis() as u64,
                cached: false,
            }
        });
        self.stats.attempt();
        self.stats.record(&res);
        res
    }
}
