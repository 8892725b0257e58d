//! memskill-designer: evolves the skill bank from the agent's failures.
//!
//! - [`pool`]: the hard-case pool (failed queries, fail counts, window, cap);
//! - [`select`]: dedupe + seeded KMeans over question embeddings + hardest-first selection;
//! - [`stage`]: the designer LLM rounds (analysis, reflection, refinement) and applying edits;
//! - [`edit`]: edits and their validation, [`safety`]: the safety scan of skill texts;
//! - [`evolution`]: snapshots, rollback (bank and controller bytes), early stopping;
//! - [`export`]: Agent Skills folders (`<name>/SKILL.md`) + `bank.json` + `RELEASES.md`.
//!
//! The designer depends on core only: the LLM is a `&dyn memskill_core::Llm` and question
//! embeddings are passed in by the caller.

pub mod edit;
pub mod error;
pub mod evolution;
pub mod export;
pub mod json;
pub mod pool;
pub mod prompts;
pub mod safety;
pub mod select;
pub mod stage;

pub use edit::{
    check_skill_text, eviction_order, is_seed, placeholder_problem, plan_evictions, validate_edits,
    Edit, MAX_DESCRIPTION_CHARS, MAX_INSTRUCTIONS_CHARS,
};
pub use error::DesignerError;
pub use evolution::{
    stabilised_reward, Evolution, EvolutionConfig, Snapshot, StageDecision, MAX_FAILED_APPROACHES,
};
pub use export::{
    bank_diff, export_bank, import_bank, load_bank, read_skill_md, render_skill_md, validate_dir,
};
pub use json::parse_changes;
pub use pool::{HardCase, HardCasePool, PoolConfig};
pub use safety::{safety_rules, safety_scan, SafetyRule};
pub use select::{kmeans_labels, select_hard_cases, SelectConfig};
pub use stage::{apply_edits, line_diff, run_stage, text_diff, DesignerConfig, StageOutcome};

/// This crate's default prompt templates (`name`, minijinja source), written in our own words.
/// The trainer layers a user's `prompts.dir` over them (see `memskill_core::PromptSet`).
pub const PROMPT_TEMPLATES: &[(&str, &str)] = &[];
