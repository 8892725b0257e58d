//! `memskill skills`: create, show, export, import, validate and diff skill banks.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use clap::Subcommand;
use memskill_core::fsio::{is_within as fs_within, WriteGuard};
use memskill_core::SkillBank;
use memskill_designer::{bank_diff, export_bank, import_bank_opts, load_bank, LinkPolicy};
use memskill_trainer::fsutil::write_output;

#[derive(Subcommand)]
pub enum SkillsCmd {
    /// Write the seed bank (insert, update, delete, noop) as JSON.
    Init {
        /// Output bank.json path.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Deprecated: the output as a positional argument (`skills init FILE`); use --out.
        #[arg(hide = true, conflicts_with = "out")]
        file: Option<PathBuf>,
        /// Overwrite an existing file.
        #[arg(long)]
        force: bool,
    },
    /// Print a bank as a table (bank.json, checkpoint dir or exported skills dir).
    Show {
        /// bank.json, a checkpoint directory or an exported skills directory.
        file: PathBuf,
        /// Take the skill score's weights (`designer.score.*`) from this config (default:
        /// memskill's default weights).
        #[arg(long)]
        config: Option<PathBuf>,
        /// Config overrides KEY=VALUE (repeatable), e.g. designer.score.latency_overhead=1.
        #[arg(long = "set")]
        sets: Vec<String>,
    },
    /// Export a bank as Agent Skills folders (<name>/SKILL.md) plus bank.json and RELEASES.md.
    Export {
        /// bank.json or a checkpoint directory containing bank.json / skills.json.
        src: PathBuf,
        /// Output directory.
        #[arg(long)]
        out: PathBuf,
        /// Replace an existing export's files (links are never written through).
        #[arg(long)]
        force: bool,
    },
    /// Import a bank into a bank.json (validated like designer edits): an exported skills
    /// directory, the reference's released skill folder (flat `<name>.md` files, e.g.
    /// MemSkill's skills/conversational_skills) or its OperationBank JSON.
    Import {
        /// Exported skills directory, released skill folder, or OperationBank JSON file.
        dir: PathBuf,
        /// Output bank.json path (written atomically).
        #[arg(long)]
        out: PathBuf,
        /// Overwrite an existing --out file (never a file of the imported folder).
        #[arg(long)]
        force: bool,
        /// Follow symbolic links that lead out of the imported folder (refused by default).
        #[arg(long)]
        follow_links: bool,
        /// Take files that differ from the export's manifest.sha256 as they are (hand
        /// edits); without it such a folder is refused, since a mix of two exports looks
        /// the same.
        #[arg(long)]
        accept_edits: bool,
    },
    /// Validate an exported skills directory (names, lengths, placeholders, safety scan,
    /// the export's manifest).
    Validate {
        /// Exported skills directory.
        dir: PathBuf,
        /// Files differing from the export's manifest.sha256 are hand edits to check, not
        /// an error.
        #[arg(long)]
        accept_edits: bool,
    },
    /// Does each skill help on a dataset slice? Three modes on the same spans and seeds:
    /// without the skill, its version in --old, and with it; the delta with a 95% bootstrap
    /// interval, tokens and activation (writes skills-eval.{md,json}).
    Eval(EvalSkillsArgs),
    /// Per-skill use in a training run, from its invocation log (invocations.jsonl): uses,
    /// writes, tokens, and the mean score of the answers given from what those uses wrote.
    Usage {
        /// The run directory.
        run: PathBuf,
        /// Only this skill: list its uses one per line.
        #[arg(long)]
        skill: Option<String>,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Scan candidate skills or memories with the guard: one verdict per line of a JSONL file
    /// (`{"text": ...}` or `{"name", "description", "instructions"}`), in input order. Exits
    /// 0 whether or not texts were rejected (non-zero only when the input cannot be read).
    Scan {
        /// JSON Lines file (`-` for standard input).
        file: PathBuf,
        /// One JSON object per line: accepted, category, rule, stage, view, evidence.
        #[arg(long)]
        json: bool,
    },
    /// Accept a guard finding on one skill after review, recorded in the bank: a guard record
    /// with the rule, the reason and who approved it, and an `approved` release record. Later
    /// loads and imports of the same text pass that rule; any other finding still fails.
    Approve {
        /// Where to record it: a bank.json, an exported folder (its bank.json) or a checkpoint
        /// folder (its skill_bank.json and manifest); rewritten atomically.
        bank: PathBuf,
        /// The skill's name.
        #[arg(long)]
        skill: Option<String>,
        /// Deprecated form `skills approve NAME --bank BANK`: the bank; the positional
        /// argument is then the skill's name.
        #[arg(long = "bank", hide = true, conflicts_with = "skill")]
        legacy_bank: Option<PathBuf>,
        /// The rule id the guard reports (see `memskill skills scan --json`).
        #[arg(long)]
        rule: String,
        /// Why the finding is a false rejection.
        #[arg(long)]
        reason: String,
        /// Who approves (default: $USER).
        #[arg(long = "by")]
        by: Option<String>,
    },
    /// Show added, removed and changed skills between two banks, with text diffs.
    Diff {
        /// Old bank (file or directory).
        a: PathBuf,
        /// New bank (file or directory).
        b: PathBuf,
    },
}

#[derive(clap::Args)]
pub struct EvalSkillsArgs {
    /// The bank (bank.json, a checkpoint directory or an exported skills directory).
    pub bank: PathBuf,
    /// A trained run or checkpoint: its controller picks the skills and its config is used.
    /// Without it every skill is applied to every span and --config gives the settings.
    #[arg(long)]
    pub checkpoint: Option<PathBuf>,
    /// Config file (required without --checkpoint).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Evaluate on another dataset than the config's.
    #[arg(long, value_parser = |s: &str| s.parse::<memskill_trainer::config::Dataset>())]
    pub dataset: Option<memskill_trainer::config::Dataset>,
    /// Split (default: eval.split).
    #[arg(long)]
    pub split: Option<memskill_trainer::config::SplitSpec>,
    /// Only the first N questions of the split.
    #[arg(long)]
    pub limit: Option<usize>,
    /// Skills to evaluate (repeatable; default: every selectable skill).
    #[arg(long = "skill")]
    pub skills: Vec<String>,
    /// An older bank: its version of each skill is the `old` mode.
    #[arg(long)]
    pub old: Option<PathBuf>,
    /// Output directory (default: runs/skills-eval/<dataset>-<split>).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Bootstrap resamples of the delta's interval.
    #[arg(long, default_value_t = 1000)]
    pub resamples: usize,
    /// Activation cases, JSON Lines: {"sample": ID, "span": N, "expected": SKILL|null} or
    /// {"text": SPAN, "expected": SKILL|null} (`memskill data cases` writes them for the
    /// synthetic tasks, which use their own without this). Adds precision, recall and
    /// false-positive rate per skill.
    #[arg(long)]
    pub cases: Option<PathBuf>,
    /// Config overrides KEY=VALUE (repeatable).
    #[arg(long = "set")]
    pub sets: Vec<String>,
}

fn eval_skills(a: EvalSkillsArgs) -> anyhow::Result<()> {
    let (rows, out) = run_skills_eval(a)?;
    print!("{}", memskill_trainer::skills_eval::render(&rows));
    println!("\nwritten: {}", out.join("skills-eval.md").display());
    Ok(())
}

/// `skills eval` without the printing: the rows, and the folder `skills-eval.{md,json}`
/// went to (also `memskill.skills_eval` in Python).
pub fn run_skills_eval(
    a: EvalSkillsArgs,
) -> anyhow::Result<(Vec<memskill_trainer::skills_eval::SkillEvalRow>, PathBuf)> {
    use memskill_trainer::checkpoint::{resolve, Checkpoint};
    use memskill_trainer::config::RawConfig;
    let bank = load(&a.bank)?;
    let (raw, ck) = match (&a.checkpoint, &a.config) {
        (Some(c), _) => {
            let dir = resolve(c)?;
            let ck = Checkpoint::load(&dir)
                .with_context(|| format!("loading checkpoint {}", dir.display()))?;
            let origin = dir.join("config.toml").display().to_string();
            (RawConfig::from_text(&ck.config_toml, &origin)?, Some(ck))
        }
        (None, Some(p)) => (RawConfig::from_file(p)?, None),
        (None, None) => bail!("skills eval needs --checkpoint RUN or --config FILE"),
    };
    let mut raw = raw.with_sets(&a.sets)?;
    if let Some(d) = a.dataset {
        memskill_trainer::eval::transfer_to(&mut raw, d)?;
    }
    let cfg = raw.resolve()?;
    let old = a.old.as_deref().map(load).transpose()?;
    let split = a.split.unwrap_or(cfg.eval.split);
    let out = a.out.clone().unwrap_or_else(|| {
        PathBuf::from("runs")
            .join("skills-eval")
            .join(format!("{}-{split}", cfg.data.dataset.name()))
    });
    let opts = memskill_trainer::skills_eval::SkillsEvalOptions {
        skills: a.skills,
        old,
        checkpoint: ck,
        split: Some(split),
        limit: a.limit,
        out: out.clone(),
        resamples: a.resamples,
        cases: a.cases,
    };
    let rows = memskill_trainer::skills_eval::skills_eval(&cfg, &bank, &opts)?;
    if let Some(loc) = cfg.registry.location() {
        let mut evaluated = bank.clone();
        // only this evaluation's runs: the bank's own history belongs to the run that made it
        evaluated.eval_runs = rows.iter().map(|r| r.run.clone()).collect();
        let dataset = cfg.data.dataset.to_string();
        memskill_trainer::skill_registry::write_or_warn(
            &loc,
            &memskill_trainer::skill_registry::RunRecords {
                dataset: Some(&dataset),
                bank: Some(&evaluated),
                ..memskill_trainer::skill_registry::RunRecords::new(
                    &out,
                    "skills-eval",
                    &cfg.designer.cfg.score,
                )
            },
        );
    }
    Ok((rows, out))
}

fn load(p: &Path) -> anyhow::Result<SkillBank> {
    load_bank(p).with_context(|| format!("cannot load skill bank from {}", p.display()))
}

/// Write a bank as JSON, atomically, through `guard` (no link, no input, no existing file
/// without --force). A non-finite number (which JSON would carry as `null`, unreadable
/// afterwards) is refused, naming the skill.
/// (`skills init` / `import`, `SkillBank.save` in Python.)
pub fn write_bank(bank: &SkillBank, out: &Path, guard: &WriteGuard) -> anyhow::Result<()> {
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
    write_output(out, (json + "\n").as_bytes(), guard)
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

/// The `show` table, with the default score weights.
pub fn render_table(bank: &SkillBank) -> String {
    render_table_with(bank, &memskill_designer::ScoreWeights::default())
}

/// Each skill's score with every term: value x weight = contribution.
fn score_lines(bank: &SkillBank, w: &memskill_designer::ScoreWeights) -> String {
    let mut out = String::new();
    for s in bank.skills() {
        let Some(terms) = memskill_designer::score_terms(bank, &s.name, w) else {
            continue;
        };
        let total: f64 = terms.iter().map(|t| t.contribution).sum();
        out.push_str(&format!("  {} ({}): {total:+.3}\n", s.name, s.status));
        for t in terms {
            match t.value {
                Some(v) => out.push_str(&format!(
                    "    {:<22} {:>8.3} x {:+.2} = {:+.3}\n",
                    t.name,
                    v + 0.0,
                    t.weight,
                    t.contribution
                )),
                None => out.push_str(&format!(
                    "    {:<22} {:>8} (no evidence: counts 0)\n",
                    t.name, "-"
                )),
            }
        }
    }
    out
}

/// The `show` table; skill scores with the weights `w`.
pub fn render_table_with(bank: &SkillBank, w: &memskill_designer::ScoreWeights) -> String {
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
    if !bank.eval_runs.is_empty() {
        out.push_str(&format!(
            "\nskill scores (release-gate evidence; weights {}):\n",
            if *w == memskill_designer::ScoreWeights::default() {
                "default"
            } else {
                "designer.score"
            }
        ));
        out.push_str(&score_lines(bank, w));
        out.push_str("\neval runs:\n");
        out.push_str(&memskill_designer::eval_runs_md(&bank.eval_runs));
    }
    out
}

pub fn run(c: SkillsCmd) -> anyhow::Result<()> {
    match c {
        SkillsCmd::Init { out, file, force } => {
            let out = match (out, file) {
                (Some(o), _) => o,
                (None, Some(f)) => {
                    eprintln!("note: `skills init FILE` is deprecated; use `skills init --out FILE` (outputs are --out in every skills command)");
                    f
                }
                (None, None) => bail!("skills init needs --out FILE"),
            };
            init(&out, force)?
        }
        SkillsCmd::Show { file, config, sets } => {
            let weights = score_weights(config.as_deref(), &sets)?;
            print!("{}", render_table_with(&load(&file)?, &weights))
        }
        SkillsCmd::Export { src, out, force } => export(&src, &out, force)?,
        SkillsCmd::Import {
            dir,
            out,
            force,
            follow_links,
            accept_edits,
        } => import(&dir, &out, force, follow_links, accept_edits)?,
        SkillsCmd::Validate { dir, accept_edits } => {
            let names = import_bank_opts(&dir, LinkPolicy::InsideOnly, accept_edits)
                .map(|b| b.names().into_iter().map(String::from).collect::<Vec<_>>())
                .with_context(|| format!("{} is not a valid skills directory", dir.display()))?;
            println!(
                "ok: {} skills valid in {}: {}",
                names.len(),
                dir.display(),
                names.join(", ")
            );
        }
        SkillsCmd::Eval(a) => eval_skills(a)?,
        SkillsCmd::Usage { run, skill, json } => usage(&run, skill.as_deref(), json)?,
        SkillsCmd::Scan { file, json } => scan(&file, json)?,
        SkillsCmd::Approve {
            bank,
            skill,
            legacy_bank,
            rule,
            reason,
            by,
        } => {
            let (name, bank) = approve_target(bank, skill, legacy_bank)?;
            approve(&name, &bank, &rule, &reason, by)?
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

/// `skills show`'s score weights: `designer.score` of `--config` (with `--set`s), of the
/// defaults with `--set`s, or memskill's default weights.
fn score_weights(
    config: Option<&Path>,
    sets: &[String],
) -> anyhow::Result<memskill_designer::ScoreWeights> {
    Ok(match (config, sets.is_empty()) {
        (Some(p), _) => {
            memskill_trainer::config::Config::load(p, sets)?
                .designer
                .cfg
                .score
        }
        (None, false) => {
            memskill_trainer::config::Config::from_toml_str("", sets, "--set")?
                .designer
                .cfg
                .score
        }
        (None, true) => memskill_designer::ScoreWeights::default(),
    })
}

/// `skills export`: the bank at `src` as Agent Skills folders in `out` (never onto `src`).
fn export(src: &Path, out: &Path, force: bool) -> anyhow::Result<()> {
    let bank = load(src)?;
    if fs_within(out, src) || fs_within(src, out) {
        bail!(
            "--out {} overlaps the exported bank {}: refusing to write onto an input",
            out.display(),
            src.display()
        );
    }
    export_bank(&bank, out, force)
        .with_context(|| format!("cannot export to {}", out.display()))?;
    println!(
        "exported {} skills to {} (hash {})",
        bank.len(),
        out.display(),
        &bank.content_hash()[..12]
    );
    Ok(())
}

/// `skills import`: the skills folders in `dir` as a bank file `out`.
fn import(
    dir: &Path,
    out: &Path,
    force: bool,
    follow_links: bool,
    accept_edits: bool,
) -> anyhow::Result<()> {
    let guard = WriteGuard::new("--out", force).input(dir);
    guard.check(out)?;
    let links = if follow_links {
        LinkPolicy::Follow
    } else {
        LinkPolicy::InsideOnly
    };
    // a file: the reference's OperationBank JSON (a foreign bank, scanned strictly)
    let bank = if dir.is_file() {
        let text = memskill_core::fsio::read_user_text(
            dir,
            memskill_core::fsio::SMALL_FILE_LIMIT,
            "skill bank",
        )?;
        if !memskill_designer::reference_bank::is_operation_bank(&text) {
            anyhow::bail!(
                "{}: a file to import must be the reference's OperationBank JSON \
                 ({{\"operations\": ...}}); import an exported skills folder otherwise",
                dir.display()
            );
        }
        load_bank(dir)
    } else {
        import_bank_opts(dir, links, accept_edits)
    }
    .with_context(|| format!("cannot import {}", dir.display()))?;
    write_bank(&bank, out, &guard)?;
    println!(
        "imported {} skills into {} (hash {})",
        bank.len(),
        out.display(),
        &bank.content_hash()[..12]
    );
    Ok(())
}

/// `skills init`: write the seed bank to `file` (an existing file only with `--force`).
fn init(file: &Path, force: bool) -> anyhow::Result<()> {
    let guard = WriteGuard::new("skills init", force);
    guard.check(file)?;
    let bank = SkillBank::seed();
    write_bank(&bank, file, &guard)?;
    println!(
        "wrote seed bank ({} skills) to {}",
        bank.len(),
        file.display()
    );
    Ok(())
}

/// `skills usage`: the run's invocation log summed per skill (a table, or JSON), or with
/// `--skill` that skill's uses one per line.
fn usage(run: &Path, skill: Option<&str>, json: bool) -> anyhow::Result<()> {
    use memskill_trainer::invocations;
    let log = invocations::read(run)?;
    match skill {
        Some(name) => {
            let mine: Vec<_> = log.iter().filter(|r| r.skill == name).collect();
            if mine.is_empty() {
                bail!("skill `{name}` has no use in {}", run.display());
            }
            for r in mine {
                println!("{}", serde_json::to_string(r)?);
            }
        }
        None if json => {
            println!(
                "{}",
                serde_json::to_string_pretty(&invocations::summarise(&log))?
            )
        }
        None => print!("{}", invocations::render(&invocations::summarise(&log))),
    }
    Ok(())
}

/// `skills scan`: the guard's verdict on each line of a JSONL file, in order.
fn scan(file: &Path, json: bool) -> anyhow::Result<()> {
    use std::io::{BufRead, Write};
    let input: Box<dyn BufRead> = if file == Path::new("-") {
        Box::new(std::io::stdin().lock())
    } else {
        let text = memskill_core::fsio::read_user_text(
            file,
            memskill_core::fsio::SMALL_FILE_LIMIT,
            "scan input",
        )
        .with_context(|| format!("cannot read {}", file.display()))?;
        Box::new(std::io::Cursor::new(text.into_bytes()))
    };
    let guard = memskill_guard::Guard::shipped();
    let mut out = std::io::stdout().lock();
    let (mut n, mut rejected) = (0usize, 0usize);
    for (i, line) in input.lines().enumerate() {
        let line =
            line.with_context(|| format!("{}: line {}: not UTF-8 text", file.display(), i + 1))?;
        if line.trim().is_empty() {
            continue;
        }
        n += 1;
        let verdict = match scan_line(&line) {
            Ok((name, d, ins)) => Ok(guard.scan_skill(&name, &d, &ins)),
            Err(e) => Err(format!("{}: line {}: {e}", file.display(), i + 1)),
        };
        let f = match &verdict {
            Ok(f) => f.as_ref(),
            Err(_) => None,
        };
        rejected += f.is_some() as usize;
        if json {
            let v = match &verdict {
                Err(e) => serde_json::json!({"accepted": null, "error": e}),
                Ok(None) => {
                    serde_json::json!({"accepted": true, "category": null, "rule": null, "stage": null, "view": null, "evidence": null})
                }
                Ok(Some(f)) => {
                    serde_json::json!({"accepted": false, "category": f.category, "rule": f.rule, "stage": f.stage, "view": f.view, "evidence": f.evidence})
                }
            };
            writeln!(out, "{v}")?;
        } else {
            match &verdict {
                Err(e) => writeln!(out, "{:>5}  error: {e}", i + 1)?,
                Ok(None) => writeln!(out, "{:>5}  accepted", i + 1)?,
                Ok(Some(f)) => writeln!(out, "{:>5}  rejected: {f}", i + 1)?,
            }
        }
    }
    if !json {
        writeln!(
            out,
            "{n} texts: {} accepted, {rejected} rejected (guard {})",
            n - rejected,
            *memskill_guard::GUARD_VERSION
        )?;
    }
    Ok(())
}

/// One `skills scan` line as (name, description, instructions): a bare text is scanned as
/// the instructions of a skill with a neutral name and description.
fn scan_line(line: &str) -> Result<(String, String, String), String> {
    let v: serde_json::Value = serde_json::from_str(line).map_err(|e| format!("not JSON: {e}"))?;
    let field = |k: &str| v.get(k).and_then(|x| x.as_str()).map(String::from);
    if let Some(t) = field("text") {
        let (n, d) = memskill_guard::data::NEUTRAL;
        return Ok((n.into(), d.into(), t));
    }
    match (field("name"), field("description"), field("instructions")) {
        (Some(n), Some(d), Some(i)) => Ok((n, d, i)),
        _ => {
            Err("needs \"text\" or \"name\", \"description\" and \"instructions\" (strings)".into())
        }
    }
}

/// `skills approve BANK --skill NAME`, or the deprecated `skills approve NAME --bank BANK`:
/// (skill name, bank path).
fn approve_target(
    first: PathBuf,
    skill: Option<String>,
    legacy_bank: Option<PathBuf>,
) -> anyhow::Result<(String, PathBuf)> {
    match (skill, legacy_bank) {
        (Some(name), _) => Ok((name, first)),
        (None, Some(bank)) => {
            eprintln!("note: `skills approve NAME --bank BANK` is deprecated; use `skills approve BANK --skill NAME` (the bank first, as in every skills command)");
            Ok((first.to_string_lossy().into_owned(), bank))
        }
        (None, None) => bail!(
            "skills approve needs the skill: `skills approve {} --skill NAME --rule RULE --reason TEXT`",
            first.display()
        ),
    }
}

/// `skills approve`: record a reviewed guard finding in a bank.json.
fn approve(
    name: &str,
    bank_path: &Path,
    rule: &str,
    reason: &str,
    by: Option<String>,
) -> anyhow::Result<()> {
    let by = crate::person(by, "--by")?;
    if bank_path.join("manifest.json").is_file() {
        memskill_trainer::checkpoint::approve_in_checkpoint(bank_path, name, rule, reason, &by)?;
        println!(
            "approved: skill `{name}`, rule {rule}, by {by}: {reason}\nrecorded in the checkpoint {} (bank and manifest rewritten)",
            bank_path.display()
        );
        return Ok(());
    }
    let path = if bank_path.is_dir() {
        bank_path.join("bank.json")
    } else {
        bank_path.to_path_buf()
    };
    let mut bank = memskill_designer::read_bank_unchecked(&path)?;
    memskill_designer::approve(&mut bank, name, rule, reason, &by)
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    write_bank(&bank, &path, &WriteGuard::new("skills approve", true))?;
    println!(
        "approved: skill `{name}`, rule {rule}, by {by}: {reason}\nrecorded in {} (guard record and an `approved` release)",
        path.display()
    );
    // an export approved as it stands now (edits included): its manifest follows
    let manifest = bank_path.join(memskill_core::fsio::FOLDER_MANIFEST);
    if bank_path.is_dir() && manifest.is_file() {
        memskill_core::fsio::rewrite_folder_manifest(bank_path)?;
        println!(
            "{} rewritten for the folder's files as they are now",
            manifest.display()
        );
    }
    Ok(())
}
