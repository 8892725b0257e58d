//! Question answering over conversations or documents (every file-based benchmark, the
//! synthetic task): an episode is one sample; its spans build the memory, its questions
//! are answered from it and scored.

use anyhow::Result;
use memskill_core::Sample;
use rand::seq::index::sample as sample_indices;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{Batch, Benchmark};
use crate::config::Config;
use crate::episode::{run_episode, EpisodeCtx, EpisodeResult};
use crate::runtime::Runtime;

/// The training samples of a QA dataset (`data.split`, cut and segmented by `spans.mode`).
pub struct QaBenchmark {
    samples: Vec<Sample>,
}

impl QaBenchmark {
    pub fn load(cfg: &Config) -> Result<Self> {
        let samples =
            crate::data::load_samples(&cfg.data, cfg.data.split, &cfg.spans.mode, cfg.run.seed)?;
        Ok(Self { samples })
    }
}

/// Draw the batch of sample indices for one inner epoch: without replacement when the
/// batch fits, else with.
pub fn draw_batch(rng: &mut ChaCha8Rng, n: usize, batch: usize) -> Vec<usize> {
    if batch <= n {
        sample_indices(rng, n, batch).into_vec()
    } else {
        (0..batch).map(|_| rng.random_range(0..n)).collect()
    }
}

struct Samples<'a> {
    samples: &'a [Sample],
    picked: Vec<usize>,
}

impl Batch for Samples<'_> {
    fn len(&self) -> usize {
        self.picked.len()
    }
    fn run(&self, ctx: &EpisodeCtx<'_>, index: usize, seed: u64) -> Result<EpisodeResult> {
        run_episode(ctx, &self.samples[self.picked[index]], seed)
    }
}

impl Benchmark for QaBenchmark {
    fn oracle_samples(&self) -> Vec<Sample> {
        self.samples.clone()
    }

    fn samples(&self) -> &[Sample] {
        &self.samples
    }

    fn draw_batch<'a>(
        &'a self,
        _rt: &'a Runtime,
        rng: &mut ChaCha8Rng,
        size: usize,
    ) -> Result<Box<dyn Batch + 'a>> {
        Ok(Box::new(Samples {
            samples: &self.samples,
            picked: draw_batch(rng, self.samples.len(), size),
        }))
    }
}
