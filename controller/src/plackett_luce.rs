//! Ordered top-K selection: Gumbel-Top-K sampling, the Plackett-Luce (PL) log-probability of an
//! ordered set, and the single-step softmax entropy.
//!
//! The PL probability of an ordered selection `a_1..a_K` from softmax probabilities `p` is
//! `prod_j p(a_j) / (1 - sum_{l<j} p(a_l))`; Gumbel-Top-K (add i.i.d. Gumbel(0,1) noise to the
//! logits and take the K largest, in order) samples exactly from it.
//!
//! Two evaluations of that product ([`PlForm`]):
//!
//! * [`PlForm::Clamped`] (default; the reference's `_compute_topk_log_prob`, MemSkill cda41f3):
//!   `p = softmax(z)`, then for each position `log(max(p_a, 1e-8)) - log(max(rem, 1e-8))` with
//!   `rem` starting at 1 and updated as `rem = max(rem - max(p_a, 1e-8), 1e-8)`.
//! * [`PlForm::Exact`] (opt-in deviation): the remainder is computed as the probability mass of
//!   the skills not yet chosen, `log(rem) = logsumexp(remaining logits) - logsumexp(all)`, so
//!   each term is `z_{a_j} - logsumexp_{i not chosen before j} z_i`. It equals the clamped form
//!   whenever no clamp binds (every chosen `p_a >= 1e-8` and every remainder `>= 1e-8`), but it
//!   cannot cancel to 0 in `f32`; once `p(a_1) > 1 - 1e-8` the clamped form replaces the second
//!   pick's conditional-softmax gradient by a wrong one. [`PL_EPS`] only floors the remainder of
//!   the f64 version against `log(0)`.

use burn::tensor::{
    activation::{log_softmax, softmax},
    Bool, Int, Tensor,
};
use rand::Rng;

/// Floor of the PL remainder in the exact f64 version (guards `log(0)` only).
pub const PL_EPS: f64 = 1e-300;

/// The clamp of the reference's formula (probabilities and remainders, 1e-8).
pub const PL_CLAMP: f64 = 1e-8;

/// Which Plackett-Luce evaluation the controller uses (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum PlForm {
    /// The reference's cumulative-probability formula with its 1e-8 clamps.
    #[default]
    Clamped,
    /// Log-sum-exp over the not-yet-chosen skills, no clamp (deviation, opt-in).
    Exact,
}

/// The reference's formula in `f64` (a single action: plain `log p_a`, as its K = 1 branch):
/// `sum_j log(max(p_{a_j}, 1e-8)) - log(max(rem_j, 1e-8))`,
/// `rem_0 = 1`, `rem_{j+1} = max(rem_j - max(p_{a_j}, 1e-8), 1e-8)`. Out-of-range indices are
/// skipped.
pub fn pl_log_prob_clamped_f64(logits: &[f64], actions: &[usize]) -> f64 {
    if let [a] = actions {
        // K = 1: the reference takes Categorical(logits).log_prob, no clamp.
        return log_softmax_f64(logits).get(*a).copied().unwrap_or(0.0);
    }
    let p = softmax_f64(logits);
    let mut total = 0.0f64;
    let mut rem = 1.0f64;
    for &a in actions {
        let Some(&pa) = p.get(a) else { continue };
        let pa = pa.max(PL_CLAMP);
        total += pa.ln() - rem.max(PL_CLAMP).ln();
        rem = (rem - pa).max(PL_CLAMP);
    }
    total
}

/// `softmax` as the reference evaluates it, `exp(z - max) / sum exp(z - max)` (the cumulative
/// remainders of the clamped formula are sensitive to how the probabilities are rounded).
pub fn softmax_f64(logits: &[f64]) -> Vec<f64> {
    let m = logits.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let e: Vec<f64> = logits.iter().map(|l| (l - m).exp()).collect();
    let s: f64 = e.iter().sum();
    e.iter().map(|x| x / s).collect()
}

/// The PL log-probability under `form`.
pub fn pl_log_prob_form_f64(form: PlForm, logits: &[f64], actions: &[usize]) -> f64 {
    match form {
        PlForm::Clamped => pl_log_prob_clamped_f64(logits, actions),
        PlForm::Exact => pl_log_prob_f64(logits, actions),
    }
}

/// The reference's top-K diagnostics (`_compute_topk_stats`): with `s` the softmax
/// probabilities of the chosen skills and `m = sum s`: the entropy of
/// `max(s / max(m, 1e-8), 1e-8)`, the mass `m`, and the binary entropy of
/// `clamp(m, 1e-8, 1 - 1e-8)`. Returns `(topk_entropy, topk_mass, topk_bin_entropy)`.
pub fn topk_stats_f64(logits: &[f64], actions: &[usize]) -> (f64, f64, f64) {
    let p = softmax_f64(logits);
    let sel: Vec<f64> = actions.iter().filter_map(|&a| p.get(a).copied()).collect();
    let mass: f64 = sel.iter().sum();
    let safe = mass.max(PL_CLAMP);
    let ent = -sel
        .iter()
        .map(|s| {
            let q = (s / safe).max(PL_CLAMP);
            q * q.ln()
        })
        .sum::<f64>();
    let m = mass.clamp(PL_CLAMP, 1.0 - PL_CLAMP);
    let bin = -(m * m.ln() + (1.0 - m) * (1.0 - m).ln());
    (ent, mass, bin)
}

/// Value used for logits of padded (non-existent) skills.
pub const MASKED_LOGIT: f32 = -1.0e9;

/// Numerically stable log-softmax in `f64`.
pub fn log_softmax_f64(logits: &[f64]) -> Vec<f64> {
    if logits.is_empty() {
        return Vec::new();
    }
    let m = logits.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let lse = m + logits.iter().map(|l| (l - m).exp()).sum::<f64>().ln();
    logits.iter().map(|l| l - lse).collect()
}

/// Plackett-Luce log-probability of the ordered selection `actions` under `softmax(logits)`:
/// `sum_j [log p(a_j) - log(1 - sum_{l<j} p(a_l))]`, with the remainder computed as the mass
/// of the not-yet-chosen skills (see the module docs).
///
/// Indices must be distinct and in range (callers validate; out-of-range indices are skipped).
pub fn pl_log_prob_f64(logits: &[f64], actions: &[usize]) -> f64 {
    let lp = log_softmax_f64(logits);
    let mut chosen = vec![false; lp.len()];
    let mut total = 0.0f64;
    for &a in actions {
        let Some(&l) = lp.get(a) else { continue };
        let rem = logsumexp_f64(lp.iter().zip(&chosen).filter(|(_, &c)| !c).map(|(x, _)| *x));
        total += l - rem.max(PL_EPS.ln());
        chosen[a] = true;
    }
    total
}

fn logsumexp_f64(xs: impl Iterator<Item = f64> + Clone) -> f64 {
    let m = xs.clone().fold(f64::NEG_INFINITY, f64::max);
    if !m.is_finite() {
        return m;
    }
    m + xs.map(|x| (x - m).exp()).sum::<f64>().ln()
}

/// Entropy of the single-step softmax `-sum_i p_i log p_i` (nats).
pub fn entropy_f64(logits: &[f64]) -> f64 {
    log_softmax_f64(logits)
        .iter()
        .map(|&l| if l.is_finite() { -l.exp() * l } else { 0.0 })
        .sum()
}

/// Indices of the `k` largest values, in descending order (ties: lower index first).
pub fn top_k(values: &[f32], k: usize) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..values.len()).collect();
    idx.sort_by(|&a, &b| {
        values[b]
            .partial_cmp(&values[a])
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.cmp(&b))
    });
    idx.truncate(k.min(values.len()));
    idx
}

/// Draws one standard Gumbel variate `-ln(-ln u)`, `u` uniform in the open interval (0, 1).
fn gumbel<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    // random::<f64>() is in [0, 1); map 0 to the smallest positive value.
    let u: f64 = rng.random::<f64>().max(f64::MIN_POSITIVE);
    -(-u.ln()).ln()
}

/// Samples an ordered top-`k` subset without replacement from `softmax(logits)` with the
/// Gumbel-Top-K trick (`k` is clamped to `logits.len()`).
pub fn gumbel_top_k<R: Rng + ?Sized>(logits: &[f32], k: usize, rng: &mut R) -> Vec<usize> {
    let perturbed: Vec<f32> = logits
        .iter()
        .map(|&l| (l as f64 + gumbel(rng)) as f32)
        .collect();
    top_k(&perturbed, k)
}

/// Host-side mask `[B, K, N]` (row-major) for [`pl_log_prob_tensor`]: `remaining[b][j][i]` is
/// true when skill `i < n_real[b]` was not chosen at positions `< j` of row `b`.
pub fn pl_remaining_mask(
    actions: &[Vec<usize>],
    n_real: &[usize],
    k: usize,
    n: usize,
) -> Vec<bool> {
    let b = actions.len();
    let mut m = vec![false; b * k * n];
    for r in 0..b {
        let nr = n_real.get(r).copied().unwrap_or(n).min(n);
        let mut chosen = vec![false; n];
        for j in 0..k {
            for i in 0..nr {
                m[(r * k + j) * n + i] = !chosen[i];
            }
            if let Some(&a) = actions[r].get(j) {
                if a < n {
                    chosen[a] = true;
                }
            }
        }
    }
    m
}

/// Batched PL log-probability as a burn tensor expression (differentiable).
///
/// * `logits`: `[B, N]` (padded skills may hold anything; `remaining` excludes them);
/// * `actions`: `[B, K]` skill indices (padding entries any valid index, e.g. 0);
/// * `action_mask`: `[B, K]` true for real actions;
/// * `remaining`: `[B, K, N]` from [`pl_remaining_mask`].
///
/// Returns `[B]`, `sum_j [z_{a_j} - logsumexp_{i remaining at j} z_i]`, the same quantity as
/// [`pl_log_prob_f64`].
pub fn pl_log_prob_tensor(
    logits: Tensor<2>,
    actions: Tensor<2, Int>,
    action_mask: Tensor<2, Bool>,
    remaining: Tensor<3, Bool>,
) -> Tensor<1> {
    let [b, k] = actions.dims();
    let n = logits.dims()[1];
    let sel = logits.clone().gather(1, actions); // [B, K]
    let x = logits
        .reshape([b, 1, n])
        .expand([b, k, n])
        .mask_fill(remaining.bool_not(), MASKED_LOGIT);
    let m = x.clone().max_dim(2).detach(); // [B, K, 1]
    let lse = (x - m.clone()).exp().sum_dim(2).log() + m; // [B, K, 1]
    let terms = (sel - lse.reshape([b, k])).mask_fill(action_mask.bool_not(), 0.0);
    terms.sum_dim(1).squeeze_dim::<1>(1)
}

/// Batched PL log-probability with the reference's clamped formula (differentiable), same
/// arguments as [`pl_log_prob_tensor`] without the remaining mask (padded skills must hold
/// [`MASKED_LOGIT`] so their probability is 0). Returns `[B]`.
pub fn pl_log_prob_clamped_tensor(
    logits: Tensor<2>,
    actions: Tensor<2, Int>,
    action_mask: Tensor<2, Bool>,
) -> Tensor<1> {
    let [b, k] = actions.dims();
    if k == 1 {
        // K = 1: the reference takes Categorical(logits).log_prob, no clamp.
        return log_softmax(logits, 1)
            .gather(1, actions)
            .mask_fill(action_mask.bool_not(), 0.0)
            .reshape([b]);
    }
    let probs = softmax(logits, 1);
    let sel = probs.gather(1, actions); // [B, K]
    let eps = PL_CLAMP as f32;
    let mut total = sel.zeros_like().narrow(1, 0, 1); // [B, 1]
    let mut rem = total.ones_like();
    for j in 0..k {
        let p = sel.clone().narrow(1, j, 1).clamp_min(eps);
        let real = action_mask.clone().narrow(1, j, 1);
        let term =
            (p.clone().log() - rem.clone().clamp_min(eps).log()).mask_fill(real.bool_not(), 0.0);
        total = total + term;
        rem = (rem - p).clamp_min(eps);
    }
    total.reshape([b])
}

/// Batched single-step entropy `[B]` of `softmax(logits)` over the real skills (`skill_mask`
/// `[B, N]` true for real skills).
pub fn entropy_tensor(logits: Tensor<2>, skill_mask: Tensor<2, Bool>) -> Tensor<1> {
    let logp = log_softmax(logits, 1).mask_fill(skill_mask.clone().bool_not(), 0.0);
    let p = logp.clone().exp().mask_fill(skill_mask.bool_not(), 0.0);
    (p * logp).sum_dim(1).squeeze_dim::<1>(1).neg()
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::tensor::{Device, TensorData};
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;
    use std::collections::HashMap;

    /// Every ordered K-subset (permutations of K distinct indices out of n).
    fn ordered_subsets(n: usize, k: usize) -> Vec<Vec<usize>> {
        fn rec(n: usize, k: usize, cur: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
            if cur.len() == k {
                out.push(cur.clone());
                return;
            }
            for i in 0..n {
                if !cur.contains(&i) {
                    cur.push(i);
                    rec(n, k, cur, out);
                    cur.pop();
                }
            }
        }
        let mut out = Vec::new();
        rec(n, k, &mut Vec::new(), &mut out);
        out
    }

    const LOGITS5: [f64; 5] = [1.2, -0.3, 0.5, 2.0, -1.1];

    #[test]
    fn pl_probabilities_sum_to_one_for_every_k() {
        for k in 1..=5 {
            let subsets = ordered_subsets(5, k);
            let total: f64 = subsets
                .iter()
                .map(|s| pl_log_prob_f64(&LOGITS5, s).exp())
                .sum();
            assert!((total - 1.0).abs() < 1e-6, "k={k}: sum {total}");
        }
    }

    #[test]
    fn pl_k1_is_softmax_and_order_matters() {
        let lp = log_softmax_f64(&LOGITS5);
        for (i, l) in lp.iter().enumerate() {
            assert!((pl_log_prob_f64(&LOGITS5, &[i]) - l).abs() < 1e-12);
        }
        let a = pl_log_prob_f64(&LOGITS5, &[3, 0]);
        let b = pl_log_prob_f64(&LOGITS5, &[0, 3]);
        assert!((a - b).abs() > 1e-3, "ordered probabilities must differ");
    }

    #[test]
    fn gumbel_top_k_frequencies_match_plackett_luce() {
        let logits32: Vec<f32> = LOGITS5.iter().map(|&x| x as f32).collect();
        let logits64: Vec<f64> = logits32.iter().map(|&x| x as f64).collect();
        let k = 2;
        let draws = 200_000usize;
        let mut rng = ChaCha8Rng::seed_from_u64(12345);
        let mut counts: HashMap<Vec<usize>, usize> = HashMap::new();
        for _ in 0..draws {
            *counts
                .entry(gumbel_top_k(&logits32, k, &mut rng))
                .or_default() += 1;
        }
        let subsets = ordered_subsets(5, k);
        let mut chi2 = 0.0;
        for s in &subsets {
            let expected = pl_log_prob_f64(&logits64, s).exp() * draws as f64;
            let observed = *counts.get(s).unwrap_or(&0) as f64;
            chi2 += (observed - expected).powi(2) / expected;
        }
        // 20 cells -> 19 degrees of freedom; the 0.999 quantile of chi2(19) is 43.82.
        assert!(chi2 < 43.82, "chi-square {chi2} too large");
        // A wrong sampler (uniform over subsets) must fail the same test.
        let mut chi2_bad = 0.0;
        for s in &subsets {
            let expected = pl_log_prob_f64(&logits64, s).exp() * draws as f64;
            let observed = draws as f64 / subsets.len() as f64;
            chi2_bad += (observed - expected).powi(2) / expected;
        }
        assert!(chi2_bad > 43.82);
    }

    /// The reference's clamped formula: equal to the exact one while no clamp binds, different
    /// (log 1e-8 floors) once a chosen probability or a remainder falls below 1e-8; K = 1 is the
    /// plain log-softmax (the reference's Categorical branch).
    #[test]
    fn clamped_form_equals_exact_until_a_clamp_binds() {
        for k in 1..=5 {
            for s in ordered_subsets(5, k).iter().take(40) {
                let a = pl_log_prob_clamped_f64(&LOGITS5, s);
                let b = pl_log_prob_f64(&LOGITS5, s);
                assert!((a - b).abs() < 1e-12, "{s:?}: {a} vs {b}");
            }
        }
        let degenerate = [30.0f64, 0.0, -1.0, 2.0];
        // p(1) ~ 9e-14 < 1e-8: the reference floors log p at log 1e-8 for the second pick...
        let clamped = pl_log_prob_clamped_f64(&degenerate, &[0, 1]);
        let exact = pl_log_prob_f64(&degenerate, &[0, 1]);
        assert!((clamped - exact).abs() > 1.0, "{clamped} vs {exact}");
        // ...but not for a single pick.
        assert_eq!(
            pl_log_prob_clamped_f64(&degenerate, &[1]),
            log_softmax_f64(&degenerate)[1]
        );
    }

    #[test]
    fn clamped_tensor_agrees_with_f64() {
        let dev = Device::flex();
        let logits = vec![
            vec![1.2f32, -0.3, 0.5, 2.0, -1.1],
            vec![0.3f32, 0.1, -0.2],
            vec![5.0f32, -5.0, 0.0, 1.0],
        ];
        for actions in [
            vec![vec![3, 0, 2], vec![2, 0], vec![0]],
            vec![vec![3], vec![1], vec![2]],
        ] {
            let (l, a, m, _) = tensor_inputs(&dev, &logits, &actions);
            let got = pl_log_prob_clamped_tensor(l, a, m)
                .into_data()
                .try_to_vec::<f32>()
                .unwrap();
            for i in 0..3 {
                let l64: Vec<f64> = logits[i].iter().map(|&x| x as f64).collect();
                let want = pl_log_prob_clamped_f64(&l64, &actions[i]);
                assert!(
                    (got[i] as f64 - want).abs() < 1e-4,
                    "row {i}: {} vs {want}",
                    got[i]
                );
            }
        }
    }

    #[test]
    fn top_k_is_descending_and_clamped() {
        assert_eq!(top_k(&[0.1, 3.0, -1.0, 2.0], 2), vec![1, 3]);
        assert_eq!(top_k(&[0.1, 3.0], 5), vec![1, 0]);
        assert!(top_k(&[], 3).is_empty());
    }

    #[test]
    fn entropy_of_uniform_is_ln_n() {
        assert!((entropy_f64(&[0.0; 6]) - 6f64.ln()).abs() < 1e-12);
        assert!(entropy_f64(&[50.0, 0.0, 0.0]) < 1e-12);
    }

    fn tensor_inputs(
        dev: &Device,
        logits: &[Vec<f32>],
        actions: &[Vec<usize>],
    ) -> (Tensor<2>, Tensor<2, Int>, Tensor<2, Bool>, Tensor<3, Bool>) {
        let b = logits.len();
        let n = logits.iter().map(|l| l.len()).max().unwrap();
        let k = actions.iter().map(|a| a.len()).max().unwrap();
        let mut lg = vec![MASKED_LOGIT; b * n];
        let mut ac = vec![0i64; b * k];
        let mut am = vec![false; b * k];
        for i in 0..b {
            for (j, &v) in logits[i].iter().enumerate() {
                lg[i * n + j] = v;
            }
            for (j, &a) in actions[i].iter().enumerate() {
                ac[i * k + j] = a as i64;
                am[i * k + j] = true;
            }
        }
        (
            Tensor::<2>::from_data(TensorData::new(lg, [b, n]), dev),
            Tensor::<2, Int>::from_data(TensorData::new(ac, [b, k]), dev),
            Tensor::<2, Bool>::from_data(TensorData::new(am, [b, k]), dev),
            Tensor::<3, Bool>::from_data(
                TensorData::new(
                    pl_remaining_mask(
                        actions,
                        &logits.iter().map(|l| l.len()).collect::<Vec<_>>(),
                        k,
                        n,
                    ),
                    [b, k, n],
                ),
                dev,
            ),
        )
    }

    #[test]
    fn tensor_log_prob_agrees_with_f64_including_padding() {
        let dev = Device::flex();
        let logits = vec![
            vec![1.2f32, -0.3, 0.5, 2.0, -1.1],
            vec![0.3f32, 0.1, -0.2],
            vec![5.0f32, -5.0, 0.0, 1.0],
        ];
        let actions = vec![vec![3, 0, 2], vec![2, 0], vec![0]];
        let (l, a, m, r) = tensor_inputs(&dev, &logits, &actions);
        let got = pl_log_prob_tensor(l.clone(), a, m, r)
            .into_data()
            .try_to_vec::<f32>()
            .unwrap();
        for i in 0..3 {
            let l64: Vec<f64> = logits[i].iter().map(|&x| x as f64).collect();
            let want = pl_log_prob_f64(&l64, &actions[i]);
            assert!(
                (got[i] as f64 - want).abs() < 1e-4,
                "row {i}: {} vs {want}",
                got[i]
            );
        }
        let n = 5;
        let mut mask = vec![false; 3 * n];
        for i in 0..3 {
            for j in 0..logits[i].len() {
                mask[i * n + j] = true;
            }
        }
        let mask = Tensor::<2, Bool>::from_data(TensorData::new(mask, [3, n]), &dev);
        let ent = entropy_tensor(l, mask)
            .into_data()
            .try_to_vec::<f32>()
            .unwrap();
        for i in 0..3 {
            let l64: Vec<f64> = logits[i].iter().map(|&x| x as f64).collect();
            assert!((ent[i] as f64 - entropy_f64(&l64)).abs() < 1e-4);
        }
    }

    /// When the first pick is nearly certain (p > 1 - 1e-9) the second pick's gradient must still
    /// be the conditional softmax gradient (1 - q_b for b, -q_c for the others, 0 for a).
    #[test]
    fn second_pick_gradient_survives_a_confident_first_pick() {
        let dev = Device::flex().autodiff();
        let base = vec![25.0f32, 1.0, 0.0, -1.0];
        let (l, a, m, r) = tensor_inputs(&dev, std::slice::from_ref(&base), &[vec![0, 2]]);
        let l = l.require_grad();
        let g = l
            .grad(&pl_log_prob_tensor(l.clone(), a, m, r).sum().backward())
            .unwrap()
            .into_data()
            .try_to_vec::<f32>()
            .unwrap();
        let rest: Vec<f64> = base[1..].iter().map(|&x| x as f64).collect();
        let q: Vec<f64> = log_softmax_f64(&rest).iter().map(|x| x.exp()).collect();
        // position 0 contributes (1 - p0) ~ 0 to logit 0 and -p_i ~ 0 to the others.
        assert!(g[0].abs() < 1e-4, "{g:?}");
        assert!((g[1] as f64 + q[0]).abs() < 1e-4, "{g:?} vs q {q:?}");
        assert!(
            (g[2] as f64 - (1.0 - q[1])).abs() < 1e-4,
            "{g:?} vs q {q:?}"
        );
        assert!((g[3] as f64 + q[2]).abs() < 1e-4, "{g:?} vs q {q:?}");
    }

    #[test]
    fn log_prob_gradient_matches_finite_differences() {
        let dev = Device::flex().autodiff();
        let base = vec![0.7f32, -0.4, 1.3, 0.2, -0.9];
        let actions = vec![2usize, 0, 4];
        let (l, a, m, r) = tensor_inputs(
            &dev,
            std::slice::from_ref(&base),
            std::slice::from_ref(&actions),
        );
        let l = l.require_grad();
        let lp = pl_log_prob_tensor(l.clone(), a, m, r).sum();
        let grads = lp.backward();
        let g = l
            .grad(&grads)
            .expect("gradient")
            .into_data()
            .try_to_vec::<f32>()
            .unwrap();
        let h = 1e-5;
        for i in 0..base.len() {
            let mut plus: Vec<f64> = base.iter().map(|&x| x as f64).collect();
            let mut minus = plus.clone();
            plus[i] += h;
            minus[i] -= h;
            let fd =
                (pl_log_prob_f64(&plus, &actions) - pl_log_prob_f64(&minus, &actions)) / (2.0 * h);
            assert!(
                (g[i] as f64 - fd).abs() < 1e-3,
                "d/dlogit[{i}]: autodiff {} vs finite difference {fd}",
                g[i]
            );
        }
        // The gradient is not trivially zero.
        assert!(g.iter().any(|x| x.abs() > 0.05));
    }
}
