//! `memskill score` and `memskill parse-actions` end to end.

use std::io::Write;
use std::process::{Command, Stdio};

fn bin() -> Command {
    Command::new(memskill_e2e::memskill_bin())
}

fn fixture() -> std::path::PathBuf {
    memskill_e2e::repo_root().join("trainer/tests/fixtures/exec/preds.jsonl")
}

#[test]
fn score_json_and_per_line() {
    let dir = tempfile::tempdir().unwrap();
    let per = dir.path().join("per.jsonl");
    let out = bin()
        .args(["score", "--dataset", "locomo", "--json", "--per-line"])
        .arg(&per)
        .arg("--predictions")
        .arg(fixture())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // per-line: 1, F1("running" vs "she runs swims") = 2*(1/1*1/3)/(1+1/3) = 0.5, 1, 0.5, 1, 1
    let want = [1.0, 0.5, 1.0, 0.5, 1.0, 1.0];
    let per: Vec<f64> = std::fs::read_to_string(&per)
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["f1"]
                .as_f64()
                .unwrap()
        })
        .collect();
    assert_eq!(per.len(), want.len());
    for (g, w) in per.iter().zip(want) {
        assert!((g - w).abs() < 1e-12, "{per:?}");
    }
    assert_eq!(v["overall"]["count"], 6);
    assert!((v["overall"]["f1"].as_f64().unwrap() - 5.0 / 6.0).abs() < 1e-12);
    assert_eq!(v["by_category"]["4"]["count"], 2);
    assert!((v["by_category"]["4"]["f1"].as_f64().unwrap() - 0.75).abs() < 1e-12);
    assert_eq!(v["by_category"]["5"]["f1"], 1.0);
}

/// HotpotQA: the reference's stemmed F1 by default ("Yes, they are" vs "yes" = 0.5), the
/// official exact-yes/no F1 with `--hotpotqa-f1 official` (0).
#[test]
fn score_hotpotqa_uses_the_reference_f1_by_default() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("hp.jsonl");
    std::fs::write(
        &p,
        "{\"question\": \"q\", \"prediction\": \"Yes, they are\", \"answer\": [\"yes\"]}\n",
    )
    .unwrap();
    let f1 = |extra: &[&str]| -> f64 {
        let out = bin()
            .args(["score", "--dataset", "hotpotqa", "--json", "--predictions"])
            .arg(&p)
            .args(extra)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["overall"]["f1"].as_f64().unwrap()
    };
    assert!((f1(&[]) - 0.5).abs() < 1e-12);
    assert_eq!(f1(&["--hotpotqa-f1", "official"]), 0.0);
    let out = bin()
        .args([
            "score",
            "--dataset",
            "hotpotqa",
            "--hotpotqa-f1",
            "exact",
            "--predictions",
        ])
        .arg(&p)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--hotpotqa-f1"));
}

#[test]
fn score_bad_line_names_file_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bad.jsonl");
    std::fs::write(&p, "{\"question\": \"q\", \"prediction\": \"a\", \"answer\": \"a\", \"category\": 4}\n{\"question\": \"q\", \"answer\": \"a\", \"category\": 4}\n").unwrap();
    let out = bin()
        .args(["score", "--predictions"])
        .arg(&p)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.jsonl:2") && err.contains("\"prediction\""),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

fn parse_cli(reply: &str, retrieved: usize, allow: Option<&str>) -> serde_json::Value {
    let mut cmd = bin();
    cmd.args(["parse-actions", "--retrieved", &retrieved.to_string()]);
    if let Some(a) = allow {
        cmd.args(["--allow", a]);
    }
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(reply.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn parse_actions_prints_json() {
    let reply = "ACTION: INSERT\nMEMORY_ITEM: Alice moved to Paris.\n\nACTION: DELETE\nMEMORY_INDEX: 1\n\nACTION: DELETE\nMEMORY_INDEX: 4\n\nACTION: UPDATE\nMEMORY_INDEX: 0\nUPDATED_MEMORY: x\n";
    // every parsed action is kept by default, as in the reference
    let v = parse_cli(reply, 2, None);
    assert_eq!(
        v["actions"],
        serde_json::json!([
            {"action": "insert", "content": "Alice moved to Paris."},
            {"action": "delete", "index": 1},
            {"action": "update", "index": 0, "content": "x"}
        ])
    );
    assert_eq!(v["results"].as_array().unwrap().len(), 4);
    assert_eq!(v["problems"].as_array().unwrap().len(), 1);
    // --allow filters like executor.enforce_skill_actions
    let v = parse_cli(reply, 2, Some("insert,delete"));
    assert_eq!(
        v["actions"],
        serde_json::json!([{"action": "insert", "content": "Alice moved to Paris."}, {"action": "delete", "index": 1}])
    );
    let problems: Vec<String> = v["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap().to_string())
        .collect();
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(
        problems.iter().any(|p| p.contains("out of range"))
            && problems.iter().any(|p| p.contains("UPDATE"))
    );
}

/// The replies of issue 11 (fix 8) and the reference's results for them (MemSkill cda41f3
/// `Executor._parse_response`, 5 retrieved memories; also in the `parse_actions` fixture).
#[test]
fn parse_actions_gives_the_reference_results_on_issue_cases() {
    let fail = serde_json::json!([["NOOP", false, -1, ""]]);
    let cases: Vec<(&str, serde_json::Value)> = vec![
        ("ACTION: DELETE\nMEMORY_INDEX: -1", fail.clone()),
        (
            "ACTION: DELETE\nMEMORY_INDEX -1",
            serde_json::json!([["DELETE", true, 1, ""]]),
        ),
        (
            "ACTION: DELETE\nMEMORY_INDEX: 3 (duplicate of 1)",
            serde_json::json!([["DELETE", true, 3, ""]]),
        ),
        (
            "ACTION: INSERT\nMEMORY_ITEM: Alice likes tea.\nREASONING: stated in turn 3",
            serde_json::json!([["INSERT", true, -1, "Alice likes tea."]]),
        ),
        (
            "ACTION: UPDATE\nMEMORY_INDEX: 0\nUPDATED_MEMORY: Bob is 31.\nREASONING: birthday",
            serde_json::json!([["UPDATE", true, 0, "Bob is 31."]]),
        ),
        (
            "INSERT\nMEMORY_ITEM: Carol adopted a cat.",
            serde_json::json!([["INSERT", true, -1, "Carol adopted a cat."]]),
        ),
        (
            "ACTION: INSERT, MEMORY_ITEM: Dave plays chess.",
            serde_json::json!([["INSERT", true, -1, "Dave plays chess."]]),
        ),
        (
            "{\"actions\": [{\"action\": \"INSERT\", \"memory_item\": \"Eve runs.\"},]}",
            serde_json::json!([["INSERT", true, -1, "Eve runs."]]),
        ),
        ("{\"action\": \"insert\", \"content\": \"A\"}", fail),
    ];
    for (reply, want) in cases {
        let v = parse_cli(reply, 5, None);
        let got: Vec<serde_json::Value> = v["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| serde_json::json!([r["action"], r["success"], r["index"], r["content"]]))
            .collect();
        assert_eq!(serde_json::Value::Array(got), want, "reply {reply:?}");
    }
}
