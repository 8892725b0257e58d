//! `memskill config show | check` and `train --dry-run` (issue 45, item 2): a config looked
//! at before a run, every problem at once, nothing made.

use std::process::{Command, Output};

fn memskill(args: &[&str]) -> Output {
    Command::new(memskill_e2e::memskill_bin())
        .args(args)
        .current_dir(memskill_e2e::repo_root())
        .output()
        .expect("memskill runs")
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn check_names_every_unknown_key_with_a_suggestion_and_show_names_origins() {
    let d = tempfile::tempdir().unwrap();
    let cfg = d.path().join("typos.toml");
    std::fs::write(
        &cfg,
        "extends = \"CONFIGS/synthetic.toml\"\n[controler]\ntop_k = 2\n[ppo]\nlrr = 0.1\n".replace(
            "CONFIGS",
            &memskill_e2e::repo_root()
                .join("configs")
                .display()
                .to_string(),
        ),
    )
    .unwrap();
    let o = memskill(&["config", "check", &cfg.display().to_string()]);
    let (_, err) = text(&o);
    assert!(!o.status.success());
    assert!(
        err.contains("2 unknown keys")
            && err.contains("`controler` (did you mean `controller`?)")
            && err.contains("`ppo.lrr` (did you mean `ppo.lr`?)"),
        "{err}"
    );
    let o = memskill(&[
        "config",
        "show",
        "configs/synthetic.toml",
        "--set",
        "ppo.lr=0.001",
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let line = |k: &str| {
        out.lines()
            .find(|l| l.starts_with(&format!("{k} = ")))
            .unwrap_or("")
            .to_string()
    };
    assert!(line("ppo.lr").ends_with("# --set"), "{}", line("ppo.lr"));
    assert!(
        line("data.dataset").ends_with("# configs/synthetic.toml"),
        "{}",
        line("data.dataset")
    );
    assert!(
        line("ppo.gamma").ends_with("# default"),
        "{}",
        line("ppo.gamma")
    );
    let o = memskill(&["config", "check", "configs/synthetic.toml"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}{err}");
    assert!(
        out.contains("server (not contacted): executor: the scripted synthetic oracle"),
        "{out}"
    );
    // a missing config is one clean line
    let o = memskill(&["train", "--config", "nope.toml"]);
    let (_, err) = text(&o);
    assert_eq!(
        err.trim(),
        "error: config nope.toml: does not exist",
        "{err}"
    );
}

#[test]
fn a_dry_run_prints_the_plan_and_makes_nothing() {
    let d = tempfile::tempdir().unwrap();
    let runs = d.path().join("runs");
    let o = memskill(&[
        "train",
        "--dry-run",
        "--config",
        "configs/synthetic.toml",
        "--runs-dir",
        &runs.display().to_string(),
        "--set",
        "run.outer_epochs=2",
        "--set",
        "run.inner_epochs=3",
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}{err}");
    assert!(
        out.contains("updates: 6 (2 outer x 3 inner epochs)"),
        "{out}"
    );
    assert!(out.contains("LLM calls (estimate"), "{out}");
    assert!(!runs.exists(), "a dry run made {}", runs.display());
}

#[test]
fn completions_cover_every_command() {
    for (shell, want) in [
        ("bash", "_memskill"),
        ("zsh", "#compdef memskill"),
        ("fish", "dry-run"),
    ] {
        let o = memskill(&["completions", shell]);
        let (out, err) = text(&o);
        assert!(o.status.success(), "{shell}: {err}");
        assert!(
            out.contains(want) && out.contains("config"),
            "{shell}: {}",
            &out[..out.len().min(300)]
        );
    }
}

#[test]
fn an_eval_dry_run_prints_the_plan_and_writes_nothing() {
    let d = tempfile::tempdir().unwrap();
    let runs = d.path().join("runs");
    let runs_s = runs.display().to_string();
    let o = memskill(&[
        "train",
        "--config",
        "configs/synthetic.toml",
        "--runs-dir",
        &runs_s,
        "--no-progress",
        "--set",
        "run.outer_epochs=1",
        "--set",
        "run.inner_epochs=1",
    ]);
    assert!(o.status.success(), "{}", text(&o).1);
    let run = runs.join("synthetic");
    let o = memskill(&[
        "eval",
        "--checkpoint",
        &run.display().to_string(),
        "--dry-run",
        "--limit",
        "5",
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}{err}");
    assert!(
        out.contains("5 questions") && out.contains("answer 5, judge "),
        "{out}"
    );
    assert!(
        !run.join("eval").exists(),
        "a dry run wrote {}",
        run.join("eval").display()
    );
}
