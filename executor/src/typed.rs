//! Typed and scoped memories. With `executor.typed_memories = true` the executor prompt asks
//! for a `MEMORY_TYPE:` (one of the seven types: episodic, semantic, preference, procedural,
//! reflective, graph, environment; the five earlier names still read) and a `CONFIDENCE:`
//! (0 to 1) line after each memory text; with `executor.scoped_memories = true`, for a
//! `SCOPE:` line (`user:ID`, `org:ID`, `project:ID`, `agent:ID`, comma-separated; a bare id
//! is a user; `none` is shared). The reference's reply format has none of them, and the
//! reference parse ([`crate::parse_response`]) reads them as part of the text before them; so
//! they are taken out of the parsed text here, after the reference parse, and never when the
//! options are off (reproduction prompts do not ask for them).

use memskill_core::{MemoryType, Scope};

/// The stated type, confidence and scope of one memory text.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MemoryMeta {
    pub kind: Option<MemoryType>,
    pub confidence: Option<f32>,
    pub scope: Option<Scope>,
}

/// Which lines [`split_meta_with`] takes out of a memory text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MetaFields {
    /// `MEMORY_TYPE:` / `TYPE:` and `CONFIDENCE:` (`executor.typed_memories`).
    pub typed: bool,
    /// `SCOPE:` (`executor.scoped_memories`).
    pub scoped: bool,
}

/// Split `MEMORY_TYPE:` / `TYPE:` and `CONFIDENCE:` lines (any case; `:` or `=`) out of a
/// parsed memory text (the typed fields only, see [`split_meta_with`]).
pub fn split_meta(content: &str) -> (String, MemoryMeta, Vec<String>) {
    split_meta_with(
        content,
        MetaFields {
            typed: true,
            scoped: false,
        },
    )
}

/// Split the lines of `fields` out of a parsed memory text. Returns the text without them
/// and what they said; a value that does not read (an unknown type, a confidence that is not
/// a number in [0, 1], a scope of an unknown level) is a problem, and its line is still
/// removed.
pub fn split_meta_with(content: &str, fields: MetaFields) -> (String, MemoryMeta, Vec<String>) {
    let mut meta = MemoryMeta::default();
    let mut problems = Vec::new();
    let mut kept: Vec<&str> = Vec::new();
    for line in content.lines() {
        let Some((key, value)) = field(line, fields) else {
            kept.push(line);
            continue;
        };
        match key.as_str() {
            "memory_type" | "type" => match value.parse::<MemoryType>() {
                Ok(k) => meta.kind = Some(k),
                Err(e) => problems.push(e),
            },
            "scope" => match value.parse::<Scope>() {
                Ok(s) => meta.scope = Some(s),
                Err(e) => problems.push(e),
            },
            _ => match value.trim_end_matches('%').parse::<f32>() {
                Ok(c) => {
                    let c = if value.ends_with('%') { c / 100.0 } else { c };
                    if (0.0..=1.0).contains(&c) {
                        meta.confidence = Some(c);
                    } else {
                        problems.push(format!("confidence {value:?} is not within [0, 1]"));
                    }
                }
                Err(_) => problems.push(format!("confidence {value:?} is not a number")),
            },
        }
    }
    (kept.join("\n").trim().to_string(), meta, problems)
}

/// `KEY: value` for the keys of `fields`, else None.
fn field(line: &str, fields: MetaFields) -> Option<(String, &str)> {
    let t = line.trim().trim_start_matches(['-', '*']).trim_start();
    let cut = t.find([':', '='])?;
    let key = t[..cut]
        .trim()
        .to_ascii_lowercase()
        .replace([' ', '-'], "_");
    let wanted = match key.as_str() {
        "memory_type" | "type" | "confidence" => fields.typed,
        "scope" => fields.scoped,
        _ => false,
    };
    wanted.then(|| (key, t[cut + 1..].trim()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_lines_are_taken_out_of_the_text() {
        let (t, m, p) =
            split_meta("Alice moved to Tokyo in July 2023.\nMEMORY_TYPE: event\nCONFIDENCE: 0.9");
        assert_eq!(t, "Alice moved to Tokyo in July 2023.");
        assert_eq!(
            m,
            MemoryMeta {
                kind: Some(MemoryType::Episodic),
                confidence: Some(0.9),
                scope: None,
            }
        );
        assert!(p.is_empty());
        let (t, m, p) = split_meta("Bob likes tea.\n- type = Preference\nconfidence: 80%");
        assert_eq!(
            (t.as_str(), m.kind, m.confidence),
            ("Bob likes tea.", Some(MemoryType::Preference), Some(0.8))
        );
        assert!(p.is_empty());
        let (t, m, p) = split_meta("Carol's code is 42.\nMEMORY_TYPE: rumour\nCONFIDENCE: high");
        assert_eq!(
            (t.as_str(), m),
            ("Carol's code is 42.", MemoryMeta::default())
        );
        assert_eq!(p.len(), 2, "{p:?}");
        // plain texts (what the reference format gives) are untouched
        let plain = "The type of car is a sedan: blue.";
        assert_eq!(split_meta(plain).0, plain);
        assert_eq!(split_meta("Dana: likes chess").0, "Dana: likes chess");
        // the seven types read, and a SCOPE line is text unless scoped fields are asked for
        let (t, m, _) =
            split_meta("Ann reflected on it.\nMEMORY_TYPE: reflective\nSCOPE: user:Ann");
        assert_eq!(m.kind, Some(MemoryType::Reflective));
        assert_eq!(
            (t.as_str(), m.scope),
            ("Ann reflected on it.\nSCOPE: user:Ann", None)
        );
    }

    #[test]
    fn scope_lines_are_taken_out_only_when_asked_for() {
        let both = MetaFields {
            typed: true,
            scoped: true,
        };
        let (t, m, p) = split_meta_with(
            "Caroline went to a support group.\nMEMORY_TYPE: event\nCONFIDENCE: 0.8\nSCOPE: user:Caroline",
            both,
        );
        assert_eq!(t, "Caroline went to a support group.");
        assert_eq!(m.kind, Some(MemoryType::Episodic));
        assert_eq!(m.scope, Some(memskill_core::Scope::user("Caroline")));
        assert!(p.is_empty());
        let scoped_only = MetaFields {
            typed: false,
            scoped: true,
        };
        let (t, m, _) = split_meta_with(
            "Mel paints.\nTYPE: preference\nScope = Melanie",
            scoped_only,
        );
        assert_eq!(
            (t.as_str(), m.kind),
            ("Mel paints.\nTYPE: preference", None)
        );
        assert_eq!(m.scope.unwrap().user.as_deref(), Some("Melanie"));
        // shared, and a scope of an unknown level (a problem; the line still goes)
        let (_, m, _) = split_meta_with("x\nSCOPE: none", scoped_only);
        assert!(m.scope.unwrap().is_empty());
        let (t, m, p) = split_meta_with("x\nSCOPE: team:red", scoped_only);
        assert_eq!((t.as_str(), m.scope, p.len()), ("x", None, 1));
    }
}
