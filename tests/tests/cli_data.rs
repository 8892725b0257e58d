//! `memskill data stats` end to end: malformed fixtures fail with one clean line, and the real
//! LoCoMo file (when present) gives the numbers the Foundation issue asks for.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(memskill_e2e::memskill_bin())
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../datasets/tests/fixtures")
        .join(name)
}

fn stats(args: &[&str]) -> Output {
    bin()
        .arg("data")
        .arg("stats")
        .args(args)
        .output()
        .expect("run memskill")
}

fn stderr_of(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Asserts a clean failure: non-zero exit, exactly one stderr line `error: <file>: ...` that
/// contains every `needle`, and no panic.
fn assert_one_line_error(o: &Output, file: &str, needles: &[&str]) {
    let err = stderr_of(o);
    assert!(
        !o.status.success(),
        "expected failure, stdout: {}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert!(!err.contains("panicked"), "panic: {err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "want one stderr line, got: {err}");
    assert!(lines[0].starts_with("error: "), "{err}");
    assert!(lines[0].contains(file), "line does not name {file}: {err}");
    for n in needles {
        assert!(lines[0].contains(n), "line does not contain {n:?}: {err}");
    }
}

#[test]
fn malformed_fixtures_fail_with_one_line() {
    let cases: &[(&str, &str, &[&str])] = &[
        ("locomo", "empty.json", &["empty file"]),
        ("longmemeval", "empty.json", &["empty file"]),
        (
            "locomo",
            "locomo_truncated.json",
            &["line 6, column", "truncated JSON"],
        ),
        (
            "hotpotqa",
            "hotpotqa_truncated.jsonl",
            &["line 2, column", "truncated JSON"],
        ),
        (
            "locomo",
            "locomo_wrong_type.json",
            &["[1].qa[0].category: expected integer, found string"],
        ),
        (
            "longmemeval",
            "longmemeval_wrong_type.json",
            &["[0].haystack_sessions[1][2].content: expected"],
        ),
        (
            "hotpotqa",
            "hotpotqa_wrong_type.json",
            &["[1].context[0][1]: expected array, found integer"],
        ),
        (
            "locomo",
            "locomo_missing_field.json",
            &["[0].conversation.session_2[1].text: missing field"],
        ),
        (
            "longmemeval",
            "longmemeval_missing_field.json",
            &["[1].question: missing field"],
        ),
        (
            "hotpotqa",
            "hotpotqa_missing_field.jsonl",
            &["line 2.answers: missing field"],
        ),
        ("locomo", "does_not_exist.json", &["not found"]),
    ];
    for (kind, name, needles) in cases {
        let p = fixture(name);
        let o = stats(&[kind, p.to_str().unwrap()]);
        assert_one_line_error(&o, name, needles);
    }
}

#[test]
fn directory_instead_of_file_fails_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("locomo10.json");
    std::fs::create_dir(&sub).unwrap();
    for kind in ["locomo", "longmemeval", "hotpotqa"] {
        let o = stats(&[kind, sub.to_str().unwrap()]);
        assert_one_line_error(&o, "locomo10.json", &["is a directory"]);
    }
}

#[test]
fn bad_options_fail_with_one_line() {
    let p = fixture("locomo_small.json");
    let o = stats(&["locomo", p.to_str().unwrap(), "--spans", "fixed-tokens:8:8"]);
    assert_one_line_error(&o, "fixed-tokens:8:8", &["span mode"]);
    let o = stats(&["locomo", p.to_str().unwrap(), "--split", "dev"]);
    assert_one_line_error(&o, "dev", &["unknown split"]);
    let o = stats(&["squad", p.to_str().unwrap()]);
    assert_one_line_error(&o, "squad", &["unknown dataset"]);
}

#[test]
fn fixture_stats() {
    let p = fixture("locomo_small.json");
    let o = stats(&["locomo", p.to_str().unwrap(), "--spans", "turn"]);
    assert!(o.status.success(), "{}", stderr_of(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    for line in [
        "samples:         2 (conv-a, conv-b)",
        "sessions:        3",
        "turns:           9",
        "spans:           9 (turn)",
        "  5: 2",
        "total questions: 7",
        "questions used:  5 (category 5 excluded)",
    ] {
        assert!(out.contains(line), "missing {line:?} in:\n{out}");
    }
    let o = stats(&["locomo", p.to_str().unwrap(), "--include-adversarial"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("questions used:  7 (category 5 included)"));

    let lme = fixture("longmemeval_small.json");
    let sp = fixture("longmemeval_splits_small.json");
    let o = stats(&[
        "longmemeval",
        lme.to_str().unwrap(),
        "--split",
        "test",
        "--splits-file",
        sp.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr_of(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("samples:         1 (q-001)"), "{out}");
    assert!(out.contains("total questions: 2"), "{out}");
    assert!(out.contains("questions used:  1"), "{out}");
}

fn real_locomo() -> Option<PathBuf> {
    let a = PathBuf::from("/work/shared/data/locomo/locomo10.json");
    let b = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/data/locomo/locomo10.json"
    ));
    [a, b].into_iter().find(|p| p.is_file())
}

/// The must-show numbers. Sessions, turns and turn-pair spans were computed independently with
/// python: `d = json.load(open("locomo10.json"))`; sessions = keys matching `session_(\d+)`
/// (a list; date-only keys excluded), turns = sum of their lengths, turn-pair spans =
/// sum of ceil(len/2); categories = Counter(q["category"] for s in d for q in s["qa"]).
/// All: 272 sessions, 5882 turns, 3011 spans; test (d[8:10]): 55, 1077, 552, categories
/// 69/65/20/160/86.
#[test]
fn real_locomo_must_show_numbers() {
    let Some(p) = real_locomo() else {
        eprintln!("skipped: locomo10.json not present");
        return;
    };
    let o = stats(&["locomo", p.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr_of(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    for line in [
        "samples:         10 (conv-26, conv-30, conv-41, conv-42, conv-43, conv-44, conv-47, conv-48, conv-49, conv-50)",
        "sessions:        272",
        "turns:           5882",
        "spans:           3011 (turn-pair)",
        "  1: 282\n  2: 321\n  3: 96\n  4: 841\n  5: 446\n",
        "total questions: 1986",
        "questions used:  1540 (category 5 excluded)",
    ] {
        assert!(out.contains(line), "missing {line:?} in:\n{out}");
    }

    let o = stats(&["locomo", p.to_str().unwrap(), "--split", "test"]);
    assert!(o.status.success(), "{}", stderr_of(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    for line in [
        "split:           test",
        "samples:         2 (conv-49, conv-50)\n",
        "sessions:        55",
        "turns:           1077",
        "spans:           552 (turn-pair)",
        "  1: 69\n  2: 65\n  3: 20\n  4: 160\n  5: 86\n",
        "total questions: 400",
        "questions used:  314 (category 5 excluded)",
    ] {
        assert!(out.contains(line), "missing {line:?} in:\n{out}");
    }
    let o = stats(&["locomo", p.to_str().unwrap(), "--include-adversarial"]);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("questions used:  1986 (category 5 included)")
    );
}

/// MSC-Self-Instruct through `data stats` and `data list` (the registry's descriptor).
#[test]
fn msc_fixture_stats_and_list() {
    let p = fixture("msc_self_instruct_small.jsonl");
    let o = stats(&["msc", p.to_str().unwrap(), "--spans", "full-session"]);
    assert!(o.status.success(), "{}", stderr_of(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    for line in [
        "dataset:         msc",
        "samples:         3 (msc-0, msc-1, msc-2)",
        "sessions:        8",
        "turns:           23",
        "spans:           8 (full-session)",
        "  dmr: 3",
        "questions used:  3 (all)",
    ] {
        assert!(out.contains(line), "missing {line:?} in:\n{out}");
    }
    // the file has no split of its own
    let o = stats(&["msc", p.to_str().unwrap(), "--split", "test"]);
    assert_one_line_error(&o, "msc", &["no train/val/test split"]);
    let o = bin().args(["data", "list"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr_of(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    for needle in [
        "msc  MSC-Self-Instruct",
        "answer.msc (the stripped reply, 32 tokens)",
        "scripts/fetch-msc.sh",
        "locomo  LoCoMo",
        "alfworld  ALFWorld",
    ] {
        assert!(out.contains(needle), "missing {needle:?} in:\n{out}");
    }
}

/// The quickstart's shape on the MSC fixture with the scripted executor: train, evaluate,
/// export; the same run twice gives the same metrics.jsonl bytes.
#[test]
fn msc_quickstart_style_run() {
    let d = tempfile::tempdir().unwrap();
    let config = memskill_e2e::repo_root().join("configs/synthetic.toml");
    let data = fixture("msc_self_instruct_small.jsonl");
    let data_set = format!(
        "data.path={}",
        toml::Value::String(data.display().to_string())
    );
    let runs = d.path().to_str().unwrap();
    let train = |name: &str| {
        let o = bin()
            .args([
                "train",
                "--config",
                config.to_str().unwrap(),
                "--run-name",
                name,
            ])
            .args(["--runs-dir", runs])
            .args(["--set", "data.dataset=\"msc\"", "--set", &data_set])
            .args(["--set", "data.split=\"all\"", "--set", "run.outer_epochs=1"])
            .args(["--set", "run.inner_epochs=2", "--set", "run.batch_size=2"])
            .output()
            .unwrap();
        assert!(o.status.success(), "train: {}", stderr_of(&o));
        std::fs::read(d.path().join(name).join("metrics.jsonl")).unwrap()
    };
    let a = train("msc-a");
    assert_eq!(
        String::from_utf8_lossy(&a).lines().count(),
        2,
        "two updates"
    );
    assert_eq!(a, train("msc-b"), "metrics.jsonl is reproducible");
    assert!(d.path().join("msc-a/skills").is_dir(), "bank exported");
    let run = d.path().join("msc-a");
    let o = bin()
        .args([
            "eval",
            "--checkpoint",
            run.to_str().unwrap(),
            "--split",
            "all",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "eval: {}", stderr_of(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("# msc-a on msc (all)"), "{out}");
    assert!(out.contains("| dmr (deep memory retrieval) | 3 |"), "{out}");
    let results = run.join("eval/msc-all/results.json");
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&results).unwrap()).unwrap();
    assert_eq!(r["dataset"], "msc");
    assert_eq!(r["overall"]["count"], 3);
    assert_eq!(r["overall"]["errors"], 0);
}
