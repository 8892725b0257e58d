//! Conversations / trajectories and the questions asked about them.

use serde::{Deserialize, Serialize};

/// One utterance (or one agent step), already rendered to text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Turn {
    /// Dataset id of the turn (LoCoMo `dia_id`, `S{session}:T{index}` elsewhere).
    pub id: String,
    pub speaker: String,
    /// Rendered text, e.g. `Caroline said, "Hi!"`.
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Session {
    /// 1-based session number as in the dataset.
    pub index: usize,
    pub date: Option<String>,
    pub turns: Vec<Turn>,
}

/// A unit of text the controller and executor process in one step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Span {
    /// `{sample_id}:{index}`.
    pub id: String,
    pub index: usize,
    /// Session number (1-based) the span came from, when spans do not cross sessions.
    pub session: Option<usize>,
    pub date: Option<String>,
    /// Ids of the turns the span covers (possibly partially, for token windows).
    pub turn_ids: Vec<String>,
    /// The full text shown to the executor, including its `DATE:` header when dated.
    pub text: String,
}

/// A question about a sample.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Query {
    pub id: String,
    pub question: String,
    /// Gold answers (one for LoCoMo/LongMemEval, several for HotpotQA aliases).
    pub answers: Vec<String>,
    /// Dataset category: LoCoMo "1".."5", LongMemEval question_type, HotpotQA type or "".
    pub category: String,
    #[serde(default)]
    pub evidence: Vec<String>,
    /// The date the question is asked (LongMemEval).
    #[serde(default)]
    pub date: Option<String>,
}

/// A conversation or trajectory with its sessions, spans and questions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    pub id: String,
    /// "locomo", "longmemeval", "hotpotqa", "alfworld", "synthetic", ...
    pub dataset: String,
    pub sessions: Vec<Session>,
    /// Filled by span segmentation (datasets crate); empty until then.
    #[serde(default)]
    pub spans: Vec<Span>,
    pub queries: Vec<Query>,
}

impl Sample {
    pub fn turn_count(&self) -> usize {
        self.sessions.iter().map(|s| s.turns.len()).sum()
    }
}
