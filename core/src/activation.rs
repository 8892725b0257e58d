//! Activation with expected triggers: does a skill fire where it should, and only there?
//!
//! A *case* is one span with the skill that should be selected on it (`expected`), or none
//! (a negative case for every skill). Against what the controller selected on that span,
//! per skill:
//! - precision = correct triggers / triggers,
//! - recall = correct triggers / expected triggers,
//! - false-positive rate = triggers on the skill's negative cases (expected another skill or
//!   none) / those cases,
//!
//! each with a 95% Wilson score interval. Pure arithmetic.

use serde::{Deserialize, Serialize};

/// A proportion with its 95% Wilson score interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Rate {
    pub value: f64,
    pub lo: f64,
    pub hi: f64,
    /// Numerator and denominator.
    pub k: u64,
    pub n: u64,
}

impl Rate {
    /// `k / n` with its 95% Wilson interval; `None` when `n == 0` (undefined).
    pub fn wilson(k: u64, n: u64) -> Option<Rate> {
        if n == 0 {
            return None;
        }
        let z = 1.959_963_984_540_054_f64;
        let nf = n as f64;
        let p = k as f64 / nf;
        let z2 = z * z;
        let denom = 1.0 + z2 / nf;
        let centre = (p + z2 / (2.0 * nf)) / denom;
        let half = z * (p * (1.0 - p) / nf + z2 / (4.0 * nf * nf)).sqrt() / denom;
        Some(Rate {
            value: p,
            lo: (centre - half).max(0.0),
            hi: (centre + half).min(1.0),
            k,
            n,
        })
    }
}

impl std::fmt::Display for Rate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:.2} [{:.2}, {:.2}] ({}/{})",
            self.value, self.lo, self.hi, self.k, self.n
        )
    }
}

/// One skill's activation against expected triggers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActivationStats {
    /// Cases seen (spans with an expected trigger or an explicit none).
    pub cases: u64,
    /// Precision (correct / triggers), recall (correct / expected) and false-positive rate
    /// (triggers on negative cases / negative cases); `None` when the denominator is 0.
    pub precision: Option<Rate>,
    pub recall: Option<Rate>,
    pub false_positive_rate: Option<Rate>,
}

/// `skill`'s activation over `cases`: each is (the expected skill or none, the skills the
/// controller selected on that span).
pub fn activation_stats<S: AsRef<str>>(
    skill: &str,
    cases: &[(Option<&str>, &[S])],
) -> ActivationStats {
    let (mut triggers, mut correct, mut expected, mut negatives, mut fp) = (0, 0, 0, 0, 0);
    for (want, picked) in cases {
        let fired = picked.iter().any(|p| p.as_ref() == skill);
        let positive = *want == Some(skill);
        triggers += u64::from(fired);
        expected += u64::from(positive);
        correct += u64::from(fired && positive);
        negatives += u64::from(!positive);
        fp += u64::from(fired && !positive);
    }
    ActivationStats {
        cases: cases.len() as u64,
        precision: Rate::wilson(correct, triggers),
        recall: Rate::wilson(correct, expected),
        false_positive_rate: Rate::wilson(fp, negatives),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_matches_the_textbook_values() {
        // 8 of 10: Wilson 95% [0.490, 0.943]
        let r = Rate::wilson(8, 10).unwrap();
        assert!((r.value - 0.8).abs() < 1e-12);
        assert!((r.lo - 0.4902).abs() < 1e-3, "{r:?}");
        assert!((r.hi - 0.9433).abs() < 1e-3, "{r:?}");
        // the ends stay inside [0, 1] and are not degenerate
        let z = Rate::wilson(0, 5).unwrap();
        assert!(z.lo < 1e-12, "{z:?}");
        assert!(z.hi > 0.4 && z.hi < 0.5, "{z:?}");
        assert!(Rate::wilson(0, 0).is_none());
    }

    #[test]
    fn a_skill_that_fires_everywhere_has_low_precision_and_a_high_false_positive_rate() {
        let all = ["a", "b"];
        let only_a = ["a"];
        let only_b = ["b"];
        let cases: Vec<(Option<&str>, &[&str])> = vec![
            (Some("a"), &only_a),
            (Some("a"), &all),
            (Some("b"), &all),
            (Some("b"), &only_b),
            (None, &only_b),
            (None, &[]),
        ];
        let a = activation_stats("a", &cases);
        assert_eq!(a.cases, 6);
        let p = a.precision.unwrap();
        assert_eq!((p.k, p.n), (2, 3));
        let r = a.recall.unwrap();
        assert_eq!((r.k, r.n), (2, 2));
        let f = a.false_positive_rate.unwrap();
        assert_eq!((f.k, f.n), (1, 4));
        let b = activation_stats("b", &cases);
        assert_eq!(b.precision.unwrap().k, 2);
        assert_eq!(b.precision.unwrap().n, 4);
        assert_eq!(b.false_positive_rate.unwrap().k, 2);
        // a skill nobody expects and nobody picks: precision and recall undefined
        let c = activation_stats("c", &cases);
        assert!(c.precision.is_none() && c.recall.is_none());
        assert_eq!(c.false_positive_rate.unwrap().k, 0);
    }
}
