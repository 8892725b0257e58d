//! Prompts: the skill-conditioned executor prompt and the per-dataset answering prompts.

use memskill_core::{MemoryItem, Message, Query, Skill, Span};

/// What kind of memory the executor maintains: facts from conversations and documents, or
/// procedural tips from agent trajectories (ALFWorld).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MemoryDomain {
    #[default]
    Conversation,
    Procedural,
}

impl MemoryDomain {
    /// The domain of a dataset name (`alfworld` is procedural, everything else conversational).
    pub fn of_dataset(dataset: &str) -> MemoryDomain {
        if dataset == "alfworld" {
            MemoryDomain::Procedural
        } else {
            MemoryDomain::Conversation
        }
    }

    fn system(self) -> &'static str {
        match self {
            MemoryDomain::Conversation => "You maintain the long-term memory of a conversational assistant. You read a new piece of the \
conversation, look at the memories already stored that seem related, and decide how memory should change. Follow \
the skills you are given: each skill says which kind of operation it performs and how. Only use operations that \
one of the given skills allows. Write memories as short, self-contained facts in the third person, with names \
instead of pronouns and with absolute dates when the text gives or implies them.",
            MemoryDomain::Procedural => "You maintain the procedural memory of an agent that acts in a household text game. \
You read expert trajectories (the task, then ACTION / OBSERVATION lines, then whether the task succeeded), look at \
the memories already stored that seem related, and decide how memory should change. Follow the skills you are \
given: each skill says which kind of operation it performs and how. Only use operations that one of the given \
skills allows. Write memories as short, reusable, actionable tips for future tasks of the same kind: which steps a \
task type needs and in what order, where objects are usually found, how receptacles and appliances are used. Do not \
copy whole trajectories.",
        }
    }
}

/// The executor prompt: the span, the retrieved memories numbered from 0, and the selected
/// skills (name, description, allowed action, instructions), asking for action blocks.
pub fn executor_messages(span: &Span, retrieved: &[&str], skills: &[&Skill]) -> Vec<Message> {
    executor_messages_in(MemoryDomain::Conversation, span, retrieved, skills)
}

/// [`executor_messages`] for a [`MemoryDomain`] (the system prompt differs, the format not).
pub fn executor_messages_in(
    domain: MemoryDomain,
    span: &Span,
    retrieved: &[&str],
    skills: &[&Skill],
) -> Vec<Message> {
    let system = domain.system();
    let mut u = String::new();
    u.push_str("## New text\n");
    u.push_str(span.text.trim());
    u.push_str("\n\n## Retrieved memories\n");
    if retrieved.is_empty() {
        u.push_str("(none)\n");
    } else {
        for (i, m) in retrieved.iter().enumerate() {
            u.push_str(&format!("[{i}] {}\n", m.trim()));
        }
    }
    u.push_str("\n## Skills to apply\n");
    for s in skills {
        u.push_str(&format!(
            "### {} (action: {})\n{}\n{}\n\n",
            s.name,
            s.action.as_str().to_uppercase(),
            s.description.trim(),
            s.instructions.trim()
        ));
    }
    u.push_str(
        "## Output format\nReply only with action blocks, one per operation, separated by a blank line:\n\n\
ACTION: INSERT\nMEMORY_ITEM: <a new fact>\n\n\
ACTION: UPDATE\nMEMORY_INDEX: <number of a retrieved memory>\nUPDATED_MEMORY: <its corrected or completed text>\n\n\
ACTION: DELETE\nMEMORY_INDEX: <number of a retrieved memory>\n\n\
ACTION: NOOP\n\n\
MEMORY_INDEX refers to the bracketed numbers above. Use NOOP alone when nothing should change.",
    );
    vec![Message::system(system), Message::user(u)]
}

/// Which answering prompt / extraction rule to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AnswerStyle {
    Locomo,
    LongMemEval,
    HotpotQa,
}

impl std::str::FromStr for AnswerStyle {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "locomo" => Ok(Self::Locomo),
            "longmemeval" | "lme" => Ok(Self::LongMemEval),
            "hotpotqa" | "hotpot" => Ok(Self::HotpotQa),
            other => Err(format!(
                "unknown answer style {other:?}: expected locomo, longmemeval or hotpotqa"
            )),
        }
    }
}

/// Default number of memories retrieved for answering.
pub const DEFAULT_ANSWER_TOP_R: usize = 20;

fn memory_date(m: &MemoryItem) -> Option<&str> {
    // Spans carry a `DATE:` header; memories written from them usually mention the date
    // themselves, so we only surface the span id for ordering.
    m.source_spans.first().map(String::as_str)
}

/// The answering prompt for a query over retrieved memories.
pub fn answer_messages(
    style: AnswerStyle,
    query: &Query,
    memories: &[&MemoryItem],
) -> Vec<Message> {
    let mut ctx = String::new();
    for (i, m) in memories.iter().enumerate() {
        ctx.push_str(&format!("[{i}] {}\n", m.content.trim()));
    }
    if memories.is_empty() {
        ctx.push_str("(no memories)\n");
    }
    match style {
        AnswerStyle::Locomo => {
            let user = format!(
                "Memories about a conversation between two people:\n{ctx}\n\
Answer the question using the memories. Reply with a short phrase (a few words), reusing the exact words of the \
memories where possible; give dates as they appear (e.g. \"7 May 2023\"). If the memories do not contain the answer, \
reply \"Not mentioned in the conversation\".\n\nQuestion: {}\nShort answer:",
                query.question.trim()
            );
            vec![Message::user(user)]
        }
        AnswerStyle::LongMemEval => {
            let mut hist = String::new();
            for (i, m) in memories.iter().enumerate() {
                let src = memory_date(m).unwrap_or("");
                hist.push_str(&format!(
                    "### Memory {i} (from {src})\n{}\n\n",
                    m.content.trim()
                ));
            }
            if memories.is_empty() {
                hist.push_str("(no memories)\n");
            }
            let date = query.date.as_deref().unwrap_or("unknown");
            let user = format!(
                "Here are memories extracted from the user's history of chats with you, with the dates they \
mention:\n\n{hist}\nCurrent date: {date}\nQuestion: {}\n\nAnswer the question based on the relevant chat history. \
If the history does not contain the information, say so. Answer concisely.",
                query.question.trim()
            );
            vec![Message::user(user)]
        }
        AnswerStyle::HotpotQa => {
            let user = format!(
                "Facts:\n{ctx}\nAnswer the question using the facts. Think briefly if needed, then give the final \
answer as a short span (an entity, a date, a number, or yes/no) inside <answer></answer> tags.\n\nQuestion: {}",
                query.question.trim()
            );
            vec![Message::user(user)]
        }
    }
}

/// Extract the final answer from a model reply: the last `<answer>...</answer>` when present
/// (any style), else for HotpotQA an `Answer:` line, else the first non-empty line with
/// `Answer:` prefixes removed.
pub fn extract_answer(style: AnswerStyle, text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    if let Some(start) = lower.rfind("<answer>") {
        let after = start + "<answer>".len();
        let end = lower[after..]
            .find("</answer>")
            .map(|e| after + e)
            .unwrap_or(text.len());
        if text.is_char_boundary(after) && text.is_char_boundary(end) {
            let a = text[after..end].trim();
            if !a.is_empty() {
                return a.to_string();
            }
        }
    }
    let strip_prefix = |l: &str| -> String {
        let t = l.trim().trim_start_matches(['*', '#', '-', ' ']);
        let tl = t.to_ascii_lowercase();
        for p in ["final answer:", "short answer:", "answer:"] {
            if tl.starts_with(p) && t.is_char_boundary(p.len()) {
                return t[p.len()..].trim().trim_matches('*').trim().to_string();
            }
        }
        t.trim_matches('*').trim().to_string()
    };
    if style == AnswerStyle::HotpotQa {
        if let Some(l) = text
            .lines()
            .rev()
            .find(|l| l.to_ascii_lowercase().contains("answer:"))
        {
            let a = strip_prefix(&l[l.to_ascii_lowercase().find("answer:").unwrap_or(0)..]);
            if !a.is_empty() {
                return a;
            }
        }
    }
    match style {
        AnswerStyle::LongMemEval => text.trim().to_string(),
        _ => text
            .lines()
            .map(strip_prefix)
            .find(|l| !l.is_empty())
            .unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn procedural_domain_changes_only_the_system_prompt() {
        let span = Span {
            id: "t:0".into(),
            index: 0,
            session: None,
            date: None,
            turn_ids: vec![],
            text: "Your task is to: put a pencil in dresser.\nACTION: go to desk 1".into(),
        };
        let skills_owned = memskill_core::SkillBank::seed();
        let skills: Vec<&Skill> = skills_owned.skills().iter().collect();
        let c = executor_messages(&span, &["old tip"], &skills);
        let p = executor_messages_in(MemoryDomain::Procedural, &span, &["old tip"], &skills);
        assert_eq!(
            c,
            executor_messages_in(MemoryDomain::Conversation, &span, &["old tip"], &skills)
        );
        assert_ne!(c[0].content, p[0].content);
        assert!(p[0].content.contains("procedural memory"));
        assert_eq!(c[1].content, p[1].content);
        assert_eq!(
            MemoryDomain::of_dataset("alfworld"),
            MemoryDomain::Procedural
        );
        assert_eq!(
            MemoryDomain::of_dataset("locomo"),
            MemoryDomain::Conversation
        );
    }

    #[test]
    fn extraction() {
        assert_eq!(
            extract_answer(
                AnswerStyle::HotpotQa,
                "thinking...\n<answer> Paris </answer>"
            ),
            "Paris"
        );
        assert_eq!(
            extract_answer(AnswerStyle::HotpotQa, "So the Answer: yes"),
            "yes"
        );
        assert_eq!(
            extract_answer(AnswerStyle::Locomo, "\n**Answer:** 7 May 2023\nbecause"),
            "7 May 2023"
        );
        assert_eq!(
            extract_answer(AnswerStyle::Locomo, "<ANSWER>x</ANSWER>"),
            "x"
        );
        assert_eq!(extract_answer(AnswerStyle::Locomo, ""), "");
    }
}
