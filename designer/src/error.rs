//! Errors of the designer crate. Messages name the skill, the file and the rule concerned.

use std::path::PathBuf;

use thiserror::Error;

/// Everything that can go wrong in the designer.
#[derive(Debug, Error)]
pub enum DesignerError {
    /// The designer LLM call failed (never silently turned into "no change").
    #[error("designer LLM call ({round}) failed: {source}")]
    Llm {
        round: String,
        #[source]
        source: memskill_core::LlmError,
    },
    /// A skill (in an import, export or validated folder) breaks a rule.
    #[error("skill {skill:?} ({path}): {rule}")]
    InvalidSkill {
        skill: String,
        path: PathBuf,
        rule: String,
    },
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A file refused by the guarded reader or writer (a link, a FIFO, too big, exists).
    #[error(transparent)]
    Fs(#[from] memskill_core::fsio::FsError),
    /// A file has the wrong shape (bad JSON, bad frontmatter, missing field).
    #[error("{path}: {message}")]
    Format { path: PathBuf, message: String },
    /// A designer prompt template failed to render (names the template).
    #[error("designer prompt: {0}")]
    Prompt(#[from] memskill_core::PromptError),
    /// A domain-model error from core (duplicate skill, bad version, ...).
    #[error(transparent)]
    Core(#[from] memskill_core::CoreError),
}

impl DesignerError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            path: path.into(),
            source,
        }
    }
    pub(crate) fn format(path: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        Self::Format {
            path: path.into(),
            message: message.into(),
        }
    }
}
