//! The `memskill` command line: one module per command group, each owning its clap
//! arguments and its `run`. It lives in the library so that the binary (`main.rs`) and the
//! Python package's console script (`python/`) run the same code through [`run_args`].
use clap::{Parser, Subcommand};

pub mod alfworld;
pub mod assets;
pub mod bank;
pub mod config;
pub mod data;
pub mod embed;
pub mod exec;
pub mod fidelity;
pub mod launch;
pub mod preflight;
pub mod registry;
pub mod report;
pub mod shell;
pub mod signals;
pub mod skills;
pub mod train;

/// Who a record names (an approver, the person who asked): `given`, else `$USER`; an error
/// naming `flag` when neither says.
pub(crate) fn person(given: Option<String>, flag: &str) -> anyhow::Result<String> {
    given
        .or_else(|| std::env::var("USER").ok())
        .filter(|s| !s.trim().is_empty())
        .ok_or_else(|| anyhow::anyhow!("who? pass {flag} NAME ($USER is not set)"))
}

#[derive(Parser)]
#[command(
    name = "memskill",
    version,
    about = "Learn, evolve and evaluate memory skills for LLM agents"
)]
struct Cli {
    /// Scan every loaded bank strictly (checkpoints, saved banks, exports), not trusting the
    /// guard records the bank keeps: a skill a later guard rejects then fails instead of
    /// loading with a warning.
    #[arg(long, global = true)]
    rescan: bool,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Inspect datasets, list the benchmarks.
    #[command(subcommand)]
    Data(data::DataCmd),
    /// Show a config with where each value came from, or check it before a run.
    #[command(subcommand)]
    Config(config::ConfigCmd),
    /// Ask every server a config names before a run (reachable, model served, context
    /// window against the longest prompt, structured outputs, embedding dimension,
    /// throughput) and estimate the run's LLM calls, tokens and wall time. Exits non-zero
    /// with every failure listed.
    Preflight(preflight::PreflightArgs),
    /// Create, show, export, import, validate and diff skill banks.
    #[command(subcommand)]
    Skills(skills::SkillsCmd),
    /// Build one sample's memory bank; show a memory bank's types, scopes and sensitivity
    /// with scope-filtered retrieval.
    #[command(subcommand)]
    Bank(bank::BankCmd),
    /// The governance registry (SQLite or PostgreSQL): skills, versions, releases, eval runs,
    /// invocations; decisions, rollbacks, feedback, read-only queries, export.
    #[command(subcommand)]
    Registry(registry::RegistryCmd),
    /// Embed texts with the encoder and print norms and pairwise cosines.
    Embed(embed::EmbedArgs),
    /// Fetch model assets into the cache directory.
    #[command(subcommand)]
    Assets(assets::AssetsCmd),
    /// Score predictions (LoCoMo F1 / HotpotQA F1).
    Score(exec::ScoreArgs),
    /// Talk to an LLM backend.
    #[command(subcommand)]
    Llm(exec::LlmCmd),
    /// Parse an executor response (stdin) into memory actions.
    ParseActions(exec::ParseActionsArgs),
    /// Train the controller and evolve the skill bank.
    Train(train::TrainArgs),
    /// Evaluate a checkpoint on a dataset split.
    Eval(train::EvalArgs),
    /// Train a sweep on a cluster: one Slurm array task per sweep point and seed, each
    /// stopping at a checkpoint on a signal and requeued to resume.
    #[command(subcommand)]
    Launch(launch::LaunchCmd),
    /// Compare the evaluation results of several runs.
    Compare(train::CompareArgs),
    /// Plot a run's metrics to PNG charts.
    Plot(train::PlotArgs),
    /// One report (Markdown + HTML) over many evaluations: paper-style tables with
    /// bootstrap intervals, the context-length figure, skill-bank evolution.
    Report(report::ReportArgs),
    /// Run the built-in benchmarks.
    Bench(train::BenchArgs),
    /// Differential checks against the reference implementation's fixtures.
    #[command(subcommand)]
    Fidelity(fidelity::FidelityCmd),
    /// Turn a checkpoint saved by the reference implementation into a memskill run folder.
    ImportReference(fidelity::ImportArgs),
    /// ALFWorld utilities (expert-trajectory cache).
    #[command(subcommand)]
    Alfworld(alfworld::AlfworldCmd),
    /// Print a shell completion script: `memskill completions bash > ~/.local/share/bash-completion/completions/memskill`
    /// (zsh: a file `_memskill` on `$fpath`; fish: `~/.config/fish/completions/memskill.fish`).
    Completions {
        /// bash | zsh | fish | elvish | powershell
        shell: clap_complete::Shell,
    },
}

/// Runs the command line `args` (the program name first, as `std::env::args_os` gives it)
/// and returns the process exit status: 0 on success, 1 with one `error: ...` line on
/// stderr (the full context chain, no backtrace), [`signals::EXIT_INTERRUPTED`] (75) when
/// SIGTERM, SIGINT or SIGUSR1 stopped `train` or `eval` at a safe point (with how to go on on
/// stderr), clap's own status for `--help`, `--version` and usage errors.
pub fn run_args<I, T>(args: I) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            // --help / --version print to stdout with status 0; usage errors to stderr.
            let _ = e.print();
            return e.exit_code();
        }
    };
    memskill_designer::set_rescan(cli.rescan);
    let res = match cli.cmd {
        Cmd::Data(c) => data::run(c),
        Cmd::Config(c) => config::run(c),
        Cmd::Preflight(a) => preflight::run(a),
        Cmd::Skills(c) => skills::run(c),
        Cmd::Bank(c) => bank::run(c),
        Cmd::Registry(c) => registry::run(c),
        Cmd::Embed(a) => embed::run(a),
        Cmd::Assets(c) => assets::run(c),
        Cmd::Score(a) => exec::score(a),
        Cmd::Llm(c) => exec::llm(c),
        Cmd::ParseActions(a) => exec::parse_actions(a),
        Cmd::Train(a) => train::train(a),
        Cmd::Eval(a) => train::eval(a),
        Cmd::Launch(c) => launch::run(c),
        Cmd::Compare(a) => train::compare(a),
        Cmd::Plot(a) => train::plot(a),
        Cmd::Report(a) => report::run(a),
        Cmd::Bench(a) => train::bench(a),
        Cmd::Alfworld(c) => alfworld::run(c),
        Cmd::Fidelity(c) => fidelity::run(c),
        Cmd::ImportReference(a) => fidelity::import_reference(a),
        Cmd::Completions { shell } => {
            // into a buffer first: clap_complete panics on a closed stdout (`| head`)
            let mut cmd = <Cli as clap::CommandFactory>::command();
            let mut buf = Vec::new();
            clap_complete::generate(shell, &mut cmd, "memskill", &mut buf);
            match std::io::Write::write_all(&mut std::io::stdout(), &buf) {
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
                _ => Ok(()),
            }
        }
    };
    match res {
        Ok(()) => 0,
        Err(e) => {
            if let Some(i) = e
                .chain()
                .find_map(|c| c.downcast_ref::<signals::Interrupted>())
            {
                eprintln!("{i}");
                return signals::EXIT_INTERRUPTED;
            }
            eprintln!("error: {e:#}");
            1
        }
    }
}
