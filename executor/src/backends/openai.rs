//! OpenAI-compatible chat completions over HTTP (vLLM, SGLang, llama.cpp server, Ollama, ...).
//!
//! Blocking API over an owned tokio runtime: bounded concurrency (semaphore), several
//! endpoints (least-loaded, round-robin on ties), API keys from environment variables used
//! round-robin, per-request timeout, retries with exponential backoff and jitter on
//! timeouts, 429, 5xx, connection errors and malformed bodies.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use memskill_core::{ChatRequest, ChatResponse, Llm, LlmError, Usage};
use rand::Rng;
use serde::{Deserialize, Serialize};
use tokio::sync::Semaphore;

use super::{LlmStats, LlmStatsSnapshot};

/// Configuration of [`OpenAiBackend`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct OpenAiConfig {
    /// Base URLs such as `http://localhost:8000/v1` (`/chat/completions` is appended unless present).
    pub base_urls: Vec<String>,
    pub model: String,
    /// Names of environment variables holding API keys, used round-robin. Unset ones are skipped.
    pub api_key_envs: Vec<String>,
    pub max_concurrency: usize,
    /// Per-request timeout (whole request: connect, headers and body).
    pub timeout_secs: u64,
    /// Retries after the first attempt.
    pub max_retries: u32,
    /// First backoff delay; doubles on every retry (capped at 30 s), plus up to 50 % jitter.
    pub backoff_base_ms: u64,
}

impl Default for OpenAiConfig {
    fn default() -> Self {
        Self {
            base_urls: vec!["http://127.0.0.1:8000/v1".into()],
            model: "Qwen/Qwen3-8B".into(),
            api_key_envs: vec!["OPENAI_API_KEY".into()],
            max_concurrency: 16,
            timeout_secs: 120,
            max_retries: 5,
            backoff_base_ms: 500,
        }
    }
}

struct Endpoint {
    url: String,
    in_flight: AtomicUsize,
}

/// An OpenAI-compatible chat backend.
pub struct OpenAiBackend {
    cfg: OpenAiConfig,
    runtime: tokio::runtime::Runtime,
    client: reqwest::Client,
    sem: Arc<Semaphore>,
    endpoints: Vec<Endpoint>,
    keys: Vec<String>,
    key_rr: AtomicUsize,
    ep_rr: AtomicUsize,
    stats: LlmStats,
}

fn completions_url(base: &str) -> String {
    let b = base.trim().trim_end_matches('/');
    if b.ends_with("/chat/completions") {
        b.to_string()
    } else {
        format!("{b}/chat/completions")
    }
}

#[derive(Deserialize)]
struct WireResponse {
    choices: Vec<WireChoice>,
    #[serde(default)]
    usage: Option<WireUsage>,
}
#[derive(Deserialize)]
struct WireChoice {
    message: WireMessage,
}
#[derive(Deserialize)]
struct WireMessage {
    #[serde(default)]
    content: Option<String>,
}
#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
}

/// Whether a failed attempt is worth retrying.
fn retryable(e: &LlmError) -> bool {
    match e {
        LlmError::Timeout(_) | LlmError::Connection { .. } | LlmError::BadResponse { .. } => true,
        LlmError::Http { status, .. } => *status == 429 || *status == 408 || *status >= 500,
        _ => false,
    }
}

impl OpenAiBackend {
    /// Build the backend. Fails when no base URL is given, max_concurrency is 0, or API key
    /// variables are named but none is set.
    pub fn new(cfg: OpenAiConfig) -> Result<Self, LlmError> {
        if cfg.base_urls.is_empty() {
            return Err(LlmError::Other("openai backend: base_urls is empty".into()));
        }
        if cfg.max_concurrency == 0 {
            return Err(LlmError::Other(
                "openai backend: max_concurrency must be >= 1".into(),
            ));
        }
        let keys: Vec<String> = cfg
            .api_key_envs
            .iter()
            .filter_map(|v| std::env::var(v).ok())
            .filter(|k| !k.trim().is_empty())
            .collect();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .thread_name("memskill-openai")
            .build()
            .map_err(|e| {
                LlmError::Other(format!("openai backend: cannot start tokio runtime: {e}"))
            })?;
        let client = reqwest::Client::builder()
            .pool_max_idle_per_host(cfg.max_concurrency)
            .connect_timeout(Duration::from_secs(cfg.timeout_secs.clamp(1, 30)))
            .build()
            .map_err(|e| {
                LlmError::Other(format!("openai backend: cannot build HTTP client: {e}"))
            })?;
        let endpoints = cfg
            .base_urls
            .iter()
            .map(|u| Endpoint {
                url: completions_url(u),
                in_flight: AtomicUsize::new(0),
            })
            .collect();
        Ok(Self {
            sem: Arc::new(Semaphore::new(cfg.max_concurrency)),
            cfg,
            runtime,
            client,
            endpoints,
            keys,
            key_rr: AtomicUsize::new(0),
            ep_rr: AtomicUsize::new(0),
            stats: LlmStats::default(),
        })
    }

    pub fn config(&self) -> &OpenAiConfig {
        &self.cfg
    }

    pub fn stats(&self) -> LlmStatsSnapshot {
        self.stats.snapshot()
    }

    /// Least in-flight endpoint; ties broken round-robin.
    fn pick_endpoint(&self) -> usize {
        let n = self.endpoints.len();
        let start = self.ep_rr.fetch_add(1, Ordering::Relaxed) % n;
        (0..n)
            .map(|k| (start + k) % n)
            .min_by_key(|&i| self.endpoints[i].in_flight.load(Ordering::Relaxed))
            .unwrap_or(0)
    }

    fn pick_key(&self) -> Option<&str> {
        if self.keys.is_empty() {
            return None;
        }
        let i = self.key_rr.fetch_add(1, Ordering::Relaxed) % self.keys.len();
        Some(&self.keys[i])
    }

    fn body(&self, req: &ChatRequest) -> serde_json::Value {
        let mut b = serde_json::json!({
            "model": self.cfg.model,
            "messages": req.messages,
            "temperature": req.temperature,
            "top_p": req.top_p,
            "max_tokens": req.max_tokens,
        });
        if !req.stop.is_empty() {
            b["stop"] = serde_json::json!(req.stop);
        }
        if let Some(s) = req.seed {
            b["seed"] = serde_json::json!(s);
        }
        b
    }

    async fn attempt(&self, body: &serde_json::Value) -> Result<(String, Usage), LlmError> {
        let ep_i = self.pick_endpoint();
        let ep = &self.endpoints[ep_i];
        ep.in_flight.fetch_add(1, Ordering::Relaxed);
        let endpoint = ep.url.clone();
        let timeout_ms = self.cfg.timeout_secs.saturating_mul(1000);
        let fut = async {
            let mut rb = self.client.post(&endpoint).json(body);
            if let Some(k) = self.pick_key() {
                rb = rb.bearer_auth(k);
            }
            let resp = rb.send().await.map_err(|e| LlmError::Connection {
                endpoint: endpoint.clone(),
                message: e.to_string(),
            })?;
            let status = resp.status().as_u16();
            let bytes = resp.bytes().await.map_err(|e| LlmError::BadResponse {
                endpoint: endpoint.clone(),
                message: format!("reading body: {e}"),
            })?;
            if !(200..300).contains(&status) {
                let text = String::from_utf8_lossy(&bytes);
                let body: String = text.chars().take(300).collect();
                return Err(LlmError::Http {
                    endpoint: endpoint.clone(),
                    status,
                    body,
                });
            }
            let wire: WireResponse =
                serde_json::from_slice(&bytes).map_err(|e| LlmError::BadResponse {
                    endpoint: endpoint.clone(),
                    message: format!("invalid JSON ({} bytes): {e}", bytes.len()),
                })?;
            let choice = wire
                .choices
                .into_iter()
                .next()
                .ok_or_else(|| LlmError::BadResponse {
                    endpoint: endpoint.clone(),
                    message: "no choices".into(),
                })?;
            let text = choice
                .message
                .content
                .ok_or_else(|| LlmError::BadResponse {
                    endpoint: endpoint.clone(),
                    message: "choice has no message content".into(),
                })?;
            let usage = wire
                .usage
                .map(|u| Usage {
                    prompt_tokens: u.prompt_tokens,
                    completion_tokens: u.completion_tokens,
                })
                .unwrap_or_default();
            Ok((text, usage))
        };
        let res = match tokio::time::timeout(Duration::from_millis(timeout_ms), fut).await {
            Ok(r) => r,
            Err(_) => Err(LlmError::Timeout(timeout_ms)),
        };
        ep.in_flight.fetch_sub(1, Ordering::Relaxed);
        res
    }

    async fn chat_async(&self, req: &ChatRequest) -> Result<ChatResponse, LlmError> {
        let _permit = self
            .sem
            .acquire()
            .await
            .map_err(|e| LlmError::Other(format!("semaphore closed: {e}")))?;
        let body = self.body(req);
        let started = Instant::now();
        let attempts = self.cfg.max_retries.saturating_add(1);
        let mut last: Option<LlmError> = None;
        for attempt in 0..attempts {
            if attempt > 0 {
                self.stats.retry();
                let base = self
                    .cfg
                    .backoff_base_ms
                    .saturating_mul(1u64 << (attempt - 1).min(20))
                    .min(30_000);
                let jitter = if base > 0 {
                    rand::rng().random_range(0..=base / 2)
                } else {
                    0
                };
                tokio::time::sleep(Duration::from_millis(base + jitter)).await;
            }
            self.stats.attempt();
            match self.attempt(&body).await {
                Ok((text, usage)) => {
                    return Ok(ChatResponse {
                        text,
                        usage,
                        latency_ms: started.elapsed().as_millis() as u64,
                        cached: false,
                    })
                }
                Err(e) if retryable(&e) => last = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(LlmError::RetriesExhausted {
            attempts,
            last: Box::new(last.unwrap_or_else(|| LlmError::Other("no attempt made".into()))),
        })
    }
}

impl Llm for OpenAiBackend {
    fn id(&self) -> String {
        format!("openai:{}", self.cfg.model)
    }

    fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, LlmError> {
        let res = if tokio::runtime::Handle::try_current().is_ok() {
            // Called from inside an async context: block on our runtime from a helper thread.
            std::thread::scope(|s| {
                s.spawn(|| self.runtime.block_on(self.chat_async(req)))
                    .join()
                    .unwrap_or_else(|_| {
                        Err(LlmError::Other("openai worker thread panicked".into()))
                    })
            })
        } else {
            self.runtime.block_on(self.chat_async(req))
        };
        self.stats.record(&res);
        res
    }
}
