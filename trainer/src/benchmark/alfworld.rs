//! ALFWorld: an episode is a pair of game batches (see `crate::alfworld`): batch A's expert
//! trajectories build the memory, batch B is played by the LLM actor with tips retrieved from
//! it; reward = batch B's success rate.

use anyhow::Result;
use memskill_alfworld::Trajectory;
use memskill_executor::MemoryDomain;
use rand_chacha::ChaCha8Rng;

use super::{Batch, Benchmark};
use crate::alfworld::{run_pair, AlfworldEnv, Pair, PairCtx};
use crate::config::AlfworldConfig;
use crate::episode::{EpisodeCtx, EpisodeResult};
use crate::runtime::Runtime;

/// The ALFWorld environment of a run (games, bridge pool, expert trajectories).
pub struct AlfworldBenchmark {
    env: AlfworldEnv,
}

impl AlfworldBenchmark {
    pub fn open(cfg: &AlfworldConfig) -> Result<Self> {
        Ok(Self {
            env: AlfworldEnv::open(cfg)?,
        })
    }
}

struct Pairs<'a> {
    ctx: PairCtx<'a>,
    pairs: Vec<(Pair, Vec<Trajectory>)>,
}

impl Batch for Pairs<'_> {
    fn len(&self) -> usize {
        self.pairs.len()
    }
    fn run(&self, ctx: &EpisodeCtx<'_>, index: usize, seed: u64) -> Result<EpisodeResult> {
        let (pair, trajs) = &self.pairs[index];
        let label = format!("pair-{}-{index}", ctx.step);
        run_pair(ctx, &self.ctx, pair, trajs, &label, seed)
    }
}

impl Benchmark for AlfworldBenchmark {
    fn draw_batch<'a>(
        &'a self,
        rt: &'a Runtime,
        rng: &mut ChaCha8Rng,
        size: usize,
    ) -> Result<Box<dyn Batch + 'a>> {
        let env = &self.env;
        let pairs = (0..size)
            .map(|_| env.sample_pair(rng))
            .collect::<Result<Vec<_>>>()?;
        // Replay every missing walkthrough of the batch once, before the episodes run.
        let all_a: Vec<_> = pairs.iter().flat_map(|p| p.a.iter().cloned()).collect();
        env.trajectories(&all_a)?;
        let pairs = pairs
            .into_iter()
            .map(|p| {
                let t = env.trajectories(&p.a)?;
                Ok((p, t))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Box::new(Pairs {
            ctx: PairCtx {
                env,
                actor: rt.answerer.clone(),
                encoder: rt.encoder.clone(),
                retriever: rt.retriever.clone(),
            },
            pairs,
        }))
    }

    fn memory_domain(&self) -> MemoryDomain {
        MemoryDomain::Procedural
    }

    fn failures_are_tasks(&self) -> bool {
        true
    }
}
