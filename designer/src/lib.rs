//! memskill-designer: evolves the skill bank from the agent's failures.
//!
//! - [`pool`]: the hard-case pool (failed queries, fail counts, window, cap);
//! - [`select`]: dedupe + seeded KMeans over question embeddings + hardest-first selection;
//! - [`stage`]: the designer LLM rounds (analysis, reflection, refinement) and applying edits;
//! - [`edit`]: edits and their validation (and the same checks over a whole bank); the safety
//!   scan itself is the `memskill-guard` crate;
//! - [`guard`]: how banks meet the guard (strict for imports and edits, trusting its own
//!   records on load, approvals past a false rejection);
//! - [`judge`]: the optional LLM safety judge;
//! - [`gate`]: the release gate between candidate and canary (thresholds, verdict, status
//!   transitions) and the skill score;
//! - [`evolution`]: snapshots, rollback (bank, optionally controller bytes), early stopping,
//!   the stage reward and the feedback on earlier changes;
//! - [`export`]: Agent Skills folders (`<name>/SKILL.md`) + `bank.json` + `RELEASES.md`.
//!
//! The designer depends on core and the guard only: the LLM is a `&dyn memskill_core::Llm` and question
//! embeddings are passed in by the caller.

pub mod config;
pub mod edit;
pub mod error;
pub mod evolution;
pub mod export;
pub mod gate;
pub mod guard;
pub mod json;
pub mod judge;
pub mod ops;
pub mod pool;
pub mod prompts;
pub mod reference_bank;
pub mod risk;
pub mod select;
pub mod stage;
mod text;

pub use config::{DesignerConfig, DesignerMode, Operations};
pub use edit::{
    check_skill_shape, check_skill_text, eviction_order, is_seed, placeholder_problem,
    plan_evictions, validate_edits, Edit, MAX_DESCRIPTION_CHARS, MAX_INSTRUCTIONS_CHARS,
};
pub use error::DesignerError;
pub use evolution::{
    np_mean, np_sum, stabilised_reward, ChangeNote, Evolution, EvolutionConfig, FailedAttempt,
    Feedback, FinalState, Rollback, Snapshot, StageDecision,
};
pub use export::{
    bank_diff, export_bank, import_bank, import_bank_opts, import_bank_with, load_bank,
    read_bank_unchecked, read_skill_md, render_skill_md, validate_dir, LinkPolicy,
};
pub use gate::{
    activation_not_gated, admit_all, eval_runs_md, failed_run, high_risk_verdict, latency_pct,
    release_verdict, score_terms, settle, skill_score, summarise, verdict, GateMode, GatePreset,
    GateRules, ScoreTerm, ScoreWeights, GOVERNANCE_GATE, GOVERNANCE_SCORE, LATENCY_NOT_MEASURED,
    NEW_SKILL_ACTIVATION_NOTE,
};
pub use guard::{
    adopt_legacy, approve, check_bank, check_bank_with, finding_for, load_mode, record_for,
    set_rescan, stamp_guard, GuardMode, GuardWarning, SkillRejected, LEGACY_GUARD,
};
pub use json::{parse_changes, parse_changes_with, refinement_schema, REFINEMENT_SCHEMA_NAME};
pub use judge::{parse_judge_verdict, JudgeVerdict, SAFETY_JUDGE_PROMPT};
pub use pool::{HardCase, HardCasePool, PoolConfig};
pub use select::{dedupe, kmeans_labels, select_hard_cases, select_with_labels, SelectConfig};
pub use stage::{apply_edits, change_notes, line_diff, run_stage, text_diff, StageOutcome};

/// This crate's default prompt templates (`name`, minijinja source), written in our own words.
/// The trainer layers a user's `prompts.dir` over them (see `memskill_core::PromptSet`).
/// `designer.<round>` is for question answering, `designer.alfworld.<round>` for interactive
/// tasks; `designer.macros.j2` holds the pieces they share.
pub const PROMPT_TEMPLATES: &[(&str, &str)] = &[
    (
        "designer.macros.j2",
        include_str!("../prompts/designer.macros.j2"),
    ),
    (
        "designer.analysis.system.j2",
        include_str!("../prompts/designer.analysis.system.j2"),
    ),
    (
        "designer.analysis.user.j2",
        include_str!("../prompts/designer.analysis.user.j2"),
    ),
    (
        "designer.reflection.system.j2",
        include_str!("../prompts/designer.reflection.system.j2"),
    ),
    (
        "designer.reflection.user.j2",
        include_str!("../prompts/designer.reflection.user.j2"),
    ),
    (
        "designer.refinement.system.j2",
        include_str!("../prompts/designer.refinement.system.j2"),
    ),
    (
        "designer.refinement.user.j2",
        include_str!("../prompts/designer.refinement.user.j2"),
    ),
    (
        "designer.alfworld.analysis.system.j2",
        include_str!("../prompts/designer.alfworld.analysis.system.j2"),
    ),
    (
        "designer.alfworld.analysis.user.j2",
        include_str!("../prompts/designer.alfworld.analysis.user.j2"),
    ),
    (
        "designer.alfworld.reflection.system.j2",
        include_str!("../prompts/designer.alfworld.reflection.system.j2"),
    ),
    (
        "designer.alfworld.reflection.user.j2",
        include_str!("../prompts/designer.alfworld.reflection.user.j2"),
    ),
    (
        "designer.alfworld.refinement.system.j2",
        include_str!("../prompts/designer.alfworld.refinement.system.j2"),
    ),
    (
        "designer.alfworld.refinement.user.j2",
        include_str!("../prompts/designer.alfworld.refinement.user.j2"),
    ),
    (
        "designer.safety_judge.system.j2",
        include_str!("../prompts/designer.safety_judge.system.j2"),
    ),
    (
        "designer.safety_judge.user.j2",
        include_str!("../prompts/designer.safety_judge.user.j2"),
    ),
];
