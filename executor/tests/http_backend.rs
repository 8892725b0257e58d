//! The OpenAI-compatible backend against a misbehaving local server started by the test:
//! 429s, 500s, slow responses beyond the timeout, truncated and invalid bodies.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use memskill_core::{ChatRequest, Llm, LlmError, Message};
use memskill_executor::{OpenAiBackend, OpenAiConfig};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[derive(Clone, Debug)]
enum Behave {
    Ok(&'static str),
    Status(u16),
    Slow(u64),
    Truncated,
    InvalidJson,
}

struct Server {
    url: String,
    hits: Arc<AtomicUsize>,
    auth: Arc<Mutex<Vec<String>>>,
}

/// Serve `script` in order, then `default` forever, on 127.0.0.1:0 (own thread + runtime).
fn start(script: Vec<Behave>, default: Behave) -> Server {
    let hits = Arc::new(AtomicUsize::new(0));
    let auth = Arc::new(Mutex::new(Vec::new()));
    let (tx, rx) = std::sync::mpsc::channel();
    let (h2, a2) = (hits.clone(), auth.clone());
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
                let (script, default, hits, auth) = (script.clone(), default.clone(), h2.clone(), a2.clone());
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
    }
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
