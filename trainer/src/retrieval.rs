//! Finding memories for questions (answers, ALFWorld tips).
//!
//! The reference keeps two embeddings per memory: the state encoder's (used to retrieve the
//! memories of a span, for the controller's state and the executor's prompt) and the
//! retriever's (`--retriever contriever | dpr | dragon`: used to retrieve memories for a
//! question). Our [`MemoryBank`] stores the state encoder's; with a separate retriever
//! configured (`memory.retriever = "contriever"` etc.) the question side embeds the live
//! memories' texts with the retriever's context model and the questions with its query model
//! (one model for contriever; DPR's and DRAGON+'s two encoders), each through its embedding
//! cache, and ranks them the same way: cosine, best first, ties by lower id. Cosine is what the
//! reference ranks by for all three: it normalises both sides (contriever's and DPR's vectors
//! come normalised; `MemoryBank.retrieve` normalises DRAGON+'s memory vectors and every query).

use anyhow::Result;
use memskill_controller::build_state;
use memskill_core::{MemoryBank, MemoryId, MemoryItem, TextEncoder};

use crate::backends::{embed, Retriever};

/// Cosine top-`k` of `query` over `items` (id, embedding): best first, ties by lower id, items
/// of another length skipped; the ranking of [`MemoryBank::retrieve`].
pub fn rank_cosine(query: &[f32], items: &[(MemoryId, &[f32])], k: usize) -> Vec<(MemoryId, f32)> {
    if k == 0 {
        return Vec::new();
    }
    let dot = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
    let qn = dot(query, query).sqrt();
    let mut scored: Vec<(MemoryId, f32)> = items
        .iter()
        .filter(|(_, e)| e.len() == query.len())
        .map(|(id, e)| {
            let denom = qn * dot(e, e).sqrt();
            let s = if denom > 0.0 {
                dot(query, e) / denom
            } else {
                0.0
            };
            (*id, s)
        })
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    scored.truncate(k);
    scored
}

/// The controller's state for a span, as the reference builds it: the span's (state-encoder)
/// embedding retrieves the top-`k` live memories by cosine over their stored state-encoder
/// embeddings; the state is `[span_emb ; mean of the retrieved embeddings]` (zeros when none).
/// Returns the retrieved memories (best first) and the state.
pub fn span_state<'m>(
    memory: &'m MemoryBank,
    span_emb: &[f32],
    k: usize,
) -> (Vec<&'m MemoryItem>, Vec<f32>) {
    let retrieved: Vec<&MemoryItem> = memory
        .retrieve(span_emb, k)
        .iter()
        .filter_map(|(id, _)| memory.get(*id))
        .collect();
    let embs: Vec<&[f32]> = retrieved.iter().map(|m| m.embedding.as_slice()).collect();
    let state = build_state(span_emb, &embs);
    (retrieved, state)
}

/// The live memories of a bank embedded by a question-side retriever's context model.
pub struct RetrieverIndex {
    retriever: Retriever,
    items: Vec<(MemoryId, Vec<f32>)>,
}

impl RetrieverIndex {
    /// Embeds the live memories of `memory` with `retriever`'s context model.
    pub fn build(memory: &MemoryBank, retriever: Retriever) -> Result<Self> {
        let live: Vec<(MemoryId, &str)> =
            memory.live().map(|m| (m.id, m.content.as_str())).collect();
        let texts: Vec<&str> = live.iter().map(|(_, t)| *t).collect();
        let embs = embed(retriever.context.as_ref(), &texts)?;
        Ok(Self {
            items: live.iter().map(|(id, _)| *id).zip(embs).collect(),
            retriever,
        })
    }

    /// Top-`k` memories for each question (embedded with the query model).
    pub fn search(&self, questions: &[&str], k: usize) -> Result<Vec<Vec<(MemoryId, f32)>>> {
        let q = embed(self.retriever.query.as_ref(), questions)?;
        let items: Vec<(MemoryId, &[f32])> = self
            .items
            .iter()
            .map(|(id, e)| (*id, e.as_slice()))
            .collect();
        Ok(q.iter().map(|q| rank_cosine(q, &items, k)).collect())
    }
}

/// Top-`k` memories of `memory` for each question: with `retriever` (separate question-side
/// models) over its context model's embeddings of the memories' texts, else with `encoder`
/// over the bank's stored embeddings.
pub fn question_hits(
    memory: &MemoryBank,
    encoder: &dyn TextEncoder,
    retriever: Option<&Retriever>,
    questions: &[&str],
    k: usize,
) -> Result<Vec<Vec<(MemoryId, f32)>>> {
    if questions.is_empty() {
        return Ok(Vec::new());
    }
    match retriever {
        Some(r) => RetrieverIndex::build(memory, r.clone())?.search(questions, k),
        None => {
            let q = embed(encoder, questions)?;
            Ok(q.iter().map(|q| memory.retrieve(q, k)).collect())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use memskill_controller::HashingEncoder;
    use memskill_core::{EncoderError, Provenance};
    use std::path::{Path, PathBuf};
    use std::sync::{Arc, Mutex};

    /// An encoder that looks each text up in a table and records what it embedded.
    struct Table {
        name: &'static str,
        vecs: Vec<(&'static str, [f32; 2])>,
        seen: Mutex<Vec<String>>,
    }

    impl TextEncoder for Table {
        fn id(&self) -> String {
            self.name.into()
        }
        fn dim(&self) -> usize {
            2
        }
        fn embed(&self, texts: &[&str]) -> std::result::Result<Vec<Vec<f32>>, EncoderError> {
            texts
                .iter()
                .map(|t| {
                    self.seen.lock().unwrap().push(t.to_string());
                    self.vecs
                        .iter()
                        .find(|(k, _)| k == t)
                        .map(|(_, v)| v.to_vec())
                        .ok_or_else(|| EncoderError(format!("{}: unknown text {t}", self.name)))
                })
                .collect()
        }
    }

    fn prov() -> Provenance {
        Provenance {
            span_id: "s".into(),
            skills: vec![],
            step: 0,
            observed_at: None,
        }
    }

    #[test]
    fn rank_cosine_matches_memory_bank_retrieve() {
        let mut b = MemoryBank::new();
        let vs = [
            [1.0f32, 0.0],
            [0.6, 0.8],
            [0.0, 1.0],
            [0.6, 0.8],
            [-1.0, 0.2],
        ];
        for (i, v) in vs.iter().enumerate() {
            b.insert(format!("m{i}"), v.to_vec(), prov()).unwrap();
        }
        let items: Vec<(MemoryId, &[f32])> =
            b.live().map(|m| (m.id, m.embedding.as_slice())).collect();
        for q in [[0.5f32, 0.5], [1.0, 0.0], [0.0, -1.0]] {
            for k in 0..6 {
                assert_eq!(rank_cosine(&q, &items, k), b.retrieve(&q, k));
            }
        }
    }

    #[test]
    fn a_separate_retriever_ranks_by_its_own_embeddings() {
        // Stored (state-encoder) embeddings point the wrong way; the retriever reads the texts.
        let mut b = MemoryBank::new();
        b.insert("Alice lives in Rome".into(), vec![0.0, 1.0], prov())
            .unwrap();
        b.insert("Bob drinks green tea".into(), vec![1.0, 0.0], prov())
            .unwrap();
        let enc = HashingEncoder::new(2);
        let retr = Retriever::one(Arc::new(HashingEncoder::new(64)));
        let via_retriever =
            question_hits(&b, &enc, Some(&retr), &["where does alice live"], 1).unwrap();
        assert_eq!(via_retriever[0][0].0, 0);
        let stored = question_hits(&b, retr.query.as_ref(), None, &["x"], 2).unwrap();
        assert!(
            stored[0].is_empty(),
            "dimension mismatch: nothing, not a panic"
        );
    }

    #[test]
    fn a_two_model_retriever_embeds_memories_and_questions_each_with_its_own() {
        let mut b = MemoryBank::new();
        for m in ["Alice lives in Rome", "Bob drinks green tea"] {
            b.insert(m.into(), vec![1.0, 0.0], prov()).unwrap();
        }
        // Each model knows only its own side's texts (an unknown text fails): a swap fails.
        let context = Arc::new(Table {
            name: "context",
            vecs: vec![
                ("Alice lives in Rome", [0.0, 1.0]),
                ("Bob drinks green tea", [1.0, 0.0]),
            ],
            seen: Mutex::default(),
        });
        let query = Arc::new(Table {
            name: "query",
            vecs: vec![
                ("where does alice live", [0.1, 3.0]),
                ("who drinks tea", [2.0, 0.1]),
            ],
            seen: Mutex::default(),
        });
        let retr = Retriever::two(context.clone(), query.clone());
        let enc = HashingEncoder::new(2);
        let qs = ["where does alice live", "who drinks tea"];
        let hits = question_hits(&b, &enc, Some(&retr), &qs, 2).unwrap();
        assert_eq!(
            hits.iter().map(|h| h[0].0).collect::<Vec<_>>(),
            vec![0, 1],
            "each question's memory first"
        );
        assert!((hits[0][0].1 - 3.0 / 9.01f32.sqrt()).abs() < 1e-6, "cosine");
        assert_eq!(
            *context.seen.lock().unwrap(),
            vec!["Alice lives in Rome", "Bob drinks green tea"]
        );
        assert_eq!(*query.seen.lock().unwrap(), qs.to_vec());
        // the index keeps the memories' vectors: a second search embeds only questions
        let ix = RetrieverIndex::build(&b, retr).unwrap();
        ix.search(&["who drinks tea"], 1).unwrap();
        assert_eq!(context.seen.lock().unwrap().len(), 4);
        assert_eq!(query.seen.lock().unwrap().len(), 3);
    }

    #[test]
    fn missing_retriever_and_encoder_assets_are_named() {
        let cfg = crate::config::MemoryConfig {
            retriever: crate::config::RetrieverKind::Contriever,
            retriever_path: Some("/nonexistent/contriever".into()),
            ..Default::default()
        };
        let e = crate::backends::build_retriever(&cfg, &mut Vec::new())
            .err()
            .expect("missing folder");
        let msg = format!("{e:#}");
        assert!(
            msg.contains("memory.retriever") && msg.contains("/nonexistent/contriever"),
            "{msg}"
        );
        // dpr / dragon: the context encoder's folder, then the query encoder's, by key
        let assets = memskill_controller::default_assets_dir();
        for (kind, ctx, query) in [
            (
                crate::config::RetrieverKind::Dpr,
                "dpr-ctx_encoder-single-nq-base",
                "dpr-question_encoder-single-nq-base",
            ),
            (
                crate::config::RetrieverKind::Dragon,
                "dragon-plus-context-encoder",
                "dragon-plus-query-encoder",
            ),
        ] {
            let mut cfg = crate::config::MemoryConfig {
                retriever: kind,
                ..Default::default()
            };
            let dirs: Vec<(&str, PathBuf)> = crate::backends::retriever_dirs(&cfg)
                .into_iter()
                .map(|(k, d)| (k, d.unwrap()))
                .collect();
            assert_eq!(
                dirs,
                vec![
                    ("memory.retriever_path", assets.join(ctx)),
                    ("memory.retriever_query_path", assets.join(query))
                ]
            );
            cfg.retriever_query_path = Some("/nonexistent/query".into());
            let d = crate::backends::retriever_dirs(&cfg);
            assert_eq!(d[1].1.as_ref().unwrap(), Path::new("/nonexistent/query"));
            cfg.retriever_path = Some("/nonexistent/context".into());
            let msg = format!(
                "{:#}",
                crate::backends::build_retriever(&cfg, &mut Vec::new())
                    .err()
                    .expect("missing")
            );
            assert!(
                msg.contains("/nonexistent/context") && msg.contains(kind.name()),
                "{msg}"
            );
        }
        assert!(crate::backends::build_retriever(
            &crate::config::MemoryConfig::default(),
            &mut Vec::new()
        )
        .unwrap()
        .is_none());
        let enc = crate::config::EncoderConfig {
            kind: crate::config::EncoderKind::Qwen3,
            path: Some("/nonexistent/Qwen3-Embedding-0.6B".into()),
            ..Default::default()
        };
        let msg = format!(
            "{:#}",
            crate::backends::build_encoder(&enc, &mut Vec::new())
                .err()
                .expect("missing")
        );
        assert!(
            msg.contains("Qwen3-Embedding") && msg.contains("config.json"),
            "{msg}"
        );
    }
}
