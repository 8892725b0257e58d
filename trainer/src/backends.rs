//! Building the encoder and the LLM backends from the config, and counting LLM traffic.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use memskill_core::{ChatRequest, ChatResponse, Llm, LlmError, Sample, TextEncoder};
use serde::{Deserialize, Serialize};

use crate::config::{
    CacheMode, EmbeddingServer, EncoderConfig, EncoderKind, LlmBackend, LlmConfig, LocalSettings,
    OpenAiConfig, RetrieverKind,
};

/// Counters of one LLM role (calls, errors, tokens) plus the calls in flight.
#[derive(Default, Debug)]
pub struct LlmCounters {
    pub calls: AtomicU64,
    pub errors: AtomicU64,
    pub prompt_tokens: AtomicU64,
    pub completion_tokens: AtomicU64,
    pub in_flight: AtomicU64,
    /// Replies cut at `max_tokens` (`ChatResponse::truncated`).
    pub truncated: AtomicU64,
    /// Calls that failed with `LlmError::NoContent` (also in `errors`).
    pub no_content: AtomicU64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A snapshot of [`LlmCounters`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LlmTotals {
    pub calls: u64,
    pub errors: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Replies cut at `max_tokens`; written only when non-zero (metrics of runs without
    /// truncation keep their bytes).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub truncated: u64,
    /// Calls answered without content (`content: null`, no choices, only reasoning), counted
    /// in `errors` too; written only when non-zero.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub no_content: u64,
}

impl LlmTotals {
    pub fn minus(&self, o: &LlmTotals) -> LlmTotals {
        LlmTotals {
            calls: self.calls - o.calls,
            errors: self.errors - o.errors,
            prompt_tokens: self.prompt_tokens - o.prompt_tokens,
            completion_tokens: self.completion_tokens - o.completion_tokens,
            truncated: self.truncated - o.truncated,
            no_content: self.no_content - o.no_content,
        }
    }
}

impl LlmCounters {
    pub fn totals(&self) -> LlmTotals {
        LlmTotals {
            calls: self.calls.load(Ordering::Relaxed),
            errors: self.errors.load(Ordering::Relaxed),
            prompt_tokens: self.prompt_tokens.load(Ordering::Relaxed),
            completion_tokens: self.completion_tokens.load(Ordering::Relaxed),
            truncated: self.truncated.load(Ordering::Relaxed),
            no_content: self.no_content.load(Ordering::Relaxed),
        }
    }
}

/// Wraps a backend and counts its traffic into shared counters.
pub struct CountingLlm {
    inner: Arc<dyn Llm>,
    counters: Arc<LlmCounters>,
}

impl CountingLlm {
    pub fn new(inner: Arc<dyn Llm>, counters: Arc<LlmCounters>) -> Self {
        Self { inner, counters }
    }
}

impl Llm for CountingLlm {
    fn id(&self) -> String {
        self.inner.id()
    }
    fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, LlmError> {
        let c = &self.counters;
        c.in_flight.fetch_add(1, Ordering::Relaxed);
        let r = self.inner.chat(req);
        c.in_flight.fetch_sub(1, Ordering::Relaxed);
        c.calls.fetch_add(1, Ordering::Relaxed);
        match &r {
            Ok(resp) => {
                c.prompt_tokens
                    .fetch_add(resp.usage.prompt_tokens, Ordering::Relaxed);
                c.completion_tokens
                    .fetch_add(resp.usage.completion_tokens, Ordering::Relaxed);
                if resp.truncated {
                    c.truncated.fetch_add(1, Ordering::Relaxed);
                }
            }
            Err(e) => {
                c.errors.fetch_add(1, Ordering::Relaxed);
                if matches!(e, LlmError::NoContent { .. }) {
                    c.no_content.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        r
    }
}

/// Builds and shares backends: equal backend configs get one instance.
pub struct BackendFactory {
    run_dir: PathBuf,
    samples: Vec<Sample>,
    built: HashMap<String, Arc<dyn Llm>>,
    /// The OpenAI-compatible backends built, with the config section that asked first and
    /// its probe timeout (for retry counts and the start-up probe).
    http: Vec<HttpBackend>,
}

/// An OpenAI-compatible backend of the run.
#[derive(Clone)]
pub struct HttpBackend {
    pub backend: Arc<memskill_executor::OpenAiBackend>,
    pub field: String,
    pub probe_timeout_secs: u64,
}

impl BackendFactory {
    /// `samples` feed the scripted-synthetic oracle (ignored by real backends).
    pub fn new(run_dir: &Path, samples: Vec<Sample>) -> Self {
        Self {
            run_dir: run_dir.to_path_buf(),
            samples,
            built: HashMap::new(),
            http: Vec::new(),
        }
    }

    /// The OpenAI-compatible backends built so far.
    pub fn http_backends(&self) -> Vec<HttpBackend> {
        self.http.clone()
    }

    /// The backend for `cfg` (`field` names the config section in errors).
    pub fn get(&mut self, cfg: &LlmConfig, field: &str) -> Result<Arc<dyn Llm>> {
        let key = cfg.backend_key();
        if let Some(b) = self.built.get(&key) {
            return Ok(b.clone());
        }
        let base: Arc<dyn Llm> = match &cfg.backend {
            LlmBackend::ScriptedSynthetic(sc) => Arc::new(
                crate::synthetic::SyntheticOracle::new(
                    self.samples.clone(),
                    sc.scripted_latency_ms,
                )
                .with_capacity(sc.scripted_capacity),
            ),
            LlmBackend::Openai(o) => {
                let b = openai_backend(o, field)?;
                self.http.push(HttpBackend {
                    backend: b.clone(),
                    field: field.to_string(),
                    // a replay-only cache never reaches the server
                    probe_timeout_secs: if cfg.cache == CacheMode::ReplayOnly {
                        0
                    } else {
                        o.probe_timeout_secs
                    },
                });
                b
            }
            LlmBackend::Local(l) => local_backend(l, field)?,
        };
        let wrapped: Arc<dyn Llm> = match cfg.cache {
            CacheMode::Off => base,
            mode => {
                let path = cfg
                    .cache_path
                    .clone()
                    .unwrap_or_else(|| self.run_dir.join("llm-cache.sqlite"));
                Arc::new(
                    memskill_executor::CachedLlm::new(base, &path, mode)
                        .with_context(|| format!("{field}.cache: opening {}", path.display()))?,
                )
            }
        };
        self.built.insert(key, wrapped.clone());
        Ok(wrapped)
    }
}

/// An OpenAI-compatible backend (`field` names the config section in errors).
fn openai_backend(o: &OpenAiConfig, field: &str) -> Result<Arc<memskill_executor::OpenAiBackend>> {
    let base_urls = o
        .endpoint_urls()
        .map_err(|e| anyhow::anyhow!("{field}.{e}"))?;
    if base_urls.is_empty() {
        bail!("{field}.base_urls is empty");
    }
    let oc = OpenAiConfig {
        base_urls,
        base_url_env: None,
        ..o.clone()
    };
    Ok(Arc::new(
        memskill_executor::OpenAiBackend::new(oc)
            .with_context(|| format!("{field}: starting the OpenAI-compatible backend"))?,
    ))
}

/// An embeddings server as a text encoder, after the start-up probe (every endpoint asked
/// once whether it answers, unless `probe_timeout_secs` is 0) and one request that learns
/// the vectors' dimension; its backend joins `http` (retry counts). `field` names the
/// config section in errors.
pub fn embedding_server(
    e: &EmbeddingServer,
    field: &str,
    http: &mut Vec<HttpBackend>,
) -> Result<Arc<dyn TextEncoder>> {
    let backend = openai_backend(&e.http, field)?;
    let h = HttpBackend {
        backend: backend.clone(),
        field: field.to_string(),
        probe_timeout_secs: e.http.probe_timeout_secs,
    };
    probe_backends(std::slice::from_ref(&h))?;
    let enc = memskill_executor::OpenAiEmbedder::connect(backend, e.texts_per_request)
        .with_context(|| format!("{field}: asking the embeddings server for one vector"))?;
    http.push(h);
    Ok(Arc::new(enc))
}

/// Ask every endpoint of every backend whether it answers (see `OpenAiBackend::probe`). A
/// backend none of whose endpoints answers is an error naming each endpoint and its cause;
/// an endpoint that does not answer while another does is a warning (the backend routes
/// around it). Backends with `probe_timeout_secs = 0` are skipped.
pub fn probe_backends(http: &[HttpBackend]) -> Result<()> {
    let mut failures = Vec::new();
    for h in http {
        if h.probe_timeout_secs == 0 {
            continue;
        }
        let res = h
            .backend
            .probe(std::time::Duration::from_secs(h.probe_timeout_secs));
        let bad: Vec<&String> = res.iter().filter_map(|(_, r)| r.as_ref().err()).collect();
        if bad.is_empty() {
            continue;
        }
        if bad.len() == res.len() {
            failures.push(format!(
                "{}: {}",
                h.field,
                bad.iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join("; ")
            ));
        } else {
            for b in bad {
                eprintln!("warning: {}: {b} (the other endpoints answer)", h.field);
            }
        }
    }
    if !failures.is_empty() {
        bail!(
            "LLM / embeddings server check failed (set <section>.probe_timeout_secs = 0 to skip it): {}",
            failures.join(" | ")
        );
    }
    Ok(())
}

/// A local GGUF backend (default model: the SmolLM2 asset).
fn local_backend(l: &LocalSettings, field: &str) -> Result<Arc<dyn Llm>> {
    let lc = l.backend_config();
    Ok(Arc::new(load_local(&lc, &format!("{field}.model_path"))?))
}

/// The local GGUF model of `cfg` (`model_path` may be a Hub name, see [`crate::hub`]). A
/// missing file is an error naming `what` (the setting or option that gave the path), the
/// path and how to fetch the default model.
pub fn load_local(
    cfg: &memskill_executor::LocalConfig,
    what: &str,
) -> Result<memskill_executor::LocalGguf> {
    let path = local_model_file(cfg, what)?;
    let cfg = memskill_executor::LocalConfig {
        model_path: path.clone(),
        ..cfg.clone()
    };
    memskill_executor::LocalGguf::load(&cfg)
        .with_context(|| format!("{what}: loading local model {}", path.display()))
}

/// The GGUF file a local backend loads (a Hub name resolved), or an error naming `what` when
/// it is missing (`config check` asks the same without loading it).
pub fn local_model_file(cfg: &memskill_executor::LocalConfig, what: &str) -> Result<PathBuf> {
    let path = crate::hub::resolve_model(&cfg.model_path, crate::hub::ModelFile::Gguf, what)?;
    if !path.exists() {
        // `assets fetch` knows one GGUF, the default SmolLM2; any other is the user's file
        let how = if path == memskill_executor::default_smollm2_path() {
            "run `memskill assets fetch smollm2` or scripts/fetch-assets.sh smollm2"
        } else {
            "a local GGUF file, or `owner/name/file.gguf` from the Hugging Face cache (`hf download owner/name file.gguf` fetches it)"
        };
        bail!("{what} {} does not exist ({how})", path.display());
    }
    Ok(path)
}

/// The model folder the encoder loads (None for one that loads none: hashing, a server).
pub fn encoder_dir(cfg: &EncoderConfig) -> Option<Result<PathBuf>> {
    let default = match cfg.kind {
        EncoderKind::Minilm => memskill_controller::default_minilm_dir(),
        EncoderKind::Qwen3 => {
            memskill_controller::default_assets_dir().join("Qwen3-Embedding-0.6B")
        }
        EncoderKind::Hashing | EncoderKind::Openai => return None,
    };
    Some(model_dir(&cfg.path, || default, "encoder.path"))
}

/// The model folders of the question-side retriever, each with the key that sets it: none for
/// "encoder" and "openai", contriever's one (`memory.retriever_path`), the context and query
/// encoders of dpr and dragon (`memory.retriever_path`, `memory.retriever_query_path`).
pub fn retriever_dirs(cfg: &crate::config::MemoryConfig) -> Vec<(&'static str, Result<PathBuf>)> {
    let keys = [
        ("memory.retriever_path", &cfg.retriever_path),
        ("memory.retriever_query_path", &cfg.retriever_query_path),
    ];
    cfg.retriever
        .asset_folders()
        .iter()
        .zip(keys)
        .map(|(folder, (key, path))| {
            let default = || memskill_controller::default_assets_dir().join(folder);
            (key, model_dir(path, default, key))
        })
        .collect()
}

/// A model folder setting (`what`), resolved through the Hugging Face cache when it is a
/// Hub name; `default` when unset.
fn model_dir(
    path: &Option<PathBuf>,
    default: impl FnOnce() -> PathBuf,
    what: &str,
) -> Result<PathBuf> {
    let p = path.clone().unwrap_or_else(default);
    crate::hub::resolve_model(&p, crate::hub::ModelFile::Folder, what)
}

/// Build the (cached) text encoder; an embeddings server's backend joins `http`.
pub fn build_encoder(
    cfg: &EncoderConfig,
    http: &mut Vec<HttpBackend>,
) -> Result<Arc<dyn TextEncoder>> {
    let inner: Arc<dyn TextEncoder> = match cfg.kind {
        EncoderKind::Hashing => Arc::new(memskill_controller::HashingEncoder::new(cfg.dim)),
        EncoderKind::Openai => embedding_server(&cfg.openai, "encoder.openai", http)?,
        EncoderKind::Minilm => {
            let dir = encoder_dir(cfg).context("a MiniLM encoder has a folder")??;
            Arc::new(
                memskill_controller::BertEncoder::load(&dir)
                    .with_context(|| {
                        format!(
                            "encoder: loading MiniLM from {} (run scripts/fetch-assets.sh)",
                            dir.display()
                        )
                    })?
                    .with_long_text(cfg.long_text),
            )
        }
        EncoderKind::Qwen3 => {
            let dir = encoder_dir(cfg).context("a Qwen3 encoder has a folder")??;
            Arc::new(
                memskill_controller::Qwen3Encoder::load(&dir).with_context(|| {
                    format!(
                        "encoder: loading Qwen3-Embedding from {} (scripts/fetch-assets.sh qwen3 says how to get it)",
                        dir.display()
                    )
                })?,
            )
        }
    };
    Ok(Arc::new(memskill_controller::CachedEncoder::new(inner)))
}

/// The question-side memory retriever as built: the model that embeds memories (`context`)
/// and the one that embeds questions (`query`). One model serves both for contriever and an
/// embeddings server; DPR and DRAGON+ have a context and a query encoder.
#[derive(Clone)]
pub struct Retriever {
    pub context: Arc<dyn TextEncoder>,
    pub query: Arc<dyn TextEncoder>,
}

impl Retriever {
    /// One model for memories and questions.
    pub fn one(enc: Arc<dyn TextEncoder>) -> Self {
        Self {
            context: enc.clone(),
            query: enc,
        }
    }

    /// A context encoder for memories and a query encoder for questions.
    pub fn two(context: Arc<dyn TextEncoder>, query: Arc<dyn TextEncoder>) -> Self {
        Self { context, query }
    }
}

/// The question-side memory retriever of `memory.retriever`: None for "encoder" (the state
/// encoder serves); a cached embeddings server for "openai" (its backend joins `http`); else
/// the cached BERT encoders of its folders ([`retriever_dirs`]): facebook/contriever (mean
/// pooling, normalised) for both sides, or DPR's / DRAGON+'s context encoder for memories and
/// query encoder for questions (`[CLS]`; DPR's normalised).
pub fn build_retriever(
    cfg: &crate::config::MemoryConfig,
    http: &mut Vec<HttpBackend>,
) -> Result<Option<Retriever>> {
    let cached = |e: Arc<dyn TextEncoder>| -> Arc<dyn TextEncoder> {
        Arc::new(memskill_controller::CachedEncoder::new(e))
    };
    if cfg.retriever == RetrieverKind::Openai {
        let server = embedding_server(&cfg.retriever_openai, "memory.retriever_openai", http)?;
        return Ok(Some(Retriever::one(cached(server))));
    }
    let mut sides = Vec::new();
    for (key, dir) in retriever_dirs(cfg) {
        let enc = load_bert_retriever(cfg.retriever, key, &dir?)?;
        sides.push(cached(Arc::new(enc)));
    }
    Ok(match sides.as_slice() {
        [] => None,
        [one] => Some(Retriever::one(one.clone())),
        [context, query, ..] => Some(Retriever::two(context.clone(), query.clone())),
    })
}

/// One BERT encoder of retriever `kind` from `dir` (set by `key`; one of
/// [`retriever_dirs`]), pooled and normalised as the reference's `get_embeddings` does for
/// that retriever.
pub fn load_bert_retriever(
    kind: RetrieverKind,
    key: &str,
    dir: &Path,
) -> Result<memskill_controller::BertEncoder> {
    let (pooling, normalize) = kind.bert_output();
    let enc = memskill_controller::BertEncoder::load(dir).with_context(|| {
        format!(
            "memory.retriever: loading {} from {} ({key}; scripts/fetch-assets.sh {} says how to get it)",
            kind.name(),
            dir.display(),
            kind.name()
        )
    })?;
    Ok(enc.with_pooling(pooling).with_normalize(normalize))
}

/// Embed texts, failing with context.
pub fn embed(enc: &dyn TextEncoder, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
    if texts.is_empty() {
        return Ok(Vec::new());
    }
    let v = enc
        .embed(texts)
        .with_context(|| format!("encoding {} texts with {}", texts.len(), enc.id()))?;
    if v.len() != texts.len() {
        bail!(
            "encoder {} returned {} vectors for {} texts",
            enc.id(),
            v.len(),
            texts.len()
        );
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use memskill_core::{Message, Usage};

    /// `base_url_env`: an unset variable is an error naming it; a set one replaces base_urls.
    #[test]
    fn base_url_env_names_an_unset_variable() {
        let o = OpenAiConfig {
            base_url_env: Some("MEMSKILL_TEST_UNSET_BASE_URL".into()),
            ..Default::default()
        };
        let e = openai_backend(&o, "reward.judge")
            .err()
            .expect("unset variable");
        assert!(
            format!("{e:#}").contains("reward.judge.base_url_env")
                && format!("{e:#}").contains("MEMSKILL_TEST_UNSET_BASE_URL"),
            "{e:#}"
        );
        let none = OpenAiConfig {
            base_urls: Vec::new(),
            ..Default::default()
        };
        assert!(openai_backend(&none, "executor").is_err());
    }

    struct Fixed(Result<bool, ()>);
    impl Llm for Fixed {
        fn id(&self) -> String {
            "fixed".into()
        }
        fn chat(&self, _: &ChatRequest) -> Result<ChatResponse, LlmError> {
            match self.0 {
                Ok(truncated) => Ok(ChatResponse {
                    text: "x".into(),
                    usage: Usage::default(),
                    latency_ms: 0,
                    cached: false,
                    truncated,
                }),
                Err(()) => Err(LlmError::NoContent {
                    endpoint: "http://127.0.0.1:1/v1".into(),
                    reason: "`content` is null".into(),
                }),
            }
        }
    }

    #[test]
    fn truncation_and_missing_content_are_counted_and_shown_only_when_present() {
        let c = Arc::new(LlmCounters::default());
        let req = ChatRequest::new(vec![Message::user("q")]);
        for r in [Ok(false), Ok(true), Ok(true), Err(())] {
            let _ = CountingLlm::new(Arc::new(Fixed(r)), c.clone()).chat(&req);
        }
        let t = c.totals();
        assert_eq!((t.calls, t.errors, t.truncated, t.no_content), (4, 1, 2, 1));
        let line = serde_json::to_string(&t).unwrap();
        assert!(line.contains("\"truncated\":2,\"no_content\":1"), "{line}");
        // without them, the line keeps the bytes it always had
        let plain = serde_json::to_string(&LlmTotals {
            calls: 3,
            ..Default::default()
        })
        .unwrap();
        assert_eq!(
            plain,
            "{\"calls\":3,\"errors\":0,\"prompt_tokens\":0,\"completion_tokens\":0}"
        );
        let back: LlmTotals = serde_json::from_str(&plain).unwrap();
        assert_eq!(back.truncated, 0);
    }
}
