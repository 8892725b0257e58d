//! Finding memories for questions (answers, ALFWorld tips).
//!
//! The reference keeps two embeddings per memory: the state encoder's (used to retrieve the
//! memories of a span, for the controller's state and the executor's prompt) and the
//! retriever's (`--retriever contriever`: used to retrieve memories for a question). Our
//! [`MemoryBank`] stores the state encoder's; with a separate retriever configured
//! (`memory.retriever = "contriever"`) the question side embeds the live memories' texts with
//! the retriever (through its embedding cache) and ranks them the same way: cosine, best first,
//! ties by lower id.

use std::sync::Arc;

use anyhow::Result;
use memskill_controller::build_state;
use memskill_core::{MemoryBank, MemoryId, MemoryItem, TextEncoder};

use crate::backends::embed;

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

/// The live memories of a bank embedded by a question-side retriever.
pub struct RetrieverIndex {
    retriever: Arc<dyn TextEncoder>,
    items: Vec<(MemoryId, Vec<f32>)>,
}

impl RetrieverIndex {
    /// Embeds the live memories of `memory` with `retriever`.
    pub fn build(memory: &MemoryBank, retriever: Arc<dyn TextEncoder>) -> Result<Self> {
        let live: Vec<(MemoryId, &str)> =
            memory.live().map(|m| (m.id, m.content.as_str())).collect();
        let texts: Vec<&str> = live.iter().map(|(_, t)| *t).collect();
        let embs = embed(retriever.as_ref(), &texts)?;
        Ok(Self {
            items: live.iter().map(|(id, _)| *id).zip(embs).collect(),
            retriever,
        })
    }

    /// Top-`k` memories for each question.
    pub fn search(&self, questions: &[&str], k: usize) -> Result<Vec<Vec<(MemoryId, f32)>>> {
        let q = embed(self.retriever.as_ref(), questions)?;
        let items: Vec<(MemoryId, &[f32])> = self
            .items
            .iter()
            .map(|(id, e)| (*id, e.as_slice()))
            .collect();
        Ok(q.iter().map(|q| rank_cosine(q, &items, k)).collect())
    }
}

/// Top-`k` memories of `memory` for each question: with `retriever` (a separate question-side
/// model) over its embeddings of the memories' texts, else with `encoder` over the bank's
/// stored embeddings.
pub fn question_hits(
    memory: &MemoryBank,
    encoder: &dyn TextEncoder,
    retriever: Option<&Arc<dyn TextEncoder>>,
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
    use memskill_core::Provenance;

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
        let retr: Arc<dyn TextEncoder> = Arc::new(HashingEncoder::new(64));
        let via_retriever =
            question_hits(&b, &enc, Some(&retr), &["where does alice live"], 1).unwrap();
        assert_eq!(via_retriever[0][0].0, 0);
        let stored = question_hits(&b, &retr, None, &["x"], 2).unwrap();
        assert!(
            stored[0].is_empty(),
            "dimension mismatch: nothing, not a panic"
        );
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
