//! `memskill eval --adapter`: external memory systems through the adapter protocol
//! (docs/adapter-protocol.md) on the LoCoMo quickstart split, against the scripted
//! OpenAI-compatible server: the example adapter, adapters that fail in each way, the
//! conversation's turns rebuilt from spans of every mode, Mem0 and LangMem from their own
//! packages (when their venvs exist), and A-MEM and MemoryOS from the user's checkouts
//! (AMEM_DIR, MEMORYOS_DIR, with their venvs), on LoCoMo and on the scripted synthetic task.

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
    server_over(memskill_trainer::synthetic::dataset(1, 1, 0))
}

/// The scripted server whose oracle knows `samples` (configs/synthetic.toml's data are
/// `dataset(12, 3, 7)`: its samples, spans and seed).
fn server_over(samples: Vec<memskill_core::Sample>) -> ScriptedServer {
    let oracle = memskill_trainer::synthetic::SyntheticOracle::new(samples, 0);
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
        "encoder.kind=\"hashing\"".to_string(),
        "encoder.dim=16".into(),
        format!("data.path=\"{}\"", data.display()),
    ];
    let mut more: Vec<&str> = vec!["--limit", "3"];
    for s in &sets {
        more.extend(["--set", s.as_str()]);
    }
    more.extend(extra);
    eval_adapter_on(url, "configs/quickstart.toml", out, cmd, name, &more)
}

/// `memskill eval --adapter CMD --method NAME --config CONFIG` on the test split, the
/// executor and answerer behind `url`; `extra` are more arguments.
fn eval_adapter_on(
    url: &str,
    config: &str,
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
    ];
    let mut args: Vec<String> = [
        "eval",
        "--adapter",
        cmd,
        "--method",
        name,
        "--config",
        config,
        "--split",
        "test",
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

/// An adapter whose library fails every `add` (it answers `ok: false`): each failure is a
/// refused request and a failed memory-building request, told apart from protocol failures.
#[test]
fn a_library_failure_is_counted_as_refused_not_as_a_protocol_failure() {
    let Some(data) = locomo() else {
        return;
    };
    let srv = server();
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("refusing");
    let script = r#"
import json, sys
for line in sys.stdin:
    r = json.loads(line)
    if r["op"] == "add":
        reply = {"id": r["id"], "ok": False, "error": "the library could not read the reply"}
    elif r["op"] == "retrieve":
        reply = {"id": r["id"], "ok": True, "memories": []}
    else:
        reply = {"id": r["id"], "ok": True}
    print(json.dumps(reply), flush=True)
"#;
    let path = d.path().join("refusing.py");
    std::fs::write(&path, script).unwrap();
    let cmd = format!("python3 {}", path.display());
    let o = eval_adapter(
        &srv.base_url(),
        &data,
        &out,
        &cmd,
        "refusing",
        &["--set", "eval.max_error_rate=1.0"],
    );
    let all = text(&o);
    assert!(o.status.success(), "{all}");
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    let a = &r["adapter"];
    // every add failed (the resets and builds went through)
    let adds = r["memory_call_errors"].as_u64().unwrap();
    assert!(
        adds > 0 && adds < r["memory_calls"].as_u64().unwrap(),
        "{r}"
    );
    assert_eq!(a["refused"], adds, "{a}");
    assert_eq!(a["errors"], adds, "every failure was a refusal: {a}");
    assert!(
        all.contains(&format!(
            "({adds} refused by its library, 0 protocol failures)"
        )),
        "{all}"
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

/// The turns of LoCoMo sample `id` in `data`, sessions 1..=`sessions`, as the adapters'
/// `_adapter.Conversation` gives them: [speaker, text, caption or null, session, date].
fn locomo_turns(data: &Path, id: &str, sessions: u64) -> Vec<serde_json::Value> {
    let all: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(data).unwrap()).unwrap();
    let sample = all
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["sample_id"] == id)
        .unwrap_or_else(|| panic!("no sample {id}"));
    let c = &sample["conversation"];
    let mut out = Vec::new();
    for n in 1..=sessions {
        let date = &c[format!("session_{n}_date_time")];
        for t in c[format!("session_{n}")].as_array().unwrap() {
            out.push(serde_json::json!([
                t["speaker"],
                t["text"],
                t["blip_caption"],
                n,
                date
            ]));
        }
    }
    out
}

#[test]
fn the_conversations_turns_are_rebuilt_from_spans_of_every_mode() {
    // what A-MEM and MemoryOS store turn by turn: each turn once, whole, with its caption,
    // session and date, whatever the span mode (fixed-token windows overlap and cut turns)
    let Some(data) = locomo() else {
        return;
    };
    let srv = server();
    let d = tempfile::tempdir().unwrap();
    let script = r#"python3 -c 'import sys, json
sys.path.insert(0, "scripts/baselines")
import _adapter
conv, turns = _adapter.Conversation(), []
for line in sys.stdin:
    r = json.loads(line)
    out = {"id": r["id"], "ok": True}
    if r["op"] == "add":
        turns += conv.add(r)
    if r["op"] == "build":
        turns += conv.finish()
        json.dump([[t.speaker, t.text, t.caption, t.session, t.date] for t in turns], open(sys.argv[1], "w"))
    if r["op"] == "retrieve":
        out["memories"] = []
    print(json.dumps(out), flush=True)'"#;
    for mode in [
        "full-session",
        "turn",
        "fixed-tokens:512:64",
        "fixed-tokens:60:20",
    ] {
        let dump = d.path().join(format!("{}.json", mode.replace(':', "-")));
        let out = d.path().join(mode.replace(':', "-"));
        let cmd = format!("{script} {}", dump.display());
        let set = format!("eval.span_mode=\"{mode}\"");
        let o = eval_adapter(
            &srv.base_url(),
            &data,
            &out,
            &cmd,
            "turns",
            &["--set", &set],
        );
        let r = check_results(&out, "turns", &o);
        let got: Vec<serde_json::Value> =
            serde_json::from_str(&std::fs::read_to_string(&dump).unwrap()).unwrap();
        let sessions = got.last().unwrap()[3].as_u64().unwrap();
        let id = r["queries"][0]["sample_id"].as_str().unwrap();
        let want = locomo_turns(&data, id, sessions);
        assert!(want.len() > 20, "{mode}: {} turns", want.len());
        assert_eq!(got.len(), want.len(), "{mode}: turn count");
        for (g, w) in got.iter().zip(&want) {
            assert_eq!(g, w, "{mode}");
        }
    }
}

/// LoCoMo's speaker_a of sample `id` in `data`.
fn speaker_a(data: &Path, id: &str) -> String {
    let all: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(data).unwrap()).unwrap();
    let s = all
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["sample_id"] == id);
    s.unwrap()["conversation"]["speaker_a"]
        .as_str()
        .unwrap()
        .to_string()
}

/// The user's checkout of a system ($`dir_var`) and its venv's python, or None (the test is
/// then skipped, the reason printed).
fn checkout_and_venv(dir_var: &str, venv: &str) -> Option<PathBuf> {
    let dir = std::env::var_os(dir_var).map(PathBuf::from);
    if !dir.as_deref().is_some_and(Path::is_dir) {
        println!(
            "skipped: {dir_var} is not set to a checkout (docs/adapter-protocol.md has the \
             pinned `git clone`)"
        );
        return None;
    }
    let py = venv_python(venv);
    if py.is_none() {
        println!("skipped: no {venv} venv (scripts/baselines/setup.sh {venv})");
    }
    py
}

/// The adapter `script` of a system from a checkout on the LoCoMo quickstart split (`{data}`
/// in `script` is the LoCoMo file): its results (checked as every adapter's), or None when
/// skipped.
fn checkout_adapter(
    dir_var: &str,
    venv: &str,
    script: &str,
    name: &str,
) -> Option<serde_json::Value> {
    let data = locomo()?;
    let py = checkout_and_venv(dir_var, venv)?;
    let srv = server();
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join(name);
    let script = script.replace("{data}", &data.display().to_string());
    let cmd = format!("{} scripts/baselines/{script}", py.display());
    let timeouts = ["--adapter-timeout", "all=600"];
    let o = eval_adapter(&srv.base_url(), &data, &out, &cmd, name, &timeouts);
    Some(check_results(&out, name, &o))
}

/// The same on configs/synthetic.toml (the scripted oracle answers from what was retrieved:
/// every question is right when the system stored and retrieved its fact).
fn checkout_adapter_synthetic(
    dir_var: &str,
    venv: &str,
    script: &str,
    name: &str,
) -> Option<serde_json::Value> {
    let py = checkout_and_venv(dir_var, venv)?;
    let srv = server_over(memskill_trainer::synthetic::dataset(12, 3, 7));
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join(name);
    let cmd = format!("{} scripts/baselines/{script}", py.display());
    let timeouts = ["--adapter-timeout", "all=600"];
    let o = eval_adapter_on(
        &srv.base_url(),
        "configs/synthetic.toml",
        &out,
        &cmd,
        name,
        &timeouts,
    );
    Some(check_results(&out, name, &o))
}

fn retrieved(r: &serde_json::Value) -> usize {
    r["queries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["retrieved"].as_array().unwrap().len())
        .sum()
}

fn assert_all_right(r: &serde_json::Value) {
    let f1 = r["overall"]["f1"].as_f64().unwrap();
    assert!((f1 - 1.0).abs() < 1e-9, "every code read back: {r}");
}

#[test]
fn amem_from_its_checkout_runs_as_an_adapter() {
    let Some(r) = checkout_adapter("AMEM_DIR", "amem", "amem_adapter.py", "a-mem") else {
        return;
    };
    // A-MEM's own notes (`talk start time:... memory content: Speaker Xsays : ...`)
    assert!(retrieved(&r) > 0, "{r}");
    let first = r["queries"][0]["retrieved"][0].as_str().unwrap();
    assert!(
        first.starts_with("talk start time:") && first.contains("says : "),
        "{first}"
    );
    let Some(r) = checkout_adapter_synthetic("AMEM_DIR", "amem", "amem_adapter.py", "a-mem") else {
        return;
    };
    assert_all_right(&r);
}

#[test]
fn memoryos_from_its_checkout_runs_as_an_adapter_and_answers_itself() {
    let script = "memoryos_adapter.py --locomo {data}";
    let Some(r) = checkout_adapter("MEMORYOS_DIR", "memoryos", script, "memoryos") else {
        return;
    };
    // MemoryOS's pages: LoCoMo's speaker_a (the evaluation's user) first, then the reply and
    // the pair's time (in the quickstart's conversation the other speaker opens)
    assert!(retrieved(&r) > 0, "{r}");
    let first = r["queries"][0]["retrieved"][0].as_str().unwrap();
    let id = r["queries"][0]["sample_id"].as_str().unwrap();
    let a = speaker_a(&locomo().unwrap(), id);
    assert!(
        first.starts_with(&format!("{a}: ")) && first.contains("\nTime: "),
        "{first}"
    );
    let answers = "memoryos_adapter.py --answer --locomo {data}";
    let r = checkout_adapter("MEMORYOS_DIR", "memoryos", answers, "memoryos-answers").unwrap();
    let qs = r["queries"].as_array().unwrap();
    assert_eq!(r["adapter"]["answered_by_adapter"], qs.len(), "{r}");
    assert!(qs.iter().all(|q| q["answered_by"] == "adapter"), "{r}");
    for (script, name) in [
        ("memoryos_adapter.py", "memoryos"),
        ("memoryos_adapter.py --answer", "memoryos-answers"),
    ] {
        let r = checkout_adapter_synthetic("MEMORYOS_DIR", "memoryos", script, name).unwrap();
        assert_all_right(&r);
    }
}
