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
