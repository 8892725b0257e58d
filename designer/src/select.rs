//! Choosing the hard cases shown to the designer: dedupe, KMeans over question
//! embeddings, the hardest few per cluster, then the hardest rest (as the reference's
//! `Designer.prepare_analysis_cases`; its KMeans is scikit-learn's, ours linfa's, so the
//! labels themselves may differ: the selection given the labels is the same).

use std::collections::{HashMap, HashSet};

use linfa::prelude::*;
use linfa::DatasetBase;
use linfa_clustering::KMeans;
use ndarray::Array2;
use rand_xoshiro::rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256Plus;
use serde::{Deserialize, Serialize};

use crate::pool::HardCase;

/// Selection settings (reference values by default: `--designer-num-clusters 5`,
/// `--designer-samples-per-cluster 3`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SelectConfig {
    /// Upper bound on the number of clusters (k = min(clusters, n)); with at most this many
    /// unique cases every case is its own cluster.
    pub clusters: usize,
    /// Cases taken from each cluster.
    pub per_cluster: usize,
    /// Total cases selected: the cluster picks, filled up to this with the hardest remaining
    /// ones. 0 = `clusters * per_cluster` (the reference's target).
    pub max_total: usize,
}

impl Default for SelectConfig {
    fn default() -> Self {
        Self {
            clusters: 5,
            per_cluster: 3,
            max_total: 0,
        }
    }
}

impl SelectConfig {
    /// The number of cases a selection aims for.
    pub fn target(&self) -> usize {
        if self.max_total == 0 {
            self.clusters * self.per_cluster
        } else {
            self.max_total
        }
    }
}

/// The dedupe key of a question: surrounding whitespace trimmed, lower-cased.
fn question_key(q: &str) -> String {
    q.trim().to_lowercase()
}

/// Indices of the unique cases by question (trimmed, case-insensitive), in order of each
/// question's first appearance; of duplicates the one with the most failures is kept (the
/// earliest among equals), as the reference's `filter_and_deduplicate`.
pub fn dedupe(cases: &[HardCase]) -> Vec<usize> {
    let mut pos: HashMap<String, usize> = HashMap::new();
    let mut out: Vec<usize> = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        let key = question_key(&c.question);
        match pos.get(&key) {
            Some(&p) => {
                if c.fail_count > cases[out[p]].fail_count {
                    out[p] = i;
                }
            }
            None => {
                pos.insert(key, out.len());
                out.push(i);
            }
        }
    }
    out
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
        .n_runs(10)
        .max_n_iterations(300)
        .tolerance(1e-4)
        .fit(&dataset)
        .ok()?;
    let labels = model.predict(&data);
    Some(labels.to_vec())
}

/// Selection given the cluster labels of the unique cases (pure; the reference's
/// `sample_cases_for_analysis`). `uniq` are indices into `cases` (from [`dedupe`]);
/// `labels[j]` is the cluster of `uniq[j]`, or `None` when every case is its own cluster.
///
/// Clusters are visited in order of their first member; each contributes its
/// `per_cluster` hardest cases by [`HardCase::difficulty`] (a stable sort: equals keep their
/// order). When fewer than [`SelectConfig::target`] were picked, the hardest remaining cases
/// (stable, in cluster order) fill up to it. Returns indices into `cases`, in selection order.
pub fn select_with_labels(
    cases: &[HardCase],
    uniq: &[usize],
    labels: Option<&[usize]>,
    cfg: &SelectConfig,
) -> Vec<usize> {
    let mut clusters: Vec<(usize, Vec<usize>)> = Vec::new();
    for (j, &i) in uniq.iter().enumerate() {
        let label = labels.map_or(j, |l| l.get(j).copied().unwrap_or(0));
        match clusters.iter_mut().find(|(l, _)| *l == label) {
            Some((_, members)) => members.push(i),
            None => clusters.push((label, vec![i])),
        }
    }
    let by_difficulty = |v: &mut Vec<usize>| {
        v.sort_by(|&a, &b| cases[b].difficulty().total_cmp(&cases[a].difficulty()));
    };
    let target = cfg.target();
    let mut chosen: Vec<usize> = Vec::new();
    for (_, members) in &clusters {
        let mut sorted = members.clone();
        by_difficulty(&mut sorted);
        for &i in sorted.iter().take(cfg.per_cluster) {
            if cfg.max_total == 0 || chosen.len() < cfg.max_total {
                chosen.push(i);
            }
        }
    }
    if chosen.len() < target {
        let taken: HashSet<String> = chosen.iter().map(|&i| cases[i].id()).collect();
        let mut rest: Vec<usize> = clusters
            .iter()
            .flat_map(|(_, m)| m.iter().copied())
            .filter(|&i| !taken.contains(&cases[i].id()))
            .collect();
        by_difficulty(&mut rest);
        let room = target - chosen.len();
        chosen.extend(rest.into_iter().take(room));
    }
    chosen
}

/// Select the hard cases for one designer stage (the reference's `prepare_analysis_cases`).
///
/// `question_embs[i]` is the embedding of `cases[i].question`. Questions are deduplicated
/// ([`dedupe`]); with more unique cases than `clusters` they are clustered with seeded
/// KMeans (k = `clusters`), otherwise every case is its own cluster; then
/// [`select_with_labels`]. When the embeddings do not match the cases (count or dimension),
/// all cases form one cluster.
pub fn select_hard_cases(
    cases: &[HardCase],
    question_embs: &[Vec<f32>],
    seed: u64,
    cfg: &SelectConfig,
) -> Vec<HardCase> {
    let uniq = dedupe(cases);
    let n = uniq.len();
    if n == 0 || cfg.target() == 0 {
        return Vec::new();
    }
    let labels = if n <= cfg.clusters {
        None
    } else {
        let k = cfg.clusters.max(1);
        Some(
            if question_embs.len() == cases.len() {
                let rows: Vec<&[f32]> = uniq.iter().map(|&i| question_embs[i].as_slice()).collect();
                kmeans_labels(&rows, k, seed)
            } else {
                None
            }
            .unwrap_or_else(|| vec![0; n]),
        )
    };
    select_with_labels(cases, &uniq, labels.as_deref(), cfg)
        .into_iter()
        .map(|i| cases[i].clone())
        .collect()
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
        assert_eq!(SelectConfig::default().target(), 15);
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
        b.question = "  when did ann MOVE? ".into();
        b.fail_count = 3;
        // Inner whitespace is not collapsed (the reference only strips and lower-cases).
        let mut c = case("x3", 0.0, 0);
        c.question = "when did  ann move?".into();
        c.fail_count = 9;
        let cases = vec![a, b, c];
        let embs = vec![vec![1.0, 0.0]; 3];
        let got = select_hard_cases(&cases, &embs, 0, &SelectConfig::default());
        let ids: Vec<&str> = got.iter().map(|c| c.query_id.as_str()).collect();
        // Few cases: each its own cluster, in first-appearance order; the duplicate with
        // more failures takes the first one's place.
        assert_eq!(ids, ["x2", "x3"]);
        assert_eq!(dedupe(&cases), [1, 2]);
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
