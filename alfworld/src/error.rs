//! Error type of the ALFWorld crate.

use std::path::PathBuf;
use thiserror::Error;

/// Everything that can go wrong outside a game (a game's own environment failures are
/// [`crate::GameOutcome::EnvError`], not errors).
#[derive(Debug, Error)]
pub enum AlfworldError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: malformed game file: {message}")]
    BadGame { path: PathBuf, message: String },
    #[error("{path}: cannot tell the task type from folder name `{folder}`")]
    UnknownTaskType { path: PathBuf, folder: String },
    #[error(
        "no games found under {0} (expected <split>/<task>-<objs>-<scene>/<trial>/game.tw-pddl)"
    )]
    NoGames(PathBuf),
    #[error("unpacking {path} failed: {message}")]
    Unpack { path: PathBuf, message: String },
    #[error("bridge: {0}")]
    Bridge(String),
    #[error("{path}:{line}: malformed trajectory cache line: {message}")]
    BadCache {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("{0}")]
    Other(String),
    /// A file refused by the guarded reader (not a regular file, or too large) or unreadable.
    #[error(transparent)]
    File(#[from] memskill_core::fsio::FsError),
}

impl AlfworldError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        AlfworldError::Io {
            path: path.into(),
            source,
        }
    }
}
