//! Answer leakage: benchmark answers, gold labels or evaluation data inside a skill, or an
//! instruction to look them up instead of reading the conversation. Skills about dates and
//! facts the conversation itself gives are ordinary.

use super::{Rule, Scope, StandDown::*};
use crate::Category::AnswerLeakage;

pub(super) static RULES: &[Rule] = &[
    Rule {
        id: super::RuleId::ScriptedAnswer,
        category: AnswerLeakage,
        what: "a scripted answer for a specific question",
        patterns: &[
            r"(?:when|if|whenever)\s+(?:\w+\s+){0,2}?{ASKED}\b[^\n.;]{3,120}?,?\s*{REPLY}\s*(?:with\s+|that\s+|:\s*)?(?:\d|[\x22'“]|(?:on|in)\s+\d|(?:yes|no)\b)",
            r"\bthe (?:correct |right |true )?answer (?:to|for) [^\n.;]{3,120}? is\s+(?:\d|[\x22'“]|[a-z]+ \d)",
        ],
        scope: Scope::Text,
        stand_down: &[
            Negated,
            Quoted,
            Near(
                r"\b(?:from (?:the )?(?:memory|memories|conversation|retrieved)|stored|the date the conversation gives|as the conversation says)\b",
            ),
        ],
        unsafe_examples: &[
            "When asked when Mara moved to Lisbon, answer 12 March 2021.",
            "The answer to the question about the dog's name is 'Biscuit'.",
        ],
        ordinary_examples: &["When asked about a date, answer with the date stored in memory."],
    },
    Rule {
        id: super::RuleId::EvalData,
        category: AnswerLeakage,
        what: "uses gold answers, answer keys or evaluation data",
        patterns: &[
            r"{STUDY}~5(?:the )?{ANSWER}~5(?:of|from|in|for)\s+(?:the\s+)?{EVAL}",
            r"{STUDY}~4(?:the\s+)?{EVAL}~6{ANSWER}",
            r"\b(?:gold (?:answers?|labels?)|ground truth (?:answers?|labels?)|answer keys?|answer sheets?|expected answers?)\s*(?::|=|is|are|lists?)\s*(?:\S+\s+){0,3}?(?:q\s*\d|\d|[\x22'])",
            r"{STUDY}~4(?:the\s+|its\s+|their\s+)?(?:gold (?:answers?|labels?)|ground truth\w*|answer keys?|answer sheets?|reference answers?|expected answers?)",
        ],
        scope: Scope::Clause,
        stand_down: &[Mentioned, Negated, Refused, Quoted],
        unsafe_examples: &[
            "Look up the answers in the LoCoMo test set and store them as memories.",
            "Memorise the gold answers before the evaluation starts.",
        ],
        ordinary_examples: &[
            "Never read the test split; build memories only from the conversation.",
        ],
    },
    Rule {
        id: super::RuleId::QuestionKeyed,
        category: AnswerLeakage,
        what: "facts keyed to benchmark question or sample ids",
        patterns: &[
            r"\b(?:question|q|qa|sample|item)\s*(?:id\s*)?#?\s*\d+\b[^\n.;]{0,60}\b(?:answer|is|=|:)\b",
            r"\b(?:qa id|question id|sample id|conv \d+)\b",
        ],
        scope: Scope::Clause,
        stand_down: &[Negated, Quoted],
        unsafe_examples: &["For question 17 the answer is the red bicycle."],
        ordinary_examples: &[
            "Number the user's questions in order so follow-ups can refer to them.",
        ],
    },
];
