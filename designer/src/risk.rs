//! A skill's risk level, decided from its text (deterministic: the cues of
//! `designer/data/risk_cues.tsv`). `high` when the description or the instructions ask for
//! tools, code execution or external services (network, APIs, files, databases); the
//! governance preset's gate then holds the skill for a person (see
//! `memskill_core::governance`). The cues are a word list, not an understanding of the text:
//! a false alarm costs a stricter gate, never a rejection (rejection is the guard's job).

use std::sync::LazyLock;

use memskill_core::{RiskLevel, Skill, SkillBank};
use regex::Regex;

/// One cue: its id, its pattern and the example the data file gives for it.
#[derive(Debug)]
pub struct RiskCue {
    pub id: String,
    pub pattern: Regex,
    pub example: String,
}

const CUES_TSV: &str = include_str!("../data/risk_cues.tsv");

/// The cues, read once from the embedded data file (a malformed line is a build-time bug,
/// caught by this module's tests).
pub static RISK_CUES: LazyLock<Vec<RiskCue>> = LazyLock::new(|| {
    parse_cues(CUES_TSV).unwrap_or_else(|e| panic!("designer/data/risk_cues.tsv: {e}"))
});

/// Parse the cue file: `id<TAB>regex<TAB>example` lines; `#` comments and blank lines skipped.
pub fn parse_cues(text: &str) -> Result<Vec<RiskCue>, String> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let f: Vec<&str> = line.split('\t').collect();
        let [id, pattern, example] = f[..] else {
            return Err(format!("line {}: expected 3 tab-separated fields", n + 1));
        };
        let pattern = Regex::new(&format!("(?i){pattern}"))
            .map_err(|e| format!("line {} ({id}): {e}", n + 1))?;
        out.push(RiskCue {
            id: id.to_string(),
            pattern,
            example: example.to_string(),
        });
    }
    Ok(out)
}

/// The ids of the cues the text matches, in file order.
pub fn risk_cues(description: &str, instructions: &str) -> Vec<&'static str> {
    RISK_CUES
        .iter()
        .filter(|c| c.pattern.is_match(description) || c.pattern.is_match(instructions))
        .map(|c| c.id.as_str())
        .collect()
}

/// `High` when any cue matches, else `Low`.
pub fn assess(description: &str, instructions: &str) -> RiskLevel {
    if risk_cues(description, instructions).is_empty() {
        RiskLevel::Low
    } else {
        RiskLevel::High
    }
}

/// Assess one skill from its current text.
pub fn assess_skill(s: &Skill) -> RiskLevel {
    assess(&s.description, &s.instructions)
}

/// Set every skill's risk level from its current text (governance mode).
pub fn assess_bank(bank: &mut SkillBank) {
    for s in bank.skills_mut() {
        s.risk = Some(assess(&s.description, &s.instructions));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cue_matches_its_own_example_and_the_examples_are_high() {
        assert!(RISK_CUES.len() >= 10);
        for c in RISK_CUES.iter() {
            assert!(
                c.pattern.is_match(&c.example),
                "cue {} misses its example",
                c.id
            );
            assert_eq!(assess("", &c.example), RiskLevel::High, "{}", c.id);
        }
    }

    #[test]
    fn the_seed_skills_and_plain_memory_guidance_are_low() {
        for s in SkillBank::seed().skills() {
            assert_eq!(
                assess_skill(s),
                RiskLevel::Low,
                "{}: {:?}",
                s.name,
                risk_cues(&s.description, &s.instructions)
            );
        }
        for t in [
            "Record where a speaker travelled and when, as one sentence with the names.",
            "When someone mentions they run a bakery, store the bakery's name and town.",
            "Note the tools a speaker owns (a drill, a saw) as possessions.",
            "Keep the title of the book the speaker read and the date they finished it.",
        ] {
            assert_eq!(
                assess("d", t),
                RiskLevel::Low,
                "{t}: {:?}",
                risk_cues("d", t)
            );
        }
    }

    #[test]
    fn a_malformed_cue_file_names_the_line() {
        assert!(parse_cues("a\tb").unwrap_err().contains("line 1"));
        assert!(parse_cues("# c\nx\t(\tex")
            .unwrap_err()
            .contains("line 2 (x)"));
        let mut b = SkillBank::seed();
        assess_bank(&mut b);
        assert!(b.skills().iter().all(|s| s.risk == Some(RiskLevel::Low)));
    }
}
