//! The ALFWorld training episode end to end, offline: the test-double bridge
//! (`scripts/alfworld/fake_bridge.py`, same protocol as the TextWorld bridge: a game is won by
//! sending its walkthrough) and a scripted OpenAI-compatible server on 127.0.0.1 playing
//! executor and actor. Needs `python3`; skipped with a message without it.
//!
//! The scripted executor writes a "PLAN for <goal> => step | step" memory for each successful
//! trajectory of its span only when the `capture-procedure` skill is selected (a distractor
//! skill writes a useless note); the scripted actor follows a plan tip for its goal and
//! otherwise looks around. So batch B succeeds exactly when the controller picked the useful
//! skill for batch A's span, and PPO has to learn that from the success rate alone.

use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use memskill_core::{ActionKind, SkillBank};
use memskill_dev::bench::OracleServer;
use memskill_trainer::checkpoint::{pointer, Checkpoint};
use memskill_trainer::config::Config;
use memskill_trainer::synthetic::skill;
use memskill_trainer::train::{train, TrainOptions};

const USEFUL: &str = "capture-procedure";

fn have_python3() -> bool {
    Command::new("python3")
        .arg("-c")
        .arg("import json")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn bank() -> SkillBank {
    // The task's two insert skills plus the synthetic bank's noop and delete skills.
    let base = memskill_trainer::synthetic::skill_bank();
    let rest = base
        .skills()
        .iter()
        .filter(|s| matches!(s.action, ActionKind::Noop | ActionKind::Delete))
        .cloned();
    let mut skills = vec![
        skill(
            USEFUL,
            ActionKind::Insert,
            "Store the action sequence of each successful trajectory as a plan for its task.",
            "Write one plan per successful task: the goal, then the actions in order.",
        ),
        skill(
            "note-rooms",
            ActionKind::Insert,
            "Describe how the rooms look.",
            "Write one sentence about the furniture.",
        ),
    ];
    skills.extend(rest);
    SkillBank::from_skills(skills).unwrap()
}

const PLANS: [(&str, &[&str]); 2] = [
    (
        "pick_and_place_simple-Pencil-None-Dresser-3",
        &[
            "go to desk 1",
            "take pencil 1 from desk 1",
            "go to dresser 1",
            "put pencil 1 in/on dresser 1",
        ],
    ),
    (
        "pick_heat_then_place_in_recep-Egg-None-GarbageCan-7",
        &[
            "go to fridge 1",
            "take egg 1 from fridge 1",
            "go to microwave 1",
            "heat egg 1 with microwave 1",
            "go to garbagecan 1",
            "put egg 1 in/on garbagecan 1",
        ],
    ),
];

/// `json_2.1.1/{train,valid_unseen}/<task>/trial_N/game.tw-pddl`: every game of a task type
/// shares its walkthrough (and so its objective in the fake bridge).
fn write_games(root: &Path) {
    for (split, n) in [("train", 8), ("valid_unseen", 2)] {
        for (folder, plan) in PLANS {
            for i in 0..n {
                let dir = root
                    .join("json_2.1.1")
                    .join(split)
                    .join(folder)
                    .join(format!("trial_{i:03}"));
                std::fs::create_dir_all(&dir).unwrap();
                let game = serde_json::json!({"walkthrough": plan, "solvable": true});
                std::fs::write(dir.join("game.tw-pddl"), game.to_string()).unwrap();
            }
        }
    }
}

/// A temp dir with fake games under `games/`, or None (with a message) without python3.
fn games_dir() -> Option<(tempfile::TempDir, std::path::PathBuf)> {
    if !have_python3() {
        eprintln!("skipped: python3 not found (the fake ALFWorld bridge needs it)");
        return None;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("games");
    write_games(&root);
    Some((tmp, root))
}

fn section<'a>(p: &'a str, from: &str, to: &str) -> &'a str {
    let s = p.find(from).map(|i| i + from.len()).unwrap_or(p.len());
    let e = p[s..].find(to).map(|i| s + i).unwrap_or(p.len());
    &p[s..e]
}

/// Designer prompts seen, and whether they showed ALFWorld tasks with what the agent did.
static DESIGNER_PROMPTS: AtomicUsize = AtomicUsize::new(0);
static DESIGNER_SAW_TASKS: AtomicBool = AtomicBool::new(false);

/// The scripted executor and actor (see the module docs); the designer changes nothing.
fn oracle(prompt: &str) -> String {
    if prompt.contains("memory-writing skills of an agent that acts in a household text game") {
        DESIGNER_PROMPTS.fetch_add(1, Ordering::SeqCst);
        if prompt.contains("## Failed tasks")
            && prompt.contains("What the agent did:")
            && prompt.contains("Task: fake task: ")
        {
            DESIGNER_SAW_TASKS.store(true, Ordering::SeqCst);
        }
        return if prompt.contains("Answer with one JSON object") {
            r#"{"changes": [{"type": "no_change"}]}"#.into()
        } else {
            "All cases broke at STORAGE: no skill was chosen that stores the plan. No change."
                .into()
        };
    }
    // The executor prompt (executor/prompts/executor.user.j2): skills as "[Skill N] name".
    if prompt.contains("Selected skills:\n") {
        let skills = section(prompt, "Selected skills:\n", "\n\nRules:");
        if skills.contains(&format!("] {USEFUL}\n")) {
            let text = section(prompt, "Text chunk:\n", "\n\nRetrieved memories");
            let (mut goal, mut acts, mut out) = (None, Vec::new(), Vec::new());
            for line in text.lines() {
                if let Some(g) = line.split("Your task is to: ").nth(1) {
                    goal = Some(g.trim().to_string());
                    acts.clear();
                } else if let Some(a) = line.strip_prefix("ACTION: ") {
                    acts.push(a.trim().to_string());
                } else if line.starts_with("TRAJECTORY_STATUS: SUCCESS") {
                    if let Some(g) = goal.take() {
                        out.push(format!(
                            "ACTION: INSERT\nMEMORY_ITEM: PLAN for {g} => {}",
                            acts.join(" | ")
                        ));
                    }
                }
            }
            if out.is_empty() {
                "ACTION: NOOP".into()
            } else {
                out.join("\n\n")
            }
        } else if skills.contains("] note-rooms\n") {
            "ACTION: INSERT\nMEMORY_ITEM: The room has a lot of furniture.".into()
        } else {
            "ACTION: NOOP".into()
        }
    } else if prompt.contains("\nAdmissible commands") {
        // The actor prompt (alfworld/prompts/actor.user.j2): `Task:` line, numbered tips,
        // then the admissible commands as `- ` lines.
        let goal = section(prompt, "Task:\n", "\n").trim().to_string();
        let admissible: Vec<&str> = section(prompt, "\nAdmissible commands", "\n\n")
            .lines()
            .filter_map(|l| l.strip_prefix("- "))
            .collect();
        let plan = prompt.lines().find_map(|l| {
            let (_, rest) = l.split_once(". PLAN for ")?;
            let (g, p) = rest.split_once(" => ")?;
            (g.trim() == goal).then(|| p.to_string())
        });
        plan.and_then(|p| {
            p.split(" | ")
                .find(|s| admissible.contains(s))
                .map(String::from)
        })
        .unwrap_or_else(|| "look".into())
    } else {
        "ACTION: NOOP".into()
    }
}

fn sets(name: &str, root: &Path, url: &str, bank: &Path) -> Vec<String> {
    let fake = memskill_alfworld::scripts_dir().join("fake_bridge.py");
    vec![
        format!("run.name=\"{name}\""),
        "run.batch_size=4".into(),
        format!(
            "run.seed={}",
            std::env::var("ALF_SEED").unwrap_or_else(|_| "42".into())
        ),
        "run.outer_epochs=4".into(),
        "run.inner_epochs=8".into(),
        format!("run.skill_bank={:?}", bank.display().to_string()),
        "data.dataset=\"alfworld\"".into(),
        "encoder.kind=\"hashing\"".into(),
        "encoder.dim=64".into(),
        "controller.top_k=1".into(),
        "controller.retrieve=5".into(),
        "eval.top_k=1".into(),
        "policy.hidden=32".into(),
        "ppo.lr=0.003".into(),
        "ppo.ppo_epochs=4".into(),
        "ppo.minibatch_size=8".into(),
        "ppo.target_kl=0.1".into(),
        "designer.enabled=true".into(),
        "designer.reflection_cycles=1".into(),
        "executor.backend=\"openai\"".into(),
        format!("executor.base_urls=[\"{url}\"]"),
        "executor.model=\"oracle\"".into(),
        "executor.api_key_envs=[]".into(),
        "executor.cache=\"off\"".into(),
        "executor.max_retries=0".into(),
        "concurrency.episodes=2".into(),
        format!("alfworld.games_root={:?}", root.display().to_string()),
        "alfworld.python=\"python3\"".into(),
        format!("alfworld.bridge={:?}", fake.display().to_string()),
        format!(
            "alfworld.trajectories={:?}",
            root.join("trajectories.jsonl").display().to_string()
        ),
        "alfworld.split=\"valid_unseen\"".into(),
        "alfworld.workers=2".into(),
        "alfworld.pair_a_min=2".into(),
        "alfworld.pair_a_max=3".into(),
        "alfworld.pair_b_size=2".into(),
        "alfworld.max_steps=8".into(),
        "alfworld.tips=3".into(),
        "alfworld.timeout_secs=20".into(),
    ]
}

#[test]
fn alfworld_pairs_train_the_controller_and_the_bank_drives_eval() {
    let Some((tmp, root)) = games_dir() else {
        return;
    };
    let bank_path = tmp.path().join("bank.json");
    std::fs::write(&bank_path, serde_json::to_vec(&bank()).unwrap()).unwrap();
    let server = OracleServer::start_with(Arc::new(|p: &str| oracle(p)), Duration::ZERO).unwrap();
    let runs = tmp.path().join("runs");
    let cfg = Config::from_toml_str("", &sets("alf", &root, &server.base_url(), &bank_path), "t")
        .unwrap();
    let out = train(
        &cfg,
        &TrainOptions {
            runs_dir: runs.clone(),
            progress: false,
            ..Default::default()
        },
    )
    .unwrap();
    assert!(out.finished);
    let r = &out.outer_rewards;
    eprintln!("mean batch-B success per outer epoch: {r:?}");
    for l in std::fs::read_to_string(runs.join("alf").join("metrics.jsonl"))
        .unwrap()
        .lines()
    {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        if v["type"] == "stage" {
            eprintln!(
                "stage {} reward {} -> {}",
                v["stage"], v["reward"], v["decision"]
            );
        } else {
            eprint!("{} ", v["reward"]);
        }
    }
    assert_eq!(r.len(), 4);
    assert!(
        r[3] >= 0.9 && r[3] > r[0] + 0.3,
        "success rate should rise to >= 0.9: {r:?}"
    );

    // Designer stages ran on ALFWorld hard cases (failed tasks with their transcripts).
    assert!(DESIGNER_PROMPTS.load(Ordering::SeqCst) >= 3);
    assert!(DESIGNER_SAW_TASKS.load(Ordering::SeqCst));

    // Metrics: one line per update, episodes scored, no LLM or environment errors.
    let run = runs.join("alf");
    let metrics = std::fs::read_to_string(run.join("metrics.jsonl")).unwrap();
    let updates: Vec<serde_json::Value> = metrics
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|v: &serde_json::Value| v["type"] == "update")
        .collect();
    assert_eq!(updates.len(), 32);
    for u in &updates {
        assert_eq!(u["dropped"], 0, "{u}");
        assert_eq!(u["query_errors"], 0, "{u}");
        assert_eq!(u["queries"], 8, "4 episodes x 2 batch-B games: {u}");
        // The scripted actor always names an admissible command.
        assert!(u["actor"]["exact"].as_u64().unwrap() >= 8, "{u}");
        assert_eq!(u["actor"]["fallback"], 0, "{u}");
    }

    // Expert trajectories were replayed once and cached.
    let cache = std::fs::read_to_string(root.join("trajectories.jsonl")).unwrap();
    let ids: Vec<String> = cache
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["game_id"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    let mut uniq = ids.clone();
    uniq.sort();
    uniq.dedup();
    assert_eq!(ids.len(), uniq.len(), "each game replayed once");
    assert!(ids.iter().all(|i| i.starts_with("train/")));
    assert!(cache
        .lines()
        .all(|l| l.contains("TRAJECTORY_STATUS: SUCCESS")));

    // The same run stopped after 2 updates and resumed is identical (pairs come from the
    // checkpointed RNG); failed games of the early updates are hard cases carrying what the
    // agent did.
    let cfg2 = Config::from_toml_str(
        "",
        &sets("alf2", &root, &server.base_url(), &bank_path),
        "t",
    )
    .unwrap();
    let part = train(
        &cfg2,
        &TrainOptions {
            runs_dir: runs.clone(),
            progress: false,
            max_updates: Some(2),
            ..Default::default()
        },
    )
    .unwrap();
    assert!(!part.finished);
    let run2 = runs.join("alf2");
    let ck = Checkpoint::load(&pointer(&run2, "latest").unwrap().unwrap()).unwrap();
    let cases = ck.pool.cases();
    assert!(!cases.is_empty(), "early failures are recorded");
    for c in cases {
        assert!(c.question.starts_with("fake task: "), "{}", c.question);
        assert_eq!(c.gold, "SUCCESS");
        assert!(
            c.evidence.ends_with("TRAJECTORY_STATUS: FAILED"),
            "{}",
            c.evidence
        );
        assert!(c.evidence.contains("ACTION: look"), "{}", c.evidence);
        assert!(c.query_id.starts_with("train/"));
    }
    let rest = train(
        &cfg2,
        &TrainOptions {
            runs_dir: runs.clone(),
            progress: false,
            resume: true,
            ..Default::default()
        },
    )
    .unwrap();
    assert!(rest.finished);
    let strip_name = |p: &Path| std::fs::read_to_string(p).unwrap().replace("alf2", "alf");
    assert_eq!(
        strip_name(&run2.join("metrics.jsonl")),
        metrics,
        "resumed run == straight run"
    );

    // Evaluation: one bank from the training trajectories, tips for valid_unseen games.
    let eval_out = run.join("eval").join("alfworld-valid_unseen");
    let o = Command::new(memskill_e2e::memskill_bin())
        .current_dir(tmp.path())
        .args(["eval", "--checkpoint"])
        .arg(&run)
        .args(["--dataset", "alfworld", "--actor", "llm"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("evaluation bank:"), "{stdout}");
    let res: serde_json::Value =
        serde_json::from_slice(&std::fs::read(eval_out.join("results.json")).unwrap()).unwrap();
    let games = res["results"].as_array().unwrap();
    assert_eq!(games.len(), 4, "2 valid_unseen games per task type");
    // the LLM actor's model and backend are recorded, so the report can mark a scripted one
    assert!(
        res["executor"].as_str().is_some_and(|e| !e.is_empty())
            && res["executor_backend"].as_str().is_some(),
        "{res}"
    );
    for g in games {
        assert_eq!(g["outcome"]["kind"], "won", "{g}");
        assert!(
            g["tips"][0]
                .as_str()
                .unwrap()
                .starts_with("PLAN for fake task: "),
            "{g}"
        );
    }
    let mem: memskill_core::MemoryBank =
        serde_json::from_slice(&std::fs::read(eval_out.join("memory_bank.json")).unwrap()).unwrap();
    // every INSERT is applied, as in the reference (executor.dedupe_actions = false): one
    // plan per training trajectory, two distinct texts (one per task type)
    assert_eq!(mem.live_count(), 16, "one plan per trajectory");
    let distinct: std::collections::BTreeSet<&str> =
        mem.live().map(|m| m.content.as_str()).collect();
    assert_eq!(distinct.len(), 2, "one plan text per task type");
    let info: serde_json::Value =
        serde_json::from_slice(&std::fs::read(eval_out.join("memory_bank_info.json")).unwrap())
            .unwrap();
    assert_eq!(info["trajectories"], 16);
    assert!(
        stdout.contains("| valid_unseen | all | 4 | 4 | 100.0 |"),
        "{stdout}"
    );
    let o = Command::new(memskill_e2e::memskill_bin())
        .arg("compare")
        .arg(&run)
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{table}");
    assert!(
        table.contains("| llm | alfworld-valid_unseen | 4 | 100.0 |"),
        "{table}"
    );
}

#[test]
fn cli_scripted_actors_print_the_table() {
    let Some((tmp, root)) = games_dir() else {
        return;
    };
    let fake = memskill_alfworld::scripts_dir().join("fake_bridge.py");
    let run = |actor: &str| {
        let out = tmp.path().join(actor);
        let o = Command::new(memskill_e2e::memskill_bin())
            .current_dir(tmp.path())
            .args(["eval", "--dataset", "alfworld", "--split", "valid_unseen"])
            .args(["--actor", actor, "--out"])
            .arg(&out)
            .args([
                "--set",
                &format!("alfworld.games_root={:?}", root.display().to_string()),
            ])
            .args(["--set", "alfworld.python=\"python3\""])
            .args([
                "--set",
                &format!("alfworld.bridge={:?}", fake.display().to_string()),
            ])
            .args(["--set", "alfworld.max_steps=10"])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&o.stdout).to_string();
        assert!(
            o.status.success(),
            "{stdout}\n{}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(out.join("results.json").is_file());
        stdout
    };
    let w = run("walkthrough");
    assert!(w.contains("| valid_unseen | all | 4 | 4 | 100.0 |"), "{w}");
    let f = run("first-admissible");
    assert!(f.contains("| valid_unseen | all | 4 | 0 | 0.0 |"), "{f}");
}

#[test]
fn missing_games_or_python_are_named() {
    let tmp = tempfile::tempdir().unwrap();
    let bank_path = tmp.path().join("bank.json");
    std::fs::write(&bank_path, serde_json::to_vec(&bank()).unwrap()).unwrap();
    let missing = tmp.path().join("nowhere");
    let cfg = Config::from_toml_str(
        "",
        &sets("x", &missing, "http://127.0.0.1:9/v1", &bank_path),
        "t",
    )
    .unwrap();
    let opts = TrainOptions {
        runs_dir: tmp.path().join("runs"),
        progress: false,
        ..Default::default()
    };
    let err = format!("{:#}", train(&cfg, &opts).unwrap_err());
    assert!(
        err.contains("alfworld.games_root") && err.contains("unpack.sh"),
        "{err}"
    );

    let root = tmp.path().join("games");
    write_games(&root);
    let mut s = sets("y", &root, "http://127.0.0.1:9/v1", &bank_path);
    s.push("alfworld.python=\"/no/such/venv/bin/python\"".into());
    let cfg = Config::from_toml_str("", &s, "t").unwrap();
    let err = format!("{:#}", train(&cfg, &opts).unwrap_err());
    assert!(
        err.contains("alfworld.python") && err.contains("setup.sh"),
        "{err}"
    );
}
