//! Issue 43: training and evaluation write their memory banks into the registry's `memory`
//! table when `[registry] url` is set. A tiny synthetic run writes the banks of its last
//! update's episodes at each checkpoint (rows keyed by the episode's trajectory); an
//! evaluation of its checkpoint writes every evaluated sample's bank (keyed by the sample's
//! evaluation trajectory), with the uses the answers made of each memory; the same
//! evaluation written again adds no row. SQLite always, PostgreSQL where a server can be
//! started here.

use memskill_registry::{Db, Location};
use memskill_trainer::config::Config;
use memskill_trainer::eval::{evaluate, EvalOptions};
use memskill_trainer::train::{train, TrainOptions};

fn cfg(registry: &str) -> Config {
    let sets: Vec<String> = [
        "run.name=\"mem\"".to_string(),
        "run.outer_epochs=1".into(),
        "run.inner_epochs=2".into(),
        "run.batch_size=2".into(),
        "data.dataset=\"synthetic\"".into(),
        "data.synthetic_samples=6".into(),
        "data.synthetic_spans=3".into(),
        "encoder.kind=\"hashing\"".into(),
        "encoder.dim=32".into(),
        "controller.top_k=1".into(),
        "policy.hidden=16".into(),
        "executor.backend=\"scripted-synthetic\"".into(),
        format!("registry.url={registry:?}"),
    ]
    .to_vec();
    Config::from_toml_str("", &sets, "test").expect("test config resolves")
}

fn n(db: &mut Db, sql: &str) -> i64 {
    db.query(sql, &[]).unwrap()[0].int("n")
}

/// Train, then evaluate twice into one folder, checking the registry's memory rows.
fn story(registry: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let c = cfg(registry);
    let out = train(
        &c,
        &TrainOptions {
            runs_dir: tmp.path().to_path_buf(),
            progress: false,
            ..Default::default()
        },
    )
    .unwrap();
    let loc = Location::parse(registry);
    let mut db = memskill_registry::open_existing(&loc, true).unwrap();
    // training: the last update's two episodes, each bank under its trajectory
    let train_rows = n(
        &mut db,
        "SELECT COUNT(*) AS n FROM memory WHERE memory_id LIKE '%:train:%'",
    );
    assert!(train_rows > 0, "no training memory rows");
    let traces = n(
        &mut db,
        "SELECT COUNT(DISTINCT source_trace_ids) AS n FROM memory WHERE memory_id LIKE '%:train:%'",
    );
    // each checkpoint (one per update here) writes its update's scored episodes: two
    // updates of two episodes each
    assert!((2..=4).contains(&traces), "{traces} trajectories");
    // every memory's trajectory is one the registry has
    assert_eq!(
        n(
            &mut db,
            "SELECT COUNT(*) AS n FROM memory m WHERE NOT EXISTS (SELECT 1 FROM trajectory t
               WHERE m.memory_id LIKE t.trace_id || ':mem:%')"
        ),
        0
    );
    drop(db);

    let eval_out = tmp.path().join("eval");
    let o = EvalOptions {
        checkpoint: out.run_dir.clone(),
        out: Some(eval_out.clone()),
        no_judge: true,
        ..Default::default()
    };
    let (results, _) = evaluate(&o).unwrap();
    let samples: std::collections::BTreeSet<&str> = results
        .queries
        .iter()
        .map(|q| q.sample_id.as_str())
        .collect();
    let mut db = memskill_registry::open_existing(&loc, true).unwrap();
    let eval_rows = n(
        &mut db,
        "SELECT COUNT(*) AS n FROM memory WHERE memory_id LIKE '%:eval:%'",
    );
    assert!(eval_rows > 0, "no evaluation memory rows");
    assert_eq!(
        n(
            &mut db,
            "SELECT COUNT(DISTINCT sample_id) AS n FROM memory WHERE memory_id LIKE '%:eval:%'"
        ),
        samples.len() as i64
    );
    // the answers' uses: every question was given memories from its sample's bank
    let uses = n(
        &mut db,
        "SELECT CAST(COALESCE(SUM(use_count), 0) AS BIGINT) AS n FROM memory WHERE memory_id LIKE '%:eval:%'",
    );
    assert!(uses >= results.queries.len() as i64, "{uses} uses");
    assert_eq!(
        n(
            &mut db,
            "SELECT COUNT(*) AS n FROM memory WHERE memory_id LIKE '%:eval:%'
               AND use_count > 0 AND last_used_at IS NULL"
        ),
        0
    );
    drop(db);
    // the same evaluation again: the rows are updated in place, none added
    evaluate(&o).unwrap();
    let mut db = memskill_registry::open_existing(&loc, true).unwrap();
    assert_eq!(
        n(
            &mut db,
            "SELECT COUNT(*) AS n FROM memory WHERE memory_id LIKE '%:eval:%'"
        ),
        eval_rows
    );
}

#[test]
fn training_and_evaluation_write_their_memory_banks_into_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    story(&dir.path().join("registry.db").to_string_lossy());
}

#[test]
fn training_and_evaluation_write_their_memory_banks_into_postgres() {
    let Some(pg) = memskill_registry::testing::TempPostgres::start() else {
        return;
    };
    story(&pg.url);
}
