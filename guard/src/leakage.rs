//! Answer leakage by the designer: a skill text that carries a gold answer of the hard cases
//! the designer was shown (checked where the designer's edits are validated).

/// Words too common to count as an answer's content.
const COMMON: &[&str] = &[
    "a",
    "an",
    "the",
    "and",
    "or",
    "of",
    "in",
    "on",
    "at",
    "to",
    "for",
    "with",
    "by",
    "from",
    "yes",
    "no",
    "not",
    "none",
    "never",
    "always",
    "sometimes",
    "unknown",
    "mentioned",
    "it",
    "its",
    "is",
    "was",
    "are",
    "were",
    "be",
    "been",
    "he",
    "she",
    "they",
    "his",
    "her",
    "their",
    "them",
    "this",
    "that",
    "these",
    "those",
    "one",
    "two",
    "three",
    "four",
    "five",
    "first",
    "second",
    "last",
    "next",
    "new",
    "old",
    "good",
    "bad",
    "many",
    "some",
    "all",
    "more",
    "less",
    "most",
    "least",
    "other",
    "same",
    "time",
    "times",
    "day",
    "days",
    "week",
    "weeks",
    "month",
    "months",
    "year",
    "years",
    "today",
    "yesterday",
    "tomorrow",
    "before",
    "after",
    "during",
    "later",
    "earlier",
    "ago",
    "now",
    "then",
    "once",
    "twice",
    "again",
    "memory",
    "memories",
    "speaker",
    "speakers",
    "user",
    "users",
    "person",
    "people",
    "fact",
    "facts",
    "event",
    "events",
    "date",
    "dates",
    "place",
    "places",
    "name",
    "names",
    "note",
    "notes",
    "record",
    "records",
    "update",
    "updates",
    "delete",
    "insert",
    "skill",
    "skills",
    "friend",
    "friends",
    "family",
    "work",
    "home",
    "job",
    "likes",
    "like",
    "love",
    "loves",
    "happy",
    "sad",
    "because",
    "about",
    "also",
    "only",
    "very",
    "just",
    "maybe",
    "likely",
    "probably",
    "may",
    "might",
    "would",
    "could",
    "should",
    "will",
    "can",
    "did",
    "does",
    "do",
];

fn words_of(text: &str) -> String {
    let mut out = String::from(" ");
    for w in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        out.push_str(w);
        out.push(' ');
    }
    out
}

/// The first of `answers` (gold answers of the hard cases a designer was shown) that a skill
/// text carries as whole words, e.g. "Sweden" or "7 May 2023"; answers shorter than four
/// characters or made only of common words are not looked for.
pub fn leaked_answer<'a>(text: &str, answers: &[&'a str]) -> Option<&'a str> {
    let hay = words_of(&crate::normalise_for_scan(text));
    answers.iter().copied().find(|a| {
        let norm = crate::normalise_for_scan(a);
        let needle = words_of(&norm);
        let content = needle.split_whitespace().any(|w| {
            !COMMON.contains(&w) && (w.len() >= 4 || w.chars().all(|c| c.is_ascii_digit()))
        });
        needle.trim().len() >= 4 && content && hay.contains(&needle)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_is_found_as_whole_words() {
        assert_eq!(
            leaked_answer("When asked, say Sweden.", &["Sweden"]),
            Some("Sweden")
        );
        assert_eq!(
            leaked_answer("Store dates as 7 May 2023.", &["7 May 2023"]),
            Some("7 May 2023")
        );
        assert_eq!(leaked_answer("Swedenborg wrote it.", &["Sweden"]), None);
        assert_eq!(leaked_answer("Say yes or no.", &["yes"]), None);
    }
}
