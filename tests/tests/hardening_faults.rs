//! Outages and partial failures against a local OpenAI-compatible server (the scripted
//! synthetic oracle behind `scripted_server`, on 127.0.0.1): an episode with a failed
//! executor call is excluded and counted, never scored; retries and their causes reach
//! metrics.jsonl; a designer stage whose LLM calls failed is not committed and `--resume`
//! redoes it; a dead server is named within seconds by the start-up probe.

use std::net::TcpListener;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use memskill_trainer::checkpoint::{pointer, Checkpoint};
use memskill_trainer::config::Config;
use memskill_trainer::scripted_server::{FaultPlan, ScriptedServer};
use memskill_trainer::synthetic;
use memskill_trainer::train::{train, TrainOptions};

const SAMPLES: usize = 4;
const SPANS: usize = 2;
const SEED: u64 = 11;

fn server(plan: FaultPlan) -> ScriptedServer {
    server_on(TcpListener::bind("127.0.0.1:0").unwrap(), plan)
}

fn server_on(l: TcpListener, plan: FaultPlan) -> ScriptedServer {
    let oracle = synthetic::SyntheticOracle::new(synthetic::dataset(SAMPLES, SPANS, SEED), 0);
    ScriptedServer::start(l, Arc::new(oracle), plan).unwrap()
}

/// A port nothing listens on (bound, then released), below the ephemeral range
/// (32768-60999 on Linux), so that a server another test binds to port 0 meanwhile cannot
/// take it.
fn dead_port() -> u16 {
    // each call of this process gets its own port
    static NEXT: std::sync::atomic::AtomicU16 = std::sync::atomic::AtomicU16::new(0);
    loop {
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let p = 20_000 + ((std::process::id() as u16 % 100) * 100 + n) % 12_000;
        if TcpListener::bind(("127.0.0.1", p)).is_ok() {
            return p;
        }
        assert!(n < 12_000, "no free port below 32000");
    }
}

fn cfg(name: &str, extra: &[String]) -> Config {
    let mut sets: Vec<String> = [
        format!("run.name=\"{name}\""),
        format!("run.seed={SEED}"),
        format!("run.batch_size={SAMPLES}"),
        "run.outer_epochs=1".into(),
        "run.inner_epochs=2".into(),
        "data.dataset=\"synthetic\"".into(),
        format!("data.synthetic_samples={SAMPLES}"),
        format!("data.synthetic_spans={SPANS}"),
        "encoder.kind=\"hashing\"".into(),
        "encoder.dim=16".into(),
        "controller.top_k=2".into(),
        "controller.retrieve=3".into(),
        "answer.retrieve=3".into(),
        "policy.hidden=8".into(),
        "executor.backend=\"scripted-synthetic\"".into(),
        "designer.enabled=false".into(),
    ]
    .to_vec();
    sets.extend(extra.iter().cloned());
    Config::from_toml_str("", &sets, "test").expect("test config resolves")
}

/// The executor behind `url` (no retry waits); answers stay in-process.
fn http_executor(url: &str, retries: u32) -> Vec<String> {
    vec![
        "executor.backend=\"openai\"".into(),
        format!("executor.base_urls=[\"{url}\"]"),
        "executor.model=\"scripted\"".into(),
        format!("executor.max_retries={retries}"),
        "executor.backoff_base_ms=0".into(),
        "executor.timeout_secs=10".into(),
        "answer.llm.backend=\"scripted-synthetic\"".into(),
    ]
}

fn opts(dir: &Path) -> TrainOptions {
    TrainOptions {
        runs_dir: dir.to_path_buf(),
        progress: false,
        ..Default::default()
    }
}

fn metrics(run: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(run.join("metrics.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn an_episode_with_a_failed_executor_call_is_excluded_never_scored() {
    // Every executor call for span 0 of sample 1 fails (HTTP 500, after 2 retries); sample 1
    // is in every batch (batch = all samples), its other span succeeds.
    let srv = server(FaultPlan {
        fail_matching: Some("[syn-1-0]".into()),
        ..Default::default()
    });
    let d = tempfile::tempdir().unwrap();
    let c = cfg("partial", &http_executor(&srv.base_url(), 2));
    let out = train(&c, &opts(d.path())).unwrap();
    let lines = metrics(&out.run_dir);
    let updates: Vec<_> = lines.iter().filter(|l| l["type"] == "update").collect();
    assert_eq!(updates.len(), 2);
    for l in &updates {
        assert_eq!(l["episodes"], SAMPLES, "{l}");
        assert_eq!(l["dropped_incomplete"], 1, "{l}");
        assert_eq!(l["dropped"], 1, "{l}");
        // the failed call was retried twice, each time for an HTTP 500
        assert_eq!(l["retries"]["http_5xx"], 2, "{l}");
        assert_eq!(l["llm"]["executor"]["errors"], 1, "{l}");
    }
    // the designer's material holds no question of the incomplete sample, and its skills'
    // usage statistics did not count it
    let ck = Checkpoint::load(&pointer(&out.run_dir, "latest").unwrap().unwrap()).unwrap();
    assert!(
        ck.pool.cases().iter().all(|c| c.sample_id != "syn-1"),
        "{:?}",
        ck.pool
            .cases()
            .iter()
            .map(|c| &c.sample_id)
            .collect::<Vec<_>>()
    );
    let uses: u64 = ck.bank.skills().iter().map(|s| s.usage.count).sum();
    let spans_scored = 2 * (SAMPLES - 1) * SPANS * 2; // updates x episodes x spans x top_k
    assert_eq!(uses, spans_scored as u64);
}

#[test]
fn a_failed_designer_stage_is_not_committed_and_resume_redoes_it() {
    let designer = |url: &str| -> Vec<String> {
        vec![
            "designer.enabled=true".into(),
            "designer.llm.backend=\"openai\"".into(),
            format!("designer.llm.base_urls=[\"{url}\"]"),
            "designer.llm.model=\"scripted\"".into(),
            "designer.llm.max_retries=1".into(),
            "designer.llm.backoff_base_ms=0".into(),
            "designer.llm.probe_timeout_secs=0".into(),
            "run.outer_epochs=2".into(),
        ]
    };
    // A straight run with the designer's server up.
    let up = server(FaultPlan::default());
    let d = tempfile::tempdir().unwrap();
    let straight = train(&cfg("straight", &designer(&up.base_url())), &opts(d.path())).unwrap();
    assert!(straight.finished);

    // The same run with the designer's server down at the first stage.
    let port = dead_port();
    let url = format!("http://127.0.0.1:{port}/v1");
    let c = cfg("outage", &designer(&url));
    let err = train(&c, &opts(d.path())).unwrap_err();
    let msg = format!("{err:#}");
    assert!(
        msg.contains("designer stage 1 failed and was not committed"),
        "{msg}"
    );
    assert!(msg.contains("--resume"), "{msg}");
    let run = d.path().join("outage");
    let lines = metrics(&run);
    assert!(
        lines.iter().all(|l| l["type"] != "stage"),
        "stage committed"
    );
    let ck = Checkpoint::load(&pointer(&run, "latest").unwrap().unwrap()).unwrap();
    assert_eq!(ck.state.stage, 0);

    // The server comes back on the same port; --resume redoes the stage and the run ends as
    // the uninterrupted one did.
    let _back = server_on(
        TcpListener::bind(("127.0.0.1", port)).unwrap(),
        FaultPlan::default(),
    );
    let resumed = train(
        &c,
        &TrainOptions {
            resume: true,
            ..opts(d.path())
        },
    )
    .unwrap();
    assert!(resumed.finished);
    assert_eq!(
        std::fs::read_to_string(straight.run_dir.join("metrics.jsonl")).unwrap(),
        std::fs::read_to_string(run.join("metrics.jsonl")).unwrap()
    );
}

#[test]
fn a_dead_server_is_named_within_seconds_and_leaves_no_run_directory() {
    let port = dead_port();
    let d = tempfile::tempdir().unwrap();
    let c = cfg(
        "dead",
        &http_executor(&format!("http://127.0.0.1:{port}/v1"), 5),
    );
    let t = Instant::now();
    let err = train(&c, &opts(d.path())).unwrap_err();
    let msg = format!("{err:#}");
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    assert!(
        msg.contains(&format!("no answer from http://127.0.0.1:{port}/v1/models")),
        "{msg}"
    );
    assert!(msg.contains("executor"), "{msg}");
    assert!(!d.path().join("dead").exists());
}

/// Issue 45, item 1: a judge whose every verdict fails (HTTP 500 behind `reward.judge`) is
/// counted, named with its first error in the error line and the results table, and fails
/// the evaluation past `eval.max_error_rate`, instead of a silent "-" with 0 errors.
#[test]
fn a_failing_judge_is_counted_named_and_fails_the_evaluation() {
    use memskill_trainer::eval::{evaluate, EvalOptions};
    let d = tempfile::tempdir().unwrap();
    let out = train(&cfg("judged", &[]), &opts(d.path())).unwrap();
    let srv = server(FaultPlan {
        fail_matching: Some("[Answer to Grade]".into()),
        ..Default::default()
    });
    let eo = EvalOptions {
        checkpoint: out.run_dir.clone(),
        out: Some(d.path().join("eval")),
        sets: vec![
            "eval.judge=true".into(),
            "reward.judge.backend=\"openai\"".into(),
            format!("reward.judge.base_urls=[\"{}\"]", srv.base_url()),
            "reward.judge.model=\"judge-model\"".into(),
            "reward.judge.max_retries=0".into(),
            "reward.judge.backoff_base_ms=0".into(),
        ],
        ..Default::default()
    };
    let (res, dir) = evaluate(&eo).unwrap();
    let o = &res.overall;
    assert!(
        o.count > 0 && o.errors == 0 && o.judge_errors == o.count,
        "{o:?}"
    );
    let line = res.error_line();
    assert!(
        line.contains(&format!(
            "judge (judge-model) failed on {0} of {0}",
            o.count
        )) && line.contains(&srv.base_url()),
        "{line}"
    );
    let e = format!("{:#}", res.check_error_rate().unwrap_err());
    assert!(e.contains("too many failed LLM calls"), "{e}");
    assert!(dir.join("failed.json").is_file() && !dir.join("results.json").exists());
    let md = memskill_trainer::eval::render_results_md(&res);
    assert!(md.contains(&format!("0 (+{} judge)", o.count)), "{md}");
}
