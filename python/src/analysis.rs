//! `memskill.report`, `memskill.compare` and `memskill.skills_eval`: the library calls behind
//! `memskill report`, `memskill compare` and `memskill skills eval`, their results as plain
//! Python objects (the package's `results` module turns them into dataclasses).

use std::path::PathBuf;

use memskill_trainer::report::{Entry, Estimate, Metrics, Table};
use pyo3::prelude::*;
use serde_json::{json, Value};

use crate::{err, to_py};

fn estimate(e: &Option<Estimate>) -> Value {
    match e {
        Some(x) => json!({"mean": x.mean, "lo": x.lo, "hi": x.hi, "n": x.n}),
        None => Value::Null,
    }
}

/// One evaluation as the report reads it (scores with their 95% bootstrap intervals).
fn entry(e: &Entry) -> Value {
    let mut v = json!({
        "path": e.path, "method": e.method, "dataset": e.dataset, "split": e.split,
        "executor": e.executor, "top_k": e.top_k, "context_docs": e.context_docs,
        "external": e.external, "judge_model": e.judge_model,
    });
    let scores = match &e.metric {
        Metrics::Qa {
            f1,
            judge,
            questions,
            errors,
        } => json!({"kind": "qa", "f1": estimate(f1), "judge": estimate(judge),
            "questions": questions, "errors": errors}),
        Metrics::Alfworld {
            success,
            steps,
            games,
            env_errors,
        } => json!({"kind": "alfworld", "success": estimate(success), "steps": estimate(steps),
            "games": games, "errors": env_errors}),
    };
    if let (Value::Object(m), Value::Object(s)) = (&mut v, scores) {
        m.extend(s);
    }
    v
}

fn table(t: &Table) -> Value {
    let rows: Vec<Value> = t
        .rows
        .iter()
        .map(|(label, cells)| {
            json!({"label": label, "cells": cells.iter().map(|c| c.text.clone()).collect::<Vec<_>>()})
        })
        .collect();
    json!({"title": t.title, "note": t.note, "header": t.header, "rows": rows})
}

/// Writes `report.md` / `report.html` (+ figures) into `out` from the evaluations under
/// `inputs`; see `memskill.report`.
#[pyfunction]
pub fn report<'py>(
    py: Python<'py>,
    inputs: Vec<PathBuf>,
    out: PathBuf,
) -> PyResult<Bound<'py, PyAny>> {
    use memskill_trainer::report::{collect, Report};
    let v = py
        .detach(|| {
            let (entries, skills, failed) = collect(&inputs)?;
            let r = Report::build(&entries, skills);
            let files = r.write(&out)?;
            anyhow::Ok(json!({
                "out_dir": out,
                "files": files,
                "failed": failed,
                "evaluations": entries.iter().map(entry).collect::<Vec<_>>(),
                "tables": r.tables.iter().map(table).collect::<Vec<_>>(),
            }))
        })
        .map_err(err)?;
    to_py(py, &v)
}

/// The `memskill compare` table of `runs` and the evaluations it lists; see
/// `memskill.compare`.
#[pyfunction]
pub fn compare<'py>(py: Python<'py>, runs: Vec<PathBuf>) -> PyResult<Bound<'py, PyAny>> {
    let v = py
        .detach(|| {
            let (text, _) = memskill_trainer::eval::compare_table(&runs)?;
            let (entries, _, failed) = memskill_trainer::report::collect(&runs)?;
            anyhow::Ok(json!({
                "table": text,
                "failed": failed,
                "evaluations": entries.iter().map(entry).collect::<Vec<_>>(),
            }))
        })
        .map_err(err)?;
    to_py(py, &v)
}

/// Replays each skill of `bank` in three modes on a dataset slice; see `memskill.skills_eval`.
#[pyfunction]
#[pyo3(signature = (bank, *, checkpoint=None, config=None, dataset=None, split=None,
    limit=None, skills=Vec::new(), old=None, out=None, resamples=1000, cases=None,
    overrides=Vec::new()))]
#[allow(clippy::too_many_arguments)]
pub fn skills_eval<'py>(
    py: Python<'py>,
    bank: PathBuf,
    checkpoint: Option<PathBuf>,
    config: Option<PathBuf>,
    dataset: Option<String>,
    split: Option<String>,
    limit: Option<usize>,
    skills: Vec<String>,
    old: Option<PathBuf>,
    out: Option<PathBuf>,
    resamples: usize,
    cases: Option<PathBuf>,
    overrides: Vec<String>,
) -> PyResult<Bound<'py, PyAny>> {
    let (dataset, split) = crate::slice(limit, dataset, split)?;
    let args = memskill_cli::skills::EvalSkillsArgs {
        bank,
        checkpoint,
        config,
        dataset,
        split,
        limit,
        skills,
        old,
        out,
        resamples,
        cases,
        sets: overrides,
    };
    let (rows, dir) = py
        .detach(|| memskill_cli::skills::run_skills_eval(args))
        .map_err(err)?;
    let v = json!({
        "out_dir": dir,
        "table": memskill_trainer::skills_eval::render(&rows),
        "rows": rows,
    });
    to_py(py, &v)
}
