//! OpenAI-compatible chat completions over HTTP (vLLM, SGLang, llama.cpp server, Ollama, ...).
//!
//! Blocking API over an owned tokio runtime: bounded concurrency (semaphore), several
//! endpoints (least-loaded, round-robin on ties), API keys from environment variables used
//! round-robin, per-request timeout, retries with exponential backoff and jitter on
//! timeouts, 408, 429, 5xx, connection errors and malformed bodies.
//!
//! Endpoint health: an endpoint whose last `unhealthy_after` attempts all failed (the
//! retryable failures above) is taken out of rotation for `cooldown_ms` while another
//! endpoint answers; when the cool-down ends, one request probes it, and a success brings
//! it back (a failure starts a new cool-down). When every endpoint is out, requests still go
//! to the one whose cool-down ends first, on the backoff schedule: the cool-down moves
//! traffic, it never idles a run. `Retry-After` on 429 / 503 (seconds or an HTTP-date,
//! capped at `max_retry_after_secs`) keeps requests off that endpoint until then; with no
//! other endpoint available the request waits for it.
//!
//! Replies: `<think>` blocks are removed ([`super::strip_reasoning`]; `reasoning_content` is
//! never read); `finish_reason: "length"` sets [`ChatResponse::truncated`]; `content: null`,
//! empty `choices` or a reply that is only reasoning is [`LlmError::NoContent`], not retried
//! (the same request fails the same way).
//!
//! Structured outputs: a request's JSON schema goes out in the endpoint's dialect
//! ([`super::dialect`]); with `structured_dialect = "auto"` an answer that rejects the format
//! moves the request to the next dialect without spending a retry or counting against the
//! endpoint's health, and the dialect that worked is remembered per endpoint.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use memskill_core::{ChatRequest, ChatResponse, Llm, LlmError, Usage};
use rand::Rng;
use serde::{Deserialize, Serialize};
use tokio::sync::Semaphore;

use super::dialect::{rejects_format, AfterRejection, StructuredDialect, Trial};
use super::{strip_reasoning, LlmStats, LlmStatsSnapshot, RetryCounts};

/// Configuration of [`OpenAiBackend`], and the keys of an OpenAI-compatible section of the
/// run config (`backend = "openai"`, the embeddings servers): the trainer deserialises its
/// TOML into this struct, so field order, names and defaults are the config's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct OpenAiConfig {
    /// Model name sent to the server.
    pub model: String,
    /// Base URLs such as `http://localhost:8000/v1` (`/chat/completions` is appended unless present).
    pub base_urls: Vec<String>,
    /// An environment variable holding the base URL: when it is set, its value replaces
    /// `base_urls` (see [`OpenAiConfig::endpoint_urls`]); when it is not, the backend is not
    /// built (the trainer's `[reward.judge]` then falls back to the executor).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_url_env: Option<String>,
    /// Names of environment variables holding API keys, used round-robin. Unset ones are skipped.
    pub api_key_envs: Vec<String>,
    pub max_concurrency: usize,
    /// Per-request timeout (whole request: connect, headers and body).
    pub timeout_secs: u64,
    /// Retries after the first attempt.
    pub max_retries: u32,
    /// First backoff delay; doubles on every retry (capped at 30 s), plus up to 50 % jitter.
    pub backoff_base_ms: u64,
    /// Consecutive failed attempts (timeouts, connection errors, 408 / 429 / 5xx, unreadable
    /// bodies) after which an endpoint is taken out of rotation while another one answers; >= 1.
    pub unhealthy_after: u32,
    /// How long (ms) an endpoint out of rotation gets no traffic while another one answers;
    /// afterwards one request probes it. At most 86400000.
    pub cooldown_ms: u64,
    /// Upper bound on a server's `Retry-After` (429 / 503), in seconds; 0 ignores the header;
    /// at most 86400.
    pub max_retry_after_secs: u64,
    /// The caller's start-up check ([`OpenAiBackend::probe`]): every endpoint is asked once
    /// whether it answers at all, waiting at most this many seconds, so a backend none of
    /// whose endpoints answers stops a run in seconds. 0 skips the probe; at most 600. The
    /// backend itself never probes.
    pub probe_timeout_secs: u64,
    /// How a structured request's schema is sent (see [`super::dialect`]): "auto"
    /// (`json_schema` first, the next dialect when the server rejects the format, the one
    /// that worked remembered per endpoint) | "json_schema" (OpenAI, vLLM, SGLang,
    /// llama-server, Ollama) | "json_object_schema" (llama-cpp-python's server) |
    /// "guided_json" (vLLM) | "ollama_format" (a top-level `format`, Ollama's native field).
    pub structured_dialect: StructuredDialect,
    /// Sampling seed sent with every request that carries none of its own (the reference
    /// sends `seed: 42` with every chat request: llm_utils.py `SEED`); absent = no `seed`
    /// field. Servers honour it when they sample (temperature > 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// The largest reply body read (bytes): a longer one is an error naming the endpoint,
    /// found while reading, not retried (a 50 MB reply was once kept as one memory). The
    /// default, 16 MiB, is far above any `max_tokens` worth of text or a batch of embeddings.
    pub max_reply_bytes: u64,
}

impl Default for OpenAiConfig {
    fn default() -> Self {
        Self {
            model: "Qwen/Qwen3-Next-80B-A3B-Instruct".into(),
            base_urls: vec!["http://127.0.0.1:8000/v1".into()],
            base_url_env: None,
            api_key_envs: vec!["OPENAI_API_KEY".into()],
            max_concurrency: 32,
            timeout_secs: 120,
            max_retries: 5,
            backoff_base_ms: 500,
            unhealthy_after: 3,
            cooldown_ms: 30_000,
            max_retry_after_secs: 60,
            probe_timeout_secs: 5,
            structured_dialect: StructuredDialect::Auto,
            seed: None,
            max_reply_bytes: 16 << 20,
        }
    }
}

impl OpenAiConfig {
    /// The base URLs requests go to: `base_url_env`'s value when that variable is set (and
    /// not blank), else `base_urls`. The error names the key and the variable.
    pub fn endpoint_urls(&self) -> Result<Vec<String>, String> {
        match self.base_url_env.as_deref() {
            Some(var) => match std::env::var(var) {
                Ok(v) if !v.trim().is_empty() => Ok(vec![v.trim().to_string()]),
                _ => Err(format!(
                    "base_url_env: the environment variable {var} (the server's base URL) is not set"
                )),
            },
            None => Ok(self.base_urls.clone()),
        }
    }
}

/// Health of one endpoint (see the module docs).
#[derive(Debug, Clone, Default)]
struct Health {
    in_flight: usize,
    /// Consecutive failed attempts.
    failures: u32,
    /// Out of rotation (after `unhealthy_after` consecutive failures) until a probe succeeds.
    down: bool,
    /// End of the current cool-down.
    cool_until: Option<Instant>,
    /// No request before this instant (the server's `Retry-After`).
    retry_after_until: Option<Instant>,
    /// A probe request is in flight.
    probing: bool,
}

impl Health {
    fn free(&self, now: Instant) -> bool {
        self.retry_after_until.is_none_or(|t| t <= now)
    }

    /// An attempt succeeded (or failed in a way that is not the endpoint's fault). True when
    /// the endpoint comes back into rotation.
    fn on_success(&mut self) -> bool {
        let was_down = self.down;
        self.failures = 0;
        self.down = false;
        self.cool_until = None;
        was_down
    }

    /// An attempt failed (retryable); `retry_after` is the server's capped `Retry-After`.
    /// True when the endpoint just went out of rotation.
    fn on_failure(
        &mut self,
        now: Instant,
        retry_after: Option<Duration>,
        unhealthy_after: u32,
        cooldown: Duration,
    ) -> bool {
        self.failures = self.failures.saturating_add(1);
        if let Some(ra) = retry_after {
            let t = later(now, ra);
            self.retry_after_until = Some(self.retry_after_until.map_or(t, |u| u.max(t)));
        }
        if self.failures >= unhealthy_after {
            let went_down = !self.down;
            self.down = true;
            self.cool_until = Some(later(now, cooldown));
            went_down
        } else {
            false
        }
    }
}

fn later(now: Instant, d: Duration) -> Instant {
    now.checked_add(d).unwrap_or(now)
}

/// Where the next attempt goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pick {
    /// Send to this endpoint; `probe`: it is out of rotation and this request tests it.
    Send { index: usize, probe: bool },
    /// Every endpoint asked for a pause (`Retry-After`): wait until then.
    WaitUntil(Instant),
}

/// Choose the endpoint of the next attempt at `now`; `start` rotates ties. In order: a due
/// probe (an endpoint out of rotation whose cool-down ended and that nobody probes), the least
/// loaded endpoint in rotation, the endpoint out of rotation whose cool-down ends first; an
/// endpoint paused by `Retry-After` is never chosen before its time.
fn pick(eps: &[Health], now: Instant, start: usize) -> Pick {
    let n = eps.len();
    let order = || (0..n).map(move |k| (start + k) % n);
    if let Some(index) = order().find(|&i| {
        let h = &eps[i];
        h.down && !h.probing && h.free(now) && h.cool_until.is_none_or(|t| t <= now)
    }) {
        return Pick::Send { index, probe: true };
    }
    if let Some(index) = order()
        .filter(|&i| !eps[i].down && eps[i].free(now))
        .min_by_key(|&i| eps[i].in_flight)
    {
        return Pick::Send {
            index,
            probe: false,
        };
    }
    if let Some(index) = order()
        .filter(|&i| eps[i].free(now))
        .min_by_key(|&i| eps[i].cool_until)
    {
        return Pick::Send {
            index,
            probe: false,
        };
    }
    Pick::WaitUntil(
        eps.iter()
            .filter_map(|h| h.retry_after_until)
            .min()
            .unwrap_or(now),
    )
}

/// The wait a 429 or 503 answer asks for: its `Retry-After` header (delay-seconds or an
/// HTTP-date, read against `now`), capped at `cap`. None for other statuses, a missing or
/// unreadable header, or a zero `cap`.
pub fn retry_wait(
    status: u16,
    retry_after: Option<&str>,
    now: SystemTime,
    cap: Duration,
) -> Option<Duration> {
    if !(status == 429 || status == 503) || cap.is_zero() {
        return None;
    }
    parse_retry_after(retry_after?, now).map(|d| d.min(cap))
}

/// A `Retry-After` value: delay-seconds (a fractional value is accepted) or an HTTP-date
/// (a date in the past is a zero wait). None when unreadable or negative.
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let v = value.trim();
    if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) {
        return Some(Duration::from_secs(v.parse::<u64>().unwrap_or(u64::MAX)));
    }
    if let Ok(x) = v.parse::<f64>() {
        return (x.is_finite() && x >= 0.0).then(|| Duration::from_secs_f64(x.min(1e12)));
    }
    let t = parse_http_date(v)?;
    Some(t.duration_since(now).unwrap_or(Duration::ZERO))
}

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// An HTTP-date (RFC 9110 section 5.6.7): IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the
/// obsolete RFC 850 form (`Sunday, 06-Nov-94 08:49:37 GMT`) or asctime
/// (`Sun Nov  6 08:49:37 1994`). Years outside 1970..=9999 are refused.
pub fn parse_http_date(s: &str) -> Option<SystemTime> {
    let cleaned = s.replace(',', " ");
    let t: Vec<&str> = cleaned.split_whitespace().collect();
    let month = |m: &str| {
        MONTHS
            .iter()
            .position(|x| x.eq_ignore_ascii_case(m))
            .map(|i| i as u32 + 1)
    };
    let gmt = |z: &str| z.eq_ignore_ascii_case("GMT") || z.eq_ignore_ascii_case("UTC");
    let (year, mon, day, time) = match t.as_slice() {
        [_, d, m, y, time, z] if gmt(z) => (y.parse::<i64>().ok()?, month(m)?, *d, *time),
        [_, dmy, time, z] if gmt(z) => {
            let p: Vec<&str> = dmy.split('-').collect();
            let [d, m, y] = p.as_slice() else {
                return None;
            };
            let yy: i64 = y.parse().ok()?;
            let year = match y.len() {
                2 if yy < 70 => 2000 + yy,
                2 => 1900 + yy,
                _ => yy,
            };
            (year, month(m)?, *d, *time)
        }
        [_, m, d, time, y] => (y.parse::<i64>().ok()?, month(m)?, *d, *time),
        _ => return None,
    };
    if !t[0].chars().all(|c| c.is_ascii_alphabetic()) || !(1970..=9999).contains(&year) {
        return None;
    }
    let day: u32 = day.parse().ok()?;
    let hms: Vec<u64> = time
        .split(':')
        .map(|x| x.parse().ok())
        .collect::<Option<_>>()?;
    let [h, mi, sec] = hms.as_slice() else {
        return None;
    };
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let month_days = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    if day == 0 || day > month_days[mon as usize - 1] || *h > 23 || *mi > 59 || *sec > 60 {
        return None;
    }
    let days = memskill_core::contract::day_number((i32::try_from(year).ok()?, mon, day));
    let secs = days as u64 * 86_400 + h * 3600 + mi * 60 + sec;
    SystemTime::UNIX_EPOCH.checked_add(Duration::from_secs(secs))
}

/// A point-in-time view of one endpoint's health.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EndpointHealth {
    pub url: String,
    /// False while the endpoint is out of rotation (cooling down or waiting for its probe).
    pub in_rotation: bool,
    pub consecutive_failures: u32,
}

/// An OpenAI-compatible chat backend.
pub struct OpenAiBackend {
    cfg: OpenAiConfig,
    /// The owned runtime; taken (and shut down in the background) on drop.
    runtime: Option<tokio::runtime::Runtime>,
    client: reqwest::Client,
    sem: Arc<Semaphore>,
    urls: Vec<String>,
    health: Mutex<Vec<Health>>,
    keys: Vec<String>,
    key_rr: AtomicUsize,
    ep_rr: AtomicUsize,
    stats: LlmStats,
    notice: Mutex<RetryNotice>,
    /// The structured-output dialect each endpoint took (`base_urls` order).
    dialects: Mutex<Vec<Option<StructuredDialect>>>,
}

/// How often the retry progress line may be printed.
const RETRY_NOTICE_EVERY: Duration = Duration::from_secs(10);

/// Retries not yet reported and when the last notice was printed.
#[derive(Default)]
struct RetryNotice {
    pending: u64,
    last: Option<Instant>,
}

/// The `/models` route next to the chat completions route of `base`.
fn models_url(base: &str) -> String {
    let b = base.trim().trim_end_matches('/');
    let b = b.strip_suffix("/chat/completions").unwrap_or(b);
    format!("{b}/models")
}

/// An error and its sources, joined ("error sending request ...: Connection refused").
pub(crate) fn error_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut cur = e.source();
    while let Some(s) = cur {
        let t = s.to_string();
        if !out.contains(&t) {
            out.push_str(": ");
            out.push_str(&t);
        }
        cur = s.source();
    }
    out
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
    #[serde(default)]
    choices: Option<Vec<WireChoice>>,
    #[serde(default)]
    usage: Option<WireUsage>,
}
#[derive(Deserialize)]
struct WireChoice {
    #[serde(default)]
    message: Option<WireMessage>,
    #[serde(default)]
    finish_reason: Option<String>,
}
/// Only `content` is read: `reasoning_content` (and `reasoning`) are ignored.
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

/// A usable reply of one attempt.
#[derive(Debug, Clone, PartialEq)]
struct Reply {
    text: String,
    usage: Usage,
    truncated: bool,
}

/// Read a 2xx body: the first choice's content with reasoning removed, and whether it was
/// cut at `max_tokens`. Unparsable JSON or a body without `choices` is `BadResponse`
/// (retried); empty `choices`, `content: null`, and a reply that is empty once reasoning is
/// removed (or empty and cut at `max_tokens`) are `NoContent` (not retried).
fn read_reply(endpoint: &str, bytes: &[u8]) -> Result<Reply, LlmError> {
    let wire: WireResponse = serde_json::from_slice(bytes).map_err(|e| LlmError::BadResponse {
        endpoint: endpoint.to_string(),
        message: format!("invalid JSON ({} bytes): {e}", bytes.len()),
    })?;
    let no_content = |reason: String| LlmError::NoContent {
        endpoint: endpoint.to_string(),
        reason,
    };
    let choices = wire.choices.ok_or_else(|| LlmError::BadResponse {
        endpoint: endpoint.to_string(),
        message: "the body has no `choices`".into(),
    })?;
    let Some(choice) = choices.into_iter().next() else {
        return Err(no_content("empty `choices`".into()));
    };
    let finish = choice.finish_reason.unwrap_or_default();
    let truncated = matches!(finish.as_str(), "length" | "max_tokens");
    let budget = if truncated {
        ": the reply budget (max_tokens) ran out, e.g. while reasoning"
    } else {
        ""
    };
    let Some(raw) = choice.message.and_then(|m| m.content) else {
        return Err(no_content(format!(
            "`content` is null, finish_reason {finish:?}{budget}"
        )));
    };
    let text = strip_reasoning(&raw);
    if text.trim().is_empty() && (truncated || !raw.trim().is_empty()) {
        let what = if raw.trim().is_empty() {
            "`content` is empty"
        } else {
            "`content` holds only a reasoning block"
        };
        return Err(no_content(format!(
            "{what}, finish_reason {finish:?}{budget}"
        )));
    }
    let usage = wire
        .usage
        .map(|u| Usage {
            prompt_tokens: u.prompt_tokens,
            completion_tokens: u.completion_tokens,
        })
        .unwrap_or_default();
    Ok(Reply {
        text: text.into_owned(),
        usage,
        truncated,
    })
}

/// Whether a failed attempt is worth retrying (and counts against the endpoint's health).
/// A reply body, read chunk by chunk up to `max` bytes: a longer one stops the reading and is
/// an error naming the endpoint and the limit (not retried: the same request gets the same
/// reply); a failed read is `BadResponse` (retried).
async fn read_bounded(
    mut resp: reqwest::Response,
    endpoint: &str,
    max: u64,
) -> Result<Vec<u8>, LlmError> {
    let too_big = || {
        LlmError::Other(format!(
            "LLM endpoint {endpoint}: the reply is larger than {max} bytes \
             (`max_reply_bytes` of its config section); not read further"
        ))
    };
    if resp.content_length().is_some_and(|n| n > max) {
        return Err(too_big());
    }
    let mut body = Vec::new();
    loop {
        match resp.chunk().await {
            Ok(Some(c)) => {
                if (body.len() + c.len()) as u64 > max {
                    return Err(too_big());
                }
                body.extend_from_slice(&c);
            }
            Ok(None) => return Ok(body),
            Err(e) => {
                return Err(LlmError::BadResponse {
                    endpoint: endpoint.to_string(),
                    message: format!("reading body: {e}"),
                })
            }
        }
    }
}

fn retryable(e: &LlmError) -> bool {
    match e {
        LlmError::Timeout(_) | LlmError::Connection { .. } | LlmError::BadResponse { .. } => true,
        LlmError::Http { status, .. } => *status == 429 || *status == 408 || *status >= 500,
        _ => false,
    }
}

impl OpenAiBackend {
    /// Build the backend. Fails when no base URL is given (or `base_url_env` names an unset
    /// variable), max_concurrency or unhealthy_after is 0, cooldown_ms or
    /// max_retry_after_secs is above a day, or API key variables are named but none is set.
    pub fn new(mut cfg: OpenAiConfig) -> Result<Self, LlmError> {
        let bad = |m: &str| Err(LlmError::Other(format!("openai backend: {m}")));
        match cfg.endpoint_urls() {
            Ok(urls) => cfg.base_urls = urls,
            Err(e) => return bad(&e),
        }
        if cfg.base_urls.is_empty() {
            return bad("base_urls is empty");
        }
        if cfg.max_concurrency == 0 {
            return bad("max_concurrency must be >= 1");
        }
        if cfg.unhealthy_after == 0 {
            return bad("unhealthy_after must be >= 1");
        }
        if cfg.cooldown_ms > 86_400_000 {
            return bad(&format!(
                "cooldown_ms must be at most 86400000 (a day), got {}",
                cfg.cooldown_ms
            ));
        }
        if cfg.max_retry_after_secs > 86_400 {
            return bad(&format!(
                "max_retry_after_secs must be at most 86400 (a day), got {}",
                cfg.max_retry_after_secs
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
        let urls: Vec<String> = cfg.base_urls.iter().map(|u| completions_url(u)).collect();
        Ok(Self {
            sem: Arc::new(Semaphore::new(cfg.max_concurrency)),
            health: Mutex::new(vec![Health::default(); urls.len()]),
            dialects: Mutex::new(vec![None; urls.len()]),
            urls,
            cfg,
            runtime: Some(runtime),
            client,
            keys,
            key_rr: AtomicUsize::new(0),
            ep_rr: AtomicUsize::new(0),
            stats: LlmStats::default(),
            notice: Mutex::new(RetryNotice::default()),
        })
    }

    /// A progress line while requests are being retried: at most one every
    /// [`RETRY_NOTICE_EVERY`], saying how many retries there were since the last one, to
    /// which endpoint and why, so a run that is waiting on a server never waits in silence.
    fn notice_retry(&self, url: &str, cause: &LlmError) {
        let mut n = self.notice.lock().unwrap_or_else(|p| p.into_inner());
        n.pending += 1;
        let now = Instant::now();
        if n.last
            .is_some_and(|t| now.duration_since(t) < RETRY_NOTICE_EVERY)
        {
            return;
        }
        eprintln!(
            "LLM: retrying requests ({} retr{} since the last notice); last: {url}: {}",
            n.pending,
            if n.pending == 1 { "y" } else { "ies" },
            RetryCounts::cause(cause).replace('_', " ") + ": " + &cause.to_string()
        );
        n.pending = 0;
        n.last = Some(now);
    }

    /// Ask every endpoint whether it answers at all: `GET <base>/models` with `timeout`. Any
    /// HTTP status counts as an answer (servers without that route still answer 404); a
    /// refused connection, a DNS or TLS failure or a timeout is reported as
    /// `no answer from <url>: <cause>`. One entry per endpoint, in `base_urls` order.
    pub fn probe(&self, timeout: Duration) -> Vec<(String, Result<(), String>)> {
        let Some(runtime) = self.runtime.as_ref() else {
            return Vec::new();
        };
        let client = self.client.clone();
        let urls: Vec<String> = self.cfg.base_urls.iter().map(|b| models_url(b)).collect();
        let run = async move {
            let checks: Vec<_> = urls
                .into_iter()
                .map(|url| {
                    let client = client.clone();
                    tokio::spawn(async move {
                        let r = tokio::time::timeout(timeout, client.get(&url).send()).await;
                        let res = match r {
                            Err(_) => Err(format!(
                                "no answer from {url}: timed out after {:.1} s",
                                timeout.as_secs_f64()
                            )),
                            Ok(Err(e)) => Err(format!("no answer from {url}: {}", error_chain(&e))),
                            Ok(Ok(_)) => Ok(()),
                        };
                        (url, res)
                    })
                })
                .collect();
            let mut out = Vec::with_capacity(checks.len());
            for c in checks {
                out.push(c.await.unwrap_or_else(|e| {
                    (
                        String::new(),
                        Err(format!("endpoint probe task failed: {e}")),
                    )
                }));
            }
            out
        };
        if tokio::runtime::Handle::try_current().is_ok() {
            std::thread::scope(|s| s.spawn(|| runtime.block_on(run)).join().unwrap_or_default())
        } else {
            runtime.block_on(run)
        }
    }

    pub fn config(&self) -> &OpenAiConfig {
        &self.cfg
    }

    pub fn stats(&self) -> LlmStatsSnapshot {
        self.stats.snapshot()
    }

    /// The health of every endpoint, in `base_urls` order.
    pub fn endpoint_health(&self) -> Vec<EndpointHealth> {
        let health = self.health.lock().unwrap_or_else(|p| p.into_inner());
        self.urls
            .iter()
            .zip(health.iter())
            .map(|(url, h)| EndpointHealth {
                url: url.clone(),
                in_rotation: !h.down,
                consecutive_failures: h.failures,
            })
            .collect()
    }

    /// Choose the endpoint of the next attempt and count it in flight. `stay`: the endpoint
    /// that just rejected a structured-output dialect; the next dialect goes to it while it
    /// is in rotation and free, so that its own dialect is found and remembered (moving on
    /// would leave an endpoint of another dialect unlearned, rejecting every request first).
    fn claim(&self, now: Instant, stay: Option<usize>) -> Pick {
        let mut health = self.health.lock().unwrap_or_else(|p| p.into_inner());
        let start = self.ep_rr.fetch_add(1, Ordering::Relaxed) % health.len();
        let p = match stay.filter(|&i| i < health.len() && !health[i].down && health[i].free(now)) {
            Some(index) => Pick::Send {
                index,
                probe: false,
            },
            None => pick(&health, now, start),
        };
        if let Pick::Send { index, probe } = p {
            let h = &mut health[index];
            h.in_flight += 1;
            h.probing |= probe;
        }
        p
    }

    /// Book the end of an attempt on its endpoint's health: `failure` is the endpoint's
    /// fault (a retryable error that is not a format rejection), None otherwise.
    fn settle(
        &self,
        index: usize,
        url: &str,
        probe: bool,
        failure: Option<&LlmError>,
        retry_after: Option<Duration>,
    ) {
        let mut health = self.health.lock().unwrap_or_else(|p| p.into_inner());
        let several = health.len() > 1;
        let h = &mut health[index];
        h.in_flight = h.in_flight.saturating_sub(1);
        if probe {
            h.probing = false;
        }
        match failure {
            Some(e) => {
                if let Some(ra) = retry_after {
                    self.stats.retry_after(ra);
                }
                let cooldown = Duration::from_millis(self.cfg.cooldown_ms);
                if h.on_failure(
                    Instant::now(),
                    retry_after,
                    self.cfg.unhealthy_after,
                    cooldown,
                ) {
                    self.stats.cooldown();
                    if several {
                        eprintln!(
                            "warning: LLM endpoint {url} failed {} attempts in a row (last: {e}); \
                             no traffic for {:.1} s while another endpoint answers",
                            h.failures,
                            cooldown.as_secs_f64()
                        );
                    }
                }
            }
            _ => {
                if h.on_success() && several {
                    eprintln!("LLM endpoint {url} answers again; back in rotation");
                }
            }
        }
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
        if let Some(s) = req.seed.or(self.cfg.seed) {
            b["seed"] = serde_json::json!(s);
        }
        // a structured request's schema is added per attempt, in the endpoint's dialect
        b
    }

    /// The structured-output dialect each endpoint has taken so far (endpoints without a
    /// structured reply yet are left out), in `base_urls` order.
    pub fn structured_dialects(&self) -> Vec<(String, StructuredDialect)> {
        let known = self.dialects.lock().unwrap_or_else(|p| p.into_inner());
        self.urls
            .iter()
            .zip(known.iter())
            .filter_map(|(u, d)| d.map(|d| (u.clone(), d)))
            .collect()
    }

    fn known_dialect(&self, index: usize) -> Option<StructuredDialect> {
        self.dialects.lock().unwrap_or_else(|p| p.into_inner())[index]
    }

    /// Endpoint `index` answered a request sent in `dialect`: remember it (said once, when
    /// `auto` found it).
    fn learn_dialect(&self, index: usize, dialect: StructuredDialect) {
        let mut known = self.dialects.lock().unwrap_or_else(|p| p.into_inner());
        if known[index].replace(dialect) != Some(dialect)
            && self.cfg.structured_dialect == StructuredDialect::Auto
        {
            eprintln!(
                "LLM endpoint {}: structured outputs in dialect {dialect} (found by structured_dialect = \"auto\")",
                self.urls[index]
            );
        }
    }

    /// Whether a failed attempt sent in `dialect` rejected the format: not for a dialect
    /// the endpoint already took (then the request itself is at fault).
    fn format_rejected(
        &self,
        index: usize,
        dialect: Option<StructuredDialect>,
        res: &Result<Reply, LlmError>,
    ) -> bool {
        match (dialect, res) {
            (Some(d), Err(LlmError::Http { status, body, .. })) => {
                self.known_dialect(index) != Some(d) && rejects_format(*status, body)
            }
            _ => false,
        }
    }

    /// One request to `endpoint`; also returns the capped `Retry-After` of a 429 / 503.
    /// `read` turns a 2xx body into the reply (chat completion or embeddings).
    async fn attempt<T>(
        &self,
        endpoint: &String,
        body: &serde_json::Value,
        read: &ReadReply<T>,
    ) -> (Result<T, LlmError>, Option<Duration>) {
        let timeout_ms = self.cfg.timeout_secs.saturating_mul(1000);
        let cap = Duration::from_secs(self.cfg.max_retry_after_secs);
        let mut retry_after = None;
        let fut = async {
            let mut rb = self.client.post(endpoint).json(body);
            if let Some(k) = self.pick_key() {
                rb = rb.bearer_auth(k);
            }
            let resp = rb.send().await.map_err(|e| LlmError::Connection {
                endpoint: endpoint.clone(),
                message: e.to_string(),
            })?;
            let status = resp.status().as_u16();
            let header = resp
                .headers()
                .get(reqwest::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string);
            retry_after = retry_wait(status, header.as_deref(), SystemTime::now(), cap);
            let bytes = read_bounded(resp, endpoint, self.cfg.max_reply_bytes).await?;
            if !(200..300).contains(&status) {
                let text = String::from_utf8_lossy(&bytes);
                let body: String = text.chars().take(300).collect();
                return Err(LlmError::Http {
                    endpoint: endpoint.clone(),
                    status,
                    body,
                });
            }
            read(endpoint, &bytes)
        };
        let res = match tokio::time::timeout(Duration::from_millis(timeout_ms), fut).await {
            Ok(r) => r,
            Err(_) => Err(LlmError::Timeout(timeout_ms)),
        };
        (res, retry_after)
    }

    async fn chat_async(&self, req: &ChatRequest) -> Result<ChatResponse, LlmError> {
        let _permit = self
            .sem
            .acquire()
            .await
            .map_err(|e| LlmError::Other(format!("semaphore closed: {e}")))?;
        let base = self.body(req);
        let started = Instant::now();
        let attempts = self.cfg.max_retries.saturating_add(1);
        let mut trial = Trial::new(self.cfg.structured_dialect);
        let mut last: Option<(usize, LlmError)> = None;
        // the endpoint whose format rejection the next attempt follows up
        let mut stay: Option<usize> = None;
        // attempts made (format rejections are not counted) and whether a backoff is due
        let (mut attempt, mut backoff) = (0u32, false);
        while attempt < attempts {
            if let Some((index, e)) = last.as_ref().filter(|_| backoff) {
                self.stats.retry(e);
                self.notice_retry(&self.urls[*index], e);
                self.back_off(attempt).await;
                backoff = false;
            }
            let (index, probe) = self.claim_when_free(stay.take()).await;
            let dialect = req
                .response_schema
                .as_ref()
                .map(|_| trial.choose(index, self.known_dialect(index)));
            let body = match (dialect, &req.response_schema) {
                (Some(d), Some(rs)) => {
                    let mut b = base.clone();
                    d.apply(&mut b, rs);
                    b
                }
                _ => base.clone(),
            };
            self.stats.attempt();
            let url = &self.urls[index];
            let (res, retry_after) = self.attempt(url, &body, &read_reply).await;
            let rejected = self.format_rejected(index, dialect, &res);
            let failure = res.as_ref().err().filter(|e| retryable(e) && !rejected);
            self.settle(index, url, probe, failure, retry_after);
            match res {
                Ok(r) => {
                    if let Some(d) = dialect {
                        self.learn_dialect(index, d);
                    }
                    return Ok(ChatResponse {
                        text: r.text,
                        usage: r.usage,
                        latency_ms: started.elapsed().as_millis() as u64,
                        cached: false,
                        truncated: r.truncated,
                    });
                }
                Err(e) if rejected => match trial.reject(index, dialect.unwrap_or_default(), e) {
                    AfterRejection::Next(_) => stay = Some(index),
                    AfterRejection::Fail(e) => return Err(e),
                },
                Err(e) if retryable(&e) => {
                    last = Some((index, e));
                    attempt += 1;
                    backoff = true;
                }
                Err(e) => return Err(e),
            }
        }
        Err(exhausted(attempts, last))
    }

    /// POST `body` to one of `urls` (one per base URL, in `base_urls` order) with the
    /// backend's concurrency bound, endpoint choice, health, retries and backoff; `read`
    /// turns a 2xx body into the reply. (Chat requests go through `chat_async`, which adds
    /// the structured-output dialects on top of the same steps.)
    pub(crate) async fn post<T>(
        &self,
        urls: &[String],
        body: &serde_json::Value,
        read: &ReadReply<T>,
    ) -> Result<T, LlmError> {
        let _permit = self
            .sem
            .acquire()
            .await
            .map_err(|e| LlmError::Other(format!("semaphore closed: {e}")))?;
        let attempts = self.cfg.max_retries.saturating_add(1);
        let mut last: Option<(usize, LlmError)> = None;
        for attempt in 0..attempts {
            if let Some((index, e)) = last.as_ref().filter(|_| attempt > 0) {
                self.stats.retry(e);
                self.notice_retry(&urls[*index], e);
                self.back_off(attempt).await;
            }
            let (index, probe) = self.claim_when_free(None).await;
            self.stats.attempt();
            let (res, retry_after) = self.attempt(&urls[index], body, read).await;
            let failure = res.as_ref().err().filter(|e| retryable(e));
            self.settle(index, &urls[index], probe, failure, retry_after);
            match res {
                Ok(r) => return Ok(r),
                Err(e) if retryable(&e) => last = Some((index, e)),
                Err(e) => return Err(e),
            }
        }
        Err(exhausted(attempts, last))
    }

    /// Run `fut` to completion on the backend's runtime, from a plain thread or from inside
    /// an async context (then through a helper thread).
    pub(crate) fn block_on<T: Send>(
        &self,
        fut: impl std::future::Future<Output = Result<T, LlmError>> + Send,
    ) -> Result<T, LlmError> {
        let Some(runtime) = self.runtime.as_ref() else {
            return Err(LlmError::Other("openai backend: runtime shut down".into()));
        };
        if tokio::runtime::Handle::try_current().is_ok() {
            std::thread::scope(|s| {
                s.spawn(|| runtime.block_on(fut))
                    .join()
                    .unwrap_or_else(|_| {
                        Err(LlmError::Other("openai worker thread panicked".into()))
                    })
            })
        } else {
            runtime.block_on(fut)
        }
    }

    /// The wait before retry number `attempt` (>= 1): `backoff_base_ms` doubled per retry,
    /// capped at 30 s, plus up to 50 % jitter.
    async fn back_off(&self, attempt: u32) {
        let base = self
            .cfg
            .backoff_base_ms
            .saturating_mul(1u64 << (attempt.saturating_sub(1)).min(20))
            .min(30_000);
        let jitter = if base > 0 {
            rand::rng().random_range(0..=base / 2)
        } else {
            0
        };
        tokio::time::sleep(Duration::from_millis(base + jitter)).await;
    }

    /// The endpoint of the next attempt, waiting while every endpoint asked for a pause.
    async fn claim_when_free(&self, stay: Option<usize>) -> (usize, bool) {
        loop {
            match self.claim(Instant::now(), stay) {
                Pick::Send { index, probe } => return (index, probe),
                Pick::WaitUntil(t) => {
                    tokio::time::sleep_until(tokio::time::Instant::from_std(t)).await
                }
            }
        }
    }
}

/// Turns a 2xx body from an endpoint into the reply (a chat completion, embeddings).
pub(crate) type ReadReply<T> = dyn Fn(&str, &[u8]) -> Result<T, LlmError> + Sync;

/// The error after the last of `attempts` failed with `last` (at its endpoint).
fn exhausted(attempts: u32, last: Option<(usize, LlmError)>) -> LlmError {
    LlmError::RetriesExhausted {
        attempts,
        last: Box::new(
            last.map(|(_, e)| e)
                .unwrap_or_else(|| LlmError::Other("no attempt made".into())),
        ),
    }
}

/// Dropping the backend inside an async context (a tokio runtime's worker) must not panic:
/// the owned runtime is shut down in the background instead of blocking on its tasks.
impl Drop for OpenAiBackend {
    fn drop(&mut self) {
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

impl Llm for OpenAiBackend {
    fn id(&self) -> String {
        format!("openai:{}", self.cfg.model)
    }

    fn default_seed(&self) -> Option<u64> {
        self.cfg.seed
    }

    fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, LlmError> {
        let res = self.block_on(self.chat_async(req));
        self.stats.record(&res);
        res
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(secs)
    }

    #[test]
    fn the_section_seed_goes_with_every_request_without_its_own() {
        let mk = |seed| {
            OpenAiBackend::new(OpenAiConfig {
                seed,
                api_key_envs: vec![],
                ..OpenAiConfig::default()
            })
            .unwrap()
        };
        let req = ChatRequest::new(vec![memskill_core::Message::user("q")]);
        assert_eq!(mk(Some(42)).body(&req)["seed"], 42);
        assert!(mk(None).body(&req).get("seed").is_none());
        let own = ChatRequest {
            seed: Some(7),
            ..req
        };
        assert_eq!(mk(Some(42)).body(&own)["seed"], 7);
    }

    #[test]
    fn http_dates_in_all_three_forms() {
        // RFC 9110's example instant
        let t = at(784_111_777);
        assert_eq!(parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT"), Some(t));
        assert_eq!(parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT"), Some(t));
        assert_eq!(parse_http_date("Sun Nov  6 08:49:37 1994"), Some(t));
        assert_eq!(
            parse_http_date("Thu, 29 Feb 2024 00:00:00 GMT"),
            Some(at(1_709_164_800))
        );
        for bad in [
            "",
            "tomorrow",
            "Fri, 30 Feb 2024 00:00:00 GMT",
            "Sun, 06 Nov 1994 24:00:00 GMT",
            "Sun, 06 Foo 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 08:49:37 CET",
            "Sun, 06 Nov 99999999999999 08:49:37 GMT",
            "Sun, 06 Nov 1994 08:49 GMT",
        ] {
            assert_eq!(parse_http_date(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn retry_after_seconds_dates_and_cap() {
        let now = at(784_111_777);
        let cap = Duration::from_secs(60);
        let w = |status, h: Option<&str>| retry_wait(status, h, now, cap);
        assert_eq!(w(429, Some("1")), Some(Duration::from_secs(1)));
        assert_eq!(w(503, Some(" 0 ")), Some(Duration::ZERO));
        assert_eq!(w(429, Some("1.5")), Some(Duration::from_millis(1500)));
        assert_eq!(
            w(429, Some("Sun, 06 Nov 1994 08:50:07 GMT")),
            Some(Duration::from_secs(30))
        );
        // a date in the past: no wait
        assert_eq!(
            w(503, Some("Sun, 06 Nov 1994 08:00:00 GMT")),
            Some(Duration::ZERO)
        );
        // capped
        assert_eq!(w(429, Some("3600")), Some(cap));
        assert_eq!(w(429, Some("99999999999999999999999")), Some(cap));
        assert_eq!(
            w(429, Some("Mon, 01 Jan 2035 00:00:00 GMT")),
            Some(cap),
            "far date capped"
        );
        // other statuses, missing, unreadable or negative headers, a zero cap: nothing
        assert_eq!(w(500, Some("5")), None);
        assert_eq!(w(200, Some("5")), None);
        assert_eq!(w(429, None), None);
        for bad in ["soon", "-1", "NaN", "inf", ""] {
            assert_eq!(w(429, Some(bad)), None, "{bad:?}");
        }
        assert_eq!(retry_wait(429, Some("5"), now, Duration::ZERO), None);
    }

    #[test]
    fn endpoints_cool_down_and_come_back_after_a_probe() {
        let t0 = Instant::now();
        let cool = Duration::from_secs(10);
        let mut eps = vec![Health::default(), Health::default()];
        let send = |index, probe| Pick::Send { index, probe };
        // ties rotate; the least loaded wins
        assert_eq!(pick(&eps, t0, 0), send(0, false));
        assert_eq!(pick(&eps, t0, 1), send(1, false));
        eps[1].in_flight = 3;
        assert_eq!(pick(&eps, t0, 1), send(0, false));
        eps[1].in_flight = 0;
        // endpoint 0 fails fast: two failures keep it in rotation, the third takes it out
        assert!(!eps[0].on_failure(t0, None, 3, cool));
        assert!(!eps[0].on_failure(t0, None, 3, cool));
        assert_eq!(pick(&eps, t0, 0), send(0, false));
        assert!(eps[0].on_failure(t0, None, 3, cool));
        for start in 0..4 {
            assert_eq!(pick(&eps, t0, start), send(1, false), "traffic moved");
        }
        // a success elsewhere does not bring it back; a failure during the cool-down does
        // not announce it twice
        assert!(!eps[0].on_failure(t0, None, 3, cool));
        // the cool-down ends: one probe goes to it, the others stay away while it runs
        let t1 = t0 + cool + Duration::from_millis(1);
        assert_eq!(pick(&eps, t1, 1), send(0, true));
        eps[0].probing = true;
        assert_eq!(pick(&eps, t1, 0), send(1, false));
        // the probe fails: a new cool-down
        eps[0].probing = false;
        assert!(!eps[0].on_failure(t1, None, 3, cool));
        assert_eq!(pick(&eps, t1, 0), send(1, false));
        // the next probe succeeds: back in rotation, ties rotate again
        let t2 = t1 + cool + Duration::from_millis(1);
        assert_eq!(pick(&eps, t2, 1), send(0, true));
        assert!(eps[0].on_success());
        assert_eq!(eps[0].failures, 0);
        assert_eq!(pick(&eps, t2, 0), send(0, false));
        assert_eq!(pick(&eps, t2, 1), send(1, false));
        // every endpoint out: still send, to the one whose cool-down ends first
        let mut all = vec![Health::default(), Health::default()];
        all[1].on_failure(t0, None, 1, cool);
        all[0].on_failure(t0 + Duration::from_secs(1), None, 1, cool);
        assert_eq!(pick(&all, t0 + Duration::from_secs(2), 0), send(1, false));
    }

    #[test]
    fn retry_after_keeps_requests_off_an_endpoint_until_then() {
        let t0 = Instant::now();
        let cool = Duration::from_secs(30);
        let mut eps = vec![Health::default(), Health::default()];
        eps[0].on_failure(t0, Some(Duration::from_secs(2)), 3, cool);
        // still in rotation, but paused: the other endpoint serves
        assert!(!eps[0].down);
        assert_eq!(
            pick(&eps, t0, 0),
            Pick::Send {
                index: 1,
                probe: false
            }
        );
        // both paused: wait for the earlier one
        eps[1].on_failure(t0, Some(Duration::from_secs(5)), 3, cool);
        assert_eq!(
            pick(&eps, t0, 0),
            Pick::WaitUntil(t0 + Duration::from_secs(2))
        );
        // a shorter Retry-After never shortens a pause
        eps[0].on_failure(t0, Some(Duration::from_secs(1)), 3, cool);
        assert_eq!(
            pick(&eps, t0, 0),
            Pick::WaitUntil(t0 + Duration::from_secs(2))
        );
        assert_eq!(
            pick(&eps, t0 + Duration::from_secs(2), 0),
            Pick::Send {
                index: 0,
                probe: false
            }
        );
    }

    #[test]
    fn replies_null_content_empty_choices_reasoning_and_truncation() {
        let ep = "http://x/v1/chat/completions";
        let r = |body: &str| read_reply(ep, body.as_bytes());
        let ok = r(r#"{"choices":[{"message":{"content":"Paris","reasoning_content":"hmm"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1}}"#).unwrap();
        assert_eq!(
            (ok.text.as_str(), ok.truncated, ok.usage.prompt_tokens),
            ("Paris", false, 3)
        );
        let cut = r(r#"{"choices":[{"message":{"content":"ACTION: INSERT\nMEMORY_ITEM: Ali"},"finish_reason":"length"}]}"#).unwrap();
        assert!(cut.truncated);
        let think = r(r#"{"choices":[{"message":{"content":"<think>so...</think>\nParis"},"finish_reason":"stop"}]}"#).unwrap();
        assert_eq!(think.text, "Paris");
        // a plain empty answer is what the model said
        assert_eq!(
            r(r#"{"choices":[{"message":{"content":""}}]}"#)
                .unwrap()
                .text,
            ""
        );
        for (body, want) in [
            (
                r#"{"choices":[{"message":{"content":null,"reasoning_content":"long thoughts"},"finish_reason":"length"}]}"#,
                "`content` is null, finish_reason \"length\": the reply budget",
            ),
            (r#"{"choices":[]}"#, "empty `choices`"),
            (
                r#"{"choices":[{"message":{"content":"<think>still thinking"},"finish_reason":"length"}]}"#,
                "only a reasoning block",
            ),
            (
                r#"{"choices":[{"message":{"content":""},"finish_reason":"length"}]}"#,
                "`content` is empty",
            ),
            (
                r#"{"choices":[{"finish_reason":"stop"}]}"#,
                "`content` is null",
            ),
        ] {
            match r(body) {
                Err(LlmError::NoContent { endpoint, reason }) => {
                    assert_eq!(endpoint, ep);
                    assert!(reason.contains(want), "{reason:?} lacks {want:?}");
                }
                other => panic!("{body}: expected NoContent, got {other:?}"),
            }
        }
        for body in ["{\"choices\": [", "{\"error\":\"busy\"}", "[]"] {
            assert!(
                matches!(r(body), Err(LlmError::BadResponse { .. })),
                "{body}"
            );
        }
        assert!(!retryable(&LlmError::NoContent {
            endpoint: ep.into(),
            reason: String::new()
        }));
    }

    #[test]
    fn config_limits_are_named() {
        let base = OpenAiConfig::default;
        for (cfg, key) in [
            (
                OpenAiConfig {
                    unhealthy_after: 0,
                    ..base()
                },
                "unhealthy_after",
            ),
            (
                OpenAiConfig {
                    cooldown_ms: 86_400_001,
                    ..base()
                },
                "cooldown_ms",
            ),
            (
                OpenAiConfig {
                    max_retry_after_secs: 1_000_000,
                    ..base()
                },
                "max_retry_after_secs",
            ),
        ] {
            let e = OpenAiBackend::new(cfg).err().expect("refused").to_string();
            assert!(e.contains(key), "{e}");
        }
    }
}
