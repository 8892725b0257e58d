//! memskill-core: the shared vocabulary of memskill.
//!
//! Skills and the skill bank, the per-trajectory memory bank, spans, queries and samples.
//! This crate is pure (it reads the cache variables of the environment in
//! [`paths`], and [`fsio`] is the one guarded reader of user-named files and writer of
//! user-visible files every crate shares, nothing else): no I/O, no async, no LLM, no randomness. Everything here is
//! serde-serialisable so that checkpoints and exports are plain JSON.

pub mod activation;
pub mod contract;
pub mod data;
pub mod diff;
pub mod error;
pub mod fsio;
pub mod governance;
pub mod hash;
pub mod jsonfix;
pub mod llm;
pub mod llm_stats;
pub mod memory;
pub mod nan_json;
pub mod paths;
pub mod prompt;
pub mod scope;
pub mod serde_opt;
pub mod skill;

pub use activation::{activation_stats, ActivationStats, Rate};
pub use contract::{
    decay_weight, query_matches, Age, AgeUnit, Clock, CrossProject, Decay, MemoryContract,
};
pub use data::{Query, Sample, Session, Span, Turn};
pub use error::CoreError;
pub use hash::sha256_hex;
pub use llm::{
    ChatRequest, ChatResponse, EncoderError, Llm, LlmError, Message, ResponseSchema, Role,
    TextEncoder, Usage,
};
pub use memory::{
    date_key, normalize_ws, ForgetRecord, MemoryAction, MemoryBank, MemoryId, MemoryItem,
    MemoryRevision, MemoryType, Provenance, Tombstone,
};
pub use paths::{asset_root, cache_root};
pub use prompt::{PromptError, PromptSet};
pub use scope::{Scope, ScopeMatch, Sensitivity};
pub use skill::{
    validate_skill_name, with_bundled, ActionKind, Bundle, CompareMode, EvalMode, EvalRun,
    GuardApproval, GuardRecord, ReleaseKind, ReleaseRecord, RiskLevel, Skill, SkillBank,
    SkillStatus, UsageStats, Version,
};
