//! A synthetic training run under `designer.operations = "governance"` (gate off): the
//! scripted designer adds a skill whose text asks for a tool (high-risk: held for a person,
//! never selected), bundles `capture-facts` with `note-mood` (from then on a span that
//! selects one hands the executor both) and archives `delete` (kept, never selected). The
//! registry holds the risk levels and the new release types; promoting the high-risk skill
//! is refused without a sandbox run; the same run with `operations = "paper"` reads none of
//! these edits.

use std::path::Path;
use std::process::{Command, Output};

use memskill_e2e::{memskill_bin, repo_root, serve_scripted, stderr, ScriptedServer};

const T_RUN: &str = "1796644800";

fn run_cli(args: &[String]) -> Output {
    Command::new(memskill_bin())
        .args(args)
        .env("SOURCE_DATE_EPOCH", T_RUN)
        .env_remove("MEMSKILL_REGISTRY")
        .output()
        .expect("memskill runs")
}

fn ok(args: &[String]) -> String {
    let o = run_cli(args);
    assert!(o.status.success(), "{args:?}:\n{}", stderr(&o));
    String::from_utf8_lossy(&o.stdout).to_string()
}

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

fn designer(dir: &Path) -> (ScriptedServer, String) {
    let reply = dir.join("reply.json");
    std::fs::write(
        &reply,
        serde_json::json!({"changes": [
            {"type": "add_new", "name": "lookup-dates", "action": "insert",
             "description": "Store the calendar date of each event a speaker mentions.",
             "instructions": "Call the calendar tool to turn a relative date into a calendar date, then write the event and its date as one sentence.",
             "reason": "relative dates were lost"},
            {"type": "bundle", "name": "codes-and-moods", "members": ["capture-facts", "note-mood"],
             "reason": "they are read together"},
            {"type": "archive", "name": "delete", "reason": "nothing is ever contradicted"}
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
    let server = serve_scripted(dir, "designer", &args);
    let url = server.url.clone();
    (server, url)
}

fn train(runs: &Path, name: &str, registry: &Path, url: &str, ops: &str) {
    train_with(runs, name, registry, url, ops, &[]);
}

fn train_with(runs: &Path, name: &str, registry: &Path, url: &str, ops: &str, extra: &[&str]) {
    let cfg = repo_root().join("configs/synthetic.toml");
    let mut a = s(&["train", "--config", &cfg.to_string_lossy(), "--runs-dir"]);
    a.extend([
        runs.to_string_lossy().to_string(),
        "--run-name".into(),
        name.into(),
        "--no-progress".into(),
    ]);
    for set in [
        "run.outer_epochs=2".to_string(),
        "run.inner_epochs=3".into(),
        format!("registry.url={:?}", registry.to_string_lossy()),
        "designer.enabled=true".into(),
        "designer.reflection_cycles=1".into(),
        "designer.attempts=1".into(),
        "designer.llm.backend=\"openai\"".into(),
        format!("designer.llm.base_urls=[{url:?}]"),
        "designer.llm.model=\"scripted\"".into(),
        "designer.llm.probe_timeout_secs=0".into(),
        format!("designer.operations={ops:?}"),
    ]
    .into_iter()
    .chain(extra.iter().map(|x| x.to_string()))
    {
        a.push("--set".into());
        a.push(set);
    }
    ok(&a);
}

fn query(registry: &Path, sql: &str) -> Vec<serde_json::Value> {
    let out = ok(&s(&[
        "registry",
        "query",
        sql,
        "--json",
        "--registry",
        &registry.to_string_lossy(),
    ]));
    out.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn a_governed_run_holds_a_high_risk_skill_bundles_and_archives() {
    let tmp = tempfile::tempdir().unwrap();
    let (_srv, url) = designer(tmp.path());
    let runs = tmp.path().join("runs");
    let reg = tmp.path().join("registry.db");
    train(&runs, "gov", &reg, &url, "governance");
    let dir = runs.join("gov");
    let bank: memskill_core::SkillBank =
        serde_json::from_str(&std::fs::read_to_string(dir.join("skills/bank.json")).unwrap())
            .unwrap();

    // the high-risk add is held: a candidate with a `held` record, never selected
    let l = bank.get("lookup-dates").expect("added");
    let history: Vec<String> = bank
        .releases
        .iter()
        .filter(|r| r.skill == "lookup-dates")
        .map(|r| format!("{:?}: {}", r.kind, r.note))
        .collect();
    assert_eq!(
        l.status,
        memskill_core::SkillStatus::Candidate,
        "{history:#?}"
    );
    assert_eq!(l.risk, Some(memskill_core::RiskLevel::High));
    assert_eq!(
        bank.get("capture-facts").unwrap().risk,
        Some(memskill_core::RiskLevel::Low)
    );
    assert!(bank
        .releases
        .iter()
        .any(|r| r.skill == "lookup-dates" && r.kind == memskill_core::ReleaseKind::Held));
    // archived: kept with its history, never selectable
    let d = bank.get("delete").unwrap();
    assert_eq!(d.status, memskill_core::SkillStatus::Archived);
    assert!(bank.releases.iter().filter(|r| r.skill == "delete").count() >= 2);
    assert_eq!(bank.bundles.len(), 1);
    // the stage's history says the held skill did not go live
    let md = std::fs::read_to_string(dir.join("skills.md")).unwrap();
    assert!(md.contains("held back by the gate: lookup-dates"), "{md}");

    // after the stage, a span that selects one member hands the executor both
    let stage_step = {
        let m = std::fs::read_to_string(dir.join("metrics.jsonl")).unwrap();
        m.lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .find(|v| v["designer"] == "designed")
            .and_then(|v| v["update_step"].as_u64().or(v["step"].as_u64()))
            .expect("a designer stage line")
    };
    let inv = std::fs::read_to_string(dir.join("invocations.jsonl")).unwrap();
    let (mut before, mut after) = (0, 0);
    for line in inv.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let sel: Vec<&str> = v["selected"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_str().unwrap())
            .collect();
        assert!(
            !sel.contains(&"lookup-dates"),
            "a held skill was selected: {line}"
        );
        if v["step"].as_u64().unwrap() > stage_step {
            assert!(
                !sel.contains(&"delete"),
                "an archived skill was selected: {line}"
            );
            let bundled: Vec<&str> = v["bundled"]
                .as_array()
                .map(|a| a.iter().map(|x| x.as_str().unwrap()).collect())
                .unwrap_or_default();
            if sel.contains(&"capture-facts") || sel.contains(&"note-mood") {
                let read: Vec<&str> = sel.iter().chain(&bundled).copied().collect();
                assert!(
                    read.contains(&"capture-facts") && read.contains(&"note-mood"),
                    "{line}"
                );
                after += 1;
            }
        } else {
            assert!(
                v.get("bundled").is_none(),
                "no bundle before the stage: {line}"
            );
            before += 1;
        }
    }
    assert!(after > 0 && before > 0, "before {before}, after {after}");

    // the registry: risk levels and release types
    let rows = query(&reg, "SELECT skill_id, risk_level FROM skill WHERE skill_id IN ('lookup-dates', 'capture-facts') ORDER BY skill_id");
    assert_eq!(rows[0]["risk_level"], "low");
    assert_eq!(rows[1]["risk_level"], "high");
    let types = query(
        &reg,
        "SELECT DISTINCT release_type FROM skill_release ORDER BY release_type",
    );
    let types: Vec<&str> = types
        .iter()
        .map(|v| v["release_type"].as_str().unwrap())
        .collect();
    for t in ["archive", "bundle", "review"] {
        assert!(types.contains(&t), "{t} in {types:?}");
    }
    let shown = ok(&s(&[
        "registry",
        "show",
        "lookup-dates",
        "--registry",
        &reg.to_string_lossy(),
    ]));
    assert!(
        shown.contains("risk level: high") && shown.contains("held (review)"),
        "{shown}"
    );

    // eval_gate alone cannot promote it, and a person cannot without a sandbox run
    let promote = |by: &str| {
        run_cli(&s(&[
            "registry",
            "promote",
            "lookup-dates",
            "--reason",
            "reviewed",
            "--approved-by",
            by,
            "--registry",
            &reg.to_string_lossy(),
            "--bank",
            &dir.join("skills").to_string_lossy(),
        ]))
    };
    let o = promote("eval_gate");
    assert!(
        !o.status.success() && stderr(&o).contains("person's approval"),
        "{}",
        stderr(&o)
    );
    let o = promote("ada");
    assert!(
        !o.status.success() && stderr(&o).contains("no sandbox run"),
        "{}",
        stderr(&o)
    );

    // paper mode: the same designer reply's bank operations are not read
    train(&runs, "paper", &tmp.path().join("paper.db"), &url, "paper");
    let bank: memskill_core::SkillBank = serde_json::from_str(
        &std::fs::read_to_string(runs.join("paper/skills/bank.json")).unwrap(),
    )
    .unwrap();
    assert!(bank.bundles.is_empty());
    assert_eq!(
        bank.get("delete").unwrap().status,
        memskill_core::SkillStatus::Active
    );
    assert!(bank.skills().iter().all(|s| s.risk.is_none()));
    let l = bank.get("lookup-dates").expect("the add is the paper's");
    assert!(
        l.status.is_selectable(),
        "paper mode admits it: {}",
        l.status
    );
}

/// With the offline gate, the high-risk add is replayed on at least 15 cases, passes, and is
/// held; `eval_gate` cannot promote it, a person can (the bank's and the registry's sandbox
/// run), and the promotion's note carries the evidence and the rollback plan.
#[test]
fn a_person_promotes_a_held_high_risk_skill_with_its_sandbox_run() {
    let tmp = tempfile::tempdir().unwrap();
    let (_srv, url) = designer(tmp.path());
    let runs = tmp.path().join("runs");
    let reg = tmp.path().join("registry.db");
    // a permissive gate (as the registry test's): the skill passes its rules
    let rules = [
        "designer.gate=\"offline\"",
        "designer.gate_rules.min_outcome_delta=-1",
        "designer.gate_rules.max_regressions=100",
        "designer.gate_rules.min_precision=0",
        "designer.gate_rules.max_false_positive_rate=1",
        "designer.gate_rules.max_token_overhead=100",
        "designer.gate_rules.min_process=0",
    ];
    train_with(&runs, "gated", &reg, &url, "governance", &rules);
    let dir = runs.join("gated");
    let bank: memskill_core::SkillBank =
        serde_json::from_str(&std::fs::read_to_string(dir.join("skills/bank.json")).unwrap())
            .unwrap();
    let run = bank
        .eval_runs
        .iter()
        .find(|r| r.skill == "lookup-dates")
        .expect("the gate replayed it");
    assert!(run.cases.len() >= 15, "{} cases", run.cases.len());
    assert!(run.passed, "{:?}", run.reasons);
    assert_eq!(
        bank.get("lookup-dates").unwrap().status,
        memskill_core::SkillStatus::Candidate
    );
    let metrics = std::fs::read_to_string(dir.join("metrics.jsonl")).unwrap();
    assert!(metrics.contains("lookup-dates@0.1.0: held (high-risk: waits for a person)"));
    let promote = |by: &str| {
        run_cli(&s(&[
            "registry",
            "promote",
            "lookup-dates",
            "--reason",
            "the calendar calls are harmless here",
            "--approved-by",
            by,
            "--registry",
            &reg.to_string_lossy(),
            "--bank",
            &dir.join("skills").to_string_lossy(),
        ]))
    };
    let o = promote("eval_gate");
    assert!(
        !o.status.success() && stderr(&o).contains("person's approval"),
        "{}",
        stderr(&o)
    );
    let o = promote("ada");
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("rollback plan: archive it"), "{out}");
    let bank: memskill_core::SkillBank =
        serde_json::from_str(&std::fs::read_to_string(dir.join("skills/bank.json")).unwrap())
            .unwrap();
    assert_eq!(
        bank.get("lookup-dates").unwrap().status,
        memskill_core::SkillStatus::Active
    );
    let r = bank.releases.last().unwrap();
    assert_eq!(r.approved_by.as_deref(), Some("ada"));
    assert!(
        r.note
            .contains("high-risk gate: approved by ada; sandbox run stage-"),
        "{}",
        r.note
    );
    let rows = query(
        &reg,
        "SELECT status, risk_level FROM skill WHERE skill_id = 'lookup-dates'",
    );
    assert_eq!(rows[0]["status"], "active");
    assert_eq!(rows[0]["risk_level"], "high");
}
