//! End-to-end tests of the training loop on the synthetic task with the scripted oracle
//! LLM and the hashing encoder (no assets, no network).

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use memskill_controller::{build_state, Controller, HashingEncoder};
use memskill_core::TextEncoder;
use memskill_trainer::checkpoint::{pointer, Checkpoint};
use memskill_trainer::config::Config;
use memskill_trainer::eval::{compare_table, evaluate, EvalOptions};
use memskill_trainer::synthetic::{self, USEFUL_SKILL};
use memskill_trainer::train::{train, TrainOptions};

const DIM: usize = 64;

fn base_sets(name: &str) -> Vec<String> {
    [
        format!("run.name=\"{name}\""),
        "run.batch_size=4".into(),
        "data.dataset=\"synthetic\"".into(),
        "data.synthetic_samples=8".into(),
        "data.synthetic_spans=3".into(),
        "encoder.kind=\"hashing\"".into(),
        format!("encoder.dim={DIM}"),
        "controller.top_k=1".into(),
        "controller.retrieve=5".into(),
        "answer.retrieve=5".into(),
        "policy.hidden=32".into(),
        "ppo.lr=0.003".into(),
        "ppo.ppo_epochs=4".into(),
        "ppo.minibatch_size=12".into(),
        "ppo.target_kl=0.1".into(),
        "executor.backend=\"scripted-synthetic\"".into(),
        "concurrency.episodes=4".into(),
        "concurrency.queries=3".into(),
    ]
    .to_vec()
}

fn cfg(name: &str, extra: &[&str]) -> Config {
    let mut sets = base_sets(name);
    sets.extend(extra.iter().map(|s| s.to_string()));
    Config::from_toml_str("", &sets, "test").expect("test config resolves")
}

fn opts(dir: &Path) -> TrainOptions {
    TrainOptions {
        runs_dir: dir.to_path_buf(),
        progress: false,
        ..Default::default()
    }
}

/// Mean probability the controller gives the useful skill over the states of the optimal
/// trajectory (facts of earlier spans already in memory).
fn p_useful(ck: &Checkpoint, cfg: &Config) -> f64 {
    let enc = HashingEncoder::new(DIM);
    let mut c = Controller::new(DIM, &cfg.policy, &cfg.ppo, 0).unwrap();
    c.load_bytes(&ck.controller).unwrap();
    let skills: Vec<_> = ck.bank.selectable().into_iter().cloned().collect();
    let useful = skills.iter().position(|s| s.name == USEFUL_SKILL).unwrap();
    let descs: Vec<&str> = skills.iter().map(|s| s.description.as_str()).collect();
    let skill_embs = enc.embed(&descs).unwrap();
    let mut ps = Vec::new();
    for s in synthetic::dataset(
        cfg.data.synthetic_samples,
        cfg.data.synthetic_spans,
        cfg.run.seed,
    ) {
        let facts: Vec<String> = (0..s.spans.len())
            .map(|j| synthetic::fact(s.id[4..].parse().unwrap(), j, &s.queries[j].answers[0]))
            .collect();
        for (j, sp) in s.spans.iter().enumerate() {
            let span_emb = enc.embed(&[sp.text.as_str()]).unwrap().remove(0);
            let fact_refs: Vec<&str> = facts[..j].iter().map(String::as_str).collect();
            let mem = enc.embed(&fact_refs).unwrap_or_default();
            let mem_refs: Vec<&[f32]> = mem.iter().map(|v| v.as_slice()).collect();
            let st = build_state(&span_emb, &mem_refs);
            ps.push(c.skill_probs(&st, &skill_embs).unwrap()[useful] as f64);
        }
    }
    ps.iter().sum::<f64>() / ps.len() as f64
}

#[test]
fn closed_loop_learns_the_useful_skill() {
    let t = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let c = cfg(
        "learn",
        &[
            "run.outer_epochs=4",
            "run.inner_epochs=10",
            "designer.enabled=false",
        ],
    );
    let out = train(&c, &opts(dir.path())).unwrap();
    assert!(out.finished);
    assert_eq!(out.update_step, 40);
    let r = &out.outer_rewards;
    eprintln!("mean reward per outer epoch: {r:?}");
    assert_eq!(r.len(), 4);
    assert!(r[3] > r[0] + 0.3, "reward did not rise: {r:?}");
    let ck = Checkpoint::load(&pointer(&out.run_dir, "latest").unwrap().unwrap()).unwrap();
    let p = p_useful(&ck, &c);
    eprintln!("p(useful) = {p:.3}; took {:?}", t.elapsed());
    assert!(p > 0.8, "p(useful) = {p}");

    // The metrics carry one line per update with the fields the plots and reports need.
    let metrics = std::fs::read_to_string(out.run_dir.join("metrics.jsonl")).unwrap();
    let lines: Vec<serde_json::Value> = metrics
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 40);
    for k in [
        "reward",
        "shaped_reward",
        "policy_loss",
        "value_loss",
        "entropy",
        "approx_kl",
        "clip_frac",
        "bank_size",
    ] {
        assert!(lines[0][k].is_number(), "missing {k}");
    }
    assert_eq!(
        lines[0]["llm"]["executor"]["calls"], 12,
        "4 episodes x 3 spans"
    );
    assert_eq!(
        lines[0]["llm"]["answer"]["calls"], 12,
        "4 episodes x 3 queries"
    );
    assert!(out.export_dir.as_ref().unwrap().join("bank.json").exists());
    assert!(out.run_dir.join("skills.md").exists());

    // Deterministic evaluation: greedy top-1 picks the useful skill, the memory holds the
    // facts, F1 is high; the second evaluation is served from the memory-bank cache.
    let cache = tempfile::tempdir().unwrap();
    let set_cache = format!("cache.dir=\"{}\"", cache.path().display());
    let eo = EvalOptions {
        checkpoint: out.run_dir.clone(),
        sets: vec![set_cache],
        ..Default::default()
    };
    let (res, edir) = evaluate(&eo).unwrap();
    assert!(res.overall.f1.unwrap() > 0.9, "{:?}", res.overall);
    assert_eq!(res.overall.count, 24);
    assert_eq!(res.memory_cache_hits, 0);
    let (res2, _) = evaluate(&eo).unwrap();
    assert_eq!(res2.memory_cache_hits, 8);
    assert_eq!(res2.overall, res.overall);
    // A stopped evaluation (Ctrl-C in Python) fails as interrupted and writes nothing.
    let stopped_dir = cache.path().join("stopped");
    let stopped = EvalOptions {
        out: Some(stopped_dir.clone()),
        stop: Some(std::sync::Arc::new(std::sync::atomic::AtomicBool::new(
            true,
        ))),
        ..eo.clone()
    };
    let e = evaluate(&stopped).unwrap_err();
    assert!(format!("{e:#}").contains("interrupted"), "{e:#}");
    assert!(!stopped_dir.join("results.json").exists());
    let md = std::fs::read_to_string(edir.join("results.md")).unwrap();
    assert!(md.contains("| Method | F1 | L-J |"), "{md}");
    let (table, failed) = compare_table(std::slice::from_ref(&out.run_dir)).unwrap();
    assert_eq!(failed, 0);
    assert!(table.contains("synthetic-test"), "{table}");

    let pngs = memskill_trainer::plot::plot_run(&out.run_dir).unwrap();
    assert_eq!(pngs.len(), 3);
    for p in pngs {
        assert!(
            std::fs::metadata(&p).unwrap().len() > 1000,
            "{}",
            p.display()
        );
    }
}

/// `executor.structured = "json_schema"`: the executor asks for the JSON form with the
/// actions' schema on every request, and the oracle (answering that form) yields the same
/// actions, so the same rewards and memory banks as free text, without parse problems.
#[test]
fn structured_executor_replies_give_the_same_run() {
    let run = |name: &str, structured: &str| {
        let dir = tempfile::tempdir().unwrap();
        let set = format!("executor.structured=\"{structured}\"");
        let c = cfg(
            name,
            &[
                "run.outer_epochs=1",
                "run.inner_epochs=3",
                "designer.enabled=false",
                &set,
            ],
        );
        let out = train(&c, &opts(dir.path())).unwrap();
        assert!(out.finished);
        let metrics = std::fs::read_to_string(out.run_dir.join("metrics.jsonl")).unwrap();
        let lines: Vec<serde_json::Value> = metrics
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        (dir, lines)
    };
    let (_a, off) = run("structured-off", "off");
    let (_b, on) = run("structured-on", "json_schema");
    assert_eq!(off.len(), 3);
    assert_eq!(on.len(), off.len());
    for (a, b) in off.iter().zip(&on) {
        for k in [
            "reward",
            "bank_size",
            "parse_problems",
            "dropped_incomplete",
        ] {
            assert_eq!(a[k], b[k], "{k}: {a} vs {b}");
        }
        assert_eq!(b["parse_problems"], 0, "{b}");
        assert!(b["bank_size"].as_f64().unwrap() > 0.0, "{b}");
        // the replies were the JSON form (longer than the action blocks), so the requests
        // carried the schema and the prompts asked for JSON
        let tokens = |l: &serde_json::Value| l["llm"]["executor"]["completion_tokens"].as_u64();
        assert!(tokens(b).unwrap() > tokens(a).unwrap(), "{a} vs {b}");
    }
}

fn ck_files(run: &Path) -> Vec<(String, Vec<u8>)> {
    let d = pointer(run, "latest").unwrap().unwrap();
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().to_string(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    v.sort();
    v.insert(
        0,
        (d.file_name().unwrap().to_string_lossy().to_string(), vec![]),
    );
    v
}

fn assert_same_run(a: &Path, b: &Path) {
    let ma = std::fs::read_to_string(a.join("metrics.jsonl")).unwrap();
    let mb = std::fs::read_to_string(b.join("metrics.jsonl")).unwrap();
    assert_eq!(ma, mb, "metrics.jsonl differ");
    let ia = std::fs::read_to_string(a.join("invocations.jsonl")).unwrap();
    let ib = std::fs::read_to_string(b.join("invocations.jsonl")).unwrap();
    assert!(!ia.is_empty());
    assert_eq!(ia, ib, "invocations.jsonl differ");
    let (fa, fb) = (ck_files(a), ck_files(b));
    assert_eq!(fa.len(), fb.len());
    for (x, y) in fa.iter().zip(&fb) {
        assert_eq!(x.0, y.0);
        if x.1 != y.1 {
            let i = x.1.iter().zip(&y.1).take_while(|(a, b)| a == b).count();
            let ctx = |v: &[u8]| {
                String::from_utf8_lossy(&v[i.saturating_sub(200)..(i + 200).min(v.len())])
                    .to_string()
            };
            panic!(
                "checkpoint file {} differs at byte {i}:\n{}\n----\n{}",
                x.0,
                ctx(&x.1),
                ctx(&y.1)
            );
        }
    }
}

/// N updates straight == N/2, stop, resume, N/2 more (also stopping mid outer epoch), with
/// designer stages (snapshot / rollback) in between.
#[test]
fn resume_reproduces_a_straight_run() {
    let extra = [
        "run.outer_epochs=3",
        "run.inner_epochs=4",
        "designer.enabled=true",
        "evolution.patience=10",
    ];
    let c = cfg("resume", &extra);
    let straight = tempfile::tempdir().unwrap();
    let out = train(&c, &opts(straight.path())).unwrap();
    assert!(out.finished);
    let metrics = std::fs::read_to_string(out.run_dir.join("metrics.jsonl")).unwrap();
    assert_eq!(
        metrics
            .lines()
            .filter(|l| l.contains("\"type\":\"stage\""))
            .count(),
        3
    );

    for stops in [vec![6u64], vec![4], vec![3, 2, 5]] {
        let split = tempfile::tempdir().unwrap();
        let mut o = opts(split.path());
        let mut done = 0;
        for (i, m) in stops.iter().enumerate() {
            o.resume = i > 0;
            o.max_updates = Some(*m);
            let r = train(&c, &o).unwrap();
            assert!(!r.finished, "stopped at {m}");
            done += r.updates_this_run;
            assert_eq!(r.update_step, done);
        }
        o.resume = true;
        o.max_updates = None;
        let r = train(&c, &o).unwrap();
        assert!(r.finished);
        assert_eq!(r.update_step, 12);
        assert_same_run(&out.run_dir, &r.run_dir);
    }
    // A finished run resumes to a no-op; a fresh start over an existing run is refused.
    let mut o = opts(straight.path());
    assert!(train(&c, &o).is_err());
    o.resume = true;
    let r = train(&c, &o).unwrap();
    assert_eq!(r.updates_this_run, 0);
}

fn wait_for_lines(p: &Path, n: usize, timeout: Duration) -> bool {
    let t = Instant::now();
    while t.elapsed() < timeout {
        if std::fs::read_to_string(p)
            .map(|s| s.lines().count() >= n)
            .unwrap_or(false)
        {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// SIGKILL in the middle of an inner epoch: resuming loses nothing written before the last
/// checkpoint and duplicates nothing.
#[test]
fn sigkill_mid_epoch_then_resume() {
    let bin = memskill_e2e::memskill_bin();
    let extra = [
        "run.outer_epochs=2",
        "run.inner_epochs=4",
        "designer.enabled=true",
        "executor.scripted_latency_ms=15",
    ];
    let c = cfg("killed", &extra);
    let straight = tempfile::tempdir().unwrap();
    let out = train(&c, &opts(straight.path())).unwrap();

    let work = tempfile::tempdir().unwrap();
    let cfg_path = work.path().join("killed.toml");
    std::fs::write(&cfg_path, c.to_toml().unwrap()).unwrap();
    let runs = work.path().join("runs");
    let metrics = runs.join("killed").join("metrics.jsonl");
    let mut child = Command::new(&bin)
        .args(["train", "--no-progress", "--config"])
        .arg(&cfg_path)
        .arg("--runs-dir")
        .arg(&runs)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    assert!(
        wait_for_lines(&metrics, 3, Duration::from_secs(60)),
        "training did not progress"
    );
    // Mid-epoch: let the next inner epoch start its LLM calls.
    std::thread::sleep(Duration::from_millis(40));
    child.kill().unwrap();
    child.wait().unwrap();
    let before = std::fs::read_to_string(&metrics).unwrap();
    assert!(
        before.lines().count() < 9,
        "killed too late to test anything"
    );

    let st = Command::new(&bin)
        .args([
            "train",
            "--no-progress",
            "--resume",
            "--run-name",
            "killed",
            "--runs-dir",
        ])
        .arg(&runs)
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "resume failed: {}",
        String::from_utf8_lossy(&st.stderr)
    );
    let after = std::fs::read_to_string(&metrics).unwrap();
    // Everything up to the checkpoint was kept as is.
    let common = before
        .lines()
        .zip(after.lines())
        .take_while(|(a, b)| a == b)
        .count();
    assert!(common >= 2, "lost lines written before the checkpoint");
    assert_same_run(&out.run_dir, &runs.join("killed"));
}

/// `TrainOptions::stop` (Python's Ctrl-C): the run stops after the current update with a
/// checkpoint of it, inside an outer epoch or at its end, and a resume finishes the run.
#[test]
fn stop_flag_stops_after_the_update_with_a_checkpoint() {
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;
    // (outer, inner): a stop inside an outer epoch, and one at its end
    for (outer, inner) in [(1u32, 4u32), (2, 1)] {
        let dir = tempfile::tempdir().unwrap();
        let c = cfg(
            "stopflag",
            &[
                &format!("run.outer_epochs={outer}"),
                &format!("run.inner_epochs={inner}"),
                "run.checkpoint_every=100",
            ],
        );
        let stop = Arc::new(AtomicBool::new(true));
        let out = train(
            &c,
            &TrainOptions {
                stop: Some(stop),
                ..opts(dir.path())
            },
        )
        .unwrap();
        assert!(out.interrupted && !out.finished, "{out:?}");
        assert_eq!((out.update_step, out.updates_this_run), (1, 1));
        let ck = out
            .last_checkpoint
            .expect("a checkpoint of the stopped update");
        let latest = pointer(&out.run_dir, "latest").unwrap().unwrap();
        assert_eq!(latest.file_name(), ck.file_name());
        assert_eq!(Checkpoint::load(&ck).unwrap().state.update_step, 1);
        let total = u64::from(outer * inner);
        let r = train(
            &c,
            &TrainOptions {
                resume: true,
                ..opts(dir.path())
            },
        )
        .unwrap();
        assert!(r.finished && !r.interrupted, "{r:?}");
        assert_eq!((r.update_step, r.updates_this_run), (total, total - 1));
    }
}

/// `memskill` with `args`, its output captured, as a child process.
fn spawn_memskill(args: &[&str], env: &[(&str, &Path)]) -> std::process::Child {
    let mut c = Command::new(memskill_e2e::memskill_bin());
    c.args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    for (k, v) in env {
        c.env(k, v);
    }
    c.spawn().unwrap()
}

/// Sends `sig` to the child.
fn signal(child: &std::process::Child, sig: libc::c_int) {
    // SAFETY: signalling our own child process.
    let r = unsafe { libc::kill(child.id() as libc::pid_t, sig) };
    assert_eq!(r, 0, "kill failed");
}

/// SIGTERM mid-run (a scheduler's preemption): the run stops after the update in progress
/// with a checkpoint of it, exits 75 saying how to continue, and `--resume` ends with the
/// same files as a run never stopped.
#[test]
fn sigterm_stops_at_a_checkpoint_and_the_resume_matches_a_straight_run() {
    let extra = [
        "run.outer_epochs=2",
        "run.inner_epochs=4",
        "run.checkpoint_every=100",
        "designer.enabled=true",
        "executor.scripted_latency_ms=15",
    ];
    let c = cfg("sigterm", &extra);
    let straight = tempfile::tempdir().unwrap();
    let out = train(&c, &opts(straight.path())).unwrap();

    let work = tempfile::tempdir().unwrap();
    let cfg_path = work.path().join("sigterm.toml");
    std::fs::write(&cfg_path, c.to_toml().unwrap()).unwrap();
    let runs = work.path().join("runs");
    let (cfg_s, runs_s) = (cfg_path.to_str().unwrap(), runs.to_str().unwrap());
    let run = runs.join("sigterm");
    let child = spawn_memskill(
        &[
            "train",
            "--no-progress",
            "--config",
            cfg_s,
            "--runs-dir",
            runs_s,
        ],
        &[],
    );
    assert!(
        wait_for_lines(&run.join("metrics.jsonl"), 1, Duration::from_secs(60)),
        "training did not progress"
    );
    signal(&child, libc::SIGTERM);
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(75), "{err}");
    let resume =
        format!("continue with: memskill train --resume --run-name sigterm --runs-dir {runs_s}");
    assert!(err.contains("stopped by SIGTERM after update"), "{err}");
    assert!(err.contains(&resume), "{err}");
    // the checkpoint holds every update in metrics.jsonl (checkpoint_every = 100: it was
    // written because of the signal), and the run is not finished
    let metrics = std::fs::read_to_string(run.join("metrics.jsonl")).unwrap();
    let updates = metrics
        .lines()
        .filter(|l| l.contains("\"type\":\"update\""))
        .count() as u64;
    assert!(
        updates < 8,
        "stopped too late to test anything: {updates} updates"
    );
    let ck = pointer(&run, "latest").unwrap().expect("a checkpoint");
    assert_eq!(Checkpoint::load(&ck).unwrap().state.update_step, updates);
    assert!(err.contains(&ck.display().to_string()), "{err}");

    let o = Command::new(memskill_e2e::memskill_bin())
        .args([
            "train",
            "--no-progress",
            "--resume",
            "--run-name",
            "sigterm",
            "--runs-dir",
            runs_s,
        ])
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "resume failed: {}",
        memskill_e2e::stderr(&o)
    );
    assert_same_run(&out.run_dir, &run);
}

/// A second signal while the run stops ends the process at once (the default action).
#[test]
fn a_second_signal_ends_the_run_at_once() {
    use std::os::unix::process::ExitStatusExt;
    let c = cfg(
        "twice",
        &[
            "run.outer_epochs=1",
            "run.inner_epochs=50",
            "executor.scripted_latency_ms=40",
        ],
    );
    let work = tempfile::tempdir().unwrap();
    let cfg_path = work.path().join("twice.toml");
    std::fs::write(&cfg_path, c.to_toml().unwrap()).unwrap();
    let runs = work.path().join("runs");
    let child = spawn_memskill(
        &[
            "train",
            "--no-progress",
            "--config",
            cfg_path.to_str().unwrap(),
            "--runs-dir",
            runs.to_str().unwrap(),
        ],
        &[],
    );
    assert!(
        wait_for_lines(
            &runs.join("twice").join("metrics.jsonl"),
            1,
            Duration::from_secs(60)
        ),
        "training did not progress"
    );
    signal(&child, libc::SIGINT);
    // (two signals pending at once would be one: let the handler run first)
    std::thread::sleep(Duration::from_millis(30));
    signal(&child, libc::SIGINT);
    let o = child.wait_with_output().unwrap();
    assert_eq!(
        o.status.signal(),
        Some(libc::SIGINT),
        "{:?}: {}",
        o.status,
        memskill_e2e::stderr(&o)
    );
}

/// SIGTERM mid-evaluation: exit 75, no results file; the same command again finishes with
/// the results of an evaluation never stopped (reusing the memory banks cached before).
#[test]
fn sigterm_stops_an_evaluation_without_results() {
    let c = cfg(
        "evalsig",
        &[
            "run.outer_epochs=1",
            "run.inner_epochs=2",
            "designer.enabled=false",
        ],
    );
    let dir = tempfile::tempdir().unwrap();
    let run = train(&c, &opts(dir.path())).unwrap().run_dir;
    let (cache, cache2) = (dir.path().join("cache"), dir.path().join("cache2"));
    let (out, straight) = (dir.path().join("out"), dir.path().join("straight"));
    let args = |out: &Path| -> Vec<String> {
        [
            "eval",
            "--checkpoint",
            run.to_str().unwrap(),
            "--no-judge",
            "--set",
            "data.synthetic_samples=40",
            "--set",
            "concurrency.episodes=1",
            "--set",
            "executor.scripted_latency_ms=10",
            "--out",
            out.to_str().unwrap(),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let a = args(&out);
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let child = spawn_memskill(&a, &[("MEMSKILL_CACHE", &cache)]);
    // the first memory bank cached: the evaluation is under way
    let banks = cache.join("membanks");
    let t = Instant::now();
    while std::fs::read_dir(&banks).map_or(0, |d| d.count()) == 0 {
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "evaluation did not progress"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    signal(&child, libc::SIGTERM);
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(75), "{err}");
    assert!(
        err.contains("stopped by SIGTERM: evaluation interrupted before")
            && err.contains("no results written")
            && err.contains("run the same command again"),
        "{err}"
    );
    assert!(!out.join("results.json").exists());
    assert!(!out.join("results.md").exists());
    let cached = std::fs::read_dir(&banks).unwrap().count();
    assert!(cached < 40, "stopped too late to test anything");

    let results = |out: &Path, cache: &Path| -> serde_json::Value {
        let a = args(out);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let o = Command::new(memskill_e2e::memskill_bin())
            .args(&a)
            .env("MEMSKILL_CACHE", cache)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", memskill_e2e::stderr(&o));
        serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap()
    };
    let again = results(&out, &cache);
    let never_stopped = results(&straight, &cache2);
    assert!(again["memory_cache_hits"].as_u64().unwrap() >= cached as u64);
    assert_eq!(never_stopped["memory_cache_hits"], 0);
    for k in ["overall", "by_category", "queries"] {
        assert_eq!(again[k], never_stopped[k], "{k}");
    }
}
