//! SQLite response cache in front of any [`Llm`], for cheap reruns and offline replay.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use memskill_core::{sha256_hex, ChatRequest, ChatResponse, Llm, LlmError, Usage};
use rusqlite::{params, Connection, OptionalExtension};
use serde::{Deserialize, Serialize};

/// How [`CachedLlm`] uses its cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CacheMode {
    /// Always call the inner backend; never read or write the cache.
    Off,
    /// Serve hits from the cache; call the inner backend on misses and store the answer.
    ReadWrite,
    /// Serve only from the cache; a miss is `LlmError::CacheMiss` (offline, bit-identical replays).
    ReplayOnly,
}

impl std::str::FromStr for CacheMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().replace('_', "-").as_str() {
            "off" => Ok(Self::Off),
            "read-write" | "readwrite" | "rw" => Ok(Self::ReadWrite),
            "replay-only" | "replayonly" | "replay" => Ok(Self::ReplayOnly),
            o => Err(format!(
                "unknown cache mode {o:?}: expected off, read-write or replay-only"
            )),
        }
    }
}

/// An [`Llm`] wrapper with a SQLite response cache. Safe to share between threads.
pub struct CachedLlm {
    inner: Arc<dyn Llm>,
    conn: Mutex<Connection>,
    path: PathBuf,
    mode: CacheMode,
    hits: AtomicU64,
    misses: AtomicU64,
    /// Replies not stored because they carry a secret value.
    secret_skips: AtomicU64,
}

/// The cache key of a request for a backend: sha256 over the backend id, messages and
/// every sampling parameter, the seed as sent (the request's, else `default_seed`, the
/// backend's [`Llm::default_seed`]).
pub fn cache_key(backend_id: &str, req: &ChatRequest, default_seed: Option<u64>) -> String {
    let mut v = serde_json::json!({
        "backend": backend_id,
        "messages": req.messages,
        "temperature": req.temperature,
        "top_p": req.top_p,
        "max_tokens": req.max_tokens,
        "stop": req.stop,
        "seed": req.seed.or(default_seed),
    });
    // a structured request is another request (keys of free requests are unchanged)
    if let (Some(rs), Some(o)) = (&req.response_schema, v.as_object_mut()) {
        o.insert("response_schema".into(), serde_json::json!(rs));
    }
    sha256_hex(v.to_string())
}

fn db_err(path: &Path, e: rusqlite::Error) -> LlmError {
    LlmError::Other(format!("response cache {}: {e}", path.display()))
}

impl CachedLlm {
    /// Open (or create) the cache database at `sqlite_path`.
    pub fn new(
        inner: Arc<dyn Llm>,
        sqlite_path: impl AsRef<Path>,
        mode: CacheMode,
    ) -> Result<Self, LlmError> {
        let path = sqlite_path.as_ref().to_path_buf();
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| {
                LlmError::Other(format!(
                    "response cache {}: cannot create directory: {e}",
                    path.display()
                ))
            })?;
        }
        let conn = Connection::open(&path).map_err(|e| db_err(&path, e))?;
        conn.busy_timeout(std::time::Duration::from_secs(30))
            .map_err(|e| db_err(&path, e))?;
        conn.execute_batch(
            "PRAGMA journal_mode=WAL;
             CREATE TABLE IF NOT EXISTS responses (
                key TEXT PRIMARY KEY,
                backend TEXT NOT NULL,
                request TEXT NOT NULL,
                text TEXT NOT NULL,
                prompt_tokens INTEGER NOT NULL,
                completion_tokens INTEGER NOT NULL,
                latency_ms INTEGER NOT NULL,
                truncated INTEGER NOT NULL DEFAULT 0
             );",
        )
        .map_err(|e| db_err(&path, e))?;
        // caches written before `truncated` existed: add the column (their replies count as
        // complete, as they were read then)
        if conn
            .prepare("SELECT truncated FROM responses LIMIT 0")
            .is_err()
        {
            conn.execute_batch(
                "ALTER TABLE responses ADD COLUMN truncated INTEGER NOT NULL DEFAULT 0;",
            )
            .map_err(|e| db_err(&path, e))?;
        }
        Ok(Self {
            inner,
            conn: Mutex::new(conn),
            path,
            mode,
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            secret_skips: AtomicU64::new(0),
        })
    }

    pub fn mode(&self) -> CacheMode {
        self.mode
    }
    pub fn hits(&self) -> u64 {
        self.hits.load(Ordering::Relaxed)
    }
    pub fn misses(&self) -> u64 {
        self.misses.load(Ordering::Relaxed)
    }
    /// Replies left out of the cache because they carry a secret value (an API key, a token,
    /// a private key, a card number, "password is ..."): the cache file never holds one, so a
    /// replay-only run misses such a reply.
    pub fn secret_skips(&self) -> u64 {
        self.secret_skips.load(Ordering::Relaxed)
    }

    fn lookup(&self, key: &str) -> Result<Option<ChatResponse>, LlmError> {
        let conn = self
            .conn
            .lock()
            .map_err(|_| LlmError::Other("response cache mutex poisoned".into()))?;
        conn.query_row(
            "SELECT text, prompt_tokens, completion_tokens, truncated FROM responses WHERE key = ?1",
            params![key],
            |r| {
                Ok(ChatResponse {
                    text: r.get(0)?,
                    usage: Usage {
                        prompt_tokens: r.get::<_, i64>(1)? as u64,
                        completion_tokens: r.get::<_, i64>(2)? as u64,
                    },
                    latency_ms: 0,
                    cached: true,
                    truncated: r.get::<_, i64>(3)? != 0,
                })
            },
        )
        .optional()
        .map_err(|e| db_err(&self.path, e))
    }

    fn store(&self, key: &str, req: &ChatRequest, resp: &ChatResponse) -> Result<(), LlmError> {
        let conn = self
            .conn
            .lock()
            .map_err(|_| LlmError::Other("response cache mutex poisoned".into()))?;
        // the request is kept for inspection only (the key is a hash): its secret values are
        // redacted, as in every other file a run writes
        let mut shown = req.clone();
        for m in &mut shown.messages {
            m.content = memskill_guard::redact_secrets(&m.content);
        }
        let request = serde_json::to_string(&shown).unwrap_or_default();
        conn.execute(
            "INSERT OR REPLACE INTO responses (key, backend, request, text, prompt_tokens, completion_tokens, latency_ms, truncated)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                key,
                self.inner.id(),
                request,
                resp.text,
                resp.usage.prompt_tokens as i64,
                resp.usage.completion_tokens as i64,
                resp.latency_ms as i64,
                resp.truncated as i64
            ],
        )
        .map_err(|e| db_err(&self.path, e))?;
        Ok(())
    }
}

impl Llm for CachedLlm {
    fn id(&self) -> String {
        self.inner.id()
    }

    fn default_seed(&self) -> Option<u64> {
        self.inner.default_seed()
    }

    fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, LlmError> {
        if self.mode == CacheMode::Off {
            return self.inner.chat(req);
        }
        let key = cache_key(&self.inner.id(), req, self.inner.default_seed());
        if let Some(hit) = self.lookup(&key)? {
            self.hits.fetch_add(1, Ordering::Relaxed);
            return Ok(hit);
        }
        self.misses.fetch_add(1, Ordering::Relaxed);
        if self.mode == CacheMode::ReplayOnly {
            return Err(LlmError::CacheMiss { key });
        }
        let resp = self.inner.chat(req)?;
        if memskill_guard::find_secrets(&resp.text).is_empty() {
            self.store(&key, req, &resp)?;
        } else {
            self.secret_skips.fetch_add(1, Ordering::Relaxed);
        }
        Ok(resp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use memskill_core::Message;

    struct Cut;
    impl Llm for Cut {
        fn id(&self) -> String {
            "cut".into()
        }
        fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, LlmError> {
            Ok(ChatResponse {
                text: format!("half of {}", req.messages[0].content),
                usage: Usage::default(),
                latency_ms: 1,
                cached: false,
                truncated: true,
            })
        }
    }

    #[test]
    fn truncation_survives_the_cache_and_old_caches_open() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("old.sqlite");
        // a cache written before the `truncated` column existed
        let old = Connection::open(&db).unwrap();
        old.execute_batch(
            "CREATE TABLE responses (key TEXT PRIMARY KEY, backend TEXT NOT NULL,
               request TEXT NOT NULL, text TEXT NOT NULL, prompt_tokens INTEGER NOT NULL,
               completion_tokens INTEGER NOT NULL, latency_ms INTEGER NOT NULL);",
        )
        .unwrap();
        let before = ChatRequest::new(vec![Message::user("old")]);
        old.execute(
            "INSERT INTO responses VALUES (?1, 'cut', '{}', 'stored', 1, 2, 3)",
            params![cache_key("cut", &before, None)],
        )
        .unwrap();
        drop(old);
        let rw = CachedLlm::new(Arc::new(Cut), &db, CacheMode::ReadWrite).unwrap();
        let hit = rw.chat(&before).unwrap();
        assert!(hit.cached && !hit.truncated && hit.text == "stored");
        let req = ChatRequest::new(vec![Message::user("new")]);
        assert!(rw.chat(&req).unwrap().truncated);
        drop(rw);
        let replay = CachedLlm::new(Arc::new(Cut), &db, CacheMode::ReplayOnly).unwrap();
        let again = replay.chat(&req).unwrap();
        assert!(again.cached && again.truncated, "{again:?}");
    }

    /// Echoes the prompt; sends its seed (if any) with every request.
    struct Echo(Option<u64>);
    impl Llm for Echo {
        fn id(&self) -> String {
            "echo".into()
        }
        fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, LlmError> {
            Ok(ChatResponse {
                text: format!("you said: {}", req.messages[0].content),
                usage: Usage::default(),
                latency_ms: 1,
                cached: false,
                truncated: false,
            })
        }
        fn default_seed(&self) -> Option<u64> {
            self.0
        }
    }

    #[test]
    fn the_backends_own_seed_is_part_of_the_key() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("c.sqlite");
        let req = ChatRequest::new(vec![Message::user("q")]);
        let rw = CachedLlm::new(Arc::new(Echo(None)), &db, CacheMode::ReadWrite).unwrap();
        rw.chat(&req).unwrap();
        drop(rw);
        // a reply cached without a seed is not the reply to the same request sent with one
        let seeded = CachedLlm::new(Arc::new(Echo(Some(42))), &db, CacheMode::ReplayOnly).unwrap();
        assert!(matches!(seeded.chat(&req), Err(LlmError::CacheMiss { .. })));
        let unseeded = CachedLlm::new(Arc::new(Echo(None)), &db, CacheMode::ReplayOnly).unwrap();
        assert!(unseeded.chat(&req).unwrap().cached);
    }

    #[test]
    fn no_secret_value_reaches_the_cache_file() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("c.sqlite");
        let key = "sk-proj-9f8e7d6c5b4a39281706";
        let rw = CachedLlm::new(Arc::new(Echo(None)), &db, CacheMode::ReadWrite).unwrap();
        let secret = ChatRequest::new(vec![Message::user(format!("my key is {key}"))]);
        assert!(
            rw.chat(&secret).unwrap().text.contains(key),
            "the caller gets the reply"
        );
        let plain = ChatRequest::new(vec![Message::user("hello")]);
        rw.chat(&plain).unwrap();
        assert_eq!(rw.secret_skips(), 1);
        drop(rw);
        let bytes = std::fs::read(&db).unwrap();
        let needle = key.as_bytes();
        assert!(
            !bytes.windows(needle.len()).any(|w| w == needle),
            "the key is in {}",
            db.display()
        );
        let replay = CachedLlm::new(Arc::new(Echo(None)), &db, CacheMode::ReplayOnly).unwrap();
        assert!(replay.chat(&plain).unwrap().cached);
        assert!(matches!(
            replay.chat(&secret),
            Err(LlmError::CacheMiss { .. })
        ));
    }
}
