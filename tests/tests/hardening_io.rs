//! Issue 12, items 3 and 6: writes that must not destroy data, and input limits
//! (`score`, `skills import`, `train` run directories, stale temp files, `eval --limit`).

use std::path::Path;
use std::process::Command;

use memskill_trainer::config::Config;
use memskill_trainer::train::{train, TrainOptions};

use memskill_e2e::{memskill, stderr};

const PRED: &str =
    r#"{"question": "q", "prediction": "hiking", "answer": "hiking, camping", "category": 1}"#;

#[test]
fn score_per_line_never_overwrites_its_input_or_an_existing_file() {
    let d = tempfile::tempdir().unwrap();
    let preds = d.path().join("preds.jsonl");
    std::fs::write(&preds, format!("{PRED}\n")).unwrap();
    let p = preds.to_str().unwrap();
    // Same file, named three ways.
    let dotted = d.path().join(".").join("preds.jsonl");
    for out in [p, dotted.to_str().unwrap()] {
        let o = memskill(&["score", "--predictions", p, "--per-line", out, "--force"]);
        assert!(!o.status.success());
        assert!(stderr(&o).contains("input"), "{}", stderr(&o));
        assert_eq!(
            std::fs::read_to_string(&preds).unwrap(),
            format!("{PRED}\n")
        );
    }
    let per = d.path().join("per.jsonl");
    std::fs::write(&per, "keep\n").unwrap();
    let o = memskill(&[
        "score",
        "--predictions",
        p,
        "--per-line",
        per.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--force"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&per).unwrap(), "keep\n");
    let o = memskill(&[
        "score",
        "--predictions",
        p,
        "--per-line",
        per.to_str().unwrap(),
        "--force",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&per).unwrap(), "{\"f1\":0.5}\n");
}

#[test]
fn score_stops_with_the_line_named_when_a_multi_answer_line_needs_too_much_work() {
    // 5000 three-word parts on each side over a 200-word vocabulary: every word is in ~75
    // parts, so an exact best match needs ~10^6 comparisons
    let d = tempfile::tempdir().unwrap();
    let mut x: u64 = 1;
    let mut parts = || {
        (0..5000)
            .map(|_| {
                (0..3)
                    .map(|_| {
                        x = x
                            .wrapping_mul(6364136223846793005)
                            .wrapping_add(1442695040888963407);
                        format!("w{}x", (x >> 33) % 200)
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (p, g) = (parts(), parts());
    let line = serde_json::json!({"question": "q", "prediction": p, "answer": g, "category": 1});
    let file = d.path().join("big.jsonl");
    std::fs::write(&file, format!("{PRED}\n{line}\n")).unwrap();
    let f = file.to_str().unwrap();
    let o = memskill(&["score", "--predictions", f, "--max-work", "100000"]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(e.contains("big.jsonl:2") && e.contains("--max-work"), "{e}");
    // within the default budget it is scored
    let o = memskill(&["score", "--predictions", f, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn score_refuses_fifos_devices_and_oversized_files() {
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("preds.fifo");
    let made = Command::new("mkfifo").arg(&fifo).status();
    if made.is_ok_and(|s| s.success()) {
        let o = memskill(&["score", "--predictions", fifo.to_str().unwrap()]);
        assert!(!o.status.success());
        assert!(stderr(&o).contains("not a regular file"), "{}", stderr(&o));
    }
    let o = memskill(&["score", "--predictions", "/dev/zero"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("not a regular file"), "{}", stderr(&o));
    let big = d.path().join("big.jsonl");
    let f = std::fs::File::create(&big).unwrap();
    f.set_len((1 << 20) + 1).unwrap();
    let o = memskill(&[
        "score",
        "--predictions",
        big.to_str().unwrap(),
        "--max-file-mb",
        "1",
    ]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("above the limit"), "{}", stderr(&o));
}

#[test]
fn skills_import_needs_force_and_rejects_non_finite_numbers() {
    let d = tempfile::tempdir().unwrap();
    let s = |p: &str| d.path().join(p).to_string_lossy().to_string();
    memskill_e2e::seed_bank_and_export(d.path());
    std::fs::write(d.path().join("out.json"), "precious").unwrap();
    let o = memskill(&["skills", "import", &s("skills"), "--out", &s("out.json")]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--force"), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(d.path().join("out.json")).unwrap(),
        "precious"
    );
    // Never onto the imported folder's own bank.json, even with --force.
    let o = memskill(&[
        "skills",
        "import",
        &s("skills"),
        "--out",
        &s("skills/bank.json"),
        "--force",
    ]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("input"), "{}", stderr(&o));
    let o = memskill(&[
        "skills",
        "import",
        &s("skills"),
        "--out",
        &s("out.json"),
        "--force",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(memskill(&["skills", "show", &s("out.json")])
        .status
        .success());
    let leftovers: Vec<_> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|n| n.contains(".tmp-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");

    // mean_reward: NaN is refused on read, so it is never written as `null`.
    let md = d.path().join("skills/insert/SKILL.md");
    let text = std::fs::read_to_string(&md).unwrap();
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("mean_reward:"))
        .unwrap()
        .to_string();
    std::fs::write(&md, text.replace(&line, "  mean_reward: NaN")).unwrap();
    let o = memskill(&["skills", "import", &s("skills"), "--out", &s("nan.json")]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("mean_reward"), "{}", stderr(&o));
    assert!(!d.path().join("nan.json").exists());
}

fn synthetic(name: &str, extra: &[&str]) -> Result<Config, anyhow::Error> {
    let mut sets = memskill_e2e::tiny_synthetic_sets(name);
    sets.extend(extra.iter().map(|s| s.to_string()));
    Config::from_toml_str("", &sets, "test")
}

fn opts(dir: &Path) -> TrainOptions {
    TrainOptions {
        runs_dir: dir.to_path_buf(),
        progress: false,
        ..Default::default()
    }
}

#[test]
fn a_config_error_leaves_no_run_directory() {
    let d = tempfile::tempdir().unwrap();
    let missing = d.path().join("missing").to_string_lossy().to_string();
    for (i, extra) in [
        vec![format!(
            "run.skill_bank={}",
            toml::Value::String(missing.clone())
        )],
        vec![
            "data.dataset=\"locomo\"".to_string(),
            format!("data.path={}", toml::Value::String(missing.clone())),
        ],
        vec![
            "executor.backend=\"local\"".to_string(),
            format!(
                "executor.model_path={}",
                toml::Value::String(missing.clone())
            ),
        ],
    ]
    .into_iter()
    .enumerate()
    {
        let name = format!("bad{i}");
        let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
        let cfg = match synthetic(&name, &extra) {
            Ok(c) => c,
            Err(e) => panic!("case {i} must resolve (the error is found later): {e:#}"),
        };
        let e = train(&cfg, &opts(d.path())).expect_err("must fail");
        assert!(
            !d.path().join(&name).exists(),
            "case {i} left {} behind ({e:#})",
            d.path().join(&name).display()
        );
    }
}

#[test]
fn stale_temp_files_are_cleaned_on_start_and_eval_limits_checked() {
    let d = tempfile::tempdir().unwrap();
    let ck = d.path().join("t/checkpoints");
    std::fs::create_dir_all(&ck).unwrap();
    let stale = ck.join(".latest.tmp-4000000000");
    std::fs::write(&stale, "step-9").unwrap();
    let stale_top = d.path().join("t/.config.toml.tmp-4000000001");
    std::fs::write(&stale_top, "x").unwrap();
    let cfg = synthetic("t", &[]).unwrap();
    train(&cfg, &opts(d.path())).expect("trains");
    assert!(!stale.exists() && !stale_top.exists());

    let run = d.path().join("t");
    let o = memskill(&[
        "eval",
        "--checkpoint",
        run.to_str().unwrap(),
        "--limit",
        "0",
    ]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--limit"), "{}", stderr(&o));
    let o = memskill(&[
        "eval",
        "--checkpoint",
        run.to_str().unwrap(),
        "--set",
        "eval.top_k=0",
    ]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("eval.top_k"), "{}", stderr(&o));

    // A real evaluation prints its error counts and exits 0 ...
    let o = memskill(&["eval", "--checkpoint", run.to_str().unwrap(), "--no-judge"]);
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(o.status.success(), "{out}\n{}", stderr(&o));
    assert!(out.contains("errors: 0 of "), "{out}");
    // ... one whose every LLM call fails (nothing listens on the endpoint) reports the
    // failures and exits non-zero instead of printing a table of zeros as a result.
    let dead_out = run.join("eval").join("dead-eval");
    let dead = [
        "eval",
        "--checkpoint",
        run.to_str().unwrap(),
        "--no-judge",
        "--out",
        dead_out.to_str().unwrap(),
        "--set",
        "executor.backend=\"openai\"",
        "--set",
        "executor.base_urls=[\"http://127.0.0.1:9/v1\"]",
        "--set",
        "executor.max_retries=0",
        "--set",
        "executor.timeout_secs=5",
    ];
    // By default the start-up probe names the dead endpoint before any work is done ...
    let o = memskill(&dead);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("no answer from http://127.0.0.1:9/v1/models"),
        "{}",
        stderr(&o)
    );
    // ... and without the probe, the failed calls are counted and the evaluation refused.
    let mut unprobed = dead.to_vec();
    unprobed.extend(["--set", "executor.probe_timeout_secs=0"]);
    let o = memskill(&unprobed);
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(!o.status.success(), "{out}");
    assert!(stderr(&o).contains("eval.max_error_rate"), "{}", stderr(&o));
    assert!(out.contains("errors: "), "{out}");
    // issue 27: a failed evaluation writes no results file for compare / report to show
    assert!(out.contains("no results file written"), "{out}");
    assert!(!dead_out.join("results.json").exists() && !dead_out.join("results.md").exists());
    assert!(dead_out.join("failed.json").is_file());
    let compare = |run: &Path| {
        let o = memskill(&["compare", run.to_str().unwrap()]);
        let table = String::from_utf8_lossy(&o.stdout).to_string();
        let rows = table
            .lines()
            .filter(|l| l.starts_with('|') && l.contains(run.to_str().unwrap()))
            .count();
        let failed = table.lines().filter(|l| l.starts_with("- FAILED")).count();
        (o.status.success(), rows, failed, table)
    };
    // compare shows the real evaluation as a row, the failed one as failed, and exits non-zero
    let (ok, rows, failed, table) = compare(&run);
    assert!(!ok && rows == 1 && failed == 1, "{table}");
    assert!(
        table.contains("dead-eval") && table.contains("eval.max_error_rate"),
        "{table}"
    );
    // a failed evaluation into the folder of an earlier good one: the stale results.json is
    // never shown as its result, by compare or by report
    let good = std::fs::read_dir(run.join("eval"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| !p.ends_with("dead-eval"))
        .unwrap();
    let mut over = unprobed.clone();
    let good_s = good.to_str().unwrap().to_string();
    let at = over.iter().position(|a| *a == "--out").unwrap();
    over[at + 1] = &good_s;
    assert!(!memskill(&over).status.success());
    let (ok, rows, failed, table) = compare(&run);
    assert!(!ok && rows == 0 && failed == 2, "{table}");
    let report_out = run.join("report-out");
    let o = memskill(&[
        "report",
        good.to_str().unwrap(),
        "--out",
        report_out.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("the last evaluation failed"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn checkpoint_manifest_cannot_name_files_outside_it() {
    let d = tempfile::tempdir().unwrap();
    let cfg = synthetic("m", &[]).unwrap();
    train(&cfg, &opts(d.path())).expect("trains");
    let dir = memskill_trainer::checkpoint::pointer(&d.path().join("m"), "latest")
        .unwrap()
        .unwrap();
    let mpath = dir.join("manifest.json");
    let mut m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&mpath).unwrap()).unwrap();
    m["files"]["../../../../etc/hostname"] = serde_json::json!("0".repeat(64));
    std::fs::write(&mpath, serde_json::to_vec(&m).unwrap()).unwrap();
    let e = memskill_trainer::checkpoint::Checkpoint::load(&dir)
        .err()
        .expect("refused");
    assert!(format!("{e:#}").contains("not a plain file name"), "{e:#}");
}

#[test]
fn run_names_with_control_characters_or_separators_are_refused() {
    let d = tempfile::tempdir().unwrap();
    for bad in ["a\nb", "../x", ".hidden", "tab\tx"] {
        let o = memskill(&[
            "train",
            "--resume",
            "--run-name",
            bad,
            "--runs-dir",
            d.path().to_str().unwrap(),
        ]);
        assert!(!o.status.success());
        assert!(stderr(&o).contains("run.name"), "{bad:?}: {}", stderr(&o));
    }
}
