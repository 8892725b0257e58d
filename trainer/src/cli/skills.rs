//! `memskill skills`: create, show, export, import, validate and diff skill banks.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use clap::Subcommand;
use memskill_core::SkillBank;
use memskill_designer::{bank_diff, export_bank, import_bank, load_bank, validate_dir};
use memskill_trainer::fsutil::{refuse_existing, refuse_overwrite_input, write_atomic};

#[derive(Subcommand)]
pub enum SkillsCmd {
    /// Write the seed bank (insert, update, delete, noop) as JSON.
    Init {
        /// Output bank.json path.
        file: PathBuf,
        /// Overwrite an existing file.
        #[arg(long)]
        force: bool,
    },
    /// Print a bank as a table (bank.json, checkpoint dir or exported skills dir).
    Show {
        /// bank.json, a checkpoint directory or an exported skills directory.
        file: PathBuf,
    },
    /// Export a bank as Agent Skills folders (<name>/SKILL.md) plus bank.json and RELEASES.md.
    Export {
        /// bank.json or a checkpoint directory containing bank.json / skills.json.
        src: PathBuf,
        /// Output directory.
        #[arg(long)]
        out: PathBuf,
    },
    /// Import an exported skills directory into a bank.json (validated like designer edits).
    Import {
        /// Exported skills directory.
        dir: PathBuf,
        /// Output bank.json path (written atomically).
        #[arg(long)]
        out: PathBuf,
        /// Overwrite an existing --out file.
        #[arg(long)]
        force: bool,
    },
    /// Validate an exported skills directory (names, lengths, placeholders, safety scan).
    Validate {
        /// Exported skills directory.
        dir: PathBuf,
    },
    /// Show added, removed and changed skills between two banks, with text diffs.
    Diff {
        /// Old bank (file or directory).
        a: PathBuf,
        /// New bank (file or directory).
        b: PathBuf,
    },
}

fn load(p: &Path) -> anyhow::Result<SkillBank> {
    load_bank(p).with_context(|| format!("cannot load skill bank from {}", p.display()))
}

/// Write a bank as JSON, atomically (temp file, fsync, rename). A non-finite number
/// (which JSON would carry as `null`, unreadable afterwards) is refused, naming the skill.
fn write_bank(bank: &SkillBank, out: &Path) -> anyhow::Result<()> {
    for s in bank.skills() {
        let u = &s.usage;
        if !u.mean_reward.is_finite() || u.recent_rewards.iter().any(|r| !r.is_finite()) {
            bail!(
                "skill `{}`: usage.mean_reward / recent_rewards must be finite numbers, got {} / {:?}; not writing {}",
                s.name,
                u.mean_reward,
                u.recent_rewards,
                out.display()
            );
        }
    }
    let json = serde_json::to_string_pretty(bank).context("cannot serialise the skill bank")?;
    write_atomic(out, (json + "\n").as_bytes())
        .with_context(|| format!("cannot write {}", out.display()))
}

fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!(
            "{}...",
            s.chars().take(n.saturating_sub(3)).collect::<String>()
        )
    }
}

/// The `show` table.
pub fn render_table(bank: &SkillBank) -> String {
    let mut rows = vec![[
        "name".to_string(),
        "action".into(),
        "version".into(),
        "status".into(),
        "uses".into(),
        "mean reward".into(),
        "description".into(),
    ]];
    for s in bank.skills() {
        rows.push([
            s.name.clone(),
            s.action.to_string(),
            s.version.to_string(),
            s.status.to_string(),
            s.usage.count.to_string(),
            format!("{:.3}", s.usage.mean_reward),
            clip(&s.description.replace('\n', " "), 70),
        ]);
    }
    let widths: Vec<usize> = (0..6)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for r in &rows {
        for c in 0..6 {
            out.push_str(&format!("{:<w$}  ", r[c], w = widths[c]));
        }
        out.push_str(&r[6]);
        out.push('\n');
    }
    out.push_str(&format!(
        "{} skills ({} selectable), bank version {}, {} release records, content hash {}\n",
        bank.len(),
        bank.selectable().len(),
        bank.bank_version,
        bank.releases.len(),
        &bank.content_hash()[..12]
    ));
    out
}

pub fn run(c: SkillsCmd) -> anyhow::Result<()> {
    match c {
        SkillsCmd::Init { file, force } => {
            if file.exists() && !force {
                bail!(
                    "{} already exists (use --force to overwrite)",
                    file.display()
                );
            }
            let bank = SkillBank::seed();
            write_bank(&bank, &file)?;
            println!(
                "wrote seed bank ({} skills) to {}",
                bank.len(),
                file.display()
            );
        }
        SkillsCmd::Show { file } => print!("{}", render_table(&load(&file)?)),
        SkillsCmd::Export { src, out } => {
            let bank = load(&src)?;
            export_bank(&bank, &out)
                .with_context(|| format!("cannot export to {}", out.display()))?;
            println!(
                "exported {} skills to {} (hash {})",
                bank.len(),
                out.display(),
                &bank.content_hash()[..12]
            );
        }
        SkillsCmd::Import { dir, out, force } => {
            refuse_overwrite_input(&dir.join("bank.json"), &out, "--out")?;
            refuse_existing(&out, force, "--out")?;
            let bank =
                import_bank(&dir).with_context(|| format!("cannot import {}", dir.display()))?;
            write_bank(&bank, &out)?;
            println!(
                "imported {} skills into {} (hash {})",
                bank.len(),
                out.display(),
                &bank.content_hash()[..12]
            );
        }
        SkillsCmd::Validate { dir } => {
            let names = validate_dir(&dir)
                .with_context(|| format!("{} is not a valid skills directory", dir.display()))?;
            println!(
                "ok: {} skills valid in {}: {}",
                names.len(),
                dir.display(),
                names.join(", ")
            );
        }
        SkillsCmd::Diff { a, b } => {
            let (x, y) = (load(&a)?, load(&b)?);
            let d = bank_diff(&x, &y);
            if d.is_empty() {
                println!("no skill differences");
            } else {
                print!("{d}");
            }
        }
    }
    Ok(())
}
