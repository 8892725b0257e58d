//! Train / val / test splits.

use std::ops::Range;
use std::str::FromStr;

use memskill_core::Sample;
use serde::{Deserialize, Serialize};

use crate::DatasetError;

/// A split name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SplitSpec {
    Train,
    Val,
    Test,
    All,
}

impl SplitSpec {
    /// The lowercase name.
    pub fn as_str(&self) -> &'static str {
        match self {
            SplitSpec::Train => "train",
            SplitSpec::Val => "val",
            SplitSpec::Test => "test",
            SplitSpec::All => "all",
        }
    }
}

impl FromStr for SplitSpec {
    type Err = DatasetError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "train" => Ok(SplitSpec::Train),
            "val" | "valid" | "validation" => Ok(SplitSpec::Val),
            "test" => Ok(SplitSpec::Test),
            "all" => Ok(SplitSpec::All),
            other => Err(DatasetError::UnknownSplit {
                name: other.to_string(),
                known: "train, val, test, all".to_string(),
            }),
        }
    }
}

/// LoCoMo's split by conversation index (default: train 0-5, val 6-7, test 8-9, as in MemSkill).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LocomoSplits {
    pub train: Range<usize>,
    pub val: Range<usize>,
    pub test: Range<usize>,
}

impl Default for LocomoSplits {
    fn default() -> Self {
        LocomoSplits {
            train: 0..6,
            val: 6..8,
            test: 8..10,
        }
    }
}

/// The samples of one LoCoMo split (by index in the file order; indices past the end are
/// ignored). `split` is `train`, `val`, `test` or `all`.
pub fn split_locomo(
    samples: impl AsRef<[Sample]>,
    split: &str,
    splits: &LocomoSplits,
) -> Result<Vec<Sample>, DatasetError> {
    let samples = samples.as_ref();
    let range = match split.parse::<SplitSpec>()? {
        SplitSpec::All => 0..samples.len(),
        SplitSpec::Train => splits.train.clone(),
        SplitSpec::Val => splits.val.clone(),
        SplitSpec::Test => splits.test.clone(),
    };
    Ok(samples
        .iter()
        .enumerate()
        .filter(|(i, _)| range.contains(i))
        .map(|(_, s)| s.clone())
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(id: &str) -> Sample {
        Sample {
            id: id.into(),
            dataset: "locomo".into(),
            sessions: vec![],
            spans: vec![],
            queries: vec![],
        }
    }

    #[test]
    fn default_and_custom_ranges() {
        let all: Vec<Sample> = (0..10).map(|i| s(&format!("c{i}"))).collect();
        let ids = |v: Vec<Sample>| v.into_iter().map(|s| s.id).collect::<Vec<_>>();
        let d = LocomoSplits::default();
        assert_eq!(
            ids(split_locomo(&all, "test", &d).unwrap()),
            vec!["c8", "c9"]
        );
        assert_eq!(
            ids(split_locomo(&all, "val", &d).unwrap()),
            vec!["c6", "c7"]
        );
        assert_eq!(split_locomo(&all, "train", &d).unwrap().len(), 6);
        assert_eq!(split_locomo(&all, "all", &d).unwrap().len(), 10);
        let c = LocomoSplits {
            train: 0..2,
            val: 2..3,
            test: 3..20,
        };
        assert_eq!(
            ids(split_locomo(&all[..5], "test", &c).unwrap()),
            vec!["c3", "c4"]
        );
        assert!(matches!(
            split_locomo(&all, "dev2", &d),
            Err(DatasetError::UnknownSplit { .. })
        ));
    }
}
