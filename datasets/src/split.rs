//! Train / val / test splits.

use std::ops::Range;
use std::str::FromStr;

use memskill_core::Sample;
use serde::{Deserialize, Serialize};

use crate::DatasetError;

/// A split name: `train`, `val` (also read as `valid` / `validation`), `test` or `all`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SplitSpec {
    Train,
    #[serde(alias = "valid", alias = "validation")]
    Val,
    Test,
    All,
}

impl std::fmt::Display for SplitSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
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
/// ignored).
pub fn split_locomo(
    samples: impl AsRef<[Sample]>,
    split: SplitSpec,
    splits: &LocomoSplits,
) -> Result<Vec<Sample>, DatasetError> {
    let samples = samples.as_ref();
    let range = match split {
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
            ids(split_locomo(&all, SplitSpec::Test, &d).unwrap()),
            vec!["c8", "c9"]
        );
        assert_eq!(
            ids(split_locomo(&all, SplitSpec::Val, &d).unwrap()),
            vec!["c6", "c7"]
        );
        assert_eq!(split_locomo(&all, SplitSpec::Train, &d).unwrap().len(), 6);
        assert_eq!(split_locomo(&all, SplitSpec::All, &d).unwrap().len(), 10);
        let c = LocomoSplits {
            train: 0..2,
            val: 2..3,
            test: 3..20,
        };
        assert_eq!(
            ids(split_locomo(&all[..5], SplitSpec::Test, &c).unwrap()),
            vec!["c3", "c4"]
        );
        assert!(matches!(
            "dev2".parse::<SplitSpec>(),
            Err(DatasetError::UnknownSplit { .. })
        ));
        assert_eq!("valid".parse::<SplitSpec>().unwrap(), SplitSpec::Val);
    }
}
