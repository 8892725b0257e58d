//! memskill's guard: the safety scan of skill texts and memories, organised by what it checks.
//!
//! A text goes through [`normalise`] (one plain view plus one view per decoding that changed
//! something: base64, spaced-out letters, digits for letters, split words, ...), then through
//! the stages, each a [`Scanner`]:
//! - [`Stage::Secrets`]: live-looking secret values in the text itself ([`secrets`]);
//! - [`Stage::Patterns`]: the rules of [`rules`], one data entry per rule with its own
//!   examples, built from the word classes of [`lexicon`], read clause by clause with their
//!   stand-downs (a negation or refusal before the match, a user's scoped request);
//! - [`Stage::Learned`]: a linear classifier shipped as a versioned weights file
//!   ([`learned`]), trained by `scripts/guard/train.sh` from the labelled sets of
//!   `guard/data` (their manifest is `guard/data/sets.toml`).
//!
//! The designer's LLM judge ([`Stage::Judge`]) lives in the designer crate (it needs an LLM)
//! and reports the same [`Finding`]. Every stage returns a typed finding; nothing parses a
//! verdict string. [`GUARD_VERSION`] names the rules and the model: banks record which guard
//! version accepted each skill (see `docs/safety.md`, "No lock-out").

pub mod clause;
pub mod data;
pub mod leakage;
pub mod learned;
pub mod lexicon;
pub mod memory;
pub mod normalise;
pub mod rules;
pub mod secrets;
pub mod sensitivity;

use std::fmt;
use std::sync::LazyLock;

use serde::{Deserialize, Serialize};

pub use leakage::leaked_answer;
pub use memory::{scan_memory, MemoryFilter, MemoryFinding};
pub use normalise::{normalise_for_scan, scan_views, View};
pub use rules::RuleId;
pub use secrets::{find_secrets, redact_secrets, redact_with, secret_values, SecretMatch};
pub use sensitivity::{kind_words, memory_sensitivity, redact_private};

/// One of the six safety assertions a skill text must not break.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Category {
    /// Requesting, storing or revealing secrets.
    Secrets,
    /// Widening the agent's permissions: tools, shell, files, network, privileges, approvals.
    Permissions,
    /// Ignoring system, developer or user constraints; feigned compliance; hidden actions.
    Constraints,
    /// Destructive commands, mass deletion, corrupting history or backups.
    Destructive,
    /// Sending memories, files or credentials anywhere the user did not ask.
    Exfiltration,
    /// Benchmark answers, gold labels or evaluation data in a skill.
    AnswerLeakage,
}

impl Category {
    pub const ALL: [Category; 6] = [
        Category::Secrets,
        Category::Permissions,
        Category::Constraints,
        Category::Destructive,
        Category::Exfiltration,
        Category::AnswerLeakage,
    ];

    /// `secrets`, `permissions`, `constraints`, `destructive`, `exfiltration`, `answer-leakage`.
    pub fn id(self) -> &'static str {
        match self {
            Category::Secrets => "secrets",
            Category::Permissions => "permissions",
            Category::Constraints => "constraints",
            Category::Destructive => "destructive",
            Category::Exfiltration => "exfiltration",
            Category::AnswerLeakage => "answer-leakage",
        }
    }

    pub fn parse(id: &str) -> Option<Category> {
        Category::ALL.into_iter().find(|c| c.id() == id)
    }

    /// The category's index in [`Category::ALL`].
    pub fn index(self) -> usize {
        Category::ALL.iter().position(|c| *c == self).unwrap_or(0)
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

/// Which stage of the guard found something.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stage {
    Secrets,
    Patterns,
    Learned,
    Judge,
}

impl Stage {
    pub fn id(self) -> &'static str {
        match self {
            Stage::Secrets => "secrets",
            Stage::Patterns => "patterns",
            Stage::Learned => "learned",
            Stage::Judge => "judge",
        }
    }
}

/// Why the guard rejects a text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    pub rule: RuleId,
    pub category: Category,
    pub stage: Stage,
    /// The view the finding was made in: `plain`, or the decoding (`decoded text`,
    /// `spaced-out letters`, ...).
    pub view: String,
    /// The matched words (normalised, at most 120 characters), or the classifier's
    /// probability.
    pub evidence: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} (rule {}, {} stage",
            self.category,
            self.rule.id(),
            self.stage.id()
        )?;
        if self.view != "plain" {
            write!(f, ", in the {} view", self.view)?;
        }
        write!(f, "): {:?}", self.evidence)
    }
}

/// A text made ready for the stages: its views, computed once.
pub struct Document {
    pub views: Vec<View>,
}

impl Document {
    pub fn new(text: &str) -> Document {
        Document {
            views: scan_views(text),
        }
    }

    /// The view's name as findings report it.
    pub fn view_name(v: &View) -> String {
        if v.how.is_empty() {
            "plain".into()
        } else {
            v.how.into()
        }
    }
}

/// One stage of the guard.
pub trait Scanner: Send + Sync {
    fn stage(&self) -> Stage;
    /// The first finding in `doc`, if any.
    fn scan(&self, doc: &Document) -> Option<Finding>;
}

/// The guard's version: the crate's version, the hash of the rules as compiled (patterns,
/// stand-downs, lexicon) and of the shipped model. A bank records it beside each skill the
/// guard accepted.
pub static GUARD_VERSION: LazyLock<String> = LazyLock::new(|| {
    format!(
        "{}+r{}.m{}",
        env!("CARGO_PKG_VERSION"),
        &rules::fingerprint()[..8],
        &learned::shipped().fingerprint()[..8]
    )
});

/// The stages in their order: secrets, patterns, learned.
pub struct Guard {
    stages: Vec<Box<dyn Scanner>>,
}

impl Default for Guard {
    fn default() -> Self {
        Guard {
            stages: vec![
                Box::new(secrets::SecretScanner),
                Box::new(rules::PatternScanner::shipped()),
                Box::new(learned::LearnedScanner::shipped()),
            ],
        }
    }
}

static GUARD: LazyLock<Guard> = LazyLock::new(Guard::default);

impl Guard {
    /// The process's guard (built on first use: the rules compiled, the model decoded).
    pub fn shipped() -> &'static Guard {
        &GUARD
    }

    /// A guard of the given stages, in order (tests, ablations).
    pub fn with_stages(stages: Vec<Box<dyn Scanner>>) -> Guard {
        Guard { stages }
    }

    /// The first finding of the first stage that finds something in `text`.
    pub fn scan_text(&self, text: &str) -> Option<Finding> {
        let doc = Document::new(text);
        self.stages.iter().find_map(|s| s.scan(&doc))
    }

    /// A skill's texts as the guard reads them: the description, the instructions, and the
    /// three fields joined (a rule may need words of two fields).
    pub fn scan_skill(&self, name: &str, description: &str, instructions: &str) -> Option<Finding> {
        let joined = skill_text(name, description, instructions);
        let doc = Document::new(&joined);
        self.stages.iter().find_map(|s| s.scan(&doc))
    }
}

/// The text of a skill as the guard and the classifier read it: name (as words),
/// description and instructions, each on its own line.
pub fn skill_text(name: &str, description: &str, instructions: &str) -> String {
    format!(
        "{}\n{}\n{}",
        name.replace(['_', '-'], " "),
        description.trim(),
        instructions.trim()
    )
}

/// [`Guard::scan_skill`] with the shipped guard.
pub fn scan_skill(name: &str, description: &str, instructions: &str) -> Option<Finding> {
    Guard::shipped().scan_skill(name, description, instructions)
}

/// [`Guard::scan_text`] with the shipped guard.
pub fn scan_text(text: &str) -> Option<Finding> {
    Guard::shipped().scan_text(text)
}

/// The content hash a guard record is keyed by: sha256 of the skill's three fields.
pub fn text_hash(name: &str, description: &str, instructions: &str) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for part in [name, description, instructions] {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    hex::encode(h.finalize())
}
