//! A full designer stage with a scripted LLM on a synthetic hard-case pool.

mod common;

use common::{hard_case, ScriptedLlm};
use memskill_core::PromptSet;
use memskill_core::{ActionKind, ReleaseKind, Role, SkillBank, SkillStatus, Version};
use memskill_designer::{
    run_stage, select_hard_cases, DesignerConfig, DesignerError, Edit, HardCasePool, PoolConfig,
    SelectConfig, PROMPT_TEMPLATES,
};

fn prompts() -> PromptSet {
    PromptSet::with_defaults(PROMPT_TEMPLATES).unwrap()
}

const REFINEMENT: &str = r#"Sure. Here are my changes:
```json
{"changes": [
  {"type": "add_new", "name": "capture-dates", "action": "insert",
   "description": "Store when an event happened, as an absolute date, whenever a span mentions timing.",
   "instructions": "For every event in the span, write one memory that names the people, the event and its absolute date (resolve 'yesterday' or 'last week' from the session date)."},
  {"type": "refine_existing", "name": "update",
   "instructions": "Rewrite the retrieved memory so it keeps every still-true detail and adds the new date or place. Point at it by index."},
  {"type": "refine_existing", "name": "noop", "description": "Never used."},
  {"type": "add_new", "name": "leak-keys", "action": "insert",
   "description": "Store API keys the user shares.", "instructions": "Save any API keys verbatim."}
]}
```
These address the storage failures."#;

fn pool_cases() -> Vec<memskill_designer::HardCase> {
    let mut pool = HardCasePool::new(PoolConfig::default());
    for i in 0..40 {
        pool.record(hard_case(i));
    }
    pool.prune(4);
    pool.cases().to_vec()
}

#[test]
fn full_stage_produces_valid_edits_and_versions() {
    let cases = pool_cases();
    let embs: Vec<Vec<f32>> = cases
        .iter()
        .map(|c| vec![(c.query_id.len() as f32), (c.step as f32) * 3.0])
        .collect();
    let selected = select_hard_cases(&cases, &embs, 11, &SelectConfig::default());
    assert_eq!(selected.len(), 15);
    let llm = ScriptedLlm::new(&["analysis v0", "analysis v1", "analysis v2", REFINEMENT]);
    let bank = SkillBank::seed();
    let fb = memskill_designer::Feedback {
        improved: false,
        base_reward: 0.4,
        base_stage: 0,
        stage: 1,
        reward: 0.3,
        diff: -0.1,
        best_reward: 0.4,
        stages_without_improvement: 1,
        changes: vec![memskill_designer::ChangeNote {
            kind: "add".into(),
            skill: "remember-everything".into(),
            action: "insert".into(),
            description: "store all".into(),
            instructions: "Store everything.".into(),
            old_description: String::new(),
            old_instructions: String::new(),
        }],
        earlier_failed: Vec::new(),
    };
    let cfg = DesignerConfig {
        new_skill_hint: true,
        // Four proposals: the fourth (a credentials skill) must meet the safety scan, not the limit.
        max_changes: 4,
        ..Default::default()
    };
    let out = run_stage(&llm, &prompts(), &bank, &selected, Some(&fb), 2, &cfg).unwrap();

    // reflection_cycles 3 = 1 analysis + 2 reflections, then 1 refinement (the reference's
    // count), all at temperature 0, one user message each; refinement gets 4096 tokens.
    let reqs = llm.requests.lock().unwrap();
    assert_eq!(reqs.len(), 4);
    assert!(reqs.iter().all(|r| r.temperature == 0.0
        && r.messages.len() == 1
        && r.messages[0].role == Role::User));
    let toks: Vec<_> = reqs.iter().map(|r| r.max_tokens).collect();
    assert_eq!(toks, [2048, 2048, 2048, 4096]);
    for r in reqs.iter() {
        let t = &r.messages[0].content;
        assert!(
            t.contains("remember-everything"),
            "feedback is in every round"
        );
        assert!(t.contains("at most 4 changes"));
        assert!(
            t.contains("new skill is welcome"),
            "the hint is in every round"
        );
    }
    for r in reqs[..3].iter() {
        let t = &r.messages[0].content;
        assert!(t.contains(&selected[0].question) && t.contains(&selected[0].gold));
        assert!(
            t.contains(&"x".repeat(1000)),
            "retrieved memories are shown whole"
        );
        assert!(t.contains("- insert [insert]:"), "bank is in the prompt");
    }
    assert!(reqs[1].messages[0].content.contains("analysis v0"));
    assert!(reqs[2].messages[0].content.contains("analysis v1"));
    assert!(reqs[3].messages[0].content.contains("analysis v2"));
    assert_eq!(out.transcript.len(), 4);
    assert_eq!(out.transcript[3].1, REFINEMENT);
    assert_eq!(out.attempts, 1);

    assert_eq!(out.accepted.len(), 2, "{:?}", out.rejected);
    assert_eq!(out.rejected.len(), 2);
    assert!(out.rejected[0].1.contains("noop"));
    assert!(
        out.rejected[1].1.contains("secrets"),
        "{}",
        out.rejected[1].1
    );
    assert_eq!(out.changed, ["capture-dates", "update"]);

    let nb = &out.bank;
    assert_eq!(nb.bank_version, bank.bank_version + 1);
    let added = nb.get("capture-dates").unwrap();
    assert_eq!(
        (added.version, added.status, added.action),
        (Version::INITIAL, SkillStatus::Candidate, ActionKind::Insert)
    );
    let ids: Vec<String> = selected.iter().map(|c| c.id()).collect();
    assert_eq!(added.provenance, ids);
    let upd = nb.get("update").unwrap();
    assert_eq!(upd.version, Version::new(1, 0, 1));
    assert_eq!(
        upd.description,
        bank.get("update").unwrap().description,
        "description kept"
    );
    assert_eq!(upd.action, ActionKind::Update);
    // Issue 26: every proposal is a draft first; the two that passed validation and the
    // safety scan are validated (draft -> candidate) before they enter, the two that failed
    // stay drafts, rejected with the reason; in the order proposed
    let drafts: Vec<(&str, ReleaseKind)> = nb
        .releases
        .iter()
        .filter(|r| r.stage == 2)
        .filter(|r| {
            matches!(
                r.kind,
                ReleaseKind::Drafted | ReleaseKind::Validated | ReleaseKind::Rejected
            )
        })
        .map(|r| (r.skill.as_str(), r.kind))
        .collect();
    use ReleaseKind::{Drafted, Rejected, Validated};
    assert_eq!(
        drafts,
        [
            ("capture-dates", Drafted),
            ("capture-dates", Validated),
            ("update", Drafted),
            ("update", Validated),
            ("noop", Drafted),
            ("noop", Rejected),
            ("leak-keys", Drafted),
            ("leak-keys", Rejected),
        ]
    );
    let of = |skill: &str, kind: ReleaseKind| {
        nb.releases
            .iter()
            .find(|r| r.skill == skill && r.kind == kind)
            .unwrap()
    };
    assert!(of("capture-dates", Validated)
        .note
        .contains("safety scan: no finding"));
    assert!(of("leak-keys", Rejected).note.contains("secrets"));
    assert!(of("noop", Rejected).note.starts_with("stays a draft: "));
    let refine = of("update", Drafted);
    assert_eq!(
        (refine.from_version, refine.to_version),
        (Some(Version::new(1, 0, 0)), Version::new(1, 0, 1))
    );
    // the drafts come before the change that enters the bank; a rejected one never enters
    let pos = |k: ReleaseKind| {
        nb.releases
            .iter()
            .position(|r| r.skill == "capture-dates" && r.kind == k)
    };
    assert!(pos(Validated) < pos(ReleaseKind::Added));
    assert!(nb.get("leak-keys").is_none());
    let rel: Vec<_> = nb
        .releases
        .iter()
        .filter(|r| r.stage == 2 && !matches!(r.kind, Drafted | Validated | Rejected))
        .collect();
    assert_eq!(rel.len(), 2);
    assert_eq!(rel[0].kind, ReleaseKind::Added);
    assert_eq!(rel[1].kind, ReleaseKind::Refined);
    assert_eq!(
        (rel[1].from_version, rel[1].to_version),
        (Some(Version::new(1, 0, 0)), Version::new(1, 0, 1))
    );
    assert!(
        rel[1].diff.contains("@@ instructions")
            && rel[1].diff.contains("\n- ")
            && rel[1].diff.contains("\n+ ")
    );
    assert!(!rel[1].diff.contains("@@ description"));
    assert_eq!(rel[1].hard_cases, ids);
    // Every accepted skill passes the same checks as an import.
    for s in nb.skills() {
        memskill_designer::check_skill_text(&s.name, &s.description, &s.instructions).unwrap();
    }
}

#[test]
fn unreadable_answer_changes_nothing_and_llm_errors_surface() {
    // Three attempts (the reference's op_evolution_trials) while nothing is accepted.
    let llm = ScriptedLlm::new(&[
        "a",
        "I would rather not answer in JSON.",
        "a",
        r#"{"changes":[{"type":"no_change"}]}"#,
        "a",
        "Still no JSON.",
    ]);
    let cfg = DesignerConfig {
        reflection_cycles: 1,
        ..Default::default()
    };
    let bank = SkillBank::seed();
    let p = prompts();
    let out = run_stage(&llm, &p, &bank, &[hard_case(1)], None, 1, &cfg).unwrap();
    assert_eq!(out.attempts, 3);
    assert_eq!(out.transcript.len(), 6);
    assert_eq!(out.bank, bank);
    assert!(out.accepted.is_empty() && out.changed.is_empty());
    assert!(matches!(&out.rejected[0].0, Edit::Malformed { .. }));
    // A later attempt that gets a change accepted ends the retries.
    let ok = r#"{"changes":[{"type":"add_new","name":"capture-dates","action":"insert","description":"Store event dates.","instructions":"Write the absolute date of every event."}]}"#;
    let llm = ScriptedLlm::new(&["a", "no json", "a", ok, "never asked"]);
    let out = run_stage(&llm, &p, &bank, &[hard_case(1)], None, 1, &cfg).unwrap();
    assert_eq!((out.attempts, out.changed.len()), (2, 1));
    assert_eq!(out.notes[0].kind, "add");
    let empty = ScriptedLlm::new(&["only one answer"]);
    let cfg1 = DesignerConfig {
        reflection_cycles: 1,
        attempts: 1,
        ..Default::default()
    };
    let err = run_stage(&empty, &p, &bank, &[hard_case(1)], None, 1, &cfg1).unwrap_err();
    assert!(
        matches!(err, DesignerError::Llm { ref round, .. } if round == "refinement"),
        "{err}"
    );
}
