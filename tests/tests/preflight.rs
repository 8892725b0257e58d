//! `memskill preflight` (issue 44, item 1) against the scripted OpenAI-compatible server on
//! 127.0.0.1, which lists its model with a context window (`max_model_len`, as vLLM does)
//! and counts tokens on vLLM's `/tokenize` route: a config that fits passes with its
//! estimate; a window the longest executor prompt overflows, a model the server does not
//! serve and a server that is down each fail, named, with a non-zero exit; and the estimate
//! of the LLM calls is checked against the calls a real training run and evaluation made
//! (the server's request log). The same against llama-cpp-python and infinity-emb:
//! `scripts/servers/preflight-check.sh`.

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::path::Path;
use std::process::Output;
use std::sync::Arc;

use memskill_trainer::scripted_server::{FaultPlan, ScriptedServer};
use memskill_trainer::synthetic;

fn server(context: Option<u64>, record: Option<&Path>) -> ScriptedServer {
    let oracle = synthetic::SyntheticOracle::new(synthetic::dataset(2, 2, 0), 0);
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let plan = FaultPlan {
        served_model: Some("served-model".into()),
        context_tokens: context,
        record: record.map(Path::to_path_buf),
        ..Default::default()
    };
    ScriptedServer::start(l, Arc::new(oracle), plan).unwrap()
}

/// The quickstart on the LoCoMo fixture (its first conversation, two sessions, for
/// training and evaluation; one sample, so that the episodes draw no sample at random),
/// hashing encoder, every LLM role on `url`. Its reply budgets differ per role (executor
/// 128, answer 16, designer 200 / 300), which is how the request log is split by role.
fn sets(url: &str, model: &str) -> Vec<String> {
    let fixture = memskill_e2e::repo_root().join("datasets/tests/fixtures/locomo_small.json");
    vec![
        format!("data.path=\"{}\"", fixture.display()),
        "data.split=\"all\"".into(),
        "eval.split=\"all\"".into(),
        "data.max_samples=1".into(),
        "encoder.kind=\"hashing\"".into(),
        "executor.backend=\"openai\"".into(),
        format!("executor.base_urls=[\"{url}\"]"),
        format!("executor.model=\"{model}\""),
        "executor.api_key_envs=[]".into(),
        "executor.max_concurrency=1".into(),
        "preflight.timeout_secs=5".into(),
    ]
}

fn memskill(args: &[String]) -> Output {
    std::process::Command::new(memskill_e2e::memskill_bin())
        .args(args)
        .current_dir(memskill_e2e::repo_root())
        .output()
        .expect("memskill runs")
}

fn preflight(sets: &[String], json: bool) -> Output {
    let mut args: Vec<String> = vec![
        "preflight".into(),
        "--config".into(),
        "configs/quickstart.toml".into(),
    ];
    for s in sets {
        args.push("--set".into());
        args.push(s.clone());
    }
    if json {
        args.push("--json".into());
    }
    memskill(&args)
}

fn text(o: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The requests of a log per reply budget.
fn by_budget(log: &Path) -> BTreeMap<u64, u64> {
    let mut out = BTreeMap::new();
    for line in std::fs::read_to_string(log).unwrap_or_default().lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let budget = v["body"]["max_tokens"].as_u64().unwrap_or(0);
        *out.entry(budget).or_default() += 1;
    }
    out
}

#[test]
fn a_fitting_config_passes_and_its_call_estimate_matches_a_real_run() {
    let d = tempfile::tempdir().unwrap();
    let srv = server(Some(4096), None);
    let sets = sets(&srv.base_url(), "served-model");
    let o = preflight(&sets, false);
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert!(
        out.contains("serves `served-model` (context window 4096)"),
        "{out}"
    );
    assert!(out.contains("POST /tokenize (vLLM)"), "{out}");
    assert!(
        out.contains("| train | executor |") && out.contains("wall time"),
        "{out}"
    );
    let o = preflight(&sets, true);
    assert!(o.status.success(), "{}", text(&o));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["failures"], 0);
    let est = |phase: &str, role: &str, key: &str| {
        report["estimate"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["phase"] == phase && e["role"] == role)
            .map_or(0.0, |e| e[key].as_f64().unwrap())
    };
    // the real run, on a server of its own that logs every request
    let log = d.path().join("requests.jsonl");
    let rec = server(Some(4096), Some(&log));
    let run: Vec<String> = sets
        .iter()
        .map(|s| match s.starts_with("executor.base_urls=") {
            true => format!("executor.base_urls=[\"{}\"]", rec.base_url()),
            false => s.clone(),
        })
        .collect();
    let mut args: Vec<String> = [
        "train",
        "--config",
        "configs/quickstart.toml",
        "--run-name",
        "pf",
    ]
    .map(String::from)
    .to_vec();
    args.extend([
        "--runs-dir".into(),
        d.path().join("runs").display().to_string(),
    ]);
    for s in &run {
        args.extend(["--set".into(), s.clone()]);
    }
    let o = memskill(&args);
    assert!(o.status.success(), "{}", text(&o));
    let train = by_budget(&log);
    let mut args: Vec<String> = vec![
        "eval".into(),
        "--checkpoint".into(),
        d.path().join("runs/pf").display().to_string(),
        "--dataset".into(),
        "locomo".into(),
        "--split".into(),
        "all".into(),
    ];
    for s in &run {
        args.extend(["--set".into(), s.clone()]);
    }
    let o = memskill(&args);
    assert!(o.status.success(), "{}", text(&o));
    let all = by_budget(&log);
    let made = |m: &BTreeMap<u64, u64>, b: u64| *m.get(&b).unwrap_or(&0) as f64;
    let within = |estimated: f64, real: f64, what: &str| {
        assert!(real > 0.0, "{what}: the run made no call");
        assert!(
            (estimated - real).abs() <= 0.1 * real,
            "{what}: estimated {estimated}, made {real}"
        );
    };
    within(
        est("train", "executor", "calls"),
        made(&train, 128),
        "train executor",
    );
    within(
        est("train", "answer", "calls"),
        made(&train, 16),
        "train answer",
    );
    within(
        est("eval", "executor", "calls"),
        made(&all, 128) - made(&train, 128),
        "eval executor",
    );
    within(
        est("eval", "answer", "calls"),
        made(&all, 16) - made(&train, 16),
        "eval answer",
    );
    let designer = made(&train, 200) + made(&train, 300);
    let (lo, hi) = (
        est("train", "designer", "calls"),
        est("train", "designer", "calls_max"),
    );
    assert!(
        lo <= designer && designer <= hi,
        "designer: {designer} not in {lo}..{hi}"
    );

    // the trained checkpoint against an embeddings server of another dimension (the
    // scripted server's hashing vectors are 64-dimensional, the run's hashing encoder 384),
    // and structured outputs tried in the dialect the server takes
    let mut more = sets.clone();
    more.extend([
        "encoder.kind=\"openai\"".to_string(),
        format!("encoder.openai.base_urls=[\"{}\"]", srv.base_url()),
        "encoder.openai.model=\"served-model\"".into(),
        "encoder.openai.api_key_envs=[]".into(),
        "executor.structured=\"json_schema\"".into(),
    ]);
    let mut args: Vec<String> = vec![
        "preflight".into(),
        "--config".into(),
        "configs/quickstart.toml".into(),
        "--no-throughput".into(),
        "--checkpoint".into(),
        d.path().join("runs/pf").display().to_string(),
    ];
    for s in &more {
        args.extend(["--set".into(), s.clone()]);
    }
    let o = memskill(&args);
    let out = text(&o);
    assert!(!o.status.success(), "{out}");
    assert!(
        out.contains(
            "gives 64-dimensional vectors, but the checkpoint's controller was trained on 384"
        ),
        "{out}"
    );
    assert!(
        out.contains("structured outputs accepted (") && out.contains("json_schema)"),
        "{out}"
    );
    assert!(out.contains("1 check(s) failed"), "{out}");
}

#[test]
fn an_overflowing_window_an_unserved_model_and_a_down_server_fail_named() {
    // the quickstart's executor prompt (template and two skills) alone is ~1,000 tokens
    let srv = server(Some(700), None);
    let o = preflight(&sets(&srv.base_url(), "served-model"), false);
    let out = text(&o);
    assert!(!o.status.success(), "{out}");
    assert!(
        out.contains("fail  executor")
            && out.contains("> the context window of 700 tokens")
            && out.contains("check(s) failed"),
        "{out}"
    );
    // the answer prompts fit the same window
    assert!(
        out.contains("ok    answer      train: the longest prompt"),
        "{out}"
    );

    let o = preflight(&sets(&srv.base_url(), "another-model"), false);
    let out = text(&o);
    assert!(!o.status.success());
    assert!(
        out.contains("does not serve `another-model` (it serves: served-model)"),
        "{out}"
    );

    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let url = format!("http://127.0.0.1:{port}/v1");
    let t = std::time::Instant::now();
    let o = preflight(&sets(&url, "served-model"), false);
    let out = text(&o);
    assert!(!o.status.success());
    assert!(
        out.contains(&format!("endpoint {url} is not reachable")),
        "{out}"
    );
    assert!(
        t.elapsed().as_secs() < 60,
        "a down server took {:?}",
        t.elapsed()
    );
}
