//! The registry's commands: state changes (each one a release record with its approver),
//! feedback and post-use reflections on invocations, and the read side (status, skill lists,
//! `show`, read-only queries, export).

use anyhow::{bail, Context, Result};
use memskill_core::diff::text_diff;
use serde_json::{json, Value};

use crate::db::{Db, Param, Row};
use crate::migrate::{self, lock_for_write};
use crate::TABLES;

/// A governance decision on a skill, recorded as a release.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Promote,
    Deprecate,
    Archive,
}

impl Decision {
    /// The status the skill has after it.
    pub fn status(self) -> &'static str {
        match self {
            Decision::Promote => "active",
            Decision::Deprecate => "deprecated",
            Decision::Archive => "archived",
        }
    }
    /// The release kind and the design's release type.
    fn kinds(self) -> (&'static str, &'static str) {
        match self {
            Decision::Promote => ("promoted", "promote"),
            Decision::Deprecate => ("deprecated", "deprecate"),
            Decision::Archive => ("archived", "archive"),
        }
    }
}

/// The skill's registry row, or an error naming the skill.
pub fn skill_row(db: &mut Db, name: &str) -> Result<Row> {
    db.query("SELECT * FROM skill WHERE skill_id = ?", &[name.into()])?
        .into_iter()
        .next()
        .with_context(|| {
            format!(
                "registry {}: no skill {name:?} (list them with `memskill registry skills`)",
                db.location
            )
        })
}

struct NewRelease<'a> {
    skill: &'a str,
    from: &'a str,
    to: &'a str,
    kind: &'a str,
    release_type: &'a str,
    diff: String,
    approved_by: &'a str,
    note: &'a str,
}

fn insert_release(db: &mut Db, r: &NewRelease<'_>, now: &str) -> Result<String> {
    let seq = db
        .query(
            "SELECT COALESCE(MAX(seq), 0) + 1 AS next FROM skill_release",
            &[],
        )?
        .first()
        .map_or(1, |r| r.int("next"));
    let id = format!("rel-manual-{seq}-{}", r.skill);
    db.execute(
        "INSERT INTO skill_release (release_id, seq, skill_id, from_version, to_version, release_type, kind, diff,
           eval_summary, approved_by, note, source_run_id, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        &[
            (&id).into(),
            seq.into(),
            r.skill.into(),
            r.from.into(),
            r.to.into(),
            r.release_type.into(),
            r.kind.into(),
            r.diff.clone().into(),
            json!({}).into(),
            r.approved_by.into(),
            r.note.into(),
            Param::Null,
            now.into(),
        ],
    )?;
    Ok(id)
}

fn require_reason(reason: &str, approved_by: &str) -> Result<()> {
    if reason.trim().is_empty() {
        bail!("a governance decision needs a reason (--reason)");
    }
    if approved_by.trim().is_empty() {
        bail!("a governance decision needs the approver's name (--approved-by)");
    }
    Ok(())
}

/// Promote, deprecate or archive a skill; returns the release id.
pub fn decide(
    db: &mut Db,
    name: &str,
    d: Decision,
    reason: &str,
    approved_by: &str,
    now: &str,
) -> Result<String> {
    require_reason(reason, approved_by)?;
    db.transaction(|db| {
        lock_for_write(db)?;
        let row = skill_row(db, name)?;
        let (status, version) = (row.text("status"), row.text("version"));
        if status == d.status() {
            bail!("skill {name} is already {status}");
        }
        if status == "archived" && d != Decision::Archive {
            bail!(
                "skill {name} is archived; roll it back to a version first (`registry rollback`)"
            );
        }
        let (kind, release_type) = d.kinds();
        let gate_note = match d {
            Decision::Promote => high_risk_gate(db, name, &row, approved_by)?,
            _ => None,
        };
        let note = match gate_note {
            Some(g) => format!("{reason}; {g}"),
            None => reason.to_string(),
        };
        let id = insert_release(
            db,
            &NewRelease {
                skill: name,
                from: &version,
                to: &version,
                kind,
                release_type,
                diff: String::new(),
                approved_by,
                note: &note,
            },
            now,
        )?;
        db.execute(
            "UPDATE skill SET status = ?, updated_at = ? WHERE skill_id = ?",
            &[d.status().into(), now.into(), name.into()],
        )?;
        Ok(id)
    })
}

/// The high-risk gate on a promotion, from what the registry holds for the skill's current
/// version: its risk level, the candidate-mode eval run with the most cases (the sandbox
/// run) and the version before it (the rollback plan). `Ok(None)`: not high-risk.
fn high_risk_gate(db: &mut Db, name: &str, row: &Row, approved_by: &str) -> Result<Option<String>> {
    use memskill_core::governance::{high_risk_promotion, PromotionEvidence};
    let risk = match row.text("risk_level").as_str() {
        "high" => Some(memskill_core::RiskLevel::High),
        "low" => Some(memskill_core::RiskLevel::Low),
        _ => None,
    };
    if risk != Some(memskill_core::RiskLevel::High) {
        return Ok(None);
    }
    let version = row.text("version");
    let runs = db.query(
        "SELECT eval_group, assertion_results FROM skill_eval_run
         WHERE skill_id = ? AND skill_version = ? AND mode = 'with_candidate_skill' ORDER BY run_id",
        &[name.into(), (&version).into()],
    )?;
    let sandbox = runs
        .iter()
        .map(|r| {
            let n = r.get("assertion_results")["cases"]
                .as_array()
                .map_or(0, Vec::len);
            (r.text("eval_group"), n)
        })
        .max_by_key(|(_, n)| *n);
    let previous = db
        .query(
            "SELECT from_version FROM skill_release WHERE skill_id = ? AND to_version = ?
               AND from_version IS NOT NULL AND from_version <> to_version ORDER BY seq DESC",
            &[name.into(), (&version).into()],
        )?
        .first()
        .and_then(|r| r.text("from_version").parse().ok());
    let ev = PromotionEvidence {
        risk,
        approved_by,
        sandbox,
        previous,
    };
    high_risk_promotion(&ev).map_err(|missing| {
        anyhow::anyhow!(
            "skill {name} is high-risk (its text asks for tools, code or external services); the high-risk gate refuses the promotion: {}",
            missing.join("; ")
        )
    })
}

/// A version's text as the registry holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct VersionText {
    pub version: String,
    pub action: String,
    pub description: String,
    pub instructions: String,
    pub skill_md: String,
}

/// The text of one version of a skill (the newest row where two runs wrote that version).
pub fn version_text(db: &mut Db, name: &str, version: &str) -> Result<VersionText> {
    let rows = db.query(
        "SELECT version, action, description, instructions, skill_md FROM skill_version
         WHERE skill_id = ? AND version = ? ORDER BY created_at DESC, content_hash",
        &[name.into(), version.into()],
    )?;
    let r = rows.first().with_context(|| {
        format!(
            "registry {}: skill {name} has no version {version} (see `memskill registry show {name}`)",
            db.location
        )
    })?;
    Ok(VersionText {
        version: r.text("version"),
        action: r.text("action"),
        description: r.text("description"),
        instructions: r.text("instructions"),
        skill_md: r.text("skill_md"),
    })
}

/// Roll a skill back to an earlier version's text: a `rollback` release (`restored`) with
/// the diff, the row back at that version and active. Returns the release id and the text.
pub fn rollback(
    db: &mut Db,
    name: &str,
    to: &str,
    reason: &str,
    approved_by: &str,
    now: &str,
) -> Result<(String, VersionText)> {
    require_reason(reason, approved_by)?;
    db.transaction(|db| {
        lock_for_write(db)?;
        let row = skill_row(db, name)?;
        let from = row.text("version");
        if from == to {
            bail!("registry {}: {name} is at version {to} already", db.location);
        }
        refuse_held_version(db, name, to)?;
        let target = version_text(db, name, to)?;
        let current = version_text(db, name, &from).ok();
        let diff = match &current {
            Some(c) => text_diff(
                &c.description,
                &c.instructions,
                &target.description,
                &target.instructions,
            ),
            None => String::new(),
        };
        let id = insert_release(
            db,
            &NewRelease {
                skill: name,
                from: &from,
                to,
                kind: "restored",
                release_type: "rollback",
                diff,
                approved_by,
                note: reason,
            },
            now,
        )?;
        db.execute(
            "UPDATE skill SET version = ?, status = 'active', description = ?, skill_md = ?, updated_at = ?
             WHERE skill_id = ?",
            &[
                to.into(),
                (&target.description).into(),
                (&target.skill_md).into(),
                now.into(),
                name.into(),
            ],
        )?;
        Ok((id, target))
    })
}

/// A version the high-risk gate held and no person promoted never went live: rolling back
/// to it would let it in past the gate, so it is refused (promote it instead).
fn refuse_held_version(db: &mut Db, name: &str, version: &str) -> Result<()> {
    let kinds: Vec<String> = db
        .query(
            "SELECT kind FROM skill_release WHERE skill_id = ? AND to_version = ?",
            &[name.into(), version.into()],
        )?
        .iter()
        .map(|r| r.text("kind"))
        .collect();
    if kinds.iter().any(|k| k == "held") && !kinds.iter().any(|k| k == "promoted") {
        bail!(
            "registry {}: version {version} of {name} was held by the high-risk gate and never promoted; a rollback cannot let it in: `memskill registry promote {name} --approved-by NAME` (a person, with its sandbox run)",
            db.location
        );
    }
    Ok(())
}

fn invocation_exists(db: &mut Db, id: &str) -> Result<()> {
    if db
        .query(
            "SELECT invocation_id FROM skill_invocation WHERE invocation_id = ?",
            &[id.into()],
        )?
        .is_empty()
    {
        bail!(
            "registry {}: no invocation {id:?} (ids are in `memskill registry show SKILL`)",
            db.location
        );
    }
    Ok(())
}

/// Record a user's feedback on one invocation (kept as a list: later feedback is added).
pub fn feedback(
    db: &mut Db,
    invocation: &str,
    score: f64,
    text: &str,
    by: &str,
    now: &str,
) -> Result<()> {
    if !score.is_finite() {
        bail!("--score must be a number, not {score}");
    }
    db.transaction(|db| {
        lock_for_write(db)?;
        invocation_exists(db, invocation)?;
        let old = db.query(
            "SELECT user_feedback FROM skill_invocation WHERE invocation_id = ?",
            &[invocation.into()],
        )?;
        let mut list = match old.first().map(|r| r.get("user_feedback").clone()) {
            Some(Value::Array(a)) => a,
            _ => Vec::new(),
        };
        list.push(json!({"score": score, "text": text, "by": by, "at": now}));
        db.execute(
            "UPDATE skill_invocation SET user_feedback = ? WHERE invocation_id = ?",
            &[Value::Array(list).into(), invocation.into()],
        )?;
        Ok(())
    })
}

/// The choices of the post-mortem's `action` answer (an answer starts with one).
pub const POSTMORTEM_ACTIONS: [&str; 5] = ["keep", "patch", "merge", "split", "deprecate"];

/// The six questions of the post-use reflection, as (key, question).
pub const POSTMORTEM_QUESTIONS: [(&str, &str); 6] = [
    (
        "should_trigger",
        "Should the skill have been activated for this span?",
    ),
    ("helped", "Did it help the outcome, and how?"),
    (
        "unclear_step",
        "Which step of its instructions was unclear or misread?",
    ),
    (
        "new_pitfall",
        "Is there a new pitfall the skill should warn about?",
    ),
    (
        "script_candidate",
        "Is there a repeated process here that should become a script?",
    ),
    (
        "action",
        "What should happen to the skill: keep, patch, merge, split or deprecate?",
    ),
];

/// Record a post-use reflection on one invocation. `answers` must hold every key of
/// [`POSTMORTEM_QUESTIONS`] (text values); `action` must be one of its five choices.
pub fn postmortem(
    db: &mut Db,
    invocation: &str,
    answers: &Value,
    by: &str,
    now: &str,
) -> Result<()> {
    let obj = answers
        .as_object()
        .context("the post-mortem answers must be a JSON object")?;
    for (k, q) in POSTMORTEM_QUESTIONS {
        match obj.get(k) {
            Some(Value::String(s)) if !s.trim().is_empty() => {}
            _ => bail!("the post-mortem lacks an answer to {k:?} ({q})"),
        }
    }
    if let Some(unknown) = obj
        .keys()
        .find(|k| !POSTMORTEM_QUESTIONS.iter().any(|(q, _)| q == k))
    {
        bail!("the post-mortem has an unknown key {unknown:?}");
    }
    let action = obj["action"].as_str().unwrap_or("").trim().to_lowercase();
    if !POSTMORTEM_ACTIONS.iter().any(|a| action.starts_with(a)) {
        bail!("the post-mortem's action must start with keep, patch, merge, split or deprecate, not {action:?}");
    }
    let mut rec = answers.clone();
    if let Some(o) = rec.as_object_mut() {
        o.insert("by".into(), json!(by));
        o.insert("at".into(), json!(now));
    }
    db.transaction(|db| {
        lock_for_write(db)?;
        invocation_exists(db, invocation)?;
        db.execute(
            "UPDATE skill_invocation SET postmortem = ? WHERE invocation_id = ?",
            &[rec.into(), invocation.into()],
        )?;
        Ok(())
    })
}

/// `registry status`: where, which schema, how many rows per table.
pub fn status(db: &mut Db) -> Result<String> {
    let applied = migrate::applied(db)?;
    let mut s = format!(
        "registry: {} ({})\nschema: version {} of {}\n",
        db.location,
        db.backend().as_str(),
        applied.last().map_or(0, |a| a.version),
        migrate::current_version()
    );
    for a in &applied {
        s.push_str(&format!(
            "  migration {:04} {} applied {} sha256 {}\n",
            a.version,
            a.name,
            a.applied_at,
            &a.checksum[..12.min(a.checksum.len())]
        ));
    }
    if db.backend() == crate::db::Backend::Postgres {
        let available = !db
            .query(
                "SELECT name::text AS name FROM pg_available_extensions WHERE name = 'vector'",
                &[],
            )?
            .is_empty();
        s.push_str(match (migrate::has_vector_column(db)?, available) {
            (true, _) => "memory embeddings: BYTEA and pgvector (memory.embedding_vector)\n",
            (false, false) => "memory embeddings: BYTEA only (the server has no pgvector extension)\n",
            (false, true) => "memory embeddings: BYTEA only; pgvector is installed now: add the column once with `CREATE EXTENSION IF NOT EXISTS vector; ALTER TABLE memory ADD COLUMN embedding_vector vector;` (as a role that may create extensions)\n",
        });
    }
    s.push_str("rows:\n");
    for t in TABLES {
        let n = db
            .query(&format!("SELECT COUNT(*) AS n FROM {t}"), &[])?
            .first()
            .map_or(0, |r| r.int("n"));
        s.push_str(&format!("  {t:<17} {n}\n"));
    }
    Ok(s)
}

/// Rows per table (tests and the concurrency check).
pub fn counts(db: &mut Db) -> Result<Vec<(&'static str, i64)>> {
    let mut out = Vec::new();
    for t in TABLES {
        let n = db
            .query(&format!("SELECT COUNT(*) AS n FROM {t}"), &[])?
            .first()
            .map_or(0, |r| r.int("n"));
        out.push((*t, n));
    }
    Ok(out)
}

/// `registry skills`: skills with their version, status and scope, by name.
pub fn list_skills(
    db: &mut Db,
    status: Option<&str>,
    scope: Option<(&str, &str)>,
) -> Result<Vec<Row>> {
    let rows = match status {
        Some(s) => db.query(
            "SELECT name, version, status, scope, created_by, updated_at FROM skill WHERE status = ? ORDER BY name",
            &[s.into()],
        )?,
        None => db.query(
            "SELECT name, version, status, scope, created_by, updated_at FROM skill ORDER BY name",
            &[],
        )?,
    };
    Ok(match scope {
        None => rows,
        Some((k, v)) => rows
            .into_iter()
            .filter(|r| {
                r.get("scope")
                    .get(k)
                    .and_then(Value::as_array)
                    .is_some_and(|a| a.iter().any(|x| x.as_str() == Some(v)))
            })
            .collect(),
    })
}

/// `registry query`: run one statement on a connection opened read-only (SQLite's
/// read-only open plus `query_only`; a PostgreSQL session whose transactions are read-only),
/// so the database refuses any write.
pub fn query(db: &mut Db, sql: &str) -> Result<Vec<Row>> {
    let sql = sql.trim().trim_end_matches(';');
    if sql.contains(';') {
        bail!("one statement at a time");
    }
    db.query(sql, &[])
}

/// `registry export`: every table as JSON Lines, `{"table": T, "row": {...}}`, tables in
/// schema order and rows by primary key (the same bytes from SQLite and PostgreSQL for the
/// same records).
pub fn export(db: &mut Db) -> Result<String> {
    let mut out = String::new();
    for t in TABLES {
        let order = match *t {
            "skill_version" => "skill_id, version, content_hash",
            "skill_release" => "seq",
            _ => "1",
        };
        // the columns both backends have (schema 1's), so the export is the same from
        // either and leaves out PostgreSQL's pgvector copy of the embedding
        let cols = migrate::tables_and_columns(migrate::MIGRATIONS[0].sql(db.backend()))
            .into_iter()
            .find(|(name, _)| name == t)
            .map_or_else(|| "*".to_string(), |(_, c)| c.join(", "));
        for r in db.query(&format!("SELECT {cols} FROM {t} ORDER BY {order}"), &[])? {
            out.push_str(&json!({"table": t, "row": r.to_object()}).to_string());
            out.push('\n');
        }
    }
    Ok(out)
}
