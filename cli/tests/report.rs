//! `memskill report` over real evaluations of a tiny synthetic run: Table 1 cells with n,
//! errors and bootstrap intervals, links to each results.json, the run's skill-bank
//! evolution, the scripted-backend banner, Table 2 once a second executor model is
//! evaluated, and (for results carrying a context length) the Figure-3 chart.

use std::path::Path;

use memskill_trainer::config::Config;
use memskill_trainer::eval::{evaluate, EvalOptions};
use memskill_trainer::report::{collect, Report};
use memskill_trainer::train::{train, TrainOptions};

fn cfg() -> Config {
    let sets: Vec<String> = [
        "run.name=\"rep\"",
        "run.batch_size=2",
        "run.outer_epochs=1",
        "run.inner_epochs=2",
        "data.dataset=\"synthetic\"",
        "data.synthetic_samples=4",
        "data.synthetic_spans=2",
        "encoder.kind=\"hashing\"",
        "encoder.dim=16",
        "controller.top_k=1",
        "controller.retrieve=3",
        "answer.retrieve=3",
        "policy.hidden=8",
        "executor.backend=\"scripted-synthetic\"",
        "designer.enabled=false",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    Config::from_toml_str("", &sets, "test").unwrap()
}

/// The tiny synthetic run both tests evaluate.
fn train_tiny(runs_dir: &Path) -> memskill_trainer::train::TrainOutcome {
    train(
        &cfg(),
        &TrainOptions {
            runs_dir: runs_dir.to_path_buf(),
            progress: false,
            ..Default::default()
        },
    )
    .unwrap()
}

#[test]
fn report_tables_link_every_cell_and_show_intervals() {
    let d = tempfile::tempdir().unwrap();
    let out = train_tiny(d.path());
    let eval = |method: &str, sets: &[&str]| {
        evaluate(&EvalOptions {
            checkpoint: out.run_dir.clone(),
            method: Some(method.into()),
            out: Some(out.run_dir.join("eval").join(method)),
            no_judge: true,
            sets: sets.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        })
        .unwrap()
    };
    let (a, _) = eval("learned", &[]);
    let (b, bdir) = eval("k2", &["eval.top_k=2"]);
    // two context-length sweep points (the field HotpotQA evaluations write)
    for docs in [50, 100] {
        let sweep = d.path().join("sweep").join(format!("docs{docs}"));
        std::fs::create_dir_all(&sweep).unwrap();
        let mut v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(bdir.join("results.json")).unwrap())
                .unwrap();
        v["context_docs"] = serde_json::json!(docs);
        std::fs::write(sweep.join("results.json"), v.to_string()).unwrap();
    }

    let (entries, skills, _) = collect(&[out.run_dir.clone(), d.path().join("sweep")]).unwrap();
    assert_eq!(entries.len(), 4);
    assert_eq!(skills.len(), 1);
    let report = Report::build(&entries, skills);
    let rep_dir = d.path().join("report");
    if let Ok(keep) = std::env::var("MEMSKILL_KEEP_REPORT") {
        let _ = std::fs::remove_dir_all(&keep);
        report.write(Path::new(&keep)).unwrap();
    }
    let files = report.write(&rep_dir).unwrap();
    assert_eq!(files.len(), 3, "{files:?}");
    let md = std::fs::read_to_string(rep_dir.join("report.md")).unwrap();
    assert!(md.contains("## Table 1"), "{md}");
    // one executor model: no Table 2 (it would repeat Table 1)
    assert!(!md.contains("## Table 2"), "{md}");
    assert!(md.contains("## Figure 3"), "{md}");
    // the scripted backend: the page says its numbers mean nothing
    assert!(md.contains("meaningless by design"), "{md}");
    // rows under their group: both evaluations are of the trained method
    assert!(md.contains("| **MemSkill** |"), "{md}");
    // each method's F1 cell: mean, interval, n and errors, linked to its results.json
    let f1 = |r: &memskill_trainer::eval::EvalResults| r.overall.f1.unwrap() * 100.0;
    assert!(md.contains(&format!("F1 {:.2} [", f1(&a))), "{md}");
    assert!(md.contains(&format!("F1 {:.2} [", f1(&b))), "{md}");
    assert!(
        md.contains(&format!("n={}, errors 0", a.queries.len())),
        "{md}"
    );
    assert!(md.contains("](../rep/eval/learned/results.json)"), "{md}");
    assert!(md.contains("](../rep/skills.md)"), "{md}");
    let html = std::fs::read_to_string(rep_dir.join("report.html")).unwrap();
    assert!(
        html.contains("<a href=\"../rep/eval/k2/results.json\">"),
        "{html}"
    );
    // one self-contained page: the figure is inline
    assert!(html.contains("<img src=\"data:image/png;base64,iVBORw0KGgo"));
    // Table 1 in the paper's layout: the dataset as a column group over F1 and n (errors)
    assert!(
        html.contains("<table class=\"paper\">")
            && html.contains("colspan=")
            && html.contains("<th>F1</th>")
            && html.contains("<th>n (errors)</th>"),
        "{html}"
    );
    assert!(
        std::fs::metadata(rep_dir.join("figure3.png"))
            .unwrap()
            .len()
            > 1000
    );
    assert!(html.contains("<nav class=\"toc\">") && html.contains("href=\"#training\""));
    assert!(html.contains("class=\"banner\""));
    // every link resolves: a file beside the report, or a heading of report.md (its contents)
    for l in md.split("](").skip(1) {
        let target = &l[..l.find(')').unwrap()];
        if let Some(anchor) = target.strip_prefix('#') {
            // GitHub's anchor of one of the file's `## ` headings
            let anchors: Vec<String> = md
                .lines()
                .filter_map(|l| l.strip_prefix("## "))
                .map(memskill_trainer::report::md_anchor)
                .collect();
            assert!(anchors.iter().any(|a| a == anchor), "{target}: {anchors:?}");
            continue;
        }
        assert!(Path::new(&rep_dir).join(target).exists(), "{target}");
    }

    // the same checkpoint with a second executor model: Table 2, a column per model
    let other = d.path().join("other-executor");
    std::fs::create_dir_all(&other).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.run_dir.join("eval/learned/results.json")).unwrap(),
    )
    .unwrap();
    v["executor"] = serde_json::json!("openai:other-model");
    v["executor_backend"] = serde_json::json!("openai");
    std::fs::write(other.join("results.json"), v.to_string()).unwrap();
    let (entries, skills, _) = collect(&[out.run_dir.clone(), other]).unwrap();
    let rep2 = d.path().join("report2");
    Report::build(&entries, skills).write(&rep2).unwrap();
    let md = std::fs::read_to_string(rep2.join("report.md")).unwrap();
    let t2 = &md[md.find("## Table 2").expect("Table 2 with two executors")..];
    assert!(
        t2.contains("| | openai:other-model | scripted-synthetic |"),
        "{md}"
    );
}

#[test]
fn eval_sweep_writes_one_labelled_result_per_grid_point() {
    let d = tempfile::tempdir().unwrap();
    let out = train_tiny(d.path());
    let sweep = d.path().join("sw");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_memskill"))
        .args(["eval", "--checkpoint"])
        .arg(&out.run_dir)
        .args(["--no-judge", "--method", "m", "--out"])
        .arg(&sweep)
        .args([
            "--sweep",
            "eval.top_k=1,2",
            "--sweep",
            "answer.retrieve=2,3",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (entries, _, _) = collect(std::slice::from_ref(&sweep)).unwrap();
    let mut methods: Vec<String> = entries.iter().map(|e| e.method.clone()).collect();
    methods.sort();
    assert_eq!(
        methods,
        [
            "m [eval.top_k=1,answer.retrieve=2]",
            "m [eval.top_k=1,answer.retrieve=3]",
            "m [eval.top_k=2,answer.retrieve=2]",
            "m [eval.top_k=2,answer.retrieve=3]"
        ]
    );
    assert!(entries.iter().any(|e| e.top_k == 2));
    // a bad sweep is refused with the argument named
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_memskill"))
        .args(["eval", "--checkpoint"])
        .arg(&out.run_dir)
        .args(["--sweep", "eval.top_k"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("--sweep \"eval.top_k\""));
}
