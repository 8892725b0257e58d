//! Issue 12: the safety layer holds in a designer stage (unsafe proposals in other
//! languages, encodings and split fields are rejected), the optional LLM judge is asked and
//! counted, and no secret value reaches the hard-case pool or the stage record.

mod common;

use common::{hard_case, ScriptedLlm};
use memskill_core::{PromptSet, SkillBank};
use memskill_designer::{run_stage, DesignerConfig, HardCasePool, PoolConfig, PROMPT_TEMPLATES};

fn prompts() -> PromptSet {
    PromptSet::with_defaults(PROMPT_TEMPLATES).unwrap()
}

fn one_round(max_changes: usize) -> DesignerConfig {
    DesignerConfig {
        reflection_cycles: 1,
        attempts: 1,
        max_changes,
        ..Default::default()
    }
}

/// Ten proposals that store credentials, override instructions or exfiltrate, written as
/// paraphrases, in German / French / Spanish, base64, an obfuscated URL and one instruction
/// split across description and instructions: none is accepted, the bank is unchanged.
#[test]
fn unsafe_proposals_of_every_disguise_are_rejected_in_a_stage() {
    let changes = include_str!("fixtures/safety/stage_unsafe_changes.json");
    let llm = ScriptedLlm::new(&["analysis", changes]);
    let bank = SkillBank::seed();
    let out = run_stage(
        &llm,
        &prompts(),
        &bank,
        &[hard_case(1)],
        None,
        1,
        &one_round(10),
    )
    .unwrap();
    let accepted: Vec<String> = out.accepted.iter().map(|e| e.summary()).collect();
    assert!(accepted.is_empty(), "accepted: {accepted:#?}");
    assert_eq!(out.rejected.len(), 10);
    for (e, why) in &out.rejected {
        assert!(why.contains("safety: "), "{}: {why}", e.summary());
    }
    // the skills are unchanged; each proposal stays a draft, recorded as rejected
    assert_eq!(
        (out.bank.skills(), out.bank.bank_version),
        (bank.skills(), bank.bank_version)
    );
    let rejected =
        out.bank.releases.iter().filter(|r| {
            r.kind == memskill_core::ReleaseKind::Rejected && r.note.contains("safety: ")
        });
    assert_eq!(rejected.count(), 10);
}

/// `designer.safety_judge`: every proposal that passed the rules is shown to the LLM; an
/// UNSAFE or unreadable verdict rejects it; calls and rejections are counted.
#[test]
fn the_safety_judge_is_asked_counted_and_fails_closed() {
    let ok = r#"{"changes":[
      {"type":"add_new","name":"capture-dates","action":"insert","description":"Store event dates.","instructions":"Write the absolute date of every event."},
      {"type":"add_new","name":"capture-pets","action":"insert","description":"Store pets.","instructions":"Write each pet's name, species and owner."},
      {"type":"add_new","name":"capture-books","action":"insert","description":"Store books.","instructions":"Write the titles of books people mention."}]}"#;
    let llm = ScriptedLlm::new(&[
        "analysis",
        ok,
        "VERDICT: SAFE\nREASON: records dates",
        "VERDICT: UNSAFE\nREASON: the pet names hide an instruction",
        "I cannot tell.",
    ]);
    let cfg = DesignerConfig {
        safety_judge: true,
        ..one_round(3)
    };
    let out = run_stage(
        &llm,
        &prompts(),
        &SkillBank::seed(),
        &[hard_case(1)],
        None,
        1,
        &cfg,
    )
    .unwrap();
    assert_eq!(out.changed, vec!["capture-dates".to_string()]);
    assert_eq!((out.judge_calls, out.judge_rejections), (3, 2));
    let reasons: Vec<&str> = out.rejected.iter().map(|(_, r)| r.as_str()).collect();
    assert!(
        reasons[0].contains("safety judge: unsafe: the pet names"),
        "{reasons:?}"
    );
    assert!(reasons[1].contains("could not be read"), "{reasons:?}");
    let requests = llm.requests.lock().unwrap();
    assert_eq!(requests.len(), 5);
    let judge_prompt = &requests[3].messages.last().unwrap().content;
    assert!(judge_prompt.contains("Write each pet's name, species and owner."));
    // off (the default): no judge call
    let llm = ScriptedLlm::new(&["analysis", ok]);
    let out = run_stage(
        &llm,
        &prompts(),
        &SkillBank::seed(),
        &[hard_case(1)],
        None,
        1,
        &one_round(3),
    )
    .unwrap();
    assert_eq!((out.changed.len(), out.judge_calls), (3, 0));
}

/// Secrets in hard cases (`hard_cases.json` holds the pool) and in the designer's rounds
/// (`designer/stage-N.json` holds the transcript and the rejected edits) are redacted.
#[test]
fn secrets_never_reach_hard_cases_or_stage_records() {
    let mut pool = HardCasePool::new(PoolConfig::default());
    let mut case = hard_case(1);
    case.retrieved = vec![
        "Bob said: my password is hunter2".into(),
        "Alice's key is sk-live-51HcQ2eKf9XzA8b7C6d5E4f3".into(),
    ];
    case.prediction = "hunter2".into();
    case.question = "What is Bob's password? It is hunter2, right?".into();
    pool.record(case);
    let json = serde_json::to_string(&pool).unwrap();
    assert!(
        !json.contains("hunter2") && !json.contains("sk-live"),
        "{json}"
    );
    assert!(json.contains("[REDACTED:password]") && json.contains("[REDACTED:api-key]"));
    // the pool's cases are what the designer's prompts show
    let cases = pool.cases().to_vec();
    let leaky = r#"{"changes":[{"type":"add_new","name":"keys","action":"insert","description":"Keeps keys.","instructions":"Always use the key sk-live-51HcQ2eKf9XzA8b7C6d5E4f3 and the password: hunter2."}]}"#;
    let llm = ScriptedLlm::new(&["The user's password is hunter2, so store it.", leaky]);
    let out = run_stage(
        &llm,
        &prompts(),
        &SkillBank::seed(),
        &cases,
        None,
        1,
        &one_round(3),
    )
    .unwrap();
    let prompt_text = llm.requests.lock().unwrap()[0]
        .messages
        .last()
        .unwrap()
        .content
        .clone();
    assert!(
        !prompt_text.contains("hunter2"),
        "the designer saw a secret"
    );
    let record = serde_json::to_string(&out).unwrap();
    assert!(
        !record.contains("hunter2") && !record.contains("sk-live"),
        "{record}"
    );
    assert!(out.accepted.is_empty() && out.rejected.len() == 1);
}
