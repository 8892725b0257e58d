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

/// How [`apply_actions`] treats repeated actions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ApplyOptions {
    /// Skip INSERTs whose text (whitespace-normalised) equals a live memory's or an earlier
    /// insert's, and apply each memory's first DELETE only (`executor.dedupe_actions`). Off =
    /// the reference's application (MemSkill `Executor.apply_to_memory_bank`).
    pub dedupe: bool,
}

/// Apply `actions` (indices into `retrieved_ids`) to `bank`, recording `prov` on every write.
///
/// By default (the reference's order and semantics): every UPDATE first, in order (the old
/// text goes to the item's history); then the DELETEs, by the target's position among the
/// live memories, highest first, each removing the live memory at that position, so that a
/// repeated DELETE of one index removes the memory after it, and one past the end fails;
/// then every INSERT, appended in order, duplicates included. A DELETE tombstones: the item
/// stops being retrieved or shown, exactly as if removed. New and updated texts are embedded
/// in one batched `encoder.embed` call (updates first). With `opts.dedupe`, see
/// [`ApplyOptions::dedupe`]. Per-action failures are reported in `problems`; only encoder
/// failures and embedding dimension mismatches are errors.
pub fn apply_actions(
    bank: &mut MemoryBank,
    actions: &[MemoryAction],
    retrieved_ids: &[MemoryId],
    encoder: &dyn TextEncoder,
    prov: &Provenance,
    opts: &ApplyOptions,
) -> Result<ApplyReport, ExecutorError> {
    if opts.dedupe {
        return apply_deduplicated(bank, actions, retrieved_ids, encoder, prov);
    }
    let mut report = ApplyReport::default();
    let ByKind {
        updates,
        deletes,
        inserts,
        noops,
    } = ByKind::of(actions);
    let texts: Vec<&str> = updates
        .iter()
        .map(|u| u.1)
        .chain(inserts.iter().copied())
        .collect();
    let embeddings = embed_all(encoder, &texts)?;
    let (update_embs, insert_embs) = embeddings.split_at(updates.len());
    for ((index, content), emb) in updates.iter().zip(update_embs) {
        let Some(id) = resolve(*index, retrieved_ids, bank, "UPDATE", &mut report.problems) else {
            continue;
        };
        let res = bank
            .update(id, content.to_string(), emb.clone(), prov.clone())
            .map(|()| {
                report.updated.push(id);
                report.executed.push(ActionKind::Update);
            });
        check_write(res, &mut report)?;
    }
    delete_by_position(bank, &deletes, retrieved_ids, prov, &mut report)?;
    for (content, emb) in inserts.iter().zip(insert_embs) {
        let res = bank
            .insert(content.to_string(), emb.clone(), prov.clone())
            .map(|id| {
                report.inserted.push(id);
                report.executed.push(ActionKind::Insert);
            });
        check_write(res, &mut report)?;
    }
    report
        .executed
        .extend(std::iter::repeat_n(ActionKind::Noop, noops));
    Ok(report)
}

/// A batch of actions sorted by kind, each kind in order.
struct ByKind<'a> {
    /// (index, content) of every UPDATE.
    updates: Vec<(usize, &'a str)>,
    /// Index of every DELETE.
    deletes: Vec<usize>,
    /// Content of every INSERT.
    inserts: Vec<&'a str>,
    noops: usize,
}

impl<'a> ByKind<'a> {
    fn of(actions: &'a [MemoryAction]) -> Self {
        let mut sorted = ByKind {
            updates: Vec::new(),
            deletes: Vec::new(),
            inserts: Vec::new(),
            noops: 0,
        };
        for a in actions {
            match a {
                MemoryAction::Insert { content } => sorted.inserts.push(content),
                MemoryAction::Update { index, content } => sorted.updates.push((*index, content)),
                MemoryAction::Delete { index } => sorted.deletes.push(*index),
                MemoryAction::Noop => sorted.noops += 1,
            }
        }
        sorted
    }
}

/// A write's failure is a problem of the batch, except an embedding dimension mismatch,
/// which is an error.
fn check_write(
    res: Result<(), memskill_core::CoreError>,
    report: &mut ApplyReport,
) -> Result<(), ExecutorError> {
    match res {
        Ok(()) => Ok(()),
        Err(e @ memskill_core::CoreError::DimensionMismatch { .. }) => {
            Err(ExecutorError::Memory(e))
        }
        Err(e) => {
            report.problems.push(e.to_string());
            Ok(())
        }
    }
}

/// The reference's DELETEs: by the target's position among the live memories, highest
/// first, each removing the live memory at that position (so a repeated DELETE of one index
/// removes the memory after it, and one past the end fails).
fn delete_by_position(
    bank: &mut MemoryBank,
    deletes: &[usize],
    retrieved_ids: &[MemoryId],
    prov: &Provenance,
    report: &mut ApplyReport,
) -> Result<(), ExecutorError> {
    // (position among live memories, index) of every DELETE, highest position first
    let live: Vec<MemoryId> = bank.live().map(|m| m.id).collect();
    let mut targets: Vec<(usize, usize)> = Vec::new();
    for &index in deletes {
        let Some(id) = resolve(index, retrieved_ids, bank, "DELETE", &mut report.problems) else {
            continue;
        };
        if let Some(pos) = live.iter().position(|&l| l == id) {
            targets.push((pos, index));
        }
    }
    targets.sort_by_key(|t| std::cmp::Reverse(t.0));
    for (pos, index) in targets {
        let Some(id) = bank.live().nth(pos).map(|m| m.id) else {
            report.problems.push(format!(
                "DELETE index {index}: no live memory left at position {pos}"
            ));
            continue;
        };
        let res = bank.delete(id, prov.clone()).map(|()| {
            report.deleted.push(id);
            report.executed.push(ActionKind::Delete);
        });
        check_write(res, report)?;
    }
    Ok(())
}

fn embed_all(encoder: &dyn TextEncoder, texts: &[&str]) -> Result<Vec<Vec<f32>>, ExecutorError> {
    if texts.is_empty() {
        return Ok(Vec::new());
    }
    let e = encoder.embed(texts)?;
    if e.len() != texts.len() {
        return Err(ExecutorError::Encoder(memskill_core::EncoderError(
            format!(
                "encoder returned {} embeddings for {} texts",
                e.len(),
                texts.len()
            ),
        )));
    }
    Ok(e)
}

/// The deduplicating application (`executor.dedupe_actions = true`, not the reference's):
/// INSERT skips exact whitespace-normalised duplicates of live memories (and of earlier
/// inserts in the same batch); UPDATE keeps the previous text in the item's history; DELETE
/// tombstones. New and updated texts are embedded in one batched `encoder.embed` call.
/// Per-action failures are reported in `problems`; only encoder failures and embedding
/// dimension mismatches are errors.
fn apply_deduplicated(
    bank: &mut MemoryBank,
    actions: &[MemoryAction],
    retrieved_ids: &[MemoryId],
    encoder: &dyn TextEncoder,
    prov: &Provenance,
) -> Result<ApplyReport, ExecutorError> {
    let mut report = ApplyReport::default();
    let (texts, plan) = plan_deduplicated(bank, actions, retrieved_ids, &mut report);
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let embeddings = embed_all(encoder, &refs)?;
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
        check_write(res, &mut report)?;
    }
    Ok(report)
}

/// The deduplicating plan of a batch, in order, and the texts to embed (`text_idx`):
/// empty and duplicate INSERTs, empty UPDATEs, UPDATEs of a memory this batch deletes and
/// repeated DELETEs are left out, each counted or reported in `report`.
fn plan_deduplicated(
    bank: &MemoryBank,
    actions: &[MemoryAction],
    retrieved_ids: &[MemoryId],
    report: &mut ApplyReport,
) -> (Vec<String>, Vec<Planned>) {
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
    (texts, plan)
}
