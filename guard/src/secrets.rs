//! Secret values in free text (memories, hard cases, designer records): API keys and
//! tokens of well-known shapes, private-key blocks, card numbers that pass the Luhn check,
//! and a value given after a password-like word ("my password is hunter2", "Passwort:
//! Sommer2023!", "mot de passe est soleil123"). [`find_secrets`] reports them,
//! [`redact_secrets`] replaces each value with `[REDACTED:<kind>]` (the word before a
//! keyword value stays: "my password is [REDACTED:password]").
//!
//! A password-like word followed by an ordinary word is not a secret: "the password is
//! strong", "password reset", "password manager", "her secret to good pancakes".

use std::sync::LazyLock;

use regex::Regex;

fn rx(s: &str) -> Regex {
    Regex::new(s).expect("secret regexes are valid")
}

/// One secret value found in a text (byte range of the value in the scanned text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretMatch {
    pub kind: &'static str,
    pub start: usize,
    pub end: usize,
}

static SHAPED: LazyLock<Vec<(&'static str, Regex)>> = LazyLock::new(|| {
    vec![
        (
            "private-key",
            rx(
                r"-----BEGIN [A-Z ]*PRIVATE KEY-----(?:[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----|[A-Za-z0-9+/=\s]*)",
            ),
        ),
        (
            "api-key",
            rx(r"\b(?:sk|pk|rk)[-_](?:live|test|prod|proj|ant)[-_][A-Za-z0-9_\-]{8,}"),
        ),
        ("api-key", rx(r"\bsk-[A-Za-z0-9_\-]{16,}")),
        (
            "aws-key",
            rx(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b"),
        ),
        (
            "github-token",
            rx(r"\bgh[pousr]_[A-Za-z0-9]{20,}\b|\bgithub_pat_[A-Za-z0-9_]{20,}"),
        ),
        ("slack-token", rx(r"\bxox[abposr]-[A-Za-z0-9\-]{10,}")),
        ("google-api-key", rx(r"\bAIza[0-9A-Za-z_\-]{30,}")),
        (
            "jwt",
            rx(r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
        ),
        (
            "bearer-token",
            rx(r"(?i)\bbearer\s+[A-Za-z0-9._~+/\-]{16,}=*"),
        ),
    ]
});

/// Password-like words (any case, accents optional) followed by the value.
const KEYWORDS: &str = r"passwor[dt]s?|passwd|pwd|passcodes?|passphrases?|kennwort|mots? de passe|contrase[nñ]as?|senhas?|pins?|pin codes?|codes? pin|api[ _\-]?keys?|secret keys?|secrets?|access[ _\-]?tokens?|auth[ _\-]?tokens?|tokens?|claves?|cl[eé]s?|chiaves?|zugangscode|geheimzahl";

static KEYWORD_VALUE: LazyLock<Regex> = LazyLock::new(|| {
    rx(&format!(
        r#"(?i)\b(?:{KEYWORDS})\b(?:\s+(?:of|for|on|de|del|des|du|da|do|di|della|dello|von|vom|fur|für|fuer|zum|zur|pour|para|per|au|no|na|sur)\s+(?:the\s+|my\s+|his\s+|her\s+|la\s+|le\s+|les\s+|l'|el\s+|los\s+|las\s+|il\s+|lo\s+|o\s+|a\s+|os\s+|as\s+|der\s+|die\s+|das\s+|den\s+|dem\s+|sein\s+|seine\s+|ihr\s+|ihre\s+|mein\s+|meine\s+|son\s+|sa\s+|ses\s+|su\s+|sus\s+|suo\s+|sua\s+)?[\w'\-]+)?(?:\s*(?P<sep>\bis\b|\bwas\b|=|:|\bist\b|\bwar\b|\blautet\b|\best\b|\betait\b|était|\bes\b|\bera\b|é|è)\s*|\s+)(?:(?:set to|now|still|actually)\s+)?(?:["'“‘`](?P<q>[^"'”’`\n]{{1,64}})["'”’`]|(?P<u>[^\s"'“‘`]{{3,64}}))"#
    ))
});

/// Words that follow a password-like word without being its value.
const NOT_VALUES: &[&str] = &[
    // a rule after the colon ("If the user pastes an API key: don't save it")
    "don't",
    "dont",
    "don",
    "never",
    "do",
    "no",
    "nie",
    "niemals",
    "nicht",
    "ne",
    "jamais",
    "nunca",
    "non",
    "nao",
    "refuse",
    "decline",
    "ignore",
    "skip",
    "mask",
    "redact",
    "replace",
    "drop",
    "discard",
    "the",
    "a",
    "an",
    "not",
    "very",
    "too",
    "still",
    "now",
    "being",
    "been",
    "monthly",
    "weekly",
    "daily",
    "yearly",
    "annual",
    "free",
    "changed",
    "reset",
    "expired",
    "weak",
    "strong",
    "secure",
    "safe",
    "long",
    "short",
    "same",
    "different",
    "required",
    "needed",
    "wrong",
    "correct",
    "incorrect",
    "invalid",
    "valid",
    "missing",
    "lost",
    "forgotten",
    "stored",
    "saved",
    "hidden",
    "secret",
    "private",
    "set",
    "his",
    "her",
    "their",
    "my",
    "your",
    "our",
    "its",
    "this",
    "that",
    "these",
    "those",
    "and",
    "or",
    "for",
    "to",
    "of",
    "in",
    "on",
    "at",
    "by",
    "with",
    "from",
    "into",
    "about",
    "manager",
    "managers",
    "hint",
    "hints",
    "reset",
    "change",
    "changes",
    "policy",
    "rules",
    "protected",
    "based",
    "free",
    "less",
    "only",
    "also",
    "just",
    "never",
    "always",
    "it",
    "them",
    "there",
    "here",
    "what",
    "which",
    "who",
    "when",
    "where",
    "how",
    "why",
    "unknown",
    "updated",
    "shared",
    "written",
    "case",
    "sensitive",
    "complex",
    "simple",
    "easy",
    "hard",
    "good",
    "bad",
    "new",
    "old",
    "same",
    "required",
    "locked",
    "blocked",
    "useless",
    "ready",
    "pad",
    "pads",
    "number",
    "code",
    "holder",
    "holders",
    "fatigue",
    "generator",
    "der",
    "die",
    "das",
    "ein",
    "eine",
    "nicht",
    "le",
    "la",
    "les",
    "un",
    "une",
    "pas",
    "el",
    "los",
    "las",
    "uno",
    "una",
    "no",
    "il",
    "lo",
    "gli",
    "o",
    "os",
    "um",
    "uma",
    "de",
    "du",
    "des",
    "del",
    "da",
    "do",
    "und",
    "et",
    "y",
    "e",
];

fn luhn(digits: &[u8]) -> bool {
    let mut sum = 0u32;
    for (i, d) in digits.iter().rev().enumerate() {
        let mut v = *d as u32;
        if i % 2 == 1 {
            v *= 2;
            if v > 9 {
                v -= 9;
            }
        }
        sum += v;
    }
    sum.is_multiple_of(10)
}

/// A value written straight after the keyword (no "is" / ":") must look like one: letters
/// and digits mixed, or a symbol among letters, at least six characters.
fn looks_like_secret(v: &str) -> bool {
    let n = v.chars().count();
    let letters = v.chars().any(|c| c.is_alphabetic());
    let digits = v.chars().any(|c| c.is_ascii_digit());
    let symbols = v.chars().any(|c| !c.is_alphanumeric());
    n >= 6 && letters && (digits || symbols)
}

/// Every secret value in `text` (in order, not overlapping).
pub fn find_secrets(text: &str) -> Vec<SecretMatch> {
    let shaped = SHAPED.iter().flat_map(|(kind, re)| {
        re.find_iter(text).map(move |m| SecretMatch {
            kind,
            start: m.start(),
            end: m.end(),
        })
    });
    // the first of overlapping candidates wins: shaped values, then cards, then keywords
    let mut found: Vec<SecretMatch> = Vec::new();
    for m in shaped
        .chain(card_numbers(text))
        .chain(KEYWORD_VALUE.captures_iter(text).filter_map(keyword_value))
    {
        if !found.iter().any(|f| f.start < m.end && m.start < f.end) {
            found.push(m);
        }
    }
    found.sort_by_key(|m| m.start);
    found
}

/// Runs of 13 to 19 digits (spaces or dashes between them allowed) that pass the Luhn check.
fn card_numbers(text: &str) -> impl Iterator<Item = SecretMatch> + '_ {
    static CARD: LazyLock<Regex> = LazyLock::new(|| rx(r"\b(?:\d[ \-]?){12,18}\d\b"));
    CARD.find_iter(text).filter_map(|m| {
        let digits: Vec<u8> = m
            .as_str()
            .bytes()
            .filter(u8::is_ascii_digit)
            .map(|b| b - b'0')
            .collect();
        ((13..=19).contains(&digits.len()) && luhn(&digits)).then(|| SecretMatch {
            kind: "card-number",
            start: m.start(),
            end: m.end(),
        })
    })
}

/// The value named after a secret keyword ("password: ...", "PIN 4711"), unless it is no
/// value at all.
fn keyword_value(c: regex::Captures<'_>) -> Option<SecretMatch> {
    let (val, quoted) = match (c.name("q"), c.name("u")) {
        (Some(q), _) => (q, true),
        (None, Some(u)) => (u, false),
        _ => return None,
    };
    let trimmed = trim_value(val.as_str());
    if trimmed.is_empty() || !is_value(trimmed, quoted, c.name("sep").is_some()) {
        return None;
    }
    let whole = c.get(0)?;
    // "Redact secrets: replace anything ...", "Passwords: never store them": a plural
    // keyword and a colon head a rule, when a word of letters follows and the sentence
    // goes on; a single value is not introduced by a plural ("passwords: hunter2" still is)
    let head = whole.as_str()[..val.start() - whole.start()].trim_end();
    if !quoted
        && head.ends_with(':')
        && head.trim_end_matches(':').trim_end().ends_with('s')
        && trimmed.chars().all(char::is_alphabetic)
    {
        return None;
    }
    // "my token for the bus", "the code for the gym locker": a non-secret sense of the word
    static NOT_SECRET_SENSE: LazyLock<Regex> = LazyLock::new(|| {
        rx(
            r"(?i)^\w+\s+(?:for|on|de|del|du|da|do|di|per|fur|für|pour|para)\s+(?:the\s+|my\s+|his\s+|her\s+|la\s+|le\s+|l'|el\s+|il\s+|o\s+|a\s+|der\s+|die\s+|das\s+|den\s+|dem\s+)?(?:bus|buses|train|trains|tram|metro|subway|underground|transit|ferry|arcade|laundry|laundromat|parking|car ?wash|game|casino|fare|ticket|bahn|zug|stra(?:ss|ß)enbahn|autobus|tren|treno|trem|onibus|lavanderia|laverie|parking|parcheggio|estacionamento|gettone)\b",
        )
    });
    if NOT_SECRET_SENSE.is_match(whole.as_str()) {
        return None;
    }
    Some(SecretMatch {
        kind: keyword_kind(whole.as_str()),
        start: val.start(),
        end: val.start() + trimmed.len(),
    })
}

/// `raw` without the punctuation that ends the sentence; a trailing "!" that belongs to the
/// value ("Passwort: Sommer2023!") stays.
fn trim_value(raw: &str) -> &str {
    // "[token removed]": the end of a placeholder
    let trimmed = raw.trim_end_matches(['.', ',', ';', ')', '!', '?', ']', '>', '}']);
    if raw.ends_with('!') && trimmed.chars().any(|c| c.is_ascii_digit()) {
        raw.trim_end_matches(['.', ',', ';', ')'])
    } else {
        trimmed
    }
}

/// Whether the (trimmed, non-empty) word after a keyword is a value: not a pronoun or a
/// placeholder word, not a state of the secret, and, written straight after the keyword
/// with no quotes, shaped like a secret.
fn is_value(trimmed: &str, quoted: bool, separated: bool) -> bool {
    let lower = trimmed.to_lowercase();
    // "les mots de passe eux-mêmes", "the passwords themselves": a pronoun, not a value
    const REFLEXIVE: &[&str] = &[
        "eux",
        "elles",
        "lui-m",
        "elle-m",
        "itself",
        "themselves",
        "selbst",
        "mism",
        "stess",
        "propri",
        "mesm",
    ];
    // only a bare word of letters: "Mismatch99", "password: mesmerize77" are values
    let pronoun = !quoted
        && !separated
        && lower.chars().all(|c| c.is_alphabetic() || c == '-')
        && REFLEXIVE.iter().any(|r| lower.starts_with(r));
    if NOT_VALUES.contains(&lower.as_str()) || pronoun {
        return false;
    }
    // "was stolen", "is compromised", "was changing": a state of the secret, not its value
    let word = lower.chars().all(char::is_alphabetic);
    if !quoted && word && ["ed", "en", "ing"].iter().any(|s| lower.ends_with(s)) {
        return false;
    }
    // "tokens of appreciation Melanie gave": a word with no digit or symbol is only a
    // value after an explicit "is" / ":"
    quoted || separated || looks_like_secret(trimmed)
}

/// The kind of secret a keyword match names, from its first word.
fn keyword_kind(whole: &str) -> &'static str {
    let kw = whole.split_whitespace().next().unwrap_or("").to_lowercase();
    if kw.starts_with("pin") || kw.starts_with("code") || kw.contains("geheimzahl") {
        "pin"
    } else if kw.starts_with("api")
        || kw.starts_with("secret")
        || kw.starts_with("cl")
        || kw.starts_with("chiave")
    {
        "key"
    } else if kw.starts_with("token") || kw.starts_with("access") || kw.starts_with("auth") {
        "token"
    } else {
        "password"
    }
}

/// `text` with every secret value replaced by `[REDACTED:<kind>]`.
pub fn redact_secrets(text: &str) -> String {
    let found = find_secrets(text);
    if found.is_empty() {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for m in found {
        out.push_str(&text[at..m.start]);
        out.push_str(&format!("[REDACTED:{}]", m.kind));
        at = m.end;
    }
    out.push_str(&text[at..]);
    out
}

/// The secret values of `texts` (kind, value), for redacting them wherever else they occur
/// ("It is hunter2, right?" after "my password is hunter2" elsewhere in the same record).
pub fn secret_values<'a>(texts: impl IntoIterator<Item = &'a str>) -> Vec<(&'static str, String)> {
    let mut out: Vec<(&'static str, String)> = Vec::new();
    for t in texts {
        for m in find_secrets(t) {
            let v = t[m.start..m.end].to_string();
            if v.chars().count() >= 4 && !out.iter().any(|(_, x)| *x == v) {
                out.push((m.kind, v));
            }
        }
    }
    // longest first, so a value inside another is not replaced first
    out.sort_by_key(|(_, v)| std::cmp::Reverse(v.len()));
    out
}

/// [`redact_secrets`], then every occurrence of a `known` value replaced as well.
pub fn redact_with(text: &str, known: &[(&'static str, String)]) -> String {
    let mut out = redact_secrets(text);
    for (kind, v) in known {
        if out.contains(v.as_str()) {
            out = out.replace(v.as_str(), &format!("[REDACTED:{kind}]"));
        }
    }
    out
}

/// The first secret value of `text` that is one by its shape (an API key or token format, a
/// private-key block with a key in it, a card number that passes the Luhn check), not only by
/// a keyword before it: a skill text's words after "password:" are instructions.
pub fn shaped_secret(text: &str) -> Option<&'static str> {
    // a private-key header alone ("discard any '-----BEGIN PRIVATE KEY-----' block") names
    // the shape without a key in it
    SHAPED
        .iter()
        .find(|(kind, re)| {
            re.find_iter(text).any(|m| {
                *kind != "private-key" || m.as_str().split_whitespace().any(|w| w.len() >= 40)
            })
        })
        .map(|(kind, _)| *kind)
        .or_else(|| card_numbers(text).next().map(|m| m.kind))
}

/// The secrets stage: a live-looking secret value in a skill text ([`shaped_secret`]).
pub struct SecretScanner;

impl crate::Scanner for SecretScanner {
    fn stage(&self) -> crate::Stage {
        crate::Stage::Secrets
    }

    fn scan(&self, doc: &crate::Document) -> Option<crate::Finding> {
        let cased = doc.views.first().and_then(|v| v.cased.as_deref())?;
        let views = std::iter::once(("plain".to_string(), cased)).chain(
            doc.views
                .iter()
                .skip(1)
                .filter_map(|v| Some((crate::Document::view_name(v), v.cased.as_deref()?))),
        );
        for (view, t) in views {
            if let Some(kind) = shaped_secret(t) {
                return Some(crate::Finding {
                    rule: crate::RuleId::SecretValue,
                    category: crate::Category::Secrets,
                    stage: crate::Stage::Secrets,
                    view,
                    evidence: format!("a {kind} value"),
                });
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_found_and_redacted() {
        assert_eq!(
            redact_secrets("my password is hunter2"),
            "my password is [REDACTED:password]"
        );
        assert_eq!(
            redact_secrets("key sk-live-abcdef1234567890XYZ, ok"),
            "key [REDACTED:api-key], ok"
        );
        assert_eq!(
            redact_secrets("Mein Passwort ist Sommer2023!"),
            "Mein Passwort ist [REDACTED:password]"
        );
        assert_eq!(
            redact_secrets("card 4111 1111 1111 1111 exp"),
            "card [REDACTED:card-number] exp"
        );
        assert_eq!(redact_secrets("PIN: 4821."), "PIN: [REDACTED:pin].");
        assert!(!find_secrets("AKIAIOSFODNN7EXAMPLE").is_empty());
        // a qualifier between the word and the value, in each language
        for t in [
            "Sein Passwort für das Firmenkonto lautet Sommer2023!x.",
            "Son mot de passe pour la messagerie est Soleil#4482.",
            "Su contraseña para el banco es Gato-Azul-77.",
            // a value that begins like a reflexive pronoun ("mism-", "mesm-") is a value
            "Test login, password: mesmerize77",
            "The demo account uses password Mismatch99 for testing.",
        ] {
            assert!(!find_secrets(t).is_empty(), "{t}");
        }
        // ... while the pronoun itself is not
        assert!(find_secrets("Never store the passwords themselves.").is_empty());
    }

    #[test]
    fn known_values_are_redacted_everywhere() {
        let known = secret_values(["Bob: my password is hunter2", "nothing here"]);
        assert_eq!(known, vec![("password", "hunter2".to_string())]);
        assert_eq!(
            redact_with("It is hunter2, right?", &known),
            "It is [REDACTED:password], right?"
        );
    }

    #[test]
    fn events_and_ordinary_words_are_not_secrets() {
        for t in [
            "Jon changed his email password on 3 May.",
            "The password is strong and long.",
            "Andrew's password manager reminded him.",
            "Her secret to good pancakes is buttermilk.",
            "Tokens of appreciation were given.",
            "Order number 112-4456-7789 arrived.",
            "Deborah's PIN pad broke.",
            "Call 555-0142 tomorrow.",
            // a placeholder's end
            "Replace each token with [token removed] before storing.",
        ] {
            assert!(find_secrets(t).is_empty(), "{t}: {:?}", find_secrets(t));
        }
    }
}
