//! Call counters every LLM backend keeps ([`LlmStats`]), their snapshot, retries by cause,
//! and [`strip_reasoning`], which every backend applies to a reply before parsers see it.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::{ChatResponse, LlmError, Usage};
use serde::{Deserialize, Serialize};

/// Retried attempts by the cause of the failure that was retried.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RetryCounts {
    /// The request ran past `timeout_secs`.
    pub timeout: u64,
    /// The endpoint could not be reached (refused, reset, DNS, TLS).
    pub connection: u64,
    /// HTTP 429 (rate limited).
    pub http_429: u64,
    /// HTTP 5xx or 408.
    pub http_5xx: u64,
    /// A 2xx answer whose body could not be read as a chat completion.
    pub bad_response: u64,
    /// Anything else that was retried.
    pub other: u64,
}

impl RetryCounts {
    pub fn total(&self) -> u64 {
        self.timeout
            + self.connection
            + self.http_429
            + self.http_5xx
            + self.bad_response
            + self.other
    }
    pub fn is_empty(&self) -> bool {
        self.total() == 0
    }
    /// Counts since `earlier` (saturating).
    pub fn minus(&self, earlier: &RetryCounts) -> RetryCounts {
        RetryCounts {
            timeout: self.timeout.saturating_sub(earlier.timeout),
            connection: self.connection.saturating_sub(earlier.connection),
            http_429: self.http_429.saturating_sub(earlier.http_429),
            http_5xx: self.http_5xx.saturating_sub(earlier.http_5xx),
            bad_response: self.bad_response.saturating_sub(earlier.bad_response),
            other: self.other.saturating_sub(earlier.other),
        }
    }
    pub fn plus(&self, o: &RetryCounts) -> RetryCounts {
        RetryCounts {
            timeout: self.timeout + o.timeout,
            connection: self.connection + o.connection,
            http_429: self.http_429 + o.http_429,
            http_5xx: self.http_5xx + o.http_5xx,
            bad_response: self.bad_response + o.bad_response,
            other: self.other + o.other,
        }
    }
    /// The cause label of a retried error.
    pub fn cause(e: &LlmError) -> &'static str {
        match e {
            LlmError::Timeout(_) => "timeout",
            LlmError::Connection { .. } => "connection",
            LlmError::Http { status: 429, .. } => "http_429",
            LlmError::Http { status, .. } if *status >= 500 || *status == 408 => "http_5xx",
            LlmError::BadResponse { .. } => "bad_response",
            _ => "other",
        }
    }
}

/// Thread-safe call counters kept by every backend.
#[derive(Debug, Default)]
pub struct LlmStats {
    calls: AtomicU64,
    errors: AtomicU64,
    attempts: AtomicU64,
    retries: AtomicU64,
    prompt_tokens: AtomicU64,
    completion_tokens: AtomicU64,
    truncated: AtomicU64,
    no_content: AtomicU64,
    retry_after_ms: AtomicU64,
    cooldowns: AtomicU64,
    /// Retries by cause, in the order of [`RetryCounts`]' fields.
    retry_causes: [AtomicU64; 6],
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
    /// Successful calls whose reply was cut at `max_tokens` (`finish_reason: "length"`).
    pub truncated: u64,
    /// Calls that failed with [`LlmError::NoContent`] (counted in `errors` too).
    pub no_content: u64,
    /// Sum of the `Retry-After` waits servers asked for (capped), in milliseconds.
    pub retry_after_ms: u64,
    /// Times an endpoint was taken out of rotation after consecutive failures.
    pub cooldowns: u64,
    /// `retries` by the cause of the failure that was retried.
    pub retry_causes: RetryCounts,
}

impl LlmStats {
    pub fn record(&self, res: &Result<ChatResponse, LlmError>) {
        self.calls.fetch_add(1, Ordering::Relaxed);
        match res {
            Ok(r) => {
                self.add_usage(&r.usage);
                if r.truncated {
                    self.truncated.fetch_add(1, Ordering::Relaxed);
                }
            }
            Err(e) => {
                self.errors.fetch_add(1, Ordering::Relaxed);
                if matches!(e, LlmError::NoContent { .. }) {
                    self.no_content.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    }
    pub fn retry_after(&self, d: std::time::Duration) {
        self.retry_after_ms
            .fetch_add(d.as_millis() as u64, Ordering::Relaxed);
    }
    pub fn cooldown(&self) {
        self.cooldowns.fetch_add(1, Ordering::Relaxed);
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
    /// A retry of a request that failed with `cause`.
    pub fn retry(&self, cause: &LlmError) {
        self.retries.fetch_add(1, Ordering::Relaxed);
        let i = match RetryCounts::cause(cause) {
            "timeout" => 0,
            "connection" => 1,
            "http_429" => 2,
            "http_5xx" => 3,
            "bad_response" => 4,
            _ => 5,
        };
        self.retry_causes[i].fetch_add(1, Ordering::Relaxed);
    }
    pub fn snapshot(&self) -> LlmStatsSnapshot {
        LlmStatsSnapshot {
            calls: self.calls.load(Ordering::Relaxed),
            errors: self.errors.load(Ordering::Relaxed),
            attempts: self.attempts.load(Ordering::Relaxed),
            retries: self.retries.load(Ordering::Relaxed),
            prompt_tokens: self.prompt_tokens.load(Ordering::Relaxed),
            completion_tokens: self.completion_tokens.load(Ordering::Relaxed),
            truncated: self.truncated.load(Ordering::Relaxed),
            no_content: self.no_content.load(Ordering::Relaxed),
            retry_after_ms: self.retry_after_ms.load(Ordering::Relaxed),
            cooldowns: self.cooldowns.load(Ordering::Relaxed),
            retry_causes: {
                let c = |i: usize| self.retry_causes[i].load(Ordering::Relaxed);
                RetryCounts {
                    timeout: c(0),
                    connection: c(1),
                    http_429: c(2),
                    http_5xx: c(3),
                    bad_response: c(4),
                    other: c(5),
                }
            },
        }
    }
}

/// The text of a reply with the reasoning of a reasoning model removed, so that parsers see
/// only the answer: every `<think>...</think>` block, an unclosed `<think>` block (the
/// reply was cut while thinking) up to the end, and, when a `</think>` comes before any
/// `<think>` (chat templates that open the block in the prompt), everything up to it. Tags
/// match case-insensitively. A text without tags is returned unchanged; otherwise the rest is
/// trimmed. (`reasoning_content`, the separate field some servers use, is never read.)
pub fn strip_reasoning(text: &str) -> std::borrow::Cow<'_, str> {
    const OPEN: &str = "<think>";
    const CLOSE: &str = "</think>";
    // ASCII lower-casing keeps byte offsets
    let lower = text.to_ascii_lowercase();
    if !lower.contains(OPEN) && !lower.contains(CLOSE) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut pos = 0;
    if let Some(c) = lower.find(CLOSE) {
        if lower.find(OPEN).is_none_or(|o| o > c) {
            pos = c + CLOSE.len();
        }
    }
    let mut out = String::with_capacity(text.len() - pos);
    while let Some(o) = lower[pos..].find(OPEN).map(|o| o + pos) {
        out.push_str(&text[pos..o]);
        match lower[o + OPEN.len()..].find(CLOSE) {
            Some(c) => pos = o + OPEN.len() + c + CLOSE.len(),
            None => {
                pos = text.len();
                break;
            }
        }
    }
    out.push_str(&text[pos..]);
    std::borrow::Cow::Owned(out.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasoning_blocks_are_stripped() {
        let s = |t: &str| strip_reasoning(t).into_owned();
        assert_eq!(s("Paris"), "Paris");
        assert_eq!(s("  Paris \n"), "  Paris \n", "no tags: unchanged");
        assert_eq!(s("<think>\nthe capital...\n</think>\n\nParis"), "Paris");
        assert_eq!(s("<THINK>a</Think>Paris"), "Paris");
        assert_eq!(
            s("<think>a</think>ACTION: NOOP<think>b</think>\nmore"),
            "ACTION: NOOP\nmore"
        );
        // cut while thinking: nothing left
        assert_eq!(s("<think>\nI should insert ACTION: INSERT"), "");
        assert_eq!(s("ACTION: NOOP\n<think>then"), "ACTION: NOOP");
        // the template opened the block in the prompt
        assert_eq!(s("reasoning here\n</think>\nACTION: NOOP"), "ACTION: NOOP");
        assert_eq!(s("</think>"), "");
        // multi-byte text around the tags
        assert_eq!(s("<think>é</think>ü ACTION"), "ü ACTION");
    }
}
