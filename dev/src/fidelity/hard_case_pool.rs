//! Differential check: the hard-case pool (reference `CaseCollector.add_case` /
//! `_prune_failure_pool`). Input: pool settings and a sequence of scored queries
//! `[sample, query, step, score]`; expected: the pool's `[query id, fail count, step, score]`
//! in order, the query id spelt as the reference's `"s<sample>_q<query>"`.

use anyhow::{bail, Context};
use memskill_designer::{HardCase, HardCasePool, PoolConfig};
use serde_json::Value;

use super::Outcome;

fn num(v: &Value, what: &str) -> anyhow::Result<f64> {
    v.as_f64()
        .with_context(|| format!("{what}: expected a number"))
}

/// Our pool's contents for a fixture input, as `[query id, fail count, step, score]`.
pub fn run(input: &Value) -> anyhow::Result<Vec<(String, u32, u64, f64)>> {
    let cfg = PoolConfig {
        threshold: num(&input["threshold"], "input.threshold")?,
        window: num(&input["window"], "input.window")? as u64,
        max_size: num(&input["max_size"], "input.max_size")? as usize,
    };
    let mut pool = HardCasePool::new(cfg);
    let ops = input["ops"]
        .as_array()
        .context("input.ops: expected an array")?;
    for (i, op) in ops.iter().enumerate() {
        let o = op
            .as_array()
            .filter(|a| a.len() == 4)
            .with_context(|| format!("input.ops[{i}]: expected [sample, query, step, score]"))?;
        let s = num(&o[0], "sample")? as u64;
        let q = num(&o[1], "query")? as u64;
        pool.record(HardCase {
            query_id: format!("q{q}"),
            question: format!("question {q} of sample {s}"),
            gold: "gold".into(),
            category: String::new(),
            prediction: String::new(),
            score: num(&o[3], "score")?,
            retrieved: Vec::new(),
            sample_id: format!("s{s}"),
            step: num(&o[2], "step")? as u64,
            fail_count: 0,
            evidence: String::new(),
        });
    }
    Ok(pool
        .cases()
        .iter()
        .map(|c| {
            (
                format!("{}_{}", c.sample_id, c.query_id),
                c.fail_count,
                c.step,
                c.score,
            )
        })
        .collect())
}

pub fn check(input: &Value, expected: &Value, tol: f64) -> anyhow::Result<Outcome> {
    let ours = run(input)?;
    let theirs = expected
        .as_array()
        .context("expected: an array of pool entries")?;
    let mut t = Vec::new();
    for (i, e) in theirs.iter().enumerate() {
        let Some(a) = e.as_array().filter(|a| a.len() == 4) else {
            bail!("expected[{i}]: [query id, fail count, step, score]");
        };
        t.push((
            a[0].as_str().context("query id")?.to_string(),
            num(&a[1], "fail count")? as u32,
            num(&a[2], "step")? as u64,
            num(&a[3], "score")?,
        ));
    }
    let same_keys = ours.len() == t.len()
        && ours
            .iter()
            .zip(&t)
            .all(|(a, b)| a.0 == b.0 && a.1 == b.1 && a.2 == b.2);
    let scores = Outcome::numbers(
        &ours.iter().map(|x| x.3).collect::<Vec<_>>(),
        &t.iter().map(|x| x.3).collect::<Vec<_>>(),
        tol,
    );
    Ok(Outcome::exact(same_keys, || format!("ours {ours:?}\nreference {t:?}")).and(scores))
}
