//! Typed memories (`executor.typed_memories = true`): the executor prompt then asks for a
//! `MEMORY_TYPE:` (event, fact, preference, relation, procedure) and a `CONFIDENCE:` (0 to 1)
//! line after each memory text. The reference's reply format has neither, and the reference
//! parse ([`crate::parse_response`]) reads them as part of the text before them; so they are
//! taken out of the parsed text here, after the reference parse, and never when the option is
//! off (reproduction prompts do not ask for them).

use memskill_core::MemoryType;

/// The stated type and confidence of one memory text.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct MemoryMeta {
    pub kind: Option<MemoryType>,
    pub confidence: Option<f32>,
}

/// Split `MEMORY_TYPE:` / `TYPE:` and `CONFIDENCE:` lines (any case; `:` or `=`) out of a
/// parsed memory text. Returns the text without them and what they said; a value that does
/// not read (an unknown type, a confidence that is not a number in [0, 1]) is a problem, and
/// its line is still removed.
pub fn split_meta(content: &str) -> (String, MemoryMeta, Vec<String>) {
    let mut meta = MemoryMeta::default();
    let mut problems = Vec::new();
    let mut kept: Vec<&str> = Vec::new();
    for line in content.lines() {
        let Some((key, value)) = field(line) else {
            kept.push(line);
            continue;
        };
        match key.as_str() {
            "memory_type" | "type" => match value.parse::<MemoryType>() {
                Ok(k) => meta.kind = Some(k),
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

/// `KEY: value` for the two typed keys, else None.
fn field(line: &str) -> Option<(String, &str)> {
    let t = line.trim().trim_start_matches(['-', '*']).trim_start();
    let cut = t.find([':', '='])?;
    let key = t[..cut]
        .trim()
        .to_ascii_lowercase()
        .replace([' ', '-'], "_");
    matches!(key.as_str(), "memory_type" | "type" | "confidence")
        .then(|| (key, t[cut + 1..].trim()))
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
                kind: Some(MemoryType::Event),
                confidence: Some(0.9)
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
    }
}
