//! `memskill config show | check`: a config looked at before a run (see
//! `memskill_trainer::inspect`).

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use clap::Subcommand;
use memskill_trainer::config::{Config, RawConfig};
use memskill_trainer::inspect;

#[derive(Subcommand)]
pub enum ConfigCmd {
    /// Print the resolved config, each value with where it came from (`--set`, the file or
    /// the file it extends, or `default`).
    Show {
        /// Config file (TOML); without it, the defaults.
        config: Option<PathBuf>,
        /// Override a config key (repeatable; values are TOML).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        sets: Vec<String>,
    },
    /// Check a config before a run: every unknown key at once (each with a did-you-mean), every
    /// value's range, the data (loaded as a run loads it), the model assets and bank files it
    /// names. Lists the servers it would use without contacting them. Exits non-zero on a
    /// problem.
    Check {
        /// Config file (TOML).
        config: PathBuf,
        /// Override a config key (repeatable; values are TOML).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        sets: Vec<String>,
    },
}

fn raw(config: Option<&Path>, sets: &[String]) -> Result<RawConfig> {
    match config {
        Some(p) => RawConfig::from_file(p)?.with_sets(sets),
        None => RawConfig::defaults("defaults").with_sets(sets),
    }
}

pub fn run(c: ConfigCmd) -> Result<()> {
    match c {
        ConfigCmd::Show { config, sets } => {
            let raw = raw(config.as_deref(), &sets)?;
            let cfg = raw.clone().resolve()?;
            print!("{}", inspect::show(&cfg, &raw)?);
            Ok(())
        }
        ConfigCmd::Check { config, sets } => {
            let cfg = raw(Some(&config), &sets)?.resolve()?;
            let (problems, _) = report(&cfg)?;
            if problems > 0 {
                bail!("config {}: {problems} problem(s) above", config.display());
            }
            println!("ok: config {} is ready to run", config.display());
            Ok(())
        }
    }
}

/// Prints what a run of `cfg` would use (data, assets, servers) and returns the number of
/// problems found and the run's plan (`train --dry-run` prints it).
pub fn report(cfg: &Config) -> Result<(usize, Option<inspect::Plan>)> {
    let mut problems = inspect::missing_files(cfg);
    let mut plan = None;
    match memskill_trainer::benchmark::open(cfg) {
        Ok(bench) => {
            let p = inspect::plan(cfg, bench.samples());
            if bench.samples().is_empty() {
                println!(
                    "data: {} (episodes are games, not samples)",
                    cfg.data.dataset.name()
                );
            } else {
                println!(
                    "data: {} training samples of {}, {:.1} spans and {:.1} questions each",
                    p.samples,
                    cfg.data.dataset.name(),
                    p.mean_spans,
                    p.mean_questions
                );
            }
            plan = Some(p);
        }
        Err(e) => problems.push(format!("data: {e:#}")),
    }
    for e in inspect::endpoints(cfg) {
        println!("server (not contacted): {e}");
    }
    for p in &problems {
        println!("problem: {p}");
    }
    Ok((problems.len(), plan))
}
