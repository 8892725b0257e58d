//! SQLite response cache: read-write stores, replay-only serves or fails typed, off bypasses.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use memskill_core::{ChatRequest, Llm, LlmError, Message};
use memskill_executor::{CacheMode, CachedLlm, ScriptedLlm};

#[test]
fn modes_and_thread_safety() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("sub/cache.sqlite");
    let calls = Arc::new(AtomicUsize::new(0));
    let c2 = calls.clone();
    let inner: Arc<dyn Llm> = Arc::new(ScriptedLlm::new(move |r: &ChatRequest| {
        c2.fetch_add(1, Ordering::SeqCst);
        Ok(format!("echo {}", r.messages[0].content))
    }));
    let rw = Arc::new(CachedLlm::new(inner.clone(), &db, CacheMode::ReadWrite).unwrap());
    let hs: Vec<_> = (0..4)
        .map(|t| {
            let rw = rw.clone();
            std::thread::spawn(move || {
                for i in 0..10 {
                    let r = rw
                        .chat(&ChatRequest::new(vec![Message::user(format!(
                            "q{}",
                            (i + t) % 5
                        ))]))
                        .unwrap();
                    assert_eq!(r.text, format!("echo q{}", (i + t) % 5));
                }
            })
        })
        .collect();
    hs.into_iter().for_each(|h| h.join().unwrap());
    assert_eq!(rw.hits() + rw.misses(), 40);
    let after_rw = calls.load(Ordering::SeqCst);
    // 5 distinct prompts; two threads may miss the same prompt at once (no single-flight),
    // so each prompt reaches the model at most once per thread: 5 to 20 calls, never 40
    // (a bound of 8 failed on a loaded 2-core box with 9)
    assert!((5..=20).contains(&after_rw), "{after_rw}");

    let replay = CachedLlm::new(inner.clone(), &db, CacheMode::ReplayOnly).unwrap();
    let hit = replay
        .chat(&ChatRequest::new(vec![Message::user("q3")]))
        .unwrap();
    assert!(hit.cached && hit.text == "echo q3");
    // different params => different key => typed miss
    let miss = replay.chat(&ChatRequest::new(vec![Message::user("q3")]).with_temperature(0.7));
    assert!(matches!(miss, Err(LlmError::CacheMiss { .. })), "{miss:?}");
    assert_eq!(
        calls.load(Ordering::SeqCst),
        after_rw,
        "replay never calls the backend"
    );

    let off = CachedLlm::new(inner, &db, CacheMode::Off).unwrap();
    assert!(
        !off.chat(&ChatRequest::new(vec![Message::user("q3")]))
            .unwrap()
            .cached
    );
    assert_eq!(calls.load(Ordering::SeqCst), after_rw + 1);
}
