//! Row kernels on plain `f32` slices, shared by the BERT and Qwen3 encoder forwards and the local
//! LLM's one-token steps: layer norm, RMS norm, softmax, GELU (erf form), the SiLU
//! gate, `exp`, dot product, axpy. Pure functions, no allocation.
//!
//! Each kernel is written once as an `#[inline(always)]` body and compiled twice: as is (the
//! baseline x86-64 / any target) and inside an `avx2,fma` function chosen at run time, where
//! LLVM vectorises it 8 lanes wide. Both builds do the same IEEE operations in the same order
//! (reductions keep eight explicit partial sums; no `mul_add` is implied), so their results are
//! bit-identical: the CPU a run lands on never changes a number.
//!
//! `gelu_erf` uses the Abramowitz-Stegun 7.1.26 approximation of erf (absolute error below
//! 1.5e-7; PyTorch's vectorised CPU erf, hence sentence-transformers' GELU, uses the same
//! formula), with `exp` by Cody-Waite range reduction and a degree-5 polynomial (relative error
//! about 2e-7).

/// Eight partial sums, added pairwise at the end (one fixed order on every CPU).
const LANES: usize = 8;

#[inline(always)]
fn fold(acc: [f32; LANES]) -> f32 {
    ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]))
}

#[inline(always)]
fn dot_body(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0f32; LANES];
    let mut ca = a.chunks_exact(LANES);
    let mut cb = b.chunks_exact(LANES);
    for (x, y) in (&mut ca).zip(&mut cb) {
        for l in 0..LANES {
            acc[l] += x[l] * y[l];
        }
    }
    for (l, (x, y)) in ca.remainder().iter().zip(cb.remainder()).enumerate() {
        acc[l] += x * y;
    }
    fold(acc)
}

#[inline(always)]
fn sum_body(a: &[f32]) -> f32 {
    let mut acc = [0f32; LANES];
    let mut c = a.chunks_exact(LANES);
    for x in &mut c {
        for l in 0..LANES {
            acc[l] += x[l];
        }
    }
    for (l, x) in c.remainder().iter().enumerate() {
        acc[l] += x;
    }
    fold(acc)
}

#[inline(always)]
fn max_body(a: &[f32]) -> f32 {
    let mut acc = [f32::NEG_INFINITY; LANES];
    let mut c = a.chunks_exact(LANES);
    for x in &mut c {
        for l in 0..LANES {
            acc[l] = if x[l] > acc[l] { x[l] } else { acc[l] };
        }
    }
    for (l, x) in c.remainder().iter().enumerate() {
        acc[l] = if *x > acc[l] { *x } else { acc[l] };
    }
    acc.iter()
        .fold(f32::NEG_INFINITY, |m, &x| if x > m { x } else { m })
}

/// `e^x`; 0 below -87 (where f32 stops being normal), saturating above 88.
#[inline(always)]
pub fn exp(x: f32) -> f32 {
    const LOG2E: f32 = std::f32::consts::LOG2_E;
    // ln 2 split in a part exact in a few bits and the rest (Cody-Waite).
    const LN2_HI: f32 = 0.693_359_4;
    const LN2_LO: f32 = -2.121_944_4e-4;
    // 1.5 * 2^23: adding it rounds to an integer, which then sits in the low mantissa bits.
    const MAGIC: f32 = 12_582_912.0;
    let xc = x.clamp(-87.0, 88.0);
    let t = xc * LOG2E + MAGIC;
    let n = t - MAGIC;
    let r = (xc - n * LN2_HI) - n * LN2_LO;
    let p = 1.987_569_1e-4;
    let p = p * r + 1.398_199_9e-3;
    let p = p * r + 8.333_452e-3;
    let p = p * r + 4.166_579_6e-2;
    let p = p * r + 1.666_666_5e-1;
    let p = p * r + 0.5;
    let y = p * (r * r) + r + 1.0;
    // 2^n: n + 127 shifted into the exponent field (t's low bits hold n; the magic's own bits
    // shift out).
    let scale = f32::from_bits(t.to_bits().wrapping_add(127) << 23);
    if x < -87.0 {
        0.0
    } else {
        y * scale
    }
}

/// erf by Abramowitz-Stegun 7.1.26.
#[inline(always)]
pub fn erf(x: f32) -> f32 {
    let a = x.abs();
    let t = 1.0 / (0.327_591_1 * a + 1.0);
    let r = 1.061_405_4;
    let r = r * t - 1.453_152;
    let r = r * t + 1.421_413_8;
    let r = r * t - 0.284_496_74;
    let r = r * t + 0.254_829_6;
    let e = exp(-(a * a));
    (1.0 - r * t * e).copysign(x)
}

#[inline(always)]
fn gelu_erf_body(x: &mut [f32]) {
    for v in x {
        let u = *v;
        *v = 0.5 * u * (1.0 + erf(u * std::f32::consts::FRAC_1_SQRT_2));
    }
}

#[inline(always)]
fn layer_norm_body(x: &mut [f32], w: &[f32], b: &[f32], eps: f32) {
    let h = w.len();
    for row in x.chunks_exact_mut(h) {
        let mean = sum_body(row) / h as f32;
        let mut acc = [0f32; LANES];
        let mut c = row.chunks_exact(LANES);
        for v in &mut c {
            for l in 0..LANES {
                let d = v[l] - mean;
                acc[l] += d * d;
            }
        }
        for (l, v) in c.remainder().iter().enumerate() {
            let d = v - mean;
            acc[l] += d * d;
        }
        let inv = 1.0 / (fold(acc) / h as f32 + eps).sqrt();
        for ((v, g), c) in row.iter_mut().zip(w).zip(b) {
            *v = (*v - mean) * inv * g + c;
        }
    }
}

#[inline(always)]
fn rms_norm_body(x: &mut [f32], w: &[f32], eps: f32) {
    let h = w.len();
    for row in x.chunks_exact_mut(h) {
        let inv = 1.0 / (dot_body(row, row) / h as f32 + eps).sqrt();
        for (v, g) in row.iter_mut().zip(w) {
            *v = *v * inv * g;
        }
    }
}

#[inline(always)]
fn silu_mul_body(gate: &mut [f32], up: &[f32]) {
    for (g, u) in gate.iter_mut().zip(up) {
        let x = *g;
        *g = x / (1.0 + exp(-x)) * u;
    }
}

#[inline(always)]
fn softmax_body(x: &mut [f32]) {
    let m = max_body(x);
    for v in x.iter_mut() {
        *v = exp(*v - m);
    }
    let inv = 1.0 / sum_body(x);
    for v in x.iter_mut() {
        *v *= inv;
    }
}

#[inline(always)]
fn axpy_body(a: f32, x: &[f32], y: &mut [f32]) {
    for (y, x) in y.iter_mut().zip(x) {
        *y += a * x;
    }
}

#[inline(always)]
fn add_body(x: &[f32], y: &mut [f32]) {
    for (y, x) in y.iter_mut().zip(x) {
        *y += x;
    }
}

#[cfg(target_arch = "x86_64")]
fn avx2() -> bool {
    std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma")
}

/// One public kernel: the AVX2 build when the CPU has it, else the portable one.
macro_rules! kernel {
    ($(#[$doc:meta])* $name:ident, $avx:ident, $body:ident, ($($arg:ident: $ty:ty),*) -> $ret:ty) => {
        $(#[$doc])*
        pub fn $name($($arg: $ty),*) -> $ret {
            #[cfg(target_arch = "x86_64")]
            if avx2() {
                // SAFETY: the CPU has AVX2 and FMA (checked just above).
                return unsafe { $avx($($arg),*) };
            }
            $body($($arg),*)
        }
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2,fma")]
        fn $avx($($arg: $ty),*) -> $ret {
            $body($($arg),*)
        }
    };
}

kernel!(
    /// `sum(a[i] * b[i])` over the shorter length.
    dot, dot_avx2, dot_body, (a: &[f32], b: &[f32]) -> f32
);
kernel!(
    /// In place `0.5 x (1 + erf(x / sqrt 2))`.
    gelu_erf, gelu_erf_avx2, gelu_erf_body, (x: &mut [f32]) -> ()
);
kernel!(
    /// In place layer norm of each row (row length `w.len()`): `(x - mean) / sqrt(var + eps)
    /// * w + b`, with the biased variance.
    layer_norm, layer_norm_avx2, layer_norm_body, (x: &mut [f32], w: &[f32], b: &[f32], eps: f32) -> ()
);
kernel!(
    /// In place RMS norm of each row (row length `w.len()`): `x / sqrt(mean(x^2) + eps) * w`.
    rms_norm, rms_norm_avx2, rms_norm_body, (x: &mut [f32], w: &[f32], eps: f32) -> ()
);
kernel!(
    /// In place `gate = silu(gate) * up` (SiLU-gated linear unit), over the shorter length.
    silu_mul, silu_mul_avx2, silu_mul_body, (gate: &mut [f32], up: &[f32]) -> ()
);
kernel!(
    /// In place softmax of one row.
    softmax, softmax_avx2, softmax_body, (x: &mut [f32]) -> ()
);
kernel!(
    /// `y += a * x`.
    axpy, axpy_avx2, axpy_body, (a: f32, x: &[f32], y: &mut [f32]) -> ()
);
kernel!(
    /// `y += x`.
    add, add_avx2, add_body, (x: &[f32], y: &mut [f32]) -> ()
);

#[cfg(test)]
mod tests {
    use super::*;

    fn erf64(x: f64) -> f64 {
        // High-accuracy reference: the Taylor series near 0, the continued fraction beyond.
        if x.abs() < 2.5 {
            let mut sum = 0.0;
            let mut term = x;
            let mut n = 0.0;
            while term.abs() > 1e-17 {
                sum += term / (2.0 * n + 1.0);
                n += 1.0;
                term *= -x * x / n;
            }
            2.0 / std::f64::consts::PI.sqrt() * sum
        } else {
            let a = x.abs();
            let mut f = 0.0;
            for k in (1..60).rev() {
                f = (k as f64 / 2.0) / (a + f);
            }
            let erfc = (-a * a).exp() / std::f64::consts::PI.sqrt() / (a + f);
            (1.0 - erfc).copysign(x)
        }
    }

    #[test]
    fn exp_is_accurate_and_zero_far_below() {
        let mut worst = 0f64;
        let mut x = -87.0f32;
        while x < 88.0 {
            let want = (x as f64).exp();
            worst = worst.max(((exp(x) as f64) - want).abs() / want);
            x += 0.01;
        }
        assert!(worst < 5e-7, "relative error {worst}");
        assert_eq!(exp(-100.0), 0.0);
        assert_eq!(exp(f32::NEG_INFINITY), 0.0);
        assert_eq!(exp(0.0), 1.0);
    }

    #[test]
    fn erf_and_gelu_match_the_exact_function() {
        let mut worst = 0f64;
        let mut x = -6.0f32;
        while x < 6.0 {
            worst = worst.max((erf(x) as f64 - erf64(x as f64)).abs());
            x += 0.001;
        }
        assert!(worst < 5e-7, "absolute error {worst}"); // 1.5e-7 of the formula + f32 rounding
        let xs: Vec<f32> = (-400..400).map(|i| i as f32 * 0.02).collect();
        let mut g = xs.clone();
        gelu_erf(&mut g);
        for (x, g) in xs.iter().zip(&g) {
            let want = 0.5 * *x as f64 * (1.0 + erf64(*x as f64 / 2f64.sqrt()));
            assert!(
                (*g as f64 - want).abs() < 1e-6 * (1.0 + want.abs()),
                "{x}: {g} vs {want}"
            );
        }
    }

    #[test]
    fn row_kernels_match_plain_loops_and_builds_agree() {
        let a: Vec<f32> = (0..77)
            .map(|i| ((i * 37 % 11) as f32 - 5.0) * 0.3)
            .collect();
        let b: Vec<f32> = (0..77).map(|i| ((i * 13 % 7) as f32 - 3.0) * 0.7).collect();
        let plain: f64 = a
            .iter()
            .zip(&b)
            .map(|(x, y)| (*x as f64) * (*y as f64))
            .sum();
        assert!((dot(&a, &b) as f64 - plain).abs() < 1e-4);
        // The portable and the dispatched build give the same bits.
        assert_eq!(dot(&a, &b).to_bits(), dot_body(&a, &b).to_bits());
        let mut s = a.clone();
        softmax(&mut s);
        let mut s2 = a.clone();
        softmax_body(&mut s2);
        assert_eq!(s, s2);
        assert!((s.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        let m = a.iter().cloned().fold(f32::MIN, f32::max);
        let z: f64 = a.iter().map(|x| ((*x - m) as f64).exp()).sum();
        for (x, p) in a.iter().zip(&s) {
            assert!((*p as f64 - ((*x - m) as f64).exp() / z).abs() < 1e-6);
        }
        let (w, c) = (vec![1.5f32; 11], vec![0.25f32; 11]);
        let mut rows = a[..66].to_vec();
        layer_norm(&mut rows, &w, &c, 1e-12);
        for (row, src) in rows.chunks(11).zip(a[..66].chunks(11)) {
            let mean = src.iter().map(|x| *x as f64).sum::<f64>() / 11.0;
            let var = src.iter().map(|x| (*x as f64 - mean).powi(2)).sum::<f64>() / 11.0;
            for (y, x) in row.iter().zip(src) {
                let want = (*x as f64 - mean) / (var + 1e-12).sqrt() * 1.5 + 0.25;
                assert!((*y as f64 - want).abs() < 1e-5, "{y} vs {want}");
            }
        }
        let mut r1 = a[..66].to_vec();
        rms_norm(&mut r1, &w, 1e-6);
        let mut r2 = a[..66].to_vec();
        rms_norm_body(&mut r2, &w, 1e-6);
        assert_eq!(r1, r2);
        for (row, src) in r1.chunks(11).zip(a[..66].chunks(11)) {
            let ms = src.iter().map(|x| (*x as f64).powi(2)).sum::<f64>() / 11.0;
            for (y, x) in row.iter().zip(src) {
                let want = *x as f64 / (ms + 1e-6).sqrt() * 1.5;
                assert!((*y as f64 - want).abs() < 1e-5, "rms {y} vs {want}");
            }
        }
        let mut s1 = a.clone();
        silu_mul(&mut s1, &b);
        let mut s2 = a.clone();
        silu_mul_body(&mut s2, &b);
        assert_eq!(s1, s2);
        for ((y, x), u) in s1.iter().zip(&a).zip(&b) {
            let want = (*x as f64) / (1.0 + (-(*x as f64)).exp()) * *u as f64;
            assert!(
                (*y as f64 - want).abs() < 1e-5 * (1.0 + want.abs()),
                "silu {y} vs {want}"
            );
        }
        let mut g1 = a.clone();
        gelu_erf(&mut g1);
        let mut g2 = a.clone();
        gelu_erf_body(&mut g2);
        assert_eq!(g1, g2);
    }
}
