//! The scripted executor's rule for real conversations (LoCoMo and the like, run with
//! `backend = "scripted-synthetic"`): **a test and demo tool, not a model**. An executor
//! prompt whose text chunk holds `NAME said, "..."` turns gets one INSERT per turn of at
//! least four words, written as `NAME: <the turn's first sentence>`. When the prompt asks for
//! typed memories (`MEMORY_TYPE:` in its block format) each text gets a type from a few cue
//! words and confidence 0.8; when it asks for a scope (`SCOPE:`) each text is scoped to its
//! speaker as a user (`user:NAME`). Pure: the reply is a function of the prompt.

/// At most this many memories per span.
const MAX_PER_SPAN: usize = 8;

/// The reply to an executor prompt that holds conversation turns; None for any other prompt.
pub fn executor_reply(prompt: &str) -> Option<String> {
    if !prompt.contains("MEMORY_INDEX") {
        return None;
    }
    let chunk = text_chunk(prompt);
    let typed = prompt.contains("MEMORY_TYPE:");
    let scoped = prompt.contains("SCOPE:");
    let blocks: Vec<String> = chunk
        .lines()
        .filter_map(turn)
        .filter(|(_, said)| said.split_whitespace().count() >= 4)
        .take(MAX_PER_SPAN)
        .map(|(who, said)| {
            let sentence = first_sentence(said);
            let mut b = format!("ACTION: INSERT\nMEMORY_ITEM: {who}: {sentence}");
            if typed {
                b.push_str(&format!(
                    "\nMEMORY_TYPE: {}\nCONFIDENCE: 0.8",
                    memory_type(sentence)
                ));
            }
            if scoped {
                b.push_str(&format!("\nSCOPE: user:{who}"));
            }
            b
        })
        .collect();
    if blocks.is_empty() {
        return (!turns_of(chunk).is_empty() || chunk.contains(" said, \""))
            .then(|| "ACTION: NOOP".to_string());
    }
    Some(blocks.join("\n\n"))
}

/// The prompt's text chunk: from a `Text chunk:` line to the `Retrieved memories` heading
/// (the default template), else the whole prompt.
fn text_chunk(prompt: &str) -> &str {
    let start = prompt
        .find("Text chunk:")
        .map_or(0, |i| i + "Text chunk:".len());
    let rest = &prompt[start..];
    let end = rest.find("\nRetrieved memories").unwrap_or(rest.len());
    &rest[..end]
}

fn turns_of(chunk: &str) -> Vec<(&str, &str)> {
    chunk.lines().filter_map(turn).collect()
}

/// `NAME said, "TEXT"` (with or without LoCoMo's ` and shared ...` caption) -> (NAME, TEXT).
fn turn(line: &str) -> Option<(&str, &str)> {
    let (who, rest) = line.trim().split_once(" said, \"")?;
    let who = who.trim();
    if who.is_empty() || who.split_whitespace().count() > 3 {
        return None;
    }
    let said = match rest.rfind("\" and shared ") {
        Some(i) => &rest[..i],
        None => rest.strip_suffix('"').unwrap_or(rest),
    };
    Some((who, said.trim()))
}

/// Up to the first sentence end (`.`, `!`, `?`), at most 200 characters.
fn first_sentence(s: &str) -> &str {
    let end = s
        .char_indices()
        .find(|&(i, c)| matches!(c, '.' | '!' | '?') && i > 10)
        .map_or(s.len(), |(i, c)| i + c.len_utf8());
    let end = s
        .char_indices()
        .map(|(i, _)| i)
        .take_while(|&i| i <= 200)
        .last()
        .map_or(end, |cap| if end > 200 { cap } else { end });
    s[..end].trim()
}

/// The memory type a few cue words suggest (the governance document's names).
pub fn memory_type(text: &str) -> &'static str {
    let t = format!(" {} ", text.to_lowercase());
    let has = |words: &[&str]| words.iter().any(|w| t.contains(w));
    if has(&[" how to ", " steps ", " recipe ", " tip ", " first you "]) {
        "procedural"
    } else if has(&[
        " love ",
        " loves ",
        " like ",
        " likes ",
        " enjoy",
        " favorite ",
        " favourite ",
        " prefer",
        " hate ",
    ]) {
        "preference"
    } else if has(&[
        " my mom",
        " my dad",
        " my friend",
        " my husband",
        " my wife",
        " my kids",
        " my son",
        " my daughter",
        " my sister",
        " my brother",
        " my family",
        " my partner",
    ]) {
        "graph"
    } else if has(&[
        " feel ",
        " felt ",
        " realized ",
        " realised ",
        " learned ",
        " proud ",
        " grateful ",
        " i think ",
    ]) {
        "reflective"
    } else if has(&[
        " yesterday",
        " last week",
        " last night",
        " today",
        " went ",
        " visited ",
        " attended ",
        " ago",
        " just ",
    ]) {
        "episodic"
    } else {
        "semantic"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROMPT: &str = "You maintain a memory bank.\n\nText chunk:\nDATE: 8 May 2023\nCaroline said, \"I went to a LGBTQ support group yesterday and it was so powerful.\"\nMelanie said, \"Wow!\"\nMelanie said, \"I love painting landscapes with my kids.\" and shared a photo.\n\nRetrieved memories (numbered from 0):\n(no memory was retrieved)\n\nUPDATE block:\nMEMORY_INDEX: <0-based index>\n";

    #[test]
    fn each_turn_becomes_a_memory_typed_and_scoped_only_when_asked() {
        let plain = executor_reply(PROMPT).unwrap();
        assert_eq!(
            plain,
            "ACTION: INSERT\nMEMORY_ITEM: Caroline: I went to a LGBTQ support group yesterday and it was so powerful.\n\nACTION: INSERT\nMEMORY_ITEM: Melanie: I love painting landscapes with my kids."
        );
        let asked = format!("{PROMPT}MEMORY_TYPE: <...>\nSCOPE: <...>\n");
        let r = executor_reply(&asked).unwrap();
        assert!(r.contains("yesterday and it was so powerful.\nMEMORY_TYPE: episodic\nCONFIDENCE: 0.8\nSCOPE: user:Caroline"), "{r}");
        assert!(
            r.contains(
                "with my kids.\nMEMORY_TYPE: preference\nCONFIDENCE: 0.8\nSCOPE: user:Melanie"
            ),
            "{r}"
        );
        // not an executor prompt, or no turn: no rule reply
        assert_eq!(executor_reply("What is the code of locker L0X0?"), None);
        assert_eq!(
            executor_reply("MEMORY_INDEX\nText chunk:\nno turns here"),
            None
        );
        assert_eq!(
            executor_reply("MEMORY_INDEX\nText chunk:\nA said, \"Hi!\"\n").as_deref(),
            Some("ACTION: NOOP")
        );
    }

    #[test]
    fn cue_words_pick_the_type() {
        assert_eq!(memory_type("My sister lives in Boston."), "graph");
        assert_eq!(memory_type("I felt proud of the kids."), "reflective");
        assert_eq!(memory_type("The museum opens at nine."), "semantic");
        assert_eq!(memory_type("Here is how to fix the bike."), "procedural");
    }
}
