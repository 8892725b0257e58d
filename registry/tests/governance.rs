//! The governance bank operations and the high-risk gate in the registry, on SQLite and on
//! PostgreSQL where a server can be started (else `skipped: ...`): merge / split / bundle /
//! held release records round-trip with their release types, the skill row carries the
//! bank's risk level, and a promotion of a high-risk skill needs a person, a sandbox run of
//! at least 15 cases, and records the rollback plan.

use memskill_core::{
    ActionKind, CompareMode, EvalMode, EvalRun, ReleaseKind, ReleaseRecord, RiskLevel, Skill,
    SkillBank, SkillStatus, Version,
};
use memskill_registry::ingest::{self, Batch, SourceRun};
use memskill_registry::ops::{self, Decision};
use memskill_registry::testing::TempPostgres;
use memskill_registry::{migrate, show, Db, Location};

const T0: &str = "2026-12-07T10:00:00.000Z";
const T1: &str = "2026-12-07T11:00:00.000Z";

fn rec(skill: &str, kind: ReleaseKind, v: Version, note: &str) -> ReleaseRecord {
    ReleaseRecord::status_change(skill, kind, v, 2, note.into())
}

fn new_skill(name: &str, risk: RiskLevel, status: SkillStatus) -> Skill {
    let mut s = Skill::active(
        name,
        ActionKind::Insert,
        &format!("Store {name}."),
        &format!("Write the {name} of each event."),
        "merged-from:a@1.0.0",
    );
    s.version = Version::INITIAL;
    s.status = status;
    s.risk = Some(risk);
    s
}

fn sandbox(skill: &str, n: usize) -> EvalRun {
    EvalRun {
        id: format!("stage-2:{skill}@0.1.0"),
        skill: skill.into(),
        version: Version::INITIAL,
        stage: 2,
        cases: (0..n).map(|i| format!("s{i}/q1")).collect(),
        solved_before: vec![false; n],
        modes: vec![EvalMode {
            mode: CompareMode::Candidate,
            score: 0.9,
            case_scores: vec![0.9; n],
            ..Default::default()
        }],
        outcome_delta: 0.3,
        passed: true,
        ..Default::default()
    }
}

/// A governed stage's bank: `track-when` merged from `track-dates` + `track-times` (both
/// deprecated), high-risk and held with a 15-case sandbox run; `call-api` split from
/// `track-pets`, high-risk with 5 cases; `track-days` low risk; a bundle of the two.
fn governed_bank() -> SkillBank {
    let mut b = SkillBank::seed();
    for n in ["track-dates", "track-times", "track-pets"] {
        let mut s = new_skill(n, RiskLevel::Low, SkillStatus::Deprecated);
        s.version = Version::new(1, 0, 0);
        b.insert(s).unwrap();
    }
    b.insert(new_skill(
        "track-when",
        RiskLevel::High,
        SkillStatus::Candidate,
    ))
    .unwrap();
    b.insert(new_skill(
        "call-api",
        RiskLevel::High,
        SkillStatus::Candidate,
    ))
    .unwrap();
    b.insert(new_skill("track-days", RiskLevel::Low, SkillStatus::Canary))
        .unwrap();
    let i = Version::INITIAL;
    let one = Version::new(1, 0, 0);
    let mut merged = rec(
        "track-when",
        ReleaseKind::Merged,
        i,
        "merged from `track-dates@1.0.0` and `track-times@1.0.0`",
    );
    merged.from_version = None;
    b.releases.extend([
        merged,
        rec(
            "track-dates",
            ReleaseKind::Deprecated,
            one,
            "merged into `track-when`",
        ),
        rec(
            "track-times",
            ReleaseKind::Deprecated,
            one,
            "merged into `track-when`",
        ),
        rec(
            "call-api",
            ReleaseKind::Split,
            i,
            "split from `track-pets@1.0.0`",
        ),
        rec(
            "track-days",
            ReleaseKind::Split,
            i,
            "split from `track-pets@1.0.0`",
        ),
        rec(
            "track-pets",
            ReleaseKind::Deprecated,
            one,
            "split into `call-api`, `track-days`",
        ),
        rec("track-when", ReleaseKind::Held, i, "high-risk: held"),
        rec("call-api", ReleaseKind::Held, i, "high-risk: held"),
        rec("track-days", ReleaseKind::Canaried, i, "gate passed"),
        rec("track-days", ReleaseKind::Bundled, i, "in bundle `when`"),
        rec("insert", ReleaseKind::Bundled, one, "in bundle `when`"),
    ]);
    b.eval_runs.push(sandbox("track-when", 15));
    b.eval_runs.push(sandbox("call-api", 5));
    b
}

fn batch(bank: &SkillBank) -> Batch<'_> {
    Batch {
        run: SourceRun {
            id: "gov-run".into(),
            kind: "train".into(),
            path: "/runs/gov".into(),
            dataset: Some("synthetic".into()),
        },
        bank: Some(bank),
        owns_history: true,
        memories: Vec::new(),
        skill_md: Default::default(),
        eval_summaries: Default::default(),
        invocations: Vec::new(),
        trajectories: Vec::new(),
    }
}

fn column(db: &mut Db, sql: &str) -> Vec<String> {
    ops::query(db, sql)
        .unwrap()
        .iter()
        .map(|r| {
            r.values
                .iter()
                .map(|v| v.as_str().unwrap_or("").to_string())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

/// Everything this file checks on one store; returns `registry show track-when` and the
/// export for the cross-database comparison.
fn story(db: &mut Db) -> (String, String) {
    migrate::migrate(db, T0).unwrap();
    let bank = governed_bank();
    ingest::write(db, &batch(&bank), T0).unwrap();
    let types = column(
        db,
        "SELECT skill_id, kind, release_type FROM skill_release WHERE kind IN ('merged', 'split', 'bundled', 'held') ORDER BY seq",
    );
    assert_eq!(
        types,
        [
            "track-when merged merge",
            "call-api split split",
            "track-days split split",
            "track-when held review",
            "call-api held review",
            "track-days bundled bundle",
            "insert bundled bundle",
        ]
    );
    let risks = column(
        db,
        "SELECT skill_id, risk_level, status FROM skill ORDER BY skill_id",
    );
    assert!(
        risks.contains(&"track-when high candidate".to_string()),
        "{risks:?}"
    );
    assert!(
        risks.contains(&"track-days low canary".to_string()),
        "{risks:?}"
    );
    assert!(
        risks.contains(&"track-dates low deprecated".to_string()),
        "{risks:?}"
    );
    assert!(
        risks.contains(&"insert unassessed active".to_string()),
        "{risks:?}"
    );

    // the high-risk gate: eval_gate never promotes; too few cases are named; a person with
    // the 15-case sandbox run promotes, and the rollback plan is recorded
    for machine in ["eval_gate", "EVAL-GATE", "designer:qwen3-8b", " "] {
        let e = ops::decide(db, "track-when", Decision::Promote, "ok", machine, T1).unwrap_err();
        assert!(
            format!("{e:#}").contains("person's approval")
                || format!("{e:#}").contains("approver's name"),
            "{machine:?}: {e:#}"
        );
    }
    // a held version that no person promoted cannot come in by a rollback either
    db.execute(
        "UPDATE skill SET version = '9.9.9' WHERE skill_id = 'call-api'",
        &[],
    )
    .unwrap();
    let e = ops::rollback(
        db,
        "call-api",
        &Version::INITIAL.to_string(),
        "back",
        "ada",
        T1,
    )
    .unwrap_err();
    assert!(
        format!("{e:#}").contains("held by the high-risk gate"),
        "{e:#}"
    );
    db.execute(
        "UPDATE skill SET version = ? WHERE skill_id = 'call-api'",
        &[Version::INITIAL.to_string().into()],
    )
    .unwrap();
    let e = ops::rollback(
        db,
        "call-api",
        &Version::INITIAL.to_string(),
        "back",
        "ada",
        T1,
    )
    .unwrap_err();
    assert!(format!("{e:#}").contains("already"), "{e:#}");
    let e = ops::decide(db, "call-api", Decision::Promote, "ok", "ada", T1).unwrap_err();
    assert!(format!("{e:#}").contains("replayed 5 cases"), "{e:#}");
    ops::decide(db, "track-days", Decision::Promote, "fine", "eval_gate", T1)
        .expect("a low-risk skill has no high-risk gate");
    ops::decide(
        db,
        "track-when",
        Decision::Promote,
        "reviewed the calls",
        "ada",
        T1,
    )
    .unwrap();
    let note = column(
        db,
        "SELECT note FROM skill_release WHERE skill_id = 'track-when' AND kind = 'promoted'",
    );
    assert_eq!(note.len(), 1);
    assert!(
        note[0].starts_with("reviewed the calls; high-risk gate: approved by ada; sandbox run stage-2:track-when@0.1.0 (15 cases")
            && note[0].contains("rollback plan: archive it"),
        "{note:?}"
    );
    // writing the run again leaves the decision and the risk level alone
    ingest::write(db, &batch(&bank), T1).unwrap();
    let row = ops::skill_row(db, "track-when").unwrap();
    assert_eq!(
        (row.text("status"), row.text("risk_level")),
        ("active".into(), "high".into())
    );
    let shown = show::render(db, "track-when", None).unwrap();
    assert!(shown.contains("risk level: high"), "{shown}");
    assert!(
        shown.contains("merged (merge)") && shown.contains("held (review)"),
        "{shown}"
    );
    (shown, ops::export(db).unwrap())
}

#[test]
fn sqlite_governance_records_and_the_high_risk_gate() {
    let dir = tempfile::tempdir().unwrap();
    let mut db = Db::open(&Location::Sqlite(dir.path().join("r.db")), true, false).unwrap();
    story(&mut db);
}

#[test]
fn postgres_governance_matches_sqlite() {
    let Some(pg) = TempPostgres::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut lite = Db::open(&Location::Sqlite(dir.path().join("r.db")), true, false).unwrap();
    let (show_lite, export_lite) = story(&mut lite);
    let mut db = Db::open(&Location::parse(&pg.url), true, false).unwrap();
    let (show_pg, export_pg) = story(&mut db);
    assert_eq!(show_pg, show_lite);
    assert_eq!(export_pg, export_lite);
}
