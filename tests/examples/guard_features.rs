//! Which features generalise across authors: the guard's hashed n-grams or sentence
//! embeddings (all-MiniLM-L6-v2, the project's encoder asset)? Issue 40 asked for this
//! comparison before a model is shipped; docs/safety.md reports it.
//!
//! For every labelled set that is not the engineers' own (the folds of
//! `guard-model eval`), an L2-penalised, class-balanced logistic regression (the guard's own
//! trainer, [`Linear::train`]) is fitted on the embeddings of every other set's skill texts
//! and scores the left-out set: the highest P(unsafe) over the same normalised views the
//! n-gram classifier reads. One JSON line per left-out text, in the order of
//! `guard-model eval --json` (so the two files join line by line):
//! `{"set", "unsafe", "category", "p_emb"}`.
//!
//! ```text
//! cargo run --release -p memskill-e2e --example guard_features -- OUT.jsonl [C]
//! python3 scripts/guard/compare-features.py LOAO.jsonl OUT.jsonl
//! ```
//!
//! About 4 minutes to embed the ~25k views on two cores, then a few seconds per fold.

use std::collections::HashMap;
use std::io::Write;

use memskill_controller::encoder::{default_minilm_dir, BertEncoder};
use memskill_core::TextEncoder;
use memskill_guard::data::{self, Role};
use memskill_guard::learned::classifier_views;
use memskill_guard::learned::fit::Linear;
use memskill_guard::learned::{MIN_WORDS, TOL};
use memskill_guard::normalise_for_scan;

/// One skill text: its fold, label, category, the views it trains on, the views scored.
struct Item {
    set: usize,
    unsafe_: bool,
    category: Option<&'static str>,
    train: Vec<usize>,
    score: Vec<usize>,
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let out = args
        .get(1)
        .ok_or_else(|| anyhow::anyhow!("usage: guard_features OUT.jsonl [C]"))?;
    let c: f64 = args.get(2).map(|s| s.parse()).transpose()?.unwrap_or(10.0);
    let sets = data::load(&data::source_dir(), &[Role::Train, Role::Calibration])
        .map_err(anyhow::Error::msg)?;
    let mut texts: Vec<String> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut intern = |t: String| -> usize {
        let n = index.len();
        *index.entry(t.clone()).or_insert_with(|| {
            texts.push(t);
            n
        })
    };
    let mut items = Vec::new();
    for (i, (_, examples)) in sets.iter().enumerate() {
        for e in examples.iter().filter(|e| e.kind == "skill") {
            let views: Vec<String> = classifier_views(&e.text)
                .into_iter()
                .map(|v| v.1)
                .filter(|v| v.split_whitespace().count() >= MIN_WORDS)
                .collect();
            let train = if matches!(e.enc.as_str(), "plain" | "fullwidth" | "zero-width") {
                vec![normalise_for_scan(&e.text)]
            } else {
                classifier_views(&e.text).into_iter().map(|v| v.1).collect()
            };
            items.push(Item {
                set: i,
                unsafe_: e.unsafe_,
                category: e.category.map(|c| c.id()),
                train: train.into_iter().map(&mut intern).collect(),
                score: views.into_iter().map(&mut intern).collect(),
            });
        }
    }
    let enc = BertEncoder::load(&default_minilm_dir())?;
    let t0 = std::time::Instant::now();
    let mut emb: Vec<Vec<(u32, f64)>> = Vec::with_capacity(texts.len());
    for (k, chunk) in texts.chunks(512).enumerate() {
        let refs: Vec<&str> = chunk.iter().map(String::as_str).collect();
        for v in enc.embed(&refs)? {
            emb.push(
                v.iter()
                    .enumerate()
                    .map(|(j, &x)| (j as u32, x as f64))
                    .collect(),
            );
        }
        eprintln!(
            "embedded {}/{} views ({:.0} s)",
            ((k + 1) * 512).min(texts.len()),
            texts.len(),
            t0.elapsed().as_secs_f64()
        );
    }
    let dim = enc.dim();
    let mut lines = Vec::new();
    for (i, (entry, _)) in sets.iter().enumerate() {
        if entry.note.contains("engineers") {
            continue;
        }
        let (mut xs, mut ys) = (Vec::new(), Vec::new());
        for it in items.iter().filter(|it| it.set != i) {
            for &v in &it.train {
                xs.push(emb[v].clone());
                ys.push(it.unsafe_);
            }
        }
        let t = std::time::Instant::now();
        let lin = Linear::train(&xs, &ys, dim, c, TOL);
        for it in items.iter().filter(|it| it.set == i) {
            let p = it
                .score
                .iter()
                .map(|&v| lin.prob(&emb[v]))
                .fold(0.0, f64::max);
            lines.push(serde_json::json!({"set": entry.name, "unsafe": it.unsafe_, "category": it.category, "p_emb": p}).to_string());
        }
        eprintln!("{:>14}: {:.1} s", entry.name, t.elapsed().as_secs_f64());
    }
    let mut f = std::fs::File::create(out)?;
    f.write_all((lines.join("\n") + "\n").as_bytes())?;
    eprintln!("wrote {} rows to {out}", lines.len());
    Ok(())
}
