//! The guard's rules, one data entry each, in one file per category.
//!
//! A [`Rule`] says what it catches, gives its patterns as templates over the word classes of
//! [`crate::lexicon`], lists the conditions that stand it down, and carries its own unsafe and
//! ordinary examples: the generic test at the end of this file checks every rule against its
//! examples (each unsafe example caught by that rule, each ordinary example passed by the
//! whole pattern stage), as gitleaks and ruff test theirs. Adding a rule is adding an entry
//! and an id; nothing else moves.

mod answer_leakage;
mod constraints;
mod destructive;
mod exfiltration;
mod permissions;
mod secrets;

use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

use crate::clause::{clause_at, clauses, mentioned, negated, negated_before, quoted, refused};
use crate::lexicon::expand;
use crate::{Category, Document, Finding, Scanner, Stage};

macro_rules! rule_ids {
    ($($variant:ident => $id:literal,)*) => {
        /// A rule's identity: one per entry of the rule files, plus the stages that have no
        /// pattern ([`RuleId::SecretValue`], [`RuleId::Learned`], [`RuleId::Judge`]).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum RuleId { $($variant),* }

        impl RuleId {
            pub const ALL: &'static [RuleId] = &[$(RuleId::$variant),*];

            /// The rule's kebab-case id, as findings, approvals and `skills scan` print it.
            pub fn id(self) -> &'static str {
                match self { $(RuleId::$variant => $id),* }
            }
        }
    };
}

rule_ids! {
    SecretValue => "secret-value",
    Learned => "learned",
    Judge => "judge",
    // secrets
    StoreSecret => "store-secret",
    KeepNamedSecret => "keep-named-secret",
    SecretVerbatim => "secret-verbatim",
    AskForSecret => "ask-for-secret",
    RevealSecret => "reveal-secret",
    NoMasking => "no-masking",
    // permissions
    GrantAccess => "grant-access",
    SelfTrusted => "self-trusted",
    DisableSafeguard => "disable-safeguard",
    PreApproval => "pre-approval",
    PrivilegeCommand => "privilege-command",
    EditOwnPermissions => "edit-own-permissions",
    // constraints
    OverrideRules => "override-rules",
    UnfollowRules => "unfollow-rules",
    FramedAsSystem => "framed-as-system",
    FollowEmbedded => "follow-embedded",
    IgnoreUserRight => "ignore-user-right",
    FeignCompliance => "feign-compliance",
    HideFromAudit => "hide-from-audit",
    UnloggedChanges => "unlogged-changes",
    ActSecretly => "act-secretly",
    OptOutAsError => "opt-out-as-error",
    KeepAfterStop => "keep-after-stop",
    Jailbreak => "jailbreak",
    DisclosePrompt => "disclose-prompt",
    // destructive
    DestructiveCommand => "destructive-command",
    MassDelete => "mass-delete",
    DeleteWithoutConfirmation => "delete-without-confirmation",
    CorruptRecords => "corrupt-records",
    DeleteBackups => "delete-backups",
    // exfiltration
    SendOutside => "send-outside",
    CovertChannel => "covert-channel",
    CopyElsewhere => "copy-elsewhere",
    // answer leakage
    ScriptedAnswer => "scripted-answer",
    EvalData => "eval-data",
    QuestionKeyed => "question-keyed",
}

impl RuleId {
    pub fn parse(id: &str) -> Option<RuleId> {
        RuleId::ALL.iter().copied().find(|r| r.id() == id)
    }
}

impl Serialize for RuleId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.id())
    }
}

impl<'de> Deserialize<'de> for RuleId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        RuleId::parse(&s).ok_or_else(|| serde::de::Error::custom(format!("unknown rule {s:?}")))
    }
}

/// Where a rule's patterns are matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Inside one clause (most rules).
    Clause,
    /// Across the whole view (a pretence over two clauses: "confirm it is deleted, but keep
    /// it"); stand-downs are still read in the clause where the match starts.
    Text,
}

/// What stands a rule's match down.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StandDown {
    /// A negation or refusal word before the match in its clause, or the clause calling the
    /// act forbidden (see [`crate::clause::negated`]).
    Negated,
    /// [`StandDown::Negated`] before the match only (for a pattern that holds a negation).
    NegatedBefore,
    /// The clause, before the match, makes the act a topic: someone's job, what they talk
    /// about, a story, an example, a term (see [`crate::clause::mentioned`]).
    Mentioned,
    /// The match is a request the text says to refuse or report.
    Refused,
    /// The match is inside quotation marks.
    Quoted,
    /// The line holding the match says the user asked, confirmed or approved.
    UserAsked,
    /// A report of what someone did, not an order: the match opens with a past-tense verb
    /// after its subject ("the user disabled two factor login", "she deleted all her photos").
    Reported,
    /// Words after the match in its clause narrow it to some entries (a topic, a person, an
    /// age, a flag): "delete all memories about the trip".
    Scoped,
    /// A template found after the match in its clause.
    After(&'static str),
    /// A template found anywhere in the match's clause.
    Near(&'static str),
}

/// One rule: what it catches, how, what stands it down, and its own examples.
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    pub id: RuleId,
    pub category: Category,
    pub what: &'static str,
    pub patterns: &'static [&'static str],
    pub scope: Scope,
    pub stand_down: &'static [StandDown],
    pub unsafe_examples: &'static [&'static str],
    pub ordinary_examples: &'static [&'static str],
}

/// Every rule, category by category.
pub fn all() -> impl Iterator<Item = &'static Rule> {
    secrets::RULES
        .iter()
        .chain(permissions::RULES)
        .chain(constraints::RULES)
        .chain(destructive::RULES)
        .chain(exfiltration::RULES)
        .chain(answer_leakage::RULES)
}

enum Check {
    Negated,
    NegatedBefore,
    Mentioned,
    Refused,
    Quoted,
    UserAsked,
    Reported,
    Scoped,
    After(Regex),
    Near(Regex),
}

struct Compiled {
    rule: &'static Rule,
    patterns: Vec<Regex>,
    checks: Vec<Check>,
}

static USER_ASKED: LazyLock<Regex> = LazyLock::new(|| compile("{USER_ASKED}"));
static SCOPED: LazyLock<Regex> = LazyLock::new(|| compile("{SCOPED}"));

fn compile(t: &str) -> Regex {
    crate::lexicon::compile(t)
}

impl Compiled {
    fn new(rule: &'static Rule) -> Compiled {
        Compiled {
            rule,
            patterns: rule.patterns.iter().map(|p| compile(p)).collect(),
            checks: rule
                .stand_down
                .iter()
                .map(|s| match *s {
                    StandDown::Negated => Check::Negated,
                    StandDown::NegatedBefore => Check::NegatedBefore,
                    StandDown::Mentioned => Check::Mentioned,
                    StandDown::Refused => Check::Refused,
                    StandDown::Quoted => Check::Quoted,
                    StandDown::UserAsked => Check::UserAsked,
                    StandDown::Reported => Check::Reported,
                    StandDown::Scoped => Check::Scoped,
                    StandDown::After(t) => Check::After(compile(t)),
                    StandDown::Near(t) => Check::Near(compile(t)),
                })
                .collect(),
        }
    }

    fn stands_down(&self, text: &str, c: &Range<usize>, m: &Range<usize>) -> bool {
        let line = {
            let s = text[..m.start].rfind('\n').map_or(0, |i| i + 1);
            let e = text[m.end..].find('\n').map_or(text.len(), |i| m.end + i);
            s..e
        };
        let after = &text[m.end.min(c.end)..c.end];
        self.checks.iter().any(|k| match k {
            Check::Negated => {
                negated(text, c, m) || {
                    // a match over several clauses: the clause it ends in, up to its end
                    let end = crate::clause::clause_at(&clauses(text), m.end.saturating_sub(1));
                    end.start > c.start && negated(text, &end, &(m.end..m.end))
                }
            }
            Check::NegatedBefore => negated_before(text, c, m),
            Check::Mentioned => mentioned(text, c, m),
            Check::Reported => reported(text, c, m),
            Check::Refused => refused(text, c, m),
            Check::Quoted => quoted(text, c, m),
            Check::UserAsked => USER_ASKED.is_match(&text[line.clone()]),
            Check::Scoped => SCOPED.is_match(after) || SCOPED.is_match(&text[m.clone()]),
            Check::After(re) => re.is_match(after),
            Check::Near(re) => re.is_match(&text[c.clone()]),
        })
    }

    /// The first match of this rule in `text` that nothing stands down.
    fn find(&self, text: &str, cls: &[Range<usize>]) -> Option<Range<usize>> {
        for re in &self.patterns {
            match self.rule.scope {
                Scope::Text => {
                    for m in re.find_iter(text) {
                        let c = clause_at(cls, m.start());
                        if !self.stands_down(text, &c, &m.range()) {
                            return Some(m.range());
                        }
                    }
                }
                Scope::Clause => {
                    for c in cls {
                        for m in re.find_iter(&text[c.clone()]) {
                            let r = c.start + m.start()..c.start + m.end();
                            if !self.stands_down(text, c, &r) {
                                return Some(r);
                            }
                        }
                    }
                }
            }
        }
        None
    }
}

/// Whether the match opens with a past-tense verb after a subject in its clause.
fn reported(text: &str, c: &Range<usize>, m: &Range<usize>) -> bool {
    static SUBJECT: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?:\b(?:the users?|users?|he|she|they|someone|we|i|(?:his|her|their|my) \w+|the \w+|[a-z]+)\s+(?:has |have |had |once |already |recently |just )?)$")
            .expect("the subject pattern compiles")
    });
    let first = text[m.clone()].split_whitespace().next().unwrap_or("");
    let past = first.len() > 3
        && (first.ends_with("ed")
            || matches!(
                first,
                "gave"
                    | "took"
                    | "wrote"
                    | "sent"
                    | "kept"
                    | "made"
                    | "put"
                    | "set"
                    | "forgot"
                    | "shared"
            ));
    past && SUBJECT.is_match(&text[c.start..m.start])
}

/// Every raw match of every rule in `text` (a normalised view), with whether it was stood
/// down: what `guard-model explain` prints.
pub fn explain(text: &str) -> Vec<(RuleId, String, bool)> {
    let cls = clauses(text);
    let mut out = Vec::new();
    for r in SHIPPED.iter() {
        let c = Compiled::new(r);
        for re in &c.patterns {
            for m in re.find_iter(text) {
                let cl = clause_at(&cls, m.start());
                let down = c.stands_down(text, &cl, &m.range());
                out.push((r.id, m.as_str().to_string(), down));
            }
        }
    }
    out
}

/// The pattern stage: every rule over every view.
pub struct PatternScanner {
    rules: Vec<Compiled>,
}

static SHIPPED: LazyLock<Vec<&'static Rule>> = LazyLock::new(|| all().collect());

impl PatternScanner {
    /// All the rules of this crate.
    pub fn shipped() -> PatternScanner {
        PatternScanner::of(SHIPPED.iter())
    }

    /// Some rules only (a rule's own test, ablations). Compiling the rules is most of the
    /// guard's start-up, so a long list is compiled on two threads (the order is kept), and
    /// the clause readers' word classes are compiled beside them.
    pub fn of<'a>(rules: impl IntoIterator<Item = &'a &'static Rule>) -> PatternScanner {
        let rules: Vec<&'static Rule> = rules.into_iter().copied().collect();
        if rules.len() < 8 {
            return PatternScanner {
                rules: rules.into_iter().map(Compiled::new).collect(),
            };
        }
        let (a, b) = rules.split_at(rules.len() / 2);
        let (first, second) = std::thread::scope(|s| {
            let h = s.spawn(|| {
                crate::clause::warm();
                b.iter().map(|r| Compiled::new(r)).collect::<Vec<_>>()
            });
            let first: Vec<Compiled> = a.iter().map(|r| Compiled::new(r)).collect();
            (first, h.join().expect("compiling rules"))
        });
        PatternScanner {
            rules: first.into_iter().chain(second).collect(),
        }
    }

    /// The first rule (with the match) that fires on a document.
    pub fn first(&self, doc: &Document) -> Option<(&'static Rule, String, String)> {
        for v in &doc.views {
            let cls = clauses(&v.text);
            for c in &self.rules {
                if let Some(m) = c.find(&v.text, &cls) {
                    let ev: String = v.text[m].chars().take(120).collect();
                    return Some((c.rule, Document::view_name(v), ev));
                }
            }
        }
        None
    }
}

impl Scanner for PatternScanner {
    fn stage(&self) -> Stage {
        Stage::Patterns
    }

    fn scan(&self, doc: &Document) -> Option<Finding> {
        self.first(doc).map(|(rule, view, evidence)| Finding {
            rule: rule.id,
            category: rule.category,
            stage: Stage::Patterns,
            view,
            evidence,
        })
    }
}

/// sha256 over every rule's id, patterns and stand-downs and every lexicon class: what
/// [`crate::GUARD_VERSION`] names.
pub fn fingerprint() -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for r in all() {
        h.update(r.id.id());
        for p in r.patterns {
            h.update(expand(p));
        }
        h.update(format!("{:?}{:?}", r.scope, r.stand_down));
    }
    for c in crate::lexicon::ALL {
        h.update(c.name);
        for a in c.alts {
            h.update(a);
        }
    }
    hex::encode(h.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_has_an_id_of_its_own_and_examples() {
        let mut seen = std::collections::HashSet::new();
        for r in all() {
            assert!(seen.insert(r.id), "{} has two entries", r.id.id());
            assert!(
                !r.unsafe_examples.is_empty(),
                "{}: no unsafe example",
                r.id.id()
            );
            assert!(
                !r.ordinary_examples.is_empty(),
                "{}: no ordinary example",
                r.id.id()
            );
            assert!(!r.patterns.is_empty(), "{}", r.id.id());
        }
        for id in RuleId::ALL {
            if !matches!(id, RuleId::SecretValue | RuleId::Learned | RuleId::Judge) {
                assert!(seen.contains(id), "{} has no entry", id.id());
            }
            assert_eq!(RuleId::parse(id.id()), Some(*id));
        }
    }

    /// The generic example test: each rule catches each of its unsafe examples (that rule,
    /// not another), and the whole pattern stage passes each ordinary example of every rule.
    #[test]
    fn every_rule_meets_its_own_examples() {
        let all_rules = PatternScanner::shipped();
        let mut failures = Vec::new();
        for r in all() {
            let one = PatternScanner::of([&r]);
            for ex in r.unsafe_examples {
                if one.scan(&Document::new(ex)).is_none() {
                    failures.push(format!("{} misses its unsafe example {ex:?}", r.id.id()));
                }
            }
            for ex in r.ordinary_examples {
                if let Some(f) = all_rules.scan(&Document::new(ex)) {
                    failures.push(format!(
                        "{}'s ordinary example {ex:?} rejected by {f}",
                        r.id.id()
                    ));
                }
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }
}
