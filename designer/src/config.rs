//! The designer's settings.

use serde::{Deserialize, Serialize};

use crate::evolution::Rollback;

/// Designer settings (reference values by default; see FIDELITY.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DesignerConfig {
    /// Only the first this many proposed changes of an answer are considered
    /// (`--designer-max-changes 3` in the reference's scripts).
    pub max_changes: usize,
    /// Analysis rounds: the first analysis plus `reflection_cycles - 1` critique-and-revise
    /// rounds (`--designer-reflection-cycles 3`; values below 1 count as 1).
    pub reflection_cycles: usize,
    /// Most selectable (candidate + active) skills; beyond it the least useful non-seed skill is deprecated.
    pub max_bank_size: usize,
    /// Sampling temperature of every designer call (reference: 0).
    pub temperature: f32,
    /// Token budget of each analysis and reflection answer (reference: 2048).
    pub max_tokens: u32,
    /// Token budget of the refinement answer (reference: 4096).
    pub refinement_max_tokens: u32,
    /// Retrieved memories shown per hard case (reference: 20; 0 = all).
    pub max_retrieved_per_case: usize,
    /// Characters kept of each retrieved memory (reference: whole; 0 = no limit).
    pub max_memory_chars: usize,
    /// Characters kept (the end) of what the agent did in an interactive hard case
    /// (reference: whole; 0 = no limit).
    pub max_evidence_chars: usize,
    /// Tell every round that proposing a new skill is welcome when the failures show a gap
    /// (`--designer-new-skill-hint`; the reference's default is off, its scripts turn it on).
    pub new_skill_hint: bool,
    /// Attempts per stage: the rounds are run again (up to this many times in all) while an
    /// attempt gets no change accepted (reference `op_evolution_trials = 3`).
    pub attempts: usize,
    /// What a stage that does not beat the best snapshot restores (reference: the bank only).
    pub rollback: Rollback,
    /// Ask the designer's LLM, with the `designer.safety_judge` prompt, whether each proposal
    /// that passed the rule-based checks is safe; an unsafe, unreadable or failed verdict
    /// rejects it (memskill only; off by default and in tests).
    pub safety_judge: bool,
    /// "full" (the method: refine and add skills) | "refine-only" (the paper's ablation: new
    /// skills are rejected and the refinement prompt says so).
    pub mode: DesignerMode,
    /// The release gate between candidate and canary ("off": the reference's behaviour,
    /// every accepted change goes live as a canary; "offline": replay its cases first).
    pub gate: crate::gate::GateMode,
    /// Where the gate's thresholds start from: "memskill" (its defaults) or "governance"
    /// (the governance design's promotion gate: at least 5 cases, pass rate at least 0.80,
    /// outcome delta at least 0.15, activation precision at least 0.85 and recall at least
    /// 0.70, false triggers at most 0.10, no safety finding, no regression). Keys set in
    /// `gate_rules` override the preset's.
    pub gate_preset: crate::gate::GatePreset,
    /// Thresholds of the offline gate.
    pub gate_rules: crate::gate::GateRules,
    /// Weights of the skill score (shown by `skills show` and to the designer).
    pub score: crate::gate::ScoreWeights,
    /// The designer's edit vocabulary: "paper" (add and refine, the reference's; the prompts
    /// are byte for byte the paper path's) or "governance" (also merge, split, deprecate,
    /// archive and bundle, each validated like an add; risk levels assessed). See
    /// docs/governance.md.
    pub operations: Operations,
    /// Hard cases are failed tasks of an acting agent (ALFWorld), not failed questions: the
    /// prompts say so. Set by the caller from the dataset, not a config key.
    #[serde(skip)]
    pub interactive: bool,
    /// The refinement answer is constrained to [`crate::refinement_schema`] (the designer
    /// LLM's `structured = "json_schema"`). Set by the caller from the LLM section, not a
    /// config key of its own.
    #[serde(skip)]
    pub structured: bool,
}

impl Default for DesignerConfig {
    fn default() -> Self {
        Self {
            max_changes: 3,
            reflection_cycles: 3,
            max_bank_size: 30,
            temperature: 0.0,
            max_tokens: 2048,
            refinement_max_tokens: 4096,
            max_retrieved_per_case: 20,
            max_memory_chars: 0,
            max_evidence_chars: 0,
            new_skill_hint: false,
            attempts: 3,
            rollback: Rollback::Bank,
            safety_judge: false,
            mode: DesignerMode::Full,
            gate: Default::default(),
            gate_preset: Default::default(),
            gate_rules: Default::default(),
            score: Default::default(),
            operations: Operations::Paper,
            interactive: false,
            structured: false,
        }
    }
}

/// What the designer may change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DesignerMode {
    /// Refine existing skills and add new ones (the method).
    #[default]
    Full,
    /// Refine existing skills only (Table 2's refine-only ablation).
    RefineOnly,
}

/// `designer.operations`: which edits the designer may propose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Operations {
    /// add_new, refine_existing, no_change (the reference's).
    #[default]
    Paper,
    /// Also merge, split, deprecate, archive and bundle (the governance design's bank
    /// operations).
    Governance,
}

impl DesignerConfig {
    /// Whether the governance design is on (bank operations or the governance gate preset):
    /// then every skill's risk level is assessed and a high-risk one waits for a person.
    pub fn governed(&self) -> bool {
        self.operations == Operations::Governance
            || self.gate_preset == crate::gate::GatePreset::Governance
    }
}
