use thiserror::Error;

/// Errors raised by the pure domain model. Messages name the skill / memory concerned.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum CoreError {
    #[error("invalid skill name {name:?}: {reason}")]
    InvalidSkillName { name: String, reason: String },
    #[error("skill {0:?} already exists in the bank")]
    DuplicateSkill(String),
    #[error("skill {0:?} is not in the bank")]
    UnknownSkill(String),
    #[error("invalid version {0:?}: expected MAJOR.MINOR.PATCH")]
    InvalidVersion(String),
    #[error("unknown action {0:?}: expected insert, update, delete or noop")]
    InvalidAction(String),
    #[error("unknown skill status {0:?}")]
    InvalidStatus(String),
    #[error("memory {0} does not exist")]
    UnknownMemory(u64),
    #[error("memory {0} was deleted")]
    DeletedMemory(u64),
    #[error("memory {0} was already forgotten")]
    ForgottenMemory(u64),
    #[error("memory confidence {0} is not within [0, 1]")]
    InvalidConfidence(f32),
    #[error("embedding dimension {got} does not match the bank's {expected}")]
    DimensionMismatch { expected: usize, got: usize },
}
