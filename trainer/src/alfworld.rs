//! ALFWorld in the loop: the environment (bridge pool, game index, expert trajectories), the
//! training episode (batch A builds memory, batch B plays with it) and the evaluation bank.
//!
//! A training episode, as in the reference: batch A = `pair_a_min..=pair_a_max` expert
//! trajectories of one task type packed into spans of at most `train_chunk_tokens` tokens ->
//! a fresh memory bank built by controller + executor (sampled skills); batch B =
//! `pair_b_size` other games played by the LLM actor with the top-`tips` memories retrieved by
//! the objective as procedural tips; reward = success rate of batch B. Games the environment
//! lost (bridge crash, timeout) and games whose actor calls all failed are not scored.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use anyhow::{bail, Context, Result};
use memskill_alfworld::{
    default_bridge_script, default_games_root, default_python, format_trajectory, read_cache,
    replay_into_cache, Actor, ActorSettings, ActorStats, BridgeConfig, BridgePool, Game, GameIndex,
    GameOutcome, GameResult, LlmActor, TaskType, TipSource, Trajectory,
};
use memskill_core::{Llm, MemoryBank, Sample, Span, TextEncoder};
use rand::seq::index::sample as sample_indices;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::config::AlfworldConfig;
use crate::episode::{build_memory, BuiltMemory, EpisodeCtx, EpisodeResult, QueryResult};

/// The gold "answer" of every game: the task is done.
pub const GAME_GOLD: &str = "SUCCESS";

/// Games root of the config (default: the cache).
pub fn games_root(a: &AlfworldConfig) -> PathBuf {
    a.games_root.clone().unwrap_or_else(default_games_root)
}

/// Bridge settings of the config.
pub fn bridge_config(a: &AlfworldConfig) -> BridgeConfig {
    BridgeConfig {
        python: a.python.clone().unwrap_or_else(default_python),
        script: a.bridge.clone().unwrap_or_else(default_bridge_script),
        workers: a.workers.max(1),
        timeout_secs: a.timeout_secs,
    }
}

/// Expert-trajectory cache of the config's training split.
pub fn trajectory_cache(a: &AlfworldConfig) -> PathBuf {
    a.trajectories.clone().unwrap_or_else(|| {
        memskill_alfworld::cache_dir()
            .join("alfworld")
            .join("trajectories")
            .join(format!("{}.jsonl", a.train_split))
    })
}

/// The games root and bridge settings of `a`, checked to exist; errors name the config key
/// and the setup script that fills what is missing.
pub fn check_setup(a: &AlfworldConfig) -> Result<(PathBuf, BridgeConfig)> {
    let root = games_root(a);
    if !root.exists() {
        bail!(
            "alfworld.games_root: ALFWorld games not found at {} (run scripts/alfworld/unpack.sh or scripts/alfworld/download.sh)",
            root.display()
        );
    }
    let bridge = bridge_config(a);
    // A bare command name (`python3`) is looked up on PATH when the pool starts.
    if bridge.python.components().count() > 1 && !bridge.python.exists() {
        bail!(
            "alfworld.python: ALFWorld Python environment not found at {} (run scripts/alfworld/setup.sh)",
            bridge.python.display()
        );
    }
    Ok((root, bridge))
}

/// One training pair: batch A (expert trajectories -> memory) and batch B (games to play).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pair {
    pub task_type: TaskType,
    pub a: Vec<Game>,
    pub b: Vec<Game>,
}

/// Games of the training split, the bridge pool and the expert trajectories seen so far.
pub struct AlfworldEnv {
    pub cfg: AlfworldConfig,
    pub pool: BridgePool,
    pub index: GameIndex,
    /// Games of `train_split` by task type, in id order.
    pub by_type: BTreeMap<TaskType, Vec<Game>>,
    cache: PathBuf,
    known: Mutex<HashMap<String, Trajectory>>,
}

impl AlfworldEnv {
    /// Index the games, read the trajectory cache and start the bridge pool. Errors say which
    /// setup script fills what is missing.
    pub fn open(a: &AlfworldConfig) -> Result<Self> {
        let (root, bridge) = check_setup(a)?;
        let index = GameIndex::from_dir(&root)
            .with_context(|| format!("indexing ALFWorld games under {}", root.display()))?;
        let mut by_type: BTreeMap<TaskType, Vec<Game>> = BTreeMap::new();
        for g in index.split(&a.train_split) {
            by_type.entry(g.task_type).or_default().push(g.clone());
        }
        if by_type.is_empty() {
            bail!(
                "alfworld.train_split: no games of split {:?} under {} (splits there: {})",
                a.train_split,
                root.display(),
                index.splits().join(", ")
            );
        }
        let cache = trajectory_cache(a);
        let known = read_cache(&cache)
            .with_context(|| format!("reading the trajectory cache {}", cache.display()))?
            .into_iter()
            .map(|t| (t.game_id.clone(), t))
            .collect();
        let pool = BridgePool::start(bridge)
            .with_context(|| "starting the ALFWorld bridge pool".to_string())?;
        Ok(Self {
            cfg: a.clone(),
            pool,
            index,
            by_type,
            cache,
            known: Mutex::new(known),
        })
    }

    /// Expert trajectories of `games`, in order: from memory, else the JSONL cache, else
    /// replayed through the pool (and appended to the cache). Games the environment lost are
    /// left out.
    pub fn trajectories(&self, games: &[Game]) -> Result<Vec<Trajectory>> {
        let missing: Vec<Game> = {
            let known = self
                .known
                .lock()
                .map_err(|_| anyhow::anyhow!("trajectory memo poisoned"))?;
            let mut seen = HashSet::new();
            games
                .iter()
                .filter(|g| !known.contains_key(&g.id) && seen.insert(g.id.clone()))
                .cloned()
                .collect()
        };
        if !missing.is_empty() {
            // `known` already holds the cache file: replay the missing games only.
            let fresh =
                replay_into_cache(&self.pool, &missing, Some(&self.cache)).with_context(|| {
                    format!(
                        "replaying {} expert walkthroughs (cache {})",
                        missing.len(),
                        self.cache.display()
                    )
                })?;
            let mut known = self
                .known
                .lock()
                .map_err(|_| anyhow::anyhow!("trajectory memo poisoned"))?;
            for t in fresh {
                known.insert(t.game_id.clone(), t);
            }
        }
        let known = self
            .known
            .lock()
            .map_err(|_| anyhow::anyhow!("trajectory memo poisoned"))?;
        Ok(games
            .iter()
            .filter_map(|g| known.get(&g.id).cloned())
            .collect())
    }

    /// Draw one pair from `rng`: a task type uniformly among those with at least two games;
    /// batch A of `pair_a_min..=pair_a_max` games of it; batch B of `pair_b_size` other games,
    /// of the same type with probability `same_type_prob` (else of another type). A and B
    /// never share a game; both shrink when the type has too few games (A keeps at least one).
    pub fn sample_pair(&self, rng: &mut ChaCha8Rng) -> Result<Pair> {
        sample_pair(&self.by_type, &self.cfg, rng)
    }
}

/// See [`AlfworldEnv::sample_pair`].
pub fn sample_pair(
    by_type: &BTreeMap<TaskType, Vec<Game>>,
    a: &AlfworldConfig,
    rng: &mut ChaCha8Rng,
) -> Result<Pair> {
    let types: Vec<TaskType> = by_type
        .iter()
        .filter(|(_, g)| g.len() >= 2)
        .map(|(t, _)| *t)
        .collect();
    if types.is_empty() {
        bail!("no task type has two training games (one for batch A, one for batch B)");
    }
    let t = types[rng.random_range(0..types.len())];
    let games = &by_type[&t];
    let n_a = rng.random_range(a.pair_a_min..=a.pair_a_max.max(a.pair_a_min));
    let others: Vec<TaskType> = by_type
        .iter()
        .filter(|(o, g)| **o != t && !g.is_empty())
        .map(|(o, _)| *o)
        .collect();
    let same = others.is_empty() || rng.random::<f64>() < a.same_type_prob;
    if same {
        let n_b = a.pair_b_size.min(games.len() - 1);
        let total = (n_a + n_b).min(games.len());
        let idx = sample_indices(rng, games.len(), total).into_vec();
        let (b, rest) = idx.split_at(n_b);
        Ok(Pair {
            task_type: t,
            a: rest.iter().map(|&i| games[i].clone()).collect(),
            b: b.iter().map(|&i| games[i].clone()).collect(),
        })
    } else {
        let bt = others[rng.random_range(0..others.len())];
        let bg = &by_type[&bt];
        let ia = sample_indices(rng, games.len(), n_a.min(games.len())).into_vec();
        let ib = sample_indices(rng, bg.len(), a.pair_b_size.min(bg.len())).into_vec();
        Ok(Pair {
            task_type: t,
            a: ia.iter().map(|&i| games[i].clone()).collect(),
            b: ib.iter().map(|&i| bg[i].clone()).collect(),
        })
    }
}

/// Expert trajectories packed into spans of about `chunk_tokens` tokens. `overlap == 0` (the
/// reference's `chunk_trajectories_by_tokens`): whole trajectories joined by
/// `=== TRAJECTORY ===` lines share a span while the sum of their token counts fits, and a
/// trajectory is never cut. `overlap > 0` (ours): whole trajectories joined by blank lines, a
/// longer one cut into windows sharing `overlap` tokens. Each span's `turn_ids` are the ids of
/// the games it holds, so memory provenance leads back to them.
pub fn trajectory_sample(
    id: &str,
    trajectories: &[Trajectory],
    chunk_tokens: usize,
    overlap: usize,
) -> Sample {
    let texts: Vec<&str> = trajectories.iter().map(|t| t.text.as_str()).collect();
    let packed = if overlap == 0 {
        memskill_datasets::pack_whole(
            &texts,
            chunk_tokens,
            memskill_datasets::TRAJECTORY_SEPARATOR,
        )
    } else {
        memskill_datasets::pack_texts(&texts, chunk_tokens, overlap)
    };
    let spans = packed
        .into_iter()
        .enumerate()
        .map(|(i, p)| Span {
            id: format!("{id}:{i}"),
            index: i,
            session: None,
            date: None,
            turn_ids: p
                .sources
                .iter()
                .map(|&s| trajectories[s].game_id.clone())
                .collect(),
            text: p.text,
        })
        .collect();
    Sample {
        id: id.to_string(),
        dataset: crate::config::Dataset::Alfworld.name(),
        sessions: Vec::new(),
        spans,
        queries: Vec::new(),
    }
}

/// Top-`r` memories of `memory` by similarity to the objective (the actor's procedural tips):
/// with `retriever` (`memory.retriever`, e.g. contriever, as the reference's ALFWorld
/// evaluation) over its context model's embeddings of the memories' texts, else with `encoder`
/// over the stored embeddings.
pub fn tip_source(
    memory: Arc<MemoryBank>,
    encoder: Arc<dyn TextEncoder>,
    retriever: Option<crate::backends::Retriever>,
    r: usize,
) -> TipSource {
    let index = std::sync::OnceLock::new();
    Arc::new(move |goal: &str| {
        if r == 0 || memory.live_count() == 0 {
            return Vec::new();
        }
        let hits = match &retriever {
            Some(retr) => index
                .get_or_init(|| crate::retrieval::RetrieverIndex::build(&memory, retr.clone()))
                .as_ref()
                .map_err(|e| anyhow::anyhow!("{e:#}"))
                .and_then(|ix| ix.search(&[goal], r)),
            None => crate::retrieval::question_hits(&memory, encoder.as_ref(), None, &[goal], r),
        };
        match hits {
            Ok(h) if !h.is_empty() => h[0]
                .iter()
                .filter_map(|(id, _)| memory.get(*id))
                .map(|m| m.content.clone())
                .collect(),
            Ok(_) => Vec::new(),
            Err(err) => {
                eprintln!("warning: no tips for {goal:?}: encoding the objective failed: {err:#}");
                Vec::new()
            }
        }
    })
}

/// The LLM actor's settings of the config.
pub fn actor_settings(a: &AlfworldConfig) -> Result<ActorSettings, String> {
    Ok(ActorSettings {
        history_window: a.history_window,
        max_tokens: a.actor_max_tokens,
        temperature: a.actor_temperature,
        include_inventory: a.include_inventory,
        reply_match: a.reply_match,
    })
}

/// Play `games` with the LLM actor (tips from `tips`), in parallel over the pool.
pub fn play_games(
    pool: &BridgePool,
    games: &[Game],
    llm: Arc<dyn Llm>,
    tips: Option<TipSource>,
    a: &AlfworldConfig,
    prompts: Arc<memskill_core::PromptSet>,
) -> Vec<GameResult> {
    let factory = |_g: &Game| -> Result<Box<dyn Actor>, String> {
        let mut actor = LlmActor::new(llm.clone(), Vec::new())
            .with_settings(&actor_settings(a)?)
            .with_prompts(prompts.clone());
        if let Some(t) = &tips {
            actor = actor.with_tip_source(t.clone());
        }
        Ok(Box::new(actor))
    };
    pool.play_many(games, &factory, a.max_steps)
}

/// A played game as a scored "query": question = objective, gold = SUCCESS, score = 1 / 0,
/// retrieved = the tips, evidence = the transcript. Environment errors and games whose actor
/// calls all failed get no score (they are reported, never counted as failures).
pub fn game_query(r: &GameResult) -> QueryResult {
    let won = r.won();
    let (score, error) = match &r.outcome {
        GameOutcome::EnvError(m) => (
            None,
            Some(format!("environment error in {}: {m}", r.game_id)),
        ),
        _ if r.steps > 0 && r.actor_stats.llm_errors >= r.steps => (
            None,
            Some(format!(
                "actor LLM calls failed on all {} steps of {}",
                r.steps, r.game_id
            )),
        ),
        _ => (Some(if won { 1.0 } else { 0.0 }), None),
    };
    let prediction = if score.is_none() {
        "ERROR".to_string()
    } else if won {
        format!("SUCCESS in {} steps", r.steps)
    } else {
        format!("FAILED after {} steps", r.steps)
    };
    QueryResult {
        sample_id: r.task_type.as_str().to_string(),
        query_id: r.game_id.clone(),
        question: r.objective.clone(),
        gold: GAME_GOLD.into(),
        category: r.task_type.as_str().to_string(),
        prediction,
        f1: None,
        judge: None,
        score,
        retrieved: r.tips.clone(),
        error,
        judge_error: None,
        evidence: if r.initial_obs.is_empty() {
            String::new()
        } else {
            format_trajectory(&r.initial_obs, &r.transcript, won)
        },
        answered_by: None,
        source_spans: Vec::new(),
        memory_ids: Vec::new(),
    }
}

/// Everything a pair episode needs besides the [`EpisodeCtx`].
pub struct PairCtx<'a> {
    pub env: &'a AlfworldEnv,
    /// The actor model (the run's `answer` LLM).
    pub actor: Arc<dyn Llm>,
    pub encoder: Arc<dyn TextEncoder>,
    /// The question-side retriever (`memory.retriever`); None = `encoder`.
    pub retriever: Option<crate::backends::Retriever>,
}

/// One training episode on a pair; `trajectories` are batch A's expert trajectories.
pub fn run_pair(
    ctx: &EpisodeCtx<'_>,
    pc: &PairCtx<'_>,
    pair: &Pair,
    trajectories: &[Trajectory],
    id: &str,
    seed: u64,
) -> Result<EpisodeResult> {
    let a = &pc.env.cfg;
    let sample = trajectory_sample(id, trajectories, a.train_chunk_tokens, 0);
    if sample.spans.is_empty() {
        // Every batch-A game was lost by the environment: nothing to learn from.
        return Ok(EpisodeResult {
            built: BuiltMemory {
                memory: MemoryBank::new(),
                transitions: Vec::new(),
                outcomes: Vec::new(),
                chosen: Vec::new(),
                call_errors: 0,
                parse_problems: 0,
                flagged: 0,
                refused: 0,
                contract_refused: Default::default(),
                span_tokens: Vec::new(),
                sample_id: sample.id.clone(),
                span_ids: Vec::new(),
                span_log: Vec::new(),
                errors: vec![format!(
                    "{id}: no expert trajectory of batch A ({} games) could be replayed",
                    pair.a.len()
                )],
            },
            queries: Vec::new(),
            reward: None,
            actor: None,
        });
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let built: BuiltMemory = build_memory(ctx, &sample, Some(&mut rng))
        .with_context(|| format!("building memory from batch A of {id}"))?;
    let tips = tip_source(
        Arc::new(ctx.shown_memory(&built.memory).into_owned()),
        pc.encoder.clone(),
        pc.retriever.clone(),
        a.tips,
    );
    let results = play_games(
        &pc.env.pool,
        &pair.b,
        pc.actor.clone(),
        Some(tips),
        a,
        Arc::new(ctx.prompts.clone()),
    );
    let queries: Vec<QueryResult> = results.iter().map(game_query).collect();
    let scores: Vec<f64> = queries.iter().filter_map(|q| q.score).collect();
    let reward = (!scores.is_empty()).then(|| scores.iter().sum::<f64>() / scores.len() as f64);
    let mut actor = ActorStats::default();
    for r in &results {
        actor.merge(&r.actor_stats);
    }
    Ok(EpisodeResult {
        built,
        queries,
        reward,
        actor: Some(actor),
    })
}

/// What the evaluation bank was built from.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EvalBankInfo {
    pub trajectories: usize,
    pub spans: usize,
    pub memories: usize,
    pub cache_hit: bool,
    pub cache_path: PathBuf,
    /// Executor calls that failed (such a bank is used but not cached).
    pub executor_errors: usize,
}

/// The evaluation bank: expert trajectories of `train_split` (all, or `eval_trajectories` of
/// them with task types interleaved), packed into spans of `eval_chunk_tokens` tokens with
/// `eval_chunk_overlap`, turned into ONE memory bank by the checkpoint's controller
/// (deterministic top-`eval.top_k`, `eval.retrieve` memories per span) and the executor.
/// Cached under `<cache>/membanks/` by checkpoint, skill bank, spans, K, R, executor and encoder.
pub fn build_eval_bank(
    cfg: &crate::config::Config,
    ck: &crate::checkpoint::Checkpoint,
    rt: &crate::runtime::Runtime,
) -> Result<(MemoryBank, EvalBankInfo)> {
    let a = &cfg.alfworld;
    let trajs = {
        let env = AlfworldEnv::open(a)?;
        let limit = (a.eval_trajectories > 0).then_some(a.eval_trajectories);
        let games = env.index.select(&a.train_split, limit);
        eprintln!(
            "evaluation bank: expert trajectories of {} {} games (cache {})",
            games.len(),
            a.train_split,
            env.cache.display()
        );
        env.trajectories(&games)?
    };
    if trajs.is_empty() {
        bail!(
            "no expert trajectory of split {:?} could be replayed",
            a.train_split
        );
    }
    let sample = trajectory_sample(
        "alfworld-eval-bank",
        &trajs,
        a.eval_chunk_tokens,
        a.eval_chunk_overlap,
    );
    let path = crate::runtime::membank_path(
        cfg,
        rt,
        &ck.hash()?,
        &ck.bank.content_hash(),
        &sample,
        serde_json::json!({"kind": "alfworld-eval-bank"}),
    )?;
    let cached = crate::eval::cached_memory(&path, "the ALFWorld evaluation bank", || {
        eprintln!(
            "evaluation bank: building memory from {} spans ({} trajectories, {}-token spans)",
            sample.spans.len(),
            trajs.len(),
            a.eval_chunk_tokens
        );
        let mut policy = crate::eval::EvalPolicy::load(cfg, rt, ck)?;
        let lock = Mutex::new(&mut policy.controller);
        let ctx = EpisodeCtx {
            dataset: crate::config::Dataset::Alfworld,
            domain: memskill_executor::MemoryDomain::Procedural,
            answer_retrieve: a.tips,
            bundles: &policy.bundles,
            ..crate::eval::eval_ctx(cfg, rt, &lock, &policy.skills, policy.skill_embs.clone())
        };
        build_memory(&ctx, &sample, None)
    })?;
    let info = EvalBankInfo {
        trajectories: trajs.len(),
        spans: sample.spans.len(),
        memories: cached.memory.live_count(),
        cache_hit: cached.hit,
        cache_path: path,
        executor_errors: cached.call_errors,
    };
    Ok((cached.memory, info))
}

#[cfg(test)]
mod tests {
    use super::*;
    use memskill_alfworld::StepRecord;

    fn game(t: TaskType, i: usize) -> Game {
        Game {
            id: format!("train/{}-x-{i}/trial", t.as_str()),
            split: "train".into(),
            task_type: t,
            path: PathBuf::from(format!("/nonexistent/{i}")),
        }
    }

    fn by_type(sizes: &[(TaskType, usize)]) -> BTreeMap<TaskType, Vec<Game>> {
        sizes
            .iter()
            .map(|(t, n)| (*t, (0..*n).map(|i| game(*t, i)).collect()))
            .collect()
    }

    #[test]
    fn pairs_are_disjoint_same_type_and_sized() {
        let bt = by_type(&[
            (TaskType::PickAndPlace, 80),
            (TaskType::PickCoolThenPlace, 70),
        ]);
        let cfg = AlfworldConfig::default();
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for _ in 0..50 {
            let p = sample_pair(&bt, &cfg, &mut rng).unwrap();
            assert!((40..=60).contains(&p.a.len()), "{}", p.a.len());
            assert_eq!(p.b.len(), 5);
            assert!(p.a.iter().chain(&p.b).all(|g| g.task_type == p.task_type));
            let ids: HashSet<&str> = p.a.iter().chain(&p.b).map(|g| g.id.as_str()).collect();
            assert_eq!(ids.len(), p.a.len() + p.b.len());
        }
        // Deterministic in the RNG.
        let mut r1 = ChaCha8Rng::seed_from_u64(3);
        let mut r2 = ChaCha8Rng::seed_from_u64(3);
        assert_eq!(
            sample_pair(&bt, &cfg, &mut r1).unwrap(),
            sample_pair(&bt, &cfg, &mut r2).unwrap()
        );
    }

    #[test]
    fn small_types_shrink_and_other_type_b_when_asked() {
        let bt = by_type(&[
            (TaskType::PickAndPlace, 4),
            (TaskType::PickHeatThenPlace, 1),
        ]);
        let cfg = AlfworldConfig {
            same_type_prob: 1.0,
            ..Default::default()
        };
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let p = sample_pair(&bt, &cfg, &mut rng).unwrap();
        // Only PickAndPlace has two games: 3 for B at most (A keeps one).
        assert_eq!(p.task_type, TaskType::PickAndPlace);
        assert_eq!(p.b.len(), 3);
        assert_eq!(p.a.len(), 1);
        let cross = AlfworldConfig {
            same_type_prob: 0.0,
            ..Default::default()
        };
        let p = sample_pair(&bt, &cross, &mut rng).unwrap();
        assert_eq!(p.a.len(), 4);
        assert!(p
            .b
            .iter()
            .all(|g| g.task_type == TaskType::PickHeatThenPlace));
        assert!(sample_pair(&by_type(&[(TaskType::PickAndPlace, 1)]), &cfg, &mut rng).is_err());
    }

    fn traj(i: usize, steps: usize) -> Trajectory {
        let steps: Vec<StepRecord> = (0..steps)
            .map(|s| StepRecord {
                action: format!("go to cabinet {s}"),
                obs: format!("You arrive at cabinet {s}. The cabinet {s} is closed."),
            })
            .collect();
        let intro =
            format!("-= Welcome =-\nYou are in room {i}.\n\nYour task is to: put a mug in shelf.");
        Trajectory {
            game_id: format!("train/g{i}"),
            split: "train".into(),
            task_type: TaskType::PickAndPlace,
            objective: "put a mug in shelf.".into(),
            text: format_trajectory(&intro, &steps, true),
            initial_obs: intro,
            steps,
            success: true,
        }
    }

    #[test]
    fn trajectory_sample_packs_and_keeps_provenance() {
        let ts: Vec<Trajectory> = (0..12).map(|i| traj(i, 8)).collect();
        let s = trajectory_sample("pair-0-1", &ts, 512, 0);
        assert_eq!(s.dataset, "alfworld");
        assert!(
            s.spans.len() >= 2 && s.spans.len() < 12,
            "{}",
            s.spans.len()
        );
        for (i, sp) in s.spans.iter().enumerate() {
            assert_eq!(sp.id, format!("pair-0-1:{i}"));
            // Token counts of the trajectories sum to at most 512 (separators not counted).
            assert!(memskill_datasets::count_tokens(&sp.text) <= 512 + 8 * sp.turn_ids.len());
            for g in &sp.turn_ids {
                let t = ts.iter().find(|t| &t.game_id == g).unwrap();
                assert!(sp.text.contains(t.initial_obs.lines().nth(1).unwrap()));
            }
        }
        let covered: HashSet<&String> = s.spans.iter().flat_map(|sp| &sp.turn_ids).collect();
        assert_eq!(covered.len(), 12);
        // The reference's packing: whole trajectories joined by `=== TRAJECTORY ===` lines.
        let multi = s.spans.iter().find(|sp| sp.turn_ids.len() > 1).unwrap();
        assert_eq!(
            multi.text.matches("\n\n=== TRAJECTORY ===\n\n").count(),
            multi.turn_ids.len() - 1
        );
        // A trajectory longer than a span is never cut (the old packing windowed it).
        let long = vec![traj(0, 120), traj(1, 2)];
        let s = trajectory_sample("p", &long, 256, 0);
        assert_eq!(s.spans.len(), 2);
        assert_eq!(s.spans[0].text, long[0].text);
        assert!(memskill_datasets::count_tokens(&s.spans[0].text) > 256);
        // With an overlap (ours, opt-in) it is windowed.
        assert!(trajectory_sample("p", &long, 256, 32).spans.len() > 2);
        assert!(s
            .spans
            .iter()
            .all(|sp| sp.text.contains("TRAJECTORY_STATUS: SUCCESS")));
    }

    fn result(outcome: GameOutcome, steps: usize, llm_errors: usize) -> GameResult {
        let mut r: GameResult = serde_json::from_value(serde_json::json!({
            "game_id": "valid_unseen/g/t", "split": "valid_unseen", "task_type": "pick_and_place",
            "outcome": {"kind": "lost"}, "steps": steps, "reward": 0.0, "done": false,
            "objective": "put a mug in shelf.", "initial_obs": "You are in a room.",
            "transcript": [], "tips": ["tip a"], "actor_stats": {"exact": 0, "substring": 0, "fallback": 0, "llm_errors": llm_errors},
            "elapsed_ms": 1
        }))
        .unwrap();
        r.outcome = outcome;
        r
    }

    #[test]
    fn games_become_scored_queries() {
        let w = game_query(&result(GameOutcome::Won, 7, 0));
        assert_eq!(
            (w.score, w.prediction.as_str()),
            (Some(1.0), "SUCCESS in 7 steps")
        );
        assert_eq!(w.retrieved, vec!["tip a".to_string()]);
        assert!(w.evidence.ends_with("TRAJECTORY_STATUS: SUCCESS"));
        let l = game_query(&result(GameOutcome::Lost, 50, 3));
        assert_eq!(l.score, Some(0.0));
        assert_eq!(l.category, "pick_and_place");
        let e = game_query(&result(GameOutcome::EnvError("crash".into()), 3, 0));
        assert_eq!(e.score, None);
        assert!(e.error.unwrap().contains("crash"));
        let f = game_query(&result(GameOutcome::Lost, 4, 4));
        assert_eq!(f.score, None);
        assert!(f.error.unwrap().contains("actor LLM calls failed"));
    }
}
