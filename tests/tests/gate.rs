//! The release gate (issue 16): on the synthetic task the designer proposes one helpful
//! skill (`capture-facts`, which the starting bank lacks) and one harmful one
//! (`shorthand-colours`, which stores every locker's colour code wrong). With
//! `designer.gate = "offline"` the helpful one passes its three-mode replay, becomes a
//! canary and then active when its stage beats the best snapshot; the harmful one stays a
//! (non-selectable) candidate with its failing gate recorded. With the gate off both go
//! live at once, as in the reference. The gate rules and the new-skill bias are the
//! defaults: a new skill's activation is recorded but does not gate (the canary bias, not a
//! trained policy, selects it).

use std::net::TcpListener;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use memskill_core::{
    ChatRequest, ChatResponse, CompareMode, Llm, LlmError, ReleaseKind, SkillBank, SkillStatus,
    Usage,
};
use memskill_trainer::checkpoint::{pointer, Checkpoint};
use memskill_trainer::config::Config;
use memskill_trainer::scripted_server::joined_prompt;
use memskill_trainer::scripted_server::{FaultPlan, ScriptedServer};
use memskill_trainer::synthetic::{
    dataset, skill_bank, SyntheticOracle, HARMFUL_SKILL, USEFUL_SKILL,
};
use memskill_trainer::train::{train, TrainOptions};

/// A designer that proposes the same new skills at every round: (name, action, description,
/// instructions).
struct Proposals(Vec<[&'static str; 4]>);

/// The helpful skill (the start bank lacks it), declaring `action`.
fn useful(action: &'static str) -> [&'static str; 4] {
    [
        USEFUL_SKILL,
        action,
        "Store every locker code stated in the span as one sentence.",
        "Write the locker and its code as one self-contained sentence.",
    ]
}

/// The harmful skill: the oracle stores every code wrong for it.
const HARMFUL: [&str; 4] = [
    HARMFUL_SKILL,
    "insert",
    "Store each locker's colour in a compact shorthand.",
    "Write each locker with its colour in shorthand.",
];

impl Llm for Proposals {
    fn id(&self) -> String {
        "proposals".into()
    }
    fn chat(&self, _: &ChatRequest) -> Result<ChatResponse, LlmError> {
        let changes: Vec<serde_json::Value> = self
            .0
            .iter()
            .map(|[name, action, description, instructions]| {
                serde_json::json!({"type": "add_new", "name": name, "action": action,
                    "description": description, "instructions": instructions})
            })
            .collect();
        Ok(ChatResponse {
            text: serde_json::json!({ "changes": changes }).to_string(),
            usage: Usage::default(),
            latency_ms: 0,
            cached: false,
            truncated: false,
        })
    }
}

fn cfg(name: &str, bank: &Path, url: &str, gate: &str) -> Config {
    cfg_with(name, bank, url, gate, &[])
}

fn cfg_with(name: &str, bank: &Path, url: &str, gate: &str, extra: &[String]) -> Config {
    let mut sets: Vec<String> = vec![
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
    sets.extend(extra.iter().cloned());
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

/// A bank as JSON with the eval runs' measured executor wall times set to 0.
fn unclocked(bank: &SkillBank) -> String {
    let mut v = serde_json::to_value(bank).unwrap();
    for run in v["eval_runs"].as_array_mut().into_iter().flatten() {
        for m in run["modes"].as_array_mut().into_iter().flatten() {
            m["executor_ms"] = 0.into();
        }
    }
    v.to_string()
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
    let mut srv = ScriptedServer::start(
        l,
        Arc::new(Proposals(vec![useful("insert"), HARMFUL])),
        FaultPlan::default(),
    )
    .unwrap();
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
        g.mode(CompareMode::Candidate).unwrap().activation,
        h.skill,
        h.outcome_delta,
        h.reasons
    );
    assert!(g.passed && g.reasons.is_empty());
    assert!(g.cases.len() >= 5 && g.outcome_delta >= 0.05);
    // its activation is measured and recorded, and does not gate: the bias alone picks it
    // on a fraction of its expected spans, below the default recall bar it passed anyway
    let a = g
        .activation
        .as_ref()
        .expect("synthetic cases have expected triggers");
    let rules = memskill_designer::GateRules::default();
    assert!(a.recall.unwrap().value < rules.min_recall, "{a:?}");
    assert_eq!(a.precision.unwrap().value, 1.0);
    assert_eq!(g.notes, [memskill_designer::NEW_SKILL_ACTIVATION_NOTE]);
    assert!(g.mode(CompareMode::Candidate).unwrap().activation > 0.0);
    assert_eq!(g.mode(CompareMode::Without).unwrap().activation, 0.0);
    assert!(
        g.mode(CompareMode::Old).is_none(),
        "a new skill has no old version"
    );
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
    assert!(md.contains("# Release gate"), "{md}");
    assert!(
        md.contains(memskill_designer::NEW_SKILL_ACTIVATION_NOTE),
        "{md}"
    );
    eprintln!(
        "gated skills.md:\n{}",
        &md[md.find("# Release gate").unwrap()..]
    );

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
    // (as JSON: an eval run may hold NaN case scores, which never compare equal; the
    // executor wall times are measured, the one field two equal runs do not repeat)
    assert_eq!(
        unclocked(&checkpoint(&resumed.run_dir, "latest").bank),
        unclocked(&final_bank)
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

/// The synthetic oracle as an HTTP executor that waits `slow` before every executor reply
/// whose prompt lists `capture-facts` (a skill that makes the executor slower).
struct SlowExecutor {
    oracle: SyntheticOracle,
    slow: Duration,
}

impl Llm for SlowExecutor {
    fn id(&self) -> String {
        "slow-executor".into()
    }
    fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, LlmError> {
        let prompt = joined_prompt(req);
        if prompt.contains("[syn-") && prompt.contains(USEFUL_SKILL) {
            std::thread::sleep(self.slow);
        }
        self.oracle.chat(req)
    }
}

/// Issue 26, item 2: the helpful skill of the test above, twice, each failing one gate of
/// its own. Slow: the executor takes 100 ms longer for every span that selected it (its
/// outcome, activation and process pass; latency overhead fails). Sloppy: it declares
/// UPDATE, but the executor INSERTs for it (helpful, but the reply never performs the
/// skill's declared action: process fails). The evidence is in skills.md, RELEASES.md and
/// the stage's metrics line.
#[test]
fn a_slow_candidate_fails_on_latency_and_a_sloppy_one_on_process() {
    let d = tempfile::tempdir().unwrap();
    let bank = start_bank(d.path());
    let opts = TrainOptions {
        runs_dir: d.path().to_path_buf(),
        progress: false,
        ..Default::default()
    };
    for (name, action, slow, reason) in [
        ("slow", "insert", 100, "latency overhead"),
        ("sloppy", "update", 0, "process 0.00 below 0.80"),
    ] {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut designer = ScriptedServer::start(
            l,
            Arc::new(Proposals(vec![useful(action)])),
            FaultPlan::default(),
        )
        .unwrap();
        let executor = SlowExecutor {
            oracle: SyntheticOracle::new(dataset(8, 2, 5), 0),
            slow: Duration::from_millis(slow),
        };
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut exec = ScriptedServer::start(l, Arc::new(executor), FaultPlan::default()).unwrap();
        // The sloppy run has no sleep: its latency difference is scheduling noise, so the
        // noise floor is wide there (a loaded CI machine must not add a latency reason).
        let noise_ms = if slow == 0 { 60_000 } else { 250 };
        let http_executor = [
            "executor.backend=\"openai\"".to_string(),
            format!("executor.base_urls=[\"{}\"]", exec.base_url()),
            "executor.model=\"scripted\"".into(),
            "executor.max_retries=0".into(),
            "executor.timeout_secs=30".into(),
            "answer.llm.backend=\"scripted-synthetic\"".into(),
            format!("designer.gate_rules.latency_noise_ms={noise_ms}"),
        ];
        let c = cfg_with(name, &bank, &designer.base_url(), "offline", &http_executor);
        let out = train(&c, &opts).unwrap();
        let b = checkpoint(&out.run_dir, "latest").bank;
        let run = b
            .eval_runs
            .iter()
            .find(|r| r.skill == USEFUL_SKILL)
            .unwrap();
        eprintln!("{name}: {:?}", run.reasons);
        assert!(!run.passed, "{name}: {run:#?}");
        assert_eq!(
            run.reasons.len(),
            1,
            "{name}: one failing gate: {:?}",
            run.reasons
        );
        assert!(
            run.reasons[0].starts_with(reason),
            "{name}: {:?}",
            run.reasons
        );
        // it helped; its activation against the expected triggers is recorded, not gated
        // (a new skill)
        assert!(run.outcome_delta >= 0.05, "{name}: {run:#?}");
        let a = run
            .activation
            .as_ref()
            .expect("synthetic cases have expected triggers");
        assert_eq!(a.precision.unwrap().value, 1.0);
        assert!(a.recall.is_some(), "{name}: {a:?}");
        assert_eq!(run.notes, [memskill_designer::NEW_SKILL_ACTIVATION_NOTE]);
        assert_eq!(b.get(USEFUL_SKILL).unwrap().status, SkillStatus::Candidate);
        assert_eq!(
            kinds(&b, USEFUL_SKILL),
            [
                ReleaseKind::Drafted,
                ReleaseKind::Validated,
                ReleaseKind::Added,
                ReleaseKind::GateFailed
            ]
        );
        let cand = run.mode(CompareMode::Candidate).unwrap();
        let reference = run.mode(CompareMode::Without).unwrap();
        // `skills show` prints every term of the score, with the configured weights
        let table = memskill_cli::skills::render_table(&b);
        // (the names and their order are the designer's unit test's)
        let head = format!("  {USEFUL_SKILL} (candidate): ");
        let terms: Vec<&str> = table
            .lines()
            .skip_while(|l| !l.starts_with(&head))
            .skip(1)
            .take_while(|l| l.starts_with("    "))
            .collect();
        assert_eq!(terms.len(), 13, "{table}");
        for t in [
            "latency overhead",
            "process",
            "activation recall",
            "false-positive rate",
        ] {
            assert!(
                terms.iter().any(|l| l.trim_start().starts_with(t)),
                "{t}: {table}"
            );
        }
        let heavier = Config::from_toml_str(
            "",
            &["designer.score.latency_overhead=2.0".to_string()],
            "test",
        )
        .unwrap()
        .designer
        .cfg
        .score;
        let total = |t: &str| -> f64 {
            let l = t.lines().find(|l| l.starts_with(&head)).unwrap();
            l[head.len()..].parse().unwrap()
        };
        let t2 = memskill_cli::skills::render_table_with(&b, &heavier);
        // latency costs 0.25 per unit of overhead by default, 2.0 here
        let moved = total(&table) - total(&t2);
        assert!(
            (moved - 1.75 * run.latency_overhead.unwrap()).abs() < 2e-3,
            "{moved}: {t2}"
        );
        if name == "slow" {
            // its executor calls waited 100 ms for every span that selected it (a lower
            // bound, whatever the machine's load)
            assert!(cand.executor_ms >= 100.0 * cand.selections as f64);
            assert!(reference.executor_ms < cand.executor_ms);
            assert!(run.latency_overhead.unwrap() > 0.5);
            assert_eq!(cand.process(), Some(1.0));
        } else {
            assert!(cand.selections > 0);
            assert_eq!(cand.process_ok, 0);
            assert_eq!(
                run.latency_overhead,
                Some(0.0),
                "no wall-time difference beyond noise"
            );
        }
        // the evidence: skills.md, RELEASES.md of the export, the stage's metrics line
        let md = std::fs::read_to_string(out.run_dir.join("skills.md")).unwrap();
        let rel = std::fs::read_to_string(out.run_dir.join("skills/RELEASES.md")).unwrap();
        assert!(md.contains("# Release gate") && md.contains(reason), "{md}");
        assert!(
            rel.contains("## Release-gate evidence") && rel.contains(reason),
            "{rel}"
        );
        let line = &stage_lines(&out.run_dir)[0];
        let verdicts = line["gate"].as_array().unwrap();
        assert!(verdicts[0].as_str().unwrap().contains(reason), "{line}");
        let after = |t: &str, h: &str| t[t.find(h).unwrap()..].to_string();
        eprintln!("{name} skills.md:\n{}", after(&md, "# Release gate"));
        eprintln!(
            "{name} RELEASES.md:\n{}",
            after(&rel, "## Release-gate evidence")
        );
        designer.stop();
        exec.stop();
    }
}
