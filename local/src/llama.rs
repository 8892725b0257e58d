//! Our llama forward for the local GGUF backend (same architecture and weights as candle's
//! `quantized_llama`, which it replaces for llama-architecture files without experts).
//!
//! What it does differently, for speed on CPU:
//! * prompt tokens run through a GEMM on weights dequantized to f32 once at load (when
//!   [`DensePrefill`] says so: by default for models of at most 1.5 B weights), instead of
//!   candle's row-by-row quantized `vec_dot`; one-token decode steps keep the quantized kernels
//!   (they are bound by memory traffic, which the small quantized weights minimise);
//! * one-token decode steps (on the CPU, when the weights have a dense copy, i.e. small
//!   models) run on plain buffers: quantized rows in `Vec`s ([`crate::qrows`]: our Q4_0,
//!   Q4_1, Q4_K and Q8_0 products, candle's `k_quants::matmul` for Q5_K / Q6_K), the
//!   norms, rope, attention and SiLU as slice loops, query/key/value and gate/up each one
//!   product: four parallel regions per layer and no tensor allocated per operation;
//! * the KV cache is allocated once (`max_ctx` positions per layer) and written in place,
//!   instead of concatenated at every token;
//! * grouped-query attention reads the shared K/V heads directly (no repeated copies);
//! * opt-in ([`FastLlama::reuse_prefix`]), the K/V of a prompt prefix shared with the previous
//!   call's prompt are reused and only the new suffix is computed. Only prompt positions are
//!   reused (never generated tokens), but the suffix then runs as a smaller matrix product,
//!   whose float rounding can differ from the whole prompt's: a greedy reply may then depend
//!   on the previous call, which is why it is off by default.

use std::io::{Read, Seek};

use crate::kernels;
use crate::qrows::QRows;
use candle_core::quantized::{gguf_file, QMatMul, QTensor};
use candle_core::{DType, Device, Module, Result, Storage, Tensor};

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
    /// `None` when the one-token steps have their own rows and prompts the dense copy.
    q: Option<QMatMul>,
    dense: Option<Tensor>,
}

impl Lin {
    fn new(qt: QTensor, dense: bool, keep_quantized: bool, dev: &Device) -> Result<Self> {
        let dense = if dense {
            Some(qt.dequantize(dev)?)
        } else {
            None
        };
        let q = if keep_quantized {
            Some(QMatMul::from_qtensor(qt)?)
        } else {
            None
        };
        Ok(Self { q, dense })
    }

    /// `x`: `[rows, in]` -> `[rows, out]`; `prompt`: the rows are prompt tokens.
    fn forward(&self, x: &Tensor, prompt: bool) -> Result<Tensor> {
        match (&self.dense, &self.q) {
            (Some(w), _) if prompt => x.matmul(&w.t()?),
            (_, Some(q)) => q.forward(x),
            _ => candle_core::bail!("no quantized weights for a one-token step"),
        }
    }
}

/// Matrices that read one input, as few stacked [`QRows`] as their dtypes allow; the product
/// writes their outputs one after another.
struct Stacked(Vec<QRows>);

impl Stacked {
    fn new(ts: &[&QTensor]) -> Result<Option<Self>> {
        if let Some(all) = QRows::stack(ts)? {
            return Ok(Some(Self(vec![all])));
        }
        let mut parts = Vec::with_capacity(ts.len());
        for t in ts {
            match QRows::stack(&[t])? {
                Some(r) => parts.push(r),
                None => return Ok(None),
            }
        }
        Ok(Some(Self(parts)))
    }

    fn n(&self) -> usize {
        self.0.iter().map(|r| r.n()).sum()
    }

    fn matvec(&self, x: &[f32], y: &mut [f32]) -> Result<()> {
        if y.len() != self.n() {
            candle_core::bail!("{} stacked rows into {} outputs", self.n(), y.len());
        }
        let mut at = 0;
        for r in &self.0 {
            r.matvec(x, &mut y[at..at + r.n()])?;
            at += r.n();
        }
        Ok(())
    }
}

/// One layer's weights for one-token steps.
struct StepLayer {
    qkv: Stacked,
    wo: Stacked,
    gate_up: Stacked,
    down: Stacked,
    attn_norm: Vec<f32>,
    ffn_norm: Vec<f32>,
}

/// Everything a one-token step reads besides the KV cache.
struct StepWeights {
    layers: Vec<StepLayer>,
    output: Stacked,
    norm: Vec<f32>,
    /// `[max_ctx, head_dim / 2]`.
    cos: Vec<f32>,
    sin: Vec<f32>,
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
    /// `None` when [`Self::step_weights`] has the output rows.
    output: Option<QMatMul>,
    /// Plain-buffer weights of the one-token steps (see the module docs); `None`: steps go
    /// through the tensor forward.
    step_weights: Option<StepWeights>,
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

/// Whether prompts use dense weights under `dense` for the model in `ct`.
fn resolve_dense(ct: &gguf_file::Content, dense: DensePrefill) -> bool {
    let weights: usize = ct.tensor_infos.values().map(|t| t.shape.elem_count()).sum();
    match dense {
        DensePrefill::On => true,
        DensePrefill::Off => false,
        DensePrefill::Auto => weights <= AUTO_DENSE_MAX_WEIGHTS,
    }
}

/// Whether [`FastLlama`] (on the CPU) runs the one-token steps of the file `ct` on plain
/// buffers with every matrix in its stored dtype ([`QRows::runs`]): then requantizing the
/// file at load would only make each step read more bytes.
pub fn steps_natively(ct: &gguf_file::Content, dense: DensePrefill) -> bool {
    supports(ct)
        && resolve_dense(ct, dense)
        && ct
            .tensor_infos
            .values()
            .filter(|t| t.shape.rank() == 2)
            .all(|t| QRows::runs(t.ggml_dtype))
}

/// The shape of a llama file (from its metadata).
struct Hparams {
    n_head: usize,
    n_kv: usize,
    blocks: usize,
    head_dim: usize,
    eps: f32,
    /// Rope frequency base.
    base: f32,
}

impl Hparams {
    /// Reads and checks the shape of the llama file `ct`.
    fn read(ct: &gguf_file::Content) -> Result<Self> {
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
        Ok(Self {
            n_head,
            n_kv,
            blocks,
            head_dim,
            eps,
            base,
        })
    }

    /// The cosines and sines of the rope angles of positions `0..max_ctx`, each
    /// `[max_ctx, head_dim / 2]`.
    fn rope_tables(&self, max_ctx: usize, dev: &Device) -> Result<(Tensor, Tensor)> {
        let head_dim = self.head_dim;
        let theta: Vec<f32> = (0..head_dim)
            .step_by(2)
            .map(|i| 1.0 / self.base.powf(i as f32 / head_dim as f32))
            .collect();
        let theta = Tensor::new(theta.as_slice(), dev)?;
        let idx = Tensor::arange(0, max_ctx as u32, dev)?
            .to_dtype(DType::F32)?
            .reshape((max_ctx, 1))?
            .matmul(&theta.reshape((1, head_dim / 2))?)?;
        Ok((idx.cos()?, idx.sin()?))
    }
}

/// One block's matrices as stored, and its norms.
struct BlockTensors {
    q: QTensor,
    k: QTensor,
    v: QTensor,
    o: QTensor,
    gate: QTensor,
    up: QTensor,
    down: QTensor,
    attn_norm: Tensor,
    ffn_norm: Tensor,
}

impl BlockTensors {
    /// Block `i` of the file `ct` (tensor data read from `r`).
    fn read<R: Read + Seek>(
        ct: &gguf_file::Content,
        r: &mut R,
        i: usize,
        dev: &Device,
    ) -> Result<Self> {
        let mut tensor = |name: &str| ct.tensor(r, &format!("blk.{i}.{name}.weight"), dev);
        let (q, k, v, o) = (
            tensor("attn_q")?,
            tensor("attn_k")?,
            tensor("attn_v")?,
            tensor("attn_output")?,
        );
        let (gate, up, down) = (tensor("ffn_gate")?, tensor("ffn_up")?, tensor("ffn_down")?);
        let attn_norm = tensor("attn_norm")?.dequantize(dev)?;
        let ffn_norm = tensor("ffn_norm")?.dequantize(dev)?;
        Ok(Self {
            q,
            k,
            v,
            o,
            gate,
            up,
            down,
            attn_norm,
            ffn_norm,
        })
    }

    /// The block's weights for one-token steps on plain buffers; `None` when a dtype has no
    /// rows of ours or the shapes are not those the step's buffers assume.
    fn step_layer(&self, hp: &Hparams) -> Result<Option<StepLayer>> {
        let parts = (
            Stacked::new(&[&self.q, &self.k, &self.v])?,
            Stacked::new(&[&self.o])?,
            Stacked::new(&[&self.gate, &self.up])?,
            Stacked::new(&[&self.down])?,
        );
        let hidden = hp.n_head * hp.head_dim;
        Ok(match parts {
            (Some(qkv), Some(wo), Some(gate_up), Some(down))
                if qkv.n() == (hp.n_head + 2 * hp.n_kv) * hp.head_dim
                    && wo.n() == hidden
                    && self.gate.shape().dims2()?.0 == self.up.shape().dims2()?.0
                    && down.n() == hidden =>
            {
                Some(StepLayer {
                    qkv,
                    wo,
                    gate_up,
                    down,
                    attn_norm: self.attn_norm.to_vec1()?,
                    ffn_norm: self.ffn_norm.to_vec1()?,
                })
            }
            _ => None,
        })
    }

    /// The block for the tensor forward, with an empty KV cache of `max_ctx` positions; the
    /// quantized matrices kept only when `keep_q` (see [`Lin::new`]).
    fn into_layer(
        self,
        hp: &Hparams,
        max_ctx: usize,
        dense: bool,
        keep_q: bool,
        dev: &Device,
    ) -> Result<Layer> {
        let lin = |t: QTensor| Lin::new(t, dense, keep_q, dev);
        let cache_shape = (1, hp.n_kv, max_ctx, hp.head_dim);
        let k_cache = Tensor::zeros(cache_shape, DType::F32, dev)?;
        let v_cache = Tensor::zeros(cache_shape, DType::F32, dev)?;
        Ok(Layer {
            wq: lin(self.q)?,
            wk: lin(self.k)?,
            wv: lin(self.v)?,
            wo: lin(self.o)?,
            gate: lin(self.gate)?,
            up: lin(self.up)?,
            down: lin(self.down)?,
            attn_norm: self.attn_norm,
            ffn_norm: self.ffn_norm,
            k: k_cache,
            v: v_cache,
        })
    }
}

/// Reloads the quantized matrices that `layers` dropped (for the plain one-token path, which
/// a later layer's dtypes then ruled out).
fn reload_quantized<R: Read + Seek>(
    layers: &mut [Layer],
    ct: &gguf_file::Content,
    r: &mut R,
    dev: &Device,
) -> Result<()> {
    for (i, layer) in layers.iter_mut().enumerate() {
        for (lin, name) in [
            (&mut layer.wq, "attn_q"),
            (&mut layer.wk, "attn_k"),
            (&mut layer.wv, "attn_v"),
            (&mut layer.wo, "attn_output"),
            (&mut layer.gate, "ffn_gate"),
            (&mut layer.up, "ffn_up"),
            (&mut layer.down, "ffn_down"),
        ] {
            if lin.q.is_none() {
                let t = ct.tensor(r, &format!("blk.{i}.{name}.weight"), dev)?;
                lin.q = Some(QMatMul::from_qtensor(t)?);
            }
        }
    }
    Ok(())
}

/// The additive causal mask of `seq` prompt tokens from `pos`, over `[groups * seq, pos +
/// seq]` (query row `g * seq + i` sees the keys up to `pos + i`); none for a single token.
fn causal_mask(groups: usize, seq: usize, pos: usize, dev: &Device) -> Result<Option<Tensor>> {
    if seq <= 1 {
        return Ok(None);
    }
    let total = pos + seq;
    let mut m = vec![0f32; groups * seq * total];
    for g in 0..groups {
        for i in 0..seq {
            let row = (g * seq + i) * total;
            m[row + pos + i + 1..row + total].fill(f32::NEG_INFINITY);
        }
    }
    Ok(Some(Tensor::from_vec(m, (groups * seq, total), dev)?))
}

impl FastLlama {
    pub fn from_gguf<R: Read + Seek>(
        ct: &gguf_file::Content,
        r: &mut R,
        dev: &Device,
        max_ctx: usize,
        dense: DensePrefill,
    ) -> Result<Self> {
        let hp = Hparams::read(ct)?;
        let dense = resolve_dense(ct, dense);
        // llama.cpp's rope-type rule for this architecture: interleaved pairs.
        let neox = false;
        let (cos, sin) = hp.rope_tables(max_ctx, dev)?;

        let embed_q = ct.tensor(r, "token_embd.weight", dev)?;
        let embed = embed_q.dequantize(dev)?;
        let norm = ct.tensor(r, "output_norm.weight", dev)?.dequantize(dev)?;
        let output_q = match ct.tensor(r, "output.weight", dev) {
            Ok(t) => t,
            Err(_) => embed_q,
        };
        // Small models (those with a dense copy for prompts) step on plain buffers.
        let mut steps = if dense && dev.is_cpu() && !neox {
            Stacked::new(&[&output_q])?.map(|output| StepWeights {
                layers: Vec::with_capacity(hp.blocks),
                output,
                norm: Vec::new(),
                cos: Vec::new(),
                sin: Vec::new(),
            })
        } else {
            None
        };
        let mut layers = Vec::with_capacity(hp.blocks);
        for i in 0..hp.blocks {
            let block = BlockTensors::read(ct, r, i, dev)?;
            if let Some(st) = &mut steps {
                match block.step_layer(&hp)? {
                    Some(layer) => st.layers.push(layer),
                    // Anything else takes the tensor path.
                    None => steps = None,
                }
            }
            layers.push(block.into_layer(&hp, max_ctx, dense, steps.is_none(), dev)?);
        }
        if steps.is_none() {
            reload_quantized(&mut layers, ct, r, dev)?;
        }
        let output = match &steps {
            Some(_) => None,
            None => Some(QMatMul::from_qtensor(output_q)?),
        };
        if let Some(st) = &mut steps {
            st.norm = norm.to_vec1()?;
            st.cos = cos.flatten_all()?.to_vec1()?;
            st.sin = sin.flatten_all()?.to_vec1()?;
        }
        Ok(Self {
            embed,
            layers,
            norm,
            output,
            eps: hp.eps,
            n_head: hp.n_head,
            n_kv: hp.n_kv,
            head_dim: hp.head_dim,
            neox,
            cos,
            sin,
            max_ctx,
            step_weights: steps,
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
        let logits = match &self.step_weights {
            Some(w) if !self.neox => {
                if rayon::current_thread_index().is_some() {
                    self.step_plain(w, id, pos)?
                } else {
                    // The whole step on a pool thread: its products then split rows with the
                    // other pool threads directly, instead of this thread handing each one
                    // over and sleeping until it is done.
                    let mut out = None;
                    rayon::scope(|sc| sc.spawn(|_| out = Some(self.step_plain(w, id, pos))));
                    out.unwrap_or_else(|| candle_core::bail!("decode step did not run"))?
                }
            }
            _ => self.forward(&[id], pos, false)?,
        };
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
        let mask = causal_mask(groups, seq, pos, &dev)?;
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
        self.logits(&x.narrow(0, seq - 1, 1)?)
    }

    /// The next logits (`[vocab]`) after the hidden state `last` (`[1, hidden]`).
    fn logits(&self, last: &Tensor) -> Result<Tensor> {
        let last = candle_nn::ops::rms_norm(last, &self.norm, self.eps)?;
        match (&self.output, &self.step_weights) {
            (Some(out), _) => out.forward(&last)?.squeeze(0),
            (None, Some(w)) => {
                let mut logits = vec![0f32; w.output.n()];
                w.output
                    .matvec(&last.flatten_all()?.to_vec1()?, &mut logits)?;
                Tensor::from_vec(logits, w.output.n(), last.device())
            }
            (None, None) => candle_core::bail!("no output weights"),
        }
    }

    /// One generated token at `pos` through the plain-buffer weights `w`; the next logits.
    fn step_plain(&self, w: &StepWeights, id: u32, pos: usize) -> Result<Tensor> {
        let dev = self.embed.device().clone();
        let (nh, nkv, hd) = (self.n_head, self.n_kv, self.head_dim);
        let hidden = nh * hd;
        let mut x = self.embed.get(id as usize)?.to_vec1::<f32>()?;
        let mut h = vec![0f32; hidden];
        let mut qkv = vec![0f32; (nh + 2 * nkv) * hd];
        let mut y = vec![0f32; hidden];
        let mut o = vec![0f32; hidden];
        let mut gu = Vec::new();
        let half = hd / 2;
        let (cos, sin) = (
            &w.cos[pos * half..(pos + 1) * half],
            &w.sin[pos * half..(pos + 1) * half],
        );
        for (layer, lw) in self.layers.iter().zip(&w.layers) {
            rms_norm(&x, &lw.attn_norm, self.eps, &mut h);
            lw.qkv.matvec(&h, &mut qkv)?;
            for head in qkv[..(nh + nkv) * hd].chunks_exact_mut(hd) {
                rope_interleaved(head, cos, sin);
            }
            let (k_new, v_new) = qkv[nh * hd..].split_at(nkv * hd);
            layer
                .k
                .slice_set(&Tensor::from_slice(k_new, (1, nkv, 1, hd), &dev)?, 2, pos)?;
            layer
                .v
                .slice_set(&Tensor::from_slice(v_new, (1, nkv, 1, hd), &dev)?, 2, pos)?;
            self.attend_one(&layer.k, &layer.v, &qkv[..nh * hd], pos + 1, &mut y)?;
            lw.wo.matvec(&y, &mut o)?;
            kernels::add(&o, &mut x);
            rms_norm(&x, &lw.ffn_norm, self.eps, &mut h);
            let ffn = lw.gate_up.n() / 2;
            gu.resize(2 * ffn, 0.0);
            lw.gate_up.matvec(&h, &mut gu)?;
            let (g, u) = gu.split_at_mut(ffn);
            kernels::silu_mul(g, u);
            lw.down.matvec(&gu[..ffn], &mut o)?;
            kernels::add(&o, &mut x);
        }
        rms_norm(&x.clone(), &w.norm, self.eps, &mut x);
        let mut logits = vec![0f32; w.output.n()];
        w.output.matvec(&x, &mut logits)?;
        Tensor::from_vec(logits, w.output.n(), &dev)
    }

    /// Attention of the one-token queries `q` (`[n_head * head_dim]`) over the first `total`
    /// cached positions, into `y` (`[n_head * head_dim]`).
    fn attend_one(
        &self,
        k: &Tensor,
        v: &Tensor,
        q: &[f32],
        total: usize,
        y: &mut [f32],
    ) -> Result<()> {
        let hd = self.head_dim;
        let groups = self.n_head / self.n_kv;
        let scale = 1.0 / (hd as f32).sqrt();
        with_f32(k, |keys| {
            with_f32(v, |values| {
                // Heads in parallel (a pool thread runs this; see `step`).
                use rayon::prelude::*;
                q.par_chunks_exact(hd)
                    .zip(y.par_chunks_exact_mut(hd))
                    .enumerate()
                    .for_each(|(head, (qh, yh))| {
                        let base = (head / groups) * self.max_ctx * hd;
                        let mut p: Vec<f32> = (0..total)
                            .map(|t| {
                                kernels::dot(qh, &keys[base + t * hd..base + (t + 1) * hd]) * scale
                            })
                            .collect();
                        kernels::softmax(&mut p);
                        yh.fill(0.0);
                        for (t, &pt) in p.iter().enumerate() {
                            kernels::axpy(pt, &values[base + t * hd..base + (t + 1) * hd], yh);
                        }
                    });
            })
        })?
    }
}

/// `f` on the contiguous f32 data of a CPU tensor.
fn with_f32<R>(t: &Tensor, f: impl FnOnce(&[f32]) -> R) -> Result<R> {
    let (storage, layout) = t.storage_and_layout();
    let Storage::Cpu(cpu) = &*storage else {
        candle_core::bail!("the plain-buffer step runs on the CPU only");
    };
    let Some((a, b)) = layout.contiguous_offsets() else {
        candle_core::bail!("KV cache is not contiguous");
    };
    Ok(f(&cpu.as_slice::<f32>()?[a..b]))
}

/// candle's `rms_norm` of one row: `x / sqrt(mean(x^2) + eps) * w`.
fn rms_norm(x: &[f32], w: &[f32], eps: f32, out: &mut [f32]) {
    let m = (kernels::dot(x, x) / x.len() as f32 + eps).sqrt();
    for ((o, x), w) in out.iter_mut().zip(x).zip(w) {
        *o = *x / m * *w;
    }
}

/// candle's `rope_i` of one head at one position: pairs `(2i, 2i + 1)` rotated by
/// `(cos[i], sin[i])`.
fn rope_interleaved(head: &mut [f32], cos: &[f32], sin: &[f32]) {
    for ((pair, c), s) in head.chunks_exact_mut(2).zip(cos).zip(sin) {
        let (a, b) = (pair[0], pair[1]);
        pair[0] = a * c - b * s;
        pair[1] = a * s + b * c;
    }
}

impl std::fmt::Debug for FastLlama {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FastLlama")
            .field("layers", &self.layers.len())
            .field("heads", &(self.n_head, self.n_kv, self.head_dim))
            .field("dense_prefill", &self.dense)
            .field("plain_steps", &self.step_weights.is_some())
            .field("cached", &self.cached.len())
            .finish()
    }
}
