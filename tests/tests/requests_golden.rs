//! The requests memskill sends to an OpenAI-compatible server in one update, with its own
//! prompts and the synthetic task's bank, kept as a golden file
//! (`tests/tests/golden/requests-one-update.jsonl`): a change to a prompt or to a request
//! field that nobody meant fails here. After a deliberate change, rewrite the file with
//! `MEMSKILL_UPDATE_GOLDEN=1 cargo test -p memskill-e2e --test requests_golden` and review its
//! diff. (`scripts/fidelity/requests.sh` compares the requests with the reference's, with the
//! reference's own prompts, outside the repository.)
//!
//! The bodies are compared as a sorted list (concurrent requests arrive in any order), with
//! the selected skills of an executor prompt in the order the seeded controller drew them.

use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use memskill_trainer::scripted_server::{FaultPlan, ScriptedServer};
use memskill_trainer::{train, Config, TrainOptions};

fn golden_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden/requests-one-update.jsonl")
}

#[test]
fn the_requests_of_one_update_match_the_golden_file() {
    let d = tempfile::tempdir().unwrap();
    let replies = memskill_e2e::repo_root().join("scripts/bench/e2e-replies.json");
    let llm = memskill_dev::reply_script::ReplyScript::load(&replies, Duration::ZERO).unwrap();
    let log = d.path().join("requests.jsonl");
    let mut srv = ScriptedServer::start(
        TcpListener::bind("127.0.0.1:0").unwrap(),
        Arc::new(llm),
        FaultPlan {
            record: Some(log.clone()),
            ..Default::default()
        },
    )
    .unwrap();
    let sets: Vec<String> = vec![
        "run.name=\"golden\"".into(),
        "run.seed=42".into(),
        "run.batch_size=1".into(),
        "run.outer_epochs=1".into(),
        "run.inner_epochs=1".into(),
        "data.dataset=\"synthetic\"".into(),
        "data.synthetic_samples=2".into(),
        "data.synthetic_spans=3".into(),
        "encoder.kind=\"hashing\"".into(),
        "encoder.dim=32".into(),
        "controller.top_k=2".into(),
        "controller.retrieve=3".into(),
        "answer.retrieve=3".into(),
        "policy.hidden=16".into(),
        "designer.enabled=false".into(),
        "concurrency.episodes=1".into(),
        "concurrency.queries=1".into(),
        "executor.backend=\"openai\"".into(),
        format!("executor.base_urls=[\"{}\"]", srv.base_url()),
        "executor.model=\"golden\"".into(),
        "executor.api_key_envs=[]".into(),
        "executor.probe_timeout_secs=0".into(),
        "executor.cache=\"off\"".into(),
        "executor.seed=42".into(),
    ];
    let cfg = Config::from_toml_str("", &sets, "test").expect("test config resolves");
    let out = train(
        &cfg,
        &TrainOptions {
            runs_dir: d.path().join("runs"),
            progress: false,
            ..Default::default()
        },
    )
    .unwrap();
    assert!(out.finished);
    srv.stop();
    let mut got: Vec<String> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["body"].to_string()
        })
        .collect();
    got.sort();
    let text = got.join("\n") + "\n";
    let path = golden_path();
    if std::env::var_os("MEMSKILL_UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &text).unwrap();
        println!("rewrote {} ({} requests)", path.display(), got.len());
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_default();
    if want != text {
        // kept after the test (the temporary folder is not)
        let actual =
            PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("requests-one-update.actual.jsonl");
        std::fs::write(&actual, &text).unwrap();
        let first = want
            .lines()
            .zip(text.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(want.lines().count().min(text.lines().count()));
        panic!(
            "the requests of one update differ from {} ({} golden, {} now, all of them in {}; \
             first difference on sorted line {}):\n  golden: {}\n  now:    {}\nIf the change is \
             meant, rewrite the file with MEMSKILL_UPDATE_GOLDEN=1 and review its diff.",
            path.display(),
            want.lines().count(),
            got.len(),
            actual.display(),
            first + 1,
            want.lines()
                .nth(first)
                .unwrap_or("(none)")
                .chars()
                .take(400)
                .collect::<String>(),
            text.lines()
                .nth(first)
                .unwrap_or("(none)")
                .chars()
                .take(400)
                .collect::<String>(),
        );
    }
    assert!(got.len() >= 6, "{} requests", got.len());
}
