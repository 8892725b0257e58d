//! Dot products of GGUF-quantized weight rows (Q4_0, Q4_1, Q4_K, as stored in the file) with
//! a quantized activation row, for the local model's one-token decode steps
//! ([`crate::qrows`]). Decode reads every weight once per token, so it is bound by memory
//! traffic: running the file's own 4-bit blocks reads 0.56-0.63 bytes per weight, where a
//! Q8_0 copy reads 1.06-1.13.
//!
//! The arithmetic is ggml's: the activation is quantized per block of 32 to i8 with a half
//! precision scale `d` ([`Act32`], which also keeps `s = d * sum(q)` for the weights' offsets)
//! or per block of 256 with an f32 scale and sums of 16 ([`Act256`], for Q4_K); each weight
//! block contributes `d_w * d_x * (integer dot of its quants)` plus its offset term
//! (`m_w * s_x` for Q4_1, `-8 d_w * d_x * sum(q_x)` for Q4_0, `-dmin * d_x * sum(min_j * bsum_j)` for
//! Q4_K).
//!
//! Each kernel has an AVX2 build (chosen at run time, with F16C for the block scales) and a
//! portable one. Both keep eight partial sums laid out as the AVX2 lanes are (lane `l` holds
//! the integer sum of quants `4l..4l+4` of each 32, or of its 32-wide part of a Q4_K block),
//! scale them with separate multiplies and adds (no fused multiply-add), and add the lanes in
//! the same order, so the two builds give bit-identical results.

use half::f16;

/// Weights per block (Q4_0, Q4_1 and the activation blocks of [`Act32`]).
pub const QK: usize = 32;
/// Weights per Q4_K super-block.
pub const QKK: usize = 256;
/// Bytes per Q4_0 block: an f16 scale, then 16 bytes of nibbles.
pub const Q4_0_BYTES: usize = 18;
/// Bytes per Q4_1 block: f16 scale, f16 minimum, 16 bytes of nibbles.
pub const Q4_1_BYTES: usize = 20;
/// Bytes per Q4_K block: f16 scale, f16 scale of the minimums, 12 bytes of 6-bit sub-block
/// scales and minimums, 128 bytes of nibbles.
pub const Q4K_BYTES: usize = 144;

/// The 4-bit dtypes whose rows this module multiplies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Q4 {
    /// `w = d * (q - 8)`.
    Q4_0,
    /// `w = d * q + m`.
    Q4_1,
    /// Super-blocks of 8 x 32: `w = d * sc_j * q - dmin * m_j`.
    Q4K,
}

impl Q4 {
    /// Bytes of one row of `k` weights.
    pub fn row_bytes(self, k: usize) -> usize {
        match self {
            Q4::Q4_0 => k / QK * Q4_0_BYTES,
            Q4::Q4_1 => k / QK * Q4_1_BYTES,
            Q4::Q4K => k / QKK * Q4K_BYTES,
        }
    }

    /// Weights per block.
    pub fn block(self) -> usize {
        match self {
            Q4::Q4K => QKK,
            _ => QK,
        }
    }
}

/// An activation row quantized per block of 32 (ggml's Q8_0 / Q8_1).
#[derive(Debug, Clone, Default)]
pub struct Act32 {
    pub qs: Vec<i8>,
    /// Per block: `max|x| / 127`, rounded to half precision.
    pub d: Vec<f32>,
    /// Per block: `d * sum(q)` (unrounded `d`), rounded to half precision (Q8_1's `s`, for
    /// Q4_1's minimum).
    pub s: Vec<f32>,
    /// Per block: `d * sum(q)` exactly (stored `d`), for Q4_0's `-8` offset, which ggml
    /// applies in integers.
    pub dsum: Vec<f32>,
}

/// `x` (a whole number of 32-blocks) quantized as [`Act32`].
pub fn quantize_32(x: &[f32]) -> Act32 {
    let nb = x.len() / QK;
    let mut a = Act32 {
        qs: vec![0; nb * QK],
        d: vec![0.0; nb],
        s: vec![0.0; nb],
        dsum: vec![0.0; nb],
    };
    for (b, (xb, qb)) in x
        .chunks_exact(QK)
        .zip(a.qs.chunks_exact_mut(QK))
        .enumerate()
    {
        let amax = xb.iter().fold(0f32, |m, v| m.max(v.abs()));
        let d = amax / 127.0;
        let inv = if d != 0.0 { 1.0 / d } else { 0.0 };
        let mut sum = 0i32;
        for (q, v) in qb.iter_mut().zip(xb) {
            *q = (v * inv).round() as i8;
            sum += *q as i32;
        }
        a.d[b] = f16::from_f32(d).to_f32();
        a.s[b] = f16::from_f32(d * sum as f32).to_f32();
        a.dsum[b] = a.d[b] * sum as f32;
    }
    a
}

/// An activation row quantized per block of 256 (ggml's Q8_K).
#[derive(Debug, Clone, Default)]
pub struct Act256 {
    pub qs: Vec<i8>,
    /// Per block: the f32 scale.
    pub d: Vec<f32>,
    /// Per 16 quants: their sum.
    pub bsums: Vec<i16>,
}

/// `x` (a whole number of 256-blocks) quantized as [`Act256`]: the element of largest
/// magnitude maps to -127 (ggml's choice of sign), the rest round to the nearest even.
pub fn quantize_256(x: &[f32]) -> Act256 {
    let nb = x.len() / QKK;
    let mut a = Act256 {
        qs: vec![0; nb * QKK],
        d: vec![0.0; nb],
        bsums: vec![0; nb * QKK / 16],
    };
    for (b, (xb, qb)) in x
        .chunks_exact(QKK)
        .zip(a.qs.chunks_exact_mut(QKK))
        .enumerate()
    {
        let (mut amax, mut max) = (0f32, 0f32);
        for &v in xb {
            if v.abs() > amax {
                amax = v.abs();
                max = v;
            }
        }
        if amax == 0.0 {
            continue;
        }
        let iscale = -127.0 / max;
        for (q, v) in qb.iter_mut().zip(xb) {
            *q = (iscale * v).round_ties_even().min(127.0) as i8;
        }
        for (j, s) in qb.chunks_exact(16).enumerate() {
            a.bsums[b * 16 + j] = s.iter().map(|&q| q as i16).sum();
        }
        a.d[b] = 1.0 / iscale;
    }
    a
}

/// The activation a dtype's rows are multiplied with.
pub enum Act {
    B32(Act32),
    B256(Act256),
}

impl Act {
    /// `x` quantized for `dtype`.
    pub fn for_dtype(dtype: Q4, x: &[f32]) -> Self {
        match dtype {
            Q4::Q4K => Act::B256(quantize_256(x)),
            _ => Act::B32(quantize_32(x)),
        }
    }
}

/// `y[r] = row r of w . x` for the rows in `w` (`y.len()` rows of `k = x`'s length, `dtype`
/// blocks as stored in the GGUF), AVX2 when the CPU has it.
pub fn rows(dtype: Q4, w: &[u8], x: &Act, y: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if has_avx2() {
        // SAFETY: the CPU has AVX2, FMA and F16C; the kernels check the slice sizes.
        unsafe { avx2::rows(dtype, w, x, y) };
        return;
    }
    rows_portable(dtype, w, x, y)
}

/// Whether the AVX2 kernels run here.
pub fn has_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("avx2")
            && std::is_x86_feature_detected!("fma")
            && std::is_x86_feature_detected!("f16c")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// The portable build of [`rows`].
pub fn rows_portable(dtype: Q4, w: &[u8], x: &Act, y: &mut [f32]) {
    match (dtype, x) {
        (Q4::Q4K, Act::B256(a)) => portable_q4k(w, a, y),
        (Q4::Q4_0 | Q4::Q4_1, Act::B32(a)) => portable_q4(dtype == Q4::Q4_1, w, a, y),
        _ => panic!("{dtype:?} rows with the wrong activation blocks"),
    }
}

/// Half float at `p[0..2]`.
#[inline(always)]
fn half_at(p: &[u8]) -> f32 {
    f16::from_bits(u16::from_le_bytes([p[0], p[1]])).to_f32()
}

/// The eight lanes added in the AVX2 horizontal-sum order.
#[inline(always)]
fn hsum8(a: &[f32; 8]) -> f32 {
    ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]))
}

/// Q4_0 (`min` false) or Q4_1 rows against a 32-block activation.
fn portable_q4(min: bool, w: &[u8], x: &Act32, y: &mut [f32]) {
    let nb = x.d.len();
    let bytes = if min { Q4_1_BYTES } else { Q4_0_BYTES };
    assert!(w.len() >= y.len() * nb * bytes);
    for (r, out) in y.iter_mut().enumerate() {
        let mut acc = [0f32; 8];
        let mut offs = 0f32;
        for b in 0..nb {
            let blk = &w[(r * nb + b) * bytes..(r * nb + b + 1) * bytes];
            let dw = half_at(blk);
            let (m, qs) = if min {
                (half_at(&blk[2..]), &blk[4..20])
            } else {
                (-8.0 * dw, &blk[2..18])
            };
            let xq = &x.qs[b * QK..(b + 1) * QK];
            let ddx = dw * x.d[b];
            for (l, a) in acc.iter_mut().enumerate() {
                let mut s = 0i32;
                for e in 4 * l..4 * l + 4 {
                    let q = if e < 16 { qs[e] & 15 } else { qs[e - 16] >> 4 };
                    s += q as i32 * xq[e] as i32;
                }
                *a += ddx * s as f32;
            }
            offs += m * if min { x.s[b] } else { x.dsum[b] };
        }
        *out = hsum8(&acc) + offs;
    }
}

/// Q4_K's eight 6-bit sub-block scales and minimums from its 12 packed bytes.
#[inline(always)]
fn q4k_scales(p: &[u8]) -> ([u8; 8], [u8; 8]) {
    let (mut sc, mut mn) = ([0u8; 8], [0u8; 8]);
    for j in 0..4 {
        sc[j] = p[j] & 63;
        mn[j] = p[j + 4] & 63;
        sc[j + 4] = (p[j + 8] & 15) | ((p[j] >> 6) << 4);
        mn[j + 4] = (p[j + 8] >> 4) | ((p[j + 4] >> 6) << 4);
    }
    (sc, mn)
}

/// Q4_K rows against a 256-block activation.
fn portable_q4k(w: &[u8], x: &Act256, y: &mut [f32]) {
    let nb = x.d.len();
    assert!(w.len() >= y.len() * nb * Q4K_BYTES);
    for (r, out) in y.iter_mut().enumerate() {
        let mut acc = [0f32; 8];
        let mut offs = 0f32;
        for b in 0..nb {
            let blk = &w[(r * nb + b) * Q4K_BYTES..(r * nb + b + 1) * Q4K_BYTES];
            let (sc, mn) = q4k_scales(&blk[4..16]);
            let qs = &blk[16..];
            let xq = &x.qs[b * QKK..(b + 1) * QKK];
            let bs = &x.bsums[b * 16..(b + 1) * 16];
            let mins: i32 = (0..8)
                .map(|j| mn[j] as i32 * (bs[2 * j] as i32 + bs[2 * j + 1] as i32))
                .sum();
            let mut lanes = [0i32; 8];
            for (l, lane) in lanes.iter_mut().enumerate() {
                for j in 0..8 {
                    let mut s = 0i32;
                    for e in 4 * l..4 * l + 4 {
                        let byte = qs[(j / 2) * 32 + e];
                        let q = if j % 2 == 0 { byte & 15 } else { byte >> 4 };
                        s += q as i32 * xq[j * 32 + e] as i32;
                    }
                    *lane += sc[j] as i32 * s;
                }
            }
            let ddx = half_at(blk) * x.d[b];
            for (a, s) in acc.iter_mut().zip(lanes) {
                *a += ddx * s as f32;
            }
            offs += half_at(&blk[2..]) * x.d[b] * mins as f32;
        }
        *out = hsum8(&acc) - offs;
    }
}

#[cfg(target_arch = "x86_64")]
pub(crate) mod avx2 {
    use super::*;
    use std::arch::x86_64::*;

    /// See [`super::rows`]; the caller checked AVX2, FMA and F16C.
    #[target_feature(enable = "avx2,fma,f16c")]
    pub unsafe fn rows(dtype: Q4, w: &[u8], x: &Act, y: &mut [f32]) {
        match (dtype, x) {
            (Q4::Q4K, Act::B256(a)) => q4k(w, a, y),
            (Q4::Q4_0, Act::B32(a)) => q4::<false>(w, a, y),
            (Q4::Q4_1, Act::B32(a)) => q4::<true>(w, a, y),
            _ => panic!("{dtype:?} rows with the wrong activation blocks"),
        }
    }

    /// The eight lanes of `v` added (the order [`super::hsum8`] copies).
    #[inline(always)]
    pub(crate) unsafe fn hsum(v: __m256) -> f32 {
        let s = _mm_add_ps(_mm256_extractf128_ps(v, 1), _mm256_castps256_ps128(v));
        let s = _mm_add_ps(s, _mm_movehl_ps(s, s));
        let s = _mm_add_ss(s, _mm_movehdup_ps(s));
        _mm_cvtss_f32(s)
    }

    /// The two halves at `p` (little-endian f16) widened.
    #[inline(always)]
    unsafe fn halves(p: *const u8) -> (f32, f32) {
        let v = _mm_cvtph_ps(_mm_loadu_si32(p));
        (_mm_cvtss_f32(v), _mm_cvtss_f32(_mm_movehdup_ps(v)))
    }

    /// 16 bytes of nibbles at `p` -> 32 quants (low nibbles first, then high).
    #[inline(always)]
    unsafe fn nibbles(p: *const u8) -> __m256i {
        let q = _mm_loadu_si128(p as *const __m128i);
        let both = _mm256_set_m128i(_mm_srli_epi16(q, 4), q);
        _mm256_and_si256(both, _mm256_set1_epi8(15))
    }

    /// Unsigned quants `u` times signed `x`: per lane, the i32 sum of 4 products.
    #[inline(always)]
    unsafe fn dot_u8_i8(u: __m256i, x: __m256i) -> __m256i {
        _mm256_madd_epi16(_mm256_maddubs_epi16(u, x), _mm256_set1_epi16(1))
    }

    /// As [`dot_u8_i8`], each lane times `sc` (the same integers: the pair sums fit i16).
    #[inline(always)]
    unsafe fn dot_scaled(u: __m256i, x: __m256i, sc: u8) -> __m256i {
        _mm256_madd_epi16(_mm256_maddubs_epi16(u, x), _mm256_set1_epi16(sc as i16))
    }

    /// Q4_0 / Q4_1 rows, one after the other, each block in memory order: the hardware
    /// prefetchers then follow one sequential stream. (Four rows read in step, sharing each
    /// activation load, took 1.6x the time per token of ggml's one-row kernel in the same
    /// perf run; one row at a time takes 0.6-0.9x.)
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn q4<const MIN: bool>(w: &[u8], x: &Act32, y: &mut [f32]) {
        let nb = x.d.len();
        let bytes = if MIN { Q4_1_BYTES } else { Q4_0_BYTES };
        assert!(w.len() >= y.len() * nb * bytes && x.qs.len() >= nb * QK);
        assert!(x.s.len() >= nb && x.dsum.len() >= nb);
        let mut wp = w.as_ptr();
        for out in y.iter_mut() {
            *out = q4_row::<MIN>(wp, x, nb);
            wp = wp.wrapping_add(nb * bytes);
        }
    }

    /// One row of [`q4`] (its `nb` blocks at `p`) times `x`. Pointers advance by wrapping
    /// adds: the loop carries no overflow checks in a dev build.
    #[inline(always)]
    unsafe fn q4_row<const MIN: bool>(mut p: *const u8, x: &Act32, nb: usize) -> f32 {
        let bytes = if MIN { Q4_1_BYTES } else { Q4_0_BYTES };
        let (mut xq, mut xd) = (x.qs.as_ptr(), x.d.as_ptr());
        let mut xs = if MIN { x.s.as_ptr() } else { x.dsum.as_ptr() };
        let mut acc = _mm256_setzero_ps();
        let mut offs = 0f32;
        for _ in 0..nb {
            let (dw, m, qs) = if MIN {
                let (d, m) = halves(p);
                (d, m, p.wrapping_add(4))
            } else {
                let (d, _) = halves(p);
                (d, -8.0 * d, p.wrapping_add(2))
            };
            let xv = _mm256_loadu_si256(xq as *const __m256i);
            let s = _mm256_cvtepi32_ps(dot_u8_i8(nibbles(qs), xv));
            acc = _mm256_add_ps(acc, _mm256_mul_ps(_mm256_set1_ps(dw * *xd), s));
            offs += m * *xs;
            p = p.wrapping_add(bytes);
            xq = xq.wrapping_add(QK);
            xd = xd.wrapping_add(1);
            xs = xs.wrapping_add(1);
        }
        hsum(acc) + offs
    }

    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn q4k(w: &[u8], x: &Act256, y: &mut [f32]) {
        let nb = x.d.len();
        assert!(w.len() >= y.len() * nb * Q4K_BYTES && x.qs.len() >= nb * QKK);
        assert!(x.bsums.len() >= nb * 16);
        let m4 = _mm256_set1_epi8(15);
        for (r, out) in y.iter_mut().enumerate() {
            let mut acc = _mm256_setzero_ps();
            let mut offs = 0f32;
            for b in 0..nb {
                let blk = w.as_ptr().add((r * nb + b) * Q4K_BYTES);
                let (sc, mn) = q4k_scales(std::slice::from_raw_parts(blk.add(4), 12));
                let bs = &x.bsums[b * 16..(b + 1) * 16];
                let mins: i32 = (0..8)
                    .map(|j| mn[j] as i32 * (bs[2 * j] as i32 + bs[2 * j + 1] as i32))
                    .sum();
                let xp = x.qs.as_ptr().add(b * QKK);
                let mut lanes = _mm256_setzero_si256();
                for jj in 0..4 {
                    let q = _mm256_loadu_si256(blk.add(16 + 32 * jj) as *const __m256i);
                    let lo = _mm256_and_si256(q, m4);
                    let hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
                    let x0 = _mm256_loadu_si256(xp.add(64 * jj) as *const __m256i);
                    let x1 = _mm256_loadu_si256(xp.add(64 * jj + 32) as *const __m256i);
                    let p0 = dot_scaled(lo, x0, sc[2 * jj]);
                    let p1 = dot_scaled(hi, x1, sc[2 * jj + 1]);
                    lanes = _mm256_add_epi32(lanes, _mm256_add_epi32(p0, p1));
                }
                let (d, dmin) = halves(blk);
                let ddx = d * *x.d.get_unchecked(b);
                let s = _mm256_cvtepi32_ps(lanes);
                acc = _mm256_add_ps(acc, _mm256_mul_ps(_mm256_set1_ps(ddx), s));
                offs += dmin * *x.d.get_unchecked(b) * mins as f32;
            }
            *out = hsum(acc) - offs;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qrows::typed;
    use candle_core::quantized::k_quants::{
        BlockQ4K, BlockQ4_0, BlockQ4_1, BlockQ8K, BlockQ8_0, BlockQ8_1, GgmlType,
    };
    use candle_core::quantized::{GgmlDType, QTensor};
    use candle_core::{Device, Tensor};

    /// Deterministic values in [-1, 1) (xorshift), with a few larger outliers.
    fn noise(n: usize, seed: u64) -> Vec<f32> {
        let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        (0..n)
            .map(|i| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                let v = (s >> 40) as f32 / (1u64 << 23) as f32 - 1.0;
                if i % 97 == 5 {
                    4.0 * v
                } else {
                    v
                }
            })
            .collect()
    }

    /// `n x k` weights quantized by candle to `dtype`: the GGUF bytes.
    fn weights(dtype: GgmlDType, n: usize, k: usize, seed: u64) -> Vec<u8> {
        let t = Tensor::from_vec(noise(n * k, seed), (n, k), &Device::Cpu).unwrap();
        QTensor::quantize(&t, dtype)
            .unwrap()
            .data()
            .unwrap()
            .to_vec()
    }

    /// Our 32-block activation as candle's Q8_0 (`s` false) or Q8_1 blocks, byte for byte.
    fn as_candle_32(a: &Act32, with_s: bool) -> Vec<u8> {
        let mut out = Vec::new();
        for b in 0..a.d.len() {
            out.extend(f16::from_f32(a.d[b]).to_bits().to_le_bytes());
            if with_s {
                out.extend(f16::from_f32(a.s[b]).to_bits().to_le_bytes());
            }
            out.extend(a.qs[b * QK..(b + 1) * QK].iter().map(|&q| q as u8));
        }
        out
    }

    fn as_candle_q8k(a: &Act256) -> Vec<BlockQ8K> {
        let mut out = Vec::new();
        for b in 0..a.d.len() {
            out.extend(a.d[b].to_le_bytes());
            out.extend(a.qs[b * QKK..(b + 1) * QKK].iter().map(|&q| q as u8));
            for s in &a.bsums[b * 16..(b + 1) * 16] {
                out.extend(s.to_le_bytes());
            }
        }
        typed(&out).unwrap()
    }

    /// candle's `vec_dot` of each row of `w` with `x`.
    fn candle_rows<W: GgmlType>(w: &[u8], x: &[W::VecDotType], n: usize, k: usize) -> Vec<f32> {
        let w: Vec<W> = typed(w).unwrap();
        let nb = w.len() / n;
        (0..n)
            .map(|r| W::vec_dot(k, &w[r * nb..(r + 1) * nb], x))
            .collect()
    }

    fn close(got: &[f32], want: &[f32], what: &str) {
        assert_eq!(got.len(), want.len());
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            assert!(
                (g - w).abs() <= 2e-5 * (1.0 + w.abs()),
                "{what} row {i}: {g} vs {w}"
            );
        }
    }

    /// Each dtype's rows against candle's `vec_dot` on the same quantized activation, and the
    /// portable build against the AVX2 one (bit for bit), for several row counts.
    #[test]
    fn q4_rows_match_candle_vec_dot_and_builds_agree() {
        let k = 512;
        for (case, n) in [5usize, 8, 3].into_iter().enumerate() {
            let x = noise(k, 100 + case as u64);
            for (dtype, q4) in [
                (GgmlDType::Q4_0, Q4::Q4_0),
                (GgmlDType::Q4_1, Q4::Q4_1),
                (GgmlDType::Q4K, Q4::Q4K),
            ] {
                let w = weights(dtype, n, k, 7 + case as u64);
                assert_eq!(w.len(), n * q4.row_bytes(k));
                let act = Act::for_dtype(q4, &x);
                let want = match (&act, q4) {
                    (Act::B32(a), Q4::Q4_0) => {
                        let xb: Vec<BlockQ8_0> = typed(&as_candle_32(a, false)).unwrap();
                        candle_rows::<BlockQ4_0>(&w, &xb, n, k)
                    }
                    (Act::B32(a), _) => {
                        let xb: Vec<BlockQ8_1> = typed(&as_candle_32(a, true)).unwrap();
                        candle_rows::<BlockQ4_1>(&w, &xb, n, k)
                    }
                    (Act::B256(a), _) => candle_rows::<BlockQ4K>(&w, &as_candle_q8k(a), n, k),
                };
                let mut got = vec![0f32; n];
                rows(q4, &w, &act, &mut got);
                close(&got, &want, &format!("{q4:?} x{n}"));
                let mut port = vec![0f32; n];
                rows_portable(q4, &w, &act, &mut port);
                close(&port, &want, &format!("{q4:?} portable x{n}"));
                if has_avx2() {
                    let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
                    assert_eq!(bits(&port), bits(&got), "{q4:?}: portable vs AVX2");
                }
            }
        }
    }

    /// Our activation quantizers give candle's blocks (Q8_0, and Q8_K up to ties, which random
    /// inputs do not hit); Q8_1's `s` is `d * sum(q)` as ggml stores it; zeros stay zeros.
    #[test]
    fn activations_quantize_as_ggml() {
        let x = noise(512, 3);
        let ours = quantize_32(&x);
        let mut want = vec![BlockQ8_0::zeros(); 16];
        BlockQ8_0::from_float(&x, &mut want);
        let want_bytes: Vec<u8> = want
            .iter()
            .flat_map(|b| {
                // SAFETY: a repr(C) block of plain data, read as its bytes.
                unsafe {
                    std::slice::from_raw_parts(b as *const BlockQ8_0 as *const u8, 34).to_vec()
                }
            })
            .collect();
        assert_eq!(as_candle_32(&ours, false), want_bytes);
        for b in 0..16 {
            let sum: i32 = ours.qs[b * QK..(b + 1) * QK]
                .iter()
                .map(|&q| q as i32)
                .sum();
            let rel = (ours.s[b] - ours.d[b] * sum as f32).abs() / (ours.s[b].abs() + 1e-6);
            assert!(rel < 2e-3, "block {b}: s {} vs d*sum", ours.s[b]);
        }
        let ours = quantize_256(&x);
        let mut want = vec![BlockQ8K::zeros(); 2];
        BlockQ8K::from_float(&x, &mut want);
        let mine = as_candle_q8k(&ours);
        assert_eq!(mine, want);
        let zero = quantize_256(&[0.0; QKK]);
        assert!(zero.d[0] == 0.0 && zero.qs.iter().all(|&q| q == 0));
        let zero = quantize_32(&[0.0; QK]);
        assert!(zero.d[0] == 0.0 && zero.s[0] == 0.0);
    }
}
