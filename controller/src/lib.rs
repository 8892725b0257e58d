//! memskill-controller: the learnable part of memskill.
//!
//! * [`encoder`]: text encoders (candle MiniLM / Qwen3-Embedding, a hashing encoder for tests,
//!   and an embedding cache), all implementing [`memskill_core::TextEncoder`].
//! * [`plackett_luce`]: Gumbel-Top-K sampling, the Plackett-Luce ordered log-probability
//!   (plain `f64` and burn-tensor versions) and the single-step entropy.
//! * [`bias`]: the new-skill exploration bias.
//! * [`shaping`]: process-reward shaping and terminal-reward redistribution.
//! * [`ppo`]: GAE, PPO configuration, transitions and statistics.
//! * [`policy`]: the actor-critic network (burn, autodiff) and its Adam optimiser.
//! * [`controller`]: [`Controller`], which ties selection and PPO updates together.

pub mod bias;
pub mod controller;
pub mod encoder;
pub mod error;
pub mod plackett_luce;
pub mod policy;
pub mod ppo;
pub mod shaping;

pub use bias::{BiasConfig, BiasReeval, BiasSpec, NewSkillBias};
pub use controller::{saved_emb_dim, Controller, SelectMode, Selection};
pub use encoder::{
    build_state, default_assets_dir, default_minilm_dir, model_max_tokens, safetensors_f32_bytes,
    token_windows, weighted_mean_normalized, BertEncoder, BertPooling, CachedEncoder,
    HashingEncoder, LongText, Qwen3Encoder, Qwen3Shape,
};
pub use error::ControllerError;
pub use plackett_luce::{
    entropy_f64, gumbel_top_k, log_softmax_f64, pl_log_prob_clamped_f64, pl_log_prob_f64,
    pl_log_prob_form_f64, pl_log_prob_tensor, pl_remaining_mask, top_k, topk_stats_f64, PlForm,
};
pub use policy::{NamedTensor, PolicyConfig, PolicyDevice, PolicyInit};
pub use ppo::{gae, gae_f64, normalize, PpoConfig, PpoStats, Transition};
pub use shaping::{process_reward, redistribute, shape_rewards, ShapingConfig, SpanOutcome};
