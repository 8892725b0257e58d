//! The designer's prompts: minijinja templates (`designer/prompts/*.j2`, written for
//! memskill) rendered with structured context. Each round sees what the reference's does:
//! the analysis and the reflections see the skills (name, action, description), the hard
//! cases and the feedback on the last change; the refinement sees the last analysis, the
//! skills with their full instructions and the feedback.

use memskill_core::{Message, PromptError, PromptSet, SkillBank};
use serde::Serialize;

use crate::evolution::Feedback;
use crate::pool::HardCase;
use crate::text::{clip, tail};

/// Limits on how much of each hard case goes into a prompt (0 = no limit).
#[derive(Debug, Clone, Copy)]
pub struct PromptLimits {
    pub max_retrieved: usize,
    pub max_memory_chars: usize,
    /// Characters kept of [`HardCase::evidence`] (its end: the last steps matter most).
    pub max_evidence_chars: usize,
}

/// A skill as the templates see it.
#[derive(Debug, Clone, Serialize)]
pub struct SkillView {
    pub name: String,
    pub action: String,
    pub description: String,
    pub instructions: String,
    pub status: String,
    pub version: String,
    pub usage_count: u64,
    pub mean_reward: f64,
    /// The skill score from its gate record ([`crate::gate::skill_score`]); none when the
    /// skill has no eval run (always, with `designer.gate = "off"`).
    pub score: Option<f64>,
}

/// A hard case as the templates see it.
#[derive(Debug, Clone, Serialize)]
pub struct CaseView {
    /// 1-based position in the prompt.
    pub number: usize,
    pub id: String,
    pub question: String,
    pub gold: String,
    pub prediction: String,
    pub category: String,
    pub score: f64,
    pub fail_count: u32,
    /// The retrieved memories shown (at most `max_retrieved`, each clipped to `max_memory_chars`).
    pub retrieved: Vec<String>,
    /// How many memories were retrieved in all.
    pub retrieved_total: usize,
    /// What the agent did (interactive tasks; the end when clipped), trimmed.
    pub evidence: String,
}

/// Everything a designer template may use.
#[derive(Debug, Clone, Serialize)]
pub struct DesignerContext<'a> {
    pub skills: Vec<SkillView>,
    pub cases: Vec<CaseView>,
    pub feedback: Option<&'a Feedback>,
    pub max_changes: usize,
    pub new_skill_hint: bool,
    /// `designer.mode = "refine-only"`: the refinement prompt says no skill can be added.
    pub refine_only: bool,
    /// `designer.operations = "governance"`: the refinement prompt offers merge, split,
    /// deprecate, archive and bundle (false: the paper's prompts, byte for byte).
    pub bank_operations: bool,
    pub interactive: bool,
    /// The analysis round (1 = the first analysis) and the number of analysis rounds.
    pub round: usize,
    pub rounds: usize,
    /// The previous analysis round's answer (empty in round 1).
    pub analysis: String,
}

/// The selectable skills, in bank order.
pub fn skill_views(bank: &SkillBank, weights: &crate::gate::ScoreWeights) -> Vec<SkillView> {
    bank.selectable()
        .iter()
        .map(|s| SkillView {
            name: s.name.clone(),
            action: s.action.to_string(),
            description: s.description.clone(),
            instructions: s.instructions.clone(),
            status: s.status.to_string(),
            version: s.version.to_string(),
            usage_count: s.usage.count,
            mean_reward: s.usage.mean_reward,
            score: crate::gate::skill_score(bank, &s.name, weights),
        })
        .collect()
}

/// The hard cases, numbered from 1, with the limits applied.
pub fn case_views(cases: &[HardCase], lim: PromptLimits) -> Vec<CaseView> {
    cases
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let shown = if lim.max_retrieved == 0 {
                c.retrieved.len()
            } else {
                lim.max_retrieved
            };
            CaseView {
                number: i + 1,
                id: c.id(),
                question: c.question.clone(),
                gold: c.gold.clone(),
                prediction: c.prediction.clone(),
                category: c.category.clone(),
                score: c.score,
                fail_count: c.fail_count,
                retrieved: c
                    .retrieved
                    .iter()
                    .take(shown)
                    .map(|m| {
                        if lim.max_memory_chars == 0 {
                            m.clone()
                        } else {
                            clip(m, lim.max_memory_chars)
                        }
                    })
                    .collect(),
                retrieved_total: c.retrieved.len(),
                evidence: if lim.max_evidence_chars == 0 {
                    c.evidence.trim().to_string()
                } else {
                    tail(c.evidence.trim(), lim.max_evidence_chars)
                },
            }
        })
        .collect()
}

/// The template prefix of a round (`designer.analysis`, `designer.alfworld.refinement`, ...).
pub fn prompt_name(round: &str, interactive: bool) -> String {
    if interactive {
        format!("designer.alfworld.{round}")
    } else {
        format!("designer.{round}")
    }
}

/// Render one round (`analysis`, `reflection` or `refinement`) into chat messages.
pub fn render_round(
    prompts: &PromptSet,
    round: &str,
    ctx: &DesignerContext<'_>,
) -> Result<Vec<Message>, PromptError> {
    prompts.render_chat(&prompt_name(round, ctx.interactive), ctx)
}

/// Render every designer template once with sample data (each round, question answering
/// and interactive, with and without feedback on an earlier change, and the safety judge),
/// so that a broken or runaway template is found at start-up, not at the first stage.
pub fn sample_render(prompts: &PromptSet) -> Result<(), PromptError> {
    let bank = SkillBank::seed();
    let case = HardCase {
        query_id: "q1".into(),
        question: "Where does Anna live?".into(),
        gold: "Lyon".into(),
        category: "1".into(),
        prediction: "Paris".into(),
        retrieved: vec!["Anna lives in Paris.".into()],
        sample_id: "s1".into(),
        fail_count: 1,
        evidence: "> go to desk 1\nYou arrive at desk 1.".into(),
        ..Default::default()
    };
    let note = crate::evolution::ChangeNote {
        kind: "refine".into(),
        skill: "insert".into(),
        action: "insert".into(),
        description: "Adds facts.".into(),
        instructions: "Write each new fact.".into(),
        old_description: "Adds.".into(),
        old_instructions: "Write facts.".into(),
    };
    let feedback = Feedback {
        improved: false,
        base_reward: 0.5,
        base_stage: 0,
        stage: 1,
        reward: 0.25,
        diff: -0.25,
        best_reward: 0.5,
        stages_without_improvement: 1,
        changes: vec![note.clone()],
        earlier_failed: vec![crate::evolution::FailedAttempt {
            stage: 0,
            changes: vec![note],
            reward: 0.2,
            best_reward: 0.5,
        }],
    };
    let lim = PromptLimits {
        max_retrieved: 20,
        max_memory_chars: 0,
        max_evidence_chars: 0,
    };
    for interactive in [false, true] {
        for fb in [None, Some(&feedback)] {
            let ctx = DesignerContext {
                skills: skill_views(&bank, &Default::default()),
                cases: case_views(std::slice::from_ref(&case), lim),
                feedback: fb,
                max_changes: 3,
                new_skill_hint: fb.is_some(),
                refine_only: fb.is_none(),
                // the paper's forms only: a user's prompts.dir is checked as before (the
                // governance forms of the defaults are checked by the designer's tests)
                bank_operations: false,
                interactive,
                round: 2,
                rounds: 3,
                analysis: "An earlier analysis.".into(),
            };
            for round in ["analysis", "reflection", "refinement"] {
                render_round(prompts, round, &ctx)?;
            }
        }
    }
    let judge = crate::judge::JudgeContext {
        kind: "add_new".into(),
        name: "dates".into(),
        action: "insert".into(),
        description: "Records dates.".into(),
        instructions: "Store the date of each event.".into(),
    };
    prompts.render_chat(crate::judge::SAFETY_JUDGE_PROMPT, &judge)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set() -> PromptSet {
        PromptSet::with_defaults(crate::PROMPT_TEMPLATES).unwrap()
    }

    fn ctx<'a>(
        cases: &[HardCase],
        fb: Option<&'a Feedback>,
        interactive: bool,
    ) -> DesignerContext<'a> {
        DesignerContext {
            skills: skill_views(&SkillBank::seed(), &Default::default()),
            cases: case_views(
                cases,
                PromptLimits {
                    max_retrieved: 20,
                    max_memory_chars: 0,
                    max_evidence_chars: 0,
                },
            ),
            feedback: fb,
            max_changes: 3,
            new_skill_hint: false,
            refine_only: false,
            bank_operations: false,
            interactive,
            round: 1,
            rounds: 3,
            analysis: "PREVIOUS ANALYSIS".into(),
        }
    }

    #[test]
    fn every_round_renders_one_user_message_with_what_it_should_see() {
        let mut c = crate::pool::case("q1", 0.0, 1);
        c.retrieved = (0..25)
            .map(|i| format!("memory number {i} {}", "y".repeat(400)))
            .collect();
        let p = set();
        for interactive in [false, true] {
            let x = ctx(std::slice::from_ref(&c), None, interactive);
            for round in ["analysis", "reflection", "refinement"] {
                let m = render_round(&p, round, &x).unwrap();
                assert_eq!(m.len(), 1, "{round}: one user message, as the reference");
                assert_eq!(m[0].role, memskill_core::Role::User);
                let t = &m[0].content;
                assert!(t.contains("at most 3 changes"), "{round}");
                assert!(!t.contains("welcome"), "{round}: no hint unless asked");
                if round == "refinement" {
                    assert!(t.contains("PREVIOUS ANALYSIS") && !t.contains("question q1?"));
                    assert!(t.contains(&SkillBank::seed().get("insert").unwrap().instructions));
                } else {
                    // Reflections see the cases too; 20 memories, whole.
                    assert!(t.contains("question q1?"), "{round}");
                    assert!(t.contains("memory number 19 ") && !t.contains("memory number 20 "));
                    assert!(t.contains(&"y".repeat(400)));
                    assert!(t.contains("(25)"));
                    assert_eq!(t.contains("PREVIOUS ANALYSIS"), round == "reflection");
                }
            }
        }
    }

    #[test]
    fn new_skill_hint_and_feedback_render() {
        let c = crate::pool::case("q1", 0.0, 1);
        let fb = Feedback {
            improved: false,
            base_reward: 0.5,
            base_stage: 0,
            stage: 2,
            reward: 0.25,
            diff: -0.25,
            best_reward: 0.5,
            stages_without_improvement: 1,
            changes: vec![crate::evolution::ChangeNote {
                kind: "add".into(),
                skill: "capture-dates".into(),
                action: "insert".into(),
                description: "Dates.".into(),
                instructions: "Write dates.".into(),
                old_description: String::new(),
                old_instructions: String::new(),
            }],
            earlier_failed: Vec::new(),
        };
        let mut x = ctx(std::slice::from_ref(&c), Some(&fb), false);
        x.new_skill_hint = true;
        let p = set();
        for round in ["analysis", "reflection", "refinement"] {
            let t = &render_round(&p, round, &x).unwrap()[0].content;
            assert!(t.contains("new skill is welcome"), "{round}");
            assert!(
                t.contains("from 0.5000 (stage 0) to 0.2500 (-0.2500)"),
                "{round}: {t}"
            );
            assert!(t.contains("added `capture-dates`"), "{round}");
        }
        // refine-only: the refinement prompt says no skill can be added; off, it does not
        let says = |x: &DesignerContext| {
            render_round(&p, "refinement", x).unwrap()[0]
                .content
                .contains("no skill can be added")
        };
        assert!(!says(&x));
        x.refine_only = true;
        assert!(says(&x));
        x.interactive = true;
        assert!(says(&x), "ALFWorld's refinement prompt too");
    }
}
