//! Scoring a predictions file (`memskill score`, `memskill.score` in Python): one JSON line
//! per prediction, scored with LoCoMo F1 or HotpotQA F1, averaged overall and per category.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{anyhow, bail, Context, Result};
use memskill_executor::{hotpot_f1_with, locomo_f1_within, HotpotF1};
use serde::Serialize;

use crate::fsutil::check_input_file;

/// Which official scorer to apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ScoreDataset {
    Locomo,
    Hotpotqa,
}

impl std::str::FromStr for ScoreDataset {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "locomo" => Ok(Self::Locomo),
            "hotpotqa" => Ok(Self::Hotpotqa),
            other => Err(format!(
                "expected \"locomo\" or \"hotpotqa\", got {other:?}"
            )),
        }
    }
}

/// How to score a file.
#[derive(Clone, Copy, Debug)]
pub struct ScoreOptions {
    pub dataset: ScoreDataset,
    /// HotpotQA's F1 variant.
    pub hotpotqa_f1: HotpotF1,
    /// A larger file is refused (it is read whole into memory).
    pub max_file_bytes: u64,
    /// The most part comparisons one LoCoMo multi-answer line may need.
    pub max_work: u64,
}

impl ScoreOptions {
    /// The command line's defaults for `dataset`.
    pub fn new(dataset: ScoreDataset) -> Self {
        Self {
            dataset,
            hotpotqa_f1: HotpotF1::default(),
            max_file_bytes: 2048 << 20,
            max_work: 20_000_000,
        }
    }
}

/// The mean F1 of a group of lines.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GroupScore {
    pub f1: f64,
    pub count: usize,
}

/// A scored file: the mean F1 overall and per category, and every line's F1 in order.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ScoreReport {
    pub overall: GroupScore,
    pub by_category: BTreeMap<String, GroupScore>,
    /// One F1 per non-blank input line, in order (not in the JSON the CLI prints).
    #[serde(skip)]
    pub per_line: Vec<f64>,
}

/// Scores the JSONL predictions file `path` (lines of `{"question_id"|"question",
/// "prediction", "answer", "category"}`); a bad line is an error naming `file:line` and the
/// field.
pub fn score_file(path: &Path, opts: &ScoreOptions) -> Result<ScoreReport> {
    let file = path.display().to_string();
    check_input_file(path, opts.max_file_bytes, "predictions")?;
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {file}"))?;
    let mut per_line: Vec<f64> = Vec::new();
    let mut by_cat: BTreeMap<String, (f64, usize)> = BTreeMap::new();
    for (i, raw) in text.lines().enumerate() {
        if raw.trim().is_empty() {
            continue;
        }
        let loc = format!("{file}:{}", i + 1);
        let v: serde_json::Value =
            serde_json::from_str(raw).map_err(|e| anyhow!("{loc}: invalid JSON: {e}"))?;
        let l = parse_line(&v, opts.dataset, &loc)?;
        let f1 = line_f1(&l, opts, &loc)?;
        per_line.push(f1);
        if let Some(c) = l.category {
            let e = by_cat.entry(c).or_default();
            e.0 += f1;
            e.1 += 1;
        }
    }
    if per_line.is_empty() {
        bail!("{file}: no prediction lines");
    }
    let overall = GroupScore {
        f1: per_line.iter().sum::<f64>() / per_line.len() as f64,
        count: per_line.len(),
    };
    let by_category = by_cat
        .into_iter()
        .map(|(k, (s, n))| {
            (
                k,
                GroupScore {
                    f1: s / n as f64,
                    count: n,
                },
            )
        })
        .collect();
    Ok(ScoreReport {
        overall,
        by_category,
        per_line,
    })
}

/// One line's F1 with the dataset's scorer (LoCoMo: by category, within `max_work`).
fn line_f1(l: &Line, opts: &ScoreOptions, loc: &str) -> Result<f64> {
    Ok(match opts.dataset {
        ScoreDataset::Locomo => {
            let cat: u8 = l
                .category
                .as_deref()
                .and_then(|c| c.parse().ok())
                .unwrap_or(4);
            locomo_f1_within(&l.prediction, &l.answers[0], cat, opts.max_work).map_err(|e| {
                anyhow!("{loc}: {e}; raise --max-work (max_work in Python) to score it anyway")
            })?
        }
        ScoreDataset::Hotpotqa => hotpot_f1_with(opts.hotpotqa_f1, &l.prediction, &l.answers),
    })
}

struct Line {
    prediction: String,
    answers: Vec<String>,
    category: Option<String>,
}

/// Python `str()` of a JSON scalar answer (numbers as written by Python for ints).
fn answer_text(v: &serde_json::Value) -> Option<String> {
    match v {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        serde_json::Value::Bool(b) => Some(if *b { "True".into() } else { "False".into() }),
        _ => None,
    }
}

fn parse_line(v: &serde_json::Value, dataset: ScoreDataset, loc: &str) -> Result<Line> {
    let obj = v
        .as_object()
        .ok_or_else(|| anyhow!("{loc}: expected a JSON object"))?;
    if !obj.contains_key("question_id") && !obj.contains_key("question") {
        bail!("{loc}: field \"question_id\" or \"question\" is missing");
    }
    let prediction = match obj.get("prediction") {
        Some(p) => {
            answer_text(p).ok_or_else(|| anyhow!("{loc}: field \"prediction\" must be a string"))?
        }
        None => bail!("{loc}: field \"prediction\" is missing"),
    };
    let category = match obj.get("category") {
        None | Some(serde_json::Value::Null) => None,
        Some(serde_json::Value::Number(n)) => Some(n.to_string()),
        Some(serde_json::Value::String(s)) => Some(s.trim().to_string()),
        Some(_) => bail!("{loc}: field \"category\" must be a number or a string"),
    };
    let raw = obj
        .get("answer")
        .or_else(|| obj.get("answers"))
        .or_else(|| obj.get("adversarial_answer"));
    let answers = match raw {
        Some(serde_json::Value::Array(a)) if dataset == ScoreDataset::Hotpotqa => a
            .iter()
            .map(|x| {
                answer_text(x)
                    .ok_or_else(|| anyhow!("{loc}: field \"answer\" items must be strings"))
            })
            .collect::<Result<Vec<_>>>()?,
        Some(x) => vec![answer_text(x)
            .ok_or_else(|| anyhow!("{loc}: field \"answer\" must be a string or a number"))?],
        None if dataset == ScoreDataset::Locomo && category.as_deref() == Some("5") => {
            vec![String::new()]
        }
        None => bail!("{loc}: field \"answer\" is missing"),
    };
    if dataset == ScoreDataset::Locomo {
        match category.as_deref().map(str::parse::<u8>) {
            Some(Ok(1..=5)) => {}
            Some(_) => bail!("{loc}: field \"category\" must be 1..5 for LoCoMo"),
            None => bail!("{loc}: field \"category\" is missing"),
        }
    }
    Ok(Line {
        prediction,
        answers,
        category,
    })
}
