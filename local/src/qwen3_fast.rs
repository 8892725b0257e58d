//! The Qwen3 forward of `memskill_controller::Qwen3Encoder` (the function of Hugging Face `Qwen3Model`
//! and candle-transformers' `qwen3::Model`: RMS norms, per-head q/k norms, rotary positions,
//! grouped-query causal attention, SiLU-gated MLP), on plain `f32` buffers, arranged for CPU
//! throughput as [`crate::bert_fast`] is for BERT:
//! * the texts of a batch are packed without padding: the projections run on the real tokens
//!   only (`[tokens, width]` rows), attention runs per text over its own tokens, with
//!   positions counted from each text's start. Attention is causal, so a text never sees
//!   what follows it: the same function as one text at a time, up to float summation order;
//! * each projection is one `gemm` on the checkpoint's own `[out, in]` weight (read as its
//!   transpose, no copy), with the residual folded in as the destination's start value; query,
//!   key and value are one product on their weights stacked, gate and up another;
//! * attention is two `gemm`s per (text, head, block of 128 query rows): scores against the
//!   keys up to the block's last row only (causal), then the weighted sum of the values;
//! * RMS norm, softmax and the SiLU gate are the row kernels of [`crate::kernels`];
//! * threads: a batch either runs on one thread (when the caller runs several batches side by
//!   side) or spreads its products and its (text, head) attention tasks over the rayon pool.

use crate::bert_fast::{matmul, rows_mut, Mat};
use crate::kernels;
use crate::qwen3_shape::Qwen3Shape;
use memskill_core::EncoderError;
use rayon::prelude::*;

/// Query rows per attention block.
const BLOCK: usize = 128;
/// Rows per MLP step (bounds the `[rows, 2 intermediate]` buffer).
const MLP_ROWS: usize = 512;

/// `y = x @ w^T` with `w` stored `[out, in]` (Hugging Face `Linear` layout, no bias).
struct Linear {
    w: Vec<f32>,
    inp: usize,
    out: usize,
}

impl Linear {
    /// `dst[rows, out] = x[rows, in] (row stride x_stride) @ w^T (+ residual[rows, out])`.
    fn apply(
        &self,
        x: &[f32],
        x_stride: usize,
        rows: usize,
        residual: Option<&[f32]>,
        dst: &mut Vec<f32>,
        par: bool,
    ) {
        dst.clear();
        match residual {
            Some(r) => dst.extend_from_slice(&r[..rows * self.out]),
            None => dst.resize(rows * self.out, 0.0),
        }
        self.apply_into(x, x_stride, rows, dst, residual.is_some(), par);
    }

    /// `dst[rows, out] (+)= x[rows, in] (row stride x_stride) @ w^T`: added to what `dst`
    /// holds when `accumulate`, else written over it.
    fn apply_into(
        &self,
        x: &[f32],
        x_stride: usize,
        rows: usize,
        dst: &mut [f32],
        accumulate: bool,
        par: bool,
    ) {
        let x = Mat {
            data: x,
            row: x_stride,
            col: 1,
        };
        // w is [out, in] row-major, read as its transpose [in, out].
        let w = Mat {
            data: &self.w,
            row: 1,
            col: self.inp,
        };
        matmul(dst, x, w, (rows, self.out, self.inp), accumulate, par);
    }
}

struct Layer {
    ln1: Vec<f32>,
    /// q | k | v stacked: `[(heads + 2 kv_heads) head_dim, hidden]`.
    qkv: Linear,
    q_norm: Vec<f32>,
    k_norm: Vec<f32>,
    o: Linear,
    ln2: Vec<f32>,
    /// gate | up stacked: `[2 intermediate, hidden]`.
    gate_up: Linear,
    down: Linear,
}

/// A tensor source: appends tensor `name` (checkpoint naming without `model.`) of `shape` to
/// the buffer.
pub type Source<'a> = dyn FnMut(&str, &[usize], &mut Vec<f32>) -> Result<(), EncoderError> + 'a;

pub struct FastQwen3 {
    embed: Vec<f32>,
    layers: Vec<Layer>,
    norm: Vec<f32>,
    shape: Qwen3Shape,
    /// `1 / theta^(2i / head_dim)`, as candle and transformers compute it (in f32).
    inv_freq: Vec<f32>,
}

/// Scratch buffers of one forward.
#[derive(Default)]
struct Scratch {
    normed: Vec<f32>,
    qkv: Vec<f32>,
    ctx: Vec<f32>,
    att: Vec<f32>,
    gate_up: Vec<f32>,
}

/// A raw destination pointer shared by attention tasks that write disjoint columns.
#[derive(Clone, Copy)]
struct Dst(*mut f32);
// SAFETY: every task writes its own (text rows, head columns) block; nothing reads it meanwhile.
unsafe impl Send for Dst {}
unsafe impl Sync for Dst {}

impl FastQwen3 {
    /// Reads every tensor of `shape` from `get`, once, stacking q/k/v and gate/up as they come.
    pub fn load(shape: &Qwen3Shape, get: &mut Source) -> Result<Self, EncoderError> {
        let s = shape;
        let (h, i, d) = (s.hidden_size, s.intermediate_size, s.head_dim);
        let (q, kv) = (s.num_attention_heads * d, s.num_key_value_heads * d);
        if s.num_key_value_heads == 0
            || !s.num_attention_heads.is_multiple_of(s.num_key_value_heads)
        {
            return Err(EncoderError(format!(
                "{} attention heads are not a multiple of the {} key/value heads",
                s.num_attention_heads, s.num_key_value_heads
            )));
        }
        if d == 0 || !d.is_multiple_of(2) {
            return Err(EncoderError(format!("head_dim {d} is not even")));
        }
        let one =
            |get: &mut Source, name: &str, dims: &[usize]| -> Result<Vec<f32>, EncoderError> {
                let mut v = Vec::new();
                get(name, dims, &mut v)?;
                Ok(v)
            };
        let linear = |get: &mut Source, names: &[(&str, usize)], inp: usize| {
            let out: usize = names.iter().map(|n| n.1).sum();
            let mut w = Vec::with_capacity(out * inp);
            for (n, out) in names {
                get(n, &[*out, inp], &mut w)?;
            }
            Ok::<_, EncoderError>(Linear { w, inp, out })
        };
        let embed = one(get, "embed_tokens.weight", &[s.vocab_size, h])?;
        let mut layers = Vec::with_capacity(s.num_hidden_layers);
        for l in 0..s.num_hidden_layers {
            let p = |n: &str| format!("layers.{l}.{n}");
            let (qn, kn, vn) = (
                p("self_attn.q_proj.weight"),
                p("self_attn.k_proj.weight"),
                p("self_attn.v_proj.weight"),
            );
            let (gn, un) = (p("mlp.gate_proj.weight"), p("mlp.up_proj.weight"));
            layers.push(Layer {
                ln1: one(get, &p("input_layernorm.weight"), &[h])?,
                qkv: linear(get, &[(&qn, q), (&kn, kv), (&vn, kv)], h)?,
                q_norm: one(get, &p("self_attn.q_norm.weight"), &[d])?,
                k_norm: one(get, &p("self_attn.k_norm.weight"), &[d])?,
                o: linear(get, &[(&p("self_attn.o_proj.weight"), h)], q)?,
                ln2: one(get, &p("post_attention_layernorm.weight"), &[h])?,
                gate_up: linear(get, &[(&gn, i), (&un, i)], h)?,
                down: linear(get, &[(&p("mlp.down_proj.weight"), h)], i)?,
            });
        }
        let norm = one(get, "norm.weight", &[h])?;
        let inv_freq = (0..d)
            .step_by(2)
            .map(|k| 1f32 / s.rope_theta.powf(k as f64 / d as f64) as f32)
            .collect();
        Ok(Self {
            embed,
            layers,
            norm,
            shape: s.clone(),
            inv_freq,
        })
    }

    /// The final-normed hidden state of each sequence's last token (`[hidden]` per sequence,
    /// not L2-normalised); sequences must be non-empty. `par`: spread this call over the rayon
    /// pool (else it runs on the calling thread).
    pub fn last_token(&self, seqs: &[&[u32]], par: bool) -> Result<Vec<Vec<f32>>, EncoderError> {
        let s = &self.shape;
        let h = s.hidden_size;
        let mut starts = Vec::with_capacity(seqs.len() + 1);
        starts.push(0usize);
        for q in seqs {
            if q.is_empty() || q.len() > s.max_position_embeddings {
                return Err(EncoderError(format!(
                    "{} tokens for {} positions",
                    q.len(),
                    s.max_position_embeddings
                )));
            }
            if let Some(&t) = q.iter().find(|&&t| t as usize >= s.vocab_size) {
                return Err(EncoderError(format!(
                    "token id {t} outside the vocabulary of {}",
                    s.vocab_size
                )));
            }
            starts.push(starts.last().unwrap() + q.len());
        }
        let tokens = starts[seqs.len()];
        let mut x = Vec::with_capacity(tokens * h);
        for q in seqs {
            for &t in q.iter() {
                x.extend_from_slice(&self.embed[t as usize * h..(t as usize + 1) * h]);
            }
        }
        let longest = seqs.iter().map(|q| q.len()).max().unwrap_or(0);
        let (cos, sin) = self.rope_tables(longest);
        let mut scratch = Scratch::default();
        for layer in &self.layers {
            self.layer(layer, &mut x, &starts, (&cos, &sin), &mut scratch, par);
        }
        Ok(starts[1..]
            .iter()
            .map(|&end| {
                let mut v = x[(end - 1) * h..end * h].to_vec();
                kernels::rms_norm(&mut v, &self.norm, s.rms_norm_eps as f32);
                v
            })
            .collect())
    }

    /// cos and sin of `position * inv_freq` (`[positions, head_dim / 2]`), angles in f32.
    fn rope_tables(&self, positions: usize) -> (Vec<f32>, Vec<f32>) {
        let half = self.inv_freq.len();
        let mut cos = Vec::with_capacity(positions * half);
        let mut sin = Vec::with_capacity(positions * half);
        for p in 0..positions {
            for f in &self.inv_freq {
                let a = p as f32 * f;
                cos.push(a.cos());
                sin.push(a.sin());
            }
        }
        (cos, sin)
    }

    /// One decoder layer, in place on `x` (`[tokens, hidden]`; text `j` is rows
    /// `starts[j]..starts[j + 1]`).
    fn layer(
        &self,
        layer: &Layer,
        x: &mut Vec<f32>,
        starts: &[usize],
        rope: (&[f32], &[f32]),
        sc: &mut Scratch,
        par: bool,
    ) {
        let s = &self.shape;
        let (h, eps) = (s.hidden_size, s.rms_norm_eps as f32);
        let tokens = starts[starts.len() - 1];
        sc.normed.clear();
        sc.normed.extend_from_slice(x);
        rows_mut(&mut sc.normed, h, par, |r| {
            kernels::rms_norm(r, &layer.ln1, eps)
        });
        layer
            .qkv
            .apply(&sc.normed, h, tokens, None, &mut sc.qkv, par);
        self.norm_and_rope(layer, &mut sc.qkv, starts, rope, par);
        sc.ctx.clear();
        sc.ctx
            .resize(tokens * s.num_attention_heads * s.head_dim, 0.0);
        self.attention(&sc.qkv, &mut sc.ctx, starts, par);
        let q = s.num_attention_heads * s.head_dim;
        layer
            .o
            .apply(&sc.ctx, q, tokens, Some(x.as_slice()), &mut sc.att, par);
        x.copy_from_slice(&sc.att);
        let att = std::mem::take(&mut sc.att);
        for r0 in (0..tokens).step_by(MLP_ROWS) {
            let rows = MLP_ROWS.min(tokens - r0);
            self.mlp(
                layer,
                &att[r0 * h..(r0 + rows) * h],
                &mut x[r0 * h..],
                sc,
                par,
            );
        }
        sc.att = att;
    }

    /// The MLP of a few rows: `out[rows, h] += down(silu(gate(n)) * up(n))` with `n` the
    /// post-attention RMS norm of `att`.
    fn mlp(&self, layer: &Layer, att: &[f32], out: &mut [f32], sc: &mut Scratch, par: bool) {
        let s = &self.shape;
        let (h, i) = (s.hidden_size, s.intermediate_size);
        let rows = att.len() / h;
        sc.normed.clear();
        sc.normed.extend_from_slice(att);
        let eps = s.rms_norm_eps as f32;
        rows_mut(&mut sc.normed, h, par, |r| {
            kernels::rms_norm(r, &layer.ln2, eps)
        });
        layer
            .gate_up
            .apply(&sc.normed, h, rows, None, &mut sc.gate_up, par);
        rows_mut(&mut sc.gate_up, 2 * i, par, |rows| {
            for r in rows.chunks_exact_mut(2 * i) {
                let (g, u) = r.split_at_mut(i);
                kernels::silu_mul(g, u);
            }
        });
        layer
            .down
            .apply_into(&sc.gate_up, 2 * i, rows, out, true, par);
    }

    /// Per-head RMS norm of the queries and keys, then rotary positions (rotate-half form,
    /// position counted from each text's first token), in place on the `qkv` rows.
    fn norm_and_rope(
        &self,
        layer: &Layer,
        qkv: &mut [f32],
        starts: &[usize],
        (cos, sin): (&[f32], &[f32]),
        par: bool,
    ) {
        let s = &self.shape;
        let d = s.head_dim;
        let (q, kv) = (s.num_attention_heads * d, s.num_key_value_heads * d);
        let width = q + 2 * kv;
        let eps = s.rms_norm_eps as f32;
        let half = d / 2;
        // Position of every packed row.
        let pos: Vec<usize> = starts.windows(2).flat_map(|w| 0..w[1] - w[0]).collect();
        let row = |(t, r): (usize, &mut [f32])| {
            let (cs, sn) = (&cos[pos[t] * half..][..half], &sin[pos[t] * half..][..half]);
            let (qs, rest) = r.split_at_mut(q);
            kernels::rms_norm(qs, &layer.q_norm, eps);
            let ks = &mut rest[..kv];
            kernels::rms_norm(ks, &layer.k_norm, eps);
            for head in qs.chunks_exact_mut(d).chain(ks.chunks_exact_mut(d)) {
                let (a, b) = head.split_at_mut(half);
                for k in 0..half {
                    let (x1, x2) = (a[k], b[k]);
                    a[k] = x1 * cs[k] - x2 * sn[k];
                    b[k] = x2 * cs[k] + x1 * sn[k];
                }
            }
        };
        if par {
            qkv.par_chunks_mut(width).enumerate().for_each(row);
        } else {
            qkv.chunks_mut(width).enumerate().for_each(row);
        }
    }

    /// Causal grouped-query attention of each text over its own tokens: `ctx[tokens, heads *
    /// head_dim]` from the normed, rotated `qkv` rows.
    fn attention(&self, qkv: &[f32], ctx: &mut [f32], starts: &[usize], par: bool) {
        let s = &self.shape;
        let nh = s.num_attention_heads;
        let tasks: Vec<(usize, usize)> = (0..starts.len() - 1)
            .flat_map(|t| (0..nh).map(move |head| (t, head)))
            .collect();
        let dst = Dst(ctx.as_mut_ptr());
        let one = |&(t, head): &(usize, usize)| {
            let mut scores = Vec::new();
            self.head_attention(qkv, starts[t], starts[t + 1], head, dst, &mut scores);
        };
        if par {
            tasks.par_iter().for_each(one);
        } else {
            tasks.iter().for_each(one);
        }
    }

    /// One head of one text (rows `a..b`), block by block of query rows.
    // long: the blocked attention loop (scores, causal softmax, value sum) kept in one body
    fn head_attention(
        &self,
        qkv: &[f32],
        a: usize,
        b: usize,
        head: usize,
        dst: Dst,
        p: &mut Vec<f32>,
    ) {
        let s = &self.shape;
        let d = s.head_dim;
        let (nh, nkv) = (s.num_attention_heads, s.num_key_value_heads);
        let width = (nh + 2 * nkv) * d;
        let g = head / (nh / nkv);
        let (qo, ko, vo) = (head * d, nh * d + g * d, (nh + nkv) * d + g * d);
        let scale = 1.0 / (d as f32).sqrt();
        let base = a * width;
        let mut r0 = 0;
        while r0 < b - a {
            let r1 = (r0 + BLOCK).min(b - a);
            let (m, n) = (r1 - r0, r1);
            p.clear();
            p.resize(m * n, 0.0);
            // SAFETY: scores p[m, n] = q[r0..r1] (stride width) @ k[0..r1]^T (key j at row j,
            // read as [d, n] with row stride 1 and column stride width); all inside qkv rows
            // a..b. The output block ctx[a + r0.., head * d..] ([m, d], stride nh * d) is
            // written by this task only.
            unsafe {
                gemm::gemm(
                    m,
                    n,
                    d,
                    p.as_mut_ptr(),
                    1,
                    n as isize,
                    false,
                    qkv.as_ptr().add(base + r0 * width + qo),
                    1,
                    width as isize,
                    qkv.as_ptr().add(base + ko),
                    width as isize,
                    1,
                    0.0,
                    scale,
                    false,
                    false,
                    false,
                    gemm::Parallelism::None,
                );
            }
            for (r, row) in p.chunks_exact_mut(n).enumerate() {
                let keep = r0 + r + 1;
                kernels::softmax(&mut row[..keep]);
                row[keep..].fill(0.0);
            }
            // SAFETY: see above; values v[0..r1] at stride width.
            unsafe {
                gemm::gemm(
                    m,
                    d,
                    n,
                    dst.0.add((a + r0) * nh * d + head * d),
                    1,
                    (nh * d) as isize,
                    false,
                    p.as_ptr(),
                    1,
                    n as isize,
                    qkv.as_ptr().add(base + vo),
                    1,
                    width as isize,
                    0.0,
                    1.0,
                    false,
                    false,
                    false,
                    gemm::Parallelism::None,
                );
            }
            r0 = r1;
        }
    }
}
