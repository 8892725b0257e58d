//! What the training loop needs from a benchmark, and nothing more: draw a batch of episodes,
//! run one of them to a scored transcript, the memory domain the executor writes about, and
//! how the designer reads failures. [`open`] is the one place that maps `data.dataset` to an
//! implementation: [`QaBenchmark`] (every file-based benchmark of the registry and the
//! synthetic task) and [`AlfworldBenchmark`].
//!
//! [`crate::registry`] describes every benchmark (one [`crate::registry::Descriptor`] each). Adding a QA
//! dataset needs a loader in `memskill-datasets`, its answer templates and a descriptor;
//! adding an interactive benchmark is one more implementation of [`Benchmark`].

pub mod alfworld;
pub mod qa;

use anyhow::{Context, Result};
use memskill_core::Sample;
use memskill_executor::MemoryDomain;
use rand_chacha::ChaCha8Rng;

pub use self::alfworld::AlfworldBenchmark;
pub use self::qa::QaBenchmark;
use crate::config::{Config, Dataset};
use crate::episode::{EpisodeCtx, EpisodeResult};
use crate::runtime::Runtime;

/// A benchmark the controller trains on.
pub trait Benchmark: Sync {
    /// The samples the scripted oracle backend answers from (empty when episodes are not
    /// samples).
    fn oracle_samples(&self) -> Vec<Sample> {
        Vec::new()
    }

    /// Draw the episodes of one batch (`size` of them) from `rng`, the run's batch RNG.
    fn draw_batch<'a>(
        &'a self,
        rt: &'a Runtime,
        rng: &mut ChaCha8Rng,
        size: usize,
    ) -> Result<Box<dyn Batch + 'a>>;

    /// The samples whose questions can be replayed (the offline gate); empty when episodes
    /// are not samples.
    fn samples(&self) -> &[Sample] {
        &[]
    }

    /// What the executor writes memories about.
    fn memory_domain(&self) -> MemoryDomain {
        MemoryDomain::Conversation
    }

    /// Hard cases are failed tasks of an acting agent (the designer's prompts say so), not
    /// failed questions.
    fn failures_are_tasks(&self) -> bool {
        false
    }
}

/// The episodes of one batch.
pub trait Batch: Sync {
    fn len(&self) -> usize;

    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Run episode `index` to a scored transcript; `seed` seeds its own RNG (derived from the
    /// run seed, the update step and `index`, so concurrency never changes results).
    fn run(&self, ctx: &EpisodeCtx<'_>, index: usize, seed: u64) -> Result<EpisodeResult>;
}

/// The benchmark of `cfg` (`data.dataset`). Fails before anything is written when its data
/// or environment is missing.
pub fn open(cfg: &Config) -> Result<Box<dyn Benchmark>> {
    Ok(match cfg.data.dataset {
        Dataset::Alfworld => {
            Box::new(AlfworldBenchmark::open(&cfg.alfworld).context("data.dataset = \"alfworld\"")?)
        }
        Dataset::Qa(_) | Dataset::Synthetic => Box::new(QaBenchmark::load(cfg)?),
    })
}
