//! memskill-alfworld: the ALFWorld embodied benchmark.
//!
//! - [`GameIndex`]: finds `json_2.1.1/<split>/<task>-<objs>-<scene>/<trial>/game.tw-pddl` files.
//! - [`BridgePool`]: supervised Python processes (`scripts/alfworld/bridge.py`, ALFWorld's
//!   TextWorld engine) speaking JSON lines; games are played in parallel.
//! - [`Actor`]s: [`WalkthroughActor`], [`FirstAdmissibleActor`], [`LlmActor`].
//! - [`expert_trajectories`] / [`to_sample`]: expert text for building memory banks.
//! - [`evaluate`] / [`EvalReport`]: success rate and steps per split and task type.

pub mod actor;
pub mod bridge;
pub mod error;
pub mod eval;
pub mod index;
pub mod trajectory;

pub use actor::{
    actor_messages, actor_prompt_messages, default_prompts, match_reply, match_reply_reference,
    Actor, ActorContext, ActorPrompt, ActorSettings, ActorStats, ActorStep, FirstAdmissibleActor,
    LlmActor, MatchKind, ReplyMatch, StepRecord, TipSource, WalkthroughActor,
};
pub use bridge::{
    default_bridge_script, default_python, objective_of, scripts_dir, ActorFactory, BridgeConfig,
    BridgePool, GameOutcome, GameResult, Reply, RequestError,
};
pub use error::AlfworldError;
pub use eval::{
    evaluate, parse_splits, run_eval, ActorKind, Aggregate, EvalOptions, EvalReport, GroupRow,
};
pub use index::{cache_dir, default_games_root, Game, GameIndex, TaskType, GAME_FILE};
pub use trajectory::{
    expert_trajectories, format_trajectory, read_cache, replay_into_cache, replay_walkthroughs,
    to_sample, Trajectory,
};

/// This crate's default prompt templates (`name`, minijinja source), written in our own words.
/// The trainer layers a user's `prompts.dir` over them (see `memskill_core::PromptSet`).
pub const PROMPT_TEMPLATES: &[(&str, &str)] = &[
    (
        "actor.system.j2",
        include_str!("../prompts/actor.system.j2"),
    ),
    ("actor.user.j2", include_str!("../prompts/actor.user.j2")),
];
