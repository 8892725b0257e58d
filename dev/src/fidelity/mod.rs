//! Differential checks against the reference implementation (MemSkill, commit cda41f3).
//!
//! A Python generator under `scripts/fidelity/gen_<component>.py` runs the reference's own
//! functions on generated inputs and writes a fixture file:
//!
//! ```json
//! {"component": "gae", "reference": "cda41f3", "tolerance": 1e-6,
//!  "cases": [{"input": {...}, "expected": {...}}, ...]}
//! ```
//!
//! Here every component has a checker that computes our answer for each case's `input` and
//! compares it with `expected`. `memskill fidelity check DIR` prints one table (component,
//! cases, agreeing, max abs difference); `scripts/fidelity/diff.sh REFERENCE` regenerates the
//! fixtures from a reference checkout and runs it. The fixtures generated once are committed
//! under `trainer/tests/fixtures/fidelity/`, so `cargo test` keeps the agreement without Python.
//!
//! Adding a component = one module with a `check` function + one arm in [`checker`].

pub mod alfworld_chunks;
pub mod alfworld_parse;
pub mod apply_actions;
pub mod case_selection;
pub mod encoder_minilm;
pub mod encoder_qwen3;
pub mod hard_case_pool;
pub mod parse_actions;
pub mod query_quotas;
pub mod reference_checkpoint;
pub mod retriever_contriever;
pub mod retriever_dual;
pub mod score_hotpotqa;
pub mod score_locomo;
pub mod score_longmemeval;
pub mod segment_fixed_length;
pub mod segment_full_session;
pub mod snapshot_rules;
pub mod split_longmemeval;
pub mod state_encoding;

use anyhow::{bail, Context};
use serde::Deserialize;
use serde_json::Value;
use std::path::Path;

pub mod answer_extraction;
pub mod judge_parse;

/// The result of checking one case.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// Whether our output agrees with the reference's (within the fixture's tolerance for
    /// numbers; exactly for texts and structures).
    pub agree: bool,
    /// Largest absolute difference over the numbers compared (0 for exact comparisons).
    pub max_abs_diff: f64,
    /// What differed, when `agree` is false (shown for the first disagreeing case).
    pub detail: Option<String>,
}

impl Outcome {
    pub fn exact(agree: bool, detail: impl FnOnce() -> String) -> Outcome {
        Outcome {
            agree,
            max_abs_diff: 0.0,
            detail: if agree { None } else { Some(detail()) },
        }
    }

    /// Compares two number slices element-wise within `tol`.
    pub fn numbers(ours: &[f64], theirs: &[f64], tol: f64) -> Outcome {
        if ours.len() != theirs.len() {
            return Outcome {
                agree: false,
                max_abs_diff: f64::INFINITY,
                detail: Some(format!(
                    "length {} vs reference {}",
                    ours.len(),
                    theirs.len()
                )),
            };
        }
        let mut max = 0.0f64;
        let mut worst = None;
        for (i, (a, b)) in ours.iter().zip(theirs).enumerate() {
            let d = if a.is_nan() && b.is_nan() {
                0.0
            } else {
                (a - b).abs()
            };
            let d = if d.is_nan() { f64::INFINITY } else { d };
            if d > max {
                max = d;
                worst = Some((i, *a, *b));
            }
        }
        let agree = max <= tol;
        Outcome {
            agree,
            max_abs_diff: max,
            detail: if agree {
                None
            } else {
                worst.map(|(i, a, b)| format!("index {i}: ours {a} vs reference {b}"))
            },
        }
    }

    /// Combines several comparisons of one case.
    pub fn and(self, other: Outcome) -> Outcome {
        Outcome {
            agree: self.agree && other.agree,
            max_abs_diff: self.max_abs_diff.max(other.max_abs_diff),
            detail: self.detail.or(other.detail),
        }
    }
}

/// A case checker: (input, expected, tolerance) -> outcome.
pub type Checker = fn(&Value, &Value, f64) -> anyhow::Result<Outcome>;

pub mod gae;
pub mod new_skill_bias;
pub mod plackett_luce;
pub mod ppo_update;
pub mod shaping;

/// The checker of a component, by the name its fixture carries.
pub fn checker(component: &str) -> Option<Checker> {
    Some(match component {
        "case_selection" => case_selection::check,
        "hard_case_pool" => hard_case_pool::check,
        "snapshot_rules" => snapshot_rules::check,
        "apply_actions" => apply_actions::check,
        "parse_actions" => parse_actions::check,
        "score_locomo" => score_locomo::check,
        "score_hotpotqa" => score_hotpotqa::check,
        "score_longmemeval" => score_longmemeval::check,
        "encoder_minilm" => encoder_minilm::check,
        "encoder_qwen3" => encoder_qwen3::check,
        "retriever_contriever" => retriever_contriever::check,
        "retriever_dpr" => retriever_dual::check_dpr,
        "retriever_dragon" => retriever_dual::check_dragon,
        "state_encoding" => state_encoding::check,
        "answer_extraction" => answer_extraction::check,
        "judge_parse" => judge_parse::check,
        "gae" => gae::check,
        "new_skill_bias" => new_skill_bias::check,
        "plackett_luce" => plackett_luce::check,
        "ppo_update" => ppo_update::check,
        "shaping" => shaping::check,
        "segment_full_session" => segment_full_session::check,
        "alfworld_chunks" => alfworld_chunks::check,
        "alfworld_parse" => alfworld_parse::check,
        "segment_fixed_length" => segment_fixed_length::check,
        "split_longmemeval" => split_longmemeval::check,
        "query_quotas" => query_quotas::check,
        "reference_checkpoint" => reference_checkpoint::check,
        _ => return None,
    })
}

/// Why a component cannot be checked on this machine (a model asset it needs is missing);
/// such a fixture is reported as skipped, not as agreeing.
pub fn unavailable(component: &str) -> Option<String> {
    match component {
        "encoder_minilm" => encoder_minilm::unavailable(),
        "retriever_contriever" => retriever_contriever::unavailable(),
        "retriever_dpr" | "retriever_dragon" => retriever_dual::unavailable(),
        _ => None,
    }
}

#[derive(Debug, Deserialize)]
struct FixtureFile {
    component: String,
    #[serde(default)]
    reference: String,
    #[serde(default)]
    tolerance: f64,
    cases: Vec<FixtureCase>,
}

#[derive(Debug, Deserialize)]
struct FixtureCase {
    input: Value,
    expected: Value,
}

/// One row of the differential table.
#[derive(Debug, Clone)]
pub struct ComponentReport {
    pub component: String,
    pub file: String,
    pub reference: String,
    pub cases: usize,
    pub agreeing: usize,
    pub max_abs_diff: f64,
    /// The first disagreement (case index and detail), if any.
    pub first_disagreement: Option<String>,
    /// Set when the component could not be checked here (see [`unavailable`]).
    pub skipped: Option<String>,
}

/// Checks one fixture file.
pub fn check_file(path: &Path) -> anyhow::Result<ComponentReport> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let fx: FixtureFile =
        serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
    let Some(check) = checker(&fx.component) else {
        bail!(
            "{}: no checker for component {:?}",
            path.display(),
            fx.component
        );
    };
    let mut rep = ComponentReport {
        component: fx.component.clone(),
        file: path
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default(),
        reference: fx.reference.clone(),
        cases: fx.cases.len(),
        agreeing: 0,
        max_abs_diff: 0.0,
        first_disagreement: None,
        skipped: unavailable(&fx.component),
    };
    if rep.skipped.is_some() {
        return Ok(rep);
    }
    for (i, case) in fx.cases.iter().enumerate() {
        let out = check(&case.input, &case.expected, fx.tolerance)
            .with_context(|| format!("{}: case {i}", path.display()))?;
        rep.max_abs_diff = rep.max_abs_diff.max(out.max_abs_diff);
        if out.agree {
            rep.agreeing += 1;
        } else if rep.first_disagreement.is_none() {
            rep.first_disagreement = Some(format!(
                "case {i}: {}",
                out.detail.unwrap_or_else(|| "differs".into())
            ));
        }
    }
    Ok(rep)
}

/// Checks every `*.json` fixture in a folder, sorted by file name.
pub fn check_dir(dir: &Path) -> anyhow::Result<Vec<ComponentReport>> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    if files.is_empty() {
        bail!("{}: no fixture files (*.json)", dir.display());
    }
    files.iter().map(|p| check_file(p)).collect()
}

/// The differential table as Markdown.
pub fn render_table(reports: &[ComponentReport]) -> String {
    let mut s = String::from(
        "| component | cases | agreeing | max abs difference |\n|---|---:|---:|---:|\n",
    );
    for r in reports {
        s.push_str(&format!(
            "| {} | {} | {} ({:.1}%) | {:.3e} |\n",
            r.component,
            r.cases,
            r.agreeing,
            if r.cases == 0 {
                0.0
            } else {
                100.0 * r.agreeing as f64 / r.cases as f64
            },
            r.max_abs_diff
        ));
    }
    for r in reports {
        if let Some(why) = &r.skipped {
            s.push_str(&format!("\n{} ({}): skipped: {why}", r.component, r.file));
        }
        if let Some(d) = &r.first_disagreement {
            s.push_str(&format!(
                "\n{} ({}): first disagreement at {d}",
                r.component, r.file
            ));
        }
    }
    s
}

/// Reads a JSON array of numbers.
pub fn f64s(v: &Value, what: &str) -> anyhow::Result<Vec<f64>> {
    v.as_array()
        .with_context(|| format!("{what}: expected an array of numbers"))?
        .iter()
        .enumerate()
        .map(|(i, x)| {
            x.as_f64()
                .with_context(|| format!("{what}[{i}]: expected a number"))
        })
        .collect()
}

/// FNV-1a over a string's bytes: the generators' seed for formula weights and projections.
pub(crate) fn fnv1a64(s: &str) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in s.as_bytes() {
        h ^= *b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

/// SplitMix64, as the generators use it to draw formula weights and projection signs.
pub(crate) fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E3779B97F4A7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D049BB133111EB);
    z ^ (z >> 31)
}
