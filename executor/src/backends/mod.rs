//! LLM backends implementing [`memskill_core::Llm`], plus call statistics.

pub mod cache;
pub mod local;
pub mod openai;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use memskill_core::{ChatRequest, ChatResponse, Llm, LlmError, Usage};
use serde::Serialize;

/// Thread-safe call counters kept by every backend.
#[derive(Debug, Default)]
pub struct LlmStats {
    calls: AtomicU64,
    errors: AtomicU64,
    attempts: AtomicU64,
    retries: AtomicU64,
    prompt_tokens: AtomicU64,
    completion_tokens: AtomicU64,
}

/// A point-in-time copy of [`LlmStats`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct LlmStatsSnapshot {
    /// Top-level `chat` calls (successful or not).
    pub calls: u64,
    /// Top-level calls that ended in an error.
    pub errors: u64,
    /// Individual requests sent (HTTP backends: includes retries).
    pub attempts: u64,
    /// Requests that were retried after a transient failure.
    pub retries: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

impl LlmStats {
    pub fn record(&self, res: &Result<ChatResponse, LlmError>) {
        self.calls.fetch_add(1, Ordering::Relaxed);
        match res {
            Ok(r) => self.add_usage(&r.usage),
            Err(_) => {
                self.errors.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
    pub fn add_usage(&self, u: &Usage) {
        self.prompt_tokens
            .fetch_add(u.prompt_tokens, Ordering::Relaxed);
        self.completion_tokens
            .fetch_add(u.completion_tokens, Ordering::Relaxed);
    }
    pub fn attempt(&self) {
        self.attempts.fetch_add(1, Ordering::Relaxed);
    }
    pub fn retry(&self) {
        self.retries.fetch_add(1, Ordering::Relaxed);
    }
    pub fn snapshot(&self) -> LlmStatsSnapshot {
        LlmStatsSnapshot {
            calls: self.calls.load(Ordering::Relaxed),
            errors: self.errors.load(Ordering::Relaxed),
            attempts: self.attempts.load(Ordering::Relaxed),
            retries: self.retries.load(Ordering::Relaxed),
            prompt_tokens: self.prompt_tokens.load(Ordering::Relaxed),
            completion_tokens: self.completion_tokens.load(Ordering::Relaxed),
        }
    }
}

/// Wraps any [`Llm`] and counts its calls, errors and tokens.
pub struct CountingLlm {
    inner: Arc<dyn Llm>,
    stats: LlmStats,
}

impl CountingLlm {
    pub fn new(inner: Arc<dyn Llm>) -> Self {
        Self {
            inner,
            stats: LlmStats::default(),
        }
    }
    pub fn stats(&self) -> LlmStatsSnapshot {
        self.stats.snapshot()
    }
}

impl Llm for CountingLlm {
    fn id(&self) -> String {
        self.inner.id()
    }
    fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, LlmError> {
        self.stats.attempt();
        let r = self.inner.chat(req);
        self.stats.record(&r);
        r
    }
}

type ScriptFn = dyn Fn(&ChatRequest) -> Result<String, LlmError> + Send + Sync;

/// A scripted LLM **for tests only**: answers with whatever the closure returns. Token usage
/// is approximated by whitespace word counts. Never use it as a default backend.
pub struct ScriptedLlm {
    f: Box<ScriptFn>,
    stats: LlmStats,
}

impl ScriptedLlm {
    pub fn new(
        f: impl Fn(&ChatRequest) -> Result<String, LlmError> + Send + Sync + 'static,
    ) -> Self {
        Self {
            f: Box::new(f),
            stats: LlmStats::default(),
        }
    }
    pub fn stats(&self) -> LlmStatsSnapshot {
        self.stats.snapshot()
    }
}

impl Llm for ScriptedLlm {
    fn id(&self) -> String {
        "scripted-test-llm".into()
    }
    fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, LlmError> {
        self.stats.attempt();
        let r = (self.f)(req).map(|text| {
            let prompt_tokens = req
                .messages
                .iter()
                .map(|m| m.content.split_whitespace().count() as u64)
                .sum();
            let completion_tokens = text.split_whitespace().count() as u64;
            ChatResponse {
                text,
                usage: Usage {
                    prompt_tokens,
                    completion_tokens,
                },
                latency_ms: 0,
                cached: false,
            }
        });
        self.stats.record(&r);
        r
    }
}
