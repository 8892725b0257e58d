//! Chain-of-Notes, ReadAgent and MemoryBank as Table 1 rows, against a local
//! OpenAI-compatible server (the scripted synthetic oracle behind `scripted_server`, on
//! 127.0.0.1): each reads the synthetic facts through all of its steps; a failed call of
//! any step is counted, never scored; MemoryBank's forgetting curve takes memories away
//! as the paper's formula says, reproducibly.

use std::net::TcpListener;
use std::sync::Arc;

use memskill_trainer::baselines::{evaluate_baseline, Baseline, BaselineOptions};
use memskill_trainer::config::Config;
use memskill_trainer::eval::EvalResults;
use memskill_trainer::scripted_server::{FaultPlan, ScriptedServer};
use memskill_trainer::synthetic;

const SAMPLES: usize = 3;
const SPANS: usize = 6;
const SEED: u64 = 5;

fn server(plan: FaultPlan) -> ScriptedServer {
    let oracle = synthetic::SyntheticOracle::new(synthetic::dataset(SAMPLES, SPANS, SEED), 0);
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    ScriptedServer::start(l, Arc::new(oracle), plan).unwrap()
}

/// Both the executor (memory building) and the answerer (notes, look-ups, answers) behind
/// `url`, without retries.
fn cfg(url: &str, extra: &[&str]) -> Config {
    let mut sets: Vec<String> = vec![
        format!("run.seed={SEED}"),
        "data.dataset=\"synthetic\"".into(),
        format!("data.synthetic_samples={SAMPLES}"),
        format!("data.synthetic_spans={SPANS}"),
        "eval.split=\"all\"".into(),
        "encoder.kind=\"hashing\"".into(),
        "encoder.dim=64".into(),
        "answer.retrieve=3".into(),
        "eval.judge=false".into(),
        "executor.backend=\"openai\"".into(),
        format!("executor.base_urls=[\"{url}\"]"),
        "executor.model=\"scripted\"".into(),
        "executor.max_retries=0".into(),
        "answer.llm.backend=\"openai\"".into(),
        format!("answer.llm.base_urls=[\"{url}\"]"),
        "answer.llm.model=\"scripted\"".into(),
        "answer.llm.max_retries=0".into(),
    ];
    sets.extend(extra.iter().map(|s| s.to_string()));
    Config::from_toml_str("", &sets, "test").expect("test config resolves")
}

fn run(b: Baseline, plan: FaultPlan, extra: &[&str]) -> EvalResults {
    let srv = server(plan);
    let d = tempfile::tempdir().unwrap();
    let opts = BaselineOptions {
        out: Some(d.path().join("out")),
        runs_dir: d.path().to_path_buf(),
        no_judge: true,
        ..Default::default()
    };
    evaluate_baseline(b, &cfg(&srv.base_url(), extra), &opts)
        .unwrap()
        .0
}

fn errors(r: &EvalResults) -> usize {
    r.queries.iter().filter(|q| q.error.is_some()).count()
}

#[test]
fn each_method_reads_the_facts_through_all_its_steps() {
    for b in [
        Baseline::ChainOfNotes,
        Baseline::ReadAgent,
        Baseline::MemoryBank,
    ] {
        let extra: &[&str] = match b {
            Baseline::MemoryBank => &["eval.memorybank_forgetting=\"off\""],
            _ => &[],
        };
        let r = run(b, FaultPlan::default(), extra);
        assert_eq!(r.queries.len(), SAMPLES * SPANS, "{}", b.name());
        assert_eq!((errors(&r), r.memory_call_errors), (0, 0), "{}", b.name());
        assert_eq!(r.overall.f1, Some(1.0), "{}: {:?}", b.name(), r.overall);
        match b {
            // notes are the answerer's: no memory-building call
            Baseline::ChainOfNotes => assert_eq!(r.memory_calls, 0),
            // page breaks and gists; MemoryBank two calls per day plus two
            Baseline::ReadAgent => assert!(r.memory_calls >= SAMPLES),
            _ => assert_eq!(r.memory_calls, SAMPLES * (2 * SPANS + 2)),
        }
        // Chain-of-Notes answers from its notes, not the passages
        if b == Baseline::ChainOfNotes {
            let q = &r.queries[0];
            assert!(
                q.retrieved
                    .iter()
                    .all(|m| m.starts_with("The code of locker")),
                "{:?}",
                q.retrieved
            );
        }
    }
}

#[test]
fn a_failed_step_is_counted_never_scored() {
    // every notes call fails: every question is an error, none is scored
    let r = run(
        Baseline::ChainOfNotes,
        FaultPlan {
            fail_matching: Some("NOTE: irrelevant".into()),
            ..Default::default()
        },
        &[],
    );
    assert_eq!(errors(&r), SAMPLES * SPANS);
    assert_eq!(
        (r.overall.f1, r.overall.errors),
        (None, SAMPLES * SPANS),
        "{:?}",
        r.overall
    );
    assert!(r.queries[0]
        .error
        .as_deref()
        .unwrap()
        .contains("notes call"));
    // every gist fails: counted as failed memory-building calls; each page keeps its text,
    // so the questions are still answered from it
    let r = run(
        Baseline::ReadAgent,
        FaultPlan {
            fail_matching: Some("Shorten this page".into()),
            ..Default::default()
        },
        &[],
    );
    assert!(r.memory_call_errors >= SAMPLES, "{}", r.memory_call_errors);
    assert!(r.memory_call_errors <= r.memory_calls);
    assert_eq!(errors(&r), 0);
    // every look-up fails: the questions are errors
    let r = run(
        Baseline::ReadAgent,
        FaultPlan {
            fail_matching: Some("Which pages would you re-read".into()),
            ..Default::default()
        },
        &[],
    );
    assert_eq!(errors(&r), SAMPLES * SPANS);
    assert!(r.queries[0]
        .error
        .as_deref()
        .unwrap()
        .contains("look-up call"));
}

#[test]
fn memorybank_forgets_by_the_curve_reproducibly() {
    let f1 = |curve: &str| {
        let set = format!("eval.memorybank_forgetting=\"{curve}\"");
        run(Baseline::MemoryBank, FaultPlan::default(), &[&set])
            .overall
            .f1
            .expect("questions were scored")
    };
    let (off, paper, code) = (f1("off"), f1("paper"), f1("code"));
    // the synthetic sessions are a day apart and the questions come after the last one:
    // the paper's exp(-t) keeps fewer of the older facts than the code's exp(-t/5)
    assert_eq!(off, 1.0);
    assert!(paper < code && code < off, "{paper} {code} {off}");
    assert_eq!(f1("paper"), paper, "the draws are seeded");
}
