//! `memskill._native`: the Rust half of the `memskill` Python package. Every function here
//! calls the library the `memskill` binary uses (no command output is parsed) and hands
//! back plain Python objects (dicts, lists, strings, numbers) converted from serde values.
//! Errors are `memskill.MemskillError` with the full context chain as their message.

use std::path::PathBuf;

use pyo3::create_exception;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use serde::Serialize;

mod analysis;
mod bank;
mod run;

create_exception!(
    memskill,
    MemskillError,
    PyRuntimeError,
    "An error of memskill (bad input, a failed run); the message names the file or field."
);

/// An anyhow error as a `MemskillError` (the full chain, as the CLI prints it).
pub(crate) fn err(e: anyhow::Error) -> PyErr {
    MemskillError::new_err(format!("{e:#}"))
}

/// A serde value as plain Python objects (dict / list / str / int / float / bool / None).
pub(crate) fn to_py<'py, T: Serialize>(py: Python<'py>, v: &T) -> PyResult<Bound<'py, PyAny>> {
    pythonize::pythonize(py, v).map_err(|e| MemskillError::new_err(e.to_string()))
}

/// The evaluation slice of a call: `limit` checked (>= 1), `dataset` and `split` parsed,
/// each error naming its argument.
pub(crate) fn slice(
    limit: Option<usize>,
    dataset: Option<String>,
    split: Option<String>,
) -> PyResult<(
    Option<memskill_trainer::config::Dataset>,
    Option<memskill_trainer::config::SplitSpec>,
)> {
    if limit == Some(0) {
        return Err(MemskillError::new_err("limit must be >= 1"));
    }
    let dataset = dataset
        .map(|d| d.parse())
        .transpose()
        .map_err(|e: String| MemskillError::new_err(format!("dataset: {e}")))?;
    let split =
        split
            .map(|s| s.parse())
            .transpose()
            .map_err(|e: memskill_datasets::DatasetError| {
                MemskillError::new_err(format!("split: {e}"))
            })?;
    Ok((dataset, split))
}

/// Scores a JSONL predictions file like `memskill score --json`: returns
/// `{"overall": {"f1", "count"}, "by_category": {cat: {"f1", "count"}}, "per_line": [f1, ...]}`.
#[pyfunction]
#[pyo3(signature = (dataset, predictions, *, hotpotqa_f1 = "memskill", max_work = 20_000_000))]
fn score<'py>(
    py: Python<'py>,
    dataset: &str,
    predictions: PathBuf,
    hotpotqa_f1: &str,
    max_work: u64,
) -> PyResult<Bound<'py, PyAny>> {
    use memskill_trainer::score::{score_file, ScoreOptions};
    let mut opts = ScoreOptions::new(
        dataset
            .parse()
            .map_err(|e| MemskillError::new_err(format!("dataset: {e}")))?,
    );
    opts.hotpotqa_f1 = hotpotqa_f1
        .parse()
        .map_err(|e| MemskillError::new_err(format!("hotpotqa_f1: {e}")))?;
    opts.max_work = max_work;
    let r = py.detach(|| score_file(&predictions, &opts)).map_err(err)?;
    let d = to_py(py, &r)?;
    d.set_item("per_line", r.per_line)?;
    Ok(d)
}

/// Loads a dataset file (`kind`: locomo | longmemeval | hotpotqa) as a list of sample dicts
/// (`id`, `dataset`, `sessions`, `spans` (empty: not segmented), `queries`).
#[pyfunction]
fn load_dataset<'py>(py: Python<'py>, kind: &str, path: PathBuf) -> PyResult<Bound<'py, PyAny>> {
    use memskill_datasets::{load, DatasetKind, LoadOptions};
    let kind: DatasetKind = kind
        .parse()
        .map_err(|e: memskill_datasets::DatasetError| MemskillError::new_err(e.to_string()))?;
    let samples = py
        .detach(|| load(kind, &path, &LoadOptions::default()))
        .map_err(|e| err(e.into()))?;
    to_py(py, &samples)
}

/// Runs the `memskill` command line (`argv[0]` is the program name) and returns its exit
/// status; the console script `memskill` is this.
#[pyfunction]
fn main(py: Python<'_>, argv: Vec<String>) -> i32 {
    py.detach(|| memskill_cli::run_args(argv))
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("MemskillError", m.py().get_type::<MemskillError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(score, m)?)?;
    m.add_function(wrap_pyfunction!(load_dataset, m)?)?;
    m.add_function(wrap_pyfunction!(main, m)?)?;
    m.add_function(wrap_pyfunction!(run::train, m)?)?;
    m.add_function(wrap_pyfunction!(run::evaluate, m)?)?;
    m.add_function(wrap_pyfunction!(analysis::report, m)?)?;
    m.add_function(wrap_pyfunction!(analysis::compare, m)?)?;
    m.add_function(wrap_pyfunction!(analysis::skills_eval, m)?)?;
    m.add_class::<bank::SkillBank>()?;
    Ok(())
}
