//! The seams to the outside world that several crates share: the chat LLM and the text
//! encoder. Only the traits and their plain data types live here; implementations live
//! at the edge (executor: LLM backends; controller: encoders).

use serde::{Deserialize, Serialize};
use thiserror::Error;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: String,
}

impl Message {
    pub fn system(c: impl Into<String>) -> Self {
        Self {
            role: Role::System,
            content: c.into(),
        }
    }
    pub fn user(c: impl Into<String>) -> Self {
        Self {
            role: Role::User,
            content: c.into(),
        }
    }
    pub fn assistant(c: impl Into<String>) -> Self {
        Self {
            role: Role::Assistant,
            content: c.into(),
        }
    }
}

/// A chat completion request. `temperature == 0` means greedy decoding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    pub messages: Vec<Message>,
    pub temperature: f32,
    pub top_p: f32,
    pub max_tokens: u32,
    #[serde(default)]
    pub stop: Vec<String>,
    /// Sampling seed for backends that support it.
    #[serde(default)]
    pub seed: Option<u64>,
    /// Structured output: the reply must be one JSON value valid under this schema
    /// (`executor.structured = "json_schema"`). OpenAI-compatible backends send it as
    /// `response_format`; the local backend applies it as a token mask. `None` (the default)
    /// leaves the reply free, and the request serialises as before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_schema: Option<ResponseSchema>,
}

/// A named JSON schema for a structured reply (OpenAI's `response_format.json_schema`:
/// `name` is `^[A-Za-z0-9_-]{1,64}$`, `schema` a JSON Schema object).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResponseSchema {
    pub name: String,
    pub schema: serde_json::Value,
}

impl ChatRequest {
    pub fn new(messages: Vec<Message>) -> Self {
        Self {
            messages,
            temperature: 0.0,
            top_p: 1.0,
            max_tokens: 512,
            stop: Vec::new(),
            seed: None,
            response_schema: None,
        }
    }
    pub fn with_max_tokens(mut self, n: u32) -> Self {
        self.max_tokens = n;
        self
    }
    pub fn with_temperature(mut self, t: f32) -> Self {
        self.temperature = t;
        self
    }
    /// Ask for a reply that follows `schema` (None: a free reply).
    pub fn with_response_schema(mut self, schema: Option<ResponseSchema>) -> Self {
        self.response_schema = schema;
        self
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatResponse {
    pub text: String,
    pub usage: Usage,
    /// Wall time of the call in milliseconds (0 for cache hits).
    pub latency_ms: u64,
    /// Whether the response came from a cache.
    #[serde(default)]
    pub cached: bool,
    /// The reply was cut at `max_tokens` (OpenAI `finish_reason: "length"`): its end is
    /// missing, so callers must not use its last part as if it were complete.
    #[serde(default)]
    pub truncated: bool,
}

/// Why an LLM call failed. Never turned silently into a score of 0 by callers.
#[derive(Debug, Clone, Error, PartialEq)]
pub enum LlmError {
    #[error("LLM request timed out after {0} ms")]
    Timeout(u64),
    #[error("LLM endpoint {endpoint} answered HTTP {status}: {body}")]
    Http {
        endpoint: String,
        status: u16,
        body: String,
    },
    #[error("cannot reach LLM endpoint {endpoint}: {message}")]
    Connection { endpoint: String, message: String },
    #[error("malformed LLM response from {endpoint}: {message}")]
    BadResponse { endpoint: String, message: String },
    #[error("gave up after {attempts} attempts; last error: {last}")]
    RetriesExhausted { attempts: u32, last: Box<LlmError> },
    /// The server answered, but with nothing to use: `content: null`, no `choices`, or only a
    /// reasoning block (a reasoning model that spent `max_tokens` thinking). Not retried: the
    /// same request fails the same way.
    #[error("LLM endpoint {endpoint} returned no content ({reason})")]
    NoContent { endpoint: String, reason: String },
    #[error("replay-only cache has no response for request {key}")]
    CacheMiss { key: String },
    #[error("local model error: {0}")]
    Local(String),
    #[error("{0}")]
    Other(String),
}

/// A chat LLM. Blocking; implementations are shared across worker threads and bound
/// their own concurrency.
pub trait Llm: Send + Sync {
    /// Stable identity used in cache keys and logs, e.g. `openai:Qwen/Qwen3-8B` or `local:smollm2-135m-q4_1`.
    fn id(&self) -> String;
    fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, LlmError>;
    /// The seed the backend sends with a request that carries none (an OpenAI-compatible
    /// section's `seed`): part of what a response cache keys on.
    fn default_seed(&self) -> Option<u64> {
        None
    }
}

impl<T: Llm + ?Sized> Llm for std::sync::Arc<T> {
    fn id(&self) -> String {
        (**self).id()
    }
    fn default_seed(&self) -> Option<u64> {
        (**self).default_seed()
    }
    fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, LlmError> {
        (**self).chat(req)
    }
}

#[derive(Debug, Clone, Error, PartialEq)]
#[error("encoder error: {0}")]
pub struct EncoderError(pub String);

/// Text -> L2-normalised vectors. One instance serves states, skills and retrieval.
pub trait TextEncoder: Send + Sync {
    fn id(&self) -> String;
    fn dim(&self) -> usize;
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EncoderError>;
}

impl<T: TextEncoder + ?Sized> TextEncoder for std::sync::Arc<T> {
    fn id(&self) -> String {
        (**self).id()
    }
    fn dim(&self) -> usize {
        (**self).dim()
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EncoderError> {
        (**self).embed(texts)
    }
}
