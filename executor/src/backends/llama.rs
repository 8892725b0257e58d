//! Our llama forward for the local GGUF backend (same architecture and weights as candle's
//! `quantized_llama`, which it replaces for llama-architecture files without experts).
//!
//! What it does differently, for speed on CPU:
//! * prompt tokens run through a GEMM on weights dequantized to f32 once at load (when
//!   [`DensePrefill`] says so: by default for models of at most 1.5 B weights), instead of
//!   candle's row-by-row quantized `vec_dot`; one-token decode steps keep the quantized kernels
//!   (they are bound by memory traffic, which the small quantized weights minimise);
//! * the KV cache is allocated once (`max_ctx` positions per layer) and written in place,
//!   instead of concatenated at every token;
//! * grouped-query attention reads the shared K/V heads directly (no repeated copies);
//! * opt-in ([`FastLlama::reuse_prefix`]), the K/V of a prompt prefix shared with the previous
//!   call's prompt are reused and only the new suffix is computed. Only prompt positions are
//!   reused (never generated tokens), but the suffix then runs as a smaller matrix product,
//!   whose float rounding can differ from the whole prompt's: a greedy reply may then depend
//!   on the previous call, which is why it is off by default.

use std::io::{Read, Seek};

use candle_core::quantized::{gguf_file, QMatMul, QTensor};
use candle_core::{DType, Device, Module, Result, Tensor};

/// When prompt tokens use dense f32 weights.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DensePrefill {
    /// Dense when the model has at most [`AUTO_DENSE_MAX_WEIGHTS`] weights.
    Auto,
    On,
    Off,
}

/// Models up to this many weights get a dense copy for prefill under [`DensePrefill::Auto`]
/// (4 bytes each: 6 GB at the limit).
pub const AUTO_DENSE_MAX_WEIGHTS: usize = 1_500_000_000;

struct Lin {
    q: QMatMul,
    dense: Option<Tensor>,
}

impl Lin {
    fn new(qt: QTensor, dense: bool, dev: &Device) -> Result<Self> {
        let dense = if dense {
            Some(qt.dequantize(dev)?)
        } else {
            None
        };
        Ok(Self {
            q: QMatMul::from_qtensor(qt)?,
            dense,
        })
    }

    /// `x`: `[rows, in]` -> `[rows, out]`; `prompt`: the rows are prompt tokens.
    fn forward(&self, x: &Tensor, prompt: bool) -> Result<Tensor> {
        match &self.dense {
            Some(w) if prompt => x.matmul(&w.t()?),
            _ => self.q.forward(x),
        }
    }
}

struct Layer {
    wq: Lin,
    wk: Lin,
    wv: Lin,
    wo: Lin,
    gate: Lin,
    up: Lin,
    down: Lin,
    attn_norm: Tensor,
    ffn_norm: Tensor,
    /// `[1, n_kv, max_ctx, head_dim]`, written in place.
    k: Tensor,
    v: Tensor,
}

/// A llama model with its own KV cache (see the module docs).
pub struct FastLlama {
    embed: Tensor,
    layers: Vec<Layer>,
    norm: Tensor,
    output: QMatMul,
    eps: f32,
    n_head: usize,
    n_kv: usize,
    head_dim: usize,
    neox: bool,
    cos: Tensor,
    sin: Tensor,
    max_ctx: usize,
    /// Tokens whose K/V are in the cache, in position order.
    cached: Vec<u32>,
    /// How many of `cached` are prompt tokens (the reusable prefix).
    prompt_cached: usize,
    /// Whether the weights have a dense copy for prompt tokens.
    pub dense: bool,
    /// Reuse the cached K/V of the prompt prefix shared with the previous prompt (off).
    pub reuse_prefix: bool,
}

/// Whether `ct` is a llama file this module runs (no mixture of experts).
pub fn supports(ct: &gguf_file::Content) -> bool {
    let experts = ct
        .metadata
        .get("llama.expert_count")
        .and_then(|v| v.to_u32().ok())
        .unwrap_or(0);
    experts <= 1
}

impl FastLlama {
    pub fn from_gguf<R: Read + Seek>(
        ct: &gguf_file::Content,
        r: &mut R,
        dev: &Device,
        max_ctx: usize,
        dense: DensePrefill,
    ) -> Result<Self> {
        let md = |k: &str| match ct.metadata.get(k) {
            Some(v) => Ok(v),
            None => candle_core::bail!("cannot find {k} in metadata"),
        };
        let n_head = md("llama.attention.head_count")?.to_u32()? as usize;
        let n_kv = md("llama.attention.head_count_kv")?.to_u32()? as usize;
        let blocks = md("llama.block_count")?.to_u32()? as usize;
        let hidden = md("llama.embedding_length")?.to_u32()? as usize;
        let rope_dim = md("llama.rope.dimension_count")?.to_u32()? as usize;
        let eps = md("llama.attention.layer_norm_rms_epsilon")?.to_f32()?;
        let base = md("llama.rope.freq_base")
            .and_then(|m| m.to_f32())
            .unwrap_or(10000.0);
        let head_dim = hidden / n_head;
        if rope_dim != head_dim || n_kv == 0 || !n_head.is_multiple_of(n_kv) {
            candle_core::bail!(
                "unsupported llama shape (heads {n_head}, kv heads {n_kv}, rope dim {rope_dim}, head dim {head_dim})"
            );
        }
        let weights: usize = ct.tensor_infos.values().map(|t| t.shape.elem_count()).sum();
        let dense = match dense {
            DensePrefill::On => true,
            DensePrefill::Off => false,
            DensePrefill::Auto => weights <= AUTO_DENSE_MAX_WEIGHTS,
        };
        // llama.cpp's rope-type rule for this architecture: interleaved pairs.
        let neox = false;
        let theta: Vec<f32> = (0..head_dim)
            .step_by(2)
            .map(|i| 1.0 / base.powf(i as f32 / head_dim as f32))
            .collect();
        let theta = Tensor::new(theta.as_slice(), dev)?;
        let idx = Tensor::arange(0, max_ctx as u32, dev)?
            .to_dtype(DType::F32)?
            .reshape((max_ctx, 1))?
            .matmul(&theta.reshape((1, head_dim / 2))?)?;
        let (cos, sin) = (idx.cos()?, idx.sin()?);

        let embed_q = ct.tensor(r, "token_embd.weight", dev)?;
        let embed = embed_q.dequantize(dev)?;
        let norm = ct.tensor(r, "output_norm.weight", dev)?.dequantize(dev)?;
        let output = match ct.tensor(r, "output.weight", dev) {
            Ok(t) => QMatMul::from_qtensor(t)?,
            Err(_) => QMatMul::from_qtensor(embed_q)?,
        };
        let mut layers = Vec::with_capacity(blocks);
        for i in 0..blocks {
            let mut lin = |name: &str| -> Result<Lin> {
                Lin::new(
                    ct.tensor(r, &format!("blk.{i}.{name}.weight"), dev)?,
                    dense,
                    dev,
                )
            };
            let (wq, wk, wv, wo) = (
                lin("attn_q")?,
                lin("attn_k")?,
                lin("attn_v")?,
                lin("attn_output")?,
            );
            let (gate, up, down) = (lin("ffn_gate")?, lin("ffn_up")?, lin("ffn_down")?);
            let attn_norm = ct
                .tensor(r, &format!("blk.{i}.attn_norm.weight"), dev)?
                .dequantize(dev)?;
            let ffn_norm = ct
                .tensor(r, &format!("blk.{i}.ffn_norm.weight"), dev)?
                .dequantize(dev)?;
            let k = Tensor::zeros((1, n_kv, max_ctx, head_dim), DType::F32, dev)?;
            let v = Tensor::zeros((1, n_kv, max_ctx, head_dim), DType::F32, dev)?;
            layers.push(Layer {
                wq,
                wk,
                wv,
                wo,
                gate,
                up,
                down,
                attn_norm,
                ffn_norm,
                k,
                v,
            });
        }
        Ok(Self {
            embed,
            layers,
            norm,
            output,
            eps,
            n_head,
            n_kv,
            head_dim,
            neox,
            cos,
            sin,
            max_ctx,
            cached: Vec::new(),
            prompt_cached: 0,
            dense,
            reuse_prefix: false,
        })
    }

    /// Forgets the cache.
    pub fn clear(&mut self) {
        self.cached.clear();
        self.prompt_cached = 0;
    }

    /// Feeds the prompt `ids` (reusing the cached K/V of the longest prefix shared with the
    /// previous prompt, at least one token recomputed); returns the last token's logits
    /// (`[vocab]`) and how many tokens were reused.
    pub fn prefill(&mut self, ids: &[u32]) -> Result<(Tensor, usize)> {
        if ids.is_empty() || ids.len() >= self.max_ctx {
            candle_core::bail!(
                "prompt of {} tokens for a context of {}",
                ids.len(),
                self.max_ctx
            );
        }
        let shared = if self.reuse_prefix {
            self.cached[..self.prompt_cached]
                .iter()
                .zip(ids)
                .take_while(|(a, b)| a == b)
                .count()
        } else {
            0
        };
        let reuse = shared.min(ids.len() - 1);
        self.cached.truncate(reuse);
        let logits = self.forward(&ids[reuse..], reuse, true)?;
        self.cached.extend_from_slice(&ids[reuse..]);
        self.prompt_cached = self.cached.len();
        Ok((logits, reuse))
    }

    /// Feeds one generated token; returns the next logits (`[vocab]`).
    pub fn step(&mut self, id: u32) -> Result<Tensor> {
        let pos = self.cached.len();
        if pos + 1 >= self.max_ctx {
            candle_core::bail!("context of {} tokens is full", self.max_ctx);
        }
        let logits = self.forward(&[id], pos, false)?;
        self.cached.push(id);
        Ok(logits)
    }

    fn forward(&mut self, ids: &[u32], pos: usize, prompt: bool) -> Result<Tensor> {
        let dev = self.embed.device().clone();
        let seq = ids.len();
        let total = pos + seq;
        let (nh, nkv, hd) = (self.n_head, self.n_kv, self.head_dim);
        let groups = nh / nkv;
        let input = Tensor::new(ids, &dev)?;
        let mut x = self.embed.index_select(&input, 0)?; // [seq, hidden]
        let cos = self.cos.narrow(0, pos, seq)?;
        let sin = self.sin.narrow(0, pos, seq)?;
        // Additive causal mask over [groups * seq, total] (query row g * seq + i sees keys up
        // to pos + i); none for a single token.
        let mask = if seq > 1 {
            let mut m = vec![0f32; groups * seq * total];
            for g in 0..groups {
                for i in 0..seq {
                    let row = (g * seq + i) * total;
                    m[row + pos + i + 1..row + total].fill(f32::NEG_INFINITY);
                }
            }
            Some(Tensor::from_vec(m, (groups * seq, total), &dev)?)
        } else {
            None
        };
        let scale = 1.0 / (hd as f64).sqrt();
        let rope = |t: &Tensor| {
            if self.neox {
                candle_nn::rotary_emb::rope(t, &cos, &sin)
            } else {
                candle_nn::rotary_emb::rope_i(t, &cos, &sin)
            }
        };
        for layer in &self.layers {
            let h = candle_nn::ops::rms_norm(&x, &layer.attn_norm, self.eps)?;
            let q = layer.wq.forward(&h, prompt)?;
            let k = layer.wk.forward(&h, prompt)?;
            let v = layer.wv.forward(&h, prompt)?;
            let q = q.reshape((1, seq, nh, hd))?.transpose(1, 2)?.contiguous()?;
            let k = k
                .reshape((1, seq, nkv, hd))?
                .transpose(1, 2)?
                .contiguous()?;
            let v = v
                .reshape((1, seq, nkv, hd))?
                .transpose(1, 2)?
                .contiguous()?;
            let q = rope(&q)?;
            let k = rope(&k)?;
            layer.k.slice_set(&k, 2, pos)?;
            layer.v.slice_set(&v, 2, pos)?;
            let keys = layer.k.narrow(2, 0, total)?; // [1, nkv, total, hd]
            let values = layer.v.narrow(2, 0, total)?;
            // The `groups` query heads of one K/V head are consecutive: attend as one
            // [groups * seq] block per K/V head.
            let q = q.reshape((1, nkv, groups * seq, hd))?;
            let att = (q.matmul(&keys.t()?)? * scale)?;
            let att = match &mask {
                Some(m) => att.broadcast_add(m)?,
                None => att,
            };
            let att = candle_nn::ops::softmax_last_dim(&att)?;
            let y = att.matmul(&values)?; // [1, nkv, groups * seq, hd]
            let y = y
                .reshape((nh, seq, hd))?
                .transpose(0, 1)?
                .contiguous()?
                .reshape((seq, nh * hd))?;
            let x1 = (&x + layer.wo.forward(&y, prompt)?)?;
            let h = candle_nn::ops::rms_norm(&x1, &layer.ffn_norm, self.eps)?;
            let g = candle_nn::ops::silu(&layer.gate.forward(&h, prompt)?)?;
            let u = layer.up.forward(&h, prompt)?;
            x = (&x1 + layer.down.forward(&(g * u)?, prompt)?)?;
        }
        let last = x.narrow(0, seq - 1, 1)?;
        let last = candle_nn::ops::rms_norm(&last, &self.norm, self.eps)?;
        self.output.forward(&last)?.squeeze(0)
    }
}

impl std::fmt::Debug for FastLlama {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FastLlama")
            .field("layers", &self.layers.len())
            .field("heads", &(self.n_head, self.n_kv, self.head_dim))
            .field("dense_prefill", &self.dense)
            .field("cached", &self.cached.len())
            .finish()
    }
}
