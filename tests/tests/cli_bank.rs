//! `memskill bank build`, `bank show` and `bank forget` end to end (issue 26, item 4; issue
//! 43): one LoCoMo sample's typed, scoped memory bank through the scripted executor,
//! scope-filtered views of it, and one user's memories forgotten on request.

use memskill_e2e::{memskill, repo_root, stderr};

/// The rows `bank show --json` prints.
fn rows(o: &std::process::Output) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn a_locomo_sample_bank_is_typed_scoped_and_filtered_by_scope() {
    let dir = tempfile::tempdir().unwrap();
    let root = repo_root();
    let config = root.join("configs/synthetic.toml");
    let data = root.join("datasets/tests/fixtures/locomo_small.json");
    let bank = dir.path().join("conv-a.json");
    let (config, bank_s) = (config.to_string_lossy(), bank.to_string_lossy());
    let path_set = format!("data.path=\"{}\"", data.display());
    let o = memskill(&[
        "bank",
        "build",
        "--config",
        &config,
        "--set",
        "data.dataset=\"locomo\"",
        "--set",
        &path_set,
        "--set",
        "executor.typed_memories=true",
        "--set",
        "executor.scoped_memories=true",
        "--sample",
        "conv-a",
        "--split",
        "all",
        "--out",
        &bank_s,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let summary = String::from_utf8_lossy(&o.stdout);
    assert!(summary.contains("scopes: user:Caroline "), "{summary}");
    assert!(summary.contains("user:Melanie "), "{summary}");
    let show = |extra: &[&str]| {
        let mut args = vec!["bank", "show", &*bank_s, "--json"];
        args.extend_from_slice(extra);
        memskill(&args)
    };
    let all = rows(&show(&[]));
    assert!(all.len() >= 3, "{all:?}");
    let types = [
        "episodic",
        "semantic",
        "preference",
        "procedural",
        "reflective",
        "graph",
        "environment",
    ];
    for r in &all {
        let user = r["scope"]["user"].as_str().unwrap();
        assert!(r["text"].as_str().unwrap().starts_with(&format!("{user}:")));
        assert!(types.contains(&r["type"].as_str().unwrap()), "{r}");
        assert_eq!(r["sensitivity"], "public");
    }
    // one user's view: that user's memories, every one of them
    for user in ["Caroline", "Melanie"] {
        let scope = format!("user:{user}");
        let mine = rows(&show(&["--scope", &scope]));
        let want = all.iter().filter(|r| r["scope"]["user"] == user).count();
        assert!(want > 0);
        assert_eq!(mine.len(), want, "{user}");
        assert!(mine.iter().all(|r| r["scope"]["user"] == user));
    }
    // shared memories only: none here; a bad scope is an error naming the flag
    assert!(rows(&show(&["--scope", "none"])).is_empty());
    let bad = show(&["--scope", "team:x"]);
    assert!(!bad.status.success());
    assert!(
        stderr(&bad).contains("--scope") && stderr(&bad).contains("team"),
        "{}",
        stderr(&bad)
    );
    // an existing --out is not replaced without --force
    let again = memskill(&[
        "bank", "build", "--config", &config, "--sample", "conv-a", "--out", &bank_s,
    ]);
    assert!(!again.status.success());
    assert!(stderr(&again).contains("--out"), "{}", stderr(&again));

    // the bank in the registry: one row per memory, live
    let reg = dir.path().join("registry.db");
    let reg_s = reg.to_string_lossy().to_string();
    let o = memskill(&["registry", "ingest", &*bank_s, "--registry", &reg_s]);
    assert!(o.status.success(), "{}", stderr(&o));
    let count = |sql: &str| -> i64 {
        let o = memskill(&["registry", "query", sql, "--json", "--registry", &reg_s]);
        assert!(o.status.success(), "{}", stderr(&o));
        let v: serde_json::Value =
            serde_json::from_str(String::from_utf8_lossy(&o.stdout).trim()).unwrap();
        v["n"].as_i64().unwrap()
    };
    let total = count("SELECT COUNT(*) AS n FROM memory WHERE sample_id = 'conv-a'");
    assert!(total as usize >= all.len(), "{total}");
    assert_eq!(
        count("SELECT COUNT(*) AS n FROM memory WHERE content LIKE '%Caroline%'") as usize,
        all.iter()
            .filter(|r| r["scope"]["user"] == "Caroline")
            .count()
    );

    // Caroline asks to be forgotten: a dry run changes nothing, then every memory holding
    // her name loses its text (and earlier texts), each with a record
    let before = std::fs::read_to_string(&bank).unwrap();
    let forget = |extra: &[&str]| {
        let mut args = vec![
            "bank",
            "forget",
            &*bank_s,
            "--reason",
            "the user asked to be forgotten",
            "--by",
            "caroline",
        ];
        args.extend_from_slice(extra);
        memskill(&args)
    };
    let dry = forget(&["--matching", "caroline", "--dry-run"]);
    assert!(dry.status.success(), "{}", stderr(&dry));
    assert_eq!(std::fs::read_to_string(&bank).unwrap(), before);
    let hers = all
        .iter()
        .filter(|r| r["scope"]["user"] == "Caroline")
        .count();
    let o = forget(&["--matching", "caroline"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let after = std::fs::read_to_string(&bank).unwrap();
    let b: serde_json::Value = serde_json::from_str(&after).unwrap();
    let records = b["forgotten"].as_array().unwrap();
    assert!(records.len() >= hers, "{records:?}");
    assert!(records
        .iter()
        .all(|r| r["by"] == "caroline" && r["reason"] == "the user asked to be forgotten"));
    let left = rows(&show(&[]));
    assert!(
        left.iter().all(|r| !r["text"]
            .as_str()
            .unwrap()
            .to_lowercase()
            .contains("caroline")),
        "{left:?}"
    );
    assert_eq!(left.len(), all.len() - records.len());
    for m in b["items"].as_array().unwrap() {
        let text = m.to_string().to_lowercase();
        assert!(
            !text.contains("caroline:"),
            "a forgotten text is still in the file: {m}"
        );
    }
    // the registry follows the file: no new row, her texts gone there too
    let o = memskill(&["registry", "ingest", &*bank_s, "--registry", &reg_s]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("\"memories\":0"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert_eq!(
        count("SELECT COUNT(*) AS n FROM memory WHERE content LIKE '%Caroline%'"),
        0
    );
    assert_eq!(
        count("SELECT COUNT(*) AS n FROM memory WHERE status = 'forgotten'") as usize,
        records.len()
    );
    assert_eq!(
        count("SELECT COUNT(*) AS n FROM memory WHERE sample_id = 'conv-a'"),
        total
    );

    // nothing left to forget; an unknown id is named
    let again = forget(&["--matching", "caroline"]);
    assert!(
        !again.status.success() && stderr(&again).contains("no memory matches"),
        "{}",
        stderr(&again)
    );
    let bad = forget(&["--memory", "9999"]);
    assert!(
        !bad.status.success() && stderr(&bad).contains("no memory 9999"),
        "{}",
        stderr(&bad)
    );
}
