//! `memskill skills eval`: does a skill of a bank help on a dataset slice? For each skill,
//! the three-mode replay of the release gate ([`crate::gate`]) on every question of the
//! slice: without the skill, with its version from an older bank (`--old`), and with it,
//! on the same spans and seeds. The skills are picked by a trained controller
//! (`--checkpoint`) or, without one, all applied to every span (the skill's effect without
//! a learned selection). The delta (with vs the better other mode) gets a 95% bootstrap
//! interval over the questions' paired differences.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use memskill_controller::Controller;
use memskill_core::{CompareMode, EvalRun, SkillBank};
use serde::{Deserialize, Serialize};

use crate::checkpoint::Checkpoint;
use crate::config::Config;
use crate::episode::memory_domain;
use crate::eval::load_eval_samples;
use crate::fsutil::write_atomic;
use crate::gate::{group_cases, ReplaySelection, Replayer};
use crate::report::{bootstrap, Estimate};
use crate::runtime::Runtime;

/// What to evaluate.
#[derive(Clone, Default)]
pub struct SkillsEvalOptions {
    /// The skills to evaluate (all selectable skills of the bank when empty).
    pub skills: Vec<String>,
    /// An older bank whose versions are the `old` mode.
    pub old: Option<SkillBank>,
    /// A trained run's checkpoint: its controller picks the skills.
    pub checkpoint: Option<Checkpoint>,
    /// Evaluation split (default `eval.split`) and the first `limit` questions.
    pub split: Option<crate::config::SplitSpec>,
    pub limit: Option<usize>,
    /// Where `skills-eval.json` and `skills-eval.md` go.
    pub out: PathBuf,
    /// Bootstrap resamples of the delta's interval.
    pub resamples: usize,
    /// Activation cases (`--cases FILE`, see [`crate::cases`]); the synthetic tasks'
    /// expected triggers when absent.
    pub cases: Option<PathBuf>,
}

/// One row of the table: the run plus the interval of its delta.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SkillEvalRow {
    pub run: EvalRun,
    /// Paired per-question difference (with minus the better other mode), mean and 95% interval.
    pub delta: Option<Estimate>,
}

/// Evaluate the skills of `bank` on the slice; writes `skills-eval.{json,md}` into `opts.out`.
pub fn skills_eval(
    cfg: &Config,
    bank: &SkillBank,
    opts: &SkillsEvalOptions,
) -> Result<Vec<SkillEvalRow>> {
    let bench = cfg.data.dataset.descriptor();
    if bench.interactive {
        bail!(
            "skills eval replays questions; {} is not supported",
            bench.title
        );
    }
    let names = skill_names(bank, &opts.skills)?;
    let split = opts.split.unwrap_or(cfg.eval.split);
    let mut samples = load_eval_samples(cfg, split, opts.limit)?;
    if samples.is_empty() {
        bail!("split `{split}` has no questions");
    }
    let (expected, extra) = expected_triggers(cfg, &samples, opts.cases.as_deref())?;
    samples.extend(extra);
    std::fs::create_dir_all(&opts.out)
        .with_context(|| format!("creating {}", opts.out.display()))?;
    let rt = Runtime::build(cfg, &opts.out, samples.clone(), false)?;
    rt.probe_endpoints()?;
    let mut controller = controller(cfg, &rt, opts.checkpoint.as_ref())?;
    let (groups, questions) = replay_groups(&samples);
    let updates = controller.updates();
    let replay = Replayer {
        cfg,
        rt: &rt,
        controller: std::sync::Mutex::new(&mut controller),
        samples: &samples,
        domain: memory_domain(cfg.data.dataset),
        updates,
        tag: 0,
        selection: if opts.checkpoint.is_some() {
            ReplaySelection::Learned
        } else {
            ReplaySelection::Every
        },
        expected: expected.as_ref(),
    };
    let mut rows = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let mut run = replay
            .compare(bank, opts.old.as_ref(), bank, name, &groups, 0)
            .with_context(|| format!("evaluating `{name}`"))?;
        run.id = format!("eval:{split}:{name}@{}", run.version);
        (run.passed, run.reasons) = memskill_designer::verdict(&run, &cfg.designer.cfg.gate_rules);
        let delta = paired_delta(&run, opts.resamples, cfg.run.seed ^ i as u64);
        rows.push(SkillEvalRow { run, delta });
    }
    write_report(cfg, opts, split, questions, &rows)?;
    Ok(rows)
}

/// The replay groups of `samples`: every question of a sample in its sample's group, and a
/// group without questions for each question-less sample (the text cases' one-span samples,
/// replayed for their selections); with the number of questions.
fn replay_groups(samples: &[memskill_core::Sample]) -> (Vec<crate::gate::CaseGroup>, usize) {
    let cases: Vec<(String, String, bool)> = samples
        .iter()
        .flat_map(|s| {
            s.queries
                .iter()
                .map(|q| (s.id.clone(), q.id.clone(), false))
        })
        .collect();
    let (mut groups, _) = group_cases(samples, &cases);
    for (i, s) in samples.iter().enumerate() {
        if s.queries.is_empty() {
            groups.push(crate::gate::CaseGroup {
                sample: i,
                query_ids: Vec::new(),
                solved_before: Vec::new(),
            });
        }
    }
    (groups, cases.len())
}

/// `skills-eval.json` (the rows) and `skills-eval.md` (their table and notes) in `opts.out`.
fn write_report(
    cfg: &Config,
    opts: &SkillsEvalOptions,
    split: crate::config::SplitSpec,
    questions: usize,
    rows: &[SkillEvalRow],
) -> Result<()> {
    write_atomic(
        &opts.out.join("skills-eval.json"),
        serde_json::to_string_pretty(rows)?.as_bytes(),
    )?;
    let md = format!(
        "# Skill evaluation on {} / {split} ({questions} questions; {})\n\n{}",
        cfg.data.dataset.name(),
        if opts.checkpoint.is_some() {
            "skills picked by the checkpoint's controller"
        } else {
            "every skill applied to every span"
        },
        render(rows)
    );
    let md = md + &notes(rows);
    write_atomic(&opts.out.join("skills-eval.md"), md.as_bytes())?;
    Ok(())
}

/// What the table's activation columns rest on (or why they are empty).
fn notes(rows: &[SkillEvalRow]) -> String {
    let mut notes: Vec<&str> = rows
        .iter()
        .flat_map(|r| r.run.notes.iter().map(String::as_str))
        .collect();
    // each note once, in the order first seen
    let mut seen = std::collections::HashSet::new();
    notes.retain(|n| seen.insert(*n));
    let mut s = String::from(
        "\nPrecision, recall and false positives are against the expected triggers, with 95% Wilson score intervals; process is the share of the skill's selections whose reply performed its action, reached the memory bank and was not flagged.\n",
    );
    for n in notes {
        s.push_str(&format!("\nNote: {n}.\n"));
    }
    s
}

/// The activation cases: `--cases FILE` (its text cases as extra one-span samples), else
/// the synthetic tasks' known triggers, else none.
fn expected_triggers(
    cfg: &Config,
    samples: &[memskill_core::Sample],
    file: Option<&std::path::Path>,
) -> Result<(
    Option<crate::gate::ExpectedTriggers>,
    Vec<memskill_core::Sample>,
)> {
    if let Some(p) = file {
        let origin = p.display().to_string();
        let text =
            crate::fsutil::read_input_text(p, memskill_core::fsio::SMALL_FILE_LIMIT, "--cases")?;
        let cases = crate::cases::parse(&text, &origin)?;
        let (e, extra) = crate::cases::resolve(&cases, samples, &origin)?;
        return Ok((Some(e), extra));
    }
    Ok((
        (cfg.data.dataset == crate::config::Dataset::Synthetic)
            .then(|| crate::synthetic::expected_triggers(samples)),
        Vec::new(),
    ))
}

/// The skills to evaluate: those asked for (each must be in the bank), else every selectable one.
fn skill_names(bank: &SkillBank, asked: &[String]) -> Result<Vec<String>> {
    if asked.is_empty() {
        return Ok(bank.selectable().iter().map(|s| s.name.clone()).collect());
    }
    for n in asked {
        if bank.get(n).is_none() {
            bail!(
                "skill `{n}` is not in the bank (its skills: {})",
                bank.names().join(", ")
            );
        }
    }
    Ok(asked.to_vec())
}

/// The checkpoint's controller, or a fresh one (unused: every skill is applied then).
fn controller(cfg: &Config, rt: &Runtime, ck: Option<&Checkpoint>) -> Result<Controller> {
    let mut c = Controller::new(rt.encoder.dim(), &cfg.policy, &cfg.ppo, cfg.run.seed)?;
    if let Some(ck) = ck {
        c.load_bytes(&ck.controller)
            .context("loading the checkpoint's controller")?;
    }
    Ok(c)
}

/// The candidate's per-question score minus the better other mode's (by mean), bootstrapped.
fn paired_delta(run: &EvalRun, resamples: usize, seed: u64) -> Option<Estimate> {
    let cand = run.mode(CompareMode::Candidate)?;
    let best = run
        .modes
        .iter()
        .filter(|m| m.mode != CompareMode::Candidate && m.score.is_finite())
        .max_by(|a, b| a.score.total_cmp(&b.score))?;
    let diffs: Vec<f64> = cand
        .case_scores
        .iter()
        .zip(&best.case_scores)
        .filter(|(a, b)| a.is_finite() && b.is_finite())
        .map(|(a, b)| a - b)
        .collect();
    bootstrap(&diffs, resamples, seed)
}

/// The table: per skill, the three modes, the delta with its interval, tokens (the old
/// version's, else without's, then with) and activation.
pub fn render(rows: &[SkillEvalRow]) -> String {
    let mut s = String::from("| skill | questions | without | old | with | delta [95% CI] | tokens reference -> with | activation | precision [95% CI] | recall [95% CI] | false positives [95% CI] | process | latency | gate rules |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for r in rows {
        let run = &r.run;
        let score = |m: CompareMode| {
            run.mode(m)
                .filter(|m| m.score.is_finite())
                .map_or("-".to_string(), |m| format!("{:.3}", m.score))
        };
        let delta = r.delta.as_ref().map_or("-".to_string(), |e| {
            format!("{:+.3} [{:+.3}, {:+.3}]", e.mean, e.lo, e.hi)
        });
        let tok = |m: CompareMode| run.mode(m).map_or(0, |m| m.tokens);
        // the overhead is relative to the old version when there is one, else to without
        let reference = if run.mode(CompareMode::Old).is_some() {
            CompareMode::Old
        } else {
            CompareMode::Without
        };
        let a = run.activation.as_ref();
        let rate = |r: Option<memskill_core::Rate>| r.map_or("-".to_string(), |r| r.to_string());
        let process = run
            .mode(CompareMode::Candidate)
            .and_then(|m| m.process())
            .map_or("-".to_string(), |p| format!("{p:.2}"));
        s.push_str(&format!(
            "| {}@{} | {} | {} | {} | {} | {} | {} -> {} ({:+.0}%) | {:.2} | {} | {} | {} | {} | {} | {} |\n",
            run.skill,
            run.version,
            run.cases.len(),
            score(CompareMode::Without),
            score(CompareMode::Old),
            score(CompareMode::Candidate),
            delta,
            tok(reference),
            tok(CompareMode::Candidate),
            100.0 * run.token_overhead,
            run.mode(CompareMode::Candidate).map_or(0.0, |m| m.activation),
            rate(a.and_then(|a| a.precision)),
            rate(a.and_then(|a| a.recall)),
            rate(a.and_then(|a| a.false_positive_rate)),
            process,
            memskill_designer::latency_pct(run.latency_overhead),
            if run.passed {
                "pass".to_string()
            } else {
                format!("fail: {}", run.reasons.join("; "))
            }
        ));
    }
    s
}
