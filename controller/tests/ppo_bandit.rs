//! PPO on a synthetic contextual bandit: the state says which 2 of 6 skills pay (15 possible
//! pairs); K = 2; reward = fraction of the paying pair chosen. The policy must reach >= 90%
//! optimal selections within a few hundred updates (600 max; with the orthogonal init seeds 1-15
//! all reached it in 49-123 updates). Seeds 1 and 2 by default; `MEMSKILL_SLOW=1` runs seeds 1-5;
//! `BANDIT_SEEDS=a,b,..` picks seeds. Every seed runs and the failures are reported together.
//!
//! Plackett-Luce: the reference's clamped form (the reproduction default; `BANDIT_PL=exact` for
//! the opt-in exact form; both reach 90% on seeds 1-3 in 54-59 updates). Init: the opt-in
//! orthogonal init (`BANDIT_INIT=torch-default` for the reference's PyTorch default init, with
//! which this bandit learns much more slowly: seed 1 reached 90% after 497 updates with the
//! exact form, seed 2 not within 600; the larger initial actor-output weights start from a
//! peaked policy). This test is about the PPO machinery, so it keeps the init it was sized for.

use memskill_controller::{
    Controller, PlForm, PolicyConfig, PolicyInit, PpoConfig, SelectMode, Transition,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;

const D: usize = 8;

fn pairs() -> Vec<(usize, usize)> {
    let mut v = Vec::new();
    for a in 0..6 {
        for b in (a + 1)..6 {
            v.push((a, b));
        }
    }
    v
}

fn state_for(p: usize) -> Vec<f32> {
    let mut s = vec![0.0f32; 2 * D];
    s[p] = 1.0;
    s
}

/// Number of the 15 states where greedy top-2 is exactly the paying pair.
fn greedy_optimal(c: &Controller, skills: &[Vec<f32>], ps: &[(usize, usize)]) -> usize {
    (0..ps.len())
        .filter(|&p| {
            let s = c
                .select(&state_for(p), skills, 2, None, SelectMode::Greedy)
                .unwrap();
            let (a, b) = ps[p];
            s.skills.contains(&a) && s.skills.contains(&b)
        })
        .count()
}

/// Returns the update at which the sampled optimal rate (mean over the last 5 batches of 64)
/// first reached 0.9, or None. Reward: 1 when both paying skills are chosen, else 0 (partial
/// credit with BANDIT_PARTIAL=1). Test config: lr 1e-3, entropy 0.1 (env BANDIT_LR/ENT/KL).
fn run(seed: u64, max_updates: usize) -> Option<usize> {
    let skills: Arc<Vec<Vec<f32>>> = Arc::new(
        (0..6)
            .map(|i| {
                let mut e = vec![0.0f32; D];
                e[i] = 1.0;
                e
            })
            .collect(),
    );
    let ppo = PpoConfig {
        lr: std::env::var("BANDIT_LR")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(1e-3),
        ppo_epochs: 4,
        minibatch_size: 32,
        entropy_coef: std::env::var("BANDIT_ENT")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0.1),
        target_kl: std::env::var("BANDIT_KL")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0.02),
        plackett_luce: match std::env::var("BANDIT_PL").as_deref() {
            Ok("exact") => PlForm::Exact,
            _ => PlForm::Clamped,
        },
        ..PpoConfig::default()
    };
    let policy = PolicyConfig {
        hidden: std::env::var("BANDIT_HIDDEN")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(64),
        device: memskill_controller::PolicyDevice::Cpu,
        init: match std::env::var("BANDIT_INIT").as_deref() {
            Ok("torch-default") => PolicyInit::TorchDefault,
            _ => PolicyInit::Orthogonal,
        },
    };
    let batch: usize = std::env::var("BANDIT_BATCH")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(64);
    let mut c = Controller::new(D, &policy, &ppo, seed).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(seed + 1000);
    let ps = pairs();
    let mut recent: Vec<f32> = Vec::new();
    for u in 0..max_updates {
        let mut episodes = Vec::new();
        let mut optimal = 0usize;
        for _ in 0..batch {
            let p = rng.random_range(0..ps.len());
            let state = state_for(p);
            let s = c
                .select(&state, &skills, 2, None, SelectMode::Sample(&mut rng))
                .unwrap();
            let (a, b) = ps[p];
            let hits = s.skills.iter().filter(|&&k| k == a || k == b).count();
            if hits == 2 {
                optimal += 1;
            }
            let reward = if std::env::var("BANDIT_PARTIAL").is_ok() {
                hits as f32 / 2.0
            } else if hits == 2 {
                1.0
            } else {
                0.0
            };
            episodes.push(vec![Transition::from_selection(
                state,
                skills.clone(),
                s,
                reward,
            )]);
        }
        recent.push(optimal as f32 / batch as f32);
        let st = c.update(&episodes).unwrap();
        if std::env::var("BANDIT_DEBUG").is_ok() && u % 25 == 0 {
            let g = greedy_optimal(&c, &skills, &ps);
            eprintln!(
                "u {u} opt {:.2} greedy {g}/15 ent {:.3} kl {:.4} epochs {}",
                optimal as f32 / batch as f32,
                st.entropy,
                st.approx_kl,
                st.epochs_run
            );
        }
        let window = &recent[recent.len().saturating_sub(5)..];
        if window.len() == 5 && window.iter().sum::<f32>() / 5.0 >= 0.9 {
            eprintln!(
                "seed {seed}: greedy optimal on {}/15 states",
                greedy_optimal(&c, &skills, &ps)
            );
            return Some(u + 1);
        }
    }
    if std::env::var("BANDIT_DEBUG").is_ok() {
        for (p, &(a, b)) in ps.iter().enumerate() {
            let pr = c.skill_probs(&state_for(p), &skills).unwrap();
            let pr: Vec<String> = pr.iter().map(|x| format!("{x:.3}")).collect();
            eprintln!("state {p} pays ({a},{b}) probs [{}]", pr.join(" "));
        }
    }
    eprintln!(
        "seed {seed}: last sampled optimal rates {:?}",
        &recent[recent.len().saturating_sub(5)..]
    );
    None
}

#[test]
fn ppo_learns_contextual_bandit() {
    let slow = std::env::var("MEMSKILL_SLOW").is_ok_and(|v| v == "1");
    let seeds: Vec<u64> = if let Ok(v) = std::env::var("BANDIT_SEEDS") {
        v.split(',').filter_map(|x| x.trim().parse().ok()).collect()
    } else if slow {
        vec![1, 2, 3, 4, 5]
    } else {
        vec![1, 2]
    };
    let mut failed = Vec::new();
    for seed in seeds {
        let t = std::time::Instant::now();
        let max = std::env::var("BANDIT_MAX")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(600);
        let reached = run(seed, max);
        eprintln!(
            "seed {seed}: reached 90% optimal at update {reached:?} in {:.1}s",
            t.elapsed().as_secs_f32()
        );
        if reached.is_none() {
            failed.push(seed);
        }
    }
    assert!(
        failed.is_empty(),
        "seeds {failed:?} did not reach 90% optimal sampled selections"
    );
}
