//! `memskill report`: one report over many evaluations, in the shapes of the paper's
//! tables — Table 1 (method x dataset: F1 and LLM-judge score; ALFWorld success rate and
//! steps), Table 2 (method x executor model, which also shows cross-model transfer: the
//! same checkpoint evaluated with another executor) and Figure 3 (score against the
//! HotpotQA context length, one line per method and K) — plus the skill-bank evolution of
//! every trained run. Every cell gives the number of questions (games), the failed calls
//! left out, and a 95% percentile-bootstrap interval, and links to its `results.json`.
//!
//! Pure reading and formatting: [`collect`] finds `results.json` files, [`Report::build`]
//! turns them into tables, [`Report::write`] writes `report.md`, `report.html` and
//! `figure3.png` (when there is a context-length sweep).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::eval::EvalResults;
use crate::report_chart::esc;
use crate::report_groups::{grouped, method_group, row_key, MethodGroup, RowKey};

/// Bootstrap resamples per interval.
pub const BOOTSTRAP_RESAMPLES: usize = 1000;

/// A mean with its 95% bootstrap interval over `n` scored items.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Estimate {
    pub mean: f64,
    pub lo: f64,
    pub hi: f64,
    pub n: usize,
}

/// Mean of `xs` and its 95% percentile-bootstrap interval (`resamples` draws from a
/// generator seeded with `seed`, so a report is reproducible). None for no data.
pub fn bootstrap(xs: &[f64], resamples: usize, seed: u64) -> Option<Estimate> {
    if xs.is_empty() {
        return None;
    }
    let n = xs.len();
    let mean = xs.iter().sum::<f64>() / n as f64;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut means: Vec<f64> = (0..resamples)
        .map(|_| (0..n).map(|_| xs[rng.random_range(0..n)]).sum::<f64>() / n as f64)
        .collect();
    means.sort_by(f64::total_cmp);
    let at = |q: f64| means[((q * resamples as f64) as usize).min(resamples - 1)];
    let (lo, hi) = if resamples == 0 {
        (mean, mean)
    } else {
        (at(0.025), at(0.975))
    };
    Some(Estimate { mean, lo, hi, n })
}

/// A trained run's name and its `skills.md`.
pub type RunSkills = (String, PathBuf);

/// One line of a figure: its name and (x, y) points.
pub type FigureSeries = (String, Vec<(f64, f64)>);

/// One evaluation found on disk.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Its `results.json`.
    pub path: PathBuf,
    pub method: String,
    pub dataset: String,
    pub split: String,
    pub executor: String,
    pub top_k: usize,
    /// HotpotQA: documents concatenated per sample (the Figure-3 sweep), when recorded.
    pub context_docs: Option<usize>,
    /// An external memory system (`memskill eval --adapter`): "adapter", or "adapter,
    /// answers itself" when it answered questions itself.
    pub external: Option<String>,
    /// The model that gave the L-J scores, when recorded.
    pub judge_model: Option<String>,
    /// The checkpoint evaluated (empty: none, a baseline or an adapter).
    pub checkpoint: String,
    /// Whether it ran on the scripted synthetic task ([`is_scripted`]).
    pub scripted: bool,
    pub metric: Metrics,
}

impl Entry {
    /// The group of Tables 1 and 2 its rows go in.
    pub fn group(&self) -> MethodGroup {
        method_group(
            &self.method,
            !self.checkpoint.is_empty(),
            self.external.is_some(),
        )
    }
}

/// Whether an evaluation ran on the scripted synthetic task, whose numbers mean nothing: the
/// scripted oracle as executor (its `executor_backend`, or its executor id in results written
/// before that field), or the synthetic dataset (whose questions a scripted server answers
/// as well, reached as an OpenAI-compatible endpoint).
pub fn is_scripted(executor_backend: Option<&str>, executor: &str, dataset: &str) -> bool {
    let scripted = crate::config::LlmBackend::ScriptedSynthetic(Default::default()).name();
    executor_backend == Some(scripted) || executor == scripted || dataset == "synthetic"
}

/// The scores of an entry.
#[derive(Debug, Clone)]
pub enum Metrics {
    Qa {
        f1: Option<Estimate>,
        judge: Option<Estimate>,
        questions: usize,
        /// Failed answer calls, failed judge verdicts, failed memory-building calls.
        errors: usize,
    },
    Alfworld {
        success: Option<Estimate>,
        steps: Option<Estimate>,
        games: usize,
        env_errors: usize,
    },
}

fn seed_of(path: &Path) -> u64 {
    path.to_string_lossy()
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
        })
}

/// Read one `results.json` (a QA evaluation or an ALFWorld one).
pub fn read_entry(path: &Path) -> Result<Entry> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let v: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
    let seed = seed_of(path);
    if v.get("rows").is_some() && v.get("actor").is_some() {
        let r: memskill_alfworld::EvalReport = serde_json::from_value(v.clone())
            .with_context(|| format!("parsing {} as an ALFWorld evaluation", path.display()))?;
        let scored: Vec<&memskill_alfworld::GameResult> = r
            .results
            .iter()
            .filter(|g| !matches!(g.outcome, memskill_alfworld::GameOutcome::EnvError(_)))
            .collect();
        let won: Vec<f64> = scored
            .iter()
            .map(|g| f64::from(u8::from(g.outcome == memskill_alfworld::GameOutcome::Won)))
            .collect();
        let steps: Vec<f64> = scored.iter().map(|g| g.steps as f64).collect();
        let mut splits: Vec<&str> = r.results.iter().map(|g| g.split.as_str()).collect();
        splits.dedup();
        let method = v["method"].as_str().unwrap_or(&r.actor).to_string();
        let executor = v["executor"].as_str().unwrap_or("").to_string();
        return Ok(Entry {
            scripted: is_scripted(v["executor_backend"].as_str(), &executor, "alfworld"),
            checkpoint: v["checkpoint"].as_str().unwrap_or("").to_string(),
            path: path.to_path_buf(),
            method,
            dataset: "alfworld".into(),
            split: splits.join("+"),
            executor,
            top_k: 0,
            context_docs: None,
            external: None,
            judge_model: None,
            metric: Metrics::Alfworld {
                success: bootstrap(&won, BOOTSTRAP_RESAMPLES, seed),
                steps: bootstrap(&steps, BOOTSTRAP_RESAMPLES, seed ^ 1),
                games: r.results.len(),
                env_errors: r.results.len() - scored.len(),
            },
        });
    }
    let r: EvalResults = serde_json::from_value(v.clone())
        .with_context(|| format!("parsing {} as an evaluation", path.display()))?;
    let f1: Vec<f64> = r.queries.iter().filter_map(|q| q.f1).collect();
    let judge: Vec<f64> = r.queries.iter().filter_map(|q| q.judge).collect();
    let errors = r.queries.iter().filter(|q| q.error.is_some()).count()
        + r.queries.iter().filter(|q| q.judge_error.is_some()).count()
        + r.memory_call_errors;
    Ok(Entry {
        path: path.to_path_buf(),
        method: r.method.clone(),
        dataset: r.dataset.clone(),
        split: r.split.clone(),
        executor: r.executor.clone(),
        top_k: r.top_k,
        context_docs: r.context_docs,
        external: r.adapter.as_ref().map(|a| {
            if a.answered_by_adapter > 0 {
                "adapter, answers itself".to_string()
            } else {
                "adapter".to_string()
            }
        }),
        judge_model: r.judge_model.clone(),
        checkpoint: r.checkpoint.clone(),
        scripted: is_scripted(r.executor_backend.as_deref(), &r.executor, &r.dataset),
        metric: Metrics::Qa {
            f1: bootstrap(&f1, BOOTSTRAP_RESAMPLES, seed),
            judge: bootstrap(&judge, BOOTSTRAP_RESAMPLES, seed ^ 1),
            questions: r.queries.len(),
            errors,
        },
    })
}

/// Every `results.json` under the given paths: an evaluation directory, a run directory
/// (its `eval/*/`), or a directory of either; plus the `skills.md` of each run directory.
/// The third value lists the evaluation folders whose last evaluation failed (their
/// `failed.json`, see [`crate::eval::write_results`]): their stale `results.json`, if any, is
/// left out of the entries.
pub fn collect(inputs: &[PathBuf]) -> Result<(Vec<Entry>, Vec<RunSkills>, Vec<String>)> {
    let mut found = Found::default();
    for p in inputs {
        if !p.exists() {
            bail!("{}: no such file or directory", p.display());
        }
        walk(p, 0, &mut found)?;
    }
    let Found {
        files,
        runs,
        failed,
    } = found;
    if files.is_empty() {
        bail!(
            "no results.json under {} (evaluate first: memskill eval ...){}",
            inputs
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
            failed.iter().map(|f| format!("\n{f}")).collect::<String>()
        );
    }
    let entries = files
        .iter()
        .map(|f| read_entry(f))
        .collect::<Result<Vec<_>>>()?;
    let skills = runs
        .into_iter()
        .map(|r: PathBuf| {
            let name = r
                .file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_default();
            (name, r.join("skills.md"))
        })
        .collect();
    Ok((entries, skills, failed))
}

/// What [`walk`] finds: results files, run folders (their skills.md) and failed evaluations.
#[derive(Default)]
struct Found {
    files: BTreeSet<PathBuf>,
    runs: BTreeSet<PathBuf>,
    failed: Vec<String>,
}

fn walk(p: &Path, depth: usize, found: &mut Found) -> Result<()> {
    if p.is_file() {
        if p.file_name().is_some_and(|n| n == "results.json") {
            match p.parent().and_then(crate::eval::failed_eval) {
                Some(why) => found.failed.push(why),
                None => {
                    found.files.insert(p.to_path_buf());
                }
            }
        }
        return Ok(());
    }
    if !p.is_dir() || depth > 4 {
        return Ok(());
    }
    if let Some(why) = crate::eval::failed_eval(p) {
        found.failed.push(why);
        return Ok(());
    }
    if p.join("results.json").is_file() {
        found.files.insert(p.join("results.json"));
        // <run>/eval/<name>/results.json: the run's skills.md goes with it
        if let Some(run) = p.parent().and_then(Path::parent) {
            if run.join("skills.md").is_file() && p.parent().is_some_and(|e| e.ends_with("eval")) {
                found.runs.insert(run.to_path_buf());
            }
        }
        return Ok(());
    }
    if p.join("skills.md").is_file() {
        found.runs.insert(p.to_path_buf());
    }
    let mut kids: Vec<PathBuf> = std::fs::read_dir(p)
        .with_context(|| format!("reading {}", p.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|k| k.is_dir())
        .collect();
    kids.sort();
    for k in kids {
        // checkpoints hold no evaluations
        if k.file_name()
            .is_some_and(|n| n == "checkpoints" || n == "skills")
        {
            continue;
        }
        walk(&k, depth + 1, found)?;
    }
    Ok(())
}

/// A table cell: text and the results.json it comes from.
#[derive(Debug, Clone)]
pub struct Cell {
    pub text: String,
    pub link: Option<PathBuf>,
}

/// A titled table.
#[derive(Debug, Clone)]
pub struct Table {
    pub title: String,
    pub note: String,
    pub header: Vec<String>,
    pub rows: Vec<(String, Vec<Cell>)>,
    /// `(row index, title)`: a group of methods ([`MethodGroup`]) starts at that row.
    pub sections: Vec<(usize, String)>,
}

fn est(e: &Option<Estimate>, scale: f64, digits: usize) -> String {
    match e {
        Some(e) => format!(
            "{:.d$} [{:.d$}, {:.d$}]",
            e.mean * scale,
            e.lo * scale,
            e.hi * scale,
            d = digits
        ),
        None => "-".into(),
    }
}

fn qa_cell(e: &Entry) -> Cell {
    let text = match &e.metric {
        Metrics::Qa {
            f1,
            judge,
            questions,
            errors,
        } => match judge {
            // No judge ran: no L-J column to show a dash in.
            None => format!("F1 {} · n={questions}, errors {errors}", est(f1, 100.0, 2)),
            Some(_) => format!(
                "F1 {} · L-J {} ({}) · n={questions}, errors {errors}",
                est(f1, 100.0, 2),
                est(judge, 100.0, 2),
                judged_by(e)
            ),
        },
        Metrics::Alfworld {
            success,
            steps,
            games,
            env_errors,
        } => format!(
            "SR {} · #Steps {} · games {games}, env errors {env_errors}",
            est(success, 100.0, 1),
            est(steps, 1.0, 1)
        ),
    };
    Cell {
        text,
        link: Some(e.path.clone()),
    }
}

/// `judge MODEL` for an L-J score (`judge not recorded` for results from before the field).
fn judged_by(e: &Entry) -> String {
    format!(
        "judge {}",
        e.judge_model.as_deref().unwrap_or("not recorded")
    )
}

/// A row's label: the method, with the executor (when asked) and the context length (when
/// recorded) so that evaluations differing in them get rows of their own.
fn row_label(e: &Entry, with_executor: bool) -> String {
    let mut extra: Vec<String> = Vec::new();
    if with_executor && !e.executor.is_empty() {
        extra.push(e.executor.clone());
    }
    if let Some(d) = e.context_docs {
        extra.push(format!("{d} docs"));
    }
    if let Some(x) = &e.external {
        extra.push(x.clone());
    }
    if extra.is_empty() {
        e.method.clone()
    } else {
        format!("{} ({})", e.method, extra.join(", "))
    }
}

/// The score a one-number cell shows: L-J when judged, else F1, else the success rate.
fn headline(e: &Entry) -> Option<(&'static str, Estimate)> {
    match &e.metric {
        Metrics::Qa { f1, judge, .. } => judge
            .clone()
            .map(|j| ("L-J", j))
            .or_else(|| f1.clone().map(|f| ("F1", f))),
        Metrics::Alfworld { success, .. } => success.clone().map(|s| ("SR", s)),
    }
}

/// A table column's dataset: `name (split)`.
fn dataset_label(e: &Entry) -> String {
    format!("{} ({})", e.dataset, e.split)
}

/// A row of `n` empty (`-`) cells.
fn empty_row(n: usize) -> Vec<Cell> {
    vec![
        Cell {
            text: "-".into(),
            link: None
        };
        n
    ]
}

/// A one-number cell: the [`headline`] score `h` of `e` (x 100), linked to its results.
fn headline_cell(e: &Entry, h: Option<(&'static str, Estimate)>) -> Cell {
    Cell {
        text: h.map_or("-".into(), |(k, x)| {
            let by = if k == "L-J" {
                format!(" ({})", judged_by(e))
            } else {
                String::new()
            };
            format!("{k} {}{by}", est(&Some(x), 100.0, 2))
        }),
        link: Some(e.path.clone()),
    }
}

/// The row key of `e` in Tables 1 and 2: its group, then its label (the executor in it when
/// `with_executor`).
fn entry_key(e: &Entry, with_executor: bool) -> RowKey {
    row_key(e.group(), &e.method, row_label(e, with_executor))
}

/// The executor models of `entries` (one empty name for results without one).
fn executors(entries: &[Entry]) -> BTreeSet<&str> {
    entries.iter().map(|e| e.executor.as_str()).collect()
}

/// Table 1: method x dataset (None without entries), the rows grouped as in the paper's
/// Table 1 ([`MethodGroup`]). Row labels name the executor when there are several; one is
/// named in the note.
fn table1(entries: &[Entry], datasets: &[String]) -> Option<Table> {
    let execs = executors(entries);
    let with_executor = execs.len() > 1;
    let mut t1: BTreeMap<RowKey, Vec<Cell>> = BTreeMap::new();
    for e in entries {
        let col = datasets
            .iter()
            .position(|d| *d == dataset_label(e))
            .unwrap_or(0);
        let cells = t1
            .entry(entry_key(e, with_executor))
            .or_insert_with(|| empty_row(datasets.len()));
        cells[col] = qa_cell(e);
    }
    let mut note = "Scores x 100 with 95% bootstrap intervals; n = questions (games for ALFWorld); errors = failed LLM calls left out of the means (answer, judge, memory building; for an adapter row also its failed requests), never scored 0. Rows marked adapter are external memory systems run through docs/adapter-protocol.md with memskill's spans, answerer, scorer and judge. Rows in the paper's order: MemSkill, its ablations, the baselines, the external systems.".to_string();
    match execs.iter().next() {
        Some(x) if !with_executor && !x.is_empty() => {
            note.push_str(&format!(" Executor model: {x}."))
        }
        _ => {}
    }
    let (rows, sections) = grouped(t1);
    (!rows.is_empty()).then(|| Table {
        title: "Table 1: methods x datasets".into(),
        note,
        header: datasets.to_vec(),
        rows,
        sections,
    })
}

/// Table 1 in the paper's layout: a column group per dataset (F1, L-J and n / errors for
/// question answering; SR, #Steps and games / environment errors for ALFWorld), a row per
/// method, every cell linked to its results.json. An L-J column is left out for a dataset
/// no evaluation was judged on; its header names the judge model when one model judged all.
#[derive(Debug, Clone)]
pub struct PaperTable {
    pub groups: Vec<(String, Vec<String>)>,
    pub rows: Vec<(String, Vec<Cell>)>,
    /// `(row index, title)`: a group of methods starts at that row.
    pub sections: Vec<(usize, String)>,
}

fn paper_table1(entries: &[Entry], datasets: &[String]) -> Option<PaperTable> {
    let mut groups = Vec::new();
    for d in datasets {
        let here: Vec<&Entry> = entries.iter().filter(|e| dataset_label(e) == *d).collect();
        if let Some(subs) = table1_columns(&here) {
            groups.push((d.clone(), subs));
        }
    }
    let mut rows: BTreeMap<RowKey, Vec<Cell>> = BTreeMap::new();
    let width: usize = groups.iter().map(|(_, s)| s.len()).sum();
    let with_executor = executors(entries).len() > 1;
    for e in entries {
        let Some(g) = groups.iter().position(|(d, _)| *d == dataset_label(e)) else {
            continue;
        };
        let at: usize = groups[..g].iter().map(|(_, s)| s.len()).sum();
        let cells = rows
            .entry(entry_key(e, with_executor))
            .or_insert_with(|| empty_row(width));
        for (i, text) in table1_texts(e, &groups[g].1).into_iter().enumerate() {
            cells[at + i] = Cell {
                text,
                link: Some(e.path.clone()),
            };
        }
    }
    let (rows, sections) = grouped(rows);
    (!rows.is_empty()).then_some(PaperTable {
        groups,
        rows,
        sections,
    })
}

/// The columns of one dataset's group of Table 1, from the kind of its first entry (`None`
/// when it has none): success, steps and games for ALFWorld; F1, the judge's score when an
/// entry is judged (the judge named in the header when all judged entries share one), and
/// questions for QA.
fn table1_columns(here: &[&Entry]) -> Option<Vec<String>> {
    let first = here.first()?;
    Some(match first.metric {
        Metrics::Alfworld { .. } => {
            vec!["SR".into(), "#Steps".into(), "games (env errors)".into()]
        }
        Metrics::Qa { .. } => {
            let judged: BTreeSet<String> = here
                .iter()
                .filter(|e| matches!(&e.metric, Metrics::Qa { judge: Some(_), .. }))
                .map(|e| {
                    e.judge_model
                        .clone()
                        .unwrap_or_else(|| "not recorded".into())
                })
                .collect();
            let mut subs = vec!["F1".to_string()];
            match judged.len() {
                0 => {}
                1 => subs.push(format!(
                    "L-J (judge {})",
                    judged.iter().next().expect("one")
                )),
                _ => subs.push("L-J (judge per cell)".into()),
            }
            subs.push("n (errors)".into());
            subs
        }
    })
}

/// The texts of one entry's cells under its group's columns `subs`.
fn table1_texts(e: &Entry, subs: &[String]) -> Vec<String> {
    match &e.metric {
        Metrics::Qa {
            f1,
            judge,
            questions,
            errors,
        } => {
            let mut t = vec![est(f1, 100.0, 2)];
            if subs.len() == 3 {
                let per_cell = subs[1].ends_with("per cell)") && judge.is_some();
                t.push(if per_cell {
                    format!("{} ({})", est(judge, 100.0, 2), judged_by(e))
                } else {
                    est(judge, 100.0, 2)
                });
            }
            t.push(format!("{questions} ({errors})"));
            t
        }
        Metrics::Alfworld {
            success,
            steps,
            games,
            env_errors,
        } => vec![
            est(success, 100.0, 1),
            est(steps, 1.0, 1),
            format!("{games} ({env_errors})"),
        ],
    }
}

/// A sweep point's method and point (`full [eval.top_k=1]` -> `full`, `eval.top_k=1`).
fn sweep_point(e: &Entry) -> Option<(&str, &str)> {
    let (base, rest) = e.method.rsplit_once(" [")?;
    let point = rest.strip_suffix(']')?;
    point.contains('=').then_some((base, point))
}

/// The points of `--sweep` evaluations of dataset `d`: a row per method, a column per point.
fn sweep_table(points: &[&Entry], d: &str) -> Option<Table> {
    let here: Vec<&&Entry> = points.iter().filter(|e| dataset_label(e) == d).collect();
    let cols: Vec<String> = here
        .iter()
        .filter_map(|e| sweep_point(e).map(|(_, p)| p.to_string()))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    // the executor names a row only where the points ran on more than one
    let execs: BTreeSet<&str> = here.iter().map(|e| e.executor.as_str()).collect();
    let mut rows: BTreeMap<String, Vec<Cell>> = BTreeMap::new();
    for e in &here {
        let Some((base, point)) = sweep_point(e) else {
            continue;
        };
        let col = cols.iter().position(|c| c == point).unwrap_or(0);
        let label = match execs.len() > 1 && !e.executor.is_empty() {
            false => base.to_string(),
            true => format!("{base} ({})", e.executor),
        };
        let cells = rows.entry(label).or_insert_with(|| empty_row(cols.len()));
        cells[col] = headline_cell(e, headline(e));
    }
    (!rows.is_empty()).then(|| Table {
        title: format!("Sweep — {d}"),
        note: format!(
            "`memskill eval --sweep` points: L-J when judged, else F1 (x 100, 95% bootstrap interval), a column per point. Not Table 1 rows.{}",
            match execs.iter().next() {
                Some(x) if execs.len() == 1 && !x.is_empty() => format!(" Executor model: {x}."),
                _ => String::new(),
            }
        ),
        header: cols,
        rows: rows.into_iter().collect(),
        sections: Vec::new(),
    })
}

/// Table 2 for dataset `d`: method x executor model (cross-model transfer), the rows grouped
/// as in Table 1. None when `d` was evaluated with fewer than two executor models (it would
/// repeat Table 1).
fn table2(entries: &[Entry], d: &str) -> Option<Table> {
    let here: Vec<&Entry> = entries.iter().filter(|e| dataset_label(e) == d).collect();
    let execs: Vec<String> = here
        .iter()
        .map(|e| e.executor.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    if execs.len() < 2 {
        return None;
    }
    let mut rows: BTreeMap<RowKey, Vec<Cell>> = BTreeMap::new();
    for e in &here {
        let col = execs.iter().position(|x| *x == e.executor).unwrap_or(0);
        let cells = rows
            .entry(entry_key(e, false))
            .or_insert_with(|| empty_row(execs.len()));
        cells[col] = headline_cell(e, headline(e));
    }
    let (rows, sections) = grouped(rows);
    Some(Table {
        title: format!("Table 2: methods x executor model — {d}"),
        note: "L-J when judged, else F1 (x 100, 95% bootstrap interval). A column per executor model: the same checkpoint in another column is cross-model transfer.".into(),
        header: execs.iter().map(|x| if x.is_empty() { "(executor)".into() } else { x.clone() }).collect(),
        rows,
        sections,
    })
}

/// Figure 3 for dataset `d` of the context-length `sweep`: score against context length,
/// one series per (method, K), as a table and as chart data. None unless `d` was evaluated
/// at two context lengths or more.
fn figure3(sweep: &[&Entry], d: &str) -> Option<(Table, Vec<FigureSeries>)> {
    let here: Vec<&&Entry> = sweep.iter().filter(|e| e.dataset == d).collect();
    let lens: Vec<usize> = here
        .iter()
        .filter_map(|e| e.context_docs)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    if lens.len() < 2 {
        return None;
    }
    let mut rows: BTreeMap<String, Vec<Cell>> = BTreeMap::new();
    let mut series: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for e in &here {
        let name = format!("{} K={}", e.method, e.top_k);
        let docs = e.context_docs.unwrap_or(0);
        let col = lens.iter().position(|x| *x == docs).unwrap_or(0);
        let cells = rows
            .entry(name.clone())
            .or_insert_with(|| empty_row(lens.len()));
        let h = headline(e);
        cells[col] = headline_cell(e, h.clone());
        if let Some((_, x)) = h {
            series
                .entry(name)
                .or_default()
                .push((docs as f64, x.mean * 100.0));
        }
    }
    for pts in series.values_mut() {
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    let table = Table {
        title: format!("Figure 3: {d} score against context length (documents per sample)"),
        note:
            "L-J when judged, else F1 (x 100, 95% bootstrap interval); figure3.png draws the means."
                .into(),
        header: lens.iter().map(|l| format!("{l} docs")).collect(),
        rows: rows.into_iter().collect(),
        sections: Vec::new(),
    };
    Some((table, series.into_iter().collect()))
}

/// The report's tables and chart data.
#[derive(Debug, Clone)]
pub struct Report {
    pub tables: Vec<Table>,
    /// Table 1 in the paper's layout (the HTML page shows it in place of `tables[0]`).
    pub paper: Option<PaperTable>,
    /// Figure 3: (dataset, series name, points (context docs, score x 100)).
    pub figure: Vec<(String, Vec<FigureSeries>)>,
    pub skills: Vec<RunSkills>,
    pub entries: usize,
    /// How many of the entries ran on the scripted synthetic task ([`is_scripted`]).
    pub scripted: usize,
}

impl Report {
    /// The tables of `entries` (Table 1; Table 2 per dataset with two executors or methods;
    /// Figure 3 per dataset evaluated at two context lengths or more) and the chart data.
    pub fn build(entries: &[Entry], skills: Vec<RunSkills>) -> Report {
        let datasets: Vec<String> = entries
            .iter()
            .map(dataset_label)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        // The points of a context-length sweep (two lengths or more of a dataset) go to
        // their own table (Figure 3), not into Table 1 as extra rows.
        let mut lengths: BTreeMap<&str, BTreeSet<usize>> = BTreeMap::new();
        for e in entries {
            if let Some(d) = e.context_docs {
                lengths.entry(e.dataset.as_str()).or_default().insert(d);
            }
        }
        let in_sweep = |e: &Entry| {
            e.context_docs.is_some()
                && lengths
                    .get(e.dataset.as_str())
                    .is_some_and(|l| l.len() >= 2)
        };
        // So do the points of any other `--sweep` (methods labelled `name [key=value]`): a
        // table of their own per dataset.
        let main: Vec<Entry> = entries
            .iter()
            .filter(|e| !in_sweep(e) && sweep_point(e).is_none())
            .cloned()
            .collect();
        let mut tables: Vec<Table> = table1(&main, &datasets).into_iter().collect();
        let paper = paper_table1(&main, &datasets);
        tables.extend(datasets.iter().filter_map(|d| table2(&main, d)));
        let points: Vec<&Entry> = entries
            .iter()
            .filter(|e| !in_sweep(e) && sweep_point(e).is_some())
            .collect();
        tables.extend(datasets.iter().filter_map(|d| sweep_table(&points, d)));
        let mut figure = Vec::new();
        let sweep: Vec<&Entry> = entries
            .iter()
            .filter(|e| e.context_docs.is_some())
            .collect();
        let sweep_sets: BTreeSet<String> = sweep.iter().map(|e| e.dataset.clone()).collect();
        for d in sweep_sets {
            if let Some((table, series)) = figure3(&sweep, &d) {
                tables.push(table);
                figure.push((d, series));
            }
        }
        Report {
            tables,
            paper,
            figure,
            skills,
            entries: entries.len(),
            scripted: entries.iter().filter(|e| e.scripted).count(),
        }
    }

    /// Write `report.md`, `report.html` and (with a sweep) `figure3.png` into `out`.
    pub fn write(&self, out: &Path) -> Result<Vec<PathBuf>> {
        std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
        let out_abs =
            std::fs::canonicalize(out).with_context(|| format!("resolving {}", out.display()))?;
        let mut written = Vec::new();
        let mut figures = Vec::new();
        for (i, (d, series)) in self.figure.iter().enumerate() {
            let name = if i == 0 {
                "figure3.png".to_string()
            } else {
                format!("figure3-{d}.png")
            };
            let s: Vec<crate::plot::Series> = series
                .iter()
                .map(|(n, p)| crate::plot::Series {
                    name: n.clone(),
                    points: p.clone(),
                })
                .collect();
            let p = out.join(&name);
            crate::plot::line_chart_with(
                &p,
                &format!("{d}: score vs context length"),
                "documents per sample",
                &s,
            )?;
            written.push(p);
            figures.push(name);
        }
        let md = self.markdown(&out_abs, &figures);
        let html = self.html(&out_abs, &figures);
        for (name, body) in [("report.md", md), ("report.html", html)] {
            let p = out.join(name);
            crate::fsutil::write_atomic(&p, body.as_bytes())?;
            written.push(p);
        }
        Ok(written)
    }

    fn markdown(&self, out: &Path, figures: &[String]) -> String {
        let mut s = format!(
            "# memskill report\n\n{} evaluations. Scores are x 100 with 95% percentile-bootstrap intervals ({BOOTSTRAP_RESAMPLES} resamples).\n\n",
            self.entries
        );
        if let Some(b) = scripted_banner(self.scripted, self.entries) {
            s.push_str(&format!("> **Not a result.** {b}\n\n"));
        }
        s.push_str(&self.toc_md());
        for t in &self.tables {
            s.push_str(&table_md(t, out));
        }
        for f in figures {
            s.push_str(&format!("![{f}]({f})\n\n"));
        }
        if !self.skills.is_empty() {
            s.push_str(&format!("## {SKILLS_MD_TITLE}\n\n"));
            for (run, p) in &self.skills {
                s.push_str(&format!("- {run}: [skills.md]({})\n", rel(out, p)));
            }
        }
        s
    }

    fn html(&self, out: &Path, figures: &[String]) -> String {
        let mut s = String::from(
            "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>memskill report</title>\n<style>body{font-family:sans-serif;margin:2em;max-width:1200px}table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #bbb;padding:4px 8px;font-size:14px;text-align:left}th{background:#eee}tr.group th{background:#dde6f0;font-size:13px;letter-spacing:.02em}.note{color:#555;font-size:13px}.banner{background:#fff3cd;border:2px solid #d9a400;border-radius:4px;padding:.8em 1em;margin:1em 0;font-size:15px}nav.toc{background:#f6f6f6;padding:.5em 1.2em;margin:1em 0;font-size:14px}nav.toc h2{font-size:16px;margin:.4em 0}nav.toc ul{margin:.2em 0}.curves svg{margin:4px 8px 4px 0;border:1px solid #eee}pre{background:#f6f6f6;padding:1em;overflow-x:auto;font-size:12px}</style></head><body>\n",
        );
        s.push_str(&format!(
            "<h1>memskill report</h1>\n<p>{} evaluations. Scores are &times; 100 with 95% percentile-bootstrap intervals ({BOOTSTRAP_RESAMPLES} resamples).</p>\n",
            self.entries
        ));
        if let Some(b) = scripted_banner(self.scripted, self.entries) {
            s.push_str(&format!(
                "<div class=\"banner\" role=\"alert\"><strong>Not a result.</strong> {}</div>\n",
                esc(&b)
            ));
        }
        s.push_str(&self.toc_html(figures));
        for (i, t) in self.tables.iter().enumerate() {
            let id = format!("table-{}", i + 1);
            match (i, &self.paper) {
                // the paper's layout of Table 1 (grouped columns) stands in for the first table
                (0, Some(p)) => s.push_str(&paper_table_html(t, p, out, &id)),
                _ => s.push_str(&table_html(t, out, &id)),
            }
        }
        // figures inline: the page is one self-contained file
        for (i, f) in figures.iter().enumerate() {
            s.push_str(&figure_html(out, f, &format!("figure-{}", i + 1)));
        }
        if !self.skills.is_empty() {
            s.push_str(&self.training_html(out));
        }
        s.push_str("</body></html>\n");
        s
    }

    /// report.md's contents: a link to every table and to the skill-bank section, with the
    /// anchors GitHub and most Markdown viewers give those headings ([`md_anchor`]).
    fn toc_md(&self) -> String {
        let mut heads: Vec<&str> = self.tables.iter().map(|t| t.title.as_str()).collect();
        if !self.skills.is_empty() {
            heads.push(SKILLS_MD_TITLE);
        }
        if heads.len() < 2 {
            return String::new();
        }
        let mut s = String::from("Contents:\n\n");
        for h in heads {
            s.push_str(&format!("- [{}](#{})\n", md_escape(h), md_anchor(h)));
        }
        s.push('\n');
        s
    }

    /// The page's contents: a link to every table, figure and trained run.
    fn toc_html(&self, figures: &[String]) -> String {
        let mut s = String::from("<nav class=\"toc\"><h2>Contents</h2><ul>\n");
        for (i, t) in self.tables.iter().enumerate() {
            s.push_str(&format!(
                "<li><a href=\"#table-{}\">{}</a></li>\n",
                i + 1,
                esc(&t.title)
            ));
        }
        for (i, f) in figures.iter().enumerate() {
            s.push_str(&format!(
                "<li><a href=\"#figure-{}\">Chart: {}</a></li>\n",
                i + 1,
                esc(f)
            ));
        }
        if !self.skills.is_empty() {
            s.push_str(&format!(
                "<li><a href=\"#training\">{TRAINING_TITLE}</a><ul>\n"
            ));
            for (i, (run, _)) in self.skills.iter().enumerate() {
                s.push_str(&format!(
                    "<li><a href=\"#run-{}\">{}</a></li>\n",
                    i + 1,
                    esc(run)
                ));
            }
            s.push_str("</ul></li>\n");
        }
        s.push_str("</ul></nav>\n");
        s
    }

    /// Per run: its learning curves, a link to its `skills.md` and that file rendered (the
    /// bank's history as changes only).
    fn training_html(&self, out: &Path) -> String {
        let mut s = format!("<h2 id=\"training\">{TRAINING_TITLE}</h2>\n<p class=\"note\">Per run: reward per update (mean solid, min and max dashed) with the designer stages marked (rollbacks dashed red), the PPO losses, KL and entropy (n/a where a run has no such curve); then the bank's history (what changed at each row) and its current skills.</p>\n");
        for (i, (run, p)) in self.skills.iter().enumerate() {
            let body = std::fs::read_to_string(p).unwrap_or_default();
            let metrics = p
                .parent()
                .map(|d| d.join("metrics.jsonl"))
                .and_then(|m| std::fs::read_to_string(m).ok())
                .unwrap_or_default();
            s.push_str(&format!(
                "<h3 id=\"run-{}\">{}</h3>\n{}\n<p><a href=\"{}\">skills.md</a></p>\n{}\n",
                i + 1,
                esc(run),
                crate::report_page::learning_curves(&metrics),
                esc(&rel(out, p)),
                crate::report_page::markdown_html(&body)
            ));
        }
        s
    }
}

/// The title of the report's training section.
const TRAINING_TITLE: &str = "Training: learning curves and skill-bank evolution";

/// The warning a report carries when `scripted` of its `total` evaluations ran on the
/// scripted synthetic task (None when none did).
pub fn scripted_banner(scripted: usize, total: usize) -> Option<String> {
    if scripted == 0 {
        return None;
    }
    let which = if scripted == total {
        format!("All {total} evaluations here ran")
    } else {
        format!("{scripted} of the {total} evaluations here ran")
    };
    Some(format!(
        "{which} on the scripted synthetic task (the scripted oracle executor or the synthetic dataset). Numbers from the scripted synthetic task are meaningless by design: they show that the pipeline runs end to end, not how well any method remembers."
    ))
}

/// report.md's heading of the links to each run's `skills.md`.
const SKILLS_MD_TITLE: &str = "Skill-bank evolution";

/// The anchor a Markdown viewer gives a heading (GitHub's rule): lower case, letters, digits,
/// `-` and `_` kept, spaces to `-`, everything else dropped.
pub fn md_anchor(heading: &str) -> String {
    heading
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// One table as Markdown: title, note, header, and a bold row before each group of methods.
fn table_md(t: &Table, out: &Path) -> String {
    let mut s = format!("## {}\n\n{}\n\n", t.title, t.note);
    s.push_str(&format!("| | {} |\n", t.header.join(" | ")));
    s.push_str(&format!("|---|{}\n", "---|".repeat(t.header.len())));
    for (i, (row, cells)) in t.rows.iter().enumerate() {
        for (_, title) in t.sections.iter().filter(|(at, _)| *at == i) {
            s.push_str(&format!(
                "| **{}** |{}\n",
                md_escape(title),
                " |".repeat(t.header.len())
            ));
        }
        let cs: Vec<String> = cells
            .iter()
            .map(|c| match &c.link {
                Some(l) => format!("[{}]({})", c.text, rel(out, l)),
                None => c.text.clone(),
            })
            .collect();
        s.push_str(&format!("| {} | {} |\n", md_escape(row), cs.join(" | ")));
    }
    s.push('\n');
    s
}

/// Table 1 in the paper's layout: `t`'s title and note over `p`'s grouped columns.
fn paper_table_html(t: &Table, p: &PaperTable, out: &Path, id: &str) -> String {
    let mut s = format!(
        "<h2 id=\"{id}\">{}</h2>\n<p class=\"note\">{}</p>\n",
        esc(&t.title),
        esc(&t.note)
    );
    let rows: Vec<crate::report_page::GroupedRow> = p
        .rows
        .iter()
        .map(|(r, cells)| {
            let cs = cells
                .iter()
                .map(|c| (c.text.clone(), c.link.as_ref().map(|l| rel(out, l))))
                .collect();
            (r.clone(), cs)
        })
        .collect();
    s.push_str(&crate::report_page::grouped_table_html(
        &p.groups,
        &rows,
        &p.sections,
    ));
    s
}

/// One table with its title and note; linked cells link relative to `out`.
fn table_html(t: &Table, out: &Path, id: &str) -> String {
    let mut s = format!(
        "<h2 id=\"{id}\">{}</h2>\n<p class=\"note\">{}</p>\n<table><tr><th></th>",
        esc(&t.title),
        esc(&t.note)
    );
    for h in &t.header {
        s.push_str(&format!("<th>{}</th>", esc(h)));
    }
    s.push_str("</tr>\n");
    for (i, (row, cells)) in t.rows.iter().enumerate() {
        s.push_str(&crate::report_page::section_row(
            &t.sections,
            i,
            t.header.len() + 1,
        ));
        s.push_str(&format!("<tr><th>{}</th>", esc(row)));
        for c in cells {
            match &c.link {
                Some(l) => s.push_str(&format!(
                    "<td><a href=\"{}\">{}</a></td>",
                    esc(&rel(out, l)),
                    esc(&c.text)
                )),
                None => s.push_str(&format!("<td>{}</td>", esc(&c.text))),
            }
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</table>\n");
    s
}

/// The figure `f` (a PNG in `out`) as an inline image, or linked by name when unreadable.
fn figure_html(out: &Path, f: &str, id: &str) -> String {
    let src = match std::fs::read(out.join(f)) {
        Ok(png) => {
            use base64::Engine;
            format!(
                "data:image/png;base64,{}",
                base64::engine::general_purpose::STANDARD.encode(png)
            )
        }
        Err(_) => f.to_string(),
    };
    format!("<p id=\"{id}\"><img src=\"{src}\" alt=\"{f}\" width=\"900\"></p>\n")
}

fn md_escape(s: &str) -> String {
    s.replace('|', "\\|")
}

/// `target` relative to the directory `from` (both made absolute), with `/` separators.
fn rel(from: &Path, target: &Path) -> String {
    let t = std::fs::canonicalize(target).unwrap_or_else(|_| target.to_path_buf());
    let a: Vec<_> = from.components().collect();
    let b: Vec<_> = t.components().collect();
    let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut parts: Vec<String> = vec!["..".into(); a.len() - common];
    parts.extend(
        b[common..]
            .iter()
            .map(|c| c.as_os_str().to_string_lossy().to_string()),
    );
    parts.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 24, item 4: every L-J score names the model that judged it.
    #[test]
    fn every_lj_cell_names_its_judge_model() {
        let x = bootstrap(&[1.0, 0.5, 0.0], 10, 1);
        let entry = |judge_model: Option<&str>, judged: bool| Entry {
            path: PathBuf::from("r/results.json"),
            method: "m".into(),
            dataset: "locomo".into(),
            split: "test".into(),
            executor: "exec".into(),
            top_k: 7,
            context_docs: None,
            external: None,
            judge_model: judge_model.map(str::to_string),
            checkpoint: String::new(),
            scripted: false,
            metric: Metrics::Qa {
                f1: x.clone(),
                judge: if judged { x.clone() } else { None },
                questions: 3,
                errors: 0,
            },
        };
        let e = entry(Some("openai/gpt-oss-120b"), true);
        assert!(
            qa_cell(&e).text.contains("L-J 50.00 [")
                && qa_cell(&e).text.contains("(judge openai/gpt-oss-120b)")
        );
        let h = headline_cell(&e, headline(&e)).text;
        assert!(
            h.starts_with("L-J 50.00 [") && h.ends_with("(judge openai/gpt-oss-120b)"),
            "{h}"
        );
        let old = entry(None, true);
        assert!(qa_cell(&old).text.contains("(judge not recorded)"));
        // no judge ran: no L-J, no judge named
        let f1_only = entry(Some("exec"), false);
        assert!(!qa_cell(&f1_only).text.contains("judge"));
        assert!(!headline_cell(&f1_only, headline(&f1_only))
            .text
            .contains("judge"));
    }

    #[test]
    fn a_sweep_row_names_its_executor_only_among_several() {
        let x = bootstrap(&[1.0, 0.0], 10, 1);
        let point = |method: &str, executor: &str| Entry {
            path: PathBuf::from(format!("{method}{executor}/results.json")),
            method: method.into(),
            dataset: "locomo".into(),
            split: "test".into(),
            executor: executor.into(),
            top_k: 3,
            context_docs: None,
            external: None,
            judge_model: None,
            checkpoint: "runs/full".into(),
            scripted: false,
            metric: Metrics::Qa {
                f1: x.clone(),
                judge: None,
                questions: 2,
                errors: 0,
            },
        };
        let one = [
            point("full [eval.top_k=1]", "m1"),
            point("full [eval.top_k=2]", "m1"),
        ];
        let refs: Vec<&Entry> = one.iter().collect();
        let t = sweep_table(&refs, &dataset_label(&one[0])).unwrap();
        assert_eq!(t.rows.len(), 1);
        assert_eq!(t.rows[0].0, "full");
        assert!(t.note.contains("Executor model: m1."), "{}", t.note);
        let two = [
            point("full [eval.top_k=1]", "m1"),
            point("full [eval.top_k=1]", "m2"),
        ];
        let refs: Vec<&Entry> = two.iter().collect();
        let t = sweep_table(&refs, &dataset_label(&two[0])).unwrap();
        let labels: Vec<&str> = t.rows.iter().map(|r| r.0.as_str()).collect();
        assert_eq!(labels, ["full (m1)", "full (m2)"]);
        assert!(!t.note.contains("Executor model"));
    }

    #[test]
    fn bootstrap_interval_brackets_the_mean_and_narrows_with_n() {
        let small: Vec<f64> = (0..20).map(|i| f64::from(u8::from(i % 2 == 0))).collect();
        let big: Vec<f64> = (0..2000).map(|i| f64::from(u8::from(i % 2 == 0))).collect();
        let a = bootstrap(&small, 1000, 1).unwrap();
        let b = bootstrap(&big, 1000, 1).unwrap();
        assert_eq!((a.mean, b.mean), (0.5, 0.5));
        assert!(a.lo < 0.5 && a.hi > 0.5 && b.lo < 0.5 && b.hi > 0.5);
        assert!(b.hi - b.lo < (a.hi - a.lo) / 3.0, "{a:?} {b:?}");
        // reproducible
        assert_eq!(bootstrap(&small, 1000, 1), Some(a));
        assert_eq!(bootstrap(&[], 1000, 1), None);
        let one = bootstrap(&[0.25], 100, 3).unwrap();
        assert_eq!((one.lo, one.hi), (0.25, 0.25));
    }

    #[test]
    fn relative_links() {
        assert_eq!(
            rel(
                Path::new("/a/b/report"),
                Path::new("/a/b/runs/x/eval/r/results.json")
            ),
            "../runs/x/eval/r/results.json"
        );
        assert_eq!(rel(Path::new("/a"), Path::new("/a/f.json")), "f.json");
    }

    /// A QA entry of `method` with executor `exec` (a checkpoint unless a baseline).
    fn qa(method: &str, exec: &str, scripted: bool) -> Entry {
        let baseline = crate::baselines::Baseline::parse(method).is_some();
        Entry {
            path: PathBuf::from(format!("/r/{method}-{exec}/results.json")),
            method: method.into(),
            dataset: "locomo".into(),
            split: "test".into(),
            executor: exec.into(),
            top_k: 3,
            context_docs: None,
            external: None,
            judge_model: None,
            checkpoint: if baseline {
                String::new()
            } else {
                format!("/r/{method}/ck")
            },
            scripted,
            metric: Metrics::Qa {
                f1: bootstrap(&[0.5, 1.0], 10, 1),
                judge: None,
                questions: 2,
                errors: 0,
            },
        }
    }

    #[test]
    fn table2_only_with_two_executor_models_or_more() {
        let one = [qa("full", "x", false), qa("no-memory", "x", false)];
        let r = Report::build(&one, Vec::new());
        assert!(r.tables.iter().all(|t| !t.title.starts_with("Table 2")));
        // one executor: named in Table 1's note, not in every row
        assert!(r.tables[0].note.contains("Executor model: x."));
        assert!(r.tables[0].rows.iter().all(|(l, _)| !l.contains("(x)")));
        let two = [qa("full", "x", false), qa("full", "y", false)];
        let r = Report::build(&two, Vec::new());
        let t2: Vec<&Table> = r
            .tables
            .iter()
            .filter(|t| t.title.starts_with("Table 2"))
            .collect();
        assert_eq!(t2.len(), 1);
        assert_eq!(t2[0].header, ["x", "y"]);
        // two executors: Table 1 rows say which
        let labels: Vec<&str> = r.tables[0].rows.iter().map(|(l, _)| l.as_str()).collect();
        assert_eq!(labels, ["full (x)", "full (y)"]);
    }

    #[test]
    fn table1_rows_follow_the_papers_groups() {
        let mut mem0 = qa("mem0", "x", false);
        mem0.external = Some("adapter".into());
        let entries = [
            qa("raw-rag", "x", false),
            mem0,
            qa("no-controller", "x", false),
            qa("no-memory", "x", false),
            qa("full", "x", false),
            qa("refine-only", "x", false),
        ];
        let r = Report::build(&entries, Vec::new());
        let t1 = &r.tables[0];
        let labels: Vec<&str> = t1.rows.iter().map(|(l, _)| l.as_str()).collect();
        assert_eq!(
            labels,
            [
                "full",
                "no-controller",
                "refine-only",
                "no-memory",
                "raw-rag",
                "mem0 (adapter)"
            ]
        );
        let starts: Vec<usize> = t1.sections.iter().map(|(i, _)| *i).collect();
        assert_eq!(starts, [0, 1, 3, 5]);
        assert_eq!(r.paper.as_ref().unwrap().sections, t1.sections);
        let md = table_md(t1, Path::new("/r"));
        let at = |s: &str| md.find(s).unwrap_or_else(|| panic!("{s}: {md}"));
        assert!(at("| **MemSkill** |") < at("| full |"));
        assert!(at("| **MemSkill ablations** |") < at("| no-controller |"));
        assert!(at("| **Baselines") < at("| no-memory |"));
        assert!(at("| **External memory systems") < at("| mem0 (adapter) |"));
    }

    #[test]
    fn the_banner_is_there_iff_an_evaluation_is_scripted() {
        assert_eq!(scripted_banner(0, 3), None);
        let b = scripted_banner(1, 3).unwrap();
        assert!(
            b.contains("1 of the 3") && b.contains("meaningless by design"),
            "{b}"
        );
        assert!(scripted_banner(2, 2).unwrap().starts_with("All 2"));
        assert!(is_scripted(Some("scripted-synthetic"), "x", "locomo"));
        // results from before `executor_backend`: the executor id says it
        assert!(is_scripted(None, "scripted-synthetic", "locomo"));
        assert!(is_scripted(Some("openai"), "openai:m", "synthetic"));
        assert!(!is_scripted(Some("openai"), "openai:m", "locomo"));

        let d = tempfile::tempdir().unwrap();
        for (scripted, banner) in [(false, false), (true, true)] {
            let entries = [qa("full", "x", false), qa("no-memory", "x", scripted)];
            let r = Report::build(&entries, Vec::new());
            assert_eq!(r.scripted, usize::from(scripted));
            let out = d.path().join(format!("rep-{scripted}"));
            r.write(&out).unwrap();
            for f in ["report.md", "report.html"] {
                let text = std::fs::read_to_string(out.join(f)).unwrap();
                assert_eq!(
                    text.contains("meaningless by design"),
                    banner,
                    "{f}: {text}"
                );
            }
        }
    }

    #[test]
    fn the_page_has_contents_linking_every_section() {
        let d = tempfile::tempdir().unwrap();
        let run = d.path().join("run");
        std::fs::create_dir_all(&run).unwrap();
        std::fs::write(run.join("skills.md"), "# Skill bank evolution\n").unwrap();
        let entries = [qa("full", "x", false), qa("full", "y", false)];
        let r = Report::build(&entries, vec![("run".into(), run.join("skills.md"))]);
        let out = d.path().join("rep");
        r.write(&out).unwrap();
        let html = std::fs::read_to_string(out.join("report.html")).unwrap();
        let toc = &html[html.find("<nav class=\"toc\">").unwrap()..html.find("</nav>").unwrap()];
        for id in ["table-1", "table-2", "training", "run-1"] {
            assert!(toc.contains(&format!("href=\"#{id}\"")), "{id}: {toc}");
            assert!(html.contains(&format!("id=\"{id}\"")), "{id}");
        }
        // the contents come before the first table
        assert!(html.find("<nav").unwrap() < html.find("id=\"table-1\"").unwrap());
        // a run without metrics.jsonl: its curves are n/a, not missing
        assert!(html.contains("Learning curves: n/a"));
        // report.md has its contents too: one link per table and the skill-bank section,
        // each to the anchor of a heading the file has
        let md = std::fs::read_to_string(out.join("report.md")).unwrap();
        let toc: Vec<&str> = md.lines().filter(|l| l.starts_with("- [")).collect();
        assert_eq!(toc.len(), 3, "{md}");
        for l in toc {
            let anchor = &l[l.find("](#").unwrap() + 3..l.len() - 1];
            assert!(
                md.lines()
                    .any(|h| h.starts_with("## ") && md_anchor(&h[3..]) == anchor),
                "{anchor}: {md}"
            );
        }
        assert_eq!(
            md_anchor("Table 1: methods x datasets"),
            "table-1-methods-x-datasets"
        );
    }
}
