//! `memskill bank`: build one sample's memory bank with the configured executor, and show a
//! memory bank (type, scope, sensitivity of every memory) with scope-filtered retrieval.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;

use anyhow::{anyhow, bail, Context, Result};
use clap::Subcommand;
use memskill_controller::Controller;
use memskill_core::fsio::WriteGuard;
use memskill_core::{MemoryBank, MemoryItem, Scope, ScopeMatch};

use memskill_trainer::backends::embed;
use memskill_trainer::baselines::{baseline_config, Baseline};
use memskill_trainer::config::Config;
use memskill_trainer::episode::build_memory;
use memskill_trainer::eval::{eval_ctx, load_eval_samples};
use memskill_trainer::fsutil::{read_input_text, refuse_existing, write_output};
use memskill_trainer::runtime::Runtime;

#[derive(Subcommand)]
pub enum BankCmd {
    /// Build the memory bank of one sample with the config's executor and skill bank (every
    /// selectable skill on every span, as `eval --method static-skills`) and write it as JSON.
    Build(BuildArgs),
    /// Print a memory bank (JSON from `bank build` or the evaluation cache): one row per
    /// memory a reader may see (`MemoryBank::shown`), with its type, scope and sensitivity;
    /// filtered to a scope, and ranked against a query.
    Show(ShowArgs),
    /// Forget memories on a user's request: their text and every earlier revision are erased
    /// (not only tombstoned, as an executor DELETE does), each leaves a record (which memory,
    /// a hash of what was erased, who, why, when). Rewrites the file atomically.
    Forget(ForgetArgs),
}

#[derive(clap::Args)]
pub struct ForgetArgs {
    /// A memory bank JSON file (from `bank build`).
    pub file: PathBuf,
    /// The memory to forget (repeatable).
    #[arg(
        long = "memory",
        value_name = "ID",
        required_unless_present = "matching"
    )]
    pub memories: Vec<u64>,
    /// Forget every memory whose text, or an earlier text, contains this (case-insensitive).
    #[arg(long, conflicts_with = "memories")]
    pub matching: Option<String>,
    /// Why (kept in the record).
    #[arg(long)]
    pub reason: String,
    /// Who asked (default: $USER).
    #[arg(long)]
    pub by: Option<String>,
    /// List what would be forgotten; change nothing.
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(clap::Args)]
pub struct BuildArgs {
    /// The run config (dataset, executor, encoder, skill bank).
    #[arg(long)]
    pub config: PathBuf,
    /// Override config keys (`--set executor.scoped_memories=true`).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// The sample's id (LoCoMo: `conv-26`, ...).
    #[arg(long)]
    pub sample: String,
    /// The split the sample is in (default: the config's `eval.split`).
    #[arg(long)]
    pub split: Option<memskill_trainer::config::SplitSpec>,
    /// Output JSON file (written atomically).
    #[arg(long)]
    pub out: PathBuf,
    /// Replace an existing --out file.
    #[arg(long)]
    pub force: bool,
}

#[derive(clap::Args)]
pub struct ShowArgs {
    /// A memory bank JSON file.
    pub file: PathBuf,
    /// Only memories this scope sees (`user:Caroline`, `org:acme,user:ann`; `none` = shared
    /// memories only): its own, the shared ones and those of the org / project / agent it is in.
    #[arg(long)]
    pub scope: Option<String>,
    /// With --scope: only memories of exactly that scope.
    #[arg(long)]
    pub exact: bool,
    /// Show flagged memories (redacted) and sensitive ones in full, as `memory.show_flagged`.
    #[arg(long)]
    pub show_flagged: bool,
    /// Rank the memories by cosine similarity to this text (needs --config for its encoder).
    #[arg(long)]
    pub query: Option<String>,
    /// The config whose encoder built the bank (for --query).
    #[arg(long)]
    pub config: Option<PathBuf>,
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// With --query: how many memories.
    #[arg(long, default_value_t = 5)]
    pub top: usize,
    /// Print JSON lines instead of a table.
    #[arg(long)]
    pub json: bool,
}

pub fn run(c: BankCmd) -> Result<()> {
    match c {
        BankCmd::Build(a) => build(a),
        BankCmd::Show(a) => show(a),
        BankCmd::Forget(a) => forget(a),
    }
}

fn build(a: BuildArgs) -> Result<()> {
    refuse_existing(&a.out, a.force, "--out")?;
    let cfg = Config::load(&a.config, &a.sets)?;
    let (cfg, skills) = baseline_config(Baseline::StaticSkills, &cfg)?;
    let split = a.split.unwrap_or(cfg.eval.split);
    let samples = load_eval_samples(&cfg, split, None)?;
    let Some(sample) = samples.iter().find(|s| s.id == a.sample) else {
        let ids: Vec<&str> = samples.iter().take(12).map(|s| s.id.as_str()).collect();
        bail!(
            "--sample {}: no such sample in split {split:?} ({} samples: {}{})",
            a.sample,
            samples.len(),
            ids.join(", "),
            if samples.len() > ids.len() {
                ", ..."
            } else {
                ""
            }
        );
    };
    let dir = match a.out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let rt = Runtime::build(&cfg, &dir, vec![sample.clone()], false)?;
    rt.probe_endpoints()?;
    let descs: Vec<&str> = skills.iter().map(|s| s.description.as_str()).collect();
    let embs = std::sync::Arc::new(embed(rt.encoder.as_ref(), &descs)?);
    let mut controller = Controller::new(rt.encoder.dim(), &cfg.policy, &cfg.ppo, cfg.run.seed)?;
    let lock = Mutex::new(&mut controller);
    let ctx = eval_ctx(&cfg, &rt, &lock, &skills, embs);
    let built = build_memory(&ctx, sample, None)?;
    if built.call_errors > 0 {
        bail!(
            "{} of {} executor calls failed: {}",
            built.call_errors,
            sample.spans.len(),
            built.errors.join(" | ")
        );
    }
    let mut bank = built.memory;
    // as the evaluation cache: a flagged secret is stored nowhere verbatim
    bank.redact_flagged(memskill_guard::redact_secrets);
    write_output(
        &a.out,
        &serde_json::to_vec_pretty(&bank)?,
        &WriteGuard::new("--out", a.force).input(&a.config),
    )?;
    println!(
        "{}: {} memories from {} spans of {} ({} parse problems, {} flagged)",
        a.out.display(),
        bank.live_count(),
        sample.spans.len(),
        sample.id,
        built.parse_problems,
        built.flagged
    );
    if !built.contract_refused.is_empty() {
        let by: Vec<String> = built
            .contract_refused
            .iter()
            .map(|(t, n)| format!("{t} {n}"))
            .collect();
        println!(
            "refused by the memory contract: {} writes ({})",
            built.contract_refused.values().sum::<usize>(),
            by.join(", ")
        );
    }
    print_counts(&bank);
    Ok(())
}

/// Live memories per type, scope and sensitivity.
fn print_counts(bank: &MemoryBank) {
    let mut by: [BTreeMap<String, usize>; 3] = Default::default();
    for m in bank.live() {
        let k = m.kind.map_or("-".to_string(), |k| k.to_string());
        *by[0].entry(k).or_default() += 1;
        *by[1].entry(scope_text(m)).or_default() += 1;
        *by[2].entry(m.sensitivity.to_string()).or_default() += 1;
    }
    for (what, counts) in ["types", "scopes", "sensitivity"].iter().zip(by) {
        let parts: Vec<String> = counts.iter().map(|(k, n)| format!("{k} {n}")).collect();
        println!("{what}: {}", parts.join(", "));
    }
}

fn scope_text(m: &MemoryItem) -> String {
    if m.scope.is_empty() {
        "shared".into()
    } else {
        m.scope.to_string()
    }
}

/// A bank file's memory bank.
fn read_bank(file: &std::path::Path) -> Result<MemoryBank> {
    let text = read_input_text(file, 1 << 30, "memory bank file")?;
    serde_json::from_str(&text)
        .with_context(|| format!("{}: not a memory bank (JSON)", file.display()))
}

fn show(a: ShowArgs) -> Result<()> {
    let bank = read_bank(&a.file)?;
    let scope: Option<Scope> = a
        .scope
        .as_deref()
        .map(|s| s.parse().map_err(|e| anyhow!("--scope: {e}")))
        .transpose()?;
    if a.exact && scope.is_none() {
        bail!("--exact needs --scope");
    }
    let mode = if a.exact {
        ScopeMatch::Exact
    } else {
        ScopeMatch::Visible
    };
    let shown = bank.shown(a.show_flagged, memskill_guard::redact_private);
    let seen: Cow<'_, MemoryBank> = match &scope {
        Some(s) => Cow::Owned(shown.only_scope(s, mode)),
        None => shown,
    };
    let rows: Vec<(&MemoryItem, Option<f32>)> = match &a.query {
        None => seen.live().map(|m| (m, None)).collect(),
        Some(q) => query_hits(&seen, q, &a)?,
    };
    let filter = match &scope {
        Some(s) if s.is_empty() => "shared memories only".to_string(),
        Some(s) => format!("scope {s}, {}", if a.exact { "exact" } else { "visible" }),
        None => "no scope filter".into(),
    };
    let mut out = String::new();
    if a.json {
        for (m, score) in &rows {
            let line = serde_json::json!({"id": m.id, "type": m.kind, "scope": m.scope,
                "sensitivity": m.sensitivity, "confidence": m.confidence, "score": score,
                "text": m.content});
            out.push_str(&format!("{line}\n"));
        }
        return print_all(&out);
    }
    out.push_str(&format!(
        "{}: {} of {} live memories shown ({filter})\n",
        a.file.display(),
        rows.len(),
        bank.live_count()
    ));
    out.push_str(&format!(
        "{:>4}  {:<11} {:<18} {:<11} {:>5} {:>6}  text\n",
        "id", "type", "scope", "sensitivity", "conf", "score"
    ));
    for (m, score) in rows {
        out.push_str(&memory_row(m, score));
    }
    print_all(&out)
}

/// The `--top` live memories of `seen` nearest to the query `q`, embedded by the encoder of
/// `--config`, with their scores. An error when that encoder's vectors do not have the
/// bank's dimension (a bank built with another encoder would match nothing, silently).
fn query_hits<'b>(
    seen: &'b MemoryBank,
    q: &str,
    a: &ShowArgs,
) -> Result<Vec<(&'b MemoryItem, Option<f32>)>> {
    let cfg_path = a
        .config
        .as_ref()
        .context("--query needs --config (the encoder that built the bank)")?;
    let cfg = Config::load(cfg_path, &a.sets)?;
    let enc = memskill_trainer::backends::build_encoder(&cfg.encoder, &mut Vec::new())?;
    let e = embed(enc.as_ref(), &[q])?.remove(0);
    if let Some(m) = seen.live().find(|m| !m.embedding.is_empty()) {
        if m.embedding.len() != e.len() {
            bail!(
                "--query: the encoder of --config {} gives {}-dimensional vectors, the bank's memories have {}; give the config the bank was built with",
                cfg_path.display(),
                e.len(),
                m.embedding.len()
            );
        }
    }
    Ok(seen
        .retrieve(&e, a.top)
        .into_iter()
        .filter_map(|(id, s)| seen.get(id).map(|m| (m, Some(s))))
        .collect())
}

/// One memory's line of the `bank show` table (its text cut at 90 characters, on one line).
fn memory_row(m: &MemoryItem, score: Option<f32>) -> String {
    let kind = m.kind.map_or("-".to_string(), |k| k.to_string());
    let conf = m.confidence.map_or("-".to_string(), |c| format!("{c:.2}"));
    let score = score.map_or("-".to_string(), |s| format!("{s:.3}"));
    let text: String = m.content.chars().take(90).collect();
    format!(
        "{:>4}  {:<11} {:<18} {:<11} {:>5} {:>6}  {}\n",
        m.id,
        kind,
        scope_text(m),
        m.sensitivity.to_string(),
        conf,
        score,
        text.replace('\n', " ")
    )
}

/// Write `text` to stdout; a reader that stops early (`| head`) ends the output quietly.
fn print_all(text: &str) -> Result<()> {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}

/// `bank forget`: the memories named or matched, forgotten (see [`MemoryBank::forget`]).
fn forget(a: ForgetArgs) -> Result<()> {
    if a.reason.trim().is_empty() {
        bail!("--reason: say why (kept in the record)");
    }
    let by = crate::person(a.by.clone(), "--by")?;
    let mut bank = read_bank(&a.file)?;
    let ids: Vec<u64> = match &a.matching {
        Some(text) => {
            let t = text.to_lowercase();
            if t.trim().is_empty() {
                bail!("--matching needs some text");
            }
            bank.all()
                .iter()
                .filter(|m| !bank.forgotten.iter().any(|f| f.memory_id == m.id))
                .filter(|m| {
                    m.content.to_lowercase().contains(&t)
                        || m.history
                            .iter()
                            .any(|r| r.content.to_lowercase().contains(&t))
                })
                .map(|m| m.id)
                .collect()
        }
        None => {
            let mut ids = a.memories.clone();
            ids.sort_unstable();
            ids.dedup();
            ids
        }
    };
    if ids.is_empty() {
        bail!("{}: no memory matches; nothing forgotten", a.file.display());
    }
    for id in &ids {
        let m = bank
            .get(*id)
            .with_context(|| format!("{}: no memory {id}", a.file.display()))?;
        println!("memory {id}: {}", m.content);
    }
    if a.dry_run {
        println!("(dry run: {} memories would be forgotten)", ids.len());
        return Ok(());
    }
    let at = memskill_registry::clock::now();
    for id in &ids {
        let rec = bank
            .forget(*id, &a.reason, &by, &at)
            .map_err(|e| anyhow!("{}: {e}", a.file.display()))?;
        println!(
            "forgot memory {id}: {} text(s) erased (sha256 {}), by {by}: {}",
            rec.texts_erased,
            &rec.erased_sha256[..12],
            rec.reason
        );
    }
    let json = serde_json::to_string_pretty(&bank).context("serialising the memory bank")?;
    write_output(
        &a.file,
        (json + "\n").as_bytes(),
        &WriteGuard::new("bank forget", true),
    )?;
    println!(
        "{} rewritten; {} forget record(s) in it",
        a.file.display(),
        bank.forgotten.len()
    );
    Ok(())
}
