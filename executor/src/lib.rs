//! memskill-executor: LLM backends, the skill-conditioned executor prompt, action parsing
//! and application, answering prompts, and exact answer scoring.

pub mod apply;
pub mod backends;
pub mod judge;
pub mod parse;
pub mod porter;
pub mod prompts;
pub mod scoring;
pub mod structured;
pub mod typed;

use thiserror::Error;

pub use apply::{apply_actions, ApplyOptions, ApplyReport};
pub use backends::cache::{cache_key, CacheMode, CachedLlm};
pub use backends::dialect::StructuredDialect;
pub use backends::embeddings::{embeddings_url, read_embeddings, OpenAiEmbedder};
pub use backends::openai::{EndpointHealth, OpenAiBackend, OpenAiConfig};
pub use backends::{strip_reasoning, LlmStats, LlmStatsSnapshot, RetryCounts, ScriptedLlm};
pub use judge::{
    judge_ground_truth, judge_messages, lme_judge_messages, parse_judge, parse_yes_no,
    JudgeContext, JudgeGold, JudgeStyle, JUDGE_MAX_TOKENS, JUDGE_TEMPERATURE,
};
pub use memskill_local::gguf::{
    asset_root, chatml, default_smollm2_path, tokenizer_from_gguf, GenTiming, LocalArch,
    LocalConfig, LocalGguf, LocalSettings, Overflow,
};
pub use memskill_local::tokens::TokenCounter;
pub use parse::{parse_actions, parse_actions_from, parse_response, ParseOutcome, ParsedAction};
pub use prompts::{
    answer_messages, executor_messages, executor_messages_with, extract_answer, f1_text,
    AnswerContext, AnswerStyle, ExecutorContext, Extraction, MemoryDomain, ReplyForm,
    DEFAULT_ANSWER_TOP_R,
};
pub use scoring::{
    hotpot_f1, hotpot_f1_memskill, hotpot_f1_with, is_abstention, locomo_f1, locomo_f1_within,
    memskill_f1, multi_answer_f1, multi_answer_f1_within, normalize_hotpot, normalize_locomo,
    token_f1, HotpotF1, Scorer, TooMuchWork,
};
pub use structured::{
    actions_json, executor_schema, executor_schema_with, judge_schema, parse_reply,
    parse_reply_with, parse_structured, parse_structured_with, schema_action_kinds, Structured,
};

/// Errors of the executor's fallible operations.
#[derive(Debug, Error)]
pub enum ExecutorError {
    #[error(transparent)]
    Encoder(#[from] memskill_core::EncoderError),
    #[error("memory bank: {0}")]
    Memory(#[from] memskill_core::CoreError),
    #[error(transparent)]
    Llm(#[from] memskill_core::LlmError),
}

/// This crate's default prompt templates (`name`, minijinja source), written in our own words.
/// The trainer layers a user's `prompts.dir` over them (see `memskill_core::PromptSet`).
pub const PROMPT_TEMPLATES: &[(&str, &str)] = &[
    (
        "executor.system.j2",
        include_str!("../prompts/executor.system.j2"),
    ),
    (
        "executor.user.j2",
        include_str!("../prompts/executor.user.j2"),
    ),
    (
        "answer.locomo.system.j2",
        include_str!("../prompts/answer.locomo.system.j2"),
    ),
    (
        "answer.locomo.user.j2",
        include_str!("../prompts/answer.locomo.user.j2"),
    ),
    (
        "answer.longmemeval.system.j2",
        include_str!("../prompts/answer.longmemeval.system.j2"),
    ),
    (
        "answer.longmemeval.user.j2",
        include_str!("../prompts/answer.longmemeval.user.j2"),
    ),
    (
        "answer.hotpotqa.system.j2",
        include_str!("../prompts/answer.hotpotqa.system.j2"),
    ),
    (
        "answer.hotpotqa.user.j2",
        include_str!("../prompts/answer.hotpotqa.user.j2"),
    ),
    (
        "answer.msc.system.j2",
        include_str!("../prompts/answer.msc.system.j2"),
    ),
    (
        "answer.msc.user.j2",
        include_str!("../prompts/answer.msc.user.j2"),
    ),
    (
        "judge.system.j2",
        include_str!("../prompts/judge.system.j2"),
    ),
    ("judge.user.j2", include_str!("../prompts/judge.user.j2")),
    (
        "judge.longmemeval.system.j2",
        include_str!("../prompts/judge.longmemeval.system.j2"),
    ),
    (
        "judge.longmemeval.user.j2",
        include_str!("../prompts/judge.longmemeval.user.j2"),
    ),
];
