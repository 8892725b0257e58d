//! `memskill.SkillBank`: a skill bank (core's `SkillBank`) with the `memskill skills`
//! operations: load, save, export, import, validate, diff.

use std::path::PathBuf;

use memskill_core::fsio::WriteGuard;
use memskill_designer::{bank_diff, export_bank, import_bank_opts, load_bank};
use pyo3::prelude::*;

use crate::{err, to_py};

/// A skill bank: ordered skills (name, description, instructions, action, version, status,
/// usage) with release records. Build one with `SkillBank.seed()`, `SkillBank.load(path)` or
/// `SkillBank.import_dir(dir)`.
#[pyclass(module = "memskill", frozen)]
pub struct SkillBank {
    inner: memskill_core::SkillBank,
}

fn designer_err(e: memskill_designer::DesignerError, what: String) -> PyErr {
    err(anyhow::Error::new(e).context(what))
}

#[pymethods]
impl SkillBank {
    /// The four seed skills (insert, update, delete, noop).
    #[staticmethod]
    fn seed() -> Self {
        Self {
            inner: memskill_core::SkillBank::seed(),
        }
    }

    /// Loads a bank: a bank.json, a checkpoint directory or an exported skills directory.
    #[staticmethod]
    fn load(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let inner = py.detach(|| load_bank(&path)).map_err(|e| {
            designer_err(e, format!("cannot load skill bank from {}", path.display()))
        })?;
        Ok(Self { inner })
    }

    /// Imports an exported skills directory (validated like designer edits). Links that
    /// lead out of the folder are refused unless `follow_links`; files that differ from the
    /// export's `manifest.sha256` (hand edits, or a mix of two exports) unless `accept_edits`.
    #[staticmethod]
    #[pyo3(signature = (dir, *, follow_links = false, accept_edits = false))]
    fn import_dir(
        py: Python<'_>,
        dir: PathBuf,
        follow_links: bool,
        accept_edits: bool,
    ) -> PyResult<Self> {
        use memskill_designer::LinkPolicy;
        let links = if follow_links {
            LinkPolicy::Follow
        } else {
            LinkPolicy::InsideOnly
        };
        let inner = py
            .detach(|| import_bank_opts(&dir, links, accept_edits))
            .map_err(|e| designer_err(e, format!("cannot import {}", dir.display())))?;
        Ok(Self { inner })
    }

    /// Validates an exported skills directory; returns the skill names. Files that differ
    /// from the export's `manifest.sha256` are an error unless `accept_edits`.
    #[staticmethod]
    #[pyo3(signature = (dir, *, accept_edits = false))]
    fn validate(py: Python<'_>, dir: PathBuf, accept_edits: bool) -> PyResult<Vec<String>> {
        let links = memskill_designer::LinkPolicy::InsideOnly;
        let names = |b: memskill_core::SkillBank| -> Vec<String> {
            b.names().into_iter().map(String::from).collect()
        };
        py.detach(|| import_bank_opts(&dir, links, accept_edits).map(names))
            .map_err(|e| {
                designer_err(
                    e,
                    format!("{} is not a valid skills directory", dir.display()),
                )
            })
    }

    /// Writes the bank as JSON (atomically; an existing file only with `force`).
    #[pyo3(signature = (path, *, force = false))]
    fn save(&self, py: Python<'_>, path: PathBuf, force: bool) -> PyResult<()> {
        let guard = WriteGuard::new("path", force);
        py.detach(|| {
            guard.check(&path)?;
            memskill_cli::skills::write_bank(&self.inner, &path, &guard)
        })
        .map_err(err)
    }

    /// Exports the bank as Agent Skills folders (`<name>/SKILL.md`) plus bank.json and
    /// RELEASES.md under `dir` (an existing export's files are replaced only with `force`).
    #[pyo3(signature = (dir, *, force = false))]
    fn export(&self, py: Python<'_>, dir: PathBuf, force: bool) -> PyResult<()> {
        py.detach(|| export_bank(&self.inner, &dir, force))
            .map_err(|e| designer_err(e, format!("cannot export to {}", dir.display())))
    }

    /// The added, removed and changed skills from `self` to `other`, with text diffs
    /// (empty when they have the same skills).
    fn diff(&self, other: &SkillBank) -> String {
        bank_diff(&self.inner, &other.inner)
    }

    /// The skill names, in bank order.
    #[getter]
    fn names(&self) -> Vec<String> {
        self.inner.names().into_iter().map(String::from).collect()
    }

    /// The bank's version (raised by each designer stage that changes it).
    #[getter]
    fn bank_version(&self) -> u64 {
        u64::from(self.inner.bank_version)
    }

    /// The content hash (hex SHA-256 of the skills' texts and settings).
    #[getter]
    fn content_hash(&self) -> String {
        self.inner.content_hash()
    }

    /// The bank as a dict (the bank.json document).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &self.inner)
    }

    /// The `memskill skills show` table.
    fn table(&self) -> String {
        memskill_cli::skills::render_table(&self.inner)
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    fn __contains__(&self, name: &str) -> bool {
        self.inner.contains(name)
    }

    fn __repr__(&self) -> String {
        let hash = self.inner.content_hash();
        format!(
            "SkillBank({} skills, version {}, hash {})",
            self.inner.len(),
            self.inner.bank_version,
            &hash[..hash.len().min(12)]
        )
    }
}
