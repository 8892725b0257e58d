//! The release gate (issue 16): on the synthetic task the designer proposes one helpful
//! skill (`capture-facts`, which the starting bank lacks) and one harmful one
//! (`scramble-codes`, which stores every locker code wrong). With
//! `designer.gate = "offline"` the helpful one passes its three-mode replay, becomes a
//! canary and then active when its stage beats the best snapshot; the harmful one stays a
//! (non-selectable) candidate with its failing gate recorded. With the gate off both go
//! live at once, as in the reference.

use std::net::TcpListener;
use std::path::Path;
use std::sync::Arc;

use memskill_core::{
    ChatRequest, ChatResponse, Llm, LlmError, ReleaseKind, SkillBank, SkillStatus, Usage,
};
use memskill_trainer::checkpoint::{pointer, Checkpoint};
use memskill_trainer::config::Config;
use memskill_trainer::scripted_server::{FaultPlan, ScriptedServer};
use memskill_trainer::synthetic::{skill_bank, HARMFUL_SKILL, USEFUL_SKILL};
use memskill_trainer::train::{train, TrainOptions};

/// A designer that proposes the same two new skills at every round.
struct TwoProposals;

impl Llm for TwoProposals {
    fn id(&self) -> String {
        "two-proposals".into()
    }
    fn chat(&self, _: &ChatRequest) -> Result<ChatResponse, LlmError> {
        let text = format!(
            r#"{{"changes": [
  {{"type": "add_new", "name": "{USEFUL_SKILL}", "action": "insert",
    "description": "Store every locker code stated in the span as one sentence.",
    "instructions": "Write the locker and its code as one self-contained sentence."}},
  {{"type": "add_new", "name": "{HARMFUL_SKILL}", "action": "insert",
    "description": "Store locker codes in a compact shorthand.",
    "instructions": "Write each locker with its code in shorthand."}}
]}}"#
        );
        Ok(ChatResponse {
            text,
            usage: Usage::default(),
            latency_ms: 0,
            cached: false,
            truncated: false,
        })
    }
}

fn cfg(name: &str, bank: &Path, url: &str, gate: &str) -> Config {
    let sets: Vec<String> = vec![
        format!("run.name=\"{name}\""),
        "run.seed=5".into(),
        "run.batch_size=8".into(),
        "run.outer_epochs=2".into(),
        "run.inner_epochs=3".into(),
        format!("run.skill_bank=\"{}\"", bank.display()),
        "data.dataset=\"synthetic\"".into(),
        "data.synthetic_samples=8".into(),
        "data.synthetic_spans=2".into(),
        "encoder.kind=\"hashing\"".into(),
        "encoder.dim=32".into(),
        "controller.top_k=1".into(),
        "controller.retrieve=3".into(),
        "answer.retrieve=3".into(),
        "policy.hidden=16".into(),
        "executor.backend=\"scripted-synthetic\"".into(),
        "designer.enabled=true".into(),
        "designer.reflection_cycles=1".into(),
        "designer.attempts=1".into(),
        "designer.llm.backend=\"openai\"".into(),
        format!("designer.llm.base_urls=[\"{url}\"]"),
        "designer.llm.model=\"scripted\"".into(),
        "designer.llm.probe_timeout_secs=0".into(),
        format!("designer.gate=\"{gate}\""),
    ];
    Config::from_toml_str("", &sets, "test").expect("test config resolves")
}

fn start_bank(dir: &Path) -> std::path::PathBuf {
    let mut bank = skill_bank();
    bank.remove(USEFUL_SKILL).unwrap();
    let p = dir.join("start-bank.json");
    std::fs::write(&p, serde_json::to_vec_pretty(&bank).unwrap()).unwrap();
    p
}

fn checkpoint(run: &Path, which: &str) -> Checkpoint {
    Checkpoint::load(&pointer(run, which).unwrap().unwrap()).unwrap()
}

fn kinds(bank: &SkillBank, skill: &str) -> Vec<ReleaseKind> {
    bank.releases
        .iter()
        .filter(|r| r.skill == skill)
        .map(|r| r.kind)
        .collect()
}

fn stage_lines(run: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(run.join("metrics.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|l| l["type"] == "stage")
        .collect()
}

#[test]
fn the_offline_gate_lets_the_helpful_skill_in_and_holds_the_harmful_one() {
    let d = tempfile::tempdir().unwrap();
    let bank = start_bank(d.path());
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let mut srv = ScriptedServer::start(l, Arc::new(TwoProposals), FaultPlan::default()).unwrap();
    let opts = TrainOptions {
        runs_dir: d.path().to_path_buf(),
        progress: false,
        ..Default::default()
    };

    // Gate offline.
    let out = train(&cfg("gated", &bank, &srv.base_url(), "offline"), &opts).unwrap();
    assert!(out.finished);
    let final_bank = checkpoint(&out.run_dir, "latest").bank;
    let good = final_bank
        .get(USEFUL_SKILL)
        .expect("the helpful skill is in the bank");
    assert_eq!(
        good.status,
        SkillStatus::Active,
        "{:#?}",
        final_bank.releases
    );
    assert_eq!(
        kinds(&final_bank, USEFUL_SKILL),
        [
            ReleaseKind::Drafted,
            ReleaseKind::Validated,
            ReleaseKind::Added,
            ReleaseKind::Canaried,
            ReleaseKind::Promoted,
            // the second stage proposes it again: a name the bank holds stays a draft
            ReleaseKind::Drafted,
            ReleaseKind::Rejected
        ]
    );
    let bad = final_bank
        .get(HARMFUL_SKILL)
        .expect("the harmful skill is kept, as candidate");
    assert_eq!(bad.status, SkillStatus::Candidate);
    assert!(!final_bank
        .selectable()
        .iter()
        .any(|s| s.name == HARMFUL_SKILL));
    assert_eq!(
        kinds(&final_bank, HARMFUL_SKILL),
        [
            ReleaseKind::Drafted,
            ReleaseKind::Validated,
            ReleaseKind::Added,
            ReleaseKind::GateFailed,
            ReleaseKind::Drafted,
            ReleaseKind::Rejected
        ]
    );
    // The evidence: one eval run each, three modes over the same cases.
    let run_of = |s: &str| final_bank.eval_runs.iter().find(|r| r.skill == s).unwrap();
    let (g, h) = (run_of(USEFUL_SKILL), run_of(HARMFUL_SKILL));
    eprintln!(
        "gate: {} delta {:+.3} activation {:.2} | {} delta {:+.3} reasons {:?}",
        g.skill,
        g.outcome_delta,
        g.mode("candidate").unwrap().activation,
        h.skill,
        h.outcome_delta,
        h.reasons
    );
    assert!(g.passed && g.reasons.is_empty());
    assert!(g.cases.len() >= 5 && g.outcome_delta >= 0.05);
    assert!(g.mode("candidate").unwrap().activation > 0.0);
    assert_eq!(g.mode("without").unwrap().activation, 0.0);
    assert!(g.mode("old").is_none(), "a new skill has no old version");
    assert!(!h.passed);
    assert!(
        h.reasons.iter().any(|r| r.starts_with("outcome delta")),
        "{:?}",
        h.reasons
    );
    assert_eq!(g.cases, h.cases, "both replayed on the stage's cases");
    let line = &stage_lines(&out.run_dir)[0];
    let verdicts = line["gate"]
        .as_array()
        .expect("the stage line carries the verdicts");
    assert_eq!(verdicts.len(), 2);
    assert_eq!(line["changed"].as_array().unwrap().len(), 2);
    // skills.md shows the gate's evidence
    let md = std::fs::read_to_string(out.run_dir.join("skills.md")).unwrap();
    assert!(md.contains("Release gate"), "{md}");

    // Resume exactness with the gate on: stop after 4 updates (mid outer epoch 2, after the
    // gated stage), resume, and get the straight run's files byte for byte.
    let c = cfg("gated", &bank, &srv.base_url(), "offline");
    let split = TrainOptions {
        runs_dir: d.path().join("split"),
        max_updates: Some(4),
        ..opts.clone()
    };
    let first = train(&c, &split).unwrap();
    assert!(!first.finished);
    let resumed = train(
        &c,
        &TrainOptions {
            resume: true,
            max_updates: None,
            ..split
        },
    )
    .unwrap();
    assert!(resumed.finished);
    for f in ["metrics.jsonl", "invocations.jsonl", "skills.md"] {
        let a = std::fs::read(out.run_dir.join(f)).unwrap();
        let b = std::fs::read(resumed.run_dir.join(f)).unwrap();
        assert!(a == b, "{f} differs after resume");
    }
    // (as JSON: an eval run may hold NaN case scores, which never compare equal)
    assert_eq!(
        serde_json::to_string(&checkpoint(&resumed.run_dir, "latest").bank).unwrap(),
        serde_json::to_string(&final_bank).unwrap()
    );

    // Gate off: both go live (canary) at the first stage, as today.
    let out = train(&cfg("open", &bank, &srv.base_url(), "off"), &opts).unwrap();
    let first = stage_lines(&out.run_dir);
    assert!(first[0].get("gate").is_none());
    let final_bank = checkpoint(&out.run_dir, "latest").bank;
    assert!(final_bank.eval_runs.is_empty());
    for s in [USEFUL_SKILL, HARMFUL_SKILL] {
        let k = kinds(&final_bank, s);
        assert_eq!(
            &k[..4],
            [
                ReleaseKind::Drafted,
                ReleaseKind::Validated,
                ReleaseKind::Added,
                ReleaseKind::Canaried
            ],
            "{s}: {k:?}"
        );
    }
    srv.stop();
}
