//! `memskill launch slurm`: the job script a launch writes, run by bash without Slurm (a task
//! a signal stops resumes to the same run; `--serve` starts, waits for and stops its server),
//! and on a real one-node Slurm (`scripts/cluster/slurm.sh`, Debian's slurm-wlm and munge;
//! skipped with the reason printed where it cannot start): a 3-point synthetic sweep runs as
//! one job array, and tasks preempted mid-run (the time-limit warning `--signal=B:USR1`, a
//! preemption's SIGTERM to every process, `scontrol requeue`) are requeued and end with the
//! same files, byte for byte, as the uninterrupted sweep; a cancelled task stays cancelled
//! until `launch slurm --resume` submits it again.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use memskill_e2e::{memskill_bin, repo_root, stderr};

/// The sweep every launch here runs: the synthetic task, 20 updates, slowed down (20 ms per
/// scripted executor call) so that a signal lands mid-run.
fn sweep_args(runs: &Path, name: &str, points: &str) -> Vec<String> {
    let cfg = repo_root().join("configs/synthetic.toml");
    let mut a: Vec<String> = ["launch", "slurm", "--config"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    a.push(cfg.display().to_string());
    for s in [
        "executor.scripted_latency_ms=20",
        "run.checkpoint_every=100",
    ] {
        a.extend(["--set".to_string(), s.to_string()]);
    }
    if !points.is_empty() {
        a.extend(["--sweep".to_string(), format!("ppo.lr={points}")]);
    }
    a.extend([
        "--name".to_string(),
        name.to_string(),
        "--runs-dir".to_string(),
        runs.display().to_string(),
    ]);
    a
}

fn run_memskill(args: &[String], slurm_conf: Option<&Path>) -> Output {
    let mut c = Command::new(memskill_bin());
    c.args(args);
    if let Some(conf) = slurm_conf {
        c.env("SLURM_CONF", conf);
    }
    c.output().expect("memskill runs")
}

/// The script of a launch (its `--dry-run`), written where the launch would put it, with
/// the folders a real launch makes.
fn script_of(runs: &Path, name: &str, extra: &[String], points: &str) -> PathBuf {
    let mut a = sweep_args(runs, name, points);
    a.extend(extra.iter().cloned());
    a.push("--dry-run".into());
    let o = run_memskill(&a, None);
    assert!(o.status.success(), "{}", stderr(&o));
    let dir = runs.join("launch").join(name);
    for d in ["tasks", "logs"] {
        std::fs::create_dir_all(dir.join(d)).unwrap();
    }
    let p = dir.join("job.sbatch");
    std::fs::write(&p, &o.stdout).unwrap();
    p
}

/// bash running task `task` of `script`, outside Slurm.
fn task_process(script: &Path, task: usize) -> Command {
    let mut c = Command::new("bash");
    c.arg(script)
        .env("SLURM_ARRAY_TASK_ID", task.to_string())
        .env_remove("SLURM_JOB_ID")
        .env_remove("SLURM_ARRAY_JOB_ID")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

fn lines(p: &Path) -> usize {
    std::fs::read_to_string(p).map_or(0, |s| s.lines().count())
}

/// The state a task's script recorded.
fn state(launch: &Path, task: usize) -> Option<String> {
    let t = std::fs::read_to_string(launch.join("tasks").join(format!("{task}.json"))).ok()?;
    let v: serde_json::Value = serde_json::from_str(&t).expect("a task state is JSON");
    v["state"].as_str().map(str::to_string)
}

fn wait_for(what: &str, timeout: Duration, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < timeout, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The latest checkpoint's files (name, bytes), its folder's name first.
fn latest_checkpoint(run: &Path) -> Vec<(String, Vec<u8>)> {
    let ck = run.join("checkpoints");
    let name = std::fs::read_to_string(ck.join("latest")).unwrap();
    let d = ck.join(name.trim());
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
    v.insert(0, (name.trim().to_string(), Vec::new()));
    v
}

/// metrics.jsonl, invocations.jsonl and the latest checkpoint byte for byte.
fn assert_same_run(a: &Path, b: &Path) {
    for f in ["metrics.jsonl", "invocations.jsonl"] {
        let (x, y) = (
            std::fs::read(a.join(f)).unwrap(),
            std::fs::read(b.join(f)).unwrap(),
        );
        assert!(!x.is_empty(), "{} is empty", a.join(f).display());
        assert!(x == y, "{f} of {} and {} differ", a.display(), b.display());
    }
    let (x, y) = (latest_checkpoint(a), latest_checkpoint(b));
    assert_eq!(x.len(), y.len());
    for (p, q) in x.iter().zip(&y) {
        assert_eq!(p.0, q.0);
        assert!(
            p.1 == q.1,
            "checkpoint file {} of {} differs",
            p.0,
            b.display()
        );
    }
}

/// The task script alone (bash, no Slurm): SIGTERM to the script is forwarded, memskill
/// stops at a checkpoint, the task exits 75 as `stopped`; run again it resumes, ends `done`
/// with the files of an uninterrupted task, and a third run does nothing.
#[test]
fn a_task_a_signal_stopped_resumes_to_the_same_run_without_slurm() {
    let work = tempfile::tempdir().unwrap();
    let (runs_a, runs_b) = (work.path().join("a"), work.path().join("b"));
    let straight = script_of(&runs_a, "solo", &[], "");
    let o = task_process(&straight, 0).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        state(&runs_a.join("launch/solo"), 0).as_deref(),
        Some("done")
    );

    let script = script_of(&runs_b, "solo", &[], "");
    let launch = runs_b.join("launch/solo");
    let child = task_process(&script, 0).spawn().unwrap();
    let metrics = runs_b.join("solo/metrics.jsonl");
    wait_for("two updates", Duration::from_secs(120), || {
        lines(&metrics) >= 2
    });
    // SAFETY: signalling our own child (the bash running the task).
    assert_eq!(
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) },
        0
    );
    let o = child.wait_with_output().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(75), "{err}");
    assert!(err.contains("got SIGTERM"), "{err}");
    assert!(err.contains("stopped by SIGTERM after update"), "{err}");
    assert!(
        err.contains("not under Slurm: run this task again"),
        "{err}"
    );
    assert_eq!(state(&launch, 0).as_deref(), Some("stopped"));
    assert!(
        lines(&metrics) < 20,
        "the signal came too late to test anything"
    );

    let o = task_process(&script, 0).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("resuming"), "{}", stderr(&o));
    assert_eq!(state(&launch, 0).as_deref(), Some("done"));
    assert_same_run(&runs_a.join("solo"), &runs_b.join("solo"));
    let o = task_process(&script, 0).output().unwrap();
    assert!(
        o.status.success() && stderr(&o).contains("already done"),
        "{}",
        stderr(&o)
    );
}

/// `--serve`: the task starts the server, waits for its health URL, trains against it and
/// stops it at exit; a server that exits first fails the task with its log.
#[test]
fn a_task_starts_waits_for_and_stops_its_server() {
    let work = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let serve = format!(
        "{} llm serve-scripted --samples 12 --spans 3 --seed 7 --port {port}",
        memskill_bin().display()
    );
    let extra: Vec<String> = [
        "--serve",
        &serve,
        "--set",
        "executor.backend=\"openai\"",
        "--set",
        &format!("executor.base_urls=[\"http://127.0.0.1:{port}/v1\"]"),
        "--set",
        "executor.model=\"scripted\"",
        "--set",
        "run.inner_epochs=2",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let runs = work.path().join("runs");
    let script = script_of(&runs, "served", &extra, "");
    let o = task_process(&script, 0).output().unwrap();
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains(&format!(
            "the server answers at http://127.0.0.1:{port}/v1/models"
        )),
        "{err}"
    );
    assert_eq!(lines(&runs.join("served/metrics.jsonl")), 4, "{err}");
    // stopped at exit: nothing listens on its port any more
    wait_for("the server to stop", Duration::from_secs(10), || {
        std::net::TcpStream::connect(("127.0.0.1", port)).is_err()
    });

    let extra: Vec<String> = ["--serve", "echo no model here; exit 3", "--serve-health"]
        .iter()
        .map(|s| s.to_string())
        .chain([format!("http://127.0.0.1:{port}/health")])
        .collect();
    let script = script_of(&runs, "broken", &extra, "");
    let o = task_process(&script, 0).output().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("the server exited before"), "{err}");
    assert!(err.contains("no model here"), "{err}");
    assert_eq!(
        state(&runs.join("launch/broken"), 0).as_deref(),
        Some("failed")
    );
    assert!(
        !runs.join("broken").exists(),
        "no training without the server"
    );
}

/// Where sbatch is missing the launch says so and keeps its script, index and folder (a
/// second launch of the name is refused; `--resume` tries again); a bad sweep value fails
/// before anything is written, naming the task.
#[test]
fn a_launch_without_sbatch_or_with_a_bad_point_says_so() {
    let work = tempfile::tempdir().unwrap();
    let runs = work.path().join("runs");
    let no_slurm = |args: &[String]| {
        Command::new(memskill_bin())
            .args(args)
            .env("PATH", work.path().join("empty"))
            .output()
            .unwrap()
    };
    let a = sweep_args(&runs, "nosb", "1e-3,3e-3");
    let o = no_slurm(&a);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("running sbatch") && err.contains("is this a Slurm login node?"),
        "{err}"
    );
    assert!(err.contains("launch slurm --resume --name nosb"), "{err}");
    let dir = runs.join("launch/nosb");
    let script = std::fs::read_to_string(dir.join("job.sbatch")).unwrap();
    assert!(script.contains("#SBATCH --array=0-1\n"), "{script}");
    let index: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("index.json")).unwrap()).unwrap();
    assert_eq!(index["tasks"].as_array().unwrap().len(), 2);
    assert!(index["jobs"].as_array().unwrap().is_empty());
    assert!(index["tasks"][1]["command"]
        .as_str()
        .unwrap()
        .contains("--set ppo.lr=3e-3"));

    let err = stderr(&no_slurm(&a));
    assert!(err.contains("launch nosb exists"), "{err}");
    let again: Vec<String> = [
        "launch",
        "slurm",
        "--resume",
        "--name",
        "nosb",
        "--runs-dir",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([runs.display().to_string()])
    .collect();
    let o = no_slurm(&again);
    let err = stderr(&o);
    assert!(
        err.contains("2 tasks, 0 done, 0 in Slurm's queue, 2 to submit"),
        "{err}"
    );
    assert!(err.contains("running sbatch"), "{err}");

    let mut bad = sweep_args(&runs, "bad", "1e-3,-1");
    bad.push("--dry-run".into());
    let o = no_slurm(&bad);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("the config of task 1 (ppo.lr=-1)"), "{err}");
    assert!(!runs.join("launch/bad").exists());

    // a run of the same name from elsewhere is never taken over
    std::fs::create_dir_all(runs.join("taken-p1")).unwrap();
    let mut taken = sweep_args(&runs, "taken", "1e-3,3e-3");
    taken.push("--dry-run".into());
    let err = stderr(&no_slurm(&taken));
    assert!(err.contains("taken-p1 of task 1 exists already"), "{err}");
}

/// A one-node Slurm of the test's own (stopped on drop).
struct TempSlurm {
    dir: tempfile::TempDir,
    conf: PathBuf,
}

impl TempSlurm {
    fn start() -> Option<TempSlurm> {
        let dir = tempfile::tempdir().ok()?;
        let script = repo_root().join("scripts/cluster/slurm.sh");
        let o = Command::new(&script)
            .arg("start")
            .arg(dir.path().join("slurm"))
            .output();
        match o {
            Ok(o) if o.status.success() => {
                let out = String::from_utf8_lossy(&o.stdout);
                let conf = PathBuf::from(out.lines().last().unwrap_or("").trim());
                Some(TempSlurm { dir, conf })
            }
            Ok(o) => {
                println!(
                    "skipped: no Slurm could be started ({}): {}",
                    o.status,
                    String::from_utf8_lossy(&o.stderr).trim()
                );
                None
            }
            Err(e) => {
                println!("skipped: {}: {e}", script.display());
                None
            }
        }
    }

    fn cmd(&self, prog: &str, args: &[&str]) -> Output {
        Command::new(prog)
            .args(args)
            .env("SLURM_CONF", &self.conf)
            .output()
            .unwrap_or_else(|e| panic!("{prog}: {e}"))
    }

    /// [`cmd`](Self::cmd), again for up to 30 s while Slurm answers "try again later" (a job
    /// between states, e.g. while its batch step starts).
    fn retry(&self, prog: &str, args: &[&str]) -> Output {
        let start = Instant::now();
        loop {
            let o = self.cmd(prog, args);
            if o.status.success()
                || !stderr(&o).contains("try again later")
                || start.elapsed() > Duration::from_secs(30)
            {
                return o;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// `scancel ARGS` until `arrived` says its signal did. scancel's own status is not used:
    /// where the task requeues itself at once, scancel 22.05 can go on retrying its request
    /// ("Job can not be altered now, try again later") for a minute after the signal was
    /// delivered; it is ended here once the signal has arrived.
    fn scancel(&self, args: &[&str], arrived: impl FnMut() -> bool) {
        let mut c = Command::new("scancel")
            .args(args)
            .env("SLURM_CONF", &self.conf)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("scancel runs");
        wait_for(
            &format!("scancel {}", args.join(" ")),
            Duration::from_secs(60),
            arrived,
        );
        if !matches!(c.try_wait(), Ok(Some(_))) {
            let _ = c.kill();
        }
        let _ = c.wait();
    }

    /// `squeue` rows (task id, state, reason) of the job array `job`.
    fn queue(&self, job: &str) -> Vec<(usize, String, String)> {
        let o = self.cmd(
            "squeue",
            &["--noheader", "--array", "--jobs", job, "--format=%K %T %r"],
        );
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter_map(|l| {
                let w: Vec<&str> = l.split_whitespace().collect();
                Some((
                    w.first()?.parse().ok()?,
                    w.get(1)?.to_string(),
                    w.get(2)?.to_string(),
                ))
            })
            .collect()
    }

    /// Waits until every task of `launch` is done; a requeued task's start is brought
    /// forward (Slurm holds a requeued job back for two minutes).
    fn wait_done(&self, launch: &Path, job: &str, n: usize) {
        wait_for(
            &format!("the tasks of job {job}"),
            Duration::from_secs(300),
            || {
                for (task, st, reason) in self.queue(job) {
                    if st == "PENDING" && reason == "BeginTime" {
                        let id = format!("JobId={job}_{task}");
                        self.cmd("scontrol", &["update", &id, "StartTime=now"]);
                    }
                }
                (0..n).all(|t| state(launch, t).as_deref() == Some("done"))
            },
        );
    }
}

impl Drop for TempSlurm {
    fn drop(&mut self) {
        let _ = Command::new(repo_root().join("scripts/cluster/slurm.sh"))
            .arg("stop")
            .arg(self.dir.path().join("slurm"))
            .status();
    }
}

/// The job id of a launch's `n`-th submission.
fn job_id(launch: &Path, n: usize) -> String {
    let t = std::fs::read_to_string(launch.join("index.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&t).unwrap();
    v["jobs"][n]["job_id"]
        .as_str()
        .expect("a job id")
        .to_string()
}

fn read_log(launch: &Path, job: &str, task: usize) -> String {
    std::fs::read_to_string(launch.join("logs").join(format!("{job}_{task}.out")))
        .unwrap_or_default()
}

/// The sweep on Slurm: a job array runs every point; preempted tasks end identical.
#[test]
fn a_sweep_runs_as_a_job_array_and_preempted_tasks_end_identical() {
    let Some(slurm) = TempSlurm::start() else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let (runs_a, runs_b) = (work.path().join("a"), work.path().join("b"));
    let o = run_memskill(
        &sweep_args(&runs_a, "sw", "1e-3,3e-3,1e-2"),
        Some(&slurm.conf),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let launch_a = runs_a.join("launch/sw");
    let job_a = job_id(&launch_a, 0);
    let script = std::fs::read_to_string(launch_a.join("job.sbatch")).unwrap();
    assert!(script.contains("#SBATCH --array=0-2\n"), "{script}");
    assert!(script.contains("#SBATCH --requeue\n"), "{script}");
    slurm.wait_done(&launch_a, &job_a, 3);
    let index: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(launch_a.join("index.json")).unwrap())
            .unwrap();
    assert_eq!(index["tasks"][2]["run_name"], "sw-p2");
    assert_eq!(index["tasks"][2]["sets"][0], "ppo.lr=1e-2");
    for t in 0..3 {
        assert_eq!(lines(&runs_a.join(format!("sw-p{t}/metrics.jsonl"))), 20);
    }

    // the same sweep and a fourth point, each task stopped another way mid-run
    let o = run_memskill(
        &sweep_args(&runs_b, "sw", "1e-3,3e-3,1e-2,3e-2"),
        Some(&slurm.conf),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let launch_b = runs_b.join("launch/sw");
    let job = job_id(&launch_b, 0);
    let mid_run = |t: usize| {
        let m = runs_b.join(format!("sw-p{t}/metrics.jsonl"));
        wait_for(
            &format!("task {t} to train"),
            Duration::from_secs(120),
            || lines(&m) >= 2,
        );
        format!("{job}_{t}")
    };
    let got = |t: usize, sig: &str| {
        let (l, job, sig) = (launch_b.clone(), job.clone(), format!("got {sig}"));
        move || read_log(&l, &job, t).contains(&sig)
    };
    // the time-limit warning: SIGUSR1 to the script only, which forwards it and requeues
    slurm.scancel(
        &["--batch", "--signal=USR1", &mid_run(0)],
        got(0, "SIGUSR1"),
    );
    // Slurm's own requeue: SIGTERM to every process of the job, then SIGKILL after KillWait
    let o = slurm.retry("scontrol", &["requeue", &mid_run(1)]);
    assert!(o.status.success(), "{}", stderr(&o));
    // a preemption's signal to the script and memskill both
    slurm.scancel(&["--full", "--signal=TERM", &mid_run(2)], got(2, "SIGTERM"));
    // a cancel: stays cancelled
    slurm.scancel(&[&mid_run(3)], got(3, "SIGTERM"));
    wait_for("the cancel", Duration::from_secs(60), || {
        state(&launch_b, 3).as_deref() == Some("stopped")
            && slurm.queue(&job).iter().all(|q| q.0 != 3)
    });
    slurm.wait_done(&launch_b, &job, 3);
    for (t, why) in [(0, "SIGUSR1"), (1, "SIGTERM"), (2, "SIGTERM")] {
        let log = read_log(&launch_b, &job, t);
        let stopped = format!("stopped by {why} after update");
        assert!(log.contains(&stopped), "task {t}:\n{log}");
        assert!(log.contains("resuming"), "task {t}:\n{log}");
        assert!(
            !log.contains("after update 20 ("),
            "task {t} was not stopped mid-run:\n{log}"
        );
        assert_same_run(
            &runs_a.join(format!("sw-p{t}")),
            &runs_b.join(format!("sw-p{t}")),
        );
    }
    assert!(read_log(&launch_b, &job, 0).contains(&format!("requeued {job}_0")));
    let log = read_log(&launch_b, &job, 1);
    assert!(
        log.contains("while Slurm ends the job (state COMPLETING)"),
        "{log}"
    );

    // the cancelled task: --resume submits it (only it) again, and it resumes
    let mut again = vec!["launch", "slurm", "--resume", "--name", "sw", "--runs-dir"]
        .into_iter()
        .map(str::to_string)
        .collect::<Vec<_>>();
    again.push(runs_b.display().to_string());
    let o = run_memskill(&again, Some(&slurm.conf));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("4 tasks, 3 done, 0 in Slurm's queue, 1 to submit"),
        "{}",
        stderr(&o)
    );
    let job2 = job_id(&launch_b, 1);
    slurm.wait_done(&launch_b, &job2, 4);
    assert!(read_log(&launch_b, &job2, 3).contains("resuming"));
    assert_eq!(lines(&runs_b.join("sw-p3/metrics.jsonl")), 20);
    let o = run_memskill(&again, Some(&slurm.conf));
    assert!(String::from_utf8_lossy(&o.stdout).contains("nothing to submit"));
}
