//! The memory contract (`[memory.contract]`): which memory types may be written, whether a
//! reader sees memories of a project it is not in, and how age and sensitivity shape what a
//! reader is given (TTL and decay of retrieval weight per type, high-sensitivity memories only
//! for questions that ask for them, stale memories with a warning). Pure rules; the trainer
//! applies them where memories are written (the executor's actions) and where they are read
//! (the answerer's retrieval), and counts what they refused.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::memory::{date_key, MemoryItem, MemoryType};
use crate::scope::Sensitivity;
use crate::Sample;

/// Whether a reader sees the memories of another project.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CrossProject {
    /// A memory of a project is seen only by a reader in that project (the contract's
    /// default). Memories of no project are seen by every reader.
    #[default]
    Deny,
    Allow,
}

/// How a memory's retrieval weight falls with its age.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decay {
    /// Weight 1 until the TTL (the default).
    #[default]
    None,
    /// From 1 at age 0 down to 0 at the memory type's TTL (no TTL: weight 1).
    Linear,
    /// Halved every `half_life`; 0 from the TTL on, where the type has one.
    Exponential,
}

/// What an age of the contract counts: days between dates the dataset gives, or spans of the
/// sample (for data without dates).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AgeUnit {
    Days,
    Spans,
}

/// An age or a duration of the contract: `"30d"`, `"12h"`, `"2w"`, `"1y"` (365 days) or
/// `"40 spans"`. Positive and finite (at most 100 years or 10 million spans).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Age {
    /// In `unit`s (days for h / d / w / y).
    pub value: f64,
    pub unit: AgeUnit,
}

impl std::str::FromStr for Age {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim().to_ascii_lowercase();
        let split = t
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(t.len());
        let (num, unit) = (&t[..split], t[split..].trim());
        let n: f64 = num
            .parse()
            .map_err(|_| format!("age {s:?}: expected a number then h, d, w, y or spans"))?;
        let (value, unit, max) = match unit {
            "h" => (n / 24.0, AgeUnit::Days, 36_500.0),
            "d" => (n, AgeUnit::Days, 36_500.0),
            "w" => (n * 7.0, AgeUnit::Days, 36_500.0),
            "y" => (n * 365.0, AgeUnit::Days, 36_500.0),
            "span" | "spans" => (n, AgeUnit::Spans, 1e7),
            _ => return Err(format!("age {s:?}: the unit must be h, d, w, y or spans")),
        };
        if !(value.is_finite() && value > 0.0 && value <= max) {
            return Err(format!(
                "age {s:?} must be above 0 and at most {max} {}",
                unit.as_str()
            ));
        }
        Ok(Age { value, unit })
    }
}

impl TryFrom<String> for Age {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

impl From<Age> for String {
    fn from(a: Age) -> String {
        match a.unit {
            AgeUnit::Days => format!("{}d", a.value),
            AgeUnit::Spans => format!("{} spans", a.value),
        }
    }
}

impl AgeUnit {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Days => "days",
            Self::Spans => "spans",
        }
    }
}

/// The marker a stale memory's text is given when `stale_marker` is not set; `{age}` is the
/// memory's age ("120 days", "40 spans").
pub const DEFAULT_STALE_MARKER: &str = "(stale: last confirmed {age} ago)";

/// The key of `ttl` that applies to memories of a type without its own entry, and to
/// memories of no type.
pub const TTL_DEFAULT_KEY: &str = "default";

/// `[memory.contract]`. The default refuses nothing of what the reproduction writes: every
/// type may be written, only project-scoped memories (`executor.scoped_memories`, a memskill
/// option) are kept from readers of other projects, and no rule of age or sensitivity is set
/// (retrieval is then exactly what it is without a contract).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MemoryContract {
    /// The types a memory may be written with (empty: every type). A write of no stated type
    /// is allowed unless this list is set.
    pub allowed_types: Vec<MemoryType>,
    /// Types never written, whatever `allowed_types` says.
    pub forbidden_types: Vec<MemoryType>,
    pub cross_project: CrossProject,
    /// How retrieval weight falls with age (off by default).
    #[serde(skip_serializing_if = "is_default")]
    pub decay: Decay,
    /// `decay = "exponential"`: the age at which the weight is halved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub half_life: Option<Age>,
    /// Memories of this sensitivity or higher are high-sensitivity: left out of a question's
    /// retrieval unless the question asks for them (off by default).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sensitive_from: Option<Sensitivity>,
    /// Memories of these types are high-sensitivity too.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sensitive_types: Vec<MemoryType>,
    /// Memories at least this old are shown with a warning (off by default).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stale_after: Option<Age>,
    /// The warning put after a stale memory's text (`{age}`: its age); empty: none (still
    /// counted). Absent: [`DEFAULT_STALE_MARKER`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stale_marker: Option<String>,
    /// Time to live per type (a type's name, or `default` for every other memory): a memory
    /// at least this old is not retrieved (off by default).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub ttl: BTreeMap<String, Age>,
}

fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

/// The retrieval weight of a memory of age `age` (in the unit of `ttl` and `half_life`):
/// 1 at age 0 (and for a negative age), never rising with age, 0 from the TTL on.
/// - `None`: 1 until the TTL;
/// - `Linear`: `1 - age / ttl` (no TTL: 1);
/// - `Exponential`: `0.5^(age / half_life)` (no half-life: 1).
pub fn decay_weight(decay: Decay, age: f64, ttl: Option<f64>, half_life: Option<f64>) -> f64 {
    let age = if age.is_nan() { 0.0 } else { age.max(0.0) };
    if ttl.is_some_and(|t| age >= t) {
        return 0.0;
    }
    match (decay, ttl, half_life) {
        (Decay::Linear, Some(t), _) => 1.0 - age / t,
        (Decay::Exponential, _, Some(h)) if h > 0.0 => 0.5f64.powf(age / h),
        _ => 1.0,
    }
}

/// Whether `question` mentions one of `keywords`: one of its words (split at anything but
/// letters and digits, any case) is a keyword or a keyword followed by `s`.
pub fn query_matches(question: &str, keywords: &[&str]) -> bool {
    question
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .any(|w| {
            keywords.iter().any(|k| {
                let k = k.to_lowercase();
                w == k || w.strip_suffix('s') == Some(k.as_str())
            })
        })
}

/// Days since 1970-01-01 of a proleptic Gregorian (year, month, day).
pub fn day_number((y, m, d): (i32, u32, u32)) -> i64 {
    let y = i64::from(y) - i64::from(m <= 2);
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// When a question is asked, to age memories against: a day (the question's date, else the
/// latest date of the sample's spans) or the sample's last span.
#[derive(Debug, Clone, PartialEq)]
pub enum Clock {
    /// The question's day number; None: no readable date (nothing is aged).
    Days(Option<i64>),
    /// The index of the sample's last span, and each span id's index.
    Spans {
        last: usize,
        index: BTreeMap<String, usize>,
    },
}

impl Clock {
    /// The clock of a question of `sample` asked at `question_date` (LongMemEval gives one;
    /// LoCoMo does not: the conversation's last session date is used).
    pub fn of(unit: AgeUnit, sample: &Sample, question_date: Option<&str>) -> Clock {
        match unit {
            AgeUnit::Days => Clock::Days(
                question_date
                    .and_then(date_key)
                    .or_else(|| {
                        sample
                            .spans
                            .iter()
                            .filter_map(|s| s.date.as_deref().and_then(date_key))
                            .max()
                    })
                    .map(day_number),
            ),
            AgeUnit::Spans => Clock::Spans {
                last: sample.spans.iter().map(|s| s.index).max().unwrap_or(0),
                index: sample
                    .spans
                    .iter()
                    .map(|s| (s.id.clone(), s.index))
                    .collect(),
            },
        }
    }

    /// The age of `m`'s current text: days since it was observed (`valid_from`), or spans
    /// since the span that wrote it. None when that is unknown (no readable date, a span not
    /// of this sample): such a memory is not aged.
    pub fn age_of(&self, m: &MemoryItem) -> Option<f64> {
        match self {
            Clock::Days(now) => {
                let then = m.valid_from.as_deref().and_then(date_key).map(day_number)?;
                Some(((*now)? - then).max(0) as f64)
            }
            Clock::Spans { last, index } => {
                let at = index.get(&m.provenance.span_id)?;
                Some(last.saturating_sub(*at) as f64)
            }
        }
    }
}

impl MemoryContract {
    /// Why a write of this type is refused (`None`: allowed).
    pub fn refuses_write(&self, kind: Option<MemoryType>) -> Option<String> {
        match kind {
            Some(k) if self.forbidden_types.contains(&k) => {
                Some(format!("type {} is forbidden", k.as_str()))
            }
            Some(k) if !self.allowed_types.is_empty() && !self.allowed_types.contains(&k) => Some(
                format!("type {} is not among the allowed types", k.as_str()),
            ),
            None if !self.allowed_types.is_empty() => {
                Some("no type stated, and the contract allows only listed types".into())
            }
            _ => None,
        }
    }

    /// Whether a reader in `reader_project` (None: in no project) is kept from `m`.
    pub fn withholds(&self, reader_project: Option<&str>, m: &MemoryItem) -> bool {
        match (self.cross_project, m.scope.project.as_deref()) {
            (CrossProject::Allow, _) | (_, None) => false,
            (CrossProject::Deny, Some(p)) => reader_project != Some(p),
        }
    }

    /// Whether a rule of age or sensitivity is set: retrieval for a reader then goes through
    /// [`Self::weight`], [`Self::expired`], [`Self::high_sensitivity`] and
    /// [`Self::stale_note`]; without one it is the plain retrieval.
    pub fn has_read_rules(&self) -> bool {
        self.decay != Decay::None
            || !self.ttl.is_empty()
            || self.sensitive_from.is_some()
            || !self.sensitive_types.is_empty()
            || self.stale_after.is_some()
    }

    /// The part of the contract that changes what is written (a memory-bank cache key holds
    /// it), as it was serialised before the read rules existed.
    pub fn write_rules(&self) -> serde_json::Value {
        serde_json::json!({
            "allowed_types": self.allowed_types,
            "forbidden_types": self.forbidden_types,
            "cross_project": self.cross_project,
        })
    }

    /// Whether [`Self::write_rules`] differ from the default contract's.
    pub fn has_write_rules(&self) -> bool {
        let d = MemoryContract::default();
        self.allowed_types != d.allowed_types
            || self.forbidden_types != d.forbidden_types
            || self.cross_project != d.cross_project
    }

    /// The unit of the contract's ages (one for all of them; None: no age is set).
    pub fn unit(&self) -> Option<AgeUnit> {
        self.ttl
            .values()
            .chain(&self.half_life)
            .chain(&self.stale_after)
            .map(|a| a.unit)
            .next()
    }

    /// Checks the contract's keys together: `ttl` keys are types or `default`, every age has
    /// one unit, a decay has what it needs. The message names the key.
    pub fn validate(&self) -> Result<(), String> {
        let mut seen: Vec<(MemoryType, &str)> = Vec::new();
        for key in self.ttl.keys() {
            if key != TTL_DEFAULT_KEY {
                let t = key.parse::<MemoryType>().map_err(|e| {
                    format!("memory.contract.ttl.{key}: {e} (or \"{TTL_DEFAULT_KEY}\")")
                })?;
                // an earlier name and its type's name are one type: two TTLs for it
                if let Some((_, other)) = seen.iter().find(|(s, _)| *s == t) {
                    return Err(format!(
                        "memory.contract.ttl: `{other}` and `{key}` name the same memory type; keep one"
                    ));
                }
                seen.push((t, key));
            }
        }
        if self.sensitive_from == Some(Sensitivity::Public) {
            return Err("memory.contract.sensitive_from = \"public\" would make every memory high-sensitivity: use personal, sensitive or secret".into());
        }
        let units: Vec<AgeUnit> = self
            .ttl
            .values()
            .chain(&self.half_life)
            .chain(&self.stale_after)
            .map(|a| a.unit)
            .collect();
        if units.windows(2).any(|w| w[0] != w[1]) {
            return Err("memory.contract: ttl, half_life and stale_after must all be in days (h, d, w, y) or all in spans".into());
        }
        match self.decay {
            Decay::Exponential if self.half_life.is_none() => {
                Err("memory.contract.decay = \"exponential\" needs memory.contract.half_life".into())
            }
            Decay::Linear if self.ttl.is_empty() => Err(
                "memory.contract.decay = \"linear\" decays to 0 at a type's TTL: set memory.contract.ttl".into(),
            ),
            Decay::None | Decay::Linear if self.half_life.is_some() => Err(
                "memory.contract.half_life is for decay = \"exponential\"".into(),
            ),
            _ => Ok(()),
        }
    }

    /// The TTL of memories of `kind` (its own entry, else `default`), in the contract's unit.
    pub fn ttl_of(&self, kind: Option<MemoryType>) -> Option<f64> {
        let own = kind.and_then(|k| {
            self.ttl
                .iter()
                .find(|(key, _)| key.parse::<MemoryType>().ok() == Some(k))
        });
        own.map(|(_, a)| a.value)
            .or_else(|| self.ttl.get(TTL_DEFAULT_KEY).map(|a| a.value))
    }

    /// The retrieval weight of `m` at `age` ([`decay_weight`]; an unknown age: 1).
    pub fn weight(&self, m: &MemoryItem, age: Option<f64>) -> f64 {
        age.map_or(1.0, |a| {
            decay_weight(
                self.decay,
                a,
                self.ttl_of(m.kind),
                self.half_life.map(|h| h.value),
            )
        })
    }

    /// Whether `m` has outlived its TTL at `age` (then it is not retrieved).
    pub fn expired(&self, m: &MemoryItem, age: Option<f64>) -> bool {
        matches!((age, self.ttl_of(m.kind)), (Some(a), Some(t)) if a >= t)
    }

    /// Whether `m` is high-sensitivity: its sensitivity is `sensitive_from` or higher, or its
    /// type is among `sensitive_types`.
    pub fn high_sensitivity(&self, m: &MemoryItem) -> bool {
        self.sensitive_from.is_some_and(|s| m.sensitivity >= s)
            || m.kind.is_some_and(|k| self.sensitive_types.contains(&k))
    }

    /// The words a question must mention for a high-sensitivity memory `m` to be retrieved
    /// for it: the name of its type when that type is listed in `sensitive_types`, and
    /// `found`, the words of what the memory filter found in it (e.g. `phone`).
    pub fn unlocking_words<'w>(&self, m: &MemoryItem, found: &[&'w str]) -> Vec<&'w str> {
        let mut words = found.to_vec();
        if let Some(k) = m.kind.filter(|k| self.sensitive_types.contains(k)) {
            words.push(k.as_str());
        }
        words
    }

    /// The warning for a memory of `age` when it is stale (`stale_after` or older): the
    /// marker with its age, `Some("")` when the marker is off. None: not stale.
    pub fn stale_note(&self, age: Option<f64>) -> Option<String> {
        let (after, age) = (self.stale_after?, age?);
        if age < after.value {
            return None;
        }
        let n = age.floor() as u64;
        let unit = match (after.unit, n) {
            (AgeUnit::Days, 1) => "day",
            (AgeUnit::Spans, 1) => "span",
            (u, _) => u.as_str(),
        };
        let marker = self.stale_marker.as_deref().unwrap_or(DEFAULT_STALE_MARKER);
        Some(marker.replace("{age}", &format!("{n} {unit}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{MemoryBank, Provenance, Scope};

    #[test]
    fn types_are_refused_by_the_lists() {
        let c = MemoryContract {
            allowed_types: vec![MemoryType::Episodic, MemoryType::Semantic],
            forbidden_types: vec![MemoryType::Semantic],
            ..Default::default()
        };
        assert_eq!(c.refuses_write(Some(MemoryType::Episodic)), None);
        assert!(c
            .refuses_write(Some(MemoryType::Semantic))
            .unwrap()
            .contains("forbidden"));
        assert!(c
            .refuses_write(Some(MemoryType::Preference))
            .unwrap()
            .contains("not among"));
        assert!(c.refuses_write(None).is_some());
        let open = MemoryContract::default();
        assert!(MemoryType::ALL
            .iter()
            .all(|t| open.refuses_write(Some(*t)).is_none()));
        assert_eq!(open.refuses_write(None), None);
    }

    #[test]
    fn another_projects_memories_are_withheld_unless_allowed() {
        let mut b = MemoryBank::new();
        let p = Provenance::default();
        let a = b.insert("alpha plan".into(), vec![1.0], p.clone()).unwrap();
        let shared = b.insert("shared note".into(), vec![1.0], p).unwrap();
        b.set_scope(a, Some("project:alpha".parse::<Scope>().unwrap()))
            .unwrap();
        let (m, s) = (b.get(a).unwrap(), b.get(shared).unwrap());
        let c = MemoryContract::default();
        assert!(c.withholds(Some("beta"), m));
        assert!(c.withholds(None, m));
        assert!(!c.withholds(Some("alpha"), m));
        assert!(!c.withholds(Some("beta"), s));
        let allow = MemoryContract {
            cross_project: CrossProject::Allow,
            ..Default::default()
        };
        assert!(!allow.withholds(Some("beta"), m));
    }
    #[test]
    fn decay_weight_is_one_at_zero_monotone_and_zero_from_the_ttl() {
        for decay in [Decay::None, Decay::Linear, Decay::Exponential] {
            for (ttl, hl) in [
                (Some(30.0), Some(7.0)),
                (None, Some(3.0)),
                (Some(5.0), None),
            ] {
                assert_eq!(decay_weight(decay, 0.0, ttl, hl), 1.0, "{decay:?}");
                assert_eq!(decay_weight(decay, -4.0, ttl, hl), 1.0, "{decay:?}");
                let mut last = 1.0;
                for step in 0..400 {
                    let w = decay_weight(decay, step as f64 * 0.25, ttl, hl);
                    assert!(
                        (0.0..=1.0).contains(&w) && w <= last,
                        "{decay:?} {step} {w}"
                    );
                    last = w;
                }
                if let Some(t) = ttl {
                    assert_eq!(decay_weight(decay, t, ttl, hl), 0.0);
                    assert_eq!(decay_weight(decay, t + 0.1, ttl, hl), 0.0);
                    assert!(decay_weight(decay, t - 0.1, ttl, hl) > 0.0);
                }
            }
        }
        assert!((decay_weight(Decay::Linear, 15.0, Some(30.0), None) - 0.5).abs() < 1e-12);
        assert!((decay_weight(Decay::Exponential, 14.0, None, Some(7.0)) - 0.25).abs() < 1e-12);
        assert_eq!(decay_weight(Decay::None, 1e9, None, None), 1.0);
        assert_eq!(decay_weight(Decay::Linear, f64::NAN, Some(3.0), None), 1.0);
    }

    #[test]
    fn ages_parse_in_days_or_spans_and_bad_ones_name_the_problem() {
        let a = |s: &str| s.parse::<Age>();
        assert_eq!(
            a("30d").unwrap(),
            Age {
                value: 30.0,
                unit: AgeUnit::Days
            }
        );
        assert_eq!(a(" 2W ").unwrap().value, 14.0);
        assert_eq!(a("12h").unwrap().value, 0.5);
        assert_eq!(a("1y").unwrap().value, 365.0);
        assert_eq!(
            a("40 spans").unwrap(),
            Age {
                value: 40.0,
                unit: AgeUnit::Spans
            }
        );
        assert_eq!(a("1span").unwrap().unit, AgeUnit::Spans);
        for bad in [
            "",
            "30",
            "d",
            "0d",
            "-3d",
            "30 months",
            "1e9d",
            "200y",
            "nand",
        ] {
            assert!(a(bad).is_err(), "{bad:?}");
        }
        for good in ["30d", "0.5d", "40 spans"] {
            let back: String = a(good).unwrap().into();
            assert_eq!(a(&back).unwrap(), a(good).unwrap());
        }
    }

    #[test]
    fn a_contract_validates_its_keys_together() {
        let parse = |j: serde_json::Value| -> Result<MemoryContract, String> {
            let c: MemoryContract = serde_json::from_value(j).map_err(|e| e.to_string())?;
            c.validate().map(|_| c)
        };
        use serde_json::json;
        let c = parse(json!({"decay": "exponential", "half_life": "7d",
            "ttl": {"event": "30d", "default": "1y"}}))
        .unwrap();
        assert!(c.has_read_rules() && !c.has_write_rules());
        assert_eq!(c.unit(), Some(AgeUnit::Days));
        assert_eq!(c.ttl_of(Some(MemoryType::Episodic)), Some(30.0));
        assert_eq!(c.ttl_of(Some(MemoryType::Semantic)), Some(365.0));
        assert_eq!(c.ttl_of(None), Some(365.0));
        for (bad, says) in [
            (json!({"ttl": {"feelings": "3d"}}), "ttl.feelings"),
            (
                json!({"stale_after": "3 spans", "ttl": {"event": "3d"}}),
                "all be in days",
            ),
            (json!({"decay": "exponential"}), "half_life"),
            (json!({"decay": "linear"}), "ttl"),
            (json!({"half_life": "2d"}), "exponential"),
            (json!({"sensitive_from": "public"}), "every memory"),
            (
                json!({"ttl": {"event": "3d", "episodic": "9d"}}),
                "name the same memory type",
            ),
        ] {
            let e = parse(bad.clone()).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
        assert!(parse(json!({"ttl": {"event": "soon"}})).is_err());
        let d = MemoryContract::default();
        assert!(!d.has_read_rules() && !d.has_write_rules());
        assert_eq!(d.validate(), Ok(()));
        // the serialised default holds only the three keys it always had
        let json = serde_json::to_value(&d).unwrap();
        assert_eq!(json, d.write_rules());
    }

    #[test]
    fn questions_match_by_whole_words_or_plurals() {
        assert!(query_matches(
            "What is Caroline's phone number?",
            &["phone"]
        ));
        assert!(query_matches("Which PHONES does she own", &["phone"]));
        assert!(query_matches("her e-mail?", &["mail"]));
        assert!(!query_matches("Did she telephone anyone?", &["phone"]));
        assert!(!query_matches("an idea", &["id"]));
        assert!(!query_matches("anything", &[]));
    }

    fn sample_with_spans(dates: &[Option<&str>]) -> Sample {
        Sample {
            id: "s".into(),
            dataset: "t".into(),
            sessions: Vec::new(),
            spans: dates
                .iter()
                .enumerate()
                .map(|(i, d)| crate::Span {
                    id: format!("s:{i}"),
                    index: i,
                    session: None,
                    date: d.map(str::to_string),
                    turn_ids: Vec::new(),
                    text: String::new(),
                })
                .collect(),
            queries: Vec::new(),
        }
    }

    #[test]
    fn clocks_age_memories_by_date_or_by_span() {
        let sample = sample_with_spans(&[Some("1 May 2023"), Some("31 May 2023")]);
        let mut b = MemoryBank::new();
        let prov = |span: &str, date: Option<&str>| Provenance {
            span_id: span.into(),
            observed_at: date.map(str::to_string),
            ..Default::default()
        };
        let early = b
            .insert("a".into(), vec![1.0], prov("s:0", Some("1 May 2023")))
            .unwrap();
        let undated = b
            .insert("b".into(), vec![1.0], prov("other:3", None))
            .unwrap();
        let (e, u) = (b.get(early).unwrap(), b.get(undated).unwrap());
        // LoCoMo: no question date, the last span's date is "now"
        let c = Clock::of(AgeUnit::Days, &sample, None);
        assert_eq!(c.age_of(e), Some(30.0));
        assert_eq!(c.age_of(u), None);
        // LongMemEval: the question's own date
        let c = Clock::of(AgeUnit::Days, &sample, Some("2023/06/10 (Sat) 10:00"));
        assert_eq!(c.age_of(e), Some(40.0));
        assert_eq!(
            Clock::of(AgeUnit::Days, &sample_with_spans(&[None]), None).age_of(e),
            None
        );
        let c = Clock::of(AgeUnit::Spans, &sample, None);
        assert_eq!((c.age_of(e), c.age_of(u)), (Some(1.0), None));
        assert_eq!(day_number((1970, 1, 1)), 0);
        assert_eq!(day_number((2024, 3, 1)) - day_number((2024, 2, 28)), 2);
    }

    #[test]
    fn stale_notes_carry_the_age_and_can_be_silent() {
        let mut c = MemoryContract {
            stale_after: Some("30d".parse().unwrap()),
            ..Default::default()
        };
        assert_eq!(c.stale_note(Some(29.9)), None);
        assert_eq!(c.stale_note(None), None);
        assert_eq!(
            c.stale_note(Some(45.0)).unwrap(),
            "(stale: last confirmed 45 days ago)"
        );
        c.stale_marker = Some(String::new());
        assert_eq!(c.stale_note(Some(45.0)).as_deref(), Some(""));
        c.stale_after = Some("1 span".parse().unwrap());
        c.stale_marker = Some("[old: {age}]".into());
        assert_eq!(c.stale_note(Some(1.0)).unwrap(), "[old: 1 span]");
    }

    #[test]
    fn high_sensitivity_is_by_level_or_type_and_unlocked_by_words() {
        let mut b = MemoryBank::new();
        let p = Provenance::default();
        let phone = b
            .insert("call Ann at +44 20 7946 0958".into(), vec![1.0], p.clone())
            .unwrap();
        let pref = b.insert("Ann likes jazz".into(), vec![1.0], p).unwrap();
        b.set_sensitivity(phone, Sensitivity::Personal).unwrap();
        b.set_meta(pref, Some(MemoryType::Preference), None)
            .unwrap();
        let c = MemoryContract {
            sensitive_from: Some(Sensitivity::Personal),
            sensitive_types: vec![MemoryType::Preference],
            ..Default::default()
        };
        let (m, q) = (b.get(phone).unwrap(), b.get(pref).unwrap());
        assert!(c.high_sensitivity(m) && c.high_sensitivity(q));
        assert_eq!(c.unlocking_words(m, &["phone"]), ["phone"]);
        assert_eq!(c.unlocking_words(q, &[]), ["preference"]);
        let only_level = MemoryContract {
            sensitive_from: Some(Sensitivity::Sensitive),
            ..Default::default()
        };
        assert!(!only_level.high_sensitivity(m) && !only_level.high_sensitivity(q));
    }
}
