//! Clauses of a normalised view, and what stands a rule down inside one.
//!
//! A clause ends at sentence punctuation (`.`, `!`, `?`, `;`, `:` before a space or the
//! end), a line break, a contrast (", but", ", aber", ", mais", ", pero", ", ma", ", mas",
//! ", however", ", yet") or, when the sentence opens with a condition ("if", "when",
//! "wenn", "si", "cuando", "se", "quando", ...), the first comma. A negation before a match
//! in its clause negates it; one in the condition of an earlier clause does not ("if the user
//! does not object, delete everything" orders the deletion).

use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

static BREAK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"[.!?;:](?:\s|$)|\n|,\s+(?:but|aber|doch|mais|pero|ma|mas|however|yet|though|although)\b|\s+(?:but|aber|mais|pero|mas)\s+(?:never|not|do not|don't|nie|nicht|jamais|ne|nunca|no|non|mai|nao)\b",
    )
    .expect("the clause break compiles")
});

static CONDITION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*(?:\d+\s+)?(?:if|when|whenever|once|unless|wenn|falls|sobald|si|cuando|se|quando|caso)\b")
        .expect("the condition opener compiles")
});

/// The clauses of `text` as byte ranges, in order, covering the text without overlap.
pub fn clauses(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    for m in BREAK.find_iter(text) {
        push_clause(text, start..m.start(), &mut out);
        start = m.end();
    }
    push_clause(text, start..text.len(), &mut out);
    out
}

fn push_clause(text: &str, r: Range<usize>, out: &mut Vec<Range<usize>>) {
    if r.is_empty() {
        return;
    }
    let s = &text[r.clone()];
    if CONDITION.is_match(s) {
        if let Some(c) = s.find(", ") {
            out.push(r.start..r.start + c);
            out.push(r.start + c + 2..r.end);
            return;
        }
    }
    out.push(r);
}

/// The clause of `clauses` holding byte `at`.
pub fn clause_at(clauses: &[Range<usize>], at: usize) -> Range<usize> {
    clauses
        .iter()
        .find(|c| c.start <= at && at < c.end.max(c.start + 1))
        .cloned()
        .unwrap_or(at..at)
}

static NEGATION: LazyLock<Regex> = LazyLock::new(|| crate::lexicon::compile("{NEG}"));
static FORBIDS: LazyLock<Regex> = LazyLock::new(|| crate::lexicon::compile("{FORBIDDEN}"));
static REFUSES: LazyLock<Regex> = LazyLock::new(|| crate::lexicon::compile("{REFUSAL}"));

/// Compile the clause readers' word classes now (the guard's start-up does it on a second
/// thread while the rules compile).
pub fn warm() {
    for re in [&*NEGATION, &*FORBIDS, &*REFUSES, &*MENTIONS] {
        let _ = re.is_match("");
    }
}

/// Whether the match at `m` is negated in its clause `c`: a negation or refusal word before
/// it or inside it (German, French and the Romance languages put it after the verb:
/// "speichere niemals", "n'envoie jamais", "store the job, not the password"), or the clause
/// saying the act is forbidden.
pub fn negated(text: &str, c: &Range<usize>, m: &Range<usize>) -> bool {
    negated_before(text, c, m) || NEGATION.is_match(&text[m.clone()])
}

/// [`negated`] without looking inside the match (for rules whose pattern holds a negation:
/// "never ask before deleting").
pub fn negated_before(text: &str, c: &Range<usize>, m: &Range<usize>) -> bool {
    let before = &text[c.start..m.start.max(c.start)];
    NEGATION.is_match(before) || FORBIDS.is_match(&text[c.clone()])
}

static MENTIONS: LazyLock<Regex> = LazyLock::new(|| crate::lexicon::compile("{MENTION}"));

/// Whether the clause, before the match, says the act is a topic: what someone is or does
/// for a living, what they talk about, a story, an example or a term ("the user is a DBA who
/// jokes about DROP TABLE", "commands like rm -rf", "'purge' means ...").
pub fn mentioned(text: &str, c: &Range<usize>, m: &Range<usize>) -> bool {
    static WOULD: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"\b(?:would|wurde|wuerde|serait|seraient|sería|seria|sarebbe)\b")
            .expect("the hypothetical compiles")
    });
    // "storing tokens verbatim would turn the bank into a credential store": a consequence
    MENTIONS.is_match(&text[c.start..m.start.max(c.start)])
        || WOULD.is_match(&text[m.end.min(c.end)..c.end])
}

/// Whether the line treats the matched act as a request to refuse or to report: a request
/// named before the match ("if a message asks you to ...") and a refusal on the line outside
/// the match ("..., refuse", "decline and store nothing", "flag it").
pub fn refused(text: &str, c: &Range<usize>, m: &Range<usize>) -> bool {
    static ACT: LazyLock<Regex> = LazyLock::new(|| {
        crate::lexicon::compile(
            r"{NEG}|\b(?:flag|report|warn|alert|ignor\w*|treat (?:it|this|them|that|the \w+) as|(?:as|is|are) (?:chat |ordinary |user |plain )?(?:content|data|text)|tell the user (?:you|it) (?:can't|cannot|won't)|store nothing|record nothing|do nothing|noop|explain|replac\w*|mask\w*|redact\w*|strip\w*|scrub\w*|recus\w*|rechaz\w*|rifiut\w*|lehn\w* \w+ ab|refuse\w*)\b",
        )
    });
    let line_start = text[..c.start].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[m.end..].find('\n').map_or(text.len(), |i| m.end + i);
    let context = &text[line_start.min(m.start)..m.start];
    REFUSES.is_match(context)
        && (ACT.is_match(&text[line_start.min(m.start)..m.start])
            || ACT.is_match(&text[m.end..line_end]))
}

/// Whether `m` starts inside quotation marks on its line (a quoted request, phrase or
/// example): double quotes, guillemets, or single quotes that open after a space or bracket
/// and close before one (an apostrophe inside a word is no quote).
pub fn quoted(text: &str, c: &Range<usize>, m: &Range<usize>) -> bool {
    let line_start = text[..c.start].rfind('\n').map_or(0, |i| i + 1);
    // open at the match's start, or opened inside it and still open at its end ("store
    // 'user rotated a token today'": the object is a quoted note)
    quote_open(&text[line_start..m.start.max(line_start)])
        || quote_open(&text[line_start..m.end.max(line_start)])
}

/// Whether a quotation is open at the end of `s`.
fn quote_open(s: &str) -> bool {
    let before: Vec<char> = s.chars().collect();
    let (mut double, mut single) = (false, false);
    for (i, &ch) in before.iter().enumerate() {
        let prev = if i == 0 { ' ' } else { before[i - 1] };
        let next = before.get(i + 1).copied().unwrap_or(' ');
        match ch {
            '"' | '\u{201c}' | '\u{201d}' | '\u{00ab}' | '\u{00bb}' => double = !double,
            '\'' | '\u{2018}' | '\u{2019}' => {
                if !single && !prev.is_alphanumeric() && next.is_alphanumeric() {
                    single = true;
                } else if single && prev.is_alphanumeric() && !next.is_alphanumeric() {
                    single = false;
                }
            }
            _ => {}
        }
    }
    double || single
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(t: &str) -> Vec<&str> {
        clauses(t).into_iter().map(|r| t[r].trim()).collect()
    }

    #[test]
    fn clauses_end_at_punctuation_contrasts_and_conditions() {
        assert_eq!(
            parts("record the date, but never store the password. then stop"),
            ["record the date", "never store the password", "then stop"]
        );
        assert_eq!(
            parts("if the user does not object, delete every memory"),
            ["if the user does not object", "delete every memory"]
        );
        assert_eq!(
            parts("visit example.com today"),
            ["visit example.com today"]
        );
    }

    #[test]
    fn negation_is_read_before_the_match_in_its_clause() {
        let t = "if the user does not object, delete every memory";
        let cs = clauses(t);
        let at = t.find("delete").unwrap();
        let c = clause_at(&cs, at);
        assert!(!negated(t, &c, &(at..at + 6)));
        let t = "never store the password";
        let cs = clauses(t);
        let at = t.find("store").unwrap();
        assert!(negated(t, &clause_at(&cs, at), &(at..at + 5)));
        let t = "storing passwords is forbidden";
        let cs = clauses(t);
        assert!(negated(t, &clause_at(&cs, 0), &(0..7)));
    }
}
