//! `registry show SKILL [--version V]`: one skill's whole record as text: its row, every
//! version, the releases with their approvers and diffs, the eval runs with the skill score's
//! terms, and its invocations with the feedback and post-mortems people gave.

use std::fmt::Write as _;

use anyhow::Result;
use serde_json::Value;

use crate::db::{Db, Param, Row};
use crate::ops::skill_row;

/// At most this many invocations are listed one by one (the ones with feedback first).
const LISTED_INVOCATIONS: usize = 20;

fn cell(v: &Value) -> String {
    match v {
        Value::Null => "-".into(),
        Value::String(s) => s.replace('|', "\\|").replace('\n', " "),
        Value::Number(n) => match n.as_f64() {
            Some(x) if n.is_f64() => format!("{x:.4}"),
            _ => n.to_string(),
        },
        v => v.to_string().replace('|', "\\|"),
    }
}

/// Render the record (`version`: only that version's eval runs and invocations, and its text).
pub fn render(db: &mut Db, name: &str, version: Option<&str>) -> Result<String> {
    let row = skill_row(db, name)?;
    let mut s = String::new();
    writeln!(
        s,
        "# skill {name}\n\nversion {} · status {} · created by {} at {} · updated {}",
        row.text("version"),
        row.text("status"),
        row.text("created_by"),
        row.text("created_at"),
        row.text("updated_at")
    )?;
    writeln!(s, "scope: {}", row.get("scope"))?;
    writeln!(s, "risk level: {}", row.text("risk_level"))?;
    writeln!(s, "description: {}\n", row.text("description"))?;
    versions(db, name, version, &mut s)?;
    releases(db, name, &mut s)?;
    eval_runs(db, name, version, &mut s)?;
    invocations(db, name, version, &mut s)?;
    Ok(s)
}

/// The condition that keeps one version's rows, and the parameters of the whole query.
fn by_version(name: &str, version: Option<&str>) -> (&'static str, Vec<Param>) {
    let mut params: Vec<Param> = vec![name.into()];
    match version {
        Some(v) => {
            params.push(v.into());
            (" AND skill_version = ?", params)
        }
        None => ("", params),
    }
}

fn versions(db: &mut Db, name: &str, version: Option<&str>, s: &mut String) -> Result<()> {
    let rows = db.query(
        "SELECT version, content_hash, action, source_run_id, created_at, description, instructions
         FROM skill_version WHERE skill_id = ? ORDER BY created_at, version, content_hash",
        &[name.into()],
    )?;
    writeln!(
        s,
        "## versions ({})\n\n| version | text | action | written by run | at |\n|---|---|---|---|---|",
        rows.len()
    )?;
    for r in &rows {
        writeln!(
            s,
            "| {} | {} | {} | {} | {} |",
            r.text("version"),
            r.text("content_hash"),
            r.text("action"),
            r.text("source_run_id"),
            r.text("created_at")
        )?;
    }
    if let Some(v) = version {
        for r in rows.iter().filter(|r| r.text("version") == v) {
            writeln!(
                s,
                "\n### text of {v} ({})\n\n{}\n\n{}",
                r.text("content_hash"),
                r.text("description"),
                r.text("instructions")
            )?;
        }
    }
    s.push('\n');
    Ok(())
}

fn releases(db: &mut Db, name: &str, s: &mut String) -> Result<()> {
    let rows = db.query(
        "SELECT seq, created_at, kind, release_type, from_version, to_version, approved_by, note, diff, source_run_id
         FROM skill_release WHERE skill_id = ? ORDER BY seq",
        &[name.into()],
    )?;
    writeln!(
        s,
        "## releases ({}, oldest first)\n\n| at | kind (type) | from -> to | approved by | run | note |\n|---|---|---|---|---|---|",
        rows.len()
    )?;
    for r in &rows {
        writeln!(
            s,
            "| {} | {} ({}) | {} -> {} | {} | {} | {} |",
            r.text("created_at"),
            r.text("kind"),
            r.text("release_type"),
            cell(r.get("from_version")),
            r.text("to_version"),
            r.text("approved_by"),
            cell(r.get("source_run_id")),
            cell(r.get("note"))
        )?;
    }
    let with_diff: Vec<&Row> = rows.iter().filter(|r| !r.text("diff").is_empty()).collect();
    for r in with_diff {
        writeln!(
            s,
            "\ndiff of the {} release to {}:\n```diff\n{}```",
            r.text("kind"),
            r.text("to_version"),
            ensure_newline(&r.text("diff"))
        )?;
    }
    s.push('\n');
    Ok(())
}

fn ensure_newline(t: &str) -> String {
    if t.ends_with('\n') {
        t.to_string()
    } else {
        format!("{t}\n")
    }
}

fn eval_runs(db: &mut Db, name: &str, version: Option<&str>, s: &mut String) -> Result<()> {
    let (extra, params) = by_version(name, version);
    let rows = db.query(
        &format!(
            "SELECT eval_group, skill_version, mode, pass_rate, tokens, tool_call_count, safety_failures,
               regression_failures, passed, summary, created_at
             FROM skill_eval_run WHERE skill_id = ?{extra} ORDER BY created_at, eval_group, mode"
        ),
        &params,
    )?;
    writeln!(
        s,
        "## eval runs ({} mode rows)\n\n| eval | version | mode | score | tokens | LLM calls | safety | regressions | passed |\n|---|---|---|---|---|---|---|---|---|",
        rows.len()
    )?;
    for r in &rows {
        writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            r.text("eval_group"),
            r.text("skill_version"),
            r.text("mode"),
            cell(r.get("pass_rate")),
            r.int("tokens"),
            r.int("tool_call_count"),
            r.int("safety_failures"),
            r.int("regression_failures"),
            if r.text("mode") == "with_candidate_skill" {
                if r.int("passed") == 1 {
                    "yes"
                } else {
                    "no"
                }
            } else {
                "-"
            }
        )?;
    }
    let scored = rows
        .iter()
        .rev()
        .find(|r| r.text("mode") == "with_candidate_skill" && !r.get("summary")["score"].is_null());
    if let Some(r) = scored {
        let score = &r.get("summary")["score"];
        writeln!(
            s,
            "\nskill score {} (from {}):\n\n| term | value | weight | contribution |\n|---|---|---|---|",
            cell(&score["score"]),
            r.text("eval_group")
        )?;
        for t in score["terms"].as_array().into_iter().flatten() {
            writeln!(
                s,
                "| {} | {} | {} | {} |",
                cell(&t["term"]),
                cell(&t["value"]),
                cell(&t["weight"]),
                cell(&t["contribution"])
            )?;
        }
    }
    s.push('\n');
    Ok(())
}

fn invocations(db: &mut Db, name: &str, version: Option<&str>, s: &mut String) -> Result<()> {
    let (extra, params) = by_version(name, version);
    let rows = db.query(
        &format!(
            "SELECT invocation_id, skill_version, trace_id, source_run_id, outcome_status, user_feedback, postmortem, metrics
             FROM skill_invocation WHERE skill_id = ?{extra} ORDER BY LENGTH(invocation_id), invocation_id"
        ),
        &params,
    )?;
    let with_fb = rows
        .iter()
        .filter(|r| !r.get("user_feedback").is_null() || !r.get("postmortem").is_null())
        .count();
    let answered = rows
        .iter()
        .filter(|r| r.text("outcome_status") == "answered")
        .count();
    writeln!(
        s,
        "## invocations ({}; {answered} whose memories answered a question; {with_fb} with feedback or a post-mortem)\n",
        rows.len()
    )?;
    let mut listed: Vec<&Row> = rows
        .iter()
        .filter(|r| !r.get("user_feedback").is_null() || !r.get("postmortem").is_null())
        .collect();
    listed.extend(
        rows.iter()
            .filter(|r| r.get("user_feedback").is_null() && r.get("postmortem").is_null())
            .take(LISTED_INVOCATIONS.saturating_sub(with_fb)),
    );
    writeln!(
        s,
        "| invocation | version | trace | outcome | feedback | post-mortem |\n|---|---|---|---|---|---|"
    )?;
    for r in listed.iter().take(LISTED_INVOCATIONS.max(with_fb)) {
        writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} |",
            r.text("invocation_id"),
            cell(r.get("skill_version")),
            r.text("trace_id"),
            r.text("outcome_status"),
            cell(r.get("user_feedback")),
            cell(r.get("postmortem"))
        )?;
    }
    if rows.len() > listed.len() {
        writeln!(s, "\n({} more not listed)", rows.len() - listed.len())?;
    }
    Ok(())
}
