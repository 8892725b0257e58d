//! `memskill eval --adapter`: external memory systems through the adapter protocol
//! (docs/adapter-protocol.md) on the LoCoMo quickstart split, against the scripted
//! OpenAI-compatible server: the example adapter, adapters that fail in each way, and Mem0
//! and LangMem from their own packages (when their venvs exist).

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::Arc;

use memskill_trainer::scripted_server::{FaultPlan, ScriptedServer};

/// The LoCoMo file the quickstart config reads, if this machine has it (else the test is
/// skipped, with the reason printed).
fn locomo() -> Option<PathBuf> {
    let cached = memskill_core::cache_root().join("data/locomo/locomo10.json");
    let shared = memskill_e2e::repo_root().join("../shared/data/locomo/locomo10.json");
    let found = [cached, shared].into_iter().find(|p| p.is_file());
    if found.is_none() {
        println!("skipped: no LoCoMo data (scripts/fetch-data.sh locomo)");
    }
    found
}

fn server() -> ScriptedServer {
    let oracle = memskill_trainer::synthetic::SyntheticOracle::new(
        memskill_trainer::synthetic::dataset(1, 1, 0),
        0,
    );
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    ScriptedServer::start(listener, Arc::new(oracle), FaultPlan::default()).unwrap()
}

/// `memskill eval --adapter CMD --method NAME` on the quickstart config's LoCoMo test split
/// (3 questions), the executor and answerer behind `url`; `extra` are more arguments.
fn eval_adapter(
    url: &str,
    data: &Path,
    out: &Path,
    cmd: &str,
    name: &str,
    extra: &[&str],
) -> Output {
    let sets = [
        "executor.backend=\"openai\"".to_string(),
        format!("executor.base_urls=[\"{url}\"]"),
        "executor.model=\"scripted\"".into(),
        "executor.max_retries=0".into(),
        "executor.timeout_secs=30".into(),
        "encoder.kind=\"hashing\"".into(),
        "encoder.dim=16".into(),
        format!("data.path=\"{}\"", data.display()),
    ];
    let mut args: Vec<String> = [
        "eval",
        "--adapter",
        cmd,
        "--method",
        name,
        "--config",
        "configs/quickstart.toml",
        "--split",
        "test",
        "--limit",
        "3",
        "--out",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.push(out.display().to_string());
    for s in sets {
        args.push("--set".into());
        args.push(s);
    }
    args.extend(extra.iter().map(|s| s.to_string()));
    std::process::Command::new(memskill_e2e::memskill_bin())
        .args(&args)
        .current_dir(memskill_e2e::repo_root())
        // the libraries' embedders use the scripted server's /embeddings
        .env("MEMSKILL_EMBED_BASE_URL", url)
        .output()
        .expect("memskill runs")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A successful adapter evaluation's results.json, checked: n > 0, the method, no error.
fn check_results(out: &Path, name: &str, o: &Output) -> serde_json::Value {
    assert!(
        o.status.success(),
        "eval --adapter {name} failed:\n{}",
        text(o)
    );
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    assert_eq!(r["method"], name);
    assert!(r["overall"]["count"].as_u64().unwrap() > 0, "{r}");
    assert_eq!(r["overall"]["errors"], 0, "{r}");
    assert_eq!(r["memory_call_errors"], 0, "{r}");
    assert_eq!(r["adapter"]["errors"], 0, "{r}");
    assert!(
        r["memory_calls"].as_u64().unwrap() > 2,
        "reset, adds, build: {r}"
    );
    r
}

#[test]
fn the_example_adapter_is_evaluated_in_memskills_harness() {
    let Some(data) = locomo() else {
        return;
    };
    let srv = server();
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("word-overlap");
    let cmd = "python3 scripts/baselines/example_adapter.py";
    let o = eval_adapter(&srv.base_url(), &data, &out, cmd, "word-overlap", &[]);
    let r = check_results(&out, "word-overlap", &o);
    // memskill's answer prompt got the adapter's memories: spans of the conversation
    let q0 = &r["queries"][0];
    assert!(!q0["retrieved"].as_array().unwrap().is_empty(), "{q0}");
    assert!(q0.get("answered_by").is_none(), "memskill answered: {q0}");
    assert_eq!(r["adapter"]["command"], cmd);
    assert!(out.join("results.md").is_file());
    // the report shows the row with n and errors, among the external systems; its one
    // executor model is named once, in Table 1's note
    let md = report_md(&out, d.path());
    assert!(
        md.contains("| word-overlap (adapter) |") && md.contains("n=3, errors 0"),
        "{md}"
    );
    assert!(
        md.contains("| **External memory systems (adapters)** |")
            && md.contains("Executor model: openai:scripted."),
        "{md}"
    );
}

/// `memskill report` over the evaluation in `out`, its report.md.
fn report_md(out: &Path, tmp: &Path) -> String {
    let rep = tmp.join("report");
    let o = memskill_e2e::memskill(&[
        "report",
        out.to_str().unwrap(),
        "--out",
        rep.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    std::fs::read_to_string(rep.join("report.md")).unwrap()
}

#[test]
fn an_adapter_that_answers_itself_is_scored_and_marked() {
    let Some(data) = locomo() else {
        return;
    };
    let srv = server();
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("self-answer");
    let cmd = r#"python3 -c 'import sys, json
for line in sys.stdin:
    r = json.loads(line)
    out = {"id": r["id"], "ok": True}
    if r["op"] == "retrieve":
        out["answer"] = "Sam and Evan"
    print(json.dumps(out), flush=True)'"#;
    let o = eval_adapter(&srv.base_url(), &data, &out, cmd, "self-answer", &[]);
    let r = check_results(&out, "self-answer", &o);
    let qs = r["queries"].as_array().unwrap();
    assert_eq!(r["adapter"]["answered_by_adapter"], qs.len(), "{r}");
    for q in qs {
        assert_eq!(q["answered_by"], "adapter", "{q}");
        assert_eq!(q["prediction"], "Sam and Evan", "{q}");
        assert!(q["f1"].is_number(), "scored by memskill's scorer: {q}");
    }
    let md = report_md(&out, d.path());
    assert!(md.contains("adapter, answers itself"), "{md}");
}

/// A failing adapter: the evaluation fails as other failed evaluations do (non-zero exit,
/// no results file), quickly, naming the adapter and quoting its stderr.
fn assert_fails(cmd: &str, extra: &[&str], expect: &[&str]) {
    let Some(data) = locomo() else {
        return;
    };
    let srv = server();
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("bad");
    let o = eval_adapter(&srv.base_url(), &data, &out, cmd, "bad", extra);
    let all = text(&o);
    assert!(
        !o.status.success(),
        "a failing adapter's eval must fail:\n{all}"
    );
    assert!(
        !out.join("results.json").exists(),
        "no results for a failed eval"
    );
    assert!(all.contains("too many failed"), "{all}");
    assert!(
        all.contains(&format!("adapter {cmd:?}")),
        "names the adapter:\n{all}"
    );
    for e in expect {
        assert!(all.contains(e), "expected {e:?} in:\n{all}");
    }
}

#[test]
fn an_adapter_that_exits_at_once_is_a_counted_error_with_its_stderr() {
    assert_fails(
        "sh -c 'echo adapter-start-up-broke >&2; exit 3'",
        &[],
        &["exited", "adapter-start-up-broke"],
    );
}

#[test]
fn an_adapter_that_replies_garbage_is_a_counted_error() {
    assert_fails(
        "sh -c 'echo reading-requests >&2; while read l; do echo not-json; done'",
        &[],
        &["malformed reply", "not-json", "reading-requests"],
    );
}

#[test]
fn an_adapter_that_sleeps_past_its_timeout_is_stopped() {
    assert_fails(
        "sh -c 'echo thinking >&2; sleep 600'",
        &["--adapter-timeout", "all=1"],
        &["no reply within 1.0 s", "thinking"],
    );
}

/// A library's venv python, or None (the test is then skipped).
fn venv_python(name: &str) -> Option<PathBuf> {
    let p = memskill_core::cache_root().join(format!("{name}-venv/bin/python"));
    p.is_file().then_some(p)
}

fn library_adapter(venv: &str, script: &str, name: &str, extra: &[&str]) {
    let Some(data) = locomo() else {
        return;
    };
    let Some(py) = venv_python(venv) else {
        println!("skipped: no {venv} venv (scripts/baselines/setup.sh {venv})");
        return;
    };
    let srv = server();
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join(name);
    let cmd = format!(
        "{} scripts/baselines/{script} {}",
        py.display(),
        extra.join(" ")
    );
    let o = eval_adapter(
        &srv.base_url(),
        &data,
        &out,
        cmd.trim(),
        name,
        &["--adapter-timeout", "all=300"],
    );
    let r = check_results(&out, name, &o);
    // the library stored and retrieved memories of its own making
    let retrieved: usize = r["queries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["retrieved"].as_array().unwrap().len())
        .sum();
    assert!(retrieved > 0, "{name} retrieved nothing: {r}");
}

#[test]
fn mem0_from_its_package_runs_as_an_adapter() {
    library_adapter("mem0", "mem0_adapter.py", "mem0", &["--threshold", "0"]);
}

#[test]
fn langmem_from_its_package_runs_as_an_adapter() {
    library_adapter("langmem", "langmem_adapter.py", "langmem", &[]);
}
