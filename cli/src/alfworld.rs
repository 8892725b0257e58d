//! ALFWorld evaluation entry point (`memskill eval --dataset alfworld ...`) and
//! `memskill alfworld trajectories` (replay and cache expert walkthroughs).
//!
//! Plays `game.tw-pddl` games through a pool of ALFWorld bridge processes
//! (`scripts/alfworld/bridge.py`, set up by `scripts/alfworld/setup.sh`) and prints the
//! Table-1 style summary; `results.json` / `results.md` go to `--out`.

use anyhow::{bail, Context, Result};
use memskill_alfworld::{
    parse_splits, run_eval, ActorKind, EvalOptions, EvalReport, GameOutcome, GameResult, TipSource,
};
use memskill_core::Llm;
use memskill_trainer::alfworld::check_setup;
use memskill_trainer::config::AlfworldConfig;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// What the LLM actor plays with: the model, optional per-game procedural tips (e.g. top-R
/// memories retrieved by the objective) and the run's prompt templates.
#[derive(Default)]
pub struct LlmPlay {
    pub llm: Option<Arc<dyn Llm>>,
    pub tips: Option<TipSource>,
    pub prompts: Option<Arc<memskill_core::PromptSet>>,
    /// The LLM actor's model id and backend name, recorded in `results.json`.
    pub executor: Option<(String, String)>,
}

/// Runs the evaluation of `split` (comma-separated) with the games, bridge and step limit of
/// `a`; `play.llm` is required for `--actor llm`. Results go to `out`.
pub fn eval_with(
    a: &AlfworldConfig,
    split: &str,
    limit: Option<usize>,
    actor: ActorKind,
    out: &Path,
    play: LlmPlay,
) -> Result<EvalReport> {
    let LlmPlay {
        llm,
        tips,
        prompts,
        executor,
    } = play;
    if actor == ActorKind::Llm && llm.is_none() {
        bail!("--actor llm needs an LLM backend (configure one for `memskill eval`)");
    }
    let splits = parse_splits(split);
    if splits.is_empty() {
        bail!("--split is empty");
    }
    let (games_root, bridge) = check_setup(a)?;
    let opts = EvalOptions {
        splits,
        limit,
        actor,
        max_steps: a.max_steps,
        out: Some(out.to_path_buf()),
        games_root: games_root.clone(),
        bridge,
        actor_settings: memskill_trainer::alfworld::actor_settings(a)
            .map_err(anyhow::Error::msg)?,
        prompts,
        executor,
    };
    let done = AtomicUsize::new(0);
    let progress = |r: &GameResult| {
        let n = done.fetch_add(1, Ordering::SeqCst) + 1;
        let status = match &r.outcome {
            GameOutcome::Won => "won".to_string(),
            GameOutcome::Lost => "lost".to_string(),
            GameOutcome::EnvError(m) => format!("env error: {m}"),
        };
        eprintln!(
            "[{n}] {} ({} steps, {:.1}s): {status}",
            r.game_id,
            r.steps,
            r.elapsed_ms as f64 / 1000.0
        );
    };
    let report = run_eval(&opts, llm, tips, &progress).with_context(|| {
        format!(
            "ALFWorld evaluation of {split} (games root {})",
            games_root.display()
        )
    })?;
    println!("{}", report.to_markdown());
    println!("results: {}", out.join("results.json").display());
    Ok(report)
}

/// `memskill alfworld ...`.
#[derive(clap::Subcommand)]
pub enum AlfworldCmd {
    /// Replay expert walkthroughs through the bridge and cache the trajectories (JSONL), so
    /// training and the evaluation bank do not replay them. Games already cached are skipped.
    Trajectories(TrajectoriesArgs),
}

#[derive(clap::Args)]
pub struct TrajectoriesArgs {
    /// Config whose [alfworld] table gives games root, Python, bridge and cache (default: built-in defaults).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Override a config key (repeatable), e.g. --set alfworld.trajectories=/data/train.jsonl.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// Split to replay (default: alfworld.train_split).
    #[arg(long)]
    pub split: Option<String>,
    /// Games (task types interleaved); all when absent.
    #[arg(long)]
    pub limit: Option<usize>,
    /// Bridge processes (default: alfworld.workers).
    #[arg(long)]
    pub workers: Option<usize>,
}

pub fn run(cmd: AlfworldCmd) -> Result<()> {
    match cmd {
        AlfworldCmd::Trajectories(a) => trajectories(a),
    }
}

fn trajectories(a: TrajectoriesArgs) -> Result<()> {
    use memskill_trainer::alfworld::{trajectory_cache, AlfworldEnv};
    use memskill_trainer::config::Config;
    let mut cfg = match &a.config {
        Some(p) => Config::load(p, &a.sets)?,
        None => Config::from_toml_str("", &a.sets, "<defaults>")?,
    };
    if let Some(s) = &a.split {
        cfg.alfworld.train_split = s.clone();
    }
    if let Some(w) = a.workers {
        cfg.alfworld.workers = w.max(1);
    }
    let cache = trajectory_cache(&cfg.alfworld);
    let before = memskill_alfworld::read_cache(&cache)
        .with_context(|| format!("reading {}", cache.display()))?
        .len();
    let env = AlfworldEnv::open(&cfg.alfworld)?;
    let games = env.index.select(&cfg.alfworld.train_split, a.limit);
    eprintln!(
        "{} games of {} ({} bridge processes); cache {} holds {before}",
        games.len(),
        cfg.alfworld.train_split,
        env.pool.workers(),
        cache.display()
    );
    let t0 = std::time::Instant::now();
    let trajs = env.trajectories(&games)?;
    let secs = t0.elapsed().as_secs_f64();
    let after = memskill_alfworld::read_cache(&cache)?.len();
    let fresh = after.saturating_sub(before);
    let won = trajs.iter().filter(|t| t.success).count();
    println!(
        "{} trajectories of {} games ({} SUCCESS, {} FAILED, {} environment errors left out)",
        trajs.len(),
        games.len(),
        won,
        trajs.len() - won,
        games.len() - trajs.len()
    );
    println!(
        "{fresh} replayed in {secs:.1}s ({:.1} games/min, {} workers), {} from the cache; restarts: {}",
        if secs > 0.0 { 60.0 * fresh as f64 / secs } else { 0.0 },
        env.pool.workers(),
        trajs.len().saturating_sub(fresh),
        env.pool.restarts()
    );
    println!("cache: {}", cache.display());
    Ok(())
}
