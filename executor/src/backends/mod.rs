//! LLM backends implementing [`memskill_core::Llm`] (HTTP, cache, scripted), plus the call
//! statistics every backend keeps (defined in `memskill_core::llm_stats`). The local GGUF
//! backend is `memskill_local::gguf` (re-exported at this crate's root).

pub mod cache;
pub mod dialect;
pub mod embeddings;
pub mod openai;
pub mod probe;

pub use memskill_core::llm_stats::{strip_reasoning, LlmStats, LlmStatsSnapshot, RetryCounts};
use memskill_core::{ChatRequest, ChatResponse, Llm, LlmError, Usage};

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
                truncated: false,
            }
        });
        self.stats.record(&r);
        r
    }
}
