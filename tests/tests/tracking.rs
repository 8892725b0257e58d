//! Experiment tracking on the synthetic task: the TensorBoard event files a run writes
//! (read back with our own record reader; `scripts/tracking/check.sh` reads them with
//! TensorBoard itself and checks MLflow against a real server), and a stopped, resumed run
//! that logs every step exactly once.

use std::collections::BTreeMap;
use std::path::Path;

use memskill_trainer::config::Config;
use memskill_trainer::tracking::tfevents::read_events;
use memskill_trainer::train::{train, TrainOptions};

fn cfg(name: &str) -> Config {
    let sets: Vec<String> = [
        format!("run.name=\"{name}\""),
        "run.outer_epochs=2".into(),
        "run.inner_epochs=3".into(),
        "run.batch_size=4".into(),
        "data.dataset=\"synthetic\"".into(),
        "data.synthetic_samples=8".into(),
        "data.synthetic_spans=3".into(),
        "encoder.kind=\"hashing\"".into(),
        "encoder.dim=32".into(),
        "controller.top_k=1".into(),
        "policy.hidden=16".into(),
        "executor.backend=\"scripted-synthetic\"".into(),
        "designer.enabled=true".into(),
        "evolution.patience=10".into(),
        "tracking.tensorboard=true".into(),
    ]
    .to_vec();
    Config::from_toml_str("", &sets, "test").expect("test config resolves")
}

/// Every (tag -> steps) over the run's event files, in file then record order.
fn tags_steps(run: &Path) -> BTreeMap<String, Vec<u64>> {
    let mut out: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    let mut files: Vec<_> = std::fs::read_dir(run.join("tb"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    for f in files {
        for (step, tags) in read_events(&std::fs::read(&f).unwrap()) {
            for t in tags {
                out.entry(t).or_default().push(step);
            }
        }
    }
    out
}

#[test]
fn a_run_logs_scalars_text_and_hparams_and_a_resume_logs_no_step_twice() {
    let c = cfg("tracked");
    let straight = tempfile::tempdir().unwrap();
    let opts = TrainOptions {
        runs_dir: straight.path().to_path_buf(),
        progress: false,
        ..Default::default()
    };
    let out = train(&c, &opts).unwrap();
    assert!(out.finished);
    let tags = tags_steps(&out.run_dir);
    let updates: Vec<u64> = (1..=6).collect();
    for t in [
        "train/reward",
        "train/policy_loss",
        "train/entropy",
        "train/approx_kl",
        "train/bank_size",
        "train/llm_calls",
    ] {
        assert_eq!(
            tags.get(t),
            Some(&updates),
            "{t}: {:?}",
            tags.keys().collect::<Vec<_>>()
        );
    }
    assert_eq!(tags.get("stage/reward"), Some(&vec![3, 6]));
    assert_eq!(tags.get("bank/skills").map(Vec::len), Some(2));
    assert_eq!(tags.get("_hparams_/session_start_info"), Some(&vec![0]));
    assert_eq!(tags.get("config/resolved"), Some(&vec![0]));

    // The same run stopped after 2 and after 2 more updates, each part resumed.
    let split = tempfile::tempdir().unwrap();
    let mut o = TrainOptions {
        runs_dir: split.path().to_path_buf(),
        progress: false,
        ..Default::default()
    };
    for (i, m) in [2u64, 2, 10].into_iter().enumerate() {
        o.resume = i > 0;
        o.max_updates = Some(m);
        train(&c, &o).unwrap();
    }
    let resumed = tags_steps(&split.path().join("tracked"));
    assert_eq!(resumed, tags, "every tag at the same steps, each once");

    // An evaluation of the run's checkpoint logs its scores at the checkpoint's step, once.
    let eval = |out: Option<std::path::PathBuf>| {
        let o = memskill_trainer::eval::EvalOptions {
            checkpoint: out_ck(&split.path().join("tracked")),
            out,
            ..Default::default()
        };
        memskill_trainer::eval::evaluate(&o).unwrap();
    };
    eval(None);
    eval(Some(split.path().join("again")));
    let after = tags_steps(&split.path().join("tracked"));
    // (the scripted oracle judges too: L-J is logged beside F1)
    for t in [
        "eval/synthetic-test/f1",
        "eval/synthetic-test/lj",
        "eval/synthetic-test/questions",
        "eval/synthetic-test/errors",
    ] {
        assert_eq!(
            after.get(t),
            Some(&vec![6]),
            "{t}: {:?}",
            after.keys().collect::<Vec<_>>()
        );
    }
}

/// The run's latest checkpoint folder.
fn out_ck(run: &Path) -> std::path::PathBuf {
    memskill_trainer::checkpoint::pointer(run, "latest")
        .unwrap()
        .expect("a latest checkpoint")
}

/// `[tracking] wandb = true` with WANDB_MODE=offline: a run stopped by `--max-updates`,
/// resumed to its end and then evaluated logs into one W&B run (one offline folder per
/// invocation, all with the run's id), and the offline files, read back, hold every tag of
/// the TensorBoard files at the same steps, each once. Skipped (with the reason printed)
/// without a Python that has wandb (scripts/tracking/setup.sh, or MEMSKILL_WANDB_PYTHON).
#[test]
fn wandb_offline_run_holds_what_tensorboard_holds() {
    use memskill_trainer::tracking::{params, wandb, TrackingConfig};
    let py = wandb::python(&TrackingConfig::default());
    let has_wandb = std::process::Command::new(&py)
        .args(["-c", "import wandb"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_wandb {
        eprintln!(
            "skipped: {} cannot import wandb (scripts/tracking/setup.sh makes the tracking \
             venv, or set MEMSKILL_WANDB_PYTHON)",
            py.display()
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let c = cfg("live");
    let cfg_path = dir.path().join("live.toml");
    std::fs::write(&cfg_path, c.to_toml().unwrap()).unwrap();
    let runs = dir.path().join("runs");
    let run = runs.join("live");
    let memskill = |args: &[&str]| {
        let o = std::process::Command::new(memskill_e2e::memskill_bin())
            .args(args)
            .env("WANDB_MODE", "offline")
            .env("WANDB_SILENT", "true")
            .env("MEMSKILL_WANDB_PYTHON", &py)
            .env("MEMSKILL_CACHE", dir.path().join("cache"))
            .output()
            .unwrap();
        let err = memskill_e2e::stderr(&o);
        assert!(o.status.success(), "{args:?}: {err}");
        assert!(!err.contains("W&B tracking failed"), "{args:?}: {err}");
    };
    let (c_s, r_s) = (cfg_path.to_str().unwrap(), runs.to_str().unwrap());
    let common = [
        "--no-progress",
        "--runs-dir",
        r_s,
        "--set",
        "tracking.wandb=true",
    ];
    let mut first = vec!["train", "--config", c_s, "--max-updates", "2"];
    first.extend(common);
    memskill(&first);
    let mut rest = vec!["train", "--resume", "--run-name", "live"];
    rest.extend(&common[..3]);
    memskill(&rest);
    memskill(&["eval", "--checkpoint", run.to_str().unwrap()]);

    let o = std::process::Command::new(&py)
        .arg(memskill_e2e::repo_root().join("scripts/tracking/wandb_offline.py"))
        .arg(&run)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", memskill_e2e::stderr(&o));
    let wb: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let state: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.join("wandb.json")).unwrap()).unwrap();
    let runs_read = wb["runs"].as_array().unwrap();
    assert_eq!(runs_read.len(), 3, "one offline run per invocation: {wb}");
    let config_toml = std::fs::read_to_string(run.join("config.toml")).unwrap();
    for r in runs_read {
        assert_eq!(r["id"], state["id"], "one W&B run id: {r}");
        assert_eq!(r["exit_code"], 0, "{r}");
        assert_eq!(r["config_keys"], params(&config_toml).len(), "{r}");
    }

    // TensorBoard's tags and steps, without the config (W&B holds it as the run's config)
    let mut tb = tags_steps(&run);
    tb.remove("_hparams_/session_start_info");
    tb.remove("config/resolved");
    let mut got: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for kind in ["scalars", "media"] {
        for (k, steps) in wb[kind].as_object().unwrap() {
            let steps = steps.as_array().unwrap().iter();
            got.insert(k.clone(), steps.map(|s| s.as_u64().unwrap()).collect());
        }
    }
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        tb.keys().collect::<Vec<_>>(),
        "the same tags"
    );
    assert_eq!(got, tb, "every tag at the same steps, each once");
    assert_eq!(got["train/reward"], (1..=6).collect::<Vec<u64>>());
    assert_eq!(got["eval/synthetic-test/f1"], vec![6]);
    assert_eq!(wb["media"]["bank/skills"], serde_json::json!([3, 6]));
    // the end of the run saved skills.md and the export with the W&B run
    let saved = std::fs::read_dir(run.join("wandb"))
        .unwrap()
        .map(|e| e.unwrap().path().join("files"))
        .filter(|f| f.join("skills.md").is_file() && f.join("skills").join("bank.json").is_file())
        .count();
    assert_eq!(saved, 1, "skills.md and skills/ saved once");
    eprintln!(
        "W&B offline: {} tags ({} scalar), {} points, as TensorBoard's",
        got.len(),
        wb["scalars"].as_object().unwrap().len(),
        got.values().map(Vec::len).sum::<usize>()
    );
}
