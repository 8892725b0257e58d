//! The memory contract's read rules where the answerer retrieves (`[memory.contract]`:
//! `ttl`, `decay`, `sensitive_from` / `sensitive_types`, `stale_after`; the pure rules are
//! `memskill_core::contract`). Per question, over the bank the answerer may see:
//! - a memory past its type's TTL at the question's time is not retrieved (`contract_expired`);
//! - a high-sensitivity memory is not retrieved unless the question says one of the words that
//!   unlock it (`contract_sensitive_withheld`);
//! - every other memory's retrieval score is multiplied by its decay weight, and the top
//!   `answer.retrieve` are taken after that;
//! - a stale memory among them is given to the answerer with the contract's marker after its
//!   text (`contract_stale_shown`).
//!
//! Without a read rule none of this runs and retrieval is what it was.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicUsize, Ordering};

use memskill_core::{query_matches, Clock, MemoryBank, MemoryContract, MemoryId, MemoryItem};
use serde::{Deserialize, Serialize};

/// What the read rules did over an evaluation (`results.json`; each absent when 0). Every
/// count is per question: a memory left out of two questions' retrieval counts twice.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContractReads {
    /// Memories past their TTL, left out of a question's retrieval.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub contract_expired: usize,
    /// High-sensitivity memories left out of a question's retrieval (it did not ask for them).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub contract_sensitive_withheld: usize,
    /// Stale memories given to the answerer (with the marker, unless it is off).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub contract_stale_shown: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl ContractReads {
    pub fn is_empty(&self) -> bool {
        *self == ContractReads::default()
    }
}

/// [`ContractReads`] as they are counted, by concurrent questions.
#[derive(Debug, Default)]
pub struct ReadCounts {
    expired: AtomicUsize,
    sensitive: AtomicUsize,
    stale: AtomicUsize,
}

impl ReadCounts {
    pub fn snapshot(&self) -> ContractReads {
        ContractReads {
            contract_expired: self.expired.load(Ordering::Relaxed),
            contract_sensitive_withheld: self.sensitive.load(Ordering::Relaxed),
            contract_stale_shown: self.stale.load(Ordering::Relaxed),
        }
    }
}

/// What the rules say about one question's memories.
#[derive(Debug, Default, PartialEq)]
pub struct Verdicts {
    /// Not retrieved: expired or high-sensitivity and not asked for.
    pub excluded: BTreeSet<MemoryId>,
    /// Decay weights other than 1.
    pub weights: BTreeMap<MemoryId, f64>,
    /// The stale ones, with their marker ("" when the marker is off).
    pub stale: BTreeMap<MemoryId, String>,
    pub expired: usize,
    pub sensitive: usize,
}

/// The rules' verdicts on the live memories of `bank` for `question` at `clock`. What the
/// memory filter found in a memory (the words that unlock it) is read from its text in
/// `original` (the bank before a reader's redaction), else from its text in `bank`.
pub fn judge(
    contract: &MemoryContract,
    clock: &Clock,
    bank: &MemoryBank,
    original: &MemoryBank,
    question: &str,
) -> Verdicts {
    let mut v = Verdicts::default();
    for m in bank.live() {
        let age = clock.age_of(m);
        if contract.expired(m, age) {
            v.excluded.insert(m.id);
            v.expired += 1;
            continue;
        }
        if contract.high_sensitivity(m) {
            let text = original
                .get(m.id)
                .map_or(m.content.as_str(), |o| &o.content);
            let found = memskill_guard::memory_sensitivity(text)
                .1
                .map_or(&[][..], memskill_guard::kind_words);
            if !query_matches(question, &contract.unlocking_words(m, found)) {
                v.excluded.insert(m.id);
                v.sensitive += 1;
                continue;
            }
        }
        let w = contract.weight(m, age);
        if w != 1.0 {
            v.weights.insert(m.id, w);
        }
        if let Some(note) = contract.stale_note(age) {
            v.stale.insert(m.id, note);
        }
    }
    v
}

/// `hits` (every memory's score, best first) without the excluded ones, each score
/// [`decayed`] by its weight, best first again (ties by lower id, as retrieval ranks), the
/// top `k`.
pub fn rerank(hits: &[(MemoryId, f32)], v: &Verdicts, k: usize) -> Vec<(MemoryId, f32)> {
    let mut out: Vec<(MemoryId, f32)> = hits
        .iter()
        .filter(|(id, _)| !v.excluded.contains(id))
        .map(|(id, s)| (*id, v.weights.get(id).map_or(*s, |w| decayed(*s, *w))))
        .collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    out.truncate(k);
    out
}

/// A retrieval score moved down by a decay weight `w` in (0, 1]: a positive score times `w`,
/// a negative one divided by it (times `w` would raise it: -0.6 x 0.1 = -0.06 beats a fresh
/// -0.3), so an older memory never ranks above the same score made fresh, whatever the
/// retriever's score range.
pub fn decayed(score: f32, w: f64) -> f32 {
    if w <= 0.0 {
        return f32::NEG_INFINITY;
    }
    let s = f64::from(score);
    (if s >= 0.0 { s * w } else { s / w }) as f32
}

/// The memories of `bank` one question is given, from its retrieval `hits` (every memory
/// scored when the contract has read rules, else the top `k`): without read rules the hits
/// as they are; with them, [`judge`]d, [`rerank`]ed, stale ones marked, and counted.
#[allow(clippy::too_many_arguments)]
pub fn given<'b>(
    contract: &MemoryContract,
    counts: &ReadCounts,
    sample: &memskill_core::Sample,
    q: &memskill_core::Query,
    bank: &'b MemoryBank,
    original: &MemoryBank,
    hits: &[(MemoryId, f32)],
    k: usize,
) -> Vec<Cow<'b, MemoryItem>> {
    if !contract.has_read_rules() {
        return hits
            .iter()
            .filter_map(|(id, _)| bank.get(*id).map(Cow::Borrowed))
            .collect();
    }
    // sensitivity rules alone age nothing: any clock does
    let unit = contract.unit().unwrap_or(memskill_core::AgeUnit::Days);
    let clock = Clock::of(unit, sample, q.date.as_deref());
    let v = judge(contract, &clock, bank, original, &q.question);
    counts.expired.fetch_add(v.expired, Ordering::Relaxed);
    counts.sensitive.fetch_add(v.sensitive, Ordering::Relaxed);
    let top = rerank(hits, &v, k);
    let mut out = Vec::with_capacity(top.len());
    for (id, _) in top {
        let Some(m) = bank.get(id) else { continue };
        match v.stale.get(&id) {
            None => out.push(Cow::Borrowed(m)),
            Some(note) => {
                counts.stale.fetch_add(1, Ordering::Relaxed);
                if note.is_empty() {
                    out.push(Cow::Borrowed(m));
                } else {
                    let mut marked = m.clone();
                    marked.content = format!("{} {note}", m.content);
                    out.push(Cow::Owned(marked));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use memskill_core::{MemoryType, Provenance, Sensitivity};

    fn bank() -> MemoryBank {
        let mut b = MemoryBank::new();
        let at = |span: &str, date: &str| Provenance {
            span_id: span.into(),
            observed_at: Some(date.into()),
            ..Default::default()
        };
        // 0: an old event, 1: a recent fact, 2: a phone number, 3: a preference
        b.insert("old trip".into(), vec![1.0, 0.0], at("s:0", "1 Jan 2023"))
            .unwrap();
        b.insert("new job".into(), vec![0.9, 0.1], at("s:1", "1 Jun 2023"))
            .unwrap();
        b.insert(
            "Ann's phone is +44 20 7946 0958".into(),
            vec![0.8, 0.2],
            at("s:1", "1 Jun 2023"),
        )
        .unwrap();
        b.insert(
            "Ann likes jazz".into(),
            vec![0.7, 0.3],
            at("s:1", "1 Jun 2023"),
        )
        .unwrap();
        b.set_meta(0, Some(MemoryType::Episodic), None).unwrap();
        b.set_meta(3, Some(MemoryType::Preference), None).unwrap();
        b.set_sensitivity(2, Sensitivity::Personal).unwrap();
        b
    }

    fn clock(day: &str) -> Clock {
        Clock::Days(memskill_core::date_key(day).map(memskill_core::contract::day_number))
    }

    #[test]
    fn expired_and_unasked_sensitive_memories_are_excluded_and_the_rest_reweighted() {
        let b = bank();
        let c: MemoryContract = serde_json::from_value(serde_json::json!({
            "decay": "exponential", "half_life": "30d",
            "ttl": {"episodic": "90d"},
            "sensitive_from": "personal", "sensitive_types": ["preference"],
            "stale_after": "60d",
        }))
        .unwrap();
        let v = judge(&c, &clock("1 Jul 2023"), &b, &b, "Where did Ann work?");
        assert_eq!(v.excluded, BTreeSet::from([0, 2, 3]));
        assert_eq!((v.expired, v.sensitive), (1, 2));
        assert!((v.weights[&1] - 0.5f64.powf(30.0 / 30.0)).abs() < 1e-9);
        assert!(v.stale.is_empty());
        // asking for them lets them in; the old event is stale a month earlier, not expired
        let v = judge(
            &c,
            &clock("15 Mar 2023"),
            &b,
            &b,
            "Ann's phone and preferences?",
        );
        assert_eq!(v.excluded, BTreeSet::new());
        assert!(v.stale.contains_key(&0) && v.stale.len() == 1);
        // decay reorders: the older memory's higher cosine loses to the weighted newer one
        let hits = [(0, 1.0), (1, 0.9)];
        let w = Verdicts {
            weights: BTreeMap::from([(0, 0.5)]),
            ..Default::default()
        };
        assert_eq!(rerank(&hits, &w, 5), vec![(1, 0.9), (0, 0.5)]);
        assert_eq!(rerank(&hits, &w, 1), vec![(1, 0.9)]);
        assert_eq!(rerank(&hits, &Verdicts::default(), 5), hits.to_vec());
        // a negative score is moved down too: the old memory (-0.2, weight 0.1) ranks below a
        // fresh one at -0.3, not above it (-0.2 x 0.1 = -0.02 would have won)
        let hits = [(0, -0.2), (1, -0.3)];
        let w = Verdicts {
            weights: BTreeMap::from([(0, 0.1)]),
            ..Default::default()
        };
        assert_eq!(rerank(&hits, &w, 5)[0].0, 1);
        for s in [-1.0f32, -0.3, 0.0, 0.4, 2.5] {
            let mut last = s;
            for w in [1.0, 0.8, 0.5, 0.1, 0.0] {
                let d = decayed(s, w);
                assert!(d <= last, "decay raised {s} at weight {w}: {d} > {last}");
                last = d;
            }
        }
    }

    #[test]
    fn without_read_rules_the_hits_are_given_as_they_are() {
        let b = bank();
        let s = memskill_core::Sample {
            id: "s".into(),
            dataset: "t".into(),
            sessions: Vec::new(),
            spans: Vec::new(),
            queries: Vec::new(),
        };
        let q = memskill_core::Query {
            id: "q".into(),
            question: "anything".into(),
            answers: Vec::new(),
            category: String::new(),
            evidence: Vec::new(),
            date: None,
        };
        let counts = ReadCounts::default();
        let hits = [(2, 0.9), (0, 0.8)];
        let given = given(
            &MemoryContract::default(),
            &counts,
            &s,
            &q,
            &b,
            &b,
            &hits,
            1,
        );
        // no rule: not even cut to k (the retrieval already was)
        let texts: Vec<&str> = given.iter().map(|m| m.content.as_str()).collect();
        assert_eq!(texts, [b.get(2).unwrap().content.as_str(), "old trip"]);
        assert!(counts.snapshot().is_empty());
    }
}
