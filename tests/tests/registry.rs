//! The governance registry through the CLI (issue 43): a synthetic training run with the
//! designer and the offline gate on writes its bank, releases, eval runs, invocations and
//! trajectories into the registry; `skills eval` adds its eval runs; a person rolls a skill
//! back and deprecates another (also applied to the run's exported bank), gives feedback and
//! a post-mortem on an invocation; `registry show` has all of it. Ingesting the same run
//! folders into PostgreSQL and taking the same decisions shows the same text. Two trainers
//! writing into one registry at once lose nothing.
//!
//! The designer is `memskill llm serve-scripted --designer-reply`: it refines `note-mood`
//! (which makes the synthetic task worse) and proposes `capture-places`. The gate's outcome
//! threshold is lowered so that the refine goes live (the story: a permissive gate let a
//! harmful refine in, and a person rolls it back).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use memskill_e2e::{memskill_bin, repo_root, serve_scripted, stderr, ScriptedServer};
use memskill_registry::testing::TempPostgres;

const T_RUN: &str = "1796644800"; // 2026-12-07T12:00:00Z
const T_DECIDE: &str = "1796648400"; // 13:00

fn run(args: &[&str], epoch: &str) -> Output {
    Command::new(memskill_bin())
        .args(args)
        .env("SOURCE_DATE_EPOCH", epoch)
        .env_remove("MEMSKILL_REGISTRY")
        .output()
        .expect("memskill runs")
}

fn ok(args: &[&str], epoch: &str) -> String {
    let o = run(args, epoch);
    assert!(o.status.success(), "{args:?}:\n{}", stderr(&o));
    String::from_utf8_lossy(&o.stdout).to_string()
}

/// The scripted designer, killed on drop.
fn designer(dir: &Path) -> ScriptedServer {
    let reply = dir.join("reply.json");
    std::fs::write(
        &reply,
        serde_json::json!({"changes": [
            {"type": "refine_existing", "name": "note-mood",
             "description": "Record how the speakers feel, with the time they said it.",
             "instructions": "Write one sentence about the speakers' mood and when it was stated.",
             "reason": "moods without times were useless"},
            {"type": "add_new", "name": "capture-places", "action": "insert",
             "description": "Store where each speaker says they are going.",
             "instructions": "Write the speaker and the place as one sentence.",
             "reason": "places were lost"}
        ]})
        .to_string(),
    )
    .unwrap();
    let mut args = [
        "--samples",
        "12",
        "--spans",
        "3",
        "--seed",
        "7",
        "--designer-reply",
    ]
    .map(std::ffi::OsStr::new)
    .to_vec();
    args.push(reply.as_os_str());
    serve_scripted(dir, "designer", &args)
}

fn train_args(runs: &Path, name: &str, registry: &str, designer_url: &str) -> Vec<String> {
    let cfg = repo_root().join("configs/synthetic.toml");
    let mut a: Vec<String> = [
        "train",
        "--config",
        &cfg.to_string_lossy(),
        "--runs-dir",
        &runs.to_string_lossy(),
        "--run-name",
        name,
        "--no-progress",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let mut sets = vec![
        "run.outer_epochs=2".to_string(),
        "run.inner_epochs=3".into(),
        "run.keep_last=100".into(),
        format!("registry.url={registry:?}"),
    ];
    sets.extend([
        "designer.enabled=true".to_string(),
        "designer.reflection_cycles=1".into(),
        "designer.attempts=1".into(),
        "designer.llm.backend=\"openai\"".into(),
        format!("designer.llm.base_urls=[{designer_url:?}]"),
        "designer.llm.model=\"scripted\"".into(),
        "designer.llm.probe_timeout_secs=0".into(),
        "designer.gate=\"offline\"".into(),
        "designer.gate_rules.min_outcome_delta=-1".into(),
        "designer.gate_rules.max_regressions=100".into(),
        "designer.gate_rules.min_precision=0".into(),
        "designer.gate_rules.max_false_positive_rate=1".into(),
    ]);
    for s in sets {
        a.push("--set".into());
        a.push(s);
    }
    a
}

fn lines(p: &Path) -> usize {
    std::fs::read_to_string(p)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .count()
}

fn count(registry: &str, sql: &str) -> i64 {
    let out = ok(
        &["registry", "query", sql, "--json", "--registry", registry],
        T_RUN,
    );
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    v["n"].as_i64().unwrap()
}

/// Rollback, deprecation, feedback and post-mortem, then `registry show note-mood`.
fn decide_and_show(registry: &str, bank: &Path) -> String {
    let bank = bank.to_string_lossy();
    let reg = ["--registry", registry];
    let o = ok(
        &[
            &[
                "registry",
                "rollback",
                "note-mood",
                "--to",
                "1.0.0",
                "--reason",
                "1.0.1 lost 0.25 on the gate's replay",
                "--approved-by",
                "ada",
                "--bank",
                &bank,
            ][..],
            &reg,
        ]
        .concat(),
        T_DECIDE,
    );
    assert!(o.contains("rolled back to 1.0.0 by ada"), "{o}");
    ok(
        &[
            &[
                "registry",
                "deprecate",
                "capture-places",
                "--reason",
                "never passed the gate",
                "--approved-by",
                "ada",
                "--bank",
                &bank,
            ][..],
            &reg,
        ]
        .concat(),
        T_DECIDE,
    );
    let first = ok(
        &[&["registry", "query", "SELECT invocation_id FROM skill_invocation WHERE skill_id = 'note-mood' ORDER BY LENGTH(invocation_id), invocation_id LIMIT 1", "--json"][..], &reg].concat(),
        T_DECIDE,
    );
    let id = serde_json::from_str::<serde_json::Value>(first.trim()).unwrap()["invocation_id"]
        .as_str()
        .unwrap()
        .to_string();
    ok(
        &[
            &[
                "registry",
                "feedback",
                &id,
                "--score",
                "-1",
                "--text",
                "stored a mood nobody asked about",
                "--by",
                "lin",
            ][..],
            &reg,
        ]
        .concat(),
        T_DECIDE,
    );
    // without answers it prints the six questions and fails
    let o = run(
        &[&["registry", "postmortem", &id][..], &reg].concat(),
        T_DECIDE,
    );
    assert!(!o.status.success());
    assert!(stderr(&o).contains("unclear_step"), "{}", stderr(&o));
    ok(
        &[
            &[
                "registry",
                "postmortem",
                &id,
                "--by",
                "lin",
                "--answer",
                "should_trigger=no: the span had no mood",
                "--answer",
                "helped=no",
                "--answer",
                "unclear_step=when to skip",
                "--answer",
                "new_pitfall=small talk is not a mood",
                "--answer",
                "script_candidate=no",
                "--answer",
                "action=deprecate",
            ][..],
            &reg,
        ]
        .concat(),
        T_DECIDE,
    );
    ok(
        &[&["registry", "show", "note-mood"][..], &reg].concat(),
        T_DECIDE,
    )
}

#[test]
fn a_gated_run_skills_eval_and_decisions_are_recorded_and_postgres_agrees() {
    let tmp = tempfile::tempdir().unwrap();
    let d = designer(tmp.path());
    let runs = tmp.path().join("runs");
    let lite = tmp.path().join("registry.db").to_string_lossy().to_string();
    let args = train_args(&runs, "gated", &lite, &d.url);
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    ok(&argv, T_RUN);
    let run_dir = runs.join("gated");
    let se = tmp.path().join("se");
    ok(
        &[
            "skills",
            "eval",
            &run_dir.join("skills").to_string_lossy(),
            "--checkpoint",
            &run_dir.to_string_lossy(),
            "--skill",
            "note-mood",
            "--limit",
            "6",
            "--out",
            &se.to_string_lossy(),
            "--set",
            &format!("registry.url={lite:?}"),
        ],
        T_RUN,
    );
    // the registry holds what the run's files hold
    let log = lines(&run_dir.join("invocations.jsonl")) as i64;
    assert_eq!(
        count(&lite, "SELECT COUNT(*) AS n FROM skill_invocation"),
        log
    );
    let bank: memskill_core::SkillBank = serde_json::from_str(
        &std::fs::read_to_string(run_dir.join("skills").join("bank.json")).unwrap(),
    )
    .unwrap();
    assert!(count(&lite, "SELECT COUNT(*) AS n FROM skill_release") >= bank.releases.len() as i64);
    assert_eq!(
        count(&lite, "SELECT COUNT(DISTINCT eval_group) AS n FROM skill_eval_run WHERE source_run_id NOT LIKE 'se-%'"),
        bank.eval_runs.len() as i64
    );
    assert_eq!(
        count(
            &lite,
            "SELECT COUNT(*) AS n FROM skill_eval_run WHERE source_run_id LIKE 'se-%'"
        ),
        2
    );

    // the same folders into PostgreSQL (where a server can be started), before the decisions
    let pg = TempPostgres::start();
    if let Some(pg) = &pg {
        ok(&["registry", "init", "--registry", &pg.url], T_RUN);
        ok(
            &[
                "registry",
                "ingest",
                &run_dir.to_string_lossy(),
                "--registry",
                &pg.url,
            ],
            T_RUN,
        );
        ok(
            &[
                "registry",
                "ingest",
                &se.to_string_lossy(),
                "--registry",
                &pg.url,
            ],
            T_RUN,
        );
    }
    let copy = tmp.path().join("bank-copy.json");
    std::fs::write(&copy, serde_json::to_vec_pretty(&bank).unwrap()).unwrap();
    let shown = decide_and_show(&lite, &run_dir.join("skills"));
    for want in [
        "version 1.0.0 · status active",
        "| 1.0.1 |",
        "refined (patch) | 1.0.0 -> 1.0.1 | eval_gate |",
        "canaried (gate) | 1.0.1 -> 1.0.1 | eval_gate |",
        "restored (rollback) | 1.0.1 -> 1.0.0 | ada |",
        "| eval:test:note-mood@1.0.1 | 1.0.1 | with_candidate_skill |",
        "| stage-1:note-mood@1.0.1 | 1.0.1 | with_old_skill |",
        "skill score ",
        "| outcome delta |",
        "1 with feedback or a post-mortem",
        "stored a mood nobody asked about",
        "small talk is not a mood",
    ] {
        assert!(shown.contains(want), "missing {want:?} in:\n{shown}");
    }
    // the decisions reached the run's exported bank, which exports again
    let after: memskill_core::SkillBank = serde_json::from_str(
        &std::fs::read_to_string(run_dir.join("skills").join("bank.json")).unwrap(),
    )
    .unwrap();
    let mood = after.get("note-mood").unwrap();
    assert_eq!(mood.version.to_string(), "1.0.0");
    let last = after.releases.last().unwrap();
    assert_eq!(last.approved_by.as_deref(), Some("ada"));
    assert_eq!(
        after.get("capture-places").unwrap().status.as_str(),
        "deprecated"
    );
    ok(
        &[
            "skills",
            "validate",
            &run_dir.join("skills").to_string_lossy(),
        ],
        T_RUN,
    );
    // a checkpoint is not edited
    let o = run(
        &[
            "registry",
            "archive",
            "noop",
            "--reason",
            "x",
            "--approved-by",
            "ada",
            "--bank",
            &run_dir.join("checkpoints").join("step-1").to_string_lossy(),
            "--registry",
            &lite,
        ],
        T_DECIDE,
    );
    assert!(stderr(&o).contains("is a checkpoint"), "{}", stderr(&o));
    println!("registry show note-mood (SQLite):\n{shown}");

    // ingesting the run again (its bank now holds ada's decisions) adds no release: each
    // decision is one release, however often the bank comes back
    let before = count(&lite, "SELECT COUNT(*) AS n FROM skill_release");
    ok(
        &[
            "registry",
            "ingest",
            &run_dir.to_string_lossy(),
            "--registry",
            &lite,
        ],
        T_DECIDE,
    );
    let n = count(&lite, "SELECT COUNT(*) AS n FROM skill_release");
    if n != before {
        let q = "SELECT skill_id, kind, from_version, to_version, approved_by, note, source_run_id, created_at FROM skill_release ORDER BY seq";
        panic!(
            "{}",
            ok(&["registry", "query", q, "--registry", &lite], T_RUN)
        );
    }
    let Some(pg) = pg else {
        return;
    };
    // the same decisions on PostgreSQL (on a copy of the bank as it was)
    let shown_pg = decide_and_show(&pg.url, &copy);
    assert_eq!(
        shown_pg, shown,
        "PostgreSQL and SQLite show the same record"
    );
    println!("PostgreSQL shows the same text");
}

/// Two trainers at once into one registry: every record of both runs' files arrives.
fn two_trainers(tmp: &Path, registry: &str) {
    let d = designer(tmp);
    let runs = tmp.join("runs");
    let children: Vec<(PathBuf, Child)> = ["one", "two"]
        .into_iter()
        .map(|name| {
            let args = train_args(&runs, name, registry, &d.url);
            let child = Command::new(memskill_bin())
                .args(&args)
                .env_remove("MEMSKILL_REGISTRY")
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            (runs.join(name), child)
        })
        .collect();
    for (dir, c) in children {
        let o = c.wait_with_output().unwrap();
        assert!(o.status.success(), "{}: {}", dir.display(), stderr(&o));
        let text = std::fs::read_to_string(dir.join("invocations.jsonl")).unwrap();
        let log: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let traces: std::collections::BTreeSet<(u64, String)> = log
            .iter()
            .map(|l| {
                (
                    l["step"].as_u64().unwrap(),
                    l["sample_id"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        let id = memskill_trainer::skill_registry::run_id(&dir);
        let q = |t: &str| {
            count(
                registry,
                &format!("SELECT COUNT(*) AS n FROM {t} WHERE source_run_id = '{id}'"),
            )
        };
        assert_eq!(q("skill_invocation"), log.len() as i64, "{id}");
        assert_eq!(q("trajectory"), traces.len() as i64, "{id}");
        let bank: memskill_core::SkillBank = serde_json::from_str(
            &std::fs::read_to_string(dir.join("skills").join("bank.json")).unwrap(),
        )
        .unwrap();
        assert!(!log.is_empty() && !bank.releases.is_empty(), "{id}");
        assert_eq!(q("skill_release"), bank.releases.len() as i64, "{id}");
        println!(
            "{id}: {} invocations, {} trajectories, {} releases in the registry = the run's files",
            log.len(),
            traces.len(),
            bank.releases.len()
        );
    }
}

#[test]
fn two_trainers_into_one_registry_lose_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let lite = tmp.path().join("registry.db").to_string_lossy().to_string();
    two_trainers(tmp.path(), &lite);
    if let Some(pg) = TempPostgres::start() {
        let tmp2 = tempfile::tempdir().unwrap();
        two_trainers(tmp2.path(), &pg.url);
    }
}

/// A registry that cannot be reached never stops a run: it warns (naming the registry and how
/// to write the records later) and the run finishes with its files.
#[test]
fn a_registry_that_is_down_only_warns() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = repo_root().join("configs/synthetic.toml");
    let runs = tmp.path().join("runs");
    let o = run(
        &[
            "train",
            "--config",
            &cfg.to_string_lossy(),
            "--runs-dir",
            &runs.to_string_lossy(),
            "--no-progress",
            "--set",
            "run.outer_epochs=1",
            "--set",
            "run.inner_epochs=2",
            "--set",
            "registry.url=\"postgres://memskill:secret@127.0.0.1:1/registry\"",
        ],
        T_RUN,
    );
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains(
            "could not write to the registry postgres://memskill:***@127.0.0.1:1/registry"
        ),
        "{err}"
    );
    assert!(err.contains("memskill registry ingest"), "{err}");
    assert!(!err.contains("secret"), "the password was printed: {err}");
    assert!(runs.join("synthetic").join("invocations.jsonl").is_file());
    // nor saved: the run's config holds the URL without it
    let saved = std::fs::read_to_string(runs.join("synthetic").join("config.toml")).unwrap();
    assert!(
        saved.contains("postgres://memskill:***@127.0.0.1:1/registry"),
        "{saved}"
    );
    assert!(!saved.contains("secret"));
}
