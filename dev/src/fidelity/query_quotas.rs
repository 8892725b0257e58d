//! `query_quotas`: how many queries per category a training episode answers for a sampling
//! ratio (`data.query_ratio`), against the reference's LoCoMo sampler
//! (`sample_train_qa_list` + `_allocate_category_quotas`; fixture from
//! `scripts/fidelity/gen_query_quotas.py`). Ours: `trainer::data::stratified_queries` on
//! queries of categories "1", "2", ... with the given sizes; the per-category counts are
//! compared (which items are drawn comes from each side's own RNG).

use super::{f64s, Outcome};
use anyhow::Context;
use memskill_core::Query;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde_json::Value;

pub fn check(input: &Value, expected: &Value, _tol: f64) -> anyhow::Result<Outcome> {
    let sizes: Vec<usize> = f64s(input.get("sizes").unwrap_or(&Value::Null), "input.sizes")?
        .into_iter()
        .map(|x| x as usize)
        .collect();
    let ratio = input
        .get("ratio")
        .and_then(Value::as_f64)
        .context("input.ratio: expected a number")?;
    let mut queries = Vec::new();
    for (c, &n) in sizes.iter().enumerate() {
        for j in 0..n {
            queries.push(Query {
                id: format!("q{c}-{j}"),
                question: String::new(),
                answers: vec![],
                category: (c + 1).to_string(),
                evidence: vec![],
                date: None,
            });
        }
    }
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    let got = memskill_trainer::data::stratified_queries(&queries, ratio, &mut rng);
    let ours: Vec<f64> = (0..sizes.len())
        .map(|c| {
            let cat = (c + 1).to_string();
            got.iter().filter(|q| q.category == cat).count() as f64
        })
        .collect();
    let theirs = f64s(
        expected.get("quotas").unwrap_or(&Value::Null),
        "expected.quotas",
    )?;
    Ok(Outcome::numbers(&ours, &theirs, 0.0))
}
