//! Hostile inputs and outputs (issue 27): no file written through a link, over a file without
//! `--force` or into the command's own input; no input that hangs (FIFOs, devices) or
//! template that runs away; zero budgets refused before anything is written.

use std::path::Path;
use std::process::Command;
use std::sync::mpsc;
use std::time::Duration;

use memskill_trainer::config::Config;
use memskill_trainer::train::{train, TrainOptions};

use memskill_e2e::{memskill, stderr};

fn mkfifo(p: &Path) -> bool {
    Command::new("mkfifo")
        .arg(p)
        .status()
        .is_ok_and(|s| s.success())
}

fn temps_in(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|n| n.contains(".tmp-"))
        .collect()
}

#[test]
fn skills_export_and_import_never_destroy_files() {
    let d = tempfile::tempdir().unwrap();
    let s = |p: &str| d.path().join(p).to_string_lossy().to_string();
    let export = |force: bool| {
        let (bank, out) = (s("bank.json"), s("skills"));
        let mut args = vec!["skills", "export", bank.as_str(), "--out", out.as_str()];
        if force {
            args.push("--force");
        }
        memskill(&args)
    };
    assert!(memskill(&["skills", "init", "--out", &s("bank.json")])
        .status
        .success());
    let o = export(false);
    assert!(o.status.success(), "{}", stderr(&o));
    let md = d.path().join("skills/insert/SKILL.md");
    let original = std::fs::read_to_string(&md).unwrap();

    // import onto a file of the imported folder: refused even with --force
    let o = memskill(&[
        "skills",
        "import",
        &s("skills"),
        "--out",
        &s("skills/insert/SKILL.md"),
        "--force",
    ]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("input"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&md).unwrap(), original);
    assert!(memskill(&["skills", "validate", &s("skills")])
        .status
        .success());

    // export over an existing export: only with --force
    std::fs::write(&md, original.replace("Skip greetings", "Hand-edited")).unwrap();
    let edited = std::fs::read_to_string(&md).unwrap();
    let o = export(false);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--force"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&md).unwrap(), edited);
    let o = export(true);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&md).unwrap(), original);

    // a linked skill folder inside the export: its target is never written
    #[cfg(unix)]
    {
        let elsewhere = d.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        std::fs::write(elsewhere.join("SKILL.md"), "precious").unwrap();
        std::fs::remove_dir_all(d.path().join("skills/noop")).unwrap();
        std::os::unix::fs::symlink(&elsewhere, d.path().join("skills/noop")).unwrap();
        let o = export(true);
        assert!(!o.status.success());
        assert!(stderr(&o).contains("symbolic link"), "{}", stderr(&o));
        assert_eq!(
            std::fs::read_to_string(elsewhere.join("SKILL.md")).unwrap(),
            "precious"
        );
        // and import refuses the link that leaves the folder unless told to follow it
        let o = memskill(&["skills", "import", &s("skills"), "--out", &s("in.json")]);
        assert!(!o.status.success());
        assert!(stderr(&o).contains("--follow-links"), "{}", stderr(&o));
    }
    assert!(temps_in(d.path()).is_empty());
}

/// A full disk (a 64 KiB tmpfs, mounted where the test may) leaves no temp file behind.
#[test]
fn a_full_disk_leaves_no_temporary_file() {
    let d = tempfile::tempdir().unwrap();
    let s = |p: &str| d.path().join(p).to_string_lossy().to_string();
    memskill_e2e::seed_bank_and_export(d.path());
    let small = d.path().join("small");
    std::fs::create_dir(&small).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
        .arg(&small)
        .output()
        .is_ok_and(|o| o.status.success());
    if !mounted {
        println!("skipped: cannot mount a small tmpfs here (not root?)");
        return;
    }
    // fill it up to the last few hundred bytes
    let _ = std::fs::write(small.join("filler"), vec![b'x'; 64 * 1024 - 512]);
    let o = memskill(&[
        "skills",
        "import",
        &s("skills"),
        "--out",
        &s("small/bank.json"),
    ]);
    let leftovers = temps_in(&small);
    let _ = Command::new("umount").arg(&small).status();
    assert!(!o.status.success(), "the bank does not fit in 512 bytes");
    assert!(stderr(&o).contains("bank.json"), "{}", stderr(&o));
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

fn synthetic(name: &str, extra: &[String]) -> Config {
    let mut sets = memskill_e2e::tiny_synthetic_sets(name);
    sets.extend(extra.iter().cloned());
    Config::from_toml_str("", &sets, "test").expect("test config resolves")
}

/// Train on another thread; a run still going after 60 s counts as a hang.
fn train_within(cfg: Config, runs: &Path) -> anyhow::Result<()> {
    let (tx, rx) = mpsc::channel();
    let opts = TrainOptions {
        runs_dir: runs.to_path_buf(),
        progress: false,
        ..Default::default()
    };
    std::thread::spawn(move || {
        let _ = tx.send(train(&cfg, &opts).map(|_| ()));
    });
    rx.recv_timeout(Duration::from_secs(60))
        .expect("training hung on its input")
}

fn toml_str(p: &Path) -> String {
    toml::Value::String(p.to_string_lossy().to_string()).to_string()
}

#[test]
fn fifo_and_device_inputs_are_refused_without_hanging() {
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("bank.fifo");
    if !mkfifo(&fifo) {
        println!("skipped: mkfifo is not available");
        return;
    }
    for (i, bank) in [fifo.clone(), Path::new("/dev/zero").to_path_buf()]
        .iter()
        .enumerate()
    {
        let name = format!("bank{i}");
        let cfg = synthetic(&name, &[format!("run.skill_bank={}", toml_str(bank))]);
        let e = format!("{:#}", train_within(cfg, d.path()).unwrap_err());
        assert!(e.contains("FIFO") || e.contains("device"), "{e}");
        assert!(!d.path().join(&name).exists());
    }
    let prompts = d.path().join("prompts");
    std::fs::create_dir(&prompts).unwrap();
    assert!(mkfifo(&prompts.join("executor.user.j2")));
    let cfg = synthetic("tmpl", &[format!("prompts.dir={}", toml_str(&prompts))]);
    let e = format!("{:#}", train_within(cfg, d.path()).unwrap_err());
    assert!(e.contains("FIFO") && e.contains("executor.user.j2"), "{e}");
    assert!(!d.path().join("tmpl").exists());
}

#[test]
fn runaway_templates_and_zero_budgets_fail_before_the_run_directory() {
    let d = tempfile::tempdir().unwrap();
    let prompts = d.path().join("prompts");
    std::fs::create_dir(&prompts).unwrap();
    for (i, (file, src, want)) in [
        (
            "answer.locomo.user.j2",
            "{% for a in range(10000) %}{% for b in range(10000) %}{% for c in range(10000) %}{% endfor %}{% endfor %}{% endfor %}",
            "steps",
        ),
        (
            "designer.analysis.user.j2",
            "{% for a in range(100000) %}{{ 'y' * 100000 }}{% endfor %}",
            "limit",
        ),
        ("actor.user.j2", "{{ goal.no_such_field.deeper }}", "actor.user.j2"),
    ]
    .into_iter()
    .enumerate()
    {
        for f in std::fs::read_dir(&prompts).unwrap() {
            std::fs::remove_file(f.unwrap().path()).unwrap();
        }
        std::fs::write(prompts.join(file), src).unwrap();
        let name = format!("t{i}");
        let cfg = synthetic(&name, &[format!("prompts.dir={}", toml_str(&prompts))]);
        let e = format!("{:#}", train_within(cfg, d.path()).unwrap_err());
        assert!(e.contains(file) && e.contains(want), "{e}");
        assert!(!d.path().join(&name).exists(), "{name}: {e}");
    }
    for set in ["executor.max_tokens=0", "policy.hidden=0"] {
        let o = memskill(&[
            "train",
            "--config",
            &memskill_e2e::repo_root()
                .join("configs/quickstart.toml")
                .to_string_lossy(),
            "--runs-dir",
            &d.path().to_string_lossy(),
            "--run-name",
            "zero",
            "--set",
            set,
        ]);
        assert!(!o.status.success());
        let key = set.split('=').next().unwrap();
        assert!(stderr(&o).contains(key), "{set}: {}", stderr(&o));
        assert!(!d.path().join("zero").exists(), "{set}");
    }
}
