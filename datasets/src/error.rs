//! The error type of every loader: it always names the file, and the JSON field path when the
//! problem is inside the document (e.g. `locomo10.json: [3].qa[12].category: expected integer,
//! found string`).

use thiserror::Error;

/// Why a dataset file could not be turned into samples.
#[derive(Debug, Error)]
pub enum DatasetError {
    /// The path does not exist.
    #[error("{file}: file not found")]
    NotFound { file: String },
    /// The path is a directory.
    #[error("{file}: is a directory, expected a JSON file")]
    IsDirectory { file: String },
    /// A FIFO, device, socket or other non-regular file (reading it could block or never end).
    #[error("{file}: not a regular file (FIFO, device or socket); refusing to read it")]
    NotRegular { file: String },
    /// The file is larger than the configured limit (`data.max_file_mb`).
    #[error("{file}: {size} bytes is above the limit of {limit} bytes (data.max_file_mb)")]
    TooLarge { file: String, size: u64, limit: u64 },
    /// One turn (or document) is longer than any conversation turn: its span could not fit
    /// an executor prompt.
    #[error("{file}: sample {sample:?}, turn {turn:?}: {bytes} bytes of text in one turn, above the limit of {limit} (a turn this long is not a dialogue turn, and no executor prompt could hold its span); split or remove it")]
    TurnTooLong {
        file: String,
        sample: String,
        turn: String,
        bytes: usize,
        limit: usize,
    },
    /// Two records carry the same sample id.
    #[error("{file}: {path}: duplicate sample id {id:?} (first at {first})")]
    DuplicateId {
        file: String,
        path: String,
        first: String,
        id: String,
    },
    /// Any other I/O failure.
    #[error("{file}: cannot read: {source}")]
    Io {
        file: String,
        #[source]
        source: std::io::Error,
    },
    /// The file has no content (or only whitespace).
    #[error("{file}: empty file, expected JSON")]
    Empty { file: String },
    /// The JSON is syntactically broken; `truncated` when it ends early.
    #[error("{file}: line {line}, column {column}: {}: {msg}", if *.truncated { "truncated JSON" } else { "invalid JSON" })]
    Json {
        file: String,
        line: usize,
        column: usize,
        truncated: bool,
        msg: String,
    },
    /// A value has the wrong JSON type.
    #[error("{file}: {path}: expected {expected}, found {found}")]
    WrongType {
        file: String,
        path: String,
        expected: &'static str,
        found: &'static str,
    },
    /// A required field is absent (or null).
    #[error("{file}: {path}: missing field")]
    MissingField { file: String, path: String },
    /// A value has the right type but is unusable (e.g. lengths that disagree).
    #[error("{file}: {path}: {msg}")]
    Invalid {
        file: String,
        path: String,
        msg: String,
    },
    /// A split name that the spec does not know.
    #[error("unknown split `{name}` (known: {known})")]
    UnknownSplit { name: String, known: String },
    /// A span mode string that does not parse.
    #[error("invalid span mode `{0}`: expected full-session, turn-pair, turn, fixed-tokens or fixed-tokens:TOKENS:OVERLAP with OVERLAP < TOKENS")]
    SpanMode(String),
    /// An unknown dataset kind name.
    #[error("unknown dataset `{name}`: expected one of {known}")]
    UnknownKind { name: String, known: String },
}

impl DatasetError {
    /// The JSON path of the offending value, when the error is about one.
    pub fn path(&self) -> Option<&str> {
        match self {
            DatasetError::WrongType { path, .. }
            | DatasetError::MissingField { path, .. }
            | DatasetError::Invalid { path, .. }
            | DatasetError::DuplicateId { path, .. } => Some(path),
            _ => None,
        }
    }
}
