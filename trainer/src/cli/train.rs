//! `memskill train | eval | compare | plot | bench`: thin wrappers over the trainer library.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use memskill_trainer::config::Config;
use memskill_trainer::eval::{compare_table, evaluate, render_results_md, EvalOptions};
use memskill_trainer::train::{train as run_train, TrainOptions};

#[derive(clap::Args)]
pub struct TrainArgs {
    /// Config file (TOML). Optional with --resume (the run's resolved config is used).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Override a config key: --set ppo.lr=3e-4 (repeatable; values are TOML).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// Continue the run from its latest checkpoint.
    #[arg(long)]
    pub resume: bool,
    /// Run name (overrides run.name).
    #[arg(long)]
    pub run_name: Option<String>,
    /// Parent directory of run directories.
    #[arg(long, default_value = "runs")]
    pub runs_dir: PathBuf,
    /// Stop at the first checkpoint after this many updates (resume later with --resume).
    #[arg(long)]
    pub max_updates: Option<u64>,
    /// No progress bars; one log line per update instead.
    #[arg(long)]
    pub no_progress: bool,
}

#[derive(clap::Args)]
pub struct EvalArgs {
    /// Checkpoint directory, run directory (best, else latest checkpoint) or checkpoints dir.
    /// Required except for `--dataset alfworld` with a scripted actor.
    #[arg(long)]
    pub checkpoint: Option<PathBuf>,
    /// ALFWorld actor: llm | walkthrough | first-admissible (default: alfworld.actor, else llm).
    #[arg(long)]
    pub actor: Option<String>,
    /// Config for runs without a checkpoint (ALFWorld with a scripted actor).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// locomo | longmemeval | hotpotqa | synthetic | alfworld (default: the training dataset).
    #[arg(long)]
    pub dataset: Option<String>,
    /// train | val | test | all (default: eval.split).
    #[arg(long)]
    pub split: Option<String>,
    /// Answer at most this many queries.
    #[arg(long)]
    pub limit: Option<usize>,
    /// Override a config key of the checkpoint's config (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// Output directory (default: <run>/eval/<dataset>-<split>).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Method name in the results table (default: the run name).
    #[arg(long)]
    pub method: Option<String>,
    /// Also score answers with the LLM judge.
    #[arg(long)]
    pub judge: bool,
}

#[derive(clap::Args)]
pub struct CompareArgs {
    /// Run directories with eval results.
    #[arg(required = true)]
    pub runs: Vec<PathBuf>,
}

#[derive(clap::Args)]
pub struct PlotArgs {
    /// Run directory (runs/<name>).
    pub run: PathBuf,
}

#[derive(clap::Args)]
pub struct BenchArgs {
    /// What to benchmark: trainer.
    #[arg(default_value = "trainer")]
    pub what: String,
    /// Latency of the local OpenAI-compatible server, in milliseconds.
    #[arg(long, default_value_t = 1000)]
    pub latency_ms: u64,
    /// Episodes per batch.
    #[arg(long, default_value_t = 4)]
    pub batch: usize,
    /// Spans per episode.
    #[arg(long, default_value_t = 4)]
    pub spans: usize,
}

pub fn train(a: TrainArgs) -> Result<()> {
    let mut sets = a.sets.clone();
    if let Some(n) = &a.run_name {
        sets.push(format!("run.name={}", toml::Value::String(n.clone())));
    }
    let cfg = match (&a.config, a.resume) {
        (Some(p), _) => Config::load(p, &sets)?,
        (None, true) => {
            let name = a
                .run_name
                .clone()
                .context("--resume without --config needs --run-name")?;
            let p = a.runs_dir.join(&name).join("config.toml");
            Config::load(&p, &sets).with_context(|| format!("resuming run {name}"))?
        }
        (None, false) => bail!("--config FILE is required (or --resume --run-name NAME)"),
    };
    let opts = TrainOptions {
        runs_dir: a.runs_dir.clone(),
        resume: a.resume,
        max_updates: a.max_updates,
        progress: !a.no_progress,
        log_lines: a.no_progress,
    };
    let out = run_train(&cfg, &opts)?;
    let rewards: Vec<String> = out
        .outer_rewards
        .iter()
        .map(|r| format!("{r:.4}"))
        .collect();
    println!("run: {}", out.run_dir.display());
    println!(
        "updates: {} ({} in this invocation); mean reward per outer epoch: [{}]",
        out.update_step,
        out.updates_this_run,
        rewards.join(", ")
    );
    if let Some(c) = &out.last_checkpoint {
        println!("checkpoint: {}", c.display());
    }
    if out.finished {
        if let Some(e) = &out.export_dir {
            println!("exported skill bank: {}", e.display());
        }
        println!(
            "skill bank evolution: {}",
            out.run_dir.join("skills.md").display()
        );
    } else {
        println!(
            "stopped early at --max-updates; continue with --resume --run-name {}",
            cfg.run.name
        );
    }
    Ok(())
}

pub fn eval(a: EvalArgs) -> Result<()> {
    if a.dataset.as_deref() == Some("alfworld") {
        return alfworld_eval(a);
    }
    let checkpoint = a
        .checkpoint
        .context("--checkpoint is required (a run directory or a checkpoint directory)")?;
    let opts = EvalOptions {
        checkpoint,
        dataset: a.dataset,
        split: a.split,
        limit: a.limit,
        sets: a.sets,
        out: a.out,
        method: a.method,
        judge: a.judge,
    };
    let (r, dir) = evaluate(&opts)?;
    print!("{}", render_results_md(&r));
    println!("\nresults: {}", dir.join("results.json").display());
    Ok(())
}

/// `memskill eval --dataset alfworld`: settings from the checkpoint config's `[alfworld]`
/// table (keys: actor, split, workers, max_steps, games_root, python, bridge, timeout_secs),
/// overridable with `--set alfworld.KEY=VALUE`; the LLM actor uses the executor backend.
fn alfworld_eval(a: EvalArgs) -> Result<()> {
    use crate::cli::alfworld::{eval_with, AlfActor, AlfEvalArgs};
    use memskill_trainer::checkpoint::{resolve, Checkpoint};
    // Settings: the checkpoint's config, else --config, else the built-in defaults.
    let (cfg, run_dir) = match (&a.checkpoint, &a.config) {
        (Some(c), _) => {
            let ck_dir = resolve(c)?;
            let ck = Checkpoint::load(&ck_dir)?;
            let cfg = Config::from_toml_str(
                &ck.config_toml,
                &a.sets,
                &ck_dir.join("config.toml").display().to_string(),
            )?;
            let run_dir = ck_dir
                .parent()
                .and_then(|p| p.parent())
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from("."));
            (cfg, run_dir)
        }
        (None, Some(path)) => (
            Config::load(path, &a.sets)?,
            PathBuf::from("runs").join("alfworld-eval"),
        ),
        (None, None) => (
            Config::from_toml_str("", &a.sets, "<defaults>")?,
            PathBuf::from("runs").join("alfworld-eval"),
        ),
    };
    let t = &cfg.alfworld;
    let s = |k: &str| t.get(k).and_then(|v| v.as_str()).map(String::from);
    let u = |k: &str| {
        t.get(k)
            .and_then(|v| v.as_integer())
            .map(|x| x.max(0) as usize)
    };
    let actor = match a
        .actor
        .clone()
        .or_else(|| s("actor"))
        .as_deref()
        .unwrap_or("llm")
    {
        "llm" => AlfActor::Llm,
        "walkthrough" => AlfActor::Walkthrough,
        "first-admissible" => AlfActor::FirstAdmissible,
        other => bail!("alfworld.actor {other:?} is not llm | walkthrough | first-admissible"),
    };
    let split = a
        .split
        .clone()
        .or_else(|| s("split"))
        .unwrap_or_else(|| "valid_unseen".into());
    let args = AlfEvalArgs {
        split: split.clone(),
        limit: a.limit,
        actor,
        workers: u("workers").unwrap_or(2),
        max_steps: u("max_steps").unwrap_or(50),
        out: Some(
            a.out
                .clone()
                .unwrap_or_else(|| run_dir.join("eval").join(format!("alfworld-{split}"))),
        ),
        games_root: s("games_root").map(PathBuf::from),
        python: s("python").map(PathBuf::from),
        bridge: s("bridge").map(PathBuf::from),
        timeout_secs: u("timeout_secs").unwrap_or(120) as u64,
    };
    let llm = if actor == AlfActor::Llm {
        let mut f = memskill_trainer::backends::BackendFactory::new(&run_dir, Vec::new());
        Some(f.get(&cfg.executor, "executor")?)
    } else {
        None
    };
    eval_with(&args, llm, None)?;
    Ok(())
}

pub fn compare(a: CompareArgs) -> Result<()> {
    print!("{}", compare_table(&a.runs)?);
    Ok(())
}

pub fn plot(a: PlotArgs) -> Result<()> {
    for f in memskill_trainer::plot::plot_run(&a.run)? {
        println!("{}", f.display());
    }
    Ok(())
}

pub fn bench(a: BenchArgs) -> Result<()> {
    match a.what.as_str() {
        "trainer" => {
            let r = memskill_trainer::bench::bench_inner_epoch(a.latency_ms, a.batch, a.spans)?;
            println!("{}", r.report());
            Ok(())
        }
        other => bail!("unknown benchmark {other:?} (known: trainer)"),
    }
}
