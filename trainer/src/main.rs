//! `memskill`: the command-line front end of memskill.

use clap::{Parser, Subcommand};

mod cli;

#[derive(Parser)]
#[command(
    name = "memskill",
    version,
    about = "Learn, evolve and evaluate memory skills for LLM agents"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Inspect datasets (LoCoMo, LongMemEval, HotpotQA).
    #[command(subcommand)]
    Data(cli::data::DataCmd),
    /// Create, show, export, import, validate and diff skill banks.
    #[command(subcommand)]
    Skills(cli::skills::SkillsCmd),
    /// Embed texts with the encoder and print norms and pairwise cosines.
    Embed(cli::embed::EmbedArgs),
    /// Fetch model assets into the cache directory.
    #[command(subcommand)]
    Assets(cli::assets::AssetsCmd),
    /// Score predictions (LoCoMo F1 / HotpotQA F1).
    Score(cli::exec::ScoreArgs),
    /// Talk to an LLM backend.
    #[command(subcommand)]
    Llm(cli::exec::LlmCmd),
    /// Parse an executor response (stdin) into memory actions.
    ParseActions(cli::exec::ParseActionsArgs),
    /// Train the controller and evolve the skill bank.
    Train(cli::train::TrainArgs),
    /// Evaluate a checkpoint on a dataset split.
    Eval(cli::train::EvalArgs),
    /// Compare the evaluation results of several runs.
    Compare(cli::train::CompareArgs),
    /// Plot a run's metrics to PNG charts.
    Plot(cli::train::PlotArgs),
    /// One report (Markdown + HTML) over many evaluations: paper-style tables with
    /// bootstrap intervals, the context-length figure, skill-bank evolution.
    Report(cli::report::ReportArgs),
    /// Run the built-in benchmarks.
    Bench(cli::train::BenchArgs),
    /// Differential checks against the reference implementation's fixtures.
    #[command(subcommand)]
    Fidelity(cli::fidelity::FidelityCmd),
    /// Turn a checkpoint saved by the reference implementation into a memskill run folder.
    ImportReference(cli::fidelity::ImportArgs),
    /// ALFWorld utilities (expert-trajectory cache).
    #[command(subcommand)]
    Alfworld(cli::alfworld::AlfworldCmd),
}

/// Keeps freed memory in the process instead of handing it back to the OS at every free.
/// The controller's tensors (burn) and the encoder's buffers allocate and free the same large
/// blocks over and over; with glibc's defaults those blocks can be `mmap`ed and `munmap`ed
/// each time, and every reuse then page-faults its memory in again (a PPO update measured
/// 64-70 ms that way against 30 ms with these settings, on the same machine and build).
fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes allocator thresholds; called before any other thread
    // exists.
    unsafe {
        // 32 MiB: glibc's maximum for the mmap threshold on 64-bit targets.
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 30);
    }
}

fn main() {
    keep_freed_memory();
    let cli = Cli::parse();
    let res = match cli.cmd {
        Cmd::Data(c) => cli::data::run(c),
        Cmd::Skills(c) => cli::skills::run(c),
        Cmd::Embed(a) => cli::embed::run(a),
        Cmd::Assets(c) => cli::assets::run(c),
        Cmd::Score(a) => cli::exec::score(a),
        Cmd::Llm(c) => cli::exec::llm(c),
        Cmd::ParseActions(a) => cli::exec::parse_actions(a),
        Cmd::Train(a) => cli::train::train(a),
        Cmd::Eval(a) => cli::train::eval(a),
        Cmd::Compare(a) => cli::train::compare(a),
        Cmd::Plot(a) => cli::train::plot(a),
        Cmd::Report(a) => cli::report::run(a),
        Cmd::Bench(a) => cli::train::bench(a),
        Cmd::Alfworld(c) => cli::alfworld::run(c),
        Cmd::Fidelity(c) => cli::fidelity::run(c),
        Cmd::ImportReference(a) => cli::fidelity::import_reference(a),
    };
    if let Err(e) = res {
        // One line, the full context chain, no panic, no backtrace.
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}
