//! Loading the configured samples: dataset, split, cuts, span segmentation.

use std::collections::{BTreeMap, HashSet};

use anyhow::{bail, Context, Result};
use memskill_core::{Query, Sample};
use memskill_datasets::{
    DatasetKind, HotpotOptions, LmeOptions, LoadOptions, LocomoOptions, LocomoSplits, SpanMode,
    SplitSpec,
};

use crate::registry::Splits;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

use crate::config::{DataConfig, Dataset, SyntheticTask};

/// Parse a span mode string with the config field in the error.
pub fn span_mode(s: &str, field: &str) -> Result<SpanMode> {
    s.parse::<SpanMode>()
        .map_err(|e| anyhow::anyhow!("{field} = {s:?}: {e}"))
}

/// `data.max_file_mb` and the regular-file check, before a data file is read.
fn check_size(cfg: &DataConfig, path: &std::path::Path, key: &str) -> Result<()> {
    memskill_datasets::check_data_file(path, cfg.max_file_mb.saturating_mul(1 << 20))
        .with_context(|| key.to_string())?;
    Ok(())
}

/// Load, split, cut and segment the samples of `split`: the one way the trainer and the CLI
/// read a configured dataset (ALFWorld has no samples: its episodes are pairs of games).
pub fn load_samples(
    cfg: &DataConfig,
    split: SplitSpec,
    mode: &SpanMode,
    seed: u64,
) -> Result<Vec<Sample>> {
    let mut samples = match cfg.dataset {
        Dataset::Synthetic => {
            let all = match cfg.synthetic_task {
                SyntheticTask::Contextual => crate::synthetic::contextual::dataset(
                    cfg.synthetic_samples,
                    cfg.synthetic_spans,
                    seed,
                ),
                SyntheticTask::Facts => {
                    crate::synthetic::dataset(cfg.synthetic_samples, cfg.synthetic_spans, seed)
                }
            };
            // Synthetic spans are built by hand (one per fact); the split is ignored.
            return Ok(cut(all, cfg));
        }
        Dataset::Alfworld => {
            bail!("data.dataset = \"alfworld\" has no samples (its episodes are pairs of games)")
        }
        Dataset::Qa(kind) => load_qa(cfg, kind, split)?,
    };
    samples = cut(samples, cfg);
    for s in &mut samples {
        memskill_datasets::segment(s, mode);
    }
    samples.retain(|s| !s.spans.is_empty() && !s.queries.is_empty());
    if samples.is_empty() {
        bail!(
            "data: no samples with spans and queries left in split {:?} of {}",
            split.as_str(),
            cfg.path
        );
    }
    Ok(samples)
}

/// A QA benchmark's samples of `split` (spans not cut yet), through
/// `memskill_datasets::load`, split the way its descriptor says.
fn load_qa(cfg: &DataConfig, kind: DatasetKind, split: SplitSpec) -> Result<Vec<Sample>> {
    let bench = cfg.dataset.descriptor();
    let path = &crate::config::resolve_data_path(&cfg.path);
    check_size(cfg, path, "data.path")?;
    let only = match bench.splits {
        Splits::File { .. } => split_entries(cfg, split)?,
        Splits::ByIndex | Splits::Whole | Splits::NotFile => None,
    };
    let opts = LoadOptions {
        locomo: LocomoOptions {
            include_adversarial: cfg.include_adversarial,
        },
        longmemeval: LmeOptions {
            only,
            include_abstention: cfg.include_abstention,
        },
        hotpotqa: HotpotOptions {
            split_documents: cfg.hotpotqa_split_documents,
        },
    };
    let all = memskill_datasets::load(kind, path, &opts)
        .with_context(|| format!("data.path: loading {} from {}", bench.title, path.display()))?;
    Ok(match bench.splits {
        Splits::ByIndex => memskill_datasets::split_locomo(all, split, &LocomoSplits::default())
            .with_context(|| format!("data.split {:?}", split.as_str()))?,
        // split by its splits file (above), or not split at all
        Splits::File { .. } | Splits::Whole | Splits::NotFile => all,
    })
}

/// The splits file of `cfg`'s benchmark: `data.splits_path`, else the descriptor's default
/// under the data cache (LongMemEval: the reference's `longmemeval/longmemeval_s_splits.json`,
/// train 297 / val 98 / test 105 question indices). None when the benchmark has no splits file.
pub fn splits_path(cfg: &DataConfig) -> Option<std::path::PathBuf> {
    let Splits::File { default } = cfg.dataset.descriptor().splits else {
        return None;
    };
    Some(match &cfg.splits_path {
        Some(p) => crate::config::resolve_data_path(&p.to_string_lossy()),
        None => crate::config::resolve_data_path(default),
    })
}

/// The entries of split `split` in the splits file (`None` for `all`, or when the benchmark
/// has no splits file). As the reference, a split other than `all` is read from the splits
/// file; a missing file or split is an error (never a silent fall-back to every question).
pub fn split_entries(cfg: &DataConfig, split: SplitSpec) -> Result<Option<Vec<String>>> {
    let Some(path) = splits_path(cfg).filter(|_| split != SplitSpec::All) else {
        return Ok(None);
    };
    let split = split.as_str();
    if !path.exists() {
        let bench = cfg.dataset.descriptor();
        bail!(
            "data.splits_path: {} split {split:?} needs the splits file, not found at {} \
             ({} gets it; or use split \"all\")",
            bench.title,
            path.display(),
            bench.fetch
        );
    }
    check_size(cfg, &path, "data.splits_path")?;
    let mut splits = memskill_datasets::load_lme_splits(&path)
        .with_context(|| format!("data.splits_path {}", path.display()))?;
    match splits.remove(split) {
        Some(v) => Ok(Some(v)),
        None => {
            let mut known: Vec<String> = splits.into_keys().collect();
            known.sort();
            bail!(
                "data.splits_path {} has no split {split:?} (it has: {})",
                path.display(),
                known.join(", ")
            )
        }
    }
}

/// Apply `max_samples`, `max_sessions` (dropping queries whose evidence left with the
/// sessions) and `max_queries`.
pub fn cut(mut samples: Vec<Sample>, cfg: &DataConfig) -> Vec<Sample> {
    if cfg.max_samples > 0 {
        samples.truncate(cfg.max_samples);
    }
    for s in &mut samples {
        if cfg.max_sessions > 0 && s.sessions.len() > cfg.max_sessions {
            s.sessions.truncate(cfg.max_sessions);
            let kept: HashSet<&str> = s
                .sessions
                .iter()
                .flat_map(|x| x.turns.iter().map(|t| t.id.as_str()))
                .collect();
            let kept_sessions: HashSet<usize> = s.sessions.iter().map(|x| x.index).collect();
            s.spans
                .retain(|sp| sp.session.is_none_or(|i| kept_sessions.contains(&i)));
            s.queries.retain(|q| {
                !q.evidence.is_empty() && q.evidence.iter().all(|e| kept.contains(e.as_str()))
            });
        }
        if cfg.max_queries > 0 {
            s.queries.truncate(cfg.max_queries);
        }
    }
    samples
}

/// Sample of `ratio` of the queries, stratified by category as the reference's LoCoMo training
/// sampler (`--locomo-train-query-sampling-ratio`) does: `ceil(n * ratio)` queries in all (at
/// least one; all of them when `ratio >= 1` or there is at most one query), split over the
/// categories by [`category_quotas`]; which queries of a category are drawn comes from `rng`
/// (the reference draws with Python's `random`, so the chosen items differ, the counts do not).
/// Returned in original order.
pub fn stratified_queries<'a>(
    queries: &'a [Query],
    ratio: f64,
    rng: &mut ChaCha8Rng,
) -> Vec<&'a Query> {
    let n = queries.len();
    if ratio >= 1.0 || n <= 1 {
        return queries.iter().collect();
    }
    let target = ((n as f64 * ratio).ceil() as usize).clamp(1, n);
    if target >= n {
        return queries.iter().collect();
    }
    let mut by_cat: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, q) in queries.iter().enumerate() {
        by_cat.entry(q.category.as_str()).or_default().push(i);
    }
    let sizes: Vec<usize> = by_cat.values().map(Vec::len).collect();
    let quotas = category_quotas(&sizes, target);
    let mut keep = Vec::new();
    for ((_, mut idx), quota) in by_cat.into_iter().zip(quotas) {
        let quota = quota.min(idx.len());
        idx.shuffle(rng);
        keep.extend_from_slice(&idx[..quota]);
    }
    keep.sort_unstable();
    keep.into_iter().map(|i| &queries[i]).collect()
}

/// The reference's `_allocate_category_quotas`: how many of `target` queries each category
/// (sizes in category order) gets. Every category gets one; the rest is shared in proportion to
/// the sizes (floors first, then the largest fractional parts, ties to the larger category,
/// then the earlier one), never above a category's size; what is still missing then goes to
/// the largest categories. The total is `max(target, number of categories)`, capped by the
/// number of queries.
pub fn category_quotas(sizes: &[usize], target: usize) -> Vec<usize> {
    let total: usize = sizes.iter().sum();
    let k = sizes.len();
    if total == 0 || target == 0 || k == 0 {
        return vec![0; k];
    }
    let mut quotas = vec![1usize; k];
    let effective = target.max(k);
    let remaining = effective.saturating_sub(k);
    if remaining == 0 {
        return quotas;
    }
    let mut remainders: Vec<(f64, usize, usize)> = Vec::with_capacity(k);
    for (c, &size) in sizes.iter().enumerate() {
        let expected = remaining as f64 * (size as f64 / total as f64);
        let capacity = size.saturating_sub(quotas[c]);
        let floor = expected.floor();
        quotas[c] += capacity.min(floor as usize);
        remainders.push((expected - floor, size, c));
    }
    let mut remaining = effective.saturating_sub(quotas.iter().sum());
    if remaining == 0 {
        return quotas;
    }
    remainders.sort_by(|a, b| {
        b.0.partial_cmp(&a.0)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(b.1.cmp(&a.1))
            .then(a.2.cmp(&b.2))
    });
    for &(_, size, c) in &remainders {
        if remaining == 0 {
            break;
        }
        if quotas[c] >= size {
            continue;
        }
        quotas[c] += 1;
        remaining -= 1;
    }
    if remaining > 0 {
        let mut order: Vec<usize> = (0..k).collect();
        order.sort_by(|&a, &b| sizes[b].cmp(&sizes[a]).then(a.cmp(&b)));
        for c in order {
            while remaining > 0 && quotas[c] < sizes[c] {
                quotas[c] += 1;
                remaining -= 1;
            }
            if remaining == 0 {
                break;
            }
        }
    }
    quotas
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn stratified_keeps_every_category_and_order() {
        let qs: Vec<Query> = (0..20)
            .map(|i| Query {
                id: format!("q{i}"),
                question: String::new(),
                answers: vec![],
                category: if i < 4 { "a".into() } else { "b".into() },
                evidence: vec![],
                date: None,
            })
            .collect();
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let got = stratified_queries(&qs, 0.25, &mut rng);
        // ceil(20 * 0.25) = 5: one per category, then 3 more shared 4:16 -> 0.6 / 2.4, floors
        // 0 / 2, the larger fraction (a) gets the last one: a 2, b 3 (the reference's quotas).
        assert_eq!(got.iter().filter(|q| q.category == "a").count(), 2);
        assert_eq!(got.iter().filter(|q| q.category == "b").count(), 3);
        let ids: Vec<usize> = got.iter().map(|q| q.id[1..].parse().unwrap()).collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(stratified_queries(&qs, 1.0, &mut rng).len(), 20);
    }

    fn lme_cfg(splits_path: &str) -> DataConfig {
        let fx = concat!(env!("CARGO_MANIFEST_DIR"), "/../datasets/tests/fixtures/");
        DataConfig {
            dataset: Dataset::Qa(DatasetKind::LongMemEval),
            path: format!("{fx}longmemeval_small.json"),
            splits_path: (!splits_path.is_empty()).then(|| format!("{fx}{splits_path}").into()),
            ..Default::default()
        }
    }

    #[test]
    fn lme_split_is_honoured_or_an_error() {
        // The splits file's test indices [2, 0]: question 2 is `_abs` and skipped.
        let cfg = lme_cfg("longmemeval_splits_small.json");
        let mode = SpanMode::FullSession;
        let test = load_samples(&cfg, SplitSpec::Test, &mode, 0).unwrap();
        let ids: Vec<&str> = test.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, vec!["q-001"]);
        let with_abs = DataConfig {
            include_abstention: true,
            ..cfg.clone()
        };
        let ids: Vec<String> = load_samples(&with_abs, SplitSpec::Test, &mode, 0)
            .unwrap()
            .into_iter()
            .map(|s| s.id)
            .collect();
        assert_eq!(ids, vec!["q-003_abs", "q-001"]);
        assert_eq!(
            load_samples(&cfg, SplitSpec::All, &mode, 0).unwrap().len(),
            2
        );
        // A split the file lacks is an error naming the key and the splits present.
        let no_val = lme_cfg("longmemeval_splits_no_val.json");
        let e = format!("{:#}", split_entries(&no_val, SplitSpec::Val).unwrap_err());
        assert!(
            e.contains("data.splits_path") && e.contains("no split \"val\""),
            "{e}"
        );
        // A missing splits file is an error, never a fall-back to every question.
        let missing = lme_cfg("no_such_splits.json");
        let e = format!(
            "{:#}",
            load_samples(&missing, SplitSpec::Test, &mode, 0).unwrap_err()
        );
        assert!(
            e.contains("data.splits_path") && e.contains("not found"),
            "{e}"
        );
        // Without data.splits_path the reference's file in the data cache is used.
        assert!(splits_path(&lme_cfg(""))
            .unwrap()
            .ends_with("longmemeval/longmemeval_s_splits.json"));
        assert!(!matches!(
            split_entries(&lme_cfg(""), SplitSpec::Test),
            Ok(None)
        ));
        // a benchmark without a splits file reads none, whatever data.splits_path says
        let locomo = DataConfig {
            dataset: Dataset::Qa(DatasetKind::Locomo),
            ..lme_cfg("no_such_splits.json")
        };
        assert_eq!(splits_path(&locomo), None);
        assert!(matches!(split_entries(&locomo, SplitSpec::Test), Ok(None)));
    }

    #[test]
    fn quotas_follow_the_reference() {
        assert_eq!(category_quotas(&[4, 16], 5), vec![2, 3]);
        assert_eq!(category_quotas(&[1, 1, 10], 2), vec![1, 1, 1]);
        assert_eq!(category_quotas(&[3, 3], 6), vec![3, 3]);
        assert_eq!(category_quotas(&[], 3), Vec::<usize>::new());
        assert_eq!(category_quotas(&[2, 5], 0), vec![0, 0]);
        assert_eq!(category_quotas(&[1, 2, 30], 8).iter().sum::<usize>(), 8);
    }

    #[test]
    fn cutting_sessions_drops_their_queries() {
        let cfg = DataConfig {
            max_sessions: 2,
            ..Default::default()
        };
        let s = crate::synthetic::dataset(1, 4, 0);
        let c = cut(s, &cfg);
        assert_eq!(c[0].sessions.len(), 2);
        assert_eq!(c[0].spans.len(), 2);
        assert_eq!(c[0].queries.len(), 2);
    }
}
