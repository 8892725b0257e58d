//! Text embeddings from an OpenAI-compatible server (`POST <base>/embeddings`: vLLM
//! `--task embed`, Hugging Face TEI, infinity-emb, Ollama, llama.cpp `--embedding`), as a
//! [`TextEncoder`].
//!
//! Transport, concurrency bound, endpoint choice and health, retries with backoff and the
//! start-up probe are the chat backend's ([`OpenAiBackend`]): this module only builds the
//! request and reads the reply. Texts go `texts_per_request` to a request, the requests of one
//! call in parallel (at most `max_concurrency` in flight). A reply is checked before use: one
//! vector per text, each `index` once, all of one dimension, finite values, not all zero; it
//! is put back in input order by `index`. Vectors are L2-normalised here, as the local
//! encoders return them (servers differ in whether they normalise; normalising twice changes
//! nothing).

use std::sync::Arc;

use memskill_core::{EncoderError, LlmError, TextEncoder};
use serde::Deserialize;

use super::openai::OpenAiBackend;

/// The embeddings route of a base URL, the way the chat backend builds its route:
/// `http://host:8000/v1` -> `http://host:8000/v1/embeddings` (a base already ending in
/// `/embeddings` or `/chat/completions` is taken as the `/v1` folder it names).
pub fn embeddings_url(base: &str) -> String {
    let b = base.trim().trim_end_matches('/');
    if b.ends_with("/embeddings") {
        return b.to_string();
    }
    let b = b.strip_suffix("/chat/completions").unwrap_or(b);
    format!("{b}/embeddings")
}

#[derive(Deserialize)]
struct WireEmbeddings {
    data: Vec<WireEmbedding>,
}

#[derive(Deserialize)]
struct WireEmbedding {
    /// Position of the text in `input`; absent = the position in `data`.
    #[serde(default)]
    index: Option<usize>,
    embedding: Vec<f64>,
}

/// Read a 2xx body answering `n` texts: the vectors in input order, L2-normalised. An
/// unreadable body is `BadResponse` (retried, like a chat reply); a readable body of the wrong
/// shape (count, an `index` out of range or repeated, empty or unequal dimensions, a value
/// that is not finite in f32, a zero vector) is an error naming the endpoint that is not
/// retried.
pub fn read_embeddings(endpoint: &str, bytes: &[u8], n: usize) -> Result<Vec<Vec<f32>>, LlmError> {
    let wire: WireEmbeddings = serde_json::from_slice(bytes).map_err(|e| LlmError::BadResponse {
        endpoint: endpoint.to_string(),
        message: format!(
            "not an embeddings reply ({} bytes; want {{\"data\": [{{\"index\", \"embedding\"}}]}}): {e}",
            bytes.len()
        ),
    })?;
    let bad = |m: String| LlmError::Other(format!("embedding server {endpoint}: {m}"));
    if wire.data.len() != n {
        return Err(bad(format!("{} vectors for {n} texts", wire.data.len())));
    }
    let mut out: Vec<Option<Vec<f32>>> = vec![None; n];
    let mut dim = None;
    for (pos, item) in wire.data.into_iter().enumerate() {
        let i = item.index.unwrap_or(pos);
        if i >= n || out[i].is_some() {
            return Err(bad(format!(
                "`index` {i} (entry {pos}) is out of range or repeated for {n} texts"
            )));
        }
        let d = item.embedding.len();
        if d == 0 || dim.is_some_and(|x| x != d) {
            return Err(bad(format!(
                "entry {pos} has dimension {d}, the others {}",
                dim.unwrap_or(d)
            )));
        }
        dim = Some(d);
        if let Some(j) = item.embedding.iter().position(|x| !(*x as f32).is_finite()) {
            return Err(bad(format!("entry {pos}: value {j} is not finite")));
        }
        // a zero vector has no direction: normalised it would score 0 against everything and
        // pass for a real embedding (a server returning zeros trained to reward 1.0, issue 46)
        if item.embedding.iter().all(|x| *x == 0.0) {
            return Err(bad(format!("entry {pos} is the zero vector")));
        }
        out[i] = Some(l2_normalised(&item.embedding));
    }
    Ok(out.into_iter().flatten().collect())
}

/// `v / max(|v|, 1e-12)` in f32 (what `torch.nn.functional.normalize` does).
fn l2_normalised(v: &[f64]) -> Vec<f32> {
    let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt().max(1e-12);
    v.iter().map(|x| (x / norm) as f32).collect()
}

/// A [`TextEncoder`] backed by an OpenAI-compatible embeddings server.
pub struct OpenAiEmbedder {
    backend: Arc<OpenAiBackend>,
    urls: Arc<Vec<String>>,
    texts_per_request: usize,
    dim: usize,
}

impl OpenAiEmbedder {
    /// Connect through `backend` (its `model` is the served model): learn the vectors'
    /// dimension from one short text. `texts_per_request` must be >= 1. The error of a server
    /// that does not answer names its endpoints.
    pub fn connect(
        backend: Arc<OpenAiBackend>,
        texts_per_request: usize,
    ) -> Result<Self, LlmError> {
        if texts_per_request == 0 {
            return Err(LlmError::Other(
                "embedding server: texts_per_request must be >= 1".into(),
            ));
        }
        let urls: Vec<String> = backend
            .config()
            .base_urls
            .iter()
            .map(|b| embeddings_url(b))
            .collect();
        let mut e = Self {
            backend,
            urls: Arc::new(urls),
            texts_per_request,
            dim: 0,
        };
        let v = e.request(&["dimension check"])?;
        e.dim = v[0].len();
        Ok(e)
    }

    pub fn backend(&self) -> &Arc<OpenAiBackend> {
        &self.backend
    }

    /// Every text of `texts`, `texts_per_request` to a request, the requests in parallel.
    fn request(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, LlmError> {
        let model = self.backend.config().model.clone();
        let bodies: Vec<(usize, serde_json::Value)> = texts
            .chunks(self.texts_per_request)
            .map(|c| {
                let body = serde_json::json!({"model": model, "input": c});
                (c.len(), body)
            })
            .collect();
        let (backend, urls) = (&self.backend, &self.urls);
        self.backend.block_on(async move {
            let tasks: Vec<_> = bodies
                .into_iter()
                .map(|(n, body)| {
                    let (b, urls) = (backend.clone(), urls.clone());
                    tokio::spawn(async move {
                        let read = move |ep: &str, bytes: &[u8]| read_embeddings(ep, bytes, n);
                        b.post(&urls, &body, &read).await
                    })
                })
                .collect();
            let mut out = Vec::with_capacity(texts.len());
            for t in tasks {
                let part = t.await.map_err(|e| {
                    LlmError::Other(format!("embedding request task failed: {e}"))
                })??;
                out.extend(part);
            }
            Ok::<_, LlmError>(out)
        })
    }
}

impl TextEncoder for OpenAiEmbedder {
    /// `openai:<served model>`: the embedding cache never mixes two models' vectors.
    fn id(&self) -> String {
        format!("openai:{}", self.backend.config().model)
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EncoderError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let v = self.request(texts).map_err(|e| {
            EncoderError(format!("embedding server ({}): {e}", self.urls.join(", ")))
        })?;
        if let Some(bad) = v.iter().find(|x| x.len() != self.dim) {
            return Err(EncoderError(format!(
                "embedding server ({}) returned dimension {}, {} before",
                self.urls.join(", "),
                bad.len(),
                self.dim
            )));
        }
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_follow_the_chat_backend() {
        for (base, want) in [
            ("http://h:8000/v1", "http://h:8000/v1/embeddings"),
            (" http://h:8000/v1/ ", "http://h:8000/v1/embeddings"),
            ("http://h/v1/embeddings", "http://h/v1/embeddings"),
            ("http://h/v1/chat/completions", "http://h/v1/embeddings"),
        ] {
            assert_eq!(embeddings_url(base), want, "{base}");
        }
    }

    #[test]
    fn replies_are_ordered_by_index_normalised_and_checked() {
        let ep = "http://x/v1/embeddings";
        let body =
            r#"{"data":[{"index":1,"embedding":[0,2]},{"index":0,"embedding":[3,4]}],"model":"m"}"#;
        let v = read_embeddings(ep, body.as_bytes(), 2).unwrap();
        assert_eq!(v, vec![vec![0.6, 0.8], vec![0.0, 1.0]]);
        // no `index`: the order of `data`
        let v = read_embeddings(
            ep,
            br#"{"data":[{"embedding":[1,0]},{"embedding":[0,5]}]}"#,
            2,
        )
        .unwrap();
        assert_eq!(v, vec![vec![1.0, 0.0], vec![0.0, 1.0]]);
        for (body, want) in [
            (
                r#"{"data":[{"index":0,"embedding":[1]}]}"#,
                "1 vectors for 2 texts",
            ),
            (
                r#"{"data":[{"index":0,"embedding":[1]},{"index":0,"embedding":[1]}]}"#,
                "`index` 0 (entry 1)",
            ),
            (
                r#"{"data":[{"index":0,"embedding":[1]},{"index":5,"embedding":[1]}]}"#,
                "`index` 5",
            ),
            (
                r#"{"data":[{"index":0,"embedding":[1,2]},{"index":1,"embedding":[1]}]}"#,
                "entry 1 has dimension 1, the others 2",
            ),
            (
                r#"{"data":[{"index":0,"embedding":[]},{"index":1,"embedding":[]}]}"#,
                "dimension 0",
            ),
            (
                r#"{"data":[{"index":0,"embedding":[1e300]},{"index":1,"embedding":[1]}]}"#,
                "not finite",
            ),
            (
                r#"{"data":[{"index":0,"embedding":[1,0]},{"index":1,"embedding":[0,0]}]}"#,
                "entry 1 is the zero vector",
            ),
        ] {
            match read_embeddings(ep, body.as_bytes(), 2) {
                Err(LlmError::Other(m)) => {
                    assert!(m.contains(ep) && m.contains(want), "{m:?} lacks {want:?}")
                }
                other => panic!("{body}: {other:?}"),
            }
        }
        for body in [
            "{\"data\": [",
            "{\"error\":\"busy\"}",
            "[]",
            "{\"data\":[{\"embedding\":\"AAAA\"}]}",
        ] {
            assert!(
                matches!(
                    read_embeddings(ep, body.as_bytes(), 1),
                    Err(LlmError::BadResponse { .. })
                ),
                "{body}"
            );
        }
    }
}
