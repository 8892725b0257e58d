//! The BERT forward of `memskill_controller::BertEncoder` (the function of candle-transformers'
//! `bert::BertModel` with the HF attention mask, the same weights), on plain `f32` buffers,
//! arranged for CPU throughput:
//! * the texts of a batch are packed without padding: the dense layers run on the real tokens
//!   only (`[tokens, h]` rows), attention runs per text over its own tokens. Padded keys get
//!   exactly zero weight in HF BERT (`exp(f32::MIN - max)` is 0), so this is the same function;
//!   only float summation order differs;
//! * each dense layer is one `gemm` call whose destination is pre-filled with the bias (and
//!   the residual where one follows), on a contiguous `[in, out]` copy of the weight; query,
//!   key and value are one product on the three weights concatenated;
//! * layer norm, softmax and GELU are the row kernels of [`crate::kernels`], in place;
//! * threads: a batch either runs on one thread (when the caller runs several batches side by
//!   side) or spreads its matrix products, row kernels and texts over the rayon pool.

use crate::kernels;
use candle_core::{Result, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{Config, HiddenAct};
use rayon::prelude::*;

/// A dense layer: `y = x @ w + b` with `w` stored `[in, out]`.
struct Dense {
    w: Vec<f32>,
    b: Vec<f32>,
    inp: usize,
    out: usize,
}

fn flat(t: &Tensor) -> Result<Vec<f32>> {
    t.flatten_all()?.to_vec1::<f32>()
}

impl Dense {
    /// HF `[out, in]` weight and `[out]` bias under `vb`.
    fn load(vb: &VarBuilder, out: usize, inp: usize) -> Result<Self> {
        let w = flat(&vb.get((out, inp), "weight")?.t()?.contiguous()?)?;
        let b = flat(&vb.get(out, "bias")?)?;
        Ok(Self { w, b, inp, out })
    }

    /// The layers side by side (same input): outputs concatenated.
    fn concat(parts: &[Dense]) -> Self {
        let inp = parts[0].inp;
        let out: usize = parts.iter().map(|p| p.out).sum();
        let mut w = Vec::with_capacity(inp * out);
        for r in 0..inp {
            for p in parts {
                w.extend_from_slice(&p.w[r * p.out..(r + 1) * p.out]);
            }
        }
        let b = parts.iter().flat_map(|p| p.b.iter().copied()).collect();
        Self { w, b, inp, out }
    }

    /// `dst[rows, out] = x[rows, in] @ w + b (+ residual[rows, out])`.
    fn apply(&self, x: &[f32], residual: Option<&[f32]>, dst: &mut Vec<f32>, par: bool) {
        let rows = x.len() / self.inp;
        dst.clear();
        match residual {
            Some(r) => {
                dst.extend_from_slice(&r[..rows * self.out]);
                for row in dst.chunks_exact_mut(self.out) {
                    kernels::add(&self.b, row);
                }
            }
            None => {
                for _ in 0..rows {
                    dst.extend_from_slice(&self.b);
                }
            }
        }
        let x = Mat {
            data: x,
            row: self.inp,
            col: 1,
        };
        let w = Mat {
            data: &self.w,
            row: self.out,
            col: 1,
        };
        matmul(dst, x, w, (rows, self.out, self.inp), true, par);
    }
}

/// A matrix inside a slice: element `(r, c)` at `data[r * row + c * col]`.
#[derive(Clone, Copy)]
pub struct Mat<'a> {
    pub data: &'a [f32],
    pub row: usize,
    pub col: usize,
}

impl Mat<'_> {
    /// Whether all `rows x cols` elements lie inside `data`.
    fn holds(&self, rows: usize, cols: usize) -> bool {
        rows == 0 || cols == 0 || (rows - 1) * self.row + (cols - 1) * self.col < self.data.len()
    }
}

/// `dst[m, n] (+)= lhs[m, k] @ rhs[k, n]` (`dims = (m, n, k)`), `dst` row-major with `n` values
/// per row: added to what `dst` holds when `accumulate`, else written over it. One `gemm` call
/// (the rayon pool when `par`).
pub fn matmul(
    dst: &mut [f32],
    lhs: Mat,
    rhs: Mat,
    (m, n, k): (usize, usize, usize),
    accumulate: bool,
    par: bool,
) {
    if m == 0 || n == 0 {
        return;
    }
    assert!(dst.len() >= m * n && lhs.holds(m, k) && rhs.holds(k, n));
    // SAFETY: every element gemm reads or writes lies inside its slice (checked above); dst is
    // a unique borrow, so it aliases neither input.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst.as_mut_ptr(),
            1,
            n as isize,
            accumulate,
            lhs.data.as_ptr(),
            lhs.col as isize,
            lhs.row as isize,
            rhs.data.as_ptr(),
            rhs.col as isize,
            rhs.row as isize,
            1.0,
            1.0,
            false,
            false,
            false,
            parallelism(par),
        );
    }
}

/// Where a checkpoint may hold the `BertModel` tensors: at the root (`BertModel`,
/// sentence-transformers), under `bert.` (task heads), or inside a DPR encoder
/// (`DPRContextEncoder` / `DPRQuestionEncoder` keep theirs under `ctx_encoder.bert_model.` /
/// `question_encoder.bert_model.`).
pub const PREFIXES: [&str; 4] = [
    "",
    "bert.",
    "ctx_encoder.bert_model.",
    "question_encoder.bert_model.",
];

/// How a text's last hidden states become one vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Pooling {
    /// The mean over the text's tokens (sentence-transformers, contriever).
    #[default]
    Mean,
    /// The first token's state, `[CLS]` (DPR's `pooler_output` without a projection,
    /// DRAGON's `last_hidden_state[:, 0]`).
    Cls,
}

struct Layer {
    /// query | key | value.
    qkv: Dense,
    out: Dense,
    ln1: (Vec<f32>, Vec<f32>),
    inter: Dense,
    down: Dense,
    ln2: (Vec<f32>, Vec<f32>),
}

pub struct FastBert {
    word: Vec<f32>,
    pos: Vec<f32>,
    /// Token type 0's embedding, `[h]`.
    type0: Vec<f32>,
    emb_ln: (Vec<f32>, Vec<f32>),
    layers: Vec<Layer>,
    heads: usize,
    hidden: usize,
    vocab: usize,
    max_pos: usize,
    eps: f32,
    act: HiddenAct,
}

fn ln(vb: &VarBuilder, h: usize) -> Result<(Vec<f32>, Vec<f32>)> {
    Ok((flat(&vb.get(h, "weight")?)?, flat(&vb.get(h, "bias")?)?))
}

/// Scratch buffers of one forward.
#[derive(Default)]
struct Scratch {
    qkv: Vec<f32>,
    ctx: Vec<f32>,
    att: Vec<f32>,
    inter: Vec<f32>,
}

impl FastBert {
    /// Loads from the HF `BertModel` names, at the root or under one of [`PREFIXES`] or
    /// `<model_type>.` (as candle's loader looks for them).
    pub fn load(vb: VarBuilder, cfg: &Config) -> Result<Self> {
        let probe = "embeddings.word_embeddings.weight";
        let found = PREFIXES
            .iter()
            .map(|p| p.to_string())
            .chain(cfg.model_type.as_ref().map(|t| format!("{t}.")))
            .find(|p| vb.contains_tensor(&format!("{p}{probe}")));
        let root = match found.as_deref().and_then(|p| p.strip_suffix('.')) {
            Some(p) => vb.pp(p),
            None => vb,
        };
        let (h, i) = (cfg.hidden_size, cfg.intermediate_size);
        if cfg.num_attention_heads == 0 || !h.is_multiple_of(cfg.num_attention_heads) {
            candle_core::bail!(
                "hidden size {h} is not a multiple of the {} attention heads",
                cfg.num_attention_heads
            );
        }
        let e = root.pp("embeddings");
        let word = flat(&e.pp("word_embeddings").get((cfg.vocab_size, h), "weight")?)?;
        let pos = flat(
            &e.pp("position_embeddings")
                .get((cfg.max_position_embeddings, h), "weight")?,
        )?;
        let types = e
            .pp("token_type_embeddings")
            .get((cfg.type_vocab_size, h), "weight")?;
        let type0 = flat(&types.narrow(0, 0, 1)?)?;
        let emb_ln = ln(&e.pp("LayerNorm"), h)?;
        let mut layers = Vec::with_capacity(cfg.num_hidden_layers);
        for l in 0..cfg.num_hidden_layers {
            let p = root.pp(format!("encoder.layer.{l}"));
            let att = p.pp("attention");
            let q = Dense::load(&att.pp("self").pp("query"), h, h)?;
            let k = Dense::load(&att.pp("self").pp("key"), h, h)?;
            let v = Dense::load(&att.pp("self").pp("value"), h, h)?;
            layers.push(Layer {
                qkv: Dense::concat(&[q, k, v]),
                out: Dense::load(&att.pp("output").pp("dense"), h, h)?,
                ln1: ln(&att.pp("output").pp("LayerNorm"), h)?,
                inter: Dense::load(&p.pp("intermediate").pp("dense"), i, h)?,
                down: Dense::load(&p.pp("output").pp("dense"), h, i)?,
                ln2: ln(&p.pp("output").pp("LayerNorm"), h)?,
            });
        }
        Ok(Self {
            word,
            pos,
            type0,
            emb_ln,
            layers,
            heads: cfg.num_attention_heads,
            hidden: h,
            vocab: cfg.vocab_size,
            max_pos: cfg.max_position_embeddings,
            eps: cfg.layer_norm_eps as f32,
            act: cfg.hidden_act,
        })
    }

    /// Pooled last hidden states (`[h]` per text, not normalised) of the token-id sequences
    /// `seqs`; an empty sequence gives zeros. `par`: spread this call over the rayon pool (else
    /// it runs on the calling thread).
    pub fn pooled(&self, seqs: &[&[u32]], pooling: Pooling, par: bool) -> Result<Vec<Vec<f32>>> {
        let h = self.hidden;
        let mut starts = Vec::with_capacity(seqs.len() + 1);
        starts.push(0usize);
        for s in seqs {
            if s.len() > self.max_pos {
                candle_core::bail!("{} tokens for {} positions", s.len(), self.max_pos);
            }
            if let Some(&t) = s.iter().find(|&&t| t as usize >= self.vocab) {
                candle_core::bail!("token id {t} outside the vocabulary of {}", self.vocab);
            }
            starts.push(starts.last().unwrap() + s.len());
        }
        let mut x = self.embed(seqs, starts[seqs.len()]);
        let mut scratch = Scratch::default();
        for layer in &self.layers {
            self.layer(layer, &mut x, &starts, &mut scratch, par);
        }
        Ok(starts
            .windows(2)
            .map(|w| pool_rows(&x[w[0] * h..w[1] * h], h, pooling))
            .collect())
    }

    /// Word + position + type-0 embeddings, layer-normed: `[tokens, h]`.
    fn embed(&self, seqs: &[&[u32]], tokens: usize) -> Vec<f32> {
        let h = self.hidden;
        let mut x = Vec::with_capacity(tokens * h);
        for s in seqs {
            for (p, &t) in s.iter().enumerate() {
                let start = x.len();
                x.extend_from_slice(&self.word[t as usize * h..(t as usize + 1) * h]);
                let row = &mut x[start..];
                kernels::add(&self.type0, row);
                kernels::add(&self.pos[p * h..(p + 1) * h], row);
            }
        }
        kernels::layer_norm(&mut x, &self.emb_ln.0, &self.emb_ln.1, self.eps);
        x
    }

    /// One encoder layer, in place on `x` (`[tokens, h]`; text `j` is rows
    /// `starts[j]..starts[j + 1]`).
    fn layer(&self, layer: &Layer, x: &mut Vec<f32>, starts: &[usize], s: &mut Scratch, par: bool) {
        let h = self.hidden;
        layer.qkv.apply(x, None, &mut s.qkv, par);
        s.ctx.clear();
        s.ctx.resize(x.len(), 0.0);
        self.attention(&s.qkv, &mut s.ctx, starts, par);
        layer.out.apply(&s.ctx, Some(x.as_slice()), &mut s.att, par);
        rows_mut(&mut s.att, h, par, |r| {
            kernels::layer_norm(r, &layer.ln1.0, &layer.ln1.1, self.eps)
        });
        layer.inter.apply(&s.att, None, &mut s.inter, par);
        let act = self.act;
        rows_mut(&mut s.inter, layer.inter.out, par, |r| match act {
            HiddenAct::Gelu => kernels::gelu_erf(r),
            HiddenAct::GeluApproximate => r.iter_mut().for_each(|v| *v = gelu_tanh(*v)),
            HiddenAct::Relu => r.iter_mut().for_each(|v| *v = v.max(0.0)),
        });
        layer.down.apply(&s.inter, Some(&s.att), x, par);
        rows_mut(x, h, par, |r| {
            kernels::layer_norm(r, &layer.ln2.0, &layer.ln2.1, self.eps)
        });
    }

    /// Self-attention of each text over its own tokens: `ctx[tokens, h]` from
    /// `qkv[tokens, 3h]`, head by head.
    fn attention(&self, qkv: &[f32], ctx: &mut [f32], starts: &[usize], par: bool) {
        let h = self.hidden;
        let mut parts: Vec<&mut [f32]> = Vec::with_capacity(starts.len());
        let mut rest = ctx;
        for w in starts.windows(2) {
            let (a, b) = rest.split_at_mut((w[1] - w[0]) * h);
            parts.push(a);
            rest = b;
        }
        let one = |(j, out): (usize, &mut &mut [f32])| {
            let rows = &qkv[starts[j] * 3 * h..starts[j + 1] * 3 * h];
            self.text_attention(rows, out);
        };
        if par {
            parts.par_iter_mut().enumerate().for_each(one);
        } else {
            parts.iter_mut().enumerate().for_each(one);
        }
    }

    /// Attention of one text: `qkv` its `[l, 3h]` rows, `out` its `[l, h]` context rows.
    fn text_attention(&self, qkv: &[f32], out: &mut [f32]) {
        let (h, nh) = (self.hidden, self.heads);
        let d = h / nh;
        let l = qkv.len() / (3 * h);
        let scale = (d as f32).sqrt();
        let mut p = vec![0f32; l];
        for head in 0..nh {
            let (qo, ko, vo) = (head * d, h + head * d, 2 * h + head * d);
            for i in 0..l {
                let q = &qkv[i * 3 * h + qo..i * 3 * h + qo + d];
                for (j, pj) in p.iter_mut().enumerate() {
                    *pj = kernels::dot(q, &qkv[j * 3 * h + ko..j * 3 * h + ko + d]) / scale;
                }
                kernels::softmax(&mut p);
                let o = &mut out[i * h + head * d..i * h + head * d + d];
                o.fill(0.0);
                for (j, &pj) in p.iter().enumerate() {
                    kernels::axpy(pj, &qkv[j * 3 * h + vo..j * 3 * h + vo + d], o);
                }
            }
        }
    }
}

/// One text's vector from its `[tokens, h]` rows (zeros for no rows).
fn pool_rows(rows: &[f32], h: usize, pooling: Pooling) -> Vec<f32> {
    let mut m = vec![0f32; h];
    match pooling {
        Pooling::Cls => {
            if let Some(first) = rows.get(..h) {
                m.copy_from_slice(first);
            }
        }
        Pooling::Mean => {
            for row in rows.chunks_exact(h) {
                kernels::add(row, &mut m);
            }
            let n = (rows.len() / h).max(1) as f32;
            m.iter_mut().for_each(|v| *v /= n);
        }
    }
    m
}

/// The gemm crate's threading: the rayon pool when `par`, else the calling thread.
pub fn parallelism(par: bool) -> gemm::Parallelism {
    if par {
        gemm::Parallelism::Rayon(0)
    } else {
        gemm::Parallelism::None
    }
}

/// `f` on chunks of whole `width`-long rows of `x` (chunks in parallel when `par`).
pub fn rows_mut(x: &mut [f32], width: usize, par: bool, f: impl Fn(&mut [f32]) + Sync) {
    const ROWS_PER_TASK: usize = 16;
    if par {
        x.par_chunks_mut(width * ROWS_PER_TASK).for_each(&f);
    } else {
        f(x);
    }
}

/// GELU, tanh approximation (`hidden_act = "gelu_new"`).
fn gelu_tanh(x: f32) -> f32 {
    0.5 * x * (1.0 + ((2.0 / std::f32::consts::PI).sqrt() * (x + 0.044_715 * x * x * x)).tanh())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cls_pooling_takes_the_first_row_and_mean_averages_them() {
        let rows = [1.0f32, 2.0, 3.0, 4.0, 5.0, 9.0];
        assert_eq!(pool_rows(&rows, 2, Pooling::Cls), vec![1.0, 2.0]);
        assert_eq!(pool_rows(&rows, 2, Pooling::Mean), vec![3.0, 5.0]);
        for p in [Pooling::Cls, Pooling::Mean] {
            assert_eq!(pool_rows(&[], 2, p), vec![0.0, 0.0], "{p:?}");
        }
    }
}
