//! The memory contract (`[memory.contract]`): which memory types may be written, and whether a
//! reader sees memories of a project it is not in. Pure rules; the trainer applies them where
//! memories are written (the executor's actions) and where they are read (the answerer's
//! view), and counts what they refused.

use serde::{Deserialize, Serialize};

use crate::memory::{MemoryItem, MemoryType};

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

/// `[memory.contract]`. The default refuses nothing of what the reproduction writes: every
/// type may be written, and only project-scoped memories (`executor.scoped_memories`, a
/// memskill option) are kept from readers of other projects.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MemoryContract {
    /// The types a memory may be written with (empty: every type). A write of no stated type
    /// is allowed unless this list is set.
    pub allowed_types: Vec<MemoryType>,
    /// Types never written, whatever `allowed_types` says.
    pub forbidden_types: Vec<MemoryType>,
    pub cross_project: CrossProject,
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
}
