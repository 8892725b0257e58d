//! The hard-case pool: queries the agent failed, kept across inner epochs for the designer.

use serde::{Deserialize, Serialize};

/// Characters of [`HardCase::evidence`] a pool keeps (the end). Large enough for a whole
/// 50-step ALFWorld transcript, which the reference shows the designer in full.
pub const MAX_EVIDENCE_CHARS: usize = 32_000;

/// One failed query, with what the agent saw and answered.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HardCase {
    pub query_id: String,
    pub question: String,
    pub gold: String,
    /// Dataset category (e.g. LoCoMo "1".."5", LongMemEval question type).
    #[serde(default)]
    pub category: String,
    pub prediction: String,
    /// Score in [0, 1] (F1 or judge).
    pub score: f64,
    /// Texts of the memories retrieved for the answer, best first.
    #[serde(default)]
    pub retrieved: Vec<String>,
    /// Conversation / sample id.
    pub sample_id: String,
    /// Inner epoch in which the failure was (last) seen.
    pub step: u64,
    /// How often this query failed (at least 1 once recorded).
    #[serde(default)]
    pub fail_count: u32,
    /// What the agent did, for interactive tasks (the tail of an ALFWorld game's transcript);
    /// empty for question answering.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub evidence: String,
}

impl HardCase {
    /// The case with every secret value in its texts (question, answer, prediction, retrieved
    /// memories, evidence) replaced by `[REDACTED:<kind>]` ([`crate::redact_secrets`]); a
    /// value found in one text is redacted wherever it occurs in the others.
    pub fn redacted(mut self) -> Self {
        use memskill_guard::{redact_with, secret_values};
        let known = secret_values(
            [&self.question, &self.gold, &self.prediction, &self.evidence]
                .into_iter()
                .chain(&self.retrieved)
                .map(String::as_str),
        );
        let r = |t: &str| redact_with(t, &known);
        self.question = r(&self.question);
        self.gold = r(&self.gold);
        self.prediction = r(&self.prediction);
        self.evidence = r(&self.evidence);
        for m in &mut self.retrieved {
            *m = r(m);
        }
        self
    }

    /// The id recorded in skill provenance and release records: `sample_id/query_id`
    /// (or just the query id when the sample id is empty).
    pub fn id(&self) -> String {
        if self.sample_id.is_empty() {
            self.query_id.clone()
        } else {
            format!("{}/{}", self.sample_id, self.query_id)
        }
    }

    /// Difficulty `clamp(1 - score, 0, 1) * ln_1p(max(fail_count, 1))`, as the reference's
    /// case importance (`src/designer.py` `_case_importance`); a NaN score counts as 0.
    pub fn difficulty(&self) -> f64 {
        let severity = if self.score.is_nan() {
            1.0
        } else {
            (1.0 - self.score).clamp(0.0, 1.0)
        };
        severity * (self.fail_count.max(1) as f64).ln_1p()
    }
}

/// Pool settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PoolConfig {
    /// A query is a hard case when its score is strictly below this (F1 < 0.5; use 1.0 for judges).
    pub threshold: f64,
    /// Cases last seen more than `window` inner epochs (updates, counted globally across outer
    /// epochs) before the newest recorded one are pruned (0 = keep forever). Reference:
    /// `--designer-failure-window-epochs 100`.
    pub window: u64,
    /// Maximum number of cases (0 = no cap); beyond it the oldest, then least-failed, are
    /// dropped, the later-recorded first among equals. Reference: `--designer-failure-pool-size 2000`.
    pub max_size: usize,
}

impl Default for PoolConfig {
    fn default() -> Self {
        Self {
            threshold: 0.5,
            window: 100,
            max_size: 2000,
        }
    }
}

/// The pool of hard cases (checkpointed with serde).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HardCasePool {
    pub cfg: PoolConfig,
    cases: Vec<HardCase>,
}

impl HardCasePool {
    pub fn new(cfg: PoolConfig) -> Self {
        Self {
            cfg,
            cases: Vec::new(),
        }
    }

    /// Record a scored query. Returns `false` (and records nothing) when the score is not
    /// below the threshold. A repeat failure of the same (sample, query) increments its
    /// `fail_count` and refreshes prediction, score, retrieved memories and step, keeping the
    /// first question, answer, category and evidence (its place in the pool stays). Then, as the reference does after every added
    /// failure, prunes by the window relative to this case's step and enforces the size cap.
    /// Secret values in the case's texts are redacted first ([`HardCase::redacted`]): the
    /// pool is what `hard_cases.json` and the designer's prompts hold.
    pub fn record(&mut self, case: HardCase) -> bool {
        let failed = case.score.is_nan() || case.score < self.cfg.threshold;
        if !failed {
            return false;
        }
        let mut case = case.redacted();
        let step = case.step;
        if case.evidence.chars().count() > MAX_EVIDENCE_CHARS {
            case.evidence = crate::text::tail(&case.evidence, MAX_EVIDENCE_CHARS);
        }
        if let Some(old) = self
            .cases
            .iter_mut()
            .find(|c| c.sample_id == case.sample_id && c.query_id == case.query_id)
        {
            // As the reference: the outcome (prediction, score, retrieved memories, step) is
            // refreshed; what identifies the case (question, answer, category) and the
            // evidence (an interactive task's transcript) stay as first recorded.
            let count = old.fail_count.saturating_add(1);
            let first = std::mem::take(old);
            *old = HardCase {
                fail_count: count,
                question: first.question,
                gold: first.gold,
                category: first.category,
                evidence: first.evidence,
                ..case
            };
        } else {
            let fail_count = case.fail_count.max(1);
            self.cases.push(HardCase { fail_count, ..case });
        }
        self.prune(step);
        true
    }

    /// Drop cases older than the window, then enforce the size cap.
    pub fn prune(&mut self, current_step: u64) {
        if self.cfg.window > 0 {
            let w = self.cfg.window;
            self.cases
                .retain(|c| current_step.saturating_sub(c.step) <= w);
        }
        self.cap();
    }

    fn cap(&mut self) {
        let max = self.cfg.max_size;
        if max == 0 || self.cases.len() <= max {
            return;
        }
        let excess = self.cases.len() - max;
        // Victims: oldest step first, then fewest failures, then the latest recorded (the
        // reference keeps the first `max` of a stable descending sort by (step, fail count)).
        let mut order: Vec<usize> = (0..self.cases.len()).collect();
        order.sort_by_key(|&i| {
            (
                self.cases[i].step,
                self.cases[i].fail_count,
                std::cmp::Reverse(i),
            )
        });
        let mut drop = vec![false; self.cases.len()];
        for &i in &order[..excess] {
            drop[i] = true;
        }
        let mut i = 0;
        self.cases.retain(|_| {
            let keep = !drop[i];
            i += 1;
            keep
        });
    }

    /// All cases, in first-recorded order.
    pub fn cases(&self) -> &[HardCase] {
        &self.cases
    }
    pub fn len(&self) -> usize {
        self.cases.len()
    }
    pub fn is_empty(&self) -> bool {
        self.cases.is_empty()
    }
    pub fn clear(&mut self) {
        self.cases.clear();
    }
}

#[cfg(test)]
pub(crate) fn case(q: &str, score: f64, step: u64) -> HardCase {
    HardCase {
        query_id: q.into(),
        question: format!("question {q}?"),
        gold: "gold".into(),
        category: "1".into(),
        prediction: "pred".into(),
        score,
        retrieved: vec!["a memory".into()],
        sample_id: "s1".into(),
        step,
        fail_count: 0,
        evidence: String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_only_failures_and_counts_repeats() {
        let mut p = HardCasePool::new(PoolConfig::default());
        assert!(
            !p.record(case("q1", 0.5, 0)),
            "score == threshold is not a failure"
        );
        assert!(!p.record(case("q1", 0.9, 0)));
        assert!(p.record(case("q1", 0.2, 0)));
        assert_eq!(p.cases()[0].fail_count, 1);
        let mut again = case("q1", 0.1, 2);
        again.prediction = "new pred".into();
        assert!(p.record(again));
        assert_eq!(p.len(), 1);
        let c = &p.cases()[0];
        assert_eq!(
            (c.fail_count, c.step, c.score, c.prediction.as_str()),
            (2, 2, 0.1, "new pred")
        );
        // The first transcript is kept (the reference refreshes the outcome, not the evidence).
        let mut t1 = case("t", 0.0, 1);
        t1.evidence = "first transcript".into();
        p.record(t1);
        let mut t2 = case("t", 0.0, 2);
        t2.evidence = "second transcript".into();
        t2.prediction = "second".into();
        p.record(t2);
        let t = p.cases().iter().find(|c| c.query_id == "t").unwrap();
        assert_eq!(
            (
                t.evidence.as_str(),
                t.prediction.as_str(),
                t.step,
                t.fail_count
            ),
            ("first transcript", "second", 2, 2)
        );
        // Same query id in another sample is another case.
        let mut other = case("q1", 0.0, 2);
        other.sample_id = "s2".into();
        p.record(other);
        assert_eq!(p.len(), 3);
        assert!(
            p.record(case("nan", f64::NAN, 0)),
            "NaN score counts as a failure"
        );
        // A long transcript is kept by its end.
        let mut long = case("game", 0.0, 3);
        long.evidence = format!(
            "{}TRAJECTORY_STATUS: FAILED",
            "x".repeat(2 * MAX_EVIDENCE_CHARS)
        );
        p.record(long);
        let kept = &p
            .cases()
            .iter()
            .find(|c| c.query_id == "game")
            .unwrap()
            .evidence;
        assert!(kept.chars().count() <= MAX_EVIDENCE_CHARS + 3);
        assert!(kept.ends_with("TRAJECTORY_STATUS: FAILED"));
    }

    #[test]
    fn prune_by_window() {
        let mut p = HardCasePool::new(PoolConfig {
            window: 2,
            ..Default::default()
        });
        for s in 0..5 {
            p.record(case(&format!("q{s}"), 0.0, s));
        }
        p.prune(4);
        let ids: Vec<_> = p.cases().iter().map(|c| c.query_id.clone()).collect();
        assert_eq!(ids, ["q2", "q3", "q4"]);
        let mut forever = HardCasePool::new(PoolConfig {
            window: 0,
            ..Default::default()
        });
        forever.record(case("old", 0.0, 0));
        forever.prune(1000);
        assert_eq!(forever.len(), 1);
    }

    #[test]
    fn cap_drops_oldest_then_least_failed() {
        let mut p = HardCasePool::new(PoolConfig {
            max_size: 3,
            window: 0,
            ..Default::default()
        });
        p.record(case("a", 0.0, 1));
        p.record(case("b", 0.0, 1));
        p.record(case("b", 0.0, 1)); // b failed twice
        p.record(case("c", 0.0, 2));
        p.record(case("d", 0.0, 0)); // oldest: dropped first
        let ids: Vec<_> = p.cases().iter().map(|c| c.query_id.clone()).collect();
        assert_eq!(ids, ["a", "b", "c"]);
        p.record(case("e", 0.0, 3)); // a and b same step: a has fewer failures
        let ids: Vec<_> = p.cases().iter().map(|c| c.query_id.clone()).collect();
        assert_eq!(ids, ["b", "c", "e"]);
    }

    #[test]
    fn cap_drops_the_later_recorded_among_equals_and_zero_disables() {
        let mut p = HardCasePool::new(PoolConfig {
            max_size: 2,
            window: 0,
            ..Default::default()
        });
        for q in ["x", "y", "z"] {
            p.record(case(q, 0.0, 5));
        }
        let ids: Vec<_> = p.cases().iter().map(|c| c.query_id.clone()).collect();
        assert_eq!(ids, ["x", "y"], "the reference keeps the first recorded");
        let mut unbounded = HardCasePool::new(PoolConfig {
            max_size: 0,
            window: 0,
            ..Default::default()
        });
        for i in 0..50 {
            unbounded.record(case(&format!("q{i}"), 0.0, 0));
        }
        assert_eq!(unbounded.len(), 50, "max_size 0 disables the cap");
    }

    #[test]
    fn record_prunes_by_the_window_of_the_newest_case() {
        let mut p = HardCasePool::new(PoolConfig {
            window: 100,
            ..Default::default()
        });
        assert_eq!(PoolConfig::default().window, 100, "reference default");
        p.record(case("old", 0.0, 0));
        p.record(case("mid", 0.0, 100));
        assert_eq!(p.len(), 2, "100 epochs back is still inside the window");
        p.record(case("new", 0.0, 101));
        let ids: Vec<_> = p.cases().iter().map(|c| c.query_id.clone()).collect();
        assert_eq!(ids, ["mid", "new"]);
    }

    #[test]
    fn serde_round_trip_and_difficulty() {
        let mut p = HardCasePool::new(PoolConfig::default());
        p.record(case("q", 0.25, 3));
        let j = serde_json::to_string(&p).unwrap();
        let back: HardCasePool = serde_json::from_str(&j).unwrap();
        assert_eq!(p, back);
        let c = &p.cases()[0];
        assert!((c.difficulty() - 0.75 * 2f64.ln()).abs() < 1e-12);
        assert_eq!(
            case("z", 0.0, 0).difficulty(),
            1f64.ln_1p(),
            "fail_count 0 counts as 1"
        );
        assert_eq!(c.id(), "s1/q");
    }
}
