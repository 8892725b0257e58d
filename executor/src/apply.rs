//! Applying parsed actions to a memory bank.

use memskill_core::{
    normalize_ws, ActionKind, MemoryAction, MemoryBank, MemoryId, Provenance, TextEncoder,
};
use serde::Serialize;

use crate::ExecutorError;

/// What [`apply_actions`] did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ApplyReport {
    /// Kinds of the actions that took effect, in order (NOOP included).
    pub executed: Vec<ActionKind>,
    pub inserted: Vec<MemoryId>,
    pub updated: Vec<MemoryId>,
    pub deleted: Vec<MemoryId>,
    /// INSERTs skipped because an identical (whitespace-normalised) live memory exists.
    pub skipped_duplicates: usize,
    /// Actions that could not be applied, and why.
    pub problems: Vec<String>,
}

enum Planned {
    Insert { text_idx: usize },
    Update { id: MemoryId, text_idx: usize },
    Delete { id: MemoryId },
    Noop,
}

fn resolve(
    index: usize,
    retrieved_ids: &[MemoryId],
    bank: &MemoryBank,
    what: &str,
    problems: &mut Vec<String>,
) -> Option<MemoryId> {
    let Some(&id) = retrieved_ids.get(index) else {
        problems.push(format!(
            "{what} index {index}: only {} memories were retrieved",
            retrieved_ids.len()
        ));
        return None;
    };
    match bank.get(id) {
        Some(m) if m.is_live() => Some(id),
        Some(_) => {
            problems.push(format!(
                "{what} index {index}: memory {id} is already deleted"
            ));
            None
        }
        None => {
            problems.push(format!("{what} index {index}: memory {id} does not exist"));
            None
        }
    }
}

/// Apply `actions` (indices into `retrieved_ids`) to `bank`, recording `prov` on every write.
///
/// INSERT skips exact whitespace-normalised duplicates of live memories (and of earlier
/// inserts in the same batch); UPDATE keeps the previous text in the item's history; DELETE
/// tombstones. New and updated texts are embedded in one batched `encoder.embed` call.
/// Per-action failures are reported in `problems`; only encoder failures and embedding
/// dimension mismatches are errors.
pub fn apply_actions(
    bank: &mut MemoryBank,
    actions: &[MemoryAction],
    retrieved_ids: &[MemoryId],
    encoder: &dyn TextEncoder,
    prov: &Provenance,
) -> Result<ApplyReport, ExecutorError> {
    let mut report = ApplyReport::default();
    let mut texts: Vec<String> = Vec::new();
    let mut plan: Vec<Planned> = Vec::new();
    let mut batch_keys: Vec<String> = Vec::new();
    let mut deleted_in_batch: Vec<MemoryId> = Vec::new();
    for a in actions {
        match a {
            MemoryAction::Insert { content } => {
                let key = normalize_ws(content);
                if key.is_empty() {
                    report.problems.push("INSERT with empty content".into());
                    continue;
                }
                if bank.find_exact(&key).is_some() || batch_keys.contains(&key) {
                    report.skipped_duplicates += 1;
                    continue;
                }
                batch_keys.push(key);
                texts.push(content.trim().to_string());
                plan.push(Planned::Insert {
                    text_idx: texts.len() - 1,
                });
            }
            MemoryAction::Update { index, content } => {
                if normalize_ws(content).is_empty() {
                    report
                        .problems
                        .push(format!("UPDATE index {index}: empty content"));
                    continue;
                }
                if let Some(id) =
                    resolve(*index, retrieved_ids, bank, "UPDATE", &mut report.problems)
                {
                    if deleted_in_batch.contains(&id) {
                        report.problems.push(format!(
                            "UPDATE index {index}: memory {id} is deleted by this batch"
                        ));
                        continue;
                    }
                    texts.push(content.trim().to_string());
                    plan.push(Planned::Update {
                        id,
                        text_idx: texts.len() - 1,
                    });
                }
            }
            MemoryAction::Delete { index } => {
                if let Some(id) =
                    resolve(*index, retrieved_ids, bank, "DELETE", &mut report.problems)
                {
                    if deleted_in_batch.contains(&id) {
                        report.problems.push(format!(
                            "DELETE index {index}: memory {id} already deleted by this batch"
                        ));
                        continue;
                    }
                    deleted_in_batch.push(id);
                    plan.push(Planned::Delete { id });
                }
            }
            MemoryAction::Noop => plan.push(Planned::Noop),
        }
    }
    let embeddings = if texts.is_empty() {
        Vec::new()
    } else {
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let e = encoder.embed(&refs)?;
        if e.len() != texts.len() {
            return Err(ExecutorError::Encoder(memskill_core::EncoderError(
                format!(
                    "encoder returned {} embeddings for {} texts",
                    e.len(),
                    texts.len()
                ),
            )));
        }
        e
    };
    for p in plan {
        let res = match p {
            Planned::Insert { text_idx } => bank
                .insert(
                    texts[text_idx].clone(),
                    embeddings[text_idx].clone(),
                    prov.clone(),
                )
                .map(|id| {
                    report.inserted.push(id);
                    report.executed.push(ActionKind::Insert);
                }),
            Planned::Update { id, text_idx } => bank
                .update(
                    id,
                    texts[text_idx].clone(),
                    embeddings[text_idx].clone(),
                    prov.clone(),
                )
                .map(|()| {
                    report.updated.push(id);
                    report.executed.push(ActionKind::Update);
                }),
            Planned::Delete { id } => bank.delete(id, prov.clone()).map(|()| {
                report.deleted.push(id);
                report.executed.push(ActionKind::Delete);
            }),
            Planned::Noop => {
                report.executed.push(ActionKind::Noop);
                Ok(())
            }
        };
        match res {
            Ok(()) => {}
            Err(e @ memskill_core::CoreError::DimensionMismatch { .. }) => {
                return Err(ExecutorError::Memory(e))
            }
            Err(e) => report.problems.push(e.to_string()),
        }
    }
    Ok(report)
}
