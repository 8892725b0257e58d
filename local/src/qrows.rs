//! Quantized weight rows on plain slices, for the local model's one-token decode steps
//! ([`crate::llama::FastLlama::step`]).
//!
//! A decode step multiplies one activation row by every weight matrix. Through candle tensors
//! each product, and each of the ~20 small element-wise operations around it, is an allocated
//! tensor and a parallel dispatch of its own. Here a matrix is its GGUF blocks in a `Vec`, the
//! product writes into a caller's buffer, and matrices that read the same input (query, key and
//! value; gate and up) are stored as one, so a layer is four parallel regions.
//!
//! Q4_0, Q4_1 and Q4_K rows stay the GGUF's bytes and are multiplied by our kernels
//! ([`crate::qdot`]) against a quantized input, so a step reads the file's own 4-bit blocks.
//! Q8_0 rows (the tied embeddings of small models) have their own product:
//! the block scales widened to f32 once at load (candle converts two f16 per block per
//! product), one row after another in memory order, AVX2 when the CPU has it; the same
//! arithmetic as ggml's Q8_0 x Q8_0 dot (integer block sums scaled by `d_w * d_x`), rows
//! split over the rayon pool. The portable build (CPUs without AVX2) adds the scaled block
//! sums in another order, so its logits can differ from the AVX2 build's in the last bits.
//! Q5_K and Q6_K use candle's kernel (`k_quants::matmul`).

use crate::qdot::{self, Act, Q4};
use candle_core::quantized::k_quants::{self, BlockQ5K, BlockQ6K, GgmlType};
use candle_core::quantized::{GgmlDType, QTensor};
use candle_core::Result;

enum Blocks {
    /// The GGUF blocks as stored, rows one after another.
    Q4 {
        dtype: Q4,
        bytes: Vec<u8>,
    },
    /// Q8_0: `qs[row * k + i]`, scale `d[row * k / 32 + block]`.
    Q8 {
        qs: Vec<i8>,
        d: Vec<f32>,
    },
    Q5K(Vec<BlockQ5K>),
    Q6K(Vec<BlockQ6K>),
}

/// `n` rows of `k` weights, quantized.
pub struct QRows {
    n: usize,
    k: usize,
    blocks: Blocks,
}

/// The block-typed copy of `bytes` (whole blocks of `T`).
pub(crate) fn typed<T: GgmlType>(bytes: &[u8]) -> Result<Vec<T>> {
    let size = std::mem::size_of::<T>();
    if !bytes.len().is_multiple_of(size) {
        candle_core::bail!("{} bytes are not whole {:?} blocks", bytes.len(), T::DTYPE);
    }
    let n = bytes.len() / size;
    let mut v = vec![T::zeros(); n];
    // SAFETY: `v` holds exactly `bytes.len()` bytes of plain-data blocks (`repr(C)` structs of
    // scales and integer quants, valid for any bit pattern), written here from GGUF bytes of
    // the same dtype.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), v.as_mut_ptr() as *mut u8, bytes.len());
    }
    Ok(v)
}

/// The 4-bit dtype of [`qdot`] for `dtype`, if any.
fn q4_of(dtype: GgmlDType) -> Option<Q4> {
    match dtype {
        GgmlDType::Q4_0 => Some(Q4::Q4_0),
        GgmlDType::Q4_1 => Some(Q4::Q4_1),
        GgmlDType::Q4K => Some(Q4::Q4K),
        _ => None,
    }
}

impl QRows {
    /// Whether this module multiplies `dtype` rows (Q4_0, Q4_1, Q8_0, Q4K, Q5K, Q6K).
    pub fn runs(dtype: GgmlDType) -> bool {
        q4_of(dtype).is_some() || matches!(dtype, GgmlDType::Q8_0 | GgmlDType::Q5K | GgmlDType::Q6K)
    }

    /// The matrices' rows stacked in order (`[sum n, k]`); `None` when they do not share one
    /// dtype this module [`runs`](Self::runs) and one row length.
    pub fn stack(ts: &[&QTensor]) -> Result<Option<Self>> {
        let Some(first) = ts.first() else {
            return Ok(None);
        };
        let dtype = first.dtype();
        let k = first.shape().dims2()?.1;
        let mut n = 0;
        let mut bytes = Vec::new();
        for t in ts {
            let (rows, cols) = t.shape().dims2()?;
            if t.dtype() != dtype || cols != k || k % dtype.block_size() != 0 {
                return Ok(None);
            }
            n += rows;
            bytes.extend_from_slice(&t.data()?);
        }
        let blocks = match dtype {
            _ if q4_of(dtype).is_some() => {
                let dtype = q4_of(dtype).expect("checked");
                if bytes.len() != n * dtype.row_bytes(k) {
                    candle_core::bail!("{dtype:?} data of {n} x {k} has the wrong size");
                }
                Blocks::Q4 { dtype, bytes }
            }
            GgmlDType::Q8_0 => {
                if !bytes.len().is_multiple_of(Q8_0_BYTES) {
                    candle_core::bail!("{} bytes are not whole Q8_0 blocks", bytes.len());
                }
                let (qs, d) = widen_q8_0(&bytes, bytes.len() / Q8_0_BYTES)?;
                Blocks::Q8 { qs, d }
            }
            GgmlDType::Q5K => Blocks::Q5K(typed(&bytes)?),
            GgmlDType::Q6K => Blocks::Q6K(typed(&bytes)?),
            _ => return Ok(None),
        };
        let me = Self { n, k, blocks };
        if me.len_blocks() != n * k / dtype.block_size() {
            candle_core::bail!("{dtype:?} data of {n} x {k} has the wrong size");
        }
        Ok(Some(me))
    }

    fn len_blocks(&self) -> usize {
        match &self.blocks {
            Blocks::Q4 { dtype, bytes } => bytes.len() / dtype.row_bytes(dtype.block()),
            Blocks::Q8 { d, .. } => d.len(),
            Blocks::Q5K(b) => b.len(),
            Blocks::Q6K(b) => b.len(),
        }
    }

    /// Rows.
    pub fn n(&self) -> usize {
        self.n
    }

    /// `y[n] = W x` for one input row `x[k]`.
    pub fn matvec(&self, x: &[f32], y: &mut [f32]) -> Result<()> {
        if x.len() != self.k || y.len() != self.n {
            candle_core::bail!(
                "matvec of {} x {} with input {} into {}",
                self.n,
                self.k,
                x.len(),
                y.len()
            );
        }
        let mkn = (1, self.k, self.n);
        match &self.blocks {
            Blocks::Q4 { dtype, bytes } => {
                let act = Act::for_dtype(*dtype, x);
                let row = dtype.row_bytes(self.k);
                par_rows(y, |r0, yc| {
                    qdot::rows(*dtype, &bytes[r0 * row..(r0 + yc.len()) * row], &act, yc)
                });
                Ok(())
            }
            Blocks::Q8 { qs, d } => {
                q8_matvec(qs, d, self.k, x, y);
                Ok(())
            }
            Blocks::Q5K(b) => k_quants::matmul(mkn, x, b, y),
            Blocks::Q6K(b) => k_quants::matmul(mkn, x, b, y),
        }
    }
}

/// Elements per Q8_0 block.
const QK: usize = 32;
/// Bytes per Q8_0 block: an f16 scale, then 32 i8.
const Q8_0_BYTES: usize = 34;

/// GGUF Q8_0 bytes (`blocks` blocks) -> (quants, f32 scales).
fn widen_q8_0(bytes: &[u8], blocks: usize) -> Result<(Vec<i8>, Vec<f32>)> {
    if bytes.len() != blocks * Q8_0_BYTES {
        candle_core::bail!("{} bytes are not {blocks} Q8_0 blocks", bytes.len());
    }
    let mut qs = Vec::with_capacity(blocks * QK);
    let mut d = Vec::with_capacity(blocks);
    for b in bytes.chunks_exact(Q8_0_BYTES) {
        d.push(f16_to_f32(u16::from_le_bytes([b[0], b[1]])));
        qs.extend(b[2..].iter().map(|&q| q as i8));
    }
    Ok((qs, d))
}

/// IEEE half (its bits) -> single (exact).
fn f16_to_f32(h: u16) -> f32 {
    half::f16::from_bits(h).to_f32()
}

/// `f(first row, outputs)` on chunks of `y` (multiples of 4 rows) over the rayon pool: one
/// per thread, four per thread for large matrices (the output rows of the vocabulary).
fn par_rows(y: &mut [f32], f: impl Fn(usize, &mut [f32]) + Sync) {
    let n = y.len();
    let threads = rayon::current_num_threads().max(1);
    let tasks = if n >= 4096 { threads * 4 } else { threads };
    let chunk = n.div_ceil(tasks).next_multiple_of(4).max(4);
    use rayon::prelude::*;
    y.par_chunks_mut(chunk)
        .enumerate()
        .for_each(|(i, yc)| f(i * chunk, yc));
}

/// `y = W x` for Q8_0 rows `W` (`qs`, `d`; row length `k`), rows split over the rayon pool.
fn q8_matvec(qs: &[i8], d: &[f32], k: usize, x: &[f32], y: &mut [f32]) {
    // ggml's Q8_0 activation: per block of 32, `d = max|x| / 127` at half precision.
    let act = qdot::quantize_32(x);
    let nb = k / QK;
    par_rows(y, |r0, yc| {
        let rows = yc.len();
        q8_rows(
            &qs[r0 * k..(r0 + rows) * k],
            &d[r0 * nb..(r0 + rows) * nb],
            &act.qs,
            &act.d,
            yc,
        )
    });
}

/// Rows of a Q8_0 matrix times the quantized input: AVX2 when available, else portable.
fn q8_rows(qs: &[i8], d: &[f32], xq: &[i8], xd: &[f32], y: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU has AVX2 and FMA; the slices have the sizes q8_rows_avx2 reads
        // (checked by its asserts).
        unsafe { q8_rows_avx2(qs, d, xq, xd, y) };
        return;
    }
    q8_rows_portable(qs, d, xq, xd, y)
}

fn q8_rows_portable(qs: &[i8], d: &[f32], xq: &[i8], xd: &[f32], y: &mut [f32]) {
    let k = xq.len();
    let nb = xd.len();
    for (r, out) in y.iter_mut().enumerate() {
        let mut acc = 0f32;
        for b in 0..nb {
            let w = &qs[r * k + b * QK..r * k + (b + 1) * QK];
            let s: i32 = w
                .iter()
                .zip(&xq[b * QK..(b + 1) * QK])
                .map(|(&a, &c)| a as i32 * c as i32)
                .sum();
            acc += d[r * nb + b] * xd[b] * s as f32;
        }
        *out = acc;
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn q8_rows_avx2(qs: &[i8], d: &[f32], xq: &[i8], xd: &[f32], y: &mut [f32]) {
    use std::arch::x86_64::*;
    let (k, nb, rows) = (xq.len(), xd.len(), y.len());
    assert!(qs.len() >= rows * k && d.len() >= rows * nb && k == nb * QK);
    use crate::qdot::avx2::hsum;
    // One block of row `r` against input block `b`, added to `acc`.
    #[inline(always)]
    unsafe fn block(qs: *const i8, d: f32, xv: __m256i, xd: f32, acc: __m256) -> __m256 {
        let wv = _mm256_loadu_si256(qs as *const __m256i);
        let prod = _mm256_maddubs_epi16(_mm256_sign_epi8(wv, wv), _mm256_sign_epi8(xv, wv));
        let sum = _mm256_madd_epi16(prod, _mm256_set1_epi16(1));
        _mm256_fmadd_ps(_mm256_set1_ps(d * xd), _mm256_cvtepi32_ps(sum), acc)
    }
    // One row after the other, each in memory order: the prefetchers follow one sequential
    // stream (four rows read in step took 2x ggml's time per token; this, 0.75-1x).
    // Pointers advance by wrapping adds: no overflow checks in the loop in a dev build.
    let (mut qp, mut dp) = (qs.as_ptr(), d.as_ptr());
    for out in y.iter_mut() {
        let (mut xp, mut xdp) = (xq.as_ptr(), xd.as_ptr());
        let mut acc = _mm256_setzero_ps();
        for _ in 0..nb {
            let xv = _mm256_loadu_si256(xp as *const __m256i);
            acc = block(qp, *dp, xv, *xdp, acc);
            qp = qp.wrapping_add(QK);
            dp = dp.wrapping_add(1);
            xp = xp.wrapping_add(QK);
            xdp = xdp.wrapping_add(1);
        }
        *out = hsum(acc);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::quantized::QMatMul;
    use candle_core::{Device, Module, Tensor};

    #[test]
    fn half_floats_widen_exactly() {
        for (h, f) in [
            (0x3c00u16, 1.0f32),
            (0xc000, -2.0),
            (0x0000, 0.0),
            (0x7bff, 65504.0),
            (0x0001, 5.960_464_5e-8),
            (0x03ff, 1023.0 * 5.960_464_5e-8),
            (0x3555, 0.333_251_95),
        ] {
            assert_eq!(f16_to_f32(h), f, "{h:#06x}");
        }
        assert!(f16_to_f32(0x7c00).is_infinite());
        assert!(f16_to_f32(0x7e00).is_nan());
    }

    #[test]
    fn stacked_rows_multiply_as_candle_does_each_matrix() {
        let dev = Device::Cpu;
        let k = 64;
        let w = |n: usize, seed: f32| {
            let v: Vec<f32> = (0..n * k)
                .map(|i| (i as f32 * 0.37 + seed).sin() * 1.3)
                .collect();
            Tensor::from_vec(v, (n, k), &dev).unwrap()
        };
        let (a, b) = (w(8, 0.1), w(4, 2.0));
        let qa = QTensor::quantize(&a, GgmlDType::Q8_0).unwrap();
        let qb = QTensor::quantize(&b, GgmlDType::Q8_0).unwrap();
        let stacked = QRows::stack(&[&qa, &qb]).unwrap().expect("same dtype");
        assert_eq!(stacked.n(), 12);
        let x: Vec<f32> = (0..k).map(|i| (i as f32 * 0.11).cos()).collect();
        let mut y = vec![0f32; 12];
        stacked.matvec(&x, &mut y).unwrap();
        let xt = Tensor::from_vec(x.clone(), (1, k), &dev).unwrap();
        let want_a = QMatMul::from_qtensor(qa).unwrap().forward(&xt).unwrap();
        let want_b = QMatMul::from_qtensor(qb).unwrap().forward(&xt).unwrap();
        let want: Vec<f32> = [want_a, want_b]
            .iter()
            .flat_map(|t| t.flatten_all().unwrap().to_vec1::<f32>().unwrap())
            .collect();
        for (g, w) in y.iter().zip(&want) {
            assert!((g - w).abs() <= 1e-5 * (1.0 + w.abs()), "{g} vs {w}");
        }
        assert!(
            stacked.matvec(&x[..10], &mut y).is_err(),
            "bad shape is an error"
        );
        // The portable and the AVX2 product agree (integer block sums, one scale each).
        let act = qdot::quantize_32(&x);
        if let Blocks::Q8 { qs, d } = &stacked.blocks {
            let mut p = vec![0f32; 12];
            q8_rows_portable(qs, d, &act.qs, &act.d, &mut p);
            for (a, b) in p.iter().zip(&y) {
                assert!((a - b).abs() <= 1e-5 * (1.0 + b.abs()), "{a} vs {b}");
            }
        } else {
            panic!("Q8_0 rows are widened");
        }
        // Mixed dtypes do not stack.
        let q4 = QTensor::quantize(&w(4, 1.0), GgmlDType::Q4_0).unwrap();
        let q8 = QTensor::quantize(&w(4, 1.0), GgmlDType::Q8_0).unwrap();
        assert!(QRows::stack(&[&q8, &q4]).unwrap().is_none());
    }
}
