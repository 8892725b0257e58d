//! The scripted oracle's rules for the reading methods' prompts (`trainer/prompts/reader.*`,
//! see [`crate::readers`]): **a test and demo tool, not a model**. It reads the locker facts
//! ("The code of locker L is C.") of the synthetic task the way a capable model would, so
//! that a Chain-of-Notes or ReadAgent evaluation on the synthetic task exercises every step
//! (retrieve, note, answer; paginate, gist, look up, answer) with a known right answer.
//! Pure: the reply is a function of the prompt; None for any other prompt.

/// The locker facts in `text`, in order, each as one sentence.
fn facts(text: &str) -> Vec<String> {
    let needle = "The code of locker ";
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find(needle) {
        let tail = &rest[at..];
        let end = tail.find('.').map_or(tail.len(), |i| i + 1);
        let fact = tail[..end].to_string();
        if !out.contains(&fact) {
            out.push(fact);
        }
        rest = &tail[end.min(tail.len())..];
    }
    out
}

/// The locker the question of `prompt` asks about (`... locker L?`), if any.
fn asked_locker(prompt: &str) -> Option<&str> {
    let q = prompt.rsplit("What is the code of locker ").next()?;
    if q.len() == prompt.len() {
        return None;
    }
    q.split('?').next()
}

/// A Chain-of-Notes request: a note per passage, the fact it holds about the asked locker,
/// else "irrelevant".
fn notes(prompt: &str) -> Option<String> {
    if !prompt.contains("NOTE: irrelevant") || !prompt.contains("Passage [1]:") {
        return None;
    }
    let locker = asked_locker(prompt)?;
    let mut lines = Vec::new();
    for (i, block) in prompt.split("Passage [").skip(1).enumerate() {
        let wanted = format!("The code of locker {locker} is ");
        let note = facts(block)
            .into_iter()
            .find(|f| f.starts_with(&wanted))
            .unwrap_or_else(|| "irrelevant".to_string());
        lines.push(format!("[{}] NOTE: {note}", i + 1));
    }
    Some(lines.join("\n"))
}

/// A ReadAgent request: the first break label offered, a gist made of the page's facts, or
/// the page whose gist holds the asked locker's fact.
fn read_agent(prompt: &str) -> Option<String> {
    if prompt.contains("Reply with the label's number only") {
        return Some("1".into());
    }
    if prompt.contains("Shorten this page") {
        let page = prompt.split("Shorten this page").next().unwrap_or("");
        let f = facts(page);
        return Some(if f.is_empty() {
            "Small talk only.".into()
        } else {
            f.join(" ")
        });
    }
    if prompt.contains("Which pages would you re-read") {
        let locker = asked_locker(prompt)?;
        let wanted = format!("The code of locker {locker} is ");
        let page = prompt
            .split("<Page ")
            .skip(1)
            .position(|g| g.contains(&wanted))
            .map_or(0, |i| i + 1);
        return Some(page.to_string());
    }
    None
}

/// The oracle's reply to a reading method's prompt; None for any other prompt.
pub fn reply(prompt: &str) -> Option<String> {
    notes(prompt).or_else(|| read_agent(prompt))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_name_the_asked_locker_only() {
        let p = "Question: What is the code of locker L1X2?\n\nPassage [1]:\nDATE\n[syn-1-2] Alex said, \"The code of locker L1X2 is teal.\"\n\nPassage [2]:\nSam: nice day\n\n[number] NOTE: irrelevant";
        assert_eq!(
            reply(p).unwrap(),
            "[1] NOTE: The code of locker L1X2 is teal.\n[2] NOTE: irrelevant"
        );
    }

    #[test]
    fn gists_keep_the_facts_and_look_up_finds_the_page() {
        let gist = reply("Page 2:\n\nAlex said, \"The code of locker L0X1 is red.\"\nSam: hi\n\nShorten this page to a few sentences.").unwrap();
        assert_eq!(gist, "The code of locker L0X1 is red.");
        let look = "<Page 1>\nSmall talk only.\n\n<Page 2>\nThe code of locker L0X1 is red.\n\nQuestion: What is the code of locker L0X1?\n\nWhich pages would you re-read in full";
        assert_eq!(reply(look).unwrap(), "2");
        assert_eq!(
            reply("Reply with the label's number only (one of 1, 2)").unwrap(),
            "1"
        );
        assert!(reply("an executor prompt").is_none());
    }
}
