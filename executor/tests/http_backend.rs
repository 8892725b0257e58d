//! The OpenAI-compatible backend against misbehaving local servers started by the test:
//! 429s, 500s, slow responses beyond the timeout, truncated and invalid bodies, `Retry-After`,
//! `content: null`, empty `choices`, `finish_reason: "length"`, reasoning blocks, and two
//! endpoints of which one fails; and the embeddings client over the same transport.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use memskill_core::{ChatRequest, Llm, LlmError, Message, TextEncoder};
use memskill_executor::{OpenAiBackend, OpenAiConfig, OpenAiEmbedder};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[derive(Clone, Debug)]
enum Behave {
    Ok(&'static str),
    Status(u16),
    Slow(u64),
    Truncated,
    InvalidJson,
    /// 200 with this body.
    Json(&'static str),
    /// This status with a `Retry-After` header of this value.
    Pause(u16, &'static str),
    /// An embeddings reply to the request's `input`, in reverse order with `index` set: text
    /// `t` at position `i` gets `[len(t), i + 1]`.
    Embed,
}

struct Server {
    url: String,
    hits: Arc<AtomicUsize>,
    auth: Arc<Mutex<Vec<String>>>,
    /// Request line and body of every request, in arrival order.
    requests: Arc<Mutex<Vec<(String, String)>>>,
}

/// Serve `script` in order, then `default` forever, on 127.0.0.1:0 (own thread + runtime).
fn start(script: Vec<Behave>, default: Behave) -> Server {
    let hits = Arc::new(AtomicUsize::new(0));
    let auth = Arc::new(Mutex::new(Vec::new()));
    let requests = Arc::new(Mutex::new(Vec::new()));
    let (tx, rx) = std::sync::mpsc::channel();
    let (h2, a2, r2) = (hits.clone(), auth.clone(), requests.clone());
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(listener.local_addr().unwrap()).unwrap();
            let script = Arc::new(script);
            loop {
                let Ok((mut sock, _)) = listener.accept().await else { continue };
                let (script, default, hits, auth, reqs) = (script.clone(), default.clone(), h2.clone(), a2.clone(), r2.clone());
                tokio::spawn(async move {
                    // read headers + body
                    let mut buf = Vec::new();
                    let mut tmp = [0u8; 4096];
                    let header_end = loop {
                        let n = match sock.read(&mut tmp).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => n,
                        };
                        buf.extend_from_slice(&tmp[..n]);
                        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                            break p + 4;
                        }
                    };
                    let head = String::from_utf8_lossy(&buf[..header_end]).to_string();
                    let len: usize = head
                        .lines()
                        .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse().unwrap_or(0)))
                        .unwrap_or(0);
                    while buf.len() < header_end + len {
                        match sock.read(&mut tmp).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buf.extend_from_slice(&tmp[..n]),
                        }
                    }
                    if let Some(a) = head.lines().find_map(|l| l.to_ascii_lowercase().strip_prefix("authorization:").map(|v| v.trim().to_string())) {
                        auth.lock().unwrap().push(a);
                    }
                    let body = String::from_utf8_lossy(&buf[header_end..]).to_string();
                    let line = head.lines().next().unwrap_or("").to_string();
                    reqs.lock().unwrap().push((line, body.clone()));
                    let i = hits.fetch_add(1, Ordering::SeqCst);
                    let b = script.get(i).cloned().unwrap_or(default);
                    let ok_body = |text: &str| {
                        format!(
                            "{{\"id\":\"x\",\"choices\":[{{\"index\":0,\"message\":{{\"role\":\"assistant\",\"content\":{}}}}}],\"usage\":{{\"prompt_tokens\":7,\"completion_tokens\":2}}}}",
                            serde_json::to_string(text).unwrap()
                        )
                    };
                    let resp = match b {
                        Behave::Ok(t) => http(200, &ok_body(t)),
                        Behave::Status(s) => http(s, "{\"error\":\"injected\"}"),
                        Behave::Slow(ms) => {
                            tokio::time::sleep(Duration::from_millis(ms)).await;
                            http(200, &ok_body("too late"))
                        }
                        Behave::Truncated => {
                            let body = ok_body("cut");
                            let full = format!(
                                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}",
                                body.len() + 50,
                                &body[..20]
                            );
                            let _ = sock.write_all(full.as_bytes()).await;
                            let _ = sock.shutdown().await;
                            return;
                        }
                        Behave::InvalidJson => http(200, "{\"choices\": [ {\"message\": "),
                        Behave::Json(body) => http(200, body),
                        Behave::Embed => http(200, &embed_reply(&body)),
                        Behave::Pause(status, after) => {
                            let body = "{\"error\":\"slow down\"}";
                            format!(
                                "HTTP/1.1 {status} X\r\nRetry-After: {after}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                                body.len()
                            )
                        }
                    };
                    let _ = sock.write_all(resp.as_bytes()).await;
                    let _ = sock.shutdown().await;
                });
            }
        });
    });
    let addr = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("server started");
    Server {
        url: format!("http://{addr}/v1"),
        hits,
        auth,
        requests,
    }
}

/// See [`Behave::Embed`].
fn embed_reply(request: &str) -> String {
    let v: serde_json::Value = serde_json::from_str(request).unwrap_or_default();
    let input = v["input"].as_array().cloned().unwrap_or_default();
    let data: Vec<serde_json::Value> = input
        .iter()
        .enumerate()
        .rev()
        .map(|(i, t)| {
            let len = t.as_str().map_or(0, |s| s.len()) as f64;
            serde_json::json!({"object": "embedding", "index": i, "embedding": [len, i as f64 + 1.0]})
        })
        .collect();
    serde_json::json!({"object": "list", "data": data, "model": v["model"]}).to_string()
}

fn http(status: u16, body: &str) -> String {
    format!(
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

fn cfg(urls: Vec<String>, retries: u32) -> OpenAiConfig {
    OpenAiConfig {
        base_urls: urls,
        model: "test-model".into(),
        api_key_envs: vec![
            "MEMSKILL_TEST_KEY_A".into(),
            "MEMSKILL_TEST_KEY_B".into(),
            "MEMSKILL_TEST_UNSET".into(),
        ],
        max_concurrency: 4,
        timeout_secs: 1,
        max_retries: retries,
        backoff_base_ms: 5,
        unhealthy_after: 3,
        cooldown_ms: 60_000,
        max_retry_after_secs: 60,
        structured_dialect: Default::default(),
        ..OpenAiConfig::default()
    }
}

fn req() -> ChatRequest {
    ChatRequest::new(vec![Message::user("hello")]).with_max_tokens(8)
}

/// Run `f` on a thread and fail if it does not finish in time: nothing may hang.
fn bounded<T: Send + 'static>(secs: u64, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(secs))
        .expect("call hung past its bound")
}

#[test]
fn recovers_from_429_500_truncated_invalid_and_slow() {
    std::env::set_var("MEMSKILL_TEST_KEY_A", "key-a");
    std::env::set_var("MEMSKILL_TEST_KEY_B", "key-b");
    let s = start(
        vec![
            Behave::Status(429),
            Behave::Status(500),
            Behave::Truncated,
            Behave::InvalidJson,
            Behave::Slow(2500),
        ],
        Behave::Ok("Paris"),
    );
    let be = OpenAiBackend::new(cfg(vec![s.url.clone()], 6)).unwrap();
    let (r, stats) = bounded(30, move || {
        let r = be.chat(&req());
        (r, be.stats())
    });
    let r = r.expect("succeeds after retries");
    assert_eq!(r.text, "Paris");
    assert_eq!(r.usage.prompt_tokens, 7);
    assert_eq!(s.hits.load(Ordering::SeqCst), 6);
    assert_eq!(stats.retries, 5);
    assert_eq!(stats.attempts, 6);
    assert_eq!(
        (stats.calls, stats.errors, stats.completion_tokens),
        (1, 0, 2)
    );
    let auth = s.auth.lock().unwrap().clone();
    assert!(
        auth.contains(&"bearer key-a".to_string()) && auth.contains(&"bearer key-b".to_string()),
        "{auth:?}"
    );
}

/// A reply longer than `max_reply_bytes` is refused while it is read, naming the endpoint and
/// the key, and not retried (issue 46: a 50 MB reply was kept as one memory).
#[test]
fn an_oversized_reply_is_refused_by_its_limit_and_not_retried() {
    let long: &'static str = Box::leak("x".repeat(4000).into_boxed_str());
    let s = start(vec![], Behave::Ok(long));
    let be = OpenAiBackend::new(OpenAiConfig {
        max_reply_bytes: 1000,
        ..cfg(vec![s.url.clone()], 3)
    })
    .unwrap();
    let r = bounded(30, move || be.chat(&req()));
    let e = r.expect_err("refused").to_string();
    assert!(e.contains("max_reply_bytes") && e.contains(&s.url), "{e}");
    assert_eq!(s.hits.load(Ordering::SeqCst), 1);
    // under the limit, the same reply is read
    let be = OpenAiBackend::new(cfg(vec![s.url.clone()], 0)).unwrap();
    assert_eq!(
        bounded(30, move || be.chat(&req())).unwrap().text.len(),
        4000
    );
}

#[test]
fn final_errors_are_typed() {
    let s = start(vec![], Behave::Status(503));
    let be = OpenAiBackend::new(cfg(vec![s.url.clone()], 2)).unwrap();
    let (r, stats) = bounded(30, move || (be.chat(&req()), be.stats()));
    match r {
        Err(LlmError::RetriesExhausted { attempts: 3, last }) => {
            assert!(
                matches!(*last, LlmError::Http { status: 503, .. }),
                "{last:?}"
            )
        }
        other => panic!("expected RetriesExhausted, got {other:?}"),
    }
    assert_eq!(s.hits.load(Ordering::SeqCst), 3);
    assert_eq!((stats.calls, stats.errors), (1, 1));

    let s = start(vec![], Behave::Slow(3000));
    let be = OpenAiBackend::new(cfg(vec![s.url.clone()], 1)).unwrap();
    let r = bounded(30, move || be.chat(&req()));
    match r {
        Err(LlmError::RetriesExhausted { attempts: 2, last }) => {
            assert!(matches!(*last, LlmError::Timeout(1000)), "{last:?}")
        }
        other => panic!("expected timeouts, got {other:?}"),
    }

    // 400 is not retried
    let s = start(vec![], Behave::Status(400));
    let be = OpenAiBackend::new(cfg(vec![s.url.clone()], 5)).unwrap();
    let r = bounded(30, move || be.chat(&req()));
    assert!(
        matches!(r, Err(LlmError::Http { status: 400, .. })),
        "{r:?}"
    );
    assert_eq!(s.hits.load(Ordering::SeqCst), 1);
}

#[test]
fn dead_endpoint_is_routed_around_under_concurrency() {
    // a port with nothing listening
    let dead = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/v1", l.local_addr().unwrap())
    };
    let s = start(vec![], Behave::Ok("ok"));
    let be = Arc::new(OpenAiBackend::new(cfg(vec![dead, s.url.clone()], 6)).unwrap());
    let results = bounded(60, move || {
        let hs: Vec<_> = (0..8)
            .map(|_| {
                let be = be.clone();
                std::thread::spawn(move || be.chat(&req()).map(|r| r.text))
            })
            .collect();
        hs.into_iter()
            .map(|h| h.join().unwrap())
            .collect::<Vec<_>>()
    });
    assert!(
        results.iter().all(|r| r.as_deref() == Ok("ok")),
        "{results:?}"
    );
    assert_eq!(s.hits.load(Ordering::SeqCst), 8);
}

/// `n` sequential requests; the texts of the replies.
fn sequential(be: OpenAiBackend, n: usize) -> (OpenAiBackend, Vec<String>) {
    bounded(30, move || {
        let texts = (0..n)
            .map(|_| be.chat(&req()).expect("a healthy endpoint answers").text)
            .collect();
        (be, texts)
    })
}

#[test]
fn failing_endpoint_leaves_rotation_and_returns_after_cool_down() {
    // fails twice, then answers
    let a = start(
        vec![Behave::Status(500), Behave::Status(500)],
        Behave::Ok("a"),
    );
    let b = start(vec![], Behave::Ok("b"));
    let mut c = cfg(vec![a.url.clone(), b.url.clone()], 3);
    c.unhealthy_after = 2;
    c.cooldown_ms = 1_500;
    let be = OpenAiBackend::new(c).unwrap();
    let (be, texts) = sequential(be, 10);
    assert!(texts.iter().all(|t| t == "b"), "{texts:?}");
    assert_eq!(a.hits.load(Ordering::SeqCst), 2, "only its two failures");
    assert_eq!(b.hits.load(Ordering::SeqCst), 10);
    let h = be.endpoint_health();
    assert!(!h[0].in_rotation && h[1].in_rotation, "{h:?}");
    assert_eq!(be.stats().cooldowns, 1);
    // after the cool-down one probe goes to it, succeeds, and traffic is shared again
    std::thread::sleep(Duration::from_millis(1_700));
    let (be, texts) = sequential(be, 10);
    assert_eq!(texts[0], "a", "the first request probes the endpoint");
    let back = texts.iter().filter(|t| *t == "a").count();
    assert!(back >= 4, "{texts:?}");
    assert!(be.endpoint_health()[0].in_rotation);
    assert_eq!(a.hits.load(Ordering::SeqCst), 2 + back);
}

#[test]
fn fast_failing_endpoint_stops_attracting_traffic_under_concurrency() {
    // answers 500 at once, so it always has the fewest requests in flight
    let a = start(vec![], Behave::Status(500));
    let b = start(vec![], Behave::Slow(20));
    let b_ok = b.hits.clone();
    let mut c = cfg(vec![a.url.clone(), b.url.clone()], 6);
    c.unhealthy_after = 2;
    let be = Arc::new(OpenAiBackend::new(c).unwrap());
    let be2 = be.clone();
    let results = bounded(60, move || {
        let hs: Vec<_> = (0..4)
            .map(|_| {
                let be = be2.clone();
                std::thread::spawn(move || {
                    (0..10)
                        .map(|_| be.chat(&req()).map(|r| r.text))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        hs.into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect::<Vec<_>>()
    });
    assert!(results.iter().all(|r| r.is_ok()), "{results:?}");
    // at most the failures that took it out plus the requests already on their way
    let a_hits = a.hits.load(Ordering::SeqCst);
    assert!(
        a_hits <= 2 + 4,
        "the failing endpoint got {a_hits} requests"
    );
    assert_eq!(b_ok.load(Ordering::SeqCst), 40);
    assert_eq!(be.stats().cooldowns, 1);
}

#[test]
fn retry_after_is_honoured_capped_and_routed_around() {
    // one endpoint: waits Retry-After 0, then Retry-After 3600 cut to the 1 s cap
    let s = start(
        vec![Behave::Pause(429, "0"), Behave::Pause(503, "3600")],
        Behave::Ok("done"),
    );
    let mut c = cfg(vec![s.url.clone()], 3);
    c.max_retry_after_secs = 1;
    let be = OpenAiBackend::new(c).unwrap();
    let (r, stats) = bounded(20, move || (be.chat(&req()), be.stats()));
    assert_eq!(r.expect("succeeds after the pauses").text, "done");
    assert_eq!(s.hits.load(Ordering::SeqCst), 3);
    assert_eq!((stats.retries, stats.retry_after_ms), (2, 1_000));

    // two endpoints: one asks for an hour's pause (capped at a minute); requests go to the
    // other without waiting (a wait would trip the bound)
    let a = start(vec![], Behave::Pause(429, "3600"));
    let b = start(vec![], Behave::Ok("b"));
    let be = OpenAiBackend::new(cfg(vec![a.url.clone(), b.url.clone()], 3)).unwrap();
    let (be, texts) = sequential(be, 6);
    assert!(texts.iter().all(|t| t == "b"), "{texts:?}");
    assert_eq!(a.hits.load(Ordering::SeqCst), 1);
    assert_eq!(be.stats().retry_after_ms, 60_000);
}

#[test]
fn null_content_and_empty_choices_are_counted_not_retried() {
    for body in [
        r#"{"choices":[{"index":0,"message":{"role":"assistant","content":null,"reasoning_content":"Let me think about this for a very long time"},"finish_reason":"length"}]}"#,
        r#"{"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":0}}"#,
        r#"{"choices":[{"message":{"content":"<think>I must consider"},"finish_reason":"length"}]}"#,
    ] {
        let s = start(vec![], Behave::Json(body));
        let be = OpenAiBackend::new(cfg(vec![s.url.clone()], 5)).unwrap();
        let (r, stats) = bounded(30, move || (be.chat(&req()), be.stats()));
        assert!(
            matches!(r, Err(LlmError::NoContent { .. })),
            "{body}: {r:?}"
        );
        assert_eq!(s.hits.load(Ordering::SeqCst), 1, "{body}: not retried");
        assert_eq!(
            (stats.calls, stats.errors, stats.no_content, stats.retries),
            (1, 1, 1, 0)
        );
    }
}

#[test]
fn truncation_is_reported_and_reasoning_stripped() {
    let s = start(
        vec![
            Behave::Json(
                r#"{"choices":[{"message":{"content":"ACTION: INSERT\nMEMORY_ITEM: Alice moved to Ber"},"finish_reason":"length"}]}"#,
            ),
            Behave::Json(
                r#"{"choices":[{"message":{"content":"<think>\nThe capital of France...\n</think>\n\nParis","reasoning_content":"ignored"},"finish_reason":"stop"}]}"#,
            ),
        ],
        Behave::Ok("x"),
    );
    let be = OpenAiBackend::new(cfg(vec![s.url.clone()], 2)).unwrap();
    let (r1, r2, stats) = bounded(30, move || (be.chat(&req()), be.chat(&req()), be.stats()));
    let r1 = r1.unwrap();
    assert!(r1.truncated);
    assert_eq!(r1.text, "ACTION: INSERT\nMEMORY_ITEM: Alice moved to Ber");
    let r2 = r2.unwrap();
    assert_eq!((r2.text.as_str(), r2.truncated), ("Paris", false));
    assert_eq!((stats.truncated, stats.errors), (1, 0));
}

#[test]
fn dropping_inside_an_async_context_does_not_panic() {
    let s = start(vec![], Behave::Ok("fine"));
    let url = s.url.clone();
    bounded(30, move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let be = OpenAiBackend::new(cfg(vec![url], 1)).unwrap();
            assert_eq!(be.chat(&req()).unwrap().text, "fine");
            drop(be);
        });
        // and on a multi-threaded runtime's worker
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .build()
            .unwrap();
        rt.block_on(async {
            tokio::spawn(async {
                drop(OpenAiBackend::new(OpenAiConfig::default()).unwrap());
            })
            .await
            .unwrap();
        });
    });
}

fn embedder(url: &str, retries: u32, per_request: usize) -> Result<OpenAiEmbedder, LlmError> {
    let be = Arc::new(OpenAiBackend::new(cfg(vec![url.to_string()], retries)).unwrap());
    OpenAiEmbedder::connect(be, per_request)
}

fn unit(v: [f32; 2]) -> Vec<f32> {
    let n = (v[0] * v[0] + v[1] * v[1]).sqrt();
    vec![v[0] / n, v[1] / n]
}

#[test]
fn embeddings_are_batched_posted_as_lists_and_put_back_in_input_order() {
    let s = start(vec![], Behave::Embed);
    let url = s.url.clone();
    let (e, v) = bounded(30, move || {
        let e = embedder(&url, 0, 2).unwrap();
        let v = e.embed(&["a", "bb", "ccc", "dddd", "eeeee"]).unwrap();
        (e, v)
    });
    assert_eq!((e.dim(), e.id().as_str()), (2, "openai:test-model"));
    // text t at position i of its request: [len(t), i + 1], normalised; the server
    // answered in reverse order
    let want = [[1., 1.], [2., 2.], [3., 1.], [4., 2.], [5., 1.]];
    assert_eq!(v.len(), 5);
    for (got, w) in v.iter().zip(want) {
        let w = unit(w);
        assert!(
            got.iter().zip(&w).all(|(a, b)| (a - b).abs() < 1e-6),
            "{got:?} vs {w:?}"
        );
    }
    let reqs = s.requests.lock().unwrap().clone();
    assert_eq!(
        reqs.len(),
        4,
        "the dimension check, then 5 texts 2 to a request"
    );
    let mut inputs = Vec::new();
    for (line, body) in &reqs {
        assert!(line.starts_with("POST /v1/embeddings "), "{line}");
        let b: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(b["model"], "test-model");
        let input: Vec<String> =
            serde_json::from_value(b["input"].clone()).expect("input is a list");
        assert!(!input.is_empty() && input.len() <= 2, "{input:?}");
        inputs.extend(input);
    }
    inputs.sort();
    assert_eq!(
        inputs,
        ["a", "bb", "ccc", "dddd", "dimension check", "eeeee"]
    );
}

#[test]
fn embeddings_retry_a_500_and_count_it() {
    let s = start(vec![Behave::Embed, Behave::Status(500)], Behave::Embed);
    let url = s.url.clone();
    let (v, retries) = bounded(30, move || {
        let e = embedder(&url, 3, 8).unwrap();
        let v = e.embed(&["x", "yy"]);
        (v, e.backend().stats().retries)
    });
    assert_eq!(v.unwrap().len(), 2);
    assert_eq!((s.hits.load(Ordering::SeqCst), retries), (3, 1));
}

#[test]
fn malformed_and_miscounted_embeddings_are_errors_naming_the_endpoint() {
    let s = start(
        vec![Behave::Embed, Behave::InvalidJson, Behave::InvalidJson],
        Behave::Json(r#"{"data":[{"index":0,"embedding":[1,2]}]}"#),
    );
    let url = s.url.clone();
    let (bad_json, miscounted) = bounded(30, move || {
        let e = embedder(&url, 1, 8).unwrap();
        (e.embed(&["x", "y"]), e.embed(&["x", "y"]))
    });
    let endpoint = format!("{}/embeddings", s.url);
    let m = bad_json.unwrap_err().0;
    assert!(
        m.contains(&endpoint) && m.contains("not an embeddings reply"),
        "{m}"
    );
    let m = miscounted.unwrap_err().0;
    assert!(
        m.contains(&endpoint) && m.contains("1 vectors for 2 texts"),
        "{m}"
    );
    // the wrong count is not retried: 1 + 2 + 1 requests
    assert_eq!(s.hits.load(Ordering::SeqCst), 4);
}

#[test]
fn a_down_embeddings_server_fails_fast_naming_the_endpoint() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/v1");
    let u = url.clone();
    let e = bounded(20, move || embedder(&u, 2, 8).err().expect("no server"));
    let m = e.to_string();
    assert!(m.contains(&format!("{url}/embeddings")), "{m}");
}
