//! Error type of the controller crate.

use thiserror::Error;

/// Everything that can go wrong in selection, updates and (de)serialisation.
#[derive(Debug, Error)]
pub enum ControllerError {
    /// An input vector has the wrong length.
    #[error("{what}: expected length {expected}, got {got}")]
    Dim {
        what: String,
        expected: usize,
        got: usize,
    },
    /// An input contains NaN or infinity.
    #[error("{0}: contains a non-finite value")]
    NonFinite(String),
    /// The skill bank passed to `select` is empty.
    #[error("no skills to select from (skill_embs is empty)")]
    NoSkills,
    /// An action index is out of range or repeated.
    #[error("{0}")]
    BadAction(String),
    /// A configuration value is invalid.
    #[error("config field `{field}`: {msg}")]
    Config { field: String, msg: String },
    /// The requested device is unavailable in this build.
    #[error("device `{device}`: {msg}")]
    Device { device: String, msg: String },
    /// Checkpoint bytes could not be read.
    #[error("controller checkpoint: {0}")]
    Checkpoint(String),
    /// A tensor operation failed.
    #[error("tensor: {0}")]
    Tensor(String),
}
