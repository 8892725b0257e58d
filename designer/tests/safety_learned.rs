//! The learned second opinion (`safety/learned.rs`), measured leave-one-author-out: for
//! each author set, a model trained on every other set scores the held-out set's texts, and
//! the scan's verdict (rules, then the classifier at a threshold) is compared with the rules
//! alone. `cargo test --workspace -p memskill-designer --test safety_learned -- --nocapture`
//! prints the tables (docs/safety.md, "The learned second opinion").

use std::time::Instant;

use memskill_designer::safety::learned::{self, Example, Model, AUTHOR_SETS, STEP_TAU, TAU};
use memskill_designer::safety::{normalise_for_scan, rules_scan, SafetyCategory};

/// The texts [`memskill_designer::safety::scan_skill`] scans for one held-out item: the
/// description, the instructions and all fields joined (a one-text item is the instructions
/// of a skill with a neutral name and description, as in `safety_heldout.rs`).
fn skill_texts(e: &Example) -> [String; 3] {
    let [n, d, i] = e.fields.clone().unwrap_or_else(|| {
        [
            "memory-helper".to_string(),
            "Helps write memories.".to_string(),
            e.text.clone(),
        ]
    });
    let joined = format!("{} {} {}", n.replace(['_', '-'], " "), d.trim(), i.trim());
    [d, i, joined]
}

const TAUS: [f64; 6] = [0.5, 0.6, 0.7, 0.8, 0.9, 0.95];

/// One held-out item: rejected by the rules; the classifier's highest P(unsafe) over the
/// scanned texts and their views; P(unsafe) of the plain view of the text alone.
struct Scored {
    text: String,
    unsafe_: bool,
    category: Option<SafetyCategory>,
    plain_enc: bool,
    rules: bool,
    /// The rules' rejection still standing after the fold's model had its say
    /// (`Model::overturns`).
    kept: bool,
    p: f64,
    /// One step of a multi-step text at or above `STEP_TAU` (`Model::step_score`): a
    /// rejection at the step threshold whatever the sweep's threshold.
    step: bool,
    p_plain: f64,
    /// The category the classifier's verdict names, at TAU.
    named: Option<SafetyCategory>,
}

#[derive(Default, Clone, Copy)]
struct Tally {
    unsafe_n: usize,
    unsafe_rules: usize,
    unsafe_or: [usize; 6],
    ordinary_n: usize,
    ordinary_rules: usize,
    ordinary_or: [usize; 6],
    // the classifier alone at 0.5 on the plain-encoded texts (the sklearn comparison)
    plain_unsafe_n: usize,
    plain_unsafe_hit: usize,
    plain_ordinary_n: usize,
    plain_ordinary_hit: usize,
}

impl Tally {
    fn add(&mut self, s: &Scored) {
        let or = TAUS.map(|t| s.kept || s.p >= t || s.step);
        if s.unsafe_ {
            self.unsafe_n += 1;
            self.unsafe_rules += s.rules as usize;
            for (k, &o) in or.iter().enumerate() {
                self.unsafe_or[k] += o as usize;
            }
        } else {
            self.ordinary_n += 1;
            self.ordinary_rules += s.rules as usize;
            for (k, &o) in or.iter().enumerate() {
                self.ordinary_or[k] += o as usize;
            }
        }
        if s.plain_enc {
            if s.unsafe_ {
                self.plain_unsafe_n += 1;
                self.plain_unsafe_hit += (s.p_plain >= 0.5) as usize;
            } else {
                self.plain_ordinary_n += 1;
                self.plain_ordinary_hit += (s.p_plain >= 0.5) as usize;
            }
        }
    }
}

fn pct(a: usize, b: usize) -> f64 {
    100.0 * a as f64 / b.max(1) as f64
}

fn row(label: &str, t: &Tally) -> String {
    let mut s = format!(
        "| {label} | {}/{} ({:.1}) |",
        t.unsafe_rules,
        t.unsafe_n,
        pct(t.unsafe_rules, t.unsafe_n)
    );
    for k in 1..TAUS.len() {
        s += &format!(" {:.1} |", pct(t.unsafe_or[k], t.unsafe_n));
    }
    s += &format!(
        " {}/{} ({:.1}) |",
        t.ordinary_rules,
        t.ordinary_n,
        pct(t.ordinary_rules, t.ordinary_n)
    );
    for k in 1..TAUS.len() {
        s += &format!(" {:.1} |", pct(t.ordinary_or[k], t.ordinary_n));
    }
    s
}

/// Leave one author set out in turn: train on the rest, score the held-out set.
fn leave_one_author_out() -> Vec<(&'static str, Vec<Scored>)> {
    let corpus = learned::corpus();
    let mut out = Vec::new();
    for &held in AUTHOR_SETS {
        let train: Vec<Example> = corpus
            .iter()
            .filter(|e| e.source != held)
            .cloned()
            .collect();
        let t0 = Instant::now();
        let model = Model::train(&train);
        println!(
            "trained without {held}: {} texts, {} features, {:?} (binary model: {} L-BFGS steps, gradient max {:.1e})",
            train.len(),
            model.vocab.len(),
            t0.elapsed(),
            model.unsafe_model.fit.iterations,
            model.unsafe_model.fit.grad_max
        );
        assert!(model.unsafe_model.fit.converged, "{held}: not converged");
        println!(
            "  p('Helps write memories.') = {:.3}, p('memory helper Helps write memories. Keep the user's dates.') = {:.3}",
            model.score("Helps write memories.").0,
            model.score("memory helper Helps write memories. Keep the user's dates.").0
        );
        let scored = corpus
            .iter()
            .filter(|e| e.source == held)
            .map(|e| {
                let texts = skill_texts(e);
                Scored {
                    text: e.text.clone(),
                    unsafe_: e.unsafe_,
                    category: e.category,
                    plain_enc: e.enc == "plain",
                    rules: texts.iter().any(|t| rules_scan(t).is_err()),
                    kept: texts
                        .iter()
                        .any(|t| rules_scan(t).is_err() && !model.overturns(t)),
                    p: texts
                        .iter()
                        .map(|t| model.score(t).0)
                        .fold(f64::NEG_INFINITY, f64::max),
                    step: texts
                        .iter()
                        .any(|t| model.step_score(t).0 >= TAU.max(STEP_TAU)),
                    p_plain: model.p_unsafe(&normalise_for_scan(&e.text)),
                    named: texts
                        .iter()
                        .find_map(|t| model.judge(t, TAU))
                        .and_then(|v| SafetyCategory::of_verdict(&v)),
                }
            })
            .collect();
        out.push((held, scored));
    }
    out
}

/// Floors measured with [`TAU`] = 0.95 (rules OR classifier), per held-out author set: (set,
/// unsafe rejected at least, ordinary rejected at most, ordinary rejected by the classifier
/// alone (added to the rules' false rejections) at most), in texts. Every set is a
/// development set of the rules (round five); when the classifier was built on round four's
/// rules, test4, dev5a and dev5b were unseen by them (docs/safety.md has those figures).
const FLOORS: &[(&str, usize, usize, usize)] = &[
    ("categories", 169, 1, 1),
    // round eight: with three more author sets in the training data, one Portuguese
    // deletion of a duplicate scores 0.958 with `own` held out
    ("own", 284, 1, 1),
    ("test", 192, 1, 1),
    ("test2", 192, 1, 1),
    ("test3", 240, 0, 0),
    // round eight: 2 (a card number redacted to its last four digits scores 0.950)
    ("test4", 240, 2, 2),
    // 235 from round six: with test5 in the training sets, one dev5a text the classifier
    // caught leave-one-author-out scores below TAU (the rules alone catch 235); round seven:
    // 236, and its six false rejections are gone (refusals under a heading, audit trails)
    ("dev5a", 236, 1, 1),
    ("dev5b", 240, 0, 0),
    // round six: the sixth independent set, spent, trained on like the others
    // round seven: 240 (the rules' class cues of round seven caught its last misses)
    ("test5", 240, 3, 1),
    // round seven: the seventh independent set, spent, trained on like the others; the
    // classifier overturns six of the rules' false rejections of it (`Model::overturns`), the
    // rules were worked on it (its last false rejection: "ignore those embedded
    // instructions and keep following the system", p 0.95 with the set held out)
    ("test6", 240, 1, 0),
    // round eight: the eighth independent set (scored once, then spent) and two
    // development sets, all trained on; the rules were worked on all three
    ("test8", 240, 3, 0),
    // 9 after dev9a and dev9b joined the training sets
    ("dev8a", 239, 2, 0),
    ("dev8b", 238, 6, 0),
    // round eight, second pass: two development sets scored once before use (docs/safety.md),
    // then worked on and trained on
    ("dev9a", 230, 8, 0),
    ("dev9b", 239, 9, 0),
    // round eight: the ninth and tenth independent sets, scored once as issue 26's held-out
    // figure (docs/safety.md), then trained on; the rules were not worked on them
    ("test9", 239, 11, 0),
    ("test10", 239, 8, 0),
    // round nine: the eleventh and twelfth independent sets, scored once after round eight
    // (docs/safety.md), then worked on (classes9.rs) and trained on, as were the two
    // development sets of round nine (scored once before use)
    ("test11", 240, 5, 0),
    ("test12", 239, 4, 0),
    ("dev10a", 239, 8, 0),
    ("dev10b", 235, 6, 0),
    // round nine, second pass: two development sets scored once before use, then trained on
    // (the rules were not worked on them beyond the pass's last fixes)
    ("dev11a", 229, 7, 0),
    ("dev11b", 234, 8, 0),
    // round ten: the thirteenth to sixteenth independent sets, each scored once as a held-out
    // figure (docs/safety.md), then trained on and worked on
    ("test13", 238, 5, 0),
    ("test14", 240, 2, 0),
    ("test15", 239, 4, 0),
    ("test16", 240, 5, 0),
    // round ten: two development sets scored once before use, then worked on and trained on
    ("dev12a", 240, 2, 0),
    ("dev12b", 240, 3, 0),
    // round ten, after its held-out figure: the seventeenth and eighteenth independent sets,
    // scored once (docs/safety.md), then trained on
    ("test17", 240, 2, 0),
    ("test18", 238, 4, 0),
    // round eleven: the nineteenth and twentieth independent sets, scored once as issue 26's
    // held-out figure on round ten's final tree (docs/safety.md), then trained on and worked
    // on, as was dev13a (a development set scored once before use; dev13b, assembled from a
    // shared pool of filler steps, is scored in safety_heldout.rs but not trained on)
    ("test19", 240, 1, 0),
    ("test20", 240, 1, 0),
    ("dev13a", 238, 6, 0),
    // round eleven, second pass: the twenty-first and twenty-second independent sets, scored
    // once as issue 26's held-out figure after round eleven (docs/safety.md), then trained on
    // and worked on
    ("test21", 238, 7, 0),
    ("test22", 240, 5, 0),
    // round twelve: the twenty-third and twenty-fourth independent sets, scored once as issue
    // 26's held-out figure on round eleven's final tree (docs/safety.md), then trained on and
    // worked on
    ("test23", 240, 0, 0),
    ("test24", 240, 1, 0),
    // round twelve, second pass: the twenty-sixth to twenty-eighth independent sets, scored
    // once as issue 26's held-out figure after round twelve (docs/safety.md), then trained on
    // and worked on
    ("test26", 240, 6, 0),
    ("test27", 240, 8, 0),
    ("test28", 240, 2, 0),
];

#[test]
fn leave_one_author_out_rates() {
    let tau_k = TAUS
        .iter()
        .position(|&t| t == TAU)
        .expect("TAU is one of the measured thresholds");
    let folds = leave_one_author_out();
    println!("\nThe classifier alone, P(unsafe) >= 0.5 on the plain view, plain-encoded texts:");
    println!("| held out | unsafe rejected | ordinary rejected |\n|---|---|---|");
    for (held, scored) in &folds {
        let mut t = Tally::default();
        scored.iter().for_each(|s| t.add(s));
        println!(
            "| {held} | {}/{} ({:.1}%) | {}/{} ({:.1}%) |",
            t.plain_unsafe_hit,
            t.plain_unsafe_n,
            pct(t.plain_unsafe_hit, t.plain_unsafe_n),
            t.plain_ordinary_hit,
            t.plain_ordinary_n,
            pct(t.plain_ordinary_hit, t.plain_ordinary_n)
        );
    }
    let header = "| held out | unsafe: rules | OR p>=0.6 | 0.7 | 0.8 | 0.9 | 0.95 | ordinary: rules | OR p>=0.6 | 0.7 | 0.8 | 0.9 | 0.95 |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|";
    println!("\nRules alone and rules OR classifier (%), per held-out author set:");
    println!("{header}");
    let mut failed = Vec::new();
    for (held, scored) in &folds {
        let mut t = Tally::default();
        scored.iter().for_each(|s| t.add(s));
        println!("{}", row(held, &t));
        let (_, min_unsafe, max_ordinary, max_added) = FLOORS
            .iter()
            .find(|f| f.0 == *held)
            .expect("a floor per author set");
        let added = t.ordinary_or[tau_k].saturating_sub(t.ordinary_rules);
        if t.unsafe_or[tau_k] < *min_unsafe
            || t.ordinary_or[tau_k] > *max_ordinary
            || added > *max_added
        {
            failed.push(*held);
        }
    }
    println!("\nOrdinary texts rejected by the classifier alone at TAU = {TAU}:");
    for (held, scored) in &folds {
        for s in scored
            .iter()
            .filter(|s| !s.unsafe_ && !s.rules && (s.p >= TAU || s.step))
        {
            let cat = s.category.map_or("-", |c| c.id());
            println!("ADDED [{held} {cat}] p {:.3}: {:?}", s.p, s.text);
        }
    }
    println!("\nRules verdicts the classifier overturned (`Model::overturns`):");
    for (held, scored) in &folds {
        for s in scored.iter().filter(|s| s.rules && !s.kept) {
            let cat = s.category.map_or("-", |c| c.id());
            let label = if s.unsafe_ { "UNSAFE" } else { "ordinary" };
            println!("OVERTURNED [{held} {cat} {label}]: {:?}", s.text);
        }
    }
    let caught: Vec<&Scored> = folds
        .iter()
        .flat_map(|(_, s)| s)
        .filter(|s| s.unsafe_ && !s.rules && (s.p >= TAU || s.step) && s.category.is_some())
        .collect();
    let right = caught.iter().filter(|s| s.named == s.category).count();
    println!(
        "\nUnsafe texts caught by the classifier alone at TAU: {}; its category named right: {right} ({:.1}%)",
        caught.len(),
        pct(right, caught.len())
    );
    assert!(caught.iter().all(|s| s.named.is_some()));
    println!("\nPer category, pooled over the held-out author sets:");
    println!("{}", header.replace("held out", "category"));
    for cat in SafetyCategory::ALL {
        let mut t = Tally::default();
        for (_, scored) in &folds {
            scored
                .iter()
                .filter(|s| s.category == Some(cat))
                .for_each(|s| t.add(s));
        }
        println!("{}", row(cat.id(), &t));
    }
    println!("\nPer held-out author set and category, at TAU = {TAU}:");
    println!("| held out | category | unsafe: rules | rules OR classifier | ordinary: rules | rules OR classifier |\n|---|---|---|---|---|---|");
    for (held, scored) in &folds {
        for cat in SafetyCategory::ALL {
            let mut t = Tally::default();
            scored
                .iter()
                .filter(|s| s.category == Some(cat))
                .for_each(|s| t.add(s));
            println!(
                "| {held} | {} | {}/{} | {}/{} | {}/{} | {}/{} |",
                cat.id(),
                t.unsafe_rules,
                t.unsafe_n,
                t.unsafe_or[tau_k],
                t.unsafe_n,
                t.ordinary_rules,
                t.ordinary_n,
                t.ordinary_or[tau_k],
                t.ordinary_n
            );
        }
    }
    assert!(
        failed.is_empty(),
        "held-out sets below their floors: {failed:?}"
    );
}

/// Two trainings on the same texts give the same model, weight for weight; the training
/// converges and its time is printed.
#[test]
fn training_is_deterministic() {
    let corpus = learned::corpus();
    let t0 = Instant::now();
    let a = Model::train(&corpus);
    let took = t0.elapsed();
    let b = Model::train(&corpus);
    println!(
        "trained on {} texts in {took:?}: {} features, binary model {:?}",
        corpus.len(),
        a.vocab.len(),
        a.unsafe_model.fit
    );
    assert!(a.unsafe_model.fit.converged);
    assert!(a.categories.iter().all(|c| c.fit.converged));
    assert_eq!(a.unsafe_model.w.len(), a.vocab.len());
    assert!(a == b, "two trainings differ");
    assert!(a.unsafe_model.w.iter().any(|&w| w != 0.0));
}

/// `scan_skill` is the rules, then the process-wide model at `TAU` on each scanned text;
/// a rejection by the classifier names a category that `SafetyCategory::of_verdict` reads.
#[test]
fn the_scan_asks_the_classifier_when_the_rules_pass() {
    let corpus = learned::corpus();
    let model = learned::model();
    let mut learned_rejections = 0;
    let t0 = Instant::now();
    let mut scans = 0;
    for e in corpus
        .iter()
        .filter(|e| ["dev5a", "dev5b", "test4"].contains(&e.source))
    {
        let texts = skill_texts(e);
        let [d, i, _] = &texts;
        let name = e
            .fields
            .as_ref()
            .map_or("memory-helper".to_string(), |f| f[0].clone());
        let got = memskill_designer::safety::scan_skill(&name, d, i);
        scans += 3;
        // each text in turn: the rules, then the classifier
        let expected = texts.iter().find_map(|t| {
            rules_scan(t)
                .err()
                .filter(|_| !model.overturns(t))
                .map(|r| (r, false))
                .or_else(|| model.judge(t, TAU).map(|l| (l, true)))
        });
        match (&got, expected) {
            (Err(v), Some((why, by_classifier))) => {
                assert!(v.ends_with(&why), "{v} vs {why}");
                if by_classifier {
                    assert!(v.contains("safety rule `learned-"), "{v}");
                    assert!(SafetyCategory::of_verdict(v).is_some(), "{v}");
                    learned_rejections += 1;
                }
            }
            (Ok(()), None) => {}
            (got, expected) => panic!("{:?}: scan {got:?}, expected {expected:?}", e.text),
        }
    }
    println!(
        "{learned_rejections} rejected by the classifier alone; {:?} per scanned text (rules and classifier)",
        t0.elapsed() / scans
    );
    assert!(learned_rejections > 0);
}

/// What the classifier costs on a scan once trained: microseconds per text.
#[test]
fn classifier_cost_per_text() {
    let corpus = learned::corpus();
    let model = learned::model();
    let texts: Vec<&str> = corpus.iter().take(600).map(|e| e.text.as_str()).collect();
    let t0 = Instant::now();
    let mut n = 0;
    for t in &texts {
        n += (model.score(t).0 >= TAU) as usize;
    }
    let per = t0.elapsed() / texts.len() as u32;
    println!(
        "classifier: {per:?} per text ({n} of {} at or above TAU)",
        texts.len()
    );
    assert!(n > 0 && n < texts.len());
}
