//! memskill-datasets: turns benchmark files into [`memskill_core::Sample`]s and cuts them into
//! spans.
//!
//! - [`load_locomo`] (LoCoMo `locomo10.json`), [`load_longmemeval`] (LongMemEval),
//!   [`load_hotpotqa`] (HotpotQA, LongBench long-context or classic dev-distractor),
//!   [`load_msc`] (MSC-Self-Instruct, MemGPT's Deep Memory Retrieval); each module documents
//!   the exact schema it accepts. [`load`] dispatches on a [`DatasetKind`].
//! - [`locomo_turn_texts`]: LoCoMo's raw turn texts in file order (what the benchmarks embed;
//!   [`bench_turn_texts`] falls back to synthetic sentences without the file).
//! - [`segment`] fills `Sample::spans` according to a [`SpanMode`].
//! - [`split_locomo`] / [`load_lme_splits`] select train / val / test.
//!
//! Errors are [`DatasetError`]s naming the file and the JSON path of the offending field.
//! Loaders never panic on bad input.

mod error;
mod hotpotqa;
mod json;
mod locomo;
mod longmemeval;
mod msc;
mod segment;
mod split;

use std::fmt;
use std::path::Path;
use std::str::FromStr;

use memskill_core::Sample;
use serde::{Deserialize, Serialize};

pub use error::DatasetError;
pub use hotpotqa::{
    hotpotqa_from_json, load_hotpotqa, load_hotpotqa_with, split_passages, HotpotOptions,
};
pub use json::{check_data_file, DEFAULT_MAX_FILE_BYTES};
pub use locomo::{
    bench_turn_texts, load_locomo, locomo_from_json, locomo_turn_texts, render_locomo_turn,
    LocomoOptions, LOCOMO_ADVERSARIAL_CATEGORY,
};
pub use longmemeval::{
    lme_splits_from_json, load_lme_splits, load_longmemeval, longmemeval_from_json,
    render_lme_turn, select_lme, LmeOptions,
};
pub use msc::{load_msc, msc_from_json, render_msc_turn, MSC_CATEGORY};
pub use segment::{
    count_tokens, fixed_windows, pack_texts, pack_whole, py_strip, segment, segment_styled,
    token_windows, Packed, SpanMode, SpanStyle, Window, DEFAULT_WINDOW_OVERLAP,
    DEFAULT_WINDOW_TOKENS, TRAJECTORY_SEPARATOR,
};
pub use split::{split_locomo, LocomoSplits, SplitSpec};

/// A supported file format (one loader each). What the trainer does with each benchmark is
/// its descriptor in the trainer's registry, not here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DatasetKind {
    Locomo,
    LongMemEval,
    HotpotQa,
    Msc,
}

impl fmt::Display for DatasetKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DatasetKind::Locomo => "locomo",
            DatasetKind::LongMemEval => "longmemeval",
            DatasetKind::HotpotQa => "hotpotqa",
            DatasetKind::Msc => "msc",
        })
    }
}

impl DatasetKind {
    /// Every format, in the order of the variants.
    pub const ALL: &'static [DatasetKind] = &[
        DatasetKind::Locomo,
        DatasetKind::LongMemEval,
        DatasetKind::HotpotQa,
        DatasetKind::Msc,
    ];
}

impl FromStr for DatasetKind {
    type Err = DatasetError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "locomo" => Ok(DatasetKind::Locomo),
            "longmemeval" | "lme" => Ok(DatasetKind::LongMemEval),
            "hotpotqa" | "hotpot" => Ok(DatasetKind::HotpotQa),
            "msc" => Ok(DatasetKind::Msc),
            _ => Err(DatasetError::UnknownKind {
                name: s.to_string(),
                known: DatasetKind::ALL
                    .iter()
                    .map(|k| k.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
            }),
        }
    }
}

/// Options of [`load`] (each loader reads the ones that concern it).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoadOptions {
    pub locomo: LocomoOptions,
    pub longmemeval: LmeOptions,
    pub hotpotqa: HotpotOptions,
}

/// Loads any supported dataset (spans left empty: call [`segment`]).
pub fn load(
    kind: DatasetKind,
    path: &Path,
    opts: &LoadOptions,
) -> Result<Vec<Sample>, DatasetError> {
    let samples = match kind {
        DatasetKind::Locomo => load_locomo(path, &opts.locomo),
        DatasetKind::LongMemEval => load_longmemeval(path, &opts.longmemeval),
        DatasetKind::HotpotQa => load_hotpotqa_with(path, &opts.hotpotqa),
        DatasetKind::Msc => load_msc(path),
    }?;
    check_turn_sizes(samples, &path.display().to_string())
}

/// The longest text one turn may hold (1 MiB): the longest turn of LoCoMo, LongMemEval and
/// HotpotQA is a few KB; the executor's prompt holds at most 16 MiB.
pub const MAX_TURN_BYTES: usize = 1 << 20;

/// Refuses a sample with a turn above [`MAX_TURN_BYTES`], naming it (issue 46: a 500 MB
/// single-line turn ran for minutes and then failed blaming the executor template).
fn check_turn_sizes(samples: Vec<Sample>, file: &str) -> Result<Vec<Sample>, DatasetError> {
    for s in &samples {
        for t in s.sessions.iter().flat_map(|x| &x.turns) {
            if t.text.len() > MAX_TURN_BYTES {
                return Err(DatasetError::TurnTooLong {
                    file: file.to_string(),
                    sample: s.id.clone(),
                    turn: t.id.clone(),
                    bytes: t.text.len(),
                    limit: MAX_TURN_BYTES,
                });
            }
        }
    }
    Ok(samples)
}

/// [`load`] of an in-memory document (`file` names it in errors; HotpotQA takes the
/// long-context layout).
pub fn from_json(
    kind: DatasetKind,
    root: &serde_json::Value,
    file: &str,
    opts: &LoadOptions,
) -> Result<Vec<Sample>, DatasetError> {
    let samples = match kind {
        DatasetKind::Locomo => locomo_from_json(root, file, &opts.locomo),
        DatasetKind::LongMemEval => longmemeval_from_json(root, file, &opts.longmemeval),
        DatasetKind::HotpotQa => hotpotqa_from_json(root, file, &opts.hotpotqa),
        DatasetKind::Msc => msc_from_json(root, file),
    }?;
    check_turn_sizes(samples, file)
}
