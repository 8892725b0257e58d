//! The benchmark registry: one [`Descriptor`] per benchmark, and [`Dataset`], the handle a
//! config names. Everything the trainer does differently per benchmark is a field here
//! (default file, splits, span modes, answer prompt and extraction, F1 rule, evaluation K,
//! judge rules, category names, fetch command); training, evaluation, the baselines,
//! `skills eval` and `memskill data` read the fields and never ask which benchmark it is.
//!
//! Adding a question-answering benchmark: its loader and `DatasetKind` in `memskill-datasets`,
//! its answer templates in `executor/prompts/answer.<name>.*.j2`, and one descriptor here
//! (a `const`, its line in [`ALL`] and its arm in [`Dataset::descriptor`], which the compiler
//! asks for).

use memskill_datasets::DatasetKind;
use memskill_executor::{AnswerStyle, Extraction, HotpotF1, JudgeGold};

use memskill_core::Query;

/// `data.dataset`: a question-answering benchmark of `memskill-datasets`, the ALFWorld
/// environment, or the synthetic task of the tests. Written as its name (`"locomo"`); every
/// value has a [`Descriptor`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum Dataset {
    /// A file-based QA benchmark.
    Qa(DatasetKind),
    /// ALFWorld (see `AlfworldConfig`): episodes are pairs of games.
    Alfworld,
    /// The synthetic recall task (tests and demos only).
    Synthetic,
}

/// How a benchmark's file is cut into train / val / test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Splits {
    /// By sample index (`memskill_datasets::split_locomo`: 0-5 / 6-7 / 8-9).
    ByIndex,
    /// By a splits file of 0-based question indices (`data.splits_path`, else this file
    /// under the data cache); `all` needs none.
    File { default: &'static str },
    /// None: every split is the whole file.
    Whole,
    /// The benchmark has no file (the synthetic task, ALFWorld's own game split).
    NotFile,
}

/// The F1 rule of a benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scorer {
    /// LoCoMo's rule by category (multi-answer for 1, adversarial phrases for 5).
    LocomoF1,
    /// HotpotQA's best F1 over the gold answers (`eval.hotpotqa_f1` picks the variant).
    HotpotF1,
    /// The reference's stemmed token F1 against the first gold answer.
    StemmedF1,
}

impl Scorer {
    /// The F1 of `prediction` for `q`.
    pub fn f1(self, q: &Query, prediction: &str, hotpot: HotpotF1) -> f64 {
        let gold = q.answers.first().map(String::as_str).unwrap_or("");
        match self {
            Scorer::HotpotF1 => memskill_executor::hotpot_f1_with(hotpot, prediction, &q.answers),
            Scorer::LocomoF1 => {
                let cat: u8 = q.category.trim().parse().unwrap_or(4);
                memskill_executor::locomo_f1(prediction, gold, cat)
            }
            Scorer::StemmedF1 => memskill_executor::memskill_f1(prediction, gold),
        }
    }

    /// The name `memskill data list` shows.
    pub fn name(self) -> &'static str {
        match self {
            Scorer::LocomoF1 => "locomo-f1",
            Scorer::HotpotF1 => "hotpotqa-f1",
            Scorer::StemmedF1 => "stemmed-f1",
        }
    }
}

/// Questions a benchmark's configs leave out unless asked to (`memskill data stats` counts
/// them as unused).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Optional {
    /// None.
    Nothing,
    /// Category-5 (adversarial) questions (`data.include_adversarial`).
    Adversarial,
    /// Abstention questions (id ending in `_abs`, `data.include_abstention`); a sample is one
    /// question, so an unused question drops its sample.
    Abstention,
}

/// Everything the trainer needs to know about one benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Descriptor {
    pub dataset: Dataset,
    /// The config name (`data.dataset`) and other accepted spellings.
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    /// The benchmark's own spelling, for messages.
    pub title: &'static str,
    /// The usual data file under `<cache>/data/` (what `fetch` puts there).
    pub default_path: Option<&'static str>,
    pub splits: Splits,
    /// The span modes its configs use, the reference's first.
    pub span_modes: &'static [&'static str],
    /// Answer template, extraction and the reference's answer budget.
    pub answer: AnswerStyle,
    pub scorer: Scorer,
    /// The reference's evaluation K (`eval.top_k` after `eval --dataset`); None keeps the config's.
    pub eval_top_k: Option<usize>,
    /// What the general judge is shown as gold.
    pub judge_gold: JudgeGold,
    /// `eval.judge_style = "longmemeval-yes-no"` applies (else the general judge is used).
    pub yes_no_judge: bool,
    /// Category names shown beside category ids in results tables.
    pub categories: &'static [(&'static str, &'static str)],
    pub optional: Optional,
    /// Results record the mean number of documents per sample (the context length).
    pub context_docs: bool,
    /// Episodes act in an environment: no questions to replay or answer from memories.
    pub interactive: bool,
    /// How to get the data.
    pub fetch: &'static str,
}

/// LoCoMo's answer style, which the non-QA benchmarks share (their memories are answered
/// the same way when asked).
const LOCOMO_ANSWER: AnswerStyle = AnswerStyle {
    template: "answer.locomo",
    extraction: Extraction::Stripped,
    reference_max_tokens: 32,
};

pub const LOCOMO: Descriptor = Descriptor {
    dataset: Dataset::Qa(DatasetKind::Locomo),
    name: "locomo",
    aliases: &[],
    title: "LoCoMo",
    default_path: Some("locomo/locomo10.json"),
    splits: Splits::ByIndex,
    span_modes: &["full-session", "turn-pair", "turn", "fixed-tokens"],
    answer: LOCOMO_ANSWER,
    scorer: Scorer::LocomoF1,
    eval_top_k: Some(7),
    judge_gold: JudgeGold::FirstClauseInCategory3,
    yes_no_judge: false,
    categories: &[
        ("1", "multi-hop"),
        ("2", "temporal"),
        ("3", "open-domain"),
        ("4", "single-hop"),
        ("5", "adversarial"),
    ],
    optional: Optional::Adversarial,
    context_docs: false,
    interactive: false,
    fetch: "scripts/fetch-data.sh --from DIR locomo",
};

pub const LONGMEMEVAL: Descriptor = Descriptor {
    dataset: Dataset::Qa(DatasetKind::LongMemEval),
    name: "longmemeval",
    aliases: &["lme"],
    title: "LongMemEval",
    default_path: Some("longmemeval/longmemeval_s_cleaned.json"),
    splits: Splits::File {
        default: "longmemeval/longmemeval_s_splits.json",
    },
    span_modes: &["full-session", "fixed-tokens", "turn-pair", "turn"],
    answer: AnswerStyle {
        template: "answer.longmemeval",
        extraction: Extraction::Stripped,
        reference_max_tokens: 512,
    },
    scorer: Scorer::StemmedF1,
    eval_top_k: Some(5),
    judge_gold: JudgeGold::AllJoined,
    yes_no_judge: true,
    categories: &[],
    optional: Optional::Abstention,
    context_docs: false,
    interactive: false,
    fetch: "scripts/fetch-data.sh [--from DIR] longmemeval (the splits file comes with --from)",
};

pub const HOTPOTQA: Descriptor = Descriptor {
    dataset: Dataset::Qa(DatasetKind::HotpotQa),
    name: "hotpotqa",
    aliases: &["hotpot"],
    title: "HotpotQA",
    default_path: Some("hotpotqa/eval_200.json"),
    splits: Splits::Whole,
    span_modes: &["fixed-tokens", "full-session"],
    answer: AnswerStyle {
        template: "answer.hotpotqa",
        extraction: Extraction::Tagged,
        reference_max_tokens: 512,
    },
    scorer: Scorer::HotpotF1,
    eval_top_k: Some(7),
    judge_gold: JudgeGold::AllJoined,
    yes_no_judge: false,
    categories: &[],
    optional: Optional::Nothing,
    context_docs: true,
    interactive: false,
    fetch: "scripts/fetch-data.sh hotpotqa",
};

pub const MSC: Descriptor = Descriptor {
    dataset: Dataset::Qa(DatasetKind::Msc),
    name: "msc",
    aliases: &["msc-self-instruct", "dmr"],
    title: "MSC-Self-Instruct",
    default_path: Some("msc/msc_self_instruct.jsonl"),
    splits: Splits::Whole,
    span_modes: &["full-session", "turn-pair", "turn", "fixed-tokens"],
    answer: AnswerStyle {
        template: "answer.msc",
        extraction: Extraction::Stripped,
        reference_max_tokens: 32,
    },
    scorer: Scorer::StemmedF1,
    eval_top_k: None,
    judge_gold: JudgeGold::AllJoined,
    yes_no_judge: false,
    categories: &[("dmr", "deep memory retrieval")],
    optional: Optional::Nothing,
    context_docs: false,
    interactive: false,
    fetch: "scripts/fetch-msc.sh",
};

pub const ALFWORLD: Descriptor = Descriptor {
    dataset: Dataset::Alfworld,
    name: "alfworld",
    aliases: &[],
    title: "ALFWorld",
    default_path: None,
    splits: Splits::NotFile,
    span_modes: &[],
    answer: LOCOMO_ANSWER,
    scorer: Scorer::StemmedF1,
    eval_top_k: None,
    judge_gold: JudgeGold::AllJoined,
    yes_no_judge: false,
    categories: &[],
    optional: Optional::Nothing,
    context_docs: false,
    interactive: true,
    fetch: "scripts/fetch-data.sh --from DIR alfworld && scripts/alfworld/setup.sh",
};

pub const SYNTHETIC: Descriptor = Descriptor {
    dataset: Dataset::Synthetic,
    name: "synthetic",
    aliases: &[],
    title: "synthetic",
    default_path: None,
    splits: Splits::NotFile,
    span_modes: &[],
    answer: LOCOMO_ANSWER,
    scorer: Scorer::LocomoF1,
    eval_top_k: None,
    judge_gold: JudgeGold::AllJoined,
    yes_no_judge: false,
    categories: &[],
    optional: Optional::Nothing,
    context_docs: false,
    interactive: false,
    fetch: "(generated; nothing to fetch)",
};

/// Every benchmark, in the order `memskill data list` shows them.
pub const ALL: &[&Descriptor] = &[
    &LOCOMO,
    &LONGMEMEVAL,
    &HOTPOTQA,
    &MSC,
    &ALFWORLD,
    &SYNTHETIC,
];

/// The benchmark named `name` (its config name or an alias, any case).
pub fn find(name: &str) -> Option<&'static Descriptor> {
    let n = name.to_ascii_lowercase();
    ALL.iter()
        .copied()
        .find(|d| d.name == n || d.aliases.contains(&n.as_str()))
}

/// The config names of every benchmark (`locomo | longmemeval | ...`), for error messages.
pub fn known_names() -> String {
    ALL.iter().map(|d| d.name).collect::<Vec<_>>().join(" | ")
}

/// Every answer template prefix (rendered once with sample data at start-up).
pub fn answer_templates() -> Vec<&'static str> {
    let mut v: Vec<&'static str> = ALL.iter().map(|d| d.answer.template).collect();
    v.sort_unstable();
    v.dedup();
    v
}

impl Dataset {
    /// This benchmark's descriptor.
    pub fn descriptor(self) -> &'static Descriptor {
        match self {
            Dataset::Qa(DatasetKind::Locomo) => &LOCOMO,
            Dataset::Qa(DatasetKind::LongMemEval) => &LONGMEMEVAL,
            Dataset::Qa(DatasetKind::HotpotQa) => &HOTPOTQA,
            Dataset::Qa(DatasetKind::Msc) => &MSC,
            Dataset::Alfworld => &ALFWORLD,
            Dataset::Synthetic => &SYNTHETIC,
        }
    }

    /// The config name (`"locomo"`, `"alfworld"`, ...).
    pub fn name(self) -> String {
        self.descriptor().name.to_string()
    }

    /// The file loader of a file-based benchmark.
    pub fn qa(self) -> Option<DatasetKind> {
        match self {
            Dataset::Qa(k) => Some(k),
            Dataset::Alfworld | Dataset::Synthetic => None,
        }
    }

    /// Episodes act in an environment (the designer sees failed tasks, not failed questions).
    pub fn is_interactive(self) -> bool {
        self.descriptor().interactive
    }
}

impl Default for Dataset {
    fn default() -> Self {
        LOCOMO.dataset
    }
}

impl std::fmt::Display for Dataset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.descriptor().name)
    }
}

impl std::str::FromStr for Dataset {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        find(s)
            .map(|d| d.dataset)
            .ok_or_else(|| format!("unknown dataset {s:?}: expected {}", known_names()))
    }
}

impl TryFrom<String> for Dataset {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

impl From<Dataset> for String {
    fn from(d: Dataset) -> String {
        d.to_string()
    }
}

impl PartialEq<&str> for Dataset {
    fn eq(&self, other: &&str) -> bool {
        other.parse::<Dataset>().is_ok_and(|d| d == *self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_loader_has_one_descriptor_and_names_round_trip() {
        for kind in DatasetKind::ALL {
            let d = Dataset::Qa(*kind).descriptor();
            assert_eq!(d.dataset, Dataset::Qa(*kind));
            assert_eq!(
                d.name,
                kind.to_string(),
                "the config name is the loader's name"
            );
            assert!(ALL.contains(&d), "{} is listed", d.name);
        }
        for d in ALL {
            assert_eq!(d.dataset.descriptor(), *d);
            assert_eq!(d.name.parse::<Dataset>().unwrap(), d.dataset);
            for a in d.aliases {
                assert_eq!(a.parse::<Dataset>().unwrap(), d.dataset, "alias {a}");
            }
            assert_eq!(d.dataset.to_string(), d.name);
            assert_eq!(
                d.default_path.is_some(),
                d.dataset.qa().is_some(),
                "{}",
                d.name
            );
            assert!(d.answer.template.starts_with("answer."), "{}", d.name);
        }
        let mut names: Vec<&str> = ALL
            .iter()
            .flat_map(|d| d.aliases.iter().chain([&d.name]))
            .copied()
            .collect();
        let n = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), n, "names and aliases are unique");
    }

    #[test]
    fn an_unknown_dataset_is_an_error_naming_the_known_ones() {
        let e = "squad".parse::<Dataset>().unwrap_err();
        for d in ALL {
            assert!(e.contains(d.name), "{e}");
        }
        assert!(e.contains("\"squad\""), "{e}");
    }

    #[test]
    fn every_answer_template_is_a_built_in_template() {
        let names: Vec<&str> = memskill_executor::PROMPT_TEMPLATES
            .iter()
            .map(|(n, _)| *n)
            .collect();
        for t in answer_templates() {
            for part in ["system", "user"] {
                let f = format!("{t}.{part}.j2");
                assert!(names.contains(&f.as_str()), "{f} is missing");
            }
        }
    }

    #[test]
    fn scorers_follow_their_rules() {
        let q = |cat: &str, answers: &[&str]| Query {
            id: "q".into(),
            question: "?".into(),
            answers: answers.iter().map(|a| a.to_string()).collect(),
            category: cat.into(),
            evidence: vec![],
            date: None,
        };
        // LoCoMo category 5 scores the refusal phrase, not token overlap
        let adv = q("5", &["anything"]);
        assert_eq!(
            Scorer::LocomoF1.f1(
                &adv,
                "Not mentioned in the conversation",
                HotpotF1::Memskill
            ),
            1.0
        );
        assert_eq!(
            Scorer::StemmedF1.f1(
                &adv,
                "Not mentioned in the conversation",
                HotpotF1::Memskill
            ),
            0.0
        );
        // HotpotQA takes the best of several answers; the others read the first only
        let two = q("", &["Paris", "Lyon"]);
        assert_eq!(Scorer::HotpotF1.f1(&two, "Lyon", HotpotF1::Memskill), 1.0);
        assert_eq!(Scorer::StemmedF1.f1(&two, "Lyon", HotpotF1::Memskill), 0.0);
        assert_eq!(Scorer::StemmedF1.f1(&two, "paris", HotpotF1::Memskill), 1.0);
    }
}
