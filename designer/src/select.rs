//! Choosing the hard cases shown to the designer: dedupe, KMeans over question
//! embeddings, the hardest few per cluster, then the globally hardest rest.

use std::cmp::Ordering;
use std::collections::HashMap;

use linfa::prelude::*;
use linfa::DatasetBase;
use linfa_clustering::KMeans;
use ndarray::Array2;
use rand_xoshiro::rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256Plus;
use serde::{Deserialize, Serialize};

use crate::pool::HardCase;

/// Selection settings (reference values by default).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SelectConfig {
    /// Upper bound on the number of clusters (k = min(clusters, n)).
    pub clusters: usize,
    /// Cases taken from each cluster.
    pub per_cluster: usize,
    /// Total cases selected (filled with the globally hardest remaining ones).
    pub max_total: usize,
}

impl Default for SelectConfig {
    fn default() -> Self {
        Self {
            clusters: 5,
            per_cluster: 3,
            max_total: 15,
        }
    }
}

fn norm_question(q: &str) -> String {
    q.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// Total order "harder first": difficulty desc, fail_count desc, step desc, id asc, index asc.
fn harder(cases: &[HardCase], a: usize, b: usize) -> Ordering {
    let (x, y) = (&cases[a], &cases[b]);
    y.difficulty()
        .total_cmp(&x.difficulty())
        .then(y.fail_count.cmp(&x.fail_count))
        .then(y.step.cmp(&x.step))
        .then_with(|| x.id().cmp(&y.id()))
        .then(a.cmp(&b))
}

/// Cluster labels for `rows` (one per row) with seeded KMeans; `None` when the input
/// cannot be clustered (ragged or empty vectors), in which case callers treat all rows
/// as one cluster.
pub fn kmeans_labels(rows: &[&[f32]], k: usize, seed: u64) -> Option<Vec<usize>> {
    let n = rows.len();
    let dim = rows.first()?.len();
    if k == 0 || dim == 0 || rows.iter().any(|r| r.len() != dim) {
        return None;
    }
    if k == 1 {
        return Some(vec![0; n]);
    }
    let mut data = Array2::<f64>::zeros((n, dim));
    for (i, r) in rows.iter().enumerate() {
        for (j, &v) in r.iter().enumerate() {
            data[[i, j]] = if v.is_finite() { v as f64 } else { 0.0 };
        }
    }
    let dataset = DatasetBase::from(data.clone());
    let rng = Xoshiro256Plus::seed_from_u64(seed);
    let model = KMeans::params_with_rng(k, rng)
        .n_runs(4)
        .max_n_iterations(200)
        .tolerance(1e-6)
        .fit(&dataset)
        .ok()?;
    let labels = model.predict(&data);
    Some(labels.to_vec())
}

/// Select the hard cases for one designer stage.
///
/// `question_embs[i]` is the embedding of `cases[i].question`. Questions are deduplicated
/// (whitespace/case-insensitive; the hardest copy is kept), clustered with KMeans
/// (k = min(clusters, n), seeded), the `per_cluster` hardest of each cluster by
/// [`HardCase::difficulty`] are taken, then the selection is filled up to `max_total` with
/// the globally hardest remaining cases. Ties break deterministically (fail count, recency,
/// id). When the embeddings do not match the cases (count or dimension), all cases form
/// one cluster. Output: cluster picks (clusters ordered by their hardest member), then fills.
pub fn select_hard_cases(
    cases: &[HardCase],
    question_embs: &[Vec<f32>],
    seed: u64,
    cfg: &SelectConfig,
) -> Vec<HardCase> {
    // Dedupe by question: keep the hardest copy.
    let mut best: HashMap<String, usize> = HashMap::new();
    for i in 0..cases.len() {
        let key = norm_question(&cases[i].question);
        match best.get(&key) {
            Some(&j) if harder(cases, j, i) != Ordering::Greater => {}
            _ => {
                best.insert(key, i);
            }
        }
    }
    let mut uniq: Vec<usize> = best.into_values().collect();
    uniq.sort_unstable();
    let n = uniq.len();
    if n == 0 || cfg.max_total == 0 {
        return Vec::new();
    }
    let k = cfg.clusters.min(n).max(1);
    let labels = if question_embs.len() == cases.len() {
        let rows: Vec<&[f32]> = uniq.iter().map(|&i| question_embs[i].as_slice()).collect();
        kmeans_labels(&rows, k, seed)
    } else {
        None
    }
    .unwrap_or_else(|| vec![0; n]);

    let mut clusters: Vec<Vec<usize>> = vec![Vec::new(); labels.iter().max().map_or(1, |m| m + 1)];
    for (pos, &i) in uniq.iter().enumerate() {
        clusters[labels[pos]].push(i);
    }
    for c in clusters.iter_mut() {
        c.sort_by(|&a, &b| harder(cases, a, b));
    }
    clusters.retain(|c| !c.is_empty());
    clusters.sort_by(|a, b| harder(cases, a[0], b[0]));

    let mut chosen: Vec<usize> = Vec::new();
    let mut taken = vec![false; cases.len()];
    for c in &clusters {
        for &i in c.iter().take(cfg.per_cluster) {
            if chosen.len() < cfg.max_total {
                chosen.push(i);
                taken[i] = true;
            }
        }
    }
    let mut rest: Vec<usize> = uniq.iter().copied().filter(|&i| !taken[i]).collect();
    rest.sort_by(|&a, &b| harder(cases, a, b));
    for i in rest {
        if chosen.len() >= cfg.max_total {
            break;
        }
        chosen.push(i);
    }
    chosen.into_iter().map(|i| cases[i].clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pool::case;

    fn synthetic(n: usize) -> (Vec<HardCase>, Vec<Vec<f32>>) {
        let mut cases = Vec::new();
        let mut embs = Vec::new();
        for i in 0..n {
            let mut c = case(&format!("q{i:02}"), (i % 7) as f64 / 10.0, (i % 3) as u64);
            c.fail_count = 1 + (i % 4) as u32;
            c.question = format!("topic {} question {i}", i % 6);
            cases.push(c);
            // Six well-separated blobs with a little jitter.
            let g = (i % 6) as f32;
            embs.push(vec![
                g * 10.0 + (i as f32 * 0.37).sin(),
                (g * 3.0).cos() * 10.0,
                (i as f32 * 0.11).cos(),
            ]);
        }
        (cases, embs)
    }

    #[test]
    fn deterministic_for_a_seed() {
        let (cases, embs) = synthetic(60);
        let cfg = SelectConfig::default();
        let a = select_hard_cases(&cases, &embs, 7, &cfg);
        for _ in 0..3 {
            assert_eq!(a, select_hard_cases(&cases, &embs, 7, &cfg));
        }
        assert_eq!(a.len(), 15);
        let rows: Vec<&[f32]> = embs.iter().map(|e| e.as_slice()).collect();
        let l1 = kmeans_labels(&rows, 5, 3).unwrap();
        assert_eq!(l1, kmeans_labels(&rows, 5, 3).unwrap());
        assert_eq!(l1.len(), 60);
        assert!(l1.iter().all(|&l| l < 5));
    }

    #[test]
    fn per_cluster_top_then_global_fill() {
        // Two clusters far apart; cluster A holds all the hardest cases.
        let mut cases = Vec::new();
        let mut embs = Vec::new();
        for i in 0..10 {
            let mut c = case(&format!("a{i}"), 0.0, 0);
            c.question = format!("a {i}");
            c.fail_count = 10 + i; // hardest
            cases.push(c);
            embs.push(vec![0.0, 0.0 + i as f32 * 0.01]);
        }
        for i in 0..10 {
            let mut c = case(&format!("b{i}"), 0.4, 0);
            c.question = format!("b {i}");
            c.fail_count = 1 + i;
            cases.push(c);
            embs.push(vec![100.0, 100.0 + i as f32 * 0.01]);
        }
        let cfg = SelectConfig {
            clusters: 2,
            per_cluster: 3,
            max_total: 8,
        };
        let got: Vec<String> = select_hard_cases(&cases, &embs, 1, &cfg)
            .iter()
            .map(|c| c.query_id.clone())
            .collect();
        // Cluster A top 3, cluster B top 3, then the 2 hardest remaining (from A).
        assert_eq!(got, ["a9", "a8", "a7", "b9", "b8", "b7", "a6", "a5"]);
    }

    #[test]
    fn dedupes_questions_and_handles_small_or_bad_input() {
        let mut a = case("x1", 0.3, 0);
        a.question = "When did Ann move?".into();
        a.fail_count = 1;
        let mut b = case("x2", 0.0, 0);
        b.question = "  when did ann   MOVE? ".into();
        b.fail_count = 3;
        let cases = vec![a, b];
        let embs = vec![vec![1.0, 0.0], vec![1.0, 0.0]];
        let got = select_hard_cases(&cases, &embs, 0, &SelectConfig::default());
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].query_id, "x2", "keeps the harder duplicate");
        // Mismatched embeddings: falls back to one cluster, still returns the cases.
        let (cases, _) = synthetic(20);
        let got = select_hard_cases(&cases, &[vec![1.0]], 0, &SelectConfig::default());
        assert_eq!(got.len(), 15);
        assert!(select_hard_cases(&[], &[], 0, &SelectConfig::default()).is_empty());
        // Identical points and NaN embeddings do not panic.
        let (cases, _) = synthetic(8);
        let embs = vec![vec![f32::NAN, 1.0]; 8];
        assert_eq!(
            select_hard_cases(&cases, &embs, 0, &SelectConfig::default()).len(),
            8
        );
    }
}
