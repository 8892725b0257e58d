//! `memskill registry`: the governance registry (memskill-registry), a SQLite file by default
//! (`runs/registry.db`) or a PostgreSQL database by URL (`--registry postgres://...`, or the
//! `MEMSKILL_REGISTRY` variable).

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::Subcommand;
use memskill_core::fsio::WriteGuard;
use memskill_core::{ReleaseKind, ReleaseRecord, SkillBank, SkillStatus, Version};
use memskill_registry::ops::{self, Decision};
use memskill_registry::{clock, show, Location, Row};
use memskill_trainer::skill_registry::{self as sync, RunRecords};

#[derive(clap::Args, Clone)]
pub struct Target {
    /// The registry: a SQLite file or a postgres:// URL (default: $MEMSKILL_REGISTRY, else
    /// runs/registry.db).
    #[arg(long)]
    pub registry: Option<String>,
}

impl Target {
    fn location(&self) -> Location {
        let s = self
            .registry
            .clone()
            .or_else(|| {
                std::env::var("MEMSKILL_REGISTRY")
                    .ok()
                    .filter(|s| !s.trim().is_empty())
            })
            .unwrap_or_else(|| memskill_registry::DEFAULT_PATH.to_string());
        Location::parse(&s)
    }
}

/// A governance decision's arguments.
#[derive(clap::Args)]
pub struct DecideArgs {
    pub skill: String,
    /// Why (kept in the release record).
    #[arg(long)]
    pub reason: String,
    /// Who decided (default: $USER).
    #[arg(long)]
    pub approved_by: Option<String>,
    /// Also apply the decision to this skill bank file (bank.json / skill_bank.json), with
    /// the same release record, so that runs using it see it.
    #[arg(long)]
    pub bank: Option<PathBuf>,
    #[command(flatten)]
    pub target: Target,
}

#[derive(Subcommand)]
pub enum RegistryCmd {
    /// Create the registry (or bring its schema up to date) and print its status.
    Init(Target),
    /// Where it is, its schema version and migrations, rows per table.
    Status(Target),
    /// Skills with version, status and scope.
    Skills {
        /// Only this status (active, canary, candidate, draft, deprecated, archived).
        #[arg(long)]
        status: Option<String>,
        /// Only skills whose scope lists this: runs=RUN_ID or datasets=NAME.
        #[arg(long)]
        scope: Option<String>,
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        target: Target,
    },
    /// One skill's versions, releases with diffs and approvers, eval runs with its score's
    /// terms, and invocations with feedback.
    Show {
        skill: String,
        /// Only this version's eval runs and invocations, and its text.
        #[arg(long)]
        version: Option<String>,
        #[command(flatten)]
        target: Target,
    },
    /// Make a skill active (a `promote` release).
    Promote(DecideArgs),
    /// Deprecate a skill (kept, not selected).
    Deprecate(DecideArgs),
    /// Archive a skill (never selectable; its history stays).
    Archive(DecideArgs),
    /// Restore an earlier version's text (a `rollback` release with the diff).
    Rollback {
        #[command(flatten)]
        decide: DecideArgs,
        /// The version to restore.
        #[arg(long)]
        to: String,
    },
    /// Record a user's feedback on one invocation.
    Feedback {
        invocation: String,
        /// A score, e.g. -1..1 or 0..5 (kept as given).
        #[arg(long, allow_negative_numbers = true)]
        score: f64,
        #[arg(long)]
        text: String,
        /// Who gave it (default: $USER).
        #[arg(long)]
        by: Option<String>,
        #[command(flatten)]
        target: Target,
    },
    /// Record the post-use reflection (six questions) on one invocation; without answers,
    /// print the questions.
    Postmortem(PostmortemArgs),
    /// Run one read-only SQL statement (the connection refuses writes).
    Query {
        sql: String,
        /// One JSON object per row instead of a table.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        target: Target,
    },
    /// Every table as JSON Lines ({"table": ..., "row": {...}}), to stdout or --out.
    Export {
        #[arg(long)]
        out: Option<PathBuf>,
        #[arg(long)]
        force: bool,
        #[command(flatten)]
        target: Target,
    },
    /// Write a run directory (training, `eval`'s output folder, `skills eval`'s output folder),
    /// a skill bank file or a sample's memory bank file (`bank build`) into the registry;
    /// records already there are skipped (a memory's row follows its file: forgotten there,
    /// forgotten here).
    Ingest {
        path: PathBuf,
        #[command(flatten)]
        target: Target,
    },
}

/// `registry postmortem`'s arguments.
#[derive(clap::Args)]
pub struct PostmortemArgs {
    pub invocation: String,
    /// Answers as a JSON object file (keys: should_trigger, helped, unclear_step,
    /// new_pitfall, script_candidate, action).
    #[arg(long, conflicts_with = "designer")]
    pub answers: Option<PathBuf>,
    /// One answer, KEY=TEXT (repeatable).
    #[arg(long = "answer", value_name = "KEY=TEXT", conflicts_with = "designer")]
    pub answer: Vec<String>,
    #[arg(long, conflicts_with = "designer")]
    pub by: Option<String>,
    /// Have the designer model of --config ([designer.llm]) answer the six questions from
    /// the invocation's context; recorded as by `designer:<model>`. A reply without the
    /// six answers is an error and nothing is written.
    #[arg(long, requires = "config")]
    pub designer: bool,
    /// The run config whose designer model answers (with --designer).
    #[arg(long, requires = "designer")]
    pub config: Option<PathBuf>,
    /// Config overrides, KEY=VALUE (repeatable; with --config).
    #[arg(long = "set", value_name = "KEY=VALUE", requires = "config")]
    pub sets: Vec<String>,
    #[command(flatten)]
    pub target: Target,
}

pub fn run(c: RegistryCmd) -> Result<()> {
    match c {
        RegistryCmd::Init(t) => {
            let mut db = memskill_registry::open_for_write(&t.location())?;
            print!("{}", ops::status(&mut db)?);
        }
        RegistryCmd::Status(t) => {
            let mut db = memskill_registry::open_existing(&t.location(), true)?;
            print!("{}", ops::status(&mut db)?);
        }
        RegistryCmd::Skills {
            status,
            scope,
            json,
            target,
        } => skills(&target, status.as_deref(), scope.as_deref(), json)?,
        RegistryCmd::Show {
            skill,
            version,
            target,
        } => {
            let mut db = memskill_registry::open_existing(&target.location(), true)?;
            print!("{}", show::render(&mut db, &skill, version.as_deref())?);
        }
        RegistryCmd::Promote(a) => decide(a, Decision::Promote)?,
        RegistryCmd::Deprecate(a) => decide(a, Decision::Deprecate)?,
        RegistryCmd::Archive(a) => decide(a, Decision::Archive)?,
        RegistryCmd::Rollback { decide: a, to } => rollback(a, &to)?,
        RegistryCmd::Feedback {
            invocation,
            score,
            text,
            by,
            target,
        } => {
            let by = crate::person(by, "--by")?;
            let mut db = memskill_registry::open_existing(&target.location(), false)?;
            ops::feedback(&mut db, &invocation, score, &text, &by, &clock::now())?;
            println!("feedback recorded on {invocation}");
        }
        RegistryCmd::Postmortem(a) => match (a.designer, &a.config) {
            (true, Some(c)) => designer_postmortem(&a.target, &a.invocation, c, &a.sets)?,
            _ => postmortem(
                &a.target,
                &a.invocation,
                a.answers.as_deref(),
                &a.answer,
                a.by,
            )?,
        },
        RegistryCmd::Query { sql, json, target } => {
            let mut db = memskill_registry::open_existing(&target.location(), true)?;
            let rows = ops::query(&mut db, &sql)?;
            print!("{}", render_rows(&rows, json));
        }
        RegistryCmd::Export { out, force, target } => {
            let mut db = memskill_registry::open_existing(&target.location(), true)?;
            let text = ops::export(&mut db)?;
            match out {
                Some(p) => {
                    memskill_core::fsio::write_user_file(
                        &p,
                        text.as_bytes(),
                        &WriteGuard::new("--out", force),
                    )
                    .with_context(|| format!("writing {}", p.display()))?;
                    eprintln!("wrote {} ({} rows)", p.display(), text.lines().count());
                }
                None => print!("{text}"),
            }
        }
        RegistryCmd::Ingest { path, target } => ingest(&target, &path)?,
    }
    Ok(())
}

fn skills(t: &Target, status: Option<&str>, scope: Option<&str>, json: bool) -> Result<()> {
    if let Some(s) = status {
        s.parse::<SkillStatus>().map_err(|_| {
            anyhow::anyhow!(
                "--status {s:?}: expected active, canary, candidate, draft, deprecated or archived"
            )
        })?;
    }
    let scope = scope
        .map(|s| {
            s.split_once('=')
                .filter(|(k, _)| matches!(*k, "runs" | "datasets"))
                .with_context(|| format!("--scope {s:?}: expected runs=RUN_ID or datasets=NAME"))
        })
        .transpose()?;
    let mut db = memskill_registry::open_existing(&t.location(), true)?;
    let rows = ops::list_skills(&mut db, status, scope)?;
    print!("{}", render_rows(&rows, json));
    Ok(())
}

/// Rows as a Markdown table, or one JSON object per line.
fn render_rows(rows: &[Row], json: bool) -> String {
    if json {
        return rows
            .iter()
            .map(|r| r.to_object().to_string() + "\n")
            .collect();
    }
    let Some(first) = rows.first() else {
        return "(no rows)\n".into();
    };
    let mut s = format!(
        "| {} |\n|{}\n",
        first.columns.join(" | "),
        "---|".repeat(first.columns.len())
    );
    for r in rows {
        let cells: Vec<String> = r
            .values
            .iter()
            .map(|v| match v {
                serde_json::Value::String(x) => x.replace('|', "\\|").replace('\n', " "),
                serde_json::Value::Null => "-".into(),
                v => v.to_string().replace('|', "\\|"),
            })
            .collect();
        s.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    s
}

/// Where a decision is also applied: a bank file, or an exported folder (its `bank.json`;
/// the folder is exported again, so its SKILL.md files, RELEASES.md and manifest follow).
/// Checkpoints are records of a run and are not edited.
fn bank_for(path: &Path, skill: &str) -> Result<SkillBank> {
    if path.join("manifest.json").is_file() {
        bail!(
            "{} is a checkpoint, which stays as the run saved it; apply the decision to the run's exported bank (RUN/skills) or a bank file",
            path.display()
        );
    }
    let bank = memskill_trainer::runtime::load_bank(path)
        .with_context(|| format!("loading the skill bank {}", path.display()))?;
    if !bank.contains(skill) {
        bail!("the skill bank {} has no skill {skill}", path.display());
    }
    Ok(bank)
}

fn record(
    skill: &str,
    kind: ReleaseKind,
    from: Version,
    to: Version,
    reason: &str,
    by: &str,
) -> ReleaseRecord {
    let mut r = ReleaseRecord::status_change(skill, kind, from, 0, reason.to_string());
    r.to_version = to;
    r.approved_by = Some(by.to_string());
    r
}

fn save_bank(bank: &SkillBank, path: &Path) -> Result<()> {
    let export_dir = if path.is_dir() {
        Some(path)
    } else {
        path.parent().filter(|d| {
            path.file_name().is_some_and(|n| n == "bank.json")
                && d.join(memskill_core::fsio::FOLDER_MANIFEST).is_file()
        })
    };
    match export_dir {
        Some(dir) => {
            memskill_designer::export_bank(bank, dir, true)
                .with_context(|| format!("exporting the bank again to {}", dir.display()))?;
            println!("applied to {} (exported again)", dir.display());
        }
        None => {
            crate::skills::write_bank(bank, path, &WriteGuard::new("--bank", true))?;
            println!("applied to {}", path.display());
        }
    }
    Ok(())
}

fn decide(a: DecideArgs, d: Decision) -> Result<()> {
    let by = crate::person(a.approved_by.clone(), "--approved-by")?;
    let bank = a
        .bank
        .as_deref()
        .map(|p| bank_for(p, &a.skill))
        .transpose()?;
    let mut db = memskill_registry::open_existing(&a.target.location(), false)?;
    if let (Some(b), Some(path)) = (&bank, a.bank.as_deref()) {
        // one decision, one version: the bank's record must be the registry's
        let row = ops::skill_row(&mut db, &a.skill)?;
        let in_bank = b
            .get(&a.skill)
            .map(|s| s.version.to_string())
            .unwrap_or_default();
        if row.text("version") != in_bank {
            bail!(
                "the registry holds {} at {}, the bank {} at {in_bank}: decide on the same version (roll one back first, or pass another bank)",
                a.skill,
                row.text("version"),
                path.display()
            );
        }
    }
    // the bank's own evidence for a high-risk promotion (the registry checks its own too)
    let gate_note = match (&bank, d) {
        (Some(b), Decision::Promote) => bank_high_risk_gate(b, &a.skill, &by)?,
        _ => None,
    };
    let id = ops::decide(&mut db, &a.skill, d, &a.reason, &by, &clock::now())?;
    println!("{id}: {} {} by {by}", a.skill, d.status());
    if let Some(g) = &gate_note {
        println!("{g}");
    }
    if let (Some(mut bank), Some(path)) = (bank, a.bank.as_deref()) {
        let (status, kind) = match d {
            Decision::Promote => (SkillStatus::Active, ReleaseKind::Promoted),
            Decision::Deprecate => (SkillStatus::Deprecated, ReleaseKind::Deprecated),
            Decision::Archive => (SkillStatus::Archived, ReleaseKind::Archived),
        };
        let s = bank
            .get_mut(&a.skill)
            .context("skill vanished from the bank")?;
        s.status = status;
        let v = s.version;
        let note = match &gate_note {
            Some(g) => format!("{}; {g}", a.reason),
            None => a.reason.clone(),
        };
        bank.releases.push(record(&a.skill, kind, v, v, &note, &by));
        save_bank(&bank, path)?;
    }
    Ok(())
}

/// The high-risk gate on the bank's evidence (its risk level, eval runs and releases).
fn bank_high_risk_gate(bank: &SkillBank, skill: &str, by: &str) -> Result<Option<String>> {
    use memskill_core::governance::{bank_evidence, high_risk_promotion};
    let Some(ev) = bank_evidence(bank, skill, by) else {
        return Ok(None);
    };
    high_risk_promotion(&ev).map_err(|missing| {
        anyhow::anyhow!(
            "skill {skill} is high-risk in the bank (its text asks for tools, code or external services); the high-risk gate refuses the promotion: {}",
            missing.join("; ")
        )
    })
}

fn rollback(a: DecideArgs, to: &str) -> Result<()> {
    let by = crate::person(a.approved_by.clone(), "--approved-by")?;
    let to_v: Version = to
        .parse()
        .map_err(|e| anyhow::anyhow!("--to {to:?}: {e}"))?;
    let bank = a
        .bank
        .as_deref()
        .map(|p| bank_for(p, &a.skill))
        .transpose()?;
    let mut db = memskill_registry::open_existing(&a.target.location(), false)?;
    let (id, text) = ops::rollback(&mut db, &a.skill, to, &a.reason, &by, &clock::now())?;
    println!("{id}: {} rolled back to {to} by {by}", a.skill);
    if let (Some(mut bank), Some(path)) = (bank, a.bank.as_deref()) {
        let s = bank
            .get_mut(&a.skill)
            .context("skill vanished from the bank")?;
        let from = s.version;
        let diff = memskill_core::diff::text_diff(
            &s.description,
            &s.instructions,
            &text.description,
            &text.instructions,
        );
        s.description = text.description;
        s.instructions = text.instructions;
        s.action = text
            .action
            .parse()
            .map_err(|e| anyhow::anyhow!("version {to}'s action {:?}: {e}", text.action))?;
        s.version = to_v;
        s.status = SkillStatus::Active;
        // the restored text's own risk, where the bank assesses risk (governance)
        if s.risk.is_some() {
            s.risk = Some(memskill_designer::risk::assess_skill(s));
        }
        let mut r = record(&a.skill, ReleaseKind::Restored, from, to_v, &a.reason, &by);
        r.diff = diff;
        bank.releases.push(r);
        save_bank(&bank, path)?;
    }
    Ok(())
}

fn postmortem(
    t: &Target,
    invocation: &str,
    file: Option<&Path>,
    answer: &[String],
    by: Option<String>,
) -> Result<()> {
    let mut obj = match file {
        Some(p) => {
            let text = memskill_core::fsio::read_user_text(
                p,
                memskill_core::fsio::SMALL_FILE_LIMIT,
                "post-mortem answers",
            )
            .with_context(|| format!("reading {}", p.display()))?;
            serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(&text)
                .with_context(|| format!("{}: expected a JSON object", p.display()))?
        }
        None => serde_json::Map::new(),
    };
    for a in answer {
        let (k, v) = a
            .split_once('=')
            .with_context(|| format!("--answer {a:?}: expected KEY=TEXT"))?;
        obj.insert(k.trim().to_string(), v.trim().into());
    }
    if obj.is_empty() {
        let mut s = format!("the post-use reflection on {invocation} asks:\n");
        for (k, q) in ops::POSTMORTEM_QUESTIONS {
            s.push_str(&format!("  {k}: {q}\n"));
        }
        bail!("{s}answer them with --answer KEY=TEXT (each) or --answers FILE.json");
    }
    let by = crate::person(by, "--by")?;
    let mut db = memskill_registry::open_existing(&t.location(), false)?;
    ops::postmortem(
        &mut db,
        invocation,
        &serde_json::Value::Object(obj),
        &by,
        &clock::now(),
    )?;
    println!("post-mortem recorded on {invocation}");
    Ok(())
}

/// `registry postmortem ID --designer --config C`: the run config's designer model answers the
/// six questions from what the registry holds about the invocation (no response cache: one
/// question, asked once); its answers are recorded as by `designer:<model>`.
fn designer_postmortem(t: &Target, invocation: &str, config: &Path, sets: &[String]) -> Result<()> {
    use memskill_trainer::config::{CacheMode, LlmBackend};
    let cfg = memskill_trainer::config::Config::load(config, sets)?;
    let mut llm_cfg = cfg.designer_llm().clone();
    llm_cfg.cache = CacheMode::Off;
    let model = match &llm_cfg.backend {
        LlmBackend::Openai(o) => o.model.clone(),
        _ => llm_cfg.backend.name().to_string(),
    };
    let mut db = memskill_registry::open_existing(&t.location(), false)?;
    let ctx = memskill_registry::postmortem::context(&mut db, invocation)?;
    let here = std::env::current_dir().context("the current directory")?;
    let llm = memskill_trainer::backends::BackendFactory::new(&here, Vec::new())
        .get(&llm_cfg, "designer.llm")?;
    let prompts =
        memskill_core::PromptSet::with_defaults(memskill_registry::postmortem::PROMPT_TEMPLATES)?;
    let answers = memskill_registry::postmortem::ask(llm.as_ref(), &prompts, &ctx)
        .with_context(|| format!("post-mortem of {invocation}: nothing was recorded"))?;
    let by = format!("designer:{model}");
    ops::postmortem(&mut db, invocation, &answers, &by, &clock::now())?;
    println!("post-mortem recorded on {invocation} by {by}");
    for (k, _) in ops::POSTMORTEM_QUESTIONS {
        println!("  {k}: {}", answers[k].as_str().unwrap_or(""));
    }
    Ok(())
}

/// `registry ingest PATH`: what the path is decides what is written.
fn ingest(t: &Target, path: &Path) -> Result<()> {
    let loc = t.location();
    let none = memskill_designer::ScoreWeights::default();
    let mut total = memskill_registry::ingest::Counts::default();
    let mut add = |c: memskill_registry::ingest::Counts| total.add(&c);
    if let Some(memory) = memory_bank_file(path) {
        // a sample's memory bank (`bank build`, `bank forget`): the sample is the file's stem
        let sample = path
            .file_stem()
            .map_or("sample".into(), |s| s.to_string_lossy().to_string());
        add(sync::write(
            &loc,
            &RunRecords {
                memories: &[sync::SampleBank {
                    sample: &sample,
                    trace: None,
                    bank: &memory,
                }],
                ..RunRecords::new(path, "memory", &none)
            },
        )?);
    } else if path.is_file() {
        let bank = memskill_trainer::runtime::load_bank(path)
            .with_context(|| format!("{}: not a skill bank", path.display()))?;
        // the file itself is the source (its name and absolute path give the id)
        add(write_bank(&loc, path, "import", &bank)?);
    } else if path.join("results.json").is_file() {
        let p = path.join("results.json");
        let text = memskill_core::fsio::read_user_text(&p, 1 << 32, "evaluation results")?;
        let results: memskill_trainer::eval::EvalResults = serde_json::from_str(&text)
            .with_context(|| format!("{}: not memskill results", p.display()))?;
        add(sync::write(
            &loc,
            &RunRecords {
                dataset: Some(&results.dataset),
                eval: Some(results.registry_view()),
                ..RunRecords::new(path, "eval", &none)
            },
        )?);
    } else if path.join("skills-eval.json").is_file() {
        let p = path.join("skills-eval.json");
        let text = memskill_core::fsio::read_user_text(&p, 1 << 30, "skills eval results")?;
        let rows: Vec<serde_json::Value> = serde_json::from_str(&text)
            .with_context(|| format!("{}: expected the rows `skills eval` writes", p.display()))?;
        let mut bank = SkillBank::empty();
        for (i, r) in rows.iter().enumerate() {
            bank.eval_runs.push(
                serde_json::from_value(r["run"].clone())
                    .with_context(|| format!("{}: row {} has no eval run", p.display(), i + 1))?,
            );
        }
        add(write_bank(&loc, path, "skills-eval", &bank)?);
    } else if path.join("config.toml").is_file() {
        ingest_training(&loc, path, &mut add)?;
    } else {
        bail!(
            "{}: not a run folder (config.toml), an evaluation folder (results.json), a `skills eval` folder (skills-eval.json) or a skill bank file",
            path.display()
        );
    }
    println!(
        "{}: {} new rows ({})",
        loc.display(),
        total.total(),
        serde_json::to_string(&total)?
    );
    Ok(())
}

/// A training run as its trainer would have written it: each kept checkpoint's bank in step
/// order, then the final bank with the whole invocation log.
fn ingest_training(
    loc: &Location,
    dir: &Path,
    add: &mut impl FnMut(memskill_registry::ingest::Counts),
) -> Result<()> {
    let cfg = memskill_trainer::config::Config::load(&dir.join("config.toml"), &[])?;
    let dataset = cfg.data.dataset.to_string();
    let weights = &cfg.designer.cfg.score;
    let mut steps: Vec<(u64, PathBuf)> = std::fs::read_dir(dir.join("checkpoints"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().to_string();
            let n = name.strip_prefix("step-")?.parse().ok()?;
            Some((n, e.path().join("skill_bank.json")))
        })
        .filter(|(_, p)| p.is_file())
        .collect();
    steps.sort();
    for (_, p) in &steps {
        let bank = memskill_trainer::runtime::load_bank(p)?;
        add(sync::write(
            loc,
            &RunRecords {
                dataset: Some(&dataset),
                bank: Some(&bank),
                ..RunRecords::new(dir, "train", weights)
            },
        )?);
    }
    let final_bank = [
        dir.join("skills").join("bank.json"),
        dir.join("checkpoints")
            .join("latest")
            .join("skill_bank.json"),
    ]
    .into_iter()
    .find(|p| p.exists())
    .with_context(|| {
        format!(
            "{}: no skills/bank.json and no checkpoints/latest",
            dir.display()
        )
    })?;
    let bank = memskill_trainer::runtime::load_bank(&final_bank)?;
    // the log as far as the latest checkpoint covers it: a resume cuts it back there and
    // writes what follows again
    let covered = memskill_trainer::checkpoint::pointer(dir, "latest")?
        .map(|ck| memskill_trainer::checkpoint::Checkpoint::load(&ck))
        .transpose()?
        .map(|ck| ck.state.invocations_len);
    let (log, _) = sync::read_invocations_from(dir, 0, covered)?;
    add(sync::write(
        loc,
        &RunRecords {
            dataset: Some(&dataset),
            bank: Some(&bank),
            invocations: &log,
            ..RunRecords::new(dir, "train", weights)
        },
    )?);
    Ok(())
}

/// Write a bank (an import, or the eval runs of a `skills eval` folder) from `path`.
fn write_bank(
    loc: &Location,
    path: &Path,
    kind: &str,
    bank: &SkillBank,
) -> Result<memskill_registry::ingest::Counts> {
    let weights = memskill_designer::ScoreWeights::default();
    sync::write(
        loc,
        &RunRecords {
            bank: Some(bank),
            ..RunRecords::new(path, kind, &weights)
        },
    )
}

/// The memory bank in `path`, when it is a memory bank's JSON file (it has `items`).
fn memory_bank_file(path: &Path) -> Option<memskill_core::MemoryBank> {
    if !path.is_file() {
        return None;
    }
    let text = memskill_core::fsio::read_user_text(path, 1 << 30, "memory bank").ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    v.get("items")?;
    serde_json::from_value(v).ok()
}
