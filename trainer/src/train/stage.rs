//! The designer stage at the end of an outer epoch: snapshot and rollback, hard-case
//! selection, the designer LLM rounds, and the record of what changed.

use anyhow::{Context, Result};
use memskill_controller::NewSkillBias;
use memskill_core::SkillBank;
use memskill_designer::{
    DesignerError, FinalState, GateMode, HardCase, Rollback, StageDecision, StageOutcome,
};
use serde_json::json;

use super::files::history_row;
use super::Trainer;
use crate::backends::embed;
use crate::checkpoint::pointer;
use crate::episode::derive_seed;
use crate::fsutil::{append_line, write_atomic};
use crate::gate::{group_cases, Replayer};
use crate::metrics::RoleTotals;
use crate::metrics::{MetricsLine, SafetyJudgeCounts, StageMetrics};

/// Whether a designer failure is an outage (or a broken template) rather than the model's
/// own (empty) answer.
fn is_outage(e: &DesignerError) -> bool {
    match e {
        DesignerError::Llm { source, .. } => {
            !matches!(source, memskill_core::LlmError::NoContent { .. })
        }
        DesignerError::Prompt(_) => true,
        _ => false,
    }
}

/// What the trainer does with a stage decision.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct StagePlan {
    /// The bank to continue with (`None`: keep the current one).
    pub bank: Option<SkillBank>,
    /// Controller bytes to restore (`None`: keep training the current controller).
    pub controller: Option<Vec<u8>>,
    pub clear_bias: bool,
    pub name: &'static str,
}

/// The reference's rule: an improving stage continues from the (promoted) best bank; a stage
/// that did not improve restores the best bank, and the controller too only with
/// `designer.rollback = "bank+controller"`; with `keep_current` (an early stop that keeps the
/// last state) nothing is restored.
pub(crate) fn stage_plan(
    decision: &StageDecision,
    best_bank: Option<&SkillBank>,
    rollback: Rollback,
    keep_current: bool,
) -> StagePlan {
    match decision {
        StageDecision::Improved => StagePlan {
            bank: best_bank.cloned(),
            controller: None,
            clear_bias: false,
            name: "improved",
        },
        StageDecision::RolledBack { .. } if keep_current => StagePlan {
            bank: None,
            controller: None,
            clear_bias: false,
            name: "not-improved",
        },
        StageDecision::RolledBack {
            bank,
            controller_state,
        } => StagePlan {
            bank: Some(bank.clone()),
            controller: (rollback == Rollback::BankAndController).then(|| controller_state.clone()),
            clear_bias: true,
            name: "rolled-back",
        },
    }
}

impl Trainer<'_> {
    /// Snapshot and rollback, then (unless the evolution says stop, or this is the last outer
    /// epoch with `evolution.final = "best"`) select hard cases and run the designer, in the
    /// reference's order: the stage reward is compared with the best snapshot; an early stop
    /// ends training before any rollback; otherwise a stage that did not improve restores the
    /// best bank (and controller with `designer.rollback = "bank+controller"`) and the
    /// designer reuses the best snapshot's hard cases.
    pub fn designer_stage(&mut self, reward: f64, last_outer: bool) -> Result<()> {
        let before = self.rt.counters.totals();
        let retries_before = self.rt.retries();
        let (improved, decision) = self.snapshot(reward)?;
        let mut line = StageMetrics {
            stage: self.state.stage,
            step: self.state.update_step,
            reward,
            decision: decision.to_string(),
            designer: "skipped".into(),
            hard_cases_reused: None,
            hard_cases_selected: None,
            attempts: None,
            accepted: None,
            rejected: None,
            changed: None,
            designer_error: None,
            safety_judge: None,
            retries: None,
            structured_dialects: None,
            gate: None,
            bank_version: 0,
            bank_size: 0,
            llm: RoleTotals::default(),
        };
        let final_is_best = self.cfg.evolution.final_state == FinalState::Best;
        if self.evolution.should_stop() {
            self.state.stopped_early = true;
            line.designer = "stopped-early".into();
        } else if !(last_outer && final_is_best) {
            let selected = self.hard_cases(improved, &mut line)?;
            line.hard_cases_selected = Some(selected.len());
            self.design(&selected, &mut line)?;
        }
        line.bank_version = self.bank.bank_version;
        line.bank_size = self.bank.selectable().len();
        line.llm = self.rt.counters.totals().minus(&before);
        let retries = self.rt.retries().minus(&retries_before);
        line.retries = Some(retries).filter(|r| !r.is_empty());
        line.structured_dialects = self.rt.structured_dialects();
        let mline = MetricsLine::Stage(line);
        append_line(&self.files.metrics, &mline.to_line()?)?;
        self.tracker.log(&mline);
        self.state.stage += 1;
        Ok(())
    }

    /// Compare the stage reward with the best snapshot and apply the [`StagePlan`]. Returns
    /// whether the stage improved and the decision's name.
    fn snapshot(&mut self, reward: f64) -> Result<(bool, &'static str)> {
        let ctrl_bytes = self
            .controller
            .save_bytes()
            .context("serialising the controller for the snapshot")?;
        let decision =
            self.evolution
                .on_stage_end(reward, &self.bank, &ctrl_bytes, self.state.stage);
        let improved = decision == StageDecision::Improved;
        let keep_current =
            self.evolution.should_stop() && self.cfg.evolution.final_state == FinalState::Last;
        let plan = stage_plan(
            &decision,
            self.evolution.best_bank(),
            self.cfg.designer.cfg.rollback,
            keep_current,
        );
        if let Some(b) = plan.bank {
            self.bank = b;
        }
        if let Some(bytes) = plan.controller {
            self.controller
                .load_bytes(&bytes)
                .context("restoring the snapshot's controller")?;
        }
        if plan.clear_bias {
            // The restored bank has no new skills to favour.
            self.state.bias = None;
        }
        self.state.bank_history.push(history_row(
            self.state.stage,
            self.state.update_step,
            Some(reward),
            plan.name,
            &self.bank,
            String::new(),
        ));
        Ok((improved, plan.name))
    }

    /// The hard cases the designer studies: the best snapshot's when the stage did not
    /// improve (and it has some), else a fresh selection from the pool (KMeans over the
    /// question embeddings, hardest first), saved with the snapshot.
    fn hard_cases(&mut self, improved: bool, line: &mut StageMetrics) -> Result<Vec<HardCase>> {
        if let Some(saved) = self.evolution.saved_cases(improved) {
            line.hard_cases_reused = Some(true);
            return Ok(saved.to_vec());
        }
        let cases = self.pool.cases();
        let questions: Vec<&str> = cases.iter().map(|c| c.question.as_str()).collect();
        let embs = embed(self.rt.encoder.as_ref(), &questions)?;
        let selected = memskill_designer::select_hard_cases(
            cases,
            &embs,
            derive_seed(self.cfg.run.seed, &[3, self.state.stage as u64]),
            &self.cfg.select,
        );
        self.evolution.save_cases(improved, &selected);
        Ok(selected)
    }

    /// Run the designer's rounds on `selected` and take the bank it proposes.
    fn design(&mut self, selected: &[HardCase], line: &mut StageMetrics) -> Result<()> {
        let llm = self
            .rt
            .designer
            .as_ref()
            .context("designer enabled without a designer backend")?;
        if selected.is_empty() {
            line.designer = "no-hard-cases".into();
            self.evolution.on_designed(Vec::new());
            return Ok(());
        }
        let dcfg = memskill_designer::DesignerConfig {
            interactive: self.bench.failures_are_tasks(),
            structured: self.cfg.designer_llm().structured.is_on(),
            ..self.cfg.designer.cfg.clone()
        };
        let stage = self.state.stage + 1;
        match memskill_designer::run_stage(
            llm.as_ref(),
            &self.rt.prompts,
            &self.bank,
            selected,
            self.evolution.feedback.as_ref(),
            stage,
            &dcfg,
        ) {
            Ok(o) => self.take_design(o, selected, dcfg.safety_judge, line),
            // An outage (the server could not be reached or kept failing) or a broken prompt
            // template is not a designer outcome: the stage is not committed, the checkpoint
            // before it stays `latest`, and `--resume` redoes it. A reply without content
            // (the model spent its budget) is the model's answer, and is recorded like an
            // unusable reply.
            Err(e) if is_outage(&e) => {
                let latest = pointer(&self.files.dir, "latest").ok().flatten();
                let latest = latest.map_or("none yet".to_string(), |p| p.display().to_string());
                Err(anyhow::Error::new(e).context(format!(
                    "designer stage {stage} failed and was not committed; the latest checkpoint ({latest}) is from before it: `memskill train --resume` redoes it once the server answers"
                )))
            }
            Err(e) => {
                eprintln!("warning: designer stage {stage} failed: {e}");
                self.evolution.on_designed(Vec::new());
                line.designer = "error".into();
                line.designer_error = Some(e.to_string());
                let row = history_row(
                    stage,
                    self.state.update_step,
                    None,
                    "designer-error",
                    &self.bank,
                    e.to_string(),
                );
                self.state.bank_history.push(row);
                Ok(())
            }
        }
    }

    /// Record a designer stage's outcome (`designer/stage-N.json`, the metrics line), continue
    /// with its bank, and favour the skills it changed.
    fn take_design(
        &mut self,
        o: StageOutcome,
        cases: &[HardCase],
        safety_judge: bool,
        line: &mut StageMetrics,
    ) -> Result<()> {
        let stage = self.state.stage + 1;
        let dir = self.files.dir.join("designer");
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let accepted: Vec<String> = o.accepted.iter().map(|e| e.summary()).collect();
        let t = json!({"stage": stage, "attempts": o.attempts,
            "accepted": accepted,
            "rejected": o.rejected.iter().map(|(e, r)| json!({"edit": e.summary(), "reason": r})).collect::<Vec<_>>(),
            "transcript": o.transcript});
        write_atomic(
            &dir.join(format!("stage-{stage}.json")),
            serde_json::to_string_pretty(&t)?.as_bytes(),
        )?;
        line.designer = "designed".into();
        line.attempts = Some(o.attempts);
        line.accepted = Some(accepted);
        line.rejected = Some(rejected_lines(&o.rejected));
        line.changed = Some(o.changed.clone());
        if safety_judge {
            line.safety_judge = Some(SafetyJudgeCounts {
                calls: o.judge_calls,
                rejected: o.judge_rejections,
            });
        }
        let before = std::mem::replace(&mut self.bank, o.bank);
        let live = self.release(&before, &o.changed, cases, stage, line)?;
        // a merge or split goes live whole or not at all (governance bank operations)
        let undone =
            memskill_designer::ops::settle_operations(&mut self.bank, &before, &o.accepted, stage);
        let live: Vec<String> = live.into_iter().filter(|n| !undone.contains(n)).collect();
        let notes = o.notes.into_iter().filter(|n| live.contains(&n.skill));
        self.evolution.on_designed(notes.collect());
        let sel = self.bank.selectable();
        let mask: Vec<bool> = sel.iter().map(|s| live.contains(&s.name)).collect();
        if mask.iter().any(|&m| m) {
            let bias = NewSkillBias::new(mask, self.controller.updates(), &self.cfg.bias);
            self.state.bias = Some(bias);
        }
        let held: Vec<&String> = o.changed.iter().filter(|c| !live.contains(c)).collect();
        let note = match (live.is_empty(), held.is_empty()) {
            (true, true) => "no change accepted".to_string(),
            (false, true) => format!("changed: {}", live.join(", ")),
            _ => format!(
                "changed: {}; held back by the gate: {}",
                live.join(", "),
                held.iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        let row = history_row(
            stage,
            self.state.update_step,
            None,
            "designed",
            &self.bank,
            note,
        );
        self.state.bank_history.push(row);
        Ok(())
    }
}

impl Trainer<'_> {
    /// Move the stage's candidates on: with `designer.gate = "off"` all become canaries;
    /// with `"offline"` each is replayed on the stage's hard cases plus the fixed solved
    /// set (three modes) and only those that pass become canaries. Returns the names that
    /// went live.
    fn release(
        &mut self,
        before: &SkillBank,
        changed: &[String],
        cases: &[HardCase],
        stage: u32,
        line: &mut StageMetrics,
    ) -> Result<Vec<String>> {
        let dcfg = &self.cfg.designer.cfg;
        if dcfg.gate == GateMode::Off || changed.is_empty() {
            memskill_designer::admit_all(&mut self.bank, before, changed, stage);
            // every candidate became a canary, except a held high-risk one (governance)
            let live = changed.iter().filter(|n| {
                self.bank
                    .get(n)
                    .is_some_and(|s| s.status == memskill_core::SkillStatus::Canary)
            });
            return Ok(live.cloned().collect());
        }
        let mut list: Vec<(String, String, bool)> = cases
            .iter()
            .map(|c| (c.sample_id.clone(), c.query_id.clone(), false))
            .collect();
        list.extend(
            self.state
                .solved
                .iter()
                .map(|(s, q)| (s.clone(), q.clone(), true)),
        );
        let samples = self.bench.samples();
        let (groups, _) = group_cases(samples, &list);
        // the synthetic tasks know the skill each span needs: the activation eval's cases
        let expected = (self.cfg.data.dataset == crate::config::Dataset::Synthetic)
            .then(|| crate::synthetic::expected_triggers(samples));
        let proposed = self.bank.clone();
        let updates = self.controller.updates();
        let replay = Replayer {
            cfg: self.cfg,
            rt: &self.rt,
            controller: std::sync::Mutex::new(&mut self.controller),
            samples,
            domain: self.bench.memory_domain(),
            updates,
            tag: u64::from(stage),
            selection: crate::gate::ReplaySelection::Canary,
            expected: expected.as_ref(),
        };
        let mut runs = Vec::new();
        for name in changed {
            let run = match replay.compare(before, Some(before), &proposed, name, &groups, stage) {
                Ok(mut run) => {
                    memskill_designer::release_verdict(&mut run, &dcfg.gate_rules);
                    let risk = proposed.get(name).and_then(|s| s.risk);
                    memskill_designer::high_risk_verdict(&mut run, risk);
                    run
                }
                // e.g. the bank has no other selectable skill to compare with: the change is
                // held back, with the reason in its record (not an error that stops training)
                Err(e) => {
                    eprintln!("warning: offline gate of `{name}` could not replay it: {e:#}");
                    memskill_designer::failed_run(&proposed, name, stage, format!("{e:#}"))
                }
            };
            runs.push(run);
        }
        let mut verdicts = Vec::new();
        for run in runs {
            verdicts.push(verdict_line(&proposed, &run));
            memskill_designer::settle(&mut self.bank, before, run);
        }
        line.gate = Some(verdicts);
        let live = changed.iter().filter(|n| {
            self.bank
                .get(n)
                .is_some_and(|s| s.status == memskill_core::SkillStatus::Canary)
        });
        Ok(live.cloned().collect())
    }
}

/// The stage line's `gate` entry of one run: canary, held by the high-risk gate, or held
/// with the failed rules.
fn verdict_line(proposed: &SkillBank, run: &memskill_core::EvalRun) -> String {
    let risky = proposed
        .get(&run.skill)
        .is_some_and(|s| s.risk == Some(memskill_core::RiskLevel::High));
    if run.passed && risky {
        format!(
            "{}@{}: held (high-risk: waits for a person)",
            run.skill, run.version
        )
    } else if run.passed {
        format!("{}@{}: canary", run.skill, run.version)
    } else {
        format!(
            "{}@{}: held ({})",
            run.skill,
            run.version,
            run.reasons.join("; ")
        )
    }
}

/// The stage line's `rejected`: each refused change with its reason, once (a malformed
/// change's reason already says what it was: "malformed change: ...").
fn rejected_lines(rejected: &[(memskill_designer::Edit, String)]) -> Vec<String> {
    rejected
        .iter()
        .map(|(e, r)| match e {
            memskill_designer::Edit::Malformed { .. } => r.clone(),
            _ => format!("{}: {r}", e.summary()),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rollback_restores_the_bank_only_unless_asked() {
        let best = SkillBank::seed();
        let d = StageDecision::RolledBack {
            bank: best.clone(),
            controller_state: vec![1, 2, 3],
        };
        // Reference default: the bank is restored, the controller keeps training.
        let p = stage_plan(&d, Some(&best), Rollback::default(), false);
        assert_eq!(p.bank.as_ref(), Some(&best));
        assert_eq!(p.controller, None);
        assert_eq!(p.name, "rolled-back");
        assert!(p.clear_bias);
        let p = stage_plan(&d, Some(&best), Rollback::BankAndController, false);
        assert_eq!(p.controller, Some(vec![1, 2, 3]));
        // An early stop that keeps the last state restores nothing.
        let p = stage_plan(&d, Some(&best), Rollback::BankAndController, true);
        assert_eq!((p.bank, p.controller, p.name), (None, None, "not-improved"));
        let p = stage_plan(&StageDecision::Improved, Some(&best), Rollback::Bank, false);
        assert_eq!((p.bank, p.controller.is_none()), (Some(best), true));
    }

    #[test]
    fn each_rejection_is_said_once() {
        use memskill_designer::Edit;
        let malformed = Edit::Malformed {
            raw: "{}".into(),
            problem: "no changes list".into(),
        };
        let lines = rejected_lines(&[
            (malformed, "malformed change: no changes list".into()),
            (Edit::NoChange, "why".into()),
        ]);
        assert_eq!(
            lines,
            ["malformed change: no changes list", "no change: why"]
        );
    }
}
