//! The BERT forward of [`crate::BertEncoder`] (the function of candle-transformers'
//! `bert::BertModel`, the same weights and layout), arranged for CPU throughput: the query, key
//! and value projections are one matrix product on weights concatenated and transposed once at
//! load, the attention softmax is candle's fused one-pass kernel (instead of five tensor passes),
//! and every dense layer multiplies by a contiguous `[in, out]` copy of its weight.

use candle_core::{DType, Result, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{Config, HiddenAct};

struct Layer {
    /// `[h, 3h]`: query | key | value.
    qkv_w: Tensor,
    qkv_b: Tensor,
    out_w: Tensor,
    out_b: Tensor,
    ln1: (Tensor, Tensor),
    inter_w: Tensor,
    inter_b: Tensor,
    down_w: Tensor,
    down_b: Tensor,
    ln2: (Tensor, Tensor),
}

pub(crate) struct FastBert {
    word: Tensor,
    pos: Tensor,
    /// Token type 0's embedding, `[1, h]`.
    type0: Tensor,
    emb_ln: (Tensor, Tensor),
    layers: Vec<Layer>,
    heads: usize,
    hidden: usize,
    eps: f32,
    act: HiddenAct,
}

/// `[out, in]` weight -> contiguous `[in, out]`.
fn transposed(vb: &VarBuilder, out: usize, inp: usize) -> Result<(Tensor, Tensor)> {
    let w = vb.get((out, inp), "weight")?.t()?.contiguous()?;
    let b = vb.get(out, "bias")?;
    Ok((w, b))
}

fn ln(vb: &VarBuilder, h: usize) -> Result<(Tensor, Tensor)> {
    Ok((vb.get(h, "weight")?, vb.get(h, "bias")?))
}

impl FastBert {
    /// Loads from the HF `BertModel` names, at the root, under `bert.` or under
    /// `<model_type>.` (as candle's loader looks for them).
    pub fn load(vb: VarBuilder, cfg: &Config) -> Result<Self> {
        let root = if vb.contains_tensor("embeddings.word_embeddings.weight") {
            vb
        } else if vb.contains_tensor("bert.embeddings.word_embeddings.weight") {
            vb.pp("bert")
        } else {
            match &cfg.model_type {
                Some(t)
                    if vb.contains_tensor(&format!("{t}.embeddings.word_embeddings.weight")) =>
                {
                    vb.pp(t)
                }
                _ => vb,
            }
        };
        let (h, i) = (cfg.hidden_size, cfg.intermediate_size);
        let e = root.pp("embeddings");
        let word = e.pp("word_embeddings").get((cfg.vocab_size, h), "weight")?;
        let pos = e
            .pp("position_embeddings")
            .get((cfg.max_position_embeddings, h), "weight")?;
        let types = e
            .pp("token_type_embeddings")
            .get((cfg.type_vocab_size, h), "weight")?;
        let type0 = types.narrow(0, 0, 1)?.contiguous()?;
        let emb_ln = ln(&e.pp("LayerNorm"), h)?;
        let mut layers = Vec::with_capacity(cfg.num_hidden_layers);
        for l in 0..cfg.num_hidden_layers {
            let p = root.pp(format!("encoder.layer.{l}"));
            let att = p.pp("attention");
            let (q, qb) = transposed(&att.pp("self").pp("query"), h, h)?;
            let (k, kb) = transposed(&att.pp("self").pp("key"), h, h)?;
            let (v, vb_) = transposed(&att.pp("self").pp("value"), h, h)?;
            let (out_w, out_b) = transposed(&att.pp("output").pp("dense"), h, h)?;
            let ln1 = ln(&att.pp("output").pp("LayerNorm"), h)?;
            let (inter_w, inter_b) = transposed(&p.pp("intermediate").pp("dense"), i, h)?;
            let (down_w, down_b) = transposed(&p.pp("output").pp("dense"), h, i)?;
            let ln2 = ln(&p.pp("output").pp("LayerNorm"), h)?;
            layers.push(Layer {
                qkv_w: Tensor::cat(&[&q, &k, &v], 1)?.contiguous()?,
                qkv_b: Tensor::cat(&[&qb, &kb, &vb_], 0)?,
                out_w,
                out_b,
                ln1,
                inter_w,
                inter_b,
                down_w,
                down_b,
                ln2,
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
            eps: cfg.layer_norm_eps as f32,
            act: cfg.hidden_act,
        })
    }

    /// Last hidden states `[b, l, h]` of token ids `[b, l]` (u32) with attention mask `[b, l]`
    /// (1 = token, 0 = padding).
    pub fn forward(&self, ids: &Tensor, mask: &Tensor) -> Result<Tensor> {
        let (b, l) = ids.dims2()?;
        let (h, nh) = (self.hidden, self.heads);
        let d = h / nh;
        let x = self.word.index_select(&ids.flatten_all()?, 0)?; // [b * l, h]
        let x = x
            .reshape((b, l, h))?
            .broadcast_add(&self.type0)?
            .broadcast_add(&self.pos.narrow(0, 0, l)?)?;
        let mut x = candle_nn::ops::layer_norm(&x, &self.emb_ln.0, &self.emb_ln.1, self.eps)?
            .reshape((b * l, h))?;
        // (1 - mask) * f32::MIN, as [b, 1, 1, l] (the extended mask of HF BERT).
        let m = mask.to_dtype(DType::F32)?;
        let mask_add = (m.ones_like()? - &m)?
            .affine(f32::MIN as f64, 0.0)?
            .reshape((b, 1, 1, l))?;
        let scale = (d as f64).sqrt();
        for layer in &self.layers {
            let qkv = x.matmul(&layer.qkv_w)?.broadcast_add(&layer.qkv_b)?; // [b * l, 3h]
            let heads = |i: usize| -> Result<Tensor> {
                qkv.narrow(1, i * h, h)?
                    .reshape((b, l, nh, d))?
                    .transpose(1, 2)?
                    .contiguous()
            };
            let (q, k, v) = (heads(0)?, heads(1)?, heads(2)?);
            let scores = (q.matmul(&k.t()?)? / scale)?.broadcast_add(&mask_add)?;
            let probs = candle_nn::ops::softmax_last_dim(&scores)?;
            let ctx = probs
                .matmul(&v)?
                .transpose(1, 2)?
                .contiguous()?
                .reshape((b * l, h))?;
            let att = ctx.matmul(&layer.out_w)?.broadcast_add(&layer.out_b)?;
            let x1 =
                candle_nn::ops::layer_norm(&(att + &x)?, &layer.ln1.0, &layer.ln1.1, self.eps)?;
            let inter = x1.matmul(&layer.inter_w)?.broadcast_add(&layer.inter_b)?;
            let inter = match self.act {
                HiddenAct::Gelu => inter.gelu_erf()?,
                HiddenAct::GeluApproximate => inter.gelu()?,
                HiddenAct::Relu => inter.relu()?,
            };
            let out = inter.matmul(&layer.down_w)?.broadcast_add(&layer.down_b)?;
            x = candle_nn::ops::layer_norm(&(out + &x1)?, &layer.ln2.0, &layer.ln2.1, self.eps)?;
        }
        x.reshape((b, l, h))
    }
}
