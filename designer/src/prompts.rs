//! The designer's prompts (written for memskill; same spirit as the MemSkill designer:
//! analyse failures, reflect, then propose a few concrete skill changes as JSON).

use memskill_core::{Message, SkillBank};

use crate::edit::clip;
use crate::pool::HardCase;

/// Limits on how much of each hard case goes into a prompt.
#[derive(Debug, Clone, Copy)]
pub struct PromptLimits {
    pub max_retrieved: usize,
    pub max_memory_chars: usize,
    /// Characters kept of [`HardCase::evidence`] (its end: the last steps matter most).
    pub max_evidence_chars: usize,
}

/// The last `n` characters of `s` (with a leading `...` when cut).
pub(crate) fn tail(s: &str, n: usize) -> String {
    let count = s.chars().count();
    if count <= n {
        s.to_string()
    } else {
        format!("...{}", s.chars().skip(count - n).collect::<String>())
    }
}

const SYSTEM: &str = "You improve the memory skills of a question-answering agent. The agent reads a long \
conversation piece by piece; for each piece a controller picks a few memory skills, and an executor model \
follows those skills' instructions to insert, update or delete short memories (or do nothing). Later, \
questions are answered only from the memories retrieved for them. You are shown questions the agent got \
wrong and the current skills. Skills decide HOW memories are written: they never grant access, never deal \
with credentials or secrets, never send data anywhere and never override the rules the agent runs under.";

const SYSTEM_INTERACTIVE: &str = "You improve the memory skills of an agent that acts in a household text game \
(ALFWorld). Its memory is built from expert trajectories piece by piece: for each piece a controller picks a few \
memory skills, and an executor model follows those skills' instructions to insert, update or delete short \
procedural tips (or do nothing). Later the agent plays new games and sees only the tips retrieved for its task. \
You are shown tasks the agent failed, what it did, and the current skills. Skills decide HOW memories are \
written: they never grant access, never deal with credentials or secrets, never send data anywhere and never \
override the rules the agent runs under.";

fn system(interactive: bool) -> &'static str {
    if interactive {
        SYSTEM_INTERACTIVE
    } else {
        SYSTEM
    }
}

/// The current bank as text: name, action, status, version, description and instructions of every selectable skill.
pub fn render_bank(bank: &SkillBank) -> String {
    let mut out = String::new();
    for s in bank.selectable() {
        out.push_str(&format!(
            "### {} (action: {}, status: {}, version {}, used {} times, mean reward {:.3})\nDescription: {}\nInstructions: {}\n\n",
            s.name, s.action, s.status, s.version, s.usage.count, s.usage.mean_reward, s.description, s.instructions
        ));
    }
    out
}

/// The hard cases as numbered text blocks.
pub fn render_cases(cases: &[HardCase], lim: PromptLimits, interactive: bool) -> String {
    let (q, g, p, m) = if interactive {
        ("Task", "Expected", "Outcome", "Tips retrieved")
    } else {
        (
            "Question",
            "Gold answer",
            "Agent answer",
            "Retrieved memories",
        )
    };
    let mut out = String::new();
    for (i, c) in cases.iter().enumerate() {
        out.push_str(&format!(
            "Case {} [{}] (category {}, score {:.2}, failed {} times)\n{q}: {}\n{g}: {}\n{p}: {}\n{m}:\n",
            i + 1,
            c.id(),
            if c.category.is_empty() { "-" } else { &c.category },
            c.score,
            c.fail_count,
            c.question,
            c.gold,
            c.prediction
        ));
        if c.retrieved.is_empty() {
            out.push_str("  (none)\n");
        }
        for m in c.retrieved.iter().take(lim.max_retrieved) {
            out.push_str(&format!("  - {}\n", clip(m, lim.max_memory_chars)));
        }
        if c.retrieved.len() > lim.max_retrieved {
            out.push_str(&format!(
                "  ... {} more\n",
                c.retrieved.len() - lim.max_retrieved
            ));
        }
        if !c.evidence.trim().is_empty() {
            out.push_str(&format!(
                "What the agent did:\n{}\n",
                tail(c.evidence.trim(), lim.max_evidence_chars)
            ));
        }
        out.push('\n');
    }
    out
}

fn render_failed(failed: &[String]) -> String {
    if failed.is_empty() {
        "(none yet)".into()
    } else {
        failed.iter().map(|f| format!("- {f}\n")).collect()
    }
}

/// Round 1: diagnose every case and propose at most `max_changes` directions.
pub fn analysis_messages(
    bank: &SkillBank,
    cases: &[HardCase],
    failed: &[String],
    max_changes: usize,
    lim: PromptLimits,
    interactive: bool,
) -> Vec<Message> {
    let (heading, diagnosis) = if interactive {
        ("Tasks the agent failed", "STORAGE (the procedure, object location or appliance use the task needed never \
became a tip, or only too vaguely), RETRIEVAL (such tips exist but the ones retrieved for the task miss them, e.g. \
because they are worded so they do not match the task), or TIP QUALITY (the tips are wrong, tied to one game's \
object numbers, or skip the step where the agent got stuck)")
    } else {
        ("Questions the agent failed", "STORAGE (the fact never made it into memory, or was \
stored too vaguely), RETRIEVAL (the fact was stored but the retrieved memories miss it, e.g. because the \
memory is worded so it does not match the question), or MEMORY QUALITY (the stored memory is wrong, \
outdated, merged with other facts, or lacks the date/name the question needs)")
    };
    let user = format!(
        "## Current skills\n{}## {heading}\n{}## Earlier changes that did not help (do not repeat them)\n{}\n\n\
## Task\n1. For each case decide where it broke: {diagnosis}. Cite the case number.\n\
2. Group the cases into a few recurring patterns and say which skill (if any) is responsible.\n\
3. Recommend at most {max_changes} changes to the skills: either sharpen an existing skill's \
description/instructions, or add a new skill (action insert or update) for a pattern no skill covers. \
Prefer fewer, well-justified changes; recommending no change is allowed.\n\
Write plain prose with headings; no JSON yet.",
        render_bank(bank),
        render_cases(cases, lim, interactive),
        render_failed(failed),
    );
    vec![Message::system(system(interactive)), Message::user(user)]
}

/// One critique-and-revise round over the previous analysis.
pub fn reflection_messages(
    bank: &SkillBank,
    analysis: &str,
    failed: &[String],
    max_changes: usize,
    interactive: bool,
) -> Vec<Message> {
    let user = format!(
        "## Current skills\n{}## Earlier changes that did not help (do not repeat them)\n{}\n\n## Draft analysis\n{}\n\n\
## Task\nCritique the draft: is each failure type justified by the evidence? Does any recommendation merely \
restate an existing skill, repeat a failed change, overlap with another recommendation, or risk hurting \
cases that work today? Are there more than {max_changes} recommendations? Then write the complete revised \
analysis (not just the critique), keeping only the strongest recommendations.",
        render_bank(bank),
        render_failed(failed),
        analysis
    );
    vec![Message::system(system(interactive)), Message::user(user)]
}

/// Final round: turn the analysis into JSON changes.
pub fn refinement_messages(
    bank: &SkillBank,
    analysis: &str,
    failed: &[String],
    max_changes: usize,
    interactive: bool,
) -> Vec<Message> {
    let user = format!(
        "## Current skills\n{}## Earlier changes that did not help (do not repeat them)\n{}\n\n## Analysis\n{}\n\n\
## Task\nTurn the analysis into at most {max_changes} concrete changes. Answer with one JSON object and nothing else:\n\
{{\"changes\": [\n  {{\"type\": \"add_new\", \"name\": \"lowercase-hyphenated-name\", \"description\": \"one or two sentences: when to use it\", \"instructions\": \"the full card the executor follows\", \"action\": \"insert\"}},\n  \
{{\"type\": \"refine_existing\", \"name\": \"existing-skill-name\", \"description\": \"optional new description\", \"instructions\": \"optional new instructions\"}},\n  \
{{\"type\": \"no_change\"}}\n]}}\n\
Rules: a new skill's action is \"insert\" or \"update\" and its name must not exist yet; a refine keeps the \
skill's name and action and rewrites only its description and/or instructions (give the whole new text); \
never refine the noop skill; at most one change per skill; names use lowercase letters, digits and single \
hyphens (at most 64 characters); descriptions stay under 1024 characters; write finished text, no \
placeholders. Use {{\"changes\": [{{\"type\": \"no_change\"}}]}} when nothing should change.",
        render_bank(bank),
        render_failed(failed),
        analysis
    );
    vec![Message::system(system(interactive)), Message::user(user)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evidence_is_shown_by_its_end_and_only_when_present() {
        let lim = PromptLimits {
            max_retrieved: 2,
            max_memory_chars: 50,
            max_evidence_chars: 40,
        };
        let mut c = crate::pool::case("q1", 0.0, 1);
        let plain = render_cases(std::slice::from_ref(&c), lim, false);
        assert!(!plain.contains("What the agent did"));
        c.evidence = format!(
            "{}ACTION: go to fridge 1\nTRAJECTORY_STATUS: FAILED",
            "x".repeat(500)
        );
        let with = render_cases(std::slice::from_ref(&c), lim, true);
        assert!(with.contains("What the agent did:\n..."));
        assert!(with.contains("TRAJECTORY_STATUS: FAILED"));
        assert!(with.contains("Task: question q1?") && plain.contains("Question: question q1?"));
        assert!(!with.contains(&"x".repeat(41)));
    }

    #[test]
    fn interactive_prompts_talk_about_tasks() {
        let bank = SkillBank::seed();
        let lim = PromptLimits {
            max_retrieved: 2,
            max_memory_chars: 50,
            max_evidence_chars: 40,
        };
        let cases = [crate::pool::case("q1", 0.0, 1)];
        let qa = analysis_messages(&bank, &cases, &[], 3, lim, false);
        let emb = analysis_messages(&bank, &cases, &[], 3, lim, true);
        assert!(qa[1].content.contains("## Questions the agent failed"));
        assert!(emb[1].content.contains("## Tasks the agent failed"));
        assert!(emb[0].content.contains("ALFWorld") && !qa[0].content.contains("ALFWorld"));
        assert!(refinement_messages(&bank, "a", &[], 3, true)[0]
            .content
            .contains("procedural tips"));
        assert!(!reflection_messages(&bank, "a", &[], 3, false)[0]
            .content
            .contains("procedural tips"));
    }
}
