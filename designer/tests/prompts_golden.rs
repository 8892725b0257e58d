//! The designer's prompts in paper mode (`designer.operations = "paper"`, the default and the
//! reproduction configs'), kept as a golden file (`tests/fixtures/designer_prompts_paper.txt`):
//! every round (analysis, reflection, refinement) for question answering and interactive
//! tasks, with and without feedback, the new-skill hint and refine-only, plus the refinement
//! answer's JSON schema. The file was written before the governance operations existed, so a
//! byte that differs here means the reproduction path changed. Regenerate only on purpose:
//! `MEMSKILL_UPDATE_GOLDEN=1 cargo test -p memskill-designer --test prompts_golden`.

use std::path::PathBuf;

use memskill_core::{PromptSet, SkillBank};
use memskill_designer::prompts::{
    case_views, render_round, skill_views, DesignerContext, PromptLimits,
};
use memskill_designer::{ChangeNote, DesignerConfig, Feedback, HardCase};

fn feedback() -> Feedback {
    let note = ChangeNote {
        kind: "refine".into(),
        skill: "insert".into(),
        action: "insert".into(),
        description: "Adds facts with dates.".into(),
        instructions: "Write each new fact with its date.".into(),
        old_description: "Adds facts.".into(),
        old_instructions: "Write each new fact.".into(),
    };
    Feedback {
        improved: false,
        base_reward: 0.5,
        base_stage: 0,
        stage: 1,
        reward: 0.25,
        diff: -0.25,
        best_reward: 0.5,
        stages_without_improvement: 1,
        changes: vec![note.clone()],
        earlier_failed: vec![memskill_designer::FailedAttempt {
            stage: 0,
            changes: vec![note],
            reward: 0.2,
            best_reward: 0.5,
        }],
    }
}

fn case() -> HardCase {
    HardCase {
        query_id: "q1".into(),
        question: "Where does Anna live?".into(),
        gold: "Lyon".into(),
        category: "1".into(),
        prediction: "Paris".into(),
        retrieved: vec!["Anna lives in Paris.".into(), "Anna likes trains.".into()],
        sample_id: "s1".into(),
        fail_count: 2,
        evidence: "> go to desk 1\nYou arrive at desk 1.".into(),
        ..Default::default()
    }
}

/// Every paper-mode prompt and the refinement schema, in a fixed order.
fn render_all() -> String {
    let prompts = PromptSet::with_defaults(memskill_designer::PROMPT_TEMPLATES).unwrap();
    let bank = SkillBank::seed();
    let fb = feedback();
    let cases = [case()];
    let lim = PromptLimits {
        max_retrieved: 20,
        max_memory_chars: 0,
        max_evidence_chars: 0,
    };
    let mut out = String::new();
    for interactive in [false, true] {
        for with_fb in [false, true] {
            for (hint, refine_only) in [(false, false), (true, false), (false, true)] {
                for round_no in [1usize, 2] {
                    let ctx = DesignerContext {
                        skills: skill_views(&bank, &Default::default()),
                        cases: case_views(&cases, lim),
                        feedback: with_fb.then_some(&fb),
                        max_changes: 3,
                        new_skill_hint: hint,
                        refine_only,
                        bank_operations: false,
                        interactive,
                        round: round_no,
                        rounds: 3,
                        analysis: "An earlier analysis.".into(),
                    };
                    for round in ["analysis", "reflection", "refinement"] {
                        let msgs = render_round(&prompts, round, &ctx).unwrap();
                        out.push_str(&format!(
                            "=== {round} interactive={interactive} feedback={with_fb} hint={hint} refine_only={refine_only} round={round_no}\n"
                        ));
                        for m in msgs {
                            out.push_str(&format!("--- {:?}\n{}\n", m.role, m.content));
                        }
                    }
                }
            }
        }
    }
    for mode in [
        memskill_designer::DesignerMode::Full,
        memskill_designer::DesignerMode::RefineOnly,
    ] {
        let cfg = DesignerConfig {
            mode,
            ..Default::default()
        };
        let schema = memskill_designer::refinement_schema(&bank, &cfg);
        out.push_str(&format!(
            "=== refinement schema mode={mode:?}\n{}\n",
            serde_json::to_string_pretty(&serde_json::to_value(&schema).unwrap()).unwrap()
        ));
    }
    out
}

#[test]
fn paper_mode_designer_prompts_match_the_golden_file() {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/designer_prompts_paper.txt");
    let now = render_all();
    if std::env::var_os("MEMSKILL_UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, &now).unwrap();
        eprintln!("wrote {}", path.display());
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (MEMSKILL_UPDATE_GOLDEN=1 writes it)",
            path.display()
        )
    });
    if now != want {
        let (i, (a, b)) = want
            .lines()
            .zip(now.lines())
            .enumerate()
            .find(|(_, (a, b))| a != b)
            .unwrap_or((0, ("(length differs)", "")));
        panic!(
            "the paper-mode designer prompts differ from {} at line {}:\n  golden: {a}\n  now:    {b}",
            path.display(),
            i + 1
        );
    }
}
