//! What the loop writes besides metrics: checkpoints, `skills.md`, the exported bank, and
//! the resume bookkeeping of `timings.jsonl`.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use memskill_core::{Skill, SkillBank};
use memskill_designer::{FinalState, Rollback};

use super::{TrainOutcome, Trainer};
use crate::checkpoint::{BankHistoryRow, Checkpoint};
use crate::fsutil::{file_len, write_atomic};

fn skill_row(s: &Skill) -> String {
    format!("{}@{} ({})", s.name, s.version, s.status)
}

pub(super) fn history_row(
    stage: u32,
    step: u64,
    reward: Option<f64>,
    event: &str,
    bank: &SkillBank,
    note: String,
) -> BankHistoryRow {
    BankHistoryRow {
        stage,
        update_step: step,
        reward,
        event: event.into(),
        bank_version: bank.bank_version,
        skills: bank.skills().iter().map(skill_row).collect(),
        note,
    }
}

/// Render `skills.md`: the bank's evolution, then the current bank. The evolution lists the
/// starting bank on its first row and, on each later row, only what changed since the row
/// above ([`bank_changes`]); the current bank is listed once, in its own table.
pub fn render_skills_md(rows: &[BankHistoryRow], bank: &SkillBank) -> String {
    let mut s = String::from("# Skill bank evolution\n\n| stage | update | event | reward | bank version | skills changed | note |\n|---|---|---|---|---|---|---|\n");
    let mut before: Option<&[String]> = None;
    for r in rows {
        let reward = r
            .reward
            .map(|x| format!("{x:.4}"))
            .unwrap_or_else(|| "-".into());
        let changes = match before {
            None => r.skills.clone(),
            Some(b) => bank_changes(b, &r.skills),
        };
        before = Some(&r.skills);
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} |\n",
            r.stage,
            r.update_step,
            r.event,
            reward,
            r.bank_version,
            changes.join("<br>").replace('|', "\\|"),
            r.note.replace('|', "\\|").replace('\n', " ")
        ));
    }
    s.push_str("\n# Current bank\n\n| skill | version | status | action | uses | mean reward | description |\n|---|---|---|---|---|---|---|\n");
    for k in bank.skills() {
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {:.4} | {} |\n",
            k.name,
            k.version,
            k.status,
            k.action,
            k.usage.count,
            k.usage.mean_reward,
            k.description.replace('|', "\\|").replace('\n', " ")
        ));
    }
    if !bank.eval_runs.is_empty() {
        s.push_str("\n# Release gate\n\n");
        s.push_str(&memskill_designer::eval_runs_md(&bank.eval_runs));
    }
    s
}

/// What changed between two lists of a history row's skills (`name@version (status)`):
/// `added S`, `removed S` and `changed NAME: A -> B` (its version, its status, or both, before
/// and after), in the order of the skills' names; `no change` when none did.
pub fn bank_changes(before: &[String], after: &[String]) -> Vec<String> {
    fn split(s: &str) -> (&str, &str) {
        s.split_once('@').unwrap_or((s, ""))
    }
    let old: std::collections::BTreeMap<&str, (&str, &str)> = before
        .iter()
        .map(|s| (split(s).0, (split(s).1, s.as_str())))
        .collect();
    let new: std::collections::BTreeMap<&str, (&str, &str)> = after
        .iter()
        .map(|s| (split(s).0, (split(s).1, s.as_str())))
        .collect();
    let names: std::collections::BTreeSet<&str> = old.keys().chain(new.keys()).copied().collect();
    let out: Vec<String> = names
        .into_iter()
        .filter_map(|n| match (old.get(n), new.get(n)) {
            (None, Some((_, full))) => Some(format!("added {full}")),
            (Some((_, full)), None) => Some(format!("removed {full}")),
            (Some((a, _)), Some((b, _))) if a != b => {
                Some(format!("changed {n}: {}", change(a, b)))
            }
            _ => None,
        })
        .collect();
    if out.is_empty() {
        vec!["no change".into()]
    } else {
        out
    }
}

/// `A -> B` for a skill's `version (status)` before and after, naming only the part that
/// changed when the other did not (`1.0.0 -> 1.1.0`, `canary -> active`).
fn change(a: &str, b: &str) -> String {
    let parts = |s: &str| -> (String, String) {
        match s.rsplit_once(" (") {
            Some((v, st)) => (v.to_string(), st.trim_end_matches(')').to_string()),
            None => (s.to_string(), String::new()),
        }
    };
    let ((va, sa), (vb, sb)) = (parts(a), parts(b));
    if va == vb {
        format!("{sa} -> {sb}")
    } else if sa == sb {
        format!("{va} -> {vb}")
    } else {
        format!("{a} -> {b}")
    }
}

/// Drop timing lines of updates after `step` (they are redone after a resume).
pub(super) fn filter_timings(path: &Path, step: u64) -> Result<()> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Ok(());
    };
    let kept: Vec<&str> = text
        .lines()
        .filter(|l| {
            serde_json::from_str::<serde_json::Value>(l)
                .ok()
                .and_then(|v| v["step"].as_u64())
                .is_some_and(|s| s <= step)
        })
        .collect();
    let mut body = kept.join("\n");
    if !body.is_empty() {
        body.push('\n');
    }
    write_atomic(path, body.as_bytes())
}

/// Write `dir/skills`: the whole folder swapped in atomically by `export_bank`, so a crash
/// leaves a complete export (the old or the new one), never none and never a mix.
fn export_skills(dir: &Path, bank: &SkillBank) -> Result<PathBuf> {
    let export = dir.join("skills");
    memskill_designer::export_bank(bank, &export, true)
        .with_context(|| format!("exporting the final skill bank to {}", export.display()))?;
    Ok(export)
}

impl Trainer<'_> {
    /// Write a checkpoint of the whole run state (`is_best` also points `best` at it).
    pub fn checkpoint(&mut self, is_best: bool) -> Result<PathBuf> {
        self.state.metrics_len = file_len(&self.files.metrics);
        self.state.invocations_len = file_len(&self.files.invocations);
        // the bank records which guard accepted each skill; stamped in place so that the run
        // goes on with the bank a resume would load (a resumed run equals a straight one)
        memskill_designer::stamp_guard(&mut self.bank);
        let ck = Checkpoint {
            state: self.state.clone(),
            controller: self
                .controller
                .save_bytes()
                .context("serialising the controller")?,
            bank: self.bank.clone(),
            evolution: self.evolution.clone(),
            pool: self.pool.clone(),
            config_toml: self.files.config_toml.clone(),
        };
        let saved = ck.save(&self.files.dir, self.cfg.run.keep_last, is_best)?;
        self.write_registry();
        Ok(saved)
    }

    /// With a registry configured: the bank, its releases and eval runs, the invocation log
    /// so far, and the memory banks of the last scored update's episodes. The registry never stops a run: a failed write (or an unreadable log) only
    /// warns, and the next checkpoint or `registry ingest` writes what is missing.
    pub(super) fn write_registry(&self) {
        let Some(loc) = self.cfg.registry.location() else {
            return;
        };
        // only what was logged since the last write that reached the registry
        let (lines, bytes) = self.registry_written.get();
        let (log, end) =
            match crate::skill_registry::read_invocations_from(&self.files.dir, bytes, None) {
                Ok(read) => read,
                Err(e) => {
                    eprintln!(
                        "warning: registry {}: {e:#}; invocations left out this time",
                        loc.display()
                    );
                    (Vec::new(), bytes)
                }
            };
        let dataset = self.cfg.data.dataset.to_string();
        let run = crate::skill_registry::run_id(&self.files.dir);
        let traces: Vec<String> = self
            .registry_banks
            .iter()
            .map(|(step, sample, _)| crate::skill_registry::trace_id(&run, *step, sample))
            .collect();
        let memories: Vec<crate::skill_registry::SampleBank<'_>> = self
            .registry_banks
            .iter()
            .zip(&traces)
            .map(|((_, sample, bank), t)| crate::skill_registry::SampleBank {
                sample,
                trace: Some(t),
                bank,
            })
            .collect();
        let written = crate::skill_registry::write_or_warn(
            &loc,
            &crate::skill_registry::RunRecords {
                dataset: Some(&dataset),
                bank: Some(&self.bank),
                invocations: &log,
                first_line: lines,
                memories: &memories,
                ..crate::skill_registry::RunRecords::new(
                    &self.files.dir,
                    "train",
                    &self.cfg.designer.cfg.score,
                )
            },
        );
        if written {
            self.registry_written.set((lines + log.len(), end));
        }
    }

    pub(super) fn write_skills_md(&self) -> Result<()> {
        write_atomic(
            &self.files.dir.join("skills.md"),
            render_skills_md(&self.state.bank_history, &self.bank).as_bytes(),
        )
    }

    /// After the last epoch: `evolution.final = "best"` makes the best snapshot what training
    /// leaves behind ("last", the reference, keeps the current state); the history records
    /// the final bank.
    pub(super) fn settle_final_state(&mut self) -> Result<()> {
        let cfg = self.cfg;
        if cfg.evolution.final_state == FinalState::Best {
            if let Some(best) = &self.evolution.best {
                self.bank = best.bank.clone();
                if cfg.designer.cfg.rollback == Rollback::BankAndController {
                    self.controller
                        .load_bytes(&best.controller_state)
                        .context("restoring the best snapshot's controller")?;
                }
            }
        }
        let best = self.evolution.best.as_ref().map(|b| b.reward);
        self.state.bank_history.push(history_row(
            self.state.stage,
            self.state.update_step,
            best.or(self.state.best_reward),
            "final",
            &self.bank,
            String::new(),
        ));
        Ok(())
    }

    /// A finished run: progress bars cleared, the final bank exported, `skills.md` written.
    pub(super) fn finish(mut self) -> Result<TrainOutcome> {
        self.progress.total.finish_and_clear();
        self.progress.episodes.finish_and_clear();
        self.out.finished = true;
        let export = export_skills(&self.files.dir, &self.bank)?;
        self.write_skills_md()?;
        // the final bank (`evolution.final` may have restored the best snapshot)
        self.write_registry();
        self.tracker
            .finish(&[export.clone(), self.files.dir.join("skills.md")]);
        for (sink, n) in self.tracker.failures() {
            if n > 0 {
                eprintln!("warning: {n} {sink} tracking writes failed in this run");
            }
        }
        self.out.export_dir = Some(export);
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(xs: &[&str]) -> Vec<String> {
        xs.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn bank_changes_name_only_what_changed() {
        let a = strings(&["a@1.0.0 (active)", "b@1.0.0 (active)", "c@1.0.0 (active)"]);
        let b = strings(&[
            "a@1.0.0 (active)",
            "b@1.1.0 (candidate)",
            "d@1.0.0 (active)",
        ]);
        assert_eq!(
            bank_changes(&a, &b),
            [
                "changed b: 1.0.0 (active) -> 1.1.0 (candidate)",
                "removed c@1.0.0 (active)",
                "added d@1.0.0 (active)"
            ]
        );
        assert_eq!(bank_changes(&a, &a), ["no change"]);
    }

    #[test]
    fn skills_md_lists_the_bank_once_and_then_only_changes() {
        let bank = SkillBank::seed();
        let all: Vec<String> = bank.skills().iter().map(skill_row).collect();
        let mut fewer = all.clone();
        let dropped = fewer.pop().unwrap();
        let row = |event: &str, skills: &[String]| BankHistoryRow {
            stage: 0,
            update_step: 0,
            reward: None,
            event: event.into(),
            bank_version: 0,
            skills: skills.to_vec(),
            note: String::new(),
        };
        let rows = [
            row("start", &all),
            row("improved", &all),
            row("designed", &fewer),
            row("final", &fewer),
        ];
        let md = render_skills_md(&rows, &bank);
        let history = &md[..md.find("# Current bank").unwrap()];
        // every skill once in the history (the start row), the dropped one once more
        for s in &all[..all.len() - 1] {
            assert_eq!(history.matches(s.as_str()).count(), 1, "{s}\n{md}");
        }
        assert!(history.contains(&format!("removed {dropped}")), "{md}");
        assert_eq!(history.matches("no change").count(), 2, "{md}");
        assert!(history.contains("| skills changed |"));
        // the current bank: one row per skill
        let current = &md[md.find("# Current bank").unwrap()..];
        for k in bank.skills() {
            let row = format!("\n| {} | {} |", k.name, k.version);
            assert_eq!(current.matches(&row).count(), 1, "{row}\n{md}");
        }
    }
}
