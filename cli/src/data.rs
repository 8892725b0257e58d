//! `memskill data stats`: load a dataset file and print what the loaders make of it;
//! `memskill data list`: every benchmark of the registry and its descriptor.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail};
use clap::{Args, Subcommand};
use memskill_core::Sample;
use memskill_datasets::{
    load_lme_splits, segment, split_locomo, DatasetKind, LmeOptions, LoadOptions, LocomoOptions,
    LocomoSplits, SpanMode, SplitSpec, LOCOMO_ADVERSARIAL_CATEGORY,
};
use memskill_executor::Extraction;

use memskill_trainer::registry::{self, Descriptor, Optional, Splits};

/// `memskill data ...`
#[derive(Subcommand)]
pub enum DataCmd {
    /// Print dataset statistics: samples, sessions, turns, spans, questions per category,
    /// total questions and questions used.
    Stats(StatsArgs),
    /// List every benchmark: default file, splits, span modes, answer template, F1 rule,
    /// evaluation K, judge and fetch command.
    List,
    /// Write the activation cases of a synthetic task (`data.dataset = "synthetic"`): one
    /// JSON line per span with the skill it needs, plus small-talk spans that need none, for
    /// `memskill skills eval --cases`.
    Cases(CasesArgs),
}

/// Arguments of `memskill data cases`.
#[derive(Args, Debug)]
pub struct CasesArgs {
    /// Config file of a synthetic task (e.g. configs/contextual.toml).
    #[arg(long)]
    pub config: PathBuf,
    /// Config overrides KEY=VALUE (repeatable).
    #[arg(long = "set")]
    pub sets: Vec<String>,
    /// Split (default: eval.split).
    #[arg(long)]
    pub split: Option<SplitSpec>,
    /// Output file (JSON Lines, written atomically).
    #[arg(long)]
    pub out: PathBuf,
    /// Overwrite an existing --out file.
    #[arg(long)]
    pub force: bool,
}

/// `data cases`: the synthetic task's expected triggers as a cases file; returns the count.
pub fn cases(a: &CasesArgs) -> anyhow::Result<usize> {
    let cfg = memskill_trainer::config::Config::load(&a.config, &a.sets)?;
    if cfg.data.dataset != memskill_trainer::config::Dataset::Synthetic {
        bail!(
            "{}: data.dataset is `{}`; `data cases` knows the expected skill of each span only for the synthetic tasks (write a cases file by hand for others)",
            a.config.display(),
            cfg.data.dataset.name()
        );
    }
    let split = a.split.unwrap_or(cfg.eval.split);
    let samples = memskill_trainer::eval::load_eval_samples(&cfg, split, None)?;
    let expected = memskill_trainer::synthetic::expected_triggers(&samples);
    let text = memskill_trainer::cases::render(
        &expected,
        &samples,
        &memskill_trainer::synthetic::negative_texts(),
    );
    let guard = memskill_core::fsio::WriteGuard::new("--out", a.force).input(&a.config);
    memskill_trainer::fsutil::write_output(&a.out, text.as_bytes(), &guard)?;
    Ok(text.lines().count())
}

/// Arguments of `memskill data stats`.
#[derive(Args, Debug)]
pub struct StatsArgs {
    /// Dataset: a file-based benchmark (`memskill data list` shows them).
    pub kind: String,
    /// Path of the dataset file (JSON or JSON Lines).
    pub path: PathBuf,
    /// Span mode: full-session, turn-pair, turn, fixed-tokens or fixed-tokens:TOKENS:OVERLAP.
    #[arg(long, default_value = "turn-pair")]
    pub spans: String,
    /// Split: train, val, test or all (LoCoMo by index 0-5 / 6-7 / 8-9; LongMemEval by the
    /// splits file; HotpotQA only `all`).
    #[arg(long, default_value = "all")]
    pub split: String,
    /// LoCoMo: count category-5 (adversarial) questions as used.
    #[arg(long)]
    pub include_adversarial: bool,
    /// LongMemEval: keep `_abs` (abstention) questions.
    #[arg(long)]
    pub include_abstention: bool,
    /// LongMemEval splits file (default: longmemeval_s_splits.json next to the data file).
    #[arg(long)]
    pub splits_file: Option<PathBuf>,
}

/// Run `memskill data ...`.
pub fn run(c: DataCmd) -> anyhow::Result<()> {
    match c {
        DataCmd::Stats(a) => {
            let stats = stats(&a)?;
            print!("{stats}");
            Ok(())
        }
        DataCmd::List => {
            print!("{}", list_text());
            Ok(())
        }
        DataCmd::Cases(a) => {
            let n = cases(&a)?;
            println!("{n} cases written to {}", a.out.display());
            Ok(())
        }
    }
}

/// What `data list` prints: one block per benchmark of the registry.
pub fn list_text() -> String {
    let mut out = String::new();
    for d in registry::ALL {
        let splits = match d.splits {
            Splits::ByIndex => "by sample index (train 0-5, val 6-7, test 8-9)".to_string(),
            Splits::File { default } => format!("splits file (default {default})"),
            Splits::Whole => "none (every split is the whole file)".to_string(),
            Splits::NotFile => "the benchmark's own".to_string(),
        };
        let extraction = match d.answer.extraction {
            Extraction::Stripped => "the stripped reply",
            Extraction::Tagged => "the <answer> tag or Answer: line",
        };
        let or_none = |v: &[&str]| {
            if v.is_empty() {
                "-".to_string()
            } else {
                v.join(", ")
            }
        };
        out.push_str(&format!(
            "{}  {}
",
            d.name, d.title
        ));
        let rows = [
            ("aliases", or_none(d.aliases)),
            ("file", d.default_path.unwrap_or("-").to_string()),
            ("splits", splits),
            ("span modes", or_none(d.span_modes)),
            (
                "answer",
                format!(
                    "{} ({extraction}, {} tokens)",
                    d.answer.template, d.answer.reference_max_tokens
                ),
            ),
            ("F1", d.scorer.name().to_string()),
            (
                "eval K",
                d.eval_top_k
                    .map_or("the config's".to_string(), |k| k.to_string()),
            ),
            (
                "judge",
                if d.yes_no_judge {
                    "general, or the yes/no judge".to_string()
                } else {
                    "general".to_string()
                },
            ),
            ("fetch", d.fetch.to_string()),
        ];
        for (k, v) in rows {
            out.push_str(&format!("  {:<11} {v}\n", format!("{k}:")));
        }
    }
    out
}

/// What `data stats` prints.
#[derive(Debug, Clone, PartialEq)]
pub struct DataStats {
    pub dataset: String,
    pub file: String,
    pub split: String,
    pub span_mode: String,
    pub sample_ids: Vec<String>,
    pub sessions: usize,
    pub turns: usize,
    pub spans: usize,
    /// Questions per category before any filtering (category 5 / `_abs` included).
    pub per_category: BTreeMap<CategoryKey, usize>,
    pub total_questions: usize,
    pub used_questions: usize,
    pub used_note: String,
}

/// A category name ordered numerically when it is a number.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum CategoryKey {
    Num(i64),
    Name(String),
}

impl CategoryKey {
    fn of(s: &str) -> Self {
        match s.parse::<i64>() {
            Ok(n) => CategoryKey::Num(n),
            Err(_) => CategoryKey::Name(s.to_string()),
        }
    }
}

impl fmt::Display for CategoryKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CategoryKey::Num(n) => write!(f, "{n}"),
            CategoryKey::Name(s) if s.is_empty() => f.write_str("(none)"),
            CategoryKey::Name(s) => f.write_str(s),
        }
    }
}

impl fmt::Display for DataStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const SHOW: usize = 12;
        let mut ids = self
            .sample_ids
            .iter()
            .take(SHOW)
            .cloned()
            .collect::<Vec<_>>()
            .join(", ");
        if self.sample_ids.len() > SHOW {
            ids.push_str(&format!(", ... ({} more)", self.sample_ids.len() - SHOW));
        }
        writeln!(f, "dataset:         {}", self.dataset)?;
        writeln!(f, "file:            {}", self.file)?;
        writeln!(f, "split:           {}", self.split)?;
        writeln!(f, "samples:         {} ({})", self.sample_ids.len(), ids)?;
        writeln!(f, "sessions:        {}", self.sessions)?;
        writeln!(f, "turns:           {}", self.turns)?;
        writeln!(f, "spans:           {} ({})", self.spans, self.span_mode)?;
        writeln!(f, "questions per category:")?;
        for (k, n) in &self.per_category {
            writeln!(f, "  {k}: {n}")?;
        }
        writeln!(f, "total questions: {}", self.total_questions)?;
        writeln!(
            f,
            "questions used:  {} ({})",
            self.used_questions, self.used_note
        )
    }
}

/// Decides whether a question (its sample, its category) counts as used.
type UsedFilter = Box<dyn Fn(&Sample, &str) -> bool>;

/// Loads, splits and segments as `memskill data stats` does, and counts.
pub fn stats(a: &StatsArgs) -> anyhow::Result<DataStats> {
    let (bench, kind) = registry::find(&a.kind)
        .and_then(|d| Some((d, d.dataset.qa()?)))
        .ok_or_else(|| {
            let files: Vec<&str> = registry::ALL
                .iter()
                .filter(|d| d.dataset.qa().is_some())
                .map(|d| d.name)
                .collect();
            anyhow!(
                "unknown dataset {:?}: expected one of {}",
                a.kind,
                files.join(", ")
            )
        })?;
    let mode: SpanMode = a.spans.parse()?;
    let split: SplitSpec = a.split.parse()?;
    if bench.splits == Splits::Whole && split != SplitSpec::All {
        bail!(
            "{} has no train/val/test split: use --split all",
            bench.name
        );
    }
    let samples = load_all(a, bench, kind, split)?;
    let (used_filter, note) = used_filter(a, bench.optional);
    let mut per_category = BTreeMap::new();
    let mut total = 0;
    let mut used = 0;
    for s in &samples {
        for q in &s.queries {
            *per_category
                .entry(CategoryKey::of(&q.category))
                .or_insert(0) += 1;
            total += 1;
            if used_filter(s, &q.category) {
                used += 1;
            }
        }
    }
    // Abstention benchmarks' samples are questions: an unused question drops its whole sample.
    let kept: Vec<Sample> = samples
        .into_iter()
        .filter(|s| {
            bench.optional != Optional::Abstention
                || s.queries.iter().any(|q| used_filter(s, &q.category))
        })
        .collect();
    let mut sessions = 0;
    let mut turns = 0;
    let mut spans = 0;
    for mut s in kept.iter().cloned() {
        sessions += s.sessions.len();
        turns += s.turn_count();
        segment(&mut s, &mode);
        spans += s.spans.len();
    }
    Ok(DataStats {
        dataset: bench.name.to_string(),
        file: a.path.display().to_string(),
        split: split.as_str().to_string(),
        span_mode: mode.to_string(),
        sample_ids: kept.iter().map(|s| s.id.clone()).collect(),
        sessions,
        turns,
        spans,
        per_category,
        total_questions: total,
        used_questions: used,
        used_note: note,
    })
}

/// Every sample of the split, adversarial / abstention questions included (all questions are
/// counted; [`used_filter`] then decides which are used).
fn load_all(
    a: &StatsArgs,
    bench: &Descriptor,
    kind: DatasetKind,
    split: SplitSpec,
) -> anyhow::Result<Vec<Sample>> {
    let only = match bench.splits {
        Splits::File { default } if split != SplitSpec::All => {
            let sf = splits_file(&a.path, a.splits_file.as_deref(), default)?;
            let mut splits = load_lme_splits(&sf)?;
            let key = split.as_str();
            match splits.remove(key) {
                Some(ids) => Some(ids),
                None => bail!("{}: {key}: missing field (no such split)", sf.display()),
            }
        }
        _ => None,
    };
    let opts = LoadOptions {
        locomo: LocomoOptions {
            include_adversarial: true,
        },
        longmemeval: LmeOptions {
            include_abstention: true,
            only,
        },
        hotpotqa: Default::default(),
    };
    let mut samples = memskill_datasets::load(kind, &a.path, &opts)?;
    if bench.splits == Splits::ByIndex {
        samples = split_locomo(samples, split, &LocomoSplits::default())?;
    }
    Ok(samples)
}

/// Which questions count as used (the `--include-*` flags), and a note that says so.
fn used_filter(a: &StatsArgs, optional: Optional) -> (UsedFilter, String) {
    match optional {
        Optional::Adversarial => {
            let inc = a.include_adversarial;
            let note = if inc {
                "category 5 included"
            } else {
                "category 5 excluded"
            };
            (
                Box::new(move |_, cat| inc || cat != LOCOMO_ADVERSARIAL_CATEGORY),
                note.to_string(),
            )
        }
        Optional::Abstention => {
            let inc = a.include_abstention;
            let note = if inc {
                "_abs included"
            } else {
                "_abs questions excluded"
            };
            (
                Box::new(move |s, _| inc || !s.id.ends_with("_abs")),
                note.to_string(),
            )
        }
        Optional::Nothing => (Box::new(|_, _| true), "all".to_string()),
    }
}

/// `--splits-file`, else the descriptor's splits file name next to the data file.
fn splits_file(data: &Path, given: Option<&Path>, default: &str) -> anyhow::Result<PathBuf> {
    if let Some(p) = given {
        return Ok(p.to_path_buf());
    }
    let name = Path::new(default).file_name().unwrap_or_default();
    let sibling = data.parent().unwrap_or_else(|| Path::new(".")).join(name);
    if sibling.is_file() {
        return Ok(sibling);
    }
    bail!(
        "{}: --split needs a splits file: pass --splits-file (none found next to the data file)",
        data.display()
    )
}
