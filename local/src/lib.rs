//! memskill-local: inference on this machine's CPU (CUDA with the `cuda` feature), for the
//! executor's local chat model and the controller's text encoders.
//!
//! * [`gguf`]: [`LocalGguf`], a GGUF chat model implementing [`memskill_core::Llm`] (candle's
//!   `quantized_llama` / `quantized_qwen2`, or our llama forward), its tokenizer and chat
//!   template, prompt-overflow handling and load-time requantization.
//! * [`llama`]: our llama forward (dense prompt GEMM, one-token steps on quantized rows);
//!   [`qrows`] the quantized weight rows it multiplies, [`qdot`] the Q4 x Q8 dot kernels.
//! * `guided` (feature `llguidance`): the JSON-schema token mask of structured replies.
//! * [`bert_fast`], [`qwen3_fast`]: the BERT and Qwen3 encoder forwards on plain buffers;
//!   [`qwen3_shape`] the Qwen3 config, [`st_read`] a safetensors reader.
//! * [`kernels`]: the f32 row kernels (norms, softmax, GELU, SiLU, dot, axpy) both use.
//!
//! Depends on memskill-core only; the executor (prompts, parsing, applying, scoring) and the
//! controller (encoders, policy, PPO) build on it.

pub mod bert_fast;
pub mod gguf;
#[cfg(feature = "llguidance")]
pub mod guided;
pub mod kernels;
pub mod llama;
pub mod membench;
pub mod qdot;
pub mod qrows;
pub mod qwen3_fast;
pub mod qwen3_shape;
pub mod st_read;
pub mod tokens;

pub use gguf::{
    asset_root, chatml, default_smollm2_path, tokenizer_from_gguf, GenTiming, LocalConfig,
    LocalGguf, Overflow,
};
