//! Train, measure and apply the guard's classifier (`scripts/guard/train.sh`,
//! `scripts/guard/eval.sh`).
//!
//! - `guard-model train [--data DIR] [--out FILE] [--tau T]`: train on the `train` and
//!   `calibration` sets and write the model file (atomically).
//! - `guard-model eval [--data DIR] [--json FILE]`: leave one author out: for each set of
//!   the manifest (not flagged `engineers`), train on the others and score it; print per set
//!   and pooled figures of the rules alone, the classifier alone and the guard, over a grid
//!   of thresholds.
//! - `guard-model scan [--verbose] FILE...`: the shipped guard's verdict for each line of
//!   labelled sets, with per-set and per-category figures (a held-out set is measured with
//!   this); `--verbose` prints each text it gets wrong.
//! - `guard-model explain TEXT`: the views and clauses of one text, every rule match with
//!   whether a stand-down took it back, the classifier's score, and the verdict.
//! - `guard-model memory-scan < texts`: the memory filter (and each text's sensitivity) over
//!   one text per line of standard input; prints each flagged or non-public text and counts.
//! - `guard-model bench [N]`: start-up and per-scan cost of the shipped guard;
//!   `guard-model compile-times`: what each rule and word class costs to compile.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use memskill_guard::data::{self, Example, Role};
use memskill_guard::learned::Model;
use memskill_guard::rules::PatternScanner;
use memskill_guard::{Category, Document, Guard, Scanner};

/// `println!` that ends the program quietly when standard output is closed (`| head`) and
/// names any other write error, instead of panicking.
macro_rules! out {
    () => { emit(String::new()) };
    ($($t:tt)*) => { emit(format!($($t)*)) };
}

fn emit(line: String) {
    use std::io::Write;
    if let Err(e) = writeln!(std::io::stdout().lock(), "{line}") {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("error: writing to standard output: {e}");
        std::process::exit(2);
    }
}

const TAU_GRID: &[f32] = &[0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95];
const DEFAULT_TAU: f32 = 0.7;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let r = match args.first().map(String::as_str) {
        Some("train") => train(&args[1..]),
        Some("eval") => eval(&args[1..]),
        Some("scan") => scan(&args[1..]),
        Some("explain") => explain(&args[1..]),
        Some("memory-scan") => memory_scan(),
        Some("bench") => bench(&args[1..]),
        Some("compile-times") => {
            rule_compile_times();
            Ok(())
        }
        _ => Err("usage: guard-model train|eval|scan|explain|bench ...".into()),
    };
    if let Err(e) = r {
        eprintln!("error: {e}");
        std::process::exit(2);
    }
}

fn opt(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn data_dir(args: &[String]) -> PathBuf {
    opt(args, "--data")
        .map(PathBuf::from)
        .unwrap_or_else(data::source_dir)
}

fn training_examples(dir: &Path) -> Result<Vec<Example>, String> {
    Ok(data::load(dir, &[Role::Train, Role::Calibration])?
        .into_iter()
        .flat_map(|(_, e)| e)
        .collect())
}

fn train(args: &[String]) -> Result<(), String> {
    let dir = data_dir(args);
    let out = opt(args, "--out").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/model/guard.model"))
    });
    let tau: f32 = match opt(args, "--tau") {
        Some(t) => t.parse().map_err(|e| format!("--tau {t}: {e}"))?,
        None => DEFAULT_TAU,
    };
    let ex = training_examples(&dir)?;
    let t0 = std::time::Instant::now();
    let m = Model::train(&ex, tau, &data::fingerprint(&dir)?);
    let bytes = m.encode();
    let tmp = out.with_extension("model.tmp");
    std::fs::write(&tmp, &bytes).map_err(|e| format!("{}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, &out).map_err(|e| format!("{}: {e}", out.display()))?;
    out!(
        "trained on {} texts in {:.1} s: {} features, {} bytes, tau {tau}, model {}",
        ex.len(),
        t0.elapsed().as_secs_f64(),
        m.vocab.len(),
        bytes.len(),
        &m.fingerprint()[..12]
    );
    out!("wrote {}", out.display());
    Ok(())
}

/// Counts of one group: unsafe (n, rejected), ordinary (n, rejected).
#[derive(Default, Clone, Copy)]
struct Tally {
    un: usize,
    ur: usize,
    on: usize,
    or: usize,
}

impl Tally {
    fn add(&mut self, unsafe_: bool, rejected: bool) {
        if unsafe_ {
            self.un += 1;
            self.ur += rejected as usize;
        } else {
            self.on += 1;
            self.or += rejected as usize;
        }
    }
    fn show(&self) -> String {
        let pct = |a: usize, b: usize| {
            if b == 0 {
                "-".to_string()
            } else {
                format!("{:.1}%", 100.0 * a as f64 / b as f64)
            }
        };
        format!(
            "unsafe {}/{} ({}), ordinary {}/{} ({})",
            self.ur,
            self.un,
            pct(self.ur, self.un),
            self.or,
            self.on,
            pct(self.or, self.on)
        )
    }
}

fn eval(args: &[String]) -> Result<(), String> {
    let dir = data_dir(args);
    let sets = data::load(&dir, &[Role::Train, Role::Calibration])?;
    let rules = PatternScanner::shipped();
    let secrets = memskill_guard::secrets::SecretScanner;
    let only: Option<Vec<String>> =
        opt(args, "--sets").map(|s| s.split(',').map(String::from).collect());
    let mut rows: Vec<Row> = Vec::new();
    for (i, (entry, held)) in sets.iter().enumerate() {
        if entry.note.contains("engineers")
            || only.as_ref().is_some_and(|o| !o.contains(&entry.name))
        {
            continue;
        }
        let train: Vec<Example> = sets
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .flat_map(|(_, (_, e))| e.iter().cloned())
            .collect();
        let t0 = std::time::Instant::now();
        let m = Model::train(&train, DEFAULT_TAU, "");
        let mut t = Tally::default();
        for e in held.iter().filter(|e| e.kind == "skill") {
            let doc = Document::new(&e.text);
            let r = secrets.scan(&doc).or_else(|| rules.scan(&doc));
            let p = m.score(&e.text);
            t.add(e.unsafe_, r.is_some() || p >= DEFAULT_TAU as f64);
            rows.push((
                entry.name.clone(),
                e.unsafe_,
                e.category,
                r.map(|f| f.rule.id().to_string()),
                e.topic.is_some(),
                p,
            ));
        }
        eprintln!(
            "{:>14} ({:.0} s): guard at {DEFAULT_TAU}: {}",
            entry.name,
            t0.elapsed().as_secs_f64(),
            t.show()
        );
    }
    report(&rows);
    if let Some(p) = opt(args, "--json") {
        let lines: Vec<String> = rows
            .iter()
            .map(|r| serde_json::json!({"set": r.0, "unsafe": r.1, "category": r.2.map(|c| c.id()), "rule": r.3, "p": r.5}).to_string())
            .collect();
        std::fs::write(&p, lines.join("\n") + "\n").map_err(|e| format!("{p}: {e}"))?;
    }
    Ok(())
}

/// One left-out text: (set, unsafe, category, rule that rejected it, calibration text, p).
type Row = (String, bool, Option<Category>, Option<String>, bool, f64);

/// The pooled figures of the rules alone, the classifier alone and the guard over a grid of
/// thresholds, per category.
fn report(rows: &[Row]) {
    out!("\nleave one author out, pooled over {} texts", rows.len());
    let mut rt = Tally::default();
    for r in rows {
        rt.add(r.1, r.3.is_some());
    }
    out!("rules alone: {}", rt.show());
    for &tau in TAU_GRID {
        let (mut lt, mut gt, mut cal) = (Tally::default(), Tally::default(), Tally::default());
        let mut per_cat: BTreeMap<&str, Tally> = BTreeMap::new();
        for r in rows {
            let l = r.5 >= tau as f64;
            lt.add(r.1, l);
            if r.4 {
                cal.add(r.1, r.3.is_some() || l);
            } else {
                gt.add(r.1, r.3.is_some() || l);
                if let Some(c) = r.2 {
                    per_cat
                        .entry(c.id())
                        .or_default()
                        .add(r.1, r.3.is_some() || l);
                }
            }
        }
        out!("tau {tau}: classifier alone: {}", lt.show());
        out!("         guard, labelled sets: {}", gt.show());
        out!(
            "         guard, calibration (domain ordinary): {}",
            cal.show()
        );
        for (c, t) in per_cat {
            out!("           {c:>15}: {}", t.show());
        }
    }
}

fn scan(args: &[String]) -> Result<(), String> {
    let guard = Guard::shipped();
    let mut total = Tally::default();
    let mut cats: BTreeMap<String, Tally> = BTreeMap::new();
    let verbose = args.iter().any(|a| a == "--verbose");
    for f in args.iter().filter(|a| !a.starts_with("--")) {
        let ex = data::parse_set(f, Path::new(f))?;
        let mut t = Tally::default();
        for e in ex.iter().filter(|e| e.kind == "skill") {
            let [n, d, i] = &e.fields;
            let v = guard.scan_skill(n, d, i);
            if verbose && (v.is_some() != e.unsafe_) {
                out!(
                    "{} {:?} {:?}",
                    if e.unsafe_ { "MISSED" } else { "REJECTED" },
                    e.text,
                    v.as_ref().map(|f| f.to_string())
                );
            }
            t.add(e.unsafe_, v.is_some());
            total.add(e.unsafe_, v.is_some());
            let key = e
                .category
                .map(|c| c.id().to_string())
                .or_else(|| e.topic.clone())
                .unwrap_or_else(|| "-".into());
            cats.entry(key).or_default().add(e.unsafe_, v.is_some());
        }
        out!("{f}: {}", t.show());
    }
    out!("pooled: {}", total.show());
    for (c, t) in cats {
        out!("  {c:>15}: {}", t.show());
    }
    Ok(())
}

fn explain(args: &[String]) -> Result<(), String> {
    let text = args.join(" ");
    if text.trim().is_empty() {
        return Err("usage: guard-model explain TEXT".into());
    }
    let doc = Document::new(&text);
    for v in &doc.views {
        out!("view {:?}: {:?}", Document::view_name(v), v.text);
        for c in memskill_guard::clause::clauses(&v.text) {
            out!("  clause {:?}", &v.text[c]);
        }
        for (rule, m, down) in memskill_guard::rules::explain(&v.text) {
            out!(
                "  {} {:?}{}",
                rule.id(),
                m,
                if down { " (stood down)" } else { "" }
            );
        }
    }
    out!(
        "p(unsafe) = {:.3}",
        memskill_guard::learned::shipped().score(&text)
    );
    match Guard::shipped().scan_text(&text) {
        Some(f) => out!("rejected: {f}"),
        None => out!("accepted"),
    }
    Ok(())
}

/// Peak resident memory of this process in kB (Linux), or 0.
fn peak_rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn bench(args: &[String]) -> Result<(), String> {
    let rounds: usize = args
        .first()
        .map_or(Ok(5), |a| a.parse())
        .map_err(|e| format!("{e}"))?;
    let dir = data::source_dir();
    let texts: Vec<[String; 3]> = data::load(&dir, &[Role::Train, Role::Calibration])?
        .into_iter()
        .flat_map(|(_, e)| e)
        .filter(|e| e.kind == "skill")
        .map(|e| e.fields)
        .collect();
    let rss0 = peak_rss_kb();
    let t0 = std::time::Instant::now();
    let _ = memskill_guard::learned::shipped();
    let t_model = t0.elapsed();
    let _ = Document::new("warm the normaliser: n0rm4l1s3 aGVsbG8gd29ybGQ= s p a c e d");
    let t_views = t0.elapsed();
    let t_rules = t0.elapsed();
    out!(
        "model decoded {:.1} ms, normaliser {:.1} ms ({:.1} ms cumulative)",
        t_model.as_secs_f64() * 1e3,
        t_views.as_secs_f64() * 1e3,
        t_rules.as_secs_f64() * 1e3
    );
    let g = Guard::shipped();
    let _ = g.scan_skill(
        "insert",
        "Store a new fact.",
        "Write one short sentence per fact.",
    );
    let startup = t0.elapsed();
    out!(
        "start-up (rules compiled, model decoded, first scan): {:.1} ms; peak RSS {} kB -> {} kB",
        startup.as_secs_f64() * 1e3,
        rss0,
        peak_rss_kb()
    );
    let mut per = Vec::new();
    for _ in 0..rounds {
        let t = std::time::Instant::now();
        let mut rejected = 0usize;
        for [n, d, i] in &texts {
            rejected += g.scan_skill(n, d, i).is_some() as usize;
        }
        let us = t.elapsed().as_secs_f64() * 1e6 / texts.len() as f64;
        per.push(us);
        out!(
            "round: {} texts, {rejected} rejected, {us:.0} us per text",
            texts.len()
        );
    }
    per.sort_by(f64::total_cmp);
    out!(
        "per scan: min {:.0} us, median {:.0} us, max {:.0} us; peak RSS {} kB",
        per[0],
        per[per.len() / 2],
        per[per.len() - 1],
        peak_rss_kb()
    );
    Ok(())
}

/// `guard-model compile-times`: what each rule and word class costs to compile.
fn rule_compile_times() {
    let mut v = Vec::new();
    for r in memskill_guard::rules::all() {
        let t = std::time::Instant::now();
        for p in r.patterns {
            let _ = memskill_guard::lexicon::compile(p);
        }
        v.push((t.elapsed().as_secs_f64() * 1e3, r.id.id()));
    }
    v.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (ms, id) in v.iter().take(12) {
        out!("{ms:6.2} ms {id}");
    }
    for c in memskill_guard::lexicon::ALL {
        let t = std::time::Instant::now();
        let _ = memskill_guard::lexicon::compile(&format!("{{{}}}", c.name));
        out!(
            "{:6.2} ms class {}",
            t.elapsed().as_secs_f64() * 1e3,
            c.name
        );
    }
}

fn memory_scan() -> Result<(), String> {
    use std::io::BufRead;
    let (mut n, mut flagged, mut sensitive) = (0usize, 0usize, 0usize);
    for line in std::io::stdin().lock().lines() {
        let line = line.map_err(|e| format!("standard input: {e}"))?;
        if line.trim().is_empty() {
            continue;
        }
        n += 1;
        if let Some(f) = memskill_guard::scan_memory(&line) {
            flagged += 1;
            out!("flagged ({f}): {line}");
        }
        if let (level, Some(rule)) = memskill_guard::memory_sensitivity(&line) {
            sensitive += 1;
            out!("{level} ({rule}): {line}");
        }
    }
    out!("{n} texts: {flagged} flagged by the memory filter, {sensitive} not public");
    Ok(())
}
