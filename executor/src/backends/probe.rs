//! One-off questions to a model server before a run (`memskill preflight`): its model list
//! (which models it serves, their context windows where it says), and its tokenizer route.
//! Every request has its own deadline, so a server that is down or hangs is an error naming
//! the URL within that time, never a wait. The reading of the answers is pure
//! ([`served_models`], [`TokenizeRoute::read`]); [`Probe`] only sends.

use std::time::Duration;

use serde_json::{json, Value};

/// The `/models` route next to the chat completions route of `base`.
pub fn models_url(base: &str) -> String {
    let b = base.trim().trim_end_matches('/');
    let b = b.strip_suffix("/chat/completions").unwrap_or(b);
    format!("{b}/models")
}

/// The server's root: `base` without `/chat/completions` and a trailing `/v1` (vLLM's
/// `/tokenize` and llama-cpp-python's `/extras/tokenize` live there).
pub fn server_root(base: &str) -> String {
    let b = base.trim().trim_end_matches('/');
    let b = b.strip_suffix("/chat/completions").unwrap_or(b);
    b.strip_suffix("/v1").unwrap_or(b).to_string()
}

/// The first API key set among the variables `envs` names.
pub fn first_api_key(envs: &[String]) -> Option<String> {
    envs.iter()
        .filter_map(|v| std::env::var(v).ok())
        .find(|k| !k.trim().is_empty())
}

/// One model a server lists, with the context window it reports (vLLM: `max_model_len`;
/// others: `context_length`, `max_context_length`, `context_window`, `n_ctx`), if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServedModel {
    pub id: String,
    pub context: Option<u64>,
}

/// The models of a `/models` answer (`{"data": [{"id", ...}]}`); an error when the body
/// has no `data` list.
pub fn served_models(v: &Value) -> Result<Vec<ServedModel>, String> {
    let data = v
        .get("data")
        .and_then(Value::as_array)
        .ok_or("the answer has no `data` list")?;
    let keys = [
        "max_model_len",
        "context_length",
        "max_context_length",
        "context_window",
        "n_ctx",
    ];
    Ok(data
        .iter()
        .filter_map(|m| {
            let id = m.get("id")?.as_str()?.to_string();
            let context = keys.iter().find_map(|k| m.get(*k).and_then(Value::as_u64));
            Some(ServedModel { id, context })
        })
        .collect())
}

/// A server's tokenizer route, found by [`Probe::find_tokenizer`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenizeRoute {
    /// llama-cpp-python: `POST /extras/tokenize/count` `{"input"}` -> `{"count"}`.
    LlamaCppPython,
    /// vLLM: `POST /tokenize` `{"model", "prompt"}` -> `{"count", "tokens"}`.
    Vllm,
    /// llama.cpp's `llama-server`: `POST /tokenize` `{"content"}` -> `{"tokens"}`.
    LlamaServer,
}

impl TokenizeRoute {
    pub const ALL: [TokenizeRoute; 3] = [Self::LlamaCppPython, Self::Vllm, Self::LlamaServer];

    pub fn name(self) -> &'static str {
        match self {
            Self::LlamaCppPython => "POST /extras/tokenize/count (llama-cpp-python)",
            Self::Vllm => "POST /tokenize (vLLM)",
            Self::LlamaServer => "POST /tokenize (llama-server)",
        }
    }

    /// The URL and body that count `text` for `model` on the server at `root`.
    pub fn request(self, root: &str, model: &str, text: &str) -> (String, Value) {
        match self {
            Self::LlamaCppPython => (
                format!("{root}/extras/tokenize/count"),
                json!({"input": text, "model": model}),
            ),
            Self::Vllm => (
                format!("{root}/tokenize"),
                json!({"model": model, "prompt": text, "add_special_tokens": true}),
            ),
            Self::LlamaServer => (format!("{root}/tokenize"), json!({"content": text})),
        }
    }

    /// The token count of an answer: `count`, else the length of `tokens`.
    pub fn read(v: &Value) -> Option<usize> {
        v.get("count")
            .and_then(Value::as_u64)
            .map(|c| c as usize)
            .or_else(|| v.get("tokens").and_then(Value::as_array).map(Vec::len))
    }
}

/// Sends the probes: one request at a time, each within `timeout`.
pub struct Probe {
    runtime: tokio::runtime::Runtime,
    client: reqwest::Client,
    timeout: Duration,
    key: Option<String>,
}

impl Probe {
    /// A prober whose requests carry `key` (as a bearer token) and last at most `timeout`.
    pub fn new(timeout: Duration, key: Option<String>) -> Result<Self, String> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start the probe's runtime: {e}"))?;
        // no idle connections kept: probes are few and far apart (a throughput probe can
        // take longer than a server keeps an idle connection open), and a reused connection
        // the server has closed fails the request
        let client = reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .connect_timeout(timeout)
            .build()
            .map_err(|e| format!("cannot build the probe's HTTP client: {e}"))?;
        Ok(Self {
            runtime,
            client,
            timeout,
            key,
        })
    }

    /// `GET url`, its JSON body; an error (naming `url`) for no answer within the deadline,
    /// a non-2xx status or a body that is not JSON.
    pub fn get_json(&self, url: &str) -> Result<Value, String> {
        match self.send(self.client.get(url), url)? {
            (s, v) if (200..300).contains(&s) => Ok(v),
            (s, v) => Err(format!("{url}: HTTP {s}: {}", short(&v))),
        }
    }

    /// `POST url` with a JSON body: the status and the body (JSON, or the text as a JSON
    /// string); an error naming `url` only when no answer came within the deadline.
    pub fn post_json(&self, url: &str, body: &Value) -> Result<(u16, Value), String> {
        self.send(self.client.post(url).json(body), url)
    }

    fn send(&self, req: reqwest::RequestBuilder, url: &str) -> Result<(u16, Value), String> {
        let req = match &self.key {
            Some(k) => req.bearer_auth(k),
            None => req,
        };
        let timeout = self.timeout;
        let run = async move {
            let resp = req
                .send()
                .await
                .map_err(|e| super::openai::error_chain(&e))?;
            let status = resp.status().as_u16();
            let bytes = resp
                .bytes()
                .await
                .map_err(|e| super::openai::error_chain(&e))?;
            let body = serde_json::from_slice(&bytes)
                .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
            Ok::<_, String>((status, body))
        };
        match self
            .runtime
            .block_on(async { tokio::time::timeout(timeout, run).await })
        {
            Err(_) => Err(format!(
                "no answer from {url} within {:.0} s",
                timeout.as_secs_f64()
            )),
            Ok(Err(e)) => Err(format!("no answer from {url}: {e}")),
            Ok(Ok(r)) => Ok(r),
        }
    }

    /// The first tokenizer route of the server at `base` that counts a short text for
    /// `model`, or None (the server has none, or the probe failed).
    pub fn find_tokenizer(&self, base: &str, model: &str) -> Option<TokenizeRoute> {
        let root = server_root(base);
        TokenizeRoute::ALL.into_iter().find(|r| {
            let (url, body) = r.request(&root, model, "Hello, world.");
            matches!(self.post_json(&url, &body), Ok((s, v)) if (200..300).contains(&s)
                && TokenizeRoute::read(&v).is_some_and(|n| n > 0))
        })
    }

    /// `text`'s tokens on the server at `base` through `route`.
    pub fn count_tokens(
        &self,
        route: TokenizeRoute,
        base: &str,
        model: &str,
        text: &str,
    ) -> Result<usize, String> {
        let (url, body) = route.request(&server_root(base), model, text);
        match self.post_json(&url, &body)? {
            (s, v) if (200..300).contains(&s) => TokenizeRoute::read(&v)
                .ok_or_else(|| format!("{url}: the answer has no `count` or `tokens`")),
            (s, v) => Err(format!("{url}: HTTP {s}: {}", short(&v))),
        }
    }
}

/// The first 200 characters of a body, for an error line.
fn short(v: &Value) -> String {
    let s = match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    s.chars().take(200).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_and_model_lists_are_read() {
        assert_eq!(server_root("http://h:8000/v1/"), "http://h:8000");
        assert_eq!(
            server_root("http://h:8000/v1/chat/completions"),
            "http://h:8000"
        );
        assert_eq!(server_root("http://h:7997"), "http://h:7997");
        assert_eq!(models_url("http://h/v1"), "http://h/v1/models");
        let v = json!({"data": [
            {"id": "a", "max_model_len": 4096},
            {"id": "b", "object": "model"},
            {"object": "model"}
        ]});
        let m = served_models(&v).unwrap();
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].context, Some(4096));
        assert_eq!(m[1].context, None);
        assert!(served_models(&json!({"models": []})).is_err());
        assert_eq!(TokenizeRoute::read(&json!({"count": 7})), Some(7));
        assert_eq!(TokenizeRoute::read(&json!({"tokens": [1, 2]})), Some(2));
        assert_eq!(TokenizeRoute::read(&json!({"detail": "x"})), None);
    }

    #[test]
    fn a_closed_port_is_an_error_naming_the_url_in_time() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        drop(listener);
        let p = Probe::new(Duration::from_secs(3), None).unwrap();
        let url = format!("http://127.0.0.1:{port}/v1/models");
        let t = std::time::Instant::now();
        let e = p.get_json(&url).unwrap_err();
        assert!(e.contains(&url), "{e}");
        assert!(t.elapsed() < Duration::from_secs(10));
        assert_eq!(
            p.find_tokenizer(&format!("http://127.0.0.1:{port}/v1"), "m"),
            None
        );
    }
}
