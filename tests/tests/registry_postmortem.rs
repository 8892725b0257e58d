//! `memskill registry postmortem ID --designer`: the designer model of a run config answers
//! the six post-use questions about an invocation the registry holds. The model is
//! `memskill llm serve-scripted --replies` on 127.0.0.1: a reply with the six answers is
//! recorded as by `designer:<model>`; a garbage reply is a clear error and writes nothing; a
//! server that is down is an error naming the endpoint, and writes nothing.

use std::path::Path;
use std::process::{Command, Output};

use memskill_e2e::{memskill_bin, repo_root, serve_scripted, stderr, ScriptedServer};
use memskill_registry::ingest::{self, Batch, InvocationRecord, SourceRun, TrajectoryRecord};
use memskill_registry::{migrate, ops, Db, Location};
use serde_json::json;

/// A scripted server answering every prompt that asks the six questions with `reply`.
fn serve(dir: &Path, name: &str, reply: &str) -> (ScriptedServer, String) {
    let rules = dir.join(format!("{name}.json"));
    let script = json!({"rules": [{"contains": "\"script_candidate\"", "reply": reply}]});
    std::fs::write(&rules, script.to_string()).unwrap();
    let server = serve_scripted(
        dir,
        name,
        &[std::ffi::OsStr::new("--replies"), rules.as_os_str()],
    );
    let url = server.url.clone();
    (server, url)
}

/// A registry with one run, one trajectory and two invocations of `insert`.
fn registry(path: &Path) {
    let mut db = Db::open(&Location::Sqlite(path.to_path_buf()), true, false).unwrap();
    migrate::migrate(&mut db, "2026-12-07T10:00:00.000Z").unwrap();
    let bank = memskill_core::SkillBank::seed();
    let inv = |i: usize| InvocationRecord {
        id: format!("run:inv:{i}"),
        skill: "insert".into(),
        skill_version: Some("1.0.0".into()),
        trace_id: "run:train:1:s0".into(),
        reason: "selected by the controller with [insert, noop]".into(),
        activation_score: None,
        outcome_status: "answered".into(),
        metrics: json!({"tokens": 40, "answer_score": 0.0}),
    };
    let batch = Batch {
        run: SourceRun {
            id: "run".into(),
            kind: "train".into(),
            path: "/runs/run".into(),
            dataset: Some("synthetic".into()),
        },
        bank: Some(&bank),
        owns_history: true,
        memories: Vec::new(),
        skill_md: Default::default(),
        eval_summaries: Default::default(),
        invocations: vec![inv(1), inv(2)],
        trajectories: vec![TrajectoryRecord {
            trace_id: "run:train:1:s0".into(),
            task_type: "train:synthetic".into(),
            task_summary: "update 1, sample s0".into(),
            messages: json!([{"span": "Anna moved to Lyon last week."}]),
            tool_calls: json!([["insert"]]),
            errors: json!([]),
            outcome_status: "scored".into(),
            metrics: json!({"step": 1}),
        }],
    };
    ingest::write(&mut db, &batch, "2026-12-07T10:00:00.000Z").unwrap();
}

fn postmortem(db: &Path, inv: &str, url: &str) -> Output {
    let cfg = repo_root().join("configs/synthetic.toml");
    Command::new(memskill_bin())
        .args(["registry", "postmortem", inv, "--designer", "--config"])
        .arg(&cfg)
        .args([
            "--set",
            "designer.llm.backend=\"openai\"",
            "--set",
            &format!("designer.llm.base_urls=[{url:?}]"),
            "--set",
            "designer.llm.model=\"scripted-designer\"",
            "--set",
            "designer.llm.max_retries=0",
            "--registry",
        ])
        .arg(db)
        .env("SOURCE_DATE_EPOCH", "1796648400")
        .env_remove("MEMSKILL_REGISTRY")
        .output()
        .expect("memskill runs")
}

fn recorded(db: &Path, inv: &str) -> serde_json::Value {
    let mut db =
        memskill_registry::open_existing(&Location::Sqlite(db.to_path_buf()), true).unwrap();
    let rows = ops::query(
        &mut db,
        &format!("SELECT postmortem FROM skill_invocation WHERE invocation_id = '{inv}'"),
    )
    .unwrap();
    rows[0].get("postmortem").clone()
}

#[test]
fn the_designer_model_answers_the_post_mortem_and_garbage_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("registry.db");
    registry(&db);
    let answers = json!({
        "should_trigger": "yes: the span states a move",
        "helped": "no: the date stayed relative",
        "unclear_step": "turning 'last week' into a date",
        "new_pitfall": "relative dates without the span's date",
        "script_candidate": "none",
        "action": "patch: say to resolve relative dates"
    });
    let (_good, url) = serve(dir.path(), "good", &format!("Here is my review: {answers}"));
    let o = postmortem(&db, "run:inv:1", &url);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("by designer:scripted-designer"), "{out}");
    let got = recorded(&db, "run:inv:1");
    for (k, v) in answers.as_object().unwrap() {
        assert_eq!(&got[k], v, "{k}");
    }
    assert_eq!(got["by"], "designer:scripted-designer");
    assert_eq!(got["at"], "2026-12-07T13:00:00.000Z");

    // a reply without the six answers: a clear error, nothing written
    let (_bad, bad_url) = serve(dir.path(), "bad", "The skill looked fine to me.");
    let o = postmortem(&db, "run:inv:2", &bad_url);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(
        e.contains("no JSON object with the six answers") && e.contains("nothing was recorded"),
        "{e}"
    );
    assert!(recorded(&db, "run:inv:2").is_null());
    // an action outside the five choices is refused the same way
    let mut wrong = answers.clone();
    wrong["action"] = json!("rewrite it all");
    let (_wrong, wrong_url) = serve(dir.path(), "wrong", &wrong.to_string());
    let o = postmortem(&db, "run:inv:2", &wrong_url);
    assert!(
        !o.status.success() && stderr(&o).contains("must start with keep"),
        "{}",
        stderr(&o)
    );
    assert!(recorded(&db, "run:inv:2").is_null());

    // a server that is down: an error, nothing written
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let o = postmortem(&db, "run:inv:2", &format!("http://127.0.0.1:{port}/v1"));
    assert!(!o.status.success());
    assert!(stderr(&o).contains("designer model"), "{}", stderr(&o));
    assert!(recorded(&db, "run:inv:2").is_null());
    // an unknown invocation is named before any model is asked
    let o = postmortem(&db, "run:inv:9", &url);
    assert!(
        !o.status.success() && stderr(&o).contains("no invocation \"run:inv:9\""),
        "{}",
        stderr(&o)
    );
}
