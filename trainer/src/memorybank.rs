//! MemoryBank (Zhong et al., 2023) as a built-in method of the evaluation harness
//! (`memskill eval --method memorybank`): same samples, retriever, answer prompt, answerer,
//! scorer and judge as every other row.
//!
//! Its official code (zhongwanjun/MemoryBank-SiliconFriend at cf61c41, MIT) cannot run here
//! or on a current Python: it pins langchain 0.0.146, paddlepaddle 2.4.2 (no wheel after
//! Python 3.10), transformers 4.28 and openai 0.27, and its memory code is tied to its chat
//! applications (ChatGLM / BELLE / ChatGPT front ends and document loaders). This is the
//! published method, written from the paper, with prompts in our own words
//! (`trainer/prompts/memorybank.*`):
//!
//! - **storage**: the conversation is kept as dated pieces, one per exchange of two turns
//!   ("Conversation on DATE: A: ...; B: ..."); each day gets an event summary and a portrait
//!   of the speakers (the executor model), and the days are condensed into a global summary
//!   and a global portrait;
//! - **forgetting** (the Ebbinghaus curve): when a question is asked, each dated piece and
//!   daily summary is kept with probability R = exp(-t / S), t the days since it was written
//!   and S its strength (1: nothing was recalled before the question), drawn from a generator
//!   seeded by `run.seed` and the sample; the global summary and portrait are not forgotten.
//!   `eval.memorybank_forgetting`: "paper" (the default, the formula of the paper), "code"
//!   (the released code's `exp(-t / 5 * S)`, which Python reads as exp(-(t / 5) * S), so a
//!   stronger memory fades faster: kept as an option because that is what the code runs),
//!   "off" (nothing forgotten);
//! - **retrieval**: the top `answer.retrieve` kept pieces for the question (memskill's
//!   retriever), shown to the answerer after the global summary and portrait.
//!
//! A failed summary or portrait call is a failed memory-building call (`memory_call_errors`)
//! and that summary is left out; the calls per sample are two per day plus two.

use std::collections::{BTreeMap, HashMap};

use anyhow::Result;
use memskill_core::{Llm, MemoryBank, MemoryItem, Message, PromptSet, Provenance, Query, Sample};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::backends::embed;
pub use crate::config::Forgetting;
use crate::episode::{answer_queries_read, EpisodeCtx, QueryResult, Read};
use crate::method_prompts::{ask, render, DayCtx, OverallCtx};

/// Tokens of a daily summary or portrait, and of a global one.
pub const DAY_MAX_TOKENS: u32 = 256;
pub const OVERALL_MAX_TOKENS: u32 = 512;

/// The share of a memory kept after `t` days at strength `s`.
pub fn retention(t: f64, s: f64, f: Forgetting) -> f64 {
    match f {
        Forgetting::Paper => (-t / s).exp(),
        Forgetting::Code => (-(t / 5.0) * s).exp(),
        Forgetting::Off => 1.0,
    }
}

/// A date of the datasets' formats as a day number; None when it cannot be read.
pub fn day_number(date: &str) -> Option<i64> {
    memskill_core::memory::date_key(date).map(memskill_core::contract::day_number)
}

/// One stored piece: its text, the day it was written (None: undated, never forgotten) and
/// where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Piece {
    pub text: String,
    pub day: Option<i64>,
    pub source: String,
}

/// Which pieces survive until day `now` (per piece, kept with probability R at strength 1);
/// reproducible in `seed`.
pub fn kept(pieces: &[Piece], now: Option<i64>, seed: u64, f: Forgetting) -> Vec<bool> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    pieces
        .iter()
        .map(|p| {
            let draw: f64 = rng.random();
            match (p.day, now) {
                (Some(d), Some(n)) => draw <= retention((n - d).max(0) as f64, 1.0, f),
                _ => true,
            }
        })
        .collect()
}

/// One day of a conversation: its date text, its day number and its turns (id, text).
type Day = (String, Option<i64>, Vec<(String, String)>);

/// A sample's days in order; sessions of the same date are one day.
fn days(sample: &Sample) -> Vec<Day> {
    let mut out: Vec<Day> = Vec::new();
    for s in &sample.sessions {
        let date = s.date.clone().unwrap_or_default();
        let day = day_number(&date);
        let turns = s.turns.iter().map(|t| (t.id.clone(), t.text.clone()));
        match out.last_mut() {
            Some(last) if day.is_some() && last.1 == day => last.2.extend(turns),
            _ => out.push((date, day, turns.collect())),
        }
    }
    out
}

/// The dated dialogue pieces of a sample: one per exchange of two turns.
pub fn dialogue_pieces(sample: &Sample) -> Vec<Piece> {
    let mut out = Vec::new();
    for (date, day, turns) in days(sample) {
        for pair in turns.chunks(2) {
            let said: Vec<&str> = pair.iter().map(|(_, t)| t.as_str()).collect();
            let head = if date.is_empty() {
                "Conversation: ".to_string()
            } else {
                format!("Conversation on {date}: ")
            };
            out.push(Piece {
                text: format!("{head}{}", said.join("; ")),
                day,
                source: format!("{}:{}", sample.id, pair[0].0),
            });
        }
    }
    out
}

/// A sample's MemoryBank: the dated pieces (dialogue exchanges, then daily summaries), the
/// global summary and portrait (empty when they could not be written), and the calls made.
#[derive(Debug, Clone, Default)]
pub struct Store {
    pub pieces: Vec<Piece>,
    pub overall: Vec<String>,
    pub calls: usize,
    pub errors: usize,
}

/// One call counted in `store`: its reply, trimmed; None for an empty reply, and for a
/// failed call (counted as an error).
fn counted(store: &mut Store, llm: &dyn Llm, messages: Vec<Message>, max: u32) -> Option<String> {
    store.calls += 1;
    match ask(llm, messages, max) {
        Ok(t) => Some(t.trim().to_string()).filter(|t| !t.is_empty()),
        Err(_) => {
            store.errors += 1;
            None
        }
    }
}

/// Build a sample's MemoryBank with the executor model: pieces, daily summaries and
/// portraits, the global summary and portrait.
pub fn build(llm: &dyn Llm, prompts: &PromptSet, sample: &Sample) -> Result<Store> {
    let mut store = Store {
        pieces: dialogue_pieces(sample),
        ..Store::default()
    };
    let (mut summaries, mut portraits) = (Vec::new(), Vec::new());
    for (date, day, turns) in days(sample) {
        let lines: Vec<&str> = turns.iter().map(|(_, t)| t.as_str()).collect();
        let text = lines.join("\n");
        let ctx = || DayCtx {
            date: &date,
            text: &text,
        };
        let dated = |s: String| match date.is_empty() {
            true => s,
            false => format!("{date}: {s}"),
        };
        let m = render(prompts, "memorybank.day_summary", ctx())?;
        if let Some(s) = counted(&mut store, llm, m, DAY_MAX_TOKENS) {
            store.pieces.push(Piece {
                text: dated(format!("Summary of the day. {s}")),
                day,
                source: format!("{}:summary-{}", sample.id, summaries.len() + 1),
            });
            summaries.push(dated(s));
        }
        let m = render(prompts, "memorybank.day_portrait", ctx())?;
        if let Some(p) = counted(&mut store, llm, m, DAY_MAX_TOKENS) {
            portraits.push(dated(p));
        }
    }
    for (prefix, parts, label) in [
        ("memorybank.overall_summary", &summaries, "Overall summary"),
        (
            "memorybank.overall_portrait",
            &portraits,
            "Who the speakers are",
        ),
    ] {
        if parts.is_empty() {
            continue;
        }
        let m = render(prompts, prefix, OverallCtx { days: parts })?;
        if let Some(s) = counted(&mut store, llm, m, OVERALL_MAX_TOKENS) {
            store.overall.push(format!("{label}: {s}"));
        }
    }
    Ok(store)
}

/// (text, vector, source) triples as a memory bank, in order.
fn bank_of<'a>(items: impl Iterator<Item = (&'a str, Vec<f32>, &'a str)>) -> Result<MemoryBank> {
    let mut bank = MemoryBank::new();
    for (text, emb, source) in items {
        let prov = Provenance {
            span_id: source.to_string(),
            skills: Vec::new(),
            step: 0,
            observed_at: None,
        };
        bank.insert(text.to_string(), emb, prov)?;
    }
    Ok(bank)
}

/// The day a question is asked: its own date, else the sample's last dated session.
fn asked_on(sample: &Sample, q: &Query) -> Option<i64> {
    q.date.as_deref().and_then(day_number).or_else(|| {
        sample
            .sessions
            .iter()
            .rev()
            .find_map(|s| s.date.as_deref().and_then(day_number))
    })
}

/// The seed of one sample's forgetting draws at day `now`.
fn sample_seed(seed: u64, sample: &Sample, now: Option<i64>) -> u64 {
    sample
        .id
        .bytes()
        .fold(seed ^ 0x6d65_6d62_616e_6b00, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        })
        ^ now.unwrap_or(0) as u64
}

/// MemoryBank's answers on one sample: per question day, forget, then the harness's
/// retrieval over what is kept, the answer from the global summary and portrait followed by
/// the retrieved pieces. Every piece is embedded once.
pub fn answers(
    ctx: &EpisodeCtx<'_>,
    sample: &Sample,
    store: &Store,
    forgetting: Forgetting,
    queries: &[&Query],
    with_judge: bool,
) -> Result<Vec<QueryResult>> {
    let texts: Vec<&str> = store.pieces.iter().map(|p| p.text.as_str()).collect();
    let sources: Vec<&str> = store.pieces.iter().map(|p| p.source.as_str()).collect();
    let embs = embed(ctx.encoder, &texts)?;
    // the global summary and portrait, shown first to every question (never retrieved, so
    // without vectors)
    let src = format!("{}:overall", sample.id);
    let head = bank_of(
        store
            .overall
            .iter()
            .map(|t| (t.as_str(), Vec::new(), src.as_str())),
    )?;
    let with_head = |_: &Query, mems: &[&MemoryItem]| -> Result<Read> {
        let items = head.all().iter().chain(mems.iter().copied()).cloned();
        Ok(Read::Replace(items.collect()))
    };
    let mut by_day: BTreeMap<Option<i64>, Vec<&Query>> = BTreeMap::new();
    for q in queries {
        by_day.entry(asked_on(sample, q)).or_default().push(q);
    }
    let mut out: HashMap<String, QueryResult> = HashMap::new();
    for (now, qs) in by_day {
        let seed = sample_seed(ctx.seed, sample, now);
        let keep = kept(&store.pieces, now, seed, forgetting);
        let bank = bank_of(
            (0..texts.len())
                .filter(|&i| keep[i])
                .map(|i| (texts[i], embs[i].clone(), sources[i])),
        )?;
        let answered = answer_queries_read(ctx, sample, &bank, &qs, with_judge, Some(&with_head))?;
        for (q, r) in qs.iter().zip(answered) {
            out.insert(q.id.clone(), r);
        }
    }
    Ok(queries.iter().filter_map(|q| out.remove(&q.id)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use memskill_core::{Session, Turn};

    #[test]
    fn the_curves_and_the_calendar() {
        assert_eq!(retention(0.0, 1.0, Forgetting::Paper), 1.0);
        assert!((retention(2.0, 1.0, Forgetting::Paper) - (-2.0f64).exp()).abs() < 1e-12);
        // strength slows the paper's curve and speeds the released code's
        assert!(retention(3.0, 2.0, Forgetting::Paper) > retention(3.0, 1.0, Forgetting::Paper));
        assert!(retention(3.0, 2.0, Forgetting::Code) < retention(3.0, 1.0, Forgetting::Code));
        assert_eq!(retention(1e6, 1.0, Forgetting::Off), 1.0);
        let civil = memskill_core::contract::day_number;
        assert_eq!(civil((1970, 1, 1)), 0);
        assert_eq!(civil((2000, 3, 1)) - civil((2000, 2, 28)), 2);
        assert_eq!(
            day_number("1:56 pm on 8 May, 2023").unwrap() - day_number("2023-05-01").unwrap(),
            7
        );
        assert_eq!(day_number("someday"), None);
    }

    #[test]
    fn pieces_are_kept_by_the_curve_and_undated_ones_always() {
        let piece = |day: Option<i64>| Piece {
            text: String::new(),
            day,
            source: String::new(),
        };
        let old: Vec<Piece> = (0..2000).map(|_| piece(Some(0))).collect();
        let k = kept(&old, Some(1), 7, Forgetting::Paper);
        let share = k.iter().filter(|x| **x).count() as f64 / k.len() as f64;
        assert!((share - (-1.0f64).exp()).abs() < 0.04, "{share}");
        assert_eq!(k, kept(&old, Some(1), 7, Forgetting::Paper), "seeded");
        assert!(kept(&old, Some(1), 7, Forgetting::Off).iter().all(|x| *x));
        assert!(kept(&[piece(None)], Some(100), 7, Forgetting::Paper)[0]);
    }

    #[test]
    fn a_day_is_all_sessions_of_its_date_in_exchanges_of_two_turns() {
        let turn = |id: &str| Turn {
            id: id.into(),
            speaker: "A".into(),
            text: format!("A said {id}"),
        };
        let session = |index, date: &str, ids: &[&str]| Session {
            index,
            date: Some(date.into()),
            turns: ids.iter().map(|i| turn(i)).collect(),
        };
        let sample = Sample {
            id: "s".into(),
            dataset: "locomo".into(),
            sessions: vec![
                session(1, "1:00 pm on 8 May, 2023", &["D1:1", "D1:2", "D1:3"]),
                session(2, "6:00 pm on 8 May, 2023", &["D2:1"]),
                session(3, "9 May 2023", &["D3:1", "D3:2"]),
            ],
            spans: Vec::new(),
            queries: Vec::new(),
        };
        assert_eq!(days(&sample).len(), 2, "two sessions of 8 May are one day");
        let p = dialogue_pieces(&sample);
        let texts: Vec<&str> = p.iter().map(|x| x.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "Conversation on 1:00 pm on 8 May, 2023: A said D1:1; A said D1:2",
                "Conversation on 1:00 pm on 8 May, 2023: A said D1:3; A said D2:1",
                "Conversation on 9 May 2023: A said D3:1; A said D3:2",
            ]
        );
        assert_eq!(p[2].day.unwrap() - p[0].day.unwrap(), 1);
        assert_eq!(p[1].source, "s:D1:3");
    }
}
