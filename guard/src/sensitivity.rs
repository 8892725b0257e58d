//! The sensitivity half of the memory filter: how private a memory text is. A secret value
//! ([`crate::find_secrets`]: passwords, keys, tokens, card numbers) makes it `secret`;
//! identifiers whose leak harms (a US social security number, an IBAN, a passport, licence,
//! national-id, tax, bank-account or medical-record number given after its name) make it
//! `sensitive`; contact details (an e-mail address, a phone number after its name or in
//! international form) make it `personal`; anything else is `public`.
//!
//! Memories are facts about people: a name, a city, a hobby or a diagnosis mentioned in
//! conversation is public here (LoCoMo is full of them); only values that identify or reach
//! a person count.

use std::sync::LazyLock;

use memskill_core::Sensitivity;
use regex::Regex;

use crate::normalise::clean;
use crate::secrets::find_secrets;

fn rx(s: &str) -> Regex {
    Regex::new(s).expect("sensitivity regexes are valid")
}

/// Values that make a text `sensitive`: (kind, pattern, the capture group holding the value).
static SENSITIVE: LazyLock<Vec<(&'static str, Regex, usize)>> = LazyLock::new(|| {
    vec![
        ("ssn", rx(r"\b(\d{3}-\d{2}-\d{4})\b"), 1),
        (
            "iban",
            rx(r"\b([A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){3,7}(?: ?[A-Z0-9]{1,3})?)\b"),
            1,
        ),
        (
            "id-number",
            rx(
                r"(?i)\b(?:passport|driver'?s? licen[cs]e|licen[cs]e plate|national id|id card|identity card|social security|tax id|tax number|account|routing|sort code|medical record|insurance|personalausweis|reisepass|pasaporte|passeport|numero fiscal|steuer-?id)\s*(?:number|no\.?|num\.?|#|nummer|numero|número)?\s*(?:is|was|:|=|ist|es|est)?\s*([A-Z0-9][A-Z0-9 -]{4,}[A-Z0-9])",
            ),
            1,
        ),
    ]
});

/// Values that make a text `personal`.
static PERSONAL: LazyLock<Vec<(&'static str, Regex, usize)>> = LazyLock::new(|| {
    vec![
        (
            "email",
            rx(r"\b([A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,})\b"),
            1,
        ),
        (
            "phone",
            rx(
                r"(?i)\b(?:phone|tel|telephone|mobile|cell|whatsapp|telefon|telefono|téléphone|portable|handy)\b[^.\n\d+]{0,20}(\+?\d[\d ().-]{6,}\d)",
            ),
            1,
        ),
        (
            "phone",
            rx(r"(\+\d{1,3}[ .-]?\(?\d{1,4}\)?(?:[ .-]?\d{2,4}){2,4})\b"),
            1,
        ),
    ]
});

/// The sensitive or personal values of `text`: (kind, byte range), in order of the rules.
fn values(
    rules: &[(&'static str, Regex, usize)],
    text: &str,
) -> Vec<(&'static str, std::ops::Range<usize>)> {
    let mut out = Vec::new();
    for (kind, re, group) in rules {
        for c in re.captures_iter(text) {
            let Some(m) = c.get(*group) else { continue };
            // an identifier has digits: "account is closed" names no number
            let digits = m.as_str().chars().filter(char::is_ascii_digit).count();
            if *kind != "email" && digits < 5 {
                continue;
            }
            out.push((*kind, m.range()));
        }
    }
    out
}

/// How private `text` is, and the rule that decided (None for public).
pub fn memory_sensitivity(text: &str) -> (Sensitivity, Option<&'static str>) {
    let cleaned = clean(text);
    if let Some(s) = find_secrets(&cleaned).first() {
        return (Sensitivity::Secret, Some(s.kind));
    }
    if let Some((k, _)) = values(&SENSITIVE, &cleaned).first() {
        return (Sensitivity::Sensitive, Some(k));
    }
    if let Some((k, _)) = values(&PERSONAL, &cleaned).first() {
        return (Sensitivity::Personal, Some(k));
    }
    (Sensitivity::Public, None)
}

/// The words a question uses to ask for a value of `kind` (a kind [`memory_sensitivity`]
/// names): the memory contract's `sensitive_from` lets a high-sensitivity memory into a
/// question's retrieval only when the question says one of them (docs/memories.md). Secret
/// kinds have none: a secret is never shown.
pub fn kind_words(kind: &str) -> &'static [&'static str] {
    match kind {
        "email" => &["email", "mail", "contact"],
        "phone" => &["phone", "telephone", "mobile", "cell", "contact"],
        "ssn" => &["ssn", "social"],
        "iban" => &["iban", "bank", "account"],
        "id-number" => &[
            "passport",
            "licence",
            "license",
            "id",
            "tax",
            "account",
            "insurance",
            "medical",
        ],
        _ => &[],
    }
}

/// `text` (invisible characters removed, NFKC) with its secret values and its sensitive
/// identifiers replaced by `[REDACTED:<kind>]`: what a reader is shown of a flagged or
/// sensitive memory.
pub fn redact_private(text: &str) -> String {
    // over the text the sensitivity was judged on (invisible characters removed, NFKC):
    // an identifier spelled with a zero-width space or full-width digits is found there
    let t = crate::redact_secrets(&clean(text));
    let mut found = values(&SENSITIVE, &t);
    found.sort_by_key(|(_, r)| (r.start, std::cmp::Reverse(r.end)));
    let mut out = String::with_capacity(t.len());
    let mut at = 0;
    for (kind, r) in found {
        if r.start < at {
            continue;
        }
        out.push_str(&t[at..r.start]);
        out.push_str(&format!("[REDACTED:{kind}]"));
        at = r.end;
    }
    out.push_str(&t[at..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_follow_what_the_text_holds() {
        let cases = [
            ("Caroline went to a support group.", Sensitivity::Public),
            ("Melanie's favourite painter is Monet.", Sensitivity::Public),
            (
                "Caroline's e-mail is caro@example.org.",
                Sensitivity::Personal,
            ),
            ("Her phone number is 555 123 4567.", Sensitivity::Personal),
            ("Reach him at +44 20 7946 0958.", Sensitivity::Personal),
            ("John's SSN is 078-05-1120.", Sensitivity::Sensitive),
            ("Her passport number is X1234567.", Sensitivity::Sensitive),
            (
                "Pay to DE89 3704 0044 0532 0130 00 please.",
                Sensitivity::Sensitive,
            ),
            ("Tim's password is hunter2.", Sensitivity::Secret),
            ("The key is sk-live-abcdefgh12345678.", Sensitivity::Secret),
        ];
        for (text, want) in cases {
            assert_eq!(memory_sensitivity(text).0, want, "{text}");
        }
        // names of identifiers without a number, counts and dates are not identifiers
        for text in [
            "Jon closed his bank account last May.",
            "The museum had 10 000 000 visitors.",
            "They met on 2023-05-20 at 10:04.",
            "Her insurance is through work.",
        ] {
            assert_eq!(memory_sensitivity(text).0, Sensitivity::Public, "{text}");
        }
    }

    #[test]
    fn redaction_hides_secret_and_sensitive_values_only() {
        assert_eq!(
            redact_private("SSN 078-05-1120, e-mail a@b.org, password is hunter2"),
            "SSN [REDACTED:ssn], e-mail a@b.org, password is [REDACTED:password]"
        );
        assert_eq!(redact_private("Alice likes tea."), "Alice likes tea.");
    }

    /// What is judged sensitive is what is redacted: an identifier hidden by a zero-width
    /// space or written in full-width digits is rated on the cleaned text, so it must be
    /// redacted there too (it was shown whole).
    #[test]
    fn obfuscated_identifiers_are_redacted_where_they_were_found() {
        for t in [
            "SSN 078\u{200b}-05-1120 on file",
            "SSN \u{ff10}\u{ff17}\u{ff18}-05-1120 on file",
        ] {
            assert_eq!(memory_sensitivity(t).0, Sensitivity::Sensitive, "{t:?}");
            let shown = redact_private(t);
            assert!(shown.contains("[REDACTED:ssn]"), "{t:?} -> {shown:?}");
            assert!(!shown.contains("1120"), "{t:?} -> {shown:?}");
        }
    }

    #[test]
    fn every_personal_and_sensitive_kind_has_words() {
        for text in [
            "mail me at ann@example.org",
            "her phone is 0171 555 0199",
            "SSN 123-45-6789",
            "IBAN DE89 3704 0044 0532 0130 00",
            "passport number X1234567",
        ] {
            let (level, kind) = memory_sensitivity(text);
            assert!(level > Sensitivity::Public, "{text}");
            assert!(!kind_words(kind.unwrap()).is_empty(), "{text}: {kind:?}");
        }
        assert!(kind_words("password").is_empty());
    }
}
