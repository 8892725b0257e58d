//! `memskill train | eval | compare | plot | bench`: thin wrappers over the trainer library.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use memskill_trainer::config::{ActorKind, Config, Dataset};
use memskill_trainer::eval::{compare_table, evaluate, render_results_md, EvalOptions};
use memskill_trainer::train::{train as run_train, TrainOptions};

use crate::shell::shell_word;
use crate::signals::{Interrupted, StopOnSignal};

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
    /// Check the config, data, assets and bank, print the plan (updates, episodes, LLM calls
    /// per role, the servers it would use), and stop: nothing is made, no server contacted.
    #[arg(long)]
    pub dry_run: bool,
    /// What a second SIGTERM, SIGINT or SIGUSR1 does while the run stops at its safe point:
    /// `end` the process at once (the default, for Ctrl-C twice), or `ignore` it and go on
    /// stopping (job scripts whose scheduler signals both the script and memskill, and ends
    /// the job with SIGKILL when its grace is over; `memskill launch slurm` uses it).
    #[arg(long, value_enum, default_value_t = SecondSignal::End)]
    pub second_signal: SecondSignal,
}

/// `train --second-signal`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SecondSignal {
    End,
    Ignore,
}

#[derive(clap::Args)]
pub struct EvalArgs {
    /// Checkpoint directory, run directory (best, else latest checkpoint) or checkpoints dir.
    /// Required except for `--dataset alfworld` with a scripted actor.
    #[arg(long)]
    pub checkpoint: Option<PathBuf>,
    /// ALFWorld actor: llm | walkthrough | first-admissible (default: alfworld.actor, else llm).
    #[arg(long, value_parser = |s: &str| s.parse::<ActorKind>())]
    pub actor: Option<ActorKind>,
    /// Config for runs without a checkpoint (ALFWorld with a scripted actor).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// locomo | longmemeval | hotpotqa | msc | synthetic | alfworld (default: the training dataset).
    #[arg(long, value_parser = |s: &str| s.parse::<Dataset>())]
    pub dataset: Option<Dataset>,
    /// train | val | test | all (default: eval.split); ALFWorld: valid_seen, valid_unseen,
    /// comma-separated (default: alfworld.split).
    #[arg(long)]
    pub split: Option<String>,
    /// Answer at most this many queries (ALFWorld: games per split); must be >= 1.
    #[arg(long)]
    pub limit: Option<usize>,
    /// Override a config key of the checkpoint's config (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// Output directory (default: <run>/eval/<dataset>-<split>).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Method name in the results table (default: the run name). The names no-memory,
    /// raw-rag, static-skills, chain-of-notes and read-agent run that baseline instead, with
    /// no checkpoint: `--config` gives the dataset and the models (results in
    /// runs/baselines/<method>/).
    #[arg(long)]
    pub method: Option<String>,
    /// Do not score answers with the LLM judge (by default evaluation reports F1 and the
    /// judge score, as the reference does).
    #[arg(long)]
    pub no_judge: bool,
    /// Check the evaluation's config, data and assets and print its plan (questions, LLM
    /// calls per role, the servers it would use), then stop: nothing is written, no server
    /// contacted. A checkpoint evaluation only.
    #[arg(long)]
    pub dry_run: bool,
    /// Evaluate once per value: `--sweep eval.top_k=3,5,7` (repeat for a grid, e.g. with
    /// `--sweep data.path=eval_50.json,eval_100.json,eval_200.json` for the HotpotQA context
    /// length). Each point is written to <out>/<key=value,...>/ and labelled in the method
    /// name; memory banks are reused from the cache wherever the swept key leaves them
    /// unchanged.
    #[arg(long, value_name = "KEY=V1,V2,...")]
    pub sweep: Vec<String>,
    /// Evaluate an external memory system: the command that starts its adapter (split like a
    /// shell would, run without one), speaking the JSON-lines protocol of
    /// docs/adapter-protocol.md. Needs --method NAME and --config.
    #[arg(long, value_name = "CMD ARGS")]
    pub adapter: Option<String>,
    /// The adapter's time limit per request kind, `KIND=SECONDS` (reset, add, build,
    /// retrieve, close, or all; repeatable). A request past it is a counted error and the
    /// adapter is stopped.
    #[arg(long = "adapter-timeout", value_name = "KIND=SECONDS")]
    pub adapter_timeouts: Vec<String>,
}

/// The grid of `--sweep` arguments: every combination as a list of `key=value` sets.
pub fn sweep_grid(sweeps: &[String]) -> Result<Vec<Vec<String>>> {
    let mut grid: Vec<Vec<String>> = vec![Vec::new()];
    for s in sweeps {
        let (key, values) = s
            .split_once('=')
            .with_context(|| format!("--sweep {s:?}: expected KEY=V1,V2,..."))?;
        let vals: Vec<&str> = values
            .split(',')
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .collect();
        if key.trim().is_empty() || vals.is_empty() {
            bail!("--sweep {s:?}: expected KEY=V1,V2,...");
        }
        grid = grid
            .into_iter()
            .flat_map(|g| {
                vals.iter().map(move |v| {
                    let mut g = g.clone();
                    g.push(format!("{}={v}", key.trim()));
                    g
                })
            })
            .collect();
    }
    Ok(grid)
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
    /// What to benchmark: encoder | ppo | llm | all (ours vs baseline, interleaved) |
    /// trainer (inner epoch vs critical path) | alfworld (bridge throughput).
    #[arg(default_value = "all")]
    pub what: String,
    /// encoder / ppo / llm: rounds of (ours, baseline), at least 5.
    #[arg(long, default_value_t = 7)]
    pub rounds: usize,
    /// encoder / ppo / llm: measure even when the 1-minute load is above 0.5 per core (every
    /// result is then marked loaded).
    #[arg(long)]
    pub force: bool,
    /// encoder / ppo / llm: JSON-lines file the measurements are appended to.
    #[arg(long, default_value = "bench-results.jsonl")]
    pub json: PathBuf,
    /// encoder / ppo / llm: python of the baseline venv (default: the one
    /// scripts/bench/setup.sh makes in the cache).
    #[arg(long)]
    pub python: Option<PathBuf>,
    /// encoder / ppo / llm: measure ours only.
    #[arg(long)]
    pub no_baseline: bool,
    /// llm: GGUF file (default: the SmolLM2-135M Q4_1 asset). encoder: a MiniLM / BERT or
    /// Qwen3-Embedding folder, embedding LoCoMo sessions at batch 1 and 8 against
    /// sentence-transformers on the same folder (default: MiniLM on LoCoMo turns).
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// encoder --model: LoCoMo sessions embedded per round.
    #[arg(long, default_value_t = 8)]
    pub sessions: usize,
    /// llm: prompt tokens (at least).
    #[arg(long, default_value_t = 680)]
    pub prompt_tokens: usize,
    /// llm: decoded tokens.
    #[arg(long, default_value_t = 128)]
    pub decode_tokens: usize,
    /// trainer: latencies of the local OpenAI-compatible server, in milliseconds.
    #[arg(long, value_delimiter = ',', default_value = "1000,200")]
    pub latency_ms: Vec<u64>,
    /// trainer: state encoder, minilm (the real one) | hashing.
    #[arg(long, default_value = "minilm")]
    pub encoder: String,
    /// Episodes per batch.
    #[arg(long, default_value_t = 4)]
    pub batch: usize,
    /// Spans per episode.
    #[arg(long, default_value_t = 4)]
    pub spans: usize,
    /// alfworld: bridge processes compared with one.
    #[arg(long, default_value_t = 2)]
    pub workers: usize,
    /// alfworld: valid_unseen games whose walkthroughs are played.
    #[arg(long, default_value_t = 20)]
    pub games: usize,
}

pub fn train(a: TrainArgs) -> Result<()> {
    let mut sets = a.sets.clone();
    if let Some(n) = &a.run_name {
        memskill_trainer::config::check_run_name(n).context("--run-name")?;
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
    if a.dry_run {
        return dry_run(&cfg, &a);
    }
    if !a.resume {
        let bank = memskill_trainer::runtime::initial_bank(&cfg)?;
        if let Some(w) = top_k_warning(
            "controller.top_k",
            cfg.controller.top_k,
            bank.selectable().len(),
        ) {
            eprintln!("{w}");
        }
    }
    let signals = StopOnSignal::install_with(a.second_signal == SecondSignal::Ignore)
        .context("installing the signal handlers")?;
    let opts = TrainOptions {
        runs_dir: a.runs_dir.clone(),
        resume: a.resume,
        max_updates: a.max_updates,
        progress: !a.no_progress,
        log_lines: a.no_progress,
        stop: Some(signals.flag()),
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
    } else if out.interrupted {
        return Err(train_interrupted(&signals, &out, &cfg.run.name, &a.runs_dir).into());
    } else {
        println!(
            "stopped early at --max-updates; continue with --resume --run-name {}",
            cfg.run.name
        );
    }
    Ok(())
}

/// What a training run a signal stopped tells: the update and checkpoint it stopped at and
/// the command that continues it.
fn train_interrupted(
    signals: &StopOnSignal,
    out: &memskill_trainer::TrainOutcome,
    run_name: &str,
    runs_dir: &std::path::Path,
) -> Interrupted {
    let ck = out.last_checkpoint.as_ref().map_or_else(
        || "the run's latest".to_string(),
        |c| c.display().to_string(),
    );
    Interrupted {
        message: format!(
            "stopped by {} after update {} (checkpoint {ck}); nothing after it was lost\n\
             continue with: memskill train --resume --run-name {} --runs-dir {}",
            signals.received().unwrap_or("a stop request"),
            out.update_step,
            shell_word(run_name),
            shell_word(&runs_dir.display().to_string()),
        ),
    }
}

/// Runs the evaluation `run` with the signal handlers installed and its stop flag; an
/// evaluation a signal stopped becomes [`Interrupted`], with `rerun` (how to go on).
fn stoppable<T>(
    rerun: &str,
    run: impl FnOnce(std::sync::Arc<std::sync::atomic::AtomicBool>) -> Result<T>,
) -> Result<T> {
    let signals = StopOnSignal::install().context("installing the signal handlers")?;
    run(signals.flag()).map_err(|e| {
        if memskill_trainer::stop::is_interrupted(&e) {
            Interrupted {
                message: format!(
                    "stopped by {}: {e:#}\n{rerun}",
                    signals.received().unwrap_or("a stop request")
                ),
            }
            .into()
        } else {
            e
        }
    })
}

/// How to go on after a checkpoint evaluation stopped.
const EVAL_RERUN: &str = "memory banks built before the stop are in the evaluation cache: \
    run the same command again to finish (it reuses them)";

/// `train --dry-run`: the checks of `config check` and the plan of the run.
fn dry_run(cfg: &Config, a: &TrainArgs) -> Result<()> {
    let dir = a.runs_dir.join(&cfg.run.name);
    println!(
        "dry run: {} run {} ({})",
        if a.resume { "resume" } else { "a new" },
        cfg.run.name,
        dir.display()
    );
    let (problems, plan) = crate::config::report(cfg)?;
    if let Some(p) = plan {
        print!("{}", p.render(cfg));
    }
    if problems > 0 {
        bail!("{problems} problem(s) above: the run would fail");
    }
    println!("ok: nothing was made and no server contacted");
    Ok(())
}

/// `eval --dry-run`: the evaluation's files, servers and plan; nothing written or contacted.
fn eval_dry_run(cfg: &Config, a: &EvalArgs, ck: &std::path::Path) -> Result<()> {
    use memskill_trainer::inspect;
    println!("dry run: evaluate checkpoint {}", ck.display());
    let mut problems = inspect::missing_files(cfg);
    for e in inspect::endpoints(cfg) {
        println!("server (not contacted): {e}");
    }
    let split = qa_split(a.split.as_deref())?.unwrap_or(cfg.eval.split);
    match memskill_trainer::data::load_samples(&cfg.data, split, &cfg.eval.span_mode, cfg.run.seed)
    {
        Ok(samples) => {
            let spans: usize = samples.iter().map(|s| s.spans.len()).sum();
            let all: usize = samples.iter().map(|s| s.queries.len()).sum();
            let questions = a.limit.map_or(all, |l| l.min(all));
            let judged = if !a.no_judge && cfg.eval.judge {
                questions
            } else {
                0
            };
            println!(
                "evaluation: {} samples of {} ({split}), {spans} spans, {questions} questions\n\
                 LLM calls (at most, before retries; memory banks already cached skip theirs): \
                 executor {spans}, answer {questions}, judge {judged}",
                samples.len(),
                cfg.data.dataset.name(),
            );
        }
        Err(e) => problems.push(format!("data: {e:#}")),
    }
    for p in &problems {
        println!("problem: {p}");
    }
    if !problems.is_empty() {
        bail!(
            "{} problem(s) above: the evaluation would fail",
            problems.len()
        );
    }
    println!("ok: nothing was written and no server contacted");
    Ok(())
}

/// `--split` of a QA evaluation: read as text (the option also takes ALFWorld's split
/// folders) and parsed here.
fn qa_split(s: Option<&str>) -> Result<Option<memskill_trainer::config::SplitSpec>> {
    s.map(|s| s.parse().with_context(|| format!("--split {s:?}")))
        .transpose()
}

/// `top_k` above the number of selectable skills: the controller then selects every skill
/// (the reference clamps the same way, and an evolved bank's size varies, so this is a loud
/// warning rather than an error).
fn top_k_warning(key: &str, top_k: usize, selectable: usize) -> Option<String> {
    (top_k > selectable).then(|| {
        format!(
            "warning: {key} = {top_k} is larger than the {selectable} selectable skills of the bank: every skill is selected for every span (K = {selectable})"
        )
    })
}

/// `memskill eval ... --sweep K=V1,V2 [--sweep ...]`: one evaluation per grid point.
fn sweep_eval(mut a: EvalArgs) -> Result<()> {
    let grid = sweep_grid(&a.sweep)?;
    // one set of handlers for the whole sweep: a signal stops the point in progress and
    // the points after it
    let _signals = StopOnSignal::install().context("installing the signal handlers")?;
    let base_out = a.out.clone().unwrap_or_else(|| {
        let root = a
            .checkpoint
            .clone()
            .unwrap_or_else(|| PathBuf::from("runs").join("baselines"));
        root.join("eval").join("sweep")
    });
    let base_method = a.method.clone();
    a.sweep.clear();
    let mut summary = Vec::new();
    for point in grid {
        let label = point.join(",");
        let mut one = EvalArgs {
            sets: a
                .sets
                .iter()
                .cloned()
                .chain(point.iter().cloned())
                .collect(),
            out: Some(base_out.join(label.replace(['/', ' '], "_"))),
            method: base_method.clone(),
            checkpoint: a.checkpoint.clone(),
            actor: a.actor,
            config: a.config.clone(),
            dataset: a.dataset,
            split: a.split.clone(),
            limit: a.limit,
            no_judge: a.no_judge,
            dry_run: false,
            sweep: Vec::new(),
            adapter: a.adapter.clone(),
            adapter_timeouts: a.adapter_timeouts.clone(),
        };
        // a baseline keeps its name (it selects the baseline); a checkpoint's label gains the point
        if one
            .method
            .as_deref()
            .and_then(memskill_trainer::baselines::Baseline::parse)
            .is_none()
        {
            one.method = Some(match &base_method {
                Some(m) => format!("{m} [{label}]"),
                None => format!("[{label}]"),
            });
        }
        eprintln!("sweep point {label}");
        let r = eval(one);
        summary.push(format!(
            "{label}: {}",
            match &r {
                Ok(()) => "done".to_string(),
                Err(e) => format!("failed: {e:#}"),
            }
        ));
        r?;
    }
    println!(
        "\nsweep ({} points) under {}:",
        summary.len(),
        base_out.display()
    );
    for s in summary {
        println!("  {s}");
    }
    Ok(())
}

/// `memskill eval --method no-memory|raw-rag|static-skills|chain-of-notes|read-agent --config C`.
fn baseline_eval(a: EvalArgs, b: memskill_trainer::baselines::Baseline) -> Result<()> {
    if a.checkpoint.is_some() {
        bail!(
            "--method {}: a baseline needs no --checkpoint (it is not a trained method)",
            b.name()
        );
    }
    let (cfg, mut opts) = method_config(&a, b.name())?;
    let (r, dir) = stoppable("run the same command again to evaluate it", |stop| {
        opts.stop = Some(stop);
        memskill_trainer::baselines::evaluate_baseline(b, &cfg, &opts)
    })?;
    print!("{}", render_results_md(&r));
    println!("{}", r.error_line());
    print_results_path(&r, &dir);
    r.check_error_rate()
}

/// The config (`--config` with `--set`, checked against `--dataset`) and the options of a
/// method evaluated without a checkpoint.
fn method_config(
    a: &EvalArgs,
    method: &str,
) -> Result<(Config, memskill_trainer::baselines::BaselineOptions)> {
    let path = a.config.as_ref().with_context(|| {
        format!("--method {method}: --config is required (it names the dataset and the models)")
    })?;
    let cfg = Config::load(path, &a.sets)?;
    if let Some(d) = &a.dataset {
        if *d != cfg.data.dataset {
            bail!(
                "--dataset {d}: the config {} is for {}; give a config of that dataset",
                path.display(),
                cfg.data.dataset
            );
        }
    }
    let opts = memskill_trainer::baselines::BaselineOptions {
        split: qa_split(a.split.as_deref())?,
        limit: a.limit,
        out: a.out.clone(),
        runs_dir: PathBuf::from("runs"),
        no_judge: a.no_judge,
        stop: None,
    };
    Ok((cfg, opts))
}

/// `memskill eval --adapter 'CMD ARGS' --method NAME --config C`: an external memory
/// system through the adapter protocol (docs/adapter-protocol.md).
fn adapter_eval(a: EvalArgs) -> Result<()> {
    use memskill_trainer::adapter::{evaluate_adapter, protocol::Timeouts, AdapterOptions};
    let method = a.method.clone().context(
        "--adapter: --method NAME is required (the method's name in results and reports)",
    )?;
    if a.checkpoint.is_some() {
        bail!("--adapter: an external memory system needs no --checkpoint");
    }
    let timeouts = Timeouts::default()
        .with_settings(&a.adapter_timeouts)
        .map_err(anyhow::Error::msg)?;
    let (cfg, base) = method_config(&a, &method)?;
    let mut opts = AdapterOptions {
        command: a.adapter.clone().unwrap_or_default(),
        method,
        timeouts,
        base,
    };
    let (r, dir) = stoppable("run the same command again to evaluate it", |stop| {
        opts.base.stop = Some(stop);
        evaluate_adapter(&cfg, &opts)
    })?;
    print!("{}", render_results_md(&r));
    println!("{}", r.error_line());
    print_results_path(&r, &dir);
    r.check_error_rate()
}

/// Where the results were written, or that none were (a failed evaluation writes none).
fn print_results_path(r: &memskill_trainer::eval::EvalResults, dir: &std::path::Path) {
    if let Some(line) = r.contract_line() {
        println!("{line}");
    }
    if r.check_error_rate().is_ok() {
        println!("\nresults: {}", dir.join("results.json").display());
    } else {
        println!(
            "\nno results file written in {}: the evaluation failed (recorded in {})",
            dir.display(),
            memskill_trainer::eval::FAILED_MARKER
        );
    }
}

pub fn eval(a: EvalArgs) -> Result<()> {
    if a.limit == Some(0) {
        bail!("--limit must be >= 1 (got 0: nothing would be evaluated)");
    }
    if a.dataset.is_some_and(Dataset::is_interactive) {
        return alfworld_eval(a);
    }
    if a.adapter.is_some() && !a.sweep.is_empty() {
        bail!("--adapter with --sweep: run one adapter evaluation per setting instead");
    }
    if a.adapter.is_none() && !a.adapter_timeouts.is_empty() {
        bail!("--adapter-timeout needs --adapter");
    }
    if a.dry_run && (!a.sweep.is_empty() || a.adapter.is_some() || a.checkpoint.is_none()) {
        bail!(
            "--dry-run plans a checkpoint evaluation (--checkpoint, without --sweep or --adapter)"
        );
    }
    if !a.sweep.is_empty() {
        return sweep_eval(a);
    }
    if a.adapter.is_some() {
        return adapter_eval(a);
    }
    if let Some(b) = a
        .method
        .as_deref()
        .and_then(memskill_trainer::baselines::Baseline::parse)
    {
        return baseline_eval(a, b);
    }
    let checkpoint = a
        .checkpoint
        .clone()
        .context("--checkpoint is required (a run directory or a checkpoint directory)")?;
    {
        use memskill_trainer::checkpoint::{resolve, Checkpoint};
        let dir = resolve(&checkpoint)?;
        let ck = Checkpoint::load(&dir)
            .with_context(|| format!("loading checkpoint {}", dir.display()))?;
        // the configuration `evaluate` resolves (the same function)
        let cfg = memskill_trainer::eval::eval_config(&ck, &dir, &a.sets, a.dataset)?;
        if let Some(w) = top_k_warning("eval.top_k", cfg.eval.top_k, ck.bank.selectable().len()) {
            eprintln!("{w}");
        }
        if a.dry_run {
            return eval_dry_run(&cfg, &a, &dir);
        }
    }
    let split = qa_split(a.split.as_deref())?;
    let (r, dir) = stoppable(EVAL_RERUN, |stop| {
        evaluate(&EvalOptions {
            checkpoint,
            dataset: a.dataset,
            split,
            limit: a.limit,
            sets: a.sets,
            out: a.out,
            method: a.method,
            no_judge: a.no_judge,
            stop: Some(stop),
        })
    })?;
    print!("{}", render_results_md(&r));
    println!("{}", r.error_line());
    print_results_path(&r, &dir);
    r.check_error_rate()
}

/// `memskill eval --dataset alfworld`: settings from the checkpoint config's `[alfworld]`
/// table (else `--config`, else the defaults), overridable with `--set alfworld.KEY=VALUE`.
/// With `--actor llm` and a checkpoint, one memory bank is built from the training split's
/// expert trajectories (see `alfworld::build_eval_bank`) and the top-`alfworld.tips`
/// memories retrieved by each game's objective are the actor's procedural tips; the actor is
/// the run's `answer` model.
fn alfworld_eval(a: EvalArgs) -> Result<()> {
    let (cfg, run_dir, ck) = alfworld_settings(&a)?;
    let t = &cfg.alfworld;
    let actor = a.actor.unwrap_or(t.actor);
    let split = a.split.clone().unwrap_or_else(|| t.split.clone());
    // `<run>/eval/alfworld-<splits>` for the LLM agent, `...-<actor>` for scripted actors.
    let out = a.out.clone().unwrap_or_else(|| {
        let actor_tag = match actor {
            ActorKind::Llm => "",
            ActorKind::Walkthrough => "-walkthrough",
            ActorKind::FirstAdmissible => "-first-admissible",
        };
        run_dir
            .join("eval")
            .join(format!("alfworld-{}{actor_tag}", split.replace(',', "+")))
    });
    let play = if actor == ActorKind::Llm {
        llm_play(&cfg, &run_dir, ck.as_ref(), &out)?
    } else {
        crate::alfworld::LlmPlay::default()
    };
    crate::alfworld::eval_with(t, &split, a.limit, actor, &out, play)?;
    Ok(())
}

/// The ALFWorld evaluation's settings: the checkpoint's config, else `--config`, else the
/// built-in defaults (each with `--set` applied); the run directory (the checkpoint's run,
/// else `runs/alfworld-eval`) and the checkpoint, if any.
fn alfworld_settings(
    a: &EvalArgs,
) -> Result<(
    Config,
    PathBuf,
    Option<memskill_trainer::checkpoint::Checkpoint>,
)> {
    use memskill_trainer::checkpoint::{resolve, Checkpoint};
    Ok(match (&a.checkpoint, &a.config) {
        (Some(c), _) => {
            let ck_dir = resolve(c)?;
            let ck = Checkpoint::load(&ck_dir)
                .with_context(|| format!("loading checkpoint {}", ck_dir.display()))?;
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
            (cfg, run_dir, Some(ck))
        }
        (None, Some(path)) => (
            Config::load(path, &a.sets)?,
            PathBuf::from("runs").join("alfworld-eval"),
            None,
        ),
        (None, None) => (
            Config::from_toml_str("", &a.sets, "<defaults>")?,
            PathBuf::from("runs").join("alfworld-eval"),
            None,
        ),
    })
}

/// The LLM actor: the run's `answer` model and prompts, and with a checkpoint (and
/// `alfworld.tips > 0`) its procedural tips from [`eval_bank_tips`].
fn llm_play(
    cfg: &Config,
    run_dir: &std::path::Path,
    ck: Option<&memskill_trainer::checkpoint::Checkpoint>,
    out: &std::path::Path,
) -> Result<crate::alfworld::LlmPlay> {
    use memskill_trainer::runtime::Runtime;
    use std::sync::Arc;
    let mut eval_cfg = cfg.clone();
    eval_cfg.designer.enabled = false;
    let rt = Runtime::build(&eval_cfg, run_dir, Vec::new(), false)?;
    rt.probe_endpoints()?;
    let tips = match ck {
        Some(ck) if cfg.alfworld.tips > 0 => Some(eval_bank_tips(&eval_cfg, ck, &rt, out)?),
        _ => {
            eprintln!(
                "note: no --checkpoint (or alfworld.tips = 0): the LLM actor plays without memory"
            );
            None
        }
    };
    Ok(crate::alfworld::LlmPlay {
        executor: Some((
            rt.answerer.id(),
            cfg.answer_llm().backend.name().to_string(),
        )),
        llm: Some(rt.answerer.clone()),
        tips,
        prompts: Some(Arc::new(rt.prompts.clone())),
    })
}

/// One memory bank built from the training split's expert trajectories (see
/// `alfworld::build_eval_bank`, written to `out`), and the tips it gives each game: the
/// top-`alfworld.tips` memories retrieved by the game's objective.
fn eval_bank_tips(
    eval_cfg: &Config,
    ck: &memskill_trainer::checkpoint::Checkpoint,
    rt: &memskill_trainer::runtime::Runtime,
    out: &std::path::Path,
) -> Result<memskill_alfworld::TipSource> {
    use memskill_trainer::alfworld::{build_eval_bank, tip_source};
    use memskill_trainer::fsutil::write_atomic;
    let t = &eval_cfg.alfworld;
    let (bank, info) = build_eval_bank(eval_cfg, ck, rt)?;
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    write_atomic(&out.join("memory_bank.json"), &serde_json::to_vec(&bank)?)?;
    write_atomic(
        &out.join("memory_bank_info.json"),
        serde_json::to_string_pretty(&info)?.as_bytes(),
    )?;
    println!(
        "evaluation bank: {} memories from {} expert trajectories ({} spans{}); tips per game: top {}",
        info.memories,
        info.trajectories,
        info.spans,
        if info.cache_hit { ", cached" } else { "" },
        t.tips
    );
    // flagged memories are no tips unless `memory.show_flagged` (then with their secret
    // values redacted); secret ones never (`MemoryBank::shown`)
    let bank = bank
        .shown(eval_cfg.memory.show_flagged, memskill_guard::redact_private)
        .into_owned();
    Ok(tip_source(
        std::sync::Arc::new(bank),
        rt.encoder.clone(),
        rt.retriever.clone(),
        t.tips,
    ))
}

pub fn compare(a: CompareArgs) -> Result<()> {
    let (table, failed) = compare_table(&a.runs)?;
    print!("{table}");
    if failed > 0 {
        bail!("{failed} of the evaluations failed (listed above): they have no result");
    }
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
        "encoder" | "ppo" | "llm" | "all" => {
            let opts = memskill_dev::perfbench::PerfOptions {
                rounds: a.rounds,
                force: a.force,
                json: a.json.clone(),
                python: a.python.clone(),
                no_baseline: a.no_baseline,
                model: a.model.clone().filter(|_| a.what != "encoder"),
                encoder_model: a.model.clone().filter(|_| a.what == "encoder"),
                sessions: a.sessions,
                prompt_tokens: a.prompt_tokens,
                decode_tokens: a.decode_tokens,
            };
            memskill_dev::perfbench::run(&a.what, &opts)?;
            Ok(())
        }
        "trainer" => {
            for &lat in &a.latency_ms {
                let r =
                    memskill_dev::bench::bench_inner_epoch_with(lat, a.batch, a.spans, &a.encoder)?;
                println!("{} ({} encoder)", r.report(), a.encoder);
            }
            Ok(())
        }
        "alfworld" => {
            let cfg = memskill_trainer::config::AlfworldConfig::default();
            let r = memskill_dev::bench::bench_alfworld(&cfg, a.games, a.workers)?;
            println!("{}", r.report());
            Ok(())
        }
        other => {
            bail!("unknown benchmark {other:?} (known: encoder, ppo, llm, all, trainer, alfworld)")
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn top_k_above_the_bank_warns() {
        assert!(super::top_k_warning("eval.top_k", 4, 4).is_none());
        let w = super::top_k_warning("eval.top_k", 7, 4).unwrap();
        assert!(
            w.contains("eval.top_k = 7") && w.contains("4 selectable"),
            "{w}"
        );
    }
}
