//! A request to stop an evaluation early (`EvalOptions::stop`, `BaselineOptions::stop`: the
//! CLI's SIGTERM / SIGINT / SIGUSR1 handler, Python's Ctrl-C) and the typed error it ends
//! the evaluation with. The evaluation looks at the flag before every sample, span and
//! question, and once more before writing its results, so a stopped evaluation writes no
//! results file; memory banks finished before the stop stay in the evaluation cache, and a
//! rerun reuses them.
//!
//! (Training stops differently: `TrainOptions::stop` ends the loop after the current update,
//! with a checkpoint, and `train` returns normally with `TrainOutcome::interrupted`.)

use std::sync::atomic::{AtomicBool, Ordering};

/// An evaluation stopped on request before it finished; no results were written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interrupted {
    /// Where it stopped: `sample conv-3`, `span s2 of sample conv-3`, `question q7 of ...`,
    /// `writing the results`.
    pub at: String,
}

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "evaluation interrupted before {}: no results written",
            self.at
        )
    }
}

impl std::error::Error for Interrupted {}

/// Whether `stop` is set.
pub fn requested(stop: Option<&AtomicBool>) -> bool {
    stop.is_some_and(|s| s.load(Ordering::SeqCst))
}

/// An [`Interrupted`] error (at `at()`) when `stop` is set.
pub fn check(stop: Option<&AtomicBool>, at: impl FnOnce() -> String) -> anyhow::Result<()> {
    if requested(stop) {
        return Err(Interrupted { at: at() }.into());
    }
    Ok(())
}

/// Whether `e` (or an error in its chain) is an [`Interrupted`].
pub fn is_interrupted(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.is::<Interrupted>())
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::Context;

    #[test]
    fn a_set_flag_is_a_typed_error_found_through_context() {
        let flag = AtomicBool::new(false);
        assert!(check(Some(&flag), || "sample a".into()).is_ok());
        assert!(check(None, || "sample a".into()).is_ok());
        flag.store(true, Ordering::SeqCst);
        let e = check(Some(&flag), || "sample a".into())
            .context("evaluating")
            .unwrap_err();
        assert!(is_interrupted(&e));
        assert_eq!(
            format!("{e:#}"),
            "evaluating: evaluation interrupted before sample a: no results written"
        );
        assert!(!is_interrupted(&anyhow::anyhow!("other")));
    }
}
