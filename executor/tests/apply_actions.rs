//! apply_actions: history on UPDATE, tombstones on DELETE, duplicate INSERTs skipped,
//! provenance recorded, one batched embed call.

use std::sync::atomic::{AtomicUsize, Ordering};

use memskill_core::{ActionKind, EncoderError, MemoryAction, MemoryBank, Provenance, TextEncoder};
use memskill_executor::{apply_actions, parse_actions, ApplyOptions};

/// Test encoder: a 3-d vector from text length, counting embed calls.
struct CountingEncoder {
    calls: AtomicUsize,
}

impl TextEncoder for CountingEncoder {
    fn id(&self) -> String {
        "test-len".into()
    }
    fn dim(&self) -> usize {
        3
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EncoderError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        Ok(texts
            .iter()
            .map(|t| vec![1.0, t.len() as f32, 0.0])
            .collect())
    }
}

fn prov(span: &str) -> Provenance {
    Provenance {
        span_id: span.into(),
        skills: vec!["insert_facts".into()],
        step: 3,
        observed_at: None,
    }
}

const DEDUPE: ApplyOptions = ApplyOptions { dedupe: true };

fn contents(bank: &MemoryBank) -> Vec<String> {
    bank.live().map(|m| m.content.clone()).collect()
}

fn seeded(texts: &[&str], enc: &CountingEncoder) -> MemoryBank {
    let mut bank = MemoryBank::new();
    let acts: Vec<MemoryAction> = texts
        .iter()
        .map(|t| MemoryAction::Insert {
            content: t.to_string(),
        })
        .collect();
    apply_actions(
        &mut bank,
        &acts,
        &[],
        enc,
        &prov("s0"),
        &ApplyOptions::default(),
    )
    .unwrap();
    bank
}

/// The reference's application (MemSkill `Executor.apply_to_memory_bank` over a list-backed
/// bank): updates, then deletes by position (highest first), then inserts, duplicates kept.
#[test]
fn reference_application_order_and_duplicates() {
    let enc = CountingEncoder {
        calls: AtomicUsize::new(0),
    };
    // duplicate INSERTs are all applied, also of an existing text
    let mut bank = seeded(&["a", "b", "c", "d"], &enc);
    let acts = vec![
        MemoryAction::Insert {
            content: "a".into(),
        },
        MemoryAction::Insert {
            content: "a".into(),
        },
        MemoryAction::Delete { index: 0 },
        MemoryAction::Update {
            index: 1,
            content: "B".into(),
        },
        MemoryAction::Noop,
    ];
    // retrieved: [c (id 2), b (id 1)]
    let r = apply_actions(
        &mut bank,
        &acts,
        &[2, 1],
        &enc,
        &prov("s1"),
        &ApplyOptions::default(),
    )
    .unwrap();
    assert_eq!(contents(&bank), vec!["a", "B", "d", "a", "a"]);
    assert_eq!(r.skipped_duplicates, 0);
    assert_eq!(
        r.executed,
        vec![
            ActionKind::Update,
            ActionKind::Delete,
            ActionKind::Insert,
            ActionKind::Insert,
            ActionKind::Noop
        ]
    );
    // a repeated DELETE of one index removes the memory after it (its position is reused)
    let mut bank = seeded(&["a", "b", "c", "d"], &enc);
    let acts = vec![
        MemoryAction::Delete { index: 0 },
        MemoryAction::Delete { index: 0 },
    ];
    apply_actions(
        &mut bank,
        &acts,
        &[1],
        &enc,
        &prov("s1"),
        &ApplyOptions::default(),
    )
    .unwrap();
    assert_eq!(contents(&bank), vec!["a", "d"]);
    // ... and fails past the end
    let mut bank = seeded(&["a", "b"], &enc);
    let r = apply_actions(
        &mut bank,
        &acts,
        &[1],
        &enc,
        &prov("s1"),
        &ApplyOptions::default(),
    )
    .unwrap();
    assert_eq!(contents(&bank), vec!["a"]);
    assert_eq!(r.problems.len(), 1, "{:?}", r.problems);
    // deletes go highest position first, whatever their order in the reply
    let mut bank = seeded(&["a", "b", "c", "d"], &enc);
    let acts = vec![
        MemoryAction::Delete { index: 1 },
        MemoryAction::Delete { index: 0 },
        MemoryAction::Delete { index: 1 },
    ];
    apply_actions(
        &mut bank,
        &acts,
        &[0, 2],
        &enc,
        &prov("s1"),
        &ApplyOptions::default(),
    )
    .unwrap();
    assert_eq!(contents(&bank), vec!["b"]);
}

#[test]
fn applies_parsed_response() {
    let enc = CountingEncoder {
        calls: AtomicUsize::new(0),
    };
    let mut bank = MemoryBank::new();
    let r0 = apply_actions(
        &mut bank,
        &[
            MemoryAction::Insert {
                content: "Alice lives in Rome.".into(),
            },
            MemoryAction::Insert {
                content: "Bob likes tea.".into(),
            },
        ],
        &[],
        &enc,
        &prov("s0"),
        &DEDUPE,
    )
    .unwrap();
    assert_eq!(r0.inserted, vec![0, 1]);
    assert_eq!(enc.calls.load(Ordering::SeqCst), 1);

    let response = "ACTION: UPDATE\nMEMORY_INDEX: 1\nUPDATED_MEMORY: Alice lives in Paris.\n\nACTION: DELETE\nMEMORY_INDEX: 0\n\nACTION: INSERT\nMEMORY_ITEM: Bob   likes tea.\n\nACTION: INSERT\nMEMORY_ITEM: Carol plays chess.\nMEMORY_ITEM: Carol plays chess.";
    let parsed = parse_actions(response, 2, Some(&ActionKind::ALL));
    assert!(parsed.problems.is_empty(), "{:?}", parsed.problems);
    // retrieved list shown to the executor: [Bob (id 1), Alice (id 0)]
    let r = apply_actions(
        &mut bank,
        &parsed.actions,
        &[1, 0],
        &enc,
        &prov("s1"),
        &DEDUPE,
    )
    .unwrap();
    assert_eq!(
        enc.calls.load(Ordering::SeqCst),
        2,
        "one batched embed call"
    );
    assert_eq!(r.updated, vec![0]);
    assert_eq!(r.deleted, vec![1]);
    assert_eq!(r.inserted, vec![2]);
    // Bob's text is still live when planned (the delete is in the same batch) and Carol comes twice
    assert_eq!(r.skipped_duplicates, 2);
    assert_eq!(
        r.executed,
        vec![ActionKind::Update, ActionKind::Delete, ActionKind::Insert]
    );
    let alice = bank.get(0).unwrap();
    assert_eq!(alice.content, "Alice lives in Paris.");
    assert_eq!(alice.history[0].content, "Alice lives in Rome.");
    assert_eq!(alice.source_spans, vec!["s0", "s1"]);
    assert!(bank.get(1).unwrap().deleted.is_some());
    assert_eq!(bank.get(2).unwrap().provenance.span_id, "s1");
    assert_eq!(bank.get(2).unwrap().skills, vec!["insert_facts"]);

    // bad indices and deleted memories are problems, not errors
    let r = apply_actions(
        &mut bank,
        &[
            MemoryAction::Delete { index: 0 },
            MemoryAction::Update {
                index: 7,
                content: "x".into(),
            },
        ],
        &[1],
        &enc,
        &prov("s2"),
        &DEDUPE,
    )
    .unwrap();
    assert!(r.executed.is_empty());
    assert_eq!(r.problems.len(), 2, "{:?}", r.problems);
}
