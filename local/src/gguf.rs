//! Local GGUF chat models through candle (`quantized_llama`, `quantized_qwen2`) on CPU
//! (CUDA with the `cuda` feature). The tokenizer is rebuilt from the GGUF metadata
//! (`tokenizer.ggml.*`, GPT-2 byte-level BPE) unless a `tokenizer.json` is given; prompts are
//! rendered with the model's own chat template (`tokenizer.chat_template` in the GGUF
//! metadata, a Jinja template run with minijinja and Python string methods), or ChatML when
//! the file has none.
//!
//! A prompt longer than the context budget is never cut silently: by default the call fails
//! with an error naming the sizes ([`Overflow::Refuse`]); with [`Overflow::CutMiddle`] the
//! middle of the longest text block of the longest user message (the span, in an executor
//! prompt) is replaced by a marker, with a warning and a counter ([`LocalGguf::truncated`]).
//!
//! Weight dtypes that candle 0.11 runs through scalar `vec_dot` code on CPU (Q4_1, Q5_0, Q5_1,
//! Q8_1) are requantized at load time to one with a SIMD path (Q8_0 by default) and the result is
//! cached next to the source file as `<stem>.q8_0.gguf` (see [`LocalConfig::requantize`]),
//! except, under `auto`, small llama files whose decode steps run the stored dtypes with our
//! own kernels (`crate::qdot`; see [`crate::llama::steps_natively`]).

use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

use candle_core::quantized::{gguf_file, GgmlDType, QTensor};
use candle_core::{Device, Tensor};
use candle_transformers::generation::{LogitsProcessor, Sampling};
use candle_transformers::models::{quantized_llama, quantized_qwen2};
use memskill_core::serde_opt::empty_is_none;
use memskill_core::{
    ChatRequest, ChatResponse, Llm, LlmError, Message, ResponseSchema, Role, Usage,
};
use serde::{Deserialize, Serialize};
use tokenizers::models::bpe::{Vocab, BPE};
use tokenizers::{AddedToken, Tokenizer};

use memskill_core::llm_stats::{strip_reasoning, LlmStats, LlmStatsSnapshot};

/// A local model's architecture (`arch`): the ones [`LocalGguf`] runs. Read case-insensitively
/// (`"Llama"` is `llama`); an unknown name is an error listing the accepted ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum LocalArch {
    Llama,
    Qwen2,
}

impl LocalArch {
    /// The lowercase name (as `general.architecture` spells it).
    pub fn as_str(self) -> &'static str {
        match self {
            LocalArch::Llama => "llama",
            LocalArch::Qwen2 => "qwen2",
        }
    }
}

impl std::str::FromStr for LocalArch {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "llama" => Ok(LocalArch::Llama),
            "qwen2" => Ok(LocalArch::Qwen2),
            _ => Err(format!(
                "unknown arch {s:?}, expected \"llama\" or \"qwen2\""
            )),
        }
    }
}

impl TryFrom<String> for LocalArch {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

impl From<LocalArch> for String {
    fn from(a: LocalArch) -> String {
        a.as_str().to_string()
    }
}

impl std::fmt::Display for LocalArch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The keys of a run config's local-model section (`backend = "local"`): the part of
/// [`LocalConfig`] a run sets, with the run config's defaults (the other fields keep
/// [`LocalConfig`]'s). A path or arch given as `""` counts as absent.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct LocalSettings {
    /// GGUF file; absent = the SmolLM2 asset.
    #[serde(
        deserialize_with = "empty_is_none::deserialize",
        skip_serializing_if = "Option::is_none"
    )]
    pub model_path: Option<PathBuf>,
    #[serde(
        deserialize_with = "empty_is_none::deserialize",
        skip_serializing_if = "Option::is_none"
    )]
    pub tokenizer_path: Option<PathBuf>,
    /// "llama" | "qwen2"; absent = from the GGUF metadata.
    #[serde(
        deserialize_with = "empty_is_none::deserialize",
        skip_serializing_if = "Option::is_none"
    )]
    pub arch: Option<LocalArch>,
    pub max_context: usize,
    /// A prompt longer than max_context minus the reply budget is refused ("refuse", an
    /// error like an API's) or has the middle of its longest text block cut ("cut-middle",
    /// warned and counted); never cut silently.
    pub overflow: Overflow,
}

impl Default for LocalSettings {
    fn default() -> Self {
        Self {
            model_path: None,
            tokenizer_path: None,
            arch: None,
            max_context: 4096,
            overflow: Overflow::Refuse,
        }
    }
}

impl LocalSettings {
    /// The backend's configuration: these keys over [`LocalConfig`]'s defaults.
    pub fn backend_config(&self) -> LocalConfig {
        LocalConfig {
            model_path: self.model_path.clone().unwrap_or_else(default_smollm2_path),
            tokenizer_path: self.tokenizer_path.clone(),
            arch: self.arch,
            max_context: self.max_context,
            overflow: self.overflow,
            ..Default::default()
        }
    }
}

/// Configuration of [`LocalGguf`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LocalConfig {
    pub model_path: PathBuf,
    /// A `tokenizer.json`; when absent the tokenizer is built from the GGUF metadata.
    pub tokenizer_path: Option<PathBuf>,
    /// `llama` or `qwen2`; when absent, read from `general.architecture`.
    pub arch: Option<LocalArch>,
    /// Prompt + completion token budget (at most candle's 4096).
    pub max_context: usize,
    /// What to do with a prompt that does not fit: `"refuse"` (an error) or `"cut-middle"`.
    pub overflow: Overflow,
    /// Sampling seed used when the request has none.
    pub seed: u64,
    /// Load-time requantization of weights whose dtype has no SIMD path in candle (Q4_1, Q5_0,
    /// Q5_1, Q8_1): `None` / `"auto"` = to Q8_0 when the CPU has AVX2+FMA or NEON (not for
    /// llama files whose decode runs their own dtypes, e.g. SmolLM2 Q4_1), `"off"` = keep
    /// the stored dtypes, `"q8_0"` / `"q4_0"` = always to that dtype.
    pub requantize: Option<String>,
    /// Llama files: run prompt tokens through a GEMM on weights dequantized to f32 once at load
    /// (`None` = when the model has at most 1.5 B weights; decode steps always use the
    /// quantized weights). See `crate::llama`.
    pub dense_prefill: Option<bool>,
    /// Llama files: reuse the KV cache of the prompt prefix shared with the previous call
    /// (off: a reply can then depend, through float rounding, on the previous call).
    pub reuse_prefix: bool,
}

impl Default for LocalConfig {
    fn default() -> Self {
        Self {
            model_path: default_smollm2_path(),
            tokenizer_path: None,
            arch: None,
            max_context: 2048,
            overflow: Overflow::Refuse,
            seed: 42,
            requantize: None,
            dense_prefill: None,
            reuse_prefix: false,
        }
    }
}

/// Weight dtypes that candle 0.11 computes with scalar `vec_dot` code on x86 (no AVX path).
pub fn lacks_simd(dt: GgmlDType) -> bool {
    matches!(
        dt,
        GgmlDType::Q4_1 | GgmlDType::Q5_0 | GgmlDType::Q5_1 | GgmlDType::Q8_1
    )
}

/// Whether candle's quantized `vec_dot` kernels (Q4_0, Q8_0, k-quants) have a SIMD path here.
pub fn cpu_has_quant_simd() -> bool {
    let avx = candle_core::utils::with_avx() && {
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        {
            std::is_x86_feature_detected!("fma")
        }
        #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
        {
            false
        }
    };
    avx || candle_core::utils::with_neon() || candle_core::utils::with_simd128()
}

/// Resolve the [`LocalConfig::requantize`] option to a target dtype (`None` = keep weights).
pub fn parse_requantize(opt: Option<&str>) -> Result<Option<GgmlDType>, LlmError> {
    let v = opt.map(|s| s.trim().to_ascii_lowercase());
    match v.as_deref() {
        None | Some("") | Some("auto") => Ok(cpu_has_quant_simd().then_some(GgmlDType::Q8_0)),
        Some("off") | Some("none") | Some("false") | Some("no") => Ok(None),
        Some("q8_0") => Ok(Some(GgmlDType::Q8_0)),
        Some("q4_0") => Ok(Some(GgmlDType::Q4_0)),
        Some(other) => Err(LlmError::Local(format!(
            "local.requantize: {other:?} is not one of auto, off, q8_0, q4_0"
        ))),
    }
}

/// Where the requantized copy of `src` is cached: `<dir>/<stem>.<dtype>.gguf`.
pub fn requantized_path(src: &Path, target: GgmlDType) -> PathBuf {
    let stem = src
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "model".into());
    src.with_file_name(format!(
        "{stem}.{}.gguf",
        format!("{target:?}").to_ascii_lowercase()
    ))
}

/// Metadata key in a requantized GGUF naming the source it was built from.
const REQUANT_KEY: &str = "memskill.requantize.source";

/// Identity of a source file for cache invalidation: size, mtime and target dtype.
fn source_key(src: &Path, target: GgmlDType) -> Result<String, LlmError> {
    let md = std::fs::metadata(src).map_err(|e| local_err(src, "stat", e))?;
    let mtime = md
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    Ok(format!(
        "v1 size={} mtime_ns={mtime} target={target:?}",
        md.len()
    ))
}

/// Reader over GGUF tensor data (a file or an in-memory copy).
pub trait ReadSeek: Read + Seek + Send {}
impl<T: Read + Seek + Send> ReadSeek for T {}

/// Where [`PreparedWeights`] come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WeightsSource {
    /// The configured file, unchanged.
    Original,
    /// A requantized copy cached on disk (reused or freshly written).
    Cache { path: PathBuf, reused: bool },
    /// A requantized copy held in memory (the cache could not be written).
    Memory { reason: String },
}

/// A GGUF header plus a reader over its tensor data, ready for `ModelWeights::from_gguf`.
pub struct PreparedWeights {
    pub content: gguf_file::Content,
    pub reader: Box<dyn ReadSeek>,
    pub source: WeightsSource,
    /// Tensors requantized (0 when the source is used as stored or the cache was reused).
    pub converted: usize,
    /// The dtype requantized to, if any.
    pub target: Option<GgmlDType>,
}

impl PreparedWeights {
    /// One-line description for logs.
    pub fn describe(&self) -> String {
        match (&self.source, self.target) {
            (WeightsSource::Original, _) => "weights as stored".into(),
            (WeightsSource::Cache { path, reused }, Some(t)) => format!(
                "weights requantized to {t:?} ({}: {})",
                if *reused { "cached" } else { "written" },
                path.display()
            ),
            (WeightsSource::Memory { reason }, Some(t)) => {
                format!("weights requantized to {t:?} in memory (cache not written: {reason})")
            }
            (_, None) => "weights as stored".into(),
        }
    }
}

/// Requantize every tensor of `ct` whose dtype [`lacks_simd`] to `target` (tensors whose row
/// length is not a multiple of the target block stay as they are) and serialize a GGUF with the
/// same metadata plus `extra`. Returns the bytes and the number of converted tensors.
fn requantize_to_bytes<R: Read + Seek>(
    ct: &gguf_file::Content,
    reader: &mut R,
    target: GgmlDType,
    extra: (&str, gguf_file::Value),
) -> candle_core::Result<(Vec<u8>, usize)> {
    let dev = Device::Cpu;
    let mut names: Vec<&String> = ct.tensor_infos.keys().collect();
    names.sort();
    let mut tensors: Vec<(&str, QTensor)> = Vec::with_capacity(names.len());
    let mut converted = 0;
    for name in names {
        let q = ct.tensor(reader, name, &dev)?;
        let row = q.shape().dims().last().copied().unwrap_or(0);
        let q = if lacks_simd(q.dtype()) && row > 0 && row % target.block_size() == 0 {
            converted += 1;
            QTensor::quantize(&q.dequantize(&dev)?, target)?
        } else {
            q
        };
        tensors.push((name.as_str(), q));
    }
    let mut md: Vec<(&str, &gguf_file::Value)> = ct
        .metadata
        .iter()
        // `gguf_file::write` pads to 32 bytes, the default alignment.
        .filter(|(k, _)| k.as_str() != "general.alignment" && k.as_str() != extra.0)
        .map(|(k, v)| (k.as_str(), v))
        .collect();
    md.sort_by(|a, b| a.0.cmp(b.0));
    md.push((extra.0, &extra.1));
    let refs: Vec<(&str, &QTensor)> = tensors.iter().map(|(n, q)| (*n, q)).collect();
    let mut out = std::io::Cursor::new(Vec::new());
    gguf_file::write(&mut out, &md, &refs)?;
    Ok((out.into_inner(), converted))
}

/// Write `bytes` to `dst` atomically (temporary file in the same directory, then rename).
fn write_atomic(dst: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let name = dst
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "model.gguf".into());
    static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let seq = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = dst.with_file_name(format!(".{name}.tmp{}-{seq}", std::process::id()));
    let res = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, dst)
    })();
    if res.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    res
}

/// Open `path` and, per `requantize` (see [`LocalConfig::requantize`]), swap its slow weight
/// dtypes for a SIMD-friendly one, reusing or writing the cached copy next to it. Under
/// `auto`, a file for which `native` holds (its decode steps run its stored dtypes with SIMD
/// kernels of ours: [`crate::llama::steps_natively`]) is used as stored.
pub fn prepare_weights(
    path: &Path,
    requantize: Option<&str>,
    native: &dyn Fn(&gguf_file::Content) -> bool,
) -> Result<PreparedWeights, LlmError> {
    let mut file =
        std::fs::File::open(path).map_err(|e| local_err(path, "cannot open model", e))?;
    let ct = gguf_file::Content::read(&mut file)
        .map_err(|e| local_err(path, "reading GGUF header", e))?;
    let Some(target) = requantize_target(&ct, requantize, native)? else {
        return Ok(PreparedWeights {
            content: ct,
            reader: Box::new(file),
            source: WeightsSource::Original,
            converted: 0,
            target: None,
        });
    };
    let key = source_key(path, target)?;
    let cache = requantized_path(path, target);
    if let Some(cached) = cached_requantized(&cache, &key, target) {
        return Ok(cached);
    }
    let (bytes, converted) = requantize_to_bytes(
        &ct,
        &mut file,
        target,
        (REQUANT_KEY, gguf_file::Value::String(key)),
    )
    .map_err(|e| local_err(path, &format!("requantizing to {target:?}"), e))?;
    let source = match write_atomic(&cache, &bytes) {
        Ok(()) => WeightsSource::Cache {
            path: cache,
            reused: false,
        },
        Err(e) => WeightsSource::Memory {
            reason: format!("{}: {e}", cache.display()),
        },
    };
    let mut cur = std::io::Cursor::new(bytes);
    let content = gguf_file::Content::read(&mut cur)
        .map_err(|e| local_err(path, "reading requantized GGUF", e))?;
    Ok(PreparedWeights {
        content,
        reader: Box::new(cur),
        source,
        converted,
        target: Some(target),
    })
}

/// The dtype to requantize the file `ct` to per `requantize`: none when the option is off,
/// when under `auto` the file steps `native`ly, or when no tensor has a slow dtype whose rows
/// split into the target's blocks.
fn requantize_target(
    ct: &gguf_file::Content,
    requantize: Option<&str>,
    native: &dyn Fn(&gguf_file::Content) -> bool,
) -> Result<Option<GgmlDType>, LlmError> {
    let auto = matches!(
        requantize.map(|s| s.trim().to_ascii_lowercase()).as_deref(),
        None | Some("") | Some("auto")
    );
    let target = parse_requantize(requantize)?.filter(|_| !(auto && native(ct)));
    Ok(target.filter(|t| {
        ct.tensor_infos.values().any(|ti| {
            lacks_simd(ti.ggml_dtype)
                && ti
                    .shape
                    .dims()
                    .last()
                    .is_some_and(|&r| r > 0 && r % t.block_size() == 0)
        })
    }))
}

/// The requantized copy at `cache`, when it exists, reads, and was made from the source that
/// `key` describes; else `None` (it is then rewritten).
fn cached_requantized(cache: &Path, key: &str, target: GgmlDType) -> Option<PreparedWeights> {
    let mut cf = std::fs::File::open(cache).ok()?;
    let cct = gguf_file::Content::read(&mut cf).ok()?;
    let same = cct
        .metadata
        .get(REQUANT_KEY)
        .and_then(|v| v.to_string().ok())
        .is_some_and(|k| k == key);
    same.then(|| PreparedWeights {
        content: cct,
        reader: Box::new(cf),
        source: WeightsSource::Cache {
            path: cache.to_path_buf(),
            reused: true,
        },
        converted: 0,
        target: Some(target),
    })
}

/// `${MEMSKILL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memskill}/assets/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf`.
pub fn default_smollm2_path() -> PathBuf {
    asset_root()
        .join("smollm2")
        .join("SmolLM2-135M-Instruct.Q4_1.gguf")
}

/// The asset cache directory (`.../memskill/assets`, `memskill_core::asset_root`).
pub fn asset_root() -> PathBuf {
    memskill_core::asset_root()
}

enum Weights {
    /// Our llama forward (`crate::llama`).
    Fast(crate::llama::FastLlama),
    /// candle's, for llama files with experts.
    Llama(quantized_llama::ModelWeights),
    Qwen2(quantized_qwen2::ModelWeights),
}

impl Weights {
    fn forward(&mut self, x: &Tensor, pos: usize) -> candle_core::Result<Tensor> {
        match self {
            Self::Fast(_) => candle_core::bail!("FastLlama is fed through prefill/step"),
            Self::Llama(m) => m.forward(x, pos),
            Self::Qwen2(m) => m.forward(x, pos),
        }
    }
    fn clear(&mut self) {
        match self {
            Self::Fast(m) => m.clear(),
            Self::Llama(m) => m.clear_kv_cache(),
            Self::Qwen2(m) => m.clear_kv_cache(),
        }
    }
    /// Logits (`[vocab]`) of the last prompt token. The fast model reuses the K/V of a prompt
    /// prefix shared with the previous call; the others start from an empty cache.
    fn prefill(&mut self, ids: &[u32], device: &Device) -> candle_core::Result<Tensor> {
        if let Self::Fast(m) = self {
            return m.prefill(ids).map(|(logits, _)| logits);
        }
        self.clear();
        let input = Tensor::new(ids, device)?.unsqueeze(0)?;
        self.forward(&input, 0)?.squeeze(0)
    }
    /// Logits after feeding the generated token `id` at position `pos`.
    fn step(&mut self, id: u32, pos: usize, device: &Device) -> candle_core::Result<Tensor> {
        if let Self::Fast(m) = self {
            return m.step(id);
        }
        let input = Tensor::new(&[id], device)?.unsqueeze(0)?;
        self.forward(&input, pos)?.squeeze(0)
    }
}

/// Timing of the last generation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct GenTiming {
    pub prompt_tokens: usize,
    pub completion_tokens: usize,
    pub prefill_secs: f64,
    pub decode_secs: f64,
    /// Of `prefill_secs + decode_secs`: time spent computing and applying the structured
    /// output's token mask and advancing its grammar (0 for a free reply).
    #[serde(skip_serializing_if = "is_zero")]
    pub mask_secs: f64,
    /// Tokens sampled under a mask (0 for a free reply).
    #[serde(skip_serializing_if = "is_zero_usize")]
    pub masked_tokens: usize,
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

fn is_zero_usize(x: &usize) -> bool {
    *x == 0
}

impl GenTiming {
    /// Mask time per masked token, in seconds (0 when no token was masked).
    pub fn mask_secs_per_token(&self) -> f64 {
        if self.masked_tokens > 0 {
            self.mask_secs / self.masked_tokens as f64
        } else {
            0.0
        }
    }

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
    template: ChatTemplate,
    overflow: Overflow,
    truncated: std::sync::atomic::AtomicU64,
    last: Mutex<GenTiming>,
    stats: LlmStats,
    load_info: String,
    /// The structured-output vocabulary, built on the first structured request.
    #[cfg(feature = "llguidance")]
    guide: std::sync::OnceLock<Result<crate::guided::Guide, LlmError>>,
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

/// What a local backend does with a prompt longer than its budget.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Overflow {
    /// Fail the call with an error naming the prompt size and the budget (the call is
    /// counted as failed, like an API's context-length error).
    #[default]
    Refuse,
    /// Replace the middle of the longest text block (between blank lines) of the longest
    /// user message with `[...]`, keeping both ends of it and every other part of the prompt;
    /// warns on stderr and counts the cut.
    CutMiddle,
}

impl std::str::FromStr for Overflow {
    type Err = LlmError;
    fn from_str(s: &str) -> Result<Self, LlmError> {
        match s.trim() {
            "" | "refuse" => Ok(Overflow::Refuse),
            "cut-middle" => Ok(Overflow::CutMiddle),
            other => Err(LlmError::Local(format!(
                "local.overflow: {other:?} is not refuse or cut-middle"
            ))),
        }
    }
}

/// The marker that replaces a cut-out middle.
pub const CUT_MARKER: &str = "\n[...]\n";

/// A chat template: the model's own Jinja template (`tokenizer.chat_template`) rendered as
/// Hugging Face renders it (`trim_blocks`, `lstrip_blocks`, `raise_exception`, Python string
/// methods, `bos_token` / `eos_token`, `add_generation_prompt = true`), or ChatML.
pub struct ChatTemplate {
    env: Option<minijinja::Environment<'static>>,
    bos: String,
    eos: String,
    default_system: Option<String>,
}

impl std::fmt::Debug for ChatTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatTemplate")
            .field("jinja", &self.env.is_some())
            .field("bos", &self.bos)
            .field("eos", &self.eos)
            .finish()
    }
}

fn raise_exception(msg: String) -> Result<String, minijinja::Error> {
    Err(minijinja::Error::new(
        minijinja::ErrorKind::InvalidOperation,
        format!("chat template raised: {msg}"),
    ))
}

impl ChatTemplate {
    /// A Jinja chat template with its special tokens.
    pub fn jinja(source: &str, bos: &str, eos: &str) -> Result<Self, LlmError> {
        let mut env = minijinja::Environment::new();
        env.set_trim_blocks(true);
        env.set_lstrip_blocks(true);
        env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
        minijinja_contrib::add_to_environment(&mut env);
        env.add_function("raise_exception", raise_exception);
        env.add_template_owned("chat", source.to_string())
            .map_err(|e| LlmError::Local(format!("tokenizer.chat_template: {e}")))?;
        Ok(ChatTemplate {
            env: Some(env),
            bos: bos.to_string(),
            eos: eos.to_string(),
            default_system: None,
        })
    }

    /// ChatML with an optional default system prompt (used when a GGUF has no template).
    pub fn chatml(default_system: Option<&str>) -> Self {
        ChatTemplate {
            env: None,
            bos: String::new(),
            eos: String::new(),
            default_system: default_system.map(String::from),
        }
    }

    /// Whether this is the model's own template (not the ChatML fallback).
    pub fn is_jinja(&self) -> bool {
        self.env.is_some()
    }

    /// The prompt text of `messages`, ending with the assistant's turn.
    pub fn render(&self, messages: &[Message]) -> Result<String, LlmError> {
        let Some(env) = &self.env else {
            return Ok(chatml(messages, self.default_system.as_deref()));
        };
        let msgs: Vec<serde_json::Value> = messages
            .iter()
            .map(|m| {
                let role = match m.role {
                    Role::System => "system",
                    Role::User => "user",
                    Role::Assistant => "assistant",
                };
                serde_json::json!({"role": role, "content": m.content})
            })
            .collect();
        let tmpl = env
            .get_template("chat")
            .map_err(|e| LlmError::Local(format!("tokenizer.chat_template: {e}")))?;
        tmpl.render(minijinja::context! {
            messages => msgs,
            add_generation_prompt => true,
            bos_token => self.bos.as_str(),
            eos_token => self.eos.as_str(),
        })
        .map_err(|e| LlmError::Local(format!("rendering tokenizer.chat_template: {e}")))
    }
}

/// The chat template of a GGUF file: `tokenizer.chat_template` with the tokens named by
/// `tokenizer.ggml.bos_token_id` / `eos_token_id`, else ChatML with `fallback_system`.
pub fn chat_template_from_gguf(
    ct: &gguf_file::Content,
    path: &Path,
    fallback_system: Option<&str>,
) -> Result<ChatTemplate, LlmError> {
    let Some(src) = ct
        .metadata
        .get("tokenizer.chat_template")
        .and_then(|v| v.to_string().ok())
    else {
        return Ok(ChatTemplate::chatml(fallback_system));
    };
    let tokens: Vec<String> = ct
        .metadata
        .get("tokenizer.ggml.tokens")
        .and_then(|v| v.to_vec().ok())
        .map(|v| {
            v.iter()
                .map(|t| t.to_string().cloned().unwrap_or_default())
                .collect()
        })
        .unwrap_or_default();
    let token = |key: &str| -> String {
        ct.metadata
            .get(key)
            .and_then(|v| v.to_u32().ok())
            .and_then(|id| tokens.get(id as usize).cloned())
            .unwrap_or_default()
    };
    let bos = token("tokenizer.ggml.bos_token_id");
    let eos = token("tokenizer.ggml.eos_token_id");
    ChatTemplate::jinja(src, &bos, &eos).map_err(|e| local_err(path, "chat template", e))
}

/// Cut the middle of the longest block (between blank lines) of the longest user message so
/// that about `excess_chars` characters go, keeping both ends of the block. `None` when no
/// block is long enough to lose that much and keep some of each end.
pub fn cut_middle(messages: &[Message], excess_chars: usize) -> Option<Vec<Message>> {
    let (mi, m) = messages
        .iter()
        .enumerate()
        .filter(|(_, m)| m.role == Role::User)
        .max_by_key(|(_, m)| m.content.len())?;
    let text = &m.content;
    // the longest block between blank lines
    let mut best = (0usize, 0usize);
    let mut start = 0usize;
    for (i, _) in text
        .match_indices("\n\n")
        .chain(std::iter::once((text.len(), "")))
    {
        if i - start > best.1 - best.0 {
            best = (start, i);
        }
        start = (i + 2).min(text.len());
    }
    let (b0, b1) = best;
    let block_chars = text[b0..b1].chars().count();
    let cut = excess_chars + CUT_MARKER.len();
    if cut + 64 > block_chars {
        return None;
    }
    let keep_head = (block_chars - cut) / 2;
    let keep_tail = block_chars - cut - keep_head;
    let byte_at = |n: usize| {
        text[b0..b1]
            .char_indices()
            .nth(n)
            .map(|(i, _)| b0 + i)
            .unwrap_or(b1)
    };
    let head_end = byte_at(keep_head);
    let tail_start = byte_at(block_chars - keep_tail);
    let mut out = messages.to_vec();
    out[mi].content = format!("{}{CUT_MARKER}{}", &text[..head_end], &text[tail_start..]);
    Some(out)
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

/// The architecture: `cfg.arch`, else the file's `general.architecture` (default llama).
fn arch_of(cfg: &LocalConfig, ct: &gguf_file::Content) -> String {
    match cfg.arch {
        Some(a) => a.as_str().to_string(),
        None => ct
            .metadata
            .get("general.architecture")
            .and_then(|v| v.to_string().ok().cloned())
            .unwrap_or_else(|| "llama".into()),
    }
}

/// [`LocalConfig::dense_prefill`] as the llama loader's setting.
fn dense_prefill(cfg: &LocalConfig) -> crate::llama::DensePrefill {
    match cfg.dense_prefill {
        None => crate::llama::DensePrefill::Auto,
        Some(true) => crate::llama::DensePrefill::On,
        Some(false) => crate::llama::DensePrefill::Off,
    }
}

/// The file's `general.name`, else the file name without its extension.
fn model_name(ct: &gguf_file::Content, path: &Path) -> String {
    ct.metadata
        .get("general.name")
        .and_then(|v| v.to_string().ok().cloned())
        .unwrap_or_else(|| {
            path.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
        })
}

/// The tokens that end a reply: the file's end-of-sequence id, then the usual chat end
/// markers the tokenizer knows, each once.
fn stop_ids(ct: &gguf_file::Content, tokenizer: &Tokenizer) -> Vec<u32> {
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
    stop_ids
}

/// The model of architecture `arch` from the file `ct` (tensor data read from `reader`).
fn load_weights(
    cfg: &LocalConfig,
    arch: &str,
    ct: gguf_file::Content,
    mut reader: Box<dyn ReadSeek>,
    device: &Device,
    dense: crate::llama::DensePrefill,
) -> Result<Weights, LlmError> {
    let path = &cfg.model_path;
    let max_ctx = cfg.max_context.min(quantized_llama::MAX_SEQ_LEN);
    Ok(match arch {
        "llama" if crate::llama::supports(&ct) => {
            let mut m =
                crate::llama::FastLlama::from_gguf(&ct, &mut reader, device, max_ctx, dense)
                    .map_err(|e| local_err(path, "loading llama weights", e))?;
            m.reuse_prefix = cfg.reuse_prefix;
            Weights::Fast(m)
        }
        "llama" => Weights::Llama(
            quantized_llama::ModelWeights::from_gguf(ct, &mut reader, device)
                .map_err(|e| local_err(path, "loading llama weights", e))?,
        ),
        "qwen2" => Weights::Qwen2(
            quantized_qwen2::ModelWeights::from_gguf(ct, &mut reader, device)
                .map_err(|e| local_err(path, "loading qwen2 weights", e))?,
        ),
        other => {
            return Err(local_err(
                path,
                "architecture",
                format!("{other:?} is not supported (llama, qwen2)"),
            ))
        }
    })
}

/// The default system prompt of the ChatML fallback (files without
/// `tokenizer.chat_template`): the usual one of SmolLM2 and of Qwen2.
fn fallback_system(name: &str, arch: &str) -> Option<&'static str> {
    if name.to_lowercase().contains("smollm") {
        Some("You are a helpful AI assistant named SmolLM, trained by Hugging Face")
    } else if arch == "qwen2" {
        Some("You are a helpful assistant.")
    } else {
        None
    }
}

impl LocalGguf {
    /// Load the GGUF weights and tokenizer.
    pub fn load(cfg: &LocalConfig) -> Result<Self, LlmError> {
        let path = cfg.model_path.clone();
        let device = device()?;
        let dense = dense_prefill(cfg);
        let native = |ct: &gguf_file::Content| {
            device.is_cpu()
                && arch_of(cfg, ct) == "llama"
                && crate::llama::steps_natively(ct, dense)
        };
        let prepared = prepare_weights(&path, cfg.requantize.as_deref(), &native)?;
        let load_info = prepared.describe();
        let PreparedWeights {
            content: ct,
            reader,
            ..
        } = prepared;
        let arch = arch_of(cfg, &ct);
        let name = model_name(&ct, &path);
        let tokenizer = match &cfg.tokenizer_path {
            Some(t) => {
                Tokenizer::from_file(t).map_err(|e| local_err(t, "loading tokenizer.json", e))?
            }
            None => tokenizer_from_gguf(&ct, &path)?,
        };
        let template = chat_template_from_gguf(&ct, &path, None)?;
        let stop_ids = stop_ids(&ct, &tokenizer);
        let weights = load_weights(cfg, &arch, ct, reader, &device, dense)?;
        let load_info = match &weights {
            Weights::Fast(m) if m.dense => {
                format!("{load_info}; prompt tokens through f32 weights dequantized at load")
            }
            _ => load_info,
        };
        let template = if template.is_jinja() {
            template
        } else {
            ChatTemplate::chatml(fallback_system(&name, &arch))
        };
        let overflow = cfg.overflow;
        Ok(Self {
            model: Mutex::new(weights),
            tokenizer,
            device,
            cfg: cfg.clone(),
            arch,
            name,
            stop_ids,
            template,
            overflow,
            truncated: std::sync::atomic::AtomicU64::new(0),
            last: Mutex::new(GenTiming::default()),
            stats: LlmStats::default(),
            load_info,
            #[cfg(feature = "llguidance")]
            guide: std::sync::OnceLock::new(),
        })
    }

    pub fn tokenizer(&self) -> &Tokenizer {
        &self.tokenizer
    }
    pub fn arch(&self) -> &str {
        &self.arch
    }
    /// How the weights were loaded (as stored, or requantized and from where).
    pub fn load_info(&self) -> &str {
        &self.load_info
    }
    pub fn stats(&self) -> LlmStatsSnapshot {
        self.stats.snapshot()
    }
    /// How many prompts were cut to fit ([`Overflow::CutMiddle`]).
    pub fn truncated(&self) -> u64 {
        self.truncated.load(std::sync::atomic::Ordering::Relaxed)
    }
    /// The chat template prompts are rendered with.
    pub fn chat_template(&self) -> &ChatTemplate {
        &self.template
    }
    fn encode(&self, prompt: &str) -> Result<Vec<u32>, LlmError> {
        let enc = self
            .tokenizer
            .encode(prompt, false)
            .map_err(|e| LlmError::Local(format!("tokenizing: {e}")))?;
        Ok(enc.get_ids().to_vec())
    }
    /// The prompt's token ids within `keep` tokens: as rendered, or (cut-middle) with the
    /// middle of its longest block cut out; an error when it does not fit.
    fn fitted_prompt(&self, messages: &[Message], keep: usize) -> Result<Vec<u32>, LlmError> {
        let prompt = self.template.render(messages)?;
        let ids = self.encode(&prompt)?;
        if ids.len() <= keep {
            return Ok(ids);
        }
        let refuse = |n: usize, why: &str| {
            LlmError::Local(format!(
                "prompt has {n} tokens but only {keep} fit (max_context {} minus the reply \
                 budget){why}; raise max_context, shorten the spans, or set overflow = \"cut-middle\"",
                self.cfg.max_context
            ))
        };
        if self.overflow == Overflow::Refuse {
            return Err(refuse(ids.len(), ""));
        }
        let first_len = ids.len();
        let mut msgs = messages.to_vec();
        let mut n = ids.len();
        for _ in 0..4 {
            // characters per token of this prompt, with a margin
            let cpt = prompt.chars().count() as f64 / first_len.max(1) as f64;
            let excess = ((n - keep) as f64 * cpt * 1.02).ceil() as usize + 8;
            let Some(cut) = cut_middle(&msgs, excess) else {
                return Err(refuse(first_len, ": no text block is long enough to cut"));
            };
            msgs = cut;
            let ids = self.encode(&self.template.render(&msgs)?)?;
            if ids.len() <= keep {
                self.truncated
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                eprintln!(
                    "warning: local model: prompt of {first_len} tokens cut to {} (the middle of \
                     its longest text block), budget {keep}",
                    ids.len()
                );
                return Ok(ids);
            }
            n = ids.len();
        }
        Err(refuse(
            first_len,
            ": cutting the longest block did not make it fit",
        ))
    }
    /// Prefill / decode timing of the most recent generation.
    pub fn last_timing(&self) -> GenTiming {
        self.last.lock().map(|g| *g).unwrap_or_default()
    }

    /// Benchmark path (`memskill bench llm`): prefill `ids` from an empty KV cache, then decode
    /// greedily until `n_new` tokens were sampled (the first from the prefill's logits), stop
    /// tokens ignored. Returns the timing; the tokens are not detokenised.
    pub fn bench_generate(&self, ids: &[u32], n_new: usize) -> Result<GenTiming, LlmError> {
        let budget = self.cfg.max_context.min(quantized_llama::MAX_SEQ_LEN);
        if ids.is_empty() || ids.len() + n_new >= budget {
            return Err(LlmError::Local(format!(
                "bench_generate: {} prompt + {n_new} new tokens do not fit",
                ids.len()
            )));
        }
        let mut lp = LogitsProcessor::from_sampling(self.cfg.seed, Sampling::ArgMax);
        let mut model = self
            .model
            .lock()
            .map_err(|_| LlmError::Local("model mutex poisoned".into()))?;
        model.clear(); // every round prefills the whole prompt
        let lerr = |e: candle_core::Error| LlmError::Local(e.to_string());
        let t0 = Instant::now();
        let logits = model.prefill(ids, &self.device).map_err(lerr)?;
        let mut next = lp.sample(&logits).map_err(lerr)?;
        let prefill_secs = t0.elapsed().as_secs_f64();
        let t1 = Instant::now();
        let mut produced = 1;
        let mut pos = ids.len();
        while produced < n_new.max(1) {
            let logits = model.step(next, pos, &self.device).map_err(lerr)?;
            pos += 1;
            next = lp.sample(&logits).map_err(lerr)?;
            produced += 1;
        }
        Ok(GenTiming {
            prompt_tokens: ids.len(),
            completion_tokens: produced,
            prefill_secs,
            decode_secs: t1.elapsed().as_secs_f64(),
            ..GenTiming::default()
        })
    }

    /// Generate a reply: its text, timing, and whether it stopped at the token budget
    /// (`max_tokens` or the context) rather than at a stop token or string.
    fn generate(&self, req: &ChatRequest) -> Result<(String, GenTiming, bool), LlmError> {
        let budget = self.cfg.max_context.min(quantized_llama::MAX_SEQ_LEN);
        let max_new = (req.max_tokens as usize)
            .max(1)
            .min(budget.saturating_sub(1).max(1));
        let keep = budget.saturating_sub(max_new).max(1);
        let ids = self.fitted_prompt(&req.messages, keep)?;
        let mut picker = Picker {
            lp: LogitsProcessor::from_sampling(req.seed.unwrap_or(self.cfg.seed), sampling(req)),
            max_new,
            budget,
            mask_secs: 0.0,
            masked_tokens: 0,
        };
        let mut guided = match &req.response_schema {
            Some(rs) => Some(self.guided(rs)?),
            None => None,
        };
        let mut model = self
            .model
            .lock()
            .map_err(|_| LlmError::Local("model mutex poisoned".into()))?;
        let lerr = |e: candle_core::Error| LlmError::Local(e.to_string());
        let t0 = Instant::now();
        let logits = model.prefill(&ids, &self.device).map_err(lerr)?;
        let mut next = picker.pick(&logits, &mut guided, 0, ids.len())?;
        let prefill_secs = t0.elapsed().as_secs_f64();
        let t1 = Instant::now();
        let mut out: Vec<u32> = Vec::new();
        let mut text = String::new();
        let mut pos = ids.len();
        let mut truncated = false;
        let mut advance_secs = 0.0;
        loop {
            if self.stop_ids.contains(&next) {
                truncated = guided.as_ref().is_some_and(|g| g.cut());
                break;
            }
            out.push(next);
            text = self
                .tokenizer
                .decode(&out, true)
                .map_err(|e| LlmError::Local(format!("decoding: {e}")))?;
            if let Some(g) = guided.as_mut() {
                let t = Instant::now();
                g.consume(next)?;
                advance_secs += t.elapsed().as_secs_f64();
                if g.is_stopped() {
                    // the grammar is complete: nothing may follow (a text closed early by
                    // the budget is a cut reply all the same)
                    truncated = g.cut();
                    break;
                }
            }
            if let Some(cut) = first_stop(&req.stop, &text) {
                text.truncate(cut);
                break;
            }
            if out.len() >= max_new || pos + 1 >= budget {
                truncated = true;
                break;
            }
            let logits = model.step(next, pos, &self.device).map_err(lerr)?;
            pos += 1;
            next = picker.pick(&logits, &mut guided, out.len(), pos)?;
        }
        let timing = GenTiming {
            prompt_tokens: ids.len(),
            completion_tokens: out.len(),
            prefill_secs,
            decode_secs: t1.elapsed().as_secs_f64(),
            mask_secs: picker.mask_secs + advance_secs,
            masked_tokens: picker.masked_tokens,
        };
        Ok((text.trim().to_string(), timing, truncated))
    }
}

/// How `req` samples: greedy at temperature 0, else nucleus (a `top_p` in (0, 1)) or the
/// whole distribution at its temperature.
fn sampling(req: &ChatRequest) -> Sampling {
    if req.temperature <= 0.0 {
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
    }
}

/// Where the earliest of the (non-empty) stop strings `stop` starts in `text`, if any does.
fn first_stop(stop: &[String], text: &str) -> Option<usize> {
    stop.iter()
        .filter(|s| !s.is_empty())
        .filter_map(|s| text.find(s.as_str()))
        .min()
}

/// Picks a reply's tokens from the logits: sampled as is, or under the structured output's
/// mask, which the end of the budget presses to close (see `guided::Closing`).
struct Picker {
    lp: LogitsProcessor,
    /// Reply tokens at most.
    max_new: usize,
    /// Context tokens at most.
    budget: usize,
    /// Time spent masking, and how many tokens were picked under the mask.
    mask_secs: f64,
    masked_tokens: usize,
}

impl Picker {
    /// The next token from `logits`, the reply having `produced` tokens up to `pos`.
    fn pick(
        &mut self,
        logits: &Tensor,
        guided: &mut Option<Guided>,
        produced: usize,
        pos: usize,
    ) -> Result<u32, LlmError> {
        let lerr = |e: candle_core::Error| LlmError::Local(e.to_string());
        let Some(g) = guided.as_mut() else {
            return self.lp.sample(logits).map_err(lerr);
        };
        // tokens left for the reply, the one being picked included
        let left = self
            .max_new
            .saturating_sub(produced)
            .min(self.budget.saturating_sub(pos));
        let t = Instant::now();
        let masked = g.masked(logits, closing(left, self.max_new))?;
        self.mask_secs += t.elapsed().as_secs_f64();
        self.masked_tokens += 1;
        self.lp.sample(&masked).map_err(lerr)
    }
}

/// One structured reply in progress (the `llguidance` feature's token mask).
#[cfg(feature = "llguidance")]
type Guided = crate::guided::GuidedReply;

/// How the end of the budget presses a structured reply to close.
#[cfg(feature = "llguidance")]
fn closing(left: usize, max_new: usize) -> crate::guided::Closing {
    crate::guided::Closing::at(left, max_new)
}

/// Without the `llguidance` feature no structured reply can start.
#[cfg(not(feature = "llguidance"))]
enum Guided {}

#[cfg(not(feature = "llguidance"))]
fn closing(_: usize, _: usize) {}

#[cfg(not(feature = "llguidance"))]
impl Guided {
    fn masked(&mut self, _: &Tensor, _: ()) -> Result<Tensor, LlmError> {
        match *self {}
    }
    fn cut(&self) -> bool {
        match *self {}
    }
    fn consume(&mut self, _: u32) -> Result<(), LlmError> {
        match *self {}
    }
    fn is_stopped(&self) -> bool {
        match *self {}
    }
}

impl LocalGguf {
    /// Whether this build can constrain replies to a JSON schema (the `llguidance` feature).
    pub const STRUCTURED: bool = cfg!(feature = "llguidance");

    /// The token mask of a structured request.
    #[cfg(feature = "llguidance")]
    fn guided(&self, rs: &ResponseSchema) -> Result<Guided, LlmError> {
        let eos = self.stop_ids.first().copied().unwrap_or(0);
        let guide = self
            .guide
            .get_or_init(|| crate::guided::Guide::new(&self.tokenizer, eos));
        guide.as_ref().map_err(Clone::clone)?.matcher(rs)
    }

    #[cfg(not(feature = "llguidance"))]
    fn guided(&self, rs: &ResponseSchema) -> Result<Guided, LlmError> {
        Err(LlmError::Local(format!(
            "structured output (schema {:?}) on the local backend needs memskill built with \
             the `structured-local` feature (cargo build --features \
             memskill-trainer/structured-local); or set structured = \"off\"",
            rs.name
        )))
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
        let res = self.generate(req).map(|(text, timing, truncated)| {
            if let Ok(mut l) = self.last.lock() {
                *l = timing;
            }
            ChatResponse {
                // a reasoning model's <think> block is not part of the answer
                text: strip_reasoning(&text).into_owned(),
                usage: Usage {
                    prompt_tokens: timing.prompt_tokens as u64,
                    completion_tokens: timing.completion_tokens as u64,
                },
                latency_ms: t.elapsed().as_millis() as u64,
                cached: false,
                truncated,
            }
        });
        self.stats.attempt();
        self.stats.record(&res);
        res
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requantize_option_parses() {
        assert_eq!(parse_requantize(Some("off")).unwrap(), None);
        assert_eq!(parse_requantize(Some(" None ")).unwrap(), None);
        assert_eq!(
            parse_requantize(Some("Q8_0")).unwrap(),
            Some(GgmlDType::Q8_0)
        );
        assert_eq!(
            parse_requantize(Some("q4_0")).unwrap(),
            Some(GgmlDType::Q4_0)
        );
        let auto = cpu_has_quant_simd().then_some(GgmlDType::Q8_0);
        assert_eq!(parse_requantize(None).unwrap(), auto);
        assert_eq!(parse_requantize(Some("auto")).unwrap(), auto);
        let e = parse_requantize(Some("q4_1")).unwrap_err().to_string();
        assert!(e.contains("requantize") && e.contains("q4_1"), "{e}");
    }

    fn msgs() -> Vec<Message> {
        vec![
            Message::system("Be brief."),
            Message::user("  Where is Ann? "),
        ]
    }

    #[test]
    fn smollm2_gguf_template_renders_the_previous_chatml() {
        let p = default_smollm2_path();
        if !p.exists() {
            eprintln!(
                "skipped: {} missing; run scripts/fetch-assets.sh",
                p.display()
            );
            return;
        }
        let mut f = std::fs::File::open(&p).unwrap();
        let ct = gguf_file::Content::read(&mut f).unwrap();
        let t = chat_template_from_gguf(&ct, &p, None).unwrap();
        assert!(
            t.is_jinja(),
            "SmolLM2's GGUF carries tokenizer.chat_template"
        );
        assert_eq!(t.bos, "<|im_start|>");
        let sys = "You are a helpful AI assistant named SmolLM, trained by Hugging Face";
        for m in [msgs(), vec![Message::user("hi")], msgs()[1..].to_vec()] {
            assert_eq!(t.render(&m).unwrap(), chatml(&m, Some(sys)), "{m:?}");
        }
    }

    #[test]
    fn llama3_style_template() {
        let src = "{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}{{ content }}{% endfor %}{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}";
        let t = ChatTemplate::jinja(src, "<|begin_of_text|>", "<|eot_id|>").unwrap();
        assert_eq!(
            t.render(&msgs()).unwrap(),
            "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>\
             <|start_header_id|>user<|end_header_id|>\n\nWhere is Ann?<|eot_id|>\
             <|start_header_id|>assistant<|end_header_id|>\n\n"
        );
    }

    #[test]
    fn qwen_style_template_with_python_methods_and_raise_exception() {
        let src = "{%- if messages[0]['role'] == 'system' %}
    {{- '<|im_start|>system\n' + messages[0]['content'].strip() + '<|im_end|>\n' }}
{%- else %}
    {{- '<|im_start|>system\nYou are Qwen, a helpful assistant.<|im_end|>\n' }}
{%- endif %}
{%- for message in messages %}
    {%- if message.role not in ['system', 'user', 'assistant'] %}
        {{- raise_exception('unknown role ' + message.role) }}
    {%- endif %}
    {%- if (message.role == \"user\") or (message.role == \"system\" and not loop.first) or (message.role == \"assistant\" and not message.tool_calls) %}
        {{- '<|im_start|>' + message.role + '\n' + message.content.lstrip() + '<|im_end|>' + '\n' }}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\n' }}
{%- endif %}
";
        let t = ChatTemplate::jinja(src, "", "<|im_end|>").unwrap();
        assert_eq!(
            t.render(&msgs()).unwrap(),
            "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nWhere is Ann? <|im_end|>\n<|im_start|>assistant\n"
        );
        assert_eq!(
            t.render(&msgs()[1..]).unwrap(),
            "<|im_start|>system\nYou are Qwen, a helpful assistant.<|im_end|>\n<|im_start|>user\nWhere is Ann? <|im_end|>\n<|im_start|>assistant\n"
        );
        let e = ChatTemplate::jinja("{{ raise_exception('no system role') }}", "", "")
            .unwrap()
            .render(&msgs())
            .unwrap_err()
            .to_string();
        assert!(e.contains("no system role"), "{e}");
        assert_eq!(
            ChatTemplate::chatml(None).render(&msgs()).unwrap(),
            chatml(&msgs(), None)
        );
    }

    #[test]
    fn cut_middle_keeps_instructions_and_both_ends_of_the_span() {
        let span: String = (0..200).map(|i| format!("line {i}\n")).collect();
        let user = format!("Instructions first.\n\nText:\n{span}\n\nRules at the end.");
        let m = vec![Message::system("sys"), Message::user(user.clone())];
        let cut = cut_middle(&m, 500).unwrap();
        let u = &cut[1].content;
        assert_eq!(cut[0].content, "sys");
        assert!(
            u.starts_with("Instructions first.\n\nText:\nline 0\n"),
            "{u}"
        );
        assert!(u.ends_with("line 199\n\n\nRules at the end."), "{u}");
        assert!(u.contains(CUT_MARKER));
        assert!(user.chars().count() - u.chars().count() >= 500);
        // nothing long enough to cut
        assert!(cut_middle(&[Message::user("short")], 10).is_none());
        assert_eq!(
            "cut-middle".parse::<Overflow>().unwrap(),
            Overflow::CutMiddle
        );
        assert_eq!("refuse".parse::<Overflow>().unwrap(), Overflow::Refuse);
        assert!("left".parse::<Overflow>().is_err());
    }

    #[test]
    fn slow_dtypes_and_cache_path() {
        assert!(lacks_simd(GgmlDType::Q4_1) && lacks_simd(GgmlDType::Q5_0));
        assert!(!lacks_simd(GgmlDType::Q8_0) && !lacks_simd(GgmlDType::Q4K));
        assert!(!lacks_simd(GgmlDType::F32));
        assert_eq!(
            requantized_path(Path::new("/a/b/M.Q4_1.gguf"), GgmlDType::Q8_0),
            PathBuf::from("/a/b/M.Q4_1.q8_0.gguf")
        );
    }
}
