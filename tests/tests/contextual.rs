//! The contextual synthetic task (issue 15, item 5): spans of three kinds, each needing its
//! own skill. The learned controller must pick the matching skill per span — its reading of
//! the text (encoder -> state -> actor) is what is tested — and beat
//! `controller.policy = "random"` in the same harness (same spans, answerer and scorer).
//!
//! What this task found (issue 15). The per-kind failures seen earlier (1, 2 or 3 kinds
//! right, which ones changing from run to run; 12/12, 0/12, 0/12 at seed 3) were not the
//! actor's architecture nor a bug in the task or the state, but PPO settings under which the
//! policy collapsed before it had tried each kind's skill:
//! - the states are separable: with the hashing encoder at dim 256 the mean cosine between
//!   spans of one kind is 0.69-0.82 and between kinds 0.47-0.55 (they share the
//!   "DATE: ... [ctx-k-j] Alex said" header); with one span per sample no memory is retrieved,
//!   so the state is the span alone;
//! - the reward separates the choices: the kind's skill earns 1 + 0.1 (process reward), gist
//!   and mood 0.1, another kind's skill -0.1 (its executor NOOPs);
//! - the reference's additive actor, trained by our PPO directly on these states and rewards
//!   (a bandit without executor or answerer), learns all three kinds within ~40 updates when
//!   it does not collapse first;
//! - with `ppo.lr = 0.003` (the earlier setting, 30x the reference's 1e-4), advantages
//!   normalised over each batch and entropy 0.01, the softmax saturated within ~20 updates
//!   (entropy 1.6 -> 0.002 nats in the seed-3 run, every kind then on track-dates, F1 0.33).
//!   A kind whose own skill's probability reaches ~0 is never sampled again: the critic learns
//!   the wrong choice's value, its advantage falls to 0 and the entropy bonus's gradient
//!   vanishes at saturation, so it stays wrong. The kinds share most state features, so one
//!   kind's update can drag another's choice away (on the bandit below a kind at 12/12 fell
//!   to 0/12 while the others trained), and normalising the advantages of a batch of 12
//!   one-span episodes whose rewards the critic mostly predicts divides by a small spread,
//!   which blows critic error up to unit-size advantages.
//!
//! On that bandit (100 updates, greedy choice on all 36 spans; the seeds in which every kind
//! reached at least 90%): lr 0.003 as before 3 of 8 seeds; lr 0.001 10 of 12; lr 0.001
//! without advantage normalisation 11 of 12; lr 0.001, no normalisation, entropy 0.05 11 of
//! 12. A bilinear
//! state-skill term added to the actor's logits did not help (lr 0.003: 6 of 12; lr 0.001: 10
//! of 12), so the actor stays the reference's.
//!
//! This test therefore trains with [`PPO`]: `ppo.lr = 0.001`, `ppo.normalize_advantages =
//! false`, `ppo.entropy_coef = 0.05` (existing keys; the reproduction defaults are untouched)
//! and asserts >= 90% on every kind. In this full harness (hashing encoder, 100 updates)
//! seeds 1-10 all passed: seeds 4 and 10 with one kind at 11/12, every other kind 12/12,
//! learned F1 0.97-1.0 against 0.11-0.22 for random skills. With the earlier settings seeds 1,
//! 3 and 4 failed (event/location/preference 12/0/12, 12/0/0, 0/12/0; seed 4's reward per
//! outer epoch rose to 0.70 and fell back to 0.36) and seed 2 passed. With MiniLM
//! (`MEMSKILL_CONTEXTUAL_MINILM=1`, about 35 s a seed in the debug profile) and the same
//! settings seeds 1, 2 and 3 got 12/12 on every kind. `MEMSKILL_CONTEXTUAL_SEEDS=1,2,3` runs
//! more seeds; `MEMSKILL_CONTEXTUAL_SETS="k=v;k=v"` overrides settings (the earlier ones:
//! `ppo.lr=0.003;ppo.normalize_advantages=true;ppo.entropy_coef=0.01`).
//!
//! The checkpoint-free baselines run in the same harness and the report lists all five:
//! no-memory scores lowest (0: nothing to answer from); raw-rag stores the spans verbatim,
//! which this task's answerer cannot use (it needs the written memory); static-skills
//! applies every skill to every span. An executor that followed any number of instructions
//! perfectly would make static-skills score 1.0 here (it did, before the capacity below): the
//! task would then only show the cost (five skill instructions per call) that a learned
//! K = 1 selection avoids. Real executors follow long instruction lists less reliably, which
//! is why MemSkill selects K skills at all; the scripted executor models that with
//! `executor.scripted_capacity = 2`: it follows only the first two skills its prompt lists.
//! With K = 1 that never binds (the learned controller and random skills are unaffected);
//! static-skills, listing all five in a random order, then writes the right memory only when
//! the kind's skill is among the first two, and the learned controller must beat it.

use std::collections::BTreeMap;
use std::sync::Mutex;

use memskill_trainer::baselines::{evaluate_baseline, Baseline, BaselineOptions};
use memskill_trainer::checkpoint::{pointer, Checkpoint};
use memskill_trainer::config::Config;
use memskill_trainer::episode::build_memory;
use memskill_trainer::eval::{eval_ctx, evaluate, EvalOptions, EvalPolicy};
use memskill_trainer::report::{collect, Report};
use memskill_trainer::runtime::Runtime;
use memskill_trainer::synthetic::contextual::{span_kinds, Kind};
use memskill_trainer::train::{train, TrainOptions};

fn cfg(name: &str, seed: u64, extra: &[String]) -> Config {
    let mut sets: Vec<String> = [
        format!("run.name=\"{name}\""),
        format!("run.seed={seed}"),
        "run.batch_size=12".into(),
        "run.outer_epochs=4".into(),
        "run.inner_epochs=25".into(),
        "data.dataset=\"synthetic\"".into(),
        "data.synthetic_task=\"contextual\"".into(),
        "data.synthetic_samples=36".into(),
        "data.synthetic_spans=1".into(),
        "controller.top_k=1".into(),
        "eval.top_k=1".into(),
        "controller.retrieve=3".into(),
        "answer.retrieve=6".into(),
        "executor.backend=\"scripted-synthetic\"".into(),
        // the scripted executor follows at most two of the skills its prompt lists (see
        // the module docs); with K = 1 this never binds, applying every skill does
        "executor.scripted_capacity=2".into(),
        "designer.enabled=false".into(),
        "concurrency.episodes=3".into(),
    ]
    .to_vec();
    sets.extend(extra.iter().cloned());
    Config::from_toml_str("", &sets, "test").expect("test config resolves")
}

/// The PPO settings under which the controller learns every kind (see the module docs); the
/// reproduction defaults are lr 1e-4, normalised advantages, entropy 0.01.
const PPO: &[&str] = &[
    "ppo.lr=0.001",
    "ppo.normalize_advantages=false",
    "ppo.entropy_coef=0.05",
];

/// Seed 3, or the seeds of `MEMSKILL_CONTEXTUAL_SEEDS=a,b,..`.
fn seeds() -> Vec<u64> {
    std::env::var("MEMSKILL_CONTEXTUAL_SEEDS")
        .ok()
        .map(|s| {
            s.split(',')
                .map(|x| x.trim().parse().expect("MEMSKILL_CONTEXTUAL_SEEDS: a,b,.."))
                .collect()
        })
        .unwrap_or_else(|| vec![3])
}

/// `encoder`, then [`PPO`], then the `k=v;k=v` of `MEMSKILL_CONTEXTUAL_SETS` (later wins).
fn sets(encoder: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = encoder.iter().chain(PPO).map(|s| s.to_string()).collect();
    if let Ok(extra) = std::env::var("MEMSKILL_CONTEXTUAL_SETS") {
        v.extend(extra.split(';').filter(|s| !s.is_empty()).map(String::from));
    }
    v
}

#[test]
fn learned_controller_picks_each_kinds_skill_and_beats_random_skills() {
    let sets = sets(&["encoder.kind=\"hashing\"", "encoder.dim=256"]);
    for seed in seeds() {
        learns_every_kind(seed, &sets);
    }
}

#[test]
fn with_minilm_learned_controller_picks_each_kinds_skill() {
    if std::env::var("MEMSKILL_CONTEXTUAL_MINILM").is_err() {
        eprintln!("skipped: set MEMSKILL_CONTEXTUAL_MINILM=1 (slow; see the module docs)");
        return;
    }
    if !memskill_controller::default_minilm_dir()
        .join("model.safetensors")
        .exists()
    {
        panic!("MiniLM missing; run scripts/fetch-assets.sh");
    }
    let sets = sets(&["encoder.kind=\"minilm\""]);
    for seed in seeds() {
        learns_every_kind(seed, &sets);
    }
}

fn learns_every_kind(seed: u64, sets: &[String]) {
    let d = tempfile::tempdir().unwrap();
    let c = cfg("ctx", seed, sets);
    let out = train(
        &c,
        &TrainOptions {
            runs_dir: d.path().to_path_buf(),
            progress: false,
            ..Default::default()
        },
    )
    .unwrap();
    eprintln!("mean reward per outer epoch: {:?}", out.outer_rewards);

    // Per-kind accuracy of the learned controller's top-1 choice, on every span of every
    // sample, through the evaluation path (its own memories feed its states).
    let ck = Checkpoint::load(&pointer(&out.run_dir, "latest").unwrap().unwrap()).unwrap();
    let samples = memskill_trainer::synthetic::contextual::dataset(36, 1, seed);
    let rt = Runtime::build(&c, d.path(), samples.clone(), false).unwrap();
    let mut policy = EvalPolicy::load(&c, &rt, &ck).unwrap();
    let skills = policy.skills.clone();
    let embs = policy.skill_embs.clone();
    let lock = Mutex::new(&mut policy.controller);
    let ctx = eval_ctx(&c, &rt, &lock, &skills, embs);
    let mut hits: BTreeMap<Kind, (usize, usize)> = BTreeMap::new();
    for s in &samples {
        let built = build_memory(&ctx, s, None).unwrap();
        for (kind, chosen) in span_kinds(s).into_iter().zip(&built.chosen) {
            let e = hits.entry(kind).or_default();
            e.1 += 1;
            if skills[chosen[0]].name == kind.skill() {
                e.0 += 1;
            } else if std::env::var("MEMSKILL_DEBUG_CTX").is_ok() {
                eprintln!("{:?} -> {}", kind, skills[chosen[0]].name);
            }
        }
    }
    for (kind, (ok, n)) in &hits {
        eprintln!("seed {seed} {}: {ok}/{n}", kind.name());
    }
    assert_eq!(hits.len(), 3);
    for (kind, (ok, n)) in &hits {
        assert!(
            *ok as f64 >= 0.9 * *n as f64,
            "seed {seed}: {} spans got their skill {ok}/{n} times (< 90%)",
            kind.name()
        );
    }

    // The same evaluation harness: learned vs random skills vs no memory at all.
    let eval = |method: &str, sets: &[&str]| {
        let (r, _) = evaluate(&EvalOptions {
            checkpoint: out.run_dir.clone(),
            method: Some(method.into()),
            out: Some(out.run_dir.join("eval").join(method)),
            no_judge: true,
            sets: sets.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        })
        .unwrap();
        r.overall.f1.unwrap()
    };
    let learned = eval("learned", &[]);
    let random = eval("random", &["controller.policy=\"random\""]);
    // checkpoint-free baselines in the same harness
    let base = |b: Baseline| {
        let (r, _) = evaluate_baseline(
            b,
            &c,
            &BaselineOptions {
                runs_dir: d.path().to_path_buf(),
                no_judge: true,
                ..Default::default()
            },
        )
        .unwrap();
        r.overall.f1.unwrap()
    };
    let no_memory = base(Baseline::NoMemory);
    let raw = base(Baseline::RawRag);
    let fixed = base(Baseline::StaticSkills);
    eprintln!(
        "F1: learned {learned:.3}, random {random:.3}, no-memory {no_memory:.3}, raw-rag {raw:.3}, static-skills (all skills on every span, executor capacity 2) {fixed:.3}"
    );
    assert!(
        learned > random + 0.2,
        "learned {learned} vs random {random}"
    );
    assert!(
        learned > fixed + 0.2,
        "learned {learned} vs static-skills {fixed}"
    );
    assert!(
        no_memory <= random && no_memory <= raw && no_memory < learned,
        "no-memory {no_memory} is not the lowest"
    );
    // one report over all of them, every cell with its interval
    let (entries, skills, failed) =
        collect(&[out.run_dir.clone(), d.path().join("baselines")]).unwrap();
    assert_eq!((entries.len(), failed.len()), (5, 0));
    let rep = Report::build(&entries, skills);
    rep.write(&d.path().join("report")).unwrap();
    let md = std::fs::read_to_string(d.path().join("report").join("report.md")).unwrap();
    // one executor model: named in Table 1's note, not in every row
    for m in ["learned", "random", "no-memory", "raw-rag", "static-skills"] {
        assert!(md.contains(&format!("| {m} |")), "{m} missing:\n{md}");
    }
    assert!(md.contains("F1 0.00 [0.00, 0.00]"), "{md}");
}
