//! An OpenAI-compatible HTTP front for any [`Llm`] (in practice the scripted synthetic
//! oracle), with optional fault injection. **A test and reliability tool, not a research
//! server**: it lets the whole HTTP path (retries, `Retry-After`, endpoint health, the
//! start-up probe, error accounting) run offline against a model whose replies are known.
//!
//! Routes: `GET .../models` answers `{"data": []}` (or the `served_model` with its
//! `context_tokens` as `max_model_len`); `POST /tokenize` counts a `prompt`'s cl100k tokens
//! as vLLM's route answers; `POST .../chat/completions` answers
//! with the wrapped model's reply, or for what memory libraries ask (tool calls, a JSON
//! object without a schema) with `scripted_rules`' reply; `POST .../embeddings` with the
//! hashing encoder's vectors. Everything else is a 404. Faults are drawn per request
//! from a seeded generator (`fault_rate`, mixed over [`Fault`] kinds), or forced for
//! requests whose body contains `fail_matching` (always HTTP 500). A structured request's
//! schema is read in any dialect ([`StructuredDialect::read`]); with `format_rejection` the
//! server takes only one dialect and rejects the others as a real server does (llama-cpp-
//! python's answers `json_schema` with HTTP 500 naming `response_format`). The counts of
//! requests, of each injected fault and of each dialect seen are kept in [`ServerStats`].
//!
//! One thread per connection, HTTP/1.1 keep-alive, `Content-Length` bodies only, bound to
//! 127.0.0.1 by the callers.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use memskill_core::{ChatRequest, ChatResponse, Llm, Message, Usage};
use memskill_executor::StructuredDialect;

use crate::scripted_rules::{embeddings_reply, rule_reply, RuleReply};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

/// A fault the server can inject instead of a normal reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Fault {
    /// HTTP 500 with a short body.
    Http500,
    /// HTTP 429 with `Retry-After: 0`.
    Http429,
    /// HTTP 200 whose body is not JSON.
    Garbage,
    /// The connection is closed without any answer.
    Drop,
    /// HTTP 200 with `content: null` (a reasoning model that ran out of tokens).
    NullContent,
    /// HTTP 200 with the reply cut and `finish_reason: "length"`.
    Truncated,
}

impl Fault {
    /// The mixed faults of `fault_rate`, drawn uniformly.
    pub const MIXED: [Fault; 6] = [
        Fault::Http500,
        Fault::Http429,
        Fault::Garbage,
        Fault::Drop,
        Fault::NullContent,
        Fault::Truncated,
    ];
}

/// What to inject.
#[derive(Debug, Clone, Default)]
pub struct FaultPlan {
    /// Share of chat requests that get a fault (0 = none).
    pub fault_rate: f64,
    /// Seed of the fault draws.
    pub seed: u64,
    /// Chat requests whose body contains this text always get HTTP 500.
    pub fail_matching: Option<String>,
    /// Take structured requests in one dialect only.
    pub format_rejection: Option<FormatRejection>,
    /// Append every chat request body to this file, one JSON line each (`{"seq", "body"}`,
    /// in arrival order), for comparing what two clients send (scripts/fidelity/requests.sh).
    /// The file must not exist yet.
    pub record: Option<std::path::PathBuf>,
    /// List this model in `GET .../models` (else the list is empty), with `context_tokens`
    /// as its `max_model_len` when given, as vLLM reports its context window.
    pub served_model: Option<String>,
    pub context_tokens: Option<u64>,
}

/// A server that takes one structured-output dialect: a structured request in another is
/// answered `status` with a body naming `response_format`.
#[derive(Debug, Clone, Copy)]
pub struct FormatRejection {
    pub accept: StructuredDialect,
    pub status: u16,
}

/// Counts of what the server did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ServerStats {
    pub chat_requests: u64,
    pub replies: u64,
    pub faults: BTreeMap<Fault, u64>,
    pub other_requests: u64,
    /// Structured chat requests by the dialect they came in (rejected ones included).
    pub dialects: BTreeMap<StructuredDialect, u64>,
    /// Structured requests rejected for their dialect (`format_rejection`).
    pub format_rejections: u64,
}

impl ServerStats {
    pub fn faults_total(&self) -> u64 {
        self.faults.values().sum()
    }
}

/// The messages of a request joined by newlines: what a scripted model reads.
pub fn joined_prompt(req: &ChatRequest) -> String {
    req.messages
        .iter()
        .map(|m| m.content.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// A scripted model's answer `text` to `prompt`, begun at `start`: tokens estimated at four
/// bytes each, the latency measured.
pub fn scripted_reply(prompt: &str, text: String, start: std::time::Instant) -> ChatResponse {
    ChatResponse {
        usage: Usage {
            prompt_tokens: (prompt.len() / 4) as u64,
            completion_tokens: (text.len() / 4) as u64,
        },
        text,
        latency_ms: start.elapsed().as_millis() as u64,
        cached: false,
        truncated: false,
    }
}

/// A running server; stopped on [`ScriptedServer::stop`] or drop.
pub struct ScriptedServer {
    pub addr: std::net::SocketAddr,
    stop: Arc<AtomicBool>,
    stats: Arc<Mutex<ServerStats>>,
    accept: Option<std::thread::JoinHandle<()>>,
}

struct Shared {
    llm: Arc<dyn Llm>,
    plan: FaultPlan,
    rng: Mutex<ChaCha8Rng>,
    stats: Arc<Mutex<ServerStats>>,
    stop: Arc<AtomicBool>,
    /// The request log and the next sequence number.
    record: Option<Mutex<(std::fs::File, u64)>>,
}

impl ScriptedServer {
    /// Serve `llm` on `listener` (bind it to 127.0.0.1) until stopped.
    pub fn start(
        listener: TcpListener,
        llm: Arc<dyn Llm>,
        plan: FaultPlan,
    ) -> std::io::Result<Self> {
        let addr = listener.local_addr()?;
        listener.set_nonblocking(true)?;
        let stop = Arc::new(AtomicBool::new(false));
        let stats = Arc::new(Mutex::new(ServerStats::default()));
        let record = match &plan.record {
            Some(p) => {
                let f = std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(p)
                    .map_err(|e| {
                        std::io::Error::new(e.kind(), format!("request log {}: {e}", p.display()))
                    })?;
                Some(Mutex::new((f, 0)))
            }
            None => None,
        };
        let shared = Arc::new(Shared {
            record,
            llm,
            rng: Mutex::new(ChaCha8Rng::seed_from_u64(plan.seed)),
            plan,
            stats: stats.clone(),
            stop: stop.clone(),
        });
        let accept = std::thread::spawn(move || {
            while !shared.stop.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        let sh = shared.clone();
                        std::thread::spawn(move || {
                            let _ = serve_connection(&sh, stream);
                        });
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        std::thread::sleep(Duration::from_millis(5));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(20)),
                }
            }
        });
        Ok(Self {
            addr,
            stop,
            stats,
            accept: Some(accept),
        })
    }

    /// The base URL clients use (`http://127.0.0.1:PORT/v1`).
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    pub fn stats(&self) -> ServerStats {
        self.stats.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub fn stop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.accept.take() {
            let _ = h.join();
        }
    }
}

impl Drop for ScriptedServer {
    fn drop(&mut self) {
        self.stop();
    }
}

fn serve_connection(sh: &Shared, stream: TcpStream) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_millis(200)))?;
    // one write per reply, sent at once (no Nagle delay waiting for the client's ACK)
    stream.set_nodelay(true)?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut out = stream;
    // kept across read timeouts: a line cut by a timeout is continued, not lost
    let mut request_line = String::new();
    loop {
        match reader.read_line(&mut request_line) {
            Ok(0) => return Ok(()),
            Ok(_) if !request_line.ends_with('\n') => continue,
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                if sh.stop.load(Ordering::Relaxed) {
                    return Ok(());
                }
                continue;
            }
            Err(e) => return Err(e),
        }
        let mut len = 0usize;
        loop {
            let mut h = String::new();
            if reader.read_line(&mut h)? == 0 {
                return Ok(());
            }
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':') {
                if k.eq_ignore_ascii_case("content-length") {
                    len = v.trim().parse().unwrap_or(0);
                }
            }
        }
        let mut body = vec![0u8; len.min(64 << 20)];
        reader.read_exact(&mut body)?;
        let line = std::mem::take(&mut request_line);
        if line.trim().is_empty() {
            continue;
        }
        let mut parts = line.split_whitespace();
        let (method, path) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
        let keep = if method == "POST" && path.ends_with("/chat/completions") {
            chat(sh, &body, &mut out)?
        } else if method == "POST" && path.ends_with("/embeddings") {
            embeddings(sh, &body, &mut out)?;
            true
        } else {
            sh.stats
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .other_requests += 1;
            if method == "GET" && path.ends_with("/models") {
                respond(&mut out, 200, &[], &models_list(&sh.plan))?;
            } else if method == "POST" && path == "/tokenize" {
                respond(&mut out, 200, &[], &tokenize(&body))?;
            } else {
                respond(&mut out, 404, &[], r#"{"error":"not found"}"#)?;
            }
            true
        };
        if !keep {
            return Ok(());
        }
    }
}

/// The `/models` answer: the served model, if one is named, with its context window.
fn models_list(plan: &FaultPlan) -> String {
    let data: Vec<serde_json::Value> = plan
        .served_model
        .iter()
        .map(|id| {
            let mut m = serde_json::json!({"id": id, "object": "model", "owned_by": "memskill"});
            if let Some(n) = plan.context_tokens {
                m["max_model_len"] = n.into();
            }
            m
        })
        .collect();
    serde_json::json!({"object": "list", "data": data}).to_string()
}

/// vLLM's `POST /tokenize` (`{"prompt"}` -> `{"count", "tokens"}`), counted with cl100k
/// (the scripted model has no tokenizer of its own); a body without `prompt` counts 0.
fn tokenize(body: &[u8]) -> String {
    let v: serde_json::Value = serde_json::from_slice(body).unwrap_or_default();
    let text = v.get("prompt").and_then(|p| p.as_str()).unwrap_or("");
    let n = memskill_datasets::count_tokens(text);
    serde_json::json!({"count": n, "tokens": [], "max_model_len": null}).to_string()
}

fn respond(
    out: &mut TcpStream,
    status: u16,
    headers: &[(&str, &str)],
    body: &str,
) -> std::io::Result<()> {
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        429 => "Too Many Requests",
        _ => "Internal Server Error",
    };
    let mut head = format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    head.push_str(body);
    out.write_all(head.as_bytes())?;
    out.flush()
}

fn completion(content: Option<&str>, finish: &str) -> String {
    serde_json::json!({
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1},
    })
    .to_string()
}

/// A completion carrying a [`RuleReply`].
fn rule_completion(rule: RuleReply) -> String {
    match rule {
        RuleReply::Text(t) => completion(Some(&t), "stop"),
        RuleReply::ToolCalls(calls) => serde_json::json!({
            "object": "chat.completion",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": null, "tool_calls": calls}, "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1},
        })
        .to_string(),
    }
}

/// Answer an `/embeddings` request with the hashing encoder (see `scripted_rules`).
fn embeddings(sh: &Shared, body: &[u8], out: &mut TcpStream) -> std::io::Result<()> {
    sh.stats
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .other_requests += 1;
    let reply = serde_json::from_slice::<serde_json::Value>(body)
        .map_err(|e| format!("request body is not JSON: {e}"))
        .and_then(|v| embeddings_reply(&v));
    match reply {
        Ok(v) => respond(out, 200, &[], &v.to_string()),
        Err(e) => respond(
            out,
            400,
            &[],
            &serde_json::json!({ "error": e }).to_string(),
        ),
    }
}

/// Append one request body to the request log, if there is one (a body that is not JSON is
/// logged as a string).
fn record_request(sh: &Shared, body: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let Some(rec) = &sh.record else {
        return Ok(());
    };
    let body: serde_json::Value = serde_json::from_slice(body)
        .unwrap_or_else(|_| String::from_utf8_lossy(body).into_owned().into());
    let mut g = rec.lock().unwrap_or_else(|p| p.into_inner());
    let line = serde_json::json!({ "seq": g.1, "body": body }).to_string() + "\n";
    g.1 += 1;
    g.0.write_all(line.as_bytes())
}

/// `None` when the request is in the request log (or there is none); otherwise the request
/// is answered 500 and the failure printed: a log with a hole must not pass for a complete one.
fn refuse_unrecorded(
    sh: &Shared,
    body: &[u8],
    out: &mut TcpStream,
) -> Option<std::io::Result<bool>> {
    let e = record_request(sh, body).err()?;
    eprintln!("scripted server: cannot append to the request log: {e}");
    let msg = serde_json::json!({ "error": format!("request log: {e}") }).to_string();
    Some(respond(out, 500, &[], &msg).map(|_| true))
}

/// Answer one chat request; false when the connection must be dropped.
fn chat(sh: &Shared, body: &[u8], out: &mut TcpStream) -> std::io::Result<bool> {
    if let Some(answered) = refuse_unrecorded(sh, body, out) {
        return answered;
    }
    let fault = {
        let forced = sh
            .plan
            .fail_matching
            .as_deref()
            .is_some_and(|m| String::from_utf8_lossy(body).contains(m));
        let mut rng = sh.rng.lock().unwrap_or_else(|p| p.into_inner());
        if forced {
            Some(Fault::Http500)
        } else if sh.plan.fault_rate > 0.0 && rng.random::<f64>() < sh.plan.fault_rate {
            Some(Fault::MIXED[rng.random_range(0..Fault::MIXED.len())])
        } else {
            None
        }
    };
    {
        let mut st = sh.stats.lock().unwrap_or_else(|p| p.into_inner());
        st.chat_requests += 1;
        if let Some(f) = fault {
            *st.faults.entry(f).or_default() += 1;
        }
    }
    match fault {
        Some(Fault::Http500) => {
            respond(out, 500, &[], r#"{"error":"injected fault"}"#).map(|_| true)
        }
        Some(Fault::Http429) => respond(
            out,
            429,
            &[("retry-after", "0")],
            r#"{"error":"slow down"}"#,
        )
        .map(|_| true),
        Some(Fault::Garbage) => respond(out, 200, &[], "<html>not json").map(|_| true),
        Some(Fault::Drop) => Ok(false),
        Some(Fault::NullContent) => {
            respond(out, 200, &[], &completion(None, "length")).map(|_| true)
        }
        Some(Fault::Truncated) | None => {
            if let Some(rule) = serde_json::from_slice(body)
                .ok()
                .as_ref()
                .and_then(rule_reply)
            {
                sh.stats.lock().unwrap_or_else(|p| p.into_inner()).replies += 1;
                return respond(out, 200, &[], &rule_completion(rule)).map(|_| true);
            }
            let (req, dialect) = match parse_request(body) {
                Ok(r) => r,
                Err(e) => {
                    let msg = serde_json::json!({ "error": e }).to_string();
                    return respond(out, 400, &[], &msg).map(|_| true);
                }
            };
            if let Some((status, msg)) = reject_dialect(sh, dialect) {
                return respond(out, status, &[], &msg).map(|_| true);
            }
            match sh.llm.chat(&req) {
                Ok(r) => {
                    if fault.is_some() {
                        let cut: String = r.text.chars().take(r.text.chars().count() / 2).collect();
                        respond(out, 200, &[], &completion(Some(&cut), "length"))?;
                    } else {
                        sh.stats.lock().unwrap_or_else(|p| p.into_inner()).replies += 1;
                        respond(out, 200, &[], &completion(Some(&r.text), "stop"))?;
                    }
                    Ok(true)
                }
                Err(e) => {
                    let msg = serde_json::json!({ "error": e.to_string() }).to_string();
                    respond(out, 500, &[], &msg).map(|_| true)
                }
            }
        }
    }
}

/// Count a structured request's dialect; the rejection (status, body) when the server does
/// not take it.
fn reject_dialect(sh: &Shared, dialect: Option<StructuredDialect>) -> Option<(u16, String)> {
    let d = dialect?;
    let mut st = sh.stats.lock().unwrap_or_else(|p| p.into_inner());
    *st.dialects.entry(d).or_default() += 1;
    let fr = sh.plan.format_rejection.filter(|fr| fr.accept != d)?;
    st.format_rejections += 1;
    let msg = format!(
        "response_format: this server takes structured outputs as {} only, not {d}",
        fr.accept
    );
    Some((fr.status, serde_json::json!({ "error": msg }).to_string()))
}

/// The chat request of a body, and the dialect its schema came in.
fn parse_request(body: &[u8]) -> Result<(ChatRequest, Option<StructuredDialect>), String> {
    let v: serde_json::Value =
        serde_json::from_slice(body).map_err(|e| format!("request body is not JSON: {e}"))?;
    let messages: Vec<Message> =
        serde_json::from_value(v["messages"].clone()).map_err(|e| format!("messages: {e}"))?;
    let mut req = ChatRequest::new(messages);
    if let Some(n) = v["max_tokens"].as_u64() {
        req.max_tokens = n.min(u32::MAX as u64) as u32;
    }
    // structured outputs in any dialect; a dialect without the schema's name gets the
    // executor's when the schema asks for actions, else the judge's
    let found = StructuredDialect::read(&v, "")?;
    let dialect = found.as_ref().map(|(d, _)| *d);
    req.response_schema = found.map(|(_, mut rs)| {
        if rs.name.is_empty() {
            use memskill_executor::structured::{EXECUTOR_SCHEMA_NAME, JUDGE_SCHEMA_NAME};
            let actions = !rs.schema["properties"]["actions"].is_null();
            rs.name = if actions {
                EXECUTOR_SCHEMA_NAME
            } else {
                JUDGE_SCHEMA_NAME
            }
            .into();
        }
        rs
    });
    Ok((req, dialect))
}

#[cfg(test)]
mod tests {
    use super::*;
    use memskill_core::{ChatResponse, LlmError, Usage};

    struct Echo;
    impl Llm for Echo {
        fn id(&self) -> String {
            "echo".into()
        }
        fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, LlmError> {
            Ok(ChatResponse {
                text: format!("echo: {}", req.messages[0].content),
                usage: Usage::default(),
                latency_ms: 0,
                cached: false,
                truncated: false,
            })
        }
    }

    fn client(url: &str, retries: u32) -> memskill_executor::OpenAiBackend {
        client_with(&[url], retries, StructuredDialect::Auto)
    }

    fn client_with(
        urls: &[&str],
        retries: u32,
        dialect: StructuredDialect,
    ) -> memskill_executor::OpenAiBackend {
        memskill_executor::OpenAiBackend::new(memskill_executor::OpenAiConfig {
            base_urls: urls.iter().map(|u| u.to_string()).collect(),
            model: "m".into(),
            api_key_envs: vec![],
            max_concurrency: 2,
            timeout_secs: 5,
            max_retries: retries,
            backoff_base_ms: 0,
            unhealthy_after: 1000,
            cooldown_ms: 0,
            max_retry_after_secs: 1,
            structured_dialect: dialect,
            ..Default::default()
        })
        .unwrap()
    }

    /// Records the structured-output schema of every request it answers.
    #[derive(Default)]
    struct Recorder(Mutex<Vec<Option<memskill_core::ResponseSchema>>>);
    impl Llm for Recorder {
        fn id(&self) -> String {
            "recorder".into()
        }
        fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, LlmError> {
            self.0.lock().unwrap().push(req.response_schema.clone());
            Ok(ChatResponse {
                text: r#"{"actions": [{"action": "NOOP"}]}"#.into(),
                usage: Usage::default(),
                latency_ms: 0,
                cached: false,
                truncated: false,
            })
        }
    }

    #[test]
    fn structured_requests_carry_the_schema_as_response_format() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let rec = Arc::new(Recorder::default());
        let mut srv = ScriptedServer::start(l, rec.clone(), FaultPlan::default()).unwrap();
        let c = client(&srv.base_url(), 0);
        let schema = memskill_executor::executor_schema(
            &[
                memskill_core::ActionKind::Insert,
                memskill_core::ActionKind::Delete,
            ],
            4,
            128,
        );
        let free = ChatRequest::new(vec![Message::user("hi")]);
        c.chat(&free).unwrap();
        let r = c
            .chat(&free.clone().with_response_schema(Some(schema.clone())))
            .unwrap();
        assert_eq!(r.text, r#"{"actions": [{"action": "NOOP"}]}"#);
        let seen = rec.0.lock().unwrap().clone();
        assert_eq!(seen, vec![None, Some(schema)]);
        srv.stop();
    }

    fn executor_schema() -> memskill_core::ResponseSchema {
        memskill_executor::executor_schema(&[memskill_core::ActionKind::Insert], 2, 64)
    }

    fn structured(text: &str) -> ChatRequest {
        ChatRequest::new(vec![Message::user(text)]).with_response_schema(Some(executor_schema()))
    }

    /// A recording server that takes `accept` only (None: every dialect).
    fn server_taking(accept: Option<(StructuredDialect, u16)>) -> (ScriptedServer, Arc<Recorder>) {
        let rec = Arc::new(Recorder::default());
        let plan = FaultPlan {
            format_rejection: accept.map(|(accept, status)| FormatRejection { accept, status }),
            ..Default::default()
        };
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        (ScriptedServer::start(l, rec.clone(), plan).unwrap(), rec)
    }

    /// Issue 28: every dialect's request shape reaches the server with the schema, and a
    /// configured dialect is what is sent (and recorded).
    #[test]
    fn every_dialect_carries_the_schema_in_its_own_shape() {
        let (srv, rec) = server_taking(None);
        for d in StructuredDialect::CONCRETE {
            let c = client_with(&[&srv.base_url()], 0, d);
            c.chat(&structured("hi")).unwrap();
            assert_eq!(c.structured_dialects(), vec![(completions(&srv), d)]);
        }
        let s = srv.stats();
        let want: BTreeMap<StructuredDialect, u64> = StructuredDialect::CONCRETE
            .iter()
            .map(|d| (*d, 1))
            .collect();
        assert_eq!(s.dialects, want);
        // the schema arrives intact in every dialect
        let seen = rec.0.lock().unwrap().clone();
        assert_eq!(seen, vec![Some(executor_schema()); 4]);
    }

    fn completions(srv: &ScriptedServer) -> String {
        format!("{}/chat/completions", srv.base_url())
    }

    /// Issue 28: a server that rejects `json_schema` (HTTP 400, or 500 naming
    /// `response_format` as llama-cpp-python's does) gets the next dialect at once, without
    /// a retry; the dialect that worked is remembered for the next requests.
    #[test]
    fn auto_falls_back_on_a_format_rejection_and_remembers_without_retries() {
        for (accept, status) in [
            (StructuredDialect::JsonObjectSchema, 500),
            (StructuredDialect::GuidedJson, 400),
            (StructuredDialect::OllamaFormat, 422),
        ] {
            let (srv, _rec) = server_taking(Some((accept, status)));
            // one retry allowed: a rejection must not use it
            let c = client_with(&[&srv.base_url()], 1, StructuredDialect::Auto);
            for i in 0..3 {
                let r = c.chat(&structured(&format!("q{i}"))).unwrap();
                assert_eq!(r.text, r#"{"actions": [{"action": "NOOP"}]}"#);
            }
            // free requests are untouched
            c.chat(&ChatRequest::new(vec![Message::user("free")]))
                .unwrap();
            let s = srv.stats();
            let rank = StructuredDialect::CONCRETE
                .iter()
                .position(|d| *d == accept)
                .unwrap() as u64;
            assert_eq!(
                s.format_rejections, rank,
                "{accept}: each earlier dialect once"
            );
            assert_eq!(s.dialects.get(&accept), Some(&3), "{accept}: remembered");
            assert_eq!(s.chat_requests, rank + 4);
            let st = c.stats();
            assert_eq!((st.retries, st.errors), (0, 0), "{accept}");
            assert_eq!(c.structured_dialects(), vec![(completions(&srv), accept)]);
            assert!(c.endpoint_health()[0].consecutive_failures == 0);
        }
    }

    /// A configured dialect the server rejects fails at once (no retries), naming the
    /// dialect; a plain server error under `auto` is retried as before, not taken for a
    /// format rejection.
    #[test]
    fn a_rejected_configured_dialect_fails_at_once_and_plain_errors_are_retried() {
        let (srv, _rec) = server_taking(Some((StructuredDialect::JsonObjectSchema, 500)));
        let c = client_with(&[&srv.base_url()], 3, StructuredDialect::JsonSchema);
        let e = c.chat(&structured("q")).unwrap_err().to_string();
        assert!(
            e.contains("HTTP 500") && e.contains("structured_dialect = \"json_schema\""),
            "{e}"
        );
        assert_eq!((srv.stats().chat_requests, c.stats().retries), (1, 0));
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let plan = FaultPlan {
            fail_matching: Some("response_format".into()),
            ..Default::default()
        };
        let srv2 = ScriptedServer::start(l, Arc::new(Echo), plan).unwrap();
        let c = client_with(&[&srv2.base_url()], 2, StructuredDialect::Auto);
        // `fail_matching` answers "injected fault" (no format word): retried, not a rejection
        let e = c.chat(&structured("q")).unwrap_err();
        assert!(
            matches!(e, LlmError::RetriesExhausted { attempts: 3, .. }),
            "{e}"
        );
        assert_eq!(c.stats().retries, 2);
        assert!(c.structured_dialects().is_empty());
    }

    /// One request at a time to two endpoints of different dialects: a request that meets a
    /// rejection tries the next dialect on the same endpoint, so both endpoints' dialects
    /// are known after two requests. (Moving to the next endpoint after a rejection, as
    /// before, locked into a-rejects-then-b-answers forever: `a` was never learned; CI
    /// failed on it.)
    #[test]
    fn a_rejected_dialect_is_followed_up_on_the_same_endpoint() {
        let (a, _ra) = server_taking(Some((StructuredDialect::GuidedJson, 400)));
        let (b, _rb) = server_taking(None);
        let c = client_with(&[&a.base_url(), &b.base_url()], 0, StructuredDialect::Auto);
        for i in 0..2 {
            c.chat(&structured(&format!("q{i}"))).unwrap();
        }
        assert_eq!(
            c.structured_dialects(),
            vec![
                (completions(&a), StructuredDialect::GuidedJson),
                (completions(&b), StructuredDialect::JsonSchema)
            ]
        );
        // later requests to `a` go straight to its dialect: no more rejections
        let before = a.stats().format_rejections;
        for i in 0..6 {
            c.chat(&structured(&format!("later q{i}"))).unwrap();
        }
        assert_eq!(a.stats().format_rejections, before);
        assert!(a.stats().chat_requests > before);
    }

    /// Two endpoints with different dialects, called from several threads: each endpoint's
    /// dialect is found and kept apart.
    #[test]
    fn dialects_are_remembered_per_endpoint_under_concurrency() {
        let (a, _ra) = server_taking(Some((StructuredDialect::GuidedJson, 400)));
        let (b, _rb) = server_taking(None);
        let c = Arc::new(client_with(
            &[&a.base_url(), &b.base_url()],
            0,
            StructuredDialect::Auto,
        ));
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let c = c.clone();
                std::thread::spawn(move || {
                    for i in 0..4 {
                        c.chat(&structured(&format!("t{t} q{i}"))).unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        // Least-loaded balancing under concurrency need not reach both endpoints; one at a
        // time, ties rotate, so two more requests do (see the sequential test below).
        for i in 0..2 {
            if c.structured_dialects().len() == 2 {
                break;
            }
            c.chat(&structured(&format!("after q{i}"))).unwrap();
        }
        assert_eq!(
            c.structured_dialects(),
            vec![
                (completions(&a), StructuredDialect::GuidedJson),
                (completions(&b), StructuredDialect::JsonSchema)
            ]
        );
        assert_eq!(c.stats().retries, 0);
        let sa = a.stats();
        assert_eq!(
            sa.format_rejections,
            sa.chat_requests - sa.dialects[&StructuredDialect::GuidedJson]
        );
        assert_eq!(b.stats().format_rejections, 0);
    }

    #[test]
    fn serves_replies_probes_and_forced_failures() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let plan = FaultPlan {
            fail_matching: Some("BOOM".into()),
            ..Default::default()
        };
        let mut srv = ScriptedServer::start(l, Arc::new(Echo), plan).unwrap();
        let c = client(&srv.base_url(), 1);
        let r = c
            .chat(&ChatRequest::new(vec![Message::user("hi")]))
            .unwrap();
        assert_eq!(r.text, "echo: hi");
        let e = c
            .chat(&ChatRequest::new(vec![Message::user("BOOM")]))
            .unwrap_err();
        assert!(
            matches!(e, LlmError::RetriesExhausted { attempts: 2, .. }),
            "{e}"
        );
        let st = c.stats();
        assert_eq!((st.retries, st.retry_causes.http_5xx), (1, 1));
        assert!(c
            .probe(Duration::from_secs(2))
            .iter()
            .all(|(_, r)| r.is_ok()));
        let s = srv.stats();
        assert_eq!((s.chat_requests, s.replies, s.faults_total()), (3, 1, 2));
        assert_eq!(s.other_requests, 1);
        srv.stop();
        // nothing listening: the probe names the endpoint and says why (port 9, below the
        // ephemeral range, so no other test's server can take it meanwhile)
        let res = client("http://127.0.0.1:9/v1", 0).probe(Duration::from_secs(2));
        let msg = res[0].1.as_ref().unwrap_err();
        assert!(
            msg.starts_with("no answer from http://127.0.0.1:9/v1/models"),
            "{msg}"
        );
        assert!(msg.to_lowercase().contains("refused"), "{msg}");
    }

    #[test]
    fn mixed_faults_are_survived_with_retries_and_counted_by_cause() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let plan = FaultPlan {
            fault_rate: 0.5,
            seed: 7,
            ..Default::default()
        };
        let srv = ScriptedServer::start(l, Arc::new(Echo), plan).unwrap();
        let c = client(&srv.base_url(), 8);
        let (mut ok, mut failed) = (0, 0);
        for i in 0..40 {
            match c.chat(&ChatRequest::new(vec![Message::user(format!("q{i}"))])) {
                Ok(r) if r.truncated => failed += 1,
                Ok(r) => {
                    assert_eq!(r.text, format!("echo: q{i}"));
                    ok += 1
                }
                Err(_) => failed += 1,
            }
        }
        let s = srv.stats();
        let st = c.stats();
        assert_eq!(ok + failed, 40);
        assert!(s.faults_total() > 10, "{s:?}");
        // every retry has a cause; null content and truncation are not retried
        assert_eq!(st.retries, st.retry_causes.total());
        assert!(
            st.retry_causes.http_5xx > 0 && st.retry_causes.http_429 > 0,
            "{st:?}"
        );
        let n = |f| s.faults.get(&f).copied().unwrap_or(0);
        assert_eq!(st.truncated, n(Fault::Truncated));
        assert_eq!(st.no_content, n(Fault::NullContent));
    }
}
