//! Snapshots and rollback: after a worse stage, bank and controller state equal the best
//! snapshot bit for bit; candidates are promoted on improvement; failed approaches recorded.

mod common;

use common::{hard_case, ScriptedLlm};
use memskill_core::PromptSet;
use memskill_core::{ReleaseKind, SkillBank, SkillStatus};
use memskill_designer::{
    run_stage, stabilised_reward, DesignerConfig, Evolution, EvolutionConfig, Feedback,
    StageDecision, PROMPT_TEMPLATES,
};

fn prompts() -> PromptSet {
    PromptSet::with_defaults(PROMPT_TEMPLATES).unwrap()
}

fn stage_with(
    llm_answer: &str,
    bank: &SkillBank,
    feedback: Option<&Feedback>,
    stage: u32,
) -> (SkillBank, Vec<memskill_designer::ChangeNote>) {
    let llm = ScriptedLlm::new(&["analysis", llm_answer]);
    let cfg = DesignerConfig {
        reflection_cycles: 1,
        ..Default::default()
    };
    let bank_before = bank.clone();
    let out = run_stage(
        &llm,
        &prompts(),
        bank,
        &[hard_case(1), hard_case(2)],
        feedback,
        stage,
        &cfg,
    )
    .unwrap();
    assert!(!out.accepted.is_empty(), "{:?}", out.rejected);
    // the trainer with `designer.gate = "off"`: every candidate goes live as a canary
    let mut bank = out.bank;
    let before = bank_before.clone();
    memskill_designer::admit_all(&mut bank, &before, &out.changed, stage);
    (bank, out.notes)
}

const ADD_DATES: &str = r#"{"changes":[{"type":"add_new","name":"capture-dates","action":"insert","description":"Store event dates.","instructions":"Write the absolute date of every event."}]}"#;
const ADD_PLACES: &str = r#"{"changes":[{"type":"add_new","name":"capture-places","action":"insert","description":"Store places.","instructions":"Write where each event happened."},{"type":"refine_existing","name":"insert","description":"Store new durable facts, one per sentence."}]}"#;

#[test]
fn worse_stage_restores_best_snapshot_bit_for_bit() {
    let mut ev = Evolution::new(EvolutionConfig::default());
    // Stage 0: the seed bank, first evaluation becomes the baseline.
    let seed = SkillBank::seed();
    let ctrl0: Vec<u8> = (0..=255u8).cycle().take(4096).collect();
    assert_eq!(
        ev.on_stage_end(
            stabilised_reward(&[0.1, 0.2, 0.3, 0.30], 0.25),
            &seed,
            &ctrl0,
            0
        ),
        StageDecision::Improved
    );

    // Stage 1: designer adds a skill; training improves -> promoted.
    let (bank1, notes1) = stage_with(ADD_DATES, ev.best_bank().unwrap(), ev.feedback.as_ref(), 1);
    ev.on_designed(notes1);
    assert_eq!(
        bank1.get("capture-dates").unwrap().status,
        SkillStatus::Canary
    );
    let ctrl1: Vec<u8> = (0..5000u32).map(|i| (i * 7 % 251) as u8).collect();
    assert_eq!(
        ev.on_stage_end(0.45, &bank1, &ctrl1, 1),
        StageDecision::Improved
    );
    let best = ev.best.clone().unwrap();
    assert_eq!(
        best.bank.get("capture-dates").unwrap().status,
        SkillStatus::Active
    );
    let rel = best
        .bank
        .releases
        .iter()
        .find(|r| r.skill == "capture-dates" && r.kind == ReleaseKind::Added)
        .unwrap();
    assert_eq!(
        (rel.reward_before, rel.reward_after),
        (Some(0.3), Some(0.45))
    );
    assert!(best
        .bank
        .releases
        .iter()
        .any(|r| r.skill == "capture-dates" && r.kind == ReleaseKind::Promoted));

    // Stage 2: another change, worse reward -> rollback to stage 1's snapshot.
    let (bank2, notes2) = stage_with(ADD_PLACES, ev.best_bank().unwrap(), ev.feedback.as_ref(), 2);
    ev.on_designed(notes2);
    let ctrl2: Vec<u8> = vec![9; 5000];
    let d = ev.on_stage_end(0.40, &bank2, &ctrl2, 2);
    let StageDecision::RolledBack {
        bank,
        controller_state,
    } = d
    else {
        panic!("expected rollback")
    };
    assert_eq!(controller_state, ctrl1, "controller bytes restored exactly");
    assert_eq!(bank, best.bank);
    assert_eq!(
        serde_json::to_vec(&bank).unwrap(),
        serde_json::to_vec(&best.bank).unwrap(),
        "bank bit for bit"
    );
    assert_eq!(bank.content_hash(), best.bank.content_hash());
    assert!(!bank.contains("capture-places"));
    assert_eq!(ev.stages_without_improvement, 1);
    // The failed stage's changes are remembered and archived.
    assert_eq!(ev.failed_approaches.len(), 2, "{:?}", ev.failed_approaches);
    assert!(ev.failed_approaches[0].contains("add `capture-places`"));
    assert!(ev.failed_approaches[1].contains("refine `insert`"));
    assert!(ev
        .archived
        .iter()
        .any(|s| s.name == "capture-places" && s.status == SkillStatus::Archived));
    assert!(ev
        .archive_log
        .iter()
        .all(|r| r.kind == ReleaseKind::Archived && r.reward_after == Some(0.40)));

    // The next designer prompts carry the feedback on the failed change.
    let fb = ev.feedback.clone().unwrap();
    assert!(!fb.improved && fb.base_reward == 0.45 && fb.reward == 0.40);
    assert_eq!(fb.changes.len(), 2, "{:?}", fb.changes);
    let llm = ScriptedLlm::new(&["analysis", r#"{"changes":[{"type":"no_change"}]}"#]);
    let cfg = DesignerConfig {
        reflection_cycles: 1,
        attempts: 1,
        ..Default::default()
    };
    let out = run_stage(
        &llm,
        &prompts(),
        &bank,
        &[hard_case(3)],
        ev.feedback.as_ref(),
        3,
        &cfg,
    )
    .unwrap();
    assert_eq!(out.bank, bank, "no_change keeps the bank");
    for r in llm.requests.lock().unwrap().iter() {
        assert!(r.messages[0].content.contains("capture-places"));
    }

    // Serde round trip of the whole evolution state keeps the bytes.
    let j = serde_json::to_string(&ev).unwrap();
    let back: Evolution = serde_json::from_str(&j).unwrap();
    assert_eq!(back, ev);
    assert_eq!(back.best.unwrap().controller_state, ctrl1);
}
