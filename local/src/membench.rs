//! The machine's memory bandwidth and arithmetic rate, printed beside the local model's
//! decode speed by `memskill bench llm`: a one-token decode step reads every weight once, so
//! on a small CPU box its tokens/s is bounded by bandwidth / bytes per token, and two boxes of
//! "the same kind" can differ by their memory alone.
//!
//! Bandwidth is measured as STREAM does: `copy` (`c = a`, 16 bytes moved per f64) and `triad`
//! (`a = b + s c`, 24 bytes per f64) over arrays far larger than the caches, the best of a few
//! repetitions, on one thread and on all. The arithmetic rate is f32 multiply-adds on
//! register-resident accumulators (2 flops each; AVX2+FMA when the CPU has it).
//!
//! It lives in this crate because the dev profile optimises it (`[profile.dev.package]` in
//! the workspace's Cargo.toml): unoptimised, the loops measure the compiler, not the machine.

use std::time::Instant;

/// Elements per array (64 MiB of f64 each: well past the last-level cache of the small
/// machines this is for).
const LEN: usize = 8 << 20;
/// Repetitions; the best counts.
const REPS: usize = 4;

/// One measurement of the machine.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MachineSpeed {
    pub threads: usize,
    /// STREAM copy, GB/s (1e9 bytes) on one thread / on `threads`.
    pub copy_1: f64,
    pub copy_all: f64,
    /// STREAM triad, GB/s, one thread / all.
    pub triad_1: f64,
    pub triad_all: f64,
    /// f32 GFLOP/s, one thread / all.
    pub gflops_1: f64,
    pub gflops_all: f64,
}

impl MachineSpeed {
    /// One line: `memory copy 12.1 / 14.0 GB/s, triad ... (1 / 2 threads), f32 ... GFLOP/s`.
    pub fn describe(&self) -> String {
        format!(
            "memory: copy {:.1} / {:.1} GB/s, triad {:.1} / {:.1} GB/s; f32 {:.0} / {:.0} GFLOP/s (1 / {} threads)",
            self.copy_1,
            self.copy_all,
            self.triad_1,
            self.triad_all,
            self.gflops_1,
            self.gflops_all,
            self.threads
        )
    }
}

/// Measures the machine on one thread and on `threads` (about 2-4 s).
pub fn measure(threads: usize) -> MachineSpeed {
    let threads = threads.max(1);
    let mut a = vec![1.0f64; LEN];
    let mut b = vec![2.0f64; LEN];
    let mut c = vec![0.5f64; LEN];
    let (copy_1, triad_1) = stream(1, &mut a, &mut b, &mut c);
    let (copy_all, triad_all) = stream(threads, &mut a, &mut b, &mut c);
    MachineSpeed {
        threads,
        copy_1,
        copy_all,
        triad_1,
        triad_all,
        gflops_1: gflops(1),
        gflops_all: gflops(threads),
    }
}

/// Best copy and triad GB/s over [`REPS`] runs on `threads` threads (each its slice).
fn stream(threads: usize, a: &mut [f64], b: &mut [f64], c: &mut [f64]) -> (f64, f64) {
    let chunk = a.len().div_ceil(threads);
    let (mut copy, mut triad) = (0f64, 0f64);
    for _ in 0..REPS {
        let t = Instant::now();
        std::thread::scope(|s| {
            for (cc, aa) in c.chunks_mut(chunk).zip(a.chunks(chunk)) {
                s.spawn(move || {
                    for (x, y) in cc.iter_mut().zip(aa) {
                        *x = *y;
                    }
                });
            }
        });
        copy = copy.max(16.0 * a.len() as f64 / t.elapsed().as_secs_f64() / 1e9);
        let t = Instant::now();
        std::thread::scope(|s| {
            for ((aa, bb), cc) in a
                .chunks_mut(chunk)
                .zip(b.chunks(chunk))
                .zip(c.chunks(chunk))
            {
                s.spawn(move || {
                    for ((x, y), z) in aa.iter_mut().zip(bb).zip(cc) {
                        *x = *y + 3.0 * *z;
                    }
                });
            }
        });
        triad = triad.max(24.0 * a.len() as f64 / t.elapsed().as_secs_f64() / 1e9);
    }
    std::hint::black_box((&a[a.len() / 2], &c[c.len() / 3]));
    (copy, triad)
}

/// Multiply-adds per thread per measurement.
const FMA_ROUNDS: usize = 4 << 20;

/// f32 GFLOP/s of `threads` threads each running [`fma_loop`].
fn gflops(threads: usize) -> f64 {
    let mut best = 0f64;
    for _ in 0..REPS {
        let t = Instant::now();
        std::thread::scope(|s| {
            for i in 0..threads {
                s.spawn(move || std::hint::black_box(fma_loop(i as f32 * 1e-3)));
            }
        });
        let flops = (threads * FMA_ROUNDS * ACC * 2) as f64;
        best = best.max(flops / t.elapsed().as_secs_f64() / 1e9);
    }
    best
}

/// Independent accumulators: enough to hide the multiply-add latency in 8-wide registers.
const ACC: usize = 64;

#[inline(always)]
fn fma_body(seed: f32, fused: bool) -> f32 {
    let mut acc = [seed; ACC];
    let (m, k) = (0.999_999, 1e-7);
    for _ in 0..FMA_ROUNDS {
        for a in acc.iter_mut() {
            *a = if fused { a.mul_add(m, k) } else { *a * m + k };
        }
    }
    acc.iter().sum()
}

fn fma_loop(seed: f32) -> f32 {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
        #[target_feature(enable = "avx2,fma")]
        unsafe fn fused(seed: f32) -> f32 {
            fma_body(seed, true)
        }
        // SAFETY: the CPU has AVX2 and FMA.
        return unsafe { fused(seed) };
    }
    fma_body(seed, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_counts_bytes_and_writes_results() {
        let n = 1 << 16;
        let (mut a, mut b, mut c) = (vec![1.0; n], vec![2.0; n], vec![0.5; n]);
        let (copy, triad) = stream(2, &mut a, &mut b, &mut c);
        assert!(copy > 0.0 && copy.is_finite() && triad > 0.0 && triad.is_finite());
        // Each repetition copies c = a, then sets a = b + 3 c: on every element of every
        // chunk (an element left out keeps its start values, 1 and 0.5, which break this).
        assert!(c.iter().all(|&x| x == c[0]) && c[0] > 1.0);
        assert!(a.iter().zip(&c).all(|(&x, &z)| x == 2.0 + 3.0 * z));
        let line = MachineSpeed {
            threads: 2,
            copy_1: 10.0,
            copy_all: 12.5,
            triad_1: 11.0,
            triad_all: 13.0,
            gflops_1: 50.0,
            gflops_all: 99.0,
        }
        .describe();
        assert!(line.contains("copy 10.0 / 12.5 GB/s") && line.contains("1 / 2 threads"));
    }
}
