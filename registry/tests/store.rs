//! The registry end to end on SQLite, and on PostgreSQL where a server can be started
//! (scripts/registry/postgres.sh, Debian's postgresql; otherwise those checks print
//! `skipped: ...`): writes are idempotent, decisions are release records with approvers, a
//! rollback restores an earlier text, `registry query` cannot write, concurrent writers lose
//! nothing, and the two databases export the same bytes.

use memskill_core::{
    CompareMode, EvalMode, EvalRun, ReleaseKind, ReleaseRecord, SkillBank, Version,
};
use memskill_registry::ingest::{self, Batch, InvocationRecord, SourceRun, TrajectoryRecord};
use memskill_registry::ops::{self, Decision};
use memskill_registry::testing::TempPostgres;
use memskill_registry::{migrate, show, Db, Location};
use serde_json::json;

const T0: &str = "2026-12-07T10:00:00.000Z";
const T1: &str = "2026-12-07T11:00:00.000Z";
const T2: &str = "2026-12-07T12:00:00.000Z";

/// A seed bank in which `insert` was refined to 1.1.0 by a designer stage and gated, plus a
/// rejected draft of a new skill.
fn evolved_bank() -> SkillBank {
    let mut bank = SkillBank::seed();
    let s = bank.get_mut("insert").unwrap();
    let old = s.clone();
    s.instructions
        .push_str("\nAlso keep the date each fact was stated.");
    s.version = s.version.bump_minor();
    let v = s.version;
    let diff = memskill_core::diff::text_diff(
        &old.description,
        &old.instructions,
        &s.description,
        &s.instructions,
    );
    bank.releases.push(ReleaseRecord {
        skill: "insert".into(),
        kind: ReleaseKind::Refined,
        from_version: Some(old.version),
        to_version: v,
        diff,
        hard_cases: vec!["s1/q3".into()],
        reward_before: Some(0.4),
        reward_after: Some(0.5),
        stage: 1,
        note: "dates were lost".into(),
        approved_by: None,
    });
    bank.releases.push(ReleaseRecord::status_change(
        "insert",
        ReleaseKind::Canaried,
        v,
        1,
        "gate passed".into(),
    ));
    bank.releases.push(ReleaseRecord::status_change(
        "track-places",
        ReleaseKind::Rejected,
        Version::INITIAL,
        1,
        "failed validation".into(),
    ));
    let mode = |m, score: f64| EvalMode {
        mode: m,
        score,
        case_scores: vec![score, f64::NAN],
        tokens: 100,
        calls: 4,
        activation: 0.5,
        ..Default::default()
    };
    bank.eval_runs.push(EvalRun {
        id: "stage-1:insert@1.1.0".into(),
        skill: "insert".into(),
        version: v,
        old_version: Some(old.version),
        stage: 1,
        cases: vec!["s1/q3".into(), "s2/q1".into()],
        solved_before: vec![false, true],
        modes: vec![
            mode(CompareMode::Without, 0.2),
            mode(CompareMode::Old, 0.4),
            mode(CompareMode::Candidate, 0.6),
        ],
        outcome_delta: 0.2,
        passed: true,
        ..Default::default()
    });
    bank
}

fn batch<'a>(run: &str, bank: Option<&'a SkillBank>, invocations: usize) -> Batch<'a> {
    Batch {
        run: SourceRun {
            id: run.into(),
            kind: "train".into(),
            path: format!("/runs/{run}"),
            dataset: Some("synthetic".into()),
        },
        bank,
        owns_history: true,
        memories: Vec::new(),
        skill_md: Default::default(),
        eval_summaries: [(
            "stage-1:insert@1.1.0".to_string(),
            json!({"score": 0.25, "terms": [{"term": "outcome delta", "value": 0.2, "weight": 1.0, "contribution": 0.2}]}),
        )]
        .into_iter()
        .collect(),
        invocations: (0..invocations)
            .map(|i| InvocationRecord {
                id: format!("{run}:inv:{}", i + 1),
                skill: if i % 2 == 0 { "insert" } else { "noop" }.into(),
                skill_version: Some("1.1.0".into()),
                trace_id: format!("{run}:train:{}:s{}", i / 4 + 1, i % 4),
                reason: "selected by the controller with [insert, noop]".into(),
                activation_score: None,
                outcome_status: if i % 3 == 0 { "answered" } else { "unused" }.into(),
                metrics: json!({"tokens": 10 + i}),
            })
            .collect(),
        trajectories: (0..invocations.div_ceil(4))
            .map(|t| TrajectoryRecord {
                trace_id: format!("{run}:train:{}:s0", t + 1),
                task_type: "train:synthetic".into(),
                task_summary: format!("update {}", t + 1),
                messages: json!([{"span": "sp1"}]),
                tool_calls: json!([["insert"]]),
                errors: json!([]),
                outcome_status: "scored".into(),
                metrics: json!({"step": t + 1}),
            })
            .collect(),
    }
}

/// The story every store goes through; returns `registry show insert` and the export.
fn story(db: &mut Db) -> (String, String) {
    migrate::migrate(db, T0).unwrap();
    let bank = evolved_bank();
    let c = ingest::write(db, &batch("run-a", Some(&bank), 12), T0).unwrap();
    assert_eq!(c.releases as usize, bank.releases.len());
    assert_eq!(c.eval_runs, 3);
    assert_eq!(c.eval_cases, 2);
    assert_eq!(c.invocations, 12);
    assert_eq!(c.trajectories, 3);
    assert_eq!(c.skill_versions as usize, bank.len());
    // the same run again: nothing new
    let again = ingest::write(db, &batch("run-a", Some(&bank), 12), T1).unwrap();
    assert_eq!(again.total(), 0, "{again:?}");
    // the seed version's text is known from a run that still had it
    let seed = SkillBank::seed();
    ingest::write(db, &batch("run-seed", Some(&seed), 0), T0).unwrap();

    let r = ops::decide(
        db,
        "insert",
        Decision::Deprecate,
        "superseded by dated inserts",
        "ada",
        T1,
    )
    .unwrap();
    assert!(r.starts_with("rel-manual-"));
    let e = ops::decide(db, "insert", Decision::Deprecate, "again", "ada", T1).unwrap_err();
    assert!(format!("{e:#}").contains("already deprecated"), "{e:#}");
    let e = ops::decide(db, "insert", Decision::Promote, "", "ada", T1).unwrap_err();
    assert!(format!("{e:#}").contains("reason"), "{e:#}");
    let (_, text) = ops::rollback(
        db,
        "insert",
        "1.0.0",
        "the dated version regressed",
        "grace",
        T2,
    )
    .unwrap();
    assert!(!text.instructions.contains("keep the date"));
    let row = ops::skill_row(db, "insert").unwrap();
    assert_eq!(
        (row.text("version").as_str(), row.text("status").as_str()),
        ("1.0.0", "active")
    );
    // re-ingesting the run does not undo the people's decisions
    ingest::write(db, &batch("run-a", Some(&bank), 12), T2).unwrap();
    let row = ops::skill_row(db, "insert").unwrap();
    assert_eq!(row.text("version"), "1.0.0");
    let e = ops::rollback(db, "insert", "9.9.9", "x", "grace", T2).unwrap_err();
    assert!(format!("{e:#}").contains("no version 9.9.9"), "{e:#}");

    ops::feedback(db, "run-a:inv:1", 1.0, "kept the meeting date", "lin", T2).unwrap();
    ops::feedback(db, "run-a:inv:1", -0.5, "but twice", "lin", T2).unwrap();
    let e = ops::feedback(db, "run-a:inv:999", 1.0, "x", "lin", T2).unwrap_err();
    assert!(format!("{e:#}").contains("no invocation"), "{e:#}");
    let answers = json!({
        "should_trigger": "yes", "helped": "yes, the date was answered",
        "unclear_step": "none", "new_pitfall": "relative dates",
        "script_candidate": "no", "action": "patch: resolve relative dates"
    });
    ops::postmortem(db, "run-a:inv:3", &answers, "lin", T2).unwrap();
    let mut bad = answers.clone();
    bad["action"] = json!("rewrite");
    assert!(ops::postmortem(db, "run-a:inv:3", &bad, "lin", T2).is_err());
    bad = answers.clone();
    bad.as_object_mut().unwrap().remove("helped");
    let e = ops::postmortem(db, "run-a:inv:3", &bad, "lin", T2).unwrap_err();
    assert!(format!("{e:#}").contains("helped"), "{e:#}");

    let shown = show::render(db, "insert", None).unwrap();
    (shown, ops::export(db).unwrap())
}

fn check_show(shown: &str) {
    for want in [
        "version 1.0.0 · status active",
        "| 1.1.0 |",
        "refined (patch) | 1.0.0 -> 1.1.0 | eval_gate |",
        "deprecated (deprecate) | 1.1.0 -> 1.1.0 | ada |",
        "restored (rollback) | 1.1.0 -> 1.0.0 | grace |",
        "| stage-1:insert@1.1.0 | 1.1.0 | with_candidate_skill | 0.6000 |",
        "skill score 0.2500 (from stage-1:insert@1.1.0)",
        "2 with feedback or a post-mortem",
        "kept the meeting date",
        "relative dates",
        "- Also keep the date each fact was stated.",
    ] {
        assert!(shown.contains(want), "missing {want:?} in:\n{shown}");
    }
    // the diff of the rollback is the designer's diff format
    assert!(shown.contains("@@ instructions"), "{shown}");
}

#[test]
fn sqlite_story() {
    let dir = tempfile::tempdir().unwrap();
    let mut db = Db::open(&Location::Sqlite(dir.path().join("r.db")), true, false).unwrap();
    let (shown, export) = story(&mut db);
    check_show(&shown);
    assert!(export.lines().count() > 30);
    // read-only connections refuse writes
    let mut ro =
        memskill_registry::open_existing(&Location::Sqlite(dir.path().join("r.db")), true).unwrap();
    assert!(ops::query(&mut ro, "DELETE FROM skill").is_err());
    assert!(ops::query(&mut ro, "SELECT 1; DELETE FROM skill").is_err());
    assert_eq!(
        ops::query(&mut ro, "SELECT COUNT(*) AS n FROM skill").unwrap()[0].int("n"),
        5
    );
}

#[test]
fn an_edited_migration_or_a_newer_schema_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let loc = Location::Sqlite(dir.path().join("r.db"));
    let mut db = memskill_registry::open_for_write(&loc).unwrap();
    db.execute(
        "UPDATE schema_migration SET checksum = 'x' WHERE version = 1",
        &[],
    )
    .unwrap();
    let e = memskill_registry::open_existing(&loc, true).err().unwrap();
    assert!(
        format!("{e:#}").contains("was edited after it ran"),
        "{e:#}"
    );
    db.execute(
        "UPDATE schema_migration SET version = 99 WHERE version = 1",
        &[],
    )
    .unwrap();
    let e = memskill_registry::open_existing(&loc, true).err().unwrap();
    assert!(format!("{e:#}").contains("newer memskill"), "{e:#}");
}

#[test]
fn not_a_database_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("notes.txt");
    std::fs::write(
        &p,
        "hello, this is not sqlite at all; it is long enough to have a header",
    )
    .unwrap();
    let e = memskill_registry::open_existing(&Location::Sqlite(p), true)
        .err()
        .unwrap();
    assert!(format!("{e:#}").contains("notes.txt"), "{e:#}");
    let e = memskill_registry::open_existing(&Location::Sqlite(dir.path().to_path_buf()), true)
        .err()
        .unwrap();
    assert!(format!("{e:#}").contains("not a regular file"), "{e:#}");
}

/// Two writers (own connections, own threads) each write their runs, 20 batches of 25 new
/// invocations: every record arrives once.
fn concurrent_writers(loc: &Location) {
    let mut db = memskill_registry::open_for_write(loc).unwrap();
    let before = db
        .query("SELECT COUNT(*) AS n FROM skill_invocation", &[])
        .unwrap()[0]
        .int("n");
    let handles: Vec<_> = ["w1", "w2"]
        .into_iter()
        .map(|w| {
            let loc = loc.clone();
            std::thread::spawn(move || {
                let mut db = memskill_registry::open_for_write(&loc).unwrap();
                let bank = SkillBank::seed();
                for k in 1..=20 {
                    // each write brings the whole log so far, as a trainer does at a checkpoint
                    let b = batch(&format!("conc-{w}"), Some(&bank), 25 * k);
                    ingest::write(&mut db, &b, T0).unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let n = db
        .query("SELECT COUNT(*) AS n FROM skill_invocation", &[])
        .unwrap()[0]
        .int("n");
    assert_eq!(n - before, 2 * 25 * 20);
    let per_run = db
        .query(
            "SELECT source_run_id, COUNT(*) AS n FROM skill_invocation WHERE source_run_id LIKE 'conc-%' GROUP BY source_run_id ORDER BY source_run_id",
            &[],
        )
        .unwrap();
    assert_eq!(per_run.len(), 2);
    assert!(per_run.iter().all(|r| r.int("n") == 500), "{per_run:?}");
    let seqs = db
        .query(
            "SELECT COUNT(DISTINCT seq) AS d, COUNT(*) AS n FROM skill_release",
            &[],
        )
        .unwrap();
    assert_eq!(
        seqs[0].int("d"),
        seqs[0].int("n"),
        "release order numbers are unique"
    );
}

#[test]
fn sqlite_concurrent_writers_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    concurrent_writers(&Location::Sqlite(dir.path().join("r.db")));
}

#[test]
fn postgres_matches_sqlite() {
    let Some(pg) = TempPostgres::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut lite = Db::open(&Location::Sqlite(dir.path().join("r.db")), true, false).unwrap();
    let (show_lite, export_lite) = story(&mut lite);
    let loc = Location::parse(&pg.url);
    let mut db = Db::open(&loc, true, false).unwrap();
    let (show_pg, export_pg) = story(&mut db);
    check_show(&show_pg);
    assert_eq!(show_pg, show_lite);
    assert_eq!(export_pg, export_lite);
    let mut ro = memskill_registry::open_existing(&loc, true).unwrap();
    let e = ops::query(&mut ro, "DELETE FROM skill").unwrap_err();
    assert!(format!("{e:#}").contains("read-only"), "{e:#}");
    concurrent_writers(&loc);
}

/// A designer stage that did not beat the best snapshot puts the older bank back without a
/// release: the registry follows the run's bank back to the older version.
#[test]
fn a_restored_snapshot_moves_the_row_back() {
    let dir = tempfile::tempdir().unwrap();
    let mut db =
        memskill_registry::open_for_write(&Location::Sqlite(dir.path().join("r.db"))).unwrap();
    let seed = SkillBank::seed();
    ingest::write(&mut db, &batch("run-r", Some(&seed), 0), T0).unwrap();
    let evolved = evolved_bank();
    ingest::write(&mut db, &batch("run-r", Some(&evolved), 0), T1).unwrap();
    assert_eq!(
        ops::skill_row(&mut db, "insert").unwrap().text("version"),
        "1.1.0"
    );
    // the snapshot: the seed bank again, its shorter release list
    let c = ingest::write(&mut db, &batch("run-r", Some(&seed), 0), T2).unwrap();
    assert_eq!(c.releases, 0);
    assert_eq!(
        ops::skill_row(&mut db, "insert").unwrap().text("version"),
        "1.0.0"
    );
    // another run starting from the seed does not move it
    ingest::write(&mut db, &batch("run-r", Some(&evolved), 0), T2).unwrap();
    ingest::write(&mut db, &batch("run-other", Some(&seed), 0), T2).unwrap();
    assert_eq!(
        ops::skill_row(&mut db, "insert").unwrap().text("version"),
        "1.1.0"
    );
}

fn memory_with(id: &str, v: &[f32]) -> ingest::MemoryRecord {
    ingest::MemoryRecord {
        id: id.into(),
        sample_id: "s1".into(),
        scope_user: None,
        scope_org: None,
        scope_project: None,
        kind: "semantic".into(),
        content: format!("memory {id}"),
        source_event_ids: json!(["sp1"]),
        confidence: None,
        sensitivity: "public".into(),
        valid_from: None,
        valid_to: None,
        supersedes: json!([]),
        status: "live".into(),
        embedding: v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        source_trace_ids: json!([]),
        use_count: 0,
        last_used_at: None,
    }
}

/// Schema 2 on a server with pgvector: the embedding is also a `vector` column that SQL can
/// rank by similarity; the export (schema 1's columns) stays the same as SQLite's.
#[test]
fn postgres_keeps_embeddings_as_pgvector_where_the_server_has_it() {
    let Some(pg) = TempPostgres::start() else {
        return;
    };
    let loc = Location::parse(&pg.url);
    let mut db = memskill_registry::open_for_write(&loc).unwrap();
    let available = !db
        .query(
            "SELECT name::text AS name FROM pg_available_extensions WHERE name = 'vector'",
            &[],
        )
        .unwrap()
        .is_empty();
    let has = migrate::has_vector_column(&mut db).unwrap();
    assert_eq!(
        has, available,
        "the column exists exactly where pgvector does"
    );
    let status = ops::status(&mut db).unwrap();
    if !available {
        assert!(status.contains("BYTEA only"), "{status}");
        println!("skipped: this PostgreSQL server has no pgvector extension (https://github.com/pgvector/pgvector)");
        return;
    }
    assert!(status.contains("memory.embedding_vector"), "{status}");
    let mut b = batch("run-v", None, 0);
    b.memories = vec![
        memory_with("m-x", &[1.0, 0.0, 0.0]),
        memory_with("m-y", &[0.0, 1.0, 0.0]),
        memory_with("m-xy", &[0.9, 0.1, 0.0]),
        memory_with("m-none", &[]),
    ];
    ingest::write(&mut db, &b, T0).unwrap();
    let near: Vec<String> = db
        .query(
            "SELECT memory_id FROM memory WHERE embedding_vector IS NOT NULL
             ORDER BY embedding_vector <=> CAST('[1,0,0]' AS vector), memory_id LIMIT 2",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.text("memory_id"))
        .collect();
    assert_eq!(near, ["m-x", "m-xy"]);
    let v = db
        .query(
            "SELECT embedding_vector::text AS v FROM memory WHERE memory_id = 'm-xy'",
            &[],
        )
        .unwrap();
    assert_eq!(v[0].text("v"), "[0.9,0.1,0]");
    // `SELECT *` shows the vector column in the same text form (read from its binary form)
    let all = db
        .query("SELECT * FROM memory WHERE memory_id = 'm-xy'", &[])
        .unwrap();
    assert_eq!(all[0].text("embedding_vector"), "[0.9,0.1,0]");
    let none = db
        .query(
            "SELECT COUNT(*) AS n FROM memory WHERE embedding_vector IS NULL",
            &[],
        )
        .unwrap();
    assert_eq!(
        none[0].int("n"),
        1,
        "a memory without an embedding has none"
    );
    // the export reads schema 1's columns on both backends: identical to SQLite's
    let dir = tempfile::tempdir().unwrap();
    let mut lite =
        memskill_registry::open_for_write(&Location::Sqlite(dir.path().join("r.db"))).unwrap();
    ingest::write(&mut lite, &b, T0).unwrap();
    assert_eq!(
        ops::export(&mut db).unwrap(),
        ops::export(&mut lite).unwrap()
    );
}
