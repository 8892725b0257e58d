//! Progress bars (hidden when stderr is not a terminal) and the per-update log line.

use std::io::IsTerminal;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::Trainer;
use crate::metrics::UpdateMetrics;

pub(super) struct Progress {
    _multi: MultiProgress,
    pub total: ProgressBar,
    pub episodes: ProgressBar,
    pub hidden: bool,
}

impl Progress {
    pub fn new(enabled: bool, total: u64, done: u64) -> Self {
        let hidden = !enabled || !std::io::stderr().is_terminal();
        let target = if hidden {
            ProgressDrawTarget::hidden()
        } else {
            ProgressDrawTarget::stderr()
        };
        let multi = MultiProgress::with_draw_target(target);
        let style =
            ProgressStyle::with_template("{prefix:>8} [{bar:30}] {pos}/{len} ETA {eta} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> ");
        let total_bar = multi.add(
            ProgressBar::new(total)
                .with_style(style.clone())
                .with_prefix("updates"),
        );
        total_bar.set_position(done);
        let episodes = multi.add(
            ProgressBar::new(0)
                .with_style(style)
                .with_prefix("episodes"),
        );
        Self {
            _multi: multi,
            total: total_bar,
            episodes,
            hidden,
        }
    }
}

/// " (k of n episodes excluded: unscored)" when an update's mean left episodes out, so
/// the fraction is printed next to every mean; empty otherwise.
fn excluded_note(line: &UpdateMetrics) -> String {
    if line.dropped == 0 {
        return String::new();
    }
    format!(
        " ({} of {} episodes excluded: unscored)",
        line.dropped, line.episodes
    )
}

impl Trainer<'_> {
    /// Move the update bar and, with `log_lines`, print one line for the update.
    pub(super) fn report_update(&self, line: &UpdateMetrics) {
        let state = &self.state;
        self.progress.total.set_position(state.update_step);
        self.progress.total.set_message(format!(
            "reward {:.3}{}",
            line.reward,
            excluded_note(line)
        ));
        if self.log_lines {
            let total = self.cfg.run.outer_epochs as u64 * self.cfg.run.inner_epochs as u64;
            eprintln!(
                "update {}/{} (outer {} inner {}): reward {:.4}{}, bank {} skills, {} LLM calls, {} errors",
                state.update_step,
                total,
                state.outer + 1,
                state.inner,
                line.reward,
                excluded_note(line),
                self.bank.selectable().len(),
                line.llm_calls,
                line.llm_errors
            );
        }
    }
}
