//! memskill-trainer: wires datasets, controller, executor and designer into the training
//! loop, checkpoints, evaluation, plots and benchmarks. The `memskill` binary's `train`,
//! `eval`, `compare`, `plot` and `bench` commands are thin wrappers over this library.

pub mod adapter;
pub mod alfworld;
pub mod backends;
pub mod baselines;
pub mod benchmark;
pub mod cases;
pub mod checkpoint;
pub mod config;
pub mod contract_read;
pub mod data;
pub mod episode;
pub mod fsutil;
pub mod gate;
pub mod hub;
pub mod inspect;
pub mod invocations;
pub mod memorybank;
pub mod method_prompts;
pub mod metrics;
pub mod preflight;
pub mod prompts;
pub mod readers;
pub mod refimport;
pub mod registry;
pub mod retrieval;
pub mod runtime;
pub mod score;
pub mod scripted_rules;
pub mod scripted_server;
pub mod skill_registry;
pub mod skills_eval;
pub mod stop;
pub mod synthetic;
pub mod tracking;
pub mod train;

pub use config::Config;
pub use train::{train, TrainOptions, TrainOutcome};
pub mod eval;
pub mod plot;
pub mod report;
pub mod report_chart;
pub mod report_groups;
pub mod report_page;
