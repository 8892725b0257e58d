//! One module per command group; each owns its clap arguments and its `run`.
pub mod alfworld;
pub mod assets;
pub mod data;
pub mod embed;
pub mod exec;
pub mod fidelity;
pub mod report;
pub mod skills;
pub mod train;
