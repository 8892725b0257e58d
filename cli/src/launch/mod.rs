//! `memskill launch slurm`: a sweep (points x seeds) as one Slurm job array. The plan, the
//! script and the index are pure ([`plan`], [`slurm`]); this module is the edge: it reads
//! the config (every task's is checked before anything is made), writes the launch folder
//! (`<runs dir>/launch/<name>/`: `job.sbatch`, `index.json`, `logs/`, `tasks/`) and submits
//! with `sbatch --parsable`. `--resume` submits again the tasks that are neither done nor
//! in Slurm's queue.

pub mod plan;
pub mod slurm;

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use memskill_core::fsio::{read_user_text, write_atomic};
use memskill_trainer::config::Config;
use serde::{Deserialize, Serialize};

use plan::{shell_line, Task};
use slurm::{array_spec, Resources, Serve, TaskLine};

#[derive(clap::Subcommand)]
pub enum LaunchCmd {
    /// Train a sweep on Slurm: one sbatch array task per sweep point and seed, each
    /// checkpointing on SIGTERM/SIGUSR1 and requeued to resume (docs/cluster.md).
    Slurm(SlurmArgs),
}

#[derive(clap::Args)]
pub struct SlurmArgs {
    /// Config file (TOML) of every task. Not with --resume.
    #[arg(long, required_unless_present = "resume", conflicts_with = "resume")]
    pub config: Option<PathBuf>,
    /// Override a config key of every task (repeatable; values are TOML).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// One task per value: `--sweep ppo.lr=1e-3,3e-3` (repeat for a grid).
    #[arg(long, value_name = "KEY=V1,V2,...")]
    pub sweep: Vec<String>,
    /// Run every point once per seed (`run.seed`): `1-5`, `1,3,7`.
    #[arg(long)]
    pub seeds: Option<String>,
    /// The launch's name: its folder `<runs-dir>/launch/<name>/`, the Slurm job name
    /// `memskill-<name>` and the prefix of its run names (default: the config's file name and
    /// the time).
    #[arg(long)]
    pub name: Option<String>,
    /// Parent directory of the run directories (and of launch/).
    #[arg(long, default_value = "runs")]
    pub runs_dir: PathBuf,
    /// Slurm partition.
    #[arg(long)]
    pub partition: Option<String>,
    /// Slurm account.
    #[arg(long)]
    pub account: Option<String>,
    /// GPUs per task (`--gpus`).
    #[arg(long)]
    pub gpus: Option<u32>,
    /// CPUs per task (`--cpus-per-task`).
    #[arg(long)]
    pub cpus: Option<u32>,
    /// Memory per task (`--mem`, e.g. 64G).
    #[arg(long)]
    pub mem: Option<String>,
    /// Time limit per task (`--time`, e.g. 04:00:00).
    #[arg(long)]
    pub time: Option<String>,
    /// Seconds before the time limit Slurm sends SIGUSR1 (`--signal=B:USR1@N`): longer than
    /// one update, so the task stops at a checkpoint and is requeued in time.
    #[arg(long, default_value_t = 300)]
    pub signal_grace: u32,
    /// At most this many tasks at once (`--array=...%N`).
    #[arg(long)]
    pub max_parallel: Option<usize>,
    /// A further sbatch option for the script, one argument (repeatable): `--sbatch-arg=--qos=high`.
    #[arg(long = "sbatch-arg", value_name = "OPTION", allow_hyphen_values = true)]
    pub sbatch_args: Vec<String>,
    /// A server each task starts before training (run by bash in a session of its own,
    /// stopped at the end): `--serve "vllm serve MODEL --port 8000"`.
    #[arg(long, value_name = "COMMAND")]
    pub serve: Option<String>,
    /// The URL that answers once the server is ready (default: http://127.0.0.1:PORT/v1/models,
    /// PORT from the command's --port, else 8000).
    #[arg(long, requires = "serve")]
    pub serve_health: Option<String>,
    /// Seconds to wait for the server's health URL.
    #[arg(long, default_value_t = 1800, requires = "serve")]
    pub serve_timeout: u64,
    /// The memskill binary the tasks run (default: this one).
    #[arg(long)]
    pub memskill: Option<PathBuf>,
    /// Print the script (stdout) and the tasks (stderr); write and submit nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Submit again the tasks of launch --name that are neither done nor in Slurm's queue
    /// (each resumes its run from its latest checkpoint).
    #[arg(long, requires = "name")]
    pub resume: bool,
}

/// `index.json` of a launch folder: what each array task runs.
#[derive(Debug, Serialize, Deserialize)]
pub struct Index {
    pub name: String,
    pub script: PathBuf,
    pub config: PathBuf,
    pub sets: Vec<String>,
    pub runs_dir: PathBuf,
    pub workdir: PathBuf,
    pub memskill: PathBuf,
    pub max_parallel: Option<usize>,
    pub tasks: Vec<IndexTask>,
    /// Every submission: the Slurm job id and the array ids it ran.
    pub jobs: Vec<Job>,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct IndexTask {
    #[serde(flatten)]
    pub task: Task,
    pub run_dir: PathBuf,
    /// The fresh command of the task (a resumed task runs `memskill train --resume`).
    pub command: String,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct Job {
    pub job_id: String,
    pub array: String,
    pub submitted_at: String,
}

pub fn run(c: LaunchCmd) -> Result<()> {
    match c {
        LaunchCmd::Slurm(a) if a.resume => resume(&a),
        LaunchCmd::Slurm(a) => launch(&a),
    }
}

/// The launch folder of `name` under `runs_dir`.
fn launch_dir(runs_dir: &Path, name: &str) -> PathBuf {
    runs_dir.join("launch").join(name)
}

/// A fresh launch: plan, check, write, submit.
fn launch(a: &SlurmArgs) -> Result<()> {
    let config_arg = a.config.as_ref().context("--config is required")?;
    if a.max_parallel == Some(0) {
        bail!("--max-parallel must be at least 1");
    }
    let config = std::fs::canonicalize(config_arg)
        .with_context(|| format!("--config {}", config_arg.display()))?;
    let name = match &a.name {
        Some(n) => n.clone(),
        None => default_name(&config),
    };
    let runs_dir = std::path::absolute(&a.runs_dir).context("--runs-dir")?;
    let workdir = std::env::current_dir().context("the current folder")?;
    let grid = crate::train::sweep_grid(&a.sweep)?;
    let seeds = a.seeds.as_deref().map(plan::parse_seeds).transpose()?;
    let tasks = plan::tasks(&name, &grid, seeds.as_deref().unwrap_or(&[]))?;
    for t in &tasks {
        let mut sets = a.sets.clone();
        sets.extend(t.sets.iter().cloned());
        sets.extend(t.seed.map(|s| format!("run.seed={s}")));
        Config::load(&config, &sets)
            .with_context(|| format!("the config of task {} ({})", t.task, t.sets.join(" ")))?;
    }
    let dir = launch_dir(&runs_dir, &name);
    check_paths(&[&dir, &workdir, &runs_dir, &config])?;
    check_sbatch_values(a)?;
    if dir.exists() && !a.dry_run {
        bail!(
            "launch {name} exists ({}): continue it with --resume --name {name}, or choose another --name",
            dir.display()
        );
    }
    if let Some(t) = tasks.iter().find(|t| runs_dir.join(&t.run_name).exists()) {
        bail!(
            "run {} of task {} exists already (not made by this launch): choose another --name",
            runs_dir.join(&t.run_name).display(),
            t.task
        );
    }
    let memskill = memskill_binary(a.memskill.as_deref())?;
    let index = Index {
        script: dir.join("job.sbatch"),
        config,
        sets: a.sets.clone(),
        runs_dir,
        workdir,
        memskill,
        max_parallel: a.max_parallel,
        tasks: Vec::new(),
        jobs: Vec::new(),
        name,
    };
    let index = with_tasks(index, tasks);
    let text = render(&index, a)?;
    if a.dry_run {
        print!("{text}");
        print_tasks(&index);
        eprintln!("dry run: nothing written or submitted");
        return Ok(());
    }
    write_launch(&dir, &index, &text)?;
    submit(index, &dir, None)
}

/// The index's task rows: each task's run folder and fresh command.
fn with_tasks(mut index: Index, tasks: Vec<Task>) -> Index {
    index.tasks = tasks
        .into_iter()
        .map(|t| {
            let mut cmd = vec![index.memskill.display().to_string(), "train".into()];
            cmd.extend(plan::train_args(
                &t,
                &index.config,
                &index.sets,
                &index.runs_dir,
            ));
            IndexTask {
                run_dir: index.runs_dir.join(&t.run_name),
                command: shell_line(&cmd),
                task: t,
            }
        })
        .collect();
    index
}

/// The script of a launch.
fn render(index: &Index, a: &SlurmArgs) -> Result<String> {
    let fresh: Vec<Vec<String>> = index
        .tasks
        .iter()
        .map(|t| {
            let mut v = vec![];
            v.extend(plan::train_args(
                &t.task,
                &index.config,
                &index.sets,
                &index.runs_dir,
            ));
            v
        })
        .collect();
    let lines: Vec<TaskLine> = index
        .tasks
        .iter()
        .zip(&fresh)
        .map(|(t, f)| TaskLine {
            task: t.task.task,
            run_name: &t.task.run_name,
            fresh: f,
        })
        .collect();
    let resources = Resources {
        partition: a.partition.clone(),
        account: a.account.clone(),
        gpus: a.gpus,
        cpus: a.cpus,
        mem: a.mem.clone(),
        time: a.time.clone(),
        signal_grace: a.signal_grace,
        max_parallel: a.max_parallel,
        extra: a.sbatch_args.clone(),
    };
    let serve = a.serve.as_ref().map(|c| Serve {
        health_url: a.serve_health.clone().unwrap_or_else(|| default_health(c)),
        command: c.clone(),
        timeout_secs: a.serve_timeout,
    });
    let ids: Vec<usize> = index.tasks.iter().map(|t| t.task.task).collect();
    let dir = launch_dir(&index.runs_dir, &index.name);
    Ok(slurm::script(&slurm::Script {
        name: &index.name,
        launch_dir: &dir,
        workdir: &index.workdir,
        runs_dir: &index.runs_dir,
        memskill: &index.memskill,
        tasks: &lines,
        resources: &resources,
        serve: serve.as_ref(),
        array: &array_spec(&ids, a.max_parallel),
    }))
}

/// The binary the tasks run: `--memskill`, else this process's when it is a memskill binary
/// (not the Python interpreter running the package's console script).
fn memskill_binary(given: Option<&Path>) -> Result<PathBuf> {
    if let Some(p) = given {
        return std::path::absolute(p).context("--memskill");
    }
    let exe = std::env::current_exe().context("finding this memskill binary")?;
    let stem = exe.file_stem().map(|s| s.to_string_lossy().to_string());
    if !stem.is_some_and(|s| s.starts_with("memskill")) {
        bail!(
            "this process is {}, not the memskill binary: pass --memskill PATH (the binary the tasks run)",
            exe.display()
        );
    }
    Ok(exe)
}

/// `<config file stem>-YYYYMMDD-HHMMSS` (UTC).
fn default_name(config: &Path) -> String {
    let stem = config
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_default();
    let stem: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let now = memskill_registry::clock::now();
    let stamp: String = now.chars().filter(char::is_ascii_digit).take(14).collect();
    format!(
        "{}-{}-{}",
        if stem.is_empty() { "launch" } else { &stem },
        &stamp[..8],
        &stamp[8..]
    )
}

/// The server's health URL when `--serve-health` is not given: its `/v1/models` on the port of
/// the command's `--port` (8000 when it names none).
pub fn default_health(command: &str) -> String {
    let words = shlex::split(command).unwrap_or_default();
    let mut port = "8000".to_string();
    for (i, w) in words.iter().enumerate() {
        if let Some(p) = w.strip_prefix("--port=") {
            port = p.to_string();
        } else if w == "--port" {
            if let Some(p) = words.get(i + 1) {
                port = p.clone();
            }
        }
    }
    format!("http://127.0.0.1:{port}/v1/models")
}

/// Paths the script names must fit in it: no line breaks, and no `%` in the launch folder
/// (sbatch reads `%` in `--output` as a pattern).
fn check_paths(paths: &[&Path]) -> Result<()> {
    for p in paths {
        let s = p.display().to_string();
        if s.contains(['\n', '\r']) {
            bail!("the path {s:?} holds a line break: it cannot go into a job script");
        }
    }
    let out = paths[0].display().to_string();
    if out.contains('%') {
        bail!("the launch folder {out} holds '%', which sbatch reads as a pattern in --output");
    }
    Ok(())
}

/// The values that go onto `#SBATCH` lines (or the health check): a line break would end the
/// comment and run the rest of the value as a command in every task, so control characters
/// are refused, naming the option.
fn check_sbatch_values(a: &SlurmArgs) -> Result<()> {
    let mut values: Vec<(&str, &str)> = [
        ("--partition", &a.partition),
        ("--account", &a.account),
        ("--mem", &a.mem),
        ("--time", &a.time),
        ("--serve-health", &a.serve_health),
    ]
    .into_iter()
    .filter_map(|(k, v)| v.as_deref().map(|v| (k, v)))
    .collect();
    values.extend(a.sbatch_args.iter().map(|v| ("--sbatch-arg", v.as_str())));
    values.extend(a.serve.iter().map(|v| ("--serve", v.as_str())));
    for (opt, v) in values {
        if v.chars().any(char::is_control) {
            bail!("{opt} {v:?} holds a control character (a line break?): it cannot go into a job script");
        }
    }
    Ok(())
}

/// Creates the launch folder with its script and index.
fn write_launch(dir: &Path, index: &Index, text: &str) -> Result<()> {
    for d in [dir.join("logs"), dir.join("tasks")] {
        std::fs::create_dir_all(&d).with_context(|| format!("creating {}", d.display()))?;
    }
    write_atomic(&index.script, text.as_bytes())?;
    write_index(dir, index)
}

fn write_index(dir: &Path, index: &Index) -> Result<()> {
    let mut json = serde_json::to_string_pretty(index)?;
    json.push('\n');
    write_atomic(&dir.join("index.json"), json.as_bytes())?;
    Ok(())
}

/// The task table on stderr.
fn print_tasks(index: &Index) {
    for t in &index.tasks {
        eprintln!("task {}: {}", t.task.task, t.command);
    }
}

/// `sbatch --parsable [--array=IDS] SCRIPT`; the job goes into the index.
fn submit(mut index: Index, dir: &Path, only: Option<&[usize]>) -> Result<()> {
    let array = only.map(|ids| array_spec(ids, index.max_parallel));
    let mut cmd = Command::new("sbatch");
    cmd.arg("--parsable");
    if let Some(a) = &array {
        cmd.arg(format!("--array={a}"));
    }
    cmd.arg(&index.script);
    let again = format!(
        "memskill launch slurm --resume --name {} --runs-dir {}",
        index.name,
        index.runs_dir.display()
    );
    let out = cmd.output().map_err(|e| {
        anyhow::anyhow!(
            "running sbatch: {e} (is this a Slurm login node?); the script is {}: submit it with sbatch, or later with `{again}`",
            index.script.display()
        )
    })?;
    if !out.status.success() {
        bail!(
            "sbatch {} failed ({}): {}\nthe script stays; submit again with `{again}`",
            index.script.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let job_id = stdout
        .trim()
        .split(';')
        .next()
        .filter(|j| !j.is_empty() && j.chars().all(|c| c.is_ascii_digit()))
        .with_context(|| format!("sbatch --parsable printed {stdout:?}, not a job id"))?
        .to_string();
    let ids: Vec<usize> = index.tasks.iter().map(|t| t.task.task).collect();
    let array = array.unwrap_or_else(|| array_spec(&ids, index.max_parallel));
    index.jobs.push(Job {
        job_id: job_id.clone(),
        array: array.clone(),
        submitted_at: memskill_registry::clock::now(),
    });
    println!(
        "submitted job {job_id} (array {array}) of launch {}",
        index.name
    );
    write_index(dir, &index).with_context(|| {
        format!("job {job_id} was submitted but could not be recorded in the index; `--resume` asks squeue for every job named memskill-{}", index.name)
    })?;
    println!("script: {}", index.script.display());
    println!("index:  {}", dir.join("index.json").display());
    println!("logs:   {}", dir.join("logs").display());
    Ok(())
}

/// The state a task's script last recorded (`tasks/<id>.json`), if any.
fn task_state(dir: &Path, task: usize) -> Result<Option<String>> {
    let p = dir.join("tasks").join(format!("{task}.json"));
    if !p.exists() {
        return Ok(None);
    }
    let text = read_user_text(&p, 1 << 16, "task state")?;
    let v: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{}: not JSON", p.display()))?;
    Ok(v.get("state").and_then(|s| s.as_str()).map(str::to_string))
}

/// `--resume`: submit the tasks that are neither done nor queued.
fn resume(a: &SlurmArgs) -> Result<()> {
    let name = a.name.as_deref().context("--resume needs --name")?;
    let runs_dir = std::path::absolute(&a.runs_dir).context("--runs-dir")?;
    let dir = launch_dir(&runs_dir, name);
    let path = dir.join("index.json");
    let text = read_user_text(&path, 256 << 20, "launch index")
        .with_context(|| format!("--resume: no launch {name} under {}", runs_dir.display()))?;
    let index: Index = serde_json::from_str(&text)
        .with_context(|| format!("{}: not a launch index", path.display()))?;
    let queued = match queued_tasks(&index) {
        Ok(q) => q,
        // a dry run also works where Slurm is not (to read a launch's state)
        Err(e) if a.dry_run => {
            eprintln!("warning: {e:#}; counting no task as queued");
            Vec::new()
        }
        Err(e) => return Err(e),
    };
    let (mut done, mut todo) = (0, Vec::new());
    for t in &index.tasks {
        let id = t.task.task;
        match task_state(&dir, id)? {
            Some(s) if s == "done" => done += 1,
            _ if queued.contains(&id) => {}
            _ => todo.push(id),
        }
    }
    eprintln!(
        "launch {name}: {} tasks, {done} done, {} in Slurm's queue, {} to submit",
        index.tasks.len(),
        queued.len(),
        todo.len()
    );
    if todo.is_empty() {
        println!("nothing to submit");
        return Ok(());
    }
    if a.dry_run {
        println!(
            "would submit: sbatch --parsable --array={} {}",
            array_spec(&todo, index.max_parallel),
            index.script.display()
        );
        return Ok(());
    }
    submit(index, &dir, Some(&todo))
}

/// The array ids of the launch's jobs that Slurm still holds (pending or running).
/// With no job recorded (a submission whose index write failed), every job of the launch's
/// name counts.
fn queued_tasks(index: &Index) -> Result<Vec<usize>> {
    let out = Command::new("squeue")
        .args(["--noheader", "--array", "--format=%F %K"])
        .arg(format!("--name=memskill-{}", index.name))
        .output();
    let out = match out {
        // no job recorded and no squeue here: nothing can have been submitted from here
        Err(e) if index.jobs.is_empty() && e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Vec::new())
        }
        r => r.map_err(|e| anyhow::anyhow!("running squeue: {e} (is this a Slurm login node?)"))?,
    };
    if !out.status.success() {
        bail!(
            "squeue failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(parse_queue(
        &String::from_utf8_lossy(&out.stdout),
        &index
            .jobs
            .iter()
            .map(|j| j.job_id.as_str())
            .collect::<Vec<_>>(),
    ))
}

/// The task ids in `squeue --format="%F %K"` lines whose array job is one of `jobs` (any,
/// when `jobs` is empty).
pub fn parse_queue(text: &str, jobs: &[&str]) -> Vec<usize> {
    let mut ids: Vec<usize> = text
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            let (job, task) = (w.next()?, w.next()?);
            (jobs.is_empty() || jobs.contains(&job))
                .then(|| task.parse().ok())
                .flatten()
        })
        .collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_health_url_follows_the_servers_port() {
        assert_eq!(
            default_health("vllm serve m --port 8123"),
            "http://127.0.0.1:8123/v1/models"
        );
        assert_eq!(
            default_health("sglang --port=9000 --x"),
            "http://127.0.0.1:9000/v1/models"
        );
        assert_eq!(
            default_health("vllm serve m"),
            "http://127.0.0.1:8000/v1/models"
        );
    }

    #[test]
    fn the_queue_is_read_for_our_jobs_only() {
        let q = "12 3\n12 0\n99 1\n12 N/A\n\n";
        assert_eq!(parse_queue(q, &["12"]), [0, 3]);
        assert!(parse_queue(q, &["7"]).is_empty());
        // no job recorded: every job of the launch's name
        assert_eq!(parse_queue(q, &[]), [0, 1, 3]);
    }

    #[test]
    fn sbatch_values_with_line_breaks_are_refused() {
        use clap::Parser;
        #[derive(Parser)]
        struct T {
            #[command(flatten)]
            a: SlurmArgs,
        }
        let parse = |extra: &[&str]| {
            let mut v = vec!["t", "--config", "c.toml"];
            v.extend_from_slice(extra);
            T::try_parse_from(v).unwrap().a
        };
        assert!(check_sbatch_values(&parse(&["--partition", "gpu", "--time", "08:00:00"])).is_ok());
        for bad in [
            ["--partition", "gpu\nrm -rf ~"],
            ["--time", "1:00\r"],
            ["--sbatch-arg", "--qos=high\necho pwned"],
            ["--mem", "4G\u{0}"],
        ] {
            let a = parse(&[bad[0], bad[1]]);
            let e = check_sbatch_values(&a).unwrap_err().to_string();
            assert!(e.contains(bad[0]) && e.contains("control character"), "{e}");
        }
    }

    #[test]
    fn paths_with_line_breaks_or_a_percent_are_refused() {
        assert!(check_paths(&[Path::new("/a b/c")]).is_ok());
        assert!(check_paths(&[Path::new("/a\nb")]).is_err());
        assert!(check_paths(&[Path::new("/a%j")]).is_err());
        assert!(check_paths(&[Path::new("/ok"), Path::new("/x%y")]).is_ok());
    }

    #[test]
    fn the_default_name_is_the_config_and_the_time() {
        let n = default_name(Path::new("/c/synthetic.toml"));
        assert!(n.starts_with("synthetic-"), "{n}");
        assert_eq!(n.len(), "synthetic-20261207-180909".len(), "{n}");
        memskill_trainer::config::check_run_name(&n).unwrap();
    }
}
