//! One designer stage: LLM rounds -> edits -> validation -> new bank version.

use std::collections::HashSet;

use memskill_core::{
    ActionKind, ChatRequest, Llm, Message, ReleaseKind, ReleaseRecord, Skill, SkillBank,
    SkillStatus, UsageStats, Version,
};
use serde::{Deserialize, Serialize};

use crate::edit::{plan_evictions, validate_edits, Edit};
use crate::error::DesignerError;
use crate::json::parse_changes;
use crate::pool::HardCase;
use crate::prompts::{analysis_messages, refinement_messages, reflection_messages, PromptLimits};

/// Designer settings (reference values by default).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DesignerConfig {
    /// Most edits accepted per stage.
    pub max_changes: usize,
    /// Critique-and-revise rounds between analysis and refinement.
    pub reflection_cycles: usize,
    /// Most selectable (candidate + active) skills; beyond it the least useful non-seed skill is deprecated.
    pub max_bank_size: usize,
    /// Sampling temperature of every designer call (0 = greedy).
    pub temperature: f32,
    /// Token budget of each designer answer.
    pub max_tokens: u32,
    /// Retrieved memories shown per hard case.
    pub max_retrieved_per_case: usize,
    /// Characters kept of each retrieved memory.
    pub max_memory_chars: usize,
    /// Characters kept (the end) of what the agent did in an interactive hard case.
    pub max_evidence_chars: usize,
    /// Hard cases are failed tasks of an acting agent (ALFWorld), not failed questions: the
    /// prompts say so. Set by the caller from the dataset, not a config key.
    #[serde(skip)]
    pub interactive: bool,
}

impl Default for DesignerConfig {
    fn default() -> Self {
        Self {
            max_changes: 3,
            reflection_cycles: 3,
            max_bank_size: 30,
            temperature: 0.0,
            max_tokens: 2048,
            max_retrieved_per_case: 5,
            max_memory_chars: 300,
            max_evidence_chars: 1500,
            interactive: false,
        }
    }
}

/// What one stage produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageOutcome {
    /// The new bank (statuses, versions and release records updated); equal to the input when nothing was accepted.
    pub bank: SkillBank,
    pub accepted: Vec<Edit>,
    pub rejected: Vec<(Edit, String)>,
    /// Names of skills added or refined in this stage.
    pub changed: Vec<String>,
    /// (prompt, answer) of every LLM round, in order (the prompt is the last user message).
    pub transcript: Vec<(String, String)>,
}

fn ask(
    llm: &dyn Llm,
    round: &str,
    messages: Vec<Message>,
    cfg: &DesignerConfig,
    transcript: &mut Vec<(String, String)>,
) -> Result<String, DesignerError> {
    let prompt = messages
        .last()
        .map(|m| m.content.clone())
        .unwrap_or_default();
    let req = ChatRequest::new(messages)
        .with_temperature(cfg.temperature)
        .with_max_tokens(cfg.max_tokens);
    let resp = llm.chat(&req).map_err(|source| DesignerError::Llm {
        round: round.to_string(),
        source,
    })?;
    transcript.push((prompt, resp.text.clone()));
    Ok(resp.text)
}

/// Run one designer stage on the selected hard cases.
///
/// LLM errors are returned; an answer without readable JSON is not an error: the stage
/// then accepts nothing and reports one `Malformed` rejection.
pub fn run_stage(
    llm: &dyn Llm,
    bank: &SkillBank,
    cases: &[HardCase],
    failed_approaches: &[String],
    stage: u32,
    cfg: &DesignerConfig,
) -> Result<StageOutcome, DesignerError> {
    let lim = PromptLimits {
        max_retrieved: cfg.max_retrieved_per_case,
        max_memory_chars: cfg.max_memory_chars,
        max_evidence_chars: cfg.max_evidence_chars,
    };
    let mut transcript = Vec::new();
    let mut analysis = ask(
        llm,
        "analysis",
        analysis_messages(
            bank,
            cases,
            failed_approaches,
            cfg.max_changes,
            lim,
            cfg.interactive,
        ),
        cfg,
        &mut transcript,
    )?;
    for i in 0..cfg.reflection_cycles {
        analysis = ask(
            llm,
            &format!("reflection {}", i + 1),
            reflection_messages(
                bank,
                &analysis,
                failed_approaches,
                cfg.max_changes,
                cfg.interactive,
            ),
            cfg,
            &mut transcript,
        )?;
    }
    let answer = ask(
        llm,
        "refinement",
        refinement_messages(
            bank,
            &analysis,
            failed_approaches,
            cfg.max_changes,
            cfg.interactive,
        ),
        cfg,
        &mut transcript,
    )?;
    let edits = match parse_changes(&answer) {
        Ok(e) => e,
        Err(problem) => vec![Edit::Malformed {
            raw: crate::edit::clip(&answer, 500),
            problem,
        }],
    };
    let (accepted, rejected) = validate_edits(bank, &edits, cfg);
    let mut ids: Vec<String> = Vec::new();
    for c in cases {
        let id = c.id();
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    let (bank, changed) = apply_edits(bank, &accepted, &ids, stage, cfg.max_bank_size);
    Ok(StageOutcome {
        bank,
        accepted,
        rejected,
        changed,
        transcript,
    })
}

/// Apply validated edits: adds become 0.1.0 candidates with provenance `case_ids`, refines
/// bump the patch version, evictions deprecate; every change appends a release record
/// (with a line diff of description and instructions). Bumps `bank_version` once when
/// anything changed. Edits that no longer fit the bank are skipped (validate first).
pub fn apply_edits(
    bank: &SkillBank,
    accepted: &[Edit],
    case_ids: &[String],
    stage: u32,
    max_bank_size: usize,
) -> (SkillBank, Vec<String>) {
    let mut out = bank.clone();
    let mut changed = Vec::new();
    let evict = plan_evictions(bank, accepted, max_bank_size);
    for e in accepted {
        match e {
            Edit::AddNew {
                name,
                description,
                instructions,
                action,
            } => {
                let Ok(action) = action.parse::<ActionKind>() else {
                    continue;
                };
                let skill = Skill {
                    name: name.clone(),
                    description: description.clone(),
                    instructions: instructions.clone(),
                    action,
                    version: Version::INITIAL,
                    status: SkillStatus::Candidate,
                    provenance: case_ids.to_vec(),
                    usage: UsageStats::default(),
                };
                if out.insert(skill).is_err() {
                    continue;
                }
                out.releases.push(ReleaseRecord {
                    skill: name.clone(),
                    kind: ReleaseKind::Added,
                    from_version: None,
                    to_version: Version::INITIAL,
                    diff: text_diff("", "", description, instructions),
                    hard_cases: case_ids.to_vec(),
                    reward_before: None,
                    reward_after: None,
                    stage,
                    note: format!("added by designer stage {stage}"),
                });
                changed.push(name.clone());
            }
            Edit::RefineExisting {
                name,
                description,
                instructions,
                ..
            } => {
                let Some(s) = out.get_mut(name) else { continue };
                let (old_d, old_i) = (s.description.clone(), s.instructions.clone());
                if let Some(d) = description {
                    s.description = d.clone();
                }
                if let Some(i) = instructions {
                    s.instructions = i.clone();
                }
                let from = s.version;
                s.version = from.bump_patch();
                let diff = text_diff(&old_d, &old_i, &s.description, &s.instructions);
                let rec = ReleaseRecord {
                    skill: name.clone(),
                    kind: ReleaseKind::Refined,
                    from_version: Some(from),
                    to_version: s.version,
                    diff,
                    hard_cases: case_ids.to_vec(),
                    reward_before: None,
                    reward_after: None,
                    stage,
                    note: format!("refined by designer stage {stage}"),
                };
                out.releases.push(rec);
                changed.push(name.clone());
            }
            Edit::NoChange | Edit::Malformed { .. } => {}
        }
    }
    let changed_set: HashSet<&String> = changed.iter().collect();
    for name in &evict {
        if changed_set.contains(name) {
            continue;
        }
        if let Some(s) = out.get_mut(name) {
            s.status = SkillStatus::Deprecated;
            let v = s.version;
            out.releases.push(ReleaseRecord {
                skill: name.clone(),
                kind: ReleaseKind::Deprecated,
                from_version: Some(v),
                to_version: v,
                diff: String::new(),
                hard_cases: Vec::new(),
                reward_before: None,
                reward_after: None,
                stage,
                note: format!("evicted to keep at most {max_bank_size} selectable skills"),
            });
        }
    }
    if !changed.is_empty() || !evict.is_empty() {
        out.bank_version += 1;
    }
    (out, changed)
}

/// Line diff (LCS) of two texts: `-` removed, `+` added, two spaces for kept lines.
pub fn line_diff(old: &str, new: &str) -> String {
    let a: Vec<&str> = if old.is_empty() {
        Vec::new()
    } else {
        old.lines().collect()
    };
    let b: Vec<&str> = if new.is_empty() {
        Vec::new()
    } else {
        new.lines().collect()
    };
    let (n, m) = (a.len(), b.len());
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut out = String::new();
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            out.push_str(&format!("  {}\n", a[i]));
            i += 1;
            j += 1;
        } else if i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1]) {
            out.push_str(&format!("- {}\n", a[i]));
            i += 1;
        } else {
            out.push_str(&format!("+ {}\n", b[j]));
            j += 1;
        }
    }
    out
}

/// Diff of description and instructions with section headers; empty when both are unchanged.
pub fn text_diff(old_desc: &str, old_instr: &str, new_desc: &str, new_instr: &str) -> String {
    let mut out = String::new();
    if old_desc != new_desc {
        out.push_str("@@ description\n");
        out.push_str(&line_diff(old_desc, new_desc));
    }
    if old_instr != new_instr {
        out.push_str("@@ instructions\n");
        out.push_str(&line_diff(old_instr, new_instr));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_diff_marks_changes() {
        assert_eq!(line_diff("a\nb\nc", "a\nx\nc"), "  a\n- b\n+ x\n  c\n");
        assert_eq!(line_diff("", "new"), "+ new\n");
        assert_eq!(line_diff("old", ""), "- old\n");
        assert_eq!(text_diff("d", "i", "d", "i"), "");
        assert!(text_diff("d", "i", "d2", "i").starts_with("@@ description\n- d\n+ d2\n"));
    }
}
