//! Issue 43: the memory contract's read rules through a whole evaluation of a synthetic
//! checkpoint (undated data: ages in spans). Without a read rule `results.json` has none of
//! the new counters; a TTL of two spans leaves the first span's memories out of every
//! question (counted, and the questions about them fail); `stale_after` marks them instead
//! (counted, the marker in the retrieved texts); both share the memory-bank cache with the
//! plain evaluation (read rules change what is read, not what is built).

use memskill_trainer::config::Config;
use memskill_trainer::eval::{evaluate, EvalOptions, EvalResults};
use memskill_trainer::train::{train, TrainOptions};

fn cfg(extra: &[&str]) -> Config {
    let mut sets: Vec<String> = [
        "run.outer_epochs=1",
        "run.inner_epochs=1",
        "run.batch_size=2",
        "data.dataset=\"synthetic\"",
        "data.synthetic_samples=6",
        "data.synthetic_spans=3",
        "encoder.kind=\"hashing\"",
        "encoder.dim=32",
        "controller.top_k=1",
        "policy.hidden=16",
        "executor.backend=\"scripted-synthetic\"",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    sets.extend(extra.iter().map(|s| s.to_string()));
    Config::from_toml_str("", &sets, "test").expect("test config resolves")
}

/// Training counts what the rules did per update in `metrics.jsonl` (only when they did).
#[test]
fn training_metrics_count_what_the_read_rules_did() {
    let tmp = tempfile::tempdir().unwrap();
    let run = |name: &str, extra: &[&str]| {
        let mut sets = vec![format!("run.name={name:?}")];
        sets.extend(extra.iter().map(|s| s.to_string()));
        let sets: Vec<&str> = sets.iter().map(String::as_str).collect();
        let out = train(
            &cfg(&sets),
            &TrainOptions {
                runs_dir: tmp.path().to_path_buf(),
                progress: false,
                ..Default::default()
            },
        )
        .unwrap();
        std::fs::read_to_string(out.run_dir.join("metrics.jsonl")).unwrap()
    };
    assert!(!run("plain", &[]).contains("memory_contract"));
    let metrics = run("ttl", &["memory.contract.ttl.default=\"1 span\""]);
    let update = metrics
        .lines()
        .find(|l| l.contains("\"type\":\"update\""))
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(update).unwrap();
    assert!(
        v["memory_contract"]["contract_expired"].as_u64().unwrap() > 0,
        "{update}"
    );
}

#[test]
fn an_evaluation_counts_what_the_read_rules_did() {
    let tmp = tempfile::tempdir().unwrap();
    let out = train(
        &cfg(&[]),
        &TrainOptions {
            runs_dir: tmp.path().to_path_buf(),
            progress: false,
            ..Default::default()
        },
    )
    .unwrap();
    let cache = format!("cache.dir={:?}", tmp.path().join("cache").to_string_lossy());
    let eval = |name: &str, rules: &[&str]| -> (EvalResults, String) {
        let mut sets = vec![cache.clone()];
        sets.extend(rules.iter().map(|r| format!("memory.contract.{r}")));
        let (r, dir) = evaluate(&EvalOptions {
            checkpoint: out.run_dir.clone(),
            out: Some(tmp.path().join(name)),
            sets,
            no_judge: true,
            ..Default::default()
        })
        .unwrap();
        (
            r,
            std::fs::read_to_string(dir.join("results.json")).unwrap(),
        )
    };
    let (plain, json) = eval("plain", &[]);
    for key in [
        "contract_expired",
        "contract_sensitive_withheld",
        "contract_stale_shown",
    ] {
        assert!(!json.contains(key), "{key} in a plain evaluation");
    }
    assert!(plain.contract_line().is_none());
    let questions = plain.queries.len();

    let (ttl, _) = eval("ttl", &["ttl.default=\"2 spans\""]);
    assert_eq!(
        ttl.memory_cache_hits,
        plain
            .queries
            .iter()
            .map(|q| &q.sample_id)
            .collect::<std::collections::BTreeSet<_>>()
            .len()
    );
    assert!(
        ttl.contract_expired >= questions,
        "{}",
        ttl.contract_expired
    );
    assert_eq!(ttl.contract_stale_shown, 0);
    assert!(ttl.overall.f1 < plain.overall.f1, "nothing was left out");
    assert!(ttl.contract_line().unwrap().contains("expired"));

    let (stale, json) = eval("stale", &["stale_after=\"2 spans\""]);
    assert_eq!(stale.contract_expired, 0);
    assert!(stale.contract_stale_shown >= questions);
    assert!(json.contains("\"contract_stale_shown\""));
    assert!(stale.queries.iter().any(|q| q
        .retrieved
        .iter()
        .any(|m| m.ends_with("(stale: last confirmed 2 spans ago)"))));
    // the marker is only added: the answers are the plain ones
    assert_eq!(stale.overall.f1, plain.overall.f1);
}
