//! A full designer stage with a scripted LLM on a synthetic hard-case pool.

mod common;

use common::{hard_case, ScriptedLlm};
use memskill_core::{ActionKind, ReleaseKind, Role, SkillBank, SkillStatus, Version};
use memskill_designer::{
    run_stage, select_hard_cases, DesignerConfig, DesignerError, Edit, HardCasePool, PoolConfig,
    SelectConfig,
};

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
    let llm = ScriptedLlm::new(&[
        "analysis v0",
        "analysis v1",
        "analysis v2",
        "analysis v3",
        REFINEMENT,
    ]);
    let bank = SkillBank::seed();
    let failed = vec!["stage 1: add `remember-everything`: store all".to_string()];
    let cfg = DesignerConfig::default();
    let out = run_stage(&llm, &bank, &selected, &failed, 2, &cfg).unwrap();

    // 1 analysis + 3 reflections + 1 refinement, all at temperature 0.
    let reqs = llm.requests.lock().unwrap();
    assert_eq!(reqs.len(), 5);
    assert!(reqs
        .iter()
        .all(|r| r.temperature == 0.0 && r.messages[0].role == Role::System));
    let first = &reqs[0].messages[1].content;
    assert!(
        first.contains("remember-everything"),
        "failed approaches are in the prompt"
    );
    assert!(first.contains(&selected[0].question) && first.contains(&selected[0].gold));
    assert!(
        first.contains("### insert (action: insert"),
        "bank is in the prompt"
    );
    assert!(
        !first.contains(&"x".repeat(400)),
        "retrieved memories are truncated"
    );
    assert!(reqs[1].messages[1].content.contains("analysis v0"));
    assert!(reqs[4].messages[1].content.contains("analysis v3"));
    assert_eq!(out.transcript.len(), 5);
    assert_eq!(out.transcript[4].1, REFINEMENT);

    assert_eq!(out.accepted.len(), 2, "{:?}", out.rejected);
    assert_eq!(out.rejected.len(), 2);
    assert!(out.rejected[0].1.contains("noop"));
    assert!(
        out.rejected[1].1.contains("credentials"),
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
    let rel: Vec<_> = nb.releases.iter().filter(|r| r.stage == 2).collect();
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
    let llm = ScriptedLlm::new(&["a", "I would rather not answer in JSON."]);
    let cfg = DesignerConfig {
        reflection_cycles: 0,
        ..Default::default()
    };
    let bank = SkillBank::seed();
    let out = run_stage(&llm, &bank, &[hard_case(1)], &[], 1, &cfg).unwrap();
    assert_eq!(out.bank, bank);
    assert!(out.accepted.is_empty() && out.changed.is_empty());
    assert!(matches!(&out.rejected[0].0, Edit::Malformed { .. }));
    let empty = ScriptedLlm::new(&["only one answer"]);
    let err = run_stage(&empty, &bank, &[hard_case(1)], &[], 1, &cfg).unwrap_err();
    assert!(
        matches!(err, DesignerError::Llm { ref round, .. } if round == "refinement"),
        "{err}"
    );
}
