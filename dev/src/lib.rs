//! memskill-dev: the developer tooling behind the `memskill` binary's dev subcommands
//! (memskill-cli), kept out of the libraries (no library crate depends on this one).
//!
//! * [`fidelity`]: differential checks of our components against fixtures the reference
//!   implementation generated (`memskill fidelity check`; fixtures in
//!   `trainer/tests/fixtures/fidelity/`).
//! * [`perfbench`]: `memskill bench encoder | ppo | llm | all`, ours against the baselines.
//! * [`bench`]: one inner epoch against a scripted server with a fixed latency, against the
//!   critical-path ideal, and the ALFWorld bridge's throughput (`memskill bench trainer |
//!   alfworld`, `cargo bench -p memskill-dev`).
//! * [`membench`]: the machine's memory bandwidth and f32 rate, shown beside decode speed.
//! * [`reply_script`]: reply scripts for `memskill llm serve-scripted --replies`.
//!
//! The scripted server, its rules and the synthetic tasks stay in memskill-trainer: the
//! `synthetic` dataset and its oracle backend are part of the product (a config can name them).

pub mod bench;
pub mod fidelity;
/// The machine probe lives in `memskill-local`, which the dev profile optimises: in this
/// crate (not optimised in the dev profile) it measured 2-3 GB/s and 0 GFLOP/s on a box whose
/// decode alone streams over 8 GB/s (issue 45).
pub use memskill_local::membench;
pub mod perfbench;
pub mod reply_script;
