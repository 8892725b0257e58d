//! Who a memory belongs to (its scope) and how private its text is (its sensitivity).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The owners of a memory: a user, an organisation, a project and / or an agent, each an
/// optional id. An empty scope is a shared memory (visible to every scope).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Scope {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub org: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
}

/// How a retrieval scope filters memories (see [`Scope::sees`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ScopeMatch {
    /// A memory is visible when every id it sets equals the filter's id of that level:
    /// shared (unscoped) memories are visible to all, a user's memories to that user only,
    /// an organisation's to every scope in it.
    #[default]
    Visible,
    /// Only memories whose scope equals the filter exactly.
    Exact,
}

impl FromStr for ScopeMatch {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim() {
            "visible" => Ok(Self::Visible),
            "exact" => Ok(Self::Exact),
            other => Err(format!("scope match {other:?} is not visible | exact")),
        }
    }
}

impl Scope {
    /// A scope of one user.
    pub fn user(id: &str) -> Scope {
        Scope {
            user: Some(id.to_string()),
            ..Scope::default()
        }
    }

    pub fn is_empty(&self) -> bool {
        self.user.is_none() && self.org.is_none() && self.project.is_none() && self.agent.is_none()
    }

    fn levels(&self) -> [(&'static str, &Option<String>); 4] {
        [
            ("user", &self.user),
            ("org", &self.org),
            ("project", &self.project),
            ("agent", &self.agent),
        ]
    }

    /// Whether a retrieval filtered to this scope sees a memory of scope `memory` (the rule
    /// of `mode`, see [`ScopeMatch`]).
    pub fn sees(&self, memory: &Scope, mode: ScopeMatch) -> bool {
        match mode {
            ScopeMatch::Exact => self == memory,
            ScopeMatch::Visible => memory
                .levels()
                .iter()
                .zip(self.levels())
                .all(|((_, m), (_, q))| m.is_none() || *m == q),
        }
    }

    /// The ids of `other` fill the levels this scope leaves open.
    pub fn or(mut self, other: &Scope) -> Scope {
        self.user = self.user.or_else(|| other.user.clone());
        self.org = self.org.or_else(|| other.org.clone());
        self.project = self.project.or_else(|| other.project.clone());
        self.agent = self.agent.or_else(|| other.agent.clone());
        self
    }
}

/// `user:Caroline,org:acme` (`=` also separates; a bare id is a user), as [`FromStr`] reads.
impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self
            .levels()
            .iter()
            .filter_map(|(k, v)| v.as_ref().map(|v| format!("{k}:{v}")))
            .collect();
        f.write_str(&parts.join(","))
    }
}

impl FromStr for Scope {
    type Err = String;
    /// `user:ID`, `org:ID`, `project:ID`, `agent:ID`, comma-separated (`=` works as `:`); a
    /// part without a level is a user id; `none`, `shared` or nothing is the empty scope.
    fn from_str(s: &str) -> Result<Self, String> {
        let mut out = Scope::default();
        let t = s.trim();
        if t.is_empty() || matches!(t.to_ascii_lowercase().as_str(), "none" | "shared" | "-") {
            return Ok(out);
        }
        for part in t.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (level, id) = match part.split_once([':', '=']) {
                Some((l, id)) => (l.trim().to_ascii_lowercase(), id.trim()),
                None => ("user".to_string(), part),
            };
            if id.is_empty() {
                return Err(format!("scope part {part:?} has no id"));
            }
            let slot = match level.as_str() {
                "user" => &mut out.user,
                "org" | "organisation" | "organization" => &mut out.org,
                "project" => &mut out.project,
                "agent" => &mut out.agent,
                other => {
                    return Err(format!(
                        "scope level {other:?} is not user | org | project | agent"
                    ))
                }
            };
            if slot.is_some() {
                return Err(format!("scope {t:?} names the {level} twice"));
            }
            *slot = Some(id.to_string());
        }
        Ok(out)
    }
}

/// How private a memory's text is, from the memory filter's scan (lowest to highest).
/// Readers respect it through [`crate::MemoryBank::shown`]: a secret is never shown, a
/// sensitive text is shown redacted unless flagged memories are shown.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Sensitivity {
    /// Nothing private found (or not scanned: `memory.filter = "off"`).
    #[default]
    Public,
    /// Contact details of a person (e-mail address, phone number).
    Personal,
    /// Identifiers whose leak harms (government ids, bank accounts).
    Sensitive,
    /// Credentials (passwords, API keys, tokens, private keys, card numbers).
    Secret,
}

impl Sensitivity {
    pub fn is_public(&self) -> bool {
        *self == Sensitivity::Public
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Public => "public",
            Self::Personal => "personal",
            Self::Sensitive => "sensitive",
            Self::Secret => "secret",
        }
    }
}

impl fmt::Display for Sensitivity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_parse_print_and_filter() {
        let c: Scope = "user:Caroline".parse().unwrap();
        assert_eq!(c, Scope::user("Caroline"));
        assert_eq!("Caroline".parse::<Scope>().unwrap(), c);
        let full: Scope = "org=acme, user:Caroline ,agent:a1".parse().unwrap();
        assert_eq!(full.to_string(), "user:Caroline,org:acme,agent:a1");
        assert_eq!(full.to_string().parse::<Scope>().unwrap(), full);
        assert!("none".parse::<Scope>().unwrap().is_empty());
        assert!("team:x".parse::<Scope>().unwrap_err().contains("team"));
        assert!("user:a,user:b".parse::<Scope>().is_err());
        assert!("user:".parse::<Scope>().is_err());
        let shared = Scope::default();
        let mel = Scope::user("Melanie");
        let acme: Scope = "org:acme".parse().unwrap();
        let v = ScopeMatch::Visible;
        // a user sees their own and shared memories, not another user's
        assert!(c.sees(&c, v) && c.sees(&shared, v) && !c.sees(&mel, v));
        // an organisation's memory is seen from any scope in it
        assert!(full.sees(&acme, v) && !c.sees(&acme, v));
        // the empty filter sees shared memories only; exact wants equality
        assert!(shared.sees(&shared, v) && !shared.sees(&c, v));
        assert!(!c.sees(&shared, ScopeMatch::Exact) && c.sees(&c, ScopeMatch::Exact));
        assert_eq!(
            Scope::user("a").or(&full).to_string(),
            "user:a,org:acme,agent:a1"
        );
    }

    #[test]
    fn sensitivity_orders_and_reads() {
        assert!(Sensitivity::Secret > Sensitivity::Sensitive);
        assert!(Sensitivity::Personal > Sensitivity::Public);
        let j = serde_json::to_string(&Sensitivity::Sensitive).unwrap();
        assert_eq!(j, "\"sensitive\"");
        assert_eq!(
            serde_json::from_str::<Sensitivity>("\"secret\"").unwrap(),
            Sensitivity::Secret
        );
        assert!("exact".parse::<ScopeMatch>().is_ok() && "all".parse::<ScopeMatch>().is_err());
    }
}
